/* muonref: correct rounding, demonstrated (see ref.h, "*_cr").
 *
 * A result computed at p bits carries an error far below its rounding to
 * binary32 or binary64 unless the exact value lies within that error of a
 * rounding boundary.  Recomputing at 2p bits and finding the same rounded
 * bits for every output shows that no output sat that close to a boundary
 * at p bits (the 2p error being far smaller still), so the rounded outputs
 * are the correct roundings of the exact values (the procedure of MPFR's
 * tgeneric.c and glibc's gen-auto-libm-tests, applied to whole tensors).
 * Disagreements are counted and reported, never hidden. */
#include <stdlib.h>
#include <string.h>
#include "muonref/ref.h"

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

int muonref_ref_ns_cr(float *out32, double *out64, const float *in, size_t rows, size_t cols,
                      const muonref_options *o, mpfr_prec_t prec, muonref_ref_cr_report *rep, muonref_error *err)
{
  muonref_ref_cr_report local;
  rep = rep ? rep : &local;
  rep_init(rep, prec);
  size_t n = rows * cols;
  float *f = malloc((n ? n : 1) * sizeof *f);
  double *d = malloc((n ? n : 1) * sizeof *d), *dh = malloc((n ? n : 1) * sizeof *dh);
  int st = f && d && dh ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the rounding check");
  if (!st)
    st = ns_at(f, d, in, rows, cols, o, prec, err);
  if (!st)
    st = ns_at(out32, dh, in, rows, cols, o, 2 * prec, err);
  if (!st) {
    compare(rep, f, out32, n, sizeof(float), 0);
    compare(rep, d, dh, n, sizeof(double), n);
    if (out64)
      memcpy(out64, dh, n * sizeof *dh);
    st = verdict(rep, "Exact Newton-Schulz", err);
  }
  free(f), free(d), free(dh);
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

int muonref_ref_polar_cr(float *q32, double *q64, double *sv, const double *g, size_t rows, size_t cols,
                         mpfr_prec_t prec, muonref_ref_cr_report *rep, muonref_error *err)
{
  muonref_ref_cr_report local;
  rep = rep ? rep : &local;
  rep_init(rep, prec);
  size_t n = rows * cols, k = rows < cols ? rows : cols;
  float *f = malloc((n ? n : 1) * sizeof *f);
  double *d = malloc((n ? n : 1) * sizeof *d), *dh = malloc((n ? n : 1) * sizeof *dh);
  double *s = malloc((k ? k : 1) * sizeof *s), *sh = malloc((k ? k : 1) * sizeof *sh);
  int st = f && d && dh && s && sh ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the rounding check");
  if (!st)
    st = polar_at(f, d, s, g, rows, cols, prec, err);
  if (!st)
    st = polar_at(q32, dh, sh, g, rows, cols, 2 * prec, err);
  if (!st) {
    compare(rep, f, q32, n, sizeof(float), 0);
    compare(rep, d, dh, n, sizeof(double), n);
    compare(rep, s, sh, k, sizeof(double), 2 * n);
    if (q64)
      memcpy(q64, dh, n * sizeof *dh);
    if (sv)
      memcpy(sv, sh, k * sizeof *sh);
    st = verdict(rep, "Exact polar factor", err);
  }
  free(f), free(d), free(dh), free(s), free(sh);
  return st;
}

/* A private copy of a parameter and its state (buffers of n floats). */
typedef struct step_copy {
  float *param, *b1, *b2;
  muonref_param_state st;
} step_copy;

static int copy_make(step_copy *c, const muonref_route *r, const float *param, const muonref_param_state *s)
{
  size_t n = r->numel;
  c->param = malloc(n * sizeof(float));
  c->b1 = malloc(n * sizeof(float));
  c->b2 = malloc(n * sizeof(float));
  if (!c->param || !c->b1 || !c->b2)
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
  return MUONREF_OK;
}

static void copy_free(step_copy *c) { free(c->param), free(c->b1), free(c->b2); }

int muonref_ref_step_cr(const muonref_options *o, const muonref_route *r, float *param, muonref_param_state *state,
                        const float *grad, mpfr_prec_t prec, muonref_ref_cr_report *rep, muonref_error *err)
{
  muonref_ref_cr_report local;
  rep = rep ? rep : &local;
  rep_init(rep, prec);
  if (!grad)
    return MUONREF_OK;
  size_t n = r->numel;
  step_copy lo = {0}, hi = {0};
  int st = copy_make(&lo, r, param, state) || copy_make(&hi, r, param, state)
               ? muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the rounding check")
               : MUONREF_OK;
  if (!st)
    st = muonref_ref_step_flags(o, r, lo.param, &lo.st, grad, prec, &rep->ns_uncertain, err);
  if (!st)
    st = muonref_ref_step_flags(o, r, hi.param, &hi.st, grad, 2 * prec, &rep->ns_uncertain, err);
  if (!st) {
    compare(rep, lo.param, hi.param, n, sizeof(float), 0);
    compare(rep, lo.b1, hi.b1, n, sizeof(float), n);
    if (!r->use_muon)
      compare(rep, lo.b2, hi.b2, n, sizeof(float), 2 * n);
    st = verdict(rep, "Exact step", err);
  }
  if (!st) {
    memcpy(param, hi.param, n * sizeof(float));
    float *b1 = r->use_muon ? state->momentum_buffer : state->exp_avg;
    memcpy(b1, hi.b1, n * sizeof(float));
    if (!r->use_muon)
      memcpy(state->exp_avg_sq, hi.b2, n * sizeof(float));
    float *keep1 = state->momentum_buffer, *keep2 = state->exp_avg, *keep3 = state->exp_avg_sq;
    *state = hi.st;
    state->momentum_buffer = keep1, state->exp_avg = keep2, state->exp_avg_sq = keep3;
  }
  copy_free(&lo), copy_free(&hi);
  return st;
}
