/* muonref: the fused element-wise passes of the fast optimizer step (see
 * step_kernels.h).  Each formula is written twice, as a 4-lane binary64
 * vector body (v4d, fast/simd.h) and as the scalar element function that
 * finishes the tail and serves the error messages; both are the same
 * binary64 operations in the same order, with no FMA (-ffp-contract=off,
 * no FMA in the AVX2 clone), so they give the same bits, and the bits of
 * the plain loops of fast/optimizer.c before this file (spec/muon.md
 * section 10: binary64 from the float32 inputs, one rounding to float32).
 * Every pass is split into independent chunks for the worker threads of
 * fast/pool.c; the input pass's norm, one sum in index order, is then
 * summed on the caller's thread. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "muonref/bf16.h"
#include "core/plan.h"
#include "passes.h"
#include "pool.h"
#include "ns_kernels.h"
#include "step_kernels.h"

/* ---- 4-lane helpers ---- */

MUONREF_INLINE void load4d(v4d *d, const float *p)
{
  v4f f;
  simd_load4(&f, p);
  *d = __builtin_convertvector(f, v4d);
}

/* p[0..4) <- fl32(*d) (round to nearest even, as the scalar cast). */
MUONREF_INLINE void store4d(float *p, const v4d *d)
{
  v4f f = __builtin_convertvector(*d, v4f);
  simd_store4(p, &f);
}

MUONREF_INLINE void abs4d(v4d *a, const v4d *d) { *a = (v4d)((v4l)*d & 0x7FFFFFFFFFFFFFFFLL); }

/* *bad |= -1 in the lanes where *d is not within [-FLT_MAX, FLT_MAX] (NaN included). */
MUONREF_INLINE void out_of_range(v4l *bad, const v4d *d)
{
  v4d a;
  abs4d(&a, d);
  *bad |= ~(v4l)(a <= FLT_MAX);
}

/* *bad |= -1 in the lanes where fl32(*d) is Inf or NaN. */
MUONREF_INLINE void nonfinite32(v4l *bad, const v4d *d)
{
  v4f f = __builtin_convertvector(*d, v4f);
  v4u u;
  memcpy(&u, &f, sizeof u);
  v4i nf = (v4i)((u & 0x7F800000u) == 0x7F800000u);
  *bad |= __builtin_convertvector(nf, v4l);
}

MUONREF_INLINE int any4(const v4l *bad) { return ((*bad)[0] | (*bad)[1] | (*bad)[2] | (*bad)[3]) != 0; }

/* Lane-wise square root (correctly rounded, as sqrt()). */
MUONREF_INLINE void sqrt4d(v4d *r, const v4d *x)
{
#ifdef __SSE2__
  typedef double v2d __attribute__((vector_size(16)));
  v2d lo = {(*x)[0], (*x)[1]}, hi = {(*x)[2], (*x)[3]};
  lo = __builtin_ia32_sqrtpd(lo);
  hi = __builtin_ia32_sqrtpd(hi);
  *r = (v4d){lo[0], lo[1], hi[0], hi[1]};
#else
  *r = (v4d){sqrt((*x)[0]), sqrt((*x)[1]), sqrt((*x)[2]), sqrt((*x)[3])};
#endif
}

/* fl32 then bf16 of *d lane by lane, the bits of muonref_bf16_round_double
 * (fast/bf16.c): round to odd into binary32 (the nearest-even result moved
 * one step toward zero when it is above |x|, then the last bit set when
 * inexact), then to nearest even in bf16. */
MUONREF_INLINE void bf16_of_double4(v4f *out, const v4d *d)
{
  v4f f = __builtin_convertvector(*d, v4f);
  v4d back = __builtin_convertvector(f, v4d), ab, ad;
  abs4d(&ab, &back);
  abs4d(&ad, d);
  v4i inexact = __builtin_convertvector((v4l)(back != *d), v4i);
  v4i above = __builtin_convertvector((v4l)(ab > ad), v4i);
  v4u u;
  memcpy(&u, &f, sizeof u);
  u = (u - ((v4u)above & 1u)) | ((v4u)inexact & 1u);
  memcpy(out, &u, sizeof u);
  simd_bf16_v4(out);
}

