/* muonref: the profile table (see profile.h; spec/muon.md "Profiles",
 * spec/profiles/).  A profile is data: its defaults and the names under
 * which its port takes each option. */
#include <stddef.h>
#include <string.h>
#include "core/fail.h"
#include "core/pyfmt.h"
#include "muonref/presets.h"
#include "muonref/profile.h"

/* nemo: the defaults of nemo.core.optim.muon.Muon (NVIDIA-NeMo PR #16427)
 * and its zeropower_via_newtonschulz5: Keller's triple for every step,
 * X / (||X||_F + 1e-7), bf16. */
static void nemo(muonref_options *o)
{
  memset(o, 0, sizeof *o);
  o->lr = 2e-2;
  o->momentum = 0.95;
  o->nesterov = 1;
  o->ns_steps = 5;
  o->weight_decay = 0.0;
  o->scale_mode = MUONREF_SCALE_FAN_IN;
  o->adam_beta1 = 0.9;
  o->adam_beta2 = 0.95;
  o->adam_eps = 1e-8;
  o->adam_lr_ratio = 0.025;
  o->adam_dim_threshold = 8192;
  o->use_muon = MUONREF_USE_MUON_AUTO;
  o->momentum_form = MUONREF_MOMENTUM_SUM;
  muonref_preset_apply(muonref_preset_find("simple"), o);
  o->coeff_order = MUONREF_ORDER_CYCLE;
  o->ns_eps = 1e-7;
  o->eps_mode = MUONREF_EPS_ADD;
  o->ns_format = MUONREF_NS_BF16;
  o->bf16_order = MUONREF_BF16_SEPARATE;
  o->route_rule = MUONREF_ROUTE_THRESHOLD;
  o->catalogue = MUONREF_CATALOGUE_NEMO;
  o->ns_safety = 1.0;
  o->adam_variant = MUONREF_ADAM_ADAMW;
  o->scale_extra = 1.0;
}

/* torch: torch.optim.Muon, pytorch/pytorch torch/optim/_muon.py @b5ee4d7a
 * (PyTorch 2.9; spec/profiles/torch.md): Muon(params, lr=1e-3,
 * weight_decay=0.1, momentum=0.95, nesterov=True, ns_coefficients=(3.4445,
 * -4.775, 2.0315), eps=1e-07, ns_steps=5, adjust_lr_fn=None); EMA momentum
 * by lerp, eps clamped, addmm (bf16 order fused), 2-D parameters only.  The
 * adam_* fields are unused (no fallback); they keep nemo's valid values. */
static void torch_muon(muonref_options *o)
{
  nemo(o);
  o->lr = 1e-3;
  o->weight_decay = 0.1;
  o->momentum_form = MUONREF_MOMENTUM_EMA;
  o->eps_mode = MUONREF_EPS_CLAMP;
  o->bf16_order = MUONREF_BF16_FUSED;
  o->route_rule = MUONREF_ROUTE_TWO_D_ONLY;
  o->catalogue = MUONREF_CATALOGUE_TORCH;
}

/* moonlight: MoonshotAI/Moonlight examples/toy_train.py @c2ad5b2
 * (spec/profiles/moonlight.md): Muon(lr=1e-3, wd=0.1, muon_params,
 * momentum=0.95, nesterov=True, ns_steps=5, adamw_params,
 * adamw_betas=(0.9, 0.95), adamw_eps=1e-8); Keller's January 2025
 * Newton-Schulz (sum momentum, eps added, bf16 order keller), the update
 * scaled by 0.2 sqrt(max(A, B)), AdamW with the same lr and eps on the
 * uncorrected sqrt(v); routing by the caller's two lists; no checks. */
static void moonlight(muonref_options *o)
{
  nemo(o);
  o->lr = 1e-3;
  o->weight_decay = 0.1;
  o->scale_mode = MUONREF_SCALE_RMS_ADAMW;
  o->adam_lr_ratio = 1.0;
  o->bf16_order = MUONREF_BF16_KELLER;
  o->route_rule = MUONREF_ROUTE_MANUAL;
  o->catalogue = MUONREF_CATALOGUE_NONE;
  o->adam_eps_mode = MUONREF_ADAM_EPS_UNCORRECTED;
  o->conv_mode = MUONREF_CONV_TWO_D; /* `assert p.ndim == 2, p.ndim` */
}

/* timm: huggingface/pytorch-image-models timm/optim/muon.py @aa4b5850
 * (spec/profiles/timm.md): Muon(params, lr=0.02, weight_decay=0,
 * momentum=0.95, nesterov=False, ns_steps=5, ns_coefficients="quintic",
 * eps=1e-7, safety_factor=1.0, adjust_lr_fn="match_rms_adamw",
 * conv_mode="flatten", ..., fallback_lr_scale=1.0, betas=(0.9, 0.95));
 * EMA momentum by lerp, eps clamped (times safety_factor), addmm (bf16
 * order fused), the quintic list repeating its last triple, routing by
 * timm's heuristic, one eps for Newton-Schulz and the fallback, whose AdamW
 * becomes NAdamW with nesterov (timm/optim/nadamw.py). */
