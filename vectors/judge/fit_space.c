/* muonref: the option space of the judge's fit (see fit_space.h). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fast/faults.h"
#include "core/option_fields.h"
#include "core/preset_match.h"
#include "vectors/format/case.h"
#include "vectors/judge/fit_space.h"
#include "muonref/bf16.h"
#include "muonref/presets.h"
#include "muonref/profile.h"

/* How a field's value is read and written (from its core/option_fields.h
 * entry: an I32 entry with a spelling is an enum, a boolean one a bool). */
enum { F_REAL, F_INT, F_LONG, F_BOOL, F_ENUM, F_COEFFS, F_PATTERNS, F_SIZES };

#define NSM (MUONREF_FIT_NS | MUONREF_FIT_MUON)
#define MA (MUONREF_FIT_MUON | MUONREF_FIT_ADAM)

/* The fields a port's behaviour can differ in, by their names in
 * core/option_fields.c (spec/muon.md 1 and 11.1), with what a change of
 * each touches and the common alternatives the spec lists beyond the
 * profiles' values (spec/vectors.md 7), NAN-terminated.  The space takes
 * every field of core/option_fields.c: each is either here or in EXCLUDED
 * with the reason (tests/unit/check_state: fit_space_covers_every_option_field),
 * and one in neither is searched over the profiles' values, touching every
 * kind of case.  The order is the space's (ties of the fit go to the
 * earlier change). */
typedef struct searched {
  const char *name;
  unsigned touches;
  double extra[8];
  const char *label; /* the spec's name in the explanation, where not `name` */
} searched;

static const searched SEARCHED[] = {
  {"coeffs", NSM, {NAN}, "coefficients"},
  {"coeff_order", NSM, {NAN}, NULL},
  {"ns_steps", NSM, {4, 5, 6, NAN}, NULL},
  {"ns_eps", NSM, {1e-7, 1e-8, 1e-15, 0.0, NAN}, NULL},
  {"eps_mode", NSM, {NAN}, NULL},
  {"ns_safety", NSM, {1.0, 1.02, NAN}, NULL},
  {"norm_format", NSM, {NAN}, NULL},
  {"ns_precondition", NSM, {NAN}, NULL},
  {"ns_heads", NSM, {0, NAN}, NULL}, /* dion's num_heads ignored: the whole matrix orthogonalized */
  {"ns_split", NSM, {0, NAN}, NULL}, /* row blocks ignored (the count 0): the whole matrix orthogonalized */
  {"ns_split_mode", NSM, {NAN}, NULL},
  {"ns_split_scale", NSM, {NAN}, NULL},
  {"lr", MA, {0.02, 0.01, 1e-3, 3e-4, 0.05, NAN}, NULL},
  {"momentum", MUONREF_FIT_MUON, {0.9, 0.95, 0.98, 0.99, NAN}, NULL},
  {"nesterov", MA, {0, 1, NAN}, NULL},
  {"weight_decay", MA, {0.0, 0.01, 0.1, NAN}, NULL},
  {"decay_method", MUONREF_FIT_MUON, {NAN}, NULL}, /* the lr in the Muon decay (spec/muon.md 4) */
  {"momentum_form", MUONREF_FIT_MUON, {NAN}, NULL},
  {"scale_mode", MUONREF_FIT_MUON, {NAN}, NULL},
  {"scale_extra", MUONREF_FIT_MUON, {0.2, 1.0, NAN}, NULL},
  {"scale_shape", MUONREF_FIT_MUON, {NAN}, NULL},
  {"scale_format", MUONREF_FIT_MUON, {NAN}, NULL},
  {"normalize_spatial", MUONREF_FIT_MUON, {0, 1, NAN}, NULL},
  {"nuclear_scale", MUONREF_FIT_MUON, {0, 1, NAN}, NULL},
  {"cautious_update", MUONREF_FIT_MUON, {0, 1, NAN}, NULL}, /* the sign mask on O (kozistr's cautious) */
  {"conv_mode", MUONREF_FIT_MUON, {NAN}, NULL},
  {"momentum_bias_correction", MUONREF_FIT_MUON, {0, 1, NAN}, NULL},
  /* the betas of AdamW's default (0.9, 0.999), of Moonlight's and the
   * speedrun's ports ((0.9, 0.95), (0.8, 0.95)) and the usual 0.98, 0.99 */
  {"adam_beta1", MUONREF_FIT_ADAM, {0.8, 0.9, 0.95, NAN}, NULL},
  {"adam_beta2", MUONREF_FIT_ADAM, {0.95, 0.98, 0.99, 0.999, NAN}, NULL},
  {"adam_eps", MUONREF_FIT_ADAM, {1e-8, NAN}, NULL},
  {"adam_eps_root", MUONREF_FIT_ADAM, {0.0, NAN}, NULL}, /* optax's eps inside the square root, left out */
  {"adam_lr_ratio", MUONREF_FIT_ADAM, {1.0, NAN}, NULL},
  {"adam_eps_mode", MUONREF_FIT_ADAM, {NAN}, NULL},
  {"adam_variant", MUONREF_FIT_ADAM, {NAN}, NULL},
  {"adam_weight_decay", MUONREF_FIT_ADAM, {NAN}, NULL},
  {"adam_decay_own", MUONREF_FIT_ADAM, {0, 1, NAN}, NULL},
  {"adam_decay_muon_lr", MUONREF_FIT_ADAM, {0, 1, NAN}, NULL},
  {"adam_step_global", MUONREF_FIT_ADAM, {0, 1, NAN}, NULL},
  {"adam_bias_fp32", MUONREF_FIT_ADAM, {0, 1, NAN}, NULL},
  {"adam_l2", MUONREF_FIT_ADAM, {0, 1, NAN}, NULL}, /* Adam's L2 against AdamW's decoupled decay */
  {"adam_dim_threshold", MUONREF_FIT_STEP, {NAN}, NULL},
  {"route_rule", MUONREF_FIT_STEP, {NAN}, NULL},
  {"missing_grad", MUONREF_FIT_STEP, {NAN}, NULL},
  {"grad_after_step", MUONREF_FIT_STEP, {NAN}, NULL},
  {"adam_l2_grad", MUONREF_FIT_STEP, {0, 1, NAN}, NULL}, /* AdamW's L2 gradient left in p.grad, or not */
  {"moment2_prescale", MUONREF_FIT_STEP, {0, 1, NAN}, NULL}, /* the Muon scale before the second moment, or after */
  {"clip_grad_norm", MUONREF_FIT_STEP, {0.0, 1.0, NAN}, NULL},
  /* keras' clipping (spec/muon.md 3.1): the form of the global one, and each kind left out */
  {"clip_grad_form", MUONREF_FIT_STEP, {NAN}, NULL},
  {"clip_grad_norm_each", MUONREF_FIT_STEP, {0.0, NAN}, NULL},
  {"clip_grad_value", MUONREF_FIT_STEP, {0.0, NAN}, NULL},
  {"loss_scale", MUONREF_FIT_STEP, {0.0, NAN}, NULL}, /* keras' loss_scale_factor left out */
  {"maximize", MUONREF_FIT_STEP, {0, 1, NAN}, NULL}, /* every gradient negated: a port that ascends */
  {"grad_accumulation", MUONREF_FIT_STEP, {0, NAN}, NULL}, /* keras' gradient_accumulation_steps ignored */
  {"use_ema", MUONREF_FIT_STEP, {0, 1, NAN}, NULL},          /* keras' moving average ignored */
  {"ema_momentum", MUONREF_FIT_STEP, {0.99, 0.999, NAN}, NULL},
  {"ema_overwrite", MUONREF_FIT_STEP, {0, NAN}, NULL},
  {"master_weights", MUONREF_FIT_STEP, {0, 1, NAN}, NULL}, /* Paddle's multi_precision ignored */
  {"exclude_embeddings", MUONREF_FIT_STEP, {0, 1, NAN}, NULL},
  /* the second moment of the Newton-Schulz output and cautious decay (spec/muon.md 7.4, 4.1) */
  {"moment2", MUONREF_FIT_MUON, {NAN}, NULL},
  {"moment2_beta", MUONREF_FIT_MUON, {0.95, NAN}, NULL},
  {"moment2_eps", MUONREF_FIT_MUON, {1e-8, NAN}, NULL},
  {"moment2_eps_mode", MUONREF_FIT_MUON, {NAN}, NULL},
  {"moment2_bias_correction", MUONREF_FIT_MUON, {0, 1, NAN}, NULL},
  {"moment2_rescale", MUONREF_FIT_MUON, {NAN}, NULL},
  {"cautious_wd", MA, {0, 1, NAN}, NULL},
};
#define N_SEARCHED (sizeof SEARCHED / sizeof SEARCHED[0])

