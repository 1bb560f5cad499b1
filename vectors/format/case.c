/* muonref: the parts of a vector case (see case.h). */
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/option_fields.h"
#include "core/preset_match.h"
#include "vectors/format/case.h"
#include "muonref/status.h"
#include "muonref/presets.h"
#include "muonref/profile.h"
#include "core/checks.h"
#include "core/fail.h"

static int real_value(const json_t *v, double *out)
{
  const char *s = json_string_value(v);
  if (json_is_number(v))
    *out = json_number_value(v);
  else if (s && !strcmp(s, "nan"))
    *out = NAN;
  else if (s && !strcmp(s, "inf"))
    *out = INFINITY;
  else if (s && !strcmp(s, "-inf"))
    *out = -INFINITY;
  else
    return 0;
  return 1;
}

int muonref_case_param_bf16(const json_t *test, size_t i)
{
  const json_t *init = json_object_get(json_array_get(json_object_get(test, "params"), i), "init");
  const char *dt = json_string_value(json_object_get(init, "dtype"));
  return dt && !strcmp(dt, "bf16");
}

int muonref_case_grad_bf16(const json_t *test, size_t i, size_t k)
{
  const char *cast = json_string_value(json_object_get(test, "roundTripDtype"));
  const json_t *rt = json_object_get(test, "roundTripAfter");
  if (cast && json_is_integer(rt) && (json_int_t)k >= json_integer_value(rt))
    return !strcmp(cast, "bf16");
  return muonref_case_param_bf16(test, i);
}

int muonref_case_final_bf16(const json_t *test, size_t i)
{
  size_t n = json_array_size(json_object_get(test, "steps"));
  return muonref_case_grad_bf16(test, i, n ? n - 1 : 0);
}

const char *muonref_case_result_dtype(const json_t *test, size_t i, int *converted)
{
  int bf16 = muonref_case_final_bf16(test, i), cast = bf16 != muonref_case_param_bf16(test, i);
  if (converted)
    *converted = cast;
  return bf16 ? "bf16" : cast ? "f32" : NULL;
}

int muonref_case_stored_bf16(const json_t *test, size_t i)
{
  const char *cast = json_string_value(json_object_get(test, "roundTripDtype"));
  return muonref_case_param_bf16(test, i) || (cast && !strcmp(cast, "bf16"));
}

int muonref_case_status_known(const char *name)
{
  char full[64];
  if (!name || strlen(name) > 40)
    return 0;
  snprintf(full, sizeof full, "MUONREF_%s", name);
  for (int s = -1; s >= -20; s--)
    if (!strcmp(muonref_status_name(s), full))
      return 1;
  return 0;
}

json_t *muonref_case_real_json(double x)
{
  if (isnan(x))
    return json_string("nan");
  if (isinf(x))
    return json_string(x < 0 ? "-inf" : "inf");
  return json_real(x);
}

static int bad(muonref_error *err, const char *where, const char *key, const char *what)
{
  return muonref_fail(err, MUONREF_EFORMAT, "%s: option \"%s\" must be %s", where, key, what);
}

#define FIELD(o, k, type) ((type *)((char *)(o) + (k)->offset))

/* timm's coefficient presets by timm's names (timm/optim/muon.py @aa4b5850
 * _COEFFICIENTS) and muonref's preset of the same numbers. */
static const char *const TIMM_PRESETS[][2] = {
  {"original", "simple"}, {"polar_express", "polar_express_timm"}, {"polar_express_safer", "polar_express_safer"},
  {"quintic", "quintic"}};

static int triple_value(const json_t *t, muonref_coeff *c)
{
  double x[3];
  if (!json_is_array(t) || json_array_size(t) != 3)
    return 0;
  for (size_t i = 0; i < 3; i++)
    if (!real_value(json_array_get(t, i), &x[i]))
      return 0;
  *c = (muonref_coeff){x[0], x[1], x[2]};
  return 1;
}

/* timm's ns_coefficients (resolve_ns_coefficients): a preset name, one
 * triple, or a non-empty list of triples (at most MUONREF_MAX_COEFFS);
 * the coefficient order is the profile's (repeat_last).  Messages are
 * timm's where timm has one. */
static int set_coeff_list(muonref_options *o, const muonref_option_key *k, const json_t *v, const char *where,
                          muonref_error *err)
{
  const char *s = json_string_value(v);
  if (s) {
    for (size_t i = 0; i < sizeof TIMM_PRESETS / sizeof TIMM_PRESETS[0]; i++)
      if (!strcmp(s, TIMM_PRESETS[i][0])) {
        const muonref_preset *p = muonref_preset_find(TIMM_PRESETS[i][1]);
        o->n_coeffs = p->n_coeffs;
        for (int j = 0; j < p->n_coeffs; j++)
          o->coeffs[j] = muonref_preset_coeff(p, j);
        return MUONREF_OK;
      }
    return muonref_fail(err, MUONREF_EOPTION, "Unknown coefficients preset '%s'. Valid options: original, "
                        "polar_express, polar_express_safer, quintic", s);
  }
  if (!json_is_array(v))
    return bad(err, where, k->name, "a preset name, a triple or a list of triples");
  muonref_coeff c;
  if (triple_value(v, &c)) {
    o->n_coeffs = 1;
    o->coeffs[0] = c;
    return MUONREF_OK;
  }
  size_t n = json_array_size(v);
  if (n == 0)
    return muonref_fail(err, MUONREF_EOPTION, "Coefficient list cannot be empty");
  if (n > MUONREF_MAX_COEFFS)
    return bad(err, where, k->name, "a list of at most 32 triples");
  muonref_coeff list[MUONREF_MAX_COEFFS];
  for (size_t i = 0; i < n; i++)
    if (!triple_value(json_array_get(v, i), &list[i]))
      return bad(err, where, k->name, "a list of triples of numbers");
  o->n_coeffs = (int)n;
  memcpy(o->coeffs, list, n * sizeof list[0]);
  return MUONREF_OK;
}

/* optax's ns_coeffs (google-deepmind/optax optax/contrib/_muon.py
 * @2edbcbe2): the preset strings of _NS_COEFFS_PRESET_DICT ('standard',
 * 'dion'; `raise ValueError(f'Unknown ns_coeff preset string: {ns_coeffs}')`
 * in muon), a (3,) triple, or an (n, 3) list with n >= 2 (the shape check of
 * scale_by_muon.init_fn: `ns_coeffs must have shape (3,) or (n, 3), got
 * {ns_coeffs.shape}`).  A (1, 3) list, which optax runs once whatever
 * ns_steps is, has no muonref equivalent (n_coeffs 1 runs ns_steps times). */
static int set_ns_coeffs_optax(muonref_options *o, const muonref_option_key *k, const json_t *v, const char *where,
                               muonref_error *err)
{
  const char *s = json_string_value(v);
  if (s) {
    const char *preset = !strcmp(s, "standard") ? "simple" : !strcmp(s, "dion") ? "quintic" : NULL;
    if (!preset)
      return muonref_fail(err, MUONREF_EOPTION, "Unknown ns_coeff preset string: %s", s);
    const muonref_preset *p = muonref_preset_find(preset);
    o->n_coeffs = p->n_coeffs;
    for (int j = 0; j < p->n_coeffs; j++)
      o->coeffs[j] = muonref_preset_coeff(p, j);
    return MUONREF_OK;
  }
  if (!json_is_array(v))
    return bad(err, where, k->name, "a preset string, a triple or a list of triples");
  muonref_coeff c;
  if (triple_value(v, &c)) {
    o->n_coeffs = 1;
    o->coeffs[0] = c;
    return MUONREF_OK;
  }
  size_t n = json_array_size(v), inner = 0;
  double x;
  int nested = n > 0 && json_is_array(json_array_get(v, 0));
  if (nested)
    inner = json_array_size(json_array_get(v, 0));
  for (size_t i = 0; i < n; i++) { /* a rectangular array of numbers, one or two dimensions */
    const json_t *e = json_array_get(v, i);
    if (nested ? !json_is_array(e) || json_array_size(e) != inner : !real_value(e, &x))
      return bad(err, where, k->name, "a preset string, a triple or a list of triples");
    for (size_t j = 0; nested && j < inner; j++)
      if (!real_value(json_array_get(e, j), &x))
        return bad(err, where, k->name, "a preset string, a triple or a list of triples");
  }
  if (!nested || inner != 3) {
    if (nested)
      return muonref_fail(err, MUONREF_EOPTION, "ns_coeffs must have shape (3,) or (n, 3), got (%zu, %zu)", n, inner);
    return muonref_fail(err, MUONREF_EOPTION, "ns_coeffs must have shape (3,) or (n, 3), got (%zu,)", n);
  }
  if (n < 2 || n > MUONREF_MAX_COEFFS)
    return bad(err, where, k->name, "a triple or a list of 2 to 32 triples (a (1, 3) list is not expressible)");
  for (size_t i = 0; i < n; i++)
    triple_value(json_array_get(v, i), &o->coeffs[i]);
  o->n_coeffs = (int)n;
  return MUONREF_OK;
}

