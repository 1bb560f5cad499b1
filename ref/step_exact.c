/* muonref: one exact optimizer step (see ref.h).
 *
 * The step of spec/muon.md with the binary64 scalars of core/plan.c taken
 * exactly and the tensor arithmetic in MPFR at `prec` bits:
 *   Muon:  M' = mom_keep M + mom_grad G;  U = in_grad G + in_mom M' (Nesterov)
 *          or U = M';  O = NS(U) (muonref_ref_ns);  P' = decay P - alpha O
 *   AdamW: m' = beta1 m + (1 - beta1) g;  v' = beta2 v + (1 - beta2) g^2;
 *          q = n / (sqrt(v' + eps_root_bc2) / sqrt_bc2 + eps)  (0 when the denominator is 0),
 *          n = m', or num_mom m' + num_grad g under the plan's nadamw (timm, optax);
 *          P' = decay P - step_size q
 * (decay = 1 unless the plan applies it; under the plans' l2, G and g are
 * first R32(G + l2 P), muonref_ref_l2_grad).  Each stored float is computed by
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
      st = muonref_ref_ns_bf16_memo(out, u, U->rows, U->cols, o, &cert, err);
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

/* |x| r in units of 2^-p: a relative bound r (in units of 2^-p) times |x|,
 * 0 for x = 0 whatever r (r is infinite where some entry of O is 0 but
 * uncertain, as a Newton-Schulz output set to 0 by an overflowed norm:
 * its own absolute bound covers such an entry). */
static double rel_part(mpfr_srcptr x, double r)
{
  return mpfr_zero_p(x) ? 0.0 : muonref_ref_absu(x) * r;
}

/* NORM's rescale of matrix b of O (per rows or columns, entries k = 0 ..
 * per - 1 with sums of squares S[k] and denominators d[k]), exactly where
 * that is the identity: O <- O f_k with
 *   f_k = ratio / d_k = sqrt(sum S / sum_k' S_k' (d_k / d_k')^2)
 * (d_k' = 0 left out: those entries' N is 0), which is exactly 1 when every
 * d is the same (NS outputs whose rows have equal norms: the division and
 * the restored norm cancel, and the step's value, often a binary32 tie, must
 * not move by a rounding); ratio / (eps d_k) under the clamp ||N||_F <
 * eps.  The bounds eO as moment2_exact's. */
static int norm_rescale_exact(const muonref_moment2_plan *m, const muonref_route *r, size_t b, muonref_mpmat *O,
                               double *eO, mpfr_t *S, mpfr_t *d, size_t per, double relmax,
                               double count, mpfr_prec_t prec)
{
  size_t rows = r->rows, cols = r->cols, mat = rows * cols;
  mpfr_t so, sn, q, den, f, eps;
  mpfr_inits2(prec, so, sn, q, den, f, (mpfr_ptr)0);
  scalar(eps, m->eps);
  mpfr_set_zero(so, 1), mpfr_set_zero(sn, 1);
  int inex_so = 0; /* whether sum S was rounded (then no factor is exact) */
  for (size_t k = 0; k < per; k++) {
    inex_so |= mpfr_add(so, so, S[k], MPFR_RNDN) != 0;
    if (!mpfr_zero_p(d[k])) {
      mpfr_sqr(q, d[k], MPFR_RNDN);
      mpfr_div(q, S[k], q, MPFR_RNDN);
      mpfr_add(sn, sn, q, MPFR_RNDN); /* ||N||^2 */
    }
  }
  mpfr_sqrt(sn, sn, MPFR_RNDN);
  int clamped = mpfr_cmp(sn, eps) < 0; /* dion: `norm_U_new.clamp(min=1e-8)` */
  mpfr_sqrt(q, so, MPFR_RNDN);          /* ||O||_F */
  mpfr_t *F = malloc(per * sizeof *F);
  int *inex = calloc(per ? per : 1, sizeof *inex); /* whether F[k] was rounded */
  if (!F || !inex) {
    free(F), free(inex);
    mpfr_clears(so, sn, q, den, f, eps, (mpfr_ptr)0);
    return MUONREF_ENOMEM;
  }
  for (size_t k = 0; k < per; k++) {
    mpfr_init2(F[k], prec);
    inex[k] = 1;
    if (mpfr_zero_p(d[k]) || mpfr_zero_p(so) || (clamped && mpfr_zero_p(eps))) {
      mpfr_set_zero(F[k], 1);
      continue;
    }
    if (clamped) {
      mpfr_mul(den, eps, d[k], MPFR_RNDN);
      mpfr_div(F[k], q, den, MPFR_RNDN);
      continue;
    }
    mpfr_set_zero(den, 1);
    int t = inex_so;
    for (size_t k2 = 0; k2 < per; k2++) {
      if (mpfr_zero_p(d[k2]))
        continue;
      t |= mpfr_div(f, d[k], d[k2], MPFR_RNDN) != 0; /* 1 exactly where d_k = d_k' */
      t |= mpfr_sqr(f, f, MPFR_RNDN) != 0;
      t |= mpfr_fma(den, S[k2], f, den, MPFR_RNDN) != 0;
    }
    t |= mpfr_div(F[k], so, den, MPFR_RNDN) != 0;
    t |= mpfr_sqrt(F[k], F[k], MPFR_RNDN) != 0;
    inex[k] = t;
  }
  for (size_t i = 0; F && i < rows; i++)
    for (size_t j = 0; j < cols; j++) {
      size_t k = muonref_moment2_index(m, rows, cols, i, j), e = b * mat + i * cols + j;
      int t = mpfr_mul(O->e[e], O->e[e], F[k], MPFR_RNDN) != 0 || inex[k];
      if (eO) /* O's bound times the factor, and (count + per + 64) roundings of each of four relative terms
               * when anything was rounded (none: the factor is exactly 1, or another exact value) */
        eO[e] = mpfr_zero_p(F[k]) ? 0.0 : eO[e] * mpfr_get_d(F[k], MPFR_RNDU) * 2 +
                rel_part(O->e[e], 8 * relmax + (t ? 32 * (count + (double)per + 64) : 0));
    }
  for (size_t k = 0; k < per; k++)
    mpfr_clear(F[k]);
  free(F), free(inex);
  mpfr_clears(so, sn, q, den, f, eps, (mpfr_ptr)0);
  return MUONREF_OK;
}

