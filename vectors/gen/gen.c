/* muonref: the vector generator's driver: the area table, file headers,
 * writing (see gen.h; spec/vectors.md section 6). */
#include <mpfr.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "vectors/format/files.h"
#include "vectors/gen/gen.h"
#include "vectors/gen/gen_commit.h"
#include "vectors/gen/gen_run.h"
#include "core/fail.h"
#include "muonref/profile.h"

#define GEN_SEED 20261130u

static const struct {
  const char *name;
  void (*fill)(gen_ctx *);
  const char *header;
} AREAS[] = {
  {"routing", gen_area_routing, "Routing between the Muon update and the AdamW fallback by shape, threshold and use_muon "
                                "(spec/muon.md section 2); each shape once with a gradient and once with a zero gradient, "
                                "where only the branch's decay acts."},
  {"scaling", gen_area_scaling, "The shape factor of the update for fan_in, fan_out and none on tall, wide and square "
                                "matrices, both layouts of one layer, and forced convolution filters (section 5)."},
  {"weight_decay", gen_area_weight_decay, "Decoupled weight decay with the unscaled lr in both branches, per group, "
                                          "before the update (sections 4, 8, 9)."},
  {"momentum", gen_area_momentum, "Sum-form momentum and Nesterov over several steps whose gradient directions change "
                                  "(section 6); expected momentum buffers included."},
  {"adamw", gen_area_adamw, "The AdamW fallback: moments, bias correction, eps placement, lr ratio (section 9)."},
  {"gradients", gen_area_gradients, "Missing gradients (skipped), zero gradients (finite zero update) and the "
                                    "scale invariance of the orthogonalised update (sections 3, 7)."},
  {"newton_schulz", gen_area_newton_schulz, "Newton-Schulz on structured inputs (bf16 exactly defined), random inputs, "
                                            "step counts, tiny norms, zero and rank-deficient matrices; the exact iterate "
                                            "and the exact polar factor (section 7)."},
  {"transpose", gen_area_transpose, "Transpose pairs: NS(G^T) must be NS(G)^T, bit for bit where the bf16 result is "
                                    "exactly defined, within the case's tolerance elsewhere (section 7; spec/vectors.md "
                                    "2.3)."},
  {"state", gen_area_state, "State export and import into a fresh optimizer in the middle of a run (section 11)."},
  {"errors", gen_area_errors, "Invalid options and inputs with the exact message of the error catalogue (section 12)."},
  {"sharded", gen_area_sharded, "Muon matrices owned whole by ranks (sorted by size as in Keller's distributed Muon, or "
                                "round robin as in ZeRO-1): the expected values are the unsharded run's; the member "
                                "\"sharding\" says which rank owns which parameter (spec/vectors.md 2.6)."},
  {"sharded_tp", gen_area_sharded_tp, "Muon matrices split by rows or columns over ranks (tensor parallel): the "
                                      "expected values are the update of the whole matrix; the member \"sharding\" "
                                      "gives each rank's slice (spec/vectors.md 2.6)."},
  {"overflow", gen_area_overflow, "Gradients whose Frobenius norm leaves fp16's range or binary32's (a binary32 norm "
                                  "overflows: both outcomes published, \"expectedNormOverflow\"), and elements that round to "
                                  "bf16 infinity (spec/muon.md 7.3, spec/vectors.md 2.7)."},
  /* new areas go last: an area's seed is its index here */
  {"defaults", gen_area_defaults, "Cases that give no options (format v2): the profile's own constructor defaults "
                                  "apply, so a port whose default differs fails (spec/vectors.md 3.1)."},
  {"schedule", gen_area_schedule, "Options changed in param_groups between steps, as a learning-rate scheduler does "
                                  "(format v2, member \"setOptions\" of a step): lr warm-up and decay down to 0, a "
                                  "weight-decay change, a momentum change (the buffer stays, beta changes) and AdamW "
                                  "betas, on Muon and AdamW groups (spec/vectors.md 2.8)."},
  {"conv", gen_area_conv, "Muon parameters of more than two dimensions: the flattened matrix or a batch of its "
                          "trailing matrices, and the shape the scale factor comes from (sections 2, 5); a missing "
                          "gradient among random ones (section 3)."},
  {"dtypes", gen_area_dtypes, "Parameters, gradients and state in bf16 (spec/vectors.md 2.1): the allowance is one bf16 "
                              "rounding per stored value and step; the Newton-Schulz input is the port's bf16 buffer."},
};

int gen_profile_has_area(const muonref_profile *p, const char *area)
{
  for (size_t a = 0; p && p->areas && p->areas[a]; a++)
    if (!strcmp(p->areas[a], area))
      return 1;
  return 0;
}

int muonref_gen_area_known(const char *name)
{
  for (size_t a = 0; name && a < sizeof AREAS / sizeof AREAS[0]; a++)
    if (!strcmp(AREAS[a].name, name))
      return 1;
  return 0;
}

const char *muonref_gen_area_list(void)
{
  static char list[512];
  if (!list[0])
    for (size_t a = 0, used = 0; a < sizeof AREAS / sizeof AREAS[0] && used < sizeof list; a++)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", a ? ", " : "", AREAS[a].name);
  return list;
}

/* The table of flags (Project Wycheproof's notes): every flag a test may
 * carry, with a structured note written into each file that uses it
 * (spec/vectors.md section 2.5).  bugType: BASIC (the semantics every port
 * must get right), EDGE_CASE, KNOWN_BUG (a public bug report, "bug-reports
 * Bnn"), ERROR_HANDLING, JUDGING (how a case is judged, not a class of
 * bug).  faults: the deliberate faults of fast/faults.h (muonref check
 * --fault NAME) that fail at least one case with this flag, in bf16 or fp32
 * (tests/unit/check_faults proves each link). */
typedef struct flag_note {
  const char *flag, *bug_type, *description, *effect;
  const char *links[3];
  const char *faults[6];
} flag_note;

