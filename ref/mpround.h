/* muonref: correct rounding of MPFR values to binary32, bfloat16 and
 * binary64, with the exact exponent range of each format (subnormals,
 * overflow to infinity), and round-to-odd for intermediate results.
 * spec/reference.md, section "Correct rounding", gives the procedure. */
#ifndef MUONREF_MPROUND_H
#define MUONREF_MPROUND_H

#include <stdint.h>
#include <mpfr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x rounded to nearest, ties to even, to a binary format with `prec`
 * significand bits (1 <= prec <= 53), smallest subnormal 2^qmin and
 * overflow threshold 2^emax (a value whose rounding reaches 2^emax in
 * magnitude becomes +-Inf).  The result is returned as the binary64 value
 * that holds it exactly.  NaN gives a NaN of x's sign, +-Inf and +-0 keep
 * their sign; an underflow to zero keeps x's sign.
 *   binary32: (24, -149, 128); bf16: (8, -133, 128); binary64: (53, -1074, 1024).
 * Method: with e the MPFR exponent of x (2^(e-1) <= |x| < 2^e), the format
 * holds min(prec, e - qmin) bits at that binade, so x is rounded once by
 * MPFR to that many bits (0 bits: compare with 2^(qmin-1); ties go to 0).
 * This is the emin/emax + mpfr_subnormalize emulation of the IEEE format
 * (MPFR manual, mpfr_subnormalize) written without changing MPFR's global
 * exponent range. */
double muonref_mpfr_round_format(mpfr_srcptr x, mpfr_prec_t prec, mpfr_exp_t qmin, mpfr_exp_t emax);

/* x correctly rounded (RNDN) to binary32, bf16 (the bit pattern: sign,
 * 8 exponent bits, 7 fraction bits; a NaN gives 0x7fc0 with x's sign) and
 * binary64. */
float muonref_mpfr_get_float(mpfr_srcptr x);
uint16_t muonref_mpfr_get_bf16(mpfr_srcptr x);
double muonref_mpfr_get_double(mpfr_srcptr x);

/* Turns a value x that MPFR rounded toward zero (ternary value `inex` of
 * that operation) into the round-to-odd value of the exact result at x's
 * precision: when inexact, the last significand bit is forced to 1.
 * Rounding a round-to-odd value of precision >= q + 2 to nearest at
 * precision q gives the correct rounding of the exact result (Boldo and
 * Melquiond, "Emulation of FMA and correctly rounded sums: proved
 * algorithms using rounding to odd", IEEE TC 57(4), 2008), so the step's
 * element-wise outputs avoid double rounding. */
void muonref_mpfr_round_odd(mpfr_ptr x, int inex);

#ifdef __cplusplus
}
#endif
#endif
