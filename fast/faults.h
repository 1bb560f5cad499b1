/* muonref: deliberate faults of the fast path, for mutation testing of the
 * vectors (`muonref check --impl fast-bf16 --fault NAME`) and the judge's
 * diagnosis.  Each fault is a real difference between Muon ports or a
 * public bug report (the `source` of each entry names it;
 * ../shared/reference/ has the details); fault 0 (MUONREF_FAULT_NONE) is
 * the spec.  Not installed.
 *
 * The test-control seam (SQLite's design): faults that are only option
 * values (momentum form, a coefficient, the step count, eps and its mode,
 * the scale rule) are not known to the optimizer at all; the harness sets
 * them with muonref_fault_options before it creates the optimizer or runs
 * Newton-Schulz.  The others sit behind MUONREF_TEST_HOOKS, defined only
 * for the noinst libmuonref_hooks (linked by the muonref command, the
 * tests and the vectors library; fast/faults.c is compiled there only).
 * Without it, as in the installed libmuonref, MUONREF_HOOK(x) is nothing
 * and MUONREF_HOOK_OR(x, v) is v: the optimizer carries no fault id and
 * its code is the spec's alone. */
#ifndef MUONREF_FAULTS_H
#define MUONREF_FAULTS_H

#ifndef MUONREF_TEST_HOOKS
#define MUONREF_HOOK(x) ((void)0)
#define MUONREF_HOOK_OR(x, otherwise) (otherwise)
#else
#define MUONREF_HOOK(x) (x)
#define MUONREF_HOOK_OR(x, otherwise) (x)

#include "muonref/options.h"
#include "core/plan.h"
#include "muonref/route.h"

/* Stable ids: results files, known-failure lists and scripts name faults by
 * name, but the numbers are kept too; a new fault is appended before
 * MUONREF_FAULT_COUNT, never inserted. */