static void timm(muonref_options *o)
{
  nemo(o);
  o->nesterov = 0;
  o->scale_mode = MUONREF_SCALE_RMS_ADAMW;
  o->adam_eps = 1e-7;
  o->adam_lr_ratio = 1.0;
  o->momentum_form = MUONREF_MOMENTUM_EMA;
  muonref_preset_apply(muonref_preset_find("quintic"), o);
  o->coeff_order = MUONREF_ORDER_REPEAT_LAST; /* muon.py: coeffs + [coeffs[-1]] * (steps - n) */
  o->eps_mode = MUONREF_EPS_CLAMP;
  o->bf16_order = MUONREF_BF16_FUSED;
  o->route_rule = MUONREF_ROUTE_TIMM;
  o->catalogue = MUONREF_CATALOGUE_TIMM;
  o->ns_safety = 1.0;
  o->adam_variant = MUONREF_ADAM_FOLLOW_NESTEROV;
  o->grad_after_step = MUONREF_GRAD_AFTER_NESTEROV_INPUT; /* `update = grad.lerp_(momentum_buf, momentum)` */
}

/* keller: KellerJordan/Muon muon.py @857d1ad (2025-11-23; unchanged since
 * 5bc6993), SingleDeviceMuonWithAuxAdam (spec/profiles/keller.md): Muon
 * groups lr 0.02, momentum 0.95, weight_decay 0; muon_update with its
 * defaults nesterov=True, ns_steps=5: EMA momentum by lerp, Nesterov
 * lerp(G, M, beta), Keller's triple with eps added (bf16 order keller),
 * the scale sqrt(max(1, G.size(-2)/G.size(-1))) of the original shape
 * multiplied into the bf16 update, 4-D flattened and other N-D batched,
 * a missing gradient taken as zeros; AdamW groups (adam_fill) lr 3e-4,
 * betas (0.9, 0.95), eps 1e-10 after the bias correction, their own lr
 * (ratio 1); routing by each group's use_muon; bare asserts only. */
static void keller(muonref_options *o)
{
  nemo(o);
  o->momentum_form = MUONREF_MOMENTUM_EMA;
  o->bf16_order = MUONREF_BF16_KELLER;
  o->adam_eps = 1e-10;
  o->adam_lr_ratio = 1.0;
  o->route_rule = MUONREF_ROUTE_MANUAL;
  o->catalogue = MUONREF_CATALOGUE_NONE;
  o->scale_shape = MUONREF_SCALE_SHAPE_LAST_TWO;
  o->scale_format = MUONREF_SCALE_FORMAT_BF16_UPDATE;
  o->conv_mode = MUONREF_CONV_KELLER;
  o->missing_grad = MUONREF_MISSING_GRAD_ZEROS;
  o->grad_after_step = MUONREF_GRAD_AFTER_NESTEROV_INPUT; /* `grad.lerp_(momentum, beta)` */
}

/* dion: microsoft/dion dion/muon.py @0a059a4 (2026-08-07), Muon(params,
 * lr=0.01, mu=0.95, betas=(0.9, 0.95), weight_decay=0.01,
 * cautious_wd=False, epsilon=1e-8, nesterov=False,
 * adjust_lr="spectral_norm", flatten=False, use_polar_express=True)
 * (spec/profiles/dion.md): sum momentum (`_foreach_mul_(M, mu)`,
 * `_foreach_add_(M, G)`), Nesterov G + mu M, dion/polar_express.py's five
 * Polar Express triples once each (no ns_steps option), the bf16 norm
 * times 1.02 plus epsilon (`X.norm(...) * 1.02 + epsilon`), `b * A + c *
 * (A @ A)` (bf16 order separate; no transpose, X^T X on a tall matrix: the
 * same products), the scale sqrt(rows/cols) without max multiplied with
 * lr into the bf16 output (`_foreach_mul(U, adjusted_lr)`), the decay 1 -
 * lr wd always, N-D parameters a batch of their last two dimensions;
 * AdamW groups by `algorithm`, with the group's lr, betas and the one
 * epsilon (dion/scalar_opts.py adamw_update: eps after the bias
 * correction). */
static void dion(muonref_options *o)
{
  static const muonref_coeff PE[5] = {
    /* dion/polar_express.py _POLAR_EXPRESS_COEFFS */
    {8.156554524902461, -22.48329292557795, 15.878769915207462},
    {4.042929935166739, -2.808917465908714, 0.5000178451051316},
    {3.8916678022926607, -2.772484153217685, 0.5060648178503393},
    {3.285753657755655, -2.3681294933425376, 0.46449024233003106},
    {2.3465413258596377, -1.7097828382687081, 0.42323551169305323},
  };
  nemo(o);
  o->lr = 0.01;
  o->nesterov = 0;
  o->weight_decay = 0.01;
  o->scale_mode = MUONREF_SCALE_RMS_TO_RMS;
  o->adam_eps = 1e-8;
  o->adam_lr_ratio = 1.0;
  o->ns_steps = 5;
  o->n_coeffs = 5;
  for (int k = 0; k < 5; k++)
    o->coeffs[k] = PE[k];
  o->coeff_order = MUONREF_ORDER_REPEAT_LAST;
  o->ns_eps = 1e-8;
  o->eps_mode = MUONREF_EPS_ADD;
  o->bf16_order = MUONREF_BF16_SEPARATE;
  o->route_rule = MUONREF_ROUTE_MANUAL;
  o->catalogue = MUONREF_CATALOGUE_DION;
  o->scale_format = MUONREF_SCALE_FORMAT_BF16_ALPHA;
  o->conv_mode = MUONREF_CONV_BATCHED;
  o->ns_safety = 1.02;
}

