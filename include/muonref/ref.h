/* muonref: the high-precision reference (ref/): exact Newton-Schulz, the
 * exact polar factor, the exact optimizer step, and the check that the
 * rounded outputs do not depend on the working precision.
 *
 * Semantics (routing, scale rule, scalar schedule, coefficient schedule)
 * come from core/ only; the reference does the tensor arithmetic in MPFR
 * with those binary64 scalars as exact inputs.  spec/reference.md gives
 * the algorithms, the precision, the rank rule and the error bounds.
 * Every function below refuses a NULL pointer it needs (the outputs the
 * comment does not call optional, the inputs, the options, the route and
 * the state) with MUONREF_EOPTION naming the arguments, e.g.
 * "muonref_ref_step: o, r, param and state must not be NULL", and a
 * (rows, cols) whose element count overflows. */
#ifndef MUONREF_REF_H
#define MUONREF_REF_H

#include "muonref/api.h"
#include <stddef.h>
#include <mpfr.h>
#include "muonref/mpmat.h"
#include "muonref/param_state.h"
#include "muonref/options.h"
#include "muonref/route.h"
#include "muonref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out <- NS(in), the Newton-Schulz iteration of spec/muon.md without
 * rounding: X = in (in^T when rows > cols), d = ||X||_F + eps (ADD) or
 * max(||X||_F, eps) (CLAMP), X = X / d (0 when d = 0), then for each step k
 * with (a, b, c) = muonref_ns_coeff_at(o, k): A = X X^T, B = b A + c A A,
 * X = a X + B X; transposed back.  o->ns_format is ignored.
 * in and out are (rows, cols) row-major, rows, cols >= 1; out's precision is
 * the working precision (every matrix product and sum is rounded to it);
 * in may have any precision and may be out.
 * Errors: MUONREF_EOPTION (muonref_options_validate's message),
 * MUONREF_ESHAPE (shapes differ or are empty), MUONREF_ENONFINITE (NaN or
 * Inf in `in`, naming the element), MUONREF_ENOMEM. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_ns(muonref_mpmat *out, const muonref_mpmat *in, const muonref_options *o, muonref_error *err);

/* The polar factor of g: q <- U V^T for the thin SVD g = U diag(s) V^T,
 * g and q (rows, cols) row-major (q has orthonormal columns when rows >=
 * cols, orthonormal rows otherwise), and sv <- s (min(rows, cols), 1),
 * descending, when sv is not NULL.  q's precision is the working precision
 * (the internal one is prec(q) + 32 bits).
 * Method (ref/polar.c): a binary64 SVD (LAPACKE_dgesdd) supplies a nearly
 * orthogonal basis W, orthonormalized in MPFR; one-sided Jacobi rotations
 * on g W then converge to g V = U diag(s) with V = W J orthogonal, so the
 * factor is that of g itself.
 * Rank rule: refused with MUONREF_ENUMERIC when s_min <= 2^-(prec/2) s_max
 * (including g = 0); the message reports the measured condition number.
 * Other errors: MUONREF_ESHAPE (q not g's shape, sv not (min, 1), empty g),
 * MUONREF_ENONFINITE, MUONREF_ENOMEM, MUONREF_ENUMERIC for Jacobi not
 * converging within its sweep limit.  q must not be g. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_polar(muonref_mpmat *q, muonref_mpmat *sv, const muonref_mpmat *g, muonref_error *err);

/* One exact optimizer step of one parameter routed as *r under *o (the
 * branch, shape and scalars from core: muonref_muon_plan_make,
 * muonref_adamw_plan_make), with tensor arithmetic in MPFR at `prec` bits
 * (>= MUONREF_REF_PREC_MIN).  param, grad and the state buffers hold
 * r->numel float32 values in the parameter's row-major layout; the caller
 * owns them.  Muon uses state->momentum_buffer, AdamW state->exp_avg and
 * state->exp_avg_sq (the other pointers are not touched).  An uninitialized
 * state is taken as zeros (its buffers are overwritten).  After the step,
 * state->initialized = 1, use_muon = r->use_muon, numel = r->numel and
 * step is incremented; every float output is the exact value rounded once
 * to nearest-even float32 (round-to-odd intermediates, mpround.h).
 * Newton-Schulz is the exact iteration (muonref_ref_ns) for ns_format EXACT
 * and FP32; for BF16 it is the bf16-semantics iteration of spec/muon.md
 * section 7 (muonref_ref_ns_bf16) on U rounded to binary32, everything else
 * staying exact (see muonref_ref_step_flags for its certificate).
 * A Muon parameter's r->batch matrices (conv_mode) are each normalised
 * and orthogonalised on their own; under scale_format BF16_UPDATE (s) or
 * BF16_ALPHA (lr s, dion) in the bf16 format the output is multiplied by
 * that factor and rounded to bf16 before the update (core/plan.h).
 * grad NULL: no step, nothing is written, MUONREF_OK; under missing_grad
 * ZEROS the step runs with a zero gradient instead.
 * Errors (nothing is written, except that an uninitialized state's buffers
 * may already be zeroed on MUONREF_ENOMEM): MUONREF_EOPTION (invalid options, prec out
 * of range), MUONREF_ESTATE (an initialized state of the other branch or
 * another size, a missing buffer, step < 0, or a step count already at
 * MUONREF_MAX_STEP that the step would advance), MUONREF_ENONFINITE (NaN/Inf in
 * grad, param or state, naming the array and element), MUONREF_ENOMEM, and
 * muonref_ref_ns's errors. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_step(const muonref_options *o, const muonref_route *r, float *param, muonref_param_state *state,
                                                   const float *grad, mpfr_prec_t prec, muonref_error *err);

/* muonref_ref_step, and for o->ns_format == MUONREF_NS_BF16 the
 * certificate of the bf16 Newton-Schulz input and result into *ns_uncertain
 * (may be NULL; bits of ns_rounded.h, plus MUONREF_NSR_INPUT_NOT_FP32 when
 * the Newton-Schulz input U is not exactly a binary32 matrix), OR-ed into
 * *ns_uncertain: the caller sets it to 0 first. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_step_flags(const muonref_options *o, const muonref_route *r, float *param, muonref_param_state *state,
                                                         const float *grad, mpfr_prec_t prec, unsigned *ns_uncertain, muonref_error *err);

/* ---- correct rounding, certified (ref/crcheck.c) ----
 * Each *_cr function certifies every published output by an explicit error
 * bound (spec/reference.md section 5): the result at q = 2 * prec carries
 * an elementwise bound B (a running bound for Newton-Schulz and the step,
 * an a priori one for the polar factor), and an output is published only
 * when the whole interval [v - B, v + B] rounds to one value of its format
 * (MPFR's can-round test).  Outputs that cannot be rounded are recomputed
 * at 2q, then 4q (up to 8 * prec, Ziv's strategy); when some still cannot,
 * nothing is published and MUONREF_ENUMERIC is returned.  As a second,
 * independent check the results at prec and at 2 * prec are rounded and
 * compared bit for bit; any disagreement is reported (MUONREF_ENUMERIC),
 * never hidden.  The sign of a zero result is not certified. */
typedef struct muonref_ref_cr_report {
  mpfr_prec_t prec, prec_hi; /* the two working precisions               */
  size_t n_outputs;          /* rounded outputs compared                 */
  size_t n_differ;           /* of which differ between prec and prec_hi */
  size_t first_index;        /* the first that differs (n_differ > 0)    */
  double value_lo, value_hi; /* its value at prec and at prec_hi         */
  unsigned ns_uncertain;     /* steps with ns_format bf16: the MUONREF_NSR_*
                                reasons the bf16 Newton-Schulz result is not
                                certified (0: certified; ns_rounded.h)     */
  /* the error-bound certificate (fields added after the above): */
  size_t n_published;        /* outputs the function writes (certified ones) */
  size_t n_certified;        /* of which the bound at prec_cert certified    */
  size_t n_uncertified;      /* not certified at the highest precision tried */
  mpfr_prec_t prec_cert;     /* precision of the published results (2 prec,
                                or more after retries; 0: none certified)   */
  int retries;               /* recomputations at higher precision (Ziv)     */
  double bound_log2;         /* log2 of the largest absolute error bound of a
                                published output at prec_cert (-inf: none)  */
} muonref_ref_cr_report;

/* The largest working precision a *_cr function retries at: 8 * prec. */
#define MUONREF_REF_CR_MAX_FACTOR 8

/* NS of the float32 (rows, cols) matrix `in`: out32 (float32) and out64
 * (binary64, may be NULL) receive the certified results (prec_cert).
 * Certifies out32 and, when given, out64 with the running bound of
 * spec/reference.md 5.1; compares the float32 and binary64 roundings at
 * prec and 2 prec.  Returns MUONREF_OK when all agree and all published
 * outputs are certified, MUONREF_ENUMERIC (with the count and first element
 * in the message and *rep) otherwise, or muonref_ref_ns's errors.  rep may
 * be NULL. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_ns_cr(float *out32, double *out64, const float *in, size_t rows, size_t cols,
                                                    const muonref_options *o, mpfr_prec_t prec, muonref_ref_cr_report *rep, muonref_error *err);

/* Polar factor of the binary64 (rows, cols) matrix g: q32 (float32), q64
 * (binary64, may be NULL) and sv (min(rows, cols) binary64 singular
 * values, may be NULL) from prec_cert; certifies the published ones with
 * the a priori bound of spec/reference.md 5.3 (not a running bound) and
 * compares the float32 and binary64 roundings of q and the binary64
 * singular values at prec and 2 prec.  Status as muonref_ref_ns_cr, plus
 * muonref_ref_polar's errors. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_polar_cr(float *q32, double *q64, double *sv, const double *g, size_t rows, size_t cols,
                                                       mpfr_prec_t prec, muonref_ref_cr_report *rep, muonref_error *err);

/* muonref_ref_step at prec and at 2 * prec on copies; compares the float32
 * parameter and state buffers, and certifies them with the running bound of
 * spec/reference.md 5.2 (retrying at 4 and 8 prec).  When they agree and
 * are certified the prec_cert results are written as muonref_ref_step
 * would; otherwise nothing is written and MUONREF_ENUMERIC is returned. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_step_cr(const muonref_options *o, const muonref_route *r, float *param, muonref_param_state *state,
                                                      const float *grad, mpfr_prec_t prec, muonref_ref_cr_report *rep, muonref_error *err);

/* The global L2 norm of gradient clipping (options.h clip_grad_norm,
 * megatron): sqrt of the sum of g^2 over grads[i][0..numel[i]) for every i
 * < n with grads[i] != NULL (a missing gradient counts as none), computed
 * exactly in MPFR (the squares and their sum at 1200 bits hold every
 * binary32 square of up to 2^32 values without rounding) and rounded once
 * to nearest binary64 into *out.  The coefficient and the scaled gradients
 * follow from it by muonref_clip_coeff and muonref_clip_scale (grad.h), as
 * in the fast path.  MUONREF_EOPTION for NULL out, or numel NULL with n > 0. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_grad_norm(double *out, size_t n, const float *const *grads, const size_t *numel,
                                                        muonref_error *err);

/* The sum of squares of one gradient g[0..n) for keras' clipping
 * (muonref_clip_form KERAS, grad.h): computed exactly in MPFR (as
 * muonref_ref_grad_norm) and rounded once to nearest binary32, into *out
 * as a double (what a float32 `ops.sum(ops.square(g))` computes, up to its
 * order of summation).  g NULL: 0.  MUONREF_EOPTION for NULL out. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_grad_sumsq32(double *out, const float *g, size_t n, muonref_error *err);

/* The gradient of decay_method L2 (options.h; Emerging-Optimizers
 * mixin.py @fd77292 `grad.add_(p, alpha=wd)`): out[j] = R32(g[j] + wd
 * p[j]) for j < n, the exact sum rounded once to nearest binary32 (MPFR:
 * the 77-bit product and the sum rounded to odd at 80 bits, then to
 * binary32, subnormals included).  g, p: n floats each (one parameter, in
 * any layout, the same for both); wd: the weight decay, binary64; out: n
 * floats, may be g.  The fast path's muonref_l2_grad (grad.h) gives the
 * same floats except where binary64 rounds to a binary32 midpoint.
 * MUONREF_EOPTION for NULL arrays with n > 0, or a non-finite wd. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_l2_grad(float *out, const float *g, const float *p, size_t n, double wd,
                                                     muonref_error *err);

#ifdef __cplusplus
}
#endif
#endif
