/* muonref: bfloat16 (bf16) rounding on the fast path.
 *
 * bf16 is the upper half of an IEEE binary32: 1 sign bit, 8 exponent bits,
 * 7 fraction bits; it has binary32's exponent range, so it has subnormals
 * down to 2^-133.  GCC 12 has no __bf16, so a bf16 value is a uint16_t bit
 * pattern, or a float whose low 16 bits are zero ("bf16-valued float"). */
#ifndef MUONREF_BF16_H
#define MUONREF_BF16_H

#include "muonref/api.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rounds x to bf16, round to nearest, ties to even.  Finite values above the
 * largest bf16 (0x1.fep127) round to +-Inf exactly when IEEE rounding would;
 * subnormals round like normals (same exponent range); a NaN stays a NaN of
 * the same sign (quiet bit set, payload truncated). */
MUONREF_API uint16_t muonref_bf16_from_float(float x);

/* The binary32 value of bf16 bits b (exact). */
MUONREF_API float muonref_bf16_to_float(uint16_t b);

/* muonref_bf16_to_float(muonref_bf16_from_float(x)). */
MUONREF_API float muonref_bf16_round(float x);

/* The binary64 x correctly rounded to bf16 (nearest, ties to even; no
 * double rounding through binary32), as a bf16-valued float: Inf beyond
 * the bf16 range as muonref_bf16_from_float, NaN stays NaN.  For products
 * of a binary32 and a bf16 value, which binary64 holds exactly. */
MUONREF_API float muonref_bf16_round_double(double x);

/* Rounds each of x[0..n) to bf16 in place (x NULL: nothing). */
MUONREF_API void muonref_bf16_round_array(float *x, size_t n);

#ifdef __cplusplus
}
#endif
#endif
