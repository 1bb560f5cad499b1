/* muonref: the fast Newton-Schulz iteration in bf16 or fp32 semantics.
 *
 * For the wide orientation X (m x n, m <= n; the transpose of the input
 * when rows > cols), with R the rounding of the format (bf16: round to
 * nearest even after each operation; fp32: the binary32 operation itself):
 *   X <- R(in);  nrm <- R(||X||_F);  nrm <- R(nrm s) (s = ns_safety, when not 1)
 *   d <- R(nrm + eps) | R(max(nrm, eps))
 *   X <- R(X / d)                     (X <- 0 when d = 0)
 *   (norm_format INPUT: these three lines in binary32, X <- R(fl32(X / d)))
 *   (ns_precondition AOL, SCHATTEN: instead X <- R(X / d_i) per row, d_i in
 *   binary64 from X X^T: precondition() below; nothing when no step runs)
 *   (eps_mode ADD_SCALED: eps scaled by the input's shape, muonref_ns_options_for)
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
 * nothing when work is given (oneDNN, below, keeps its own scratch).
 *
 * Native bf16 (fast/ns_dnnl.c): where oneDNN was found at configure time
 * and the CPU has bf16 dot-product instructions, the bf16 products run as
 * oneDNN matmuls on bf16 operands with binary32 results, then the same
 * fused passes round them: the same definition, with oneDNN's order of
 * accumulation instead of OpenBLAS's (both binary32; the Bf16Exact vectors
 * are independent of it by construction).  X X^T and A A compute the upper
 * block triangle only (block rows of NSD_BLOCK = 128), B X is a full product.
 * MUONREF_NS_GEMM=blas|dnnl|auto (environment) or the flags
 * MUONREF_NSF_GEMM_BLAS / _DNNL choose; auto takes oneDNN above the same
 * m^2 n as ssymm (a choice by shape, so results stay deterministic).
 * spec/muon.md, section "Newton-Schulz", is the definition. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "muonref/bf16.h"
#include "muonref/ns.h"
#include "ns_dnnl.h"
#include "ns_internal.h"
#include "ns_kernels.h"
#include "muonref/route.h"
#include "core/fail.h"
#include "core/plan.h"

/* Floats of workspace for an iterate of m x n (m > n only under
 * MUONREF_NSF_NO_TRANSPOSE). */
static size_t workspace_mn(size_t m, size_t n) { return 2 * m * n + 3 * m * m + (m * n + 1) / 2; }

size_t muonref_ns_workspace_floats(size_t rows, size_t cols)
{
  return workspace_mn(rows < cols ? rows : cols, rows < cols ? cols : rows);
}

static float round1(float x, int bf16) { return bf16 ? muonref_bf16_round(x) : x; }

/* The divisor d = R(R(R(||X||_F) ns_safety) (+|max) eps) of X[0..len) (the
 * product only when ns_safety is not 1: timm's safety_factor), with ss the
 * sum of the squares of X in binary64, added in index order (the load's,
 * fast/passes.h).  With MUONREF_NSF_MAX_NORM the norm is max |x| (a
 * deliberate fault). */
static float divisor(const float *X, size_t len, double ss, const muonref_options *o, int bf16, unsigned flags)
{
  double nrm = 0.0;
  if (MUONREF_NSF_FAULT(flags, MUONREF_NSF_MAX_NORM)) {
    for (size_t i = 0; i < len; i++)
      nrm = fmax(nrm, fabs((double)X[i]));
  } else {
    nrm = sqrt(ss);
  }
  float r = round1((float)nrm, bf16), eps = (float)o->ns_eps;
  if (o->ns_safety != 1.0) /* timm's safety_factor: R(R(||X||) s), s as binary32 */
    r = round1(r * (float)o->ns_safety, bf16);
  return round1(o->eps_mode == MUONREF_EPS_ADD ? r + eps : fmaxf(r, eps), bf16);
}

