/* muonref: the Newton-Schulz iteration without rounding (see ref.h).
 *
 * The formulas are those of fast/ns.c and spec/muon.md with R = identity:
 * on the wide orientation X (m x n, m <= n),
 *   X <- X / d,  d = s ||X||_F + eps  or  max(s ||X||_F, eps)   (X <- 0 if d = 0;
 *   s = ns_safety, timm's safety_factor, 1 elsewhere)
 *   A <- X X^T;  B <- b A + c A A;  X <- a X + B X          (per step)
 * with (a, b, c) = muonref_ns_coeff_at(o, k), the binary64 coefficients
 * taken exactly.  Every product accumulates in prec + MUONREF_REF_GUARD bits
 * and rounds once to prec = prec(out); B = b A + c A A and the norm are
 * rounded once too (mpfr_fmma, mpfr_sqrt).  A and A A are symmetric, so
 * only their upper triangles are computed (half the work of a GEMM).
 * The workspace (X, A, A A, the next X) is allocated once per call.
 *
 * Running error bound (muonref_ref_ns_bounded, spec/reference.md 5.1): an
 * elementwise bound E_M >= |M_computed - M_exact| in units of 2^-p is
 * carried beside every matrix M, in binary64, from the products' and
 * roundings' error terms (section 1) and |M_exact| <= |M_computed| + E_M:
 *   C = P Q:     E_C = g_k |P||Q| + E_P |Q| + |P| E_Q + 2^-p E_P E_Q,
 *                g_k = 1 + k 2^-63 (k terms, accumulator p + 64 bits);
 *   B = bA + cS: E_B = |b||A| + |c||S| + |b| E_A + |c| E_S;
 *   Y = aX + BX: E_Y = g_(m+1) (|a||X| + |B||X|) + |a| E_X + E_B |X| + (|B| + 2^-p E_B) E_X;
 * the normalization's bound is derived in section 5.1. */
#include <math.h>
#include <stdlib.h>
#include "muonref/ref.h"
#include "ref_internal.h"
#include "core/fail.h"
#include "core/plan.h"

typedef struct ns_work {
  muonref_mpmat X, A, AA, Y; /* X, Y: m x n; A, AA: m x m */
} ns_work;

static void work_clear(ns_work *w)
{
  muonref_mpmat_clear(&w->X), muonref_mpmat_clear(&w->A);
  muonref_mpmat_clear(&w->AA), muonref_mpmat_clear(&w->Y);
}

static int work_init(ns_work *w, size_t m, size_t n, mpfr_prec_t p)
{
  int st = muonref_mpmat_init(&w->X, m, n, p);
  if (!st)
    st = muonref_mpmat_init(&w->Y, m, n, p);
  if (!st)
    st = muonref_mpmat_init(&w->A, m, m, p);
  if (!st)
    st = muonref_mpmat_init(&w->AA, m, m, p);
  return st;
}

/* Y <- a X + B X for B (m x m) and X (m x n), one rounding per element. */
static void apply_step(muonref_mpmat *Y, const muonref_mpmat *B, const muonref_mpmat *X, double a)
{
  mpfr_t acc;
  mpfr_init2(acc, Y->prec + MUONREF_REF_GUARD);
  for (size_t i = 0; i < X->rows; i++)
    for (size_t j = 0; j < X->cols; j++) {
      mpfr_mul_d(acc, REF_AT(X, i, j), a, MPFR_RNDN); /* exact: GUARD >= 53 */
      muonref_ref_dot_acc(acc, REF_AT(B, i, 0), 1, REF_AT(X, 0, j), X->cols, X->rows);
      mpfr_set(REF_AT(Y, i, j), acc, MPFR_RNDN);
    }
  mpfr_clear(acc);
}

/* One step with triple t on w->X (result in w->X). */
static void ns_step(ns_work *w, muonref_coeff t)
{
  MUONREF_UNCHECKED(muonref_mpmat_gram(&w->A, &w->X));
  MUONREF_UNCHECKED(muonref_mpmat_gram(&w->AA, &w->A));             /* A A = A A^T: A is symmetric */
  MUONREF_UNCHECKED(muonref_mpmat_axpby(&w->A, t.b, &w->A, t.c, &w->AA)); /* A <- B */
  apply_step(&w->Y, &w->A, &w->X, t.a);
  muonref_mpmat tmp = w->X;
  w->X = w->Y;
  w->Y = tmp;
}

