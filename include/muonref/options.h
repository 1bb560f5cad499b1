/* muonref: the options of a Muon parameter group and their validation.
 *
 * One muonref_options value describes one parameter group completely: the
 * NeMo options (lr, momentum, nesterov, ns_steps, weight_decay, scale_mode,
 * adam_*, use_muon) and the fields that express every other port's
 * behaviour (momentum form, coefficient list and order, normalisation,
 * number formats, routing rules, decay and AdamW variants, the catalogue of
 * checks), grouped by the stage of the step that reads them.  spec/muon.md
 * defines every field, its default and its valid range; a profile
 * (profile.h, its record spec/profiles/NAME.json) gives a complete value.
 * The enum comments say what each value computes and the port it was taken
 * from; which profiles use a value is in their records, not repeated here.
 * The struct is plain data: it owns no memory and may be copied with `=`. */
#ifndef MUONREF_OPTIONS_H
#define MUONREF_OPTIONS_H

#include "muonref/api.h"
#include <stddef.h>
#include "muonref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most coefficient triples a list may hold (timm's longest list has 8). */
#define MUONREF_MAX_COEFFS 32
/* Most Newton-Schulz steps accepted (torch.optim.Muon: ns_steps < 100). */
#define MUONREF_MAX_NS_STEPS 1000

/* How the gradient enters the momentum buffer M (spec/muon.md, Momentum).
 *   SUM: M <- beta M + G            (NeMo's seed; KellerJordan/Muon before 2025-02)
 *   EMA: M <- beta M + (1 - beta) G (KellerJordan/Muon @857d1ad, torch.optim.Muon:
 *                                    `buf.lerp_(grad, 1 - momentum)`) */
typedef enum muonref_momentum_form {
  MUONREF_MOMENTUM_SUM = 0,
  MUONREF_MOMENTUM_EMA = 1
} muonref_momentum_form;

/* Which coefficient triple step k (0-based) uses when ns_steps exceeds the
 * list length n: CYCLE uses k mod n (one triple: the same every step, NeMo;
 * Paddle's `coeffs[i % len(coeffs)]`), REPEAT_LAST uses min(k, n - 1)
 * (timm: `coeffs + [coeffs[-1]] * (steps - n)`).
 * LIST: a list of n >= 2 triples runs each triple once, n steps whatever
 * ns_steps is (ns_steps >= n is only validated, under the OPTAX catalogue
 * with optax's message "Not enough coeffs to perform <ns_steps> steps");
 * a single triple runs ns_steps times (google-deepmind/optax
 * optax/contrib/_muon.py @2edbcbe2 orthogonalize_via_newton_schulz: a
 * (3,) triple `jax.lax.fori_loop(0, ns_steps, ...)`, an (n, 3) list
 * `jax.lax.scan(..., ns_coeffs)`; scale_by_muon.init_fn: `if not
 * ns_coeffs.shape[0] <= ns_steps: raise ValueError(f'Not enough coeffs to
 * perform {ns_steps} steps')`; spec/profiles/optax.md 4).  optax's (1, 3)
 * list, which runs once, is not expressible. */
typedef enum muonref_coeff_order {
  MUONREF_ORDER_CYCLE = 0,
  MUONREF_ORDER_REPEAT_LAST = 1,
  MUONREF_ORDER_LIST = 2
} muonref_coeff_order;

/* How the normalisation epsilon enters X / d (spec/muon.md, Newton-Schulz).
 *   ADD:   d = ||X||_F + eps        (NeMo's seed: `X / (X.norm() + eps)`)
 *   CLAMP: d = max(||X||_F, eps)    (torch.optim.Muon: `clamp(min=eps)`;
 *                                    F.normalize in Emerging-Optimizers, Paddle) */
typedef enum muonref_eps_mode {
  MUONREF_EPS_ADD = 0,
  MUONREF_EPS_CLAMP = 1,
  /* ADD_SCALED: d = ||X||_F + eps', eps' = ns_eps * (cols / rows) ** 0.5 in
   *            binary64, (rows, cols) the matrix Newton-Schulz is given, before
   *            its transpose (timm's scale_eps=True: timm/optim/muon.py
   *            @aa4b5850 scale_eps_for_ns: `dout, din = (shape[-2],
   *            shape[-1])`, `return eps * (din / dout) ** 0.5`, then
   *            zeropower_via_newtonschulz: `X.div_(X.norm(...).mul(
   *            safety_factor).add_(eps))`, "use add instead of clamp") */
  MUONREF_EPS_ADD_SCALED = 2
} muonref_eps_mode;

/* The shape factor s of the update -lr * s * O of a (rows, cols) matrix.
 *   FAN_IN:    sqrt(max(1, rows/cols))   (NeMo default, modded-nanogpt;
 *              torch.optim.Muon's adjust_lr_fn "original")
 *   FAN_OUT:   sqrt(max(1, cols/rows))   (the same rule on (in, out) layouts)
 *   NONE:      1
 *   RMS_ADAMW: 0.2 sqrt(max(rows, cols)) (torch.optim.Muon's
 *              "match_rms_adamw", Moonlight: arXiv:2502.16982 section 2.2)
 *   RMS_TO_RMS: sqrt(rows/cols)          (timm's adjust_lr_fn "rms_to_rms",
 *              huggingface/pytorch-image-models timm/optim/muon.py
 *              @aa4b5850 get_lr_scale: `(out_chs / in_chs) ** 0.5`; dion's
 *              adjust_lr "spectral_norm", microsoft/dion
 *              dion/megabatch_base.py @0a059a4 adjust_lr_spectral_norm:
 *              `lr * math.sqrt(fan_out / fan_in)`, no max)
 *   SQRT_MAX:  sqrt(max(rows, cols)), no 0.2 (NVIDIA-NeMo/Emerging-Optimizers
 *              orthogonalized_optimizers/muon.py @fd77292
 *              get_muon_scale_factor "spectral": `max(size_out, size_in) ** 0.5`;
 *              bug-reports B08) */
typedef enum muonref_scale_mode {
  MUONREF_SCALE_FAN_IN = 0,
  MUONREF_SCALE_FAN_OUT = 1,
  MUONREF_SCALE_NONE = 2,
  MUONREF_SCALE_RMS_ADAMW = 3,
  MUONREF_SCALE_RMS_TO_RMS = 4,
  MUONREF_SCALE_SQRT_MAX = 5,
  /* RATIO_COLS: sqrt(cols/rows), no max (PaddlePaddle/Paddle
   *            python/paddle/optimizer/muon.py @98af0a0f _scaling_fn,
   *            muon_version 2: `scale = (dout / din) ** 0.5` with
   *            `din, dout = u.shape[-2], u.shape[-1]`) */
  MUONREF_SCALE_RATIO_COLS = 6,
  /* RMS_NUMEL: 0.2 sqrt(rows cols) (AdaMuon's RMS alignment, arXiv:2507.11005
   *            eq. 8: `0.2 / RMS(update)`; timm/optim/muon.py @aa4b5850
   *            get_adamuon_lr_scale "match_rms_adamw": `0.2 * (out_chs *
   *            in_chs) ** 0.5` of the last two dimensions, with
   *            moment2_rescale UNIT) */
  MUONREF_SCALE_RMS_NUMEL = 7,
  /* RSQRT_COLS: cols^-0.5, the fan-in's inverse square root, evaluated as
   *            pow(cols, -0.5) like Python's `**` (timm/optim/muon.py
   *            @aa4b5850 get_adamuon_lr_scale "rsqrt_in": `in_chs ** -0.5`;
   *            AdaMuon only: timm's Muon asserts on it) */
  MUONREF_SCALE_RSQRT_COLS = 8
} muonref_scale_mode;