/* The second moment of the Newton-Schulz output, exactly (spec/muon.md 7.4;
 * core/plan.h muonref_moment2_plan): from the stored v (V, m2n floats) the
 * new v' into V2 (each rounded once to binary32), and O replaced by the
 * normalised update, every operation at prec bits.  eO (NULL: no bounds) are
 * O's bounds in units of 2^-prec, replaced by the bounds of the result;
 * *n_unc counts the entries of v' whose binary32 rounding the bounds do
 * not establish. */
static int moment2_exact(const muonref_options *o, const muonref_route *r, long t, muonref_mpmat *O, double *eO,
                         const float *V, float *V2, size_t m2n, mpfr_prec_t prec, size_t *n_unc, muonref_error *err)
{
  muonref_moment2_plan m;
  muonref_moment2_plan_make(o, t, &m);
  size_t rows = r->rows, cols = r->cols, mat = rows * cols, per = m2n / r->batch, n = r->numel;
  double count = m.kind == MUONREF_MOMENT2_ELEMENT ? 1.0 : (double)(mat / per);
  mpfr_t *d = malloc(m2n * sizeof *d), *S = malloc(m2n * sizeof *S);
  double *ev = eO ? calloc(m2n, sizeof *ev) : NULL, *dd = malloc(m2n * sizeof *dd);
  int *vin = calloc(m2n, sizeof *vin); /* whether v' was rounded */
  if (!d || !S || !dd || !vin || (eO && !ev)) {
    free(d), free(S), free(ev), free(dd), free(vin);
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the exact second moment of %zu entries", m2n);
  }
  for (size_t k = 0; k < m2n; k++)
    mpfr_init2(d[k], prec), mpfr_set_zero(d[k], 1), mpfr_init2(S[k], prec);
  mpfr_t keep, take, bc, eps, x, sq, norm_o, norm_n, total, ratio;
  scalar(keep, m.keep), scalar(take, m.take), scalar(bc, m.bias_correction2), scalar(eps, m.eps);
  mpfr_init2(x, 24);
  mpfr_inits2(prec, sq, norm_o, norm_n, total, ratio, (mpfr_ptr)0);
  mpfr_set_zero(total, 1);
  int st = MUONREF_OK;
  double relmax = 0.0; /* the largest relative bound of O, in units of 2^-prec */
  for (size_t j = 0; eO && j < n; j++)
    relmax = fmax(relmax, eO[j] == 0 ? 0 : mpfr_zero_p(O->e[j]) ? INFINITY : eO[j] / muonref_ref_absu(O->e[j]));
  for (size_t b = 0; b < r->batch; b++) {
    mpfr_t *db = d + b * per;
    for (size_t k = 0; k < per; k++)
      vin[b * per + k] = 0;
    for (size_t i = 0; i < rows; i++) /* the sums of squares of each entry's elements */
      for (size_t j = 0; j < cols; j++) {
        size_t k = muonref_moment2_index(&m, rows, cols, i, j), e = b * mat + i * cols + j;
        vin[b * per + k] |= mpfr_sqr(sq, O->e[e], MPFR_RNDN) != 0;
        vin[b * per + k] |= mpfr_add(db[k], db[k], sq, MPFR_RNDN) != 0;
        if (ev) /* |O^2 - O_exact^2| <= (2 |O| e + e^2 2^-p) 2^-p */
          ev[b * per + k] += 2 * muonref_ref_absu(O->e[e]) * eO[e] + eO[e] * eO[e] * muonref_ref_ulp_unit(prec);
      }
    for (size_t k = 0; k < per; k++) {
      size_t q = b * per + k;
      mpfr_set(S[q], db[k], MPFR_RNDN); /* the entry's sum of squares */
      vin[q] |= mpfr_div_d(db[k], db[k], count, MPFR_RNDN) != 0; /* the mean */
      mpfr_set_flt(x, V[q], MPFR_RNDN);
      vin[q] |= mpfr_fmma(db[k], keep, x, take, db[k], MPFR_RNDN) != 0; /* v' */
      V2[q] = muonref_mpfr_get_float(db[k]);
      if (n_unc) { /* each operation rounds at prec bits: (count + 8) roundings of |v'| at most (none: exact), O's bound */
        double bv = (vin[q] ? muonref_ref_absu(db[k]) * (count + 8) : 0) + m.take * (ev ? ev[q] : 0) / count;
        bv *= 2 * REF_BOUND_SAFETY;
        *n_unc += !f32_certified(db[k], bv, prec);
      }
      mpfr_div(db[k], db[k], bc, MPFR_RNDN);
      if (m.clamp) {
        if (mpfr_cmp(db[k], eps) < 0)
          mpfr_set(db[k], eps, MPFR_RNDN);
        mpfr_sqrt(db[k], db[k], MPFR_RNDN);
      } else {
        mpfr_sqrt(db[k], db[k], MPFR_RNDN);
        mpfr_add(db[k], db[k], eps, MPFR_RNDN);
      }
      dd[q] = mpfr_get_d(db[k], MPFR_RNDD);
    }
    if (m.rescale == MUONREF_MOMENT2_RESCALE_NORM && m.kind != MUONREF_MOMENT2_ELEMENT) {
      if (norm_rescale_exact(&m, r, b, O, eO, S + b * per, db, per, relmax, count, prec)) {
        st = muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the exact second moment of %zu entries", m2n);
        break;
      }
      continue;
    }
    mpfr_set_zero(norm_o, 1), mpfr_set_zero(norm_n, 1);
    for (size_t i = 0; i < rows; i++)
      for (size_t j = 0; j < cols; j++) {
        size_t k = muonref_moment2_index(&m, rows, cols, i, j), e = b * mat + i * cols + j;
        mpfr_sqr(sq, O->e[e], MPFR_RNDN);
        mpfr_add(norm_o, norm_o, sq, MPFR_RNDN);
        if (mpfr_zero_p(db[k])) /* a zero denominator moves nothing */
          mpfr_set_zero(O->e[e], 1);
        else
          mpfr_div(O->e[e], O->e[e], db[k], MPFR_RNDN); /* N */
        mpfr_sqr(sq, O->e[e], MPFR_RNDN);
        mpfr_add(norm_n, norm_n, sq, MPFR_RNDN);
      }
    mpfr_add(total, total, norm_n, MPFR_RNDN);
    if (m.rescale != MUONREF_MOMENT2_RESCALE_NORM)
      continue;
    mpfr_sqrt(norm_o, norm_o, MPFR_RNDN), mpfr_sqrt(norm_n, norm_n, MPFR_RNDN);
    if (mpfr_cmp(norm_n, eps) < 0) /* dion: `norm_U_new.clamp(min=1e-8)` */
      mpfr_set(norm_n, eps, MPFR_RNDN);
    if (mpfr_zero_p(norm_n)) /* eps 0 and N = 0: nothing to restore */
      mpfr_set_zero(ratio, 1);
    else
      mpfr_div(ratio, norm_o, norm_n, MPFR_RNDN);
    for (size_t e = b * mat; e < (b + 1) * mat; e++)
      mpfr_mul(O->e[e], O->e[e], ratio, MPFR_RNDN);
    for (size_t e = b * mat; eO && e < (b + 1) * mat; e++) { /* the bounds: O's, through d and the ratio */
      size_t i = (e - b * mat) / cols, j = (e - b * mat) % cols;
      double dk = dd[b * per + muonref_moment2_index(&m, rows, cols, i, j)], rt = mpfr_get_d(ratio, MPFR_RNDU);
      eO[e] = (dk > 0 ? eO[e] / dk * rt * 2 : 0) + rel_part(O->e[e], 8 * relmax + 32 * (count + n + 64));
    }
  }
  int unit = muonref_moment2_rescale_whole(m.rescale);
  double rms = m.rescale == MUONREF_MOMENT2_RESCALE_RMS ? muonref_moment2_rms_factor(n) : 1.0;
  if (!st && unit) { /* timm: `update_adaptive / update_adaptive.norm().add_(eps)`; RMS: times 0.2 sqrt(numel) */
    mpfr_sqrt(total, total, MPFR_RNDN);
    mpfr_add(total, total, eps, MPFR_RNDN);
    if (mpfr_zero_p(total))
      mpfr_set_inf(total, 1); /* eps 0 and N = 0: the zero update stays zero */
    for (size_t e = 0; e < n; e++) {
      mpfr_div(O->e[e], O->e[e], total, MPFR_RNDN);
      mpfr_mul_d(O->e[e], O->e[e], rms, MPFR_RNDN);
    }
  }
  if (!st && eO && m.rescale != MUONREF_MOMENT2_RESCALE_NORM) {
    double f = unit ? rms / fmax(mpfr_get_d(total, MPFR_RNDD), 0x1p-1074) : 1.0;
    for (size_t e = 0; e < n; e++) {
      size_t bb = e / mat, i = (e % mat) / cols, j = e % cols;
      double dk = dd[bb * per + muonref_moment2_index(&m, rows, cols, i, j)];
      eO[e] = (dk > 0 ? eO[e] / dk * f * 2 : 0) + rel_part(O->e[e], 8 * relmax + 32 * (count + n + 64));
    }
  }
  for (size_t k = 0; k < m2n; k++)
    mpfr_clear(d[k]), mpfr_clear(S[k]);
  mpfr_clears(keep, take, bc, eps, x, sq, norm_o, norm_n, total, ratio, (mpfr_ptr)0);
  free(d), free(S), free(ev), free(dd), free(vin);
  return st;
}

