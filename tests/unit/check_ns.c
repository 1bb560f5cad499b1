/* muonref tests: the fast Newton-Schulz iteration (bf16 and fp32). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "muonref.h"
#include "testutil.h"
#include "fast/ns_dnnl.h"
#include "fast/ns_internal.h"
#include "fast/ns_kernels.h"

static muonref_options fmt(muonref_ns_format f)
{
  muonref_options o = tu_nemo();
  o.ns_format = f;
  return o;
}

static float *randn(size_t n, uint64_t seed)
{
  tu_rng r = {tu_seed(11) + seed};
  float *x = malloc(n * sizeof *x);
  tu_fill_normal(&r, x, n, 1.0);
  return x;
}

static void transpose(float *dst, const float *src, size_t rows, size_t cols)
{
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < cols; j++)
      dst[j * rows + i] = src[i * cols + j];
}

static const size_t SHAPES[][2] = {{16, 40}, {48, 32}, {64, 16}, {1, 7}};

/* NS(G^T) == NS(G)^T bitwise, in both formats. */
START_TEST(transpose_equivariance_bitwise)
{
  size_t r = SHAPES[_i][0], c = SHAPES[_i][1];
  float *g = randn(r * c, _i), *gt = malloc(r * c * 4), *o = malloc(r * c * 4), *ot = malloc(r * c * 4),
        *ott = malloc(r * c * 4);
  transpose(gt, g, r, c);
  for (int f = 0; f < 2; f++) {
    muonref_options op = fmt(f ? MUONREF_NS_FP32 : MUONREF_NS_BF16);
    ck_assert_int_eq(muonref_fast_ns(o, g, r, c, &op, NULL, NULL), MUONREF_OK);
    ck_assert_int_eq(muonref_fast_ns(ot, gt, c, r, &op, NULL, NULL), MUONREF_OK);
    transpose(ott, ot, c, r);
    ck_assert_msg(memcmp(o, ott, r * c * 4) == 0, "format %d shape %zux%zu", f, r, c);
  }
  free(g), free(gt), free(o), free(ot), free(ott);
}
END_TEST

START_TEST(zero_in_zero_out)
{
  float g[6 * 10] = {0}, o[6 * 10];
  for (int f = 0; f < 2; f++)
    for (int mode = 0; mode < 2; mode++)
      for (int eps0 = 0; eps0 < 2; eps0++) {
        muonref_options op = fmt(f ? MUONREF_NS_FP32 : MUONREF_NS_BF16);
        op.eps_mode = mode ? MUONREF_EPS_CLAMP : MUONREF_EPS_ADD;
        op.ns_eps = eps0 ? 0.0 : 1e-7;
        memset(o, 0xFF, sizeof o);
        ck_assert_int_eq(muonref_fast_ns(o, g, 6, 10, &op, NULL, NULL), MUONREF_OK);
        for (int i = 0; i < 60; i++)
          ck_assert_msg(o[i] == 0.0f && !signbit(o[i]), "f %d mode %d eps0 %d", f, mode, eps0);
      }
}
END_TEST

START_TEST(input_is_not_written)
{
  float *g = randn(48 * 32, 3), *keep = malloc(48 * 32 * 4), *o = malloc(48 * 32 * 4);
  memcpy(keep, g, 48 * 32 * 4);
  muonref_options op = tu_nemo();
  ck_assert_int_eq(muonref_fast_ns(o, g, 48, 32, &op, NULL, NULL), MUONREF_OK);
  ck_assert(memcmp(g, keep, 48 * 32 * 4) == 0);
  free(g), free(keep), free(o);
}
END_TEST

/* fp32 lies within 1e-5 (relative max-norm) of the same iteration in binary64. */
START_TEST(fp32_close_to_binary64)
{
  size_t r = SHAPES[_i][0], c = SHAPES[_i][1];
  float *g = randn(r * c, 100 + _i), *o = malloc(r * c * 4);
  double *d = malloc(r * c * 8);
  muonref_options op = fmt(MUONREF_NS_FP32);
  ck_assert_int_eq(muonref_fast_ns(o, g, r, c, &op, NULL, NULL), MUONREF_OK);
  tu_ns_double(d, g, r, c, &op);
  double e = tu_rel_err(o, d, r * c);
  ck_assert_msg(e < 1e-5, "shape %zux%zu: relative error %g", r, c, e);
  free(g), free(o), free(d);
}
END_TEST

