/* muonref study: the exact (MPFR) column of the matrix runs, from the
 * high-precision reference (include/muonref/ref.h: muonref_ref_ns,
 * muonref_ref_polar; spec/reference.md), used to check the binary64
 * column of the report (spec/ns-study.md, "Matrix runs"). */
#include <math.h>
#include <stdlib.h>
#include "muonref/ref.h"
#include "study.h"
#include "core/fail.h"

/* The nemo options with s's first K triples unrolled (norm safety folded
 * into step 1), eps 0: the exact iteration the study means. */
static int exact_options(muonref_options *o, const mst_set *s, int K, muonref_error *err)
{
  int rc = muonref_profile_options("nemo", o, err);
  if (rc)
    return rc;
  o->n_coeffs = K;
  o->coeff_order = MUONREF_ORDER_REPEAT_LAST;
  for (int k = 1; k <= K; k++)
    o->coeffs[k - 1] = mst_step_coeff(s, k);
  o->ns_eps = 0.0;
  o->ns_format = MUONREF_NS_EXACT;
  return MUONREF_OK;
}

/* t->dist[k], smin[k], smax[k] of the iterate x against q, in MPFR. */
static int measure(mst_trace *t, int k, const muonref_mpmat *x, const muonref_mpmat *q, muonref_mpmat *d,
                   double *buf, double *sv)
{
  mpfr_t nd, nq;
  mpfr_inits2(x->prec, nd, nq, (mpfr_ptr)0);
  MUONREF_UNCHECKED(muonref_mpmat_axpby(d, 1.0, x, -1.0, q));
  muonref_mpmat_frobenius(nd, d);
  muonref_mpmat_frobenius(nq, q);
  mpfr_div(nd, nd, nq, MPFR_RNDN);
  t->dist[k] = mpfr_get_d(nd, MPFR_RNDN);
  mpfr_clears(nd, nq, (mpfr_ptr)0);
  muonref_mpmat_get_double(buf, x);
  for (size_t i = 0; i < x->rows * x->cols; i++)
    if (!isfinite(buf[i])) { /* beyond binary64: no singular values to measure */
      t->smin[k] = t->smax[k] = NAN;
      return MUONREF_OK;
    }
  size_t r = x->rows < x->cols ? x->rows : x->cols;
  if (mst_singular_values(sv, buf, x->rows, x->cols))
    return MUONREF_ENUMERIC;
  t->smax[k] = sv[0];
  t->smin[k] = sv[r - 1];
  return MUONREF_OK;
}

int mst_run_exact(mst_trace *t, const mst_set *s, int K, const double *g, size_t rows, size_t cols,
                  mpfr_prec_t prec, muonref_error *err)
{
  if (K < 1 || K > MST_MATRIX_MAX_STEPS)
    return muonref_fail(err, MUONREF_EOPTION, "exact run of %s: %d steps (expected 1 to %d)", s->name, K,
                        MST_MATRIX_MAX_STEPS);
  muonref_mpmat G = {0}, Q = {0}, X = {0}, D = {0};
  muonref_options o;
  size_t len = rows * cols;
  double *buf = malloc(len * sizeof *buf), *sv = malloc((rows < cols ? rows : cols) * sizeof *sv);
  int rc = buf && sv ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "out of memory for an exact run");
  if (!rc && ((rc = muonref_mpmat_init(&G, rows, cols, prec)) || (rc = muonref_mpmat_init(&Q, rows, cols, prec)) ||
              (rc = muonref_mpmat_init(&X, rows, cols, prec)) || (rc = muonref_mpmat_init(&D, rows, cols, prec))))
    muonref_fail(err, rc, "cannot allocate (%zu, %zu) MPFR matrices", rows, cols);
  if (!rc)
    rc = exact_options(&o, s, K, err);
  if (!rc) {
    muonref_mpmat_set_double(&G, g);
    rc = muonref_ref_polar(&Q, NULL, &G, err);
  }
  if (!rc) { /* X_0 = G / (g ||G||_F) */
    mpfr_t nrm;
    mpfr_init2(nrm, prec + 32);
    muonref_mpmat_frobenius(nrm, &G);
    mpfr_mul_d(nrm, nrm, s->norm_safety, MPFR_RNDN);
    for (size_t i = 0; i < len; i++)
      mpfr_div(X.e[i], G.e[i], nrm, MPFR_RNDN);
    mpfr_clear(nrm);
    rc = measure(t, 0, &X, &Q, &D, buf, sv);
  }
  for (int k = 1; !rc && k <= K; k++) {
    o.ns_steps = k;
    if (!(rc = muonref_ref_ns(&X, &G, &o, err)))
      rc = measure(t, k, &X, &Q, &D, buf, sv);
  }
  if (rc && !err->message[0])
    muonref_fail(err, rc, "exact run of %s failed", s->name);
  t->K = K;
  muonref_mpmat_clear(&G), muonref_mpmat_clear(&Q), muonref_mpmat_clear(&X), muonref_mpmat_clear(&D);
  free(buf), free(sv);
  return rc;
}