/* X <- X / d with d from o's eps rule; X <- 0 when d = 0.  d (X's
 * precision) receives the divisor. */
static void normalize(muonref_mpmat *X, mpfr_ptr d, const muonref_options *o)
{
  muonref_mpmat_frobenius(d, X);
  if (o->ns_safety != 1.0) /* timm's safety_factor, binary64 */
    mpfr_mul_d(d, d, o->ns_safety, MPFR_RNDN);
  if (o->eps_mode == MUONREF_EPS_ADD)
    mpfr_add_d(d, d, o->ns_eps, MPFR_RNDN);
  else if (mpfr_cmp_d(d, o->ns_eps) < 0)
    mpfr_set_d(d, o->ns_eps, MPFR_RNDN);
  for (size_t i = 0; i < X->rows * X->cols; i++) {
    if (mpfr_zero_p(d))
      mpfr_set_zero(X->e[i], 1);
    else
      mpfr_div(X->e[i], X->e[i], d, MPFR_RNDN);
  }
}

/* ns_precondition AOL / SCHATTEN (options.h; optax's first-step rescaling):
 * A = X X^T (muonref_mpmat_gram into A), r_i = sum_j |A_ij| (AOL) or
 * r = ||A||_F (SCHATTEN), each sum accumulated in prec + GUARD bits and
 * rounded once, d_i = sqrt(max(r_i, 1e-8)) rounded once, X_il <- X_il / d_i
 * rounded once.  d (m values at X's precision) receives the d_i. */
static void precondition(muonref_mpmat *X, muonref_mpmat *A, mpfr_t *d, const muonref_options *o)
{
  size_t m = X->rows, n = X->cols;
  MUONREF_UNCHECKED(muonref_mpmat_gram(A, X));
  mpfr_t acc, t;
  mpfr_init2(acc, X->prec + MUONREF_REF_GUARD);
  mpfr_init2(t, 2 * (X->prec + MUONREF_REF_GUARD));
  if (o->ns_precondition == MUONREF_PRECOND_SCHATTEN) {
    mpfr_set_zero(acc, 1);
    for (size_t i = 0; i < m * m; i++) {
      mpfr_sqr(t, A->e[i], MPFR_RNDN); /* exact: twice the precision */
      mpfr_add(acc, acc, t, MPFR_RNDN);
    }
    mpfr_sqrt(d[0], acc, MPFR_RNDN);
  }
  for (size_t i = 0; i < m; i++) {
    if (o->ns_precondition == MUONREF_PRECOND_AOL) {
      mpfr_set_zero(acc, 1);
      for (size_t j = 0; j < m; j++) {
        mpfr_abs(t, REF_AT(A, i, j), MPFR_RNDN);
        mpfr_add(acc, acc, t, MPFR_RNDN);
      }
      mpfr_set(d[i], acc, MPFR_RNDN);
    } else if (i > 0) {
      continue;
    }
    if (mpfr_cmp_d(d[i], MUONREF_PRECOND_EPS) < 0)
      mpfr_set_d(d[i], MUONREF_PRECOND_EPS, MPFR_RNDN);
    mpfr_sqrt(d[i], d[i], MPFR_RNDN);
  }
  for (size_t i = 1; o->ns_precondition == MUONREF_PRECOND_SCHATTEN && i < m; i++)
    mpfr_set(d[i], d[0], MPFR_RNDN);
  for (size_t i = 0; i < m; i++)
    for (size_t l = 0; l < n; l++)
      mpfr_div(REF_AT(X, i, l), REF_AT(X, i, l), d[i], MPFR_RNDN);
  mpfr_clears(acc, t, (mpfr_ptr)0);
}

/* ---- the running bound (see the head of this file) ---- */

typedef struct ns_bnd {
  double u;                       /* 2^-p (an over-estimate when tiny) */
  double *eX, *eY, *aX;           /* m x n */
  double *eA, *eS, *aA, *aS, *aB; /* m x m; eA holds E_B after the step's axpby */
} ns_bnd;

static void bnd_free(ns_bnd *b)
{
  free(b->eX), free(b->eY), free(b->aX), free(b->eA), free(b->eS), free(b->aA), free(b->aS), free(b->aB);
}