/* ns_precondition AOL and SCHATTEN (options.h; optax's first-step
 * rescaling): the divisor of each row of X (m x n) in binary64 from
 * A = X X^T accumulated in binary64: AOL d_i = sqrt(max(sum_j |A_ij|,
 * 1e-8)), SCHATTEN one d = sqrt(max(||A||_F, 1e-8)); then X <- R(X / d_i). */
static void precondition(float *X, size_t m, size_t n, const muonref_options *o, int bf16)
{
  double *d = calloc(m ? m : 1, sizeof *d), fro = 0.0;
  if (!d) /* cannot fail for the sizes a workspace was allocated for; degrade to no scaling */
    return;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < m; j++) {
      double a = 0.0;
      for (size_t l = 0; l < n; l++)
        a += (double)X[i * n + l] * (double)X[j * n + l];
      d[i] += fabs(a);
      fro += a * a;
    }
  for (size_t i = 0; i < m; i++) {
    double di = o->ns_precondition == MUONREF_PRECOND_AOL ? sqrt(fmax(d[i], MUONREF_PRECOND_EPS))
                                                           : sqrt(fmax(sqrt(fro), MUONREF_PRECOND_EPS));
    for (size_t l = 0; l < n; l++)
      X[i * n + l] = round1((float)((double)X[i * n + l] / di), bf16);
  }
  free(d);
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
 * (A is symmetric), B X by ssymm reading B's upper triangle only.  Returns
 * 1 when every element of the new X is finite, else 0. */
static int ns_step(float *X, float *A, float *B, float *BX, size_t m, size_t n, muonref_coeff t, int bf16)
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
  return muonref_nsk_axpy(X, BX, m * n, (float)t.a, bf16); /* X <- R(R(a X) + R(B X)) */
}

/* One bf16 step in the KELLER or FUSED order of spec/muon.md 7.2 (the
 * test hook MUONREF_NSF_ORDER; SEPARATE is ns_step), with full sgemm
 * products accumulated in binary32:
 *   KELLER: A <- R(X X^T); C <- R(c A); B <- R(R(b A) + R(C A));
 *           X <- R(R(a X) + R(B X))
 *   FUSED:  A <- R(X X^T); B <- R(b A + c (A A)); X <- R(a X + B X), each
 *           right-hand side in binary64 from the binary32 products, then
 *           rounded once (through binary32, as PyTorch's addmm)
 * C (m x m) is scratch; B is not symmetric under KELLER, so B X is a
 * full product. */
static void ns_step_order(float *X, float *A, float *B, float *C, float *BX, size_t m, size_t n, muonref_coeff t,
                          muonref_bf16_order order)
{
  int mi = (int)m, ni = (int)n;
  float a = (float)t.a, b = (float)t.b, c = (float)t.c;
  cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, mi, ni, 1.0f, X, ni, 0.0f, A, mi);
  muonref_nsk_sym_finish(A, m, 1);
  if (order == MUONREF_BF16_KELLER) {
    for (size_t i = 0; i < m * m; i++)
      C[i] = muonref_bf16_round(c * A[i]);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, mi, mi, 1.0f, C, mi, A, mi, 0.0f, B, mi);
    for (size_t i = 0; i < m * m; i++)
      B[i] = muonref_bf16_round(muonref_bf16_round(b * A[i]) + muonref_bf16_round(B[i]));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, ni, mi, 1.0f, B, mi, X, ni, 0.0f, BX, ni);
    muonref_nsk_axpy(X, BX, m * n, a, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, mi, mi, 1.0f, A, mi, A, mi, 0.0f, B, mi);
  for (size_t i = 0; i < m * m; i++)
    B[i] = muonref_bf16_round((float)((double)b * A[i] + (double)c * B[i]));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, ni, mi, 1.0f, B, mi, X, ni, 0.0f, BX, ni);
  for (size_t i = 0; i < m * n; i++)
    X[i] = muonref_bf16_round((float)((double)a * X[i] + BX[i]));
}

/* Rows per block of the upper block triangle of a symmetric product:
 * smaller blocks skip more of the lower triangle, larger ones keep oneDNN's
 * kernels efficient; 128 computes 36/64 of the full product at m = 1024
 * (256: 40/64).  Timings here were too noisy (load average 7 on 2 cores)
 * to tell 128 from 256 apart; 64 was not faster. */
