/* muonref: the Newton-Schulz iteration without rounding (see ref.h).
 *
 * The formulas are those of fast/ns.c and spec/muon.md with R = identity:
 * on the wide orientation X (m x n, m <= n),
 *   X <- X / d,  d = ||X||_F + eps  or  max(||X||_F, eps)   (X <- 0 if d = 0)
 *   A <- X X^T;  B <- b A + c A A;  X <- a X + B X          (per step)
 * with (a, b, c) = muonref_ns_coeff_at(o, k), the binary64 coefficients
 * taken exactly.  Every product accumulates in prec + MUONREF_REF_GUARD bits
 * and rounds once to prec = prec(out); B = b A + c A A and the norm are
 * rounded once too (mpfr_fmma, mpfr_sqrt).  A and A A are symmetric, so
 * only their upper triangles are computed (half the work of a GEMM).
 * The workspace (X, A, A A, the next X) is allocated once per call. */
#include <stdlib.h>
#include "muonref/ref.h"
#include "ref_internal.h"

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
  muonref_mpmat_gram(&w->A, &w->X);
  muonref_mpmat_gram(&w->AA, &w->A);             /* A A = A A^T: A is symmetric */
  muonref_mpmat_axpby(&w->A, t.b, &w->A, t.c, &w->AA); /* A <- B */
  apply_step(&w->Y, &w->A, &w->X, t.a);
  muonref_mpmat tmp = w->X;
  w->X = w->Y;
  w->Y = tmp;
}

/* X <- X / d with d from o's eps rule; X <- 0 when d = 0. */
static void normalize(muonref_mpmat *X, const muonref_options *o)
{
  mpfr_t d;
  mpfr_init2(d, X->prec);
  muonref_mpmat_frobenius(d, X);
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
  mpfr_clear(d);
}

/* Checks the arguments of muonref_ref_ns. */
static int check_args(const muonref_mpmat *out, const muonref_mpmat *in, const muonref_options *o, muonref_error *err)
{
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
  int st = check_args(out, in, o, err);
  if (st)
    return st;
  int tr = muonref_ns_transposes(in->rows, in->cols);
  size_t m = tr ? in->cols : in->rows, n = tr ? in->rows : in->cols;
  ns_work w = {{0}, {0}, {0}, {0}};
  st = work_init(&w, m, n, out->prec);
  if (st) {
    work_clear(&w);
    return muonref_fail(err, st, "Out of memory for the exact Newton-Schulz workspace of a (%zu, %zu) matrix at %ld bits",
                        in->rows, in->cols, (long)out->prec);
  }
  if (tr)
    muonref_mpmat_transpose(&w.X, in);
  else
    muonref_mpmat_copy(&w.X, in);
  normalize(&w.X, o);
  for (int k = 0; k < o->ns_steps; k++)
    ns_step(&w, muonref_ns_coeff_at(o, k));
  if (tr)
    muonref_mpmat_transpose(out, &w.X);
  else
    muonref_mpmat_copy(out, &w.X);
  work_clear(&w);
  return MUONREF_OK;
}
