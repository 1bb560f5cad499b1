/* muonref: the fault table and its hooks (see faults.h); compiled into the
 * noinst libmuonref_hooks only, with MUONREF_TEST_HOOKS. */
#include <math.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include "core/plan.h"
#include "faults.h"
#include "ns_internal.h"
#include "muonref/presets.h"

static const muonref_fault_info FAULTS[MUONREF_FAULT_COUNT] = {
  [MUONREF_FAULT_TIMM_SPATIAL_FLATTENED] = {"timm_spatial_flattened", "conv_mode batched run as flatten: one (d0, "
                                            "rest) matrix where timm orthogonalises one (d0, d1) matrix per position",
                                            "timm/optim/muon.py @aa4b5850 reshape_for_muon: a port that keeps only the "
                                            "default \"flatten\" branch (spec/profiles/timm.md 10)"},
  [MUONREF_FAULT_TIMM_SPATIAL_UNNORMALIZED] = {"timm_spatial_unnormalized", "normalize_spatial ignored: the scale of a "
                                               "batched conv without the factor S^-1/2",
                                               "timm/optim/muon.py @aa4b5850 _single_tensor_muon `scale *= "
                                               "update_ortho.shape[0] ** -0.5` dropped (spec/profiles/timm.md 10)"},
  [MUONREF_FAULT_TIMM_SCALE_EPS_IGNORED] = {"timm_scale_eps_ignored", "scale_eps ignored: X / max(||X||, eps) where "
                                            "timm divides by ||X|| + eps sqrt(cols/rows)",
                                            "timm v1.0.23 added scale_eps (scale_eps_for_ns, \"use add instead of "
                                            "clamp\"); ports of the earlier clamp (spec/profiles/timm.md 10)"},
  [MUONREF_FAULT_TIMM_USE_FALLBACK_IGNORED] = {"timm_use_fallback_ignored", "the group key use_fallback not read: the "
                                               "group's use_muon, else the heuristic, decides",
                                               "timm/optim/muon.py @aa4b5850 Muon.step reads use_fallback first; "
                                               "timm's _param_groups builds fallback_list groups with it "
                                               "(spec/profiles/timm.md 10)"},
  [MUONREF_FAULT_OPTAX_ADAPTIVE_IGNORED] = {"optax_adaptive_ignored", "adaptive=True ignored: the orthogonalised "
                                            "update without its factor <U, O>",
                                            "google-deepmind/optax optax/contrib/_muon.py @2edbcbe2 scale_by_muon "
                                            "`if adaptive:` (PolarGrad's nuclear-norm scale) dropped "
                                            "(spec/profiles/optax.md 10)"},
  [MUONREF_FAULT_OPTAX_AOL_AS_COEFFICIENTS] = {"optax_aol_as_coefficients", "preconditioning 'aol' read as Paddle's "
                                               "and Emerging-Optimizers' \"aol\": the Frobenius normalisation, no "
                                               "row rescaling", "the word's other meaning: Paddle @98af0a0f and "
                                               "Emerging-Optimizers @fd77292 name a coefficient list \"aol\" "
                                               "(spec/profiles/optax.md 10)"},
  [MUONREF_FAULT_PYTORCH_OPTIMIZER_CAUTIOUS_UNSCALED] = {"pytorch_optimizer_cautious_unscaled", "the cautious mask "
                                                        "without its rescale: the kept elements of O not multiplied by "
                                                        "n / (kept + 1)", "the Cautious Optimizers paper's plain "
                                                        "mask, or apply_cautious without `mask.mul_(mask.numel() / "
                                                        "(mask.sum() + 1))` (spec/profiles/pytorch_optimizer.md 12)"},
  [MUONREF_FAULT_PYTORCH_OPTIMIZER_CAUTIOUS_BUFFER] = {"pytorch_optimizer_cautious_buffer", "the cautious mask read "
                                                       "from the momentum buffer M' where the port reads p.grad (the "
                                                       "Nesterov input, or the gradient)", "a port that passes the "
                                                       "buffer to apply_cautious (spec/profiles/pytorch_optimizer.md "
                                                       "12)"},
  [MUONREF_FAULT_WEIGHT_DECOUPLE_IGNORED] = {"weight_decouple_ignored", "weight_decouple=False ignored: the "
                                             "decoupled decay P (1 - lr wd) in both branches where the port adds wd P "
                                             "to p.grad (L2: decay_method l2 with adam_l2)", "a port that drops "
                                             "apply_weight_decay's coupled branch (kozistr/pytorch_optimizer "
                                             "base/optimizer.py @7a076d2f; spec/profiles/pytorch_optimizer.md 12)"},
  [MUONREF_FAULT_MLX_DECAY_DECOUPLED] = {"mlx_decay_decoupled", "the decoupled decay P (1 - lr wd) where mlx adds "
                                         "wd P to the gradient before the momentum (decay_method l2 without "
                                         "adam_l2)", "a port that reads mlx's `weight_decay` as AdamW's, as the "
                                         "Muon of every other framework takes it (spec/profiles/mlx.md 9)"},
  [MUONREF_FAULT_MLX_MOMENTUM_1D_ADAMW] = {"mlx_momentum_1d_adamw", "a parameter of fewer than two dimensions on "
                                           "the AdamW fallback where mlx steps it on its momentum alone "
                                           "(route_rule momentum_1d)", "a port that follows the docstring's advice "
                                           "(\"0D/1D parameters ... should be optimized by a different method (e.g., "
                                           ":class:`AdamW`)\") inside the optimizer (spec/profiles/mlx.md 9)"},
  [MUONREF_FAULT_MEGATRON_ADAPTIVE_SCALE_AFTER] = {"megatron_adaptive_scale_after", "the Muon scale after the second "
                                                   "moment (moment2_prescale 0) where Megatron's adaptive_muon on "
                                                   "Emerging-Optimizers v0.2.0 scales before it", "a port written from "
                                                   "Emerging-Optimizers v0.3.0 and later, which fixed the order "
                                                   "(c597a49; spec/profiles/megatron.md 8)"},
  [MUONREF_FAULT_MEGATRON_ADAPTIVE_SCALE_TWICE] = {"megatron_adaptive_scale_twice", "the Muon scale before the second "
                                                   "moment and again after it", "Megatron-LM main d98e8a64 on "
                                                   "Emerging-Optimizers v0.3.0: TensorParallelMuon's scaled Newton-"
                                                   "Schulz, then v0.3.0's _apply_muon_scale (spec/profiles/megatron.md "
                                                   "8)"},
  [MUONREF_FAULT_MEGATRON_ADAPTIVE_NORMUON_RESTORED] = {"megatron_adaptive_normuon_restored", "normuon with the "
                                                        "Frobenius norm of its input restored where v0.2.0 restores "
                                                        "none", "Emerging-Optimizers v0.3.0's _match_frobenius_norm "
                                                        "(spec/profiles/megatron.md 8)"},
  [MUONREF_FAULT_CAUTIOUS_MASK_NONSTRICT] = {"cautious_mask_nonstrict", "the cautious mask kept where O_j C_j >= 0, "
                                            "where the port keeps only O_j C_j > 0: an element whose p.grad is zero "
                                            "is kept, and counted in n / (kept + 1)", "`(update * grad >= 0)` for "
                                            "apply_cautious's `> 0` (spec/profiles/pytorch_optimizer.md 12; "
                                            "pytorch_optimizer_gradients #15)"},
  [MUONREF_FAULT_CAUTIOUS_MEAN_RESCALE] = {"cautious_mean_rescale", "the cautious mask rescaled by 1 / mean(mask), "
                                          "fl32(1 / max(fl32(kept / n), 1e-3)) (about n / kept), where the port "
                                          "multiplies by n / (kept + 1)", "the form wild copies write, "
                                          "`mask.div_(mask.mean().clamp_(min=1e-3))` (Koratahiu/Advanced_Optimizers "
                                          "`_cautious_update`; spec/profiles/pytorch_optimizer.md 12)"},
  [MUONREF_FAULT_EMA_MOMENTUM] = {"ema_momentum", "momentum buffer kept in EMA form beta M + (1 - beta) G",
                                  "KellerJordan/Muon HEAD, torch.optim.Muon (bug-reports B09)"},
  [MUONREF_FAULT_NESTEROV_IGNORED] = {"nesterov_ignored", "nesterov=True runs the plain momentum update U = M",
                                      "ports that drop the option"},
  [MUONREF_FAULT_NESTEROV_EMA_BLEND] = {"nesterov_ema_blend", "Nesterov input (1 - beta) G + beta M with a sum buffer",
                                        "mixing Keller's lerp Nesterov with a sum buffer"},
  [MUONREF_FAULT_WRONG_COEFFICIENT] = {"wrong_coefficient", "Newton-Schulz c = 2.0 instead of 2.0315",
                                       "a rounded coefficient"},
  [MUONREF_FAULT_BF16_SCALARS] = {"bf16_scalars", "coefficients and eps rounded to bf16 before use",
                                  "PyTorch 1.13 CPU: Python scalars times bf16 tensors are rounded to bf16 (measured)"},
  [MUONREF_FAULT_FOUR_STEPS] = {"four_steps", "one Newton-Schulz step fewer (4 instead of 5)", "step-count drift"},
  [MUONREF_FAULT_SIX_STEPS] = {"six_steps", "one Newton-Schulz step more (6 instead of 5)",
                               "KellerJordan/Muon <= 2025-01 default ns_steps=6"},
  [MUONREF_FAULT_EPS_CLAMP] = {"eps_clamp", "X / max(||X||, eps) instead of X / (||X|| + eps)",
                               "torch.optim.Muon, Emerging-Optimizers"},
  [MUONREF_FAULT_EPS_1E8] = {"eps_1e-8", "normalisation eps 1e-8 instead of 1e-7", "dion, optax"},
  [MUONREF_FAULT_FAN_SWAPPED] = {"fan_swapped", "fan_in and fan_out scale rules swapped",
                                 "layout confusion (bug-reports B07)"},
  [MUONREF_FAULT_DECAY_SCALED_LR] = {"decay_scaled_lr", "Muon weight decay with lr * scale instead of lr",
                                     "bug-reports notes (decay convention)"},
  [MUONREF_FAULT_DECAY_SKIPPED_GROUP] = {"decay_skipped_group", "weight decay skipped on every group but the first",
                                         "per-group option lost"},
  [MUONREF_FAULT_DECAY_AFTER_UPDATE] = {"decay_after_update", "decay applied after the update: (P - alpha O) d",
                                        "order of decoupled decay"},
  [MUONREF_FAULT_ADAM_EPS_INSIDE] = {"adam_eps_inside", "AdamW m / (sqrt(v) + eps) * sqrt(bc2) / bc1 (eps inside the correction)",
                                     "KellerJordan/Muon <= 2025-01, Moonlight"},
  [MUONREF_FAULT_ADAM_NO_BIAS_CORRECTION] = {"adam_no_bias_correction", "AdamW without bias correction",
                                             "bias correction dropped"},
  [MUONREF_FAULT_ADAM_LR_NO_RATIO] = {"adam_lr_no_ratio", "AdamW lr = lr, adam_lr_ratio ignored",
                                      "Moonlight (same lr as Muon)"},
  [MUONREF_FAULT_ADAM_DECAY_MUON_LR] = {"adam_decay_muon_lr", "AdamW decay 1 - lr wd with the Muon lr",
                                        "levanter PR #1147 (separate decays)"},
  [MUONREF_FAULT_MISSING_GRAD_AS_ZEROS] = {"missing_grad_as_zeros", "a missing gradient is treated as zeros",
                                           "KellerJordan/Muon PR #38 (bug-reports B15)"},
  [MUONREF_FAULT_CONV_SCALE_UNFLATTENED] = {"conv_scale_unflattened", "scale from the last two dims of the unflattened shape",
                                            "KellerJordan/Muon (conv: kh/kw)"},
  [MUONREF_FAULT_NO_TRANSPOSE] = {"no_transpose", "Newton-Schulz iterates on the tall side",
                                  "transpose rule dropped"},
  [MUONREF_FAULT_MAX_NORM] = {"max_norm", "normalisation by max |x| instead of the Frobenius norm",
                              "wrong norm (bug-reports B18 class)"},
  [MUONREF_FAULT_THRESHOLD_INCLUSIVE] = {"threshold_inclusive", "AUTO routing with max(shape) <= threshold",
                                         "off-by-one in the shape rule"},
  [MUONREF_FAULT_ROUTE_ALL_MATRICES] = {"route_all_matrices", "AUTO routes every parameter with ndim >= 2 to Muon",
                                        "Moonlight, optax (bug-reports B03/B04)"},
  [MUONREF_FAULT_NONFINITE_ACCEPTED] = {"nonfinite_accepted", "NaN/Inf gradients are not rejected", "no input check"},
  [MUONREF_FAULT_STATE_STEP_RESET] = {"state_step_reset", "importing state drops the step count",
                                      "checkpoint bugs (bug-reports B13/B14)"},
  [MUONREF_FAULT_SUM_MOMENTUM] = {"sum_momentum", "momentum buffer in sum form beta M + G where the profile keeps an EMA",
                                  "torch.optim.Muon's docstring formulas vs its code @b5ee4d7a; KellerJordan/Muon "
                                  "28c793b (2025-01) vs eb22579, issue #52 (bug-reports B09)"},
  [MUONREF_FAULT_EPS_ADD] = {"eps_add", "X / (||X|| + eps) where the profile clamps: max(||X||, eps)",
                             "torch.optim.Muon's docstring (\"term added to the denominator\") vs its clamp @b5ee4d7a"},
  [MUONREF_FAULT_NESTEROV_SUM_INPUT] = {"nesterov_sum_input", "Nesterov input G + beta M with an EMA buffer",
                                        "torch.optim.Muon's docstring (g_t + mu B_t) applied to its EMA buffer"},
  [MUONREF_FAULT_RMS_AS_FAN_IN] = {"rms_as_fan_in", "the fan_in factor sqrt(max(1, rows/cols)) where the profile "
                                   "scales by 0.2 sqrt(max(rows, cols))",
                                   "Keller's rule in Moonlight's place (spec/profiles/moonlight.md 10; bug-reports B08)"},
  [MUONREF_FAULT_RMS_WITHOUT_FACTOR] = {"rms_without_factor", "sqrt(max(rows, cols)) without the 0.2 of match_rms_adamw",
                                        "NVIDIA-NeMo/Emerging-Optimizers #80 (bug-reports B08)"},
  [MUONREF_FAULT_ADAM_EPS_CORRECTED] = {"adam_eps_corrected", "AdamW eps on the corrected sqrt(v_hat) where the "
                                        "profile adds it to the uncorrected sqrt(v)",
                                        "Moonlight toy_train.py @c2ad5b2 vs Keller's adam_update (moonlight_eps_corrected)"},
  [MUONREF_FAULT_ND_FLATTENED] = {"nd_flattened", "a parameter of more than two dimensions flattened to "
                                  "(d0, rest) and updated where the profile refuses it",
                                  "pytorch/pytorch PR #180561 (conv support for torch.optim.Muon); MoonshotAI/Moonlight "
                                  "issue #37 (bug-reports B03)"},
  [MUONREF_FAULT_FAN_IN_AS_RMS] = {"fan_in_as_rms", "0.2 sqrt(max(rows, cols)) where the profile scales by the fan_in "
                                   "factor sqrt(max(1, rows/cols))",
                                   "Moonlight's match-AdamW-RMS rule in Keller's place (bug-reports B08)"},
  [MUONREF_FAULT_MISSING_GRAD_SKIPPED] = {"missing_grad_skipped", "a parameter without gradient is skipped where the "
                                          "profile's port zero-fills its gradient and steps",
                                          "KellerJordan/Muon 3b04428 (PR #36, skip when grad is None), replaced by "
                                          "5bc6993 (PR #38) after issue #37 (bug-reports B15)"},
  [MUONREF_FAULT_CONV_SCALE_FLATTENED] = {"conv_scale_flattened", "the scale factor from the flattened (d0, rest) "
                                          "matrix where the profile takes the last two dimensions of the shape",
                                          "KellerJordan/Muon 28c793b scaled the flattened update; "
                                          "grad.size(-2) / grad.size(-1) since 7a93fd1 (spec/profiles/keller.md 10)"},
  [MUONREF_FAULT_BATCHED_AS_FLATTENED] = {"batched_as_flattened", "a Muon parameter of 3 or more dimensions "
                                          "flattened to one (d0, rest) matrix where the profile orthogonalises each "
                                          "trailing (d[-2], d[-1]) matrix on its own",
                                          "NeMo's and Moonlight's flattening vs KellerJordan/Muon @857d1ad "
                                          "zeropower_via_newtonschulz5 (norm over dim=(-2, -1), batched matmuls)"},
  [MUONREF_FAULT_SCALE_IN_LR] = {"scale_in_lr", "the scale factor folded into the lr (alpha = lr s, binary64) where "
                                 "the profile multiplies it into the bf16 update and rounds",
                                 "KellerJordan/Muon eb22579 .. 53b3831 (alpha=-lr * max(1, rows/cols)**0.5); the "
                                 "bf16 in-place `update *= ...` since 7a93fd1 (spec/profiles/keller.md 10)"},
  [MUONREF_FAULT_NESTEROV_DEFAULT_ON] = {"nesterov_default_on", "nesterov=True where the case leaves the option out "
                                         "(and so NAdamW for the fallback)",
                                         "huggingface/pytorch-image-models a501499b (2025-10-16, \"Remove nesterov=True "
                                         "default for Muon\"); bug-reports N06"},
  [MUONREF_FAULT_NADAMW_AS_ADAMW] = {"nadamw_as_adamw", "the fallback runs AdamW where the profile runs NAdamW "
                                     "(nesterov=True in timm)",
                                     "timm/optim/muon.py @aa4b5850 Muon.step: nadamw(...) if group[\"nesterov\"]; a port "
                                     "of the fallback as plain AdamW (spec/profiles/timm.md 6)"},
  [MUONREF_FAULT_EPS_SPLIT] = {"eps_split", "the AdamW fallback's eps 1e-8 whatever the profile's (a port of timm "
                               "that splits its one eps for Newton-Schulz and AdamW)", "timm/optim/muon.py @aa4b5850 `eps=group[\"eps\"]` for both "
                               "(spec/profiles/timm.md 10, timm_eps_split)"},
  [MUONREF_FAULT_SAFETY_IGNORED] = {"safety_ignored", "the norm's safety factor left out: X / max(||X||, eps) where the "
                                    "profile divides by max(safety ||X||, eps)",
                                    "timm/optim/muon.py @aa4b5850 zeropower_via_newtonschulz `.mul(safety_factor)`; "
                                    "Keller's normalisation, which has no such factor"},
  [MUONREF_FAULT_CACHED_GROUP_OPTIONS] = {"cached_group_options", "lr, momentum, weight_decay and betas read once at "
                                          "construction: changes a scheduler makes in param_groups between steps are "
                                          "ignored (the harness does not apply a step's setOptions)",
                                          "ports that copy group options into per-parameter state or closures at "
                                          "__init__ (a scheduler's lr then never reaches the update)"},
  [MUONREF_FAULT_SPECTRAL_WITH_FACTOR] = {"spectral_with_factor", "0.2 sqrt(max(rows, cols)) where the profile scales "
                                          "by sqrt(max(rows, cols)) without 0.2",
                                          "NVIDIA-NeMo/Emerging-Optimizers issue #80 (\"Factor 0.2 in spectral scaling "
                                          "for Muon\"; kept without it); Kimi's rule (bug-reports B08)"},
  [MUONREF_FAULT_SCALE_MODE_SWAPPED] = {"scale_mode_swapped", "Emerging-Optimizers' spectral sqrt(max(rows, cols)) and "
                                        "unit_rms_norm sqrt(rows/cols) swapped",
                                        "dion's spectral_norm is sqrt(rows/cols): the same word for the other rule "
                                        "(spec/profiles/emerging.md 10)"},
  [MUONREF_FAULT_NORM_IN_BF16] = {"norm_in_bf16", "Newton-Schulz input cast to bf16 first and normalised in bf16 where "
                                  "the profile normalises in float32 before the cast",
                                  "NeMo's and Keller's `G.bfloat16()` then `X / (X.norm() + eps)` vs Emerging-Optimizers "
                                  "muon_utils.py @fd77292 F.normalize then `.to(torch.bfloat16)`"},
  [MUONREF_FAULT_EPS_FLOOR_1E7] = {"eps_floor_1e-7", "normalisation eps 1e-7 clamped where the profile clamps at 1e-15",
                                   "Emerging-Optimizers v0.1.0 .. v0.3.1 (eps=1e-7), 7ebd3cf (2026-06-22, \"Reduce eps "
                                   "for newton_schulz\", issue #229)"},
  [MUONREF_FAULT_LR_SCALE_FIRST_TWO_DIMS] = {"lr_scale_first_two_dims", "the scale factor of a Muon parameter of 3 or "
                                             "more dimensions from its first two dimensions (d0, d1) where the profile "
                                             "takes its matrices' last two",
                                             "microsoft/dion before 0c20549 (2025-09-03, \"fix bug for 3D batch "
                                             "matrices\"): adjust_lr_spectral_norm `fan_out, fan_in = "
                                             "param_shape[:2]` (spec/profiles/dion.md 11)"},
  [MUONREF_FAULT_PADDLE_ADAM_BIAS_POW_ONE] = {"paddle_adam_bias_pow_one", "AdamW's beta-pow accumulators start at 1.0 "
                                              "where the profile starts them at beta1, beta2: step t corrects with "
                                              "beta^(t-1), a 0/0 at step 1",
                                              "the QKV/MLA-split revision of python/paddle/optimizer/muon.py "
                                              "(research notes; P-0678 and P-98af fill them with beta1, beta2: "
                                              "spec/profiles/paddle.md 11)"},
  [MUONREF_FAULT_PADDLE_SUBSTRING_AS_WORD] = {"paddle_substring_as_word", "an exclude pattern matches a parameter's "
                                              "name only as a whole word (between non-alphanumeric characters) "
                                              "where the profile takes any case-insensitive substring",
                                              "a port reading muon_exclude_patterns as names of modules: "
                                              "'unbiased_proj.weight' and 'embedding_proj' stay on Muon "
                                              "(spec/profiles/paddle.md 7, 11)"},
  [MUONREF_FAULT_PADDLE_COEFF_REPEAT_LAST] = {"paddle_coeff_repeat_last", "the coefficient list's last triple "
                                              "repeated where the profile cycles it",
                                              "Emerging-Optimizers' muon_utils.py repeat_last_types for the same "
                                              "preset names; a Paddle port copying it fails aol at 5 steps "
                                              "(spec/profiles/paddle.md 11)"},
  [MUONREF_FAULT_NS5_BEFORE_POLAR_EXPRESS] = {"ns5_before_polar_express", "the quintic list (4.0848, -6.8946, "
                                              "2.9270), ... and X / (||X|| + eps) where the profile runs the Polar "
                                              "Express list on X / (1.02 ||X|| + eps)",
                                              "microsoft/dion before 199894b (2026-04-07, \"default: ... "
                                              "use_polar_express=True\"): zeropower_via_newtonschulz5 by default "
                                              "(spec/profiles/dion.md 4, 11)"},
  [MUONREF_FAULT_OPTAX_SCALE_NONE] = {"optax_scale_none", "no shape scale at all (s = 1) where optax scales by "
                                    "sqrt(max(1, cols/rows)) (or consistent_rms)",
                                    "google-deepmind/optax before c8dc61b5 (PR #1249 \"Fix scaling factor in muon\", "
                                    "v0.2.5; bug-reports B07; spec/profiles/optax.md 10)"},
  [MUONREF_FAULT_OPTAX_NESTEROV_NO_BIAS_CORRECTION] = {"optax_nesterov_no_bias_correction", "the Newton-Schulz input "
                                    "without optax's bias correction: torch's (1 - beta) G + beta M (nesterov) or M",
                                    "a port of optax.contrib.muon's mu_hat written as torch's lerp (spec/profiles/"
                                    "optax.md 3 and 10)"},
  [MUONREF_FAULT_OPTAX_LIST_CYCLED] = {"optax_list_cycled", "an (n, 3) coefficient list cycled for ns_steps steps "
                                    "where optax runs each triple once", "optax/contrib/_muon.py @2edbcbe2 "
                                    "orthogonalize_via_newton_schulz: lax.scan over the list (ns_steps only "
                                    "validated; spec/profiles/optax.md 4 and 10)"},
  [MUONREF_FAULT_ZERO_NORM_NAN] = {"zero_norm_nan", "the normalisation divides by the bare (scaled) norm, no eps: a "
                                   "zero gradient gives 0/0 = NaN instead of a zero update",
                                   "microsoft/dion PR #24 (2971bba, \"Fix NaN in NorMuon when gradients are zero\"; "
                                   "bug-reports B16)"},
  [MUONREF_FAULT_MEGATRON_CLIP_UPDATE] = {"megatron_clip_update", "the global-norm clipping applied to the "
                                          "orthogonalised Muon updates (their global norm) instead of the raw "
                                          "gradients; the AdamW gradients unclipped",
                                          "NVIDIA/Megatron-LM issue #5394 and DeepSpeed #8439 (bug-reports B21): "
                                          "clipping after the orthogonalisation divides the step by its own norm "
                                          "(spec/profiles/megatron.md 7.2)"},
  [MUONREF_FAULT_MEGATRON_TIED_EMBEDDING_MUON] = {"megatron_tied_embedding_muon", "a 2-D parameter tagged "
                                                  "is_embedding_or_output_parameter (use_muon false) routed to Muon",
                                                  "NVIDIA/Megatron-LM issue #4641, PRs #4642 / #5034 (bug-reports B02): "
                                                  "the tied embedding replica of a pipeline stage lacks the tag "
                                                  "(spec/profiles/megatron.md 7.1)"},
  [MUONREF_FAULT_MEGATRON_NESTEROV_DEFAULT_ON] = {"megatron_nesterov_default_on", "Nesterov on where the case leaves "
                                                  "muon_nesterov out (the profile's default is off)",
                                                  "Megatron Core emerging_optimizers.py @core_v0.19.0: "
                                                  "TensorParallelMuon(nesterov=True) while OptimizerConfig's "
                                                  "muon_nesterov is False: a caller building the class directly gets "
                                                  "Nesterov (spec/profiles/megatron.md 7.5)"},
  [MUONREF_FAULT_MEGATRON_NO_CLIP] = {"megatron_no_clip", "no gradient clipping where the profile clips every "
                                      "gradient by the global norm (clip_grad 1.0)",
                                      "a port of Emerging-Optimizers' Muon alone (no Megatron clip_grad_norm_fp32 "
                                      "before the step; spec/profiles/megatron.md 1, 6)"},
  [MUONREF_FAULT_KERAS_FAN_SWAPPED_3_10] = {"keras_fan_swapped_3_10", "the update lr O sqrt(max(1, shape[0] / "
                                            "shape[1])) where keras scales by rms_rate sqrt(max(rows, cols))",
                                            "keras v3.10.0 .. v3.12 (717a64a3a4 to d130816c4a, PR #21885): Keller's "
                                            "rows/cols rule on a Keras (in, out) kernel, the inverted ratio "
                                            "(bug-reports B07; spec/profiles/keras.md 10)"},
  [MUONREF_FAULT_KERAS_ADAM_STEP_PER_PARAM] = {"keras_adam_step_per_param", "AdamW's bias correction and the state's "
                                               "step count the variable's own steps where keras counts the "
                                               "optimizer's iterations",
                                               "a port with torch.optim's per-parameter state['step'] (bug-reports "
                                               "N07's lifecycle class; spec/profiles/keras.md 6, 10)"},
  [MUONREF_FAULT_KERAS_SUBSTRING_EXCLUDE] = {"keras_substring_exclude", "exclude_layers matched as case-insensitive "
                                             "substrings where keras calls re.search",
                                             "Paddle's rule `p.lower() in name.lower()`; keras PR #21079 and #23162 "
                                             "on exclude_layers (spec/profiles/keras.md 10)"},
  [MUONREF_FAULT_KERAS_ALL_MISSING_ACCEPTED] = {"keras_all_missing_accepted", "a step without any gradient does "
                                                "nothing where keras raises \"No gradients provided for any "
                                                "variable.\"",
                                                "torch.optim's optimizers skip every parameter silently "
                                                "(spec/profiles/keras.md 2)"},
  [MUONREF_FAULT_NORMUON_ZERO_RATIO_NAN] = {"normuon_zero_ratio_nan", "NorMuon's norm restoring ratio ||O||_F / "
                                            "||N||_F without its clamp: a zero gradient gives 0/0 = NaN",
                                            "microsoft/dion before 2971bba (PR #24, \"Fix NaN in NorMuon when "
                                            "gradients are zero\": `nu.clamp(min=1e-8)`)"},
  [MUONREF_FAULT_NORMUON_NO_RESCALE] = {"normuon_no_rescale", "the second-moment normalised update without its "
                                        "Frobenius norm restored (moment2_rescale none)",
                                        "NVIDIA-NeMo/Emerging-Optimizers before 970a1b5 (PR #187, \"Fix NorMuon "
                                        "update norm scaling\")"},
  [MUONREF_FAULT_NORMUON_LONGER_SIDE] = {"normuon_longer_side", "the second moment per column of a wide matrix "
                                         "(the mean over its shorter side) instead of per row",
                                         "Emerging-Optimizers' and modded-nanogpt's NorMuon (`red_dim = -1 if "
                                         "shape[-2] >= shape[-1] else -2`) against dion's (`mean(dim=-1)`)"},
  [MUONREF_FAULT_CAUTIOUS_WD_IGNORED] = {"cautious_wd_ignored", "the decay applied to every element with "
                                         "cautious_wd set", "dion's `cautious_wd` documented but unimplemented "
                                         "before it reached muon_update_post_orthogonalize (field-2026-12 2)"},
  [MUONREF_FAULT_CAUTIOUS_WD_STRICT] = {"cautious_wd_strict", "the cautious mask P U > 0 instead of >= 0: no "
                                        "decay where the update is exactly zero",
                                        "KellerJordan/modded-nanogpt train_gpt.py @f411b3d3: its Adam branch's "
                                        "`mask = (update * p_slice) > 0` against its NorMuon branch's `>= 0`"},
  [MUONREF_FAULT_TIMM_ADAMUON_SCALE_MAX] = {"timm_adamuon_scale_max", "AdaMuon's update scaled by Muon's "
                                            "0.2 sqrt(max(rows, cols)) where timm's AdaMuon takes 0.2 sqrt(rows cols)",
                                            "a port that keeps get_lr_scale for its AdaMuon branch (timm/optim/"
                                            "muon.py @aa4b5850 get_adamuon_lr_scale; spec/profiles/timm.md 10)"},
  [MUONREF_FAULT_TIMM_ADAMUON_NO_RMS_NORM] = {"timm_adamuon_no_rms_norm", "AdaMuon without its RMS alignment: "
                                              "the update not divided by its Frobenius norm under match_rms_adamw",
                                              "eq. 8 of arXiv:2507.11005 left out (timm's `update_adaptive / "
                                              "update_adaptive.norm().add_(eps)`; spec/profiles/timm.md 10)"},
  [MUONREF_FAULT_TIMM_ADAMUON_NO_BIAS_CORRECTION] = {"timm_adamuon_no_bias_correction", "AdaMuon's second moment "
                                                     "without its bias correction v / (1 - beta2^t) where timm keeps "
                                                     "it (rms_to_rms, rsqrt_in, None)",
                                                     "timm drops it only with the RMS alignment (\"Bias correction not "
                                                     "needed if scaling by norm\"); a port that drops it everywhere "
                                                     "(spec/profiles/timm.md 10)"},
  [MUONREF_FAULT_TORCH_ALIAS_BUFFER] = {"torch_alias_buffer", "a bf16 parameter's momentum buffer, the Newton-Schulz "
                                        "input without Nesterov, divided by its norm in place: `grad.bfloat16()` "
                                        "returns the bf16 buffer itself, and `div_` normalises it",
                                        "pytorch/pytorch torch/optim/_muon.py @098e03f9 (fixed by PR #194664, "
                                        "`grad.to(dtype=torch.bfloat16, copy=True)`; spec/profiles/torch.md 9)"},
  [MUONREF_FAULT_PYTORCH_OPTIMIZER_ALIAS_ITERATE] = {"pytorch_optimizer_alias_iterate", "a bf16 parameter's "
                                                     "Newton-Schulz input (the momentum buffer without Nesterov, "
                                                     "p.grad with it) overwritten by the iteration: `g.bfloat16()` "
                                                     "returns it, `div_` normalises it and the `out=` ping-pong writes "
                                                     "every second iterate into it, so it holds the iterate of the "
                                                     "largest even step count <= ns_steps (a wide or square matrix), "
                                                     "or the normalised input (a tall one, whose transposed view "
                                                     "`contiguous()` copies)",
                                                     "kozistr/pytorch_optimizer optimizer/shampoo_utils.py @7a076d2f "
                                                     "zero_power_via_newton_schulz_5 (spec/profiles/"
                                                     "pytorch_optimizer.md 10)"},
  [MUONREF_FAULT_ADAPTIVE_SCALE_BEFORE_MOMENT2] = {"adaptive_scale_before_moment2", "the Muon scale (and "
                                                   "extra_scale_factor) applied to the Newton-Schulz output before "
                                                   "its second moment, not after: the moment stores s^2 v and the "
                                                   "scale cancels in the normalised update",
                                                   "NVIDIA-NeMo/Emerging-Optimizers adaptive_muon.py from 7d604f1 "
                                                   "(v0.2.0) to the parent of c597a49 (fixed in v0.3.0)"},
  [MUONREF_FAULT_KERAS_CLIPNORM_GLOBAL] = {"keras_clipnorm_global", "clipnorm applied to the global norm of every "
                                           "gradient with torch.nn.utils.clip_grad_norm_'s formula (max_norm / "
                                           "(total_norm + 1e-6), when below 1) where keras clips each gradient by "
                                           "its own norm, always",
                                           "a PyTorch port of keras' Muon mapping clipnorm to the clipping PyTorch "
                                           "users call (spec/profiles/keras.md 10, spec/muon.md 3.2)"},
  [MUONREF_FAULT_KERAS_ACCUMULATION_IGNORED] = {"keras_accumulation_ignored", "gradient_accumulation_steps "
                                                "ignored: every micro-step updates with its own gradient",
                                                "a PyTorch port of keras' Muon that drops the base optimizer's "
                                                "keywords it does not use itself (spec/muon.md 3.3)"},
  [MUONREF_FAULT_KERAS_ACCUMULATION_SUM] = {"keras_accumulation_sum", "the N-th micro-step of "
                                            "gradient_accumulation_steps updates with the sum of the N gradients, "
                                            "not their mean (`(g + acc_g) / steps`)",
                                            "the accumulation of a training loop that sums the micro-batches' "
                                            "gradients and forgets to divide (spec/muon.md 3.3)"},
  [MUONREF_FAULT_KERAS_ACCUMULATION_CLIP_EACH] = {"keras_accumulation_clip_each", "each micro-step's gradient "
                                                  "clipped before it is added, where keras clips the mean at the "
                                                  "N-th", "a port that keeps the clipping where a step without "
                                                  "accumulation has it (spec/muon.md 3.3)"},
  [MUONREF_FAULT_KERAS_ACCUMULATION_NO_RESET] = {"keras_accumulation_no_reset", "the accumulators never emptied: "
                                                 "each update steps with the mean of every gradient since the first "
                                                 "micro-step, divided by N",
                                                 "an accumulation that forgets _backend_reset_gradient_accumulators "
                                                 "(spec/muon.md 3.3)"},
  [MUONREF_FAULT_KERAS_EMA_IGNORED] = {"keras_ema_ignored", "use_ema ignored: no moving average, and "
                                       "ema_overwrite_frequency never writes one back",
                                       "a PyTorch port of keras' Muon that drops the base optimizer's keywords it "
                                       "does not use itself (spec/muon.md 8.2)"},
  [MUONREF_FAULT_KERAS_EMA_ZERO_START] = {"keras_ema_zero_start", "the moving average starts from zeros and takes "
                                          "the decay from the first step (m E + (1 - m) P with E = 0), where keras "
                                          "sets it to the variable while iterations is 0",
                                          "the textbook EMA without keras' `not_first_step` (spec/muon.md 8.2)"},
  [MUONREF_FAULT_KERAS_EMA_BEFORE_STEP] = {"keras_ema_before_step", "the moving average taken of the variables' "
                                           "values before the step, where keras averages after the update",
                                           "an EMA hooked before the optimizer step (spec/muon.md 8.2)"},
  [MUONREF_FAULT_KERAS_EMA_OVERWRITE_LATE] = {"keras_ema_overwrite_late", "the overwrite tested with the count "
                                              "of updates after the step, where keras tests (iterations + 1) "
                                              "before counting the call: one update late",
                                              "an overwrite placed after the step counter (spec/muon.md 8.2)"},
  [MUONREF_FAULT_STATE_DROPPED_ON_LOAD] = {"state_dropped_on_load", "a state round trip restores no buffer: "
                                           "after loading, the momentum, the moments and the gradient accumulator "
                                           "are zeros (the step counts kept), as a load that zeroes what it cannot place",
                                           "deepspeedai/DeepSpeed #7746 (its fixes convert the restored buffer "
                                           "instead of zeroing it: PRs #7748, #8433); bug-reports B13"},
  [MUONREF_FAULT_MASTER_WEIGHTS_IGNORED] = {"master_weights_ignored", "multi_precision ignored: a bf16 parameter "
                                            "stepped in bf16 (each step's decay and update rounded into it, the "
                                            "ones below half an ulp lost) and no float32 master weight in its state",
                                            "a port without Paddle's master weights (python/paddle/optimizer/muon.py "
                                            "@98af0a0f `_create_master_weight`; spec/profiles/paddle.md 8)"},
  [MUONREF_FAULT_MASTER_LOST_ON_LOAD] = {"master_lost_on_load", "a state round trip restores no master weight: "
                                         "the float32 master is made anew from the bf16 parameter at the next "
                                         "step, so the steps below half an ulp before the checkpoint are lost",
                                         "a port that keeps its master weights outside the state it saves, or "
                                         "drops them at the load, and creates them from the parameter when missing "
                                         "(Paddle's `_create_master_weight`, spec/profiles/paddle.md 8)"},
};

