/* muonref: the fast Newton-Schulz iteration in bf16 or fp32 semantics.
 *
 * For the wide orientation X (m x n, m <= n; the transpose of the input
 * when rows > cols), with R the rounding of the format (bf16: round to
 * nearest even after each operation; fp32: the binary32 operation itself):
 *   X <- R(in);  nrm <- R(||X||_F);  d <- R(nrm + eps) | R(max(nrm, eps))
 *   X <- R(X / d)                     (X <- 0 when d = 0)
 *   for k in 0..ns_steps-1, (a, b, c) = coefficient triple k:
 *     A <- R(X X^T)                   (ssyrk, fp32 accumulation, mirrored)
 *     B <- R(R(b A) + R(c R(A A)))    (A A = A A^T by ssyrk)
 *     X <- R(R(a X) + R(B X))         (sgemm)
 * Scalars enter as binary32 (PyTorch's opmath for bf16 tensors).  bf16
 * values and their products are exact in binary32, so sgemm on bf16-valued
 * floats followed by R is a bf16 GEMM with fp32 accumulation
 * (shared/reference/measurements.md; Debian 12's OpenBLAS has no sbgemm).
 * The Frobenius norm is accumulated in binary64 before R.
 * spec/muon.md, section "Newton-Schulz", is the definition. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "muonref/bf16.h"
#include "muonref/ns.h"
#include "ns_internal.h"
#include "muonref/route.h"

size_t muonref_ns_workspace_floats(size_t rows, size_t cols)
{
  size_t m = rows < cols ? rows : cols, n = rows < cols ? cols : rows;
  return 2 * m * n + 3 * m * m;
}

/* R applied to x[0..len): bf16 rounding, or nothing for fp32. */
static void round_fmt(float *x, size_t len, int bf16)
{
  if (bf16)
    muonref_bf16_round_array(x, len);
}

static float round1(float x, int bf16) { return bf16 ? muonref_bf16_round(x) : x; }

/* dst (cols x rows) <- src^T for row-major src (rows x cols). */
static void transpose(float *dst, const float *src, size_t rows, size_t cols)
{
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < cols; j++)
      dst[j * rows + i] = src[i * cols + j];
}

/* S (m x m) <- R(X X^T) for row-major X (m x k): upper triangle by ssyrk,
 * mirrored to the lower so that S is exactly symmetric. */
static void gram(float *S, const float *X, size_t m, size_t k, int bf16)
{
  cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)m, (int)k, 1.0f, X, (int)k, 0.0f, S, (int)m);
  for (size_t i = 0; i < m; i++)
    for (size_t j = i + 1; j < m; j++)
      S[j * m + i] = S[i * m + j];
  round_fmt(S, m * m, bf16);
}

/* X <- R(X / d) for d = R(||X||_F (+|max) eps); X <- 0 when d = 0.
 * With MUONREF_NSF_MAX_NORM the norm is max |x| (a deliberate fault). */
static void normalize(float *X, size_t len, const muonref_options *o, int bf16, unsigned flags)
{
  double ss = 0.0, mx = 0.0;
  for (size_t i = 0; i < len; i++) {
    ss += (double)X[i] * (double)X[i];
    mx = fmax(mx, fabs((double)X[i]));
  }
  float nrm = round1((float)(flags & MUONREF_NSF_MAX_NORM ? mx : sqrt(ss)), bf16);
  float eps = (float)o->ns_eps;
  float d = round1(o->eps_mode == MUONREF_EPS_ADD ? nrm + eps : fmaxf(nrm, eps), bf16);
  for (size_t i = 0; i < len; i++)
    X[i] = d == 0.0f ? 0.0f : X[i] / d;
  round_fmt(X, len, bf16);
}

/* One step on X (m x n) with triple t; A, AA, BX are scratch. */
static void ns_step(float *X, float *A, float *AA, float *BX, size_t m, size_t n, muonref_coeff t, int bf16)
{
  const float a = (float)t.a, b = (float)t.b, c = (float)t.c;
  gram(A, X, m, n, bf16);
  gram(AA, A, m, m, bf16); /* A A = A A^T: A is symmetric */
  for (size_t i = 0; i < m * m; i++)
    AA[i] = round1(c * AA[i], bf16);
  for (size_t i = 0; i < m * m; i++)
    A[i] = round1(round1(b * A[i], bf16) + AA[i], bf16); /* A now holds B */
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)m, 1.0f, A, (int)m, X, (int)n,
              0.0f, BX, (int)n);
  round_fmt(BX, m * n, bf16);
  for (size_t i = 0; i < m * n; i++)
    X[i] = round1(round1(a * X[i], bf16) + BX[i], bf16);
}

int muonref_fast_ns(float *out, const float *in, size_t rows, size_t cols, const muonref_options *o,
                    float *work, muonref_error *err)
{
  return muonref_fast_ns_flags(out, in, rows, cols, o, work, 0, err);
}

/* o with its coefficients and eps rounded to bf16 (MUONREF_NSF_BF16_SCALARS). */
static muonref_options bf16_scalars(const muonref_options *o)
{
  muonref_options r = *o;
  for (int k = 0; k < r.n_coeffs; k++) {
    r.coeffs[k].a = muonref_bf16_round((float)r.coeffs[k].a);
    r.coeffs[k].b = muonref_bf16_round((float)r.coeffs[k].b);
    r.coeffs[k].c = muonref_bf16_round((float)r.coeffs[k].c);
  }
  r.ns_eps = muonref_bf16_round((float)r.ns_eps);
  return r;
}

int muonref_fast_ns_flags(float *out, const float *in, size_t rows, size_t cols, const muonref_options *o,
                          float *work, unsigned flags, muonref_error *err)
{
  muonref_options rounded;
  if (flags & MUONREF_NSF_BF16_SCALARS) {
    rounded = bf16_scalars(o);
    o = &rounded;
  }
  if (o->ns_format == MUONREF_NS_EXACT)
    return muonref_fail(err, MUONREF_EOPTION, "ns_format 'exact' is not available on the fast path");
  int bf16 = o->ns_format == MUONREF_NS_BF16;
  int tr = !(flags & MUONREF_NSF_NO_TRANSPOSE) && muonref_ns_transposes(rows, cols);
  size_t m = tr ? cols : rows, n = tr ? rows : cols;
  float *owned = NULL;
  if (!work || m > n) { /* m > n only under MUONREF_NSF_NO_TRANSPOSE: more than the documented size */
    owned = malloc((2 * m * n + 3 * m * m) * sizeof *owned);
    if (!owned)
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the Newton-Schulz workspace of a (%zu, %zu) matrix",
                          rows, cols);
    work = owned;
  }
  float *X = work, *BX = X + m * n, *A = BX + m * n, *AA = A + m * m;
  if (tr)
    transpose(X, in, rows, cols);
  else
    memcpy(X, in, m * n * sizeof *X);
  round_fmt(X, m * n, bf16);
  normalize(X, m * n, o, bf16, flags);
  for (int k = 0; k < o->ns_steps; k++)
    ns_step(X, A, AA, BX, m, n, muonref_ns_coeff_at(o, k), bf16);
  if (tr)
    transpose(out, X, m, n);
  else
    memcpy(out, X, m * n * sizeof *X);
  free(owned);
  return MUONREF_OK;
}
