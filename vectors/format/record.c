/* muonref: reading and validating profile records (see record.h;
 * spec/profiles/profile.schema.json, spec/profiles/README.md). */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/format/record.h"
#include "vectors/format/case.h"
#include "vectors/gen/gen_run.h"
#include "core/fail.h"
#include "core/profile_user.h"
#include "core/pyfmt.h"
#include "muonref/presets.h"

/* ---- the tables ---- */

muonref_spelling muonref_record_spelling(const muonref_option_field *f)
{
  switch (f->kind) {
  case MUONREF_FIELD_F64: return MUONREF_SPELL_REAL;
  case MUONREF_FIELD_I64: return MUONREF_SPELL_LONG;
  case MUONREF_FIELD_COEFFS: return MUONREF_SPELL_COEFFS;
  case MUONREF_FIELD_PATTERNS: return MUONREF_SPELL_PATTERNS;
  case MUONREF_FIELD_SIZES: return MUONREF_SPELL_SIZES;
  default: /* an int */
    return f->enum_name ? MUONREF_SPELL_ENUM
           : f->boolean ? MUONREF_SPELL_BOOL
           : f->off == offsetof(muonref_options, use_muon) ? MUONREF_SPELL_USE_MUON
                                                             : MUONREF_SPELL_INT;
  }
}

size_t muonref_record_field_offset(const muonref_option_field *f)
{
  return f->kind == MUONREF_FIELD_COEFFS || f->kind == MUONREF_FIELD_PATTERNS || f->kind == MUONREF_FIELD_SIZES ? f->off2
                                                                                                             : f->off;
}

static const char *const KIND_NAMES[MUONREF_KEY_KIND_COUNT] = {
  [MUONREF_KEY_REAL] = "real", [MUONREF_KEY_BOOL] = "bool", [MUONREF_KEY_INT] = "int", [MUONREF_KEY_LONG] = "long",
  [MUONREF_KEY_BETAS] = "betas", [MUONREF_KEY_SCALE_MODE] = "scale_mode", [MUONREF_KEY_USE_MUON] = "use_muon",
  [MUONREF_KEY_COEFF3] = "coeff3", [MUONREF_KEY_ADJUST_LR] = "adjust_lr", [MUONREF_KEY_COEFF_LIST] = "coeff_list",
  [MUONREF_KEY_ADJUST_LR_TIMM] = "adjust_lr_timm", [MUONREF_KEY_EPS_SHARED] = "eps_shared",
  [MUONREF_KEY_SCALE_MODE_EMERGING] = "scale_mode_emerging", [MUONREF_KEY_ALGORITHM] = "algorithm",
  [MUONREF_KEY_ADJUST_LR_DION] = "adjust_lr_dion", [MUONREF_KEY_FLATTEN] = "flatten",
  [MUONREF_KEY_NS_COEFFS_OPTAX] = "ns_coeffs_optax", [MUONREF_KEY_CONSISTENT_RMS] = "consistent_rms",
  [MUONREF_KEY_NS_COEFF_TYPE] = "ns_coeff_type", [MUONREF_KEY_NS_COEFFS] = "ns_coeffs",
  [MUONREF_KEY_MUON_VERSION] = "muon_version", [MUONREF_KEY_PATTERNS] = "patterns", [MUONREF_KEY_RMS_RATE] = "rms_rate",
  [MUONREF_KEY_CONV_MODE_TIMM] = "conv_mode_timm", [MUONREF_KEY_SCALE_EPS] = "scale_eps",
  [MUONREF_KEY_USE_FALLBACK] = "use_fallback", [MUONREF_KEY_PRECONDITIONING] = "preconditioning",
  [MUONREF_KEY_DECAY_METHOD] = "decay_method", [MUONREF_KEY_ALGO_TIMM] = "algo_timm", [MUONREF_KEY_BOOL_NOT] = "bool_not",
  [MUONREF_KEY_COEFFICIENT_TYPE] = "coefficient_type", [MUONREF_KEY_USE_ADJUSTED_LR] = "use_adjusted_lr",
  [MUONREF_KEY_BETAS_BY_BRANCH] = "betas_by_branch", [MUONREF_KEY_EPS_BY_BRANCH] = "eps_by_branch",
  [MUONREF_KEY_MOMENT2_METHOD] = "moment2_method", [MUONREF_KEY_WEIGHT_DECOUPLE] = "weight_decouple",
  [MUONREF_KEY_MOMENT2_METHOD_V0_2] = "moment2_method_v0_2", [MUONREF_KEY_USE_POLAR_EXPRESS] = "use_polar_express",
  [MUONREF_KEY_SPLIT_SIZES] = "split_sizes", [MUONREF_KEY_SPLIT_QKV] = "split_qkv",
  [MUONREF_KEY_SPLIT_CONCAT] = "split_concat", [MUONREF_KEY_PADDLE_GRAD_CLIP] = "paddle_grad_clip",
};

/* The field a key of each kind sets: NULL for the plain kinds, whose field
 * is any field of their type (real, bool, int, long); the others write
 * their own fields (vectors/format/case.c), named here. */
static const char *const KIND_FIELD[MUONREF_KEY_KIND_COUNT] = {
  [MUONREF_KEY_BETAS] = "adam_beta1", [MUONREF_KEY_SCALE_MODE] = "scale_mode", [MUONREF_KEY_USE_MUON] = "use_muon",
  [MUONREF_KEY_COEFF3] = "coeffs", [MUONREF_KEY_ADJUST_LR] = "scale_mode", [MUONREF_KEY_COEFF_LIST] = "coeffs",
  [MUONREF_KEY_ADJUST_LR_TIMM] = "scale_mode", [MUONREF_KEY_EPS_SHARED] = "ns_eps",
  [MUONREF_KEY_SCALE_MODE_EMERGING] = "scale_mode", [MUONREF_KEY_ALGORITHM] = "use_muon",
  [MUONREF_KEY_ADJUST_LR_DION] = "scale_mode", [MUONREF_KEY_FLATTEN] = "conv_mode",
  [MUONREF_KEY_NS_COEFFS_OPTAX] = "coeffs", [MUONREF_KEY_CONSISTENT_RMS] = "scale_extra",
  [MUONREF_KEY_NS_COEFF_TYPE] = "coeffs", [MUONREF_KEY_NS_COEFFS] = "coeffs", [MUONREF_KEY_MUON_VERSION] = "scale_mode",
  [MUONREF_KEY_PATTERNS] = "exclude_patterns", [MUONREF_KEY_RMS_RATE] = "scale_extra",
  [MUONREF_KEY_CONV_MODE_TIMM] = "conv_mode", [MUONREF_KEY_SCALE_EPS] = "eps_mode",
  [MUONREF_KEY_USE_FALLBACK] = "use_muon", [MUONREF_KEY_PRECONDITIONING] = "ns_precondition",
  [MUONREF_KEY_DECAY_METHOD] = "decay_method", [MUONREF_KEY_ALGO_TIMM] = "moment2",
  [MUONREF_KEY_COEFFICIENT_TYPE] = "coeffs", [MUONREF_KEY_USE_ADJUSTED_LR] = "scale_mode",
  [MUONREF_KEY_BETAS_BY_BRANCH] = "momentum", [MUONREF_KEY_EPS_BY_BRANCH] = "moment2_eps",
  [MUONREF_KEY_MOMENT2_METHOD] = "moment2", [MUONREF_KEY_WEIGHT_DECOUPLE] = "decay_method",
  [MUONREF_KEY_MOMENT2_METHOD_V0_2] = "moment2", [MUONREF_KEY_USE_POLAR_EXPRESS] = "coeffs",
  [MUONREF_KEY_SPLIT_SIZES] = "ns_split", [MUONREF_KEY_SPLIT_QKV] = "ns_split_mode",
  [MUONREF_KEY_SPLIT_CONCAT] = "ns_split", [MUONREF_KEY_PADDLE_GRAD_CLIP] = "clip_grad_norm",
};

static const char *const BRANCH_NAMES[] = {"any", "muon", "adam"};
static const char *const SCOPE_NAMES[] = {"group", "init", "group_only", "route"};
static const char *const NS_FORMATS[] = {"bf16", "fp32", NULL};
static const char *const MODES[] = {"raw", "neutral", NULL};
static const char *const CONSTRUCTORS[] = {"groups_and_keywords", "groups", "keywords", "adapter", NULL};

const char *muonref_record_kind_name(muonref_key_kind k)
{
  return (int)k >= 0 && k < MUONREF_KEY_KIND_COUNT ? KIND_NAMES[k] : NULL;
}
const char *muonref_record_branch_name(muonref_key_branch b) { return (unsigned)b < 3 ? BRANCH_NAMES[b] : NULL; }
const char *muonref_record_scope_name(muonref_key_scope s) { return (unsigned)s < 4 ? SCOPE_NAMES[s] : NULL; }

/* The fields a key may name beyond the table's: keras' muon_a, muon_b, muon_c. */
static const struct { const char *name; size_t offset; } COEFF0[] = {
  {"coeffs[0].a", offsetof(muonref_options, coeffs[0].a)},
  {"coeffs[0].b", offsetof(muonref_options, coeffs[0].b)},
  {"coeffs[0].c", offsetof(muonref_options, coeffs[0].c)},
};

const char *muonref_record_key_field(const muonref_option_key *k)
{
  size_t offset = k->offset;
  for (size_t i = 0; k->kind == MUONREF_KEY_REAL && i < 3; i++) /* coeffs[0].a is at coeffs' offset */
    if (COEFF0[i].offset == offset)
      return COEFF0[i].name;
  for (size_t i = 0; i < muonref_option_field_count; i++)
    if (muonref_record_field_offset(&muonref_option_fields[i]) == offset)
      return muonref_option_fields[i].name;
  for (size_t i = 0; i < 3; i++)
    if (COEFF0[i].offset == offset)
      return COEFF0[i].name;
  return NULL;
}

/* ---- errors: "PATH: member \"M\": RULE" ---- */

