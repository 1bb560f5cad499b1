/* muonref: profiles, the named option settings of the ports we judge.
 *
 * A profile is data: one complete muonref_options value (the defaults of
 * one port) and the table of the port's own option names, each mapped to
 * the field it sets.  The vectors of a profile write every option under
 * the port's name (vectors/format/case.c reads and writes them through this
 * table), so the generator, the judge and the driver need no code per
 * profile.  Each built-in profile is one record, spec/profiles/NAME.json
 * (format: spec/profiles/profile.schema.json, spec/profiles/README.md);
 * the table of this library, core/profile_table.h, and the ids,
 * muonref/profile_ids.h, are generated from the records (`make
 * profile-tables`; tests/scripts/profile-records.sh checks they are in step).
 * `nemo` is the first (seed: NVIDIA-NeMo PR #16427,
 * nemo/core/optim/muon.py); spec/muon.md "Profiles" and spec/profiles/
 * describe each one. */
#ifndef MUONREF_PROFILE_H
#define MUONREF_PROFILE_H

#include <stddef.h>
#include "muonref/api.h"
#include "muonref/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a port's option maps onto muonref_options (the JSON spelling in
 * spec/vectors.md section 2.2). */
typedef enum muonref_key_kind {
  MUONREF_KEY_REAL,       /* a double field: a number, or "nan"/"inf"/"-inf" */
  MUONREF_KEY_BOOL,       /* an int field 0/1: false/true */
  MUONREF_KEY_INT,        /* an int field */
  MUONREF_KEY_LONG,       /* a long field */
  MUONREF_KEY_BETAS,      /* adam_beta1 and adam_beta2: [b1, b2] */
  MUONREF_KEY_SCALE_MODE, /* NeMo's scale_mode: "fan_in" | "fan_out" | "none" */
  MUONREF_KEY_USE_MUON,   /* use_muon: null (AUTO) | true | false */
  MUONREF_KEY_COEFF3,     /* one triple for every step (n_coeffs 1): [a, b, c];
                             another length: "Coefficients must be a tuple of
                             exactly 3 values" (torch.optim.Muon) */
  MUONREF_KEY_ADJUST_LR,  /* torch's adjust_lr_fn: null or "original" (fan_in),
                             "match_rms_adamw" (rms_adamw); another string:
                             "Adjust learning rate function X is not supported" */
  MUONREF_KEY_COEFF_LIST, /* timm's ns_coefficients: a list of triples [[a, b, c], ...]
                             (n_coeffs of them; written so), one triple [a, b, c], or a
                             preset name ("original", "quintic", ...: presets.h) */
  MUONREF_KEY_ADJUST_LR_TIMM, /* timm's adjust_lr_fn: "original" (fan_in),
                             "match_rms_adamw" (rms_adamw; rms_numel under algo "adamuon"),
                             "rms_to_rms", "rsqrt_in" (rsqrt_cols: algo "adamuon" only),
                             null (none); another string: 'Invalid scaling function "x" for
                             Muon' (MUONREF_KEY_ALGO_TIMM says what algo changes) */
  MUONREF_KEY_EPS_SHARED, /* timm's eps: one value for ns_eps (the field named) and
                             adam_eps; written from ns_eps, so options whose two eps
                             differ are not expressible */
  MUONREF_KEY_SCALE_MODE_EMERGING, /* Emerging-Optimizers' scale_mode: "spectral" (sqrt_max),
                             "unit_rms_norm" (rms_to_rms), "shape_scaling" (fan_in);
                             another string: "Invalid mode for Muon update scale
                             factor: rows" (get_muon_scale_factor, at the step) */
  MUONREF_KEY_ALGORITHM,  /* dion's group key algorithm: "muon" (use_muon true),
                             "adamw" (false); another string: "Unknown algorithm: X"
                             (dion's step); AUTO is not expressible (written null,
                             which the round trip refuses) */
  MUONREF_KEY_ADJUST_LR_DION, /* dion's adjust_lr: "spectral_norm" (rms_to_rms),
                             "rms_norm" (rms_adamw), null (none); another string:
                             "Invalid adjust_lr value: X. Must be 'spectral_norm',
                             'rms_norm', or None." (dion's constructor) */
  MUONREF_KEY_FLATTEN,    /* dion's flatten: false (conv_mode batched), true (flatten);
                             another conv_mode is not expressible */
  MUONREF_KEY_NS_COEFFS_OPTAX, /* optax's ns_coeffs: a triple [a, b, c] (n_coeffs 1: run
                             ns_steps times), a list of n >= 2 triples [[a, b, c], ...]
                             (each once: coeff_order LIST), or a preset string
                             "standard" (Keller's triple), "dion" (the quintic list);
                             another string: "Unknown ns_coeff preset string: X"; another
                             shape: "ns_coeffs must have shape (3,) or (n, 3), got (2, 2)"
                             (optax/contrib/_muon.py @2edbcbe2); a list of one triple,
                             which optax runs once, is not expressible */
  MUONREF_KEY_CONSISTENT_RMS, /* optax's consistent_rms: null (scale_mode fan_out, scale_extra
                             1) or a number c (sqrt_max, scale_extra c: `sqrt(max(fan_in,
                             fan_out)) * c`); other scale settings are not expressible */
  MUONREF_KEY_NS_COEFF_TYPE, /* Paddle's ns_coeff_type: "simple", "quintic", "polar_express",
                             "aol", "deepseekv4" (presets.h's lists of those names, cycled),
                             or "custom" with the sibling key ns_coeffs; another string:
                             "Invalid ns_coeff_type: quartic"; "custom" without ns_coeffs:
                             "ns_coeffs must be provided when ns_coeff_type is 'custom'."
                             (P-98af's constructor asserts); written as the preset whose
                             list equals coeffs, else "custom" */
  MUONREF_KEY_NS_COEFFS,  /* Paddle's ns_coeffs: null or a list of triples [[a, b, c], ...];
                             read only with ns_coeff_type "custom"; written null unless
                             the list is no preset's */
  MUONREF_KEY_MUON_VERSION, /* Paddle's muon_version: 1 (fan_out), 2 (ratio_cols), any
                             other integer (sqrt_max); another scale_mode is not
                             expressible (written null) */
  MUONREF_KEY_PATTERNS,   /* Paddle's muon_exclude_patterns: null (none) or a list of at
                             most MUONREF_MAX_PATTERNS strings (exclude_patterns) */
  MUONREF_KEY_RMS_RATE,   /* keras' rms_rate: a number r (scale_mode sqrt_max, scale_extra r:
                             `x * sqrt(max(rows, cols)) * rms_rate`), null (scale none,
                             scale_extra 1); another scale is not expressible */
  MUONREF_KEY_CONV_MODE_TIMM, /* timm's conv_mode: "flatten" (conv_mode flatten), "batched"
                             (spatial); another string: "Invalid conv_mode: X" (timm's
                             constructor); another conv_mode is not expressible */
  MUONREF_KEY_SCALE_EPS,  /* timm's scale_eps: false (eps_mode clamp), true (add_scaled);
                             another eps_mode is not expressible */
  MUONREF_KEY_USE_FALLBACK, /* timm's group key use_fallback: true routes the group's
                             parameters to the fallback (use_muon false) whatever use_muon
                             says (timm's step: `if group.get("use_fallback", False)`
                             first); false leaves use_muon as the group's other keys set it;
                             written false (use_muon says the same) */
  MUONREF_KEY_PRECONDITIONING, /* optax's preconditioning: "frobenius", "aol", "schatten"
                             (ns_precondition); "spectral" is not expressible (spec/profiles/
                             optax.md); another string: "Unknown preconditioning X" */
  MUONREF_KEY_DECAY_METHOD, /* Emerging-Optimizers' weight_decay_method: "decoupled",
                             "independent", "palm", "l2" (decay_method, spec/muon.md 4.2);
                             another string: "Invalid weight decay method: X" (mixin.py
                             @fd77292, at the step) */
  MUONREF_KEY_ALGO_TIMM,  /* timm's algo: "muon" (moment2 none), "adamuon" (AdaMuon, moment2
                             element: spec/muon.md 7.4); another string: "Invalid algo: X. Must
                             be 'muon' or 'adamuon'" (timm's constructor).  Once every key of
                             a group is read, "adamuon" takes moment2_beta from betas[1],
                             moment2_eps from eps (added), the scale from the parameter's last
                             two dimensions (scale_shape last_two) and adjust_lr_fn's AdaMuon
                             meaning (timm/optim/muon.py @aa4b5850 get_adamuon_lr_scale):
                             "match_rms_adamw" rms_numel with moment2_rescale unit and no bias
                             correction; "rms_to_rms", "rsqrt_in" (rsqrt_cols) and null with
                             the bias correction and no rescale; "original" is 'Invalid
                             scaling function "original" for AdaMuon', and under "muon"
                             "rsqrt_in" is 'Invalid scaling function "rsqrt_in" for Muon' (both
                             asserted at timm's step).  Written "adamuon" only for options so
                             derived, "muon" for moment2 none, else "?" (not expressible) */
  MUONREF_KEY_BOOL_NOT,   /* an int field 0/1 read inverted: false sets 1, true 0 (Megatron's
                             decoupled_weight_decay, whose False is adam_l2 1) */
  MUONREF_KEY_COEFFICIENT_TYPE /* Emerging-Optimizers' coefficient_type (muon_utils.py @fd77292
                             _COEFFICIENT_SETS, get_coefficient_iterator): "simple", "quintic",
                             "polar_express", "cans", "aol", "deepseekv4", "cubic5", each
                             presets.h's list of that name in its own order (repeat-last for
                             polar_express, cans, deepseekv4; cycle for the others); "custom":
                             "custom_coefficient_sets must be provided when coefficient_type is
                             'custom'." (Muon never passes the sets); "cubic5" with ns_steps
                             other than 5: "cubic5 is a fixed 5-step schedule; got steps=6. Use
                             steps=5, or pass explicit custom coefficients."; another string:
                             "Invalid coefficient type: X" (all at the step, in newton_schulz).
                             Written as the preset whose list and order equal the options',
                             else "?" (not expressible) */,
  MUONREF_KEY_USE_ADJUSTED_LR /* kozistr/pytorch_optimizer's use_adjusted_lr (optimizer/muon.py
                             @7a076d2f get_adjusted_lr): false (its default) scale_mode rms_adamw,
                             `0.2 * math.sqrt(max(output_shape, input_shape))`; true fan_in,
                             `math.pow(max(1.0, output_shape / input_shape), 0.5)`.  Its
                             docstring and CHANGELOG say the reverse (spec/profiles/
                             pytorch_optimizer.md 6.1).  Written false for rms_adamw, true for
                             fan_in, else "?" (not expressible) */,
  MUONREF_KEY_BETAS_BY_BRANCH, /* [b1, b2] whose fields follow the group's branch (kozistr/
                             pytorch_optimizer's AdaMuon, optimizer/muon.py @7a076d2f:
                             `beta1, beta2 = group['betas']` for both kinds of group): a Muon
                             group (use_muon true) momentum and moment2_beta (`m.lerp_(grad,
                             weight=1.0 - beta1)`, `v.mul_(beta2).addcmul_(...)`), an AdamW
                             group adam_beta1 and adam_beta2; a group without use_muon sets
                             all four.  Written from the group's branch */
  MUONREF_KEY_EPS_BY_BRANCH /* a real whose field follows the group's branch (the same
                             AdaMuon's group['eps']): a Muon group moment2_eps (`(v /
                             bias_correction2).sqrt_().add_(group['eps'])`), an AdamW group
                             adam_eps; a group without use_muon sets both.  Written from the
                             group's branch */,
  MUONREF_KEY_MOMENT2_METHOD /* Emerging-Optimizers' moment2_method (adaptive_muon.py @fd77292
                             _apply_moment2_normalization): "adamuon" moment2 element,
                             moment2_eps_mode add, moment2_rescale none; "normuon" moment2
                             longer, moment2_eps_mode clamp, moment2_rescale norm; neither with
                             a bias correction (spec/muon.md 7.4); another string: "Invalid
                             second moment method: X" (at the step, _init_group).  "namo" has
                             no field.  Written as the method whose four fields equal the
                             options', else "?" (not expressible) */,
  MUONREF_KEY_WEIGHT_DECOUPLE /* kozistr/pytorch_optimizer's weight_decouple (base/optimizer.py
                             @7a076d2f apply_weight_decay): true (its default) decay_method
                             decoupled and adam_l2 0, `p.mul_(1 - wd lr)`; false decay_method l2
                             and adam_l2 1, `grad.add_(p, alpha=wd)` in both branches (where wd >
                             0).  Written true for (decoupled, 0), false for (l2, 1), else "?"
                             (not expressible) */,
  MUONREF_KEY_MOMENT2_METHOD_V0_2 /* Emerging-Optimizers v0.2.0's moment2_method (adaptive_muon.py
                             @v0.2.0 _apply_moment2_normalization), as Megatron Core core_v0.18.0
                             to core_v0.19.x passes it (adaptive_muon_moment2_method): "adamuon"
                             as MOMENT2_METHOD's; "normuon" moment2 longer, moment2_eps_mode clamp
                             and no rescale (`orth_grad * moment2.clamp_min(eps).rsqrt_()`, the
                             norm not restored); another string: "Invalid second moment method:
                             X".  Written as MOMENT2_METHOD is */,
  MUONREF_KEY_USE_POLAR_EXPRESS /* dion's use_polar_express (dion/muon.py @0a059a4, dion.md 4): true
                             the preset polar_express_5 at its ns_safety 1.02 (polar_express: the
                             five Polar Express triples on X / (1.02 ||X|| + epsilon)); false the
                             preset quintic, the five triples once each, with ns_safety 1
                             (zeropower_via_newtonschulz5 on X / (||X|| + epsilon)).  Written
                             true or false for those two, else "?" (not expressible) */,
  MUONREF_KEY_SPLIT_SIZES, /* row block sizes (ns_split, spec/muon.md 7.6): null none, or a list of
                             integers (dion's split_sizes, Megatron's qkv_split_shapes); a list's
                             values are checked by options validation (dion's messages) */
  MUONREF_KEY_SPLIT_QKV,   /* Megatron's muon_split_qkv: true ns_split_mode GROUPS, false OFF;
                             written "?" for ROWS (not expressible) */
  MUONREF_KEY_SPLIT_CONCAT /* Paddle's MuonParamInfo split_concat_func, a user function that splits the
                             Newton-Schulz input, orthogonalizes and scales each part (ortho_fn) and
                             concatenates them: null none, or {"axis": 0 or 1, "sizes": [...]}, the
                             split along that axis (ns_split with ns_split_mode ROWS or COLUMNS);
                             another function is not expressible */,
  MUONREF_KEY_PADDLE_GRAD_CLIP /* Paddle's grad_clip, a ClipGradBase object (python/paddle/nn/clip.py):
                             null none; {"class": "ClipGradByGlobalNorm", "clip_norm": c} clip_grad_norm
                             c with clip_grad_form PADDLE; {"class": "ClipGradByNorm", "clip_norm": c}
                             clip_grad_norm_each c; {"class": "ClipGradByValue", "max": v} clip_grad_value
                             v (min -max, Paddle's default; another min is not expressible).  Written as
                             the one clipping the options set, else "?" (not expressible) */
} muonref_key_kind;
/* How many kinds there are (the record format spells each kind as its
 * name in lower case: "real", "coeff_list", "rms_rate"). */