const muonref_fault_info *muonref_fault_info_at(int f)
{
  return f > 0 && f < MUONREF_FAULT_COUNT ? &FAULTS[f] : NULL;
}

int muonref_fault_parse(const char *name)
{
  for (int f = 1; name && f < MUONREF_FAULT_COUNT; f++)
    if (!strcmp(FAULTS[f].name, name))
      return f;
  return -1;
}

void muonref_fault_options(int f, muonref_options *o)
{
  switch (f) {
  case MUONREF_FAULT_EMA_MOMENTUM: o->momentum_form = MUONREF_MOMENTUM_EMA; break;
  case MUONREF_FAULT_WRONG_COEFFICIENT:
    for (int k = 0; k < o->n_coeffs; k++)
      if (o->coeffs[k].c == 2.0315)
        o->coeffs[k].c = 2.0;
    break;
  case MUONREF_FAULT_FOUR_STEPS: o->ns_steps = o->ns_steps > 1 ? o->ns_steps - 1 : 1; break;
  case MUONREF_FAULT_SIX_STEPS: o->ns_steps += 1; break;
  case MUONREF_FAULT_EPS_CLAMP: o->eps_mode = MUONREF_EPS_CLAMP; break;
  case MUONREF_FAULT_EPS_1E8: o->ns_eps = 1e-8; break;
  case MUONREF_FAULT_FAN_SWAPPED:
    if (o->scale_mode == MUONREF_SCALE_FAN_IN || o->scale_mode == MUONREF_SCALE_FAN_OUT)
      o->scale_mode = o->scale_mode == MUONREF_SCALE_FAN_IN ? MUONREF_SCALE_FAN_OUT : MUONREF_SCALE_FAN_IN;
    break;
  case MUONREF_FAULT_SUM_MOMENTUM: o->momentum_form = MUONREF_MOMENTUM_SUM; break;
  case MUONREF_FAULT_EPS_ADD: o->eps_mode = MUONREF_EPS_ADD; break;
  case MUONREF_FAULT_RMS_AS_FAN_IN:
    if (o->scale_mode == MUONREF_SCALE_RMS_ADAMW)
      o->scale_mode = MUONREF_SCALE_FAN_IN;
    break;
  case MUONREF_FAULT_ADAM_EPS_CORRECTED: o->adam_eps_mode = MUONREF_ADAM_EPS_CORRECTED; break;
  case MUONREF_FAULT_ADAPTIVE_SCALE_BEFORE_MOMENT2: /* the field moment2_prescale (core/plan.c, moment2_apply) */
    if (o->moment2 != MUONREF_MOMENT2_NONE)
      o->moment2_prescale = 1;
    break;
  case MUONREF_FAULT_MEGATRON_ADAPTIVE_SCALE_AFTER: o->moment2_prescale = 0; break;
  case MUONREF_FAULT_MEGATRON_ADAPTIVE_NORMUON_RESTORED:
    if (o->moment2_prescale && o->moment2 == MUONREF_MOMENT2_LONGER && o->moment2_rescale == MUONREF_MOMENT2_RESCALE_NONE)
      o->moment2_rescale = MUONREF_MOMENT2_RESCALE_NORM;
    break;
  case MUONREF_FAULT_MLX_DECAY_DECOUPLED: /* mlx's L2 on the Muon branch alone (no AdamW: adam_l2 0) */
    if (o->decay_method == MUONREF_DECAY_L2 && !o->adam_l2)
      o->decay_method = MUONREF_DECAY_DECOUPLED;
    break;
  case MUONREF_FAULT_WEIGHT_DECOUPLE_IGNORED: /* only the pair the key weight_decouple False sets */
    if (o->decay_method == MUONREF_DECAY_L2 && o->adam_l2)
      o->decay_method = MUONREF_DECAY_DECOUPLED, o->adam_l2 = 0;
    break;
  case MUONREF_FAULT_NADAMW_AS_ADAMW: o->adam_variant = MUONREF_ADAM_ADAMW; break;
  case MUONREF_FAULT_EPS_SPLIT: o->adam_eps = 1e-8; break;
  case MUONREF_FAULT_SAFETY_IGNORED: o->ns_safety = 1.0; break;
  case MUONREF_FAULT_TIMM_SCALE_EPS_IGNORED:
    if (o->eps_mode == MUONREF_EPS_ADD_SCALED)
      o->eps_mode = MUONREF_EPS_CLAMP;
    break;
  case MUONREF_FAULT_OPTAX_ADAPTIVE_IGNORED: o->nuclear_scale = 0; break;
  case MUONREF_FAULT_OPTAX_AOL_AS_COEFFICIENTS:
    if (o->ns_precondition == MUONREF_PRECOND_AOL)
      o->ns_precondition = MUONREF_PRECOND_FROBENIUS;
    break;
  case MUONREF_FAULT_PADDLE_COEFF_REPEAT_LAST: o->coeff_order = MUONREF_ORDER_REPEAT_LAST; break;
  case MUONREF_FAULT_SCALE_MODE_SWAPPED:
    if (o->scale_mode == MUONREF_SCALE_SQRT_MAX || o->scale_mode == MUONREF_SCALE_RMS_TO_RMS)
      o->scale_mode = o->scale_mode == MUONREF_SCALE_SQRT_MAX ? MUONREF_SCALE_RMS_TO_RMS : MUONREF_SCALE_SQRT_MAX;
    break;
  case MUONREF_FAULT_NORM_IN_BF16: o->norm_format = MUONREF_NORM_FORMAT_BF16; break;
  case MUONREF_FAULT_EPS_FLOOR_1E7:
    if (o->ns_eps < 1e-7)
      o->ns_eps = 1e-7;
    break;
  case MUONREF_FAULT_NS5_BEFORE_POLAR_EXPRESS:
    if (o->n_coeffs >= 1 && o->coeffs[0].a == 8.156554524902461) { /* dion's Polar Express list */
      muonref_preset_apply(muonref_preset_find("quintic"), o);
      o->ns_safety = 1.0;
    }
    break;
  case MUONREF_FAULT_ZERO_NORM_NAN: o->ns_eps = 0.0; break;
  case MUONREF_FAULT_OPTAX_SCALE_NONE:
    if (o->catalogue == MUONREF_CATALOGUE_OPTAX)
      o->scale_mode = MUONREF_SCALE_NONE, o->scale_extra = 1.0;
    break;
  case MUONREF_FAULT_OPTAX_NESTEROV_NO_BIAS_CORRECTION: o->momentum_bias_correction = 0; break;
  case MUONREF_FAULT_OPTAX_LIST_CYCLED:
    if (o->coeff_order == MUONREF_ORDER_LIST)
      o->coeff_order = MUONREF_ORDER_CYCLE;
    break;
  case MUONREF_FAULT_MEGATRON_NO_CLIP: o->clip_grad_norm = 0.0; break;
  case MUONREF_FAULT_KERAS_CLIPNORM_GLOBAL:
    if (o->clip_grad_norm_each > 0.0)
      o->clip_grad_norm = o->clip_grad_norm_each, o->clip_grad_norm_each = 0.0, o->clip_grad_form = MUONREF_CLIP_MEGATRON;
    break;
  case MUONREF_FAULT_ADAM_DECAY_MUON_LR: o->adam_decay_muon_lr = 1; break; /* keras' own rule (core/plan.c) */
  case MUONREF_FAULT_KERAS_FAN_SWAPPED_3_10: /* v3.10: `lr * NS(G) * max(1, shape[0] / shape[1]) ** 0.5` */
    if (o->catalogue == MUONREF_CATALOGUE_KERAS && o->scale_mode == MUONREF_SCALE_SQRT_MAX)
      o->scale_mode = MUONREF_SCALE_FAN_IN, o->scale_extra = 1.0;
    break;
  case MUONREF_FAULT_KERAS_ADAM_STEP_PER_PARAM: o->adam_step_global = 0; break;
  case MUONREF_FAULT_KERAS_ACCUMULATION_IGNORED: o->grad_accumulation = 0; break;
  case MUONREF_FAULT_KERAS_EMA_IGNORED: o->use_ema = 0; break;
  case MUONREF_FAULT_MASTER_WEIGHTS_IGNORED: o->master_weights = 0; break;
  case MUONREF_FAULT_KERAS_SUBSTRING_EXCLUDE: o->pattern_match = MUONREF_MATCH_SUBSTRING_CI; break;
  case MUONREF_FAULT_KERAS_ALL_MISSING_ACCEPTED: o->all_missing_error = 0; break;
  case MUONREF_FAULT_FAN_IN_AS_RMS:
    if (o->scale_mode == MUONREF_SCALE_FAN_IN)
      o->scale_mode = MUONREF_SCALE_RMS_ADAMW;
    break;
  case MUONREF_FAULT_MISSING_GRAD_SKIPPED: o->missing_grad = MUONREF_MISSING_GRAD_SKIP; break;
  case MUONREF_FAULT_CONV_SCALE_FLATTENED: o->scale_shape = MUONREF_SCALE_SHAPE_FLATTENED; break;
  case MUONREF_FAULT_BATCHED_AS_FLATTENED:
    if (o->conv_mode == MUONREF_CONV_BATCHED || o->conv_mode == MUONREF_CONV_KELLER)
      o->conv_mode = MUONREF_CONV_FLATTEN;
    break;
  case MUONREF_FAULT_SCALE_IN_LR: /* Paddle's format keeps its decay and fl32(lr): muonref_fault_muon_plan */
    if (o->scale_format != MUONREF_SCALE_FORMAT_BF16_SCALE_EXTRA)
      o->scale_format = MUONREF_SCALE_FORMAT_LR;
    break;
  case MUONREF_FAULT_NORMUON_NO_RESCALE:
    if (o->moment2_rescale == MUONREF_MOMENT2_RESCALE_NORM)
      o->moment2_rescale = MUONREF_MOMENT2_RESCALE_NONE;
    break;
  case MUONREF_FAULT_NORMUON_LONGER_SIDE:
    if (o->moment2 == MUONREF_MOMENT2_ROWS)
      o->moment2 = MUONREF_MOMENT2_LONGER;
    break;
  case MUONREF_FAULT_CAUTIOUS_WD_IGNORED: o->cautious_wd = 0; break;
  case MUONREF_FAULT_TIMM_ADAMUON_SCALE_MAX:
    if (o->moment2 == MUONREF_MOMENT2_ELEMENT && o->scale_mode == MUONREF_SCALE_RMS_NUMEL)
      o->scale_mode = MUONREF_SCALE_RMS_ADAMW;
    break;
  case MUONREF_FAULT_TIMM_ADAMUON_NO_RMS_NORM:
    if (o->moment2_rescale == MUONREF_MOMENT2_RESCALE_UNIT)
      o->moment2_rescale = MUONREF_MOMENT2_RESCALE_NONE;
    break;
  case MUONREF_FAULT_TIMM_ADAMUON_NO_BIAS_CORRECTION: o->moment2_bias_correction = 0; break;
  case MUONREF_FAULT_ND_FLATTENED: /* N-D Muon parameters flattened as use_muon=True does under THRESHOLD */
    if (o->route_rule == MUONREF_ROUTE_TWO_D_ONLY)
      o->route_rule = MUONREF_ROUTE_THRESHOLD, o->use_muon = MUONREF_USE_MUON_TRUE;
    if (o->conv_mode == MUONREF_CONV_TWO_D)
      o->conv_mode = MUONREF_CONV_FLATTEN;
    break;
  default: break;
  }
}