/* paddle: PaddlePaddle/Paddle python/paddle/optimizer/muon.py @98af0a0f
 * (spec/profiles/paddle.md), Muon(learning_rate=0.02, momentum=0.95,
 * adam_beta1=0.9, adam_beta2=0.95, weight_decay=0.01, ns_steps=5,
 * ns_coeff_type="simple", nesterov=True, adam_epsilon=1e-09,
 * muon_version=1, muon_extra_scale_factor=0.2) on the GPU path
 * (ns_matmul_dtype bf16): EMA momentum (`lerp`), Nesterov `lerp(g, M, beta)`,
 * the coefficient list of ns_coeff_type cycled (`coeffs[i % len]`), the
 * float32 input normalised by max(||X||_F, adam_epsilon) before the bf16
 * cast, `addmm` steps (fused), the scale sqrt(max(1, cols/rows)) and 0.2
 * as two bf16 products, then `p -= O * lr` with a float32 lr, the decay
 * only when weight_decay > 0; routing by the per-name map (use_muon) or the
 * default rule (2-D or 3-D, no excluded name); a 3-D parameter a batch of
 * matrices; AdamW with lr * lr_ratio, eps after the corrected sqrt, the
 * decay with lr * lr_ratio. */
static void paddle(muonref_options *o)
{
  nemo(o);
  o->weight_decay = 0.01;
  o->nesterov = 1;
  o->scale_mode = MUONREF_SCALE_FAN_OUT;
  o->adam_eps = 1e-9;
  o->adam_lr_ratio = 1.0;
  o->momentum_form = MUONREF_MOMENTUM_EMA;
  muonref_preset_apply(muonref_preset_find("simple"), o);
  o->coeff_order = MUONREF_ORDER_CYCLE; /* `coeffs[i % len(coeffs)]` */
  o->ns_eps = 1e-9;                     /* adam_epsilon */
  o->eps_mode = MUONREF_EPS_CLAMP;      /* F.normalize: x / max(||x||, eps) */
  o->bf16_order = MUONREF_BF16_FUSED;   /* addmm(A, A, A, beta=b, alpha=c), addmm(X, B, X, beta=a) */
  o->route_rule = MUONREF_ROUTE_NDIM_2_3;
  o->catalogue = MUONREF_CATALOGUE_PADDLE;
  o->scale_format = MUONREF_SCALE_FORMAT_BF16_SCALE_EXTRA;
  o->conv_mode = MUONREF_CONV_BATCHED; /* 3-D: baddbmm over dim 0 */
  o->scale_extra = 0.2;
  o->norm_format = MUONREF_NORM_FORMAT_INPUT;
}

/* emerging: NVIDIA-NeMo/Emerging-Optimizers orthogonalized_optimizers/muon.py
 * @fd77292 (2026-08-20; the release v0.4.0 has the same defaults and eps;
 * spec/profiles/emerging.md): Muon(params, lr=3e-4, momentum=0.95,
 * weight_decay=0.01, *, nesterov=False, weight_decay_method="decoupled",
 * fp32_matmul_prec="medium", coefficient_type="quintic", num_ns_steps=5,
 * scale_mode="spectral", extra_scale_factor=1.0); EMA momentum by lerp
 * (OrthogonalizedOptimizer.step), Newton-Schulz normalised in float32 by
 * F.normalize (eps 1e-15 clamped) before the cast to bf16, the quintic list
 * cycled, addmm (bf16 order fused), the scale sqrt(max(rows, cols)) without
 * 0.2, the decoupled decay `p.add_(p, alpha=-wd * lr)` (P (1 - lr wd) rounded
 * once), no fallback and 2-D parameters only.  nesterov=False is every
 * tagged release's default (v0.1.0 on); the untagged snapshots 2e15dc5 to
 * b724bb7^ (2025-09/10) had use_nesterov=True: the fault nesterov_default_on. */
static void emerging(muonref_options *o)
{
  nemo(o);
  o->lr = 3e-4;
  o->weight_decay = 0.01;
  o->nesterov = 0;
  o->scale_mode = MUONREF_SCALE_SQRT_MAX;
  o->momentum_form = MUONREF_MOMENTUM_EMA;
  muonref_preset_apply(muonref_preset_find("quintic"), o);
  o->coeff_order = MUONREF_ORDER_CYCLE; /* get_coefficient_iterator(mode="cycle") for quintic */
  o->ns_eps = 1e-15;
  o->eps_mode = MUONREF_EPS_CLAMP;
  o->bf16_order = MUONREF_BF16_FUSED;
  o->route_rule = MUONREF_ROUTE_TWO_D_ONLY;
  o->catalogue = MUONREF_CATALOGUE_EMERGING;
  o->norm_format = MUONREF_NORM_FORMAT_INPUT;
}

