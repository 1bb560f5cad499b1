/* muonref: the exact polar factor and singular values (see ref.h).
 *
 * Problem.  For g (rows x cols) with thin SVD g = U S V^T, the polar factor
 * is Q = U V^T.  We work on the tall orientation T (m x n, m >= n): T = g,
 * or g^T when rows < cols (polar(g^T) = polar(g)^T).
 *
 * Method: preconditioned one-sided Jacobi (Hestenes 1958; de Rijk 1989;
 * Drmac and Veselic, SIAM J. Matrix Anal. Appl. 29(4), 2008, for the
 * preconditioned form).
 *  1. A binary64 SVD of T (LAPACKE_dgesdd, on T scaled by a power of two)
 *     gives V0 ~ V to about 1e-16.  V0 is only a starting basis: its
 *     columns are orthonormalized in MPFR (Gram-Schmidt, two passes) to W,
 *     orthogonal to the working precision.  If LAPACK fails, W = I.
 *  2. B = T W.  Cyclic one-sided Jacobi rotations J_k, applied to the
 *     columns of B and of W, make the columns of B mutually orthogonal:
 *     a pair (b_i, b_j) is rotated when |b_i.b_j| > 2^-(p+16) |b_i||b_j|,
 *     and the sweeps stop after one in which no pair was rotated.
 *     Cyclic Jacobi converges (Forsythe and Henrici, Trans. AMS 94, 1960),
 *     quadratically at the end (Van Kempen, Numer. Math. 9, 1966); from
 *     W ~ V the columns start orthogonal to ~1e-16 and 3 to 4 sweeps do.
 *  3. With V = W J (orthogonal up to rounding, a product of rotations) and
 *     B = T V having orthogonal columns b_j = s_j u_j, T = U S V^T is an SVD
 *     of T itself, so Q = U V^T = sum_j (b_j / s_j) v_j^T is polar(T).
 * Why not Newton-Schulz from Q0 = U0 V0^T: that iteration converges to
 * polar(Q0), a matrix ~1e-16 away from polar(T).  Here the binary64 SVD
 * only chooses the basis in which T is factorized; every rotation acts on
 * T's own columns, so no approximation of the answer enters the result.
 *
 * Precision: working precision w = p + 32, p = prec(q); dot products
 * accumulate in w + MUONREF_REF_GUARD bits.  Backward error: the computed
 * factors satisfy T + dT = U S V^T with ||dT||_F <= c n^2 2^-w ||T||_F
 * (rotations are applied with one rounding each); the polar factor moves
 * by at most 2 ||dT||_F / (s_n + s_{n-1}) for square T, and at most
 * ||dT||_F / s_n times a small constant otherwise (Higham, Functions of
 * Matrices, SIAM 2008, Thm 8.9; R.-C. Li, SIAM J. Matrix Anal. Appl. 16,
 * 1995).
 *
 * Rank rule.  The factor is unique iff s_n > 0, and its sensitivity is
 * ~ s_1 / s_n.  We refuse (MUONREF_ENUMERIC) when s_n <= 2^-(p/2) s_1,
 * reporting the measured condition number; when accepted, the error of Q
 * is below c n^2 2^-(w - p/2) = c n^2 2^-(p/2 + 32), far below any binary64
 * rounding for p >= 128.  An exactly rank-deficient T has computed
 * s_n ~ 2^-w s_1 and is refused with a wide margin. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include "muonref/ref.h"
#include "ref_internal.h"
#include "core/fail.h"

#define MAX_SWEEPS 60

typedef struct jac {
  size_t m, n;
  mpfr_prec_t p, w;
  mpfr_t *B;   /* n columns of length m: B[j * m + i] */
  mpfr_t *V;   /* n columns of length n: V[j * n + k] */
  mpfr_t *nrm; /* n squared column norms of B */
  mpfr_t acc, alpha, beta, gamma, zeta, t, c, s, thr, thr_col, t1, t2;
} jac;

static mpfr_t *vec_new(size_t n, mpfr_prec_t p)
{
  mpfr_t *v = malloc((n ? n : 1) * sizeof *v);
  for (size_t i = 0; v && i < n; i++)
    mpfr_init2(v[i], p), mpfr_set_zero(v[i], 1);
  return v;
}

