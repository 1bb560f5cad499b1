/* muonref: MPFR matrices (see mpmat.h).  Storage is one array of mpfr_t,
 * row-major; products use fused multiply-adds into a register with
 * MUONREF_REF_GUARD extra bits, rounded once to the destination. */
#include <stdint.h>
#include <stdlib.h>
#include "muonref/mpmat.h"
#include "ref/mpround.h"
#include "ref_internal.h"

int muonref_mpmat_init(muonref_mpmat *m, size_t rows, size_t cols, mpfr_prec_t prec)
{
  if (!m)
    return MUONREF_EOPTION;
  m->rows = m->cols = 0;
  m->prec = prec;
  m->e = NULL;
  if (prec < MUONREF_REF_PREC_MIN || prec > MPFR_PREC_MAX || (cols && rows > SIZE_MAX / sizeof(mpfr_t) / cols))
    return MUONREF_EOPTION;
  size_t n = rows * cols;
  if (n) {
    m->e = malloc(n * sizeof *m->e);
    if (!m->e)
      return MUONREF_ENOMEM;
    for (size_t i = 0; i < n; i++)
      mpfr_init2(m->e[i], prec), mpfr_set_zero(m->e[i], 1);
  }
  m->rows = rows;
  m->cols = cols;
  return MUONREF_OK;
}

void muonref_mpmat_clear(muonref_mpmat *m)
{
  if (!m)
    return;
  for (size_t i = 0; m->e && i < m->rows * m->cols; i++)
    mpfr_clear(m->e[i]);
  free(m->e);
  m->e = NULL;
  m->rows = m->cols = 0;
}

void muonref_mpmat_set_float(muonref_mpmat *m, const float *x)
{
  for (size_t i = 0; m && x && i < m->rows * m->cols; i++)
    mpfr_set_flt(m->e[i], x[i], MPFR_RNDN);
}

void muonref_mpmat_set_double(muonref_mpmat *m, const double *x)
{
  for (size_t i = 0; m && x && i < m->rows * m->cols; i++)
    mpfr_set_d(m->e[i], x[i], MPFR_RNDN);
}

void muonref_mpmat_get_float(float *x, const muonref_mpmat *m)
{
  for (size_t i = 0; m && x && i < m->rows * m->cols; i++)
    x[i] = muonref_mpfr_get_float(m->e[i]);
}

void muonref_mpmat_get_double(double *x, const muonref_mpmat *m)
{
  for (size_t i = 0; m && x && i < m->rows * m->cols; i++)
    x[i] = muonref_mpfr_get_double(m->e[i]);
}

void muonref_mpmat_get_bf16(uint16_t *x, const muonref_mpmat *m)
{
  for (size_t i = 0; m && x && i < m->rows * m->cols; i++)
    x[i] = muonref_mpfr_get_bf16(m->e[i]);
}

int muonref_mpmat_is_finite(const muonref_mpmat *m, size_t *bad)
{
  if (!m)
    return 0;
  for (size_t i = 0; i < m->rows * m->cols; i++)
    if (!mpfr_number_p(m->e[i])) {
      if (bad)
        *bad = i;
      return 0;
    }
  return 1;
}

int muonref_mpmat_copy(muonref_mpmat *dst, const muonref_mpmat *src)
{
  if (!dst || !src)
    return MUONREF_EOPTION;
  if (dst->rows != src->rows || dst->cols != src->cols)
    return MUONREF_ESHAPE;
  for (size_t i = 0; dst != src && i < src->rows * src->cols; i++)
    mpfr_set(dst->e[i], src->e[i], MPFR_RNDN);
  return MUONREF_OK;
}

int muonref_mpmat_transpose(muonref_mpmat *dst, const muonref_mpmat *src)
{
  if (!dst || !src)
    return MUONREF_EOPTION;
  if (dst->rows != src->cols || dst->cols != src->rows || dst == src)
    return MUONREF_ESHAPE;
  for (size_t i = 0; i < src->rows; i++)
    for (size_t j = 0; j < src->cols; j++)
      mpfr_set(REF_AT(dst, j, i), REF_AT(src, i, j), MPFR_RNDN);
  return MUONREF_OK;
}

