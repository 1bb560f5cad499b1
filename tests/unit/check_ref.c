/* muonref tests: the high-precision reference (ref/): MPFR matrices and
 * their rounding, exact Newton-Schulz, the exact polar factor, and the
 * precision-doubling check.  Expected values come from independent
 * computations: C conversions, MPFR's own emin/emax + subnormalize
 * emulation, a scalar Horner map, matrices built with a known polar factor
 * in MPFR at twice the precision, LAPACK, and the binary64 NS of testutil. */
#include <check.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "muonref.h"
#include "ref/mpround.h"
#include "muonref/ref.h"
#include "muonref/ns_rounded.h"
#include "testutil.h"

/* ---------- helpers ---------- */

static float f_of(uint32_t u)
{
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t u_of(float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static void mat_init(muonref_mpmat *m, size_t r, size_t c, mpfr_prec_t p)
{
  ck_assert_int_eq(muonref_mpmat_init(m, r, c, p), MUONREF_OK);
}

/* The oracle for rounding: MPFR's exponent-range emulation (emin/emax,
 * mpfr_check_range, mpfr_subnormalize); x must lie within [emin, emax]. */
static double oracle_round(mpfr_srcptr x, mpfr_prec_t p, mpfr_exp_t emin, mpfr_exp_t emax)
{
  mpfr_exp_t omin = mpfr_get_emin(), omax = mpfr_get_emax();
  mpfr_t t;
  mpfr_init2(t, p);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  int inex = mpfr_set(t, x, MPFR_RNDN);
  inex = mpfr_check_range(t, inex, MPFR_RNDN);
  mpfr_subnormalize(t, inex, MPFR_RNDN);
  mpfr_set_emin(omin);
  mpfr_set_emax(omax);
  double d = mpfr_get_d(t, MPFR_RNDN);
  mpfr_clear(t);
  return d;
}

/* ||a - b||_F for two row-major MPFR matrices of equal shape, at 2p bits. */
static double mp_dist(const muonref_mpmat *a, const muonref_mpmat *b)
{
  mpfr_t s, d;
  mpfr_init2(s, 2 * a->prec), mpfr_init2(d, 2 * a->prec);
  mpfr_set_zero(s, 1);
  for (size_t i = 0; i < a->rows * a->cols; i++) {
    mpfr_sub(d, a->e[i], b->e[i], MPFR_RNDN);
    mpfr_fma(s, d, d, s, MPFR_RNDN);
  }
  mpfr_sqrt(s, s, MPFR_RNDN);
  double r = mpfr_get_d(s, MPFR_RNDN);
  mpfr_clear(s), mpfr_clear(d);
  return r;
}

/* c <- op(a) op(b) by plain loops at c's precision (ta / tb: transpose). */
static void naive_mul(muonref_mpmat *c, const muonref_mpmat *a, int ta, const muonref_mpmat *b, int tb)
{
  size_t r = ta ? a->cols : a->rows, k = ta ? a->rows : a->cols, n = tb ? b->rows : b->cols;
  ck_assert(c->rows == r && c->cols == n);
  mpfr_t s;
  mpfr_init2(s, 2 * c->prec);
  for (size_t i = 0; i < r; i++)
    for (size_t j = 0; j < n; j++) {
      mpfr_set_zero(s, 1);
      for (size_t l = 0; l < k; l++)
        mpfr_fma(s, ta ? a->e[l * a->cols + i] : a->e[i * a->cols + l],
                 tb ? b->e[j * b->cols + l] : b->e[l * b->cols + j], s, MPFR_RNDN);
      mpfr_set(c->e[i * n + j], s, MPFR_RNDN);
    }
  mpfr_clear(s);
}

/* An n x n orthogonal matrix at precision p: a product of 3n random Givens
 * rotations with angles computed by MPFR (exactly orthogonal up to 2^-p). */
static void random_orthogonal(muonref_mpmat *q, size_t n, mpfr_prec_t p, tu_rng *rng)
{
  mat_init(q, n, n, p);
  for (size_t i = 0; i < n; i++)
    mpfr_set_ui(q->e[i * n + i], 1, MPFR_RNDN);
  mpfr_t th, c, s, x, y;
  mpfr_inits2(p, th, c, s, x, y, (mpfr_ptr)0);
  for (size_t k = 0; n > 1 && k < 3 * n; k++) {
    size_t i = tu_next(rng) % n, j = tu_next(rng) % n;
    if (i == j)
      j = (i + 1) % n;
    mpfr_set_d(th, 6.283 * (double)(tu_next(rng) >> 11) * 0x1p-53, MPFR_RNDN);
    mpfr_sin_cos(s, c, th, MPFR_RNDN);
    for (size_t r = 0; r < n; r++) { /* rotate columns i, j */
      mpfr_fmms(x, c, q->e[r * n + i], s, q->e[r * n + j], MPFR_RNDN);
      mpfr_fmma(y, s, q->e[r * n + i], c, q->e[r * n + j], MPFR_RNDN);
      mpfr_set(q->e[r * n + i], x, MPFR_RNDN);
      mpfr_set(q->e[r * n + j], y, MPFR_RNDN);
    }
  }
  mpfr_clears(th, c, s, x, y, (mpfr_ptr)0);
}

/* g (r x c) = Q0 H0 at precision p with a known polar factor q0: for the
 * tall case Q0 = first c columns of an r x r orthogonal matrix and
 * H0 = V diag(s) V^T; a wide g is the transpose of the tall construction.
 * s holds min(r, c) positive values. */
static void known_polar(muonref_mpmat *g, muonref_mpmat *q0, size_t r, size_t c, const double *s, mpfr_prec_t p,
                        uint64_t seed)
{
  tu_rng rng = {seed};
  int tr = r < c;
  size_t m = tr ? c : r, n = tr ? r : c;
  muonref_mpmat W, V, H, Qt, G;
  random_orthogonal(&W, m, p, &rng);
  random_orthogonal(&V, n, p, &rng);
  mat_init(&Qt, m, n, p);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++)
      mpfr_set(Qt.e[i * n + j], W.e[i * m + j], MPFR_RNDN);
  muonref_mpmat VS;
  mat_init(&VS, n, n, p);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      mpfr_mul_d(VS.e[i * n + j], V.e[i * n + j], s[j], MPFR_RNDN);
  mat_init(&H, n, n, p);
  naive_mul(&H, &VS, 0, &V, 1);
  mat_init(&G, m, n, p);
  naive_mul(&G, &Qt, 0, &H, 0);
  mat_init(g, r, c, p);
  mat_init(q0, r, c, p);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      mpfr_set(tr ? g->e[j * c + i] : g->e[i * c + j], G.e[i * n + j], MPFR_RNDN);
      mpfr_set(tr ? q0->e[j * c + i] : q0->e[i * c + j], Qt.e[i * n + j], MPFR_RNDN);
    }
  muonref_mpmat_clear(&W), muonref_mpmat_clear(&V), muonref_mpmat_clear(&H);
  muonref_mpmat_clear(&Qt), muonref_mpmat_clear(&G), muonref_mpmat_clear(&VS);
}

