/* muonref: one exact optimizer step (see ref.h).
 *
 * The step of spec/muon.md with the binary64 scalars of core/plan.c taken
 * exactly and the tensor arithmetic in MPFR at `prec` bits:
 *   Muon:  M' = mom_keep M + mom_grad G;  U = in_grad G + in_mom M' (Nesterov)
 *          or U = M';  O = NS(U) (muonref_ref_ns);  P' = decay P - alpha O
 *   AdamW: m' = beta1 m + (1 - beta1) g;  v' = beta2 v + (1 - beta2) g^2;
 *          q = n / (sqrt(v') / sqrt_bc2 + eps)  (0 when the denominator is 0),
 *          n = m', or num_mom m' + num_grad g under the plan's nadamw (timm, optax);
 *          P' = decay P - step_size q
 * (decay = 1 unless the plan applies it).  Each stored float is computed by
 * one two-term mpfr_fmma rounded toward zero and made round-to-odd
 * (mpround.h), then rounded to nearest-even float32: the correct rounding of
 * the value at precision prec, free of double rounding.  U and q use the
 * unrounded M', m', v'.  M', m' and v' are exact at prec >= 256 unless the
 * two terms' exponents differ by more than ~prec - 80 bits; then they are
 * round-to-odd at prec bits (relative error < 2^-(prec-1)). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/plan.h"
#include "ref/mpround.h"
#include "muonref/ns_rounded.h"
#include "muonref/ref.h"
#include "ref_internal.h"
#include "core/fail.h"

/* r <- a b + c d (a, c binary64 scalars; b, d mpfr) rounded to odd, and
 * the float32 rounding of it.  *inex (may be NULL) receives whether r is
 * inexact (then |r - (a b + c d)| < ulp(r) <= 2^(1-prec) |r|). */
static float fmma_odd_inex(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, mpfr_srcptr c, mpfr_srcptr d, int *inex)
{
  int t = mpfr_fmma(r, a, b, c, d, MPFR_RNDZ);
  muonref_mpfr_round_odd(r, t);
  if (inex)
    *inex = t != 0;
  return muonref_mpfr_get_float(r);
}

/* 1 unless the float32 rounding of the exact value v_exact is not
 * established: |r - v_exact| <= b 2^-p (b in units of 2^-p). */
static int f32_certified(mpfr_srcptr r, double b, mpfr_prec_t p)
{
  return muonref_ref_can_round(r, b, p, 24, -149, 128);
}

/* Binary64 scalar as an exact 53-bit MPFR value. */
static void scalar(mpfr_t s, double v)
{
  mpfr_init2(s, 53);
  mpfr_set_d(s, v, MPFR_RNDN);
}

/* A port's binary32 Nesterov input lies within this many binary32 ulps
 * (per step) of the magnitudes entering it from the exact one (see
 * muon_branch): 16, several times the roundings of any port measured. */
#define REACH_ULPS 16.0

/* The binary32 ulp of |x| (2^-149 below 2^-126). */
static double ulp32(double x)
{
  int e;
  x = fabs(x);
  if (!(x >= 0x1p-126))
    return 0x1p-149;
  frexp(x, &e);
  return ldexp(1.0, e - 24);
}

/* v rounded to binary32, then to bf16 (RNDN each): what a port's
 * binary32 value of v becomes at the bf16 cast. */
static double fl32_bf16(mpfr_srcptr v)
{
  mpfr_t t;
  mpfr_init2(t, 53);
  mpfr_set_d(t, muonref_mpfr_round_format(v, 24, -149, 128), MPFR_RNDN);
  double r = muonref_mpfr_round_format(t, 8, -133, 128);
  mpfr_clear(t);
  return r;
}

/* Whether every binary32 value within d of the exact u reaches the same
 * bf16 value at the cast (rounding is monotone: the ends of [u - d, u + d]
 * decide). */
static int bf16_cast_robust(mpfr_srcptr u, double d)
{
  mpfr_t lo, hi;
  mpfr_inits2(mpfr_get_prec(u) + 64, lo, hi, (mpfr_ptr)0);
  mpfr_sub_d(lo, u, d, MPFR_RNDD);
  mpfr_add_d(hi, u, d, MPFR_RNDU);
  int same = fl32_bf16(lo) == fl32_bf16(hi);
  mpfr_clears(lo, hi, (mpfr_ptr)0);
  return same;
}