/* ---- Muon: the input pass ---- */

/* One element: U, and fl32(M') into *mn, with *bad set when G, M' or V
 * is out of range. */
MUONREF_INLINE float muon_u1(const muonref_stk_muon *k, float g, float mm, float *mn, int *bad)
{
  double gd = g, m = k->mom_keep * (double)mm + k->mom_grad * gd;
  double v = k->in_grad * gd + k->in_mom * m;
  *bad |= !(fabs(gd) <= FLT_MAX) | !(fabs(m) <= FLT_MAX) | !(fabs(v) <= FLT_MAX);
  *mn = (float)m;
  return (float)(k->nesterov ? v : m);
}

typedef struct muon_src {
  const float *G, *M;
  float *Mn; /* the new momentum, (rows, cols) as G */
  size_t cols;
  const muonref_stk_muon *k;
  int bad;
} muon_src;

MUONREF_INLINE void muon_produce(void *ctx, size_t r, size_t c0, size_t len, float *dst)
{
  muon_src *s = ctx;
  const muonref_stk_muon *k = s->k;
  const float *G = s->G + r * s->cols + c0, *M = s->M + r * s->cols + c0;
  float *Mn = s->Mn + r * s->cols + c0;
  v4l bad = {0, 0, 0, 0};
  size_t j = 0;
  for (; j + 4 <= len; j += 4) {
    v4d g, mm;
    load4d(&g, G + j);
    load4d(&mm, M + j);
    v4d m = k->mom_keep * mm + k->mom_grad * g;
    v4d v = k->in_grad * g + k->in_mom * m;
    out_of_range(&bad, &g);
    out_of_range(&bad, &m);
    out_of_range(&bad, &v);
    store4d(dst + j, k->nesterov ? &v : &m);
    store4d(Mn + j, &m);
  }
  for (; j < len; j++)
    dst[j] = muon_u1(k, G[j], M[j], Mn + j, &s->bad);
  s->bad |= any4(&bad);
}

MUONREF_INLINE void muon_prefetch(const void *ctx, size_t r, size_t c0, size_t len)
{
  const muon_src *s = ctx;
  pass_prefetch_run(s->G + r * s->cols + c0, len);
  pass_prefetch_run(s->M + r * s->cols + c0, len);
}

typedef struct muon_load_job {
  float *X;
  size_t m, n, chunks;
  int tr, bf16;
  pass_sum sum;
  const muon_src *src;
  int bad; /* a chunk's source was out of range (__atomic_fetch_or) */
} muon_load_job;

/* Chunk c of a threaded input pass: its rows of X (pass_load_range), on a
 * copy of the source whose `bad` is the chunk's own. */
static MUONREF_CLONES void muon_load_chunk(void *ctx, size_t c)
{
  muon_load_job *j = ctx;
  muon_src s = *j->src;
  size_t x0, x1;
  s.bad = 0;
  pass_load_range(j->m, j->tr, j->chunks, c, &x0, &x1);
  if (j->bf16)
    pass_load_rows(j->X, j->m, j->n, j->tr, 1, muon_produce, muon_prefetch, &s, x0, x1);
  else
    pass_load_rows(j->X, j->m, j->n, j->tr, 0, muon_produce, muon_prefetch, &s, x0, x1);
  if (s.bad)
    __atomic_fetch_or(&j->bad, 1, __ATOMIC_RELAXED);
  pass_sum_ready(&j->sum, j->X, j->m, j->n, j->tr, j->chunks, c);
}

typedef struct muon_rows_job {
  float *U;
  size_t len, chunks;
  const muon_src *src;
  int bad; /* as muon_load_job's */
} muon_rows_job;