static void vec_free(mpfr_t *v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    mpfr_clear(v[i]);
  free(v);
}

static int jac_init(jac *J, size_t m, size_t n, mpfr_prec_t p)
{
  J->m = m, J->n = n, J->p = p, J->w = p + 32;
  J->B = vec_new(m * n, J->w);
  J->V = vec_new(n * n, J->w);
  J->nrm = vec_new(n, J->w);
  mpfr_init2(J->acc, J->w + MUONREF_REF_GUARD);
  mpfr_ptr sc[] = {J->alpha, J->beta, J->gamma, J->zeta, J->t, J->c, J->s, J->thr, J->thr_col, J->t1, J->t2};
  for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++)
    mpfr_init2(sc[i], J->w);
  return J->B && J->V && J->nrm ? MUONREF_OK : MUONREF_ENOMEM;
}

static void jac_clear(jac *J)
{
  vec_free(J->B, J->m * J->n), vec_free(J->V, J->n * J->n), vec_free(J->nrm, J->n);
  mpfr_ptr sc[] = {J->acc, J->alpha, J->beta, J->gamma, J->zeta, J->t, J->c, J->s, J->thr, J->thr_col, J->t1, J->t2};
  for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++)
    mpfr_clear(sc[i]);
}

/* Element (i, j) of the tall orientation T of g, and its stride along j. */
static mpfr_ptr tall_at(const muonref_mpmat *g, int tr, size_t i, size_t j)
{
  return tr ? REF_AT(g, j, i) : REF_AT(g, i, j);
}

/* out <- x . y (length len, strides incx, incy) through J's accumulator. */
static void dot(jac *J, mpfr_ptr out, mpfr_srcptr x, size_t incx, mpfr_srcptr y, size_t incy, size_t len)
{
  mpfr_set_zero(J->acc, 1);
  muonref_ref_dot_acc(J->acc, x, incx, y, incy, len);
  mpfr_set(out, J->acc, MPFR_RNDN);
}

/* V0^T (row j = right singular vector j) from a binary64 SVD of T scaled by
 * 2^-E, E the largest exponent in T.  Returns 0 on success. */
static int double_svd_basis(double *vt, const muonref_mpmat *g, int tr, size_t m, size_t n)
{
  mpfr_exp_t E = mpfr_get_emin();
  for (size_t i = 0; i < m * n; i++)
    if (!mpfr_zero_p(g->e[i]) && mpfr_get_exp(g->e[i]) > E)
      E = mpfr_get_exp(g->e[i]);
  double *a = malloc(m * n * sizeof *a), *s = malloc(n * sizeof *s), *u = malloc(m * n * sizeof *u);
  int bad = !a || !s || !u;
  mpfr_t x;
  mpfr_init2(x, g->prec);
  for (size_t i = 0; !bad && i < m; i++)
    for (size_t j = 0; j < n; j++) {
      mpfr_mul_2si(x, tall_at(g, tr, i, j), -(long)E, MPFR_RNDN);
      a[i * n + j] = mpfr_get_d(x, MPFR_RNDN);
    }
  mpfr_clear(x);
  if (!bad)
    bad = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'S', (lapack_int)m, (lapack_int)n, a, (lapack_int)n, s, u,
                         (lapack_int)n, vt, (lapack_int)n) != 0;
  for (size_t i = 0; !bad && i < n * n; i++)
    bad = !isfinite(vt[i]);
  free(a), free(s), free(u);
  return bad;
}

/* Orthonormalizes the columns of J->V (modified Gram-Schmidt, two passes).
 * Returns 0, or 1 when a column collapses (the basis was not usable). */