static int fail_member(muonref_error *err, const char *path, const char *member, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
static int fail_member(muonref_error *err, const char *path, const char *member, const char *fmt, ...)
{
  char rule[MUONREF_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rule, sizeof rule, fmt, ap);
  va_end(ap);
  return muonref_fail(err, MUONREF_EFORMAT, "%.300s: member \"%.100s\": %.600s", path, member, rule);
}

/* Copies a string member into dst (size n): absent is "", another type or a
 * longer string is an error. */
static int get_string(const json_t *obj, const char *key, char *dst, size_t n, const char *path, const char *member,
                      int required, muonref_error *err)
{
  const json_t *v = json_object_get(obj, key);
  dst[0] = 0;
  if (!v)
    return required ? fail_member(err, path, member, "is required") : MUONREF_OK;
  const char *s = json_string_value(v);
  if (!s)
    return fail_member(err, path, member, "must be a string");
  if (strlen(s) >= n)
    return fail_member(err, path, member, "must be a string of at most %zu bytes", n - 1);
  if (required && !*s)
    return fail_member(err, path, member, "must not be empty");
  memcpy(dst, s, strlen(s) + 1);
  return MUONREF_OK;
}

/* Fails on a member of obj that is not in the NULL-terminated list. */
static int only_members(const json_t *obj, const char *const *allowed, const char *path, const char *prefix,
                        muonref_error *err)
{
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)obj, key, v) {
    size_t i = 0;
    while (allowed[i] && strcmp(allowed[i], key))
      i++;
    if (!allowed[i]) {
      char m[160];
      snprintf(m, sizeof m, "%s%s", prefix, key);
      return fail_member(err, path, m, "is not a member of a profile record (spec/profiles/profile.schema.json)");
    }
  }
  return MUONREF_OK;
}

/* A profile's name: [a-z][a-z0-9_]*, optionally @RELEASE ([0-9][0-9a-z._]*:
 * "emerging@0.3", the sibling of "emerging" for an upstream release,
 * spec/profiles/README.md "Releases"). */
static int name_ok(const char *s, size_t max)
{
  size_t n = strlen(s);
  if (n == 0 || n >= max || s[0] < 'a' || s[0] > 'z')
    return 0;
  const char *at = strchr(s, '@');
  for (size_t i = 0; i < n; i++) {
    int plain = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_';
    if (at && s + i > at && !(plain || s[i] == '.'))
      return 0;
    if ((!at || s + i < at) && !plain)
      return 0;
  }
  return !at || (at[1] >= '0' && at[1] <= '9');
}

/* ---- fields ---- */

static void field_copy(muonref_options *dst, const muonref_options *src, const muonref_option_field *f)
{
  switch (muonref_record_spelling(f)) {
  case MUONREF_SPELL_REAL: *(double *)((char *)dst + muonref_record_field_offset(f)) = *(const double *)((const char *)src + muonref_record_field_offset(f)); break;
  case MUONREF_SPELL_LONG: *(long *)((char *)dst + muonref_record_field_offset(f)) = *(const long *)((const char *)src + muonref_record_field_offset(f)); break;
  case MUONREF_SPELL_COEFFS:
    dst->n_coeffs = src->n_coeffs;
    memcpy(dst->coeffs, src->coeffs, sizeof dst->coeffs);
    break;
  case MUONREF_SPELL_PATTERNS:
    dst->n_exclude_patterns = src->n_exclude_patterns;
    memcpy(dst->exclude_patterns, src->exclude_patterns, sizeof dst->exclude_patterns);
    break;
  case MUONREF_SPELL_SIZES:
    dst->n_ns_split = src->n_ns_split;
    memcpy(dst->ns_split, src->ns_split, sizeof dst->ns_split);
    break;
  default: /* int and the enums (int-sized) */
    *(int *)((char *)dst + muonref_record_field_offset(f)) = *(const int *)((const char *)src + muonref_record_field_offset(f));
  }
}

static int field_equal(const muonref_options *a, const muonref_options *b, const muonref_option_field *f)
{
  muonref_options x, y;
  memset(&x, 0, sizeof x), memset(&y, 0, sizeof y);
  field_copy(&x, a, f), field_copy(&y, b, f);
  return memcmp(&x, &y, sizeof x) == 0;
}

static int triple_of(const json_t *t, muonref_coeff *c)
{
  if (!json_is_array(t) || json_array_size(t) != 3)
    return 0;
  for (size_t i = 0; i < 3; i++)
    if (!json_is_number(json_array_get(t, i)))
      return 0;
  *c = (muonref_coeff){json_number_value(json_array_get(t, 0)), json_number_value(json_array_get(t, 1)),
                       json_number_value(json_array_get(t, 2))};
  return 1;
}

/* n_coeffs and coeffs: a preset's list (coeff_order is a field of its own) or triples. */
static int set_coeffs(muonref_options *o, const json_t *v, const char *path, const char *member, muonref_error *err)
{
  const char *s = json_string_value(v);
  if (s) {
    const muonref_preset *pr = muonref_preset_find(s);
    if (!pr)
      return fail_member(err, path, member, "'%s' is no coefficient preset (muonref ns --preset, spec/coefficients.md)", s);
    o->n_coeffs = pr->n_coeffs;
    memset(o->coeffs, 0, sizeof o->coeffs);
    for (int k = 0; k < pr->n_coeffs; k++)
      o->coeffs[k] = muonref_preset_coeff(pr, k);
    return MUONREF_OK;
  }
  size_t n = json_array_size(v);
  if (!json_is_array(v) || n < 1 || n > MUONREF_MAX_COEFFS)
    return fail_member(err, path, member, "must be a preset name or a list of 1 to %d triples [a, b, c]",
                       MUONREF_MAX_COEFFS);
  muonref_coeff c[MUONREF_MAX_COEFFS];
  for (size_t k = 0; k < n; k++)
    if (!triple_of(json_array_get(v, k), &c[k]))
      return fail_member(err, path, member, "entry %zu must be a triple of numbers [a, b, c]", k);
  o->n_coeffs = (int)n;
  memset(o->coeffs, 0, sizeof o->coeffs);
  memcpy(o->coeffs, c, n * sizeof c[0]);
  return MUONREF_OK;
}

/* n_exclude_patterns and exclude_patterns: a list of strings. */
static int set_patterns(muonref_options *o, const json_t *v, const char *path, const char *member, muonref_error *err)
{
  size_t n = json_array_size(v);
  if (!json_is_array(v) || n > MUONREF_MAX_PATTERNS)
    return fail_member(err, path, member, "must be a list of at most %d strings", MUONREF_MAX_PATTERNS);
  memset(o->exclude_patterns, 0, sizeof o->exclude_patterns);
  for (size_t k = 0; k < n; k++) {
    const char *t = json_string_value(json_array_get(v, k));
    if (!t || strlen(t) >= MUONREF_PATTERN_LEN)
      return fail_member(err, path, member, "entry %zu must be a string of at most %d bytes", k, MUONREF_PATTERN_LEN - 1);
    memcpy(o->exclude_patterns[k], t, strlen(t) + 1);
  }
  o->n_exclude_patterns = (int)n;
  return MUONREF_OK;
}

/* A list of row block sizes (MUONREF_SPELL_SIZES): at most MUONREF_MAX_SPLIT integers, each at least 1. */
static int set_sizes(muonref_options *o, const json_t *v, const char *path, const char *member, muonref_error *err)
{
  size_t n = json_array_size(v);
  if (!json_is_array(v) || n > MUONREF_MAX_SPLIT)
    return fail_member(err, path, member, "must be a list of at most %d integers", MUONREF_MAX_SPLIT);
  memset(o->ns_split, 0, sizeof o->ns_split);
  for (size_t k = 0; k < n; k++) {
    const json_t *e = json_array_get(v, k);
    if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > INT_MAX)
      return fail_member(err, path, member, "entry %zu must be an integer of at least 1", k);
    o->ns_split[k] = (int)json_integer_value(e);
  }
  o->n_ns_split = (int)n;
  return MUONREF_OK;
}

/* One field's value v into *o; member names it in errors. */
static int field_set(muonref_options *o, const muonref_option_field *f, const json_t *v, const char *path, const char *member,
                     muonref_error *err)
{
  void *p = (char *)o + muonref_record_field_offset(f);
  const char *s = json_string_value(v);
  switch (muonref_record_spelling(f)) {
  case MUONREF_SPELL_REAL:
    if (!json_is_number(v))
      return fail_member(err, path, member, "must be a number");
    *(double *)p = json_number_value(v);
    return MUONREF_OK;
  case MUONREF_SPELL_INT:
  case MUONREF_SPELL_LONG: {
    if (!json_is_integer(v))
      return fail_member(err, path, member, "must be an integer");
    json_int_t n = json_integer_value(v);
    if (muonref_record_spelling(f) == MUONREF_SPELL_INT && (n < -2147483647 - 1 || n > 2147483647))
      return fail_member(err, path, member, "must be an integer that fits a C int");
    if (muonref_record_spelling(f) == MUONREF_SPELL_INT)
      *(int *)p = (int)n;
    else
      *(long *)p = (long)n;
    return MUONREF_OK;
  }
  case MUONREF_SPELL_BOOL:
    if (!json_is_boolean(v))
      return fail_member(err, path, member, "must be true or false");
    *(int *)p = json_is_true(v);
    return MUONREF_OK;
  case MUONREF_SPELL_USE_MUON:
    if (json_is_null(v))
      o->use_muon = MUONREF_USE_MUON_AUTO;
    else if (json_is_boolean(v))
      o->use_muon = json_is_true(v) ? MUONREF_USE_MUON_TRUE : MUONREF_USE_MUON_FALSE;
    else
      return fail_member(err, path, member, "must be null (routed by route_rule), true or false");
    return MUONREF_OK;
  case MUONREF_SPELL_ENUM: {
    int k = muonref_option_field_enum_value(f, s);
    if (k >= 0) {
      *(int *)p = k;
      return MUONREF_OK;
    }
    char list[512];
    const char *names[64];
    size_t n = 0;
    while (n < 64 && f->enum_name((int)n))
      names[n] = f->enum_name((int)n), n++;
    return fail_member(err, path, member, "must be one of %s", muonref_py_str_tuple(list, sizeof list, names, n));
  }
  case MUONREF_SPELL_COEFFS:
    return set_coeffs(o, v, path, member, err);
  case MUONREF_SPELL_PATTERNS:
    return set_patterns(o, v, path, member, err);
  case MUONREF_SPELL_SIZES:
    return set_sizes(o, v, path, member, err);
  }
  return fail_member(err, path, member, "has a type muonref cannot read");
}

/* The members of the object `obj` (the record's member `name`) into *o;
 * set[i] = 1 for each field given.  complete: every field must be given. */
