/* muonref: muonref_fail (see fail.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include "core/fail.h"

size_t muonref_utf8_cut(char *s, size_t len)
{
  /* the last lead byte within the last 3 bytes, and the length it announces */
  size_t k = len, back = 0;
  while (k > 0 && back < 3 && ((unsigned char)s[k - 1] & 0xc0) == 0x80)
    k--, back++;
  if (k == 0)
    return len;
  unsigned char lead = (unsigned char)s[k - 1];
  size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (lead >= 0xc0 && back + 1 < need) {
    s[k - 1] = '\0';
    return k - 1;
  }
  return len;
}

int muonref_fail(muonref_error *err, int status, const char *fmt, ...)
{
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof err->message) /* cut: not inside a UTF-8 character */
      muonref_utf8_cut(err->message, sizeof err->message - 1);
    err->status = status;
  }
  return status;
}