/* Output singular values = phi(normalized input singular values): fp32 to
 * 1e-4; bf16 inside the band [min phi, max phi] over the input's
 * normalized singular-value interval, widened by 0.1 for bf16 noise. */
START_TEST(singular_values_follow_the_scalar_map)
{
  size_t r = 16, c = 40, m = 16;
  float *g = randn(r * c, 7), *o = malloc(r * c * 4);
  double *gd = malloc(r * c * 8), *od = malloc(r * c * 8), sg[16], so[16], want[16];
  double nrm = 0;
  for (size_t i = 0; i < r * c; i++)
    gd[i] = g[i], nrm += gd[i] * gd[i];
  nrm = sqrt(nrm);
  ck_assert_int_eq(tu_singular_values(sg, gd, r, c), 0);
  for (int f = 0; f < 2; f++) {
    muonref_options op = fmt(f ? MUONREF_NS_FP32 : MUONREF_NS_BF16);
    ck_assert_int_eq(muonref_fast_ns(o, g, r, c, &op, NULL, NULL), MUONREF_OK);
    for (size_t i = 0; i < r * c; i++)
      od[i] = o[i];
    ck_assert_int_eq(tu_singular_values(so, od, r, c), 0);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < m; i++)
      want[i] = tu_phi(&op, sg[i] / (nrm + op.ns_eps));
    for (double s = sg[m - 1] / nrm; s <= sg[0] / nrm; s += 1e-4) {
      lo = fmin(lo, tu_phi(&op, s));
      hi = fmax(hi, tu_phi(&op, s));
    }
    if (f) { /* fp32: the map itself, value by value (sorted) */
      for (size_t i = 0; i < m; i++)
        for (size_t j = i + 1; j < m; j++)
          if (want[j] > want[i]) { double t = want[i]; want[i] = want[j]; want[j] = t; }
      for (size_t i = 0; i < m; i++)
        ck_assert_msg(fabs(so[i] - want[i]) < 1e-4, "sv %zu: %g vs %g", i, so[i], want[i]);
    } else {
      for (size_t i = 0; i < m; i++)
        ck_assert_msg(so[i] > lo - 0.1 && so[i] < hi + 0.1, "sv %zu = %g outside [%g, %g]", i, so[i], lo, hi);
      ck_assert(lo > 0.5 && hi < 1.5); /* the seed's band for Keller's triple */
    }
  }
  free(g), free(o), free(gd), free(od);
}
END_TEST

START_TEST(bf16_output_is_bf16_valued)
{
  float *g = randn(48 * 32, 9), *o = malloc(48 * 32 * 4);
  muonref_options op = tu_nemo();
  ck_assert_int_eq(muonref_fast_ns(o, g, 48, 32, &op, NULL, NULL), MUONREF_OK);
  for (int i = 0; i < 48 * 32; i++) {
    uint32_t u;
    memcpy(&u, &o[i], 4);
    ck_assert_uint_eq(u & 0xFFFF, 0);
  }
  free(g), free(o);
}
END_TEST

/* Coefficient lists and their order reach the iteration (fp32 vs binary64). */
START_TEST(coefficient_lists_and_order)
{
  float *g = randn(12 * 20, 13), *o = malloc(12 * 20 * 4);
  double *d = malloc(12 * 20 * 8);
  muonref_options op = fmt(MUONREF_NS_FP32);
  op.n_coeffs = 2;
  op.coeffs[0] = (muonref_coeff){3.4445, -4.7750, 2.0315};
  op.coeffs[1] = (muonref_coeff){1.875, -1.25, 0.375}; /* the convergent quintic */
  for (int ord = 0; ord < 2; ord++) {
    op.coeff_order = ord ? MUONREF_ORDER_REPEAT_LAST : MUONREF_ORDER_CYCLE;
    op.ns_steps = 5;
    ck_assert_int_eq(muonref_fast_ns(o, g, 12, 20, &op, NULL, NULL), MUONREF_OK);
    tu_ns_double(d, g, 12, 20, &op);
    ck_assert(tu_rel_err(o, d, 12 * 20) < 1e-5);
  }
  /* the two orders give different results */
  float *o2 = malloc(12 * 20 * 4);
  op.coeff_order = MUONREF_ORDER_CYCLE;
  ck_assert_int_eq(muonref_fast_ns(o2, g, 12, 20, &op, NULL, NULL), MUONREF_OK);
  ck_assert(tu_rel_err(o2, d, 12 * 20) > 1e-3);
  free(g), free(o), free(o2), free(d);
}
END_TEST