/* O <- NS(U) in o's format: exact (muonref_ref_ns), or the bf16 semantics
 * (muonref_ref_ns_bf16) on U rounded to binary32, recording its
 * certificate, and MUONREF_NSR_INPUT_NOT_FP32 when that rounding was
 * inexact, unless (norm_format bf16, `reach` given) every binary32 value
 * within reach[i] of U_i casts to the same bf16 value: a port computing U
 * in binary32 lands within reach[i] of it (muon_branch) and its
 * Newton-Schulz starts from that bf16 value, the reference's. */
static int ns_in_format(muonref_mpmat *O, double *eO, const muonref_mpmat *U, const double *eU, const double *reach,
                        const muonref_options *o, unsigned *uncertain, muonref_error *err)
{
  if (o->ns_format != MUONREF_NS_BF16)
    return eO ? muonref_ref_ns_bounded(O, eO, U, eU, o, err) : muonref_ref_ns(O, U, o, err);
  size_t n = U->rows * U->cols;
  float *u = malloc(n * sizeof *u), *out = malloc(n * sizeof *out);
  unsigned flags = 0;
  int st = u && out ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the bf16 Newton-Schulz");
  if (!st) {
    muonref_mpmat_get_float(u, U);
    for (size_t i = 0; !st && i < n; i++) {
      if (!isfinite(u[i]))
        st = muonref_fail(err, MUONREF_ENUMERIC,
                          "Exact step: the Newton-Schulz input overflows binary32 at element %zu, so the bf16 "
                          "semantics (which start from a binary32 matrix) are undefined; use ns_format exact", i);
      else if (mpfr_cmp_d(U->e[i], (double)u[i]) != 0 &&
               !(reach && o->norm_format == MUONREF_NORM_FORMAT_BF16 && bf16_cast_robust(U->e[i], reach[i])))
        flags |= MUONREF_NSR_INPUT_NOT_FP32;
    }
    unsigned cert = 0;
    if (!st)
      st = muonref_ref_ns_bf16(out, u, U->rows, U->cols, o, &cert, err);
    flags |= cert;
  }
  if (!st)
    muonref_mpmat_set_float(O, out);
  /* The bf16 result is a function of the binary32 rounding of U: exact
   * (bound 0) when that rounding, and whether it was exact, are
   * established by U's bound; otherwise no bound. */
  int all_ok = 1;
  for (size_t i = 0; !st && eO && all_ok && i < n; i++) {
    int ok = f32_certified(U->e[i], eU[i], U->prec);
    if (ok && eU[i] > 0) { /* is the exact U exactly u too, or not?  |U - u| > eU 2^-p settles it */
      mpfr_t dist;
      mpfr_init2(dist, U->prec + 64);
      mpfr_sub_d(dist, U->e[i], (double)u[i], MPFR_RNDN);
      mpfr_abs(dist, dist, MPFR_RNDD);
      mpfr_mul_2si(dist, dist, (long)U->prec, MPFR_RNDD);
      ok = mpfr_cmp_d(dist, eU[i] * (1 + 0x1p-50)) > 0;
      mpfr_clear(dist);
    }
    all_ok = ok;
  }
  for (size_t j = 0; !st && eO && j < n; j++)
    eO[j] = all_ok ? 0 : INFINITY;
  if (uncertain)
    *uncertain |= flags;
  free(u), free(out);
  return st;
}

