/* muonref: correct rounding, certified (see ref.h, "*_cr";
 * spec/reference.md section 5).
 *
 * Certificate: the result at q = 2p bits carries an elementwise error bound
 * (ns_exact.c's running bound, step_exact.c's, or the polar factor's a
 * priori one); an output is published only when every value within its
 * bound rounds to the same value of its format (muonref_ref_can_round).
 * Outputs that cannot be rounded trigger a recomputation at 2q (up to
 * MUONREF_REF_CR_MAX_FACTOR p); if some still cannot, the call fails.
 *
 * Second, independent check (the older one, kept):
 * A result computed at p bits carries an error far below its rounding to
 * binary32 or binary64 unless the exact value lies within that error of a
 * rounding boundary.  Recomputing at 2p bits and finding the same rounded
 * bits for every output shows that no output sat that close to a boundary
 * at p bits (the 2p error being far smaller still), so the rounded outputs
 * are the correct roundings of the exact values (the procedure of MPFR's
 * tgeneric.c and glibc's gen-auto-libm-tests, applied to whole tensors).
 * Disagreements are counted and reported, never hidden. */
#include <stdint.h>
#include <stdlib.h>
#include "core/plan.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "muonref/ref.h"
#include "ref_internal.h"
#include "core/fail.h"

/* Counts the outputs where lo and hi differ bitwise (n floats or doubles). */
static void compare(muonref_ref_cr_report *rep, const void *lo, const void *hi, size_t n, size_t width,
                    size_t offset)
{
  const unsigned char *a = lo, *b = hi;
  for (size_t i = 0; i < n; i++) {
    if (!memcmp(a + i * width, b + i * width, width))
      continue;
    if (!rep->n_differ++) {
      rep->first_index = offset + i;
      if (width == sizeof(float)) {
        float x, y;
        memcpy(&x, a + i * width, width), memcpy(&y, b + i * width, width);
        rep->value_lo = x, rep->value_hi = y;
      } else {
        memcpy(&rep->value_lo, a + i * width, width), memcpy(&rep->value_hi, b + i * width, width);
      }
    }
  }
  rep->n_outputs += n;
}

static int verdict(const muonref_ref_cr_report *rep, const char *what, muonref_error *err)
{
  if (!rep->n_differ)
    return MUONREF_OK;
  return muonref_fail(err, MUONREF_ENUMERIC,
                      "%s: correct rounding not established: %zu of %zu rounded outputs differ between %ld and %ld "
                      "bits (first: output %zu, %.17g at %ld bits, %.17g at %ld bits)",
                      what, rep->n_differ, rep->n_outputs, (long)rep->prec, (long)rep->prec_hi, rep->first_index,
                      rep->value_lo, (long)rep->prec, rep->value_hi, (long)rep->prec_hi);
}

static void rep_init(muonref_ref_cr_report *rep, mpfr_prec_t prec)
{
  memset(rep, 0, sizeof *rep);
  rep->prec = prec;
  rep->prec_hi = 2 * prec;
  rep->bound_log2 = -INFINITY;
}

/* Records the certificate of one output: value v at precision q with bound
 * b (units 2^-q) in the format (fprec, qmin, emax). */
static void certify(muonref_ref_cr_report *rep, mpfr_srcptr v, double b, mpfr_prec_t q, mpfr_prec_t fprec,
                    mpfr_exp_t qmin, mpfr_exp_t emax)
{
  rep->n_published++;
  if (muonref_ref_can_round(v, b, q, fprec, qmin, emax))
    rep->n_certified++;
  else
    rep->n_uncertified++;
  if (b > 0 && isfinite(b)) {
    double l = log2(b) - (double)q;
    if (l > rep->bound_log2)
      rep->bound_log2 = l;
  } else if (!(b >= 0) || isinf(b)) {
    rep->bound_log2 = INFINITY;
  }
}

static void certify_reset(muonref_ref_cr_report *rep)
{
  rep->n_published = rep->n_certified = rep->n_uncertified = 0;
  rep->bound_log2 = -INFINITY;
}

/* 1 when another, more precise try is due after the one at q. */
static int retry(muonref_ref_cr_report *rep, mpfr_prec_t q)
{
  if (!rep->n_uncertified || q * 2 > MUONREF_REF_CR_MAX_FACTOR * rep->prec)
    return 0;
  rep->retries++;
  return 1;
}