/* A tiny input separates eps added from eps clamped (fp32 vs binary64). */
START_TEST(eps_add_and_clamp)
{
  float *g = randn(8 * 8, 17), *oa = malloc(64 * 4), *oc = malloc(64 * 4);
  double *d = malloc(64 * 8);
  for (int i = 0; i < 64; i++)
    g[i] *= 1e-8f;
  muonref_options op = fmt(MUONREF_NS_FP32);
  ck_assert_int_eq(muonref_fast_ns(oa, g, 8, 8, &op, NULL, NULL), MUONREF_OK);
  tu_ns_double(d, g, 8, 8, &op);
  ck_assert(tu_rel_err(oa, d, 64) < 1e-5);
  op.eps_mode = MUONREF_EPS_CLAMP;
  ck_assert_int_eq(muonref_fast_ns(oc, g, 8, 8, &op, NULL, NULL), MUONREF_OK);
  tu_ns_double(d, g, 8, 8, &op);
  ck_assert(tu_rel_err(oc, d, 64) < 1e-5);
  ck_assert(tu_rel_err(oa, d, 64) > 1e-2);
  free(g), free(oa), free(oc), free(d);
}
END_TEST

START_TEST(exact_format_refused_and_workspace)
{
  muonref_error e;
  float g[4] = {1, 0, 0, 1}, o[4];
  muonref_options op = fmt(MUONREF_NS_EXACT);
  ck_assert_int_eq(muonref_fast_ns(o, g, 2, 2, &op, NULL, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "ns_format 'exact' is not available on the fast path");
  ck_assert_uint_eq(muonref_ns_workspace_floats(64, 16), 2 * 16 * 64 + 3 * 16 * 16 + 16 * 64 / 2);
  ck_assert_uint_eq(muonref_ns_workspace_floats(3, 5), 2 * 15 + 3 * 9 + 8);
  /* a caller-provided workspace gives the same bits as an internal one */
  float *g2 = randn(64 * 16, 21), *o1 = malloc(64 * 16 * 4), *o2 = malloc(64 * 16 * 4);
  float *w = malloc(muonref_ns_workspace_floats(64, 16) * 4);
  muonref_options nb = tu_nemo();
  ck_assert_int_eq(muonref_fast_ns(o1, g2, 64, 16, &nb, NULL, NULL), MUONREF_OK);
  ck_assert_int_eq(muonref_fast_ns(o2, g2, 64, 16, &nb, w, NULL), MUONREF_OK);
  ck_assert(memcmp(o1, o2, 64 * 16 * 4) == 0);
  free(g2), free(o1), free(o2), free(w);
}
END_TEST

/* The step count matters: 4 and 6 steps lie far from 5 (fp32). */
START_TEST(step_count_matters)
{
  float *g = randn(16 * 40, 23), *o = malloc(16 * 40 * 4);
  double *d = malloc(16 * 40 * 8);
  muonref_options op = fmt(MUONREF_NS_FP32);
  tu_ns_double(d, g, 16, 40, &op);
  op.ns_steps = 4;
  ck_assert_int_eq(muonref_fast_ns(o, g, 16, 40, &op, NULL, NULL), MUONREF_OK);
  ck_assert(tu_rel_err(o, d, 16 * 40) > 1e-2);
  op.ns_steps = 6;
  ck_assert_int_eq(muonref_fast_ns(o, g, 16, 40, &op, NULL, NULL), MUONREF_OK);
  ck_assert(tu_rel_err(o, d, 16 * 40) > 1e-2);
  free(g), free(o), free(d);
}
END_TEST

/* Bits of x rounded to bf16 by the library's scalar rounding. */
static float r16(float x) { return muonref_bf16_round(x); }

static int same_bits(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

/* The fused, vectorized passes (fast/ns_kernels.c) give the bits of the
 * element-by-element definition, in both formats, for every length modulo
 * the vector width, with NaN, Inf, ties and subnormals among the values. */
START_TEST(fused_passes_match_the_definition)
{
  size_t m = 1 + (size_t)_i, n = m + 3 + (size_t)_i % 5;
  float *A = randn(m * m, 30 + _i), *AA = randn(m * m, 60 + _i), *X = randn(m * n, 90 + _i),
        *BX = randn(m * n, 120 + _i);
  float special[] = {NAN, -INFINITY, 0x1.018p0f, -0x1.008p-130f, 3.4e38f, -0.0f};
  for (size_t k = 0; k < 6; k++)
    X[(k * 7) % (m * n)] = BX[(k * 5) % (m * n)] = AA[(k * 3) % (m * m)] = special[k];
  for (size_t i = 0; i < m; i++) /* make A symmetric-on-upper like ssyrk's output */
    for (size_t j = 0; j < i; j++)
      A[i * m + j] = -1.0f;
  for (int bf = 0; bf < 2; bf++) {
    float *S = malloc(m * m * 4), *W = malloc(m * m * 4), *Y = malloc(m * n * 4), *Z = malloc(m * n * 4),
          *T = malloc(m * n * 4);
    float a = 3.4445f, b = -4.7750f, c = 2.0315f;
    /* sym_finish: R on the upper triangle, mirrored */
    memcpy(S, A, m * m * 4);
    muonref_nsk_sym_finish(S, m, bf);
    for (size_t i = 0; i < m; i++)
      for (size_t j = i; j < m; j++)
        W[i * m + j] = W[j * m + i] = bf ? r16(A[i * m + j]) : A[i * m + j];
    ck_assert_msg(same_bits(S, W, m * m), "sym_finish m %zu bf16 %d", m, bf);
    /* sym_finish_copy: the same, and the bf16 bit patterns of the result */
    uint16_t *Sb = malloc(m * m * 2), *Yb = malloc(m * n * 2);
    memcpy(S, A, m * m * 4);
    muonref_nsk_sym_finish_copy(S, Sb, m, 1);
    for (size_t k = 0; k < m * m; k++) {
      float want = r16(W[k]); /* W: the mirrored upper triangle of A, rounded when bf */
      uint32_t bits;
      memcpy(&bits, &S[k], 4);
      ck_assert_msg(same_bits(&S[k], &want, 1) || isnan(want), "sym_finish_copy m %zu k %zu", m, k);
      ck_assert_msg(Sb[k] == (uint16_t)(bits >> 16), "sym_finish_copy bits m %zu k %zu", m, k);
    }
    /* poly_upper: B = R(R(b A) + R(c R(AA))) on the upper triangle */
    memcpy(S, AA, m * m * 4);
    muonref_nsk_poly_upper(S, W, S, m, b, c, bf);
    for (size_t i = 0; i < m; i++)
      for (size_t j = i; j < m; j++) {
        size_t k = i * m + j;
        float want = bf ? r16(r16(b * W[k]) + r16(c * r16(AA[k]))) : b * W[k] + c * AA[k];
        ck_assert_msg(same_bits(&S[k], &want, 1) || (isnan(S[k]) && isnan(want)), "poly m %zu (%zu,%zu)", m, i, j);
      }
    /* axpy: X = R(R(a X) + R(BX)) */
    memcpy(Y, X, m * n * 4);
    muonref_nsk_axpy(Y, BX, m * n, a, bf);
    for (size_t k = 0; k < m * n; k++) {
      float want = bf ? r16(r16(a * X[k]) + r16(BX[k])) : a * X[k] + BX[k];
      ck_assert_msg(same_bits(&Y[k], &want, 1) || (isnan(Y[k]) && isnan(want)), "axpy m %zu k %zu", m, k);
    }
    /* axpy_copy (bf16): the same as axpy, and the bf16 bit patterns of X */
    memcpy(Z, X, m * n * 4);
    muonref_nsk_axpy_copy(Z, Yb, BX, m * n, a);
    for (size_t k = 0; k < m * n; k++) {
      float want = r16(r16(a * X[k]) + r16(BX[k]));
      uint32_t bits;
      memcpy(&bits, &Z[k], 4);
      ck_assert_msg(same_bits(&Z[k], &want, 1) || (isnan(Z[k]) && isnan(want)), "axpy_copy m %zu k %zu", m, k);
      ck_assert_msg(Yb[k] == (uint16_t)(bits >> 16), "axpy_copy bits m %zu k %zu", m, k);
    }
    free(Sb), free(Yb);
    /* load with and without transposition, scale, store */
    muonref_nsk_load(Y, X, m, n, 0, bf);
    muonref_nsk_load(Z, X, n, m, 1, bf); /* X read as (m, n): Z = R(X^T), (n x m) */
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) {
        float want = bf ? r16(X[i * n + j]) : X[i * n + j];
        ck_assert(same_bits(&Y[i * n + j], &want, 1) || isnan(want));
        ck_assert(same_bits(&Z[j * m + i], &want, 1) || isnan(want));
      }
    muonref_nsk_store(T, Z, n, m, 1);
    ck_assert(same_bits(T, Y, m * n));
    memcpy(Z, Y, m * n * 4);
    muonref_nsk_scale(Z, m * n, 3.0f, bf);
    for (size_t k = 0; k < m * n; k++) {
      float want = bf ? r16(Y[k] / 3.0f) : Y[k] / 3.0f;
      ck_assert(same_bits(&Z[k], &want, 1) || (isnan(Z[k]) && isnan(want)));
    }
    muonref_nsk_scale(Z, m * n, 0.0f, bf);
    for (size_t k = 0; k < m * n; k++)
      ck_assert(Z[k] == 0.0f && !signbit(Z[k]));
    free(S), free(W), free(Y), free(Z), free(T);
  }
  free(A), free(AA), free(X), free(BX);
}
END_TEST

/* The same passes past the 64 Ki elements from which they are split among
 * the worker threads of fast/pool.c (where OpenBLAS runs more than one
 * thread): every element as the definition gives it, whichever thread ran
 * its chunk.  Mismatches are counted and asserted once (a Check assertion
 * per element costs a write to Check's pipe). */
START_TEST(threaded_passes_match_the_definition)
{
  size_t m = 400, n = 403, bad = 0;
  float *A = randn(m * m, 7), *AA = randn(m * m, 8), *X = randn(m * n, 9), *BX = randn(m * n, 10);
  float *S = malloc(m * m * 4), *Y = malloc(m * n * 4), *Z = malloc(m * n * 4), *T = malloc(m * n * 4);
  uint16_t *Sb = malloc(m * m * 2), *Yb = malloc(m * n * 2);
  float a = 3.4445f, b = -4.7750f, c = 2.0315f, d = 3.0f;
  X[12345] = NAN;
  /* sym_finish_copy in bf16, then poly_upper on its result, against the definition */
  memcpy(S, A, m * m * 4);
  muonref_nsk_sym_finish_copy(S, Sb, m, 1);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < m; j++) {
      float want = r16(A[i <= j ? i * m + j : j * m + i]);
      uint32_t bits;
      memcpy(&bits, &want, 4);
      bad += !same_bits(&S[i * m + j], &want, 1) || Sb[i * m + j] != (uint16_t)(bits >> 16);
    }
  memcpy(Z, AA, m * m * 4);
  muonref_nsk_poly_upper(Z, S, Z, m, b, c, 1);
  for (size_t i = 0; i < m; i++)
    for (size_t j = i; j < m; j++) {
      float want = r16(r16(b * S[i * m + j]) + r16(c * r16(AA[i * m + j])));
      bad += !same_bits(&Z[i * m + j], &want, 1);
    }
  /* axpy_copy: the values, the bits and the finite flag (one NaN) */
  memcpy(Y, X, m * n * 4);
  int finite = muonref_nsk_axpy_copy(Y, Yb, BX, m * n, a);
  bad += finite != 0;
  for (size_t k = 0; k < m * n; k++) {
    float want = r16(r16(a * X[k]) + r16(BX[k]));
    uint32_t bits;
    memcpy(&bits, &Y[k], 4);
    bad += (!same_bits(&Y[k], &want, 1) && !(isnan(Y[k]) && isnan(want))) || Yb[k] != (uint16_t)(bits >> 16);
  }
  /* scale, and the transposing store */
  memcpy(Z, BX, m * n * 4);
  muonref_nsk_scale(Z, m * n, d, 1);
  for (size_t k = 0; k < m * n; k++) {
    float want = r16(BX[k] / d);
    bad += !same_bits(&Z[k], &want, 1);
  }
  muonref_nsk_store(T, Z, m, n, 1);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++)
      bad += !same_bits(&T[j * m + i], &Z[i * n + j], 1);
  /* the load, wide and tall (BX read as (n, m): 403 rows of X, six bands
   * and a part), in bf16 and binary32: the elements, and the sum of their
   * squares added in X's index order, bit for bit */
  for (int tr = 0; tr < 2; tr++)
    for (int bf = 0; bf < 2; bf++) {
      size_t xm = tr ? n : m, xn = tr ? m : n;
      double ss = muonref_nsk_load(Y, BX, xm, xn, tr, bf), ss_d = 0.0;
      for (size_t i = 0; i < xm; i++)
        for (size_t j = 0; j < xn; j++) {
          float want = tr ? BX[j * xm + i] : BX[i * xn + j];
          want = bf ? r16(want) : want;
          bad += !same_bits(&Y[i * xn + j], &want, 1);
          ss_d += (double)want * (double)want;
        }
      ck_assert_msg(memcmp(&ss, &ss_d, sizeof ss) == 0, "load tr %d bf16 %d: sum %a, in index order %a", tr, bf, ss,
                    ss_d);
    }
  ck_assert_msg(bad == 0, "%zu elements differ from the definition", bad);
  free(A), free(AA), free(X), free(BX), free(S), free(Y), free(Z), free(T), free(Sb), free(Yb);
}
END_TEST

