/* muonref: exact-then-rounded bf16 Newton-Schulz with an order-independence
 * certificate (see ns_rounded.h).  The iteration is that of spec/muon.md
 * section 7 (the same formulas as fast/ns.c, here in MPFR):
 *   X <- R(in^(T));  n <- R(sqrt(sum x^2));  d <- R(n + eps) | R(max(n, eps))
 *   X <- R(X / d);   per step: A <- R(X X^T); S <- R(A A);
 *   B <- R(R(b A) + R(c S));  X <- R(R(a X) + R(B X))
 * in the SEPARATE order; the KELLER and FUSED orders of options.h round
 * other intermediates (spec/muon.md section 7.1); under norm_format INPUT
 * the input and its norm stay binary32 and X <- R(fl32(in / d)). */
#include <limits.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "muonref/mpmat.h"
#include "muonref/ns_rounded.h"
#include "core/fail.h"
#include "core/plan.h"

#define PREC 128

typedef struct ctx {
  unsigned flags;
  mpfr_t t8, t24, t8b, acc, term, absum;
} ctx;

/* x <- bf16(x), recording double-rounding and range trouble. */
static void round_bf16(ctx *c, mpfr_t x)
{
  if (mpfr_zero_p(x))
    return;
  mpfr_set(c->t8, x, MPFR_RNDN);
  mpfr_set(c->t24, x, MPFR_RNDN);
  mpfr_set(c->t8b, c->t24, MPFR_RNDN);
  if (!mpfr_equal_p(c->t8, c->t8b))
    c->flags |= MUONREF_NSR_DOUBLE_ROUNDING;
  mpfr_exp_t e = mpfr_get_exp(c->t8); /* x = f 2^e, 1/2 <= |f| < 1 */
  if (e < -125 || e > 128)
    c->flags |= MUONREF_NSR_RANGE;
  mpfr_set(x, c->t8, MPFR_RNDN);
}

/* The exponent of the lowest set bit of v != 0 (v = f 2^e, 1/2 <= |f| < 1,
 * f has mpfr_min_prec(v) significant bits). */
static mpfr_exp_t low_bit_exp(mpfr_srcptr v) { return mpfr_get_exp(v) - (mpfr_exp_t)mpfr_min_prec(v); }

/* out <- sum_k a[k*sa] b[k*sb] over k < len, exactly, with the partial-sum
 * certificate: every term is an integer multiple of 2^umin (its lowest set
 * bit), so every partial sum, in any order, is one too, bounded by the sum
 * of magnitudes; below 2^24 * 2^umin it fits binary32's 24 bits exactly. */
static void dot_exact(ctx *c, mpfr_t out, mpfr_t *a, size_t sa, mpfr_t *b, size_t sb, size_t len)
{
  mpfr_set_zero(c->acc, 1);
  mpfr_set_zero(c->absum, 1);
  mpfr_exp_t umin = 0;
  int any = 0;
  for (size_t k = 0; k < len; k++) {
    mpfr_mul(c->term, a[k * sa], b[k * sb], MPFR_RNDN); /* exact: 16 bits in 128 */
    if (mpfr_zero_p(c->term))
      continue;
    mpfr_exp_t u = low_bit_exp(c->term);
    umin = any && umin < u ? umin : u;
    any = 1;
    mpfr_add(c->acc, c->acc, c->term, MPFR_RNDN);
    mpfr_abs(c->term, c->term, MPFR_RNDN);
    mpfr_add(c->absum, c->absum, c->term, MPFR_RNDN);
  }
  if (any && mpfr_get_exp(c->absum) - umin > 24) /* sum |terms| >= 2^24 u */
    c->flags |= MUONREF_NSR_INEXACT_SUM;
  if (any && mpfr_get_exp(c->absum) - umin > 8) /* a partial sum may need more than bf16's 8 bits */
    c->flags |= MUONREF_NSR_BF16_ACCUM;
  mpfr_set(out, c->acc, MPFR_RNDN);
}