static int read_fields(const json_t *obj, const char *name, muonref_options *o, unsigned char *set, int complete,
                       const char *path, muonref_error *err)
{
  const char *key;
  json_t *v;
  char member[160];
  if (!json_is_object(obj))
    return fail_member(err, path, name, "must be an object of muonref_options fields by their spec names");
  json_object_foreach((json_t *)obj, key, v) {
    const muonref_option_field *f = muonref_option_field_named(key);
    snprintf(member, sizeof member, "%s.%s", name, key);
    if (!f)
      return fail_member(err, path, member, "is not a field of muonref_options (spec/muon.md, "
                         "spec/profiles/profile.schema.json)");
    int st = field_set(o, f, v, path, member, err);
    if (st)
      return st;
    if (set)
      set[f - muonref_option_fields] = 1;
  }
  for (size_t i = 0; complete && i < muonref_option_field_count; i++)
    if (!json_object_get(obj, muonref_option_fields[i].name)) {
      snprintf(member, sizeof member, "%s.%s", name, muonref_option_fields[i].name);
      return fail_member(err, path, member, "is required: a record without a base gives every field");
    }
  return MUONREF_OK;
}

/* ---- the key table ---- */

static int read_key(const json_t *e, size_t i, muonref_record *r, const char *path, muonref_error *err)
{
  static const char *const MEMBERS[] = {"name",  "kind",     "field",    "branch",         "schedulable",
                                        "scope", "optional", "required", "branch_default", NULL};
  char m[64], name[64], kind[32], field[32], branch[16], scope[16];
  int st;
  snprintf(m, sizeof m, "keys[%zu]", i);
  if (!json_is_object(e))
    return fail_member(err, path, m, "must be an object {name, kind, field[, branch, schedulable, scope, optional, required, "
                       "branch_default]}");
  char prefix[80];
  snprintf(prefix, sizeof prefix, "%s.", m);
  if ((st = only_members(e, MEMBERS, path, prefix, err)))
    return st;
  char mn[80], mk[80], mf[80], mb[80], ms[80];
  snprintf(mn, sizeof mn, "%s.name", m), snprintf(mk, sizeof mk, "%s.kind", m), snprintf(mf, sizeof mf, "%s.field", m);
  snprintf(mb, sizeof mb, "%s.branch", m), snprintf(ms, sizeof ms, "%s.scope", m);
  if ((st = get_string(e, "name", name, sizeof name, path, mn, 1, err)) ||
      (st = get_string(e, "kind", kind, sizeof kind, path, mk, 1, err)) ||
      (st = get_string(e, "field", field, sizeof field, path, mf, 1, err)) ||
      (st = get_string(e, "branch", branch, sizeof branch, path, mb, 0, err)) ||
      (st = get_string(e, "scope", scope, sizeof scope, path, ms, 0, err)))
    return st;
  muonref_option_key *k = &r->keys[i];
  memset(k, 0, sizeof *k);
  int kk = 0;
  while (kk < MUONREF_KEY_KIND_COUNT && strcmp(KIND_NAMES[kk], kind))
    kk++;
  if (kk == MUONREF_KEY_KIND_COUNT) /* the list is longer than a message holds (MUONREF_ERROR_MESSAGE_MAX) */
    return fail_member(err, path, mk, "'%s' is no key kind: expected one of the %d kinds that "
                       "spec/profiles/profile.schema.json lists (definitions.key, kind)", kind,
                       (int)MUONREF_KEY_KIND_COUNT);
  k->kind = (muonref_key_kind)kk;
  const muonref_option_field *f = muonref_option_field_named(field);
  size_t c0 = 0;
  while (c0 < 3 && strcmp(COEFF0[c0].name, field))
    c0++;
  if (!f && c0 == 3)
    return fail_member(err, path, mf, "'%s' is not a field of muonref_options", field);
  k->offset = f ? muonref_record_field_offset(f) : COEFF0[c0].offset;
  /* the kind must be able to set the field */
  const char *need = KIND_FIELD[kk];
  int ok = need ? !strcmp(need, field)
           : kk == MUONREF_KEY_REAL ? (f ? muonref_record_spelling(f) == MUONREF_SPELL_REAL : 1)
           : kk == MUONREF_KEY_BOOL || kk == MUONREF_KEY_BOOL_NOT ? f && muonref_record_spelling(f) == MUONREF_SPELL_BOOL
           : kk == MUONREF_KEY_INT  ? f && muonref_record_spelling(f) == MUONREF_SPELL_INT
                                    : f && muonref_record_spelling(f) == MUONREF_SPELL_LONG;
  if (!ok)
    return need ? fail_member(err, path, mf, "a key of kind %s sets the field %s, not %s", kind, need, field)
                : fail_member(err, path, mf, "a key of kind %s needs a field of that type; %s is not", kind, field);
  k->branch = MUONREF_KEY_ANY;
  if (*branch) {
    int b = 0;
    while (b < 3 && strcmp(BRANCH_NAMES[b], branch))
      b++;
    if (b == 3)
      return fail_member(err, path, mb, "must be one of ('any', 'muon', 'adam')");
    k->branch = (muonref_key_branch)b;
  }
  r->scopes[i] = MUONREF_SCOPE_GROUP;
  if (*scope) {
    int s = 0;
    while (s < 4 && strcmp(SCOPE_NAMES[s], scope))
      s++;
    if (s == 4)
      return fail_member(err, path, ms, "must be one of ('group', 'init', 'group_only', 'route')");
    r->scopes[i] = (muonref_key_scope)s;
  }
  /* one value for every group where the port takes it once; a port built by its own adapter (paddle's
   * per-parameter callables: apply_decay_param_fun turns weight_decay off per name) may differ per group */
  k->init = r->scopes[i] == MUONREF_SCOPE_INIT && strcmp(r->port.constructor, "adapter");
  const json_t *sch = json_object_get(e, "schedulable");
  if (sch && !json_is_boolean(sch)) {
    snprintf(mb, sizeof mb, "%s.schedulable", m);
    return fail_member(err, path, mb, "must be true or false");
  }
  k->schedulable = sch && json_is_true(sch);
  const json_t *opt = json_object_get(e, "optional");
  if (opt && !json_is_boolean(opt)) {
    snprintf(mb, sizeof mb, "%s.optional", m);
    return fail_member(err, path, mb, "must be true or false");
  }
  k->optional = opt && json_is_true(opt);
  const json_t *req = json_object_get(e, "required");
  if (req && !json_is_boolean(req)) {
    snprintf(mb, sizeof mb, "%s.required", m);
    return fail_member(err, path, mb, "must be true or false");
  }
  k->required = req && json_is_true(req);
  const json_t *bd = json_object_get(e, "branch_default");
  snprintf(mb, sizeof mb, "%s.branch_default", m);
  if (bd && !json_is_boolean(bd))
    return fail_member(err, path, mb, "must be true or false");
  k->branch_default = bd && json_is_true(bd);
  if (k->branch_default && (r->scopes[i] != MUONREF_SCOPE_INIT || k->branch == MUONREF_KEY_ANY || k->schedulable))
    return fail_member(err, path, mb, "belongs to a key of scope init and branch muon or adam, not schedulable: the "
                       "constructor's default for the groups of one branch");
  snprintf(r->key_names[i], sizeof r->key_names[i], "%s", name);
  return MUONREF_OK;
}

/* The key table's own rules: names unique; Paddle's ns_coeff_type reads its
 * sibling "ns_coeffs" (vectors/format/case.c). */
static int check_keys(const muonref_record *r, const char *path, muonref_error *err)
{
  int type = 0, list = 0;
  for (size_t i = 0; i < r->n_keys; i++) {
    for (size_t j = 0; j < i; j++)
      if (!strcmp(r->key_names[i], r->key_names[j]))
        return fail_member(err, path, "keys", "the key '%s' is named twice", r->key_names[i]);
    type |= r->keys[i].kind == MUONREF_KEY_NS_COEFF_TYPE;
    list |= r->keys[i].kind == MUONREF_KEY_NS_COEFFS && !strcmp(r->key_names[i], "ns_coeffs");
    if (r->keys[i].branch_default && muonref_case_shadowing_key(r->keys, r->n_keys, &r->keys[i]) == r->n_keys)
      return fail_member(err, path, "keys", "the key '%s' is a branch default (branch_default) of no group key: a key "
                         "of the same field and kind, of scope group, that its branch's groups take", r->key_names[i]);
  }
  if (type && !list)
    return fail_member(err, path, "keys", "a key of kind ns_coeff_type needs a key \"ns_coeffs\" of kind ns_coeffs "
                       "(its custom list)");
  return MUONREF_OK;
}

static int read_keys(const json_t *v, muonref_record *r, const char *path, muonref_error *err)
{
  size_t n = json_array_size(v);
  if (!json_is_array(v) || n < 1 || n > MUONREF_RECORD_MAX_KEYS)
    return fail_member(err, path, "keys", "must be a list of 1 to %d keys", MUONREF_RECORD_MAX_KEYS);
  for (size_t i = 0; i < n; i++) {
    int st = read_key(json_array_get(v, i), i, r, path, err);
    if (st)
      return st;
  }
  r->n_keys = n;
  return MUONREF_OK;
}

/* rename_keys {"old": "new"}: a user's port that calls an option otherwise. */
/* The index of r's key `name`, or r->n_keys where r has none. */
static size_t key_index(const muonref_record *r, const char *name)
{
  size_t i = 0;
  while (i < r->n_keys && strcmp(r->key_names[i], name))
    i++;
  return i;
}

static int rename_keys(const json_t *v, muonref_record *r, const char *path, muonref_error *err)
{
  const char *old;
  json_t *nv;
  if (!json_is_object(v))
    return fail_member(err, path, "rename_keys", "must be an object {\"old name\": \"new name\"}");
  json_object_foreach((json_t *)v, old, nv) {
    char m[160];
    snprintf(m, sizeof m, "rename_keys.%s", old);
    size_t i = key_index(r, old);
    if (i == r->n_keys)
      return fail_member(err, path, m, "'%s' is not a key of the table", old);
    const char *s = json_string_value(nv);
    if (!s || !*s || strlen(s) >= sizeof r->key_names[0])
      return fail_member(err, path, m, "must be a non-empty string of at most %zu bytes", sizeof r->key_names[0] - 1);
    snprintf(r->key_names[i], sizeof r->key_names[i], "%s", s);
  }
  return MUONREF_OK;
}

/* ---- areas, source, test port ---- */

