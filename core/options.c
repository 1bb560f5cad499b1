/* muonref: validation of muonref_options and the spelling of its enums.
 * Messages follow the NeMo seed (nemo/core/optim/muon.py, Muon.__init__)
 * where it has one; spec/muon.md "Error catalogue" lists them all. */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "muonref/options.h"
#include "muonref/route.h"
#include "core/checks.h"
#include "core/option_fields.h"
#include "core/pyfmt.h"
#include "core/fail.h"

/* ---- enum spellings: one table per enum, shared by name and parse ---- */

static const char *const SCALE_NAMES[] = {"fan_in", "fan_out", "none", "rms_adamw", "rms_to_rms", "sqrt_max", "ratio_cols", "rms_numel", "rsqrt_cols", NULL};
/* NeMo's scale_mode option spells only the first three (its message lists them). */
static const char *const NEMO_SCALE_NAMES[] = {"fan_in", "fan_out", "none", NULL};
static const char *const ROUTE_NAMES[] = {"threshold", "two_d_only", "manual", "timm", "ndim_2_3", "ndim_2", "not_1d", "tagged_2d", "momentum_1d", NULL};
static const char *const ADAM_VARIANT_NAMES[] = {"adamw", "nadamw", "follow_nesterov", "optax_follow_nesterov", NULL};
static const char *const NORM_FORMAT_NAMES[] = {"bf16", "input", NULL};
static const char *const ADAM_EPS_NAMES[] = {"corrected", "uncorrected", NULL};
static const char *const SCALE_SHAPE_NAMES[] = {"flattened", "last_two", "first_two", NULL};
static const char *const SCALE_FORMAT_NAMES[] = {"lr", "bf16_update", "bf16_alpha", "bf16_scale_extra", NULL};
static const char *const CONV_NAMES[] = {"flatten", "batched", "keller", "two_d", "spatial", NULL};
static const char *const MISSING_GRAD_NAMES[] = {"skip", "zeros", NULL};
static const char *const GRAD_AFTER_NAMES[] = {"keep", "nesterov_input", "decayed", NULL};
static const char *const MOMENTUM_NAMES[] = {"sum", "ema", NULL};
static const char *const ORDER_NAMES[] = {"cycle", "repeat_last", "list", NULL};
static const char *const EPS_NAMES[] = {"add", "clamp", "add_scaled", NULL};
static const char *const PRECOND_NAMES[] = {"frobenius", "aol", "schatten", NULL};
static const char *const DECAY_METHOD_NAMES[] = {"decoupled", "independent", "palm", "l2", NULL};
static const char *const CLIP_FORM_NAMES[] = {"megatron", "keras", "paddle", NULL};
static const char *const FORMAT_NAMES[] = {"bf16", "fp32", "exact", NULL};
static const char *const PATTERN_MATCH_NAMES[] = {"substring_ci", "regex", NULL};
static const char *const BF16_ORDER_NAMES[] = {"separate", "keller", "fused", NULL};
static const char *const MOMENT2_NAMES[] = {"none", "rows", "longer", "element", NULL};
static const char *const MOMENT2_RESCALE_NAMES[] = {"none", "norm", "unit", "rms", NULL};
static const char *const SPLIT_MODE_NAMES[] = {"rows", "groups", "off", "stacked", "columns", NULL};
static const char *const SPLIT_SCALE_NAMES[] = {"own", "ratio", "matrix", NULL};

static const char *name_of(const char *const *names, int v)
{
  for (int i = 0; names[i]; i++)
    if (i == v)
      return names[i][0] ? names[i] : NULL;
  return NULL;
}

static size_t count_names(const char *const *names)
{
  size_t n = 0;
  while (names[n])
    n++;
  return n;
}

/* Fails unless v is a value of the enum spelled by names:
 * "Unknown <opt> <v>, expected one of ('a', 'b')".  v is the unsigned int
 * the field's C type is (the enums of options.h have no negative value, so
 * GCC gives them that type) and a state file stores (u32): a stored
 * 0xffffffff is reported as 4294967295, the number in the file, not -1. */