/* Chunk c of muon_rows: its element range of U and Mn, PASS_CHUNK at a time. */
static MUONREF_CLONES void muon_rows_chunk(void *ctx, size_t c)
{
  muon_rows_job *j = ctx;
  muon_src s = *j->src;
  size_t lo, hi;
  s.bad = 0;
  s.cols = 0; /* the elements as one row: G, M, Mn and U share the layout */
  muonref_pool_range(j->len, j->chunks, c, &lo, &hi);
  for (size_t i = lo; i < hi; i += PASS_CHUNK)
    muon_produce(&s, 0, i, hi - i < PASS_CHUNK ? hi - i : PASS_CHUNK, j->U + i);
  if (s.bad)
    __atomic_fetch_or(&j->bad, 1, __ATOMIC_RELAXED);
}

/* U (rows, cols) <- fl32(U) and Mn <- fl32(M') in one row-major pass on
 * the pool's threads; returns 1 when an element is out of range. */
static int muon_rows(float *U, const muon_src *s, size_t len)
{
  muon_rows_job j = {U, len, muonref_pool_chunks(len, 1), s, 0};
  muonref_pool_for(j.chunks, muon_rows_chunk, &j);
  return j.bad;
}

/* The input pass: one fused pass on one thread where the matrix is small
 * (the sum of squares while each band is in cache), else the load on the
 * pool's threads, then the sum over X in the same index order, the same
 * bits (the sum is a chain of binary64 additions that no thread can
 * share).  A tall matrix with a scratch U is two passes instead: U and Mn
 * row by row, then U's transposed load (muonref_nsk_load), the same values
 * (the load only rounds and moves them) and the same sum. */
MUONREF_CLONES double muonref_stk_muon_input(float *X, float *Mn, const float *G, const float *M, float *U,
                                             size_t rows, size_t cols, int tr, int bf16, const muonref_stk_muon *k,
                                             int *bad)
{
  muon_src s = {G, M, Mn, cols, k, 0};
  size_t m = tr ? cols : rows, n = tr ? rows : cols;
  muon_load_job j = {X, m, n, pass_load_chunks(m, n), tr, bf16, {0.0, 0, 0, {0}}, &s, 0};
  if (tr && U && j.chunks > 1) {
    *bad |= muon_rows(U, &s, rows * cols);
    return muonref_nsk_load(X, U, m, n, tr, bf16);
  }
  if (j.chunks == 1) {
    double ss = bf16 ? pass_load_body(X, m, n, tr, 1, muon_produce, muon_prefetch, &s)
                     : pass_load_body(X, m, n, tr, 0, muon_produce, muon_prefetch, &s);
    *bad |= s.bad;
    return ss;
  }
  muonref_pool_for(j.chunks, muon_load_chunk, &j);
  *bad |= j.bad;
  return pass_sum_rest(&j.sum, X, m, n, tr, j.chunks);
}

/* ---- Muon: the output pass ---- */

/* One element of O after the bf16 products. */
MUONREF_INLINE float muon_o1(const muonref_stk_muon *k, float o)
{
  for (int f = 0; f < k->n_factors; f++)
    o = muonref_bf16_round_double(k->factor[f] * (double)o);
  return o;
}

/* One new parameter value (spec/muon.md section 9; cautious decay 4.1). */
MUONREF_INLINE float muon_p1(const muonref_stk_muon *k, float p, float o)
{
  double decay = muonref_cautious_decays(k->cautious, muonref_sign(p), muonref_sign(o)) ? k->decay : 1.0;
  return (float)(decay * (double)p - k->alpha * (double)o);
}

/* dst[0..len) <- the products of src[0..len) (dst may be src), or (what
 * MUONREF_STK_PARAM) the new parameter values decay P - alpha R(products);
 * returns 1 when a new parameter value is not finite. */
