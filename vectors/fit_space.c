/* muonref: the option space of the judge's fit (see fit_space.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../fast/faults.h"
#include "case.h"
#include "fit_space.h"
#include "muonref/bf16.h"
#include "muonref/presets.h"
#include "muonref/profile.h"

/* How a field's value is read and written. */
enum { F_REAL, F_INT, F_LONG, F_BOOL, F_ENUM, F_COEFFS };

#define ENUM_NAMER(fn, type) \
  static const char *fn##_i(int v) { return muonref_##fn##_name((type)v); }
ENUM_NAMER(coeff_order, muonref_coeff_order)
ENUM_NAMER(eps_mode, muonref_eps_mode)
ENUM_NAMER(norm_format, muonref_norm_format)
ENUM_NAMER(momentum_form, muonref_momentum_form)
ENUM_NAMER(scale_mode, muonref_scale_mode)
ENUM_NAMER(scale_shape, muonref_scale_shape)
ENUM_NAMER(scale_format, muonref_scale_format)
ENUM_NAMER(conv_mode, muonref_conv_mode)
ENUM_NAMER(adam_eps_mode, muonref_adam_eps_mode)
ENUM_NAMER(adam_variant, muonref_adam_variant)
ENUM_NAMER(route_rule, muonref_route_rule)
ENUM_NAMER(missing_grad, muonref_missing_grad)
ENUM_NAMER(grad_after, muonref_grad_after)
ENUM_NAMER(moment2, muonref_moment2)
ENUM_NAMER(moment2_rescale, muonref_moment2_rescale)

/* The fields a port's behaviour can differ in (spec/muon.md section 1
 * names them; options.h defines each), with what they touch.  Left out:
 * ns_format (the results file says it), bf16_order (every order is
 * accepted; the fit runs each), catalogue, exclude patterns, pattern_match
 * and all_missing_error (error cases, which carry no diagnosis), use_muon
 * (every case gives it). */
typedef struct field {
  const char *name;
  size_t offset, size;
  int kind;
  unsigned touches;
  const char *(*enum_name)(int);
  /* common alternatives the spec lists beyond the profiles' values
   * (spec/vectors.md 7), NAN-terminated */
  double extra[8];
} field;

