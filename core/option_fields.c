/* muonref: the table of muonref_options' fields (see option_fields.h). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "core/option_fields.h"
#include "core/pyfmt.h"

/* an enum's spelling through an int (the *_name functions take the enum) */
#define NAMER(fname, type) \
  static const char *n_##fname(int v) { return muonref_##fname##_name((type)v); }
NAMER(scale_mode, muonref_scale_mode)
NAMER(momentum_form, muonref_momentum_form)
NAMER(coeff_order, muonref_coeff_order)
NAMER(eps_mode, muonref_eps_mode)
NAMER(ns_format, muonref_ns_format)
NAMER(bf16_order, muonref_bf16_order)
NAMER(route_rule, muonref_route_rule)
NAMER(catalogue, muonref_catalogue)
NAMER(adam_eps_mode, muonref_adam_eps_mode)
NAMER(scale_shape, muonref_scale_shape)
NAMER(scale_format, muonref_scale_format)
NAMER(conv_mode, muonref_conv_mode)
NAMER(missing_grad, muonref_missing_grad)
NAMER(grad_after, muonref_grad_after)
NAMER(adam_variant, muonref_adam_variant)
NAMER(norm_format, muonref_norm_format)
NAMER(pattern_match, muonref_pattern_match)
NAMER(moment2, muonref_moment2)
NAMER(moment2_rescale, muonref_moment2_rescale)
NAMER(precondition, muonref_precondition)
NAMER(decay_method, muonref_decay_method)
NAMER(clip_form, muonref_clip_form)
NAMER(split_mode, muonref_split_mode)
NAMER(split_scale, muonref_split_scale)

#define OFF(f) offsetof(muonref_options, f)
/* each I32 entry is a 4-byte int or enum, each F64 a double, the I64 a long */
#define F64(f, v1) {#f, MUONREF_FIELD_F64, OFF(f), 0, NULL, (v1) ? 1 : 2, 0, NULL}
#define I32(f, v1) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, (v1) ? 1 : 2, 0, NULL}
#define BOOL(f, v1) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, (v1) ? 1 : 2, 1, NULL}
#define ENUM(f, namer, v1, prefix) {#f, MUONREF_FIELD_I32, OFF(f), 0, n_##namer, (v1) ? 1 : 2, 0, prefix}
/* entries since format 3 */
#define F64_3(f) {#f, MUONREF_FIELD_F64, OFF(f), 0, NULL, 3, 0, NULL}
#define BOOL3(f) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, 3, 1, NULL}
#define ENUM3(f, namer, prefix) {#f, MUONREF_FIELD_I32, OFF(f), 0, n_##namer, 3, 0, prefix}
/* entries since format 4 */
#define BOOL4(f) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, 4, 1, NULL}
#define ENUM4(f, namer, prefix) {#f, MUONREF_FIELD_I32, OFF(f), 0, n_##namer, 4, 0, prefix}
/* entries since format 5 */
#define ENUM5(f, namer, prefix) {#f, MUONREF_FIELD_I32, OFF(f), 0, n_##namer, 5, 0, prefix}
/* entries since format 6 */
#define F64_6(f) {#f, MUONREF_FIELD_F64, OFF(f), 0, NULL, 6, 0, NULL}
#define BOOL6(f) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, 6, 1, NULL}
/* entries since format 7 */
#define BOOL7(f) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, 7, 1, NULL}
/* entries since format 8 */
#define BOOL8(f) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, 8, 1, NULL}
/* entries since format 9 */
#define BOOL9(f) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, 9, 1, NULL}
/* entries since format 10 */
#define F64_10(f) {#f, MUONREF_FIELD_F64, OFF(f), 0, NULL, 10, 0, NULL}
#define ENUM10(f, namer, prefix) {#f, MUONREF_FIELD_I32, OFF(f), 0, n_##namer, 10, 0, prefix}
/* entries since format 11 */
#define I32_11(f) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, 11, 0, NULL}
#define ENUM11(f, namer, prefix) {#f, MUONREF_FIELD_I32, OFF(f), 0, n_##namer, 11, 0, prefix}
/* entries since format 12 */
#define I32_12(f) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, 12, 0, NULL}
#define BOOL12(f) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, 12, 1, NULL}
#define F64_12(f) {#f, MUONREF_FIELD_F64, OFF(f), 0, NULL, 12, 0, NULL}
/* entries since format 13 */
#define BOOL13(f) {#f, MUONREF_FIELD_I32, OFF(f), 0, NULL, 13, 1, NULL}
#define SIZE_IS(f, n) _Static_assert(sizeof(((muonref_options *)0)->f) == (n), #f " has the size its entry reads");