static int check_enum(const char *const *names, const char *opt, unsigned v, muonref_error *err)
{
  char list[256];
  if (v <= INT_MAX && name_of(names, (int)v))
    return MUONREF_OK;
  const char *named[32];
  size_t n = 0;
  for (size_t i = 0; names[i] && n < 32; i++) /* the holes ("") are no value */
    if (names[i][0])
      named[n++] = names[i];
  return muonref_fail(err, MUONREF_EOPTION, "Unknown %s %u, expected one of %s", opt, v,
                      muonref_py_str_tuple(list, sizeof list, named, n));
}

#define F(buf, x) muonref_py_float(buf, sizeof buf, x)

/* A check failing when `bad` holds: "<what>: <repr(x)>". */
static int check_real(int bad, double x, const char *what, muonref_error *err)
{
  char b[40];
  if (bad || !isfinite(x))
    return muonref_fail(err, MUONREF_EOPTION, "%s: %s", what, F(b, x));
  return MUONREF_OK;
}

static int check_coeffs(const muonref_options *o, muonref_error *err)
{
  char b[40];
  if (o->n_coeffs < 1 || o->n_coeffs > MUONREF_MAX_COEFFS)
    return muonref_fail(err, MUONREF_EOPTION,
                        "Invalid number of Newton-Schulz coefficient triples: %d (expected 1 to %d)",
                        o->n_coeffs, MUONREF_MAX_COEFFS);
  for (int k = 0; k < o->n_coeffs; k++) {
    const double v[3] = {o->coeffs[k].a, o->coeffs[k].b, o->coeffs[k].c};
    for (int j = 0; j < 3; j++)
      if (!isfinite(v[j]))
        return muonref_fail(err, MUONREF_EOPTION, "Invalid Newton-Schulz coefficient %c of triple %d: %s",
                            "abc"[j], k, F(b, v[j]));
  }
  return MUONREF_OK;
}

/* ns_split as a Python list ("[3, 0]"), for dion's messages: the option table's text of the field. */
static const char *split_list(char *b, size_t n, const muonref_options *o)
{
  return muonref_option_field_text(o, muonref_option_field_named("ns_split"), b, n);
}

/* The row blocks (spec/muon.md 7.6): the count, each size, the enums, and
 * the fields they cannot be combined with.  Under dion's catalogues in
 * dion's words (megabatch_base.py @0a059a4 _resolve_split_sizes, at the
 * step there: a list of fewer than two sizes, a size below 1, num_heads,
 * flatten=True). */
static int check_split(const muonref_options *o, muonref_error *err)
{
  int s, dion = o->catalogue == MUONREF_CATALOGUE_DION || o->catalogue == MUONREF_CATALOGUE_NORMUON;
  char b[160];
  if (o->n_ns_split < 0 || o->n_ns_split > MUONREF_MAX_SPLIT)
    return muonref_fail(err, MUONREF_EOPTION, "Invalid n_ns_split: %d (0 to %d row blocks)", o->n_ns_split,
                        MUONREF_MAX_SPLIT);
  if ((s = check_enum(SPLIT_MODE_NAMES, "ns_split_mode", (unsigned)o->ns_split_mode, err)) ||
      (s = check_enum(SPLIT_SCALE_NAMES, "ns_split_scale", (unsigned)o->ns_split_scale, err)))
    return s;
  if (!o->n_ns_split)
    return MUONREF_OK;
  if (dion && o->n_ns_split < 2)
    return muonref_fail(err, MUONREF_EOPTION, "split_sizes must be a tuple or list of at least 2 block sizes, got %s.",
                        split_list(b, sizeof b, o));
  for (int k = 0; k < o->n_ns_split; k++)
    if (o->ns_split[k] < 1)
      return dion ? muonref_fail(err, MUONREF_EOPTION, "split_sizes entries must be positive integers, got %s.",
                                 split_list(b, sizeof b, o))
                  : muonref_fail(err, MUONREF_EOPTION, "Invalid ns_split: size %d is %d (a block has at least one row)",
                                 k, o->ns_split[k]);
  if (o->ns_split_mode == MUONREF_SPLIT_OFF)
    return MUONREF_OK;
  if (dion && o->ns_heads > 1 && o->conv_mode == MUONREF_CONV_FLATTEN) /* _resolve_num_heads runs first */
    return muonref_fail(err, MUONREF_EOPTION, "num_heads > 1 is incompatible with flatten=True: flattening the "
                        "per-head 3D view collapses heads back into a single 2D matrix, defeating per-head "
                        "Newton-Schulz.");
  if (o->ns_heads > 1)
    return muonref_fail(err, MUONREF_EOPTION, "split_sizes is incompatible with num_heads > 1: use num_heads for "
                        "uniform per-head splits or split_sizes for uneven row blocks, not both.");
  if (dion && o->conv_mode == MUONREF_CONV_FLATTEN)
    return muonref_fail(err, MUONREF_EOPTION, "split_sizes is incompatible with flatten=True: split_sizes applies to "
                        "2D parameters only.");
  if (o->moment2 != MUONREF_MOMENT2_NONE || o->nuclear_scale || o->cautious_update)
    return muonref_fail(err, MUONREF_EOPTION, "Invalid ns_split: row blocks with %s are not modelled",
                        o->moment2 != MUONREF_MOMENT2_NONE ? "a second moment (moment2)"
                        : o->nuclear_scale                 ? "nuclear_scale"
                                                           : "cautious_update");
  return MUONREF_OK;
}