/* A binary64 copy of a matrix of MPFR values, for dot_view: v[i] = x[i]
 * exactly and low[i] = low_bit_exp(x[i]) (0 for a zero).  ok is 1 only when
 * every value has at most 26 significant bits (bf16 and binary32 values do:
 * a product of two is then exact in binary64's 53) and an exponent in
 * [-400, 400] (a product and a sum of up to 2^100 of them stay far inside
 * binary64's normal range); otherwise the MPFR dot_exact is used. */
typedef struct view {
  double *v;
  int *low;
  int ok;
} view;

static void view_of(view *w, mpfr_t *x, size_t len)
{
  w->ok = w->v && w->low;
  for (size_t i = 0; i < len && w->ok; i++) {
    if (mpfr_zero_p(x[i])) {
      w->v[i] = 0.0, w->low[i] = 0;
      continue;
    }
    if (!mpfr_regular_p(x[i]) || mpfr_min_prec(x[i]) > 26 || mpfr_get_exp(x[i]) < -400 ||
        mpfr_get_exp(x[i]) > 400) {
      w->ok = 0;
      break;
    }
    w->v[i] = mpfr_get_d(x[i], MPFR_RNDN); /* exact: 26 bits, in range */
    w->low[i] = (int)low_bit_exp(x[i]);
  }
}

/* dot_exact in binary64, where that is exact: every product of two views'
 * values is (26 + 26 bits), and every partial sum is an integer multiple of
 * 2^umin bounded by the sum of magnitudes; when that sum, accumulated in
 * binary64, stays below 2^(umin + 53), no partial sum of either
 * accumulation was rounded (a rounded partial sum would have reached the
 * bound, and rounding is monotonic).  Returns 0, touching nothing, when the
 * certificate fails; then out, the flags and the values are dot_exact's. */
static int dot_double(ctx *c, mpfr_t out, const double *a, const int *la, size_t sa, const double *b,
                      const int *lb, size_t sb, size_t len)
{
  double acc = 0.0, absum = 0.0;
  int umin = INT_MAX;
  for (size_t k = 0; k < len; k++) {
    double t = a[k * sa] * b[k * sb];
    if (t == 0.0)
      continue;
    int u = la[k * sa] + lb[k * sb]; /* the product of the odd significands is odd */
    umin = u < umin ? u : umin;
    acc += t;
    absum += fabs(t);
  }
  if (umin == INT_MAX) {
    mpfr_set_zero(out, 1);
    return 1;
  }
  int e;
  frexp(absum, &e); /* absum = f 2^e, 1/2 <= f < 1: mpfr_get_exp's convention */
  if (e - umin > 53)
    return 0;
  if (e - umin > 24)
    c->flags |= MUONREF_NSR_INEXACT_SUM;
  if (e - umin > 8)
    c->flags |= MUONREF_NSR_BF16_ACCUM;
  mpfr_set_d(out, acc, MPFR_RNDN); /* exact */
  return 1;
}

/* out <- sum_k a[ia + k*sa] b[ib + k*sb] exactly, as dot_exact, from the
 * views va and vb of a and b where both are ok and dot_double certifies. */
static void dot_view(ctx *c, mpfr_t out, mpfr_t *a, const view *va, size_t ia, size_t sa, mpfr_t *b,
                     const view *vb, size_t ib, size_t sb, size_t len)
{
  if (va->ok && vb->ok && dot_double(c, out, va->v + ia, va->low + ia, sa, vb->v + ib, vb->low + ib, sb, len))
    return;
  dot_exact(c, out, a + ia, sa, b + ib, sb, len);
}

/* out <- R(sum_k a[ia + k*sa] b[ib + k*sb]): a bf16 GEMM element. */
static void dot(ctx *c, mpfr_t out, mpfr_t *a, const view *va, size_t ia, size_t sa, mpfr_t *b, const view *vb,
                size_t ib, size_t sb, size_t len)
{
  dot_view(c, out, a, va, ia, sa, b, vb, ib, sb, len);
  round_bf16(c, out);
}

/* x <- fl32(x) (binary32, round to nearest even; the exponent range of the
 * inputs here is binary32's). */
static void round_fp32(ctx *c, mpfr_t x)
{
  mpfr_set(c->t24, x, MPFR_RNDN);
  mpfr_set(x, c->t24, MPFR_RNDN);
}

