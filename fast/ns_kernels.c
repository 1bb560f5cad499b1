/* muonref: the fused element-wise passes of the fast Newton-Schulz
 * iteration (see ns_kernels.h).  Each pass is written once as an
 * always-inline body with the format as a constant, so that the compiler
 * emits a branch-free vector loop per format; 8-lane vectors (simd.h) carry
 * the bulk and the same scalar operations finish the tail, giving the bits
 * of the scalar loop.  Transposes and the mirror go tile by tile (TILE x
 * TILE floats, both tiles in L1) instead of striding over whole rows.
 * Every pass but the load (whose norm is one sum in index order) is split
 * into independent chunks (element ranges, rows, rows of tiles) that the
 * worker threads of fast/pool.c share with the caller. */
#include <math.h>
#include "ns_kernels.h"
#include "passes.h"
#include "pool.h"

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

/* out (n x m) <- X^T for the rows i0 .. i0 + TILE - 1 of X (m x n), tile by tile. */
MUONREF_INLINE void transpose_rows(float *out, const float *X, size_t m, size_t n, size_t i0)
{
  size_t r = m - i0 < TILE ? m - i0 : TILE;
  for (size_t j0 = 0; j0 < n; j0 += TILE) {
    size_t c = n - j0 < TILE ? n - j0 : TILE;
    pass_tile_transpose_far(out + j0 * m + i0, m, X + i0 * n + j0, n, r, c);
  }
}

typedef struct store_job {
  float *out;
  const float *X;
  size_t m, n;
} store_job;

static MUONREF_CLONES void store_chunk(void *ctx, size_t c)
{
  const store_job *j = ctx;
  transpose_rows(j->out, j->X, j->m, j->n, c * TILE);
}

/* The chunks of a pass over the rows of tiles of an m x m or m x n matrix
 * of `elements` elements: one per row of tiles, or 1 when too small. */