void muonref_fault_route(int f, const muonref_options *o, const muonref_shape *s, muonref_route *r)
{
  if (f == MUONREF_FAULT_TIMM_SPATIAL_FLATTENED && o->conv_mode == MUONREF_CONV_SPATIAL && r->use_muon) {
    muonref_options flat = *o;
    flat.conv_mode = MUONREF_CONV_FLATTEN;
    muonref_route_matrices(&flat, s, r);
    return;
  }
  if (f == MUONREF_FAULT_MEGATRON_TIED_EMBEDDING_MUON &&
      (o->route_rule == MUONREF_ROUTE_NOT_1D || o->route_rule == MUONREF_ROUTE_TAGGED_2D) &&
      o->use_muon == MUONREF_USE_MUON_FALSE && s->ndim == 2) { /* the tag lost: the shape rule alone */
    r->use_muon = 1;
    muonref_route_matrices(o, s, r);
    return;
  }
  if (f == MUONREF_FAULT_MLX_MOMENTUM_1D_ADAMW && r->momentum_only) { /* AdamW for what mlx steps on momentum */
    r->use_muon = 0;
    muonref_route_matrices(o, s, r);
    return;
  }
  if ((f != MUONREF_FAULT_THRESHOLD_INCLUSIVE && f != MUONREF_FAULT_ROUTE_ALL_MATRICES) ||
      o->use_muon != MUONREF_USE_MUON_AUTO || s->ndim < 2)
    return;
  int muon = r->use_muon;
  if (f == MUONREF_FAULT_THRESHOLD_INCLUSIVE && s->ndim == 2)
    muon = s->dims[0] <= (size_t)o->adam_dim_threshold && s->dims[1] <= (size_t)o->adam_dim_threshold;
  if (f == MUONREF_FAULT_ROUTE_ALL_MATRICES)
    muon = 1;
  r->use_muon = muon;
  muonref_route_matrices(o, s, r);
}