static int orthonormalize(jac *J)
{
  size_t n = J->n;
  for (size_t j = 0; j < n; j++) {
    mpfr_ptr vj = J->V[j * n];
    for (int pass = 0; pass < 2; pass++)
      for (size_t i = 0; i < j; i++) {
        dot(J, J->gamma, J->V[i * n], 1, vj, 1, n);
        mpfr_neg(J->gamma, J->gamma, MPFR_RNDN);
        for (size_t k = 0; k < n; k++) /* v_j <- v_j - (v_i . v_j) v_i */
          mpfr_fma(vj + k, J->gamma, J->V[i * n + k], vj + k, MPFR_RNDN);
      }
    dot(J, J->alpha, vj, 1, vj, 1, n);
    mpfr_sqrt(J->alpha, J->alpha, MPFR_RNDN);
    if (mpfr_cmp_d(J->alpha, 0.5) < 0)
      return 1;
    for (size_t k = 0; k < n; k++)
      mpfr_div(vj + k, vj + k, J->alpha, MPFR_RNDN);
  }
  return 0;
}

/* The starting basis W in J->V: orthonormalized binary64 right singular
 * vectors, or the identity. */
static void start_basis(jac *J, const muonref_mpmat *g, int tr)
{
  size_t n = J->n;
  double *vt = malloc(n * n * sizeof *vt);
  int ok = vt && !double_svd_basis(vt, g, tr, J->m, n);
  for (size_t i = 0; ok && i < n * n; i++)
    mpfr_set_d(J->V[i], vt[i], MPFR_RNDN); /* column j of V0 = row j of V0^T */
  free(vt);
  if (ok && !orthonormalize(J))
    return;
  for (size_t j = 0; j < n; j++)
    for (size_t k = 0; k < n; k++)
      mpfr_set_ui(J->V[j * n + k], j == k, MPFR_RNDN);
}

/* Columns of B = T V. */
static void form_b(jac *J, const muonref_mpmat *g, int tr)
{
  size_t m = J->m, n = J->n, inc = tr ? g->cols : 1;
  for (size_t j = 0; j < n; j++) {
    for (size_t i = 0; i < m; i++)
      dot(J, J->B[j * m + i], tall_at(g, tr, i, 0), inc, J->V[j * n], 1, n);
  }
}

/* x <- c x - s y, y <- s x + c y over len elements. */
static void rotate(jac *J, mpfr_ptr x, mpfr_ptr y, size_t len)
{
  for (size_t k = 0; k < len; k++) {
    mpfr_fmms(J->t1, J->c, x + k, J->s, y + k, MPFR_RNDN);
    mpfr_fmma(J->t2, J->s, x + k, J->c, y + k, MPFR_RNDN);
    mpfr_swap(x + k, J->t1);
    mpfr_swap(y + k, J->t2);
  }
}

/* Orthogonalizes columns i < j if needed.  Returns 1 if it rotated.
 * Columns with squared norm <= J->thr_col (s_j <= 2^-(p/2) s_max) are left
 * alone: their content is rounding noise when g is rank-deficient, and the
 * rank rule refuses any result that has one. */
static int jacobi_pair(jac *J, size_t i, size_t j)
{
  size_t m = J->m, n = J->n;
  if (mpfr_cmp(J->nrm[i], J->thr_col) <= 0 || mpfr_cmp(J->nrm[j], J->thr_col) <= 0)
    return 0;
  dot(J, J->gamma, J->B[i * m], 1, J->B[j * m], 1, m);
  mpfr_mul(J->thr, J->nrm[i], J->nrm[j], MPFR_RNDN);
  mpfr_sqrt(J->thr, J->thr, MPFR_RNDN);
  mpfr_mul_2si(J->thr, J->thr, -(long)(J->p + 16), MPFR_RNDN);
  if (mpfr_cmpabs(J->gamma, J->thr) <= 0)
    return 0;
  /* zeta = (beta - alpha) / (2 gamma); t = sign(zeta) / (|zeta| + sqrt(1 + zeta^2));
   * c = 1 / sqrt(1 + t^2); s = c t: then (c x - s y) . (s x + c y) = 0. */
  mpfr_sub(J->zeta, J->nrm[j], J->nrm[i], MPFR_RNDN);
  mpfr_div(J->zeta, J->zeta, J->gamma, MPFR_RNDN);
  mpfr_div_2ui(J->zeta, J->zeta, 1, MPFR_RNDN);
  mpfr_set_ui(J->t1, 1, MPFR_RNDN);
  mpfr_hypot(J->t, J->zeta, J->t1, MPFR_RNDN);
  mpfr_abs(J->t2, J->zeta, MPFR_RNDN);
  mpfr_add(J->t, J->t, J->t2, MPFR_RNDN);
  mpfr_ui_div(J->t, 1, J->t, MPFR_RNDN);
  if (mpfr_sgn(J->zeta) < 0)
    mpfr_neg(J->t, J->t, MPFR_RNDN);
  mpfr_hypot(J->c, J->t, J->t1, MPFR_RNDN);
  mpfr_ui_div(J->c, 1, J->c, MPFR_RNDN);
  mpfr_mul(J->s, J->c, J->t, MPFR_RNDN);
  rotate(J, J->B[i * m], J->B[j * m], m);
  rotate(J, J->V[i * n], J->V[j * n], n);
  /* new squared norms alpha - t gamma, beta + t gamma (exact for the exact
   * rotation); recomputed from the columns at the start of every sweep */
  mpfr_mul(J->t, J->t, J->gamma, MPFR_RNDN);
  mpfr_sub(J->nrm[i], J->nrm[i], J->t, MPFR_RNDN);
  mpfr_add(J->nrm[j], J->nrm[j], J->t, MPFR_RNDN);
  return 1;
}