static int bnd_init(ns_bnd *b, size_t m, size_t n, mpfr_prec_t p)
{
  b->u = muonref_ref_ulp_unit(p);
  b->eX = calloc(m * n, sizeof(double)), b->eY = calloc(m * n, sizeof(double)), b->aX = calloc(m * n, sizeof(double));
  b->eA = calloc(m * m, sizeof(double)), b->eS = calloc(m * m, sizeof(double));
  b->aA = calloc(m * m, sizeof(double)), b->aS = calloc(m * m, sizeof(double)), b->aB = calloc(m * m, sizeof(double));
  return b->eX && b->eY && b->aX && b->eA && b->eS && b->aA && b->aS && b->aB ? MUONREF_OK : MUONREF_ENOMEM;
}

static void abs_of(double *a, const muonref_mpmat *M)
{
  for (size_t i = 0; i < M->rows * M->cols; i++)
    a[i] = muonref_ref_absu(M->e[i]);
}

/* E_C for C = P P^T (P r x k, |P| = aP, E_P = eP): see the head. */
static void gram_bound(double *eC, const double *aP, const double *eP, size_t r, size_t k, double u)
{
  double g = 1 + (double)k * 0x1p-63, slack = (double)(4 * k + 1) * REF_BOUND_SLACK;
  for (size_t i = 0; i < r; i++)
    for (size_t j = i; j < r; j++) {
      const double *pi = aP + i * k, *pj = aP + j * k, *ei = eP + i * k, *ej = eP + j * k;
      double s = 0;
      int nz = 0; /* some term has two non-zero factors (only then can one underflow) */
      for (size_t l = 0; l < k; l++) {
        s += g * pi[l] * pj[l] + ei[l] * pj[l] + pi[l] * ej[l] + u * ei[l] * ej[l];
        nz |= pi[l] + ei[l] != 0 && pj[l] + ej[l] != 0;
      }
      eC[i * r + j] = eC[j * r + i] = s * REF_BOUND_SAFETY + (nz ? slack : 0);
    }
}

/* E_Y for Y = a X + B X (B m x m, X m x n). */
static void apply_bound(ns_bnd *b, size_t m, size_t n, double a)
{
  double g = 1 + (double)(m + 1) * 0x1p-63, slack = (double)(3 * m + 2) * REF_BOUND_SLACK, aa = fabs(a);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double mag = aa * b->aX[i * n + j], prop = aa * b->eX[i * n + j];
      int nz = b->aX[i * n + j] + b->eX[i * n + j] != 0; /* as in gram_bound */
      for (size_t l = 0; l < m; l++) {
        double bil = b->aB[i * m + l], ebil = b->eA[i * m + l], xlj = b->aX[l * n + j], exlj = b->eX[l * n + j];
        mag += bil * xlj;
        prop += ebil * xlj + (bil + b->u * ebil) * exlj;
        nz |= bil + ebil != 0 && xlj + exlj != 0;
      }
      b->eY[i * n + j] = (g * mag + prop) * REF_BOUND_SAFETY + (nz ? slack : 0);
    }
}

/* One step with its bound: w->X and b->eX advance together. */
static void ns_step_bounded(ns_work *w, ns_bnd *b, muonref_coeff t)
{
  size_t m = w->X.rows, n = w->X.cols;
  abs_of(b->aX, &w->X);
  MUONREF_UNCHECKED(muonref_mpmat_gram(&w->A, &w->X));
  gram_bound(b->eA, b->aX, b->eX, m, n, b->u);
  abs_of(b->aA, &w->A);
  MUONREF_UNCHECKED(muonref_mpmat_gram(&w->AA, &w->A));
  gram_bound(b->eS, b->aA, b->eA, m, m, b->u);
  abs_of(b->aS, &w->AA);
  MUONREF_UNCHECKED(muonref_mpmat_axpby(&w->A, t.b, &w->A, t.c, &w->AA)); /* A <- B */
  double fb = fabs(t.b), fc = fabs(t.c);
  for (size_t i = 0; i < m * m; i++) /* E_B into eA */
    b->eA[i] = (fb * b->aA[i] + fc * b->aS[i] + fb * b->eA[i] + fc * b->eS[i]) * REF_BOUND_SAFETY;
  abs_of(b->aB, &w->A);
  apply_step(&w->Y, &w->A, &w->X, t.a);
  apply_bound(b, m, n, t.a);
  muonref_mpmat tmp = w->X;
  w->X = w->Y;
  w->Y = tmp;
  double *e = b->eX;
  b->eX = b->eY;
  b->eY = e;
}