/* nuclear_scale (optax's adaptive, PolarGrad): O <- s O with s = <U, O>_F,
 * the sum of the n products accumulated in prec + GUARD bits and rounded
 * once, each s O_k rounded once.  With bounds (eO, eU in units 2^-p, both
 * given or both NULL): |s - s_exact| <= es 2^-p with es = |s| + sum_k (eU_k
 * (|O_k| + 2^-p eO_k) + |U_k| eO_k) + n 2^-GUARD sum_k |U_k O_k|, and each product's
 * |s O_k - s_exact O_k exact| <= (|s| eO_k + (|O_k| + 2^-p eO_k) es) 2^-p. */
static void nuclear_scale(muonref_mpmat *O, double *eO, const muonref_mpmat *U, const double *eU, mpfr_prec_t prec)
{
  size_t n = O->rows * O->cols;
  mpfr_t s;
  mpfr_init2(s, prec + MUONREF_REF_GUARD);
  mpfr_set_zero(s, 1);
  muonref_ref_dot_acc(s, U->e[0], 1, O->e[0], 1, n);
  mpfr_prec_round(s, prec, MPFR_RNDN);
  double u = muonref_ref_ulp_unit(prec), as = muonref_ref_absu(s), es = as, sum_abs = 0;
  for (size_t k = 0; eO && k < n; k++) {
    double ao = muonref_ref_absu(O->e[k]), au = muonref_ref_absu(U->e[k]);
    es += eU[k] * (ao + u * eO[k]) + au * eO[k];
    sum_abs += au * ao;
  }
  /* the accumulation: n terms at prec + GUARD bits (mpmat.h) */
  es = (es + (double)n * ldexp(sum_abs, -MUONREF_REF_GUARD)) * REF_BOUND_SAFETY;
  for (size_t k = 0; k < n; k++) {
    double ao = muonref_ref_absu(O->e[k]);
    mpfr_mul(O->e[k], O->e[k], s, MPFR_RNDN);
    if (eO)
      eO[k] = (muonref_ref_absu(O->e[k]) * (1 + 0x1p-52) + as * eO[k] + (ao + u * eO[k]) * es) * REF_BOUND_SAFETY;
  }
  mpfr_clear(s);
}

