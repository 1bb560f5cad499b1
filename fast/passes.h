/* muonref: building blocks shared by the fused element-wise passes of the
 * fast path (fast/ns_kernels.c: Newton-Schulz; fast/step_kernels.c: the
 * optimizer step).  Not installed.
 *
 * All inline: each pass that uses them is compiled with its own AVX2 clone
 * (MUONREF_CLONES, fast/simd.h).  Matrices are row-major float arrays; R
 * is the rounding of the format (bf16 != 0: to bf16, round to nearest
 * even; bf16 == 0: none, binary32's own rounding). */
#ifndef MUONREF_PASSES_H
#define MUONREF_PASSES_H

#include <stddef.h>
#include <stdint.h>
#include "pool.h"
#include "simd.h"

MUONREF_INLINE float pass_rnd(float x, int bf16) { return bf16 ? simd_bf16(x) : x; }

MUONREF_INLINE void pass_rnd_v(v8f *x, int bf16)
{
  if (bf16)
    simd_bf16_v(x);
}

/* x[0..len) <- R(x[0..len)). */
MUONREF_INLINE void pass_round_run(float *x, size_t len, int bf16)
{
  if (!bf16)
    return;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    v8f v;
    simd_load(&v, x + i);
    simd_bf16_v(&v);
    simd_store(x + i, &v);
  }
  for (; i < len; i++)
    x[i] = simd_bf16(x[i]);
}

/* dst[j*ldd + i] <- src[i*lds + j] for the tile i < r, j < c. */
MUONREF_INLINE void pass_tile_transpose(float *dst, size_t ldd, const float *src, size_t lds, size_t r, size_t c)
{
  for (size_t j = 0; j < c; j++)
    for (size_t i = 0; i < r; i++)
      dst[j * ldd + i] = src[i * lds + j];
}

enum { PASS_TILE = 32 }; /* side of the tiles of pass_tile_transpose_far */

/* pass_tile_transpose for a src whose rows lie far apart (r, c <=
 * PASS_TILE): the tile's rows are first copied one by one into a compact
 * buffer, so that rows at a stride of a multiple of 4 KiB (1024 floats,
 * common in the field's shapes) do not all fall into the same L1 set and
 * evict each other column after column (1024x1024: the mirror took 2.4 ms
 * a matrix instead of 0.2 ms at 768). */
MUONREF_INLINE void pass_tile_transpose_far(float *dst, size_t ldd, const float *src, size_t lds, size_t r, size_t c)
{
  float buf[PASS_TILE * PASS_TILE];
  for (size_t i = 0; i < r; i++)
    memcpy(buf + i * PASS_TILE, src + i * lds, c * sizeof *buf);
  pass_tile_transpose(dst, ldd, buf, PASS_TILE, r, c);
}

/* ss + the sum of (double)x^2 over x[0..len), added in index order: the
 * binary64 Frobenius norm of fast/ns.c is summed in one order, the index
 * order of the iterate X, whatever pass computes it, so that its bits do
 * not depend on how the pass is organised. */
MUONREF_INLINE double pass_sumsq_run(double ss, const float *x, size_t len)
{
  for (size_t i = 0; i < len; i++)
    ss += (double)x[i] * (double)x[i];
  return ss;
}

/* Writes the source elements (r, c0 .. c0 + len - 1) of a row-major
 * (rows, cols) source into dst[0..len), unrounded. */
typedef void pass_produce_fn(void *ctx, size_t r, size_t c0, size_t len, float *dst);
/* Asks the cache for what producing (r, c0 .. c0 + len - 1) will read. */
typedef void pass_prefetch_fn(const void *ctx, size_t r, size_t c0, size_t len);

/* Prefetches the floats p[0..len) (one request per 64-byte line). */
MUONREF_INLINE void pass_prefetch_run(const float *p, size_t len)
{
  for (size_t i = 0; i < len; i += 16)
    __builtin_prefetch(p + i);
}

/* The sizes of the load (measured on the 2-core AMD EPYC of the project,
 * 3072x768 and 4096x1024 sources: bands of 16 columns took about 11 ns an
 * element, 64 about 6, prefetching the source 16 rows ahead included;
 * without the prefetch the strided rows of a tall source stall every
 * load). */
enum {
  PASS_CHUNK = 1024, /* floats of a source row produced at once (in L1 while rounded and summed) */
  PASS_BAND = 64,    /* rows of X (columns of a tall source: four 64-byte lines a row) per band */
  PASS_TROWS = 64,   /* source rows per transposed tile (16 KiB) */
  PASS_PF = 16       /* source rows the prefetch runs ahead */
};

/* pass_load_body's load without the sum, on rows [x0, x1) of X only
 * (tr != 0: x0 a multiple of PASS_BAND): the part of the load that a chunk
 * of a threaded pass does (pass_load_range); every element's value is the
 * one pass_load_body gives it, whoever loads it. */
MUONREF_INLINE void pass_load_rows(float *X, size_t m, size_t n, int tr, int bf16, pass_produce_fn *produce,
                                   pass_prefetch_fn *prefetch, void *ctx, size_t x0, size_t x1)
{
  if (!tr) {
    for (size_t r = x0; r < x1; r++)
      for (size_t c0 = 0; c0 < n; c0 += PASS_CHUNK) {
        size_t len = n - c0 < PASS_CHUNK ? n - c0 : PASS_CHUNK;
        float *d = X + r * n + c0;
        produce(ctx, r, c0, len, d);
        pass_round_run(d, len, bf16);
      }
    return;
  }
  float tile[PASS_TROWS * PASS_BAND];
  for (size_t c0 = x0; c0 < x1 && c0 < m; c0 += PASS_BAND) {
    size_t w = m - c0 < PASS_BAND ? m - c0 : PASS_BAND;
    for (size_t r0 = 0; r0 < n; r0 += PASS_TROWS) {
      size_t h = n - r0 < PASS_TROWS ? n - r0 : PASS_TROWS;
      for (size_t r = 0; r < h; r++) {
        if (r0 + r + PASS_PF < n)
          prefetch(ctx, r0 + r + PASS_PF, c0, w);
        produce(ctx, r0 + r, c0, w, tile + r * w);
      }
      pass_round_run(tile, h * w, bf16);
      pass_tile_transpose(X + c0 * n + r0, n, tile, w, h, w);
    }
  }
}