#define OFF(f) offsetof(muonref_options, f)
#define SZ(f) sizeof(((muonref_options *)0)->f)
#define NSM (MUONREF_FIT_NS | MUONREF_FIT_MUON)
#define MA (MUONREF_FIT_MUON | MUONREF_FIT_ADAM)
static const field FIELDS[] = {
  {"coefficients", OFF(n_coeffs), OFF(coeff_order) - OFF(n_coeffs), F_COEFFS, NSM, NULL, {NAN}},
  {"coeff_order", OFF(coeff_order), SZ(coeff_order), F_ENUM, NSM, coeff_order_i, {NAN}},
  {"ns_steps", OFF(ns_steps), SZ(ns_steps), F_INT, NSM, NULL, {4, 5, 6, NAN}},
  {"ns_eps", OFF(ns_eps), SZ(ns_eps), F_REAL, NSM, NULL, {1e-7, 1e-8, 1e-15, 0.0, NAN}},
  {"eps_mode", OFF(eps_mode), SZ(eps_mode), F_ENUM, NSM, eps_mode_i, {NAN}},
  {"ns_safety", OFF(ns_safety), SZ(ns_safety), F_REAL, NSM, NULL, {1.0, 1.02, NAN}},
  {"norm_format", OFF(norm_format), SZ(norm_format), F_ENUM, NSM, norm_format_i, {NAN}},
  {"lr", OFF(lr), SZ(lr), F_REAL, MA, NULL, {0.02, 0.01, 1e-3, 3e-4, 0.05, NAN}},
  {"momentum", OFF(momentum), SZ(momentum), F_REAL, MUONREF_FIT_MUON, NULL, {0.9, 0.95, 0.98, 0.99, NAN}},
  {"nesterov", OFF(nesterov), SZ(nesterov), F_BOOL, MA, NULL, {0, 1, NAN}},
  {"weight_decay", OFF(weight_decay), SZ(weight_decay), F_REAL, MA, NULL, {0.0, 0.01, 0.1, NAN}},
  {"momentum_form", OFF(momentum_form), SZ(momentum_form), F_ENUM, MUONREF_FIT_MUON, momentum_form_i, {NAN}},
  {"scale_mode", OFF(scale_mode), SZ(scale_mode), F_ENUM, MUONREF_FIT_MUON, scale_mode_i, {NAN}},
  {"scale_extra", OFF(scale_extra), SZ(scale_extra), F_REAL, MUONREF_FIT_MUON, NULL, {0.2, 1.0, NAN}},
  {"scale_shape", OFF(scale_shape), SZ(scale_shape), F_ENUM, MUONREF_FIT_MUON, scale_shape_i, {NAN}},
  {"scale_format", OFF(scale_format), SZ(scale_format), F_ENUM, MUONREF_FIT_MUON, scale_format_i, {NAN}},
  {"conv_mode", OFF(conv_mode), SZ(conv_mode), F_ENUM, MUONREF_FIT_MUON, conv_mode_i, {NAN}},
  {"momentum_bias_correction", OFF(momentum_bias_correction), SZ(momentum_bias_correction), F_BOOL,
   MUONREF_FIT_MUON, NULL, {0, 1, NAN}},
  {"adam_beta1", OFF(adam_beta1), SZ(adam_beta1), F_REAL, MUONREF_FIT_ADAM, NULL, {0.9, NAN}},
  {"adam_beta2", OFF(adam_beta2), SZ(adam_beta2), F_REAL, MUONREF_FIT_ADAM, NULL, {0.95, 0.999, NAN}},
  {"adam_eps", OFF(adam_eps), SZ(adam_eps), F_REAL, MUONREF_FIT_ADAM, NULL, {1e-8, NAN}},
  {"adam_lr_ratio", OFF(adam_lr_ratio), SZ(adam_lr_ratio), F_REAL, MUONREF_FIT_ADAM, NULL, {1.0, NAN}},
  {"adam_eps_mode", OFF(adam_eps_mode), SZ(adam_eps_mode), F_ENUM, MUONREF_FIT_ADAM, adam_eps_mode_i, {NAN}},
  {"adam_variant", OFF(adam_variant), SZ(adam_variant), F_ENUM, MUONREF_FIT_ADAM, adam_variant_i, {NAN}},
  {"adam_weight_decay", OFF(adam_weight_decay), SZ(adam_weight_decay), F_REAL, MUONREF_FIT_ADAM, NULL, {NAN}},
  {"adam_decay_own", OFF(adam_decay_own), SZ(adam_decay_own), F_BOOL, MUONREF_FIT_ADAM, NULL, {0, 1, NAN}},
  {"adam_decay_muon_lr", OFF(adam_decay_muon_lr), SZ(adam_decay_muon_lr), F_BOOL, MUONREF_FIT_ADAM, NULL, {0, 1, NAN}},
  {"adam_step_global", OFF(adam_step_global), SZ(adam_step_global), F_BOOL, MUONREF_FIT_ADAM, NULL, {0, 1, NAN}},
  {"adam_bias_fp32", OFF(adam_bias_fp32), SZ(adam_bias_fp32), F_BOOL, MUONREF_FIT_ADAM, NULL, {0, 1, NAN}},
  {"adam_dim_threshold", OFF(adam_dim_threshold), SZ(adam_dim_threshold), F_LONG, MUONREF_FIT_STEP, NULL, {NAN}},
  {"route_rule", OFF(route_rule), SZ(route_rule), F_ENUM, MUONREF_FIT_STEP, route_rule_i, {NAN}},
  {"missing_grad", OFF(missing_grad), SZ(missing_grad), F_ENUM, MUONREF_FIT_STEP, missing_grad_i, {NAN}},
  {"grad_after_step", OFF(grad_after_step), SZ(grad_after_step), F_ENUM, MUONREF_FIT_STEP, grad_after_i, {NAN}},
  {"clip_grad_norm", OFF(clip_grad_norm), SZ(clip_grad_norm), F_REAL, MUONREF_FIT_STEP, NULL, {0.0, 1.0, NAN}},
  {"exclude_embeddings", OFF(exclude_embeddings), SZ(exclude_embeddings), F_BOOL, MUONREF_FIT_STEP, NULL, {0, 1, NAN}},
  /* the second moment of the Newton-Schulz output and cautious decay (spec/muon.md 7.4, 4.1) */
  {"moment2", OFF(moment2), SZ(moment2), F_ENUM, MUONREF_FIT_MUON, moment2_i, {NAN}},
  {"moment2_beta", OFF(moment2_beta), SZ(moment2_beta), F_REAL, MUONREF_FIT_MUON, NULL, {0.95, NAN}},
  {"moment2_eps", OFF(moment2_eps), SZ(moment2_eps), F_REAL, MUONREF_FIT_MUON, NULL, {1e-8, NAN}},
  {"moment2_eps_mode", OFF(moment2_eps_mode), SZ(moment2_eps_mode), F_ENUM, MUONREF_FIT_MUON, eps_mode_i, {NAN}},
  {"moment2_bias_correction", OFF(moment2_bias_correction), SZ(moment2_bias_correction), F_BOOL, MUONREF_FIT_MUON,
   NULL, {0, 1, NAN}},
  {"moment2_rescale", OFF(moment2_rescale), SZ(moment2_rescale), F_ENUM, MUONREF_FIT_MUON, moment2_rescale_i, {NAN}},
  {"cautious_wd", OFF(cautious_wd), SZ(cautious_wd), F_BOOL, MA, NULL, {0, 1, NAN}},
};
#define N_FIELDS (sizeof FIELDS / sizeof FIELDS[0])

