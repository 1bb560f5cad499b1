/* muonref: binary32 -> bf16 rounding, round to nearest, ties to even.
 *
 * With u the binary32 bits of x, adding 0x7FFF + (bit 16 of u) to u and
 * truncating to the upper 16 bits rounds to nearest with ties to even; a
 * carry out of the fraction increments the exponent, so values at or above
 * the midpoint between 0x1.fep127 and 2^128 become Inf, as IEEE rounding
 * requires, and subnormals round like normals since bf16 shares binary32's
 * exponent range.  NaN is handled apart so that the addition cannot turn it
 * into Inf.  (The same construction as Eigen's and PyTorch's
 * round_to_nearest_even in c10/util/BFloat16.h.) */
#include <math.h>
#include <string.h>
#include "muonref/bf16.h"

uint16_t muonref_bf16_from_float(float x)
{
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  if (isnan(x))
    return (uint16_t)((u >> 16) | 0x0040u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

float muonref_bf16_to_float(uint16_t b)
{
  uint32_t u = (uint32_t)b << 16;
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

float muonref_bf16_round(float x) { return muonref_bf16_to_float(muonref_bf16_from_float(x)); }

/* Round to odd into binary32 (truncate, then set the last bit when
 * inexact) keeps enough bits (24 >= 8 + 2) for the bf16 rounding after it
 * to be the correct rounding of x (Boldo and Melquiond, "Emulation of FMA
 * and correctly rounded sums: proved algorithms using rounding to odd",
 * IEEE TC 2008). */
float muonref_bf16_round_double(double x)
{
  if (isnan(x))
    return muonref_bf16_round((float)x);
  float f = (float)x;
  if ((double)f != x) {
    if (fabs((double)f) > fabs(x))
      f = nextafterf(f, 0.0f); /* toward zero: the truncation (FLT_MAX for x beyond it) */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u |= 1u;
    memcpy(&f, &u, sizeof f);
  }
  return muonref_bf16_round(f);
}

void muonref_bf16_round_array(float *x, size_t n)
{
  /* Branch-free on the bits (memcpy keeps it free of aliasing trouble and
   * compiles to plain loads), so that the loop vectorizes; NaN lanes keep
   * their sign and get the quiet bit, as in muonref_bf16_from_float. */
  if (!x)
    return;
  for (size_t i = 0; i < n; i++) {
    uint32_t v;
    memcpy(&v, &x[i], sizeof v);
    uint32_t r = (v + 0x7FFFu + ((v >> 16) & 1u)) & 0xFFFF0000u;
    uint32_t q = (v | 0x00400000u) & 0xFFFF0000u;
    v = (v & 0x7FFFFFFFu) > 0x7F800000u ? q : r;
    memcpy(&x[i], &v, sizeof v);
  }
}