/* LAPACK-style checks of a polar factor q of g at precision p:
 * orthogonality, symmetry and semi-definiteness of H = q^T g, the residual
 * g - q H, and sv against LAPACK's singular values.  Returns the measured
 * ratios in units of 2^-p ||.|| through asserts. */
static void check_polar_props(const muonref_mpmat *g, const muonref_mpmat *q, const muonref_mpmat *sv, double sv_tol)
{
  size_t r = g->rows, c = g->cols, k = r < c ? r : c;
  mpfr_prec_t p = q->prec;
  double lvl = ldexp(1.0, -(int)(p - 10));
  muonref_mpmat QQ, Id, H, Ht, QH;
  mat_init(&QQ, k, k, p);
  naive_mul(&QQ, q, r >= c, q, r < c); /* q^T q (tall) or q q^T (wide) */
  mat_init(&Id, k, k, p);
  for (size_t i = 0; i < k; i++)
    mpfr_set_ui(Id.e[i * k + i], 1, MPFR_RNDN);
  double orth = mp_dist(&QQ, &Id);
  ck_assert_msg(orth <= lvl, "||Q^T Q - I|| = %g > 2^-(p-10) for %zux%zu", orth, r, c);
  mat_init(&H, c, c, p);
  naive_mul(&H, q, 1, g, 0);
  mat_init(&Ht, c, c, p);
  for (size_t i = 0; i < c; i++)
    for (size_t j = 0; j < c; j++)
      mpfr_set(Ht.e[i * c + j], H.e[j * c + i], MPFR_RNDN);
  muonref_mpmat Z;
  mat_init(&Z, r, c, p);
  double gn = mp_dist(g, &Z);
  double sym = mp_dist(&H, &Ht);
  ck_assert_msg(sym <= lvl * gn, "||H - H^T|| = %g > 2^-(p-10) ||G|| for %zux%zu", sym, r, c);
  mat_init(&QH, r, c, p);
  naive_mul(&QH, q, 0, &H, 0);
  double res = mp_dist(g, &QH);
  ck_assert_msg(res <= lvl * gn, "||G - Q H|| = %g > 2^-(p-10) ||G|| (%g) for %zux%zu", res, gn, r, c);
  /* H positive semi-definite: binary64 eigenvalues >= -1e-13 ||G|| */
  double *h = malloc(c * c * sizeof *h), *w = malloc(c * sizeof *w);
  muonref_mpmat_get_double(h, &H);
  ck_assert_int_eq(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', (lapack_int)c, h, (lapack_int)c, w), 0);
  ck_assert_msg(w[0] >= -1e-13 * gn, "H has eigenvalue %g", w[0]);
  /* singular values: descending, and LAPACK's within sv_tol s_1 */
  double *gd = malloc(r * c * sizeof *gd), *s = malloc(k * sizeof *s), *svd = malloc(k * sizeof *svd);
  muonref_mpmat_get_double(gd, g);
  ck_assert_int_eq(tu_singular_values(s, gd, r, c), 0);
  muonref_mpmat_get_double(svd, sv);
  for (size_t i = 0; i < k; i++) {
    ck_assert_msg(fabs(svd[i] - s[i]) <= sv_tol * s[0], "sv %zu: %.17g vs LAPACK %.17g", i, svd[i], s[i]);
    if (i)
      ck_assert(mpfr_cmp(sv->e[i - 1], sv->e[i]) >= 0);
  }
  free(h), free(w), free(gd), free(s), free(svd);
  muonref_mpmat_clear(&QQ), muonref_mpmat_clear(&Id), muonref_mpmat_clear(&H), muonref_mpmat_clear(&Ht);
  muonref_mpmat_clear(&QH), muonref_mpmat_clear(&Z);
}

/* ---------- conversions ---------- */

START_TEST(float_and_double_round_trip_exact)
{
  tu_rng rng = {tu_seed(21)};
  muonref_mpmat m;
  enum { N = 4096 };
  mat_init(&m, 64, 64, MUONREF_REF_PREC);
  float *x = malloc(N * 4), *y = malloc(N * 4);
  double *dx = malloc(N * 8), *dy = malloc(N * 8);
  for (int i = 0; i < N; i++) {
    uint64_t u = tu_next(&rng);
    x[i] = f_of((uint32_t)u);
    dx[i] = 0;
    memcpy(&dx[i], &u, 8);
  }
  x[0] = f_of(0x00000001u), x[1] = f_of(0x80000000u), x[2] = f_of(0x7f7fffffu), x[3] = f_of(0x7f800000u);
  x[4] = f_of(0x007fffffu), x[5] = f_of(0xff800000u);
  muonref_mpmat_set_float(&m, x);
  muonref_mpmat_get_float(y, &m);
  for (int i = 0; i < N; i++)
    ck_assert_msg(isnan(x[i]) ? isnan(y[i]) : u_of(x[i]) == u_of(y[i]), "float %08x -> %08x", u_of(x[i]),
                  u_of(y[i]));
  muonref_mpmat_set_double(&m, dx);
  muonref_mpmat_get_double(dy, &m);
  for (int i = 0; i < N; i++)
    ck_assert(isnan(dx[i]) ? isnan(dy[i]) : memcmp(&dx[i], &dy[i], 8) == 0);
  muonref_mpmat_clear(&m);
  free(x), free(y), free(dx), free(dy);
}
END_TEST

/* get_float of binary64 values equals the C conversion (IEEE RNDN, with
 * subnormals and overflow) and mpfr_get_flt; get_double equals mpfr_get_d. */
START_TEST(float_rounding_matches_c_conversion)
{
  tu_rng rng = {tu_seed(21) + 1};
  mpfr_t x;
  mpfr_init2(x, MUONREF_REF_PREC);
  for (int i = 0; i < 200000; i++) {
    double mant = 1.0 + (double)(tu_next(&rng) >> 11) * 0x1p-53;
    int k = (int)(tu_next(&rng) % 300) - 160; /* 2^-160 .. 2^139 */
    double d = ldexp(mant, k) * ((tu_next(&rng) & 1) ? -1 : 1);
    if (i % 4 == 1) /* exact float ties: 25 significant bits */
      d = ldexp((double)((tu_next(&rng) & 0xffffff) | 0x1000000) + 0.5, k - 24) * 2;
    mpfr_set_d(x, d, MPFR_RNDN);
    float f = muonref_mpfr_get_float(x);
    ck_assert_msg(u_of(f) == u_of((float)d), "%a -> %a, C gives %a", d, (double)f, (double)(float)d);
    ck_assert(u_of(f) == u_of(mpfr_get_flt(x, MPFR_RNDN)));
    double back = muonref_mpfr_get_double(x);
    ck_assert(memcmp(&back, &d, 8) == 0);
  }
  mpfr_clear(x);
}
END_TEST

/* get_bf16 of float values equals the fast path's muonref_bf16_from_float:
 * random bit patterns, ties (even and odd), subnormal ties, overflow. */
START_TEST(bf16_rounding_matches_fast_path)
{
  tu_rng rng = {tu_seed(21) + 2};
  mpfr_t x;
  mpfr_init2(x, MUONREF_REF_PREC);
  static const uint32_t special[] = {0x3f808000u, 0x3f818000u, 0x00008000u, 0x00018000u, 0x7f7f8000u,
                                     0x7f7effffu, 0x7f7fffffu, 0x807f8000u, 0x00000001u, 0x80008001u,
                                     0x7f800000u, 0x00000000u, 0x80000000u, 0x3f7fffffu};
  for (int i = 0; i < 300000; i++) {
    uint32_t u = i < 14 ? special[i] : (uint32_t)tu_next(&rng);
    if (i >= 14 && i % 3 == 0)
      u = (u & 0xffff0000u) | 0x8000u; /* a tie */
    float f = f_of(u);
    if (isnan(f))
      continue;
    mpfr_set_flt(x, f, MPFR_RNDN);
    uint16_t b = muonref_mpfr_get_bf16(x), e = muonref_bf16_from_float(f);
    ck_assert_msg(b == e, "%08x: mpfr %04x, fast %04x", u, b, e);
  }
  mpfr_set_nan(x);
  ck_assert_uint_eq(muonref_mpfr_get_bf16(x) & 0x7fc0u, 0x7fc0u);
  mpfr_clear(x);
}
END_TEST

/* 256-bit values beyond binary64: ties broken by a 2^-200 perturbation,
 * normal and subnormal, against MPFR's emin/emax + subnormalize. */
START_TEST(wide_values_round_like_mpfr_emulation)
{
  tu_rng rng = {tu_seed(21) + 3};
  mpfr_t x, t;
  mpfr_init2(x, MUONREF_REF_PREC), mpfr_init2(t, MUONREF_REF_PREC);
  for (int i = 0; i < 40000; i++) {
    int bf = i & 1;
    int bits = bf ? 8 : 24;
    int k = (int)(tu_next(&rng) % (bf ? 258 : 274)) - (bf ? 130 : 146); /* within [emin, emax] */
    uint64_t sig = (tu_next(&rng) >> (63 - bits)) | (1ull << bits);     /* bits+1 bits: a midpoint if odd */
    mpfr_set_ui_2exp(x, (unsigned long)sig, k - bits - 1, MPFR_RNDN);
    int kind = (int)(tu_next(&rng) % 3);
    if (kind) { /* nudge by +-2^-200 relative */
      mpfr_mul_2si(t, x, -200, MPFR_RNDN);
      (kind == 1 ? mpfr_add : mpfr_sub)(x, x, t, MPFR_RNDN);
    }
    if (tu_next(&rng) & 1)
      mpfr_neg(x, x, MPFR_RNDN);
    double want = bf ? oracle_round(x, 8, -132, 128) : oracle_round(x, 24, -148, 128);
    if (bf) {
      uint16_t b = muonref_mpfr_get_bf16(x);
      ck_assert_msg(muonref_bf16_to_float(b) == (float)want || (isinf(want) && isinf(muonref_bf16_to_float(b))),
                    "bf16 of %s: %04x, oracle %a", mpfr_get_str(NULL, NULL, 16, 0, x, MPFR_RNDN), b, want);
    } else {
      float f = muonref_mpfr_get_float(x);
      ck_assert_msg(f == (float)want && !signbit(f) == !signbit(want), "float: %a, oracle %a", (double)f, want);
    }
  }
  mpfr_clear(x), mpfr_clear(t);
}
END_TEST

START_TEST(init_rejects_bad_precision)
{
  muonref_mpmat m;
  ck_assert_int_eq(muonref_mpmat_init(&m, 2, 2, 20), MUONREF_EOPTION);
  ck_assert(m.e == NULL && m.rows == 0);
  muonref_mpmat_clear(&m);
  ck_assert_int_eq(muonref_mpmat_init(&m, SIZE_MAX / 2, 4, 64), MUONREF_EOPTION);
  mat_init(&m, 0, 3, 64);
  muonref_mpmat_clear(&m);
}
END_TEST

/* mul, gram, axpby, frobenius against plain loops at twice the precision. */
START_TEST(products_match_naive_loops)
{
  tu_rng rng = {tu_seed(21) + 4};
  size_t r = 7, k = 13, n = 5;
  muonref_mpmat a, b, c, c2, g, g2;
  mat_init(&a, r, k, 200), mat_init(&b, k, n, 200), mat_init(&c, r, n, 200), mat_init(&c2, r, n, 400);
  mat_init(&g, r, r, 200), mat_init(&g2, r, r, 400);
  for (size_t i = 0; i < r * k; i++)
    mpfr_set_d(a.e[i], tu_normal(&rng), MPFR_RNDN), mpfr_sqrt_ui(c.e[0], (unsigned long)i + 2, MPFR_RNDN),
        mpfr_mul(a.e[i], a.e[i], c.e[0], MPFR_RNDN);
  for (size_t i = 0; i < k * n; i++)
    mpfr_set_d(b.e[i], tu_normal(&rng), MPFR_RNDN), mpfr_cbrt(b.e[i], b.e[i], MPFR_RNDN);
  ck_assert_int_eq(muonref_mpmat_mul(&c, &a, &b), MUONREF_OK);
  naive_mul(&c2, &a, 0, &b, 0);
  muonref_mpmat z;
  mat_init(&z, r, n, 400);
  ck_assert(mp_dist(&c, &c2) <= 0x1p-195 * mp_dist(&c2, &z));
  muonref_mpmat_clear(&z);
  mat_init(&z, r, r, 400);
  ck_assert_int_eq(muonref_mpmat_gram(&g, &a), MUONREF_OK);
  naive_mul(&g2, &a, 0, &a, 1);
  ck_assert(mp_dist(&g, &g2) <= 0x1p-195 * mp_dist(&g2, &z));
  muonref_mpmat_clear(&z);
  for (size_t i = 0; i < r; i++)
    for (size_t j = 0; j < r; j++)
      ck_assert(mpfr_equal_p(g.e[i * r + j], g.e[j * r + i]));
  ck_assert_int_eq(muonref_mpmat_mul(&c, &b, &a), MUONREF_ESHAPE);
  ck_assert_int_eq(muonref_mpmat_axpby(&c, 0.5, &c, -2.0, &c2), MUONREF_OK);
  mpfr_t f, s;
  mpfr_init2(f, 200), mpfr_init2(s, 400);
  muonref_mpmat_frobenius(f, &a);
  mpfr_set_zero(s, 1);
  for (size_t i = 0; i < r * k; i++)
    mpfr_fma(s, a.e[i], a.e[i], s, MPFR_RNDN);
  mpfr_sqrt(s, s, MPFR_RNDN);
  mpfr_sub(s, s, f, MPFR_RNDN);
  ck_assert(mpfr_cmpabs_ui(s, 0) == 0 || mpfr_get_exp(s) < mpfr_get_exp(f) - 195);
  mpfr_clear(f), mpfr_clear(s);
  muonref_mpmat_clear(&a), muonref_mpmat_clear(&b), muonref_mpmat_clear(&c), muonref_mpmat_clear(&c2);
  muonref_mpmat_clear(&g), muonref_mpmat_clear(&g2);
}
END_TEST

/* ---------- exact Newton-Schulz ---------- */

static muonref_options ns_variant(int v)
{
  muonref_options o = tu_nemo();
  if (v == 1) { /* three triples cycled over 7 steps, clamp */
    o.n_coeffs = 3;
    o.coeffs[0] = (muonref_coeff){3.0, -3.2, 1.2};
    o.coeffs[1] = (muonref_coeff){2.0, -1.5, 0.5};
    o.coeffs[2] = (muonref_coeff){1.875, -1.25, 0.375};
    o.coeff_order = MUONREF_ORDER_CYCLE;
    o.ns_steps = 7;
    o.eps_mode = MUONREF_EPS_CLAMP;
  } else if (v == 2) { /* the same, repeat-last over 6 steps, eps 1e-2 */
    o = ns_variant(1);
    o.coeff_order = MUONREF_ORDER_REPEAT_LAST;
    o.ns_steps = 6;
    o.eps_mode = MUONREF_EPS_ADD;
    o.ns_eps = 1e-2;
  }
  return o;
}

/* On a diagonal (rows, cols) matrix NS is the scalar map applied to each
 * diagonal entry: phi(d_i / d), by Horner in MPFR at twice the precision;
 * off-diagonal entries stay exactly zero. */
START_TEST(ns_diagonal_is_scalar_map)
{
  static const size_t shapes[][2] = {{6, 6}, {5, 9}, {9, 5}};
  mpfr_prec_t p = MUONREF_REF_PREC;
  for (int v = 0; v < 3; v++)
    for (int s = 0; s < 3; s++) {
      muonref_options o = ns_variant(v);
      size_t r = shapes[s][0], c = shapes[s][1], k = r < c ? r : c;
      muonref_mpmat in, out;
      mat_init(&in, r, c, 64), mat_init(&out, r, c, p);
      float dg[9];
      for (size_t i = 0; i < k; i++) {
        dg[i] = (float)pow(10.0, -3.0 * (double)i / (double)(k - 1)) * (i % 2 ? -1.0f : 1.0f);
        mpfr_set_flt(in.e[i * c + i], dg[i], MPFR_RNDN);
      }
      ck_assert_int_eq(muonref_ref_ns(&out, &in, &o, NULL), MUONREF_OK);
      mpfr_t d, x, x2, h, diff;
      mpfr_inits2(2 * p, d, x, x2, h, diff, (mpfr_ptr)0);
      mpfr_set_zero(d, 1);
      for (size_t i = 0; i < k; i++)
        mpfr_set_flt(x, dg[i], MPFR_RNDN), mpfr_fma(d, x, x, d, MPFR_RNDN);
      mpfr_sqrt(d, d, MPFR_RNDN);
      if (o.eps_mode == MUONREF_EPS_ADD)
        mpfr_add_d(d, d, o.ns_eps, MPFR_RNDN);
      else
        mpfr_max(d, d, x2, MPFR_RNDN), mpfr_set_d(x2, o.ns_eps, MPFR_RNDN), mpfr_max(d, d, x2, MPFR_RNDN);
      for (size_t i = 0; i < k; i++) {
        mpfr_set_flt(x, dg[i], MPFR_RNDN);
        mpfr_div(x, x, d, MPFR_RNDN);
        for (int st = 0; st < o.ns_steps; st++) {
          muonref_coeff t = muonref_ns_coeff_at(&o, st);
          mpfr_sqr(x2, x, MPFR_RNDN);
          mpfr_mul_d(h, x2, t.c, MPFR_RNDN);
          mpfr_add_d(h, h, t.b, MPFR_RNDN);
          mpfr_mul(h, h, x2, MPFR_RNDN);
          mpfr_add_d(h, h, t.a, MPFR_RNDN);
          mpfr_mul(x, x, h, MPFR_RNDN);
        }
        mpfr_sub(diff, x, out.e[i * c + i], MPFR_RNDN);
        ck_assert_msg(mpfr_zero_p(diff) || mpfr_get_exp(diff) < -(mpfr_exp_t)(p - 20), "variant %d shape %zux%zu i %zu",
                      v, r, c, i);
      }
      for (size_t i = 0; i < r; i++)
        for (size_t j = 0; j < c; j++)
          if (i != j)
            ck_assert(mpfr_zero_p(out.e[i * c + j]));
      mpfr_clears(d, x, x2, h, diff, (mpfr_ptr)0);
      muonref_mpmat_clear(&in), muonref_mpmat_clear(&out);
    }
}
END_TEST

static const size_t NS_SHAPES[][2] = {{16, 40}, {48, 32}, {64, 16}, {1, 7}, {8, 8}};

/* Exact NS against the fast fp32 path (1e-5 relative, max-norm) and the
 * binary64 NS of testutil (1e-11). */
START_TEST(ns_matches_fast_fp32_and_binary64)
{
  size_t r = NS_SHAPES[_i][0], c = NS_SHAPES[_i][1];
  tu_rng rng = {tu_seed(21) + 10 + (uint64_t)_i};
  float *g = malloc(r * c * 4), *fast = malloc(r * c * 4), *ref = malloc(r * c * 4);
  double *dbl = malloc(r * c * 8);
  tu_fill_normal(&rng, g, r * c, 1.0);
  for (int v = 0; v < 3; v++) {
    muonref_options o = ns_variant(v);
    o.ns_format = MUONREF_NS_FP32;
    ck_assert_int_eq(muonref_fast_ns(fast, g, r, c, &o, NULL, NULL), MUONREF_OK);
    muonref_mpmat in, out;
    mat_init(&in, r, c, 64), mat_init(&out, r, c, 160);
    muonref_mpmat_set_float(&in, g);
    ck_assert_int_eq(muonref_ref_ns(&out, &in, &o, NULL), MUONREF_OK);
    muonref_mpmat_get_float(ref, &out);
    muonref_mpmat_get_double(dbl, &out);
    double e32 = tu_rel_err(fast, dbl, r * c);
    ck_assert_msg(e32 <= 1e-5, "fp32 vs exact %g (%zux%zu variant %d)", e32, r, c, v);
    double *d64 = malloc(r * c * 8);
    tu_ns_double(d64, g, r, c, &o);
    double e64 = tu_rel_err(ref, d64, r * c);
    ck_assert_msg(e64 <= 1e-6, "exact (float-rounded) vs binary64 %g", e64);
    double worst = 0;
    for (size_t i = 0; i < r * c; i++)
      worst = fmax(worst, fabs(dbl[i] - d64[i]));
    ck_assert_msg(worst <= 1e-11, "exact vs binary64 NS: %g", worst);
    free(d64);
    muonref_mpmat_clear(&in), muonref_mpmat_clear(&out);
  }
  free(g), free(fast), free(ref), free(dbl);
}
END_TEST

START_TEST(ns_zero_input_gives_zero)
{
  for (int mode = 0; mode < 2; mode++)
    for (int e0 = 0; e0 < 2; e0++) {
      muonref_options o = tu_nemo();
      o.eps_mode = mode ? MUONREF_EPS_CLAMP : MUONREF_EPS_ADD;
      o.ns_eps = e0 ? 0.0 : 1e-7;
      muonref_mpmat in, out;
      mat_init(&in, 4, 6, 64), mat_init(&out, 4, 6, 128);
      ck_assert_int_eq(muonref_ref_ns(&out, &in, &o, NULL), MUONREF_OK);
      for (size_t i = 0; i < 24; i++)
        ck_assert(mpfr_zero_p(out.e[i]) && !mpfr_signbit(out.e[i]));
      muonref_mpmat_clear(&in), muonref_mpmat_clear(&out);
    }
}
END_TEST

START_TEST(ns_errors)
{
  muonref_options o = tu_nemo();
  muonref_mpmat in, out, bad;
  muonref_error e;
  mat_init(&in, 3, 4, 64), mat_init(&out, 3, 4, 128), mat_init(&bad, 4, 3, 128);
  ck_assert_int_eq(muonref_ref_ns(&bad, &in, &o, &e), MUONREF_ESHAPE);
  ck_assert(strstr(e.message, "(4, 3)") != NULL);
  mpfr_set_nan(in.e[5]);
  ck_assert_int_eq(muonref_ref_ns(&out, &in, &o, &e), MUONREF_ENONFINITE);
  ck_assert_msg(strstr(e.message, "element 5 (row 1, col 1) is nan") != NULL, "%s", e.message);
  mpfr_set_zero(in.e[5], 1);
  o.ns_steps = 0;
  ck_assert_int_eq(muonref_ref_ns(&out, &in, &o, &e), MUONREF_EOPTION);
  muonref_mpmat_clear(&in), muonref_mpmat_clear(&out), muonref_mpmat_clear(&bad);
}
END_TEST

/* ---------- exact polar factor ---------- */

typedef struct polar_case {
  size_t r, c;
  double cond;     /* singular values log-spaced from 1 to 1/cond */
  int repeated;    /* singular values in two clusters of equal values */
} polar_case;

static const polar_case POLAR[] = {
  {8, 8, 10, 0}, {24, 24, 1e3, 0}, {40, 12, 30, 0}, {12, 40, 30, 0},
  {16, 16, 1e8, 0}, {24, 10, 1e8, 0}, {10, 24, 1e12, 0}, {12, 12, 4, 1},
};

/* Known polar factor: Q agrees with Q0 to cond * 2^-(p-20); the LAPACK-style
 * properties hold at 2^-(p-10); sv matches the construction's values. */
START_TEST(polar_known_factor_and_properties)
{
  polar_case pc = POLAR[_i];
  mpfr_prec_t p = _i % 2 ? 128 : MUONREF_REF_PREC;
  size_t k = pc.r < pc.c ? pc.r : pc.c;
  double *s = malloc(k * sizeof *s);
  for (size_t i = 0; i < k; i++)
    s[i] = pc.repeated ? (i < k / 2 ? 1.0 : 0.25) : pow(pc.cond, -(double)i / (double)(k - 1));
  muonref_mpmat g, q0, q, sv;
  known_polar(&g, &q0, pc.r, pc.c, s, 2 * p, tu_seed(21) + 100 + (uint64_t)_i);
  mat_init(&q, pc.r, pc.c, p), mat_init(&sv, k, 1, p);
  muonref_error e;
  ck_assert_msg(muonref_ref_polar(&q, &sv, &g, &e) == MUONREF_OK, "%s", e.message);
  double err = mp_dist(&q, &q0);
  ck_assert_msg(err <= pc.cond * ldexp(1.0, -(int)(p - 20)), "||Q - Q0|| = %g for %zux%zu cond %g at %ld bits", err,
                pc.r, pc.c, pc.cond, (long)p);
  for (size_t i = 0; i < k; i++) { /* the construction's singular values, sorted descending */
    mpfr_t d;
    mpfr_init2(d, p);
    mpfr_sub_d(d, sv.e[i], s[i], MPFR_RNDN);
    ck_assert_msg(mpfr_zero_p(d) || mpfr_get_exp(d) < -(mpfr_exp_t)(p - 20), "sv %zu", i);
    mpfr_clear(d);
  }
  muonref_mpmat gp;
  mat_init(&gp, pc.r, pc.c, p);
  ck_assert_int_eq(muonref_mpmat_copy(&gp, &g), MUONREF_OK);
  check_polar_props(&gp, &q, &sv, 1e-13 * (pc.cond > 1e6 ? 1e3 : 1));
  free(s);
  muonref_mpmat_clear(&g), muonref_mpmat_clear(&q0), muonref_mpmat_clear(&q), muonref_mpmat_clear(&sv);
  muonref_mpmat_clear(&gp);
}
END_TEST

/* Gaussian float inputs: properties only (the factor is unknown). */
START_TEST(polar_random_float_inputs)
{
  static const size_t shapes[][2] = {{32, 32}, {64, 20}, {20, 64}, {1, 9}, {9, 1}};
  size_t r = shapes[_i][0], c = shapes[_i][1], k = r < c ? r : c;
  tu_rng rng = {tu_seed(21) + 200 + (uint64_t)_i};
  float *g = malloc(r * c * 4);
  tu_fill_normal(&rng, g, r * c, 3.0);
  muonref_mpmat G, q, sv;
  mat_init(&G, r, c, 64), mat_init(&q, r, c, MUONREF_REF_PREC), mat_init(&sv, k, 1, MUONREF_REF_PREC);
  muonref_mpmat_set_float(&G, g);
  muonref_error e;
  ck_assert_msg(muonref_ref_polar(&q, &sv, &G, &e) == MUONREF_OK, "%s", e.message);
  muonref_mpmat Gp;
  mat_init(&Gp, r, c, MUONREF_REF_PREC);
  ck_assert_int_eq(muonref_mpmat_copy(&Gp, &G), MUONREF_OK);
  check_polar_props(&Gp, &q, &sv, 1e-13);
  free(g);
  muonref_mpmat_clear(&G), muonref_mpmat_clear(&q), muonref_mpmat_clear(&sv), muonref_mpmat_clear(&Gp);
}
END_TEST

/* The rank rule: refuse s_min <= 2^-(p/2) s_max with the measured condition
 * number; accept just inside it. */
START_TEST(polar_rank_rule)
{
  muonref_error e;
  muonref_mpmat g, q;
  /* exactly rank-deficient float matrix: rows 1 and 4 equal */
  tu_rng rng = {tu_seed(21) + 300};
  float x[8 * 8];
  tu_fill_normal(&rng, x, 64, 1.0);
  memcpy(x + 4 * 8, x + 1 * 8, 8 * 4);
  mat_init(&g, 8, 8, 64), mat_init(&q, 8, 8, MUONREF_REF_PREC);
  muonref_mpmat_set_float(&g, x);
  ck_assert_int_eq(muonref_ref_polar(&q, NULL, &g, &e), MUONREF_ENUMERIC);
  ck_assert_msg(strstr(e.message, "rank-deficient") && strstr(e.message, "condition number") &&
                    strstr(e.message, "2^128"), "%s", e.message);
  /* rank 2 wide matrix of small integers */
  muonref_mpmat w, wq;
  mat_init(&w, 3, 5, 64), mat_init(&wq, 3, 5, MUONREF_REF_PREC);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 5; j++)
      mpfr_set_si(w.e[i * 5 + j], (i + 1) * (j - 2) + (i == 2 ? 2 * (j + 1) : 0) - (i == 1 ? 0 : 0), MPFR_RNDN);
  for (int j = 0; j < 5; j++) /* row 2 = row 0 + row 1 */
    mpfr_add(w.e[10 + j], w.e[j], w.e[5 + j], MPFR_RNDN);
  ck_assert_int_eq(muonref_ref_polar(&wq, NULL, &w, &e), MUONREF_ENUMERIC);
  /* zero matrix */
  muonref_mpmat_clear(&g);
  mat_init(&g, 8, 8, 64);
  ck_assert_int_eq(muonref_ref_polar(&q, NULL, &g, &e), MUONREF_ENUMERIC);
  ck_assert(strstr(e.message, "zero") != NULL);
  /* [[1, 1], [1, 1 + delta]]: cond ~ 4 / delta */
  muonref_mpmat t, tq, sv;
  mat_init(&t, 2, 2, 512), mat_init(&tq, 2, 2, MUONREF_REF_PREC), mat_init(&sv, 2, 1, MUONREF_REF_PREC);
  for (int i = 0; i < 4; i++)
    mpfr_set_ui(t.e[i], 1, MPFR_RNDN);
  mpfr_set_ui_2exp(t.e[3], 1, -140, MPFR_RNDN), mpfr_add_ui(t.e[3], t.e[3], 1, MPFR_RNDN);
  ck_assert_int_eq(muonref_ref_polar(&tq, &sv, &t, &e), MUONREF_ENUMERIC);
  ck_assert_msg(strstr(e.message, "5.5") != NULL, "cond 2^142 ~ 5.5e42 expected in: %s", e.message);
  mpfr_set_ui_2exp(t.e[3], 1, -100, MPFR_RNDN), mpfr_add_ui(t.e[3], t.e[3], 1, MPFR_RNDN);
  ck_assert_msg(muonref_ref_polar(&tq, &sv, &t, &e) == MUONREF_OK, "%s", e.message);
  /* the 2x2 factor in closed form: for det > 0, Q = (A + adj(A)^T) / |det(A + adj(A)^T)|^(1/2) */
  mpfr_t a, b, c, d, den, want;
  mpfr_inits2(512, a, b, c, d, den, want, (mpfr_ptr)0);
  mpfr_set(a, t.e[0], MPFR_RNDN), mpfr_set(b, t.e[1], MPFR_RNDN), mpfr_set(c, t.e[2], MPFR_RNDN);
  mpfr_set(d, t.e[3], MPFR_RNDN);
  /* A + adj(A)^T = [[a + d, b - c], [c - b, d + a]] -> here [[a+d, 0], [0, a+d]] / (a+d) = I */
  mpfr_add(den, a, d, MPFR_RNDN);
  for (int i = 0; i < 4; i++) {
    mpfr_set_ui(want, i == 0 || i == 3, MPFR_RNDN);
    mpfr_sub(want, want, tq.e[i], MPFR_RNDN);
    ck_assert_msg(mpfr_zero_p(want) || mpfr_get_exp(want) < -150, "Q[%d]", i);
  }
  mpfr_clears(a, b, c, d, den, want, (mpfr_ptr)0);
  muonref_mpmat_clear(&g), muonref_mpmat_clear(&q), muonref_mpmat_clear(&w), muonref_mpmat_clear(&wq);
  muonref_mpmat_clear(&t), muonref_mpmat_clear(&tq), muonref_mpmat_clear(&sv);
}
END_TEST

