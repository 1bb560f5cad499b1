/* muonref: the fused element-wise passes of the fast Newton-Schulz
 * iteration (see ns_kernels.h).  Each pass is written once as an
 * always-inline body with the format as a constant, so that the compiler
 * emits a branch-free vector loop per format; 8-lane vectors (simd.h) carry
 * the bulk and the same scalar operations finish the tail, giving the bits
 * of the scalar loop.  Transposes and the mirror go tile by tile (TILE x
 * TILE floats, both tiles in L1) instead of striding over whole rows. */
#include <math.h>
#include "ns_kernels.h"
#include "passes.h"

enum { TILE = PASS_TILE };


/* dst[0..len) <- the upper 16 bits of src[0..len). */
MUONREF_INLINE void to_bf16_run(uint16_t *dst, const float *src, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    uint32_t v;
    memcpy(&v, src + i, sizeof v);
    dst[i] = (uint16_t)(v >> 16);
  }
}

/* out (n x m) <- X^T for X (m x n), tile by tile. */
static void transpose(float *out, const float *X, size_t m, size_t n)
{
  for (size_t i0 = 0; i0 < m; i0 += TILE)
    for (size_t j0 = 0; j0 < n; j0 += TILE) {
      size_t r = m - i0 < TILE ? m - i0 : TILE, c = n - j0 < TILE ? n - j0 : TILE;
      pass_tile_transpose_far(out + j0 * m + i0, m, X + i0 * n + j0, n, r, c);
    }
}

/* The source of muonref_nsk_load: a row-major (rows, cols) matrix. */
typedef struct load_src {
  const float *in;
  size_t cols;
} load_src;

MUONREF_INLINE void load_produce(void *ctx, size_t r, size_t c0, size_t len, float *dst)
{
  const load_src *s = ctx;
  memcpy(dst, s->in + r * s->cols + c0, len * sizeof *dst);
}

MUONREF_INLINE void load_prefetch(const void *ctx, size_t r, size_t c0, size_t len)
{
  const load_src *s = ctx;
  pass_prefetch_run(s->in + r * s->cols + c0, len);
}

MUONREF_CLONES double muonref_nsk_load(float *X, const float *in, size_t m, size_t n, int tr, int bf16)
{
  load_src s = {in, tr ? m : n};
  return bf16 ? pass_load_body(X, m, n, tr, 1, load_produce, load_prefetch, &s)
              : pass_load_body(X, m, n, tr, 0, load_produce, load_prefetch, &s);
}

MUONREF_CLONES void muonref_nsk_store(float *out, const float *X, size_t m, size_t n, int tr)
{
  if (tr)
    transpose(out, X, m, n);
  else
    memcpy(out, X, m * n * sizeof *X);
}

/* With Xb != NULL, also Xb <- the bf16 bit patterns of the new x. */
MUONREF_INLINE void scale_body(float *x, uint16_t *Xb, size_t len, float d, int bf16)
{
  size_t i = 0;
  v8f dv = {d, d, d, d, d, d, d, d};
  for (; i + 8 <= len; i += 8) {
    v8f v;
    simd_load(&v, x + i);
    v /= dv;
    pass_rnd_v(&v, bf16);
    simd_store(x + i, &v);
    if (Xb)
      to_bf16_run(Xb + i, x + i, 8);
  }
  for (; i < len; i++) {
    x[i] = pass_rnd(x[i] / d, bf16);
    if (Xb)
      to_bf16_run(Xb + i, x + i, 1);
  }
}

MUONREF_CLONES void muonref_nsk_scale(float *x, size_t len, float d, int bf16)
{
  if (d == 0.0f)
    memset(x, 0, len * sizeof *x);
  else if (bf16)
    scale_body(x, NULL, len, d, 1);
  else
    scale_body(x, NULL, len, d, 0);
}

MUONREF_CLONES void muonref_nsk_scale_copy(float *x, uint16_t *Xb, size_t len, float d)
{
  if (d == 0.0f) {
    memset(x, 0, len * sizeof *x);
    memset(Xb, 0, len * sizeof *Xb);
  } else {
    scale_body(x, Xb, len, d, 1);
  }
}

/* Rounds the upper part (j >= i) of the tile at (i0, j0) of S (m x m). */
MUONREF_INLINE void round_tile_upper(float *S, size_t m, size_t i0, size_t j0, size_t r, size_t c, int bf16)
{
  for (size_t i = i0; i < i0 + r; i++) {
    size_t j = i > j0 ? i : j0;
    if (j < j0 + c)
      pass_round_run(S + i * m + j, j0 + c - j, bf16);
  }
}

/* Sb rows of the tile at (i0, j0) <- the bf16 bit patterns of S's. */
MUONREF_INLINE void copy_tile(uint16_t *Sb, const float *S, size_t m, size_t i0, size_t j0, size_t r, size_t c)
{
  for (size_t i = i0; i < i0 + r; i++)
    to_bf16_run(Sb + i * m + j0, S + i * m + j0, c);
}