/* optax's consistent_rms: None (the fan-out scale) or a number c (c
 * sqrt(max(fan_in, fan_out))), optax/contrib/_muon.py @2edbcbe2
 * scale_by_shape. */
static int set_consistent_rms(muonref_options *o, const muonref_option_key *k, const json_t *v, const char *where,
                              muonref_error *err)
{
  double c;
  if (json_is_null(v)) {
    o->scale_mode = MUONREF_SCALE_FAN_OUT, o->scale_extra = 1.0;
    return MUONREF_OK;
  }
  if (!real_value(v, &c))
    return bad(err, where, k->name, "null or a number");
  o->scale_mode = MUONREF_SCALE_SQRT_MAX, o->scale_extra = c;
  return MUONREF_OK;
}

/* Paddle's ns_coeff_type presets (muon.py @98af0a0f _NS_COEFFICIENT_SETS)
 * and muonref's preset of the same numbers; Paddle cycles every list. */
static const char *const PADDLE_PRESETS[][2] = {
  {"simple", "simple"}, {"quintic", "quintic"}, {"polar_express", "polar_express"}, {"aol", "aol"},
  {"deepseekv4", "deepseekv4"}};

/* Paddle's ns_coeff_type with its sibling ns_coeffs (either may be NULL:
 * absent), as P-98af's constructor: `assert ns_coeffs is not None` for
 * "custom", `assert ns_coeff_type in _NS_COEFFICIENT_SETS` otherwise (the
 * messages verbatim); ns_coeffs is read only with "custom". */
static int set_paddle_coeffs(muonref_options *o, const json_t *type, const json_t *list, const char *where,
                             muonref_error *err)
{
  const char *s = type ? json_string_value(type) : "simple";
  if (!s)
    return bad(err, where, "ns_coeff_type", "a string");
  if (!strcmp(s, "custom")) {
    if (!list || json_is_null(list))
      return muonref_fail(err, MUONREF_EOPTION, "ns_coeffs must be provided when ns_coeff_type is 'custom'.");
    size_t n = json_array_size(list);
    if (!json_is_array(list) || n == 0 || n > MUONREF_MAX_COEFFS)
      return bad(err, where, "ns_coeffs", "a list of 1 to 32 triples");
    muonref_coeff c[MUONREF_MAX_COEFFS];
    for (size_t i = 0; i < n; i++)
      if (!triple_value(json_array_get(list, i), &c[i]))
        return bad(err, where, "ns_coeffs", "a list of triples of numbers");
    o->n_coeffs = (int)n;
    memcpy(o->coeffs, c, n * sizeof c[0]);
    return MUONREF_OK;
  }
  for (size_t i = 0; i < sizeof PADDLE_PRESETS / sizeof PADDLE_PRESETS[0]; i++)
    if (!strcmp(s, PADDLE_PRESETS[i][0])) {
      const muonref_preset *p = muonref_preset_find(PADDLE_PRESETS[i][1]);
      o->n_coeffs = p->n_coeffs;
      for (int j = 0; j < p->n_coeffs; j++)
        o->coeffs[j] = muonref_preset_coeff(p, j);
      return MUONREF_OK;
    }
  return muonref_fail(err, MUONREF_EOPTION, "Invalid ns_coeff_type: %s", s);
}

/* Paddle's name of o's coefficient list: a preset's, or NULL ("custom"). */
static const char *paddle_preset_name(const muonref_options *o)
{
  for (size_t i = 0; i < sizeof PADDLE_PRESETS / sizeof PADDLE_PRESETS[0]; i++)
    if (muonref_preset_holds(muonref_preset_find(PADDLE_PRESETS[i][1]), o))
      return PADDLE_PRESETS[i][0];
  return NULL;
}

/* Emerging-Optimizers' coefficient_type names (muon_utils.py @fd77292 _COEFFICIENT_SETS), each
 * presets.h's list of that name, run in the preset's order: get_coefficient_iterator's
 * repeat-last for polar_express, cans and deepseekv4, cycle for the others. */
static const char *const EMERGING_PRESETS[] = {"simple", "quintic", "polar_express", "cans", "aol", "deepseekv4",
                                               "cubic5"};

/* coefficient_type (MUONREF_KEY_COEFFICIENT_TYPE), with newton_schulz's messages at the step
 * (emerging.md 2: "custom", cubic5's fixed schedule, an unknown name). */
const char *muonref_case_coefficient_type_name(size_t i)
{
  return i < sizeof EMERGING_PRESETS / sizeof EMERGING_PRESETS[0] ? EMERGING_PRESETS[i] : NULL;
}

int muonref_case_coefficient_type_known(const char *name)
{
  for (size_t i = 0; name && muonref_case_coefficient_type_name(i); i++)
    if (!strcmp(name, muonref_case_coefficient_type_name(i)))
      return 1;
  return 0;
}

/* Whether profile p's release has preset s (muonref_profile.coefficient_types; NULL: all). */
static int release_has(const muonref_profile *p, const char *s)
{
  if (!p || !p->coefficient_types)
    return 1;
  for (size_t i = 0; p->coefficient_types[i]; i++)
    if (!strcmp(s, p->coefficient_types[i]))
      return 1;
  return 0;
}

static int set_coefficient_type(muonref_options *o, const muonref_profile *p, const muonref_option_key *k,
                                const json_t *v, const char *where, muonref_error *err)
{
  const char *s = json_string_value(v);
  if (!s)
    return bad(err, where, k->name, "a string");
  if (p && p->coefficient_type_refusal && !release_has(p, s)) { /* the port refuses it first, in its own words */
    char msg[MUONREF_ERROR_MESSAGE_MAX];
    muonref_check_fill(msg, sizeof msg, p->coefficient_type_refusal, s, 1);
    return muonref_fail(err, MUONREF_EOPTION, "%s", msg);
  }
  if (!strcmp(s, "custom")) /* Muon never passes custom_coefficient_sets */
    return muonref_fail(err, MUONREF_EOPTION,
                        "custom_coefficient_sets must be provided when coefficient_type is 'custom'.");
  if (!release_has(p, s)) /* a preset of a later release (muon_utils.py _COEFFICIENT_SETS of the tag) */
    return muonref_fail(err, MUONREF_EOPTION, "Invalid coefficient type: %s", s);
  for (size_t i = 0; i < sizeof EMERGING_PRESETS / sizeof EMERGING_PRESETS[0]; i++)
    if (!strcmp(s, EMERGING_PRESETS[i])) {
      muonref_preset_apply(muonref_preset_find(s), o);
      return MUONREF_OK;
    }
  return muonref_fail(err, MUONREF_EOPTION, "Invalid coefficient type: %s", s);
}

/* cubic5 is run for exactly 5 steps (checked once num_ns_steps is read too). */
static int check_cubic5(const muonref_options *o, muonref_error *err)
{
  if (!muonref_preset_holds(muonref_preset_find("cubic5"), o) || o->ns_steps == 5 || o->ns_steps < 1)
    return MUONREF_OK;
  return muonref_fail(err, MUONREF_EOPTION,
                      "cubic5 is a fixed 5-step schedule; got steps=%d. Use steps=5, or pass explicit custom "
                      "coefficients.",
                      o->ns_steps);
}

/* The coefficient_type whose list and order o holds, or NULL. */
static const char *emerging_preset_name(const muonref_options *o)
{
  for (size_t i = 0; i < sizeof EMERGING_PRESETS / sizeof EMERGING_PRESETS[0]; i++) {
    const muonref_preset *p = muonref_preset_find(EMERGING_PRESETS[i]);
    if (muonref_preset_holds(p, o) && o->coeff_order == p->order)
      return EMERGING_PRESETS[i];
  }
  return NULL;
}

/* A list of name patterns (MUONREF_KEY_PATTERNS): Paddle's muon_exclude_patterns (null: none),
 * keras' exclude_layers (`exclude_layers or []`). */
static int set_patterns(muonref_options *o, const muonref_option_key *k, const json_t *v, const char *where,
                        muonref_error *err)
{
  if (json_is_null(v)) { /* Paddle: None; keras: `exclude_layers or []` */
    o->n_exclude_patterns = 0;
    return MUONREF_OK;
  }
  if (!json_is_array(v) || json_array_size(v) > MUONREF_MAX_PATTERNS)
    return bad(err, where, k->name, "null or a list of at most 8 strings");
  for (size_t i = 0; i < json_array_size(v); i++) {
    const char *s = json_string_value(json_array_get(v, i));
    if (!s || strlen(s) >= MUONREF_PATTERN_LEN)
      return bad(err, where, k->name, "a list of strings of at most 63 bytes");
    snprintf(o->exclude_patterns[i], MUONREF_PATTERN_LEN, "%s", s);
  }
  o->n_exclude_patterns = (int)json_array_size(v);
  return MUONREF_OK;
}