/* X <- R(X / d) with d = R(R(R(||X||_F) s) (+|max) eps) (s = ns_safety, the
 * product only when s is not 1); 0 when d = 0.  Under norm_format INPUT
 * (Emerging-Optimizers' F.normalize in float32 before the bf16 cast) every
 * R but the last is binary32's and X <- R_bf16(fl32(X / d)). */
static void normalize(ctx *c, mpfr_t *X, size_t len, const muonref_options *o)
{
  void (*rn)(ctx *, mpfr_t) = o->norm_format == MUONREF_NORM_FORMAT_INPUT ? round_fp32 : round_bf16;
  mpfr_t n, eps;
  mpfr_inits2(PREC, n, eps, (mpfr_ptr)0);
  unsigned before = c->flags;
  dot_exact(c, n, X, 1, X, 1, len); /* the sum of squares is not rounded, */
  /* reductions accumulate in binary32 whatever the strides: no bf16 accumulation to flag */
  c->flags = (c->flags & ~(unsigned)MUONREF_NSR_BF16_ACCUM) | (before & MUONREF_NSR_BF16_ACCUM);
  mpfr_sqrt(n, n, MPFR_RNDN);        /* only the norm is                   */
  rn(c, n);
  if (o->ns_safety != 1.0) { /* timm's safety_factor: R(R(||X||) s), s as binary32 */
    mpfr_mul_d(n, n, (double)(float)o->ns_safety, MPFR_RNDN); /* exact: 24 x 24 bits < PREC */
    rn(c, n);
  }
  mpfr_set_flt(eps, (float)o->ns_eps, MPFR_RNDN);
  if (o->eps_mode == MUONREF_EPS_ADD)
    mpfr_add(n, n, eps, MPFR_RNDN);
  else
    mpfr_max(n, n, eps, MPFR_RNDN);
  rn(c, n);
  for (size_t i = 0; i < len; i++) {
    if (mpfr_zero_p(n))
      mpfr_set_zero(X[i], 1);
    else
      mpfr_div(X[i], X[i], n, MPFR_RNDN);
    if (rn == round_fp32)
      round_fp32(c, X[i]); /* the binary32 quotient, then its bf16 cast: a double rounding by definition */
    round_bf16(c, X[i]);
  }
  mpfr_clears(n, eps, (mpfr_ptr)0);
}

/* t <- R(R(s x) + y) element-wise over len (y may be NULL: t <- R(s x)). */
static void scale_add(ctx *c, mpfr_t *t, mpfr_t *x, float s, mpfr_t *y, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    mpfr_mul_d(t[i], x[i], (double)s, MPFR_RNDN); /* exact: 8 x 24 bits */
    round_bf16(c, t[i]);
    if (y) {
      mpfr_add(t[i], t[i], y[i], MPFR_RNDN);
      round_bf16(c, t[i]);
    }
  }
}

/* t <- R(s x + y) element-wise over len, exactly and rounded once (a fused
 * kernel such as torch.addmm), with the certificate that every binary32
 * evaluation of s x + y rounds to the same bf16 value: a kernel rounds
 * s x, the sum (and perhaps a scaled product) to binary32, at most 4 ulp of
 * |s x| + |y| in all, so the interval x_exact +- 2^-22 (|s x| + |y|) must lie
 * inside one bf16 rounding interval.  y holds exact binary32 values (dot
 * products certified by dot_exact). */
static void fused_add(ctx *c, mpfr_t *t, mpfr_t *x, float s, mpfr_t *y, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    int inexact = mpfr_mul_d(c->term, x[i], (double)s, MPFR_RNDN) != 0; /* exact: 8 x 24 bits */
    mpfr_abs(c->absum, c->term, MPFR_RNDU);
    inexact |= mpfr_add(t[i], c->term, y[i], MPFR_RNDN) != 0;
    if (mpfr_cmpabs(y[i], c->absum) > 0)
      mpfr_abs(c->acc, y[i], MPFR_RNDU), mpfr_add(c->absum, c->absum, c->acc, MPFR_RNDU);
    else
      mpfr_add(c->absum, c->absum, c->absum, MPFR_RNDU); /* 2 max(|s x|, |y|) >= |s x| + |y| */
    mpfr_mul_2si(c->absum, c->absum, -22, MPFR_RNDU);
    mpfr_sub(c->acc, t[i], c->absum, MPFR_RNDD);
    mpfr_set(c->t8, c->acc, MPFR_RNDN);
    mpfr_add(c->acc, t[i], c->absum, MPFR_RNDU);
    mpfr_set(c->t8b, c->acc, MPFR_RNDN);
    if (inexact || !mpfr_equal_p(c->t8, c->t8b))
      c->flags |= MUONREF_NSR_DOUBLE_ROUNDING;
    round_bf16(c, t[i]);
  }
}

