/* muonref fuzz targets of the report writers (fuzz_junit.c, fuzz_tap.c):
 * an input is a flag byte and up to N_FIELDS strings separated by 0xff
 * bytes (0xff is never valid UTF-8, so every other byte, NUL excepted,
 * reaches the writers: controls, noncharacters, invalid and cut sequences,
 * long strings); a NUL ends a field's C string early, as a NUL in a
 * port's message would. */
#ifndef MUONREF_FUZZ_FIELDS_H
#define MUONREF_FUZZ_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { F_IMPL, F_FORMAT, F_FILE, F_PROFILE, F_AREA, F_KIND, F_COMMENT, F_FLAGS, F_MESSAGE, F_DIAGNOSIS, N_FIELDS };

typedef struct fuzz_fields {
  unsigned flags;      /* the first byte */
  char *f[N_FIELDS];   /* owned, NUL-terminated */
} fuzz_fields;

static void fuzz_fields_split(fuzz_fields *x, const uint8_t *data, size_t size)
{
  x->flags = size ? data[0] : 0;
  size_t at = size ? 1 : 0;
  for (int k = 0; k < N_FIELDS; k++) {
    size_t end = at;
    while (end < size && data[end] != 0xff)
      end++;
    x->f[k] = malloc(end - at + 1);
    memcpy(x->f[k], data + at, end - at);
    x->f[k][end - at] = '\0';
    at = end < size ? end + 1 : size;
  }
}

static void fuzz_fields_free(fuzz_fields *x)
{
  for (int k = 0; k < N_FIELDS; k++)
    free(x->f[k]);
}

/* The length (1 to 4) of the well-formed UTF-8 sequence at p, or 0
 * (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF);
 * its code point in *cp. */
static size_t fuzz_utf8(const unsigned char *p, size_t n, unsigned *cp)
{
  unsigned b = p[0];
  if (b < 0x80)
    return *cp = b, 1;
  size_t len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (!len || len > n)
    return 0;
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

/* Aborts unless the n bytes at s are well-formed UTF-8 holding no control
 * character but those in `allowed` (a string of ASCII controls), no DEL,
 * no C1 control, no noncharacter, no bidirectional control and no line or
 * paragraph separator (vectors/escape.h's unsafe set). */
static void fuzz_assert_clean(const char *s, size_t n, const char *allowed)
{
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned cp;
    size_t len = fuzz_utf8(p + i, n - i, &cp);
    if (!len)
      abort(); /* not UTF-8 */
    int unsafe = cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
                 cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
                 (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe;
    if (unsafe && !(cp < 0x20 && cp && strchr(allowed, (int)cp)))
      abort(); /* a character a report must not carry */
    i += len;
  }
}

#endif