enum {
  MUONREF_FAULT_NONE = 0,
  MUONREF_FAULT_EMA_MOMENTUM,
  MUONREF_FAULT_NESTEROV_IGNORED,
  MUONREF_FAULT_NESTEROV_EMA_BLEND,
  MUONREF_FAULT_WRONG_COEFFICIENT,
  MUONREF_FAULT_BF16_SCALARS,
  MUONREF_FAULT_FOUR_STEPS,
  MUONREF_FAULT_SIX_STEPS,
  MUONREF_FAULT_EPS_CLAMP,
  MUONREF_FAULT_EPS_1E8,
  MUONREF_FAULT_FAN_SWAPPED,
  MUONREF_FAULT_DECAY_SCALED_LR,
  MUONREF_FAULT_DECAY_SKIPPED_GROUP,
  MUONREF_FAULT_DECAY_AFTER_UPDATE,
  MUONREF_FAULT_ADAM_EPS_INSIDE,
  MUONREF_FAULT_ADAM_NO_BIAS_CORRECTION,
  MUONREF_FAULT_ADAM_LR_NO_RATIO,
  MUONREF_FAULT_ADAM_DECAY_MUON_LR,
  MUONREF_FAULT_MISSING_GRAD_AS_ZEROS,
  MUONREF_FAULT_CONV_SCALE_UNFLATTENED,
  MUONREF_FAULT_NO_TRANSPOSE,
  MUONREF_FAULT_MAX_NORM,
  MUONREF_FAULT_THRESHOLD_INCLUSIVE,
  MUONREF_FAULT_ROUTE_ALL_MATRICES,
  MUONREF_FAULT_NONFINITE_ACCEPTED,
  MUONREF_FAULT_STATE_STEP_RESET,
  /* faults of the other profiles' ports (spec/profiles/, each page's section "Faults") */
  MUONREF_FAULT_SUM_MOMENTUM,
  MUONREF_FAULT_EPS_ADD,
  MUONREF_FAULT_NESTEROV_SUM_INPUT,
  MUONREF_FAULT_RMS_AS_FAN_IN,
  MUONREF_FAULT_RMS_WITHOUT_FACTOR,
  MUONREF_FAULT_ADAM_EPS_CORRECTED,
  MUONREF_FAULT_ND_FLATTENED,
  MUONREF_FAULT_FAN_IN_AS_RMS,
  MUONREF_FAULT_MISSING_GRAD_SKIPPED,
  MUONREF_FAULT_CONV_SCALE_FLATTENED,
  MUONREF_FAULT_BATCHED_AS_FLATTENED,
  MUONREF_FAULT_SCALE_IN_LR,
  /* faults of timm's port (spec/profiles/timm.md section 10) */
  MUONREF_FAULT_NESTEROV_DEFAULT_ON, /* set by the harness (vectors/judge/run_fast.c): it depends on the options given */
  MUONREF_FAULT_NADAMW_AS_ADAMW,
  MUONREF_FAULT_EPS_SPLIT,
  MUONREF_FAULT_SAFETY_IGNORED,
  /* faults a learning-rate scheduler exposes (spec/vectors.md 2.8) */
  MUONREF_FAULT_CACHED_GROUP_OPTIONS,
  /* faults of Emerging-Optimizers' port (spec/profiles/emerging.md section 10) */
  MUONREF_FAULT_SPECTRAL_WITH_FACTOR,
  MUONREF_FAULT_SCALE_MODE_SWAPPED,
  MUONREF_FAULT_NORM_IN_BF16,
  MUONREF_FAULT_EPS_FLOOR_1E7,
  /* faults of dion's port (spec/profiles/dion.md section 11) */
  MUONREF_FAULT_LR_SCALE_FIRST_TWO_DIMS,
  MUONREF_FAULT_NS5_BEFORE_POLAR_EXPRESS,
  MUONREF_FAULT_ZERO_NORM_NAN,
  MUONREF_FAULT_OPTAX_SCALE_NONE,
  MUONREF_FAULT_OPTAX_NESTEROV_NO_BIAS_CORRECTION,
  MUONREF_FAULT_OPTAX_LIST_CYCLED,
  /* faults of Megatron-LM's port (spec/profiles/megatron.md section 7) */
  MUONREF_FAULT_MEGATRON_CLIP_UPDATE,        /* fast/optimizer.c: after phase 1 */
  MUONREF_FAULT_MEGATRON_TIED_EMBEDDING_MUON,
  MUONREF_FAULT_MEGATRON_NESTEROV_DEFAULT_ON, /* set by the harness (vectors/judge/run_fast.c), as nesterov_default_on */
  MUONREF_FAULT_MEGATRON_NO_CLIP,
  /* faults of Paddle's port (spec/profiles/paddle.md section 11) */
  MUONREF_FAULT_PADDLE_ADAM_BIAS_POW_ONE,
  MUONREF_FAULT_PADDLE_SUBSTRING_AS_WORD,
  MUONREF_FAULT_PADDLE_COEFF_REPEAT_LAST,
  /* faults of keras' port (spec/profiles/keras.md section 10) */
  MUONREF_FAULT_KERAS_FAN_SWAPPED_3_10,
  MUONREF_FAULT_KERAS_ADAM_STEP_PER_PARAM,
  MUONREF_FAULT_KERAS_SUBSTRING_EXCLUDE,
  MUONREF_FAULT_KERAS_ALL_MISSING_ACCEPTED,
  /* faults of the second moment and cautious weight decay (spec/profiles/normuon.md section 10) */
  MUONREF_FAULT_NORMUON_ZERO_RATIO_NAN,
  MUONREF_FAULT_NORMUON_NO_RESCALE,
  MUONREF_FAULT_NORMUON_LONGER_SIDE,
  MUONREF_FAULT_CAUTIOUS_WD_IGNORED,
  MUONREF_FAULT_CAUTIOUS_WD_STRICT,
  /* faults of timm's conv_mode "batched", normalize_spatial, scale_eps, use_fallback (spec/profiles/timm.md 10) */
  MUONREF_FAULT_TIMM_SPATIAL_FLATTENED,
  MUONREF_FAULT_TIMM_SPATIAL_UNNORMALIZED,
  MUONREF_FAULT_TIMM_SCALE_EPS_IGNORED,
  MUONREF_FAULT_TIMM_USE_FALLBACK_IGNORED, /* set by the harness (vectors/judge/run_fast.c): it reads the group's keys */
  /* faults of optax's adaptive and preconditioning (spec/profiles/optax.md 10) */
  MUONREF_FAULT_OPTAX_ADAPTIVE_IGNORED,
  MUONREF_FAULT_OPTAX_AOL_AS_COEFFICIENTS,
  /* faults of timm's algo="adamuon" (spec/profiles/timm.md 10) */
  MUONREF_FAULT_TIMM_ADAMUON_SCALE_MAX,
  MUONREF_FAULT_TIMM_ADAMUON_NO_RMS_NORM,
  MUONREF_FAULT_TIMM_ADAMUON_NO_BIAS_CORRECTION,
  /* faults of bf16 parameters (area dtypes, issue 26) */
  MUONREF_FAULT_TORCH_ALIAS_BUFFER, /* set by the harness (vectors/judge/run_fast.c): it knows a parameter's dtype */
  MUONREF_FAULT_PYTORCH_OPTIMIZER_ALIAS_ITERATE, /* set by the harness (vectors/judge/run_fast.c), as torch_alias_buffer */
  /* faults of Emerging-Optimizers' AdaptiveMuon (spec/profiles/emerging_adaptive.md 9) */
  MUONREF_FAULT_ADAPTIVE_SCALE_BEFORE_MOMENT2,
  /* faults of a checkpoint's lifecycle (issue 26 item 4) */
  MUONREF_FAULT_STATE_DROPPED_ON_LOAD, /* set by the harness (vectors/judge/run_fast.c): the round trip imports nothing */
  /* faults of kozistr/pytorch_optimizer's cautious mask (cautious_update, spec/profiles/pytorch_optimizer.md 12) */
  MUONREF_FAULT_PYTORCH_OPTIMIZER_CAUTIOUS_UNSCALED,
  MUONREF_FAULT_PYTORCH_OPTIMIZER_CAUTIOUS_BUFFER,
  /* kozistr's weight_decouple False (L2 in both branches) run as the decoupled decay: an option fault, so that the
   * profiles sharing the key (pytorch_optimizer, pytorch_optimizer_adamuon) are both told it */
  MUONREF_FAULT_WEIGHT_DECOUPLE_IGNORED,
  /* the cautious mask rescaled by 1 / mean(mask) (the form of wild copies) where kozistr multiplies by
   * n / (kept + 1) */
  MUONREF_FAULT_CAUTIOUS_MEAN_RESCALE,
  /* the cautious mask `update * grad >= 0`: an element whose p.grad is zero kept, and counted */
  MUONREF_FAULT_CAUTIOUS_MASK_NONSTRICT,
  /* faults of mlx's port (spec/profiles/mlx.md section 9) */
  MUONREF_FAULT_MLX_DECAY_DECOUPLED,
  MUONREF_FAULT_MLX_MOMENTUM_1D_ADAMW,
  /* faults of Megatron's adaptive_muon (spec/profiles/megatron.md 8) */
  MUONREF_FAULT_MEGATRON_ADAPTIVE_SCALE_AFTER,
  MUONREF_FAULT_MEGATRON_ADAPTIVE_SCALE_TWICE,
  MUONREF_FAULT_MEGATRON_ADAPTIVE_NORMUON_RESTORED,
  /* keras' clipnorm as torch.nn.utils.clip_grad_norm_ over every gradient (spec/profiles/keras.md section 10) */
  MUONREF_FAULT_KERAS_CLIPNORM_GLOBAL,
  /* keras' gradient_accumulation_steps (spec/muon.md 3.3): ignored (a step at every micro-step), or the
   * N-th micro-step steps with the sum of the gradients, not their mean */
  MUONREF_FAULT_KERAS_ACCUMULATION_IGNORED,
  MUONREF_FAULT_KERAS_ACCUMULATION_SUM,
  /* ... each micro-step's gradient clipped before it is added; the accumulators never emptied */
  MUONREF_FAULT_KERAS_ACCUMULATION_CLIP_EACH,
  MUONREF_FAULT_KERAS_ACCUMULATION_NO_RESET,
  /* keras' use_ema (spec/muon.md 8.2): ignored, or the average started from zeros (no first-step rule) */
  MUONREF_FAULT_KERAS_EMA_IGNORED,
  MUONREF_FAULT_KERAS_EMA_ZERO_START,
  /* ... the average taken of the values before the step; the overwrite's count taken after it */
  MUONREF_FAULT_KERAS_EMA_BEFORE_STEP,
  MUONREF_FAULT_KERAS_EMA_OVERWRITE_LATE,
  /* Paddle's multi_precision (spec/muon.md 10): ignored, a bf16 parameter stepped as bf16 (issue 26) */
  MUONREF_FAULT_MASTER_WEIGHTS_IGNORED,
  /* ... the master lost at a state round trip, made anew from the bf16 parameter: set by the harness
   * (vectors/judge/run_fast.c), as state_dropped_on_load */
  MUONREF_FAULT_MASTER_LOST_ON_LOAD,
  MUONREF_FAULT_COUNT
};