/* How parameters are routed between Muon and the AdamW fallback
 * (spec/muon.md section 2).
 *   THRESHOLD:  use_muon, else 2-D and both dimensions below
 *               adam_dim_threshold (NeMo)
 *   TWO_D_ONLY: every parameter is a Muon parameter and must have exactly
 *               two dimensions, else the optimizer is refused at
 *               construction; use_muon, adam_dim_threshold and the adam_*
 *               options are unused (torch.optim.Muon)
 *   MANUAL:     the caller names each parameter's branch (use_muon TRUE or
 *               FALSE; AUTO falls back to the THRESHOLD rule: Moonlight's
 *               muon_params / adamw_params lists, Keller's groups)
 *   TIMM:       use_muon TRUE or FALSE as given (TRUE needs at least two
 *               dimensions: timm's Newton-Schulz asserts a 2-D or 3-D
 *               input); AUTO: timm's heuristic (timm/optim/muon.py
 *               @aa4b5850 _is_suitable_for_muon with min_dim_size 4,
 *               max_aspect_ratio 128.0): AdamW unless at least two
 *               dimensions exceed 1, dims[0] and dims[1] both exceed 1,
 *               and the flattened (dims[0], product of the rest) has
 *               min >= 4 and max / min <= 128
 *   NDIM_2:     see its value below
 *   NOT_1D:     (Megatron-LM's dev snapshot 025c931a, which no release
 *               shipped; profile megatron through vector release
 *               2026.12.19, TAGGED_2D below since 2026.12.20) use_muon FALSE: AdamW (Megatron's
 *               `is_embedding_or_output_parameter` tag); AUTO: Muon iff
 *               ndim != 1 (NVIDIA/Megatron-LM megatron/core/optimizer/
 *               muon.py 025c931a get_megatron_muon_optimizer: `if not
 *               getattr(param, 'is_embedding_or_output_parameter', False)
 *               and len(param.shape) != 1`); a Muon parameter that is not
 *               2-D (0-D or 3-D+) is then refused at the step with
 *               Emerging-Optimizers' "Only 2D parameters are supported.";
 *               TRUE as AUTO (Megatron has no way to force a 1-D
 *               parameter onto Muon: TRUE on one is refused as elsewhere)
 */
typedef enum muonref_route_rule {
  MUONREF_ROUTE_THRESHOLD = 0,
  MUONREF_ROUTE_TWO_D_ONLY = 1,
  MUONREF_ROUTE_MANUAL = 2,
  MUONREF_ROUTE_TIMM = 3,
  /* NDIM_2_3:   use_muon TRUE or FALSE as given (TRUE needs at least two
   *             dimensions); AUTO: Muon iff the parameter has 2 or 3
   *             dimensions and its name matches none of exclude_patterns
   *             (PaddlePaddle/Paddle python/paddle/optimizer/muon.py
   *             @98af0a0f _default_should_use_muon: `if len(shape) not in
   *             (2, 3): return False`, `if any(p.lower() in name.lower() for
   *             p in exclude_patterns): return False`, `return True`);
   *             under exclude_embeddings not a name containing "embedding"
   *             either (keras-team/keras v3.10.0 muon.py
   *             _should_use_adamw: `if not 1 < len(variable.shape) < 4`,
   *             then keras' name rules; profile keras@3.10) */
  MUONREF_ROUTE_NDIM_2_3 = 4,
  /* NDIM_2:     use_muon AUTO: Muon iff ndim == 2 and the parameter's
   *             name matches no exclude pattern (n_exclude_patterns,
   *             pattern_match) and, under exclude_embeddings, does not
   *             contain "embedding" case-insensitively; AdamW for 0-D, 1-D
   *             and 3-D+, with no size threshold; TRUE / FALSE as given
   *             (TRUE needs ndim >= 2).  google-deepmind/optax
   *             optax/contrib/_muon.py @2edbcbe2 muon: `lambda x: 'muon' if
   *             x.ndim == 2 else 'adam'` for every leaf (spec/profiles/optax.md
   *             7); keras-team/keras keras/src/optimizers/muon.py @3422977a
   *             _should_use_adamw: `if len(variable.shape) != 2: return True` */
  MUONREF_ROUTE_NDIM_2 = 5,
  MUONREF_ROUTE_NOT_1D = 6,
  /* TAGGED_2D:  (megatron) use_muon FALSE: AdamW (Megatron's
   *             `is_embedding_or_output_parameter` tag); AUTO and TRUE:
   *             Muon iff ndim == 2, AdamW for 0-D, 1-D and 3-D+ (TRUE is
   *             as AUTO: Megatron has no way to force a parameter onto
   *             Muon, so a TRUE that is not 2-D is not refused but takes
   *             AdamW); no size threshold.  NVIDIA/Megatron-LM
   *             megatron/core/optimizer/emerging_optimizers.py
   *             @core_v0.19.0 _is_nonlinear_or_embedding: `return
   *             getattr(param, 'is_embedding_or_output_parameter', False)
   *             or len(param.shape) != 2` sends a parameter to Adam; the
   *             same rule in muon.py of core_v0.16.0 and core_v0.17.0 */
  MUONREF_ROUTE_TAGGED_2D = 7,
  /* MOMENTUM_1D: (mlx) no AdamW fallback: every parameter takes the Muon
   *             branch (its decay, momentum and Nesterov input); one of two
   *             or more dimensions is orthogonalized (flattened, conv_mode)
   *             and scaled, one of fewer (0-D, 1-D) steps on the momentum
   *             alone: no Newton-Schulz, scale 1 (muonref_route's
   *             momentum_only); use_muon FALSE takes AdamW, TRUE is as
   *             AUTO.  ml-explore/mlx python/mlx/optimizers/optimizers.py
   *             @846d17622 Muon.apply_single: `if update.ndim >= 2:` the
   *             Newton-Schulz and `lr *= max(1, shape[-2] / shape[-1]) **
   *             0.5`; then `parameter - lr * update` for every parameter */
  MUONREF_ROUTE_MOMENTUM_1D = 8
} muonref_route_rule;

/* Where AdamW's eps enters (spec/muon.md section 9; t = step count).
 *   CORRECTED:   m / (sqrt(v) / sqrt(1 - beta2^t) + eps)   (NeMo, torch.optim.AdamW)
 *   UNCORRECTED: m / ((sqrt(v) + eps) / sqrt(1 - beta2^t)), eps on the
 *                uncorrected sqrt(v) (Moonlight toy_train.py @c2ad5b2:
 *                `moment1 / (eps + moment2.sqrt())`, then `lr / scale`) */
typedef enum muonref_adam_eps_mode {
  MUONREF_ADAM_EPS_CORRECTED = 0,
  MUONREF_ADAM_EPS_UNCORRECTED = 1
} muonref_adam_eps_mode;

/* Which port's option checks and messages validation applies (the error
 * catalogue of spec/muon.md section 12 and spec/profiles/).  A catalogue
 * is named after the port whose checks it copies; a profile's record names
 * the catalogue it uses (spec/profiles/NAME.json, defaults.catalogue), and
 * the record of the port that defines one holds its rows (member
 * "catalogue": each row a field, a rule and a message, in the port's
 * order; `muonref profile NAME` prints them).  The enum, with each
 * catalogue's source, is generated from the records:
 * muonref/catalogue_ids.h. */
#include "muonref/catalogue_ids.h"

/* Which shape the scale factor (scale_mode) is computed from, for a Muon
 * parameter of shape (d0, ..., d[n-1]) (spec/muon.md section 5).
 *   FLATTENED: the (rows, cols) matrix the Newton-Schulz iteration sees
 *              (NeMo; for a 2-D parameter the only choice)
 *   LAST_TWO:  (d[n-2], d[n-1]) of the original shape (KellerJordan/Muon
 *              muon.py @857d1ad muon_update: `max(1, grad.size(-2) /
 *              grad.size(-1))**0.5`; for a 4-D conv filter that is kh/kw,
 *              whatever the flattened matrix is) */
typedef enum muonref_scale_shape {
  MUONREF_SCALE_SHAPE_FLATTENED = 0,
  MUONREF_SCALE_SHAPE_LAST_TWO = 1,
  /* FIRST_TWO: (d0, d1) of the original shape (keras-team/keras v3.10.0 to
   *            v3.12.4 muon.py _muon_update_step: `max(1, shape[0] /
   *            shape[1]) ** 0.5` on the variable's shape; for a 3-D Muon
   *            variable, whose matrices are its last two dimensions, that is
   *            its first two; profile keras@3.10) */
  MUONREF_SCALE_SHAPE_FIRST_TWO = 2
} muonref_scale_shape;

/* Where the scale factor s enters the update (spec/muon.md section 8).
 *   LR:          P <- P - (lr s) O, lr s one binary64 scalar (NeMo, torch)
 *   BF16_UPDATE: in the bf16 format, O <- R_bf16(fl32(s) O) first, in place
 *                on the bf16 Newton-Schulz output, then P <- P - lr O
 *                (KellerJordan/Muon @857d1ad: `update *= max(1, ...)**0.5`
 *                on the bf16 tensor, then `p.add_(update, alpha=-lr)`); in
 *                the fp32 and exact formats the same as LR
 *   BF16_ALPHA:  in the bf16 format, O <- R_bf16(fl32(alpha) O) with
 *                alpha = lr s the binary64 product, then P <- P - O
 *                (microsoft/dion dion/muon.py @0a059a4
 *                muon_update_post_orthogonalize: `U = torch._foreach_mul(U,
 *                adjusted_lr)` on the bf16 output, adjusted_lr a Python
 *                float from megabatch_base.adjust_lr_*, then
 *                `torch._foreach_sub_(X, U)`); the decay (1 - lr wd) comes
 *                first as in LR; in the fp32 and exact formats the same as LR */