const muonref_option_field muonref_option_fields[] = {
  F64(lr, 1), F64(momentum, 1), BOOL(nesterov, 1), I32(ns_steps, 1), F64(weight_decay, 1),
  ENUM(scale_mode, scale_mode, 1, "MUONREF_SCALE_"), F64(adam_beta1, 1), F64(adam_beta2, 1), F64(adam_eps, 1),
  F64(adam_lr_ratio, 1), {"adam_dim_threshold", MUONREF_FIELD_I64, OFF(adam_dim_threshold), 0, NULL, 1, 0, NULL},
  I32(use_muon, 1), ENUM(momentum_form, momentum_form, 1, "MUONREF_MOMENTUM_"),
  {"coeffs", MUONREF_FIELD_COEFFS, OFF(n_coeffs), OFF(coeffs), NULL, 1, 0, NULL},
  ENUM(coeff_order, coeff_order, 1, "MUONREF_ORDER_"), F64(ns_eps, 1), ENUM(eps_mode, eps_mode, 1, "MUONREF_EPS_"),
  ENUM(ns_format, ns_format, 1, "MUONREF_NS_"), ENUM(bf16_order, bf16_order, 0, "MUONREF_BF16_"),
  ENUM(route_rule, route_rule, 0, "MUONREF_ROUTE_"), ENUM(catalogue, catalogue, 0, "MUONREF_CATALOGUE_"),
  ENUM(adam_eps_mode, adam_eps_mode, 0, "MUONREF_ADAM_EPS_"), ENUM(scale_shape, scale_shape, 0, "MUONREF_SCALE_SHAPE_"),
  ENUM(scale_format, scale_format, 0, "MUONREF_SCALE_FORMAT_"), ENUM(conv_mode, conv_mode, 0, "MUONREF_CONV_"),
  ENUM(missing_grad, missing_grad, 0, "MUONREF_MISSING_GRAD_"), ENUM(grad_after_step, grad_after, 0, "MUONREF_GRAD_AFTER_"),
  F64(ns_safety, 0), ENUM(adam_variant, adam_variant, 0, "MUONREF_ADAM_"), F64(scale_extra, 0),
  ENUM(norm_format, norm_format, 0, "MUONREF_NORM_FORMAT_"),
  {"exclude_patterns", MUONREF_FIELD_PATTERNS, OFF(n_exclude_patterns), OFF(exclude_patterns), NULL, 2, 0, NULL},
  ENUM(pattern_match, pattern_match, 0, "MUONREF_MATCH_"), BOOL(momentum_bias_correction, 0), F64(adam_weight_decay, 0),
  BOOL(adam_decay_own, 0), F64(clip_grad_norm, 0), BOOL(exclude_embeddings, 0), BOOL(adam_decay_muon_lr, 0),
  BOOL(adam_step_global, 0), BOOL(adam_bias_fp32, 0), BOOL(all_missing_error, 0),
  /* format 3 (the second moment, cautious decay) */
  ENUM3(moment2, moment2, "MUONREF_MOMENT2_"), F64_3(moment2_beta), F64_3(moment2_eps),
  ENUM3(moment2_eps_mode, eps_mode, "MUONREF_EPS_"), BOOL3(moment2_bias_correction),
  ENUM3(moment2_rescale, moment2_rescale, "MUONREF_MOMENT2_RESCALE_"), BOOL3(cautious_wd),
  /* format 4 (timm's normalize_spatial, optax's adaptive and preconditioning) */
  BOOL4(normalize_spatial), BOOL4(nuclear_scale), ENUM4(ns_precondition, precondition, "MUONREF_PRECOND_"),
  /* format 5 (Emerging-Optimizers' weight_decay_method) */
  ENUM5(decay_method, decay_method, "MUONREF_DECAY_"),
  /* format 6 (optax's adam_eps_root, Megatron's Adam L2) */
  F64_6(adam_eps_root), BOOL6(adam_l2),
  /* format 7 (kozistr/pytorch_optimizer's maximize) */
  BOOL7(maximize),
  /* format 8 (kozistr/pytorch_optimizer's cautious and weight_decouple) */
  BOOL8(cautious_update), BOOL8(adam_l2_grad),
  /* format 9 (Emerging-Optimizers v0.2.0's scale before the second moment) */
  BOOL9(moment2_prescale),
  /* format 10 (keras' clipnorm, clipvalue, global_clipnorm and loss_scale_factor) */
  ENUM10(clip_grad_form, clip_form, "MUONREF_CLIP_"), F64_10(clip_grad_norm_each), F64_10(clip_grad_value),
  F64_10(loss_scale),
  /* format 11 (block-wise Newton-Schulz: dion's num_heads and split_sizes, Megatron's QKV split) */
  I32_11(ns_heads), {"ns_split", MUONREF_FIELD_SIZES, OFF(n_ns_split), OFF(ns_split), NULL, 11, 0, NULL},
  ENUM11(ns_split_mode, split_mode, "MUONREF_SPLIT_"), ENUM11(ns_split_scale, split_scale, "MUONREF_SPLIT_SCALE_"),
  /* format 12 (keras' gradient_accumulation_steps, use_ema, ema_momentum and ema_overwrite_frequency) */
  I32_12(grad_accumulation), BOOL12(use_ema), F64_12(ema_momentum), I32_12(ema_overwrite),
  /* format 13 (Paddle's multi_precision) */
  BOOL13(master_weights),
};
const size_t muonref_option_field_count = sizeof muonref_option_fields / sizeof muonref_option_fields[0];