/* cautious_update (options.h, spec/muon.md 8) on the Newton-Schulz output O
 * (matrix order, n = its elements): O_k kept where O_k C_k > 0, C the
 * Nesterov input U (matrix order) when from_u, else the gradient grad (the
 * parameter's order, r's matrix index maps it), then multiplied by the
 * port's float32 factor fl32(n / (kept + 1)): in the bf16 format (bf16)
 * rounded to float32, then to bf16, as the port's bf16 output times a
 * float32 mask; otherwise rounded once at O's precision; the rest 0.  The
 * signs are the exact ones: where a bound (eO, in units 2^-p) leaves the
 * sign of a nonzero O_k open, every one of the n outputs counts as
 * uncertified (*n_unc += n: the factor depends on it). */
static void cautious_mask(muonref_mpmat *O, double *eO, const muonref_mpmat *U, const float *grad, int from_u,
                          int bf16, const muonref_route *r, mpfr_prec_t prec, size_t *n_unc)
{
  size_t n = r->numel, kept = 0;
  int open = 0;
  double u = muonref_ref_ulp_unit(prec);
  for (size_t i = 0; i < n; i++) {
    size_t k = muonref_route_matrix_index(r, i);
    int sc = from_u ? mpfr_sgn(U->e[k]) : muonref_sign(grad[i]);
    sc = (sc > 0) - (sc < 0);
    int so = mpfr_sgn(O->e[k]);
    so = (so > 0) - (so < 0);
    open |= eO && so && muonref_ref_absu(O->e[k]) <= u * eO[k]; /* a zero O_k is the format's zero, kept out */
    if (muonref_cautious_keeps(so, sc))
      kept++;
    else
      mpfr_set_zero(O->e[k], 1);
  }
  if (open && n_unc)
    *n_unc += n;
  double f = (double)(float)muonref_cautious_factor(n, kept);
  for (size_t k = 0; k < n; k++) {
    int inex = mpfr_mul_d(O->e[k], O->e[k], f, MPFR_RNDN) != 0; /* exact for a bf16 O (8 + 24 bits) */
    if (eO)
      eO[k] = ((inex ? muonref_ref_absu(O->e[k]) * (1 + 0x1p-52) : 0) + f * eO[k]) * REF_BOUND_SAFETY;
    if (bf16) { /* R_bf16(R_f32(O f)): exact where the float32 rounding is certain (then so is the bf16 one) */
      if (eO)
        eO[k] = muonref_ref_can_round(O->e[k], eO[k], prec, 24, -149, 128) ? 0.0 : INFINITY;
      mpfr_set_d(O->e[k], muonref_mpfr_round_format(O->e[k], 24, -149, 128), MPFR_RNDN);
      mpfr_set_d(O->e[k], muonref_mpfr_round_format(O->e[k], 8, -133, 128), MPFR_RNDN);
    }
  }
}