/* The normalization's bound (spec/reference.md 5.1).  X holds the
 * normalized values x = RN(x_in / d) (so |x_in / d| <= |x| (1 + 2^-52)),
 * ein the input's error bound (N = m n doubles, units 2^-p, may be all
 * zero), d the computed divisor.  Writes b->eX. */
static void normalize_bound(ns_bnd *b, const muonref_mpmat *X, const double *ein, mpfr_srcptr d,
                            const muonref_options *o)
{
  size_t N = X->rows * X->cols;
  double eta = 0;
  for (size_t i = 0; i < N; i++)
    eta += ein[i] * ein[i];
  eta = sqrt(eta) * REF_BOUND_SAFETY;
  if (mpfr_zero_p(d)) { /* X = 0 exactly; the exact input may still be non-zero */
    for (size_t i = 0; i < N; i++)
      b->eX[i] = eta > 0 ? INFINITY : 0;
    return;
  }
  long de;
  double dm = mpfr_get_d_2exp(&de, d, MPFR_RNDD); /* d = dm 2^de, 1/2 <= dm < 1 */
  double inv_d = muonref_ref_ldexp_up((1.0 / dm) * (1 + 0x1p-52), -de); /* >= 1 / d */
  double c = (1 + (double)N * 0x1p-63) * (1 + 0x1p-50);
  /* |d - d_exact| / (d 2^-p); ns_safety s != 1 adds one rounding and scales the norm's error by s */
  double s = o->ns_safety != 1.0 ? o->ns_safety : 1.0;
  double rho1 = ((o->eps_mode == MUONREF_EPS_ADD ? 2 : 1) + (s != 1.0)) * c + eta * inv_d * fmax(1.0, s) * (1 + 0x1p-50);
  double rho = rho1 * b->u;
  if (!(rho <= 0x1p-20)) {
    for (size_t i = 0; i < N; i++)
      b->eX[i] = INFINITY;
    return;
  }
  double f = rho1 / (1 - rho) * (1 + 0x1p-50);
  for (size_t i = 0; i < N; i++) {
    double ax = muonref_ref_absu(X->e[i]) * (1 + 0x1p-52), ei = ein[i] * inv_d;
    b->eX[i] = (ax + ei + (ax + b->u * ei) * f) * REF_BOUND_SAFETY;
  }
}

/* The bound of precondition() (spec/reference.md 5.1, the same argument
 * as normalize_bound's with one divisor per row).  aX, ein: |X| and its
 * bound before the division (m n values); X the divided values; d the d_i;
 * r the computed r_i (before the floor and the root; r[0] for SCHATTEN).
 * With u = 2^-p and e the input's bound: the exact r_i of the exact input
 * differs from that of X by at most u D_i, D_i = sum_j sum_l (e_il |x_jl| +
 * |x_il| e_jl + u e_il e_jl) (AOL; SCHATTEN: 2 ||X||_F ||e||_F + u ||e||_F^2,
 * ||A(X + E) - A(X)||_F); the computed r_i carries the gram's rounding
 * (u g per element) and the sum's (u): relative (2 + 2^-40) g u (SCHATTEN:
 * the squares' sum and its root: (3 + 2^-40) g u); the floor max(., 1e-8)
 * is 1-Lipschitz, so relative to m_i = max(r_i, 1e-8) these add up to
 * rho_m u; |sqrt(1 + t) - 1| <= |t| (|t| < 1) and the root's rounding give
 * |d_i - d_i exact| <= (rho_m + 1) u d_i. */