/* The squared column norms of B, from the columns. */
static void column_norms(jac *J)
{
  for (size_t j = 0; j < J->n; j++)
    dot(J, J->nrm[j], J->B[j * J->m], 1, J->B[j * J->m], 1, J->m);
}

/* Cyclic sweeps until one rotates nothing.  Returns the number of sweeps,
 * or -1 when MAX_SWEEPS did not suffice. */
static int jacobi(jac *J)
{
  for (int sweep = 1; sweep <= MAX_SWEEPS; sweep++) {
    size_t rotated = 0, hi = 0;
    column_norms(J);
    for (size_t j = 1; j < J->n; j++)
      if (mpfr_cmp(J->nrm[j], J->nrm[hi]) > 0)
        hi = j;
    mpfr_mul_2si(J->thr_col, J->nrm[hi], -2 * (long)(J->p / 2), MPFR_RNDN);
    for (size_t i = 0; i + 1 < J->n; i++)
      for (size_t j = i + 1; j < J->n; j++)
        rotated += (size_t)jacobi_pair(J, i, j);
    if (!rotated) {
      column_norms(J);
      return sweep;
    }
  }
  return -1;
}

/* The rank rule on the column norms s_j = sqrt(nrm_j): fails when
 * s_min <= 2^-(p/2) s_max. */
static int rank_rule(jac *J, const muonref_mpmat *g, muonref_error *err)
{
  size_t lo = 0, hi = 0;
  for (size_t j = 1; j < J->n; j++) {
    if (mpfr_cmp(J->nrm[j], J->nrm[lo]) < 0)
      lo = j;
    if (mpfr_cmp(J->nrm[j], J->nrm[hi]) > 0)
      hi = j;
  }
  long half = (long)(J->p / 2);
  if (mpfr_zero_p(J->nrm[hi]))
    return muonref_fail(err, MUONREF_ENUMERIC,
                        "Polar factor refused: the (%zu, %zu) input is zero (condition number inf); "
                        "its polar factor is not unique", g->rows, g->cols);
  mpfr_mul_2si(J->thr, J->nrm[hi], -2 * half, MPFR_RNDN); /* squared norms: (2^-(p/2))^2 */
  if (mpfr_cmp(J->nrm[lo], J->thr) > 0)
    return MUONREF_OK;
  mpfr_div(J->t, J->nrm[hi], J->nrm[lo], MPFR_RNDN);
  mpfr_sqrt(J->t, J->t, MPFR_RNDN);
  return muonref_fail(err, MUONREF_ENUMERIC,
                      "Polar factor refused: the (%zu, %zu) input is numerically rank-deficient: measured condition "
                      "number %.3e exceeds 2^%ld (precision %ld bits); its polar factor is not unique",
                      g->rows, g->cols, mpfr_get_d(J->t, MPFR_RNDN), half, (long)J->p);
}