static int muon_branch(const muonref_options *o, const muonref_route *r, long t, float *param, float *M,
                       const float *grad, mpfr_prec_t prec, unsigned *uncertain, size_t *n_unc, muonref_error *err)
{
  muonref_muon_plan pl;
  muonref_muon_plan_make(o, r, &pl);
  muonref_muon_plan_correct(o, t, &pl); /* t: the step count after this step (optax's bias correction) */
  size_t n = r->numel;
  muonref_mpmat Mx = {0}, U = {0}, O = {0};
  int st = muonref_mpmat_init(&Mx, r->batch * r->rows, r->cols, prec);
  if (!st)
    st = muonref_mpmat_init(&U, r->batch * r->rows, r->cols, prec);
  if (!st)
    st = muonref_mpmat_init(&O, r->batch * r->rows, r->cols, prec);
  if (st) {
    muonref_mpmat_clear(&Mx), muonref_mpmat_clear(&U), muonref_mpmat_clear(&O);
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the exact Muon step of a (%zu, %zu) matrix", r->rows,
                        r->cols);
  }
  mpfr_t keep, mg, ig, im, dec, nal, x, y;
  scalar(keep, pl.mom_keep), scalar(mg, pl.mom_grad), scalar(ig, pl.in_grad), scalar(im, pl.in_mom);
  scalar(dec, pl.apply_decay ? pl.decay : 1.0), scalar(nal, -pl.alpha);
  mpfr_init2(x, 24), mpfr_init2(y, 24);
  float *Mout = malloc(n * sizeof *Mout);
  double *eU = n_unc ? malloc(n * sizeof *eU) : NULL, *eO = n_unc ? malloc(n * sizeof *eO) : NULL;
  double *reach = malloc(n * sizeof *reach);
  if (!Mout || !reach || (n_unc && (!eU || !eO)))
    st = muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the exact Muon step of a (%zu, %zu) matrix", r->rows,
                      r->cols);
  for (size_t i = 0; !st && i < n; i++) {
    mpfr_set_flt(x, M[i], MPFR_RNDN), mpfr_set_flt(y, grad[i], MPFR_RNDN);
    int inex_m, inex_u = 0;
    Mout[i] = fmma_odd_inex(Mx.e[i], keep, x, mg, y, &inex_m); /* its float is always the correct rounding */
    if (pl.nesterov)
      inex_u = mpfr_fmma(U.e[i], ig, y, im, Mx.e[i], MPFR_RNDN) != 0;
    else
      mpfr_set(U.e[i], Mx.e[i], MPFR_RNDN);
    /* How far a port's binary32 U can be from this one: REACH_ULPS binary32
     * ulps per step of the magnitudes that enter it (its buffer drifts by
     * an ulp or two per step from the correctly rounded one, and each of
     * its two-term updates rounds once or twice). */
    double mag = fabs(pl.mom_keep * M[i]) + fabs(pl.mom_grad * grad[i]);
    if (pl.nesterov)
      mag += fabs(pl.in_grad * grad[i]) + fabs(pl.in_mom) * (fabs(M[i]) + fabs(grad[i]));
    reach[i] = REACH_ULPS * (double)(t > 0 ? t : 1) * ulp32(mag);
    if (eU) { /* |U - U_exact| in units of 2^-prec */
      double em = inex_m ? 2 * muonref_ref_absu(Mx.e[i]) : 0;
      eU[i] = pl.nesterov ? ((inex_u ? muonref_ref_absu(U.e[i]) * (1 + 0x1p-52) : 0) + fabs(pl.in_mom) * em) * REF_BOUND_SAFETY
                          : em;
    }
  }
  size_t mat = r->rows * r->cols;
  for (size_t b = 0; !st && b < r->batch; b++) { /* each matrix of a batch on its own (conv_mode) */
    muonref_mpmat Ob = {r->rows, r->cols, prec, O.e + b * mat}, Ub = {r->rows, r->cols, prec, U.e + b * mat};
    st = ns_in_format(&Ob, eO ? eO + b * mat : NULL, &Ub, eU ? eU + b * mat : NULL, reach + b * mat, o, uncertain, err);
  }
  if (!st && pl.update_scale) /* Keller: O <- R_bf16(fl32(s) O), exact before the rounding (8 + 24 bits) */
    for (size_t i = 0; i < n; i++) {
      mpfr_mul_d(O.e[i], O.e[i], (double)(float)pl.update_factor, MPFR_RNDN); /* Keller's s, dion's lr s */
      mpfr_set_d(O.e[i], muonref_mpfr_round_format(O.e[i], 8, -133, 128), MPFR_RNDN);
      if (pl.update_factor2 != 1.0) { /* Paddle: `* extra_scale_factor`, a second bf16 product */
        mpfr_mul_d(O.e[i], O.e[i], (double)(float)pl.update_factor2, MPFR_RNDN);
        mpfr_set_d(O.e[i], muonref_mpfr_round_format(O.e[i], 8, -133, 128), MPFR_RNDN);
      }
    }
  for (size_t i = 0; !st && i < n; i++) {
    mpfr_set_flt(x, param[i], MPFR_RNDN);
    int inex;
    param[i] = fmma_odd_inex(U.e[i], dec, x, nal, O.e[i], &inex); /* U is free now: scratch */
    if (n_unc) {
      double b = ((inex ? 2 * muonref_ref_absu(U.e[i]) : 0) + fabs(pl.alpha) * eO[i]) * REF_BOUND_SAFETY;
      *n_unc += !f32_certified(U.e[i], b, prec);
    }
  }
  if (!st)
    memcpy(M, Mout, n * sizeof *M);
  free(Mout), free(eU), free(eO), free(reach);
  mpfr_clears(keep, mg, ig, im, dec, nal, x, y, (mpfr_ptr)0);
  muonref_mpmat_clear(&Mx), muonref_mpmat_clear(&U), muonref_mpmat_clear(&O);
  return st;
}