/* The rows [*x0, *x1) of an (m, n) X that chunk c of `chunks` loads in
 * pass_load_rows: about m / chunks rows, whole bands of PASS_BAND rows
 * when tr != 0; an empty range for a chunk past the last band. */
MUONREF_INLINE void pass_load_range(size_t m, int tr, size_t chunks, size_t c, size_t *x0, size_t *x1)
{
  size_t unit = tr ? PASS_BAND : 1, units = (m + unit - 1) / unit;
  *x0 = units * c / chunks * unit;
  *x1 = c + 1 == chunks ? m : units * (c + 1) / chunks * unit;
  *x0 = *x0 > m ? m : *x0;
  *x1 = *x1 > m ? m : *x1;
}

enum { PASS_MAX_CHUNKS = 64 }; /* muonref_pool_chunks gives at most 4 per thread, 8 threads */

/* The sum of squares of a threaded load, taken in X's index order while
 * the chunks load: the thread that finishes a chunk and finds no other
 * summing adds every chunk loaded so far in order (`summing` makes it
 * the only one); the caller adds what is left after muonref_pool_for
 * (pass_sum_rest).  The same additions in the same order as
 * pass_load_body's, so the same bits. */
typedef struct pass_sum {
  double ss;      /* the sum of the chunks [0, summed) */
  size_t summed;  /* read and written by the holder of `summing` only */
  int summing;
  unsigned char done[PASS_MAX_CHUNKS];
} pass_sum;

/* Adds chunk s->summed's rows of X (pass_load_range) to the sum, and counts it. */
MUONREF_INLINE void pass_sum_next(pass_sum *s, const float *X, size_t m, size_t n, int tr, size_t chunks)
{
  size_t x0, x1;
  pass_load_range(m, tr, chunks, s->summed, &x0, &x1);
  s->ss = pass_sumsq_run(s->ss, X + x0 * n, (x1 - x0) * n);
  s->summed++;
}

/* The chunks of a threaded load of an (m, n) X: the pool's (fast/pool.c),
 * at most PASS_MAX_CHUNKS (pass_sum's done[]). */
MUONREF_INLINE size_t pass_load_chunks(size_t m, size_t n)
{
  size_t c = muonref_pool_chunks(m * n, 1);
  return c < PASS_MAX_CHUNKS ? c : PASS_MAX_CHUNKS;
}

/* Chunk c (rows [x0, x1) of X, by pass_load_range) is loaded: adds it,
 * and every chunk after it that is loaded, when no other thread sums. */
MUONREF_INLINE void pass_sum_ready(pass_sum *s, const float *X, size_t m, size_t n, int tr, size_t chunks, size_t c)
{
  __atomic_store_n(&s->done[c], 1, __ATOMIC_SEQ_CST);
  if (__atomic_exchange_n(&s->summing, 1, __ATOMIC_SEQ_CST))
    return;
  while (s->summed < chunks && __atomic_load_n(&s->done[s->summed], __ATOMIC_SEQ_CST))
    pass_sum_next(s, X, m, n, tr, chunks);
  __atomic_store_n(&s->summing, 0, __ATOMIC_SEQ_CST);
}

/* After muonref_pool_for: the sum of the whole of X (the chunks no thread
 * added while loading added now, in order). */
MUONREF_INLINE double pass_sum_rest(pass_sum *s, const float *X, size_t m, size_t n, int tr, size_t chunks)
{
  while (s->summed < chunks)
    pass_sum_next(s, X, m, n, tr, chunks);
  return s->ss;
}

/* The Newton-Schulz load, X (m x n) <- R(source) (tr == 0: the source is
 * (m, n)) or R(source^T) (tr != 0: the source is (n, m)), the source's
 * elements made by produce(ctx, ...); returns the binary64 sum of the
 * squares of X in X's index order (pass_sumsq_run).  One pass over the
 * source and X: a wide source row by row; a tall one by bands of PASS_BAND
 * rows of X, each transposed tile by tile and summed while it is in cache
 * (L2 or L3: the sum runs in X's order, so a band must be whole before it
 * is summed).  A threaded pass (muonref_stk_muon_input, muonref_nsk_load)
 * loads with pass_load_rows over pass_load_range's chunks instead, then
 * sums X in the same order. */
MUONREF_INLINE double pass_load_body(float *X, size_t m, size_t n, int tr, int bf16, pass_produce_fn *produce,
                                     pass_prefetch_fn *prefetch, void *ctx)
{
  double ss = 0.0;
  for (size_t x0 = 0, step = tr ? PASS_BAND : 1; x0 < m; x0 += step) {
    size_t x1 = m - x0 < step ? m : x0 + step;
    pass_load_rows(X, m, n, tr, bf16, produce, prefetch, ctx, x0, x1);
    ss = pass_sumsq_run(ss, X + x0 * n, (x1 - x0) * n); /* rows x0 .. x1 - 1 of X, contiguous */
  }
  return ss;
}

#endif