/* optax: google-deepmind/optax optax/contrib/_muon.py @2edbcbe2
 * (2026-08-07; spec/profiles/optax.md), muon(learning_rate, ns_coeffs=
 * (3.4445, -4.7750, 2.0315), ns_steps=5, beta=0.95, eps=1e-8,
 * weight_decay=0.0, weight_decay_mask=None, mu_dtype=None, nesterov=True,
 * adaptive=False, adam_b1=0.9, adam_b2=0.999, adam_eps_root=0.0,
 * adam_weight_decay=0.0, adam_learning_rate=None, preconditioning=
 * 'frobenius', consistent_rms=None): EMA momentum (tree_update_moment) with
 * the bias-corrected Nesterov input, Newton-Schulz in the parameter's dtype
 * (float32: ns_format fp32), X / (||X||_F + 1e-8), transposed when rows >
 * cols, a coefficient list run once each (a triple ns_steps times), the
 * scale sqrt(max(1, fan_out / fan_in)) = sqrt(max(1, cols / rows)) of the
 * (fan_in, fan_out) layout, the update -lr (s O + wd P) (nemo's decoupled
 * P (1 - lr wd) - lr s O up to float32 roundings: within the element-wise
 * allowance of spec/vectors.md 5.1, no field; verified: the test port
 * evaluates optax's form in float32 and passes vectors/optax, its
 * weight_decay cases at lr 1 and weight decay 0.5 included, raw and
 * neutral); every 2-D leaf Muon, the
 * rest optax.adamw(lr, 0.9, 0.999, eps (the Muon eps, outside the square
 * root), adam_weight_decay, nesterov=nesterov): NAdam with Nesterov; one
 * transformation for every leaf (one group). */
static void optax(muonref_options *o)
{
  nemo(o);
  o->lr = 2e-2; /* learning_rate is required: the vectors always give it (nemo's value here) */
  o->momentum = 0.95;
  o->nesterov = 1;
  o->weight_decay = 0.0;
  o->scale_mode = MUONREF_SCALE_FAN_OUT;
  o->adam_beta1 = 0.9;
  o->adam_beta2 = 0.999;
  o->adam_eps = 1e-8;
  o->adam_lr_ratio = 1.0;
  o->momentum_form = MUONREF_MOMENTUM_EMA;
  o->coeff_order = MUONREF_ORDER_LIST;
  o->ns_eps = 1e-8;
  o->eps_mode = MUONREF_EPS_ADD;
  o->ns_format = MUONREF_NS_FP32;
  o->bf16_order = MUONREF_BF16_KELLER; /* `c2 * a @ a` is (c2 * a) @ a; in float32 no difference */
  o->route_rule = MUONREF_ROUTE_NDIM_2;
  o->catalogue = MUONREF_CATALOGUE_OPTAX;
  o->adam_variant = MUONREF_ADAM_OPTAX_FOLLOW_NESTEROV;
  o->momentum_bias_correction = 1;
  o->adam_weight_decay = 0.0;
  o->adam_decay_own = 1;
}

/* megatron: NVIDIA/Megatron-LM megatron/core/optimizer/muon.py 025c931a
 * (get_megatron_muon_optimizer, TensorParallelMuon) with OptimizerConfig's
 * defaults (optimizer_config.py 0075637c; spec/profiles/megatron.md):
 * Emerging-Optimizers' Muon (emerging's row) with muon_momentum 0.95,
 * muon_nesterov False, muon_num_ns_steps 5, muon_scale_mode "spectral",
 * muon_extra_scale_factor 1.0, weight_decay 0.01; the parameters Megatron
 * keeps off Muon (1-D, and 2-D ones tagged is_embedding_or_output_parameter,
 * use_muon FALSE) go to its Adam with decoupled_weight_decay True (AdamW,
 * eps 1e-8 after the bias-corrected square root), betas (adam_beta1 0.9,
 * adam_beta2 0.999), the same lr (adam_lr_ratio 1); clip_grad 1.0 clips
 * every gradient by the global norm before the step.  lr has no default
 * (config.lr is required): 3e-4, Emerging-Optimizers' own, stands for it. */
static void megatron(muonref_options *o)
{
  emerging(o);
  o->adam_beta1 = 0.9;
  o->adam_beta2 = 0.999;
  o->adam_eps = 1e-8;
  o->adam_lr_ratio = 1.0;
  o->adam_eps_mode = MUONREF_ADAM_EPS_CORRECTED;
  o->adam_variant = MUONREF_ADAM_ADAMW;
  o->route_rule = MUONREF_ROUTE_NOT_1D;
  o->catalogue = MUONREF_CATALOGUE_MEGATRON;
  o->clip_grad_norm = 1.0;
}

