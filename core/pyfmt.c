/* muonref: Python repr() of floats and shape tuples (see pyfmt.h).
 *
 * Algorithm: the shortest %.*e rendering that strtod reads back as x gives
 * the digits and the decimal exponent e; Python's repr then prints them
 * positionally when -4 <= e < 16 and in scientific notation otherwise
 * (CPython Python/pystrtod.c, format_float_short, mode 'r'). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/pyfmt.h"

/* Shortest round-trip digits of finite x > 0: digits (no dot) and e. */
static void shortest_digits(double x, char *digits, size_t n, int *exp10)
{
  char tmp[40];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, x);
    if (strtod(tmp, NULL) == x)
      break;
  }
  char *e = strchr(tmp, 'e');
  *exp10 = atoi(e + 1);
  size_t k = 0;
  for (const char *p = tmp; p < e && k + 1 < n; p++)
    if (*p != '.')
      digits[k++] = *p;
  while (k > 1 && digits[k - 1] == '0')
    k--;
  digits[k] = '\0';
}

char *muonref_py_float(char *buf, size_t n, double x)
{
  if (isnan(x)) { snprintf(buf, n, "nan"); return buf; }
  if (isinf(x)) { snprintf(buf, n, x < 0 ? "-inf" : "inf"); return buf; }
  const char *sign = signbit(x) ? "-" : "";
  if (x == 0) { snprintf(buf, n, "%s0.0", sign); return buf; }
  char d[32];
  int e;
  shortest_digits(fabs(x), d, sizeof d, &e);
  int nd = (int)strlen(d);
  char out[64];
  char zeros[24];
  if (e < -4 || e >= 16) {
    snprintf(out, sizeof out, "%s%c%s%se%c%02d", sign, d[0], nd > 1 ? "." : "", d + 1,
             e < 0 ? '-' : '+', abs(e));
  } else if (e < 0) {                 /* 0.000ddd: -e - 1 zeros after the dot */
    memset(zeros, '0', (size_t)(-e - 1));
    zeros[-e - 1] = '\0';
    snprintf(out, sizeof out, "%s0.%s%s", sign, zeros, d);
  } else if (nd <= e + 1) {           /* integral: ddd000.0 */
    memset(zeros, '0', (size_t)(e + 1 - nd));
    zeros[e + 1 - nd] = '\0';
    snprintf(out, sizeof out, "%s%s%s.0", sign, d, zeros);
  } else {                            /* ddd.ddd */
    snprintf(out, sizeof out, "%s%.*s.%s", sign, e + 1, d, d + e + 1);
  }
  snprintf(buf, n, "%s", out);
  return buf;
}

/* Appends printf output at buf + *used, keeping the string terminated and
 * *used < n (output past the end is dropped). */
static void put(char *buf, size_t n, size_t *used, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + *used, n - *used, fmt, ap);
  va_end(ap);
  if (w > 0)
    *used += (size_t)w;
  if (*used >= n)
    *used = n - 1;
}

/* open, the dimensions separated by ", ", then close (one-element: close1) */
static char *dims(char *buf, size_t n, const size_t *shape, int ndim, const char *open, const char *close,
                  const char *close1)
{
  size_t used = 0;
  if (n == 0)
    return buf;
  buf[0] = '\0';
  put(buf, n, &used, "%s", open);
  for (int i = 0; i < ndim; i++)
    put(buf, n, &used, i ? ", %zu" : "%zu", shape[i]);
  put(buf, n, &used, "%s", ndim == 1 ? close1 : close);
  return buf;
}

char *muonref_py_shape(char *buf, size_t n, const size_t *shape, int ndim)
{
  return dims(buf, n, shape, ndim, "(", ")", ",)");
}

char *muonref_py_torch_size(char *buf, size_t n, const size_t *shape, int ndim)
{
  return dims(buf, n, shape, ndim, "torch.Size([", "])", "])");
}

char *muonref_py_str_tuple(char *buf, size_t n, const char *const *names, size_t count)
{
  size_t used = 0;
  if (n == 0)
    return buf;
  buf[0] = '\0';
  put(buf, n, &used, "(");
  for (size_t i = 0; i < count; i++)
    put(buf, n, &used, i ? ", '%s'" : "'%s'", names[i]);
  put(buf, n, &used, count == 1 ? ",)" : ")");
  return buf;
}