static int cert_verdict(muonref_ref_cr_report *rep, mpfr_prec_t q, const char *what, muonref_error *err)
{
  if (!rep->n_uncertified) {
    rep->prec_cert = q;
    return MUONREF_OK;
  }
  rep->prec_cert = 0;
  char bound[64] = "";
  if (rep->bound_log2 > -INFINITY)
    snprintf(bound, sizeof bound, " (largest bound 2^%.1f)", rep->bound_log2);
  return muonref_fail(err, MUONREF_ENUMERIC,
                      "%s: correct rounding not certified: %zu of %zu outputs cannot be rounded within their error "
                      "bound at %ld bits%s; nothing was published",
                      what, rep->n_uncertified, rep->n_published, (long)q, bound);
}

/* NS of `in` at precision p: float and double roundings into f32, f64. */
static int ns_at(float *f32, double *f64, const float *in, size_t rows, size_t cols, const muonref_options *o,
                 mpfr_prec_t p, muonref_error *err)
{
  muonref_mpmat a = {0}, b = {0};
  int st = muonref_mpmat_init(&a, rows, cols, 53);
  if (!st)
    st = muonref_mpmat_init(&b, rows, cols, p);
  if (st) {
    st = muonref_fail(err, st, "Exact Newton-Schulz of a (%zu, %zu) matrix at %ld bits: %s", rows, cols, (long)p,
                      st == MUONREF_ENOMEM ? "out of memory" : "invalid precision or shape");
  } else {
    muonref_mpmat_set_float(&a, in);
    st = muonref_ref_ns(&b, &a, o, err);
  }
  if (!st) {
    muonref_mpmat_get_float(f32, &b);
    muonref_mpmat_get_double(f64, &b);
  }
  muonref_mpmat_clear(&a), muonref_mpmat_clear(&b);
  return st;
}

/* NS of `in` at precision q with its running bound (units 2^-q). */
static int ns_bounded_at(muonref_mpmat *b, double *bnd, const float *in, size_t rows, size_t cols,
                         const muonref_options *o, mpfr_prec_t q, muonref_error *err)
{
  muonref_mpmat a = {0};
  int st = muonref_mpmat_init(&a, rows, cols, 53);
  if (!st)
    st = muonref_mpmat_init(b, rows, cols, q);
  if (st) {
    st = muonref_fail(err, st, "Exact Newton-Schulz of a (%zu, %zu) matrix at %ld bits: %s", rows, cols, (long)q,
                      st == MUONREF_ENOMEM ? "out of memory" : "invalid precision or shape");
  } else {
    muonref_mpmat_set_float(&a, in);
    st = muonref_ref_ns_bounded(b, bnd, &a, NULL, o, err);
  }
  muonref_mpmat_clear(&a);
  return st;
}

int muonref_ref_ns_cr(float *out32, double *out64, const float *in, size_t rows, size_t cols,
                      const muonref_options *o, mpfr_prec_t prec, muonref_ref_cr_report *rep, muonref_error *err)
{
  if (!out32 || !in || !o)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_ns_cr: out32, in and o must not be NULL");
  if (cols && rows > SIZE_MAX / sizeof(double) / cols)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_ns_cr: (%zu, %zu) elements overflow", rows, cols);
  muonref_ref_cr_report local;
  rep = rep ? rep : &local;
  rep_init(rep, prec);
  size_t n = rows * cols;
  float *f = malloc((n ? n : 1) * sizeof *f), *fh = malloc((n ? n : 1) * sizeof *fh);
  double *d = malloc((n ? n : 1) * sizeof *d), *dh = malloc((n ? n : 1) * sizeof *dh);
  double *bnd = malloc((n ? n : 1) * sizeof *bnd);
  int st = f && fh && d && dh && bnd ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the rounding check");
  if (!st)
    st = ns_at(f, d, in, rows, cols, o, prec, err);
  mpfr_prec_t q = 2 * prec;
  for (int again = 1; !st && again;) {
    muonref_mpmat b = {0};
    st = ns_bounded_at(&b, bnd, in, rows, cols, o, q, err);
    if (!st) {
      muonref_mpmat_get_float(fh, &b);
      muonref_mpmat_get_double(dh, &b);
      if (q == 2 * prec) { /* the second check: p against 2p */
        compare(rep, f, fh, n, sizeof(float), 0);
        compare(rep, d, dh, n, sizeof(double), n);
      }
      certify_reset(rep);
      for (size_t i = 0; i < n; i++) {
        certify(rep, b.e[i], bnd[i], q, 24, -149, 128);
        if (out64)
          certify(rep, b.e[i], bnd[i], q, 53, -1074, 1024);
      }
      again = !rep->n_differ && retry(rep, q);
      q = again ? 2 * q : q;
    }
    muonref_mpmat_clear(&b);
  }
  if (!st)
    st = verdict(rep, "Exact Newton-Schulz", err);
  if (!st)
    st = cert_verdict(rep, q, "Exact Newton-Schulz", err);
  if (!st) {
    memcpy(out32, fh, n * sizeof *fh);
    if (out64)
      memcpy(out64, dh, n * sizeof *dh);
  }
  free(f), free(fh), free(d), free(dh), free(bnd);
  return st;
}