/* ---- the native bf16 path (oneDNN), where this machine has it ---- */

/* 0 with a note when oneDNN's bf16 path cannot run here (then the BLAS
 * path is the only one, and the tests above cover it). */
static int native_here(void)
{
  const char *why = NULL;
  if (muonref_nsd_usable(&why))
    return 1;
  fprintf(stderr, "native bf16 tests not run: %s\n", why);
  return 0;
}

/* NS in bf16 through the GEMM chosen by flags (MUONREF_NSF_GEMM_*). */
static void ns_with(float *out, const float *in, size_t rows, size_t cols, unsigned flags)
{
  muonref_options o = fmt(MUONREF_NS_BF16);
  muonref_error e;
  int st = muonref_fast_ns_flags(out, in, rows, cols, &o, NULL, flags, &e);
  ck_assert_msg(st == MUONREF_OK, "%s", e.message);
}

/* Shapes with m > 256, so that the upper block triangle has three block
 * rows (of 128, fast/ns.c), the last one partial, and one below a block. */
static const size_t NATIVE_SHAPES[][2] = {{300, 520}, {520, 300}, {257, 257}, {40, 96}};

/* On an input whose every product sum has one non-zero term (rows of a
 * scaled partial permutation: X X^T, A A and B X are diagonal times a
 * permutation), the order of accumulation cannot matter, so oneDNN and
 * OpenBLAS must agree bit for bit, and NS(G^T) == NS(G)^T. */