/* The fields the fit does not change, each with the reason. */
static const struct {
  const char *name, *why;
} EXCLUDED[] = {
  {"use_muon", "every step case gives each group's use_muon"},
  {"ns_format", "the results file says the format the port's Newton-Schulz ran in"},
  {"bf16_order", "every bf16 evaluation order is accepted; the fit runs each"},
  {"catalogue", "which catalogue the coefficients came from, not a behaviour of the step"},
  {"exclude_patterns", "routing by name gives error cases, which are outside the fit (vectors/judge/refusal.h)"},
  {"pattern_match", "routing by name gives error cases, which are outside the fit (vectors/judge/refusal.h)"},
  {"all_missing_error", "an error case, which is outside the fit (vectors/judge/refusal.h)"},
};
#define N_EXCLUDED (sizeof EXCLUDED / sizeof EXCLUDED[0])

/* A field of the space: its core/option_fields.h entry read for the fit. */
typedef struct field {
  const char *name;
  size_t offset, size;
  int kind;
  unsigned touches;
  const char *(*enum_name)(int);
  const double *extra; /* NAN-terminated */
} field;

static const double NO_EXTRA[] = {NAN};

static const searched *searched_named(const char *name)
{
  for (size_t k = 0; k < N_SEARCHED; k++)
    if (!strcmp(SEARCHED[k].name, name))
      return &SEARCHED[k];
  return NULL;
}

static const char *excluded_why(const char *name)
{
  for (size_t k = 0; k < N_EXCLUDED; k++)
    if (!strcmp(EXCLUDED[k].name, name))
      return EXCLUDED[k].why;
  return NULL;
}

/* The entry of core/option_fields.c named `name`, or -1. */
static int entry_named(const char *name)
{
  for (size_t i = 0; i < muonref_option_field_count; i++)
    if (!strcmp(muonref_option_fields[i].name, name))
      return (int)i;
  return -1;
}

/* Field `fi` (an index of muonref_option_fields) as the fit reads it. */
static field field_at(int fi)
{
  const muonref_option_field *e = &muonref_option_fields[fi];
  const searched *s = searched_named(e->name);
  field f = {s && s->label ? s->label : e->name, e->off, 0, F_INT, s ? s->touches : MUONREF_FIT_ALL, e->enum_name,
             s ? s->extra : NO_EXTRA};
  switch (e->kind) {
  case MUONREF_FIELD_F64: f.kind = F_REAL, f.size = sizeof(double); break;
  case MUONREF_FIELD_I64: f.kind = F_LONG, f.size = sizeof(long); break;
  case MUONREF_FIELD_COEFFS:
    f.kind = F_COEFFS, f.size = e->off2 + sizeof(((muonref_options *)0)->coeffs) - e->off;
    break;
  case MUONREF_FIELD_PATTERNS: f.kind = F_PATTERNS; break;
  case MUONREF_FIELD_SIZES: /* read and set as the count (0: no row blocks); spans the sizes for the keys */
    f.kind = F_SIZES, f.size = e->off2 + sizeof(((muonref_options *)0)->ns_split) - e->off;
    break;
  case MUONREF_FIELD_I32:
    f.kind = e->enum_name ? F_ENUM : e->boolean ? F_BOOL : F_INT, f.size = sizeof(int);
    break;
  }
  return f;
}