/* Polar factor of g at precision p: roundings of q into f32, f64; sv. */
static int polar_at(float *f32, double *f64, double *sv, const double *g, size_t rows, size_t cols, mpfr_prec_t p,
                    muonref_error *err)
{
  size_t k = rows < cols ? rows : cols;
  muonref_mpmat a = {0}, q = {0}, s = {0};
  int st = muonref_mpmat_init(&a, rows, cols, 53);
  if (!st)
    st = muonref_mpmat_init(&q, rows, cols, p);
  if (!st)
    st = muonref_mpmat_init(&s, k, 1, p);
  if (st) {
    st = muonref_fail(err, st, "Exact polar factor of a (%zu, %zu) matrix at %ld bits: %s", rows, cols, (long)p,
                      st == MUONREF_ENOMEM ? "out of memory" : "invalid precision or shape");
  } else {
    muonref_mpmat_set_double(&a, g);
    st = muonref_ref_polar(&q, &s, &a, err);
  }
  if (!st) {
    muonref_mpmat_get_float(f32, &q);
    muonref_mpmat_get_double(f64, &q);
    muonref_mpmat_get_double(sv, &s);
  }
  muonref_mpmat_clear(&a), muonref_mpmat_clear(&q), muonref_mpmat_clear(&s);
  return st;
}

/* The a priori constant c of spec/reference.md 5.3: ||Q - polar(G)||_F
 * <= c m n kappa 2^-w, |s_i - s_i exact| <= c m n sqrt(k) s_1 2^-w (Weyl),
 * w = q + 32 the polar factor's internal precision. */
#define POLAR_C 64.0