typedef enum muonref_scale_format {
  MUONREF_SCALE_FORMAT_LR = 0,
  MUONREF_SCALE_FORMAT_BF16_UPDATE = 1,
  MUONREF_SCALE_FORMAT_BF16_ALPHA = 2,
  /* BF16_SCALE_EXTRA: Paddle's Muon update (PaddlePaddle/Paddle python/paddle/
   *              optimizer/muon.py @98af0a0f _scaling_fn: `return u * scale *
   *              extra_scale_factor`, then _muon_update: `if with_decay and
   *              weight_decay > 0: p.scale_(1 - lr * weight_decay)`, `p -=
   *              (O * lr).astype(p.dtype)`, lr a float32 0-D tensor).  In
   *              every format: the decay only when weight_decay > 0, with the
   *              binary32 factor fl32(1 - fl32(fl32(lr) fl32(wd))); alpha =
   *              fl32(lr) s scale_extra.  In the bf16 format the scale enters
   *              the bf16 output as two bf16-rounded products by binary32
   *              scalars, O <- R_bf16(fl32(scale_extra) R_bf16(fl32(s) O)),
   *              s the scale_mode factor alone, then P <- P - fl32(lr) O */
  MUONREF_SCALE_FORMAT_BF16_SCALE_EXTRA = 3
} muonref_scale_format;

/* How a Muon parameter of more than two dimensions becomes matrices
 * (spec/muon.md section 2).
 *   FLATTEN: one (d0, d1 * ... * d[n-1]) matrix (NeMo)
 *   BATCHED: a batch of d0 * ... * d[n-3] matrices (d[n-2], d[n-1]), each
 *            normalised and orthogonalised on its own (a 3-D tensor in
 *            KellerJordan/Muon, dion's flatten=False, Paddle's 3-D
 *            baddbmm; timm's conv_mode "batched" layout aside)
 *   KELLER:  4-D flattened as FLATTEN, every other N-D batched as BATCHED
 *            (KellerJordan/Muon @857d1ad muon_update: `if update.ndim == 4:
 *            update = update.view(len(update), -1)`, then
 *            zeropower_via_newtonschulz5 on the batch, norm over dim=(-2, -1))
 *   TWO_D:   a Muon parameter must have exactly two dimensions; use_muon
 *            TRUE on another shape is refused (Moonlight toy_train.py
 *            @c2ad5b2: `assert p.ndim == 2, p.ndim` for every muon_params
 *            entry) */
typedef enum muonref_conv_mode {
  MUONREF_CONV_FLATTEN = 0,
  MUONREF_CONV_BATCHED = 1,
  MUONREF_CONV_KELLER = 2,
  MUONREF_CONV_TWO_D = 3,
  /* SPATIAL: one (d0, d1) matrix per position of the trailing dimensions,
   *          S = d2 * ... * d[n-1] matrices whose elements interleave in the
   *          parameter (element (i, j) of matrix k at (i d1 + j) S + k:
   *          muonref_route's `interleaved`), each normalised and
   *          orthogonalised on its own, the scale factor from (d0, d1)
   *          (timm's conv_mode "batched": timm/optim/muon.py @aa4b5850
   *          reshape_for_muon: `tensor.reshape(out_ch, in_ch, -1).permute(2,
   *          0, 1)`, "Batch over spatial positions"); see normalize_spatial */
  MUONREF_CONV_SPATIAL = 4
} muonref_conv_mode;

/* What a parameter without a gradient does in a step (spec/muon.md section 3).
 *   SKIP:  nothing: no decay, no momentum decay, no step count (NeMo's seed:
 *          `if p.grad is None: continue`)
 *   ZEROS: the step runs with a zero gradient: decayed, the momentum
 *          decays and moves the parameter, AdamW's step count grows
 *          (KellerJordan/Muon @5bc6993, PR #38: `p.grad = torch.zeros_like(p)`
 *          "Force synchronization") */
typedef enum muonref_missing_grad {
  MUONREF_MISSING_GRAD_SKIP = 0,
  MUONREF_MISSING_GRAD_ZEROS = 1
} muonref_missing_grad;

/* What a step leaves in a PyTorch port's p.grad (spec/muon.md section 8.1;
 * judged by the results protocol, spec/vectors.md 2.1; muonref's C API
 * never writes a gradient).
 *   KEEP:           the gradient the caller set (NeMo's seed)
 *   NESTEROV_INPUT: with Nesterov, a Muon parameter's p.grad holds the
 *                   Nesterov input U, written in place (KellerJordan/Muon
 *                   @857d1ad muon_update: `update = grad.lerp_(momentum,
 *                   beta)`); a zero-filled missing gradient is the zero
 *                   tensor, then U
 *   DECAYED:        under decay_method L2, a Muon parameter's p.grad holds
 *                   the gradient with the decay added, R32(G + wd P),
 *                   written in place (NVIDIA-NeMo/Emerging-Optimizers
 *                   mixin.py @fd77292 `grad.add_(p, alpha=wd)`); else as
 *                   KEEP.  KEEP under L2 is a port that adds the decay to
 *                   a copy. */
typedef enum muonref_grad_after {
  MUONREF_GRAD_AFTER_KEEP = 0,
  MUONREF_GRAD_AFTER_NESTEROV_INPUT = 1,
  MUONREF_GRAD_AFTER_DECAYED = 2
} muonref_grad_after;
/* Which AdamW the fallback runs (spec/muon.md section 9; m', v' the new
 * moments):
 *   ADAMW:  P -= step_size m' / (sqrt(v') / sqrt_bc2 + eps)
 *   NADAMW: the numerator is beta1 m' + (1 - beta1) g (not stored): timm's
 *           NAdamW (timm/optim/nadamw.py @aa4b5850 _single_tensor_nadamw:
 *           `exp_avg = exp_avg.mul(beta1).add_(grad, alpha=1 - beta1)`)
 *   FOLLOW_NESTEROV: NADAMW when the group's nesterov is set, else ADAMW
 *           (timm/optim/muon.py @aa4b5850 Muon.step: "use nadamw for
 *           fallback optimizer if nesterov is enabled")
 *   OPTAX_FOLLOW_NESTEROV: with the group's nesterov, optax's NAdam: with
 *           t the step count after this step,
 *             P -= lr_a (m_hat / (sqrt(v') / sqrt_bc2 + eps)),
 *             m_hat = beta1 m' / (1 - beta1^(t+1)) + (1 - beta1) g / (1 - beta1^t)
 *           (google-deepmind/optax optax/_src/transform.py @2edbcbe2
 *           scale_by_adam: `mu_hat = jax.tree.map(lambda m, g: b1 * m + (1 -
 *           b1) * g, tree_bias_correction(mu, b1, safe_increment(count_inc)),
 *           tree_bias_correction(updates, b1, count_inc))`; not timm's NAdamW,
 *           whose numerator beta1 m' + (1 - beta1) g is divided by
 *           1 - beta1^t as a whole); without nesterov ADAMW
 *           (optax.contrib.muon passes `nesterov=nesterov` to its adamw) */
typedef enum muonref_adam_variant {
  MUONREF_ADAM_ADAMW = 0,
  MUONREF_ADAM_NADAMW = 1,
  MUONREF_ADAM_FOLLOW_NESTEROV = 2,
  MUONREF_ADAM_OPTAX_FOLLOW_NESTEROV = 3
} muonref_adam_variant;

/* What brings the Newton-Schulz input to a spectral norm near 1 before the
 * iteration (spec/muon.md section 7; optax's `preconditioning`,
 * google-deepmind/optax optax/contrib/_muon.py @2edbcbe2
 * orthogonalize_via_newton_schulz), on the wide orientation X (m x n):
 *   FROBENIUS: X / d with d from ||X||_F, ns_eps, eps_mode and ns_safety
 *              (every port; optax 'frobenius': `x /= jnp.linalg.norm(x,
 *              ord='fro') + eps`)
 *   AOL:       no Frobenius normalisation; row i is divided by
 *              d_i = sqrt(max(sum_j |(X X^T)_ij|, 1e-8)), the "almost
 *              orthogonal layer" rescaling (arXiv 2208.03160; Turbo-Muon,
 *              arXiv 2512.04632), which optax folds into the first step:
 *              _aol_first_newton_schulz_iteration: `a = x @ x.T.conj();
 *              rescaling = jnp.clip(jnp.abs(a).sum(axis=-1), min=eps); s =
 *              jnp.expand_dims(jax.lax.rsqrt(rescaling), -1); x, a = x * s,
 *              a * s * s.transpose(-1, -2)`, then the step on them (S A S is
 *              the Gram matrix of S X, so the definition is a normalisation
 *              followed by ordinary steps); eps is that function's default
 *              1e-8, not the optimizer's (`_aol_ns_iterator` passes none);
 *              with ns_steps 0 nothing is rescaled (optax's rescaling is
 *              part of step 0)
 *   SCHATTEN:  X / d with d = sqrt(max(||X X^T||_F, 1e-8)) (the Schatten-4
 *              norm; _schatten_first_newton_schulz_iteration: `rescaling =
 *              jnp.clip(jnp.linalg.norm(a, ord='fro', axis=(-2, -1)),
 *              min=eps)`, `x, a = x * s, a * s ** 2`), also in step 0 only
 * optax's 'spectral' (`x /= jnp.linalg.norm(x, ord=2) + eps`) is not a value:
 * the reference would need the largest singular value to a certified
 * precision. */
