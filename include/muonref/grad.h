/* muonref: gradient descriptors and the checks every step makes on them
 * before it writes anything (spec/muon.md, "Gradients"). */
#ifndef MUONREF_GRAD_H
#define MUONREF_GRAD_H

#include "muonref/api.h"
#include <stddef.h>
#include "muonref/options.h"
#include "muonref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum muonref_layout { MUONREF_DENSE = 0, MUONREF_SPARSE = 1 } muonref_layout;
typedef enum muonref_dtype { MUONREF_FLOAT32 = 0, MUONREF_COMPLEX64 = 1 } muonref_dtype;

/* The gradient of one parameter: numel float32 values in the parameter's
 * row-major layout, or data == NULL for "no gradient" (the parameter is
 * skipped).  layout and dtype exist so that callers can describe what a
 * framework handed them: only DENSE FLOAT32 gradients are accepted. */
typedef struct muonref_grad {
  const float *data;
  muonref_layout layout;
  muonref_dtype dtype;
} muonref_grad;

/* Checks gradient g of parameter number `index` with numel elements:
 *   sparse  -> MUONREF_EGRAD "Muon does not support sparse gradients"
 *              (the timm wording, timm/optim/muon.py)
 *   complex -> MUONREF_EGRAD "Muon does not support complex gradients"
 *   NaN/Inf -> MUONREF_ENONFINITE "Non-finite gradient for parameter 2:
 *              element 17 is nan"
 * A NULL data pointer (no gradient) is valid; g NULL is MUONREF_EOPTION
 * ("muonref_grad_check: g must not be NULL (gradient 2)"). */
MUONREF_API MUONREF_NODISCARD int muonref_grad_check(const muonref_grad *g, size_t index, size_t numel, muonref_error *err);

/* Gradient clipping by the global norm (muonref_options.clip_grad_norm,
 * the megatron profile; spec/muon.md section 3.1).  Source: NVIDIA/Megatron-LM
 * megatron/core/optimizer/clip_grads.py clip_grad_by_total_norm_fp32:
 * `clip_coeff = max_norm / (total_norm + 1.0e-6)`, `if clip_coeff < 1.0:`
 * scale every gradient by it (multi_tensor_scale, a float32 scale).
 *
 * muonref_clip_coeff: the factor every gradient is multiplied by, given
 * max_norm (>= 0; 0 = clipping off) and total_norm, the L2 norm of all
 * gradients of all groups (>= 0, binary64): c = max_norm / (total_norm +
 * 1e-6) in binary64 when that is below 1, else exactly 1.0 (no change;
 * also for max_norm 0). */
MUONREF_API double muonref_clip_coeff(double max_norm, double total_norm);

/* g[j] = R32(g[j] * R32(coeff)) for j < n, in place (the product of two
 * binary32 values is exact in binary64, so one rounding, as a float32
 * multiply by the float32 scale); coeff 1.0 or g NULL changes nothing. */
MUONREF_API void muonref_clip_scale(float *g, size_t n, double coeff);

/* The gradient a step uses (spec/muon.md 3): out[j] = -g[j] under maximize
 * (options.h maximize; exact), else g[j], then scaled by coeff as
 * muonref_clip_scale does (1.0: no clipping; the sign does not change the
 * norm coeff comes from).  g, out: n floats, one parameter in any layout;
 * out may be g. */
MUONREF_API void muonref_grad_used(float *out, const float *g, size_t n, int maximize, double coeff);

/* The gradient of decay_method L2 (options.h; Emerging-Optimizers
 * mixin.py @fd77292 `grad.add_(p, alpha=wd)`): out[j] = R32(fma(wd, p[j],
 * g[j])) for j < n, the product and sum rounded once to binary64, then to
 * binary32 (the exact R32(g + wd p) except where the binary64 value is a
 * binary32 midpoint: muonref_ref_l2_grad, ref.h, rounds once).  g, p, out:
 * n floats each, one parameter in any layout; out may be g.  Nothing for n
 * 0. */
MUONREF_API void muonref_l2_grad(float *out, const float *g, const float *p, size_t n, double wd);

/* The sum of squares of g[0..n) in binary64 (the fast path's norm:
 * total_norm = sqrt of the sum over every gradient); 0 for g NULL. */
MUONREF_API double muonref_grad_sumsq(const float *g, size_t n);

/* keras' gradient clipping (muonref_clip_form KERAS; spec/muon.md 3.2),
 * as keras-team/keras keras/src/optimizers/base_optimizer.py @3422977a
 * computes it under the torch backend: every Python number becomes a
 * float32 tensor, every operation is float32.  sumsq: the sum of squares
 * of one gradient (binary64; the fast path's muonref_grad_sumsq, the
 * reference's exact sum rounded to binary32), whose binary32 rounding
 * stands for the port's float32 `ops.sum(ops.square(g))` (a port sums in
 * its own order: a few ulps apart).
 *
 * muonref_clip_keras_norm: R32(sqrt(R32(sumsq))), the float32 L2 norm. */