static double get_num(const muonref_options *o, const field *f)
{
  const char *p = (const char *)o + f->offset;
  switch (f->kind) {
  case F_REAL: return *(const double *)p;
  case F_LONG: return (double)*(const long *)p;
  default: return (double)*(const int *)p; /* INT, BOOL and the enums are int-sized */
  }
}

static void set_num(muonref_options *o, const field *f, double v)
{
  char *p = (char *)o + f->offset;
  switch (f->kind) {
  case F_REAL: *(double *)p = v; break;
  case F_LONG: *(long *)p = (long)v; break;
  default: *(int *)p = (int)v; break;
  }
}

static int same_coeffs(const muonref_options *a, const muonref_options *b)
{
  if (a->n_coeffs != b->n_coeffs)
    return 0;
  for (int k = 0; k < a->n_coeffs; k++)
    if (a->coeffs[k].a != b->coeffs[k].a || a->coeffs[k].b != b->coeffs[k].b || a->coeffs[k].c != b->coeffs[k].c)
      return 0;
  return 1;
}

static int same_value(const muonref_options *a, const muonref_options *b, const field *f)
{
  return f->kind == F_COEFFS ? same_coeffs(a, b) : get_num(a, f) == get_num(b, f);
}

/* A growing array of changes. */
typedef struct list {
  muonref_fit_change *c;
  size_t n, cap;
} list;

static void push(list *l, const muonref_fit_change *c)
{
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 256;
    muonref_fit_change *g = realloc(l->c, cap * sizeof *g);
    if (!g)
      return;
    l->c = g, l->cap = cap;
  }
  l->c[l->n++] = *c;
}

/* Adds the change of field fi to *v unless the base has that value or the
 * list has it already. */
static void add_value(list *l, const muonref_options *base, size_t fi, const muonref_options *v, size_t first)
{
  const field *f = &FIELDS[fi];
  if (same_value(base, v, f))
    return;
  for (size_t k = first; k < l->n; k++)
    if (l->c[k].field == (int)fi && same_value(&l->c[k].value, v, f))
      return;
  muonref_fit_change c = {0};
  c.fault = 0, c.field = (int)fi, c.value = *v;
  push(l, &c);
}