START_TEST(native_equals_blas_where_order_is_free)
{
  size_t rows = NATIVE_SHAPES[_i][0], cols = NATIVE_SHAPES[_i][1], n = rows * cols;
  if (!native_here())
    return;
  static const float V[] = {1.0f, -0.75f, 0.5f, -0.375f, 0.25f, 3.0f, -0.125f, 2.0f};
  float *g = calloc(n, sizeof *g), *gt = malloc(n * sizeof *g), *a = malloc(n * 4), *b = malloc(n * 4),
        *c = malloc(n * 4), *ct = calloc(n, 4);
  size_t m = rows < cols ? rows : cols;
  for (size_t i = 0; i < m; i++) { /* entry (i, (7 i + 3) mod m) of the m x m corner: a permutation, 7 coprime to m */
    size_t j = (7 * i + 3) % m;
    g[rows <= cols ? i * cols + j : j * cols + i] = V[(i * 5) % 8];
  }
  ck_assert(m % 7 != 0);
  transpose(gt, g, rows, cols);
  ns_with(a, g, rows, cols, MUONREF_NSF_GEMM_BLAS);
  ns_with(b, g, rows, cols, MUONREF_NSF_GEMM_DNNL);
  ns_with(c, gt, cols, rows, MUONREF_NSF_GEMM_DNNL);
  transpose(ct, c, cols, rows);
  ck_assert_msg(same_bits(a, b, n), "oneDNN and OpenBLAS differ on (%zu, %zu)", rows, cols);
  ck_assert_msg(same_bits(b, ct, n), "NS(G^T) != NS(G)^T with oneDNN on (%zu, %zu)", rows, cols);
  int nonzero = 0;
  for (size_t k = 0; k < n; k++)
    nonzero += a[k] != 0.0f;
  ck_assert_int_eq(nonzero, (int)m); /* the test is not vacuous: one entry per row survives */
  free(g), free(gt), free(a), free(b), free(c), free(ct);
}
END_TEST

