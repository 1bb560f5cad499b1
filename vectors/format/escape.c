/* muonref: escaping outside strings for the reports (see escape.h). */
#include <stdlib.h>
#include <string.h>
#include "vectors/format/escape.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD in UTF-8 */

/* The length (1 to 4) of the well-formed UTF-8 sequence at p (n bytes
 * left) and its code point in *cp, or 0 when p starts no well-formed
 * sequence (RFC 3629 section 4: no overlong form, no surrogate, nothing
 * past U+10FFFF). */
static size_t decode(const unsigned char *p, size_t n, unsigned *cp)
{
  unsigned b = p[0];
  if (b < 0x80)
    return *cp = b, 1;
  size_t len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (!len || len > n)
    return 0;
  /* the second byte's range depends on the first (overlongs, surrogates, > U+10FFFF) */
  unsigned lo = b == 0xe0 ? 0xa0 : b == 0xf0 ? 0x90 : 0x80, hi = b == 0xed ? 0x9f : b == 0xf4 ? 0x8f : 0xbf;
  if (p[1] < lo || p[1] > hi)
    return 0;
  unsigned v = b & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
  for (size_t k = 1; k < len; k++) {
    if ((p[k] & 0xc0) != 0x80)
      return 0;
    v = v << 6 | (p[k] & 0x3f);
  }
  *cp = v;
  return len;
}

/* Whether code point cp is unsafe in a report (escape.h). */
static int unsafe(unsigned cp)
{
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || cp == 0x200e ||
         cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
         (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe;
}

void muonref_escape_write(FILE *f, const char *s, size_t n, muonref_escape_mode mode)
{
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned cp = 0;
    size_t len = decode(p + i, n - i, &cp);
    if (!len) { /* a byte that is no part of well-formed UTF-8 */
      if (mode == MUONREF_ESCAPE_TEXT)
        fprintf(f, "\\x%02x", p[i]);
      else
        fputs(REPLACEMENT, f);
      i++;
      continue;
    }
    int ws = cp == '\t' || cp == '\n' || cp == '\r';
    if (mode == MUONREF_ESCAPE_TAP && (cp == '#' || cp == '\\'))
      fputc('\\', f), fputc((int)cp, f);
    else if (!unsafe(cp) || (mode == MUONREF_ESCAPE_XML && ws) || (mode == MUONREF_ESCAPE_YAML && cp < 0x20))
      fwrite(p + i, 1, len, f);
    else if (mode == MUONREF_ESCAPE_TAP && ws)
      fputc(' ', f);
    else if (mode != MUONREF_ESCAPE_TEXT)
      fputs(REPLACEMENT, f);
    else if (ws)
      fputs(cp == '\t' ? "\\t" : cp == '\n' ? "\\n" : "\\r", f);
    else if (cp < 0x80)
      fprintf(f, "\\x%02x", cp);
    else
      fprintf(f, "\\u%04x", cp);
    i += len;
  }
}

void muonref_escape_fputs(FILE *f, const char *s, muonref_escape_mode mode)
{
  if (s)
    muonref_escape_write(f, s, strlen(s), mode);
}

char *muonref_escape_dup(const char *s, size_t n, muonref_escape_mode mode)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return NULL;
  muonref_escape_write(f, s, n, mode);
  if (ferror(f)) {
    fclose(f);
    free(buf);
    return NULL;
  }
  fclose(f);
  return buf;
}