/* The profile's keys that set bytes of field f. */
static int field_keyed(const muonref_profile *p, const field *f)
{
  for (size_t k = 0; p && k < p->n_keys; k++)
    if (p->keys[k].offset >= f->offset && p->keys[k].offset < f->offset + f->size)
      return 1;
  return 0;
}

size_t muonref_fit_space(const char *profile, muonref_fit_change **out)
{
  list l = {0};
  muonref_options base;
  const muonref_profile *prof = muonref_profile_get(profile);
  *out = NULL;
  if (!prof)
    return 0;
  base = *prof->defaults;
  for (int f = 1; f < MUONREF_FAULT_COUNT; f++) {
    muonref_fit_change c = {0};
    c.fault = f, c.field = -1;
    push(&l, &c);
  }
  for (size_t fi = 0; fi < N_FIELDS; fi++) {
    const field *f = &FIELDS[fi];
    size_t first = l.n;
    muonref_options v = base;
    for (size_t p = 0; p < muonref_profile_count(); p++) { /* the values the profiles use */
      const muonref_profile *other = muonref_profile_at(p);
      muonref_options o;
      if (!other)
        continue;
      o = *other->defaults;
      if (f->kind == F_COEFFS) {
        v = base;
        v.n_coeffs = o.n_coeffs;
        memcpy(v.coeffs, o.coeffs, sizeof v.coeffs);
      } else {
        set_num(&v, f, get_num(&o, f));
      }
      add_value(&l, &base, fi, &v, first);
    }
    if (f->kind == F_ENUM) /* every named value */
      for (int e = 0; f->enum_name(e); e++)
        set_num(&v, f, e), add_value(&l, &base, fi, &v, first);
    for (int e = 0; f->kind != F_COEFFS && !isnan(f->extra[e]); e++)
      set_num(&v, f, f->extra[e]), add_value(&l, &base, fi, &v, first);
    if (f->kind == F_INT) /* a step count one off */
      for (int d = -1; d <= 1; d += 2)
        set_num(&v, f, get_num(&base, f) + d), add_value(&l, &base, fi, &v, first);
    if (f->kind == F_COEFFS) { /* every preset, and each list (the profile's own too) rounded to bf16 */
      for (size_t p = 0; p <= muonref_preset_count(); p++) {
        v = base;
        if (p < muonref_preset_count())
          muonref_preset_apply(muonref_preset_at(p), &v), v.coeff_order = base.coeff_order;
        add_value(&l, &base, fi, &v, first);
        for (int k = 0; k < v.n_coeffs; k++) {
          v.coeffs[k].a = muonref_bf16_round((float)v.coeffs[k].a);
          v.coeffs[k].b = muonref_bf16_round((float)v.coeffs[k].b);
          v.coeffs[k].c = muonref_bf16_round((float)v.coeffs[k].c);
        }
        add_value(&l, &base, fi, &v, first);
      }
    }
    size_t end = l.n;
    for (size_t k = first; field_keyed(prof, f) && k < end; k++) { /* the same values as the port's default */
      muonref_fit_change c = l.c[k];
      c.only_default = 1;
      if (!prof->adam_defaults) {
        push(&l, &c);
        continue;
      }
      /* a profile whose AdamW groups have defaults of their own: each branch's default apart */
      muonref_options adam = *prof->adam_defaults;
      for (c.branch = 1; c.branch <= 2; c.branch++)
        if (!same_value(c.branch == 1 ? &base : &adam, &c.value, f))
          push(&l, &c);
    }
    /* the default changes first: on a case that gives no option the two
     * kinds give the same result, and the narrower explanation is named */
    size_t n_val = end - first, n_def = l.n - end;
    muonref_fit_change *tmp = malloc((n_val ? n_val : 1) * sizeof *tmp);
    if (tmp && n_def) {
      memcpy(tmp, l.c + first, n_val * sizeof *tmp);
      memmove(l.c + first, l.c + end, n_def * sizeof *tmp);
      memcpy(l.c + first + n_def, tmp, n_val * sizeof *tmp);
    }
    free(tmp);
  }
  *out = l.c;
  return l.n;
}

/* Whether the options object `given` names one of the profile's keys of
 * field f. */