SIZE_IS(nesterov, 4) SIZE_IS(ns_steps, 4) SIZE_IS(scale_mode, 4) SIZE_IS(use_muon, 4) SIZE_IS(momentum_form, 4)
SIZE_IS(n_coeffs, 4) SIZE_IS(coeff_order, 4) SIZE_IS(eps_mode, 4) SIZE_IS(ns_format, 4) SIZE_IS(bf16_order, 4)
SIZE_IS(route_rule, 4) SIZE_IS(catalogue, 4) SIZE_IS(adam_eps_mode, 4) SIZE_IS(scale_shape, 4)
SIZE_IS(scale_format, 4) SIZE_IS(conv_mode, 4) SIZE_IS(missing_grad, 4) SIZE_IS(grad_after_step, 4)
SIZE_IS(adam_variant, 4) SIZE_IS(norm_format, 4) SIZE_IS(n_exclude_patterns, 4) SIZE_IS(pattern_match, 4)
SIZE_IS(momentum_bias_correction, 4) SIZE_IS(adam_decay_own, 4) SIZE_IS(exclude_embeddings, 4)
SIZE_IS(adam_decay_muon_lr, 4) SIZE_IS(adam_step_global, 4) SIZE_IS(adam_bias_fp32, 4) SIZE_IS(all_missing_error, 4)
SIZE_IS(moment2, 4) SIZE_IS(moment2_eps_mode, 4) SIZE_IS(moment2_bias_correction, 4) SIZE_IS(moment2_rescale, 4)
SIZE_IS(cautious_wd, 4) SIZE_IS(decay_method, 4) SIZE_IS(adam_l2, 4) SIZE_IS(maximize, 4) SIZE_IS(cautious_update, 4) SIZE_IS(adam_l2_grad, 4) SIZE_IS(moment2_prescale, 4) SIZE_IS(clip_grad_form, 4) SIZE_IS(normalize_spatial, 4) SIZE_IS(nuclear_scale, 4) SIZE_IS(ns_precondition, 4) SIZE_IS(ns_heads, 4) SIZE_IS(n_ns_split, 4) SIZE_IS(ns_split_mode, 4) SIZE_IS(ns_split_scale, 4) SIZE_IS(grad_accumulation, 4) SIZE_IS(use_ema, 4) SIZE_IS(ema_overwrite, 4) SIZE_IS(master_weights, 4)
SIZE_IS(adam_dim_threshold, 8) SIZE_IS(lr, 8)
#if defined(__x86_64__) && defined(__LP64__)
/* The size the table above covers (measured on x86-64: its fields and 36 bytes of alignment padding).  A field
 * appended to muonref_options, or inserted anywhere but into one of its 4-byte padding holes, changes it
 * (tests/unit/check_state also checks the gaps between the entries): add the field to the table and to spec/muon.md
 * 11.1 (the state file format grows a version), then this size.  A 4-byte field put into a hole is caught by
 * neither check (options.h groups its fields by the stage of the step, so a new one goes into its stage's
 * block): add every new field to this table and to nemo's record, spec/profiles/nemo.json, in the same change. */
