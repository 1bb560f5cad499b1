/* muonref bench: the naive fp32 Newton-Schulz baseline (see bench.h): the
 * textbook iteration with three plain sgemm calls per step, as a port
 * without symmetric kernels or fused passes would write it. */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "bench.h"

size_t bench_naive_workspace_floats(size_t rows, size_t cols)
{
  size_t m = rows < cols ? rows : cols, n = rows < cols ? cols : rows;
  return 2 * m * n + 2 * m * m;
}

void bench_naive_ns(float *out, const float *in, size_t rows, size_t cols, const muonref_options *o,
                    float *work)
{
  int tr = rows > cols;
  size_t m = tr ? cols : rows, n = tr ? rows : cols;
  int mi = (int)m, ni = (int)n;
  float *X = work, *BX = X + m * n, *A = BX + m * n, *AA = A + m * m;
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < cols; j++)
      X[tr ? j * rows + i : i * cols + j] = in[i * cols + j];
  float ss = 0.0f;
  for (size_t i = 0; i < m * n; i++)
    ss += X[i] * X[i];
  float d = sqrtf(ss) + (float)o->ns_eps;
  for (size_t i = 0; i < m * n; i++)
    X[i] /= d;
  for (int k = 0; k < o->ns_steps; k++) {
    muonref_coeff t = muonref_ns_coeff_at(o, k);
    float a = (float)t.a, b = (float)t.b, c = (float)t.c;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, mi, mi, ni, 1.0f, X, ni, X, ni, 0.0f, A, mi);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, mi, mi, 1.0f, A, mi, A, mi, 0.0f, AA, mi);
    for (size_t i = 0; i < m * m; i++)
      A[i] = b * A[i] + c * AA[i];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, ni, mi, 1.0f, A, mi, X, ni, 0.0f, BX, ni);
    for (size_t i = 0; i < m * n; i++)
      X[i] = a * X[i] + BX[i];
  }
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < cols; j++)
      out[i * cols + j] = X[tr ? j * rows + i : i * cols + j];
}
