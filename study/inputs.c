/* muonref study: seeded test matrices (random and ill-conditioned). */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/rng.h"
#include "study.h"

/* The project's seeded source (include/muonref/rng.h). */
static double normal(uint64_t *s) { return muonref_rng_normal(s); }

/* q (n x n, row-major) <- an orthogonal matrix: Q of the QR of a Gaussian
 * matrix (dgeqrf + dorgqr). */
static int orthogonal(double *q, size_t n, uint64_t *s)
{
  double *tau = malloc(n * sizeof *tau);
  if (!tau)
    return MUONREF_ENOMEM;
  for (size_t i = 0; i < n * n; i++)
    q[i] = normal(s);
  int rc = LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)n, q, (lapack_int)n, tau);
  if (!rc)
    rc = LAPACKE_dorgqr(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)n, (lapack_int)n, q, (lapack_int)n, tau);
  free(tau);
  return rc ? MUONREF_ENUMERIC : MUONREF_OK;
}

/* g <- U diag(sv) V^T with sv log-spaced from 1 to 1/cond. */
static int illcond(double *g, const mst_input *in, uint64_t *s)
{
  size_t m = in->rows, n = in->cols, r = m < n ? m : n;
  double *u = malloc(m * m * sizeof *u), *v = malloc(n * n * sizeof *v);
  int rc = (u && v) ? MUONREF_OK : MUONREF_ENOMEM;
  if (!rc)
    rc = orthogonal(u, m, s);
  if (!rc)
    rc = orthogonal(v, n, s);
  if (!rc) {
    memset(g, 0, m * n * sizeof *g);
    for (size_t k = 0; k < r; k++) {
      double sv = r > 1 ? pow(in->cond, -(double)k / (double)(r - 1)) : 1.0;
      for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
          g[i * n + j] += u[i * m + k] * sv * v[j * n + k];
    }
  }
  free(u), free(v);
  return rc;
}

int mst_input_fill(double *g, const mst_input *in, uint64_t seed)
{
  uint64_t s = seed * 0x100000001b3u + (uint64_t)in->kind * 7919u + in->rows * 131u + in->cols;
  if (in->kind == MST_ILLCOND)
    return illcond(g, in, &s);
  for (size_t i = 0; i < in->rows * in->cols; i++)
    g[i] = normal(&s);
  return MUONREF_OK;
}

mst_input_plot mst_input_plot_of(const mst_input *ins, size_t j)
{
  for (size_t i = 0; i < j; i++)
    if (ins[i].kind == ins[j].kind && ins[i].rows == ins[j].cols && ins[i].cols == ins[j].rows &&
        ins[i].cond == ins[j].cond)
      return MST_PLOT_NONE;
  return ins[j].kind == MST_ILLCOND ? MST_PLOT_SMIN : MST_PLOT_DIST;
}

int mst_singular_values(double *s, const double *a, size_t rows, size_t cols)
{
  double *w = malloc(rows * cols * sizeof *w);
  if (!w)
    return MUONREF_ENOMEM;
  memcpy(w, a, rows * cols * sizeof *w);
  int rc = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'N', (lapack_int)rows, (lapack_int)cols, w, (lapack_int)cols, s, NULL,
                          (lapack_int)(rows > cols ? rows : cols), NULL, (lapack_int)(rows > cols ? rows : cols));
  free(w);
  return rc ? MUONREF_ENUMERIC : MUONREF_OK;
}

int mst_polar(double *q, const double *g, size_t rows, size_t cols)
{
  size_t m = rows, n = cols, r = m < n ? m : n;
  double *w = malloc(m * n * sizeof *w), *s = malloc(r * sizeof *s), *u = malloc(m * r * sizeof *u),
         *vt = malloc(r * n * sizeof *vt);
  int rc = (w && s && u && vt) ? MUONREF_OK : MUONREF_ENOMEM;
  if (!rc) {
    memcpy(w, g, m * n * sizeof *w);
    if (LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'S', (lapack_int)m, (lapack_int)n, w, (lapack_int)n, s, u, (lapack_int)r,
                       vt, (lapack_int)n))
      rc = MUONREF_ENUMERIC;
  }
  if (!rc)
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) {
        double acc = 0.0;
        for (size_t k = 0; k < r; k++)
          acc += u[i * r + k] * vt[k * n + j];
        q[i * n + j] = acc;
      }
  free(w), free(s), free(u), free(vt);
  return rc;
}