MUONREF_API double muonref_clip_keras_norm(double sumsq);

/* clip_by_global_norm: the float32 scale every gradient is multiplied by,
 * s = R32(R32(c) * min(R32(1 / N32), R32(1 / c))) + (N32 - N32) with c = max_norm (> 0),
 * N32 = R32(sqrt(R32(sum_i R32(sumsq[i])))) over the n present gradients
 * (`ops.sum(ops.stack(squared_norms))`, here the sum in binary64: exact
 * for binary32 terms within 2^29 of each other).  Applied always, also
 * below the bound (s is then R32(R32(c) R32(1 / c)): 1 or an ulp from it,
 * 1 + 2^-23 for c = 0.007); N32 = 0 gives 1 / N32 = inf and s =
 * R32(R32(c) R32(1 / c)); a sum of squares beyond binary32 (N32 = inf)
 * gives NaN, as keras' `+ (use_norm - use_norm)` does.  Multiply with
 * muonref_clip_scale. */
MUONREF_API double muonref_clip_keras_global(double max_norm, const double *sumsq, size_t n);

/* Paddle's ClipGradByGlobalNorm (muonref_clip_form PADDLE; spec/muon.md
 * 3.2): the float32 scale s = R32(c32 / max(N32, c32)), c32 = R32(max_norm)
 * (> 0), N32 = R32(sqrt(S32)), S32 the binary32 sum, in order, of each
 * present gradient's R32(sumsq[i]) (paddle.add_n of squared_l2_norm); 1
 * exactly at or below the bound; 0 for an infinite N32, 1 for a NaN one
 * (paddle.maximum is `a > b ? a : b`: the NaN gradients stay NaN).  PaddlePaddle python/paddle/nn/clip.py
 * ClipGradByGlobalNorm._dygraph_clip (auto_skip_clip False, its default).
 * Multiply with muonref_clip_scale. */
MUONREF_API double muonref_clip_paddle_global(double max_norm, const double *sumsq, size_t n);

/* _clip_by_norm (keras' clipnorm, clip_grad_norm_each): g[j] =
 * R32(R32(g[j] R32(c)) / max(n32, R32(c))) for j < n, in place, with
 * n32 = muonref_clip_keras_norm(sumsq) and c = max_norm (> 0); applied
 * always (below the bound each value is R32(R32(g c) / c), g or one ulp
 * from it).  g NULL changes nothing. */
MUONREF_API void muonref_clip_keras_each(float *g, size_t n, double max_norm, double sumsq);

/* The global scale of one step's gradients under o's clip_grad_norm and
 * clip_grad_form (spec/muon.md 3.1, 3.2): 1.0 where clip_grad_norm is 0;
 * MEGATRON muonref_clip_coeff(clip_grad_norm, norm), norm the global L2
 * norm of the step's gradients (after the loss scale); KERAS
 * muonref_clip_keras_global(clip_grad_norm, sumsq, n), sumsq[0..n) each
 * present gradient's sum of squares; PADDLE muonref_clip_paddle_global
 * from the same.  Each caller computes the norms in its own precision (the
 * fast path in binary64, the reference exactly): norm is read under
 * MEGATRON only, sumsq under KERAS and PADDLE only.  Multiply each
 * gradient by it with muonref_clip_gradient. */
MUONREF_API double muonref_clip_global(const muonref_options *o, double norm, const double *sumsq, size_t n);

/* One gradient's clipping, in place, in the ports' order (spec/muon.md
 * 3.2): the global scale s (muonref_clip_scale; 1.0 changes nothing), then
 * o's clip_grad_norm_each by keras' formula from sumsq, the gradient's own
 * sum of squares (read only then), then o's clip_grad_value clamp.  g:
 * n floats, one parameter in any layout. */
MUONREF_API void muonref_clip_gradient(const muonref_options *o, float *g, size_t n, double s, double sumsq);

/* keras' unscaling (loss_scale, BaseOptimizer.apply `g / scale`): g[j] =
 * R32(g[j] / R32(s)) for j < n, in place (binary64 division of binary32
 * values, rounded once more: the binary32 quotient); s > 0; g NULL
 * changes nothing. */
MUONREF_API void muonref_grad_unscale(float *g, size_t n, double s);

/* clipvalue (clip_grad_value): g[j] = min(max(g[j], -R32(v)), R32(v)) for
 * j < n, in place (keras `ops.clip(g, -v, v)`, torch.clip on float32
 * bounds); v > 0; g NULL changes nothing. */
MUONREF_API void muonref_clip_value(float *g, size_t n, double v);

#ifdef __cplusplus
}
#endif
#endif