static const flag_note NOTES[] = {
  /* routing, spec/muon.md section 2 */
  {"Routing", "BASIC", "which optimizer a parameter takes: Muon for a 2-D matrix whose dimensions are all below "
   "adam_dim_threshold, AdamW otherwise", "a misrouted parameter gets the other optimizer's update",
   {"spec/muon.md section 2"}, {"route_all_matrices", "threshold_inclusive"}},
  {"RoutingShape", "EDGE_CASE", "routing by the number of dimensions: biases, scalars, convolution filters, 3-D tensors "
   "and a (1, 1) matrix", "a port that routes by ndim >= 2 sends filters and 3-D tensors to Muon",
   {"spec/muon.md section 2"}, {"route_all_matrices"}},
  {"RoutingThreshold", "EDGE_CASE", "a dimension equal to adam_dim_threshold goes to AdamW (the comparison is strict)",
   "an inclusive comparison routes the boundary shapes to Muon", {"spec/muon.md section 2"},
   {"threshold_inclusive", "route_all_matrices"}},
  {"RoutingHeuristic", "EDGE_CASE", "timm's routing heuristic: Muon when at least two dimensions exceed 1, neither "
   "of the first two is 1, and the flattened matrix has sides >= 4 and an aspect ratio <= 128",
   "the threshold rule, or an inclusive ratio, routes these shapes to the other branch",
   {"spec/muon.md section 2", "spec/profiles/timm.md section 2"}, {"route_all_matrices"}},
  {"CoeffCycle", "BASIC", "Newton-Schulz step k uses triple k mod n of the coefficient list (Paddle's ns_coeff_type "
   "presets and custom lists, cycled)", "repeating the last triple (Emerging-Optimizers' and timm's order for the same "
   "preset names) changes aol from step 5, deepseekv4 from step 11 and a short custom list",
   {"spec/profiles/paddle.md section 4", "spec/profiles/paddle.md section 11"}, {"paddle_coeff_repeat_last"}},
  {"CoefficientType", "BASIC", "Emerging-Optimizers' coefficient_type: each preset's list in its own order (repeat "
   "the last triple for polar_express, cans and deepseekv4; cycle aol and simple)", "a port that ignores "
   "coefficient_type (runs quintic), or cycles a repeat-last list (Emerging-Optimizers v0.1.0, Paddle)",
   {"spec/profiles/emerging.md section 4"}, {NULL}},
  {"DecayPositiveOnly", "EDGE_CASE", "the Muon branch decays only when weight_decay > 0 (Paddle's `if with_decay and "
   "weight_decay > 0`); its AdamW kernel applies any value", "a negative weight_decay that grows the Muon parameters, "
   "or an AdamW branch that skips it", {"spec/profiles/paddle.md section 5", "spec/profiles/paddle.md section 6"},
   {NULL}},
  {"RoutingName", "EDGE_CASE", "a parameter whose name contains an exclude pattern, compared case-insensitively as "
   "a substring, takes AdamW (Paddle's _default_should_use_muon)", "a whole-word, case-sensitive or regex match "
   "routes such a name (unbiased_proj, Embed_Tokens, mlp_gate) to the other branch",
   {"spec/profiles/paddle.md section 7", "spec/profiles/paddle.md section 11"}, {"paddle_substring_as_word"}},
  {"RoutingForced", "BASIC", "use_muon=True or False overrides the shape rule (a forced tensor is flattened to "
   "(dims[0], rest))", "ignoring the override leaves the parameter on its shape's branch", {"spec/muon.md section 2"},
   {NULL}},
  /* scaling, section 5 */
  {"Scaling", "BASIC", "the update's shape factor under scale_mode fan_in, fan_out and none",
   "a wrong factor scales every Muon update of non-square matrices", {"spec/muon.md section 5"},
   {"fan_swapped", "conv_scale_unflattened"}},
  {"Square", "EDGE_CASE", "a square matrix: every scale rule gives the same factor, so a swapped rule cannot show here",
   NULL, {"spec/muon.md section 5"}, {NULL}},
  {"NonSquare", "BASIC", "tall and wide matrices, where fan_in and fan_out differ", "a swapped rule changes the step size",
   {"spec/muon.md section 5"}, {"fan_swapped", "no_transpose"}},
  {"Layout", "EDGE_CASE", "both storage layouts, (out, in) and (in, out), of one layer",
   "a factor taken from the storage layout differs between the two", {"spec/muon.md section 5", "bug-reports B07"},
   {"fan_swapped", "no_transpose"}},
  {"ConvFlatten", "EDGE_CASE", "a convolution filter forced to Muon is scaled from its flattened (out, in * kh * kw) "
   "shape", "a factor from the unflattened last two dimensions is wrong", {"spec/muon.md section 5", "bug-reports B03"},
   {"conv_scale_unflattened"}},
  {"Defaults", "BASIC", "the case gives no options: the port's own constructor defaults apply (the profile's, "
   "core/profile.c)", "a port whose default differs (Nesterov, lr, weight decay, betas, eps, coefficients) fails "
   "here although every case that states its options passes", {"spec/vectors.md section 3.1"}, {NULL}},
  {"Schedule", "BASIC", "lr, weight_decay, momentum or the AdamW betas are set in optimizer.param_groups between "
   "steps (a step's \"setOptions\"): every later step uses the new values", "a port that caches its options at "
   "construction (or per parameter at its first step) keeps stepping with the old ones",
   {"spec/vectors.md section 2.8"}, {"cached_group_options"}},
  {"ScheduleMomentum", "EDGE_CASE", "the momentum factor changes mid-run: the buffer is kept and the new beta "
   "multiplies it from the next step on", "a port that resets the buffer, or keeps the old beta, differs from that "
   "step on", {"spec/vectors.md section 2.8", "spec/muon.md section 6"}, {"cached_group_options"}},
  {"RmsAdamw", "BASIC", "the rms_adamw shape factor 0.2 sqrt(max(rows, cols)) (torch.optim.Muon adjust_lr_fn "
   "\"match_rms_adamw\"; Moonlight)", "the fan_in factor sqrt(max(1, rows/cols)), or the 0.2 left out",
   {"spec/muon.md section 5", "spec/profiles/torch.md section 4", "bug-reports B08"},
   {"rms_as_fan_in", "rms_without_factor"}},
  {"RmsToRms", "BASIC", "the rms_to_rms shape factor sqrt(rows/cols) (timm's adjust_lr_fn \"rms_to_rms\"; Scion)",
   "another shape rule (fan_in, 0.2 sqrt(max(rows, cols)))", {"spec/muon.md section 5", "spec/profiles/timm.md section 4"},
   {NULL}},
  {"SafetyFactor", "BASIC", "the norm times a safety factor before eps: X / max(s ||X||, eps) (timm's safety_factor)",
   "the factor left out makes every update about s times too large before Newton-Schulz",
   {"spec/muon.md section 7", "spec/profiles/timm.md section 5"}, {"safety_ignored"}},
  /* weight decay, sections 4, 8, 9 */
  {"WeightDecay", "BASIC", "decoupled weight decay P (1 - lr wd) with the unscaled lr, in both branches",
   "decay with the scaled lr, the Muon lr on AdamW parameters, or on the wrong groups", {"spec/muon.md section 4",
   "spec/muon.md section 8", "spec/muon.md section 9"},
   {"decay_scaled_lr", "decay_after_update", "decay_skipped_group", "adam_decay_muon_lr"}},
  {"DecayOrder", "BASIC", "decay acts before the update: P' = P (1 - lr wd) - alpha O",
   "decay after the update multiplies the update by the decay factor as well", {"spec/muon.md section 8"},
   {"decay_after_update"}},
  {"Groups", "BASIC", "several parameter groups with their own options", "options of one group applied to another",
   {"spec/muon.md section 1"}, {"decay_skipped_group", "adam_lr_no_ratio"}},
  /* momentum, section 6 */
  {"Momentum", "BASIC", "sum-form momentum M' = beta M + G over several steps whose gradient directions change",
   "an EMA buffer beta M + (1 - beta) G shrinks the update by (1 - beta)", {"spec/muon.md section 6"},
   {"ema_momentum"}},
  {"Nesterov", "BASIC", "nesterov=True: the update orthogonalises G + beta M'", "the plain or an EMA-blended input",
   {"spec/muon.md section 6"}, {"nesterov_ignored", "nesterov_ema_blend"}},
  {"NoNesterov", "BASIC", "nesterov=False: the update orthogonalises M'", NULL, {"spec/muon.md section 6"},
   {"ema_momentum"}},
  {"BugB09", "KNOWN_BUG", "bug-reports B09: sum vs EMA momentum buffers", "ports disagree by a factor (1 - beta)",
   {"bug-reports B09", "spec/muon.md section 6"}, {"ema_momentum"}},
  /* AdamW, section 9 */
  {"AdamW", "BASIC", "the AdamW fallback: moments, bias correction, eps placement, lr ratio",
   "every non-Muon parameter moves differently", {"spec/muon.md section 9"},
   {"adam_no_bias_correction", "adam_eps_inside", "adam_lr_no_ratio", "adam_decay_muon_lr"}},
  {"NAdamW", "BASIC", "a fallback that runs NAdamW with nesterov=True: numerator beta1 m + (1 - beta1) g (timm)",
   "plain AdamW moves the fallback parameters by m alone", {"spec/muon.md section 9", "spec/profiles/timm.md section 6"},
   {"nadamw_as_adamw"}},
  {"SharedEps", "EDGE_CASE", "one eps for the Newton-Schulz normalisation and the AdamW fallback (timm's eps): the "
   "value the case sets is both", "a fallback with its own eps (1e-8) moves the AdamW parameters differently where "
   "the gradients are small", {"spec/profiles/timm.md section 6", "spec/muon.md section 9"}, {"eps_split"}},
  {"AdamEps", "EDGE_CASE", "gradients small enough that eps, added after sqrt(v) / sqrt(bc2), matters",
   "eps inside the correction changes the step", {"spec/muon.md section 9"}, {"adam_eps_inside"}},
  {"BiasCorrection", "BASIC", "the first steps, where bias correction changes the AdamW step most",
   "no bias correction gives steps too small by (1 - beta1^t)", {"spec/muon.md section 9"},
   {"adam_no_bias_correction"}},
  /* gradients, sections 3 and 7 */
  {"MissingGradient", "BASIC", "a parameter without gradient is skipped: untouched, no state",
   "zero-filling runs decay and momentum on it", {"spec/muon.md section 3", "bug-reports B15"},
   {"missing_grad_as_zeros"}},
  {"NdMuon", "BASIC", "a Muon parameter of more than two dimensions: the profile's port orthogonalises the flattened "
   "(d0, rest) matrix or each trailing (d[-2], d[-1]) matrix of the batch (conv_mode)",
   "the other layout gives another update", {"spec/muon.md section 2", "spec/profiles/keller.md section 2"},
   {"batched_as_flattened", "conv_scale_flattened"}},
  {"ConvScale", "BASIC", "the scale factor of an N-D Muon parameter comes from the flattened matrix or from the last "
   "two dimensions of its shape (scale_shape; Keller: kh/kw for a conv filter)",
   "a factor from the other shape", {"spec/muon.md section 5", "spec/profiles/keller.md section 4"}, {"conv_scale_flattened"}},
  {"MissingGradientZeros", "BASIC", "a parameter without gradient steps with a zero gradient (the profile's port "
   "zero-fills p.grad, KellerJordan/Muon PR #38): decayed, its momentum decays and moves it, AdamW counts the step",
   "skipping it leaves the parameter and its state where they were", {"spec/muon.md section 3", "bug-reports B15"},
   {"missing_grad_skipped"}},
  {"BugB15", "KNOWN_BUG", "bug-reports B15: a parameter without gradient is skipped, not zero-filled", NULL,
   {"bug-reports B15"}, {"missing_grad_as_zeros"}},
  {"ZeroGradient", "EDGE_CASE", "zero gradients: only decay acts (Newton-Schulz of 0 is 0)",
   "a NaN from normalising 0, or decay of the wrong size", {"spec/muon.md section 3", "spec/muon.md section 7"},
   {"decay_scaled_lr", "adam_decay_muon_lr"}},
  {"BugB16", "KNOWN_BUG", "bug-reports B16: a zero gradient gives a finite zero update", "NaN parameters",
   {"bug-reports B16"}, {NULL}},
  {"ConvSpatial", "BASIC", "timm's conv_mode \"batched\" (conv_mode spatial): a Muon parameter (d0, d1, ...) is one "
   "(d0, d1) matrix per position of its trailing dimensions, each normalised and orthogonalised on its own, scaled "
   "from (d0, d1)", "flattening to (d0, rest), or batching over the last two dimensions, gives another update",
   {"spec/muon.md section 2", "spec/profiles/timm.md section 4"}, {"timm_spatial_flattened"}},
  {"NormalizeSpatial", "BASIC", "timm's normalize_spatial: under conv_mode batched the scale factor times S^-1/2, S "
   "the number of positions", "without it the update of a 3x3 conv is 3 times too large",
   {"spec/profiles/timm.md section 4"}, {"timm_spatial_unnormalized"}},
  {"ScaleEps", "EDGE_CASE", "timm's scale_eps: Newton-Schulz divides by ||X|| + eps sqrt(cols/rows) (added, scaled by "
   "the matrix's shape) instead of max(||X||, eps)", "the clamp at the unscaled eps gives another update on gradients "
   "of norm near eps", {"spec/muon.md section 7", "spec/profiles/timm.md section 5"}, {"timm_scale_eps_ignored"}},
  {"NuclearScale", "BASIC", "optax's adaptive: the orthogonalised update O times <U, O>, the dual (nuclear) norm of "
   "its input (PolarGrad, arXiv 2505.21799)", "without it every update has the size of an orthogonal matrix",
   {"spec/muon.md section 8", "spec/profiles/optax.md section 4"}, {"optax_adaptive_ignored"}},
  {"Preconditioning", "BASIC", "optax's preconditioning: 'aol' divides row i by sqrt(sum_j |(X X^T)_ij|) (Turbo-Muon), "
   "'schatten' X by sqrt(||X X^T||_F), instead of the Frobenius normalisation",
   "the Frobenius normalisation (the \"aol\" of Paddle and Emerging-Optimizers is a coefficient list) starts the "
   "iteration elsewhere", {"spec/muon.md section 7", "spec/profiles/optax.md section 4"}, {"optax_aol_as_coefficients"}},
  {"UseFallback", "BASIC", "timm's group key use_fallback: true sends the group to the AdamW fallback before use_muon "
   "or the heuristic is read", "a port that reads use_muon or the shape first runs Muon on them",
   {"spec/profiles/timm.md section 2"}, {"timm_use_fallback_ignored"}},
  {"BatchScale", "EDGE_CASE", "the scale factor of a Muon parameter batched into (d[-2], d[-1]) matrices comes from "
   "those two dimensions (conv_mode batched: dion's adjust_lr_* on shape[-2:])",
   "a port reading (d0, d1) scales the whole batch by another factor",
   {"spec/profiles/dion.md section 5", "spec/profiles/dion.md section 11"}, {"lr_scale_first_two_dims"}},
  {"HeadNs", "BASIC", "block-wise Newton-Schulz per head (dion's group key num_heads): a Muon matrix (H d, n) is H "
   "matrices (d, n), each normalised, orthogonalized and scaled by its own shape", "a port that orthogonalizes the "
   "whole matrix (ignores num_heads) changes every update; one that checks the heads elsewhere refuses other shapes",
   {"spec/muon.md section 7.5", "spec/profiles/dion.md section 4"}, {NULL}},
  {"SplitNs", "BASIC", "block-wise Newton-Schulz of unequal row blocks: dion's split_sizes (the blocks in order, "
   "each bf16 output times adjust(block) / adjust(matrix)) or Megatron's qkv_split_shapes (Q, K and V gathered over "
   "the query groups, each scaled by its own shape)", "a port that orthogonalizes the whole matrix, cuts the "
   "blocks in another order or scales them by the whole matrix's shape changes the update",
   {"spec/muon.md section 7.6", "spec/profiles/dion.md section 4", "spec/profiles/megatron.md section 3"}, {NULL}},
  {"QuinticNs", "BASIC", "dion's use_polar_express False: zeropower_via_newtonschulz5, the quintic preset's five "
   "triples once each on X / (||X|| + epsilon), no 1.02", "a port that ignores use_polar_express (runs Polar "
   "Express) changes every update", {"spec/profiles/dion.md section 4"}, {NULL}},
  {"PolarExpress", "BASIC", "dion's Newton-Schulz: Polar Express's five triples, each once, on X / (1.02 ||X|| + "
   "eps) (dion/polar_express.py)", "the quintic list on X / (||X|| + eps) (dion's default before 199894b) changes every "
   "update; a normalisation without eps turns a zero gradient into NaN (dion PR #24)",
   {"spec/profiles/dion.md section 4", "spec/profiles/dion.md section 11"},
   {"ns5_before_polar_express", "zero_norm_nan", "safety_ignored"}},
  {"GradientScale", "BASIC", "the orthogonalised update does not depend on the gradient's scale (up to eps)",
   "clipping or eps terms that break scale invariance", {"spec/muon.md section 7", "bug-reports B21"},
   {"eps_1e-8", "eps_clamp"}},
  {"BugB21", "KNOWN_BUG", "bug-reports B21: the orthogonalised update is not clipped by the gradient norm", NULL,
   {"bug-reports B21"}, {NULL}},
  {"BugB01", "KNOWN_BUG", "bug-reports B01: a Muon-routed matrix must not get plain lr * g",
   "the update is not orthogonalised", {"bug-reports B01"}, {NULL}},
  {"BugB03", "KNOWN_BUG", "bug-reports B03: conv filters forced to Muon are flattened to (out, rest)", NULL,
   {"bug-reports B03", "spec/muon.md section 2"}, {NULL}},
  {"BugB04", "KNOWN_BUG", "bug-reports B04: a (C, 1, 1) LayerScale is not a matrix",
   "a port routing by ndim >= 2 runs Newton-Schulz on it", {"bug-reports B04", "spec/muon.md section 2"},
   {"route_all_matrices", "conv_scale_unflattened"}},
  {"BugB07", "KNOWN_BUG", "bug-reports B07: the scale ratio depends on the storage layout", NULL,
   {"bug-reports B07", "spec/muon.md section 5"}, {"fan_swapped", "no_transpose"}},
  /* Newton-Schulz, section 7 */
  {"NewtonSchulz", "BASIC", "the Newton-Schulz iteration: normalisation, coefficients, step count",
   "a wrong coefficient, step count or norm changes every Muon update", {"spec/muon.md section 7"},
   {"wrong_coefficient", "four_steps", "six_steps", "max_norm", "bf16_scalars"}},
  {"Structured", "BASIC", "structured inputs (Hadamard rows times dyadic scales) on which the bf16 result is exactly "
   "defined whatever the order of accumulation", NULL, {"spec/vectors.md section 5.2"},
   {"wrong_coefficient", "bf16_scalars", "no_transpose"}},
  {"Random", "BASIC", "Gaussian random inputs: judged to 3e-5 in fp32, loosely in bf16", NULL,
   {"spec/vectors.md section 5.1"}, {"wrong_coefficient"}},
  {"StepCount", "BASIC", "ns_steps other than the default", "a fixed step count", {"spec/muon.md section 7"},
   {"four_steps", "six_steps"}},
  {"TinyNorm", "EDGE_CASE", "inputs whose Frobenius norm is near eps", "eps clamped, or 1e-8 instead of 1e-7",
   {"spec/muon.md section 7"}, {"eps_1e-8", "eps_clamp"}},
  {"Epsilon", "EDGE_CASE", "the normalisation ||X|| + eps, visible when ||X|| is small", NULL,
   {"spec/muon.md section 7"}, {"eps_1e-8", "eps_clamp"}},
  {"ZeroMatrix", "EDGE_CASE", "Newton-Schulz of the zero matrix is zero", "NaN from 0 / 0",
   {"spec/muon.md section 7", "bug-reports B16"}, {NULL}},
  {"RankDeficient", "EDGE_CASE", "a rank-deficient input: the iteration is defined, the polar factor is not", NULL,
   {"spec/muon.md section 7"}, {NULL}},
  {"IllConditioned", "EDGE_CASE", "an ill-conditioned input: small singular values stay far from 1", NULL,
   {"spec/muon.md section 7"}, {NULL}},
  {"NoPolarFactor", "JUDGING", "the exact polar factor is not published: the reference refuses it (rank-deficient "
   "or too ill-conditioned, spec/reference.md section 3)", NULL, {"spec/reference.md section 3"}, {NULL}},
  {"Transpose", "BASIC", "the iteration runs on the wide orientation: NS(G^T) = NS(G)^T, bit for bit where the bf16 "
   "result is exactly defined (spec/vectors.md section 2.3)",
   "iterating on the tall side changes bf16 roundings and the cost", {"spec/muon.md section 7"}, {"no_transpose"}},
  {"BugB24", "KNOWN_BUG", "bug-reports B24: a non-matrix input to Newton-Schulz gets a clear error", NULL,
   {"bug-reports B24", "spec/muon.md section 12"}, {NULL}},
  /* state, section 11 */
  {"StateRoundTrip", "BASIC", "the optimizer state is exported and imported into a fresh optimizer mid-run",
   "a lost step count restarts bias correction", {"spec/muon.md section 11"}, {"state_step_reset"}},
  {"BugB13", "KNOWN_BUG", "bug-reports B13: save, load, step equals an uninterrupted run", NULL,
   {"bug-reports B13", "spec/muon.md section 11"}, {"state_step_reset"}},
  {"BugB14", "KNOWN_BUG", "bug-reports B14: the saved state holds every momentum buffer", NULL,
   {"bug-reports B14", "spec/muon.md section 11"}, {"state_step_reset"}},
  /* errors, section 12 */
  /* overflow, spec/muon.md 7.3 */
  {"Overflow", "EDGE_CASE", "gradients far beyond the usual range: beyond fp16's largest value, beyond binary32's once "
   "squared, or rounding to bf16 infinity", "a port computing in fp16 overflows; a port that clamps the gradient or "
   "returns NaN on a finite step fails", {"spec/muon.md section 7.3", "spec/vectors.md section 2.7"}, {NULL}},
  {"Fp16Range", "EDGE_CASE", "elements above fp16's 65504 with an ordinary binary32 sum of squares: only the ordinary "
   "step passes", "Inf or NaN from fp16 arithmetic", {"spec/muon.md section 7.3"}, {NULL}},
  {"NormOverflow", "EDGE_CASE", "the sum of squares of the Newton-Schulz input overflows binary32: the exact norm's step "
   "and the zero Newton-Schulz output of a binary32 norm both pass (expectedNormOverflow, expected.normOverflow); "
   "momentum, decay and the other parameters must match either way", "a port that clamps or returns NaN fails; the "
   "judge names the outcome a result matched", {"spec/muon.md section 7.3", "spec/vectors.md section 2.7"}, {NULL}},
  /* dtypes (issue 26), spec/vectors.md 2.1 */
  {"Bf16Params", "EDGE_CASE", "the parameter, its gradients and its state are bf16, as in a model trained in bf16: "
   "each stored value is rounded to bf16 (allowance: a bf16 ulp per stored value and step), and the Newton-Schulz "
   "input is a bf16 tensor of the port's own", "a port that normalises its bf16 momentum buffer or p.grad in place "
   "(`grad.bfloat16()` returns the tensor itself) stores a buffer of norm 1 (torch.optim.Muon 098e03f, nesterov "
   "False); a port that casts the parameter to float32 or refuses bf16 fails", {"spec/vectors.md section 2.1",
   "spec/profiles/torch.md section 9"}, {"torch_alias_buffer"}},
  {"MasterWeights", "EDGE_CASE", "a bf16 parameter stepped as its float32 master weight (Paddle's multi_precision): "
   "the master is state (`master`), the parameter its bf16 rounding; every step is below half a bf16 ulp",
   "a port that steps the bf16 parameter itself keeps its values and has no master; one that loses the master "
   "at a state round trip makes it anew from the bf16 parameter", {"spec/muon.md section 10",
   "spec/profiles/paddle.md section 8"}, {"master_weights_ignored", "master_lost_on_load"}},
  {"BranchDefaults", "EDGE_CASE", "the AdamW group gives no lr, betas, weight_decay or eps: the constructor gives "
   "them as its defaults for the AdamW groups (the record's keys marked branch_default: pytorch_optimizer's adamw_lr, "
   "adamw_betas, adamw_wd, adamw_eps)", "a port whose constructor swallows them (**kwargs) or writes its own "
   "defaults into the AdamW groups steps them at those", {"spec/vectors.md section 2.1",
   "spec/muon.md section 9"}, {NULL}},
  {"Bf16Infinity", "EDGE_CASE", "gradient elements in [0x7f7fc000, FLT_MAX] round to bf16 +Inf: no finite step is "
   "defined; refusing or storing a non-finite value pass (\"run\": \"nonFinite\")", "a finite result: the port "
   "altered the gradient", {"spec/muon.md section 7.3", "spec/vectors.md section 2.7"}, {NULL}},
  {"ErrorMessage", "ERROR_HANDLING", "the implementation must refuse with exactly this status and message (or any "
   "message where the test says match any)", NULL, {"spec/muon.md section 12", "spec/vectors.md section 2.4"},
   {NULL}},
  {"NanOption", "ERROR_HANDLING", "NeMo accepts this value; refusing it or running are both acceptable", NULL,
   {"spec/vectors.md section 2.4"}, {NULL}},
  /* keras (spec/profiles/keras.md) */
  {"RoutingRegex", "BASIC", "routing by the parameter's name (keras): a 2-D parameter whose name contains "
   "\"embedding\" (any case, exclude_embeddings) or matches an exclude_layers regular expression (re.search, "
   "case-sensitive) takes AdamW", "a port that matches substrings instead of regular expressions, ignores case, or "
   "skips the embedding rule routes these parameters to the other optimizer",
   {"spec/muon.md section 2", "spec/profiles/keras.md section 7"}, {"keras_substring_exclude"}},
  {"ScaleFirstTwo", "BASIC", "a 3-D Muon parameter (n, r, c) of keras v3.10 to v3.12: orthogonalised as n (r, c) "
   "matrices, the update scaled by sqrt(max(1, n / r)) from the variable's own first two dimensions (scale_shape "
   "first_two)", "a port that scales by each matrix's sqrt(max(1, r / c)), or routes 3-D variables to AdamW as "
   "v3.13 does, moves the parameter by another amount",
   {"spec/muon.md section 5", "spec/profiles/keras.md section 12"}, {NULL}},
  {"MissingGradientCounted", "BASIC", "a parameter without gradient is not updated but the optimizer's step count "
   "advances (keras `iterations`): its state's step grows, and AdamW's bias correction at its next step uses the "
   "optimizer's count", "a per-parameter step count gives a larger bias correction after a skipped step",
   {"spec/muon.md section 9", "spec/profiles/keras.md section 6"}, {"keras_adam_step_per_param"}},
  {"BadGradient", "ERROR_HANDLING", "a NaN, infinite, sparse or complex gradient", NULL,
   {"spec/muon.md section 12", "spec/vectors.md section 2.4"}, {NULL}},
  {"BugB19", "KNOWN_BUG", "bug-reports B19: complex gradients are refused", NULL,
   {"bug-reports B19", "spec/muon.md section 12"}, {NULL}},
  /* judging, spec/vectors.md section 5 */
  {"Bf16Exact", "JUDGING", "expectedBf16 / expected.bf16 is the exact result of the bf16 semantics in each accepted "
   "evaluation order (expectedBf16Orders / bf16Orders), certified independent of the order of accumulation", NULL,
   {"spec/vectors.md section 5.2", "spec/muon.md section 7.2"}, {"bf16_scalars", "wrong_coefficient"}},
  {"Bf16Noise", "JUDGING", "the bf16 Newton-Schulz result is not exactly defined here (2.0-4.1 % from the exact one at "
   "these sizes); a Muon parameter's update is judged relative to its norm, with an allowance 1.5 times the largest "
   "deviation measured for correct bf16 implementations", NULL, {"spec/vectors.md section 5.1"}, {NULL}},
  /* sharded areas, spec/vectors.md 2.6 */
  {"Sharded", "BASIC", "the case carries a \"sharding\" member: run over several ranks as it says, it must give the "
   "unsharded result", "a port that orthogonalises each shard alone, pads with stale data or whose ranks disagree on the "
   "parameter order gives another update", {"spec/vectors.md section 2.6"}, {NULL}},
  {"SortedBySize", "BASIC", "whole Muon matrices owned by rank (position mod world size) in the order sorted by shape, "
   "largest first (Keller's distributed Muon)", NULL, {"spec/vectors.md section 2.6"}, {NULL}},
  {"RoundRobin", "BASIC", "whole Muon matrices owned by rank (position mod world size) in the case's order (ZeRO-1)",
   NULL, {"spec/vectors.md section 2.6"}, {NULL}},
  {"RowSplit", "BASIC", "every Muon matrix split by rows over the ranks (tensor parallel)", NULL,
   {"spec/vectors.md section 2.6"}, {NULL}},
  {"ColSplit", "BASIC", "every Muon matrix split by columns over the ranks (tensor parallel)", NULL,
   {"spec/vectors.md section 2.6"}, {NULL}},
  {"PlatformRobust", "JUDGING", "no measured platform effect of PyTorch 1.13 CPU (bf16-rounded scalars, bf16 "
   "accumulation on strided operands) can change this case's verdict: a correct port passes it on that platform, raw",
   NULL, {"spec/vectors.md section 5.3"}, {NULL}},
  /* Megatron-LM (spec/profiles/megatron.md) */
  {"GradClip", "BASIC", "every gradient of every group (Muon and AdamW) multiplied by max_norm / (total_norm + 1e-6) "
   "when that is below 1, total_norm the global L2 norm, before the step (Megatron's clip_grad, default 1.0)",
   "a port without the clipping, or clipping the orthogonalised update instead of the raw gradients, moves the AdamW "
   "moments (and the Muon momentum) by other amounts over steps whose norms differ",
   {"spec/muon.md section 3.1", "spec/profiles/megatron.md section 1"}, {"megatron_no_clip", "megatron_clip_update"}},
  /* keras (spec/profiles/keras.md) */
  {"PaddleClip", "BASIC", "Paddle's grad_clip before the step: ClipGradByGlobalNorm (every gradient by c / "
   "max(N, c) in float32: exactly 1 below the bound), ClipGradByNorm (each gradient by its own L2 norm) or "
   "ClipGradByValue (a clamp); Megatron's and keras' global formulas lie within a rounding of Paddle's and pass",
   "a port clipping each gradient by the global norm (or every gradient by each one's), one that clips one "
   "branch only, or one that ignores grad_clip moves the AdamW moments and the Muon momentum by other amounts",
   {"spec/muon.md section 3.2", "spec/profiles/paddle.md section 8"}, {NULL}},
  {"KerasClip", "BASIC", "keras' gradient clipping before the decay and the step: clipnorm (each gradient by its own "
   "L2 norm), global_clipnorm (every gradient by the global scale, applied also below the bound) or clipvalue "
   "(a clamp), each computed in float32, after loss_scale_factor's division", "a port clipping each gradient by the "
   "global norm (or every gradient by each one's), leaving the loss scale in, or ignoring an option moves the AdamW moments and the Muon momentum by other amounts over steps whose "
   "norms differ", {"spec/muon.md section 3.2", "spec/profiles/keras.md section 1"}, {"keras_clipnorm_global"}},
  {"GradAccumulation", "BASIC", "keras' gradient_accumulation_steps N: a micro-step that is not the N-th adds its "
   "gradients (after loss_scale_factor's division) into an accumulator per variable and moves nothing; the N-th "
   "updates with R32(R32(G + A) / N), clipped after the division, and empties every accumulator", "a port that "
   "ignores the option, sums without dividing, clips the micro-steps' gradients or loses the accumulator in a state "
   "round trip moves the parameters by other amounts", {"spec/muon.md section 3.3", "spec/profiles/keras.md section 13"},
   {"keras_accumulation_ignored", "keras_accumulation_sum", "keras_accumulation_clip_each", "keras_accumulation_no_reset"}},
  {"MovingAverage", "BASIC", "keras' use_ema: after every step each variable's moving average E <- R32(R32(m E) + "
   "R32(R32(1 - m) P)) in float32, set to the variable while keras' iterations is 0; every ema_overwrite_frequency "
   "updates the variables take their averages", "a port that ignores use_ema, starts the average from zeros, "
   "overwrites at other steps or loses the average in a state round trip moves the variables otherwise",
   {"spec/muon.md section 8.2", "spec/profiles/keras.md section 14"}, {"keras_ema_ignored", "keras_ema_zero_start", "keras_ema_before_step", "keras_ema_overwrite_late"}},
  {"TaggedEmbedding", "BASIC", "a 2-D parameter tagged is_embedding_or_output_parameter (use_muon false) takes AdamW "
   "(Megatron's routing: the tag, else ndim != 1)", "a port routing by shape alone sends the embedding (or its tied "
   "replica, bug-reports B02) to Muon", {"spec/muon.md section 2", "spec/profiles/megatron.md section 3"},
   {"megatron_tied_embedding_muon"}},
  /* Emerging-Optimizers (spec/profiles/emerging.md) */
  {"SqrtMax", "BASIC", "the shape factor sqrt(max(rows, cols)) without 0.2 (Emerging-Optimizers' scale_mode "
   "\"spectral\")", "a port adding Kimi's 0.2 scales 5 times too small; one taking dion's spectral_norm sqrt(rows/cols) "
   "differs on every non-square or larger-than-1 matrix", {"spec/muon.md section 5", "spec/profiles/emerging.md section 5"},
   {"spectral_with_factor", "scale_mode_swapped"}},
  {"ScaleExtra", "BASIC", "an extra factor multiplying the shape factor (Emerging-Optimizers' extra_scale_factor)",
   "a port ignoring the factor scales the update by its inverse", {"spec/muon.md section 5",
   "spec/profiles/emerging.md section 5"}, {NULL}},
  {"EpsFloor", "EDGE_CASE", "a Newton-Schulz input whose norm is below 1e-7, with an eps far smaller (Emerging-Optimizers "
   "1e-15 since 7ebd3cf, issue #229)", "an eps floor of 1e-7 divides by 1e-7 and the output is far from orthogonal",
   {"spec/muon.md section 7", "spec/profiles/emerging.md section 4"}, {"eps_floor_1e-7"}},
  {"NormInput", "BASIC", "an exactly defined bf16 result whose Newton-Schulz input is normalised in float32 and then "
   "cast to bf16 (Emerging-Optimizers: F.normalize before `.to(torch.bfloat16)`; norm_format input)",
   "a port that casts first and normalises in bf16 (NeMo's order) rounds the normalised input differently",
   {"spec/muon.md section 7", "spec/profiles/emerging.md section 4"}, {"norm_in_bf16"}},
  /* the second moment and cautious weight decay (spec/profiles/normuon.md) */
  {"Maximize", "BASIC", "maximize: every gradient negated first, in place, both branches (kozistr/pytorch_optimizer "
   "`maximize_gradient`, `grad.neg_()`)", "a port that ignores maximize descends; one that negates out of place "
   "leaves p.grad as given", {"spec/muon.md section 3"}, {NULL}},
  {"CautiousUpdate", "BASIC", "a cautious update: the Newton-Schulz output kept only where it agrees in sign "
   "with p.grad at that point (the Nesterov input, or without Nesterov the gradient), the kept elements times "
   "n / (kept + 1) (kozistr/pytorch_optimizer `apply_cautious`; arXiv:2411.16085)", "a port that ignores the "
   "group key moves every element; one that masks against the momentum buffer or forgets the rescale moves the "
   "wrong ones or by too little", {"spec/muon.md section 8"},
   {"pytorch_optimizer_cautious_unscaled", "pytorch_optimizer_cautious_buffer", "cautious_mask_nonstrict"}},
  {"CautiousDecay", "BASIC", "cautious weight decay: the decay only where the parameter and the update (the "
   "Newton-Schulz output, the AdamW quotient) agree in sign or either is zero (dion cautious_wd, modded-nanogpt, "
   "nanochat; arXiv:2510.12402)", "a port that decays every element, or none where the update is exactly zero, "
   "moves the parameters whose sign disagrees with the update by lr wd p",
   {"spec/muon.md section 4.1", "spec/profiles/normuon.md section 5"}, {"cautious_wd_ignored", "cautious_wd_strict"}},
  {"DecayMethod", "BASIC", "the lr in the Muon decay (decay_method, spec/muon.md 4.2; Emerging-Optimizers' "
   "weight_decay_method): independent P (1 - wd), palm P (1 - lr^2 wd)", "a port that always decays by "
   "1 - lr wd (decoupled) moves the parameter by (1 - lr) wd P or (lr - lr^2) wd P more or less",
   {"spec/muon.md section 4.2", "spec/profiles/emerging.md section 1"}, {NULL}},
  {"L2BothBranches", "BASIC", "L2 in both branches (kozistr/pytorch_optimizer's weight_decouple False): G + wd P "
   "feeds the Muon momentum and the AdamW moments, no parameter is decayed, and p.grad holds G + wd P (or the "
   "Nesterov input formed from it) after the step", "a port that decays decoupled moves the parameters by lr wd P "
   "and the update's direction; one that adds wd P to a copy in the AdamW branch leaves p.grad as given",
   {"spec/muon.md section 8.1"}, {"weight_decouple_ignored"}},
  {"SecondMoment", "BASIC", "the second moment of the Newton-Schulz output: an EMA of its squares per row (NorMuon), "
   "per column of a wide matrix (Emerging-Optimizers' NorMuon) or per element (AdaMuon), the output divided by its "
   "root, then its Frobenius norm restored or the whole update normalised", "a port without the rescale, with "
   "another reduction side or another beta moves every later step",
   {"spec/muon.md section 7.4", "spec/profiles/normuon.md section 4"},
   {"normuon_no_rescale", "normuon_longer_side", "normuon_zero_ratio_nan"}},
  {"AdaMuon", "BASIC", "timm's AdaMuon (algo=\"adamuon\"): the element-wise second moment of the Newton-Schulz "
   "output, with adjust_lr_fn match_rms_adamw the update to unit Frobenius norm times 0.2 sqrt(rows cols) of the "
   "parameter's last two dimensions (no bias correction), otherwise the bias-corrected second moment and the "
   "adjust_lr_fn scale (rms_to_rms, rsqrt_in, None)", "a port with Muon's scale, without the RMS alignment or "
   "without the bias correction moves every step",
   {"spec/muon.md section 7.4", "spec/profiles/timm.md section 11"},
   {"timm_adamuon_scale_max", "timm_adamuon_no_rms_norm", "timm_adamuon_no_bias_correction", "conv_scale_flattened"}},
};