typedef enum muonref_precondition {
  MUONREF_PRECOND_FROBENIUS = 0,
  MUONREF_PRECOND_AOL = 1,
  MUONREF_PRECOND_SCHATTEN = 2
} muonref_precondition;
/* Block-wise Newton-Schulz of unequal row blocks (spec/muon.md 7.6): how
 * ns_split's sizes cut a two-dimensional Muon matrix's rows into blocks,
 * each orthogonalized as a matrix of its own:
 *   ROWS:   the sizes cover dim 0 once, in order; their sum is dim 0
 *           (microsoft/dion @0a059a4 megabatch_base.py
 *           _newton_schulz_row_blocks: `X.split(list(split_sizes), dim=-2)`)
 *   GROUPS: the sizes repeat over dim 0, a multiple of their sum: block i
 *           is the i-th segment of every period, in order (Megatron-LM
 *           emerging_optimizers.py d98e8a64 TensorParallelMuon.orthogonalize:
 *           `torch.split(grad.view(num_query_groups, qkv_split_dim, -1),
 *           qkv_split_shapes, dim=1)`, each `reshape(-1, grad_shape[-1])`)
 *   OFF:    the sizes are not applied (Megatron's muon_split_qkv False)
 *   STACKED: dim 0 a multiple of the sizes' sum, P periods, block i the
 *           rows [P off_i, P (off_i + size_i)): the blocks stacked, not
 *           interleaved over the query groups (no port's: a port that
 *           reads a fused QKV matrix as [Q; K; V]; the fit's alternative)
 *   COLUMNS: the sizes cover dim 1 once, in order; block i the columns
 *           [off_i, off_i + size_i), a (rows, size_i) matrix (Paddle's
 *           split_concat_func splitting axis 1 of its (in, out) weight) */
typedef enum muonref_split_mode {
  MUONREF_SPLIT_ROWS = 0,
  MUONREF_SPLIT_GROUPS = 1,
  MUONREF_SPLIT_OFF = 2,
  MUONREF_SPLIT_STACKED = 3,
  MUONREF_SPLIT_COLUMNS = 4
} muonref_split_mode;

/* The scale factor of a row block (spec/muon.md 7.6):
 *   OWN:    from the block's own shape, as a parameter of that shape
 *           (Megatron: scaled_orthogonalize_fn on each block)
 *   RATIO:  the whole matrix's factor, the block first multiplied by
 *           fl32(s(block) / s(matrix)) in the update's format (dion:
 *           `block * split_scales[i]` on the bf16 output, compute_split_lr_scales)
 *   MATRIX: the whole matrix's factor for every block (no port's: a port
 *           that drops dion's split_scales; the fit's alternative) */
typedef enum muonref_split_scale {
  MUONREF_SPLIT_SCALE_OWN = 0,
  MUONREF_SPLIT_SCALE_RATIO = 1,
  MUONREF_SPLIT_SCALE_MATRIX = 2
} muonref_split_scale;

/* At most this many row blocks (Megatron's gated QKV has four). */
#define MUONREF_MAX_SPLIT 8

/* The floor of AOL's row sums and of the Schatten-4 norm's square (optax's
 * default eps of its two first-step functions, which _aol_ns_iterator and
 * _schatten_ns_iterator call without one). */
#define MUONREF_PRECOND_EPS 1e-8

/* Where the Newton-Schulz input is normalised (spec/muon.md section 7),
 * for ns_format BF16 (the FP32 and EXACT formats round nothing else):
 *   BF16:  X <- R(in); d from R(||X||); X <- R(X / d), all in bf16 (NeMo)
 *   INPUT: in the input's format, binary32, before the cast:
 *          d <- fl32(max(fl32(||in||_F), eps)) (or + eps), X <- R_bf16(fl32(in / d)),
 *          a double rounding (Emerging-Optimizers muon_utils.py @fd77292
 *          newton_schulz: `F.normalize(x, p=2, dim=(-2, -1), eps=eps)` on the
 *          float32 input, then `X = X.to(torch.bfloat16)`) */
typedef enum muonref_norm_format {
  MUONREF_NORM_FORMAT_BF16 = 0,
  MUONREF_NORM_FORMAT_INPUT = 1
} muonref_norm_format;

/* The use_muon option of a group: AUTO selects by shape (route.h). */
typedef enum muonref_use_muon {
  MUONREF_USE_MUON_AUTO = -1,
  MUONREF_USE_MUON_FALSE = 0,
  MUONREF_USE_MUON_TRUE = 1
} muonref_use_muon;

/* The number format the Newton-Schulz iteration runs in.
 *   BF16:  every operation's result rounded to bf16 (round to nearest even),
 *          products accumulated in fp32 (NeMo and most ports)
 *   FP32:  every operation's result rounded to binary32
 *   EXACT: no rounding (the reference, ref/) */
typedef enum muonref_ns_format {
  MUONREF_NS_BF16 = 0,
  MUONREF_NS_FP32 = 1,
  MUONREF_NS_EXACT = 2
} muonref_ns_format;

/* The bf16 evaluation order of one Newton-Schulz step (spec/muon.md
 * section 7.1): which intermediate results are rounded to bf16.  It
 * changes no value in exact or binary32 arithmetic, only the rounding
 * sequence of the BF16 format; the reference (ref/ns_rounded.c) computes
 * every order, the fast path evaluates SEPARATE.  With A = X X^T:
 *   SEPARATE: S = R(A A); B = R(R(b A) + R(c S)); X = R(R(a X) + R(B X))
 *             (NeMo `b*A + c*(A@A)`: spec/muon.md's defining order)
 *   KELLER:   C = R(c A); B = R(R(b A) + R(C A)); X = R(R(a X) + R(B X))
 *             (`b * A + c * A @ A` parsed as (c*A)@A: Keller Jordan's
 *             muon.py, Moonlight, torch.optim.Muon without addmm)
 *   FUSED:    B = R(b A + c A A); X = R(a X + B X), one rounding each
 *             (torch.addmm(A, A, A, beta=b, alpha=c) and
 *             torch.addmm(X, B, X, beta=a): torch.optim.Muon, timm) */
typedef enum muonref_bf16_order {
  MUONREF_BF16_SEPARATE = 0,
  MUONREF_BF16_KELLER = 1,
  MUONREF_BF16_FUSED = 2
} muonref_bf16_order;
#define MUONREF_N_BF16_ORDERS 3

/* Name-based exclusion from Muon (route rules NDIM_2_3 and NDIM_2): at most MUONREF_MAX_PATTERNS patterns of at most
 * MUONREF_PATTERN_LEN - 1 bytes each. */
#define MUONREF_MAX_PATTERNS 8
#define MUONREF_PATTERN_LEN 64          /* bytes, with the terminating NUL */
/* How an exclude pattern matches a parameter's name.
 *   SUBSTRING_CI: the pattern, lower-cased, is a substring of the name,
 *                 lower-cased (ASCII; PaddlePaddle/Paddle python/paddle/
 *                 optimizer/muon.py @98af0a0f _default_should_use_muon:
 *                 `any(pattern.lower() in name.lower() for pattern in
 *                 exclude_patterns)`)
 *   REGEX:        keras `re.search(p, variable.path)` (keras-team/keras
 *                 keras/src/optimizers/muon.py @3422977a _should_use_adamw:
 *                 `if any(re.search(keyword, variable.path) for keyword in
 *                 self.exclude_layers)`): a case-sensitive search anywhere in
 *                 the name, evaluated as a POSIX extended regular expression
 *                 (regcomp REG_EXTENDED|REG_NOSUB); the two dialects agree on
 *                 literals, `.`, `*`, `+`, `?`, `|`, `()`, `[]`, `^`, `$` and
 *                 `{m,n}`, and differ on Python's escapes (\d, \w, \s, \b),
 *                 lazy quantifiers and look-arounds, which ERE lacks
 *                 (spec/profiles/keras.md section 7) */
typedef enum muonref_pattern_match { MUONREF_MATCH_SUBSTRING_CI = 0, MUONREF_MATCH_REGEX = 1 } muonref_pattern_match;

