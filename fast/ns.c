/* muonref: the fast Newton-Schulz iteration in bf16 or fp32 semantics.
 *
 * For the wide orientation X (m x n, m <= n; the transpose of the input
 * when rows > cols), with R the rounding of the format (bf16: round to
 * nearest even after each operation; fp32: the binary32 operation itself):
 *   X <- R(in);  nrm <- R(||X||_F);  d <- R(nrm + eps) | R(max(nrm, eps))
 *   X <- R(X / d)                     (X <- 0 when d = 0)
 *   for k in 0..ns_steps-1, (a, b, c) = coefficient triple k:
 *     A <- R(X X^T)                   (ssyrk, fp32 accumulation, mirrored)
 *     B <- R(R(b A) + R(c R(A A)))    (A A = A A^T by ssyrk; upper triangle)
 *     X <- R(R(a X) + R(B X))         (ssymm on B's upper triangle)
 * Scalars enter as binary32 (PyTorch's opmath for bf16 tensors).  bf16
 * values and their products are exact in binary32, so sgemm on bf16-valued
 * floats followed by R is a bf16 GEMM with fp32 accumulation
 * (shared/reference/measurements.md; Debian 12's OpenBLAS has no sbgemm).
 * The Frobenius norm is accumulated in binary64 before R.
 * Cost of a step, in multiply-adds x 2: m^2 n (ssyrk) + m^3 (ssyrk) +
 * 2 m^2 n (ssymm) = 3 m^2 n + m^3, against 4 m^2 n + 2 m^3 for three GEMMs.
 * The element-wise operations are fused into one pass after each BLAS call
 * (fast/ns_kernels.c); the workspace is the caller's, so a step allocates
 * nothing when work is given.
 * spec/muon.md, section "Newton-Schulz", is the definition. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "muonref/bf16.h"
#include "muonref/ns.h"
#include "ns_internal.h"
#include "ns_kernels.h"
#include "muonref/route.h"

size_t muonref_ns_workspace_floats(size_t rows, size_t cols)
{
  size_t m = rows < cols ? rows : cols, n = rows < cols ? cols : rows;
  return 2 * m * n + 3 * m * m;
}

static float round1(float x, int bf16) { return bf16 ? muonref_bf16_round(x) : x; }

/* The divisor d = R(R(||X||_F) (+|max) eps) of X[0..len), the norm summed
 * in binary64 in index order.  With MUONREF_NSF_MAX_NORM the norm is
 * max |x| (a deliberate fault). */
static float divisor(const float *X, size_t len, const muonref_options *o, int bf16, unsigned flags)
{
  double nrm = 0.0;
  if (flags & MUONREF_NSF_MAX_NORM) {
    for (size_t i = 0; i < len; i++)
      nrm = fmax(nrm, fabs((double)X[i]));
  } else {
    double ss = 0.0;
    for (size_t i = 0; i < len; i++)
      ss += (double)X[i] * (double)X[i];
    nrm = sqrt(ss);
  }
  float r = round1((float)nrm, bf16), eps = (float)o->ns_eps;
  return round1(o->eps_mode == MUONREF_EPS_ADD ? r + eps : fmaxf(r, eps), bf16);
}

/* Below this m^2 n, B X goes through sgemm on a mirrored B instead of
 * ssymm: OpenBLAS 0.3.21 runs sgemm single-threaded up to m n k = 65536 x 4
 * (interface/gemm.c, SMP_THRESHOLD_MIN x GEMM_MULTITHREAD_THRESHOLD) but
 * wakes every thread for any ssymm, which costs ~6 us a call on a 32x32
 * matrix (7.3 us against 1.0 us single-threaded, measured here), more than
 * the product itself.  The choice depends on the shape only, so results
 * stay deterministic and NS(G^T) == NS(G)^T. */
enum { SMALL_M2N = 65536 * 4 };

/* One step on X (m x n) with triple t; A (m x m, full), B (m x m, upper
 * triangle) and BX (m x n) are scratch.  X X^T and A A = A A^T by ssyrk
 * (A is symmetric), B X by ssymm reading B's upper triangle only. */
static void ns_step(float *X, float *A, float *B, float *BX, size_t m, size_t n, muonref_coeff t, int bf16)
{
  int mi = (int)m, ni = (int)n;
  cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, mi, ni, 1.0f, X, ni, 0.0f, A, mi);
  muonref_nsk_sym_finish(A, m, bf16);                    /* A <- R(X X^T), full */
  cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, mi, mi, 1.0f, A, mi, 0.0f, B, mi);
  muonref_nsk_poly_upper(B, A, B, m, (float)t.b, (float)t.c, bf16); /* B <- R(R(b A) + R(c R(A A))) */
  if (m * m * n <= SMALL_M2N) {
    muonref_nsk_sym_finish(B, m, 0); /* mirror only: B is already rounded */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, ni, mi, 1.0f, B, mi, X, ni, 0.0f, BX, ni);
  } else {
    cblas_ssymm(CblasRowMajor, CblasLeft, CblasUpper, mi, ni, 1.0f, B, mi, X, ni, 0.0f, BX, ni);
  }
  muonref_nsk_axpy(X, BX, m * n, (float)t.a, bf16);     /* X <- R(R(a X) + R(B X)) */
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
  int st = muonref_ns_options_validate(o, err);
  if (st)
    return st;
  if (!out || !in)
    return muonref_fail(err, MUONREF_EOPTION, "Newton-Schulz: the input and output matrices must not be NULL");
  if (rows < 1 || cols < 1 || rows > MUONREF_MAX_NUMEL / cols)
    return muonref_fail(err, MUONREF_ESHAPE, "Newton-Schulz: invalid matrix shape (%zu, %zu): each side at least 1, "
                        "at most %zu elements", rows, cols, (size_t)MUONREF_MAX_NUMEL);
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
  float *X = work, *BX = X + m * n, *A = BX + m * n, *B = A + m * m;
  muonref_nsk_load(X, in, m, n, tr, bf16);
  muonref_nsk_scale(X, m * n, divisor(X, m * n, o, bf16, flags), bf16);
  for (int k = 0; k < o->ns_steps; k++)
    ns_step(X, A, B, BX, m, n, muonref_ns_coeff_at(o, k), bf16);
  /* What was computed is checked before anything is written: growing
   * coefficients, or an input element that rounds to bf16 infinity, give
   * Inf or NaN here; out is then left untouched. */
  for (size_t i = 0; i < m * n; i++)
    if (!isfinite(X[i])) {
      st = muonref_fail(err, MUONREF_ENUMERIC,
                        "Newton-Schulz diverged: output element %zu of a (%zu, %zu) matrix is not finite after %d "
                        "steps in %s (nothing written)", tr ? (i % n) * m + i / n : i, rows, cols, o->ns_steps,
                        bf16 ? "bf16" : "fp32");
      break;
    }
  if (!st)
    muonref_nsk_store(out, X, m, n, tr);
  free(owned);
  return st;
}