/* q <- sum_j (b_j / s_j) v_j^T (tall), transposed into q when tr. */
static void form_q(jac *J, muonref_mpmat *q, int tr)
{
  size_t m = J->m, n = J->n;
  for (size_t j = 0; j < n; j++) {
    mpfr_sqrt(J->t, J->nrm[j], MPFR_RNDN);
    for (size_t i = 0; i < m; i++)
      mpfr_div(J->B[j * m + i], J->B[j * m + i], J->t, MPFR_RNDN);
  }
  for (size_t i = 0; i < m; i++)
    for (size_t k = 0; k < n; k++) {
      mpfr_set_zero(J->acc, 1);
      muonref_ref_dot_acc(J->acc, J->B[i], m, J->V[k], n, n);
      mpfr_set(tr ? REF_AT(q, k, i) : REF_AT(q, i, k), J->acc, MPFR_RNDN);
    }
}

/* sv <- the singular values sqrt(nrm_j), descending (insertion sort). */
static void form_sv(jac *J, muonref_mpmat *sv)
{
  size_t n = J->n;
  for (size_t j = 0; j < n; j++)
    mpfr_sqrt(J->nrm[j], J->nrm[j], MPFR_RNDN);
  for (size_t j = 1; j < n; j++)
    for (size_t k = j; k > 0 && mpfr_cmp(J->nrm[k - 1], J->nrm[k]) < 0; k--)
      mpfr_swap(J->nrm[k - 1], J->nrm[k]);
  for (size_t j = 0; j < n; j++)
    mpfr_set(sv->e[j], J->nrm[j], MPFR_RNDN);
}

static int check_args(const muonref_mpmat *q, const muonref_mpmat *sv, const muonref_mpmat *g, muonref_error *err)
{
  if (!q || !g)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ref_polar: q and g must not be NULL");
  size_t n = g->rows < g->cols ? g->rows : g->cols;
  if (n == 0)
    return muonref_fail(err, MUONREF_ESHAPE, "Polar factor input is empty (%zu, %zu): rows and cols must be >= 1",
                        g->rows, g->cols);
  if (q->rows != g->rows || q->cols != g->cols || q == g)
    return muonref_fail(err, MUONREF_ESHAPE, "Polar factor output is (%zu, %zu), the input (%zu, %zu): "
                        "shapes must match and the output must be another matrix", q->rows, q->cols, g->rows, g->cols);
  if (sv && (sv->rows != n || sv->cols != 1))
    return muonref_fail(err, MUONREF_ESHAPE, "Singular value output is (%zu, %zu): it must be (%zu, 1)", sv->rows,
                        sv->cols, n);
  size_t bad;
  if (!muonref_mpmat_is_finite(g, &bad))
    return muonref_fail(err, MUONREF_ENONFINITE, "Polar factor input element %zu (row %zu, col %zu) is %s", bad,
                        bad / g->cols, bad % g->cols, mpfr_nan_p(g->e[bad]) ? "nan" : "inf");
  return MUONREF_OK;
}

int muonref_ref_polar(muonref_mpmat *q, muonref_mpmat *sv, const muonref_mpmat *g, muonref_error *err)
{
  int st = check_args(q, sv, g, err);
  if (st)
    return st;
  int tr = g->rows < g->cols;
  size_t m = tr ? g->cols : g->rows, n = tr ? g->rows : g->cols;
  jac J;
  if (jac_init(&J, m, n, q->prec)) {
    jac_clear(&J);
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the polar factor of a (%zu, %zu) matrix", g->rows,
                        g->cols);
  }
  start_basis(&J, g, tr);
  form_b(&J, g, tr);
  if (jacobi(&J) < 0)
    st = muonref_fail(err, MUONREF_ENUMERIC, "Polar factor of the (%zu, %zu) input: Jacobi did not converge in %d sweeps",
                      g->rows, g->cols, MAX_SWEEPS);
  if (!st)
    st = rank_rule(&J, g, err);
  if (!st) {
    form_q(&J, q, tr);
    if (sv)
      form_sv(&J, sv);
  }
  jac_clear(&J);
  return st;
}