void muonref_fault_moment2_plan(int f, const muonref_options *o, muonref_moment2_plan *p)
{
  (void)o;
  if (f == MUONREF_FAULT_NORMUON_ZERO_RATIO_NAN)
    p->ratio_nan = 1;
}

void muonref_fault_muon_plan(int f, size_t group, const muonref_options *o, const muonref_shape *s,
                             muonref_muon_plan *p)
{
  if (f == MUONREF_FAULT_CAUTIOUS_WD_STRICT && p->cautious)
    p->cautious = 2;
  if (f == MUONREF_FAULT_MEGATRON_ADAPTIVE_SCALE_TWICE && o->moment2_prescale && o->moment2 != MUONREF_MOMENT2_NONE &&
      !p->update_scale) /* s before the moment (moment2_apply), and again in alpha */
    p->alpha = p->update_factor = o->lr * p->scale;
  switch (f) {
  case MUONREF_FAULT_TIMM_SPATIAL_UNNORMALIZED:
    if (o->conv_mode == MUONREF_CONV_SPATIAL && o->normalize_spatial && s->ndim > 2 && !p->update_scale) {
      p->scale = muonref_scale_factor(o->scale_mode, s->dims[0], s->dims[1]) * o->scale_extra;
      p->alpha = p->update_factor = o->lr * p->scale;
    }
    break;
  case MUONREF_FAULT_NESTEROV_IGNORED: p->in_grad = 0.0, p->in_mom = 1.0, p->nesterov = 0; break;
  case MUONREF_FAULT_NESTEROV_EMA_BLEND:
    if (p->nesterov)
      p->in_grad = 1.0 - o->momentum;
    break;
  case MUONREF_FAULT_NESTEROV_SUM_INPUT:
    if (p->nesterov && o->momentum_form == MUONREF_MOMENTUM_EMA)
      p->in_grad = 1.0;
    break;
  case MUONREF_FAULT_RMS_WITHOUT_FACTOR:
    if (o->scale_mode == MUONREF_SCALE_RMS_ADAMW) {
      muonref_route r;
      if (muonref_route_param(o, s, &r, NULL) == MUONREF_OK) {
        p->scale = sqrt(fmax((double)r.scale_rows, (double)r.scale_cols));
        p->alpha = o->lr * p->scale;
      }
    }
    break;
  case MUONREF_FAULT_SPECTRAL_WITH_FACTOR:
    if (o->scale_mode == MUONREF_SCALE_SQRT_MAX) {
      p->scale *= 0.2;
      p->alpha = p->update_scale ? o->lr : o->lr * p->scale;
    }
    break;
  case MUONREF_FAULT_DECAY_SCALED_LR: p->decay = 1.0 - p->alpha * o->weight_decay; break;
  case MUONREF_FAULT_DECAY_SKIPPED_GROUP: p->apply_decay = p->apply_decay && group == 0; break;
  case MUONREF_FAULT_DECAY_AFTER_UPDATE:
    if (p->apply_decay)
      p->alpha *= p->decay;
    break;
  case MUONREF_FAULT_SCALE_IN_LR: /* Paddle: the scale and 0.2 folded into alpha, no bf16 products */
    if (o->scale_format == MUONREF_SCALE_FORMAT_BF16_SCALE_EXTRA && p->update_scale)
      p->update_scale = 0, p->alpha = (double)(float)o->lr * p->scale;
    break;
  case MUONREF_FAULT_LR_SCALE_FIRST_TWO_DIMS:
    if (s->ndim > 2 && o->scale_format == MUONREF_SCALE_FORMAT_BF16_SCALE_EXTRA) {
      /* Paddle P-0678 _scaling_fn: `din, dout = u.shape[0], u.shape[1]` */
      double f2 = muonref_scale_factor(o->scale_mode, s->dims[0], s->dims[1]);
      p->scale = f2 * o->scale_extra;
      if (p->update_scale)
        p->update_factor = f2;
      else
        p->alpha = (double)(float)o->lr * p->scale;
      break;
    }
    if (s->ndim > 2) { /* dion before 0c20549: `fan_out, fan_in = param_shape[:2]` */
      p->scale = muonref_scale_factor(o->scale_mode, s->dims[0], s->dims[1]);
      if (p->update_scale && o->scale_format == MUONREF_SCALE_FORMAT_BF16_ALPHA)
        p->update_factor = o->lr * p->scale;
      else if (p->update_scale)
        p->update_factor = p->scale;
      else
        p->alpha = o->lr * p->scale;
    }
    break;
  case MUONREF_FAULT_CONV_SCALE_UNFLATTENED:
    if (s->ndim > 2) {
      p->scale = muonref_scale_factor(o->scale_mode, s->dims[s->ndim - 2], s->dims[s->ndim - 1]);
      p->alpha = o->lr * p->scale;
    }
    break;
  default: break;
  }
}

