/* muonref: singular values in binary64 with the same bits on every CPU (see
 * singular_values.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/judge/singular_values.h"

enum { MAX_SWEEPS = 60 }; /* one-sided Jacobi converges quadratically: about 10 sweeps for these sizes */

/* The dot product of columns p and q of the (len, n) column-major W, added
 * in index order. */
__attribute__((optimize("fp-contract=off"))) static double dot(const double *W, size_t len, size_t p, size_t q)
{
  double s = 0.0;
  for (size_t i = 0; i < len; i++)
    s += W[p * len + i] * W[q * len + i];
  return s;
}

/* One Jacobi rotation of columns p and q (Demmel and Veselic 1992, section
 * 4: the rotation that makes them orthogonal); 1 when they were not yet
 * orthogonal to working precision, else 0 (and nothing is changed). */
__attribute__((optimize("fp-contract=off"))) static int rotate(double *W, size_t len, size_t p, size_t q)
{
  double a = dot(W, len, p, p), b = dot(W, len, q, q), g = dot(W, len, p, q);
  if (g == 0.0 || fabs(g) <= 1e-15 * sqrt(a) * sqrt(b))
    return 0;
  double zeta = (b - a) / (2.0 * g);
  double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
  double c = 1.0 / sqrt(1.0 + t * t), s = c * t;
  double *x = W + p * len, *y = W + q * len;
  for (size_t i = 0; i < len; i++) {
    double xi = x[i], yi = y[i];
    x[i] = c * xi - s * yi;
    y[i] = s * xi + c * yi;
  }
  return 1;
}

static int descending(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

__attribute__((optimize("fp-contract=off"))) int muonref_singular_values(const double *a, size_t rows,
                                                                          size_t cols, double *s)
{
  size_t n = rows < cols ? rows : cols, len = rows < cols ? cols : rows;
  double big = 0.0;
  for (size_t i = 0; i < rows * cols; i++) {
    if (!isfinite(a[i]))
      return 1;
    big = fmax(big, fabs(a[i]));
  }
  if (n == 0)
    return 0;
  int e = 0;
  if (big > 0.0)
    (void)frexp(big, &e); /* A is scaled by 2^-e, exactly but where an element falls below 2^-1022 */
  double *W = malloc(n * len * sizeof *W); /* the n vectors of length len: A's columns (tall) or rows (wide) */
  if (!W)
    return -1;
  for (size_t r = 0; r < rows; r++)
    for (size_t c = 0; c < cols; c++)
      W[rows >= cols ? c * len + r : r * len + c] = ldexp(a[r * cols + c], -e);
  int changed = 1;
  for (int sweep = 0; changed && sweep < MAX_SWEEPS; sweep++) {
    changed = 0;
    for (size_t p = 0; p + 1 < n; p++)
      for (size_t q = p + 1; q < n; q++)
        changed |= rotate(W, len, p, q);
  }
  for (size_t k = 0; k < n; k++)
    s[k] = ldexp(sqrt(dot(W, len, k, k)), e);
  free(W);
  qsort(s, n, sizeof *s, descending);
  return 0;
}