/* With Sb != NULL, also Sb <- the bf16 bit patterns of the finished S. */
MUONREF_INLINE void sym_finish_body(float *S, uint16_t *Sb, size_t m, int bf16)
{
  for (size_t i0 = 0; i0 < m; i0 += TILE)
    for (size_t j0 = i0; j0 < m; j0 += TILE) {
      size_t r = m - i0 < TILE ? m - i0 : TILE, c = m - j0 < TILE ? m - j0 : TILE;
      round_tile_upper(S, m, i0, j0, r, c, bf16);
      if (j0 > i0) {
        pass_tile_transpose_far(S + j0 * m + i0, m, S + i0 * m + j0, m, r, c);
        if (Sb)
          copy_tile(Sb, S, m, j0, i0, c, r);
      } else { /* the diagonal tile: only below its diagonal */
        for (size_t j = 1; j < r; j++)
          for (size_t i = 0; i < j; i++)
            S[(i0 + j) * m + i0 + i] = S[(i0 + i) * m + i0 + j];
      }
      if (Sb)
        copy_tile(Sb, S, m, i0, j0, r, c);
    }
}

MUONREF_CLONES void muonref_nsk_sym_finish(float *S, size_t m, int bf16)
{
  if (bf16)
    sym_finish_body(S, NULL, m, 1);
  else
    sym_finish_body(S, NULL, m, 0);
}

MUONREF_CLONES void muonref_nsk_sym_finish_copy(float *S, uint16_t *Sb, size_t m, int bf16)
{
  if (bf16)
    sym_finish_body(S, Sb, m, 1);
  else
    sym_finish_body(S, Sb, m, 0);
}

MUONREF_INLINE void poly_body(float *B, const float *A, const float *AA, size_t m, float b, float c, int bf16)
{
  v8f bv = {b, b, b, b, b, b, b, b}, cv = {c, c, c, c, c, c, c, c};
  for (size_t i = 0; i < m; i++) {
    size_t j = i * m + i, end = (i + 1) * m;
    for (; j + 8 <= end; j += 8) {
      v8f a, aa;
      simd_load(&a, A + j);
      simd_load(&aa, AA + j);
      pass_rnd_v(&aa, bf16);
      aa *= cv;
      pass_rnd_v(&aa, bf16);
      a *= bv;
      pass_rnd_v(&a, bf16);
      a += aa;
      pass_rnd_v(&a, bf16);
      simd_store(B + j, &a);
    }
    for (; j < end; j++)
      B[j] = pass_rnd(pass_rnd(b * A[j], bf16) + pass_rnd(c * pass_rnd(AA[j], bf16), bf16), bf16);
  }
}

MUONREF_CLONES void muonref_nsk_poly_upper(float *B, const float *A, const float *AA, size_t m, float b, float c,
                                           int bf16)
{
  if (bf16)
    poly_body(B, A, AA, m, b, c, 1);
  else
    poly_body(B, A, AA, m, b, c, 0);
}

/* *bad |= -1 in the lanes where *x is Inf or NaN. */
MUONREF_INLINE void nonfinite_acc(v8i *bad, const v8f *x)
{
  v8u v;
  memcpy(&v, x, sizeof v);
  *bad |= (v8i)((v & 0x7F800000u) == 0x7F800000u);
}

/* With Xb != NULL, also Xb <- the bf16 bit patterns of the new X.
 * Returns 1 when every new X is finite, else 0. */
MUONREF_INLINE int axpy_body(float *X, uint16_t *Xb, const float *BX, size_t len, float a, int bf16)
{
  v8f av = {a, a, a, a, a, a, a, a};
  v8i bad = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  int tail_bad = 0;
  for (; i + 8 <= len; i += 8) {
    v8f x, y;
    simd_load(&x, X + i);
    simd_load(&y, BX + i);
    pass_rnd_v(&y, bf16);
    x *= av;
    pass_rnd_v(&x, bf16);
    x += y;
    pass_rnd_v(&x, bf16);
    nonfinite_acc(&bad, &x);
    simd_store(X + i, &x);
    if (Xb)
      to_bf16_run(Xb + i, X + i, 8);
  }
  for (; i < len; i++) {
    X[i] = pass_rnd(pass_rnd(a * X[i], bf16) + pass_rnd(BX[i], bf16), bf16);
    tail_bad |= !isfinite(X[i]);
    if (Xb)
      to_bf16_run(Xb + i, X + i, 1);
  }
  for (int k = 0; k < 8; k++)
    tail_bad |= bad[k] != 0;
  return !tail_bad;
}

MUONREF_CLONES int muonref_nsk_axpy(float *X, const float *BX, size_t len, float a, int bf16)
{
  return bf16 ? axpy_body(X, NULL, BX, len, a, 1) : axpy_body(X, NULL, BX, len, a, 0);
}

MUONREF_CLONES int muonref_nsk_axpy_copy(float *X, uint16_t *Xb, const float *BX, size_t len, float a)
{
  return axpy_body(X, Xb, BX, len, a, 1);
}

MUONREF_CLONES void muonref_nsk_to_bf16(uint16_t *dst, const float *src, size_t len) { to_bf16_run(dst, src, len); }