/* The Newton-Schulz fields after ns_steps, in the order of
 * muonref_options_validate: coefficients, their order, eps, eps_mode,
 * ns_format, bf16_order (shared with muonref_ns_options_validate). */
static int check_ns_fields(const muonref_options *o, muonref_error *err)
{
  int s;
  if ((s = check_coeffs(o, err)))
    return s;
  if ((s = check_enum(ORDER_NAMES, "coeff_order", (unsigned)o->coeff_order, err)))
    return s;
  if ((s = check_real(o->ns_eps < 0.0, o->ns_eps, "Invalid Newton-Schulz epsilon", err)))
    return s;
  if ((s = check_real(!(o->ns_safety > 0.0), o->ns_safety, "Invalid Newton-Schulz safety factor", err)))
    return s;
  if ((s = check_enum(EPS_NAMES, "eps_mode", (unsigned)o->eps_mode, err)))
    return s;
  if ((s = check_enum(FORMAT_NAMES, "ns_format", (unsigned)o->ns_format, err)))
    return s;
  if ((s = check_enum(NORM_FORMAT_NAMES, "norm_format", (unsigned)o->norm_format, err)))
    return s;
  if ((s = check_enum(BF16_ORDER_NAMES, "bf16_order", (unsigned)o->bf16_order, err)))
    return s;
  if ((s = check_enum(PRECOND_NAMES, "ns_precondition", (unsigned)o->ns_precondition, err)))
    return s;
  if (o->ns_heads < 0) /* 0 and 1: no heads (dion's None and 1) */
    return muonref_fail(err, MUONREF_EOPTION, "Invalid ns_heads: %d (the number of heads must be at least 0)",
                        o->ns_heads);
  return check_split(o, err);
}

/* The checks of o's catalogue (core/checks.c): the head, or the late rows;
 * only: the rows of that field (NULL: every row).  The catalogue is valid. */
static int check_catalogue(const muonref_options *o, int late, const char *only, muonref_error *err)
{
  const muonref_check *head = NULL, *tail = NULL;
  size_t n_head = 0, n_tail = 0;
  MUONREF_UNCHECKED(!muonref_catalogue_checks(o->catalogue, &head, &n_head, &tail, &n_tail));
  return late ? muonref_checks_run(tail, n_tail, only, o, err) : muonref_checks_run(head, n_head, only, o, err);
}

/* The optax block: the two flags 0 or 1, adam_weight_decay finite, then the
 * catalogue's late checks (OPTAX: a coefficient list no longer than
 * ns_steps, core/checks.c). */
static int check_optax_fields(const muonref_options *o, muonref_error *err)
{
  if (o->momentum_bias_correction != 0 && o->momentum_bias_correction != 1)
    return muonref_fail(err, MUONREF_EOPTION, "Invalid momentum_bias_correction: %d (expected 0 or 1)",
                        o->momentum_bias_correction);
  if (o->adam_decay_own != 0 && o->adam_decay_own != 1)
    return muonref_fail(err, MUONREF_EOPTION, "Invalid adam_decay_own: %d (expected 0 or 1)", o->adam_decay_own);
  int s = check_real(0, o->adam_weight_decay, "Invalid AdamW weight decay", err);
  /* optax checks no eps_root; a negative one can make v_hat + eps_root negative: refused everywhere */
  if (!s)
    s = check_real(o->adam_eps_root < 0.0, o->adam_eps_root, "Invalid AdamW eps_root (adam_eps_root)", err);
  if (s)
    return s;
  return check_catalogue(o, 1, NULL, err);
}