/* The second moment of the Newton-Schulz output (spec/muon.md 7.4): an EMA
 * v of the squared output O of each (rows, cols) matrix, O divided by its
 * square root, then rescaled (moment2_rescale).  Which entries v has:
 *   NONE:    no second moment (Muon)
 *   ROWS:    one per row, the mean of the row's squares (rows entries per
 *            matrix; microsoft/dion dion/normuon.py @0a059a4
 *            _normuon_normalization_core: `neuron_norms = (U * U).mean(dim=-1,
 *            keepdim=True)`, state `variance_neuron` = zeros_like(param[..., 0:1]);
 *            NorMuon, arXiv:2510.05491)
 *   LONGER:  one per row when rows >= cols, else one per column (the mean
 *            over the shorter side: max(rows, cols) entries;
 *            NVIDIA-NeMo/Emerging-Optimizers orthogonalized_optimizers/
 *            adaptive_muon.py @fd77292 "normuon": `avg_dim = -1 if
 *            orth_grad.shape[-2] >= orth_grad.shape[-1] else -2`;
 *            KellerJordan/modded-nanogpt train_gpt.py @f411b3d3 NorMuonAndAdam,
 *            karpathy/nanochat nanochat/optim.py @92d63d4: `red_dim`)
 *   ELEMENT: one per element (AdaMuon, arXiv:2507.11005; timm/optim/muon.py
 *            @aa4b5850 _single_tensor_adamuon: `exp_avg_sq.mul_(beta2)
 *            .addcmul_(update_ortho, update_ortho, value=1.0 - beta2)`) */
typedef enum muonref_moment2 {
  MUONREF_MOMENT2_NONE = 0,
  MUONREF_MOMENT2_ROWS = 1,
  MUONREF_MOMENT2_LONGER = 2,
  MUONREF_MOMENT2_ELEMENT = 3
} muonref_moment2;

/* What follows the division N = O / d (spec/muon.md 7.4):
 *   NONE: N (Emerging-Optimizers "adamuon", whose Muon scale follows)
 *   NORM: each matrix's Frobenius norm restored: N ||O||_F / max(||N||_F,
 *         moment2_eps) (dion: `normalized_U * (norm_U / norm_U_new)` with
 *         `.clamp(min=1e-8)`; Emerging-Optimizers _match_frobenius_norm:
 *         `update * (reference_norm / update_norm.clamp_min(eps))`)
 *   UNIT: the whole parameter to unit Frobenius norm, N / (||N||_F +
 *         moment2_eps) (AdaMuon's RMS alignment, eq. 8 of arXiv:2507.11005,
 *         whose 0.2 sqrt(numel) is scale_mode RMS_NUMEL: timm
 *         `update_adaptive / update_adaptive.norm().add_(eps)`)
 *   RMS:  UNIT times 0.2 sqrt(numel) (numel: the whole parameter's; the
 *         binary64 value, as scale_mode RMS_NUMEL takes it): AdaMuon's RMS
 *         alignment in the rescale itself, `update.div_(update.norm()
 *         .add_(eps)).mul_(0.2 * math.sqrt(p.numel()))`, the order that
 *         kozistr/pytorch_optimizer's AdaMuon (muon.py @7a076d2f:601)
 *         reverses so that the factor cancels; a port that "fixes" it
 *         scales twice (no profile's default) */
typedef enum muonref_moment2_rescale {
  MUONREF_MOMENT2_RESCALE_NONE = 0,
  MUONREF_MOMENT2_RESCALE_NORM = 1,
  MUONREF_MOMENT2_RESCALE_UNIT = 2,
  MUONREF_MOMENT2_RESCALE_RMS = 3
} muonref_moment2_rescale;

/* How the Muon branch's decoupled weight decay uses the lr (spec/muon.md 4):
 *   DECOUPLED:   P <- P (1 - lr wd) (every profile; Loshchilov & Hutter's
 *                decay as torch.optim.AdamW takes it)
 *   INDEPENDENT: P <- P (1 - wd), the lr left out
 *   PALM:        P <- P (1 - lr^2 wd)
 *   L2:          no decay of P; the decay goes through the gradient before
 *                the momentum: G <- R32(G + wd P) (one rounding), and a
 *                PyTorch port's p.grad holds that G after the step
 *                (spec/muon.md 4.2, 8.1)
 * NVIDIA-NeMo/Emerging-Optimizers mixin.py @fd77292 weight_decay_method:
 * "decoupled" `p.add_(p, alpha=-wd * lr)`, "independent" `p.add_(p,
 * alpha=-wd)`, "palm" `p.add_(p, alpha=-wd * lr * lr)`, "l2"
 * `grad.add_(p, alpha=wd)` (in place: p.grad).  Each only when wd != 0.
 * The AdamW branch's decay is not changed (Emerging-Optimizers has none). */
typedef enum muonref_decay_method {
  MUONREF_DECAY_DECOUPLED = 0,
  MUONREF_DECAY_INDEPENDENT = 1,
  MUONREF_DECAY_PALM = 2,
  MUONREF_DECAY_L2 = 3
} muonref_decay_method;

/* The formula of gradient clipping (clip_grad_norm, clip_grad_norm_each;
 * spec/muon.md 3.1, 3.2), binary32 throughout where a port computes in it:
 *   MEGATRON: by the global norm N, only when c = clip_grad_norm / (N +
 *             1e-6) < 1: G <- R32(G R32(c)) (Megatron-LM clip_grads.py
 *             clip_grad_by_total_norm_fp32)
 *   KERAS:    always, by the global norm: s = R32(R32(c) min(R32(1 / N32),
 *             R32(1 / c))), G <- R32(G s); each gradient by its own norm
 *             n32: G <- R32(R32(G R32(c)) / max(n32, R32(c)))
 *             (keras-team/keras base_optimizer.py @3422977a
 *             clip_by_global_norm, _clip_by_norm; N32, n32 the binary32
 *             norms of binary32 sums of squares)
 *   PADDLE:   always, by the global norm: s = R32(R32(c) / max(N32, R32(c))),
 *             G <- R32(G s), N32 = R32(sqrt(S32)), S32 the binary32 sum of the
 *             gradients' binary32 sums of squares (PaddlePaddle python/paddle/
 *             nn/clip.py ClipGradByGlobalNorm._dygraph_clip, auto_skip_clip
 *             False: `clip_var = divide(max_global_norm, maximum(global_norm_var,
 *             max_global_norm))`, `multiply(g, clip_var)`; s is exactly 1 at or
 *             below the bound)
 * clip_grad_norm_each (per gradient) has the KERAS formula whatever the
 * form (Paddle's ClipGradByNorm is within a rounding of it), as
 * clip_grad_value has keras' clamp. */
typedef enum muonref_clip_form {
  MUONREF_CLIP_MEGATRON = 0,
  MUONREF_CLIP_KERAS = 1,
  MUONREF_CLIP_PADDLE = 2
} muonref_clip_form;

/* One quintic step p(x) = a x + b x^3 + c x^5, applied to a matrix X as
 * a X + (b A + c A A) X with A = X X^T. */
typedef struct muonref_coeff {
  double a, b, c;
} muonref_coeff;

/* One parameter group's options, grouped by the stage of the step that reads
 * them (spec/muon.md: routing 2, gradients 3, momentum 6, Newton-Schulz 7,
 * the update and its scale 5 and 8, decay 4, AdamW 9, checks 12).  The
 * ranges given are those of the `nemo` catalogue; other catalogues accept
 * more or less (muonref_catalogue, muonref_options_validate).  Each
 * profile's values are in its record (spec/profiles/NAME.json). */