START_TEST(polar_errors)
{
  muonref_error e;
  muonref_mpmat g, q, sv;
  mat_init(&g, 3, 5, 64), mat_init(&q, 5, 3, 128), mat_init(&sv, 5, 1, 128);
  ck_assert_int_eq(muonref_ref_polar(&q, NULL, &g, &e), MUONREF_ESHAPE);
  muonref_mpmat_clear(&q);
  mat_init(&q, 3, 5, 128);
  ck_assert_int_eq(muonref_ref_polar(&q, &sv, &g, &e), MUONREF_ESHAPE);
  ck_assert(strstr(e.message, "(3, 1)") != NULL);
  mpfr_set_inf(g.e[7], -1);
  ck_assert_int_eq(muonref_ref_polar(&q, NULL, &g, &e), MUONREF_ENONFINITE);
  ck_assert_msg(strstr(e.message, "element 7 (row 1, col 2) is inf") != NULL, "%s", e.message);
  muonref_mpmat_clear(&g), muonref_mpmat_clear(&q), muonref_mpmat_clear(&sv);
}
END_TEST

/* ---------- precision doubling ---------- */

START_TEST(precision_doubling_ns)
{
  size_t r = NS_SHAPES[_i][0], c = NS_SHAPES[_i][1];
  tu_rng rng = {tu_seed(21) + 400 + (uint64_t)_i};
  float *g = malloc(r * c * 4), *o32 = malloc(r * c * 4);
  double *o64 = malloc(r * c * 8);
  tu_fill_normal(&rng, g, r * c, 1.0);
  for (int v = 0; v < 3; v++) {
    muonref_options o = ns_variant(v);
    muonref_ref_cr_report rep;
    muonref_error e;
    int st = muonref_ref_ns_cr(o32, o64, g, r, c, &o, 128, &rep, &e);
    ck_assert_msg(st == MUONREF_OK, "%s", e.message);
    ck_assert_uint_eq(rep.n_outputs, 2 * r * c);
    ck_assert_uint_eq(rep.n_differ, 0);
    ck_assert_int_eq(rep.prec_hi, 256);
    for (size_t i = 0; i < r * c; i++)
      ck_assert(o32[i] == (float)o64[i]);
  }
  free(g), free(o32), free(o64);
}
END_TEST