/* The exclude patterns (shared definition): a count in 0..MUONREF_MAX_PATTERNS,
 * each NUL-terminated inside its slot, and the match kind; a REGEX pattern
 * must compile (core/route.c). */
static int check_patterns(const muonref_options *o, muonref_error *err)
{
  int s;
  if (o->n_exclude_patterns < 0 || o->n_exclude_patterns > MUONREF_MAX_PATTERNS)
    return muonref_fail(err, MUONREF_EOPTION, "Invalid number of exclude patterns: %d (expected 0 to %d)",
                        o->n_exclude_patterns, MUONREF_MAX_PATTERNS);
  if ((s = check_enum(PATTERN_MATCH_NAMES, "pattern_match", (unsigned)o->pattern_match, err)))
    return s;
  for (int i = 0; i < o->n_exclude_patterns; i++) {
    if (!memchr(o->exclude_patterns[i], 0, MUONREF_PATTERN_LEN))
      return muonref_fail(err, MUONREF_EOPTION, "Invalid exclude pattern %d: longer than %d bytes", i,
                          MUONREF_PATTERN_LEN - 1);
    if (o->pattern_match == MUONREF_MATCH_REGEX && (s = muonref_pattern_check(o->exclude_patterns[i], err)))
      return s;
  }
  return MUONREF_OK;
}

/* The clipping fields and the loss scale (spec/muon.md 3.1, 3.2): the form one of the enum, each
 * bound finite and >= 0 (keras takes a bound of 0 or below as none: `if
 * self.clipnorm and self.clipnorm > 0`; muonref refuses a negative one),
 * and at most one kind set (keras' own check, in its words, is a catalogue
 * row and runs before this one, after the rows of catalogue none that keras
 * inherits: muonref's refusal of a non-finite lr comes before it, where
 * keras, which checks no lr, raises its clip check). */
static int check_clip(const muonref_options *o, muonref_error *err)
{
  int s;
  char b[3][40];
  if ((s = check_enum(CLIP_FORM_NAMES, "clip_grad_form", (unsigned)o->clip_grad_form, err)))
    return s;
  if ((s = check_real(o->loss_scale < 0.0, o->loss_scale, "Invalid loss scale factor (loss_scale)", err)) ||
      (s = check_real(o->clip_grad_norm_each < 0.0, o->clip_grad_norm_each,
                      "Invalid gradient clipping norm per gradient (clip_grad_norm_each)", err)) ||
      (s = check_real(o->clip_grad_value < 0.0, o->clip_grad_value, "Invalid gradient clipping value (clip_grad_value)",
                      err)))
    return s;
  if ((o->clip_grad_norm > 0.0) + (o->clip_grad_norm_each > 0.0) + (o->clip_grad_value > 0.0) > 1)
    return muonref_fail(err, MUONREF_EOPTION, "At most one gradient clipping may be set: clip_grad_norm_each=%s, "
                        "clip_grad_value=%s, clip_grad_norm=%s", F(b[0], o->clip_grad_norm_each),
                        F(b[1], o->clip_grad_value), F(b[2], o->clip_grad_norm));
  if (o->grad_accumulation < 0) /* keras refuses 1 too, in its words: its catalogue's row */
    return muonref_fail(err, MUONREF_EOPTION, "Invalid grad_accumulation: %d (0, off, or the number of micro-steps "
                        "per update)", o->grad_accumulation);
  /* the moving average: its values only where it is kept (keras checks them only under use_ema) */
  if (o->use_ema && (!(o->ema_momentum >= 0.0) || o->ema_momentum > 1.0))
    return muonref_fail(err, MUONREF_EOPTION, "Invalid ema_momentum: %s (0 <= m <= 1)", F(b[0], o->ema_momentum));
  if (o->use_ema && o->ema_overwrite < 0)
    return muonref_fail(err, MUONREF_EOPTION, "Invalid ema_overwrite: %d (0, never, or the updates between "
                        "overwrites)", o->ema_overwrite);
  return MUONREF_OK;
}