typedef struct muonref_options {
  /* --- routing: which parameters take Muon, which the AdamW fallback (spec/muon.md 2) --- */
  muonref_use_muon use_muon;     /* AUTO: by route_rule; TRUE, FALSE: forced (under TAGGED_2D, TRUE is AUTO) */
  muonref_route_rule route_rule; /* how AUTO (and a forced value) is decided */
  long adam_dim_threshold;       /* >= 1; THRESHOLD's dimension limit */
  muonref_conv_mode conv_mode;   /* how a Muon parameter of more than two dimensions becomes matrices */
  int n_exclude_patterns;        /* 0..MUONREF_MAX_PATTERNS; 0 = no name rule */
  char exclude_patterns[MUONREF_MAX_PATTERNS][MUONREF_PATTERN_LEN]; /* NUL-terminated; under route rules
                                NDIM_2_3 and NDIM_2 with use_muon AUTO a parameter whose name matches
                                one of them is AdamW (Paddle's muon_exclude_patterns, keras'
                                exclude_layers) */
  muonref_pattern_match pattern_match; /* SUBSTRING_CI (zero; Paddle) or REGEX (keras) */
  int exclude_embeddings;   /* 0 or 1: a name containing "embedding" (case-insensitive) is AdamW (keras
                               _should_use_adamw: `if self.exclude_embeddings and "embedding" in
                               variable.path.lower(): return True`); under route_rules NDIM_2 and
                               NDIM_2_3 only */

  /* --- gradients: before either branch (spec/muon.md 3) --- */
  double clip_grad_norm;     /* >= 0, finite; 0: no clipping.  Optimizer-wide (the
                                first group's value; every group must carry the same): before
                                the step, with N the L2 norm of every gradient of every group
                                (Muon and AdamW; a missing gradient counts as none, a ZEROS one
                                as zeros) and, under clip_grad_form MEGATRON, c = clip_grad_norm / (N + 1e-6) in binary64,
                                every gradient becomes R32(g * R32(c)) when c < 1, and is left
                                as it is otherwise (core/grad.c muonref_clip_coeff; KERAS:
                                muonref_clip_form).  Megatron
                                clip_grad_by_total_norm_fp32: `clip_coeff = max_norm /
                                (total_norm + 1.0e-6)`; `if clip_coeff < 1.0:
                                multi_tensor_applier(multi_tensor_scale_impl, ..., [grads,
                                grads], clip_coeff)` (a float32 scale), total_norm =
                                `total_norm.item() ** (1.0 / norm_type)` of a float32 sum of
                                squares (get_grad_norm_fp32); muonref's N is exact (MPFR) in
                                the reference, binary64 in the fast path */
  double loss_scale;        /* >= 0, finite; 0: none.  Every gradient divided by it first, G <- R32(G /
                               R32(s)), before any clipping (keras' loss_scale_factor: `g / scale` in
                               BaseOptimizer.apply; spec/muon.md 3.2) */
  muonref_clip_form clip_grad_form; /* MEGATRON (zero) or KERAS: the formula of clip_grad_norm (above;
                                       spec/muon.md 3.1, 3.2) */
  double clip_grad_norm_each; /* >= 0, finite; 0: none.  Each gradient by its own L2 norm, before the step,
                                 by keras' formula whatever clip_grad_form (keras' clipnorm: muonref_clip_form
                                 KERAS; spec/muon.md 3.2) */
  double clip_grad_value;     /* >= 0, finite; 0: none.  Each gradient element clamped to [-R32(v), R32(v)]
                                 before the step (keras' clipvalue, `ops.clip(g, -v, v)`; spec/muon.md 3.2) */
  muonref_missing_grad missing_grad; /* SKIP (zero) or ZEROS */
  int all_missing_error;    /* 0 or 1: a step where no parameter has a gradient is refused (MUONREF_EOPTION)
                               with "No gradients provided for any variable." (keras base_optimizer.py
                               _filter_empty_gradients: `raise ValueError("No gradients provided for any
                               variable.")`); 0: such a step changes nothing */
  int maximize;             /* 0 or 1; 1: the step ascends: every gradient is negated first, G <- -G (exact),
                               in place, so that p.grad holds -G after the step (or what grad_after_step
                               writes from it), both branches, before clipping and L2 (kozistr/
                               pytorch_optimizer base/optimizer.py @7a076d2f `maximize_gradient`:
                               `grad.neg_()`, called first in Muon.step and AdaMuon.step); 0: descends */
  int grad_accumulation;    /* >= 0; 0: off.  N >= 1: a step is one of N micro-steps; optimizer-wide (every
                               group carries the same: the optimizer refuses others).  A micro-step that is not the N-th adds its gradients
                               (after maximize and loss_scale) into an accumulator, A <- R32(A + G), and
                               changes nothing else; the N-th steps with R32(R32(G + A) / N) (clipping,
                               decay and both branches on that) and empties every accumulator (spec/muon.md
                               3.3; keras' gradient_accumulation_steps, base_optimizer.py
                               _backend_apply_gradients: `is_update_step = (self._iterations + 1) %
                               self.gradient_accumulation_steps == 0`, `(g + acc_g) / steps`) */

  /* --- after the step: the moving average of the weights (spec/muon.md 8.2) --- */
  int use_ema;              /* 0 or 1; 1: every parameter keeps E, an exponential moving average of its values,
                               updated after every step (every micro-step of grad_accumulation, every parameter,
                               with a gradient or not): E <- P where the parameter's state had counted no update
                               before the step (keras' iterations: its state counts the optimizer's), else E <-
                               R32(R32(m E) + R32(R32(1 - m) P)), m = R32(ema_momentum); optimizer-wide with
                               ema_momentum and ema_overwrite (every group carries the same).  keras' use_ema, base_optimizer.py
                               _update_model_variables_moving_average */
  double ema_momentum;      /* with use_ema, 0 <= m <= 1: the average's decay (keras' ema_momentum, 0.99) */
  int ema_overwrite;        /* >= 0; with use_ema, F > 0: after a step whose count of updates before it, plus one, is
                               a multiple of F, every parameter takes its average's values, P <- E (keras'
                               ema_overwrite_frequency: `(self.iterations + 1) % self.ema_overwrite_frequency ==
                               0`); 0: never */

  /* --- the storage of a parameter narrower than binary32 (spec/muon.md 10) --- */
  int master_weights;       /* 0 or 1; 1: a bf16 (or fp16) parameter is stepped as a binary32 copy, its master
                               weight, kept in its state from its first step (the parameter's values then), and
                               after each step the parameter holds the master rounded to its format; no effect
                               on a binary32 parameter, nor on muonref's own steps (its parameters are binary32:
                               each is its own master).  The vectors judge it (state buffer `master`, spec/
                               vectors.md 2.1).  Paddle's multi_precision (python/paddle/optimizer/muon.py
                               @98af0a0f: `_create_master_weight`, `find_master`) */

  /* --- momentum (spec/muon.md 6) --- */
  double momentum;           /* beta, 0 <= beta < 1 */
  int nesterov;              /* 0 or 1 */
  muonref_momentum_form momentum_form; /* SUM (zero) or EMA */
  int momentum_bias_correction; /* 0 or 1: the Newton-Schulz input is bias corrected with
                                   t the Muon step count after this step (the EMA form):
                                   nesterov U = beta M' / (1 - beta^(t+1)) + mom_grad G / (1 - beta^t),
                                   otherwise U = M' / (1 - beta^t).  optax scale_by_muon.update_fn:
                                   `mu_hat = jax.tree.map(lambda m, g: beta * m + (1 - beta) * g,
                                   otu.tree_bias_correction(mu, beta, numerics.safe_increment(count_inc)),
                                   otu.tree_bias_correction(updates, beta, count_inc))`, else
                                   `otu.tree_bias_correction(mu, beta, count_inc)` */
  muonref_grad_after grad_after_step;  /* KEEP (zero) or NESTEROV_INPUT: what p.grad holds after */

  /* --- Newton-Schulz (spec/muon.md 7) --- */
  int ns_steps;              /* 1..MUONREF_MAX_NS_STEPS (0 allowed by some catalogues) */
  int n_coeffs;              /* 1..MUONREF_MAX_COEFFS */
  muonref_coeff coeffs[MUONREF_MAX_COEFFS];
  muonref_coeff_order coeff_order; /* CYCLE (zero), REPEAT_LAST or LIST */
  double ns_eps;             /* normalisation epsilon, >= 0 */
  muonref_eps_mode eps_mode; /* ADD (zero) or CLAMP */
  double ns_safety;          /* > 0, finite; the Frobenius norm is multiplied by it before
                                eps enters: d = max(R(R(||X||) ns_safety), ns_eps) (CLAMP) or
                                R(R(R(||X||) ns_safety) + ns_eps) (ADD); 1.0 changes nothing.
                                timm's safety_factor: `X.norm(...).mul(safety_factor)
                                .clamp_(min=eps)` (zeropower_via_newtonschulz); dion's 1.02 */
  muonref_ns_format ns_format;   /* BF16 (zero), FP32 or EXACT */
  muonref_norm_format norm_format; /* BF16 (zero) or INPUT: where the input is normalised */
  muonref_bf16_order bf16_order; /* SEPARATE (zero), KELLER or FUSED: rounding sequence of a BF16 step */
  muonref_precondition ns_precondition; /* FROBENIUS (zero), AOL or SCHATTEN: the input's scaling */
  int ns_heads;              /* >= 0; 0 and 1: off; H > 1: block-wise Newton-Schulz per head (spec/muon.md
                                7.5): a two-dimensional Muon parameter of shape (H d, n) is H matrices (d, n),
                                rows [h d, (h + 1) d) the h-th, each normalised, orthogonalized and scaled as a
                                parameter of shape (d, n) of its own; dim 0 must be a multiple of H, and more
                                than two dimensions or conv_mode FLATTEN with H > 1 are refused at the step.
                                microsoft/dion @0a059a4 megabatch_base.py _prepare_head_split (group key
                                num_heads: `view(num_heads, head_dim, ...)`, adjust_lr on the head's shape) */
  int n_ns_split;            /* 0..MUONREF_MAX_SPLIT; 0: no blocks; else the count of ns_split's sizes,
                                each block of a two-dimensional Muon parameter orthogonalized as its own
                                matrix (spec/muon.md 7.6; not with ns_heads > 1, a second moment,
                                nuclear_scale or cautious_update) */
  int ns_split[MUONREF_MAX_SPLIT]; /* each >= 1: the blocks' row counts (per period under GROUPS and
                                      STACKED), or column counts under COLUMNS */
  muonref_split_mode ns_split_mode;   /* ROWS (zero), GROUPS, OFF, STACKED or COLUMNS: how the sizes cut the
                                         matrix */
  muonref_split_scale ns_split_scale; /* OWN (zero), RATIO or MATRIX: each block's scale factor */

  /* --- the second moment of the Newton-Schulz output (spec/muon.md 7.4) --- */
  muonref_moment2 moment2;   /* NONE (zero), ROWS, LONGER or ELEMENT: which entries v has */
  double moment2_beta;       /* 0 <= beta2 < 1: v <- beta2 v + (1 - beta2) mean(O^2) */
  double moment2_eps;        /* >= 0, finite: in d (moment2_eps_mode) and in the rescale */
  muonref_eps_mode moment2_eps_mode; /* ADD: d = sqrt(v) + eps (dion, timm); CLAMP: d = sqrt(max(v, eps))
                                        (Emerging-Optimizers, modded-nanogpt: `clamp_min(eps).rsqrt_()`) */
  int moment2_bias_correction; /* 0 or 1: v / (1 - beta2^t) under the root, t the Muon step count after
                                  this step (timm's adamuon without the RMS rescale) */
  muonref_moment2_rescale moment2_rescale; /* NONE (zero), NORM or UNIT */
  int moment2_prescale;      /* 0 or 1; 1 (with a moment2): the Muon scale s (scale_mode's factor times
                                scale_extra) multiplies O before the second moment, which then sees s O,
                                and the update is -lr N: no scale after it.  NVIDIA-NeMo/Emerging-
                                Optimizers v0.2.0 adaptive_muon.py AdaptiveMuon.step: `orth_grad =
                                self.orthogonalize(...)` (Muon's scaled_orthogonalize_fn, `orth_grad *
                                scale_factor * extra_scale_factor`) before _apply_moment2_normalization,
                                then `p.add_(update, alpha=-lr)`; Megatron Core core_v0.18.0 to
                                core_v0.19.x TensorParallelAdaptiveMuon on it (spec/profiles/megatron.md
                                8).  0: the scale after the second moment (v0.3.0 and later) */

  /* --- the update: learning rate and scale (spec/muon.md 5, 8) --- */
  double lr;                 /* learning rate of the Muon update, >= 0 (AdamW: lr * adam_lr_ratio) */
  muonref_scale_mode scale_mode;   /* the shape factor s of -lr s O */
  double scale_extra;        /* finite; multiplies the shape factor: s = scale_mode's factor *
                                scale_extra, 1.0 changes nothing.  Emerging-Optimizers'
                                extra_scale_factor: `orth_grad * scale_factor * extra_scale_factor`
                                (two binary32 tensor products there; one binary64 factor here, within
                                the element-wise allowance, spec/vectors.md 5.1) */
  muonref_scale_shape scale_shape;   /* FLATTENED (zero), LAST_TWO or FIRST_TWO: the shape s comes from */
  muonref_scale_format scale_format; /* LR (zero), BF16_UPDATE, BF16_ALPHA or BF16_SCALE_EXTRA */
  int normalize_spatial;     /* 0 or 1; 1: under conv_mode SPATIAL a parameter of three or more
                                dimensions has its scale factor times S^-1/2, S the number of
                                its matrices (timm: `if conv_mode == "batched" and
                                update_ortho.ndim >= 3: if normalize_spatial: scale *=
                                update_ortho.shape[0] ** -0.5`, binary64) */
  int nuclear_scale;         /* 0 or 1; 1: the Newton-Schulz output O is multiplied by the
                                Frobenius inner product <U, O> of its input U and O (the dual,
                                nuclear norm of U when O is U's polar factor: PolarGrad,
                                arXiv 2505.21799; optax's adaptive=True, _muon.py @2edbcbe2
                                scale_by_muon: `updates = jax.tree.map(lambda x, y:
                                jnp.sum(x.conj() * y) * y, mu_hat, updates)`, before the
                                shape scale); <U, O> is taken exactly in the reference, in
                                binary64 from the binary32 U and O in the fast path */
  int cautious_update;       /* 0 or 1; 1: the Newton-Schulz output O is masked where it disagrees in sign
                                with C, the tensor p.grad holds at that point (U under Nesterov with
                                grad_after_step NESTEROV_INPUT, else the gradient the momentum reads), and
                                rescaled: O_j <- O_j n / (k + 1) where O_j C_j > 0, 0 elsewhere, n the
                                parameter's elements, k the count kept (Cautious Optimizers, arXiv
                                2411.16085; kozistr/pytorch_optimizer base/optimizer.py @7a076d2f
                                apply_cautious: `mask = (update * grad > 0).to(grad.dtype);
                                mask.mul_(mask.numel() / (mask.sum() + 1)); update.mul_(mask)`, called
                                by Muon.step on the bf16 output, spec/muon.md 8) */

  /* --- decoupled weight decay (spec/muon.md 4) --- */
  double weight_decay;       /* lambda >= 0: P <- P (1 - lr lambda) before the update */
  double adam_weight_decay;  /* finite; the AdamW branch's decay when adam_decay_own is 1:
                                P <- P (1 - lr_a adam_weight_decay) (optax.contrib.muon's and keras'
                                adam_weight_decay) */
  int adam_decay_own;        /* 0 or 1; 0: the AdamW branch decays with weight_decay; 1: with
                                adam_weight_decay */
  int cautious_wd;          /* 0 or 1: the decay only where the parameter and the update agree in sign,
                               P_j <- P_j (1 - lr wd) where P_j U_j >= 0 (U the direction subtracted: the
                               Muon output, the AdamW quotient), P_j elsewhere (spec/muon.md 4.1; microsoft/dion
                               dion/muon.py @0a059a4 muon_update_post_orthogonalize: `decay_masks =
                               _foreach_minimum(_foreach_add(_foreach_sign(_foreach_mul(X, U)), 1), 1)`;
                               arXiv:2510.12402) */
  int adam_decay_muon_lr;   /* 0 or 1; 1: the AdamW branch's decay uses the Muon lr, P <- P (1 - lr wd), not
                               lr * adam_lr_ratio (keras Muon._apply_weight_decay: `variable.assign(
                               variable - variable * wd * lr)` with `lr = ops.cast(self.learning_rate,
                               variable.dtype)` for both branches); 0: lr * adam_lr_ratio */
  muonref_decay_method decay_method; /* the Muon branch's decay factor: 1 - lr wd (DECOUPLED, zero),
                               1 - wd (INDEPENDENT) or 1 - lr^2 wd (PALM); or wd P added to the
                               gradient (L2) */

  /* --- the AdamW fallback (spec/muon.md 9) --- */
  double adam_beta1;         /* 0 <= beta1 < 1 */
  double adam_beta2;         /* 0 <= beta2 < 1 */
  double adam_eps;           /* >= 0, in the AdamW denominator */
  double adam_eps_root;      /* >= 0, added to the bias-corrected second moment inside the square root:
                                sqrt(v / (1 - beta2^t) + eps_root) + eps (optax scale_by_adam's eps_root,
                                optax/_src/transform.py; 0 in every profile's default, where the
                                denominator is sqrt(v) / sqrt(1 - beta2^t) + eps as before) */
  muonref_adam_eps_mode adam_eps_mode; /* CORRECTED (zero) or UNCORRECTED: where adam_eps enters */
  double adam_lr_ratio;      /* AdamW lr = lr * ratio, ratio >= 0 */
  muonref_adam_variant adam_variant; /* ADAMW (zero), NADAMW, FOLLOW_NESTEROV or OPTAX_FOLLOW_NESTEROV */
  int adam_step_global;     /* 0 or 1; 1: one step count for the optimizer: every successful step advances every
                               parameter's state step, with or without a gradient, so AdamW's bias
                               correction uses t = the optimizer's steps (keras _adamw_update_step:
                               `local_step = ops.cast(self.iterations + 1, ...)`, iterations advanced by
                               BaseOptimizer.apply after every apply); 0: per parameter */
  int adam_bias_fp32;       /* 0 or 1; 1: AdamW's bias corrections 1 - beta^t from the float32 beta, the power
                               rounded to float32 (keras: `ops.power(ops.cast(self.adam_beta_2,
                               variable.dtype), local_step)`; with beta2 0.999 binary64's 1 - beta2^t
                               differs by up to 3e-5 relative at t = 2, more than the AdamW allowance
                               1e-5 lr_a); 0: 1 - beta^t in binary64 */
  int adam_l2;              /* 0 or 1; 1: the AdamW branch's weight decay goes through the gradient, G <-
                               R32(G + wd P) before the moments (wd: adam_weight_decay under
                               adam_decay_own, else weight_decay), and P is not decayed: Adam's L2
                               (torch.optim.Adam's weight_decay, `grad = grad.add(param, alpha=wd)`,
                               out of place; apex/TE FusedAdam adam_w_mode=False: Megatron-LM's Adam
                               with decoupled_weight_decay False, optimizer/__init__.py); p.grad is
                               not written (but see adam_l2_grad).  0: the decoupled decay P (1 - lr wd) */
  int adam_l2_grad;         /* 0 or 1; 1: under adam_l2 the AdamW branch's G' = R32(G + wd P) is written into
                               p.grad, in place, where wd != 0 (kozistr/pytorch_optimizer base/optimizer.py
                               @7a076d2f apply_weight_decay with weight_decouple False: `grad.add_(p,
                               alpha=weight_decay)` on p.grad, both branches); the vectors publish it as
                               gradAfter (spec/muon.md 8.1).  0: p.grad is not written */

  /* --- checks: whose validation rules and messages apply (spec/muon.md 12) --- */
  muonref_catalogue catalogue;
} muonref_options;