#define MUONREF_KEY_KIND_COUNT (MUONREF_KEY_PADDLE_GRAD_CLIP + 1)

/* Which groups of a port take an option (ports whose Muon and AdamW
 * groups have key sets of their own, KellerJordan/Muon's
 * SingleDeviceMuonWithAuxAdam: `assert set(group.keys()) == {...}`). */
typedef enum muonref_key_branch {
  MUONREF_KEY_ANY = 0,       /* every group */
  MUONREF_KEY_MUON_ONLY = 1, /* groups with use_muon true only */
  MUONREF_KEY_ADAM_ONLY = 2  /* groups with use_muon false only */
} muonref_key_branch;

/* One option of a port: its name, kind, the muonref_options field it
 * sets (offsetof), the groups that take it, and whether a scheduler may
 * change it between steps (format v2 "setOptions", spec/vectors.md 2.8;
 * the keys setting lr, momentum, weight_decay and the AdamW betas). */
typedef struct muonref_option_key {
  const char *name;
  muonref_key_kind kind;
  size_t offset;
  muonref_key_branch branch;
  int schedulable; /* 0 or 1 */
  int optional;    /* 0 or 1; 1: a vector writes the key only where its value differs from the
                      profile's default (an absent key reads as the default), so that a key added
                      to a profile leaves its published cases as they were */
  int init;        /* 0 or 1; 1: the optimizer's own keyword (the record's scope "init"), one value for
                      every group: a vector whose groups give it two values is malformed
                      (vectors/format/validate.c) */
  int required;    /* 0 or 1; 1: the port's signature gives the key no default (optax's and mlx's
                      learning_rate): a case of defaults writes it too */
  int branch_default; /* 0 or 1; 1: the constructor's default for the groups of its branch (the record's
                         "branch_default": kozistr/pytorch_optimizer's adamw_lr, adamw_betas, ...), which
                         a group key of the same field shadows: a vector writes it, in that key's place,
                         only in a case of constructor defaults (spec/vectors.md 2.1) */
} muonref_option_key;