/* The 0/1 fields of the shared and keras blocks. */
static int check_flags(const muonref_options *o, muonref_error *err)
{
  static const struct { const char *name; size_t off; } F01[] = {
    {"adam_decay_own", offsetof(muonref_options, adam_decay_own)},
    {"exclude_embeddings", offsetof(muonref_options, exclude_embeddings)},
    {"adam_decay_muon_lr", offsetof(muonref_options, adam_decay_muon_lr)},
    {"adam_step_global", offsetof(muonref_options, adam_step_global)},
    {"adam_bias_fp32", offsetof(muonref_options, adam_bias_fp32)},
    {"all_missing_error", offsetof(muonref_options, all_missing_error)},
    {"maximize", offsetof(muonref_options, maximize)},
    {"cautious_update", offsetof(muonref_options, cautious_update)},
    {"adam_l2_grad", offsetof(muonref_options, adam_l2_grad)},
    {"moment2_prescale", offsetof(muonref_options, moment2_prescale)},
    {"adam_l2", offsetof(muonref_options, adam_l2)},
    {"moment2_bias_correction", offsetof(muonref_options, moment2_bias_correction)},
    {"cautious_wd", offsetof(muonref_options, cautious_wd)},
    {"normalize_spatial", offsetof(muonref_options, normalize_spatial)},
    {"nuclear_scale", offsetof(muonref_options, nuclear_scale)},
    {"use_ema", offsetof(muonref_options, use_ema)},
    {"master_weights", offsetof(muonref_options, master_weights)},
  };
  for (size_t i = 0; i < sizeof F01 / sizeof F01[0]; i++) {
    int v = *(const int *)((const char *)o + F01[i].off);
    if (v != 0 && v != 1)
      return muonref_fail(err, MUONREF_EOPTION, "Invalid %s: %d (expected 0 or 1)", F01[i].name, v);
  }
  return MUONREF_OK;
}

/* The second moment of the Newton-Schulz output (spec/muon.md 7.4): its
 * enums, 0 <= beta2 < 1 and eps >= 0 (finite), under every catalogue. */
static int check_moment2(const muonref_options *o, muonref_error *err)
{
  int s;
  if ((s = check_enum(MOMENT2_NAMES, "moment2", (unsigned)o->moment2, err)) ||
      (s = check_enum(MOMENT2_RESCALE_NAMES, "moment2_rescale", (unsigned)o->moment2_rescale, err)) ||
      (s = check_enum(EPS_NAMES, "moment2_eps_mode", (unsigned)o->moment2_eps_mode, err)))
    return s;
  if (o->moment2_eps_mode == MUONREF_EPS_ADD_SCALED) /* timm's scale_eps is the Newton-Schulz input's alone */
    return muonref_fail(err, MUONREF_EOPTION, "Invalid moment2_eps_mode 'add_scaled' (expected 'add' or 'clamp')");
  if ((s = check_real(o->moment2_beta < 0.0 || o->moment2_beta > 1.0, o->moment2_beta,
                      "Invalid second-moment beta (moment2_beta)", err)))
    return s;
  return check_real(o->moment2_eps < 0.0, o->moment2_eps, "Invalid second-moment epsilon (moment2_eps)", err);
}

