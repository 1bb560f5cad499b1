/* muonref: the fused element-wise passes of the fast Newton-Schulz
 * iteration (fast/ns.c), vectorized (fast/simd.h).  Not installed.
 *
 * All matrices are row-major float arrays.  R is the rounding of the
 * format: bf16 != 0 rounds to bf16 (round to nearest even, fast/bf16.c);
 * bf16 == 0 is binary32, where each operation's own rounding is R.  Every
 * pass gives the same bits as the obvious element-by-element loop: the
 * element-wise operations have no accumulation order to change. */
#ifndef MUONREF_NS_KERNELS_H
#define MUONREF_NS_KERNELS_H

/* internal to the library: hidden even where a header included later
 * (dnnl.h) or GCC's target_clones would export them */
#pragma GCC visibility push(hidden)

#include <stddef.h>
#include <stdint.h>

/* X (m x n) <- R(in) when tr == 0 (in is (m, n)), or R(in^T) when tr != 0
 * (in is (n, m)), in one pass; returns the sum of the squares of the new X
 * in binary64, added in X's index order (the norm of fast/ns.c).  X and in
 * must not overlap. */
double muonref_nsk_load(float *X, const float *in, size_t m, size_t n, int tr, int bf16);

/* out <- X (m x n) when tr == 0, or X^T ((n, m)) when tr != 0; no rounding. */
void muonref_nsk_store(float *out, const float *X, size_t m, size_t n, int tr);

/* x[0..len) <- R(x / d); with d == 0, x <- +0 (the spec's zero input). */
void muonref_nsk_scale(float *x, size_t len, float d, int bf16);

/* muonref_nsk_scale in bf16, and Xb[0..len) <- the bf16 bit patterns of
 * the new x, in the same pass. */
void muonref_nsk_scale_copy(float *x, uint16_t *Xb, size_t len, float d);

/* S (m x m) holds its upper triangle (the output of ssyrk): rounds it with
 * R and mirrors it to the lower triangle, so that S is exactly symmetric. */
void muonref_nsk_sym_finish(float *S, size_t m, int bf16);

/* Upper triangles (j >= i) of (m x m) matrices: B <- R(R(b A) + R(c R(AA))).
 * B may be AA (in place); the lower triangle of B is not written. */
void muonref_nsk_poly_upper(float *B, const float *A, const float *AA, size_t m, float b, float c, int bf16);

/* X[0..len) <- R(R(a X) + R(BX)); returns 1 when every new X is finite,
 * 0 when one is Inf or NaN (the last step's check, fast/ns.c). */
int muonref_nsk_axpy(float *X, const float *BX, size_t len, float a, int bf16);

/* muonref_nsk_sym_finish, and Sb (m x m) <- the bf16 bit patterns of the
 * finished S (S must be bf16-valued afterwards: bf16 != 0, or already
 * rounded). */
void muonref_nsk_sym_finish_copy(float *S, uint16_t *Sb, size_t m, int bf16);

/* muonref_nsk_axpy in bf16, and Xb[0..len) <- the bf16 bit patterns of the
 * new X; returns as muonref_nsk_axpy. */
int muonref_nsk_axpy_copy(float *X, uint16_t *Xb, const float *BX, size_t len, float a);

/* dst[0..len) <- the bf16 bit patterns of the bf16-valued src[0..len)
 * (the upper 16 bits; exact because src is already rounded). */
void muonref_nsk_to_bf16(uint16_t *dst, const float *src, size_t len);

#pragma GCC visibility pop

#endif
