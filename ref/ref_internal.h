/* muonref: helpers shared by the files of ref/ (not installed). */
#ifndef MUONREF_REF_INTERNAL_H
#define MUONREF_REF_INTERNAL_H

#include <stddef.h>
#include <mpfr.h>
#include "muonref/mpmat.h"
#include "muonref/param_state.h"
#include "muonref/options.h"
#include "muonref/route.h"
#include "muonref/status.h"

/* The element (i, j) of m as an mpfr_ptr. */
#define REF_AT(m, i, j) ((m)->e[(i) * (m)->cols + (j)])

/* acc <- acc + sum_{k < n} x[k * incx] y[k * incy], each term added by one
 * fused multiply-add rounded to acc's precision.  x and y point to the
 * first elements of rows or columns of mpmat storage. */
void muonref_ref_dot_acc(mpfr_ptr acc, mpfr_srcptr x, size_t incx, mpfr_srcptr y, size_t incy, size_t n);

/* ---- error bounds (ref/bound.c, spec/reference.md section 5) ----
 * A bound b >= 0 is in units of 2^-p, p the working precision of the value
 * it bounds: |computed - exact| <= b 2^-p.  Binary64 formulas producing
 * bounds are multiplied by REF_BOUND_SAFETY (it covers the binary64
 * rounding of sums of up to 2^24 non-negative terms). */
#define REF_BOUND_SAFETY (1.0 + 0x1p-28)
/* Per-term allowance for binary64 products that underflow. */
#define REF_BOUND_SLACK 0x1p-1074

/* |x| as a binary64 rounded up (+Inf for NaN or beyond binary64). */
double muonref_ref_absu(mpfr_srcptr x);

/* 2^-p as a binary64 (2^-1074 when smaller: an over-estimate). */
double muonref_ref_ulp_unit(mpfr_prec_t p);

/* x 2^e rounded up (x >= 0; results below the binary64 range give 2^-1074). */
double muonref_ref_ldexp_up(double x, long e);

/* 1 if every real in [v - b 2^-p, v + b 2^-p] rounds to nearest-even to the
 * same value of the format (fprec, qmin, emax) of mpround.h (the sign of a
 * zero result is not distinguished), else 0 (also for a NaN or Inf v or an
 * infinite or NaN b).  The test of MPFR's mpfr_can_round, on the format's
 * exponent range. */
int muonref_ref_can_round(mpfr_srcptr v, double b, mpfr_prec_t p, mpfr_prec_t fprec, mpfr_exp_t qmin,
                          mpfr_exp_t emax);

/* muonref_ref_ns with a running error bound: bound (NULL or rows * cols
 * doubles, out's layout) receives elementwise bounds on |out - NS(in_true)|
 * in units of 2^-prec(out), where in_true is the exact input and in_err
 * (NULL: in is exact) bounds |in - in_true| elementwise in the same units.
 * The bound is +Inf where none can be given (see spec/reference.md 5.1). */
int muonref_ref_ns_bounded(muonref_mpmat *out, double *bound, const muonref_mpmat *in, const double *in_err,
                           const muonref_options *o, muonref_error *err);

/* muonref_ref_step_flags, and when n_uncertified is not NULL, the number
 * of stored float32 outputs whose correct rounding the running bound does
 * not establish (added to *n_uncertified; spec/reference.md 5.2). */
int muonref_ref_step_bounded(const muonref_options *o, const muonref_route *r, float *param,
                             muonref_param_state *state, const float *grad, mpfr_prec_t prec,
                             unsigned *ns_uncertain, size_t *n_uncertified, muonref_error *err);

/* muonref_ref_ns_bf16, its result remembered per thread (ref/ns_memo.c):
 * a call with the same options (byte for byte) and the same input (shape
 * and bits) as this thread's last successful call copies that call's out
 * and *uncertain (may be NULL) instead of computing them again; the same
 * results and errors as muonref_ref_ns_bf16 otherwise.  Used by the
 * reference step, whose rounding check runs the same bf16 Newton-Schulz
 * at two precisions. */
int muonref_ref_ns_bf16_memo(float *out, const float *in, size_t rows, size_t cols, const muonref_options *o,
                             unsigned *uncertain, muonref_error *err);

#endif