MUONREF_INLINE int out_run(float *dst, const float *src, const float *P, size_t len, const muonref_stk_muon *k,
                           int what)
{
  v4l bad = {0, 0, 0, 0};
  size_t j = 0;
  for (; !k->cautious && j + 4 <= len; j += 4) { /* cautious: the scalar loop does every element */
    v4f o;
    simd_load4(&o, src + j);
    for (int f = 0; f < k->n_factors; f++) {
      v4d x = k->factor[f] * __builtin_convertvector(o, v4d);
      bf16_of_double4(&o, &x);
    }
    v4d p;
    load4d(&p, P + j);
    v4d nw = k->decay * p - k->alpha * __builtin_convertvector(o, v4d);
    nonfinite32(&bad, &nw);
    if (what == MUONREF_STK_PARAM)
      store4d(dst + j, &nw);
    else
      simd_store4(dst + j, &o);
  }
  int b = any4(&bad);
  for (; j < len; j++) {
    float o = muon_o1(k, src[j]), nw = muon_p1(k, P[j], o);
    b |= !isfinite(nw);
    dst[j] = what == MUONREF_STK_PARAM ? nw : o;
  }
  return b;
}

enum { OUT_TILE = PASS_TILE };

typedef struct out_job {
  float *O;
  const float *X, *P;
  size_t rows, cols, chunks;
  const muonref_stk_muon *k;
  int what; /* MUONREF_STK_UPDATE or MUONREF_STK_PARAM */
  int bad; /* a chunk found a parameter value not finite (__atomic_fetch_or) */
} out_job;

/* Chunk c of a wide matrix's output: an element range, PASS_CHUNK at a time. */
static MUONREF_CLONES void out_chunk(void *ctx, size_t c)
{
  out_job *j = ctx;
  size_t lo, hi;
  int bad = 0;
  muonref_pool_range(j->rows * j->cols, j->chunks, c, &lo, &hi);
  for (size_t i = lo; i < hi; i += PASS_CHUNK)
    bad |= out_run(j->O + i, j->X + i, j->P + i, hi - i < PASS_CHUNK ? hi - i : PASS_CHUNK, j->k, j->what);
  if (bad)
    __atomic_fetch_or(&j->bad, 1, __ATOMIC_RELAXED);
}

/* Chunk c of a tall matrix's output (X is (cols, rows)): the row of tiles
 * of O at i0 = c OUT_TILE, each tile transposed into O and finished there
 * while it is in L1. */
static MUONREF_CLONES void out_tr_chunk(void *ctx, size_t c)
{
  out_job *j = ctx;
  size_t rows = j->rows, cols = j->cols, i0 = c * OUT_TILE, r = rows - i0 < OUT_TILE ? rows - i0 : OUT_TILE;
  int bad = 0;
  for (size_t j0 = 0; j0 < cols; j0 += OUT_TILE) {
    size_t w = cols - j0 < OUT_TILE ? cols - j0 : OUT_TILE;
    for (size_t q = j0 + OUT_TILE; q < j0 + 2 * OUT_TILE && q < cols; q++) /* the next tile's rows of X */
      pass_prefetch_run(j->X + q * rows + i0, r);
    pass_tile_transpose_far(j->O + i0 * cols + j0, cols, j->X + j0 * rows + i0, rows, w, r);
    for (size_t i = i0; i < i0 + r; i++)
      bad |= out_run(j->O + i * cols + j0, j->O + i * cols + j0, j->P + i * cols + j0, w, j->k, j->what);
  }
  if (bad)
    __atomic_fetch_or(&j->bad, 1, __ATOMIC_RELAXED);
}

int muonref_stk_muon_output(float *Dst, const float *X, const float *P, size_t rows, size_t cols, int tr,
                            const muonref_stk_muon *k, int what)
{
  out_job j = {Dst, X, P, rows, cols, muonref_pool_chunks(rows * cols, 1), k, what, 0};
  if (!tr) {
    muonref_pool_for(j.chunks, out_chunk, &j);
  } else if (j.chunks > 1) { /* X^T stored as Newton-Schulz stores it, then finished row-major in place */
    muonref_nsk_store(Dst, X, cols, rows, 1);
    j.X = Dst;
    muonref_pool_for(j.chunks, out_chunk, &j);
  } else {
    for (size_t c = 0, tiles = (rows + OUT_TILE - 1) / OUT_TILE; c < tiles; c++)
      out_tr_chunk(&j, c);
  }
  return !j.bad;
}