START_TEST(precision_doubling_polar)
{
  static const size_t shapes[][2] = {{16, 16}, {30, 10}, {10, 30}};
  size_t r = shapes[_i][0], c = shapes[_i][1], k = r < c ? r : c;
  tu_rng rng = {tu_seed(21) + 500 + (uint64_t)_i};
  double *g = malloc(r * c * 8), *q64 = malloc(r * c * 8), *sv = malloc(k * 8);
  float *q32 = malloc(r * c * 4);
  for (size_t i = 0; i < r * c; i++)
    g[i] = tu_normal(&rng);
  muonref_ref_cr_report rep;
  muonref_error e;
  ck_assert_msg(muonref_ref_polar_cr(q32, q64, sv, g, r, c, 128, &rep, &e) == MUONREF_OK, "%s", e.message);
  ck_assert_uint_eq(rep.n_outputs, 2 * r * c + k);
  ck_assert_uint_eq(rep.n_differ, 0);
  double *s = malloc(k * 8);
  ck_assert_int_eq(tu_singular_values(s, g, r, c), 0);
  for (size_t i = 0; i < k; i++)
    ck_assert(fabs(s[i] - sv[i]) <= 1e-13 * s[0]);
  free(g), free(q64), free(sv), free(q32), free(s);
}
END_TEST