/* On random inputs oneDNN's order of binary32 accumulation differs from
 * OpenBLAS's, so single bf16 roundings differ and the iterates drift apart
 * (measured here: spec/muon.md keeps the order free); the results stay
 * bf16-valued, exactly transposition-equivariant (non-square), and within the bf16
 * noise of each other, far inside what a wrong block offset would give. */
START_TEST(native_close_to_blas_on_random_inputs)
{
  size_t rows = NATIVE_SHAPES[_i][0], cols = NATIVE_SHAPES[_i][1], n = rows * cols;
  if (!native_here())
    return;
  float *g = randn(n, 40 + _i), *gt = malloc(n * 4), *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4),
        *ct = calloc(n, 4);
  transpose(gt, g, rows, cols);
  ns_with(a, g, rows, cols, MUONREF_NSF_GEMM_BLAS);
  ns_with(b, g, rows, cols, MUONREF_NSF_GEMM_DNNL);
  ns_with(c, gt, cols, rows, MUONREF_NSF_GEMM_DNNL);
  transpose(ct, c, cols, rows);
  ck_assert(rows == cols || same_bits(b, ct, n)); /* a square input is not transposed: no equivariance */
  double num = 0, den = 0;
  for (size_t k = 0; k < n; k++) {
    ck_assert(same_bits(&b[k], &(float){muonref_bf16_round(b[k])}, 1));
    num += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
    den += (double)a[k] * a[k];
  }
  double rel = sqrt(num / den);
  fprintf(stderr, "native vs BLAS bf16 NS on random (%zu, %zu): relative Frobenius difference %.4f\n", rows, cols,
          rel);
  ck_assert_msg(rel < 0.05, "relative difference %g", rel);
  free(g), free(gt), free(a), free(b), free(c), free(ct);
}
END_TEST