static int read_areas(const json_t *v, muonref_record *r, const char *path, muonref_error *err)
{
  size_t n = json_array_size(v);
  if (!json_is_array(v) || n < 1 || n > MUONREF_RECORD_MAX_AREAS)
    return fail_member(err, path, "areas", "must be a list of 1 to %d area names", MUONREF_RECORD_MAX_AREAS);
  for (size_t i = 0; i < n; i++) {
    const char *s = json_string_value(json_array_get(v, i));
    char m[32];
    snprintf(m, sizeof m, "areas[%zu]", i);
    if (!s || !muonref_gen_area_known(s))
      return fail_member(err, path, m, "must be the name of a vector area (%s)", muonref_gen_area_list());
    for (size_t j = 0; j < i; j++)
      if (!strcmp(r->area_names[j], s))
        return fail_member(err, path, m, "the area '%s' is named twice", s);
    snprintf(r->area_names[i], sizeof r->area_names[i], "%s", s);
  }
  r->n_areas = n;
  return MUONREF_OK;
}

static int read_source(const json_t *v, muonref_record *r, const char *path, muonref_error *err)
{
  static const char *const MEMBERS[] = {"repository", "paths", "commit", "release", "describes", "notes", NULL};
  int st;
  if (!json_is_object(v))
    return fail_member(err, path, "source", "must be an object {repository, paths, commit or release[, describes, "
                       "notes]}");
  if ((st = only_members(v, MEMBERS, path, "source.", err)) ||
      (st = get_string(v, "repository", r->repository, sizeof r->repository, path, "source.repository", 1, err)) ||
      (st = get_string(v, "commit", r->commit, sizeof r->commit, path, "source.commit", 0, err)) ||
      (st = get_string(v, "release", r->release, sizeof r->release, path, "source.release", 0, err)) ||
      (st = get_string(v, "describes", r->describes, sizeof r->describes, path, "source.describes", 0, err)) ||
      (st = get_string(v, "notes", r->source_notes, sizeof r->source_notes, path, "source.notes", 0, err)))
    return st;
  if (!*r->commit && !*r->release)
    return fail_member(err, path, "source", "needs \"commit\" or \"release\": the version of the port described");
  const json_t *ps = json_object_get(v, "paths");
  size_t n = json_array_size(ps), used = 0;
  if (!json_is_array(ps) || n < 1)
    return fail_member(err, path, "source.paths", "must be a list of at least one path in the repository");
  r->paths[0] = 0;
  for (size_t i = 0; i < n; i++) {
    const char *s = json_string_value(json_array_get(ps, i));
    if (!s || !*s)
      return fail_member(err, path, "source.paths", "entry %zu must be a non-empty string", i);
    used += (size_t)snprintf(r->paths + used, used < sizeof r->paths ? sizeof r->paths - used : 0, "%s%s", i ? ", " : "", s);
    if (used >= sizeof r->paths)
      return fail_member(err, path, "source.paths", "must be at most %zu bytes together", sizeof r->paths - 1);
  }
  int w = snprintf(r->source, sizeof r->source, "%s %s%s%s%s%s%s%s", r->repository, r->paths, *r->commit ? " @" : "",
                   r->commit, *r->release ? " " : "", r->release, *r->describes ? " (" : "", r->describes);
  if (*r->describes && w > 0 && (size_t)w + 1 < sizeof r->source)
    strcat(r->source, ")");
  return MUONREF_OK;
}

static int pick(const char *s, const char *const *names)
{
  for (int i = 0; names[i]; i++)
    if (!strcmp(s, names[i]))
      return 1;
  return 0;
}

static int read_port(const json_t *v, muonref_record *r, const char *path, muonref_error *err)
{
  static const char *const MEMBERS[] = {"file", "class", "adapter", "ns_format", "mode", "constructor", "refuses", NULL};
  muonref_test_port *t = &r->port;
  int st;
  if (!json_is_object(v))
    return fail_member(err, path, "test_port", "must be an object {file, class, adapter, ns_format, mode, constructor}");
  if ((st = only_members(v, MEMBERS, path, "test_port.", err)) ||
      (st = get_string(v, "file", t->file, sizeof t->file, path, "test_port.file", 1, err)) ||
      (st = get_string(v, "class", t->cls, sizeof t->cls, path, "test_port.class", 1, err)) ||
      (st = get_string(v, "adapter", t->adapter, sizeof t->adapter, path, "test_port.adapter", 1, err)) ||
      (st = get_string(v, "ns_format", t->ns_format, sizeof t->ns_format, path, "test_port.ns_format", 1, err)) ||
      (st = get_string(v, "mode", t->mode, sizeof t->mode, path, "test_port.mode", 1, err)) ||
      (st = get_string(v, "constructor", t->constructor, sizeof t->constructor, path, "test_port.constructor", 1, err)))
    return st;
  if (!pick(t->ns_format, NS_FORMATS))
    return fail_member(err, path, "test_port.ns_format", "must be one of ('bf16', 'fp32')");
  if (!pick(t->mode, MODES))
    return fail_member(err, path, "test_port.mode", "must be one of ('raw', 'neutral')");
  if (!pick(t->constructor, CONSTRUCTORS))
    return fail_member(err, path, "test_port.constructor",
                       "must be one of ('groups_and_keywords', 'groups', 'keywords', 'adapter')");
  const json_t *refuses = json_object_get(v, "refuses");
  t->n_refuses = 0;
  if (refuses && (!json_is_array(refuses) || json_array_size(refuses) > MUONREF_RECORD_MAX_REFUSES))
    return fail_member(err, path, "test_port.refuses", "must be an array of at most %d strings",
                       MUONREF_RECORD_MAX_REFUSES);
  for (size_t i = 0; i < json_array_size(refuses); i++) {
    json_t *holder = json_pack("{s:O}", "r", json_array_get(refuses, i));
    if (!holder)
      return muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory", path);
    st = get_string(holder, "r", t->refuses[i], sizeof t->refuses[i], path, "test_port.refuses[]", 1, err);
    json_decref(holder);
    if (st)
      return st;
    t->n_refuses++;
  }
  t->present = 1;
  return MUONREF_OK;
}

/* "not_expressed": [{"option": NAME, "why": TEXT[, "unobservable": true]},
 * ...], the upstream options the key table lacks; none may be a key of r. */
static int read_unexpressed(const json_t *v, muonref_record *r, const char *path, muonref_error *err)
{
  static const char *const MEMBERS[] = {"option", "why", "unobservable", NULL};
  if (!json_is_array(v) || json_array_size(v) > MUONREF_RECORD_MAX_UNEXPRESSED)
    return fail_member(err, path, "not_expressed", "must be an array of at most %d objects {\"option\", \"why\"}",
                       MUONREF_RECORD_MAX_UNEXPRESSED);
  r->n_unexpressed = 0;
  for (size_t i = 0; i < json_array_size(v); i++) {
    const json_t *e = json_array_get(v, i);
    char m[64], mo[80], mw[80], mp[80];
    snprintf(m, sizeof m, "not_expressed[%zu]", i);
    snprintf(mp, sizeof mp, "%s.", m);
    snprintf(mo, sizeof mo, "%s.option", m), snprintf(mw, sizeof mw, "%s.why", m);
    int st;
    if (!json_is_object(e))
      return fail_member(err, path, m, "must be an object {\"option\", \"why\"}");
    if ((st = only_members(e, MEMBERS, path, mp, err)) ||
        (st = get_string(e, "option", r->unexpressed[i], sizeof r->unexpressed[i], path, mo, 1, err)) ||
        (st = get_string(e, "why", r->unexpressed_why[i], sizeof r->unexpressed_why[i], path, mw, 1, err)))
      return st;
    const json_t *u = json_object_get(e, "unobservable");
    if (u && !json_is_true(u))
      return fail_member(err, path, m, "member \"unobservable\" must be true where given (no vector can observe the "
                         "option); leave it out otherwise");
    r->unexpressed_unobservable[i] = u != NULL;
    const char *o = r->unexpressed[i];
    int ident = isalpha((unsigned char)o[0]) || o[0] == '_';
    for (const char *q = o; ident && *q; q++)
      ident = isalnum((unsigned char)*q) || *q == '_';
    if (!ident)
      return fail_member(err, path, mo, "must be an option's name as the port spells it, [A-Za-z_][A-Za-z0-9_]*");
    if (key_index(r, o) < r->n_keys)
      return fail_member(err, path, m, "names '%s', a key of the record: it is expressed", o);
    for (size_t k = 0; k < i; k++)
      if (!strcmp(r->unexpressed[k], r->unexpressed[i]))
        return fail_member(err, path, m, "names '%s' a second time", r->unexpressed[i]);
    r->n_unexpressed++;
  }
  return MUONREF_OK;
}

/* ---- the record ---- */

/* Points the row and the key and area tables into r itself. */
static void link_row(muonref_record *r)
{
  for (size_t i = 0; i < r->n_keys; i++)
    r->keys[i].name = r->key_names[i];
  for (size_t i = 0; i < r->n_areas; i++)
    r->areas[i] = r->area_names[i];
  r->areas[r->n_areas] = NULL;
  for (size_t i = 0; i < r->n_coeff_types; i++)
    r->coeff_types[i] = r->coeff_type_names[i];
  r->coeff_types[r->n_coeff_types] = NULL;
  r->profile = (muonref_profile){r->name, r->source, &r->defaults, r->keys, r->n_keys, r->one_group,
                                 r->has_adam ? &r->adam_defaults : NULL, r->areas,
                                 *r->bf16_refusal_status ? r->bf16_refusal_status : NULL,
                                 *r->bf16_refusal_message ? r->bf16_refusal_message : NULL,
                                 *r->bf16_unmodeled ? r->bf16_unmodeled : NULL,
                                 r->n_coeff_types ? r->coeff_types : NULL,
                                 *r->coeff_type_refusal ? r->coeff_type_refusal : NULL};
}

/* With moment2 none there is no second moment (spec/muon.md 7.4), so its
 * beta, eps, eps mode, bias correction and rescale have no effect: a record
 * that sets one (AdaMuon's rescale on a port without the second moment) says
 * something the vectors would silently not test. */