int muonref_options_validate(const muonref_options *o, muonref_error *err)
{
  int s;
  if (!o)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_options_validate: o must not be NULL");
  if ((s = check_enum(muonref_catalogue_names(), "catalogue", (unsigned)o->catalogue, err)))
    return s;
  if ((s = check_catalogue(o, 0, NULL, err))) /* the port's own checks, in its order (core/checks.c) */
    return s;
  if ((s = check_real(o->adam_lr_ratio < 0.0, o->adam_lr_ratio, "Invalid AdamW learning rate ratio", err)))
    return s;
  if (o->adam_dim_threshold < 1)
    return muonref_fail(err, MUONREF_EOPTION, "Invalid AdamW dimension threshold: %ld", o->adam_dim_threshold);
  if ((s = check_enum(SCALE_NAMES, "scale_mode", (unsigned)o->scale_mode, err)))
    return s;
  if (o->nesterov != 0 && o->nesterov != 1)
    return muonref_fail(err, MUONREF_EOPTION, "Invalid nesterov: %d (expected 0 or 1)", o->nesterov);
  if (o->use_muon != MUONREF_USE_MUON_AUTO && o->use_muon != MUONREF_USE_MUON_FALSE &&
      o->use_muon != MUONREF_USE_MUON_TRUE)
    return muonref_fail(err, MUONREF_EOPTION, "Invalid use_muon: %d (expected None, False or True)",
                        (int)o->use_muon);
  if ((s = check_enum(MOMENTUM_NAMES, "momentum_form", (unsigned)o->momentum_form, err)))
    return s;
  if ((s = check_enum(ROUTE_NAMES, "route_rule", (unsigned)o->route_rule, err)))
    return s;
  if ((s = check_enum(ADAM_EPS_NAMES, "adam_eps_mode", (unsigned)o->adam_eps_mode, err)))
    return s;
  if ((s = check_enum(SCALE_SHAPE_NAMES, "scale_shape", (unsigned)o->scale_shape, err)))
    return s;
  if ((s = check_enum(SCALE_FORMAT_NAMES, "scale_format", (unsigned)o->scale_format, err)))
    return s;
  if ((s = check_enum(CONV_NAMES, "conv_mode", (unsigned)o->conv_mode, err)))
    return s;
  if ((s = check_enum(MISSING_GRAD_NAMES, "missing_grad", (unsigned)o->missing_grad, err)))
    return s;
  if ((s = check_enum(GRAD_AFTER_NAMES, "grad_after_step", (unsigned)o->grad_after_step, err)))
    return s;
  if ((s = check_enum(ADAM_VARIANT_NAMES, "adam_variant", (unsigned)o->adam_variant, err)))
    return s;
  if ((s = check_real(0, o->scale_extra, "Invalid extra scale factor", err)))
    return s;
  if ((s = check_optax_fields(o, err)))
    return s;
  /* Megatron's clip_grad (optimizer_config.py): 0 is off; muonref refuses what cannot be a norm bound */
  if ((s = check_real(o->clip_grad_norm < 0.0, o->clip_grad_norm, "Invalid gradient clipping norm (clip_grad)", err)))
    return s;
  if ((s = check_clip(o, err)))
    return s;
  if ((s = check_patterns(o, err)))
    return s;
  if ((s = check_flags(o, err)))
    return s;
  if ((s = check_enum(DECAY_METHOD_NAMES, "decay_method", (unsigned)o->decay_method, err)))
    return s;
  if ((s = check_moment2(o, err)))
    return s;
  return check_ns_fields(o, err);
}

int muonref_ns_options_validate(const muonref_options *o, muonref_error *err)
{
  int s;
  if (!o)
    return muonref_fail(err, MUONREF_EOPTION, "Newton-Schulz: no options given (NULL)");
  if ((s = check_enum(muonref_catalogue_names(), "catalogue", (unsigned)o->catalogue, err)))
    return s;
  if ((s = check_catalogue(o, 0, "ns_steps", err)))
    return s;
  return check_ns_fields(o, err);
}

/* Finds s in names; else fails with "Unknown <opt> 'S', expected one of
 * ('a', 'b')" (Python repr of the string and the tuple, as NeMo words it). */
static int parse_in(const char *const *names, const char *opt, const char *s, int *out,
                    muonref_error *err)
{
  for (int i = 0; names[i]; i++)
    if (s && strcmp(s, names[i]) == 0) {
      *out = i;
      return MUONREF_OK;
    }
  char list[256];
  return muonref_fail(err, MUONREF_EOPTION, "Unknown %s '%s', expected one of %s", opt, s ? s : "",
                      muonref_py_str_tuple(list, sizeof list, names, count_names(names)));
}

#define ENUM_FUNCS(type, fname, names, opt)                                         \
  const char *muonref_##fname##_name(type v) { return name_of(names, (int)v); }   \
  int muonref_##fname##_parse(const char *s, type *out, muonref_error *err)        \
  {                                                                                \
    int v, st = out ? parse_in(names, opt, s, &v, err)                             \
                    : muonref_fail(err, MUONREF_EOPTION, "muonref_" opt "_parse: out must not be NULL"); \
    if (st == MUONREF_OK)                                                          \
      *out = (type)v;                                                              \
    return st;                                                                     \
  }