/* bf16 dot-product instructions (vdpbf16ps) treat subnormal inputs as zero
 * and flush subnormal sums (spec/muon.md section 7): an input entry whose
 * normalized bf16 value is subnormal (2^-133..2^-126) reaches a product
 * through OpenBLAS but not through oneDNN.  The two paths may then differ,
 * by no more than a few subnormals' worth in any entry. */
START_TEST(native_flush_of_subnormals_is_tiny)
{
  if (!native_here())
    return;
  enum { R = 4, C = 8 };
  float g[R * C] = {0}, a[R * C], b[R * C];
  for (int i = 0; i < R; i++)
    g[i * C + i] = 1.0f;                /* an orthogonal start ... */
  g[1 * C + 0] = ldexpf(1.0f, -129);    /* ... with subnormal-bf16 entries */
  g[2 * C + 5] = ldexpf(-3.0f, -130);
  ns_with(a, g, R, C, MUONREF_NSF_GEMM_BLAS);
  ns_with(b, g, R, C, MUONREF_NSF_GEMM_DNNL);
  for (int k = 0; k < R * C; k++) {
    ck_assert_msg(fabsf(a[k] - b[k]) <= ldexpf(1.0f, -120), "entry %d: %a vs %a", k, a[k], b[k]);
    if (fabsf(a[k]) >= ldexpf(1.0f, -100))
      ck_assert_msg(same_bits(&a[k], &b[k], 1), "entry %d: %a vs %a", k, a[k], b[k]);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("ns");
  TCase *t = tcase_create("ns");
  tcase_set_timeout(t, 120);
  tcase_add_loop_test(t, transpose_equivariance_bitwise, 0, 4);
  tcase_add_test(t, zero_in_zero_out);
  tcase_add_test(t, input_is_not_written);
  tcase_add_loop_test(t, fp32_close_to_binary64, 0, 4);
  tcase_add_test(t, singular_values_follow_the_scalar_map);
  tcase_add_test(t, bf16_output_is_bf16_valued);
  tcase_add_test(t, coefficient_lists_and_order);
  tcase_add_test(t, eps_add_and_clamp);
  tcase_add_test(t, exact_format_refused_and_workspace);
  tcase_add_test(t, step_count_matters);
  tcase_add_loop_test(t, fused_passes_match_the_definition, 0, 70);
  tcase_add_test(t, threaded_passes_match_the_definition);
  tcase_add_loop_test(t, native_equals_blas_where_order_is_free, 0, 4);
  tcase_add_loop_test(t, native_close_to_blas_on_random_inputs, 0, 4);
  tcase_add_test(t, native_flush_of_subnormals_is_tiny);
  suite_add_tcase(s, t);
  return tu_run_suite(s);
}