/* The fields of the space, in its order (SEARCHED's, then any field in
 * neither table); returns the count written to idx (at most cap). */
static size_t space_fields(int *idx, size_t cap)
{
  size_t n = 0;
  for (size_t k = 0; k < N_SEARCHED && n < cap; k++) {
    int i = entry_named(SEARCHED[k].name);
    if (i >= 0)
      idx[n++] = i;
  }
  for (size_t i = 0; i < muonref_option_field_count && n < cap; i++) {
    const char *name = muonref_option_fields[i].name;
    if (!searched_named(name) && !excluded_why(name) && muonref_option_fields[i].kind != MUONREF_FIELD_PATTERNS)
      idx[n++] = (int)i;
  }
  return n;
}

int muonref_fit_field_searched(size_t i, const char **why)
{
  *why = NULL;
  if (i >= muonref_option_field_count)
    return -1;
  const char *name = muonref_option_fields[i].name, *w = excluded_why(name);
  int s = searched_named(name) != NULL;
  if (s && w)
    return -1;
  if (s)
    return 1;
  *why = w;
  return w && *w ? 0 : -1;
}

const char *muonref_fit_space_unknown(void)
{
  for (size_t k = 0; k < N_SEARCHED; k++)
    if (entry_named(SEARCHED[k].name) < 0)
      return SEARCHED[k].name;
  for (size_t k = 0; k < N_EXCLUDED; k++)
    if (entry_named(EXCLUDED[k].name) < 0)
      return EXCLUDED[k].name;
  return NULL;
}

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
  const field ff = field_at((int)fi), *f = &ff;
  if (same_value(base, v, f))
    return;
  for (size_t k = first; k < l->n; k++)
    if (l->c[k].field == (int)fi && same_value(&l->c[k].value, v, f))
      return;
  muonref_fit_change c = {0};
  c.fault = 0, c.field = (int)fi, c.value = *v;
  push(l, &c);
}

/* Drops from l.c[first..] the values no case of profile prof can tell
 * from its own: grad_after_step decayed differs from keep only under
 * decay_method l2, which only a profile with a key of kind decay_method
 * can set (without it, keller's "nesterov_input -> keep" would read
 * "-> keep = -> decayed"). */
static void drop_inert(list *l, size_t first, const muonref_profile *prof, const field *f)
{
  if (strcmp(f->name, "grad_after_step") || muonref_case_has_key_kind(prof, MUONREF_KEY_DECAY_METHOD))
    return;
  size_t w = first;
  for (size_t k = first; k < l->n; k++)
    if (get_num(&l->c[k].value, f) != MUONREF_GRAD_AFTER_DECAYED)
      l->c[w++] = l->c[k];
  l->n = w;
}

/* Whether key k sets field f besides the field it names: a coefficient_type preset
 * (profile.h MUONREF_KEY_COEFFICIENT_TYPE) is a list and the order it runs in;
 * kozistr's weight_decouple (MUONREF_KEY_WEIGHT_DECOUPLE) the Muon decay and
 * AdamW's L2, adam_l2 (a port may honour it in one branch only: "weight_decouple's
 * adam_l2 (any) -> false"); Paddle's grad_clip (MUONREF_KEY_PADDLE_GRAD_CLIP) the
 * per-gradient clipping, the clamp and the global form. */
static int key_sets_order(const muonref_option_key *k, const field *f)
{
  return (k->kind == MUONREF_KEY_COEFFICIENT_TYPE && f->offset == offsetof(muonref_options, coeff_order)) ||
         (k->kind == MUONREF_KEY_WEIGHT_DECOUPLE && f->offset == offsetof(muonref_options, adam_l2)) ||
         /* dion's use_polar_express sets the safety factor with its list (dion.md 4): a port that keeps one
          * and not the other is told "use_polar_express's ns_safety (any) -> 1.02" */
         (k->kind == MUONREF_KEY_USE_POLAR_EXPRESS && f->offset == offsetof(muonref_options, ns_safety)) ||
         /* Paddle's grad_clip is one of three objects: each clipping field, and the global one's formula */
         (k->kind == MUONREF_KEY_PADDLE_GRAD_CLIP && (f->offset == offsetof(muonref_options, clip_grad_norm_each) ||
                                                      f->offset == offsetof(muonref_options, clip_grad_value) ||
                                                      f->offset == offsetof(muonref_options, clip_grad_form)));
}

/* Whether key k sets bytes of field f (a betas key [b1, b2] sets both
 * adam_beta1 and adam_beta2, profile.h MUONREF_KEY_BETAS; a key whose
 * fields follow the group's branch sets each of them), or sets f besides
 * its own field (key_sets_order). */
static int key_sets(const muonref_option_key *k, const field *f)
{
  if (k->kind == MUONREF_KEY_BETAS_BY_BRANCH)
    return f->offset == offsetof(muonref_options, momentum) || f->offset == offsetof(muonref_options, moment2_beta) ||
           f->offset == offsetof(muonref_options, adam_beta1) || f->offset == offsetof(muonref_options, adam_beta2);
  if (k->kind == MUONREF_KEY_EPS_BY_BRANCH)
    return f->offset == offsetof(muonref_options, moment2_eps) || f->offset == offsetof(muonref_options, adam_eps);
  size_t span = k->kind == MUONREF_KEY_BETAS ? 2 * sizeof(double) : 1;
  return (k->offset < f->offset + f->size && k->offset + span > f->offset) || key_sets_order(k, f);
}