static int check_moment2_inert(const muonref_options *d, const muonref_record *base, const char *path,
                               muonref_error *err)
{
  static const struct { const char *name, *inert; } F[] = {
    {"moment2_rescale", "\"none\""}, {"moment2_beta", "0"}, {"moment2_eps", "0"},
    {"moment2_eps_mode", "\"add\""}, {"moment2_bias_correction", "false"},
  };
  const int set[] = {d->moment2_rescale != MUONREF_MOMENT2_RESCALE_NONE, d->moment2_beta != 0.0,
                     d->moment2_eps != 0.0, d->moment2_eps_mode != MUONREF_EPS_ADD, d->moment2_bias_correction != 0};
  for (size_t i = 0; d->moment2 == MUONREF_MOMENT2_NONE && i < sizeof F / sizeof F[0]; i++)
    if (set[i]) {
      const muonref_option_field *f = muonref_option_field_named(F[i].name);
      int inherited = base && f && field_equal(d, &base->defaults, f);
      return fail_member(err, path, "defaults",
                         "%s is set%s%s%s while moment2 is \"none\": without a second moment it has no effect (set "
                         "moment2, or %s to %s; spec/muon.md 7.4)", F[i].name, inherited ? " (inherited from the base '" : "",
                         inherited ? base->name : "", inherited ? "')" : "", F[i].name, F[i].inert);
    }
  return MUONREF_OK;
}

/* The JSON object in path (duplicate members refused) into *out. */
static int load_json(const char *path, json_t **out, muonref_error *err)
{
  json_error_t je;
  json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
  *out = NULL;
  if (!j) {
    if (json_error_code(&je) == json_error_cannot_open_file)
      return muonref_fail(err, MUONREF_EIO, "%.300s: cannot read the profile record: %.200s", path, je.text);
    return muonref_fail(err, MUONREF_EFORMAT, "%.300s:%d:%d: %.300s", path, je.line, je.column, je.text);
  }
  if (!json_is_object(j)) {
    json_decref(j);
    return muonref_fail(err, MUONREF_EFORMAT, "%.300s: a profile record must be a JSON object", path);
  }
  *out = j;
  return MUONREF_OK;
}

int muonref_record_base_name(const char *path, char *name, size_t n, muonref_error *err)
{
  json_t *j;
  int st = load_json(path, &j, err);
  if (st)
    return st;
  st = get_string(j, "base", name, n, path, "base", 0, err);
  json_decref(j);
  return st;
}

/* Member "bf16_refusal" {"status", "message"}: the error the port's first step raises on a
 * bf16 parameter (spec/profiles/README.md).  Not inherited: a port of its own says what it does.
 * Errors: MUONREF_EFORMAT naming the member and the rule (an object of exactly these two
 * strings; a status name of spec/muon.md 12 without its prefix; a non-empty message). */
static int read_bf16_refusal(const json_t *v, muonref_record *r, const char *path, muonref_error *err)
{
  static const char *const MEMBERS[] = {"status", "message", NULL};
  int st;
  if (!json_is_object(v))
    return fail_member(err, path, "bf16_refusal", "must be an object {status, message}");
  if ((st = only_members(v, MEMBERS, path, "bf16_refusal.", err)) ||
      (st = get_string(v, "status", r->bf16_refusal_status, sizeof r->bf16_refusal_status, path, "bf16_refusal.status",
                       1, err)) ||
      (st = get_string(v, "message", r->bf16_refusal_message, sizeof r->bf16_refusal_message, path,
                       "bf16_refusal.message", 1, err)))
    return st;
  if (!muonref_case_status_known(r->bf16_refusal_status))
    return fail_member(err, path, "bf16_refusal.status", "must be a status name such as \"EGRAD\" (spec/muon.md 12)");
  if (!*r->bf16_refusal_message)
    return fail_member(err, path, "bf16_refusal.message", "must not be empty");
  return MUONREF_OK;
}

/* Member "coefficient_types": the Emerging-Optimizers presets the port's release has (muonref_profile.
 * coefficient_types), each a name the key kind coefficient_type knows, at most 8. */
static int read_coeff_types(const json_t *v, muonref_record *r, const char *path, muonref_error *err)
{
  size_t cap = sizeof r->coeff_type_names / sizeof r->coeff_type_names[0];
  if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > cap)
    return fail_member(err, path, "coefficient_types", "must be an array of 1 to %zu preset names", cap);
  for (size_t i = 0; i < json_array_size(v); i++) {
    const char *s = json_string_value(json_array_get(v, i));
    if (!muonref_case_coefficient_type_known(s)) {
      char known[128] = "";
      for (size_t k = 0; muonref_case_coefficient_type_name(k); k++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "",
                 muonref_case_coefficient_type_name(k));
      return fail_member(err, path, "coefficient_types", "item %zu must be a preset of the key kind "
                         "coefficient_type (%s)", i, known);
    }
    for (size_t k = 0; k < i; k++)
      if (!strcmp(r->coeff_type_names[k], s))
        return fail_member(err, path, "coefficient_types", "item %zu repeats '%s'", i, s);
    snprintf(r->coeff_type_names[i], sizeof r->coeff_type_names[i], "%s", s);
  }
  r->n_coeff_types = json_array_size(v);
  return MUONREF_OK;
}

/* How many "{}" message holds (the values a message is filled with: core/checks.h muonref_check_fill). */
static int holes_in(const char *message)
{
  int n = 0;
  for (const char *at = strstr(message, "{}"); at; at = strstr(at + 2, "{}"))
    n++;
  return n;
}

/* Whether s holds no control character (bytes below 0x20, and 0x7f). */
static int printable(const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return 0;
  return 1;
}

/* Member "coefficient_type_refusal": the port's words for a preset its release lacks
 * (muonref_profile.coefficient_type_refusal), "{}" at most once, no control character. */
static int read_coeff_type_refusal(const json_t *j, muonref_record *r, const char *path, muonref_error *err)
{
  const char *m = "coefficient_type_refusal";
  int st = get_string(j, m, r->coeff_type_refusal, sizeof r->coeff_type_refusal, path, m, 1, err);
  if (!st && holes_in(r->coeff_type_refusal) > 1)
    return fail_member(err, path, m, "may hold \"{}\" (the preset's name) once only");
  if (!st && !printable(r->coeff_type_refusal))
    return fail_member(err, path, m, "must hold no control character: it is written into C");
  return st;
}

/* The members after the name: everything but the keys and areas. */
static int read_body(const json_t *j, const muonref_record *base, muonref_record *r, const char *path,
                     muonref_error *err)
{
  int st;
  const json_t *v;
  if ((v = json_object_get(j, "id"))) {
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 999)
      return fail_member(err, path, "id", "must be an integer from 0 to 999 (a built-in profile's number)");
    r->id = (int)json_integer_value(v);
  }
  if (!(v = json_object_get(j, "source")))
    return fail_member(err, path, "source", "is required: the port's repository, paths and commit or release");
  if ((st = read_source(v, r, path, err)) ||
      (st = get_string(j, "page", r->page, sizeof r->page, path, "page", 0, err)) ||
      (st = get_string(j, "summary", r->summary, sizeof r->summary, path, "summary", 0, err)) ||
      (st = get_string(j, "keys_note", r->keys_note, sizeof r->keys_note, path, "keys_note", 0, err)))
    return st;
  char note[1024];
  if ((st = get_string(j, "adam_defaults_note", note, sizeof note, path, "adam_defaults_note", 0, err)))
    return st;
  if ((v = json_object_get(j, "field_notes"))) {
    const char *key;
    json_t *t;
    if (!json_is_object(v))
      return fail_member(err, path, "field_notes", "must be an object {field: note}");
    json_object_foreach((json_t *)v, key, t) {
      char m[160];
      snprintf(m, sizeof m, "field_notes.%s", key);
      if (!muonref_option_field_named(key) || !json_is_string(t))
        return fail_member(err, path, m, "must be a string naming a field of muonref_options");
    }
  }
  /* defaults: complete without a base, what differs with one */
  v = json_object_get(j, "defaults");
  if (!v && !base)
    return fail_member(err, path, "defaults", "is required: a record without a base gives every field");
  if (v && (st = read_fields(v, "defaults", &r->defaults, NULL, !base, path, err)))
    return st;
  /* the AdamW groups: the defaults, the base's AdamW differences, this record's */
  muonref_options adam = r->defaults;
  for (size_t i = 0; base && i < muonref_option_field_count; i++)
    if (r->adam_set[i])
      field_copy(&adam, &base->adam_defaults, &muonref_option_fields[i]);
  if ((v = json_object_get(j, "adam_defaults")) &&
      (st = read_fields(v, "adam_defaults", &adam, r->adam_set, 0, path, err)))
    return st;
  r->adam_defaults = adam;
  r->has_adam = 0;
  for (size_t i = 0; i < muonref_option_field_count; i++)
    r->has_adam |= r->adam_set[i];
  if ((v = json_object_get(j, "one_group"))) {
    if (!json_is_boolean(v))
      return fail_member(err, path, "one_group", "must be true or false");
    r->one_group = json_is_true(v);
  } else if (!base) {
    return fail_member(err, path, "one_group", "is required without a base");
  }
  if ((v = json_object_get(j, "test_port")) && (st = read_port(v, r, path, err)))
    return st;
  if ((v = json_object_get(j, "bf16_unmodeled")) &&
      (st = get_string(j, "bf16_unmodeled", r->bf16_unmodeled, sizeof r->bf16_unmodeled, path, "bf16_unmodeled", 1, err)))
    return st;
  if ((v = json_object_get(j, "coefficient_types")) && (st = read_coeff_types(v, r, path, err)))
    return st;
  if ((v = json_object_get(j, "coefficient_type_refusal")) &&
      (st = read_coeff_type_refusal(j, r, path, err)))
    return st;
  if ((v = json_object_get(j, "bf16_refusal")) && json_is_null(v)) /* the base's refusal cleared: this port runs bf16 */
    *r->bf16_refusal_status = 0, *r->bf16_refusal_message = 0;
  else if (v && (st = read_bf16_refusal(v, r, path, err)))
    return st;
  return MUONREF_OK;
}

/* coefficient_types needs a key of kind coefficient_type, and holds the
 * preset the defaults are (a release refusing its own default preset is no
 * port). */