void muonref_fault_adamw_plan(int f, size_t group, const muonref_options *o, muonref_adamw_plan *p)
{
  if (f == MUONREF_FAULT_CAUTIOUS_WD_STRICT && p->cautious)
    p->cautious = 2;
  switch (f) {
  case MUONREF_FAULT_ADAM_EPS_INSIDE: p->eps /= p->sqrt_bc2; break; /* step*m/(sqrt(v)/s2 + eps/s2) */
  case MUONREF_FAULT_ADAM_NO_BIAS_CORRECTION: /* eps as given: the plan's eps / sqrt_bc2 (uncorrected) undone */
    p->sqrt_bc2 = 1.0, p->step_size = p->lr, p->eps_root_bc2 = o->adam_eps_root, p->eps = o->adam_eps;
    break;
  case MUONREF_FAULT_ADAM_LR_NO_RATIO:
    p->lr = o->lr, p->step_size = o->lr / p->bias_correction1, p->decay = 1.0 - o->lr * o->weight_decay;
    break;
  case MUONREF_FAULT_DECAY_SKIPPED_GROUP: p->apply_decay = p->apply_decay && group == 0; break;
  case MUONREF_FAULT_PADDLE_ADAM_BIAS_POW_ONE: /* beta_pow = 1 at creation: step t uses beta^(t-1) */
    p->bias_correction1 = 1.0 - pow(o->adam_beta1, (double)(p->step - 1));
    p->bias_correction2 = 1.0 - pow(o->adam_beta2, (double)(p->step - 1));
    p->sqrt_bc2 = sqrt(p->bias_correction2);
    p->step_size = p->lr / p->bias_correction1;
    p->eps = o->adam_eps_mode == MUONREF_ADAM_EPS_UNCORRECTED ? o->adam_eps / p->sqrt_bc2 : o->adam_eps;
    p->eps_root_bc2 = o->adam_eps_root * p->bias_correction2;
    break;
  default: break;
  }
}