/* Checks every field of *o against its valid range under o->catalogue.
 * NEMO: in the order of the NeMo constructor (lr, momentum, ns_steps,
 * weight_decay, adam betas, adam_eps, adam_lr_ratio, adam_dim_threshold,
 * scale_mode), then the generalised fields; ns_steps 1..MUONREF_MAX_NS_STEPS.
 * TORCH: lr, momentum, weight_decay with torch.optim.Muon's messages
 * ("Learning rate should be >= 0 but is: -1.0"; momentum unbounded above),
 * ns_steps 0..99 ("Number of steps must be less than 100 for computational
 * efficiency"), then the same generalised fields.  Non-finite values are
 * rejected everywhere (stricter than torch, which accepts inf).
 * TIMM: lr, weight_decay, momentum, ns_eps with timm's messages (see
 * muonref_catalogue), ns_steps 0..MUONREF_MAX_NS_STEPS, then the same
 * generalised fields.  Every catalogue: ns_safety finite and > 0 ("Invalid
 * Newton-Schulz safety factor: 0.0"), adam_variant one of its values,
 * scale_extra finite ("Invalid extra scale factor: inf"), norm_format one of
 * its values, n_exclude_patterns 0..MUONREF_MAX_PATTERNS ("Invalid number
 * of exclude patterns: 9 (expected 0 to 8)"), each pattern NUL-terminated in
 * its slot and, under pattern_match REGEX, a POSIX ERE that compiles
 * ("Invalid exclude pattern '(a': ..."), adam_weight_decay finite, and the
 * 0/1 fields adam_decay_own, exclude_embeddings, adam_decay_muon_lr,
 * adam_step_global, adam_bias_fp32, all_missing_error ("Invalid
 * adam_step_global: 2 (expected 0 or 1)").  The other catalogues (NONE,
 * DION, EMERGING, PADDLE, OPTAX, MEGATRON, KERAS) check what muonref_catalogue
 * says for each, then as NONE: only what cannot be computed.
 * Returns MUONREF_OK, or MUONREF_EOPTION with the catalogue message of the
 * first violated rule in err (e.g. "Invalid learning rate: -1.0"), or
 * "muonref_options_validate: o must not be NULL". */
