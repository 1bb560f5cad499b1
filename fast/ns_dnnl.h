/* muonref: native bf16 matrix products for the fast Newton-Schulz
 * iteration (fast/ns.c) through oneDNN's matmul primitive, where the
 * library was found at configure time and the CPU has bf16 dot-product
 * instructions (AVX-512 BF16 or AMX).  Not installed.
 *
 * Every product takes bf16 operands (uint16_t bit patterns, row-major) and
 * writes binary32 results: oneDNN multiplies bf16 values exactly and
 * accumulates in binary32 (vdpbf16ps), in an order of its own; the caller
 * rounds the binary32 results to bf16 once (fast/ns_kernels.c), which is the
 * spec's bf16 product (spec/muon.md, "Newton-Schulz").  One deviation from
 * sgemm on bf16-valued floats: vdpbf16ps treats subnormal inputs and partial
 * sums as zero (DAZ/FTZ, Intel SDM, VDPBF16PS), which matters only for
 * products below 2^-126, far below any entry of a normalized iterate that
 * is not zero in bf16 semantics anyway. */
#ifndef MUONREF_NS_DNNL_H
#define MUONREF_NS_DNNL_H

/* internal to the library: hidden even where a header included later
 * (dnnl.h) or GCC's target_clones would export them */
#pragma GCC visibility push(hidden)

#include <stddef.h>
#include <stdint.h>

/* Which GEMM the bf16 Newton-Schulz uses. */
typedef enum {
  MUONREF_GEMM_AUTO = 0, /* oneDNN where usable and the matrix is large enough, else OpenBLAS */
  MUONREF_GEMM_BLAS = 1, /* sgemm/ssyrk/ssymm on bf16-valued floats (every CPU) */
  MUONREF_GEMM_DNNL = 2  /* oneDNN's native bf16 matmul at every size */
} muonref_gemm_kind;

/* 1 when the native path can run here: built with oneDNN, and oneDNN's
 * effective ISA has bf16 dot products (avx512_core_bf16 or above).  The
 * first call creates the engine (thread-safe, once per process); when
 * that fails the answer is 0.  *why (may be NULL) gets a short reason
 * when the answer is 0. */
int muonref_nsd_usable(const char **why);

/* The GEMM the environment asks for: MUONREF_NS_GEMM unset or "auto",
 * "blas", "dnnl".  Returns 0 and sets *kind, or -1 for any other value
 * (the value is then left in *bad).  Read once per process. */
int muonref_nsd_env(muonref_gemm_kind *kind, const char **bad);

/* C (m x cn, row stride ldc) <- A (m x k, row stride lda) * W, where W
 * (k x cn) is read at W[i * wsk + j * wsn] (so W = B^T of a row-major B
 * is wsk = 1, wsn = ldb).  Operands are bf16 bit patterns, the result is
 * binary32.  Returns 0, or -1 when oneDNN refused (out of memory, or an
 * unsupported layout); C is then unspecified. */
int muonref_nsd_matmul(float *C, size_t ldc, const uint16_t *A, size_t lda, const uint16_t *W, size_t wsk,
                       size_t wsn, size_t m, size_t cn, size_t k);

#pragma GCC visibility pop

#endif