_Static_assert(sizeof(muonref_options) == 1712, "muonref_options changed: add the new field to muonref_option_fields");
#endif

double muonref_option_field_f64(const muonref_options *o, const muonref_option_field *f)
{
  double d;
  memcpy(&d, (const char *)o + f->off, sizeof d);
  return d;
}

long long muonref_option_field_int(const muonref_options *o, const muonref_option_field *f)
{
  if (f->kind == MUONREF_FIELD_I64) {
    long v;
    memcpy(&v, (const char *)o + f->off, sizeof v);
    return v;
  }
  int v; /* I32, and the counts of COEFFS, PATTERNS and SIZES */
  memcpy(&v, (const char *)o + f->off, sizeof v);
  return v;
}

/* Whether entry f holds bitwise the same value in a and b. */
static int same(const muonref_options *a, const muonref_options *b, const muonref_option_field *f)
{
  const char *pa = (const char *)a, *pb = (const char *)b;
  switch (f->kind) {
  case MUONREF_FIELD_F64: return memcmp(pa + f->off, pb + f->off, sizeof(double)) == 0;
  case MUONREF_FIELD_I32:
  case MUONREF_FIELD_I64: return muonref_option_field_int(a, f) == muonref_option_field_int(b, f);
  case MUONREF_FIELD_COEFFS: {
    int n = a->n_coeffs;
    if (n != b->n_coeffs)
      return 0;
    n = n < 0 ? 0 : n > MUONREF_MAX_COEFFS ? MUONREF_MAX_COEFFS : n;
    return memcmp(a->coeffs, b->coeffs, (size_t)n * sizeof a->coeffs[0]) == 0;
  }
  case MUONREF_FIELD_SIZES: {
    int n = a->n_ns_split;
    if (n != b->n_ns_split)
      return 0;
    n = n < 0 ? 0 : n > MUONREF_MAX_SPLIT ? MUONREF_MAX_SPLIT : n;
    return memcmp(a->ns_split, b->ns_split, (size_t)n * sizeof a->ns_split[0]) == 0;
  }
  case MUONREF_FIELD_PATTERNS: {
    int n = a->n_exclude_patterns;
    if (n != b->n_exclude_patterns)
      return 0;
    for (int k = 0; k < n && k < MUONREF_MAX_PATTERNS; k++)
      if (strncmp(a->exclude_patterns[k], b->exclude_patterns[k], MUONREF_PATTERN_LEN))
        return 0;
    return 1;
  }
  }
  return 0;
}

const char *muonref_option_fields_differ(const muonref_options *a, const muonref_options *b, unsigned version)
{
  for (size_t i = 0; i < muonref_option_field_count; i++) {
    const muonref_option_field *f = &muonref_option_fields[i];
    if ((!version || (unsigned)f->since <= version) && !same(a, b, f))
      return f->name;
  }
  return NULL;
}