/* One Newton-Schulz step in the bf16 evaluation order `ord` (options.h,
 * spec/muon.md section 7.1).  A and S are (m, m), X and BX (m, n), n >= m;
 * BX doubles as the (m, m) product C A of the KELLER order.  vx, va, vs:
 * binary64 views (dot_view) of X, A and S, refreshed before each product. */
static void step(ctx *c, mpfr_t *X, mpfr_t *A, mpfr_t *S, mpfr_t *BX, view *vx, view *va, view *vs, size_t m,
                 size_t n, muonref_coeff t, muonref_bf16_order ord)
{
  view_of(vx, X, m * n);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < m; j++)
      dot(c, A[i * m + j], X, vx, i * n, 1, X, vx, j * n, 1, n);
  view_of(va, A, m * m);
  if (ord == MUONREF_BF16_SEPARATE) { /* B = R(R(b A) + R(c R(A A))) */
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < m; j++)
        dot(c, S[i * m + j], A, va, i * m, 1, A, va, j, m, m);
    scale_add(c, S, S, (float)t.c, NULL, m * m);
    scale_add(c, A, A, (float)t.b, S, m * m); /* A now holds B */
  } else if (ord == MUONREF_BF16_KELLER) { /* B = R(R(b A) + R(R(c A) A)) */
    scale_add(c, S, A, (float)t.c, NULL, m * m);
    view_of(vs, S, m * m);
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < m; j++)
        dot(c, BX[i * m + j], S, vs, i * m, 1, A, va, j, m, m);
    scale_add(c, A, A, (float)t.b, BX, m * m);
  } else { /* FUSED: B = R(b A + c (A A)) */
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < m; j++) {
        dot_view(c, S[i * m + j], A, va, i * m, 1, A, va, j, m, m);
        mpfr_mul_d(S[i * m + j], S[i * m + j], (double)(float)t.c, MPFR_RNDN); /* exact: 24 x 24 bits */
      }
    fused_add(c, A, A, (float)t.b, S, m * m);
  }
  view_of(va, A, m * m); /* A holds B */
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      if (ord == MUONREF_BF16_FUSED)
        dot_view(c, BX[i * n + j], A, va, i * m, 1, X, vx, j, n, m);
      else
        dot(c, BX[i * n + j], A, va, i * m, 1, X, vx, j, n, m);
    }
  if (ord == MUONREF_BF16_FUSED)
    fused_add(c, X, X, (float)t.a, BX, m * n);
  else
    scale_add(c, X, X, (float)t.a, BX, m * n);
}

/* ns_precondition AOL / SCHATTEN in the bf16 format: X <- R(X / d_i) with
 * d_i (options.h) computed in binary64 from X X^T, as fast/ns.c does.  The
 * root makes the divisors inexact in every format, so no bf16 result of a
 * preconditioned iteration is certified (MUONREF_NSR_INEXACT_SUM): such
 * vectors judge bf16 against the exact result with the noise allowance. */