static int check_coeff_types(muonref_record *r, const char *path, muonref_error *err)
{
  if (!r->n_coeff_types)
    return MUONREF_OK;
  link_row(r);
  for (size_t i = 0; i < r->n_keys; i++) {
    if (r->keys[i].kind != MUONREF_KEY_COEFFICIENT_TYPE)
      continue;
    json_t *v = muonref_case_key_json(&r->defaults, &r->keys[i]);
    const char *d = json_string_value(v);
    int held = 0;
    for (size_t k = 0; d && k < r->n_coeff_types; k++)
      held |= !strcmp(d, r->coeff_type_names[k]);
    char dn[32];
    snprintf(dn, sizeof dn, "%s", d ? d : "?");
    json_decref(v);
    if (!held)
      return fail_member(err, path, "coefficient_types", "must hold the defaults' preset '%s' (key '%s')", dn,
                         r->key_names[i]);
    return MUONREF_OK;
  }
  return fail_member(err, path, "coefficient_types", "the record has no key of kind coefficient_type for it to "
                     "restrict");
}

/* Every key must spell the defaults of the groups it goes to: a default that
 * no value of the key gives (a kind's "?": use_adjusted_lr under scale_mode
 * fan_out, dion's flatten under conv_mode keller) would be written into every
 * vector as "?", which the port reads as something else.  An optional key
 * is written only where a case's value differs from the defaults, so it
 * need not spell them (a record based on dion at another ns_safety: its
 * use_polar_express has no value for that list, and no case at the
 * defaults writes it). */
static int check_defaults_spelled(muonref_record *r, const char *path, muonref_error *err)
{
  link_row(r); /* the keys' names */
  for (size_t i = 0; i < r->n_keys; i++) {
    if (r->keys[i].optional)
      continue;
    int adam = r->keys[i].branch == MUONREF_KEY_ADAM_ONLY && r->has_adam;
    json_t *v = muonref_case_key_json(adam ? &r->adam_defaults : &r->defaults, &r->keys[i]);
    int bad = json_is_string(v) && !strcmp(json_string_value(v), "?");
    json_decref(v);
    if (bad)
      return fail_member(err, path, adam ? "adam_defaults" : "defaults",
                         "no value of the key '%s' (kind %s) gives these defaults: the port cannot be given them",
                         r->key_names[i], muonref_record_kind_name(r->keys[i].kind));
  }
  return MUONREF_OK;
}

/* ---- the catalogue of checks a record defines (member "catalogue") ---- */


/* Row i of member catalogue.checks into *k. */
static int read_check(const json_t *e, size_t i, muonref_record_check *k, const char *path, muonref_error *err)
{
  static const char *const MEMBERS[] = {"field", "rule", "min", "max", "late", "fallback", "message", NULL};
  char m[64], mm[96], rule[24];
  snprintf(m, sizeof m, "catalogue.checks[%zu]", i);
  if (!json_is_object(e))
    return fail_member(err, path, m, "must be an object: {\"field\", \"rule\", \"message\"[, \"min\", \"max\", \"late\", "
                       "\"fallback\"]}");
  int st;
  snprintf(mm, sizeof mm, "%s.", m);
  if ((st = only_members(e, MEMBERS, path, mm, err)))
    return st;
  snprintf(mm, sizeof mm, "%s.field", m);
  if ((st = get_string(e, "field", k->field, sizeof k->field, path, mm, 1, err)))
    return st;
  snprintf(mm, sizeof mm, "%s.rule", m);
  if ((st = get_string(e, "rule", rule, sizeof rule, path, mm, 1, err)))
    return st;
  int r = muonref_check_rule_of(rule);
  if (r < 0)
    return fail_member(err, path, mm, "'%s' is not a rule: finite, nonnegative, unit, range, coeffs_fit, at_most_one, "
                       "coeffs_multiple or unit_closed", rule);
  k->rule = (muonref_check_rule)r;
  if (!muonref_check_field_takes(k->field, k->rule))
    return fail_member(err, path, mm, "'%s' cannot check the field '%s' (the reals lr, momentum, weight_decay, ns_eps, "
                       "moment2_beta, adam_eps, adam_betas take finite, nonnegative, unit; ns_steps, grad_accumulation and "
                       "ema_overwrite range; ema_momentum unit_closed; "
                       "coeffs coeffs_fit, coeffs_multiple; clip at_most_one)", rule, k->field);
  k->lo = INT_MIN, k->hi = INT_MAX;
  for (int end = 0; end < 2; end++) {
    const char *key = end ? "max" : "min";
    const json_t *v = json_object_get(e, key);
    snprintf(mm, sizeof mm, "%s.%s", m, key);
    if (!v)
      continue;
    if (k->rule != MUONREF_RULE_RANGE)
      return fail_member(err, path, mm, "belongs to a row of rule range only");
    if (!json_is_integer(v) || json_integer_value(v) <= INT_MIN || json_integer_value(v) >= INT_MAX)
      return fail_member(err, path, mm, "must be an integer strictly between %d and %d (absent: no bound)", INT_MIN,
                         INT_MAX);
    *(end ? &k->hi : &k->lo) = (int)json_integer_value(v);
  }
  if (k->lo > k->hi)
    return fail_member(err, path, m, "min %d is above max %d: no value would pass", k->lo, k->hi);
  const json_t *late = json_object_get(e, "late");
  snprintf(mm, sizeof mm, "%s.late", m);
  if (late && !json_is_boolean(late))
    return fail_member(err, path, mm, "must be true or false");
  k->late = late && json_is_true(late);
  const json_t *fb = json_object_get(e, "fallback");
  snprintf(mm, sizeof mm, "%s.fallback", m);
  if (fb && !json_is_boolean(fb))
    return fail_member(err, path, mm, "must be true (muonref's own check, which the port does not make) or false");
  k->fallback = fb && json_is_true(fb);
  snprintf(mm, sizeof mm, "%s.message", m);
  if ((st = get_string(e, "message", k->message, sizeof k->message, path, mm, 1, err)))
    return st;
  int holes = holes_in(k->message), want = muonref_check_holes(k->rule);
  if (holes != 0 && holes != want)
    return fail_member(err, path, mm, want == 3 ? "holds \"{}\" three times (clip_grad_norm_each, clip_grad_value, "
                       "clip_grad_norm) or not at all" : want == 2 ? "holds \"{}\" twice (ns_steps, the number of "
                       "triples) or not at all" : "may hold \"{}\" (the value) once only");
  if (!printable(k->message))
    return fail_member(err, path, mm, "must hold no control character (a newline, a tab, ...): it is written into C");
  return MUONREF_OK;
}

/* Member catalogue.fallback (absent: none): a list of "options" and
 * "shape", each once, into MUONREF_FALLBACK_* bits. */
static int read_fallback(const json_t *v, unsigned *bits, const char *path, muonref_error *err)
{
  *bits = 0;
  if (!v)
    return MUONREF_OK;
  if (!json_is_array(v))
    return fail_member(err, path, "catalogue.fallback", "must be a list of \"options\" and \"shape\": the refusals "
                       "outside the rows that are muonref's own, not the port's");
  for (size_t i = 0; i < json_array_size(v); i++) {
    const char *s = json_string_value(json_array_get(v, i));
    unsigned b = !s ? 0u : !strcmp(s, "options") ? MUONREF_FALLBACK_OPTIONS : !strcmp(s, "shape") ? MUONREF_FALLBACK_SHAPE : 0u;
    if (!b || (*bits & b))
      return fail_member(err, path, "catalogue.fallback", "item %zu must be \"options\" or \"shape\", each once", i);
    *bits |= b;
  }
  return MUONREF_OK;
}

static int read_catalogue(const json_t *v, muonref_record *r, const char *path, muonref_error *err)
{
  static const char *const MEMBERS[] = {"name", "id", "source", "checks_of", "fallback", "checks", NULL};
  muonref_record_catalogue *c = &r->catalogue;
  int st;
  if (!json_is_object(v))
    return fail_member(err, path, "catalogue", "must be an object: the catalogue of checks this record's port defines");
  if ((st = only_members(v, MEMBERS, path, "catalogue.", err)) ||
      (st = get_string(v, "name", c->name, sizeof c->name, path, "catalogue.name", 1, err)) ||
      (st = get_string(v, "source", c->source, sizeof c->source, path, "catalogue.source", 1, err)) ||
      (st = get_string(v, "checks_of", c->checks_of, sizeof c->checks_of, path, "catalogue.checks_of", 0, err)))
    return st;
  if (!name_ok(c->name, sizeof c->name) || strchr(c->name, '@'))
    return fail_member(err, path, "catalogue.name", "must be a lower-case name [a-z][a-z0-9_]* of at most %zu bytes: "
                       "the spelling of the field catalogue", sizeof c->name - 1);
  if (!strcmp(c->name, "count") || !strcmp(c->name, "ids_h")) /* MUONREF_CATALOGUE_COUNT, the include guard */
    return fail_member(err, path, "catalogue.name", "'%s' is taken by include/muonref/catalogue_ids.h's own names "
                       "(MUONREF_CATALOGUE_COUNT, MUONREF_CATALOGUE_IDS_H)", c->name);
  if (!printable(c->source))
    return fail_member(err, path, "catalogue.source", "must hold no control character: it is written into C");
  if (*c->checks_of && !strcmp(c->checks_of, c->name))
    return fail_member(err, path, "catalogue.checks_of", "names the catalogue itself");
  const json_t *id = json_object_get(v, "id");
  if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) > 255)
    return fail_member(err, path, "catalogue.id", "must be an integer 0..255: the catalogue's stable number "
                       "(muonref_catalogue)");
  c->id = (int)json_integer_value(id);
  if ((st = read_fallback(json_object_get(v, "fallback"), &c->fallback, path, err)))
    return st;
  const json_t *rows = json_object_get(v, "checks");
  if (!rows && !*c->checks_of)
    return fail_member(err, path, "catalogue.checks", "is required without checks_of: the port's checks, in its order");
  if (rows && (!json_is_array(rows) || json_array_size(rows) > MUONREF_RECORD_MAX_CHECKS))
    return fail_member(err, path, "catalogue.checks", "must be an array of at most %d checks", MUONREF_RECORD_MAX_CHECKS);
  c->n_rows = rows ? json_array_size(rows) : 0;
  for (size_t i = 0; i < c->n_rows; i++)
    if ((st = read_check(json_array_get(rows, i), i, &c->rows[i], path, err)))
      return st;
  c->present = 1;
  return MUONREF_OK;
}

const muonref_record *muonref_record_catalogue_named(const muonref_record *r, size_t n, const char *name)
{
  for (size_t i = 0; name && i < n; i++)
    if (r[i].catalogue.present && !strcmp(r[i].catalogue.name, name))
      return &r[i];
  return NULL;
}