/* The AdamW branch after the step count became t; n elements. */
static void adamw_branch(const muonref_options *o, long t, size_t n, float *param, float *m, float *v,
                         const float *grad, mpfr_prec_t prec, size_t *n_unc)
{
  muonref_adamw_plan pl;
  muonref_adamw_plan_make(o, t, &pl);
  mpfr_t b1, c1, b2, c2, bc2, eps, dec, nss, x, y, g2, mx, vx, den, q, nx, nm, ng;
  scalar(b1, pl.beta1), scalar(c1, pl.one_minus_beta1), scalar(b2, pl.beta2), scalar(c2, pl.one_minus_beta2);
  scalar(nm, pl.num_mom), scalar(ng, pl.num_grad);
  scalar(bc2, pl.sqrt_bc2), scalar(eps, pl.eps);
  scalar(dec, pl.apply_decay ? pl.decay : 1.0), scalar(nss, -pl.step_size);
  mpfr_inits2(24, x, y, (mpfr_ptr)0);
  mpfr_init2(g2, 48); /* g^2, exact */
  mpfr_inits2(prec, mx, vx, den, q, nx, (mpfr_ptr)0);
  for (size_t i = 0; i < n; i++) {
    mpfr_set_flt(y, grad[i], MPFR_RNDN);
    mpfr_sqr(g2, y, MPFR_RNDN);
    mpfr_set_flt(x, m[i], MPFR_RNDN);
    int in_m, in_v, inexact;
    float m1 = fmma_odd_inex(mx, b1, x, c1, y, &in_m);
    mpfr_set_flt(x, v[i], MPFR_RNDN);
    float v1 = fmma_odd_inex(vx, b2, x, c2, g2, &in_v);
    inexact = in_m | in_v;
    inexact |= mpfr_sqrt(den, vx, MPFR_RNDN) != 0;
    inexact |= mpfr_div(den, den, bc2, MPFR_RNDN) != 0;
    inexact |= mpfr_add(den, den, eps, MPFR_RNDN) != 0;
    if (pl.nadamw) /* the NAdam(W) numerator num_mom m' + num_grad g, from the unrounded m' */
      inexact |= mpfr_fmma(nx, nm, mx, ng, y, MPFR_RNDN) != 0;
    else
      mpfr_set(nx, mx, MPFR_RNDN);
    if (mpfr_zero_p(den)) /* spec: a zero denominator moves nothing */
      mpfr_set_zero(q, 1);
    else
      inexact |= mpfr_div(q, nx, den, MPFR_RNDN) != 0;
    mpfr_set_flt(x, param[i], MPFR_RNDN);
    int inex;
    /* |q - q_exact| <= 8 2^-prec |q| (spec/reference.md 5.2); 0 when every
     * operation above was exact */
    double eq = mpfr_zero_p(q) || !inexact ? 0 : 8 * muonref_ref_absu(q) * (1 + 0x1p-40);
    if (pl.nadamw && !mpfr_zero_p(q) && inexact) /* m' (inexact by < |m'| 2^-prec) enters n times num_mom */
      eq += 2 * fabs(pl.num_mom) * muonref_ref_absu(mx) / fabs(mpfr_get_d(den, MPFR_RNDD)) * (1 + 0x1p-40);
    param[i] = fmma_odd_inex(den, dec, x, nss, q, &inex); /* den is free now: scratch */
    if (n_unc)
      *n_unc += !f32_certified(den, ((inex ? 2 * muonref_ref_absu(den) : 0) + fabs(pl.step_size) * eq) * REF_BOUND_SAFETY,
                               prec);
    m[i] = m1;
    v[i] = v1;
  }
  mpfr_clears(b1, c1, b2, c2, bc2, eps, dec, nss, x, y, g2, mx, vx, den, q, nx, nm, ng, (mpfr_ptr)0);
}