static void precondition(ctx *c, mpfr_t *X, size_t m, size_t n, const muonref_options *o)
{
  double fro = 0.0, *d = calloc(m ? m : 1, sizeof *d);
  c->flags |= MUONREF_NSR_INEXACT_SUM;
  if (!d)
    return;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < m; j++) {
      double a = 0.0;
      for (size_t l = 0; l < n; l++)
        a += mpfr_get_d(X[i * n + l], MPFR_RNDN) * mpfr_get_d(X[j * n + l], MPFR_RNDN);
      d[i] += fabs(a);
      fro += a * a;
    }
  for (size_t i = 0; i < m; i++) {
    double di = o->ns_precondition == MUONREF_PRECOND_AOL ? sqrt(fmax(d[i], MUONREF_PRECOND_EPS))
                                                           : sqrt(fmax(sqrt(fro), MUONREF_PRECOND_EPS));
    for (size_t l = 0; l < n; l++) {
      mpfr_div_d(X[i * n + l], X[i * n + l], di, MPFR_RNDN);
      round_bf16(c, X[i * n + l]);
    }
  }
  free(d);
}

int muonref_ref_ns_bf16(float *out, const float *in, size_t rows, size_t cols, const muonref_options *o,
                        unsigned *uncertain, muonref_error *err)
{
  if (!out || !in || !o)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_ns_bf16: out, in and o must not be NULL");
  muonref_options scaled;
  o = muonref_ns_options_for(o, rows, cols, &scaled); /* timm's scale_eps */
  if (cols && rows > SIZE_MAX / sizeof(double) / cols)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_ns_bf16: (%zu, %zu) elements overflow", rows, cols);
  int tr = rows > cols;
  size_t m = tr ? cols : rows, n = tr ? rows : cols;
  muonref_mpmat Xm = {0}, BXm = {0}, Am = {0}, Sm = {0};
  if (muonref_mpmat_init(&Xm, m, n, PREC) || muonref_mpmat_init(&BXm, m, n, PREC) ||
      muonref_mpmat_init(&Am, m, m, PREC) || muonref_mpmat_init(&Sm, m, m, PREC)) {
    muonref_mpmat_clear(&Xm), muonref_mpmat_clear(&BXm), muonref_mpmat_clear(&Am), muonref_mpmat_clear(&Sm);
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the bf16 reference Newton-Schulz of a (%zu, %zu) matrix",
                        rows, cols);
  }
  mpfr_t *X = Xm.e, *BX = BXm.e, *A = Am.e, *S = Sm.e;
  ctx c = {0};
  mpfr_init2(c.t8, 8), mpfr_init2(c.t24, 24), mpfr_init2(c.t8b, 8);
  mpfr_inits2(PREC, c.acc, c.term, c.absum, (mpfr_ptr)0);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      mpfr_set_flt(X[i * n + j], tr ? in[j * cols + i] : in[i * cols + j], MPFR_RNDN);
      if (o->norm_format != MUONREF_NORM_FORMAT_INPUT) /* INPUT: normalised in binary32 first */
        round_bf16(&c, X[i * n + j]);
    }
  if (o->ns_precondition == MUONREF_PRECOND_FROBENIUS)
    normalize(&c, X, m * n, o);
  else if (muonref_ns_step_count(o) > 0)
    precondition(&c, X, m, n, o);
  /* binary64 views for the exact products; where one cannot be allocated,
   * every product takes the MPFR dot_exact (the same values, slower) */
  view vx = {malloc(m * n * sizeof(double)), malloc(m * n * sizeof(int)), 0};
  view va = {malloc(m * m * sizeof(double)), malloc(m * m * sizeof(int)), 0};
  view vs = {malloc(m * m * sizeof(double)), malloc(m * m * sizeof(int)), 0};
  for (int k = 0, n_steps = muonref_ns_step_count(o); k < n_steps; k++)
    step(&c, X, A, S, BX, &vx, &va, &vs, m, n, muonref_ns_coeff_at(o, k), o->bf16_order);
  free(vx.v), free(vx.low), free(va.v), free(va.low), free(vs.v), free(vs.low);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++)
      out[tr ? j * m + i : i * n + j] = mpfr_get_flt(X[i * n + j], MPFR_RNDN); /* exact: bf16 values */
  *uncertain = c.flags;
  mpfr_clears(c.t8, c.t24, c.t8b, c.acc, c.term, c.absum, (mpfr_ptr)0);
  muonref_mpmat_clear(&Xm), muonref_mpmat_clear(&BXm), muonref_mpmat_clear(&Am), muonref_mpmat_clear(&Sm);
  return MUONREF_OK;
}