/* The profile's first key that sets field f, or NULL (none, or p NULL). */
static const muonref_option_key *key_of(const muonref_profile *p, const field *f)
{
  for (size_t k = 0; p && k < p->n_keys; k++)
    if (key_sets(&p->keys[k], f))
      return &p->keys[k];
  return NULL;
}

/* Whether f is the list of p's coefficient_type key (a preset: the list and its order). */
static int preset_keyed(const muonref_profile *p, const field *f)
{
  const muonref_option_key *k = key_of(p, f);
  return k && k->kind == MUONREF_KEY_COEFFICIENT_TYPE && !key_sets_order(k, f);
}

/* Whether f is the list of p's use_polar_express key, which sets the safety factor with it
 * (dion.md 4: an ignored key leaves the port's Newton-Schulz function, list and 1.02 alike). */
static int polar_keyed(const muonref_profile *p, const field *f)
{
  const muonref_option_key *k = key_of(p, f);
  return k && k->kind == MUONREF_KEY_USE_POLAR_EXPRESS;
}

/* Whether some key of the profile sets field f. */
static int field_keyed(const muonref_profile *p, const field *f) { return key_of(p, f) != NULL; }

/* The value changes l->c[first..] of field f again, each in Muon groups
 * only (branch 1, "KEY in Muon groups (any) -> VALUE"), where f is lr or
 * weight_decay, the profile's key of it is taken by every group, and its
 * AdamW groups read it too (an AdamW fallback; a weight_decay not replaced
 * by AdamW's own, adam_decay_own): a port that hard-codes the value in its
 * Muon branch (Keller's decay fixed at 0.01) leaves its AdamW groups as the
 * profile's, which a change in every group does not (tests/scripts/fit-variants.sh
 * 16e); the option ignored likewise (a Muon class without weight decay
 * beside Keller's AdamW: the eval's qwen3-mini).  Appended after the changes in every group, so that where both give
 * the same run (a case without AdamW groups) the two are merged. */
static void muon_branch_values(list *l, size_t first, const muonref_profile *prof, const field *f)
{
  const muonref_option_key *k = key_of(prof, f);
  const muonref_options *d = prof->defaults;
  if (!k || k->branch != MUONREF_KEY_ANY || d->route_rule == MUONREF_ROUTE_TWO_D_ONLY ||
      (strcmp(f->name, "lr") && (strcmp(f->name, "weight_decay") || d->adam_decay_own)))
    return;
  for (size_t i = first, end = l->n; i < end; i++) {
    muonref_fit_change c = l->c[i];
    c.branch = 1;
    push(l, &c);
  }
}

/* The decimal spelling of coefficient x as a port writes it: the shortest
 * that reads back as x, with at least 4 decimals ("-4.7750": Keller's
 * spelling, whose last zero a typo can move), or "" where that is not
 * plain decimal. */
static void coeff_spelling(double x, char *buf, size_t n)
{
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, n, "%.*g", p, x);
    if (strtod(buf, NULL) == x)
      break;
  }
  if (strchr(buf, 'e') || strchr(buf, 'n') || strchr(buf, 'i')) {
    buf[0] = '\0';
    return;
  }
  char *dot = strchr(buf, '.');
  size_t decimals = dot ? strlen(dot + 1) : 0;
  if (!dot && strlen(buf) + 1 < n)
    strcat(buf, "."), dot = buf + strlen(buf) - 1;
  while (decimals < 4 && strlen(buf) + 1 < n)
    strcat(buf, "0"), decimals++;
}

/* Writes to *out every value one digit typo away from coefficient x: two
 * adjacent digits of its first TYPO_DIGITS significant ones swapped
 * (2.0315 -> 2.0351, issue 22's digit mutants) and, where `replace`, one
 * of those digits replaced by another; digits further on change no fp32
 * value observably.  Returns the count. */
enum { TYPO_DIGITS = 7, MAX_TYPOS = TYPO_DIGITS * 10 };
static int coeff_typos(double x, int replace, double *out)
{
  char s[64], t[64];
  int n = 0, seen = 0;
  coeff_spelling(x, s, sizeof s);
  for (size_t i = 0; s[i] && n < MAX_TYPOS; i++) {
    if (s[i] < '0' || s[i] > '9' || (!seen && s[i] == '0'))
      continue;
    if (++seen > TYPO_DIGITS)
      break;
    for (char d = '0'; replace && d <= '9' && n < MAX_TYPOS; d++) {
      memcpy(t, s, sizeof t);
      if (d == s[i] || (d == '0' && seen == 1 && (i == 0 || s[i - 1] < '0' || s[i - 1] > '9')))
        continue; /* the same digit; no leading zero */
      t[i] = d;
      out[n++] = strtod(t, NULL);
    }
    size_t j = i + 1; /* the next digit, past the point */
    if (s[j] == '.')
      j++;
    if (s[j] >= '0' && s[j] <= '9' && s[j] != s[i] && n < MAX_TYPOS && !(s[j] == '0' && seen == 1 && j == i + 1 &&
                                                                          (i == 0 || s[i - 1] < '0' || s[i - 1] > '9'))) {
      memcpy(t, s, sizeof t);
      t[i] = s[j], t[j] = s[i];
      out[n++] = strtod(t, NULL);
    }
  }
  return n;
}

/* The coefficient changes a digit typo gives: each of a, b, c of each of
 * the profile's triples, one digit wrong (coeff_typos), the rest as the
 * profile has them.  A replaced digit only in a list of one triple: in a
 * list of five, 15 coefficients of up to 7 digits are about 1,000
 * replacements, and the fit's time grows with them (tests/scripts/fit-times.sh);
 * swapped digits in every list. */