/* Row block sizes (MUONREF_KEY_SPLIT_SIZES; spec/muon.md 7.6): null none, else a list of at most
 * MUONREF_MAX_SPLIT integers; their values (a size below 1, dion's list of one) are options
 * validation's to refuse, in the port's words. */
static int set_split_sizes(muonref_options *o, const muonref_option_key *k, const json_t *v, const char *where,
                           muonref_error *err)
{
  if (json_is_null(v)) {
    o->n_ns_split = 0;
    return MUONREF_OK;
  }
  if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > MUONREF_MAX_SPLIT)
    /* an empty list is not None: dion refuses it ("at least 2 block sizes"), which no field can say */
    return bad(err, where, k->name, "null or a list of 1 to 8 integers");
  for (size_t i = 0; i < json_array_size(v); i++) {
    const json_t *e = json_array_get(v, i);
    if (!json_is_integer(e) || json_integer_value(e) < INT_MIN || json_integer_value(e) > INT_MAX)
      return bad(err, where, k->name, "a list of integers");
    o->ns_split[i] = (int)json_integer_value(e);
  }
  o->n_ns_split = (int)json_array_size(v);
  return MUONREF_OK;
}

/* Paddle's grad_clip (MUONREF_KEY_PADDLE_GRAD_CLIP, profile.h): null, or one of three ClipGradBase
 * objects by class name, each setting its own field (the others 0: Paddle takes one object).  A negative
 * value is options validation's to refuse; a bound that is 0 in binary32 (Paddle zeroes every gradient,
 * or refuses max 0, where muonref's 0 is no clipping) or beyond it (an infinite bound) is not
 * expressible, nor a ClipGradByValue min other than -max (keras' symmetric clamp). */
static int set_paddle_grad_clip(muonref_options *o, const muonref_option_key *k, const json_t *v, const char *where,
                                muonref_error *err)
{
  static const char WHAT[] = "null or {\"class\": \"ClipGradByGlobalNorm\" or \"ClipGradByNorm\", \"clip_norm\": "
                             "a number} or {\"class\": \"ClipGradByValue\", \"max\": a number}";
  o->clip_grad_norm = o->clip_grad_norm_each = o->clip_grad_value = 0.0;
  if (json_is_null(v))
    return MUONREF_OK;
  const char *cls = json_string_value(json_object_get(v, "class"));
  if (!json_is_object(v) || json_object_size(v) != 2 || !cls)
    return bad(err, where, k->name, WHAT);
  int value = !strcmp(cls, "ClipGradByValue");
  double *to = value                                 ? &o->clip_grad_value
               : !strcmp(cls, "ClipGradByGlobalNorm") ? &o->clip_grad_norm
               : !strcmp(cls, "ClipGradByNorm")       ? &o->clip_grad_norm_each
                                                      : NULL;
  if (!to || !real_value(json_object_get(v, value ? "max" : "clip_norm"), to))
    return bad(err, where, k->name, WHAT);
  if (*to >= 0.0 && !((float)*to > 0.0f && isfinite((float)*to))) /* NaN and negatives: validation's */
    return bad(err, where, k->name, "a clip object whose bound is positive and finite in float32 (Paddle zeroes "
               "every gradient with 0, or refuses max 0; muonref's 0 is no clipping: not expressible)");
  if (to == &o->clip_grad_norm)
    o->clip_grad_form = MUONREF_CLIP_PADDLE;
  return MUONREF_OK;
}

/* The grad_clip object of o's clipping, null for none, "?" where Paddle has no one object for it. */
static json_t *paddle_grad_clip_json(const muonref_options *o)
{
  int n = (o->clip_grad_norm != 0.0) + (o->clip_grad_norm_each != 0.0) + (o->clip_grad_value != 0.0);
  if (n == 0)
    return json_null();
  if (n > 1 || (o->clip_grad_norm != 0.0 && o->clip_grad_form != MUONREF_CLIP_PADDLE))
    return json_string("?"); /* not expressible */
  if (o->clip_grad_value != 0.0)
    return json_pack("{s:s, s:o}", "class", "ClipGradByValue", "max", muonref_case_real_json(o->clip_grad_value));
  return json_pack("{s:s, s:o}", "class", o->clip_grad_norm != 0.0 ? "ClipGradByGlobalNorm" : "ClipGradByNorm",
                   "clip_norm", muonref_case_real_json(o->clip_grad_norm != 0.0 ? o->clip_grad_norm
                                                                                : o->clip_grad_norm_each));
}

/* A moment2_method value: the fields it sets (and no bias correction). */
typedef struct moment2_method {
  const char *name;
  muonref_moment2 moment2;
  muonref_eps_mode eps_mode;
  muonref_moment2_rescale rescale;
} moment2_method;

/* Emerging-Optimizers' moment2_method values (adaptive_muon.py @fd77292, 222-245; spec/muon.md 7.4). */
static const moment2_method MOMENT2_METHODS[] = {
  {"adamuon", MUONREF_MOMENT2_ELEMENT, MUONREF_EPS_ADD, MUONREF_MOMENT2_RESCALE_NONE},
  {"normuon", MUONREF_MOMENT2_LONGER, MUONREF_EPS_CLAMP, MUONREF_MOMENT2_RESCALE_NORM},
};

/* Emerging-Optimizers v0.2.0's (adaptive_muon.py @v0.2.0 _apply_moment2_normalization): normuon
 * `orth_grad * moment2.clamp_min(eps).rsqrt_()`, the norm not restored (fd77292 restores it). */
static const moment2_method MOMENT2_METHODS_V0_2[] = {
  {"adamuon", MUONREF_MOMENT2_ELEMENT, MUONREF_EPS_ADD, MUONREF_MOMENT2_RESCALE_NONE},
  {"normuon", MUONREF_MOMENT2_LONGER, MUONREF_EPS_CLAMP, MUONREF_MOMENT2_RESCALE_NONE},
};

/* The table of the key kind: v0.2.0's where v0_2, else fd77292's; its length into *n. */
static const moment2_method *moment2_methods(int v0_2, size_t *n)
{
  *n = v0_2 ? sizeof MOMENT2_METHODS_V0_2 / sizeof MOMENT2_METHODS_V0_2[0]
            : sizeof MOMENT2_METHODS / sizeof MOMENT2_METHODS[0];
  return v0_2 ? MOMENT2_METHODS_V0_2 : MOMENT2_METHODS;
}

int muonref_case_moment2_method_of(const char *name, int v0_2, muonref_options *o)
{
  size_t n;
  const moment2_method *t = moment2_methods(v0_2, &n);
  for (size_t m = 0; name && m < n; m++)
    if (!strcmp(name, t[m].name)) {
      o->moment2 = t[m].moment2, o->moment2_eps_mode = t[m].eps_mode, o->moment2_rescale = t[m].rescale;
      o->moment2_bias_correction = 0;
      return 1;
    }
  return 0;
}

int muonref_case_moment2_method(const char *name, muonref_options *o)
{
  return muonref_case_moment2_method_of(name, 0, o);
}

/* The method name of the moment2 fields of *o under the kind's table, or NULL. */
static const char *moment2_method_name(const muonref_options *o, int v0_2)
{
  size_t n;
  const moment2_method *t = moment2_methods(v0_2, &n);
  for (size_t m = 0; m < n; m++)
    if (o->moment2 == t[m].moment2 && o->moment2_eps_mode == t[m].eps_mode && o->moment2_rescale == t[m].rescale &&
        !o->moment2_bias_correction)
      return t[m].name;
  return NULL;
}

/* dion's name of its Muon algorithm for a group key `algorithm`: the class's
 * own (dion/muon.py Muon: "muon"; dion/normuon.py NorMuon: "normuon", its
 * `algorithm="normuon"` default and `assert group["algorithm"] ==
 * self._algo_name`), told by the catalogue. */
static const char *dion_muon_algorithm(const muonref_options *o)
{
  return o->catalogue == MUONREF_CATALOGUE_NORMUON ? "normuon" : "muon";
}

/* timm's algo (case.h) once a group's keys are read, so that betas, eps
 * and adjust_lr_fn count in whatever order they come: AdaMuon's fields
 * from them (timm/optim/muon.py @aa4b5850
 * _single_tensor_adamuon: `beta2 = betas[1]`, `denom = exp_avg_sq.sqrt()
 * .add_(eps)` or `(exp_avg_sq / bias_correction2).sqrt().add_(eps)`,
 * `update_adaptive / update_adaptive.norm().add_(eps)` where use_rms_norm,
 * get_adamuon_lr_scale(update_ortho.shape, ...) on the parameter's own
 * shape), and the two scaling functions each algo's step asserts on.
 * Idempotent: a schedule's step runs it again.  EOPTION as timm words it. */