/* The gradient of the plans' l2 (decay_method L2, adam_l2): with l2 != 0,
 * *own gets R32(G + l2 P) (muonref_ref_l2_grad; P, n floats, before the
 * step) and *grad points to it (the caller frees *own); else *own is NULL
 * and *grad stays.  MUONREF_ENOMEM, or muonref_ref_l2_grad's errors. */
static int l2_gradient(double l2, const float **grad, const float *param, size_t n, float **own, muonref_error *err)
{
  *own = NULL;
  if (l2 == 0.0)
    return MUONREF_OK;
  if (!(*own = malloc((n ? n : 1) * sizeof **own)))
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the L2 gradient of %zu elements", n);
  int st = muonref_ref_l2_grad(*own, *grad, param, n, l2, err);
  if (st) {
    free(*own), *own = NULL;
    return st;
  }
  *grad = *own;
  return MUONREF_OK;
}

static int muon_branch(const muonref_options *o, const muonref_route *r, long t, float *param, float *M,
                       float *V, size_t m2n, const float *grad, mpfr_prec_t prec, unsigned *uncertain, size_t *n_unc,
                       muonref_error *err)
{
  muonref_muon_plan pl;
  muonref_muon_plan_make(o, r, &pl);
  muonref_muon_plan_correct(o, t, &pl); /* t: the step count after this step (optax's bias correction) */
  size_t n = r->numel;
  float *l2g; /* decay_method L2: the gradient with wd P added, from P before the step */
  int s2 = l2_gradient(pl.l2, &grad, param, n, &l2g, err);
  if (s2)
    return s2;
  muonref_mpmat Mx = {0}, U = {0}, O = {0};
  int st = muonref_mpmat_init(&Mx, r->batch * r->rows, r->cols, prec);
  if (!st)
    st = muonref_mpmat_init(&U, r->batch * r->rows, r->cols, prec);
  if (!st)
    st = muonref_mpmat_init(&O, r->batch * r->rows, r->cols, prec);
  if (st) {
    muonref_mpmat_clear(&Mx), muonref_mpmat_clear(&U), muonref_mpmat_clear(&O), free(l2g);
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the exact Muon step of a (%zu, %zu) matrix", r->rows,
                        r->cols);
  }
  mpfr_t keep, mg, ig, im, dec, nal, x, y, one;
  scalar(keep, pl.mom_keep), scalar(mg, pl.mom_grad), scalar(ig, pl.in_grad), scalar(im, pl.in_mom), scalar(one, 1.0);
  scalar(dec, pl.apply_decay ? pl.decay : 1.0), scalar(nal, -pl.alpha);
  mpfr_init2(x, 24), mpfr_init2(y, 24);
  float *Mout = malloc(n * sizeof *Mout);
  double *eU = n_unc ? malloc(n * sizeof *eU) : NULL, *eO = n_unc ? malloc(n * sizeof *eO) : NULL;
  double *reach = malloc(n * sizeof *reach);
  if (!Mout || !reach || (n_unc && (!eU || !eO)))
    st = muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the exact Muon step of a (%zu, %zu) matrix", r->rows,
                      r->cols);
  for (size_t i = 0; !st && i < n; i++) {
    size_t k = muonref_route_matrix_index(r, i); /* U and O in matrix order (conv_mode SPATIAL interleaves them) */
    mpfr_set_flt(x, M[i], MPFR_RNDN), mpfr_set_flt(y, grad[i], MPFR_RNDN);
    int inex_m, inex_u = 0;
    Mout[i] = fmma_odd_inex(Mx.e[i], keep, x, mg, y, &inex_m); /* its float is always the correct rounding */
    if (pl.nesterov)
      inex_u = mpfr_fmma(U.e[k], ig, y, im, Mx.e[i], MPFR_RNDN) != 0;
    else
      mpfr_set(U.e[k], Mx.e[i], MPFR_RNDN);
    /* How far a port's binary32 U can be from this one: REACH_ULPS binary32
     * ulps per step of the magnitudes that enter it (its buffer drifts by
     * an ulp or two per step from the correctly rounded one, and each of
     * its two-term updates rounds once or twice). */
    double mag = fabs(pl.mom_keep * M[i]) + fabs(pl.mom_grad * grad[i]);
    if (pl.nesterov)
      mag += fabs(pl.in_grad * grad[i]) + fabs(pl.in_mom) * (fabs(M[i]) + fabs(grad[i]));
    reach[k] = REACH_ULPS * (double)(t > 0 ? t : 1) * ulp32(mag);
    if (eU) { /* |U - U_exact| in units of 2^-prec */
      double em = inex_m ? 2 * muonref_ref_absu(Mx.e[i]) : 0;
      eU[k] = pl.nesterov ? ((inex_u ? muonref_ref_absu(U.e[k]) * (1 + 0x1p-52) : 0) + fabs(pl.in_mom) * em) * REF_BOUND_SAFETY
                          : em;
    }
  }
  size_t mat = r->rows * r->cols;
  if (r->momentum_only) /* mlx (route_rule MOMENTUM_1D): the update is U itself, exact */
    for (size_t i = 0; i < n; i++) {
      mpfr_set(O.e[i], U.e[i], MPFR_RNDN);
      if (eO)
        eO[i] = eU[i];
    }
  for (size_t b = 0; !st && !r->momentum_only && b < r->batch; b++) { /* each matrix of a batch on its own (conv_mode) */
    muonref_mpmat Ob = {r->rows, r->cols, prec, O.e + b * mat}, Ub = {r->rows, r->cols, prec, U.e + b * mat};
    st = ns_in_format(&Ob, eO ? eO + b * mat : NULL, &Ub, eU ? eU + b * mat : NULL, reach + b * mat, o, uncertain, err);
  }
  if (!st && o->nuclear_scale)
    nuclear_scale(&O, eO, &U, eU, prec);
  if (!st && o->cautious_update)
    cautious_mask(&O, eO, &U, grad, muonref_grad_holds_nesterov_input(o, pl.nesterov), o->ns_format == MUONREF_NS_BF16,
                  r, prec, n_unc);
  if (!st && m2n && o->moment2_prescale && !pl.update_scale) /* Emerging-Optimizers v0.2.0: s O into the moment */
    for (size_t i = 0; i < n; i++) {
      mpfr_mul_d(O.e[i], O.e[i], pl.scale, MPFR_RNDN);
      if (eO)
        eO[i] = eO[i] * fabs(pl.scale) * (1 + 0x1p-52) + (mpfr_zero_p(O.e[i]) ? 0 : muonref_ref_absu(O.e[i]));
    }
  float *V2 = m2n ? malloc(m2n * sizeof *V2) : NULL;
  if (!st && m2n && !V2)
    st = muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the second moment of %zu entries", m2n);
  if (!st && m2n && muonref_moment2_interleaved(o, r)) { /* v in the parameter's order, the matrices' here */
    float *Vm = malloc(2 * m2n * sizeof *Vm);
    if (!Vm)
      st = muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the second moment of %zu entries", m2n);
    for (size_t j = 0; !st && j < m2n; j++)
      Vm[muonref_route_matrix_index(r, j)] = V[j];
    if (!st)
      st = moment2_exact(o, r, t, &O, eO, Vm, Vm + m2n, m2n, prec, n_unc, err);
    for (size_t j = 0; !st && j < m2n; j++)
      V2[j] = Vm[m2n + muonref_route_matrix_index(r, j)];
    free(Vm);
  } else if (!st && m2n) /* the second moment (NorMuon, AdaMuon) on the Newton-Schulz output */
    st = moment2_exact(o, r, t, &O, eO, V, V2, m2n, prec, n_unc, err);
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
    size_t k = muonref_route_matrix_index(r, i);
    mpfr_set_flt(x, param[i], MPFR_RNDN);
    int inex;
    /* cautious_wd (spec/muon.md 4.1): no decay where the parameter and the update differ in sign */
    mpfr_srcptr di = muonref_cautious_decays(pl.cautious, mpfr_sgn(x), mpfr_sgn(O.e[k])) ? dec : one;
    param[i] = fmma_odd_inex(U.e[i], di, x, nal, O.e[k], &inex); /* U is free now: scratch */
    if (n_unc) {
      double b = ((inex ? 2 * muonref_ref_absu(U.e[i]) : 0) + fabs(pl.alpha) * eO[k]) * REF_BOUND_SAFETY;
      *n_unc += !f32_certified(U.e[i], b, prec);
    }
  }
  if (!st)
    memcpy(M, Mout, n * sizeof *M);
  if (!st && m2n)
    memcpy(V, V2, m2n * sizeof *V);
  free(Mout), free(eU), free(eO), free(reach), free(V2), free(l2g);
  mpfr_clears(keep, mg, ig, im, dec, nal, x, y, one, (mpfr_ptr)0);
  muonref_mpmat_clear(&Mx), muonref_mpmat_clear(&U), muonref_mpmat_clear(&O);
  return st;
}