static void precondition_bound(ns_bnd *b, const muonref_mpmat *X, const double *aX, const double *ein,
                               const mpfr_t *d, const double *r, const muonref_options *o)
{
  size_t m = X->rows, n = X->cols;
  double u = b->u, c = (1 + (double)(m + n) * 0x1p-63) * (1 + 0x1p-50);
  int aol = o->ns_precondition == MUONREF_PRECOND_AOL;
  double fro = 0, eta = 0;
  for (size_t i = 0; i < m * n; i++)
    fro += (aX[i] + u * ein[i]) * (aX[i] + u * ein[i]), eta += ein[i] * ein[i];
  fro = sqrt(fro) * REF_BOUND_SAFETY, eta = sqrt(eta) * REF_BOUND_SAFETY;
  for (size_t i = 0; i < m; i++) {
    double Di = 0;
    if (aol) {
      for (size_t j = 0; j < m; j++)
        for (size_t l = 0; l < n; l++) {
          double xi = aX[i * n + l] + u * ein[i * n + l], xj = aX[j * n + l] + u * ein[j * n + l];
          Di += ein[i * n + l] * xj + xi * ein[j * n + l] + u * ein[i * n + l] * ein[j * n + l];
        }
    } else {
      Di = 2 * fro * eta + u * eta * eta;
    }
    /* a lower bound of the computed m_i: d_i = RN(sqrt(m_i)) <= sqrt(m_i) (1 + u) */
    double dlo = mpfr_get_d(d[i], MPFR_RNDD), mi = dlo * dlo * (1 - 0x1p-40);
    double rho_m = (Di * REF_BOUND_SAFETY + (aol ? 2 : 3) * c * r[aol ? i : 0] * (1 + 0x1p-40)) / mi;
    double rho1 = (rho_m + 1) * c;
    long de;
    double dm = mpfr_get_d_2exp(&de, d[i], MPFR_RNDD);
    double inv_d = muonref_ref_ldexp_up((1.0 / dm) * (1 + 0x1p-52), -de);
    double rho = rho1 * u;
    for (size_t l = 0; l < n; l++) {
      size_t k = i * n + l;
      if (!(rho <= 0x1p-20)) {
        b->eX[k] = INFINITY;
        continue;
      }
      double f = rho1 / (1 - rho) * (1 + 0x1p-50);
      double ax = muonref_ref_absu(X->e[k]) * (1 + 0x1p-52), ei = ein[k] * inv_d;
      b->eX[k] = (ax + ei + (ax + u * ei) * f) * REF_BOUND_SAFETY;
    }
  }
}

/* precondition() on w->X with, when b is given, its bound into b->eX
 * (ein the input's bound); MUONREF_ENOMEM when the scratch cannot be had. */
static int precondition_rows(ns_work *w, ns_bnd *b, const double *ein, const muonref_options *o)
{
  size_t m = w->X.rows, n = w->X.cols;
  mpfr_t *d = malloc(m * sizeof *d);
  double *r = malloc(m * sizeof *r), *aX = b ? malloc(m * n * sizeof *aX) : NULL;
  if (!d || !r || (b && !aX)) {
    free(d), free(r), free(aX);
    return MUONREF_ENOMEM;
  }
  for (size_t i = 0; i < m; i++)
    mpfr_init2(d[i], w->X.prec);
  if (aX)
    abs_of(aX, &w->X);
  precondition(&w->X, &w->A, d, o);
  if (b) {
    /* the computed r_i again (d_i^2 before the floor is not kept): from A */
    for (size_t i = 0; i < m; i++) {
      double s2 = 0;
      for (size_t j = 0; j < m; j++) {
        double a = muonref_ref_absu(REF_AT(&w->A, i, j));
        s2 += o->ns_precondition == MUONREF_PRECOND_AOL ? a : a * a;
      }
      r[i] = o->ns_precondition == MUONREF_PRECOND_AOL ? s2 * REF_BOUND_SAFETY : s2;
    }
    if (o->ns_precondition == MUONREF_PRECOND_SCHATTEN) {
      double s2 = 0;
      for (size_t i = 0; i < m; i++)
        s2 += r[i];
      r[0] = sqrt(s2 * REF_BOUND_SAFETY) * (1 + 0x1p-50);
    }
    precondition_bound(b, &w->X, aX, ein, (const mpfr_t *)d, r, o);
  }
  for (size_t i = 0; i < m; i++)
    mpfr_clear(d[i]);
  free(d), free(r), free(aX);
  return MUONREF_OK;
}

/* Checks the arguments of muonref_ref_ns. */
static int check_args(const muonref_mpmat *out, const muonref_mpmat *in, const muonref_options *o, muonref_error *err)
{
  if (!out || !in || !o)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_ns: out, in and o must not be NULL");
  int st = muonref_options_validate(o, err);
  if (st)
    return st;
  if (in->rows == 0 || in->cols == 0)
    return muonref_fail(err, MUONREF_ESHAPE, "Newton-Schulz input is empty (%zu, %zu): rows and cols must be >= 1",
                        in->rows, in->cols);
  if (out->rows != in->rows || out->cols != in->cols)
    return muonref_fail(err, MUONREF_ESHAPE, "Newton-Schulz output is (%zu, %zu), the input (%zu, %zu): shapes must match",
                        out->rows, out->cols, in->rows, in->cols);
  size_t bad;
  if (!muonref_mpmat_is_finite(in, &bad))
    return muonref_fail(err, MUONREF_ENONFINITE, "Newton-Schulz input element %zu (row %zu, col %zu) is %s", bad,
                        bad / in->cols, bad % in->cols, mpfr_nan_p(in->e[bad]) ? "nan" : "inf");
  return MUONREF_OK;
}