int muonref_case_timm_algo(muonref_options *o, muonref_error *err)
{
  if (o->moment2 != MUONREF_MOMENT2_ELEMENT) {
    if (o->scale_mode == MUONREF_SCALE_RSQRT_COLS) /* get_lr_scale's `assert False` */
      return muonref_fail(err, MUONREF_EOPTION, "Invalid scaling function \"rsqrt_in\" for Muon");
    return MUONREF_OK;
  }
  if (o->scale_mode == MUONREF_SCALE_FAN_IN) /* get_adamuon_lr_scale's `assert False` */
    return muonref_fail(err, MUONREF_EOPTION, "Invalid scaling function \"original\" for AdaMuon");
  int rms = o->scale_mode == MUONREF_SCALE_RMS_ADAMW || o->scale_mode == MUONREF_SCALE_RMS_NUMEL;
  if (rms)
    o->scale_mode = MUONREF_SCALE_RMS_NUMEL;
  o->moment2_beta = o->adam_beta2;
  o->moment2_eps = o->ns_eps;
  o->moment2_eps_mode = MUONREF_EPS_ADD;
  o->moment2_bias_correction = !rms;
  o->moment2_rescale = rms ? MUONREF_MOMENT2_RESCALE_UNIT : MUONREF_MOMENT2_RESCALE_NONE;
  o->scale_shape = MUONREF_SCALE_SHAPE_LAST_TWO;
  return MUONREF_OK;
}

/* Whether o is what muonref_case_timm_algo makes of "adamuon" (its key can say it). */
static int timm_adamuon_holds(const muonref_options *o)
{
  muonref_options d = *o;
  if (d.scale_mode == MUONREF_SCALE_RMS_NUMEL)
    d.scale_mode = MUONREF_SCALE_RMS_ADAMW;
  return o->moment2 == MUONREF_MOMENT2_ELEMENT && muonref_case_timm_algo(&d, NULL) == MUONREF_OK &&
         d.scale_mode == o->scale_mode && d.moment2_beta == o->moment2_beta && d.moment2_eps == o->moment2_eps &&
         d.moment2_eps_mode == o->moment2_eps_mode && d.moment2_bias_correction == o->moment2_bias_correction &&
         d.moment2_rescale == o->moment2_rescale && d.scale_shape == o->scale_shape;
}

int muonref_case_has_key_kind(const muonref_profile *p, muonref_key_kind k)
{
  for (size_t i = 0; p && i < p->n_keys; i++)
    if (p->keys[i].kind == k)
      return 1;
  return 0;
}

void muonref_case_complete(const char *profile, muonref_options *o)
{
  muonref_options d = *o;
  if (muonref_case_has_key_kind(muonref_profile_get(profile), MUONREF_KEY_ALGO_TIMM) && muonref_case_timm_algo(&d, NULL) == MUONREF_OK)
    *o = d;
}

/* One member of an options object, read through the profile's key k. */
/* dion's use_polar_express (profile.h MUONREF_KEY_USE_POLAR_EXPRESS; dion/megabatch_base.py @0a059a4):
 * true polar_express, the preset polar_express_5 (dion/polar_express.py's five triples, repeat-last) on
 * X / (1.02 ||X|| + epsilon); false zeropower_via_newtonschulz5, the preset quintic on X / (||X|| +
 * epsilon).  Sets the list, its order and ns_safety; ns_steps stays (5, the profile's). */
static const muonref_preset *polar_express_preset(int on)
{
  return muonref_preset_find(on ? "polar_express_5" : "quintic");
}

static void polar_express_set(muonref_options *o, int on)
{
  const muonref_preset *p = polar_express_preset(on);
  muonref_preset_apply(p, o);
  o->ns_safety = muonref_preset_norm_safety(p);
}

/* Whether o runs what polar_express_set(o, on) gives: the preset's list and order, its safety. */
static int polar_express_holds(const muonref_options *o, int on)
{
  const muonref_preset *p = polar_express_preset(on);
  return muonref_preset_holds(p, o) && o->coeff_order == p->order && o->ns_safety == muonref_preset_norm_safety(p);
}