typedef struct copy_job {
  float *dst;
  const float *src;
  size_t len, chunks;
} copy_job;

static void copy_chunk(void *ctx, size_t c)
{
  copy_job *j = ctx;
  size_t lo, hi;
  muonref_pool_range(j->len, j->chunks, c, &lo, &hi);
  memcpy(j->dst + lo, j->src + lo, (hi - lo) * sizeof *j->dst);
}

void muonref_stk_copy(float *dst, const float *src, size_t len)
{
  copy_job j = {dst, src, len, muonref_pool_chunks(len, 1)};
  if (j.chunks == 1)
    memcpy(dst, src, len * sizeof *dst);
  else
    muonref_pool_for(j.chunks, copy_chunk, &j);
}

size_t muonref_stk_first_nonfinite(const float *x, size_t len)
{
  for (size_t j = 0; j < len; j++)
    if (!isfinite(x[j]))
      return j;
  return len;
}

size_t muonref_stk_muon_param_first(const float *P, const float *O, size_t len, const muonref_stk_muon *k,
                                    float *value)
{
  for (size_t j = 0; j < len; j++) {
    float nw = muon_p1(k, P[j], O[j]);
    if (!isfinite(nw)) {
      *value = nw;
      return j;
    }
  }
  return len;
}

size_t muonref_stk_muon_range_first(const float *G, const float *M, size_t len, const muonref_stk_muon *k)
{
  for (size_t j = 0; j < len; j++) {
    double m = k->mom_keep * (double)M[j] + k->mom_grad * (double)G[j];
    double v = k->in_grad * (double)G[j] + k->in_mom * m;
    if (fabs(m) > FLT_MAX || fabs(v) > FLT_MAX)
      return j;
  }
  return len;
}

/* ---- AdamW ---- */

/* One element: the new m, v and parameter value. */
MUONREF_INLINE void adamw1(const muonref_stk_adamw *k, float p, float m, float v, float g, double *mj, double *vj,
                           float *nw)
{
  double gj = g;
  *mj = k->beta1 * (double)m + k->one_minus_beta1 * gj;
  *vj = k->beta2 * (double)v + k->one_minus_beta2 * gj * gj;
  double denom = sqrt(*vj + k->eps_root_bc2) / k->sqrt_bc2 + k->eps;
  double nj = k->nadamw ? k->num_mom * *mj + k->num_grad * gj : *mj; /* timm's NAdamW, optax's NAdam numerator */
  double q = denom == 0.0 ? 0.0 : nj / denom; /* spec: a zero denominator moves nothing */
  double decay = muonref_cautious_decays(k->cautious, muonref_sign(p), muonref_sign(q)) ? k->decay : 1.0;
  *nw = (float)(decay * (double)p - k->step_size * q);
}

/* The same on 4 lanes. */
MUONREF_INLINE void adamw4(const muonref_stk_adamw *k, const float *P, const float *m, const float *v,
                           const float *G, v4d *gj, v4d *mj, v4d *vj, v4d *nw)
{
  v4d p, mm, vv, root;
  load4d(gj, G);
  load4d(&p, P);
  load4d(&mm, m);
  load4d(&vv, v);
  *mj = k->beta1 * mm + k->one_minus_beta1 * *gj;
  *vj = k->beta2 * vv + k->one_minus_beta2 * *gj * *gj;
  v4d vr = *vj + k->eps_root_bc2;
  sqrt4d(&root, &vr);
  v4d denom = root / k->sqrt_bc2 + k->eps;
  v4d nj = k->nadamw ? k->num_mom * *mj + k->num_grad * *gj : *mj;
  v4d q = nj / denom;
  q = (v4d)((v4l)q & ~(v4l)(denom == 0.0)); /* +0.0 where the denominator is 0 */
  *nw = k->decay * p - k->step_size * q;
}