size_t muonref_record_catalogue_count(const muonref_record *r, size_t n)
{
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += r[i].catalogue.present;
  return k;
}

/* Whether catalogue r->catalogue (its rows with those of checks_of, the
 * head only: muonref_ns_options_validate runs no late row) refuses what
 * muonref cannot compute: a non-finite lr, momentum, weight_decay,
 * adam_betas or adam_eps (every real rule refuses non-finite values), an
 * ns_steps outside 0..MUONREF_MAX_NS_STEPS.  core/options.c checks the
 * other fields itself, under every catalogue. */
static int computable(const muonref_record *r, const muonref_record *all, size_t n, muonref_error *err)
{
  static const char *const REALS[] = {"lr", "momentum", "weight_decay", "adam_betas", "adam_eps"};
  const muonref_record *of = muonref_record_catalogue_named(all, n, r->catalogue.checks_of);
  const muonref_record_catalogue *parts[2] = {of ? &of->catalogue : NULL, &r->catalogue};
  long lo = INT_MIN, hi = INT_MAX;
  unsigned seen = 0;
  for (int p = 0; p < 2; p++)
    for (size_t i = 0; parts[p] && i < parts[p]->n_rows; i++) {
      const muonref_record_check *k = &parts[p]->rows[i];
      if (k->late)
        continue;
      if (k->rule == MUONREF_RULE_RANGE)
        lo = k->lo > lo ? k->lo : lo, hi = k->hi < hi ? k->hi : hi;
      for (size_t f = 0; f < sizeof REALS / sizeof REALS[0]; f++)
        seen |= (unsigned)!strcmp(k->field, REALS[f]) << f;
    }
  for (size_t f = 0; f < sizeof REALS / sizeof REALS[0]; f++)
    if (!((seen >> f) & 1u))
      return fail_member(err, r->path, "catalogue.checks", "no row (in the head) checks %s: every catalogue must "
                         "refuse a value muonref cannot compute (a non-finite lr, momentum, weight_decay, "
                         "adam_betas, adam_eps)", REALS[f]);
  if (lo < 0 || hi > MUONREF_MAX_NS_STEPS)
    return fail_member(err, r->path, "catalogue.checks", "the rows on ns_steps (in the head) accept values %s %d: "
                       "every catalogue must keep ns_steps within 0..%d (muonref runs no more)", lo < 0 ? "below" : "above",
                       lo < 0 ? 0 : MUONREF_MAX_NS_STEPS, MUONREF_MAX_NS_STEPS);
  return MUONREF_OK;
}

/* The folder's catalogues: numbered 0 to k - 1 each once, each name once, a
 * checks_of naming a catalogue that has none itself, the rows in all
 * (checks_of's and its own) at most MUONREF_RECORD_MAX_CHECKS, each
 * refusing what muonref cannot compute (computable); and every record's
 * defaults.catalogue (and adam_defaults') defined by one of them. */
static int check_catalogues(const muonref_record *r, size_t n, muonref_error *err)
{
  size_t k = muonref_record_catalogue_count(r, n);
  for (size_t i = 0; i < n; i++) {
    const muonref_record_catalogue *c = &r[i].catalogue;
    if (!c->present)
      continue;
    if ((size_t)c->id >= k)
      return fail_member(err, r[i].path, "catalogue.id", "the catalogues' numbers must be 0 to %zu, each once; %d is "
                         "out of that range", k - 1, c->id);
    for (size_t j = 0; j < i; j++) {
      const muonref_record_catalogue *d = &r[j].catalogue;
      if (d->present && d->id == c->id)
        return fail_member(err, r[i].path, "catalogue.id", "%d is the number of the catalogue '%s' too (%s)", c->id,
                           d->name, r[j].path);
      if (d->present && !strcmp(d->name, c->name))
        return fail_member(err, r[i].path, "catalogue.name", "'%s' is defined by %s too", c->name, r[j].path);
    }
    if (!*c->checks_of)
      continue;
    const muonref_record *of = muonref_record_catalogue_named(r, n, c->checks_of);
    if (!of)
      return fail_member(err, r[i].path, "catalogue.checks_of", "no record of the folder defines the catalogue '%s'",
                         c->checks_of);
    if (*of->catalogue.checks_of)
      return fail_member(err, r[i].path, "catalogue.checks_of", "'%s' takes its rows from '%s' itself: name a "
                         "catalogue with rows of its own", c->checks_of, of->catalogue.checks_of);
    if (of->catalogue.n_rows + c->n_rows > MUONREF_RECORD_MAX_CHECKS)
      return fail_member(err, r[i].path, "catalogue.checks", "'%s''s rows and these are more than %d", c->checks_of,
                         MUONREF_RECORD_MAX_CHECKS);
  }
  for (size_t i = 0; i < n; i++) {
    int st = r[i].catalogue.present ? computable(&r[i], r, n, err) : MUONREF_OK;
    for (int a = 0; !st && a < 1 + r[i].has_adam; a++) {
      const char *name = muonref_catalogue_name((a ? &r[i].adam_defaults : &r[i].defaults)->catalogue);
      if (!muonref_record_catalogue_named(r, n, name))
        st = fail_member(err, r[i].path, a ? "adam_defaults.catalogue" : "defaults.catalogue",
                         "'%s' is a catalogue of this build, but no record of the folder defines it (member "
                         "\"catalogue\"): the tables written from this folder would not compile", name ? name : "?");
    }
    if (st)
      return st;
  }
  return MUONREF_OK;
}

int muonref_record_read(const char *path, const muonref_record *base, muonref_record *out, muonref_error *err)
{
  static const char *const MEMBERS[] = {"name", "id", "base", "source", "page", "summary", "defaults", "field_notes",
                                        "adam_defaults", "adam_defaults_note", "one_group", "keys_note", "keys",
                                        "rename_keys", "areas", "test_port", "not_expressed", "bf16_refusal", "bf16_unmodeled",
                                        "coefficient_types", "coefficient_type_refusal", "catalogue",
                                        NULL};
  json_t *j;
  int st = load_json(path, &j, err);
  if (st)
    return st;
  muonref_record *r = malloc(sizeof *r);
  if (!r) {
    json_decref(j);
    return muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory", path);
  }
  /* what a base gives: defaults, AdamW differences, keys, one_group, areas, the options not expressed,
   * bf16_unmodeled, bf16_refusal (null in the record clears it) */
  memset(r, 0, sizeof *r);
  if (base) { /* not inherited: id, source, page, prose, test port (a port of one's own) */
    r->defaults = base->defaults, r->adam_defaults = base->adam_defaults;
    memcpy(r->adam_set, base->adam_set, sizeof r->adam_set);
    memcpy(r->keys, base->keys, sizeof r->keys), memcpy(r->key_names, base->key_names, sizeof r->key_names);
    memcpy(r->scopes, base->scopes, sizeof r->scopes);
    r->n_keys = base->n_keys, r->one_group = base->one_group;
    memcpy(r->area_names, base->area_names, sizeof r->area_names);
    r->n_areas = base->n_areas;
    memcpy(r->unexpressed, base->unexpressed, sizeof r->unexpressed);
    memcpy(r->unexpressed_why, base->unexpressed_why, sizeof r->unexpressed_why);
    memcpy(r->unexpressed_unobservable, base->unexpressed_unobservable, sizeof r->unexpressed_unobservable);
    r->n_unexpressed = base->n_unexpressed;
    snprintf(r->bf16_unmodeled, sizeof r->bf16_unmodeled, "%s", base->bf16_unmodeled); /* the port's arithmetic */
    snprintf(r->bf16_refusal_status, sizeof r->bf16_refusal_status, "%s", base->bf16_refusal_status); /* its check */
    snprintf(r->bf16_refusal_message, sizeof r->bf16_refusal_message, "%s", base->bf16_refusal_message);
    memcpy(r->coeff_type_names, base->coeff_type_names, sizeof r->coeff_type_names); /* the release's presets */
    r->n_coeff_types = base->n_coeff_types;
    snprintf(r->coeff_type_refusal, sizeof r->coeff_type_refusal, "%s", base->coeff_type_refusal);
    snprintf(r->base, sizeof r->base, "%s", base->name);
  }
  r->id = -1;
  snprintf(r->path, sizeof r->path, "%s", path);
  char bname[MUONREF_RECORD_NAME_LEN];
  const json_t *v;
  st = only_members(j, MEMBERS, path, "", err);
  if (!st)
    st = get_string(j, "name", r->name, sizeof r->name, path, "name", 1, err);
  if (!st && !name_ok(r->name, sizeof r->name))
    st = fail_member(err, path, "name", "must be a lower-case name [a-z][a-z0-9_]*, optionally @RELEASE "
                     "([0-9][0-9a-z._]*), of at most %zu bytes: it names the vector folder and files",
                     sizeof r->name - 1);
  if (!st)
    st = get_string(j, "base", bname, sizeof bname, path, "base", 0, err);
  if (!st && *bname && !base)
    st = fail_member(err, path, "base", "the base profile '%s' is not known", bname);
  if (!st && !*bname && base)
    st = fail_member(err, path, "base", "is required: the record is read on the profile '%s'", base->name);
  if (!st && base && strcmp(bname, base->name))
    st = fail_member(err, path, "base", "names '%s', but was read on '%s'", bname, base->name);
  const char *at = strchr(r->name, '@');
  if (!st && at && (strlen(bname) != (size_t)(at - r->name) || strncmp(bname, r->name, (size_t)(at - r->name))))
    st = fail_member(err, path, "base", "must be '%.*s': a release's record (%s) is its sibling's with the "
                     "differences as data", (int)(at - r->name), r->name, r->name);
  if (!st)
    st = read_body(j, base, r, path, err);
  if (!st && (v = json_object_get(j, "keys")))
    st = read_keys(v, r, path, err);
  else if (!st && !base)
    st = fail_member(err, path, "keys", "is required without a base: the port's option names");
  if (!st && (v = json_object_get(j, "rename_keys")))
    st = rename_keys(v, r, path, err);
  if (!st)
    st = check_keys(r, path, err);
  if (!st && (v = json_object_get(j, "not_expressed")))
    st = read_unexpressed(v, r, path, err);
  else if (!st && base) { /* the base's, less those this record's keys now express */
    size_t kept = 0;
    for (size_t i = 0; i < r->n_unexpressed; i++)
      if (key_index(r, r->unexpressed[i]) == r->n_keys) {
        memmove(r->unexpressed[kept], r->unexpressed[i], sizeof r->unexpressed[0]);
        memmove(r->unexpressed_why[kept], r->unexpressed_why[i], sizeof r->unexpressed_why[0]);
        r->unexpressed_unobservable[kept] = r->unexpressed_unobservable[i];
        kept++;
      }
    r->n_unexpressed = kept;
  }
  if (!st && (v = json_object_get(j, "areas")))
    st = read_areas(v, r, path, err);
  else if (!st && !base)
    st = fail_member(err, path, "areas", "is required without a base: the vector areas the port has");
  if (!st && (v = json_object_get(j, "catalogue"))) /* a base's is not inherited: r starts without one */
    st = read_catalogue(v, r, path, err);
  json_decref(j);
  muonref_error e;
  if (!st && muonref_options_validate(&r->defaults, &e))
    st = fail_member(err, path, "defaults", "the profile's defaults are not valid options: %s", e.message);
  if (!st && r->has_adam && muonref_options_validate(&r->adam_defaults, &e))
    st = fail_member(err, path, "adam_defaults", "the AdamW groups' defaults are not valid options: %s", e.message);
  if (!st)
    st = check_moment2_inert(&r->defaults, base, path, err);
  if (!st)
    st = check_defaults_spelled(r, path, err);
  if (!st)
    st = check_coeff_types(r, path, err);
  if (!st) {
    *out = *r;
    link_row(out);
  }
  free(r);
  return st;
}