void muonref_ref_dot_acc(mpfr_ptr acc, mpfr_srcptr x, size_t incx, mpfr_srcptr y, size_t incy, size_t n)
{
  for (size_t k = 0; k < n; k++)
    mpfr_fma(acc, x + k * incx, y + k * incy, acc, MPFR_RNDN);
}

int muonref_mpmat_mul(muonref_mpmat *c, const muonref_mpmat *a, const muonref_mpmat *b)
{
  if (!c || !a || !b)
    return MUONREF_EOPTION;
  if (a->cols != b->rows || c->rows != a->rows || c->cols != b->cols || c == a || c == b)
    return MUONREF_ESHAPE;
  mpfr_t acc;
  mpfr_init2(acc, c->prec + MUONREF_REF_GUARD);
  for (size_t i = 0; i < c->rows; i++)
    for (size_t j = 0; j < c->cols; j++) {
      mpfr_set_zero(acc, 1);
      if (a->cols)
        muonref_ref_dot_acc(acc, REF_AT(a, i, 0), 1, REF_AT(b, 0, j), b->cols, a->cols);
      mpfr_set(REF_AT(c, i, j), acc, MPFR_RNDN);
    }
  mpfr_clear(acc);
  return MUONREF_OK;
}

int muonref_mpmat_gram(muonref_mpmat *c, const muonref_mpmat *a)
{
  if (!c || !a)
    return MUONREF_EOPTION;
  if (c->rows != a->rows || c->cols != a->rows || c == a)
    return MUONREF_ESHAPE;
  mpfr_t acc;
  mpfr_init2(acc, c->prec + MUONREF_REF_GUARD);
  for (size_t i = 0; i < a->rows; i++)
    for (size_t j = i; j < a->rows; j++) {
      mpfr_set_zero(acc, 1);
      if (a->cols)
        muonref_ref_dot_acc(acc, REF_AT(a, i, 0), 1, REF_AT(a, j, 0), 1, a->cols);
      mpfr_set(REF_AT(c, i, j), acc, MPFR_RNDN);
      if (j != i)
        mpfr_set(REF_AT(c, j, i), REF_AT(c, i, j), MPFR_RNDN);
    }
  mpfr_clear(acc);
  return MUONREF_OK;
}

int muonref_mpmat_axpby(muonref_mpmat *c, double alpha, const muonref_mpmat *a, double beta,
                        const muonref_mpmat *b)
{
  if (!c || !a || !b)
    return MUONREF_EOPTION;
  if (a->rows != c->rows || a->cols != c->cols || b->rows != c->rows || b->cols != c->cols)
    return MUONREF_ESHAPE;
  mpfr_t al, be;
  mpfr_init2(al, 53), mpfr_init2(be, 53);
  mpfr_set_d(al, alpha, MPFR_RNDN), mpfr_set_d(be, beta, MPFR_RNDN);
  for (size_t i = 0; i < c->rows * c->cols; i++)
    mpfr_fmma(c->e[i], al, a->e[i], be, b->e[i], MPFR_RNDN);
  mpfr_clear(al), mpfr_clear(be);
  return MUONREF_OK;
}

void muonref_mpmat_frobenius(mpfr_ptr out, const muonref_mpmat *m)
{
  if (!out)
    return;
  if (!m) {
    mpfr_set_nan(out);
    return;
  }
  mpfr_t acc;
  mpfr_init2(acc, mpfr_get_prec(out) + MUONREF_REF_GUARD);
  mpfr_set_zero(acc, 1);
  if (m->e)
    muonref_ref_dot_acc(acc, m->e[0], 1, m->e[0], 1, m->rows * m->cols);
  mpfr_sqrt(out, acc, MPFR_RNDN);
  mpfr_clear(acc);
}