static void add_typos(list *l, const muonref_options *base, size_t fi, size_t first)
{
  double typo[MAX_TYPOS];
  for (int k = 0; k < base->n_coeffs && k < MUONREF_MAX_COEFFS; k++)
    for (int which = 0; which < 3; which++) {
      muonref_options v = *base;
      double *x = which == 0 ? &v.coeffs[k].a : which == 1 ? &v.coeffs[k].b : &v.coeffs[k].c;
      int n = coeff_typos(*x, base->n_coeffs == 1, typo);
      for (int t = 0; t < n; t++) {
        size_t before = l->n;
        if (isfinite(typo[t]))
          *x = typo[t], add_value(l, base, fi, &v, first);
        if (l->n > before)
          l->c[l->n - 1].typo = 1;
      }
    }
}

/* Whether fault f is another profile's own: its name is that profile's
 * name and '_' ("megatron_clip_update"), and `profile` is not it. */
static int others_fault(int f, const char *profile)
{
  const muonref_fault_info *i = muonref_fault_info_at(f);
  for (size_t p = 0; i && p < muonref_profile_count(); p++) {
    const muonref_profile *o = muonref_profile_at(p);
    size_t n = o ? strlen(o->name) : 0;
    if (o && strcmp(o->name, profile) && !strncmp(i->name, o->name, n) && i->name[n] == '_')
      return 1;
  }
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
  for (int f = 1; f < MUONREF_FAULT_COUNT; f++) { /* the faults, but other profiles' own (below) */
    muonref_fit_change c = {0};
    c.fault = f, c.field = -1;
    if (!others_fault(f, profile))
      push(&l, &c);
  }
  for (size_t p = 0; p < muonref_profile_count(); p++) { /* other profiles' second moments, each as one change */
    const muonref_profile *other = muonref_profile_at(p);
    muonref_fit_change c = {0};
    c.field = -1, c.moment2_of = (int)p + 1;
    if (other && other->defaults->moment2 != MUONREF_MOMENT2_NONE && base.moment2 == MUONREF_MOMENT2_NONE)
      push(&l, &c);
  }
  int idx[128];
  size_t n_idx = space_fields(idx, sizeof idx / sizeof idx[0]);
  for (size_t x = 0; x < n_idx; x++) {
    size_t fi = (size_t)idx[x];
    const field ff = field_at(idx[x]), *f = &ff;
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
    if (f->kind == F_INT || f->kind == F_LONG) /* a step count or a dimension threshold one off */
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
      add_typos(&l, &base, fi, first);
    }
    drop_inert(&l, first, prof, f);
    muon_branch_values(&l, first, prof, f);
    size_t end = l.n;
    if (field_keyed(prof, f) && f->kind != F_PATTERNS) { /* the option ignored (after the field's values) */
      muonref_fit_change c = {0};
      c.field = (int)fi, c.ignored = 1, c.value = base;
      /* a branch default of the field ignored (adamw_lr), first: where the key ignored everywhere gives the
       * same run on a case, the narrower change names it */
      for (size_t k = 0; k < prof->n_keys; k++)
        if (prof->keys[k].branch_default && key_sets(&prof->keys[k], f)) {
          muonref_fit_change b = c;
          b.branch = prof->keys[k].branch == MUONREF_KEY_ADAM_ONLY ? 2 : 1, b.branch_key = (int)k + 1;
          push(&l, &b);
        }
      push(&l, &c);
      muon_branch_values(&l, l.n - 1, prof, f); /* ... and ignored in Muon groups only */
    }
    size_t after = l.n;
    for (size_t k = first; field_keyed(prof, f) && k < end; k++) { /* the same values as the port's default */
      muonref_fit_change c = l.c[k];
      c.only_default = 1;
      if (!prof->adam_defaults) {
        push(&l, &c);
        continue;
      }
      /* a profile whose AdamW groups have defaults of their own: each branch's default apart (once: a
       * Muon-groups copy of a value, muon_branch_values, is that value's branch 1 here) */
      if (c.branch)
        continue;
      muonref_options adam = *prof->adam_defaults;
      for (c.branch = 1; c.branch <= 2; c.branch++)
        if (!same_value(c.branch == 1 ? &base : &adam, &c.value, f))
          push(&l, &c);
    }
    /* the default changes first: on a case that gives no option the two
     * kinds give the same result, and the narrower explanation is named;
     * then the values, then the option ignored */
    size_t n_val = after - first, n_def = l.n - after;
    muonref_fit_change *tmp = malloc((n_val ? n_val : 1) * sizeof *tmp);
    if (tmp && n_def) {
      memcpy(tmp, l.c + first, n_val * sizeof *tmp);
      memmove(l.c + first, l.c + after, n_def * sizeof *tmp);
      memcpy(l.c + first + n_def, tmp, n_val * sizeof *tmp);
    }
    free(tmp);
    size_t before_misreads = l.n;
    for (int from = 0; field_keyed(prof, f) && f->kind == F_ENUM && f->enum_name(from); from++)
      for (int to = 0; f->enum_name(to); to++) { /* each spelling misread as another */
        muonref_fit_change c = {0};
        if (to == from)
          continue;
        c.field = (int)fi, c.misread = 1, c.from = from, c.value = base;
        set_num(&c.value, f, to);
        push(&l, &c);
      }
    /* the misreads after the default changes and before the values: of two
     * changes that give the same run on a case, the narrower is named (a
     * misread acts only where a case gives its value) */
    size_t n_mis = l.n - before_misreads, at = first + n_def;
    muonref_fit_change *mis = n_mis ? malloc(n_mis * sizeof *mis) : NULL;
    if (mis) {
      memcpy(mis, l.c + before_misreads, n_mis * sizeof *mis);
      memmove(l.c + at + n_mis, l.c + at, (before_misreads - at) * sizeof *mis);
      memcpy(l.c + at, mis, n_mis * sizeof *mis);
      free(mis);
    }
  }
  /* another profile's own faults (megatron_nesterov_default_on under
   * moonlight) last: of equal explanations the option change in this
   * profile's terms (nesterov (any) -> true) is named first */
  for (int f = 1; f < MUONREF_FAULT_COUNT; f++) {
    muonref_fit_change c = {0};
    c.fault = f, c.field = -1;
    if (others_fault(f, profile))
      push(&l, &c);
  }
  *out = l.c;
  return l.n;
}