const char *muonref_scale_mode_name(muonref_scale_mode v) { return name_of(SCALE_NAMES, (int)v); }
int muonref_scale_mode_parse(const char *s, muonref_scale_mode *out, muonref_error *err)
{
  int v, st = out ? parse_in(NEMO_SCALE_NAMES, "scale_mode", s, &v, err)
                   : muonref_fail(err, MUONREF_EOPTION, "muonref_scale_mode_parse: out must not be NULL");
  if (st == MUONREF_OK)
    *out = (muonref_scale_mode)v;
  return st;
}
ENUM_FUNCS(muonref_momentum_form, momentum_form, MOMENTUM_NAMES, "momentum_form")
ENUM_FUNCS(muonref_coeff_order, coeff_order, ORDER_NAMES, "coeff_order")
ENUM_FUNCS(muonref_eps_mode, eps_mode, EPS_NAMES, "eps_mode")
ENUM_FUNCS(muonref_ns_format, ns_format, FORMAT_NAMES, "ns_format")
ENUM_FUNCS(muonref_bf16_order, bf16_order, BF16_ORDER_NAMES, "bf16_order")

const char *muonref_route_rule_name(muonref_route_rule r) { return name_of(ROUTE_NAMES, (int)r); }
const char *muonref_catalogue_name(muonref_catalogue c) { return name_of(muonref_catalogue_names(), (int)c); }
const char *muonref_adam_eps_mode_name(muonref_adam_eps_mode m) { return name_of(ADAM_EPS_NAMES, (int)m); }
const char *muonref_scale_shape_name(muonref_scale_shape v) { return name_of(SCALE_SHAPE_NAMES, (int)v); }
const char *muonref_scale_format_name(muonref_scale_format v) { return name_of(SCALE_FORMAT_NAMES, (int)v); }
const char *muonref_conv_mode_name(muonref_conv_mode v) { return name_of(CONV_NAMES, (int)v); }
const char *muonref_missing_grad_name(muonref_missing_grad v) { return name_of(MISSING_GRAD_NAMES, (int)v); }
const char *muonref_grad_after_name(muonref_grad_after v) { return name_of(GRAD_AFTER_NAMES, (int)v); }
const char *muonref_adam_variant_name(muonref_adam_variant v) { return name_of(ADAM_VARIANT_NAMES, (int)v); }
const char *muonref_norm_format_name(muonref_norm_format f) { return name_of(NORM_FORMAT_NAMES, (int)f); }
const char *muonref_pattern_match_name(muonref_pattern_match m) { return name_of(PATTERN_MATCH_NAMES, (int)m); }
const char *muonref_moment2_name(muonref_moment2 m) { return name_of(MOMENT2_NAMES, (int)m); }
const char *muonref_moment2_rescale_name(muonref_moment2_rescale r) { return name_of(MOMENT2_RESCALE_NAMES, (int)r); }
const char *muonref_precondition_name(muonref_precondition p) { return name_of(PRECOND_NAMES, (int)p); }
const char *muonref_decay_method_name(muonref_decay_method m) { return name_of(DECAY_METHOD_NAMES, (int)m); }
const char *muonref_clip_form_name(muonref_clip_form f) { return name_of(CLIP_FORM_NAMES, (int)f); }
const char *muonref_split_mode_name(muonref_split_mode m) { return name_of(SPLIT_MODE_NAMES, (int)m); }
const char *muonref_split_scale_name(muonref_split_scale v) { return name_of(SPLIT_SCALE_NAMES, (int)v); }

muonref_coeff muonref_ns_coeff_at(const muonref_options *o, int k)
{
  if (!o || o->n_coeffs < 1 || o->n_coeffs > MUONREF_MAX_COEFFS || k < 0)
    return (muonref_coeff){0.0, 0.0, 0.0};
  int n = o->n_coeffs;
  int i = o->coeff_order == MUONREF_ORDER_CYCLE ? k % n : (k < n ? k : n - 1); /* LIST: k < n, or n = 1 */
  return o->coeffs[i];
}

int muonref_ns_step_count(const muonref_options *o)
{
  if (!o)
    return 0;
  return o->coeff_order == MUONREF_ORDER_LIST && o->n_coeffs >= 2 ? o->n_coeffs : o->ns_steps;
}