/* keras: keras.optimizers.Muon, keras-team/keras keras/src/optimizers/muon.py
 * and base_optimizer.py @3422977a (v3.13.0 and later; spec/profiles/keras.md):
 * Muon(learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999,
 * adam_weight_decay=0.004, epsilon=1e-7, weight_decay=0.004, ...,
 * exclude_layers=None, exclude_embeddings=True, muon_a=3.4445,
 * muon_b=-4.7750, muon_c=2.0315, adam_lr_ratio=1, momentum=0.95,
 * ns_steps=5, nesterov=True, rms_rate=0.2): sum momentum `m + (g + m *
 * (momentum - 1))`, Nesterov `g + momentum * m`, Newton-Schulz in the
 * variable's dtype (float32) with `x / (norm + 1e-7)` and the transpose of a
 * tall matrix, the update `lr * O * sqrt(max(rows, cols)) * rms_rate`, the
 * decay `v - v * wd * lr` first on every variable with the Muon lr
 * (adam_weight_decay for AdamW variables), AdamW with epsilon hat
 * (`m * alpha / (sqrt(v) + epsilon)`), lr * adam_lr_ratio, the optimizer's
 * `iterations + 1` as its step and float32 bias corrections; routing:
 * exactly 2-D, minus names containing "embedding", minus `re.search`
 * matches of exclude_layers; no value checks. */
static void keras(muonref_options *o)
{
  nemo(o);
  o->lr = 1e-3;
  o->weight_decay = 0.004;
  o->scale_mode = MUONREF_SCALE_SQRT_MAX;
  o->scale_extra = 0.2;
  o->adam_beta1 = 0.9;
  o->adam_beta2 = 0.999;
  o->adam_eps = 1e-7;
  o->adam_lr_ratio = 1.0;
  o->adam_eps_mode = MUONREF_ADAM_EPS_UNCORRECTED; /* epsilon hat on the uncorrected sqrt(v) */
  o->ns_format = MUONREF_NS_FP32;
  o->bf16_order = MUONREF_BF16_KELLER; /* `b * temp_a + c * temp_a @ temp_a`: (c A) A; bf16 only */
  o->route_rule = MUONREF_ROUTE_NDIM_2;
  o->catalogue = MUONREF_CATALOGUE_KERAS;
  o->pattern_match = MUONREF_MATCH_REGEX;
  o->adam_weight_decay = 0.004;
  o->adam_decay_own = 1;
  o->exclude_embeddings = 1;
  o->adam_decay_muon_lr = 1;
  o->adam_step_global = 1;
  o->adam_bias_fp32 = 1;
  o->all_missing_error = 1;
}

/* keller's AdamW groups: `group["lr"] = group.get("lr", 3e-4)` */
static void keller_adam(muonref_options *o) { o->lr = 3e-4; }

#define K(name, kind, field) {name, kind, offsetof(muonref_options, field), MUONREF_KEY_ANY}
#define KB(name, kind, field, branch) {name, kind, offsetof(muonref_options, field), branch}

/* NeMo's option names (the constructor's keywords and group keys). */
static const muonref_option_key NEMO_KEYS[] = {
  K("lr", MUONREF_KEY_REAL, lr),
  K("momentum", MUONREF_KEY_REAL, momentum),
  K("nesterov", MUONREF_KEY_BOOL, nesterov),
  K("ns_steps", MUONREF_KEY_INT, ns_steps),
  K("weight_decay", MUONREF_KEY_REAL, weight_decay),
  K("scale_mode", MUONREF_KEY_SCALE_MODE, scale_mode),
  K("adam_betas", MUONREF_KEY_BETAS, adam_beta1),
  K("adam_eps", MUONREF_KEY_REAL, adam_eps),
  K("adam_lr_ratio", MUONREF_KEY_REAL, adam_lr_ratio),
  K("adam_dim_threshold", MUONREF_KEY_LONG, adam_dim_threshold),
  K("use_muon", MUONREF_KEY_USE_MUON, use_muon),
};

/* torch.optim.Muon's `defaults` keys, in its signature's order. */
static const muonref_option_key TORCH_KEYS[] = {
  K("lr", MUONREF_KEY_REAL, lr),
  K("weight_decay", MUONREF_KEY_REAL, weight_decay),
  K("momentum", MUONREF_KEY_REAL, momentum),
  K("nesterov", MUONREF_KEY_BOOL, nesterov),
  K("ns_coefficients", MUONREF_KEY_COEFF3, coeffs),
  K("eps", MUONREF_KEY_REAL, ns_eps),
  K("ns_steps", MUONREF_KEY_INT, ns_steps),
  K("adjust_lr_fn", MUONREF_KEY_ADJUST_LR, scale_mode),
};

/* Moonlight's constructor keywords; use_muon says which of its two lists
 * (muon_params: true, adamw_params: false) a group's parameters go to. */
static const muonref_option_key MOONLIGHT_KEYS[] = {
  K("lr", MUONREF_KEY_REAL, lr),
  K("wd", MUONREF_KEY_REAL, weight_decay),
  K("momentum", MUONREF_KEY_REAL, momentum),
  K("nesterov", MUONREF_KEY_BOOL, nesterov),
  K("ns_steps", MUONREF_KEY_INT, ns_steps),
  K("adamw_betas", MUONREF_KEY_BETAS, adam_beta1),
  K("adamw_eps", MUONREF_KEY_REAL, adam_eps),
  K("use_muon", MUONREF_KEY_USE_MUON, use_muon),
};

/* Keller's group keys: Muon groups exactly {params, lr, momentum,
 * weight_decay, use_muon}, AdamW groups exactly {params, lr, betas, eps,
 * weight_decay, use_muon} (the constructor's asserts). */