/* One row of the profile table (static data for the built-in profiles;
 * never freed). */
typedef struct muonref_profile {
  const char *name;                /* "nemo", "torch" */
  const char *source;              /* the port described: repository, paths, commit or release, date */
  const muonref_options *defaults; /* the complete defaults (valid: muonref_options_validate passes) */
  const muonref_option_key *keys;  /* the port's option names, in its signature's order */
  size_t n_keys;
  int one_group;                   /* 1: the port puts every parameter into one group
                                      (Moonlight): groups may differ only in use_muon */
  const muonref_options *adam_defaults; /* NULL, or the complete defaults of a group with
                                      use_muon false, where they differ from `defaults`
                                      (Keller: its AdamW groups default to lr 3e-4) */
  const char *const *areas;        /* the vector areas the port has semantics for (names of
                                      spec/vectors.md 6, e.g. "adamw" needs an AdamW fallback),
                                      NULL-terminated; `muonref gen` writes these */
  const char *bf16_refusal_status; /* NULL where the port takes bf16 parameters; else the
                                      status name ("EGRAD") and the message of the error its
                                      first step raises on one (Emerging-Optimizers: "Input
                                      tensor x must be in float32, got torch.bfloat16"): the
                                      area "dtypes" is then that refusal (spec/vectors.md 2.1) */
  const char *bf16_refusal_message;
  const char *bf16_unmodeled;      /* NULL where the reference's bf16 run is the port's where
                                      certified; else why not: the port rounds values to bf16
                                      after Newton-Schulz that the reference keeps wider
                                      (kozistr/pytorch_optimizer's AdaMuon divides and rescales
                                      its bf16 output in place).  Its bf16 step cases with a Muon
                                      parameter are then Bf16Noise, never Bf16Exact
                                      (spec/vectors.md 5.1); its fp32 cases stay exact */
  const char *const *coefficient_types; /* NULL: a key of kind coefficient_type takes every preset
                                      of Emerging-Optimizers at the profile's commit; else the ones
                                      its release has, NULL-terminated (emerging@0.3: no "cubic5",
                                      added in a4c2c26), another refused as upstream refuses it,
                                      "Invalid coefficient type: cubic5" */
  const char *coefficient_type_refusal; /* NULL: that refusal; else the port's own words for a preset
                                      its release lacks, "custom" included, its "{}" the name
                                      (megatron@0.17: "Unsupported muon coefficient type '{}'.
                                      Supported types: ('quintic',)", raised before Emerging-
                                      Optimizers sees the name) */
} muonref_profile;