static int set_key(muonref_options *o, const muonref_profile *p, const muonref_option_key *k, const json_t *v,
                   const char *where, muonref_error *err)
{
  double x, y;
  int e;
  const char *s = json_string_value(v);
  switch (k->kind) {
  case MUONREF_KEY_REAL:
    return real_value(v, FIELD(o, k, double)) ? MUONREF_OK : bad(err, where, k->name, "a number or \"nan\"/\"inf\"/\"-inf\"");
  case MUONREF_KEY_BOOL:
  case MUONREF_KEY_BOOL_NOT:
    if (!json_is_boolean(v))
      return bad(err, where, k->name, "true or false");
    *FIELD(o, k, int) = json_is_true(v) != (k->kind == MUONREF_KEY_BOOL_NOT);
    return MUONREF_OK;
  case MUONREF_KEY_INT:
  case MUONREF_KEY_LONG: {
    if (!json_is_integer(v))
      return bad(err, where, k->name, "an integer");
    json_int_t n = json_integer_value(v);
    if (k->kind == MUONREF_KEY_LONG) {
      *FIELD(o, k, long) = (long)n;
      return MUONREF_OK;
    }
    if (n < INT_MIN || n > INT_MAX) /* never clamped: the catalogue message must show the value given */
      return bad(err, where, k->name, "an integer that fits a C int (-2147483648 to 2147483647)");
    *FIELD(o, k, int) = (int)n;
    return MUONREF_OK;
  }
  case MUONREF_KEY_BETAS:
  case MUONREF_KEY_BETAS_BY_BRANCH: /* by branch: as the group gives it (muonref_case_options sets use_muon first) */
    if (!json_is_array(v) || json_array_size(v) != 2 || !real_value(json_array_get(v, 0), &x) ||
        !real_value(json_array_get(v, 1), &y))
      return bad(err, where, k->name, "an array of two numbers");
    if (k->kind == MUONREF_KEY_BETAS_BY_BRANCH && o->use_muon != MUONREF_USE_MUON_FALSE)
      o->momentum = x, o->moment2_beta = y;
    if (k->kind == MUONREF_KEY_BETAS || o->use_muon != MUONREF_USE_MUON_TRUE)
      o->adam_beta1 = x, o->adam_beta2 = y;
    return MUONREF_OK;
  case MUONREF_KEY_EPS_BY_BRANCH:
    if (!real_value(v, &x))
      return bad(err, where, k->name, "a number or \"nan\"/\"inf\"/\"-inf\"");
    if (o->use_muon != MUONREF_USE_MUON_FALSE)
      o->moment2_eps = x;
    if (o->use_muon != MUONREF_USE_MUON_TRUE)
      o->adam_eps = x;
    return MUONREF_OK;
  case MUONREF_KEY_SCALE_MODE:
    if (!s)
      return bad(err, where, k->name, "a string");
    return muonref_scale_mode_parse(s, &o->scale_mode, err);
  case MUONREF_KEY_USE_MUON:
    if (json_is_null(v))
      o->use_muon = MUONREF_USE_MUON_AUTO;
    else if (json_is_boolean(v))
      o->use_muon = json_is_true(v) ? MUONREF_USE_MUON_TRUE : MUONREF_USE_MUON_FALSE;
    else
      return bad(err, where, k->name, "null, true or false");
    return MUONREF_OK;
  case MUONREF_KEY_COEFF3: {
    double c[3];
    if (!json_is_array(v))
      return bad(err, where, k->name, "an array of numbers");
    for (size_t i = 0; i < json_array_size(v); i++)
      if (!real_value(json_array_get(v, i), i < 3 ? &c[i] : &x))
        return bad(err, where, k->name, "an array of numbers");
    if (json_array_size(v) != 3) /* torch/optim/_muon.py _zeropower_via_newtonschulz */
      return muonref_fail(err, MUONREF_EOPTION, "Coefficients must be a tuple of exactly 3 values");
    o->n_coeffs = 1;
    o->coeffs[0] = (muonref_coeff){c[0], c[1], c[2]};
    return MUONREF_OK;
  }
  case MUONREF_KEY_ADJUST_LR:
    if (json_is_null(v) || (s && !strcmp(s, "original")))
      o->scale_mode = MUONREF_SCALE_FAN_IN;
    else if (s && !strcmp(s, "match_rms_adamw"))
      o->scale_mode = MUONREF_SCALE_RMS_ADAMW;
    else if (s) /* torch/optim/_muon.py Muon.__init__ */
      return muonref_fail(err, MUONREF_EOPTION, "Adjust learning rate function %s is not supported", s);
    else
      return bad(err, where, k->name, "null or a string");
    return MUONREF_OK;
  case MUONREF_KEY_COEFF_LIST:
    return set_coeff_list(o, k, v, where, err);
  case MUONREF_KEY_ADJUST_LR_TIMM:
    if (json_is_null(v))
      o->scale_mode = MUONREF_SCALE_NONE; /* falsy: scale 1.0 */
    else if (s && !strcmp(s, "original"))
      o->scale_mode = MUONREF_SCALE_FAN_IN;
    else if (s && !strcmp(s, "match_rms_adamw"))
      o->scale_mode = MUONREF_SCALE_RMS_ADAMW;
    else if (s && !strcmp(s, "rms_to_rms"))
      o->scale_mode = MUONREF_SCALE_RMS_TO_RMS;
    else if (s && !strcmp(s, "rsqrt_in")) /* AdaMuon's alone: muonref_case_timm_algo refuses it under "muon" */
      o->scale_mode = MUONREF_SCALE_RSQRT_COLS;
    else if (s) /* timm/optim/muon.py get_lr_scale: an assertion at the step */
      return muonref_fail(err, MUONREF_EOPTION, "Invalid scaling function \"%s\" for Muon", s);
    else
      return bad(err, where, k->name, "null or a string");
    return MUONREF_OK;
  case MUONREF_KEY_EPS_SHARED:
    if (!real_value(v, FIELD(o, k, double)))
      return bad(err, where, k->name, "a number or \"nan\"/\"inf\"/\"-inf\"");
    o->adam_eps = *FIELD(o, k, double); /* timm: `eps=group["eps"]` for the fallback too */
    return MUONREF_OK;
  case MUONREF_KEY_SCALE_MODE_EMERGING:
    if (s && !strcmp(s, "spectral"))
      o->scale_mode = MUONREF_SCALE_SQRT_MAX;
    else if (s && !strcmp(s, "unit_rms_norm"))
      o->scale_mode = MUONREF_SCALE_RMS_TO_RMS;
    else if (s && !strcmp(s, "shape_scaling"))
      o->scale_mode = MUONREF_SCALE_FAN_IN;
    else if (s) /* Emerging-Optimizers muon.py @fd77292 get_muon_scale_factor, at the step */
      return muonref_fail(err, MUONREF_EOPTION, "Invalid mode for Muon update scale factor: %s", s);
    else
      return bad(err, where, k->name, "a string");
    return MUONREF_OK;
  case MUONREF_KEY_ALGORITHM:
    if (s && !strcmp(s, dion_muon_algorithm(o)))
      o->use_muon = MUONREF_USE_MUON_TRUE;
    else if (s && !strcmp(s, "adamw"))
      o->use_muon = MUONREF_USE_MUON_FALSE;
    else if (s) /* dion/megabatch_base.py step: `raise ValueError(f"Unknown algorithm: {algo}")` */
      return muonref_fail(err, MUONREF_EOPTION, "Unknown algorithm: %s", s);
    else
      return bad(err, where, k->name, o->catalogue == MUONREF_CATALOGUE_NORMUON ? "\"normuon\" or \"adamw\""
                                                                              : "\"muon\" or \"adamw\"");
    return MUONREF_OK;
  case MUONREF_KEY_ADJUST_LR_DION:
    if (json_is_null(v))
      o->scale_mode = MUONREF_SCALE_NONE;
    else if (s && !strcmp(s, "spectral_norm"))
      o->scale_mode = MUONREF_SCALE_RMS_TO_RMS;
    else if (s && !strcmp(s, "rms_norm"))
      o->scale_mode = MUONREF_SCALE_RMS_ADAMW;
    else if (s) /* dion/muon.py Muon.__init__ */
      return muonref_fail(err, MUONREF_EOPTION,
                          "Invalid adjust_lr value: %s. Must be 'spectral_norm', 'rms_norm', or None.", s);
    else
      return bad(err, where, k->name, "null or a string");
    return MUONREF_OK;
  case MUONREF_KEY_NS_COEFFS_OPTAX:
    return set_ns_coeffs_optax(o, k, v, where, err);
  case MUONREF_KEY_CONSISTENT_RMS:
    return set_consistent_rms(o, k, v, where, err);
  case MUONREF_KEY_FLATTEN:
    if (!json_is_boolean(v))
      return bad(err, where, k->name, "true or false");
    o->conv_mode = json_is_true(v) ? MUONREF_CONV_FLATTEN : MUONREF_CONV_BATCHED;
    return MUONREF_OK;
  case MUONREF_KEY_NS_COEFF_TYPE: /* read with its sibling by muonref_case_options */
  case MUONREF_KEY_NS_COEFFS:
    return MUONREF_OK;
  case MUONREF_KEY_USE_POLAR_EXPRESS: /* dion.md 4: polar_express or zeropower_via_newtonschulz5 */
    if (!json_is_boolean(v))
      return bad(err, where, k->name, "true or false");
    polar_express_set(o, json_is_true(v));
    return MUONREF_OK;
  case MUONREF_KEY_MUON_VERSION: /* Paddle's _scaling_fn: 1, 2, anything else */
    if (!json_is_integer(v))
      return bad(err, where, k->name, "an integer");
    o->scale_mode = json_integer_value(v) == 1   ? MUONREF_SCALE_FAN_OUT
                    : json_integer_value(v) == 2 ? MUONREF_SCALE_RATIO_COLS
                                                 : MUONREF_SCALE_SQRT_MAX;
    return MUONREF_OK;
  case MUONREF_KEY_PATTERNS:
    return set_patterns(o, k, v, where, err);
  case MUONREF_KEY_SPLIT_SIZES:
    return set_split_sizes(o, k, v, where, err);
  case MUONREF_KEY_SPLIT_CONCAT: { /* Paddle's split_concat_func as the split it makes (spec/muon.md 7.6) */
    if (json_is_null(v)) {
      o->n_ns_split = 0;
      return MUONREF_OK;
    }
    const json_t *axis = json_object_get(v, "axis");
    if (!json_is_object(v) || json_object_size(v) != 2 || !json_is_integer(axis) ||
        (json_integer_value(axis) != 0 && json_integer_value(axis) != 1))
      return bad(err, where, k->name, "null or {\"axis\": 0 or 1, \"sizes\": [...]}");
    o->ns_split_mode = json_integer_value(axis) ? MUONREF_SPLIT_COLUMNS : MUONREF_SPLIT_ROWS;
    return set_split_sizes(o, k, json_object_get(v, "sizes"), where, err);
  }
  case MUONREF_KEY_PADDLE_GRAD_CLIP:
    return set_paddle_grad_clip(o, k, v, where, err);
  case MUONREF_KEY_SPLIT_QKV: /* Megatron's muon_split_qkv (spec/muon.md 7.6) */
    if (!json_is_boolean(v))
      return bad(err, where, k->name, "true or false");
    o->ns_split_mode = json_is_true(v) ? MUONREF_SPLIT_GROUPS : MUONREF_SPLIT_OFF;
    return MUONREF_OK;
  case MUONREF_KEY_CONV_MODE_TIMM:
    if (s && !strcmp(s, "flatten"))
      o->conv_mode = MUONREF_CONV_FLATTEN;
    else if (s && !strcmp(s, "batched"))
      o->conv_mode = MUONREF_CONV_SPATIAL;
    else if (s) /* timm/optim/muon.py @aa4b5850 Muon.__init__ */
      return muonref_fail(err, MUONREF_EOPTION, "Invalid conv_mode: %s", s);
    else
      return bad(err, where, k->name, "a string");
    return MUONREF_OK;
  case MUONREF_KEY_SCALE_EPS:
    if (!json_is_boolean(v))
      return bad(err, where, k->name, "true or false");
    o->eps_mode = json_is_true(v) ? MUONREF_EPS_ADD_SCALED : MUONREF_EPS_CLAMP;
    return MUONREF_OK;
  case MUONREF_KEY_USE_FALLBACK: /* applied after every other key (muonref_case_options) */
    return json_is_boolean(v) ? MUONREF_OK : bad(err, where, k->name, "true or false");
  case MUONREF_KEY_COEFFICIENT_TYPE:
    return set_coefficient_type(o, p, k, v, where, err);
  case MUONREF_KEY_USE_ADJUSTED_LR: /* pytorch_optimizer muon.py @7a076d2f get_adjusted_lr */
    if (!json_is_boolean(v))
      return bad(err, where, k->name, "true or false");
    o->scale_mode = json_is_true(v) ? MUONREF_SCALE_FAN_IN : MUONREF_SCALE_RMS_ADAMW;
    return MUONREF_OK;
  case MUONREF_KEY_DECAY_METHOD: /* the spellings of decay_method (core/options.c) are Emerging-Optimizers' */
    if ((e = muonref_option_field_enum_value(muonref_option_field_named("decay_method"), s)) >= 0)
      o->decay_method = (muonref_decay_method)e;
    else if (s) /* Emerging-Optimizers mixin.py @fd77292 _apply_weight_decay_inplace, at the step */
      return muonref_fail(err, MUONREF_EOPTION, "Invalid weight decay method: %s", s);
    else
      return bad(err, where, k->name, "a string");
    return MUONREF_OK;
  case MUONREF_KEY_PRECONDITIONING: /* the spellings of ns_precondition (core/options.c) are optax's */
    if ((e = muonref_option_field_enum_value(muonref_option_field_named("ns_precondition"), s)) >= 0)
      o->ns_precondition = (muonref_precondition)e;
    else if (s && !strcmp(s, "spectral"))
      return bad(err, where, k->name, "'frobenius', 'aol' or 'schatten' ('spectral' is not expressible)");
    else if (s) /* optax/contrib/_muon.py @2edbcbe2 orthogonalize_via_newton_schulz */
      return muonref_fail(err, MUONREF_EOPTION, "Unknown preconditioning %s", s);
    else
      return bad(err, where, k->name, "a string");
    return MUONREF_OK;
  case MUONREF_KEY_ALGO_TIMM: /* the fields algo brings are set by muonref_case_timm_algo, after every key */
    if (s && !strcmp(s, "muon"))
      o->moment2 = MUONREF_MOMENT2_NONE;
    else if (s && !strcmp(s, "adamuon"))
      o->moment2 = MUONREF_MOMENT2_ELEMENT;
    else if (s) /* timm/optim/muon.py @aa4b5850 Muon.__init__ */
      return muonref_fail(err, MUONREF_EOPTION, "Invalid algo: %s. Must be 'muon' or 'adamuon'", s);
    else
      return bad(err, where, k->name, "\"muon\" or \"adamuon\"");
    return MUONREF_OK;
  case MUONREF_KEY_WEIGHT_DECOUPLE: /* pytorch_optimizer base/optimizer.py @7a076d2f apply_weight_decay */
    if (!json_is_boolean(v))
      return bad(err, where, k->name, "true or false");
    o->decay_method = json_is_true(v) ? MUONREF_DECAY_DECOUPLED : MUONREF_DECAY_L2;
    o->adam_l2 = !json_is_true(v);
    return MUONREF_OK;
  case MUONREF_KEY_MOMENT2_METHOD:
  case MUONREF_KEY_MOMENT2_METHOD_V0_2:
    if (muonref_case_moment2_method_of(s, k->kind == MUONREF_KEY_MOMENT2_METHOD_V0_2, o))
      return MUONREF_OK;
    if (s && !strcmp(s, "namo")) /* upstream's third method: a scalar v of ||G||_F^2, no field */
      return bad(err, where, k->name, "\"adamuon\" or \"normuon\" (\"namo\" has no muonref field: "
                                      "spec/profiles/emerging_adaptive.md 5.3)");
    if (s) /* Emerging-Optimizers adaptive_muon.py @fd77292 _init_group, at the step */
      return muonref_fail(err, MUONREF_EOPTION, "Invalid second moment method: %s", s);
    return bad(err, where, k->name, "\"adamuon\" or \"normuon\"");
  case MUONREF_KEY_RMS_RATE:
    if (json_is_null(v)) { /* keras lr_adjust: `if self.rms_rate is None: return x` */
      o->scale_mode = MUONREF_SCALE_NONE, o->scale_extra = 1.0;
      return MUONREF_OK;
    }
    if (!real_value(v, &o->scale_extra))
      return bad(err, where, k->name, "null or a number");
    o->scale_mode = MUONREF_SCALE_SQRT_MAX;
    return MUONREF_OK;
  }
  return bad(err, where, k->name, "of a known kind");
}