static const muonref_option_key KELLER_KEYS[] = {
  K("lr", MUONREF_KEY_REAL, lr),
  KB("momentum", MUONREF_KEY_REAL, momentum, MUONREF_KEY_MUON_ONLY),
  KB("betas", MUONREF_KEY_BETAS, adam_beta1, MUONREF_KEY_ADAM_ONLY),
  KB("eps", MUONREF_KEY_REAL, adam_eps, MUONREF_KEY_ADAM_ONLY),
  K("weight_decay", MUONREF_KEY_REAL, weight_decay),
  K("use_muon", MUONREF_KEY_USE_MUON, use_muon),
};

/* timm's Muon keywords and group keys (muon.py @aa4b5850), in its
 * signature's order; conv_mode, normalize_spatial, algo, scale_eps,
 * capturable and verbose are left at timm's defaults (not expressible). */
static const muonref_option_key TIMM_KEYS[] = {
  K("lr", MUONREF_KEY_REAL, lr),
  K("weight_decay", MUONREF_KEY_REAL, weight_decay),
  K("momentum", MUONREF_KEY_REAL, momentum),
  K("nesterov", MUONREF_KEY_BOOL, nesterov),
  K("ns_steps", MUONREF_KEY_INT, ns_steps),
  K("ns_coefficients", MUONREF_KEY_COEFF_LIST, coeffs),
  K("eps", MUONREF_KEY_EPS_SHARED, ns_eps),
  K("safety_factor", MUONREF_KEY_REAL, ns_safety),
  K("adjust_lr_fn", MUONREF_KEY_ADJUST_LR_TIMM, scale_mode),
  K("fallback_lr_scale", MUONREF_KEY_REAL, adam_lr_ratio),
  K("betas", MUONREF_KEY_BETAS, adam_beta1),
  K("use_muon", MUONREF_KEY_USE_MUON, use_muon),
};

/* dion's Muon keywords and group keys (muon.py @0a059a4), in its
 * signature's order; distributed_mesh, cautious_wd (False),
 * use_gram_newton_schulz, use_triton, use_polar_express (True) and
 * newton_schulz_func are left at dion's defaults (not expressible). */
static const muonref_option_key DION_KEYS[] = {
  K("lr", MUONREF_KEY_REAL, lr),
  K("mu", MUONREF_KEY_REAL, momentum),
  K("betas", MUONREF_KEY_BETAS, adam_beta1),
  K("weight_decay", MUONREF_KEY_REAL, weight_decay),
  K("epsilon", MUONREF_KEY_EPS_SHARED, ns_eps),
  K("nesterov", MUONREF_KEY_BOOL, nesterov),
  K("adjust_lr", MUONREF_KEY_ADJUST_LR_DION, scale_mode),
  K("flatten", MUONREF_KEY_FLATTEN, conv_mode),
  K("algorithm", MUONREF_KEY_ALGORITHM, use_muon),
};

/* Emerging-Optimizers' Muon keywords (muon.py @fd77292), in its
 * signature's order; lr, momentum, weight_decay are group keys, the others
 * the optimizer's (closed over at construction).  weight_decay_method,
 * fp32_matmul_prec ("medium": bf16), coefficient_type ("quintic"),
 * use_syrk and weight_update_hook stay at their defaults (not expressible). */
static const muonref_option_key EMERGING_KEYS[] = {
  K("lr", MUONREF_KEY_REAL, lr),
  K("momentum", MUONREF_KEY_REAL, momentum),
  K("weight_decay", MUONREF_KEY_REAL, weight_decay),
  K("nesterov", MUONREF_KEY_BOOL, nesterov),
  K("num_ns_steps", MUONREF_KEY_INT, ns_steps),
  K("scale_mode", MUONREF_KEY_SCALE_MODE_EMERGING, scale_mode),
  K("extra_scale_factor", MUONREF_KEY_REAL, scale_extra),
};

/* paddle.optimizer.Muon's keywords (muon.py @98af0a0f), in its signature's
 * order, plus the per-parameter entries of its callables and map:
 * use_muon (muon_param_info_map[name].use_muon; null: the default rule),
 * lr_ratio (the value lr_ratio(param) returns for the group's parameters).
 * A group with weight_decay 0 is apply_decay_param_fun(name) False; the
 * other groups share one weight_decay (spec/profiles/paddle.md 1, 10).
 * grad_clip, multi_precision, ns_matmul_dtype (the ns_format) are left out. */
static const muonref_option_key PADDLE_KEYS[] = {
  K("learning_rate", MUONREF_KEY_REAL, lr),
  K("momentum", MUONREF_KEY_REAL, momentum),
  K("adam_beta1", MUONREF_KEY_REAL, adam_beta1),
  K("adam_beta2", MUONREF_KEY_REAL, adam_beta2),
  K("weight_decay", MUONREF_KEY_REAL, weight_decay),
  K("ns_steps", MUONREF_KEY_INT, ns_steps),
  K("ns_coeff_type", MUONREF_KEY_NS_COEFF_TYPE, coeffs),
  K("ns_coeffs", MUONREF_KEY_NS_COEFFS, coeffs),
  K("nesterov", MUONREF_KEY_BOOL, nesterov),
  K("adam_epsilon", MUONREF_KEY_EPS_SHARED, ns_eps),
  K("lr_ratio", MUONREF_KEY_REAL, adam_lr_ratio),
  K("muon_version", MUONREF_KEY_MUON_VERSION, scale_mode),
  K("muon_exclude_patterns", MUONREF_KEY_PATTERNS, exclude_patterns),
  K("muon_extra_scale_factor", MUONREF_KEY_REAL, scale_extra),
  K("use_muon", MUONREF_KEY_USE_MUON, use_muon),
};