/* The note of one flag as a JSON object. */
static json_t *note_json(const flag_note *n)
{
  json_t *o = json_object(), *links = json_array(), *faults = json_array();
  json_object_set_new(o, "bugType", json_string(n->bug_type));
  json_object_set_new(o, "description", json_string(n->description));
  if (n->effect)
    json_object_set_new(o, "effect", json_string(n->effect));
  for (size_t i = 0; i < 3 && n->links[i]; i++)
    json_array_append_new(links, json_string(n->links[i]));
  json_object_set_new(o, "links", links);
  for (size_t i = 0; i < 6 && n->faults[i]; i++)
    json_array_append_new(faults, json_string(n->faults[i]));
  json_object_set_new(o, "faults", faults);
  return o;
}

/* The notes of the flags the tests of `groups` use, in table order; NULL
 * with *missing set to a flag that has no note. */
static json_t *notes(const json_t *groups, const char **missing)
{
  json_t *used = json_object();
  for (size_t i = 0; i < json_array_size(groups); i++) {
    const json_t *tests = json_object_get(json_array_get(groups, i), "tests");
    for (size_t t = 0; t < json_array_size(tests); t++) {
      const json_t *fl = json_object_get(json_array_get(tests, t), "flags");
      for (size_t k = 0; k < json_array_size(fl); k++)
        json_object_set_new(used, json_string_value(json_array_get(fl, k)), json_true());
    }
  }
  json_t *o = json_object();
  for (size_t i = 0; i < sizeof NOTES / sizeof NOTES[0]; i++)
    if (json_object_get(used, NOTES[i].flag)) {
      json_object_set_new(o, NOTES[i].flag, note_json(&NOTES[i]));
      json_object_del(used, NOTES[i].flag);
    }
  const char *key;
  json_t *v;
  *missing = NULL;
  json_object_foreach(used, key, v) {
    static char name[128];
    snprintf(name, sizeof name, "%s", key);
    *missing = name;
    break;
  }
  json_decref(used);
  if (*missing)
    json_decref(o), o = NULL;
  return o;
}