/* Whether the options object `given` names one of the profile's keys of
 * field f. */
static int given_has(const json_t *given, const muonref_profile *p, const field *f)
{
  for (size_t k = 0; given && p && k < p->n_keys; k++)
    if (key_sets(&p->keys[k], f) && json_object_get(given, p->keys[k].name))
      return 1;
  return 0;
}

/* A moment2_of change on the options of one group: the other profile's
 * second-moment fields, in a group not routed to AdamW (use_muon false
 * groups have no second moment to change). */
static void moment2_copy(const muonref_fit_change *c, muonref_options *o)
{
  const muonref_profile *p = muonref_profile_at((size_t)c->moment2_of - 1);
  if (!p || o->use_muon == MUONREF_USE_MUON_FALSE)
    return;
  const muonref_options *d = p->defaults;
  o->moment2 = d->moment2, o->moment2_beta = d->moment2_beta, o->moment2_eps = d->moment2_eps;
  o->moment2_eps_mode = d->moment2_eps_mode, o->moment2_bias_correction = d->moment2_bias_correction;
  o->moment2_rescale = d->moment2_rescale;
}

void muonref_fit_apply(const muonref_fit_change *c, const json_t *given, const char *profile,
                       const muonref_options *read, muonref_options *o)
{
  if (c->fault > 0) { /* the fault's values where it changes `read`, whatever else changed o */
    muonref_options faulted = *read;
    muonref_fault_options(c->fault, &faulted);
    muonref_option_fields_take_changed(o, read, &faulted);
    return;
  }
  if (c->moment2_of > 0) {
    moment2_copy(c, o);
    return;
  }
  const field ff = field_at(c->field), *f = &ff;
  if (c->misread) {
    if (given_has(given, muonref_profile_get(profile), f) && get_num(read, f) == c->from)
      memcpy((char *)o + f->offset, (const char *)&c->value + f->offset, f->size);
    return;
  }
  if (c->ignored) {
    if (c->branch == 1 && o->use_muon == MUONREF_USE_MUON_FALSE)
      return;
    const muonref_profile *p = muonref_profile_get(profile);
    if (c->branch_key > 0 && (!p || (size_t)c->branch_key > p->n_keys ||
                              !json_object_get(given, p->keys[c->branch_key - 1].name)))
      return; /* a branch default ignored: only where the group gives it */
    const muonref_options *d = p && p->adam_defaults && o->use_muon == MUONREF_USE_MUON_FALSE ? p->adam_defaults
                                                                                                : &c->value;
    memcpy((char *)o + f->offset, (const char *)d + f->offset, f->size);
    if (preset_keyed(p, f) || polar_keyed(p, f)) /* an ignored coefficient_type: the default's order with its list */
      o->coeff_order = d->coeff_order;
    if (polar_keyed(p, f))
      o->ns_safety = d->ns_safety;
    return;
  }
  if (c->only_default && given_has(given, muonref_profile_get(profile), f))
    return;
  if ((c->branch == 1 && o->use_muon == MUONREF_USE_MUON_FALSE) ||
      (c->branch == 2 && o->use_muon != MUONREF_USE_MUON_FALSE))
    return;
  memcpy((char *)o + f->offset, (const char *)&c->value + f->offset, f->size);
}

/* Whether some group of step case `test` gives one of field f's keys with
 * a value that reads as `from`. */
static int gives_value(const json_t *test, const muonref_profile *p, const field *f, int from)
{
  const json_t *gs = json_object_get(test, "groups");
  for (size_t g = 0; g < json_array_size(gs); g++) {
    const json_t *given = json_object_get(json_array_get(gs, g), "options");
    muonref_options o;
    if (given_has(given, p, f) && muonref_case_options(given, p->name, &o, "fit", NULL) == MUONREF_OK &&
        get_num(&o, f) == from)
      return 1;
  }
  return 0;
}

int muonref_fit_applies(const muonref_fit_change *c, const json_t *test, const char *kind, const char *profile)
{
  if (c->fault <= 0 && c->misread) {
    const muonref_profile *p = muonref_profile_get(profile);
    const field f = field_at(c->field);
    return p && !strcmp(kind, "step") && gives_value(test, p, &f, c->from);
  }
  if (c->fault > 0 || c->moment2_of > 0 || !(c->only_default || c->ignored))
    return 1;
  if (strcmp(kind, "step")) /* no options given: an ignored option changes nothing */
    return !c->ignored;
  const muonref_profile *p = muonref_profile_get(profile);
  const json_t *gs = json_object_get(test, "groups");
  const field f = field_at(c->field);
  for (size_t g = 0; g < json_array_size(gs); g++) /* a default acts where a group gives none, */
    if (given_has(json_object_get(json_array_get(gs, g), "options"), p, &f) == c->ignored) /* ignoring where one does */
      return 1;
  return 0;
}

