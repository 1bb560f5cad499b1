/* muonref: muonref_fail (see fail.h). */
#include <stdarg.h>
#include <stdio.h>
#include "core/fail.h"

int muonref_fail(muonref_error *err, int status, const char *fmt, ...)
{
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->status = status;
  }
  return status;
}