/* The Muon branch of a parameter with row blocks (r->split, spec/muon.md
 * 7.6): each block's rows of the parameter, its momentum and gradient
 * gathered into a parameter of its own (muonref_route_block), stepped by
 * muon_branch, and put back into copies; the parameter and its momentum
 * are written only when every block succeeded.  (No second moment:
 * options validation refuses it with row blocks.) */
static int muon_blocks(const muonref_options *o, const muonref_route *r, long t, float *param, float *M,
                       const float *grad, mpfr_prec_t prec, unsigned *uncertain, size_t *n_unc, muonref_error *err)
{
  size_t n = r->numel, cols = r->cols;
  float *pc = malloc(n * sizeof *pc), *mc = malloc(n * sizeof *mc), *blk = malloc(3 * n * sizeof *blk);
  int st = pc && mc && blk ? MUONREF_OK
                           : muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the row blocks of a (%zu, %zu) matrix",
                                          r->rows, cols);
  if (!st)
    memcpy(pc, param, n * sizeof *pc), memcpy(mc, M, n * sizeof *mc);
  for (size_t b = 0; !st && b < r->split; b++) {
    muonref_route sub;
    muonref_route_block(o, r, b, &sub);
    float *pb = blk, *mb = blk + sub.numel, *gb = blk + 2 * sub.numel;
    size_t w = sub.cols; /* a block row: w elements of the parameter from muonref_route_block_at */
    for (size_t i = 0; i < sub.rows; i++) {
      size_t at = muonref_route_block_at(o, r, b, i);
      memcpy(pb + i * w, pc + at, w * sizeof *pb);
      memcpy(mb + i * w, mc + at, w * sizeof *mb);
      memcpy(gb + i * w, grad + at, w * sizeof *gb);
    }
    st = muon_branch(o, &sub, t, pb, mb, NULL, 0, gb, prec, uncertain, n_unc, err);
    for (size_t i = 0; !st && i < sub.rows; i++) {
      size_t at = muonref_route_block_at(o, r, b, i);
      memcpy(pc + at, pb + i * w, w * sizeof *pb);
      memcpy(mc + at, mb + i * w, w * sizeof *mb);
    }
  }
  if (!st)
    memcpy(param, pc, n * sizeof *pc), memcpy(M, mc, n * sizeof *mc);
  free(pc), free(mc), free(blk);
  return st;
}

