/* muonref: helpers shared by the files of ref/ (not installed). */
#ifndef MUONREF_REF_INTERNAL_H
#define MUONREF_REF_INTERNAL_H

#include <stddef.h>
#include <mpfr.h>
#include "muonref/mpmat.h"

/* The element (i, j) of m as an mpfr_ptr. */
#define REF_AT(m, i, j) ((m)->e[(i) * (m)->cols + (j)])

/* acc <- acc + sum_{k < n} x[k * incx] y[k * incy], each term added by one
 * fused multiply-add rounded to acc's precision.  x and y point to the
 * first elements of rows or columns of mpmat storage. */
void muonref_ref_dot_acc(mpfr_ptr acc, mpfr_srcptr x, size_t incx, mpfr_srcptr y, size_t incy, size_t n);

#endif