static int given_has(const json_t *given, const muonref_profile *p, const field *f)
{
  for (size_t k = 0; given && p && k < p->n_keys; k++)
    if (p->keys[k].offset >= f->offset && p->keys[k].offset < f->offset + f->size &&
        json_object_get(given, p->keys[k].name))
      return 1;
  return 0;
}

void muonref_fit_apply(const muonref_fit_change *c, const json_t *given, const char *profile, muonref_options *o)
{
  if (c->fault > 0) {
    muonref_fault_options(c->fault, o);
    return;
  }
  const field *f = &FIELDS[c->field];
  if (c->only_default && given_has(given, muonref_profile_get(profile), f))
    return;
  if ((c->branch == 1 && o->use_muon == MUONREF_USE_MUON_FALSE) ||
      (c->branch == 2 && o->use_muon != MUONREF_USE_MUON_FALSE))
    return;
  memcpy((char *)o + f->offset, (const char *)&c->value + f->offset, f->size);
}

int muonref_fit_applies(const muonref_fit_change *c, const json_t *test, const char *kind, const char *profile)
{
  if (c->fault > 0 || !c->only_default || strcmp(kind, "step"))
    return 1;
  const muonref_profile *p = muonref_profile_get(profile);
  const json_t *gs = json_object_get(test, "groups");
  for (size_t g = 0; g < json_array_size(gs); g++)
    if (!given_has(json_object_get(json_array_get(gs, g), "options"), p, &FIELDS[c->field]))
      return 1;
  return 0;
}

unsigned muonref_fit_touches(const muonref_fit_change *c)
{
  return c->fault > 0 ? MUONREF_FIT_ALL : FIELDS[c->field].touches;
}

int muonref_fit_option_only(const muonref_fit_change *c, const char *profile)
{
  if (c->fault <= 0)
    return 1;
  muonref_options a, b;
  if (muonref_profile_options(profile, &a, NULL))
    return 0;
  b = a;
  muonref_fault_options(c->fault, &b);
  return memcmp(&a, &b, sizeof a) != 0;
}

/* The shortest %g spelling of x that reads back as x, the exponent without
 * leading zeros ("1e-7"). */
static void real_text(double x, char *buf, size_t n)
{
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, n, "%.*g", p, x);
    if (strtod(buf, NULL) == x)
      break;
  }
  char *e = strchr(buf, 'e');
  if (e && (e[1] == '-' || e[1] == '+')) {
    char *d = e + 2, *z = d;
    while (*z == '0' && z[1])
      z++;
    memmove(d, z, strlen(z) + 1);
    if (e[1] == '+')
      memmove(e + 1, e + 2, strlen(e + 2) + 1);
  }
}

/* A JSON option value in a port's spelling, reals as real_text. */
static void json_text(const json_t *j, char *buf, size_t n)
{
  if (json_is_real(j)) {
    real_text(json_real_value(j), buf, n);
  } else if (json_is_array(j)) {
    size_t used = (size_t)snprintf(buf, n, "[");
    for (size_t i = 0; i < json_array_size(j) && used < n; i++) {
      if (i)
        used += (size_t)snprintf(buf + used, n - used, ", ");
      if (used < n)
        json_text(json_array_get(j, i), buf + used, n - used);
      used = strlen(buf);
    }
    if (used < n)
      snprintf(buf + used, n - used, "]");
  } else {
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(buf, n, "%s", s ? s : "?");
    free(s);
  }
}

