/* muonref fuzz targets of the report writers (fuzz_junit.c, fuzz_tap.c):
 * an input is a flag byte and up to N_FIELDS strings separated by 0xff
 * bytes (0xff is never valid UTF-8, so every other byte, NUL excepted,
 * reaches the writers: controls, noncharacters, invalid and cut sequences,
 * long strings); a NUL ends a field's C string early, as a NUL in a
 * port's message would. */
#ifndef MUONREF_FUZZ_FIELDS_H
#define MUONREF_FUZZ_FIELDS_H

#include <jansson.h>
#include <locale.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* F_WHY: a baseline's "known failure: ..." text; F_NOTE: an other run's note (checker.h) */
enum { F_IMPL, F_FORMAT, F_FILE, F_PROFILE, F_AREA, F_KIND, F_COMMENT, F_FLAGS, F_MESSAGE, F_DIAGNOSIS, F_WHY, F_NOTE,
       N_FIELDS };

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

/* Aborts unless the n bytes at s are well-formed UTF-8 holding no control
 * character but those in `allowed` (a string of ASCII controls), no DEL,
 * no C1 control, no noncharacter, no bidirectional control and no line or
 * paragraph separator (vectors/format/escape.h's unsafe set).  An oracle apart
 * from escape.c's decoder: jansson's UTF-8 check (json_stringn refuses
 * ill-formed UTF-8) and glibc's mbrtowc in the C.UTF-8 locale for the code
 * points. */
static void fuzz_assert_clean(const char *s, size_t n, const char *allowed)
{
  static locale_t utf8;
  if (!utf8 && !(utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0)))
    abort(); /* the oracle needs the locale (glibc 2.35+ has it built in) */
  json_t *j = json_stringn(s, n);
  if (!j)
    abort(); /* not UTF-8 (jansson) */
  json_decref(j);
  locale_t old = uselocale(utf8);
  mbstate_t st;
  memset(&st, 0, sizeof st);
  for (size_t i = 0; i < n;) {
    wchar_t w;
    size_t len = mbrtowc(&w, s + i, n - i, &st);
    if (len == 0)
      len = 1; /* a NUL byte: a C0 control */
    if (len == (size_t)-1 || len == (size_t)-2)
      abort(); /* not UTF-8 (glibc) */
    unsigned cp = (unsigned)w;
    int unsafe = cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
                 cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
                 (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe;
    if (unsafe && !(cp < 0x20 && cp && strchr(allowed, (int)cp)))
      abort(); /* a character a report must not carry */
    i += len;
  }
  uselocale(old);
}

#endif