typedef struct muonref_fault_info {
  const char *name;
  const char *description;
  const char *source;
} muonref_fault_info;

/* Fault f's entry (1 <= f < MUONREF_FAULT_COUNT), or NULL. */
const muonref_fault_info *muonref_fault_info_at(int f);

/* The fault named `name`, or -1. */
int muonref_fault_parse(const char *name);

/* The harness's part: sets the option values of fault f in *o (a no-op
 * for the faults that are not option values).  Applied to every group's
 * options before muonref_optimizer_create_fault, and to the options of a
 * Newton-Schulz run. */
void muonref_fault_options(int f, muonref_options *o);

/* The optimizer's hooks (fast/optimizer.c), each a no-op for faults it
 * does not concern.  group is the parameter's group index, shape its
 * shape. */
void muonref_fault_route(int f, const muonref_options *o, const muonref_shape *s, muonref_route *r);
/* The route of a parameter called `name` (NULL: none) under fault f, after
 * muonref_fault_route: PADDLE_SUBSTRING_AS_WORD matches the exclude
 * patterns of route rule NDIM_2_3 as whole words only. */
void muonref_fault_route_named(int f, const muonref_options *o, const muonref_shape *s, const char *name,
                               muonref_route *r);
void muonref_fault_muon_plan(int f, size_t group, const muonref_options *o, const muonref_shape *s,
                             muonref_muon_plan *p);
void muonref_fault_adamw_plan(int f, size_t group, const muonref_options *o, muonref_adamw_plan *p);
unsigned muonref_fault_ns_flags(int f);
/* The second moment's plan under fault f: NORMUON_ZERO_RATIO_NAN divides
 * by the bare ||N||_F (no clamp). */
void muonref_fault_moment2_plan(int f, const muonref_options *o, muonref_moment2_plan *p);

/* The harness's Newton-Schulz flags for this thread: ORed into every
 * muonref_fault_ns_flags result until set again (0: none, the default).
 * The judge's fit (vectors/judge/fit.c) runs a candidate in a port's bf16
 * evaluation order (MUONREF_NSF_ORDER) and with the platform's bf16-rounded
 * scalars (MUONREF_NSF_BF16_SCALARS) on top of any fault this way; returns
 * the previous value. */
unsigned muonref_fault_set_extra_ns_flags(unsigned flags);

#endif /* MUONREF_TEST_HOOKS */
#endif