/* Whether pat (lower-cased) occurs in name (lower-cased) between
 * non-alphanumeric characters or the string's ends. */
static int word_in(const char *name, const char *pat)
{
  size_t n = strlen(name), m = strlen(pat);
  for (size_t i = 0; m && i + m <= n; i++) {
    if (strncasecmp(name + i, pat, m))
      continue;
    int before = i == 0 || !isalnum((unsigned char)name[i - 1]);
    int after = i + m == n || !isalnum((unsigned char)name[i + m]);
    if (before && after)
      return 1;
  }
  return 0;
}

void muonref_fault_route_named(int f, const muonref_options *o, const muonref_shape *s, const char *name,
                               muonref_route *r)
{
  if (f != MUONREF_FAULT_PADDLE_SUBSTRING_AS_WORD || o->route_rule != MUONREF_ROUTE_NDIM_2_3 ||
      o->use_muon != MUONREF_USE_MUON_AUTO || !name || (s->ndim != 2 && s->ndim != 3))
    return;
  int excluded = 0;
  for (int k = 0; k < o->n_exclude_patterns && k < MUONREF_MAX_PATTERNS; k++)
    excluded |= word_in(name, o->exclude_patterns[k]);
  r->use_muon = !excluded;
  muonref_route_matrices(o, s, r);
}

static _Thread_local unsigned extra_ns_flags;

unsigned muonref_fault_set_extra_ns_flags(unsigned flags)
{
  unsigned old = extra_ns_flags;
  extra_ns_flags = flags;
  return old;
}

unsigned muonref_fault_ns_flags(int f)
{
  switch (f) {
  case MUONREF_FAULT_NO_TRANSPOSE: return MUONREF_NSF_NO_TRANSPOSE | extra_ns_flags;
  case MUONREF_FAULT_MAX_NORM: return MUONREF_NSF_MAX_NORM | extra_ns_flags;
  case MUONREF_FAULT_BF16_SCALARS: return MUONREF_NSF_BF16_SCALARS | extra_ns_flags;
  case MUONREF_FAULT_ZERO_NORM_NAN: return MUONREF_NSF_ZERO_NORM_NAN | extra_ns_flags;
  default: return extra_ns_flags;
  }
}
