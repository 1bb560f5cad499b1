/* muonref: running error bounds and the can-round test of the reference
 * (spec/reference.md section 5; ref_internal.h).
 *
 * A bound is a double b >= 0 in units of 2^-p (p the working precision of
 * the value it bounds): |computed - exact| <= b 2^-p.  Bounds are computed
 * in binary64 with round-to-nearest; every formula that produces one is
 * multiplied by REF_BOUND_SAFETY (1 + 2^-28), which covers the relative
 * rounding error of a binary64 sum of up to 2^24 non-negative terms, and
 * adds REF_BOUND_SLACK per term for products that underflow (only where
 * some term has two non-zero factors: a product with a zero factor is an
 * exact zero, so exact zeros keep bound 0). */
#include <float.h>
#include <math.h>
#include "ref/mpround.h"
#include "ref_internal.h"

double muonref_ref_absu(mpfr_srcptr x)
{
  if (mpfr_nan_p(x))
    return INFINITY;
  return mpfr_signbit(x) ? -mpfr_get_d(x, MPFR_RNDD) : mpfr_get_d(x, MPFR_RNDU);
}

double muonref_ref_ulp_unit(mpfr_prec_t p)
{
  double u = ldexp(1.0, -(int)(p > 2000 ? 2000 : p));
  return u > 0 ? u : 0x1p-1074; /* an over-estimate of 2^-p is still a bound */
}

double muonref_ref_ldexp_up(double x, long e)
{
  if (x == 0 || isnan(x) || isinf(x))
    return x;
  if (e > 4000)
    return INFINITY;
  if (e < -4000)
    return 0x1p-1074;
  double r = ldexp(x, (int)e);
  return r > 0 ? r * (1 + 0x1p-52) + 0x1p-1074 : 0x1p-1074;
}

int muonref_ref_can_round(mpfr_srcptr v, double b, mpfr_prec_t p, mpfr_prec_t fprec, mpfr_exp_t qmin,
                          mpfr_exp_t emax)
{
  if (!mpfr_number_p(v) || !(b >= 0) || isinf(b))
    return 0;
  if (b == 0)
    return 1;
  mpfr_t r, lo, hi;
  mpfr_prec_t w = mpfr_get_prec(v) + 64;
  mpfr_init2(r, 53), mpfr_init2(lo, w), mpfr_init2(hi, w);
  mpfr_set_d(r, b, MPFR_RNDU);
  mpfr_mul_2si(r, r, -(long)p, MPFR_RNDU);
  mpfr_sub(lo, v, r, MPFR_RNDD); /* rounding outward only widens the interval */
  mpfr_add(hi, v, r, MPFR_RNDU);
  /* rounding to nearest is monotone, so [lo, hi] rounds to one value iff its
   * ends do; -0 == +0 here: the sign of a zero result is not certified */
  int ok = muonref_mpfr_round_format(lo, fprec, qmin, emax) == muonref_mpfr_round_format(hi, fprec, qmin, emax);
  mpfr_clears(r, lo, hi, (mpfr_ptr)0);
  return ok;
}