muonref_key_branch muonref_case_group_branch(const json_t *options)
{
  const json_t *um = json_object_get(options, "use_muon");
  return json_is_boolean(um) ? (json_is_true(um) ? MUONREF_KEY_MUON_ONLY : MUONREF_KEY_ADAM_ONLY) : MUONREF_KEY_ANY;
}

int muonref_case_options(const json_t *j, const char *profile, muonref_options *out, const char *where,
                         muonref_error *err)
{
  const char *key;
  json_t *v;
  int st = muonref_profile_options(profile, out, err);
  if (st)
    return st;
  const muonref_profile *p = muonref_profile_get(profile);
  if (!json_is_object(j))
    return muonref_fail(err, MUONREF_EFORMAT, "%s: \"options\" must be an object", where);
  /* the group's branch first: an AdamW group may have defaults of its own
   * and takes only its branch's keys */
  muonref_key_branch branch = muonref_case_group_branch(j);
  if (branch == MUONREF_KEY_ADAM_ONLY && p->adam_defaults)
    *out = *p->adam_defaults;
  if (branch != MUONREF_KEY_ANY && muonref_case_has_key_kind(p, MUONREF_KEY_USE_MUON)) /* the branch before keys
                                                                                      that follow it (betas_by_branch) */
    out->use_muon = branch == MUONREF_KEY_MUON_ONLY ? MUONREF_USE_MUON_TRUE : MUONREF_USE_MUON_FALSE;
  json_object_foreach((json_t *)j, key, v) {
    size_t i = 0;
    while (i < p->n_keys && strcmp(key, p->keys[i].name))
      i++;
    if (i == p->n_keys)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: unknown option \"%s\" (profile %s)", where, key, profile);
    if (p->keys[i].branch != MUONREF_KEY_ANY && branch != MUONREF_KEY_ANY && p->keys[i].branch != branch)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: option \"%s\" belongs to %s groups only, this group has "
                          "use_muon %s (profile %s)", where, key,
                          p->keys[i].branch == MUONREF_KEY_MUON_ONLY ? "Muon" : "AdamW",
                          branch == MUONREF_KEY_MUON_ONLY ? "true" : "false", profile);
    if ((st = set_key(out, p, &p->keys[i], v, where, err)))
      return st;
  }
  for (size_t i = 0; i < p->n_keys; i++) /* timm: `if group.get("use_fallback", False)` before use_muon */
    if (p->keys[i].kind == MUONREF_KEY_USE_FALLBACK && json_is_true(json_object_get(j, p->keys[i].name)))
      out->use_muon = MUONREF_USE_MUON_FALSE;
  if (muonref_case_has_key_kind(p, MUONREF_KEY_ALGO_TIMM) && (st = muonref_case_timm_algo(out, err)))
    return st;
  if (muonref_case_has_key_kind(p, MUONREF_KEY_COEFFICIENT_TYPE) && (st = check_cubic5(out, err)))
    return st;
  for (size_t i = 0; i < p->n_keys; i++) /* Paddle: the preset name and its custom list together */
    if (p->keys[i].kind == MUONREF_KEY_NS_COEFF_TYPE)
      return set_paddle_coeffs(out, json_object_get(j, p->keys[i].name), json_object_get(j, "ns_coeffs"), where, err);
  return MUONREF_OK;
}

int muonref_case_key_applies(const muonref_option_key *k, muonref_use_muon use_muon)
{
  if (k->branch == MUONREF_KEY_MUON_ONLY)
    return use_muon != MUONREF_USE_MUON_FALSE;
  if (k->branch == MUONREF_KEY_ADAM_ONLY)
    return use_muon != MUONREF_USE_MUON_TRUE;
  return 1;
}

int muonref_case_step_options(const json_t *set, const char *profile, muonref_options *o, const char *where,
                              muonref_error *err)
{
  const char *key;
  json_t *v;
  const muonref_profile *p = muonref_profile_get(profile);
  if (!p)
    return muonref_fail(err, MUONREF_EFORMAT, "%s: unknown profile '%s'", where, profile);
  if (!json_is_object(set))
    return muonref_fail(err, MUONREF_EFORMAT, "%s must be an object of option values ({} when the group keeps its "
                        "options)", where);
  json_object_foreach((json_t *)set, key, v) {
    size_t i = 0;
    while (i < p->n_keys && strcmp(key, p->keys[i].name))
      i++;
    if (i == p->n_keys)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: unknown option \"%s\" (profile %s)", where, key, profile);
    if (!p->keys[i].schedulable) /* the record's "schedulable" (spec/profiles/profile.schema.json) */
      return muonref_fail(err, MUONREF_EFORMAT, "%s: option \"%s\" cannot be changed between steps (format 2 "
                          "allows the options setting lr, momentum, weight_decay and the AdamW betas)", where, key);
    int st = set_key(o, p, &p->keys[i], v, where, err);
    if (st)
      return st;
  }
  return muonref_case_has_key_kind(p, MUONREF_KEY_ALGO_TIMM) ? muonref_case_timm_algo(o, err) : MUONREF_OK; /* AdaMuon's beta2 follows betas */
}