unsigned muonref_fit_touches(const muonref_fit_change *c)
{
  return c->fault > 0 ? MUONREF_FIT_ALL : c->moment2_of > 0 ? MUONREF_FIT_MUON : field_at(c->field).touches;
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
      if (muonref_preset_holds(muonref_preset_at(p), o)) {
        snprintf(buf, n, "%s", muonref_preset_at(p)->name);
        return;
      }
      muonref_preset_apply(muonref_preset_at(p), &v);
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
  case F_SIZES: muonref_option_field_text(o, muonref_option_field_named("ns_split"), buf, n); return;
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
    /* an optional key is left out at its default (emerging's weight_decay_method): a's value is then the spec's */
    if (!key_sets(&p->keys[k], f) || !vb || (!va && !p->keys[k].optional) || (va && json_equal(va, vb)))
      continue;
    muonref_options back;
    if (muonref_case_options(jb, profile, &back, "fit", NULL) == MUONREF_OK && same_value(&back, b, f)) {
      char sa[200], sb[200];
      json_t *ka = !va && p->keys[k].optional ? muonref_case_key_json(a, &p->keys[k]) : NULL;
      if (ka && !(json_is_string(ka) && !strcmp(json_string_value(ka), "?"))) /* the key spells its default too */
        va = ka;                                                                /* (muon_split_qkv true, not groups) */
      if (f->kind == F_COEFFS) /* a list by its preset's name */
        value_text(a, f, sa, sizeof sa), value_text(b, f, sb, sizeof sb);
      else if (!va && json_is_string(vb))
        value_text(a, f, sa, sizeof sa), snprintf(sb, sizeof sb, "%s", json_string_value(vb));
      else if (!va)
        value_text(a, f, sa, sizeof sa), json_text(vb, sb, sizeof sb);
      else if (ka && json_is_string(va) && json_is_string(vb)) /* a default the key spelled: both unquoted */
        snprintf(sa, sizeof sa, "%s", json_string_value(va)), snprintf(sb, sizeof sb, "%s", json_string_value(vb));
      else
        json_text(va, sa, sizeof sa), json_text(vb, sb, sizeof sb);
      snprintf(buf, n, "%s %s -> %s", name, sa, sb);
      json_decref(ka);
      done = 1;
    }
  }
  json_decref(ja), json_decref(jb);
  return done;
}

/* "coefficients (3.4445, -4.775, 2.0315) -> (3.4445, -4.775, 2.0351)"
 * ("coefficients triple K ..." in a list of several) when a and b differ
 * in exactly one coefficient of one triple (a digit typo, add_typos): the
 * triple whole, so that the typo reads against the profile's digits; 0
 * when they differ otherwise. */
static int one_coeff_text(const muonref_options *a, const muonref_options *b, char *buf, size_t n)
{
  int diff = 0, at = -1;
  if (a->n_coeffs != b->n_coeffs)
    return 0;
  for (int k = 0; k < a->n_coeffs && k < MUONREF_MAX_COEFFS; k++) {
    int d = (a->coeffs[k].a != b->coeffs[k].a) + (a->coeffs[k].b != b->coeffs[k].b) + (a->coeffs[k].c != b->coeffs[k].c);
    if (d)
      diff += d, at = k;
  }
  if (diff != 1)
    return 0;
  char t[2][3][32], where[32] = "";
  const muonref_coeff *c[2] = {&a->coeffs[at], &b->coeffs[at]};
  for (int i = 0; i < 2; i++) {
    real_text(c[i]->a, t[i][0], sizeof t[i][0]);
    real_text(c[i]->b, t[i][1], sizeof t[i][1]);
    real_text(c[i]->c, t[i][2], sizeof t[i][2]);
  }
  if (a->n_coeffs > 1)
    snprintf(where, sizeof where, "triple %d ", at + 1);
  snprintf(buf, n, "coefficients %s(%s, %s, %s) -> (%s, %s, %s)", where, t[0][0], t[0][1], t[0][2], t[1][0], t[1][1],
           t[1][2]);
  return 1;
}

/* The name of the profile's first key of field f (a pair of betas: the
 * field's name), or the field's name where no key sets it. */
static const char *first_key(const muonref_profile *p, const field *f)
{
  const muonref_option_key *k = key_of(p, f);
  return !k || k->kind == MUONREF_KEY_BETAS || k->kind == MUONREF_KEY_BETAS_BY_BRANCH ? f->name : k->name;
}

/* Whether the profile's first key of f sets it only besides its own field
 * (key_sets_order), or sets f and another field at once (weight_decouple:
 * decay_method and adam_l2): then a change of f alone is named "KEY's FIELD
 * ..." ("weight_decouple's decay_method (any) -> decoupled": honoured in
 * AdamW groups only), since "KEY (any) -> VALUE" would read as both. */
static int first_key_secondary(const muonref_profile *p, const field *f)
{
  const muonref_option_key *k = key_of(p, f);
  return k && (key_sets_order(k, f) || k->kind == MUONREF_KEY_WEIGHT_DECOUPLE);
}

/* Field f's value in o as the profile's first key of f spells it (a
 * string without its quotes: adjust_lr_fn's "match_rms_adamw"; a null as
 * "None (fan_in)", Python's None and the spec's name of what it stands for)
 * where that spelling reads back as the value, else (no
 * key, a key that cannot spell it, a list) in the spec's spelling
 * (value_text).  Returns 1 where the key spelled it, 0 for the spec's. */