MUONREF_API MUONREF_NODISCARD int muonref_options_validate(const muonref_options *o, muonref_error *err);

/* Checks the fields the Newton-Schulz iteration reads, with the messages
 * of muonref_options_validate: ns_steps (1..MUONREF_MAX_NS_STEPS; 0..99
 * under the TORCH catalogue, 0 meaning the normalised input is returned),
 * n_coeffs (1..MUONREF_MAX_COEFFS) and finite coefficients, coeff_order,
 * ns_eps (finite, >= 0), eps_mode, ns_format, bf16_order.  o == NULL is
 * refused.
 * Returns MUONREF_OK or MUONREF_EOPTION (message in err). */
MUONREF_API MUONREF_NODISCARD int muonref_ns_options_validate(const muonref_options *o, muonref_error *err);

/* The spelling of enum values used in the spec, the vectors and the CLI:
 * "fan_in", "sum", "cycle", "add", "bf16", ...  Each *_name returns NULL for
 * a value outside the enum; each *_parse returns MUONREF_OK and writes *out,
 * or MUONREF_EOPTION with a message naming the option and the accepted
 * spellings (for scale_mode the NeMo wording
 * "Unknown scale_mode 'rows', expected one of ('fan_in', 'fan_out', 'none')":
 * NeMo's option takes those three; "rms_adamw" has a name but is reached
 * only through a profile's own option, e.g. torch's adjust_lr_fn); out NULL
 * is MUONREF_EOPTION ("muonref_ns_format_parse: out must not be NULL"). */
MUONREF_API const char *muonref_scale_mode_name(muonref_scale_mode m);
MUONREF_API MUONREF_NODISCARD int muonref_scale_mode_parse(const char *s, muonref_scale_mode *out, muonref_error *err);
MUONREF_API const char *muonref_momentum_form_name(muonref_momentum_form f);
MUONREF_API MUONREF_NODISCARD int muonref_momentum_form_parse(const char *s, muonref_momentum_form *out, muonref_error *err);
MUONREF_API const char *muonref_coeff_order_name(muonref_coeff_order o);
MUONREF_API MUONREF_NODISCARD int muonref_coeff_order_parse(const char *s, muonref_coeff_order *out, muonref_error *err);
MUONREF_API const char *muonref_eps_mode_name(muonref_eps_mode m);
MUONREF_API MUONREF_NODISCARD int muonref_eps_mode_parse(const char *s, muonref_eps_mode *out, muonref_error *err);
MUONREF_API const char *muonref_ns_format_name(muonref_ns_format f);
MUONREF_API MUONREF_NODISCARD int muonref_ns_format_parse(const char *s, muonref_ns_format *out, muonref_error *err);
MUONREF_API const char *muonref_bf16_order_name(muonref_bf16_order o);
MUONREF_API MUONREF_NODISCARD int muonref_bf16_order_parse(const char *s, muonref_bf16_order *out, muonref_error *err);
MUONREF_API const char *muonref_route_rule_name(muonref_route_rule r);
MUONREF_API const char *muonref_catalogue_name(muonref_catalogue c);
MUONREF_API const char *muonref_adam_eps_mode_name(muonref_adam_eps_mode m);
MUONREF_API const char *muonref_scale_shape_name(muonref_scale_shape s);
MUONREF_API const char *muonref_scale_format_name(muonref_scale_format f);
MUONREF_API const char *muonref_conv_mode_name(muonref_conv_mode m);
MUONREF_API const char *muonref_missing_grad_name(muonref_missing_grad m);
MUONREF_API const char *muonref_grad_after_name(muonref_grad_after g);
MUONREF_API const char *muonref_adam_variant_name(muonref_adam_variant v);
MUONREF_API const char *muonref_norm_format_name(muonref_norm_format f);
MUONREF_API const char *muonref_pattern_match_name(muonref_pattern_match m);
MUONREF_API const char *muonref_moment2_name(muonref_moment2 m);
MUONREF_API const char *muonref_moment2_rescale_name(muonref_moment2_rescale r);
MUONREF_API const char *muonref_precondition_name(muonref_precondition p);
MUONREF_API const char *muonref_split_mode_name(muonref_split_mode m);
MUONREF_API const char *muonref_split_scale_name(muonref_split_scale s);
MUONREF_API const char *muonref_decay_method_name(muonref_decay_method m);
MUONREF_API const char *muonref_clip_form_name(muonref_clip_form f);

/* The coefficient triple that Newton-Schulz step k (0-based, k <
 * muonref_ns_step_count(o)) uses under o's list and order (see
 * muonref_coeff_order); (0, 0, 0) for o NULL, k < 0 or n_coeffs outside
 * 1..MUONREF_MAX_COEFFS. */
MUONREF_API muonref_coeff muonref_ns_coeff_at(const muonref_options *o, int k);

/* How many Newton-Schulz steps o runs: ns_steps, except under coeff_order
 * LIST with n_coeffs >= 2, where the list runs once (n_coeffs steps;
 * optax's `lax.scan` over its (n, 3) coefficients); 0 for o NULL. */
MUONREF_API int muonref_ns_step_count(const muonref_options *o);

#ifdef __cplusplus
}
#endif
#endif