/* optax.contrib.muon's keywords (_muon.py @2edbcbe2), in its signature's
 * order; eps is the Newton-Schulz and the Adam eps.  weight_decay_mask,
 * mu_dtype, adaptive (False), adam_eps_root (0), adam_learning_rate (None:
 * learning_rate), muon_weight_dimension_numbers (None: every 2-D leaf) and
 * preconditioning ('frobenius') stay at their defaults (not expressible). */
static const muonref_option_key OPTAX_KEYS[] = {
  K("learning_rate", MUONREF_KEY_REAL, lr),
  K("ns_coeffs", MUONREF_KEY_NS_COEFFS_OPTAX, coeffs),
  K("ns_steps", MUONREF_KEY_INT, ns_steps),
  K("beta", MUONREF_KEY_REAL, momentum),
  K("eps", MUONREF_KEY_EPS_SHARED, ns_eps),
  K("weight_decay", MUONREF_KEY_REAL, weight_decay),
  K("nesterov", MUONREF_KEY_BOOL, nesterov),
  K("adam_b1", MUONREF_KEY_REAL, adam_beta1),
  K("adam_b2", MUONREF_KEY_REAL, adam_beta2),
  K("adam_weight_decay", MUONREF_KEY_REAL, adam_weight_decay),
  K("consistent_rms", MUONREF_KEY_CONSISTENT_RMS, scale_extra),
};

/* Megatron's OptimizerConfig fields (optimizer_config.py 0075637c), in its
 * order; weight_decay and lr are also per-group (_get_param_groups), the
 * others one value for the optimizer.  use_muon false is the
 * is_embedding_or_output_parameter tag (null: untagged, routed by shape;
 * true: as null).  muon_fp32_matmul_prec ("medium": bf16),
 * muon_coefficient_type ("quintic"), muon_tp_mode, muon_split_qkv (off in
 * 025c931a), muon_scalar_optimizer ("adam") and decoupled_weight_decay
 * (True) stay at their defaults (not expressible). */
static const muonref_option_key MEGATRON_KEYS[] = {
  K("lr", MUONREF_KEY_REAL, lr),
  K("weight_decay", MUONREF_KEY_REAL, weight_decay),
  K("adam_beta1", MUONREF_KEY_REAL, adam_beta1),
  K("adam_beta2", MUONREF_KEY_REAL, adam_beta2),
  K("adam_eps", MUONREF_KEY_REAL, adam_eps),
  K("clip_grad", MUONREF_KEY_REAL, clip_grad_norm),
  K("muon_momentum", MUONREF_KEY_REAL, momentum),
  K("muon_nesterov", MUONREF_KEY_BOOL, nesterov),
  K("muon_scale_mode", MUONREF_KEY_SCALE_MODE_EMERGING, scale_mode),
  K("muon_num_ns_steps", MUONREF_KEY_INT, ns_steps),
  K("muon_extra_scale_factor", MUONREF_KEY_REAL, scale_extra),
  K("use_muon", MUONREF_KEY_USE_MUON, use_muon),
};

/* keras.optimizers.Muon's keywords (muon.py @3422977a), in its signature's
 * order; the base optimizer's clipnorm, clipvalue, global_clipnorm, use_ema,
 * ema_momentum, ema_overwrite_frequency, loss_scale_factor,
 * gradient_accumulation_steps and name stay at their defaults (not
 * expressible).  weight_decay and adam_weight_decay None are written 0 (no
 * decay, the same step). */
static const muonref_option_key KERAS_KEYS[] = {
  K("learning_rate", MUONREF_KEY_REAL, lr),
  K("adam_beta_1", MUONREF_KEY_REAL, adam_beta1),
  K("adam_beta_2", MUONREF_KEY_REAL, adam_beta2),
  K("adam_weight_decay", MUONREF_KEY_REAL, adam_weight_decay),
  K("epsilon", MUONREF_KEY_REAL, adam_eps),
  K("weight_decay", MUONREF_KEY_REAL, weight_decay),
  K("exclude_layers", MUONREF_KEY_PATTERNS, exclude_patterns),
  K("exclude_embeddings", MUONREF_KEY_BOOL, exclude_embeddings),
  K("muon_a", MUONREF_KEY_REAL, coeffs[0].a),
  K("muon_b", MUONREF_KEY_REAL, coeffs[0].b),
  K("muon_c", MUONREF_KEY_REAL, coeffs[0].c),
  K("adam_lr_ratio", MUONREF_KEY_REAL, adam_lr_ratio),
  K("momentum", MUONREF_KEY_REAL, momentum),
  K("ns_steps", MUONREF_KEY_INT, ns_steps),
  K("nesterov", MUONREF_KEY_BOOL, nesterov),
  K("rms_rate", MUONREF_KEY_RMS_RATE, scale_extra),
};