/* The profiles by number, muonref_profile_id (MUONREF_PROFILE_NEMO, ...,
 * MUONREF_PROFILE_COUNT): generated from the records' "id" members.  The
 * numbers are stable: a new profile takes the next number and no number is
 * ever reused, so code written against one version keeps meaning the same
 * port.  muonref_profile_name(id) is the profile's name. */
#include "muonref/profile_ids.h"

/* The options initializer: writes the complete defaults of profile `id`
 * into *o, every field set (a zero-initialised muonref_options is not
 * valid: lr and ns_steps 0, no coefficients).  The result passes
 * muonref_options_validate; change single fields afterwards.  Returns
 * MUONREF_OK, or MUONREF_EOPTION ("Unknown profile id N, expected 0 to M")
 * with *o untouched for an id without a profile, or for NULL o. */
MUONREF_API MUONREF_NODISCARD int muonref_options_init(muonref_options *o, muonref_profile_id id, muonref_error *err);

/* The profile named `name`, or NULL (the row is static data: never free it). */
MUONREF_API const muonref_profile *muonref_profile_get(const char *name);

/* The same as muonref_options_init, by name: writes the defaults of
 * profile `name` into *out.  Returns MUONREF_OK, or MUONREF_EOPTION with
 * "Unknown profile 'NAME', expected one of ('nemo', 'torch', ..., 'keras')"
 * (out untouched) when no profile has that name, or "muonref_profile_options:
 * out must not be NULL". */
MUONREF_API MUONREF_NODISCARD int muonref_profile_options(const char *name, muonref_options *out, muonref_error *err);

/* Number of profiles (MUONREF_PROFILE_COUNT of the library: a library newer
 * than the header may know more); the profile with id i and its name (NULL
 * past the end). */
MUONREF_API size_t muonref_profile_count(void);
MUONREF_API const muonref_profile *muonref_profile_at(size_t i);
MUONREF_API const char *muonref_profile_name(size_t i);

#ifdef __cplusplus
}
#endif
#endif
