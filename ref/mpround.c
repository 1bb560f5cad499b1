/* muonref: correct rounding of MPFR values to binary32 / bf16 / binary64
 * (see mpround.h).  One rounding by MPFR at the number of bits the target
 * format holds in x's binade; no change of MPFR's global exponent range, so
 * the function is safe whatever range the caller has set. */
#include <math.h>
#include <string.h>
#include "ref/mpround.h"

/* +-2^k as a double (k within double's range). */
static double pow2(mpfr_exp_t k, int neg) { return neg ? -ldexp(1.0, (int)k) : ldexp(1.0, (int)k); }

double muonref_mpfr_round_format(mpfr_srcptr x, mpfr_prec_t prec, mpfr_exp_t qmin, mpfr_exp_t emax)
{
  int neg = mpfr_signbit(x) != 0;
  if (mpfr_nan_p(x))
    return neg ? -NAN : NAN;
  if (mpfr_inf_p(x))
    return neg ? -INFINITY : INFINITY;
  if (mpfr_zero_p(x))
    return neg ? -0.0 : 0.0;
  mpfr_exp_t e = mpfr_get_exp(x); /* 2^(e-1) <= |x| < 2^e */
  if (e > emax)
    return neg ? -INFINITY : INFINITY;
  mpfr_exp_t bits = e - qmin; /* bits from 2^(e-1) down to 2^qmin */
  if (bits > (mpfr_exp_t)prec)
    bits = (mpfr_exp_t)prec;
  if (bits < 0)
    return neg ? -0.0 : 0.0;
  if (bits == 0) { /* 2^(qmin-1) <= |x| < 2^qmin: the tie 2^(qmin-1) goes to even, 0 */
    mpfr_t half;
    mpfr_init2(half, 2);
    mpfr_set_ui_2exp(half, 1, qmin - 1, MPFR_RNDN);
    int above = mpfr_cmpabs(x, half) > 0;
    mpfr_clear(half);
    return above ? pow2(qmin, neg) : (neg ? -0.0 : 0.0);
  }
  mpfr_t t;
  mpfr_init2(t, (mpfr_prec_t)bits);
  mpfr_set(t, x, MPFR_RNDN);
  double r;
  if (mpfr_get_exp(t) > emax) /* rounded up to 2^emax: overflow */
    r = neg ? -INFINITY : INFINITY;
  else
    r = mpfr_get_d(t, MPFR_RNDN); /* exact: t has <= 53 bits within range */
  mpfr_clear(t);
  return r;
}

float muonref_mpfr_get_float(mpfr_srcptr x) { return (float)muonref_mpfr_round_format(x, 24, -149, 128); }

double muonref_mpfr_get_double(mpfr_srcptr x) { return muonref_mpfr_round_format(x, 53, -1074, 1024); }

uint16_t muonref_mpfr_get_bf16(mpfr_srcptr x)
{
  if (mpfr_nan_p(x))
    return (uint16_t)(mpfr_signbit(x) ? 0xffc0u : 0x7fc0u);
  float f = (float)muonref_mpfr_round_format(x, 8, -133, 128); /* a bf16 value, exact in binary32 */
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16);
}

void muonref_mpfr_round_odd(mpfr_ptr x, int inex)
{
  if (inex == 0 || !mpfr_number_p(x))
    return;
  if (mpfr_zero_p(x) || mpfr_min_prec(x) < mpfr_get_prec(x)) { /* last bit 0: move away from zero */
    if (mpfr_signbit(x))
      mpfr_nextbelow(x);
    else
      mpfr_nextabove(x);
  }
}