enum { NSD_BLOCK = 128 };

/* C (m x m, upper block triangle) <- P P^T for P (m x k, bf16) when sym == 0,
 * or P P for the symmetric P (m x m, k == m) when sym != 0. */
static int upper_product(float *C, const uint16_t *P, size_t m, size_t k, int sym)
{
  for (size_t i0 = 0; i0 < m; i0 += NSD_BLOCK) {
    size_t r = m - i0 < NSD_BLOCK ? m - i0 : NSD_BLOCK;
    const uint16_t *W = sym ? P + i0 : P + i0 * k; /* columns i0.. of P, or rows i0.. of P as P^T */
    if (muonref_nsd_matmul(C + i0 * m + i0, m, P + i0 * k, k, W, sym ? m : 1, sym ? 1 : k, r, m - i0, k))
      return -1;
  }
  return 0;
}

/* ns_step in bf16 with oneDNN's products.  Xb (m n) holds the bf16 bit
 * patterns of X on entry and on return; Pb (m m) those of A, then of B.
 * Each bf16 copy is written by the pass that finishes its matrix.
 * Returns 1 when every element of the new X is finite, 0 when not, or -1
 * when oneDNN failed. */
static int ns_step_dnnl(float *X, float *A, float *B, float *BX, uint16_t *Xb, uint16_t *Pb, size_t m, size_t n,
                        muonref_coeff t)
{
  if (upper_product(A, Xb, m, n, 0))
    return -1;
  muonref_nsk_sym_finish_copy(A, Pb, m, 1);              /* A <- R(X X^T), full */
  if (upper_product(B, Pb, m, m, 1))
    return -1;
  muonref_nsk_poly_upper(B, A, B, m, (float)t.b, (float)t.c, 1); /* B <- R(R(b A) + R(c R(A A))) */
  muonref_nsk_sym_finish_copy(B, Pb, m, 0);              /* mirror only */
  if (muonref_nsd_matmul(BX, n, Pb, m, Xb, n, 1, m, n, m))
    return -1;
  return muonref_nsk_axpy_copy(X, Xb, BX, m * n, (float)t.a); /* X <- R(R(a X) + R(B X)) */
}

/* 1 to run the bf16 products through oneDNN, 0 through OpenBLAS, or a
 * MUONREF_EOPTION with err set when the choice is invalid or unavailable. */
