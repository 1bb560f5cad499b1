/* muonref study: Newton-Schulz runs on matrices, measured step by step
 * against the polar factor (spec/ns-study.md, "Matrix runs"). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "study.h"

const char *mst_format_name(mst_format f)
{
  static const char *const N[] = {"f64", "fp32", "bf16"};
  return f >= 0 && f < MST_NFORMATS ? N[f] : NULL;
}

/* Records step k of trace t for iterate x (rows, cols). */
static int measure(mst_trace *t, int k, const double *x, const double *q, size_t rows, size_t cols, double *sv)
{
  size_t r = rows < cols ? rows : cols;
  double d = 0.0, nq = 0.0;
  for (size_t i = 0; i < rows * cols; i++) {
    d += (x[i] - q[i]) * (x[i] - q[i]);
    nq += q[i] * q[i];
  }
  t->dist[k] = sqrt(d / nq);
  if (!isfinite(d)) { /* the iteration overflowed: no singular values to measure */
    t->dist[k] = INFINITY;
    t->smin[k] = t->smax[k] = NAN;
    return MUONREF_OK;
  }
  if (mst_singular_values(sv, x, rows, cols))
    return MUONREF_ENUMERIC;
  t->smax[k] = sv[0];
  t->smin[k] = sv[r - 1];
  return MUONREF_OK;
}

/* One binary64 step on the wide (m <= n) or tall matrix x: with
 * A = X X^T (m x m), X <- a X + (b A + c A A) X. */
static void step64(double *x, double *a, double *b, double *bx, size_t m, size_t n, muonref_coeff t)
{
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)m, (int)n, 1.0, x, (int)n, x, (int)n, 0.0, a,
              (int)m);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)m, (int)m, t.c, a, (int)m, a, (int)m, 0.0, b,
              (int)m);
  for (size_t i = 0; i < m * m; i++)
    b[i] += t.b * a[i];
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)m, 1.0, b, (int)m, x, (int)n, 0.0, bx,
              (int)n);
  for (size_t i = 0; i < m * n; i++)
    x[i] = t.a * x[i] + bx[i];
}

/* The binary64 run: X_0 = G / (g ||G||_F), no eps. */
static int run64(mst_trace *t, const mst_set *s, int K, const double *g, const double *q, size_t rows, size_t cols,
                 double *sv)
{
  size_t m = rows, n = cols, len = m * n;
  double *x = calloc(len, sizeof *x), *a = malloc(m * m * sizeof *a), *b = malloc(m * m * sizeof *b),
         *bx = malloc(len * sizeof *bx);
  int rc = (x && a && b && bx) ? MUONREF_OK : MUONREF_ENOMEM;
  if (!rc) {
    double nrm = 0.0;
    for (size_t i = 0; i < len; i++)
      nrm += g[i] * g[i];
    nrm = sqrt(nrm);
    for (size_t i = 0; i < len; i++) /* X_0 as the port sees it: G / (g ||G||_F) */
      x[i] = g[i] / (nrm * s->norm_safety);
    rc = measure(t, 0, x, q, rows, cols, sv);
    for (size_t i = 0; i < len; i++) /* the iteration runs on G / ||G||_F: g is folded into step 1 */
      x[i] = g[i] / nrm;
    for (int k = 1; !rc && k <= K; k++) {
      step64(x, a, b, bx, m, n, mst_step_coeff(s, k));
      rc = measure(t, k, x, q, rows, cols, sv);
    }
  }
  free(x), free(a), free(b), free(bx);
  return rc;
}

/* The fp32 / bf16 run through the library: one muonref_fast_ns call per
 * step count k, on the list unrolled to the K triples the steps use. */
static int run_fast(mst_trace *t, const mst_set *s, int K, const double *g, const double *q, size_t rows,
                    size_t cols, mst_format f, double *sv)
{
  size_t len = rows * cols;
  muonref_options o;
  muonref_error err;
  if (muonref_profile_options("nemo", &o, &err))
    return MUONREF_ENUMERIC;
  o.ns_format = f == MST_BF16 ? MUONREF_NS_BF16 : MUONREF_NS_FP32;
  o.n_coeffs = K;
  o.coeff_order = MUONREF_ORDER_REPEAT_LAST;
  for (int k = 1; k <= K; k++)
    o.coeffs[k - 1] = mst_step_coeff(s, k);
  float *in = malloc(len * sizeof *in), *out = malloc(len * sizeof *out),
        *work = malloc(muonref_ns_workspace_floats(rows, cols) * sizeof *work);
  double *x = calloc(len, sizeof *x);
  int rc = (in && out && work && x) ? MUONREF_OK : MUONREF_ENOMEM;
  for (size_t i = 0; !rc && i < len; i++)
    in[i] = (float)g[i];
  for (int k = 0; !rc && k <= K; k++) {
    if (k == 0) { /* X_0: the normalised input of the format, measured in binary64 */
      double nrm = 0.0;
      for (size_t i = 0; i < len; i++)
        nrm += (double)in[i] * in[i];
      for (size_t i = 0; i < len; i++)
        x[i] = in[i] / (sqrt(nrm) * s->norm_safety);
    } else {
      o.ns_steps = k;
      if (muonref_fast_ns(out, in, rows, cols, &o, work, &err)) {
        if (err.status != MUONREF_ENUMERIC) {
          rc = err.status;
          break;
        }
        /* the iteration diverged in this format (the library refuses a
         * non-finite output): this step and every later one blew up */
        for (; k <= K; k++) {
          t->dist[k] = INFINITY;
          t->smin[k] = t->smax[k] = NAN;
        }
        break;
      }
      for (size_t i = 0; i < len; i++)
        x[i] = out[i];
    }
    rc = measure(t, k, x, q, rows, cols, sv);
  }
  free(in), free(out), free(work), free(x);
  return rc;
}

int mst_run(mst_trace *t, const mst_set *s, int K, const double *g, const double *q, size_t rows, size_t cols,
            mst_format f)
{
  if (K < 1 || K > MST_MATRIX_MAX_STEPS)
    return MUONREF_EOPTION;
  double *sv = malloc((rows < cols ? rows : cols) * sizeof *sv);
  if (!sv)
    return MUONREF_ENOMEM;
  t->K = K;
  int rc = f == MST_F64 ? run64(t, s, K, g, q, rows, cols, sv) : run_fast(t, s, K, g, q, rows, cols, f, sv);
  free(sv);
  return rc;
}