int muonref_ref_polar_cr(float *q32, double *q64, double *sv, const double *g, size_t rows, size_t cols,
                         mpfr_prec_t prec, muonref_ref_cr_report *rep, muonref_error *err)
{
  if (!q32 || !g)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_polar_cr: q32 and g must not be NULL");
  if (cols && rows > SIZE_MAX / sizeof(double) / cols)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_polar_cr: (%zu, %zu) elements overflow", rows, cols);
  muonref_ref_cr_report local;
  rep = rep ? rep : &local;
  rep_init(rep, prec);
  size_t n = rows * cols, k = rows < cols ? rows : cols;
  float *f = malloc((n ? n : 1) * sizeof *f), *fh = malloc((n ? n : 1) * sizeof *fh);
  double *d = malloc((n ? n : 1) * sizeof *d), *dh = malloc((n ? n : 1) * sizeof *dh);
  double *s = malloc((k ? k : 1) * sizeof *s), *sh = malloc((k ? k : 1) * sizeof *sh);
  int st = f && fh && d && dh && s && sh ? MUONREF_OK
                                         : muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the rounding check");
  if (!st)
    st = polar_at(f, d, s, g, rows, cols, prec, err);
  mpfr_prec_t q = 2 * prec;
  for (int again = 1; !st && again;) {
    muonref_mpmat a = {0}, qm = {0}, sm = {0};
    st = muonref_mpmat_init(&a, rows, cols, 53);
    if (!st)
      st = muonref_mpmat_init(&qm, rows, cols, q);
    if (!st)
      st = muonref_mpmat_init(&sm, k, 1, q);
    if (st) {
      st = muonref_fail(err, st, "Exact polar factor of a (%zu, %zu) matrix at %ld bits: %s", rows, cols, (long)q,
                        st == MUONREF_ENOMEM ? "out of memory" : "invalid precision or shape");
    } else {
      muonref_mpmat_set_double(&a, g);
      st = muonref_ref_polar(&qm, &sm, &a, err);
    }
    if (!st) {
      muonref_mpmat_get_float(fh, &qm);
      muonref_mpmat_get_double(dh, &qm);
      muonref_mpmat_get_double(sh, &sm);
      if (q == 2 * prec) {
        compare(rep, f, fh, n, sizeof(float), 0);
        compare(rep, d, dh, n, sizeof(double), n);
        compare(rep, s, sh, k, sizeof(double), 2 * n);
      }
      /* a priori bounds in units of 2^-q: the final rounding to q bits, plus
       * c m n kappa 2^-32 (Q) or c m n sqrt(k) s_1 2^-32 (singular values) */
      double s1 = muonref_ref_absu(sm.e[0]), sk = mpfr_get_d(sm.e[k - 1], MPFR_RNDD);
      double cmn = POLAR_C * (double)rows * (double)cols * 0x1p-32;
      double bq = sk > 0 ? cmn * (s1 / sk) * (1 + 0x1p-40) : INFINITY;
      double bs = cmn * sqrt((double)k) * s1 * (1 + 0x1p-40);
      certify_reset(rep);
      for (size_t i = 0; i < n; i++) {
        double b = (muonref_ref_absu(qm.e[i]) + bq) * REF_BOUND_SAFETY;
        certify(rep, qm.e[i], b, q, 24, -149, 128);
        if (q64)
          certify(rep, qm.e[i], b, q, 53, -1074, 1024);
      }
      for (size_t i = 0; sv && i < k; i++)
        certify(rep, sm.e[i], (muonref_ref_absu(sm.e[i]) + bs) * REF_BOUND_SAFETY, q, 53, -1074, 1024);
      again = !rep->n_differ && retry(rep, q);
      q = again ? 2 * q : q;
    }
    muonref_mpmat_clear(&a), muonref_mpmat_clear(&qm), muonref_mpmat_clear(&sm);
  }
  if (!st)
    st = verdict(rep, "Exact polar factor", err);
  if (!st)
    st = cert_verdict(rep, q, "Exact polar factor", err);
  if (!st) {
    memcpy(q32, fh, n * sizeof *fh);
    if (q64)
      memcpy(q64, dh, n * sizeof *dh);
    if (sv)
      memcpy(sv, sh, k * sizeof *sh);
  }
  free(f), free(fh), free(d), free(dh), free(s), free(sh);
  return st;
}

/* A private copy of a parameter and its state (buffers of n floats). */
typedef struct step_copy {
  float *param, *b1, *b2, *b3; /* b3: the second moment (at most n floats) */
  muonref_param_state st;
} step_copy;

static int copy_make(step_copy *c, const muonref_route *r, const float *param, const muonref_param_state *s)
{
  size_t n = r->numel;
  c->param = malloc(n * sizeof(float));
  c->b1 = malloc(n * sizeof(float));
  c->b2 = malloc(n * sizeof(float));
  c->b3 = calloc(n ? n : 1, sizeof(float));
  if (!c->param || !c->b1 || !c->b2 || !c->b3)
    return MUONREF_ENOMEM;
  memcpy(c->param, param, n * sizeof(float));
  c->st = *s;
  const float *s1 = r->use_muon ? s->momentum_buffer : s->exp_avg, *s2 = r->use_muon ? NULL : s->exp_avg_sq;
  if (s1)
    memcpy(c->b1, s1, n * sizeof(float));
  if (s2)
    memcpy(c->b2, s2, n * sizeof(float));
  /* a missing buffer stays missing, so that the step reports it */
  c->st.momentum_buffer = r->use_muon && s1 ? c->b1 : NULL;
  c->st.exp_avg = !r->use_muon && s1 ? c->b1 : NULL;
  c->st.exp_avg_sq = s2 ? c->b2 : NULL;
  if (r->use_muon && s->moment2 && s->initialized && s->moment2_numel <= n)
    memcpy(c->b3, s->moment2, s->moment2_numel * sizeof(float));
  c->st.moment2 = r->use_muon && s->moment2 ? c->b3 : NULL;
  return MUONREF_OK;
}

