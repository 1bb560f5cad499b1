/* muonref study: the scalar study of a coefficient set (spec/ns-study.md,
 * "Scalar study"): the band [min, max] of phi_k over [smin/g, 1/g] per
 * step, where it stops shrinking, and how fast smin reaches 1. */
#include <math.h>
#include <stdlib.h>
#include "study.h"

void mst_band(const mst_set *s, double smin, int K, double *lo, double *hi, double *phik_smin)
{
  mpfr_t l, h, nl, nh, x;
  mpfr_inits2(MST_PREC, l, h, nl, nh, x, (mpfr_ptr)0);
  mpfr_set_d(l, smin, MPFR_RNDN); /* the band of step 0 in the unfolded variable: [smin, 1] */
  mpfr_set_ui(h, 1, MPFR_RNDN);
  mpfr_set(x, l, MPFR_RNDN);
  /* step 1 carries the fold of 1/g, so band 0 is reported as [smin/g, 1/g] */
  lo[0] = smin / s->norm_safety;
  hi[0] = 1.0 / s->norm_safety;
  phik_smin[0] = lo[0];
  for (int k = 1; k <= K; k++) {
    muonref_coeff t = mst_step_coeff(s, k);
    mst_mp_range(nl, nh, t, l, h);
    mpfr_swap(l, nl);
    mpfr_swap(h, nh);
    mst_mp_poly(x, x, t);
    lo[k] = mpfr_get_d(l, MPFR_RNDN);
    hi[k] = mpfr_get_d(h, MPFR_RNDN);
    phik_smin[k] = mpfr_get_d(x, MPFR_RNDN);
  }
  mpfr_clears(l, h, nl, nh, x, (mpfr_ptr)0);
}

void mst_band_sampled(const mst_set *s, double smin, int K, int n, double *lo, double *hi)
{
  mpfr_t x;
  mpfr_init2(x, MST_PREC);
  for (int k = 0; k <= K; k++)
    lo[k] = INFINITY, hi[k] = -INFINITY;
  int half = n / 2 < 1 ? 1 : n / 2;
  for (int i = 0; i < n; i++) {
    double u = i < half ? smin * pow(1.0 / smin, half > 1 ? (double)i / (half - 1) : 0.0)
                        : smin + (1.0 - smin) * (n - half > 1 ? (double)(i - half) / (n - half - 1) : 1.0);
    mpfr_set_d(x, u, MPFR_RNDN);
    for (int k = 0; k <= K; k++) {
      if (k > 0)
        mst_mp_poly(x, x, mst_step_coeff(s, k));
      double v = k ? mpfr_get_d(x, MPFR_RNDN) : u / s->norm_safety;
      lo[k] = fmin(lo[k], v);
      hi[k] = fmax(hi[k], v);
    }
  }
  mpfr_clear(x);
}

/* First k in [1, H] from which pred holds for every later step; -1 if none. */
static int first_from(const int *ok, int H)
{
  int k = -1;
  for (int j = H; j >= 1 && ok[j]; j--)
    k = j;
  return k;
}

void mst_scalar_summary_of(const mst_set *s, double smin, mst_scalar_summary *out)
{
  enum { H = MST_HORIZON };
  double lo[H + 1], hi[H + 1], ps[H + 1];
  int oks[H + 1], okb[H + 1];
  mst_band(s, smin, H, lo, hi, ps);
  int K = s->default_steps;
  out->steps = K;
  out->lo = lo[K];
  out->hi = hi[K];
  out->phi_smin = ps[K];
  out->convergent = fabs(lo[H] - 1.0) <= 1e-6 && fabs(hi[H] - 1.0) <= 1e-6;
  out->horizon_lo = lo[H];
  out->horizon_hi = hi[H];
  out->stop_step = -1; /* first k that no later step narrows by more than 0.1 % */
  for (int k = 0; k < H && out->stop_step < 0 && !out->convergent; k++) {
    int narrows = 0;
    for (int j = k + 1; j <= H && !narrows; j++)
      narrows = hi[j] - lo[j] < (1.0 - 1e-3) * (hi[k] - lo[k]);
    if (!narrows)
      out->stop_step = k;
  }
  out->late_width = 0.0;
  out->late_lo = INFINITY;
  out->late_hi = -INFINITY;
  for (int k = out->stop_step + 1; out->stop_step >= 0 && k <= H; k++) {
    out->late_width = fmax(out->late_width, hi[k] - lo[k]);
    out->late_lo = fmin(out->late_lo, lo[k]);
    out->late_hi = fmax(out->late_hi, hi[k]);
  }
  if (out->stop_step >= 0) {
    out->stop_lo = lo[out->stop_step];
    out->stop_hi = hi[out->stop_step];
  } else {
    out->stop_lo = out->stop_hi = NAN;
  }
  for (int k = 0; k <= H; k++) {
    oks[k] = fabs(ps[k] - 1.0) <= 0.01;
    okb[k] = fabs(lo[k] - 1.0) <= 0.01 && fabs(hi[k] - 1.0) <= 0.01;
  }
  out->steps_smin_1pct = first_from(oks, H);
  out->steps_band_1pct = first_from(okb, H);
}