static json_t *key_json(const muonref_options *o, const muonref_option_key *k)
{
  switch (k->kind) {
  case MUONREF_KEY_REAL: return muonref_case_real_json(*FIELD(o, k, const double));
  case MUONREF_KEY_BOOL: return json_boolean(*FIELD(o, k, const int));
  case MUONREF_KEY_BOOL_NOT: return json_boolean(!*FIELD(o, k, const int));
  case MUONREF_KEY_INT: return json_integer(*FIELD(o, k, const int));
  case MUONREF_KEY_LONG: return json_integer(*FIELD(o, k, const long));
  case MUONREF_KEY_BETAS: {
    json_t *b = json_array();
    json_array_append_new(b, muonref_case_real_json(o->adam_beta1));
    json_array_append_new(b, muonref_case_real_json(o->adam_beta2));
    return b;
  }
  case MUONREF_KEY_BETAS_BY_BRANCH: { /* an AdamW group's pair, else the Muon group's */
    int adam = o->use_muon == MUONREF_USE_MUON_FALSE;
    json_t *b = json_array();
    json_array_append_new(b, muonref_case_real_json(adam ? o->adam_beta1 : o->momentum));
    json_array_append_new(b, muonref_case_real_json(adam ? o->adam_beta2 : o->moment2_beta));
    return b;
  }
  case MUONREF_KEY_EPS_BY_BRANCH:
    return muonref_case_real_json(o->use_muon == MUONREF_USE_MUON_FALSE ? o->adam_eps : o->moment2_eps);
  case MUONREF_KEY_SCALE_MODE: {
    const char *sm = muonref_scale_mode_name(o->scale_mode);
    return json_string(sm ? sm : "?");
  }
  case MUONREF_KEY_USE_MUON:
    return o->use_muon == MUONREF_USE_MUON_AUTO ? json_null() : json_boolean(o->use_muon == MUONREF_USE_MUON_TRUE);
  case MUONREF_KEY_COEFF3: {
    json_t *c = json_array();
    json_array_append_new(c, muonref_case_real_json(o->coeffs[0].a));
    json_array_append_new(c, muonref_case_real_json(o->coeffs[0].b));
    json_array_append_new(c, muonref_case_real_json(o->coeffs[0].c));
    return c;
  }
  case MUONREF_KEY_ADJUST_LR:
    return o->scale_mode == MUONREF_SCALE_RMS_ADAMW ? json_string("match_rms_adamw")
           : o->scale_mode == MUONREF_SCALE_FAN_IN  ? json_null()
                                                    : json_string("?"); /* fan_out, none: not expressible */
  case MUONREF_KEY_COEFF_LIST: {
    json_t *l = json_array();
    for (int i = 0; i < o->n_coeffs; i++) {
      json_t *c = json_array();
      json_array_append_new(c, muonref_case_real_json(o->coeffs[i].a));
      json_array_append_new(c, muonref_case_real_json(o->coeffs[i].b));
      json_array_append_new(c, muonref_case_real_json(o->coeffs[i].c));
      json_array_append_new(l, c);
    }
    return l;
  }
  case MUONREF_KEY_ADJUST_LR_TIMM:
    switch (o->scale_mode) {
    case MUONREF_SCALE_FAN_IN: return json_string("original");
    case MUONREF_SCALE_RMS_ADAMW: return json_string("match_rms_adamw");
    case MUONREF_SCALE_RMS_NUMEL: /* AdaMuon's meaning (muonref_case_timm_algo) */
      return json_string(timm_adamuon_holds(o) ? "match_rms_adamw" : "?");
    case MUONREF_SCALE_RSQRT_COLS: return json_string(timm_adamuon_holds(o) ? "rsqrt_in" : "?");
    case MUONREF_SCALE_RMS_TO_RMS: return json_string("rms_to_rms");
    case MUONREF_SCALE_NONE: return json_null();
    default: return json_string("?"); /* fan_out: not expressible (the round trip refuses "?") */
    }
  case MUONREF_KEY_EPS_SHARED:
    return muonref_case_real_json(*FIELD(o, k, const double));
  case MUONREF_KEY_SCALE_MODE_EMERGING:
    switch (o->scale_mode) {
    case MUONREF_SCALE_SQRT_MAX: return json_string("spectral");
    case MUONREF_SCALE_RMS_TO_RMS: return json_string("unit_rms_norm");
    case MUONREF_SCALE_FAN_IN: return json_string("shape_scaling");
    default: return json_string("?"); /* not expressible (the round trip refuses "?") */
    }
  case MUONREF_KEY_ALGORITHM:
    return o->use_muon == MUONREF_USE_MUON_AUTO ? json_null() /* not expressible */
                                                : json_string(o->use_muon == MUONREF_USE_MUON_TRUE ? dion_muon_algorithm(o)
                                                                                                   : "adamw");
  case MUONREF_KEY_ADJUST_LR_DION:
    switch (o->scale_mode) {
    case MUONREF_SCALE_RMS_TO_RMS: return json_string("spectral_norm");
    case MUONREF_SCALE_RMS_ADAMW: return json_string("rms_norm");
    case MUONREF_SCALE_NONE: return json_null();
    default: return json_string("?"); /* fan_in, fan_out: not expressible (the round trip refuses "?") */
    }
  case MUONREF_KEY_NS_COEFFS_OPTAX: {
    json_t *l = json_array();
    for (int i = 0; i < o->n_coeffs; i++) {
      json_t *c = o->n_coeffs == 1 ? l : json_array(); /* one triple: (3,) */
      json_array_append_new(c, muonref_case_real_json(o->coeffs[i].a));
      json_array_append_new(c, muonref_case_real_json(o->coeffs[i].b));
      json_array_append_new(c, muonref_case_real_json(o->coeffs[i].c));
      if (c != l)
        json_array_append_new(l, c);
    }
    return l;
  }
  case MUONREF_KEY_CONSISTENT_RMS:
    if (o->scale_mode == MUONREF_SCALE_FAN_OUT && o->scale_extra == 1.0)
      return json_null();
    return o->scale_mode == MUONREF_SCALE_SQRT_MAX ? muonref_case_real_json(o->scale_extra)
                                                   : json_string("?"); /* not expressible (the round trip refuses it) */
  case MUONREF_KEY_FLATTEN:
    return o->conv_mode == MUONREF_CONV_FLATTEN ? json_true()
           : o->conv_mode == MUONREF_CONV_BATCHED ? json_false() : json_string("?"); /* not expressible */
  case MUONREF_KEY_NS_COEFF_TYPE: {
    const char *name = paddle_preset_name(o);
    return json_string(name ? name : "custom");
  }
  case MUONREF_KEY_NS_COEFFS: {
    if (paddle_preset_name(o))
      return json_null();
    json_t *l = json_array();
    for (int i = 0; i < o->n_coeffs; i++)
      json_array_append_new(l, json_pack("[o, o, o]", muonref_case_real_json(o->coeffs[i].a),
                                         muonref_case_real_json(o->coeffs[i].b), muonref_case_real_json(o->coeffs[i].c)));
    return l;
  }
  case MUONREF_KEY_USE_POLAR_EXPRESS: /* what polar_express_set gives for either value, else not expressible */
    return polar_express_holds(o, 1) ? json_true() : polar_express_holds(o, 0) ? json_false() : json_string("?");
  case MUONREF_KEY_MUON_VERSION:
    return o->scale_mode == MUONREF_SCALE_FAN_OUT      ? json_integer(1)
           : o->scale_mode == MUONREF_SCALE_RATIO_COLS ? json_integer(2)
           : o->scale_mode == MUONREF_SCALE_SQRT_MAX   ? json_integer(3)
                                                       : json_string("?"); /* not expressible */
  case MUONREF_KEY_PATTERNS: {
    if (o->n_exclude_patterns <= 0 && o->pattern_match == MUONREF_MATCH_SUBSTRING_CI)
      return json_null(); /* Paddle's default None; keras writes its `exclude_layers or []` */
    json_t *l = json_array();
    for (int i = 0; i < o->n_exclude_patterns && i < MUONREF_MAX_PATTERNS; i++)
      json_array_append_new(l, json_stringn(o->exclude_patterns[i], strnlen(o->exclude_patterns[i],
                                                                             MUONREF_PATTERN_LEN)));
    return l;
  }
  case MUONREF_KEY_SPLIT_SIZES: {
    if (o->n_ns_split <= 0)
      return json_null();
    json_t *l = json_array();
    for (int i = 0; i < o->n_ns_split && i < MUONREF_MAX_SPLIT; i++)
      json_array_append_new(l, json_integer(o->ns_split[i]));
    return l;
  }
  case MUONREF_KEY_SPLIT_CONCAT: {
    if (o->n_ns_split <= 0)
      return json_null();
    if (o->ns_split_mode != MUONREF_SPLIT_ROWS && o->ns_split_mode != MUONREF_SPLIT_COLUMNS)
      return json_string("?"); /* not expressible */
    json_t *l = json_array();
    for (int i = 0; i < o->n_ns_split && i < MUONREF_MAX_SPLIT; i++)
      json_array_append_new(l, json_integer(o->ns_split[i]));
    return json_pack("{s:i, s:o}", "axis", o->ns_split_mode == MUONREF_SPLIT_COLUMNS, "sizes", l);
  }
  case MUONREF_KEY_PADDLE_GRAD_CLIP:
    return paddle_grad_clip_json(o);
  case MUONREF_KEY_SPLIT_QKV:
    return o->ns_split_mode == MUONREF_SPLIT_GROUPS ? json_true()
           : o->ns_split_mode == MUONREF_SPLIT_OFF  ? json_false()
                                                    : json_string("?"); /* not expressible */
  case MUONREF_KEY_CONV_MODE_TIMM:
    return o->conv_mode == MUONREF_CONV_FLATTEN   ? json_string("flatten")
           : o->conv_mode == MUONREF_CONV_SPATIAL ? json_string("batched")
                                                  : json_string("?"); /* not expressible */
  case MUONREF_KEY_SCALE_EPS:
    return o->eps_mode == MUONREF_EPS_CLAMP        ? json_false()
           : o->eps_mode == MUONREF_EPS_ADD_SCALED ? json_true()
                                                   : json_string("?"); /* not expressible */
  case MUONREF_KEY_USE_FALLBACK:
    return json_false(); /* use_muon says it */
  case MUONREF_KEY_PRECONDITIONING: {
    const char *pn = muonref_precondition_name(o->ns_precondition);
    return json_string(pn ? pn : "?");
  }
  case MUONREF_KEY_COEFFICIENT_TYPE: {
    const char *cn = emerging_preset_name(o);
    return json_string(cn ? cn : "?");
  }
  case MUONREF_KEY_DECAY_METHOD: {
    const char *dn = muonref_decay_method_name(o->decay_method);
    return json_string(dn ? dn : "?");
  }
  case MUONREF_KEY_ALGO_TIMM:
    return json_string(o->moment2 == MUONREF_MOMENT2_NONE ? "muon" : timm_adamuon_holds(o) ? "adamuon" : "?");
  case MUONREF_KEY_WEIGHT_DECOUPLE:
    return o->decay_method == MUONREF_DECAY_DECOUPLED && !o->adam_l2 ? json_true()
           : o->decay_method == MUONREF_DECAY_L2 && o->adam_l2    ? json_false()
                                                                  : json_string("?"); /* not expressible */
  case MUONREF_KEY_MOMENT2_METHOD:
  case MUONREF_KEY_MOMENT2_METHOD_V0_2: {
    const char *mn = moment2_method_name(o, k->kind == MUONREF_KEY_MOMENT2_METHOD_V0_2);
    return json_string(mn ? mn : "?"); /* "?": not expressible */
  }
  case MUONREF_KEY_USE_ADJUSTED_LR:
    return o->scale_mode == MUONREF_SCALE_FAN_IN       ? json_true()
           : o->scale_mode == MUONREF_SCALE_RMS_ADAMW ? json_false()
                                                      : json_string("?"); /* not expressible */
  case MUONREF_KEY_RMS_RATE:
    if (o->scale_mode == MUONREF_SCALE_SQRT_MAX)
      return muonref_case_real_json(o->scale_extra);
    return o->scale_mode == MUONREF_SCALE_NONE && o->scale_extra == 1.0 ? json_null()
                                                                          : json_string("?"); /* not expressible */
  }
  return json_null();
}