/* The value of field f in o, in the spec's spelling. */
static void value_text(const muonref_options *o, const field *f, char *buf, size_t n)
{
  switch (f->kind) {
  case F_REAL: real_text(get_num(o, f), buf, n); return;
  case F_BOOL: snprintf(buf, n, "%s", get_num(o, f) != 0 ? "true" : "false"); return;
  case F_ENUM: {
    const char *name = f->enum_name((int)get_num(o, f));
    snprintf(buf, n, "%s", name ? name : "?");
    return;
  }
  case F_COEFFS:
    for (size_t p = 0; p < muonref_preset_count(); p++) {
      muonref_options v = *o;
      muonref_preset_apply(muonref_preset_at(p), &v);
      if (same_coeffs(&v, o)) {
        snprintf(buf, n, "%s", muonref_preset_at(p)->name);
        return;
      }
      for (int k = 0; k < v.n_coeffs; k++) {
        v.coeffs[k].a = muonref_bf16_round((float)v.coeffs[k].a);
        v.coeffs[k].b = muonref_bf16_round((float)v.coeffs[k].b);
        v.coeffs[k].c = muonref_bf16_round((float)v.coeffs[k].c);
      }
      if (same_coeffs(&v, o)) {
        snprintf(buf, n, "%s rounded to bf16", muonref_preset_at(p)->name);
        return;
      }
    }
    {
      char a[32], b[32], c[32];
      real_text(o->coeffs[0].a, a, sizeof a), real_text(o->coeffs[0].b, b, sizeof b);
      real_text(o->coeffs[0].c, c, sizeof c);
      snprintf(buf, n, "(%s, %s, %s)%s", a, b, c, o->n_coeffs > 1 ? ", ..." : "");
    }
    return;
  default: snprintf(buf, n, "%.0f", get_num(o, f)); return;
  }
}

/* "KEY OLD -> NEW" by the profile's key table when a key of field f is
 * written differently for a and b and reads back as b's value; 0 when none is. */
static int key_text(const muonref_options *a, const muonref_options *b, const field *f, const char *profile,
                    char *buf, size_t n)
{
  const muonref_profile *p = muonref_profile_get(profile);
  json_t *ja = muonref_case_options_json(a, profile), *jb = muonref_case_options_json(b, profile);
  int done = 0;
  for (size_t k = 0; p && !done && k < p->n_keys; k++) {
    const char *name = p->keys[k].name;
    const json_t *va = json_object_get(ja, name), *vb = json_object_get(jb, name);
    if (p->keys[k].offset < f->offset || p->keys[k].offset >= f->offset + f->size || !va || !vb || json_equal(va, vb))
      continue;
    muonref_options back;
    if (muonref_case_options(jb, profile, &back, "fit", NULL) == MUONREF_OK && same_value(&back, b, f)) {
      char sa[200], sb[200];
      if (f->kind == F_COEFFS) /* a list by its preset's name */
        value_text(a, f, sa, sizeof sa), value_text(b, f, sb, sizeof sb);
      else
        json_text(va, sa, sizeof sa), json_text(vb, sb, sizeof sb);
      snprintf(buf, n, "%s %s -> %s", name, sa, sb);
      done = 1;
    }
  }
  json_decref(ja), json_decref(jb);
  return done;
}

void muonref_fit_describe(const muonref_fit_change *c, const char *profile, char *buf, size_t n)
{
  if (c->fault > 0) {
    const muonref_fault_info *i = muonref_fault_info_at(c->fault);
    snprintf(buf, n, "%s", i ? i->name : "?");
    return;
  }
  const field *f = &FIELDS[c->field];
  muonref_options base, v;
  const muonref_profile *prof = muonref_profile_get(profile);
  if (!prof) {
    snprintf(buf, n, "?");
    return;
  }
  base = *prof->defaults;
  if (c->branch == 2 && prof->adam_defaults)
    base = *prof->adam_defaults, base.use_muon = MUONREF_USE_MUON_FALSE;
  else if (c->branch == 1)
    base.use_muon = MUONREF_USE_MUON_TRUE;
  v = base;
  memcpy((char *)&v + f->offset, (const char *)&c->value + f->offset, f->size);
  const char *pre = !c->only_default ? "" : c->branch == 1 ? "default (Muon groups) " : c->branch == 2 ? "default (AdamW groups) " : "default ";
  size_t used = (size_t)snprintf(buf, n, "%s", pre);
  if (used >= n)
    return;
  if (key_text(&base, &v, f, profile, buf + used, n - used))
    return;
  char a[160], b[160];
  value_text(&base, f, a, sizeof a), value_text(&v, f, b, sizeof b);
  snprintf(buf + used, n - used, "%s %s -> %s", f->name, a, b);
}