int muonref_ref_ns(muonref_mpmat *out, const muonref_mpmat *in, const muonref_options *o, muonref_error *err)
{
  return muonref_ref_ns_bounded(out, NULL, in, NULL, o, err);
}

int muonref_ref_ns_bounded(muonref_mpmat *out, double *bound, const muonref_mpmat *in, const double *in_err,
                           const muonref_options *o, muonref_error *err)
{
  int st = check_args(out, in, o, err);
  if (st)
    return st;
  muonref_options scaled;
  o = muonref_ns_options_for(o, in->rows, in->cols, &scaled); /* timm's scale_eps */
  int tr = muonref_ns_transposes(in->rows, in->cols);
  size_t m = tr ? in->cols : in->rows, n = tr ? in->rows : in->cols;
  ns_work w = {{0}, {0}, {0}, {0}};
  ns_bnd b = {0};
  double *ein = NULL;
  st = work_init(&w, m, n, out->prec);
  if (!st && bound) {
    st = bnd_init(&b, m, n, out->prec);
    ein = calloc(m * n, sizeof *ein);
    st = st || !ein ? MUONREF_ENOMEM : MUONREF_OK;
  }
  if (st) {
    work_clear(&w), bnd_free(&b), free(ein);
    return muonref_fail(err, st, "Out of memory for the exact Newton-Schulz workspace of a (%zu, %zu) matrix at %ld bits",
                        in->rows, in->cols, (long)out->prec);
  }
  for (size_t i = 0; i < in->rows; i++)
    for (size_t j = 0; j < in->cols; j++) {
      size_t s = i * in->cols + j, t = tr ? j * in->rows + i : s;
      int inex = mpfr_set(w.X.e[t], in->e[s], MPFR_RNDN);
      if (ein) /* |rounded - given| <= 2^-p |rounded| (1 + 2^-p), plus the given error */
        ein[t] = (in_err ? in_err[s] : 0) + (inex ? muonref_ref_absu(w.X.e[t]) * (1 + 0x1p-52) : 0);
    }
  mpfr_t d;
  mpfr_init2(d, out->prec);
  int pre = o->ns_precondition != MUONREF_PRECOND_FROBENIUS;
  if (pre && muonref_ns_step_count(o) > 0) { /* optax: the rescaling is part of step 0 */
    st = precondition_rows(&w, bound ? &b : NULL, ein, o);
    if (st) {
      mpfr_clear(d);
      work_clear(&w), bnd_free(&b), free(ein);
      return muonref_fail(err, st, "Out of memory for the exact Newton-Schulz preconditioning of a (%zu, %zu) matrix",
                          in->rows, in->cols);
    }
  } else if (!pre) {
    normalize(&w.X, d, o);
  } else if (bound) { /* no step, no rescaling: the input's own bound */
    for (size_t i = 0; i < m * n; i++)
      b.eX[i] = ein[i];
  }
  if (bound) {
    if (!pre)
      normalize_bound(&b, &w.X, ein, d, o);
    for (int k = 0, n_steps = muonref_ns_step_count(o); k < n_steps; k++)
      ns_step_bounded(&w, &b, muonref_ns_coeff_at(o, k));
  } else {
    for (int k = 0, n_steps = muonref_ns_step_count(o); k < n_steps; k++)
      ns_step(&w, muonref_ns_coeff_at(o, k));
  }
  mpfr_clear(d);
  if (tr)
    MUONREF_UNCHECKED(muonref_mpmat_transpose(out, &w.X));
  else
    MUONREF_UNCHECKED(muonref_mpmat_copy(out, &w.X));
  for (size_t i = 0; bound && i < m; i++)
    for (size_t j = 0; j < n; j++)
      bound[tr ? j * m + i : i * n + j] = b.eX[i * n + j];
  work_clear(&w), bnd_free(&b), free(ein);
  return MUONREF_OK;
}