/* A working precision too low for binary64 outputs: the disagreement is
 * reported (status, count, first element), not hidden. */
START_TEST(precision_doubling_reports_disagreement)
{
  tu_rng rng = {tu_seed(21) + 600};
  float g[12 * 20], o32[12 * 20];
  tu_fill_normal(&rng, g, 240, 1.0);
  muonref_options o = tu_nemo();
  muonref_ref_cr_report rep;
  muonref_error e;
  ck_assert_int_eq(muonref_ref_ns_cr(o32, NULL, g, 12, 20, &o, 53, &rep, &e), MUONREF_ENUMERIC);
  ck_assert(rep.n_differ > 0 && rep.n_differ <= rep.n_outputs && rep.n_outputs == 480);
  ck_assert(rep.value_lo != rep.value_hi);
  ck_assert_msg(strstr(e.message, "correct rounding not established") && strstr(e.message, "53 and 106"), "%s",
                e.message);
}
END_TEST

/* Every public function of the reference refuses a NULL pointer it needs
 * with MUONREF_EOPTION naming it (issue 27), or does nothing when it
 * returns no status; none reads through it. */
START_TEST(null_arguments_are_refused)
{
  muonref_options o = tu_nemo();
  muonref_mpmat m, q;
  ck_assert_int_eq(muonref_mpmat_init(&m, 2, 2, 64), MUONREF_OK);
  ck_assert_int_eq(muonref_mpmat_init(&q, 2, 2, 64), MUONREF_OK);
  float f[4] = {1, 2, 3, 4}, out[4];
  double d[4] = {1, 2, 3, 4}, dd[4];
  uint16_t h[4];
  muonref_shape sh = {2, {2, 2}};
  muonref_route r;
  muonref_error e;
  ck_assert_int_eq(muonref_route_param(&o, &sh, &r, &e), MUONREF_OK);
  muonref_param_state st = {0, 0, 0, 4, f, NULL, NULL, NULL, 0, NULL, 0, NULL};
  ck_assert_int_eq(muonref_mpmat_init(NULL, 2, 2, 64), MUONREF_EOPTION);
  muonref_mpmat_clear(NULL);
  muonref_mpmat_set_float(NULL, f), muonref_mpmat_set_float(&m, NULL);
  muonref_mpmat_set_double(NULL, d), muonref_mpmat_set_double(&m, NULL);
  muonref_mpmat_get_float(NULL, &m), muonref_mpmat_get_float(out, NULL);
  muonref_mpmat_get_double(NULL, &m), muonref_mpmat_get_double(dd, NULL);
  muonref_mpmat_get_bf16(NULL, &m), muonref_mpmat_get_bf16(h, NULL);
  ck_assert_int_eq(muonref_mpmat_is_finite(NULL, NULL), 0);
  ck_assert_int_eq(muonref_mpmat_copy(NULL, &m), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_mpmat_copy(&m, NULL), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_mpmat_transpose(NULL, &m), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_mpmat_mul(NULL, &m, &m), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_mpmat_mul(&q, NULL, &m), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_mpmat_gram(NULL, &m), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_mpmat_axpby(&m, 1, NULL, 1, &m), MUONREF_EOPTION);
  mpfr_t x;
  mpfr_init2(x, 64);
  muonref_mpmat_frobenius(NULL, &m);
  muonref_mpmat_frobenius(x, NULL);
  ck_assert(mpfr_nan_p(x));
  mpfr_clear(x);
  ck_assert_int_eq(muonref_ref_ns(NULL, &m, &o, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "muonref_ref_ns: out, in and o must not be NULL");
  ck_assert_int_eq(muonref_ref_ns(&q, NULL, &o, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_polar(NULL, NULL, &m, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_polar(&q, NULL, NULL, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "muonref_ref_polar: q and g must not be NULL");
  ck_assert_int_eq(muonref_ref_step(&o, NULL, f, &st, f, 64, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "muonref_ref_step: o, r, param and state must not be NULL");
  ck_assert_int_eq(muonref_ref_step(&o, &r, NULL, &st, f, 64, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_step(&o, &r, f, NULL, f, 64, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_ns_cr(NULL, NULL, f, 2, 2, &o, 64, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_ns_cr(out, dd, NULL, 2, 2, &o, 64, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_ns_cr(out, dd, f, (size_t)1 << 40, (size_t)1 << 40, &o, 64, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_polar_cr(NULL, NULL, NULL, d, 2, 2, 64, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_polar_cr(out, dd, dd, NULL, 2, 2, 64, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_step_cr(&o, &r, NULL, &st, f, 64, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_grad_norm(NULL, 1, NULL, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_ns_bf16(NULL, f, 2, 2, &o, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_ns_bf16(out, f, 2, 2, NULL, NULL, &e), MUONREF_EOPTION);
  muonref_mpmat_clear(&m), muonref_mpmat_clear(&q);
}
END_TEST

/* decay_method l2's gradient R32(G + wd P) (ref.h muonref_ref_l2_grad) is rounded once: 1 + 0.1 is
 * float32's 1.1 (0x3f8ccccd, by hand: 1.1 = 0x1.19999ap0 rounded); with wd 2^-24 (1 + 2^-52) and P 1
 * the exact 1 + 2^-24 + 2^-76 lies above the float32 midpoint 1 + 2^-24, so it rounds up to
 * 1 + 2^-23, where binary64 first (grad.h muonref_l2_grad, the fast path) lands on the midpoint and
 * ties to 1; a float32 subnormal result is exact; wd 0 leaves G; wd infinite and NULL are refused. */
START_TEST(l2_gradient_rounds_once)
{
  float g[4] = {1.0f, 1.0f, 0x1p-140f, -2.0f}, p[4] = {1.0f, 1.0f, 0x1p-130f, 3.0f}, out[4];
  muonref_error e;
  ck_assert_int_eq(muonref_ref_l2_grad(out, g, p, 1, 0.1, &e), MUONREF_OK);
  uint32_t bits;
  memcpy(&bits, &out[0], 4);
  ck_assert_uint_eq(bits, 0x3f8ccccd);
  double wd = 0x1p-24 * (1.0 + 0x1p-52);
  ck_assert_int_eq(muonref_ref_l2_grad(out + 1, g + 1, p + 1, 1, wd, &e), MUONREF_OK);
  ck_assert(out[1] == 1.0f + 0x1p-23f);
  float fast;
  muonref_l2_grad(&fast, g + 1, p + 1, 1, wd);
  ck_assert(fast == 1.0f); /* the documented midpoint difference */
  ck_assert_int_eq(muonref_ref_l2_grad(out + 2, g + 2, p + 2, 1, 0x1p-12, &e), MUONREF_OK);
  ck_assert(out[2] == 0x1p-140f + 0x1p-142f); /* 2^-140 + 2^-12 2^-130: subnormal, exact */
  ck_assert_int_eq(muonref_ref_l2_grad(out + 3, g + 3, p + 3, 1, 0.0, &e), MUONREF_OK);
  ck_assert(out[3] == -2.0f);
  ck_assert_int_eq(muonref_ref_l2_grad(out, g, p, 1, INFINITY, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "muonref_ref_l2_grad: wd must be finite, got inf");
  ck_assert_int_eq(muonref_ref_l2_grad(NULL, g, p, 1, 0.1, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_ref_l2_grad(NULL, NULL, NULL, 0, 0.1, &e), MUONREF_OK);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("ref");
  TCase *t = tcase_create("ref");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, float_and_double_round_trip_exact);
  tcase_add_test(t, float_rounding_matches_c_conversion);
  tcase_add_test(t, bf16_rounding_matches_fast_path);
  tcase_add_test(t, wide_values_round_like_mpfr_emulation);
  tcase_add_test(t, init_rejects_bad_precision);
  tcase_add_test(t, products_match_naive_loops);
  tcase_add_test(t, ns_diagonal_is_scalar_map);
  tcase_add_loop_test(t, ns_matches_fast_fp32_and_binary64, 0, 5);
  tcase_add_test(t, ns_zero_input_gives_zero);
  tcase_add_test(t, ns_errors);
  tcase_add_loop_test(t, polar_known_factor_and_properties, 0, (int)(sizeof POLAR / sizeof POLAR[0]));
  tcase_add_loop_test(t, polar_random_float_inputs, 0, 5);
  tcase_add_test(t, polar_rank_rule);
  tcase_add_test(t, polar_errors);
  tcase_add_loop_test(t, precision_doubling_ns, 0, 5);
  tcase_add_loop_test(t, precision_doubling_polar, 0, 3);
  tcase_add_test(t, precision_doubling_reports_disagreement);
  tcase_add_test(t, null_arguments_are_refused);
  tcase_add_test(t, l2_gradient_rounds_once);
  suite_add_tcase(s, t);
  return tu_run_suite(s);
}
