/* muonref study: odd quintics and their compositions in MPFR.
 * p(x) = a x + b x^3 + c x^5 is the scalar action of one Newton-Schulz step
 * on a singular value (Keller Jordan, Muon, 2024; spec/muon.md). */
#include "study.h"

void mst_mp_poly(mpfr_t y, const mpfr_t x, muonref_coeff t)
{
  mpfr_t x2, h;
  mpfr_inits2(mpfr_get_prec(y) + 32, x2, h, (mpfr_ptr)0);
  mpfr_sqr(x2, x, MPFR_RNDN);
  mpfr_mul_d(h, x2, t.c, MPFR_RNDN);
  mpfr_add_d(h, h, t.b, MPFR_RNDN);
  mpfr_mul(h, h, x2, MPFR_RNDN);
  mpfr_add_d(h, h, t.a, MPFR_RNDN);
  mpfr_mul(y, h, x, MPFR_RNDN);
  mpfr_clears(x2, h, (mpfr_ptr)0);
}

void mst_mp_phi(mpfr_t y, const mpfr_t x, const mst_set *s, int K, int fold)
{
  mpfr_set(y, x, MPFR_RNDN);
  for (int k = 1; k <= K; k++)
    mst_mp_poly(y, y, fold ? mst_step_coeff(s, k) : muonref_ns_coeff_at(&s->o, k - 1));
}

/* Widens [lo, hi] to hold p(x). */
static void include(mpfr_t lo, mpfr_t hi, mpfr_t v, const mpfr_t x, muonref_coeff t)
{
  mst_mp_poly(v, x, t);
  if (mpfr_less_p(v, lo))
    mpfr_set(lo, v, MPFR_RNDN);
  if (mpfr_greater_p(v, hi))
    mpfr_set(hi, v, MPFR_RNDN);
}

/* Includes p(+-sqrt(u)) when u > 0 and the point lies in [xlo, xhi]. */
static void include_root(mpfr_t lo, mpfr_t hi, mpfr_t v, mpfr_t u, const mpfr_t xlo, const mpfr_t xhi,
                         muonref_coeff t)
{
  if (mpfr_sgn(u) <= 0)
    return;
  mpfr_sqrt(u, u, MPFR_RNDN);
  for (int sign = 0; sign < 2; sign++) {
    if (sign)
      mpfr_neg(u, u, MPFR_RNDN);
    if (mpfr_greaterequal_p(u, xlo) && mpfr_lessequal_p(u, xhi))
      include(lo, hi, v, u, t);
  }
}

void mst_mp_range(mpfr_t lo, mpfr_t hi, muonref_coeff t, const mpfr_t xlo, const mpfr_t xhi)
{
  mpfr_t v, u, d, w;
  mpfr_prec_t pr = mpfr_get_prec(lo);
  mpfr_inits2(pr, v, u, d, w, (mpfr_ptr)0);
  mst_mp_poly(lo, xlo, t);
  mpfr_set(hi, lo, MPFR_RNDN);
  include(lo, hi, v, xhi, t);
  /* p'(x) = a + 3b u + 5c u^2 with u = x^2 */
  if (t.c == 0.0) {
    if (t.b != 0.0) {
      mpfr_set_d(u, -t.a, MPFR_RNDN); /* u = -a / (3b) */
      mpfr_div_d(u, u, t.b, MPFR_RNDN);
      mpfr_div_ui(u, u, 3, MPFR_RNDN);
      include_root(lo, hi, v, u, xlo, xhi, t);
    }
  } else {
    mpfr_set_d(d, t.b, MPFR_RNDN); /* d = 9b^2 - 20ac */
    mpfr_sqr(d, d, MPFR_RNDN);
    mpfr_mul_ui(d, d, 9, MPFR_RNDN);
    mpfr_set_d(w, t.a, MPFR_RNDN);
    mpfr_mul_d(w, w, t.c, MPFR_RNDN);
    mpfr_mul_ui(w, w, 20, MPFR_RNDN);
    mpfr_sub(d, d, w, MPFR_RNDN);
    if (mpfr_sgn(d) >= 0) {
      mpfr_sqrt(d, d, MPFR_RNDN);
      for (int sign = 0; sign < 2; sign++) {
        mpfr_set_d(w, t.b, MPFR_RNDN); /* u = (-3b +- sqrt(d)) / (10c) */
        mpfr_mul_si(u, w, -3, MPFR_RNDN);
        if (sign)
          mpfr_sub(u, u, d, MPFR_RNDN);
        else
          mpfr_add(u, u, d, MPFR_RNDN);
        mpfr_div_d(u, u, t.c, MPFR_RNDN);
        mpfr_div_ui(u, u, 10, MPFR_RNDN);
        include_root(lo, hi, v, u, xlo, xhi, t);
      }
    }
  }
  mpfr_clears(v, u, d, w, (mpfr_ptr)0);
}