json_t *muonref_case_key_json(const muonref_options *o, const muonref_option_key *k) { return key_json(o, k); }

/* Whether key k of profile p holds its default in o (the group's branch's
 * defaults: an AdamW group's adam_defaults where the profile has them). */
static int key_at_default(const muonref_profile *p, const muonref_options *o, const muonref_option_key *k)
{
  muonref_options d;
  if (muonref_profile_options(p->name, &d, NULL))
    return 0;
  if (o->use_muon == MUONREF_USE_MUON_FALSE && p->adam_defaults)
    d = *p->adam_defaults;
  json_t *a = key_json(o, k), *b = key_json(&d, k);
  int same = a && b && json_equal(a, b);
  json_decref(a), json_decref(b);
  return same;
}

size_t muonref_case_shadowing_key(const muonref_option_key *keys, size_t n, const muonref_option_key *k)
{
  for (size_t i = 0; i < n; i++)
    if (&keys[i] != k && keys[i].offset == k->offset && keys[i].kind == k->kind && !keys[i].init &&
        !keys[i].branch_default && (keys[i].branch == MUONREF_KEY_ANY || keys[i].branch == k->branch))
      return i;
  return n;
}

/* Whether key i of p is written for a group of o's branch: a branch default only where branch_defaults
 * is set, the key it shadows then not. */
static int key_written(const muonref_profile *p, size_t i, const muonref_options *o, int branch_defaults)
{
  const muonref_option_key *k = &p->keys[i];
  if (!muonref_case_key_applies(k, o->use_muon) || (k->optional && key_at_default(p, o, k)))
    return 0;
  if (k->branch_default)
    return branch_defaults && o->use_muon != MUONREF_USE_MUON_AUTO;
  for (size_t d = 0; branch_defaults && d < p->n_keys; d++) /* shadowed here by its branch default */
    if (p->keys[d].branch_default && muonref_case_key_applies(&p->keys[d], o->use_muon) &&
        o->use_muon != MUONREF_USE_MUON_AUTO && muonref_case_shadowing_key(p->keys, p->n_keys, &p->keys[d]) == i)
      return 0;
  return 1;
}

json_t *muonref_case_options_json_as(const muonref_options *o, const char *profile, int branch_defaults)
{
  const muonref_profile *p = muonref_profile_get(profile);
  json_t *j = json_object();
  for (size_t i = 0; p && i < p->n_keys; i++)
    if (key_written(p, i, o, branch_defaults))
      json_object_set_new(j, p->keys[i].name, key_json(o, &p->keys[i]));
  return j;
}

json_t *muonref_case_options_json(const muonref_options *o, const char *profile)
{
  return muonref_case_options_json_as(o, profile, 0);
}

int muonref_case_grad(const json_t *j, size_t numel, muonref_tensor *t, muonref_grad *g, const char *where,
                      muonref_error *err)
{
  memset(t, 0, sizeof *t);
  *g = (muonref_grad){NULL, MUONREF_DENSE, MUONREF_FLOAT32};
  if (json_is_null(j))
    return MUONREF_OK;
  const char *layout = json_string_value(json_object_get(j, "layout"));
  const char *dtype = json_string_value(json_object_get(j, "dtype"));
  if (dtype && !strcmp(dtype, "c64")) { /* a complex gradient: only its kind matters */
    muonref_shape s = {1, {numel}};
    int st = muonref_tensor_alloc(t, MUONREF_TENSOR_F32, &s, err);
    g->data = t->f;
    g->dtype = MUONREF_COMPLEX64;
    return st;
  }
  int st = muonref_tensor_from_json(t, j, where, err);
  if (st)
    return st;
  if (t->dtype == MUONREF_TENSOR_F64 || t->numel != numel) { /* bf16 values are exact binary32 values */
    muonref_tensor_free(t);
    return muonref_fail(err, MUONREF_EFORMAT, "%s: a gradient must be an f32 or bf16 tensor of %zu elements", where,
                        numel);
  }
  g->data = t->f;
  if (layout && !strcmp(layout, "sparse"))
    g->layout = MUONREF_SPARSE;
  return MUONREF_OK;
}

json_t *muonref_case_tensor_f32_json(const float *b, const muonref_shape *shape)
{
  muonref_tensor t;
  if (muonref_tensor_alloc(&t, MUONREF_TENSOR_F32, shape, NULL))
    return NULL;
  memcpy(t.f, b, t.numel * sizeof(float));
  json_t *j = muonref_tensor_to_json(&t, 0);
  muonref_tensor_free(&t);
  return j;
}

json_t *muonref_case_state_json(const muonref_param_state *st, const muonref_shape *shape,
                                const muonref_shape *m2shape)
{
  if (!st->initialized)
    return json_null();
  json_t *j = json_object();
  json_object_set_new(j, "step", json_integer(st->step));
  if (st->use_muon) {
    json_object_set_new(j, "momentum_buffer", muonref_case_tensor_f32_json(st->momentum_buffer, shape));
    if (st->moment2 && st->moment2_numel && m2shape && m2shape->ndim)
      json_object_set_new(j, "moment2", muonref_case_tensor_f32_json(st->moment2, m2shape));
  } else {
    json_object_set_new(j, "exp_avg", muonref_case_tensor_f32_json(st->exp_avg, shape));
    json_object_set_new(j, "exp_avg_sq", muonref_case_tensor_f32_json(st->exp_avg_sq, shape));
  }
  if (st->grad_accum) /* spec/muon.md 3.3, 8.2: both branches */
    json_object_set_new(j, "grad_accum", muonref_case_tensor_f32_json(st->grad_accum, shape));
  if (st->ema_average)
    json_object_set_new(j, "ema_average", muonref_case_tensor_f32_json(st->ema_average, shape));
  return j;
}

const char *const muonref_case_state_buffers[] = {"momentum_buffer", "exp_avg", "exp_avg_sq", "moment2", "grad_accum",
                                                  "ema_average", "master", NULL};
const char *const muonref_case_branch_buffers[] = {"momentum_buffer", "exp_avg", "exp_avg_sq", "moment2", NULL};

int muonref_case_has_flag(const json_t *test, const char *flag)
{
  const json_t *f = json_object_get(test, "flags");
  for (size_t i = 0; i < json_array_size(f); i++)
    if (json_is_string(json_array_get(f, i)) && !strcmp(json_string_value(json_array_get(f, i)), flag))
      return 1;
  return 0;
}