/* The first non-finite value of x[0..n), or n. */
static size_t first_nonfinite(const float *x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return i;
  return n;
}

static int check_finite(const float *x, size_t n, const char *what, muonref_error *err)
{
  size_t i = first_nonfinite(x, n);
  if (i == n)
    return MUONREF_OK;
  return muonref_fail(err, MUONREF_ENONFINITE, "Exact step: %s element %zu is %s", what, i,
                      isnan(x[i]) ? "nan" : (x[i] > 0 ? "inf" : "-inf"));
}

/* The state's buffers for route r: present, matching, finite. */
static int check_state(const muonref_route *r, const muonref_param_state *s, muonref_error *err)
{
  const char *miss = r->use_muon ? (s->momentum_buffer ? NULL : "momentum_buffer")
                                 : (!s->exp_avg ? "exp_avg" : (!s->exp_avg_sq ? "exp_avg_sq" : NULL));
  if (miss)
    return muonref_fail(err, MUONREF_ESTATE, "Exact step: the state's %s buffer is missing (the caller owns it)", miss);
  if (s->initialized && !s->use_muon != !r->use_muon)
    return muonref_fail(err, MUONREF_ESTATE, "Exact step: the parameter is routed to %s, the state is %s's",
                        r->use_muon ? "Muon" : "AdamW", s->use_muon ? "Muon" : "AdamW");
  if (s->initialized && s->numel != r->numel)
    return muonref_fail(err, MUONREF_ESTATE, "Exact step: the state has %zu elements, the parameter %zu", s->numel,
                        r->numel);
  if (s->initialized && s->step < 1)
    return muonref_fail(err, MUONREF_ESTATE, "Exact step: step %ld, an initialized state has step >= 1", s->step);
  if (!s->initialized)
    return MUONREF_OK;
  if (r->use_muon)
    return check_finite(s->momentum_buffer, r->numel, "momentum_buffer", err);
  int st = check_finite(s->exp_avg, r->numel, "exp_avg", err);
  return st ? st : check_finite(s->exp_avg_sq, r->numel, "exp_avg_sq", err);
}

static int check_args(const muonref_options *o, const muonref_route *r, const float *param,
                      const muonref_param_state *s, const float *grad, mpfr_prec_t prec, muonref_error *err)
{
  int st = muonref_options_validate(o, err);
  if (st)
    return st;
  if (prec < MUONREF_REF_PREC_MIN || prec > MPFR_PREC_MAX)
    return muonref_fail(err, MUONREF_EOPTION, "Exact step: precision %ld bits is outside [%d, %ld]", (long)prec,
                        MUONREF_REF_PREC_MIN, (long)MPFR_PREC_MAX);
  if (r->numel == 0 || (r->use_muon && (r->batch < 1 || r->batch * r->rows * r->cols != r->numel ||
                                          r->scale_rows < 1 || r->scale_cols < 1)))
    return muonref_fail(err, MUONREF_ESHAPE,
                        "Exact step: route of %zu (%zu, %zu) matrices, scale shape (%zu, %zu), with %zu elements is "
                        "not a valid routing (batch * rows * cols must be the element count, each at least 1)",
                        r->batch, r->rows, r->cols, r->scale_rows, r->scale_cols, r->numel);
  st = check_state(r, s, err);
  if (!st)
    st = check_finite(grad, r->numel, "grad", err);
  if (!st)
    st = check_finite(param, r->numel, "param", err);
  return st;
}

static int step_checked(const muonref_options *o, const muonref_route *r, float *param, muonref_param_state *state,
                        const float *grad, mpfr_prec_t prec, unsigned *ns_uncertain, size_t *n_uncertified,
                        muonref_error *err);