/* The AdamW branch after the step count became t; n elements. */
static int adamw_branch(const muonref_options *o, long t, size_t n, float *param, float *m, float *v,
                         const float *grad, mpfr_prec_t prec, size_t *n_unc, muonref_error *err)
{
  muonref_adamw_plan pl;
  muonref_adamw_plan_make(o, t, &pl);
  float *l2g; /* adam_l2: the gradient with wd P added, from P before the step */
  int s2 = l2_gradient(pl.l2, &grad, param, n, &l2g, err);
  if (s2)
    return s2;
  mpfr_t b1, c1, b2, c2, bc2, eps, er, dec, nss, x, y, g2, mx, vx, den, q, nx, nm, ng, one;
  scalar(b1, pl.beta1), scalar(c1, pl.one_minus_beta1), scalar(b2, pl.beta2), scalar(c2, pl.one_minus_beta2);
  scalar(one, 1.0);
  scalar(nm, pl.num_mom), scalar(ng, pl.num_grad);
  scalar(bc2, pl.sqrt_bc2), scalar(eps, pl.eps), scalar(er, pl.eps_root_bc2);
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
    if (pl.eps_root_bc2 != 0.0) /* optax's eps_root: sqrt(v' + eps_root bc2) / sqrt_bc2 */
      inexact |= mpfr_add(den, vx, er, MPFR_RNDN) != 0;
    else
      mpfr_set(den, vx, MPFR_RNDN);
    inexact |= mpfr_sqrt(den, den, MPFR_RNDN) != 0;
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
    mpfr_srcptr di = muonref_cautious_decays(pl.cautious, mpfr_sgn(x), mpfr_sgn(q)) ? dec : one;
    param[i] = fmma_odd_inex(den, di, x, nss, q, &inex); /* den is free now: scratch */
    if (n_unc)
      *n_unc += !f32_certified(den, ((inex ? 2 * muonref_ref_absu(den) : 0) + fabs(pl.step_size) * eq) * REF_BOUND_SAFETY,
                               prec);
    m[i] = m1;
    v[i] = v1;
  }
  mpfr_clears(b1, c1, b2, c2, bc2, eps, er, dec, nss, x, y, g2, mx, vx, den, q, nx, nm, ng, one, (mpfr_ptr)0);
  free(l2g);
  return MUONREF_OK;
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
static int check_state(const muonref_options *o, const muonref_route *r, const muonref_param_state *s,
                       muonref_error *err)
{
  int st;
  size_t m2 = muonref_moment2_numel(o, r);
  const char *miss = r->use_muon ? (!s->momentum_buffer ? "momentum_buffer" : m2 && !s->moment2 ? "moment2" : NULL)
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
  if (r->use_muon && m2 && s->moment2_numel != m2)
    return muonref_fail(err, MUONREF_ESTATE, "Exact step: the state's second moment has %zu entries, the options keep %zu",
                        s->moment2_numel, m2);
  if (r->use_muon && m2 && (st = check_finite(s->moment2, m2, "moment2", err)))
    return st;
  if (r->use_muon)
    return check_finite(s->momentum_buffer, r->numel, "momentum_buffer", err);
  st = check_finite(s->exp_avg, r->numel, "exp_avg", err);
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
  st = check_state(o, r, s, err);
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
    if (r->use_muon && state->moment2)
      memset(state->moment2, 0, muonref_moment2_numel(o, r) * sizeof(float));
    memset(r->use_muon ? state->momentum_buffer : state->exp_avg, 0, n * sizeof(float));
    if (!r->use_muon)
      memset(state->exp_avg_sq, 0, n * sizeof(float));
    state->step = 0;
  }
  if (r->use_muon && r->split)
    st = muon_blocks(o, r, state->step + 1, param, state->momentum_buffer, grad, prec, ns_uncertain, n_uncertified,
                     err);
  if (r->use_muon && r->split && st)
    return st;
  if (r->use_muon && !r->split) {
    st = muon_branch(o, r, state->step + 1, param, state->momentum_buffer, state->moment2,
                     muonref_moment2_numel(o, r), grad, prec, ns_uncertain, n_uncertified, err);
    if (!st)
      state->moment2_numel = muonref_moment2_numel(o, r);
    if (st)
      return st;
  } else if (!r->use_muon) {
    st = adamw_branch(o, state->step + 1, n, param, state->exp_avg, state->exp_avg_sq, grad, prec, n_uncertified, err);
    if (st)
      return st;
  }
  state->initialized = 1;
  state->use_muon = r->use_muon;
  state->numel = n;
  state->step++;
  return MUONREF_OK;
}