MUONREF_INLINE int adamw_check_run(const float *P, const float *m, const float *v, const float *G, size_t len,
                                   const muonref_stk_adamw *k)
{
  v4l bad = {0, 0, 0, 0};
  size_t j = 0;
  for (; !k->cautious && j + 4 <= len; j += 4) { /* cautious: the scalar loop does every element */
    v4d gj, mj, vj, nw;
    adamw4(k, P + j, m + j, v + j, G + j, &gj, &mj, &vj, &nw);
    out_of_range(&bad, &gj);
    out_of_range(&bad, &vj);
    nonfinite32(&bad, &nw);
  }
  int b = any4(&bad);
  for (; j < len; j++) {
    double mj, vj;
    float nw;
    adamw1(k, P[j], m[j], v[j], G[j], &mj, &vj, &nw);
    b |= !(fabs((double)G[j]) <= FLT_MAX) | !(vj <= FLT_MAX) | !isfinite(nw);
  }
  return b;
}

MUONREF_INLINE void adamw_apply_run(float *P, float *m, float *v, const float *G, size_t len,
                                    const muonref_stk_adamw *k)
{
  size_t j = 0;
  for (; !k->cautious && j + 4 <= len; j += 4) { /* cautious: the scalar loop does every element */
    v4d gj, mj, vj, nw;
    adamw4(k, P + j, m + j, v + j, G + j, &gj, &mj, &vj, &nw);
    store4d(P + j, &nw);
    store4d(m + j, &mj);
    store4d(v + j, &vj);
  }
  for (; j < len; j++) {
    double mj, vj;
    adamw1(k, P[j], m[j], v[j], G[j], &mj, &vj, &P[j]);
    m[j] = (float)mj;
    v[j] = (float)vj;
  }
}

typedef struct adamw_job {
  float *P, *m, *v;
  const float *G;
  size_t len, chunks;
  const muonref_stk_adamw *k;
  int write; /* 0: check (phase 1), 1: apply (phase 2) */
  int bad;   /* the check found something (__atomic_fetch_or) */
} adamw_job;

static MUONREF_CLONES void adamw_chunk(void *ctx, size_t c)
{
  adamw_job *j = ctx;
  size_t lo, hi;
  muonref_pool_range(j->len, j->chunks, c, &lo, &hi);
  if (j->write)
    adamw_apply_run(j->P + lo, j->m + lo, j->v + lo, j->G + lo, hi - lo, j->k);
  else if (adamw_check_run(j->P + lo, j->m + lo, j->v + lo, j->G + lo, hi - lo, j->k))
    __atomic_fetch_or(&j->bad, 1, __ATOMIC_RELAXED);
}

enum { ADAMW_COST = 4 }; /* a square root and a division an element: about four of Muon's element-wise work */

int muonref_stk_adamw_check(const float *P, const float *m, const float *v, const float *G, size_t len,
                            const muonref_stk_adamw *k)
{
  adamw_job j = {(float *)P, (float *)m, (float *)v, G, len, muonref_pool_chunks(len, ADAMW_COST), k, 0, 0};
  muonref_pool_for(j.chunks, adamw_chunk, &j);
  return j.bad;
}

void muonref_stk_adamw_apply(float *P, float *m, float *v, const float *G, size_t len, const muonref_stk_adamw *k)
{
  adamw_job j = {P, m, v, G, len, muonref_pool_chunks(len, ADAMW_COST), k, 1, 0};
  muonref_pool_for(j.chunks, adamw_chunk, &j);
}

size_t muonref_stk_adamw_range_first(const float *v, const float *G, size_t len, const muonref_stk_adamw *k)
{
  for (size_t j = 0; j < len; j++)
    if (k->beta2 * (double)v[j] + k->one_minus_beta2 * (double)G[j] * (double)G[j] > FLT_MAX)
      return j;
  return len;
}

size_t muonref_stk_adamw_param_first(const float *P, const float *m, const float *v, const float *G, size_t len,
                                     const muonref_stk_adamw *k, float *value)
{
  for (size_t j = 0; j < len; j++) {
    double mj, vj;
    float nw;
    adamw1(k, P[j], m[j], v[j], G[j], &mj, &vj, &nw);
    if (!isfinite(nw)) {
      *value = nw;
      return j;
    }
  }
  return len;
}