static void copy_free(step_copy *c) { free(c->param), free(c->b1), free(c->b2), free(c->b3); }

int muonref_ref_step_cr(const muonref_options *o, const muonref_route *r, float *param, muonref_param_state *state,
                        const float *grad, mpfr_prec_t prec, muonref_ref_cr_report *rep, muonref_error *err)
{
  if (!o || !r || !param || !state)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_step_cr: o, r, param and state must not be NULL");
  muonref_ref_cr_report local;
  rep = rep ? rep : &local;
  rep_init(rep, prec);
  if (!grad && o->missing_grad == MUONREF_MISSING_GRAD_ZEROS) { /* Keller: a missing gradient steps as zeros */
    float *zeros = calloc(r->numel ? r->numel : 1, sizeof *zeros);
    if (!zeros)
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the zero gradient of %zu elements", r->numel);
    int st = muonref_ref_step_cr(o, r, param, state, zeros, prec, rep, err);
    free(zeros);
    return st;
  }
  if (!grad) { /* skipped; keras counts the step (adam_step_global) */
    muonref_state_missing_grad(o, r, state);
    return MUONREF_OK;
  }
  size_t n = r->numel;
  step_copy lo = {0}, hi = {0};
  int st = copy_make(&lo, r, param, state) ? muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the rounding check")
                                           : MUONREF_OK;
  if (!st)
    st = muonref_ref_step_flags(o, r, lo.param, &lo.st, grad, prec, &rep->ns_uncertain, err);
  mpfr_prec_t q = 2 * prec;
  for (int again = 1; !st && again;) {
    copy_free(&hi);
    memset(&hi, 0, sizeof hi);
    if (copy_make(&hi, r, param, state)) {
      st = muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the rounding check");
      break;
    }
    size_t n_unc = 0;
    unsigned flags = 0;
    st = muonref_ref_step_bounded(o, r, hi.param, &hi.st, grad, q, &flags, &n_unc, err);
    if (!st) {
      if (q == 2 * prec) {
        rep->ns_uncertain |= flags;
        compare(rep, lo.param, hi.param, n, sizeof(float), 0);
        compare(rep, lo.b1, hi.b1, n, sizeof(float), n);
        if (!r->use_muon)
          compare(rep, lo.b2, hi.b2, n, sizeof(float), 2 * n);
        if (r->use_muon && hi.st.moment2_numel)
          compare(rep, lo.b3, hi.b3, hi.st.moment2_numel, sizeof(float), 2 * n);
      }
      /* the momentum and AdamW buffers are exact values rounded once
       * through round-to-odd: always certified; the parameter and the
       * second moment as the step's bound says */
      certify_reset(rep);
      rep->n_published = (r->use_muon ? 2 : 3) * n + (r->use_muon ? hi.st.moment2_numel : 0);
      rep->n_uncertified = n_unc;
      rep->n_certified = rep->n_published - n_unc;
      again = !rep->n_differ && retry(rep, q);
      q = again ? 2 * q : q;
    }
  }
  if (!st)
    st = verdict(rep, "Exact step", err);
  if (!st)
    st = cert_verdict(rep, q, "Exact step", err);
  if (!st) {
    memcpy(param, hi.param, n * sizeof(float));
    float *b1 = r->use_muon ? state->momentum_buffer : state->exp_avg;
    memcpy(b1, hi.b1, n * sizeof(float));
    if (!r->use_muon)
      memcpy(state->exp_avg_sq, hi.b2, n * sizeof(float));
    if (r->use_muon && state->moment2 && hi.st.moment2_numel)
      memcpy(state->moment2, hi.b3, hi.st.moment2_numel * sizeof(float));
    float *keep1 = state->momentum_buffer, *keep2 = state->exp_avg, *keep3 = state->exp_avg_sq, *keep4 = state->moment2;
    *state = hi.st;
    state->momentum_buffer = keep1, state->exp_avg = keep2, state->exp_avg_sq = keep3, state->moment2 = keep4;
  }
  copy_free(&lo), copy_free(&hi);
  return st;
}