static json_t *file_json(const char *profile, const char *area, const char *header, json_t *groups, json_t *note,
                         long n_tests)
{
  json_t *f = json_object(), *gen = json_object(), *h = json_array();
  /* format 2 only where a step sets options (spec/vectors.md 2.8): a
   * reader of format 1 must refuse such a file rather than ignore the
   * changes; every other file stays format 1, byte for byte */
  int v2 = 0;
  for (size_t gi = 0; gi < json_array_size(groups); gi++) {
    const json_t *ts = json_object_get(json_array_get(groups, gi), "tests");
    for (size_t t = 0; t < json_array_size(ts); t++) {
      const json_t *steps = json_object_get(json_array_get(ts, t), "steps");
      for (size_t k = 0; k < json_array_size(steps); k++)
        v2 |= json_object_get(json_array_get(steps, k), "setOptions") != NULL;
    }
  }
  json_object_set_new(f, "schema", json_string(v2 ? "muonref-vectors-v2" : "muonref-vectors-v1"));
  json_object_set_new(f, "formatVersion", json_integer(v2 ? 2 : 1));
  json_object_set_new(f, "release", json_string(MUONREF_VECTORS_RELEASE)); /* vectors/RELEASE, spec/vectors.md 2.9 */
  json_object_set_new(gen, "name", json_string("muonref"));
  json_object_set_new(gen, "version", json_string(PACKAGE_VERSION));
  char ref[256];
  snprintf(ref, sizeof ref,
           "GNU MPFR %s at a working precision of at least 256 bits; every value is the exact result correctly "
           "rounded to its format, certified by an explicit error bound (spec/reference.md section 5) and "
           "identical at the working precision and at twice it",
           mpfr_get_version());
  json_object_set_new(gen, "reference", json_string(ref));
  json_object_set_new(gen, "seed", json_integer(GEN_SEED));
  json_object_set_new(f, "generator", gen);
  json_object_set_new(f, "profile", json_string(profile));
  json_object_set_new(f, "area", json_string(area));
  json_object_set_new(f, "numberOfTests", json_integer(n_tests));
  json_array_append_new(h, json_string(header));
  json_array_append_new(h, json_string("Generated by `muonref gen`; do not edit. Format: spec/vectors.md."));
  json_object_set_new(f, "header", h);
  json_object_set_new(f, "notes", note);
  json_object_set_new(f, "testGroups", groups);
  return f;
}