static int key_value_text(const muonref_options *o, const field *f, const char *profile, char *buf, size_t n)
{
  const muonref_profile *p = muonref_profile_get(profile);
  muonref_options full = *o; /* as a case would hold it (timm's algo "adamuon": its fields too) */
  muonref_case_complete(profile, &full);
  json_t *j = muonref_case_options_json(&full, profile);
  for (size_t k = 0; p && k < p->n_keys; k++) /* an optional key at its default is spelled too (timm's algo "muon") */
    if (!strcmp(p->keys[k].name, first_key(p, f)) && !json_object_get(j, p->keys[k].name))
      json_object_set_new(j, p->keys[k].name, muonref_case_key_json(&full, &p->keys[k]));
  const json_t *v = p ? json_object_get(j, first_key(p, f)) : NULL;
  muonref_options back;
  int read = v && muonref_case_options(j, profile, &back, "fit", NULL) == MUONREF_OK;
  if (v && !read) { /* another key cannot spell its value (dion's algorithm of AUTO routing): this key alone */
    json_t *one = json_pack("{sO}", first_key(p, f), v);
    read = one && muonref_case_options(one, profile, &back, "fit", NULL) == MUONREF_OK;
    json_decref(one);
  }
  if (v && (!read || !same_value(&back, &full, f)))
    v = NULL; /* the key cannot spell the value (timm's adjust_lr_fn has no fan_out) */
  int spelled = v && !json_is_array(v);
  if (json_is_string(v))
    snprintf(buf, n, "%s", json_string_value(v));
  else if (json_is_null(v) && f->kind == F_SIZES) /* no blocks: None says it all (not "None ([])") */
    snprintf(buf, n, "None");
  else if (json_is_null(v)) { /* a Python port's None, with the value it stands for (torch's adjust_lr_fn: fan_in) */
    char t[100];
    value_text(o, f, t, sizeof t);
    snprintf(buf, n, "None (%s)", t);
  }
  else if (spelled)
    json_text(v, buf, n);
  else
    value_text(o, f, buf, n);
  json_decref(j);
  return spelled;
}

void muonref_fit_describe(const muonref_fit_change *c, const char *profile, char *buf, size_t n)
{
  if (c->fault > 0) {
    const muonref_fault_info *i = muonref_fault_info_at(c->fault);
    snprintf(buf, n, "%s", i ? i->name : "?");
    return;
  }
  if (c->moment2_of > 0) { /* "normuon's second moment added (moment2 rows, ...)" */
    const muonref_profile *p = muonref_profile_at((size_t)c->moment2_of - 1);
    const muonref_options *d = p ? p->defaults : NULL;
    char beta[40], eps[40];
    if (!d) {
      snprintf(buf, n, "?");
      return;
    }
    real_text(d->moment2_beta, beta, sizeof beta), real_text(d->moment2_eps, eps, sizeof eps);
    snprintf(buf, n, "%s's second moment added (moment2 %s, beta %s, eps %s %s%s, rescale %s)", p->name,
             muonref_moment2_name(d->moment2), beta, eps, muonref_eps_mode_name(d->moment2_eps_mode),
             d->moment2_bias_correction ? ", bias-corrected" : "", muonref_moment2_rescale_name(d->moment2_rescale));
    return;
  }
  const field ff = field_at(c->field), *f = &ff;
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
  if (c->ignored) { /* "KEY (any) -> VALUE", the value as the key spells it (decoupled_weight_decay true: adam_l2 0) */
    char a[160];
    if (first_key_secondary(prof, f)) { /* "coefficient_type's coeff_order (any) -> cycle": the list is kept */
      value_text(&base, f, a, sizeof a);
      snprintf(buf, n, "%s's %s (any) -> %s", first_key(prof, f), f->name, a);
      return;
    }
    int k = key_value_text(&base, f, profile, a, sizeof a);
    if (c->branch_key > 0 && (size_t)c->branch_key <= prof->n_keys) { /* "adamw_lr (any) -> 0.0003" */
      snprintf(buf, n, "%s (any) -> %s", prof->keys[c->branch_key - 1].name, a);
      return;
    }
    snprintf(buf, n, "%s%s (any) -> %s", k ? first_key(prof, f) : f->name, c->branch == 1 ? " in Muon groups" : "", a);
    return;
  }
  if (c->misread) { /* "KEY FROM read as TO": the profile's first key of the field, as for the option ignored */
    muonref_options from = base;
    set_num(&from, f, c->from);
    char a[160], b[160];
    if (first_key_secondary(prof, f)) { /* "coefficient_type's coeff_order repeat_last read as cycle" */
      value_text(&from, f, a, sizeof a), value_text(&v, f, b, sizeof b);
      snprintf(buf, n, "%s's %s %s read as %s", first_key(prof, f), f->name, a, b);
      return;
    }
    int ka = key_value_text(&from, f, profile, a, sizeof a), kb = key_value_text(&v, f, profile, b, sizeof b);
    if (!ka || !kb) /* a value the key cannot spell (moment2_method has no "none"): both in the field's words */
      value_text(&from, f, a, sizeof a), value_text(&v, f, b, sizeof b);
    snprintf(buf, n, "%s %s read as %s", ka && kb ? first_key(prof, f) : f->name, a, b);
    return;
  }
  const char *pre = !c->only_default ? "" : c->branch == 1 ? "default (Muon groups) " : c->branch == 2 ? "default (AdamW groups) " : "default ";
  size_t used = (size_t)snprintf(buf, n, "%s", pre);
  if (used >= n)
    return;
  if (f->kind == F_COEFFS && one_coeff_text(&base, &v, buf + used, n - used))
    return;
  if (!c->only_default && f->kind != F_COEFFS && f->kind != F_PATTERNS && field_keyed(prof, f)) {
    /* "KEY (any) -> VALUE": the value in every group, whatever its case gives (a case's own weight_decay 0.1 as
     * much as the profile's default), as for the option ignored; a field its key sets besides its own
     * (coeff_order, adam_l2) by the field's name */
    char b[160];
    int k = !first_key_secondary(prof, f) && key_value_text(&v, f, profile, b, sizeof b);
    if (!k)
      value_text(&v, f, b, sizeof b);
    snprintf(buf + used, n - used, "%s%s (any) -> %s", k ? first_key(prof, f) : f->name,
             c->branch == 1 ? " in Muon groups" : "", b);
    return;
  }
  if (key_text(&base, &v, f, profile, buf + used, n - used))
    return;
  char a[160], b[160];
  value_text(&base, f, a, sizeof a), value_text(&v, f, b, sizeof b);
  snprintf(buf + used, n - used, "%s %s -> %s", f->name, a, b);
}