/* Entry f of `from` into o. */
static void copy_entry(muonref_options *o, const muonref_options *from, const muonref_option_field *f)
{
  switch (f->kind) {
  case MUONREF_FIELD_F64: memcpy((char *)o + f->off, (const char *)from + f->off, sizeof(double)); break;
  case MUONREF_FIELD_I32: memcpy((char *)o + f->off, (const char *)from + f->off, sizeof(int)); break;
  case MUONREF_FIELD_I64: memcpy((char *)o + f->off, (const char *)from + f->off, sizeof(long)); break;
  case MUONREF_FIELD_COEFFS:
    o->n_coeffs = from->n_coeffs;
    memcpy(o->coeffs, from->coeffs, sizeof o->coeffs);
    break;
  case MUONREF_FIELD_SIZES:
    o->n_ns_split = from->n_ns_split;
    memcpy(o->ns_split, from->ns_split, sizeof o->ns_split);
    break;
  case MUONREF_FIELD_PATTERNS:
    o->n_exclude_patterns = from->n_exclude_patterns;
    memcpy(o->exclude_patterns, from->exclude_patterns, sizeof o->exclude_patterns);
    break;
  }
}

void muonref_option_fields_take_changed(muonref_options *o, const muonref_options *base, const muonref_options *changed)
{
  for (size_t i = 0; i < muonref_option_field_count; i++)
    if (!same(base, changed, &muonref_option_fields[i]))
      copy_entry(o, changed, &muonref_option_fields[i]);
}

char *muonref_option_field_text(const muonref_options *o, const muonref_option_field *f, char *buf, size_t n)
{
  if (!n)
    return buf;
  buf[0] = '\0';
  if (f->kind == MUONREF_FIELD_F64) {
    char v[40];
    snprintf(buf, n, "%s", muonref_py_float(v, sizeof v, muonref_option_field_f64(o, f)));
  } else if (f->kind == MUONREF_FIELD_COEFFS) {
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int k = 0; k < o->n_coeffs && k < MUONREF_MAX_COEFFS && used < n; k++) {
      char a[40], b[40], c[40];
      used += (size_t)snprintf(buf + used, n - used, "%s(%s, %s, %s)", k ? ", " : "",
                               muonref_py_float(a, sizeof a, o->coeffs[k].a), muonref_py_float(b, sizeof b, o->coeffs[k].b),
                               muonref_py_float(c, sizeof c, o->coeffs[k].c));
    }
    if (used < n)
      snprintf(buf + used, n - used, "]");
  } else if (f->kind == MUONREF_FIELD_PATTERNS) {
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int k = 0; k < o->n_exclude_patterns && k < MUONREF_MAX_PATTERNS && used < n; k++)
      used += (size_t)snprintf(buf + used, n - used, "%s'%.63s'", k ? ", " : "", o->exclude_patterns[k]);
    if (used < n)
      snprintf(buf + used, n - used, "]");
  } else if (f->kind == MUONREF_FIELD_SIZES) {
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int k = 0; k < o->n_ns_split && k < MUONREF_MAX_SPLIT && used < n; k++)
      used += (size_t)snprintf(buf + used, n - used, "%s%d", k ? ", " : "", o->ns_split[k]);
    if (used < n)
      snprintf(buf + used, n - used, "]");
  } else if (f->enum_name && f->enum_name((int)muonref_option_field_int(o, f)))
    snprintf(buf, n, "%s", f->enum_name((int)muonref_option_field_int(o, f)));
  else
    snprintf(buf, n, "%lld", muonref_option_field_int(o, f));
  return buf;
}

const muonref_option_field *muonref_option_field_named(const char *name)
{
  for (size_t i = 0; name && i < muonref_option_field_count; i++)
    if (!strcmp(muonref_option_fields[i].name, name))
      return &muonref_option_fields[i];
  return NULL;
}

int muonref_option_field_enum_value(const muonref_option_field *f, const char *s)
{
  for (int k = 0; s && f && f->enum_name && k < 64 && f->enum_name(k); k++)
    if (!strcmp(s, f->enum_name(k)))
      return k;
  return -1;
}