#undef K
#undef KB
#define N(a) (sizeof a / sizeof a[0])

static const muonref_profile PROFILES[] = {
  /* in muonref_profile_id order */
  {"nemo", "NVIDIA-NeMo PR #16427, nemo/core/optim/muon.py (../shared/seeds)", nemo, NEMO_KEYS, N(NEMO_KEYS), 0, NULL},
  {"torch", "pytorch/pytorch torch/optim/_muon.py @b5ee4d7a (PyTorch 2.9)", torch_muon, TORCH_KEYS, N(TORCH_KEYS), 0, NULL},
  {"moonlight", "MoonshotAI/Moonlight examples/toy_train.py @c2ad5b2 (2025-08-02)", moonlight, MOONLIGHT_KEYS,
   N(MOONLIGHT_KEYS), 1, NULL},
  {"keller", "KellerJordan/Muon muon.py @857d1ad (2025-11-23), SingleDeviceMuonWithAuxAdam", keller, KELLER_KEYS,
   N(KELLER_KEYS), 0, keller_adam},
  {"timm", "huggingface/pytorch-image-models timm/optim/muon.py @aa4b5850 (2026-08-08)", timm, TIMM_KEYS,
   N(TIMM_KEYS), 0, NULL},
  {"dion", "microsoft/dion dion/muon.py, dion/polar_express.py, dion/megabatch_base.py @0a059a4 (2026-08-07)", dion,
   DION_KEYS, N(DION_KEYS), 0, NULL},
  [MUONREF_PROFILE_EMERGING] = {"emerging",
   "NVIDIA-NeMo/Emerging-Optimizers emerging_optimizers/orthogonalized_optimizers/muon.py @fd77292 (2026-08-20)",
   emerging, EMERGING_KEYS, N(EMERGING_KEYS), 0, NULL},
  [MUONREF_PROFILE_PADDLE] = {"paddle", "PaddlePaddle/Paddle python/paddle/optimizer/muon.py @98af0a0f "
   "(paddle.optimizer.Muon)", paddle, PADDLE_KEYS, N(PADDLE_KEYS), 0, NULL},
  [MUONREF_PROFILE_OPTAX] = {"optax", "google-deepmind/optax optax/contrib/_muon.py @2edbcbe2 (2026-08-07)", optax,
                             OPTAX_KEYS, N(OPTAX_KEYS), 1, NULL},
  [MUONREF_PROFILE_MEGATRON] = {"megatron", "NVIDIA/Megatron-LM megatron/core/optimizer/muon.py 025c931a, "
   "optimizer_config.py 0075637c, clip_grads.py", megatron, MEGATRON_KEYS, N(MEGATRON_KEYS), 0, NULL},
  [MUONREF_PROFILE_KERAS] = {"keras", "keras-team/keras keras/src/optimizers/muon.py, base_optimizer.py @3422977a "
   "(2026-08-21; v3.13.0 and later)", keras, KERAS_KEYS, N(KERAS_KEYS), 1, NULL},
};

/* every id has its entry, in id order */
_Static_assert(sizeof PROFILES / sizeof PROFILES[0] == MUONREF_PROFILE_COUNT, "one PROFILES entry per profile id");

size_t muonref_profile_count(void) { return N(PROFILES); }

int muonref_options_init(muonref_options *o, muonref_profile_id id, muonref_error *err)
{
  if (!o)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_options_init: o must not be NULL");
  if ((int)id < 0 || (size_t)id >= N(PROFILES) || !PROFILES[id].name)
    return muonref_fail(err, MUONREF_EOPTION, "Unknown profile id %d, expected 0 to %zu", (int)id, N(PROFILES) - 1);
  PROFILES[id].fill(o);
  return MUONREF_OK;
}

const muonref_profile *muonref_profile_at(size_t i) { return i < N(PROFILES) && PROFILES[i].name ? &PROFILES[i] : NULL; }

const char *muonref_profile_name(size_t i) { return i < N(PROFILES) ? PROFILES[i].name : NULL; }

const muonref_profile *muonref_profile_get(const char *name)
{
  for (size_t i = 0; name && i < N(PROFILES); i++)
    if (PROFILES[i].name && strcmp(name, PROFILES[i].name) == 0)
      return &PROFILES[i];
  return NULL;
}

int muonref_profile_options(const char *name, muonref_options *out, muonref_error *err)
{
  if (!out)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_profile_options: out must not be NULL");
  const muonref_profile *p = muonref_profile_get(name);
  if (p) {
    p->fill(out);
    return MUONREF_OK;
  }
  const char *names[N(PROFILES)];
  size_t n = 0;
  for (size_t i = 0; i < N(PROFILES); i++)
    names[n++] = PROFILES[i].name;
  char list[256];
  return muonref_fail(err, MUONREF_EOPTION, "Unknown profile '%s', expected one of %s", name ? name : "",
                      muonref_py_str_tuple(list, sizeof list, names, n));
}