void muonref_record_of_profile(const muonref_profile *p, int id, muonref_record *out)
{
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", p->name);
  snprintf(out->source, sizeof out->source, "%s", p->source);
  out->id = id;
  out->defaults = *p->defaults;
  out->adam_defaults = p->adam_defaults ? *p->adam_defaults : *p->defaults;
  for (size_t i = 0; i < muonref_option_field_count; i++)
    out->adam_set[i] = !field_equal(&out->defaults, &out->adam_defaults, &muonref_option_fields[i]);
  out->has_adam = p->adam_defaults != NULL;
  for (size_t i = 0; i < p->n_keys && i < MUONREF_RECORD_MAX_KEYS; i++) {
    out->keys[i] = p->keys[i];
    snprintf(out->key_names[i], sizeof out->key_names[i], "%s", p->keys[i].name);
  }
  out->n_keys = p->n_keys < MUONREF_RECORD_MAX_KEYS ? p->n_keys : MUONREF_RECORD_MAX_KEYS;
  out->one_group = p->one_group;
  snprintf(out->bf16_refusal_status, sizeof out->bf16_refusal_status, "%s",
           p->bf16_refusal_status ? p->bf16_refusal_status : "");
  snprintf(out->bf16_refusal_message, sizeof out->bf16_refusal_message, "%s",
           p->bf16_refusal_message ? p->bf16_refusal_message : "");
  snprintf(out->bf16_unmodeled, sizeof out->bf16_unmodeled, "%s", p->bf16_unmodeled ? p->bf16_unmodeled : "");
  for (size_t i = 0; p->coefficient_types && p->coefficient_types[i] &&
                     i < sizeof out->coeff_type_names / sizeof out->coeff_type_names[0]; i++, out->n_coeff_types++)
    snprintf(out->coeff_type_names[i], sizeof out->coeff_type_names[i], "%s", p->coefficient_types[i]);
  snprintf(out->coeff_type_refusal, sizeof out->coeff_type_refusal, "%s",
           p->coefficient_type_refusal ? p->coefficient_type_refusal : "");
  for (size_t i = 0; p->areas && p->areas[i] && i < MUONREF_RECORD_MAX_AREAS; i++, out->n_areas++)
    snprintf(out->area_names[i], sizeof out->area_names[i], "%s", p->areas[i]);
  link_row(out);
}

/* ---- a folder of records (the built-in set) ---- */

typedef struct dir_entry { char path[1024], base[MUONREF_RECORD_NAME_LEN], name[MUONREF_RECORD_NAME_LEN]; int state; } dir_entry;

static int by_id(const void *a, const void *b)
{
  return ((const muonref_record *)a)->id - ((const muonref_record *)b)->id;
}

/* Reads entry i (its base first); state 0 unread, 1 reading, 2 read. */
static int read_entry(dir_entry *e, muonref_record *r, size_t n, size_t i, muonref_error *err)
{
  if (e[i].state == 2)
    return MUONREF_OK;
  if (e[i].state == 1)
    return fail_member(err, e[i].path, "base", "the bases form a cycle");
  e[i].state = 1;
  const muonref_record *base = NULL;
  if (e[i].base[0]) {
    size_t b = 0;
    while (b < n && strcmp(e[b].name, e[i].base))
      b++;
    if (b == n)
      return fail_member(err, e[i].path, "base", "no record of the folder is named '%s'", e[i].base);
    int st = read_entry(e, r, n, b, err);
    if (st)
      return st;
    base = &r[b];
  }
  int st = muonref_record_read(e[i].path, base, &r[i], err);
  e[i].state = 2;
  return st;
}

int muonref_record_read_dir(const char *dir, muonref_record **out, size_t *n_out, muonref_error *err)
{
  DIR *d = opendir(dir);
  if (!d)
    return muonref_fail(err, MUONREF_EIO, "%s: cannot read the folder of profile records", dir);
  dir_entry *e = calloc(256, sizeof *e);
  size_t n = 0;
  struct dirent *de;
  int st = e ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  while (!st && (de = readdir(d))) {
    size_t len = strlen(de->d_name);
    if (len < 6 || strcmp(de->d_name + len - 5, ".json") || !strcmp(de->d_name, "profile.schema.json"))
      continue;
    if (n == 256) {
      st = muonref_fail(err, MUONREF_EFORMAT, "%s: more than 256 profile records", dir);
      break;
    }
    if (strlen(dir) + 1 + len >= sizeof e[n].path) {
      st = muonref_fail(err, MUONREF_EIO, "%s/%s: the path of a profile record is longer than %zu bytes", dir,
                        de->d_name, sizeof e[n].path - 1);
      break;
    }
    snprintf(e[n].path, sizeof e[n].path, "%.767s/%.255s", dir, de->d_name);
    st = muonref_record_base_name(e[n].path, e[n].base, sizeof e[n].base, err);
    json_t *j = NULL;
    if (!st && !(st = load_json(e[n].path, &j, err)))
      st = get_string(j, "name", e[n].name, sizeof e[n].name, e[n].path, "name", 1, err);
    json_decref(j);
    n++;
  }
  closedir(d);
  muonref_record *r = st ? NULL : calloc(n ? n : 1, sizeof *r);
  if (!st && !r)
    st = muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  for (size_t i = 0; !st && i < n; i++)
    st = read_entry(e, r, n, i, err);
  for (size_t i = 0; !st && i < n; i++)
    if (r[i].id < 0)
      st = fail_member(err, r[i].path, "id", "is required in a built-in record (the profile's stable number)");
  if (!st)
    st = check_catalogues(r, n, err);
  if (!st) {
    qsort(r, n, sizeof *r, by_id);
    for (size_t i = 0; i < n; i++)
      link_row(&r[i]); /* moved by qsort */
    for (size_t i = 0; !st && i < n; i++)
      if (r[i].id != (int)i)
        st = fail_member(err, r[i].path, "id", "the ids of the built-in records must be 0 to %zu, each once; %d %s", n - 1,
                         r[i].id, i && r[i - 1].id == r[i].id ? "is repeated" : "leaves a gap");
  }
  free(e);
  if (st) {
    free(r);
    return st;
  }
  *out = r, *n_out = n;
  return MUONREF_OK;
}

/* ---- a user's record ---- */

int muonref_record_use(const char *path, const char *records, const muonref_record **out, muonref_error *err)
{
  char bname[MUONREF_RECORD_NAME_LEN];
  json_t *j;
  int st = load_json(path, &j, err);
  if (st)
    return st;
  st = get_string(j, "base", bname, sizeof bname, path, "base", 0, err);
  int defines = json_object_get(j, "catalogue") != NULL;
  json_decref(j);
  if (st)
    return st;
  if (!*bname)
    return fail_member(err, path, "base", "is required in a user's record: the built-in profile it differs from (%s)",
                       "muonref profile lists them");
  if (defines) /* said first: the rows' own errors would hide it */
    return fail_member(err, path, "catalogue", "belongs to built-in records only: a user's record cannot define its "
                       "port's option checks yet (issue 23; spec/profiles/README.md, \"A user profile\"); it keeps "
                       "its base's catalogue");
  size_t id = 0;
  while (id < muonref_profile_count() && strcmp(muonref_profile_name(id), bname))
    id++;
  if (id == muonref_profile_count())
    return fail_member(err, path, "base", "'%s' is not a built-in profile (muonref profile lists them)", bname);
  muonref_record *base = malloc(sizeof *base), *r = malloc(sizeof *r);
  if (!base || !r) {
    free(base), free(r);
    return muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  }
  muonref_record_of_profile(muonref_profile_at(id), (int)id, base);
  muonref_record *all;
  size_t n;
  if (records && muonref_record_read_dir(records, &all, &n, NULL) == MUONREF_OK) {
    if (id < n && !strcmp(all[id].name, bname)) { /* the same profile as the C row (tests/scripts/profile-records.sh) */
      *base = all[id];
      link_row(base);
    }
    free(all);
  }
  muonref_catalogue base_catalogue = base->defaults.catalogue;
  st = muonref_record_read(path, base, r, err);
  free(base);
  if (!st && r->id >= 0)
    st = fail_member(err, path, "id", "belongs to built-in records only (a user's record has no number)");
  if (!st && r->defaults.catalogue != base_catalogue)
    st = fail_member(err, path, "defaults.catalogue", "a user's record keeps its base's catalogue of checks ('%s'): "
                     "the error cases of the vectors are written per catalogue for its own ports' option names, so "
                     "another catalogue gives vectors that name options the profile does not have",
                     muonref_catalogue_name(base_catalogue));
  if (!st && muonref_profile_get(r->name))
    st = fail_member(err, path, "name", "'%s' is already a profile: a user's record needs a name of its own", r->name);
  if (!st && (st = muonref_profile_register(&r->profile, err)))
    st = fail_member(err, path, "name", "%s", err ? err->message : "cannot be registered");
  if (st) {
    free(r);
    return st;
  }
  if (out)
    *out = r;
  return MUONREF_OK; /* r is kept: the registered row points into it */
}