int muonref_gen_all(const char *out_dir, mpfr_prec_t prec, const char *only, const char *only_profile, int threads,
                    gen_summary *sum, muonref_error *err)
{
  size_t n_areas = sizeof AREAS / sizeof AREAS[0], n_profiles = muonref_profile_count();
  if (only && !muonref_gen_area_known(only))
    return muonref_fail(err, MUONREF_EOPTION, "--area '%s': expected one of %s", only, muonref_gen_area_list());
  muonref_options profile_defaults; /* only the check: the lookup's error names the profiles */
  if (only_profile && muonref_profile_options(only_profile, &profile_defaults, err))
    return MUONREF_EOPTION;
  if (threads < 0 || threads > GEN_MAX_THREADS)
    return muonref_fail(err, MUONREF_EOPTION, "--threads %d: expected 0 (every core) to %d", threads,
                        GEN_MAX_THREADS);
  if (threads == 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cores < 1 ? 1 : cores > GEN_MAX_THREADS ? GEN_MAX_THREADS : (int)cores;
  }
  if (!mpfr_buildopt_tls_p()) /* MPFR's caches and flags are global without TLS: one thread */
    threads = 1;
  /* the longest name written below is DIR/PROFILE/PROFILE_AREA.json (the
   * staged copies, DIR/.muonref-gen-XXXXXX/K.json.muonref-XXXXXX, are
   * shorter): refuse a folder whose paths would not fit PATH_MAX (4096)
   * rather than truncate them */
  size_t longest = 0, longest_p = 0;
  for (size_t a = 0; a < n_areas; a++)
    longest = strlen(AREAS[a].name) > longest ? strlen(AREAS[a].name) : longest;
  if (only_profile) /* a built-in or a user's registered profile (core/profile_user.h) */
    n_profiles = 1;
  for (size_t p = 0; p < n_profiles; p++) {
    const char *name = only_profile ? only_profile : muonref_profile_name(p);
    longest_p = strlen(name) > longest_p ? strlen(name) : longest_p;
  }
  if (strlen(out_dir) + 2 * longest_p + longest + 32 >= 4096)
    return muonref_fail(err, MUONREF_EOPTION, "--out: a folder name of %zu bytes is too long: the files in it would "
                        "pass PATH_MAX (4096 bytes)", strlen(out_dir));
  memset(sum, 0, sizeof *sum);
  sum->threads = threads;
  /* 1. every (profile, area)'s cases in order, on this thread (the seeded
   *    inputs: an area's seed does not depend on the profile);
   * 2. their reference computations on `threads` threads, each into its
   *    case's own JSON object, so that the bytes do not depend on it;
   * 3. every file staged in a private folder and renamed into place only
   *    when all of them were written, a failed rename undoing the ones
   *    before it, so a failure leaves no partial set (gen_commit.h) */
  /* every built-in profile's areas, or one (a user's) profile's: the files of one run */
  enum { MAXF = (MUONREF_PROFILE_COUNT + 1) * (sizeof AREAS / sizeof AREAS[0]) };
  static gen_ctx ctx[MAXF];
  gen_ctx *run[MAXF];
  size_t area_of[MAXF], n_run = 0;
  gen_commit set; /* the output folder locked for this run (vectors/gen/gen_commit.h) */
  int st = muonref_gen_commit_begin(&set, out_dir, err);
  for (size_t p = 0; !st && p < n_profiles; p++) {
    const char *profile = only_profile ? only_profile : muonref_profile_name(p);
    const muonref_profile *row = muonref_profile_get(profile);
    if (!profile || !row)
      continue;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", out_dir, profile);
    if (mkdir(dir, 0777) != 0 && access(dir, W_OK) != 0) {
      st = muonref_fail(err, MUONREF_EIO, "%s: cannot create the output folder", dir);
      break;
    }
    for (size_t a = 0; a < n_areas; a++) {
      if ((only && strcmp(only, AREAS[a].name)) || !gen_profile_has_area(row, AREAS[a].name))
        continue;
      if (n_run == MAXF) { /* n_profiles is at most MUONREF_PROFILE_COUNT (core/profile.c): never */
        st = muonref_fail(err, MUONREF_ENOMEM, "muonref gen: more than %d files in one run", (int)MAXF);
        break;
      }
      gen_ctx *g = &ctx[n_run];
      *g = (gen_ctx){.prec = prec, .profile = profile, .groups = json_array()};
      g->rng.s = GEN_SEED + 1000u * (unsigned)a;
      AREAS[a].fill(g);
      area_of[n_run] = a;
      run[n_run++] = g;
    }
  }
  if (!st)
    gen_run_jobs(run, n_run, threads); /* a thread that did not start leaves its share to the others */
  for (size_t k = 0; k < n_run && !st; k++) {
    gen_ctx *g = run[k];
    size_t a = area_of[k];
    if (g->failed) {
      st = muonref_fail(err, MUONREF_ENUMERIC, "%s area %s: %s (no file was written)", g->profile, AREAS[a].name,
                        g->error);
      break;
    }
    const char *missing;
    json_t *note = notes(g->groups, &missing);
    if (!note) {
      st = muonref_fail(err, MUONREF_ENUMERIC, "area %s: flag %s has no note in vectors/gen/gen.c's table (no file was "
                        "written)", AREAS[a].name, missing);
      break;
    }
    sum->left_out += g->n_left_out;
    if (!g->n_tests) { /* every case left out (a user's record): no file, which the reader would refuse */
      json_decref(note);
      sum->empty_areas++;
      continue;
    }
    json_t *f = file_json(g->profile, AREAS[a].name, AREAS[a].header, g->groups, note, g->n_tests);
    g->groups = NULL; /* f owns it */
    char final[4200];
    snprintf(final, sizeof final, "%s/%s/%s_%s.json", out_dir, g->profile, g->profile, AREAS[a].name);
    int wst = muonref_gen_commit_stage(&set, f, final, err);
    json_decref(f);
    if (wst) {
      char msg[MUONREF_ERROR_MESSAGE_MAX];
      snprintf(msg, sizeof msg, "%s", err->message);
      st = muonref_fail(err, wst, "%.480s (no file was written)", msg);
      break;
    }
    sum->files++;
    sum->tests += g->n_tests;
    sum->bf16_certified += g->n_bf16_certified;
  }
  for (size_t k = 0; k < n_run; k++) {
    json_decref(run[k]->groups);
    run[k]->groups = NULL;
  }
  if (!st)
    st = muonref_gen_commit_finish(&set, err);
  muonref_gen_commit_end(&set);
  if (st)
    return st;
  snprintf(sum->dir, sizeof sum->dir, "%s", out_dir);
  return MUONREF_OK;
}