int muonref_ref_step(const muonref_options *o, const muonref_route *r, float *param, muonref_param_state *state,
                     const float *grad, mpfr_prec_t prec, muonref_error *err)
{
  return muonref_ref_step_flags(o, r, param, state, grad, prec, NULL, err);
}

int muonref_ref_step_flags(const muonref_options *o, const muonref_route *r, float *param, muonref_param_state *state,
                           const float *grad, mpfr_prec_t prec, unsigned *ns_uncertain, muonref_error *err)
{
  return muonref_ref_step_bounded(o, r, param, state, grad, prec, ns_uncertain, NULL, err);
}

int muonref_ref_step_bounded(const muonref_options *o, const muonref_route *r, float *param,
                             muonref_param_state *state, const float *grad, mpfr_prec_t prec,
                             unsigned *ns_uncertain, size_t *n_uncertified, muonref_error *err)
{
  if (!o || !r || !param || !state)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_step: o, r, param and state must not be NULL");
  if ((grad || o->missing_grad == MUONREF_MISSING_GRAD_ZEROS || o->adam_step_global) && state->step >= MUONREF_MAX_STEP)
    return muonref_fail(err, MUONREF_ESTATE, "Step: the step count is %ld, the most a state may count "
                        "(MUONREF_MAX_STEP, 2^53)", state->step);
  float *zeros = NULL;
  if (!grad && o->missing_grad == MUONREF_MISSING_GRAD_ZEROS) /* Keller: a missing gradient steps as zeros */
    grad = zeros = calloc(r->numel ? r->numel : 1, sizeof *zeros);
  if (!grad && o->missing_grad == MUONREF_MISSING_GRAD_ZEROS)
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the zero gradient of %zu elements", r->numel);
  if (!grad) { /* skipped; keras counts the step (adam_step_global) */
    muonref_state_missing_grad(o, r, state);
    return MUONREF_OK;
  }
  int st = step_checked(o, r, param, state, grad, prec, ns_uncertain, n_uncertified, err);
  free(zeros);
  return st;
}

/* muonref_ref_step_bounded with a gradient. */
static int step_checked(const muonref_options *o, const muonref_route *r, float *param, muonref_param_state *state,
                        const float *grad, mpfr_prec_t prec, unsigned *ns_uncertain, size_t *n_uncertified,
                        muonref_error *err)
{
  int st = check_args(o, r, param, state, grad, prec, err);
  if (st)
    return st;
  size_t n = r->numel;
  if (!state->initialized) { /* a fresh state is zeros */
    memset(r->use_muon ? state->momentum_buffer : state->exp_avg, 0, n * sizeof(float));
    if (!r->use_muon)
      memset(state->exp_avg_sq, 0, n * sizeof(float));
    state->step = 0;
  }
  if (r->use_muon) {
    st = muon_branch(o, r, state->step + 1, param, state->momentum_buffer, grad, prec, ns_uncertain, n_uncertified,
                     err);
    if (st)
      return st;
  } else {
    adamw_branch(o, state->step + 1, n, param, state->exp_avg, state->exp_avg_sq, grad, prec, n_uncertified);
  }
  state->initialized = 1;
  state->use_muon = r->use_muon;
  state->numel = n;
  state->step++;
  return MUONREF_OK;
}

int muonref_ref_grad_norm(double *out, size_t n, const float *const *grads, const size_t *numel, muonref_error *err)
{
  if (!out || (n && (!numel || !grads)))
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_grad_norm: out, grads and numel must not be NULL");
  mpfr_t sum, sq, root;
  mpfr_inits2(1200, sum, sq, (mpfr_ptr)0);
  mpfr_init2(root, 53);
  mpfr_set_zero(sum, 1);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; grads[i] && j < numel[i]; j++) {
      mpfr_set_flt(sq, grads[i][j], MPFR_RNDN); /* exact */
      mpfr_sqr(sq, sq, MPFR_RNDN);             /* exact: 48 bits */
      mpfr_add(sum, sum, sq, MPFR_RNDN);       /* exact: the span of binary32 squares fits 1200 bits */
    }
  mpfr_sqrt(root, sum, MPFR_RNDN); /* the one rounding */
  *out = mpfr_get_d(root, MPFR_RNDN);
  mpfr_clears(sum, sq, root, (mpfr_ptr)0);
  return MUONREF_OK;
}
