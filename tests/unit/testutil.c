/* muonref tests: shared helpers (see testutil.h). */
#include <inttypes.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/rng.h"
#include "testutil.h"

uint64_t tu_seed(uint64_t fallback)
{
  const char *e = getenv("MUONREF_TEST_SEED");
  uint64_t s = e ? strtoull(e, NULL, 0) : fallback;
  static int printed;
  if (!printed++)
    fprintf(stderr, "test seed %" PRIu64 " (set MUONREF_TEST_SEED to change)\n", s);
  return s;
}

uint64_t tu_next(tu_rng *r) { return muonref_rng_next(&r->s); }

double tu_normal(tu_rng *r) { return muonref_rng_normal(&r->s); }

void tu_fill_normal(tu_rng *r, float *x, size_t n, double scale)
{
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(scale * tu_normal(r));
}

static muonref_coeff coeff_at(const muonref_options *o, int k)
{
  int n = o->n_coeffs;
  return o->coeffs[o->coeff_order == MUONREF_ORDER_CYCLE ? k % n : (k < n ? k : n - 1)];
}

void tu_ns_double(double *out, const float *in, size_t rows, size_t cols, const muonref_options *o)
{
  int tr = rows > cols;
  size_t m = tr ? cols : rows, n = tr ? rows : cols;
  double *X = malloc(m * n * sizeof *X), *A = malloc(m * m * sizeof *A), *B = malloc(m * m * sizeof *B);
  double *Y = malloc(m * n * sizeof *Y);
  double ss = 0;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      X[i * n + j] = tr ? in[j * cols + i] : in[i * cols + j];
      ss += X[i * n + j] * X[i * n + j];
    }
  double d = o->eps_mode == MUONREF_EPS_ADD ? sqrt(ss) + o->ns_eps : fmax(sqrt(ss), o->ns_eps);
  for (size_t i = 0; i < m * n; i++)
    X[i] = d == 0 ? 0 : X[i] / d;
  for (int k = 0; k < o->ns_steps; k++) {
    muonref_coeff t = coeff_at(o, k);
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < m; j++) {
        double s = 0;
        for (size_t l = 0; l < n; l++)
          s += X[i * n + l] * X[j * n + l];
        A[i * m + j] = s;
      }
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < m; j++) {
        double s = 0;
        for (size_t l = 0; l < m; l++)
          s += A[i * m + l] * A[l * m + j];
        B[i * m + j] = t.b * A[i * m + j] + t.c * s;
      }
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) {
        double s = 0;
        for (size_t l = 0; l < m; l++)
          s += B[i * m + l] * X[l * n + j];
        Y[i * n + j] = t.a * X[i * n + j] + s;
      }
    memcpy(X, Y, m * n * sizeof *X);
  }
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      if (tr)
        out[j * m + i] = X[i * n + j];
      else
        out[i * n + j] = X[i * n + j];
    }
  free(X), free(A), free(B), free(Y);
}

int tu_singular_values(double *s, const double *a, size_t rows, size_t cols)
{
  double *copy = malloc(rows * cols * sizeof *copy);
  memcpy(copy, a, rows * cols * sizeof *copy);
  lapack_int info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'N', (lapack_int)rows, (lapack_int)cols, copy,
                                   (lapack_int)cols, s, NULL, (lapack_int)rows, NULL, (lapack_int)cols);
  free(copy);
  return (int)info;
}

double tu_phi(const muonref_options *o, double x)
{
  for (int k = 0; k < o->ns_steps; k++) {
    muonref_coeff t = coeff_at(o, k);
    double x2 = x * x;
    x = x * (t.a + x2 * (t.b + x2 * t.c));
  }
  return x;
}

double tu_rel_err(const float *a, const double *b, size_t n)
{
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    num = fmax(num, fabs((double)a[i] - b[i]));
    den = fmax(den, fabs(b[i]));
  }
  return den == 0 ? num : num / den;
}

muonref_options tu_nemo(void)
{
  muonref_options o;
  if (muonref_profile_options("nemo", &o, NULL) != MUONREF_OK)
    abort();
  return o;
}

int tu_run_suite(Suite *s)
{
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_ENV);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