static int use_dnnl(unsigned flags, int bf16, size_t m, size_t n, muonref_error *err)
{
  muonref_gemm_kind kind;
  const char *bad = NULL, *why = NULL;
  if (muonref_nsd_env(&kind, &bad))
    return muonref_fail(err, MUONREF_EOPTION, "MUONREF_NS_GEMM='%.100s': expected auto, blas or dnnl", bad);
  if (flags & MUONREF_NSF_GEMM_BLAS)
    kind = MUONREF_GEMM_BLAS;
  else if (flags & MUONREF_NSF_GEMM_DNNL)
    kind = MUONREF_GEMM_DNNL;
  if (!bf16 || kind == MUONREF_GEMM_BLAS)
    return 0;
  int usable = muonref_nsd_usable(&why);
  if (kind == MUONREF_GEMM_DNNL && !usable)
    return muonref_fail(err, MUONREF_EOPTION, "native bf16 GEMM (MUONREF_NS_GEMM=dnnl) is not available: %s", why);
  return usable && (kind == MUONREF_GEMM_DNNL || m * m * n > SMALL_M2N);
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

void muonref_ns_orient(size_t rows, size_t cols, unsigned flags, size_t *m, size_t *n, int *tr)
{
  *tr = !MUONREF_NSF_FAULT(flags, MUONREF_NSF_NO_TRANSPOSE) && muonref_ns_transposes(rows, cols);
  *m = *tr ? cols : rows;
  *n = *tr ? rows : cols;
}

size_t muonref_ns_workspace_floats_flags(size_t rows, size_t cols, unsigned flags)
{
  size_t m, n;
  int tr;
  muonref_ns_orient(rows, cols, flags, &m, &n, &tr);
  return workspace_mn(m, n);
}

int muonref_ns_load_bf16(const muonref_options *o)
{
  return o->ns_format == MUONREF_NS_BF16 && o->norm_format != MUONREF_NORM_FORMAT_INPUT;
}

/* The checks of every entry: the options (into *o, rounded into *buf
 * under MUONREF_NSF_BF16_SCALARS) and the shape. */
static int prepare(const muonref_options **o, muonref_options *buf, size_t rows, size_t cols, int io_null,
                   unsigned flags, muonref_error *err)
{
  int st = muonref_ns_options_validate(*o, err);
  if (st)
    return st;
  if (io_null)
    return muonref_fail(err, MUONREF_EOPTION, "Newton-Schulz: the input and output matrices must not be NULL");
  if (rows < 1 || cols < 1 || rows > MUONREF_MAX_NUMEL / cols)
    return muonref_fail(err, MUONREF_ESHAPE, "Newton-Schulz: invalid matrix shape (%zu, %zu): each side at least 1, "
                        "at most %zu elements", rows, cols, (size_t)MUONREF_MAX_NUMEL);
  *o = muonref_ns_options_for(*o, rows, cols, buf); /* timm's scale_eps (eps_mode ADD_SCALED) */
  if (MUONREF_NSF_FAULT(flags, MUONREF_NSF_BF16_SCALARS)) {
    *buf = bf16_scalars(*o);
    *o = buf;
  }
  if ((*o)->ns_format == MUONREF_NS_EXACT)
    return muonref_fail(err, MUONREF_EOPTION, "ns_format 'exact' is not available on the fast path");
  return MUONREF_OK;
}

/* prepare, then the orientation (*m x *n, *tr) and the GEMM of the run:
 * returns 1 (oneDNN), 0 (OpenBLAS) or a (negative) error status. */
static int begin(const muonref_options **o, muonref_options *buf, size_t rows, size_t cols, int io_null,
                 unsigned flags, size_t *m, size_t *n, int *tr, muonref_error *err)
{
  int st = prepare(o, buf, rows, cols, io_null, flags, err);
  if (st)
    return st;
  muonref_ns_orient(rows, cols, flags, m, n, tr);
  int bf16 = (*o)->ns_format == MUONREF_NS_BF16;
  if (bf16 && MUONREF_NSF_FAULT(flags, MUONREF_NSF_ORDER) && (*o)->bf16_order != MUONREF_BF16_SEPARATE)
    return 0; /* the test hook's orders run on OpenBLAS (ns_step_order) */
  return use_dnnl(flags, bf16, *m, *n, err);
}

/* Newton-Schulz from the loaded iterate X (m x n, the first m n floats of
 * work, workspace_mn(m, n) floats) whose squares sum to ss: the divisor,
 * the normalisation and the steps, leaving the result in X.  Returns
 * MUONREF_OK, MUONREF_ENUMERIC when the result is not finite, MUONREF_ENOMEM
 * when oneDNN failed. */
static int run(float *work, size_t rows, size_t cols, size_t m, size_t n, int tr, double ss,
               const muonref_options *o, unsigned flags, int dnnl, muonref_error *err)
{
  int bf16 = o->ns_format == MUONREF_NS_BF16;
  int order = bf16 && MUONREF_NSF_FAULT(flags, MUONREF_NSF_ORDER) && o->bf16_order != MUONREF_BF16_SEPARATE;
  /* X, BX (m n floats each), A, B (m m each); for oneDNN the bf16 copies
   * Pb (m m halves, in the third m m) and Xb (m n halves, at the end) */
  float *X = work, *BX = X + m * n, *A = BX + m * n, *B = A + m * m;
  uint16_t *Pb = (uint16_t *)(B + m * m), *Xb = (uint16_t *)(B + 2 * m * m);
  /* norm_format INPUT (Emerging-Optimizers: F.normalize on the float32
   * input, then `.to(torch.bfloat16)`): the load and the divisor stay in
   * binary32, the quotient is rounded to binary32, then to bf16 */
  int finite = -2, n_steps = muonref_ns_step_count(o);
  float d = o->ns_precondition == MUONREF_PRECOND_FROBENIUS ? divisor(X, m * n, ss, o, muonref_ns_load_bf16(o), flags)
                                                             : 1.0f;
  if (o->ns_precondition != MUONREF_PRECOND_FROBENIUS) { /* optax: part of step 0, none without steps */
    if (n_steps > 0)
      precondition(X, m, n, o, bf16);
    if (dnnl)
      muonref_nsk_to_bf16(Xb, X, m * n);
  } else if (MUONREF_NSF_FAULT(flags, MUONREF_NSF_ZERO_NORM_NAN) && d == 0.0f) { /* the fault zero_norm_nan: X / 0 */
    for (size_t i = 0; i < m * n; i++)
      X[i] = X[i] / d;
    if (dnnl)
      muonref_nsk_to_bf16(Xb, X, m * n);
  } else if (dnnl) {
    muonref_nsk_scale_copy(X, Xb, m * n, d);
  } else {
    muonref_nsk_scale(X, m * n, d, bf16);
  }
  for (int k = 0; k < n_steps; k++) {
    muonref_coeff t = muonref_ns_coeff_at(o, k);
    if (order) {
      ns_step_order(X, A, B, B + m * m, BX, m, n, t, o->bf16_order);
      finite = 0; /* checked below */
      continue;
    }
    finite = dnnl ? ns_step_dnnl(X, A, B, BX, Xb, Pb, m, n, t) : ns_step(X, A, B, BX, m, n, t, bf16);
    if (finite == -1)
      return muonref_fail(err, MUONREF_ENOMEM, "oneDNN's bf16 matmul failed on a (%zu, %zu) Newton-Schulz step "
                          "(out of memory or an unsupported layout)", rows, cols);
  }
  if (finite == 1)
    return MUONREF_OK;
  /* What was computed is checked before anything is written: growing
   * coefficients, or an input element that rounds to bf16 infinity, give
   * Inf or NaN here (the last step says so, or no step ran). */
  for (size_t i = 0; i < m * n; i++)
    if (!isfinite(X[i]))
      return muonref_fail(err, MUONREF_ENUMERIC,
                          "Newton-Schulz diverged: output element %zu of a (%zu, %zu) matrix is not finite after %d "
                          "steps in %s (nothing written)", tr ? (i % n) * m + i / n : i, rows, cols, n_steps,
                          bf16 ? "bf16" : "fp32");
  return MUONREF_OK;
}

int muonref_fast_ns_flags(float *out, const float *in, size_t rows, size_t cols, const muonref_options *o,
                          float *work, unsigned flags, muonref_error *err)
{
  muonref_options rounded;
  size_t m = 0, n = 0;
  int tr = 0, st, dnnl = begin(&o, &rounded, rows, cols, !out || !in, flags, &m, &n, &tr, err);
  if (dnnl < 0)
    return dnnl;
  float *owned = NULL;
  if (!work || m > n) { /* m > n only under MUONREF_NSF_NO_TRANSPOSE: more than the documented size */
    owned = malloc(workspace_mn(m, n) * sizeof *owned);
    if (!owned)
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the Newton-Schulz workspace of a (%zu, %zu) matrix",
                          rows, cols);
    work = owned;
  }
  double ss = muonref_nsk_load(work, in, m, n, tr, muonref_ns_load_bf16(o));
  st = run(work, rows, cols, m, n, tr, ss, o, flags, dnnl, err);
  if (!st)
    muonref_nsk_store(out, work, m, n, tr);
  free(owned);
  return st;
}

int muonref_fast_ns_loaded(float *work, size_t rows, size_t cols, double ss, const muonref_options *o,
                           unsigned flags, muonref_error *err)
{
  muonref_options rounded;
  size_t m = 0, n = 0;
  int tr = 0, dnnl = begin(&o, &rounded, rows, cols, !work, flags, &m, &n, &tr, err);
  return dnnl < 0 ? dnnl : run(work, rows, cols, m, n, tr, ss, o, flags, dnnl, err);
}