static size_t tile_rows(size_t m, size_t elements)
{
  return muonref_pool_chunks(elements, 1) > 1 ? (m + TILE - 1) / TILE : 1;
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

typedef struct load_job {
  float *X;
  size_t m, n, chunks;
  int tr, bf16;
  pass_sum sum;
  load_src src;
} load_job;

/* Chunk c of a threaded load: its rows of X (pass_load_range). */
static MUONREF_CLONES void load_chunk(void *ctx, size_t c)
{
  load_job *j = ctx;
  size_t x0, x1;
  pass_load_range(j->m, j->tr, j->chunks, c, &x0, &x1);
  if (j->bf16)
    pass_load_rows(j->X, j->m, j->n, j->tr, 1, load_produce, load_prefetch, &j->src, x0, x1);
  else
    pass_load_rows(j->X, j->m, j->n, j->tr, 0, load_produce, load_prefetch, &j->src, x0, x1);
  pass_sum_ready(&j->sum, j->X, j->m, j->n, j->tr, j->chunks, c);
}

/* One fused pass on one thread where the matrix is small, else the load
 * on the pool's threads and then the sum in X's index order (the same
 * bits: muonref_stk_muon_input). */
MUONREF_CLONES double muonref_nsk_load(float *X, const float *in, size_t m, size_t n, int tr, int bf16)
{
  load_job j = {X, m, n, pass_load_chunks(m, n), tr, bf16, {0.0, 0, 0, {0}}, {in, tr ? m : n}};
  if (j.chunks == 1)
    return bf16 ? pass_load_body(X, m, n, tr, 1, load_produce, load_prefetch, &j.src)
                : pass_load_body(X, m, n, tr, 0, load_produce, load_prefetch, &j.src);
  muonref_pool_for(j.chunks, load_chunk, &j);
  return pass_sum_rest(&j.sum, X, m, n, tr, j.chunks);
}

void muonref_nsk_store(float *out, const float *X, size_t m, size_t n, int tr)
{
  store_job j = {out, X, m, n};
  if (!tr)
    memcpy(out, X, m * n * sizeof *X);
  else if (tile_rows(m, m * n) == 1)
    for (size_t i0 = 0; i0 < m; i0 += TILE)
      store_chunk(&j, i0 / TILE);
  else
    muonref_pool_for(tile_rows(m, m * n), store_chunk, &j);
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

typedef struct scale_job {
  float *x;
  uint16_t *Xb;
  size_t len, chunks;
  float d;
  int bf16;
} scale_job;

static MUONREF_CLONES void scale_chunk(void *ctx, size_t c)
{
  const scale_job *j = ctx;
  size_t lo, hi;
  muonref_pool_range(j->len, j->chunks, c, &lo, &hi);
  uint16_t *Xb = j->Xb ? j->Xb + lo : NULL;
  if (j->bf16)
    scale_body(j->x + lo, Xb, hi - lo, j->d, 1);
  else
    scale_body(j->x + lo, Xb, hi - lo, j->d, 0);
}

void muonref_nsk_scale(float *x, size_t len, float d, int bf16)
{
  scale_job j = {x, NULL, len, muonref_pool_chunks(len, 1), d, bf16};
  if (d == 0.0f)
    memset(x, 0, len * sizeof *x);
  else
    muonref_pool_for(j.chunks, scale_chunk, &j);
}

void muonref_nsk_scale_copy(float *x, uint16_t *Xb, size_t len, float d)
{
  scale_job j = {x, Xb, len, muonref_pool_chunks(len, 1), d, 1};
  if (d == 0.0f) {
    memset(x, 0, len * sizeof *x);
    memset(Xb, 0, len * sizeof *Xb);
  } else {
    muonref_pool_for(j.chunks, scale_chunk, &j);
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

/* The row of tiles at i0 of S: the upper tiles rounded, mirrored to the
 * lower ones (which no other row of tiles writes); with Sb != NULL, also
 * Sb <- the bf16 bit patterns of every tile written. */
MUONREF_INLINE void sym_finish_row(float *S, uint16_t *Sb, size_t m, size_t i0, int bf16)
{
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

typedef struct sym_job {
  float *S;
  uint16_t *Sb;
  size_t m;
  int bf16;
} sym_job;

static MUONREF_CLONES void sym_chunk(void *ctx, size_t c)
{
  const sym_job *j = ctx;
  if (j->bf16)
    sym_finish_row(j->S, j->Sb, j->m, c * TILE, 1);
  else
    sym_finish_row(j->S, j->Sb, j->m, c * TILE, 0);
}

/* Every row of tiles, on the pool when S is large (the first rows, the
 * longest, are claimed first). */
static void sym_finish(float *S, uint16_t *Sb, size_t m, int bf16)
{
  sym_job j = {S, Sb, m, bf16};
  size_t rows = (m + TILE - 1) / TILE;
  if (tile_rows(m, m * m / 2) == 1)
    for (size_t c = 0; c < rows; c++)
      sym_chunk(&j, c);
  else
    muonref_pool_for(rows, sym_chunk, &j);
}

void muonref_nsk_sym_finish(float *S, size_t m, int bf16) { sym_finish(S, NULL, m, bf16); }

void muonref_nsk_sym_finish_copy(float *S, uint16_t *Sb, size_t m, int bf16) { sym_finish(S, Sb, m, bf16); }

/* Rows i0 .. i1 - 1 of the upper triangle. */
MUONREF_INLINE void poly_body(float *B, const float *A, const float *AA, size_t m, size_t i0, size_t i1, float b,
                              float c, int bf16)
{
  v8f bv = {b, b, b, b, b, b, b, b}, cv = {c, c, c, c, c, c, c, c};
  for (size_t i = i0; i < i1; i++) {
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

enum { POLY_ROWS = 16 }; /* rows of the triangle per chunk */

typedef struct poly_job {
  float *B;
  const float *A, *AA;
  size_t m;
  float b, c;
  int bf16;
} poly_job;

static MUONREF_CLONES void poly_chunk(void *ctx, size_t k)
{
  const poly_job *j = ctx;
  size_t i0 = k * POLY_ROWS, i1 = i0 + POLY_ROWS < j->m ? i0 + POLY_ROWS : j->m;
  if (j->bf16)
    poly_body(j->B, j->A, j->AA, j->m, i0, i1, j->b, j->c, 1);
  else
    poly_body(j->B, j->A, j->AA, j->m, i0, i1, j->b, j->c, 0);
}

void muonref_nsk_poly_upper(float *B, const float *A, const float *AA, size_t m, float b, float c, int bf16)
{
  poly_job j = {B, A, AA, m, b, c, bf16};
  size_t chunks = (m + POLY_ROWS - 1) / POLY_ROWS;
  if (muonref_pool_chunks(m * m / 2, 1) == 1)
    for (size_t k = 0; k < chunks; k++)
      poly_chunk(&j, k);
  else
    muonref_pool_for(chunks, poly_chunk, &j);
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

typedef struct axpy_job {
  float *X;
  uint16_t *Xb;
  const float *BX;
  size_t len, chunks;
  float a;
  int bf16;
  int bad; /* a chunk found an element not finite (__atomic_fetch_or) */
} axpy_job;

static MUONREF_CLONES void axpy_chunk(void *ctx, size_t c)
{
  axpy_job *j = ctx;
  size_t lo, hi;
  muonref_pool_range(j->len, j->chunks, c, &lo, &hi);
  uint16_t *Xb = j->Xb ? j->Xb + lo : NULL;
  int ok = j->bf16 ? axpy_body(j->X + lo, Xb, j->BX + lo, hi - lo, j->a, 1)
                   : axpy_body(j->X + lo, Xb, j->BX + lo, hi - lo, j->a, 0);
  if (!ok)
    __atomic_fetch_or(&j->bad, 1, __ATOMIC_RELAXED);
}

int muonref_nsk_axpy(float *X, const float *BX, size_t len, float a, int bf16)
{
  axpy_job j = {X, NULL, BX, len, muonref_pool_chunks(len, 1), a, bf16, 0};
  muonref_pool_for(j.chunks, axpy_chunk, &j);
  return !j.bad;
}

int muonref_nsk_axpy_copy(float *X, uint16_t *Xb, const float *BX, size_t len, float a)
{
  axpy_job j = {X, Xb, BX, len, muonref_pool_chunks(len, 1), a, 1, 0};
  muonref_pool_for(j.chunks, axpy_chunk, &j);
  return !j.bad;
}

/* Not a target_clones function: with the file's static clones GCC 12 gave
 * this one's ifunc symbol global binding and default visibility, past
 * -fvisibility=hidden and fast/hide-resolvers.map (tests/scripts/api-symbols.sh;
 * the other clones' stayed local, why was not found).  A shift needs no
 * AVX2. */
void muonref_nsk_to_bf16(uint16_t *dst, const float *src, size_t len) { to_bf16_run(dst, src, len); }