int muonref_ref_l2_grad(float *out, const float *g, const float *p, size_t n, double wd, muonref_error *err)
{
  if (n && (!out || !g || !p))
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_l2_grad: out, g and p must not be NULL");
  if (!isfinite(wd))
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_l2_grad: wd must be finite, got %g", wd);
  mpfr_t w, x, y, r;
  mpfr_inits2(24, x, y, (mpfr_ptr)0);
  mpfr_init2(w, 53), mpfr_init2(r, 80);
  mpfr_set_d(w, wd, MPFR_RNDN); /* exact */
  for (size_t j = 0; j < n; j++) {
    mpfr_set_flt(x, p[j], MPFR_RNDN), mpfr_set_flt(y, g[j], MPFR_RNDN); /* exact */
    muonref_mpfr_round_odd(r, mpfr_fma(r, w, x, y, MPFR_RNDZ));
    out[j] = muonref_mpfr_get_float(r); /* the one rounding: odd at 80 bits is exact for binary32 */
  }
  mpfr_clears(w, x, y, r, (mpfr_ptr)0);
  return MUONREF_OK;
}

/* sum += g[j]^2 for j < n, exactly (sum and sq at 1200 bits: a binary32
 * square is exact in 48 bits, and the span of binary32 squares, sums of up
 * to 2^32 of them included, fits 1200 bits); sq is scratch. */
static void add_squares(mpfr_t sum, mpfr_t sq, const float *g, size_t n)
{
  for (size_t j = 0; j < n; j++) {
    mpfr_set_flt(sq, g[j], MPFR_RNDN);
    mpfr_sqr(sq, sq, MPFR_RNDN);
    mpfr_add(sum, sum, sq, MPFR_RNDN);
  }
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
    add_squares(sum, sq, grads[i], grads[i] ? numel[i] : 0);
  mpfr_sqrt(root, sum, MPFR_RNDN); /* the one rounding */
  *out = mpfr_get_d(root, MPFR_RNDN);
  mpfr_clears(sum, sq, root, (mpfr_ptr)0);
  return MUONREF_OK;
}

int muonref_ref_grad_sumsq32(double *out, const float *g, size_t n, muonref_error *err)
{
  if (!out)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_grad_sumsq32: out must not be NULL");
  mpfr_t sum, sq;
  mpfr_inits2(1200, sum, sq, (mpfr_ptr)0);
  mpfr_set_zero(sum, 1);
  add_squares(sum, sq, g, g ? n : 0);
  *out = (double)mpfr_get_flt(sum, MPFR_RNDN); /* the one rounding */
  mpfr_clears(sum, sq, (mpfr_ptr)0);
  return MUONREF_OK;
}
