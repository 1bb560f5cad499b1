/* muonref: complete validation of vector and results files (see validate.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "vectors/format/case.h"
#include "muonref/profile.h"
#include "core/pyfmt.h"
#include "vectors/format/tensor.h"
#include "vectors/format/validate.h"
#include "vectors/format/release.h"
#include "core/fail.h"

#define TCID_MAX 2147483647LL

/* The whole of file path in a new buffer (the caller frees it), its length
 * in *len; NULL with errno set when it cannot be opened or read.  Parsed
 * from memory (json_loadb): jansson's json_load_file reads a byte at a time
 * through the locked getc, a third of a judge's time on a vectors folder. */
static char *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    char *more = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
    if (!more)
      free(buf), errno = ENOMEM;
    buf = more, cap *= 2;
  }
  int bad = buf && ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    errno = EIO;
    return NULL;
  }
  *len = n;
  return buf;
}

json_t *muonref_json_load_strict(const char *path, muonref_error *err)
{
  return muonref_json_load(path, 0, err);
}

json_t *muonref_json_load(const char *path, int allow_nul, muonref_error *err)
{
  struct stat sb;
  if (stat(path, &sb) != 0)
    return muonref_fail(err, MUONREF_EIO, "%s: %s", path, strerror(errno)), NULL;
  if (S_ISDIR(sb.st_mode))
    return muonref_fail(err, MUONREF_EIO, "%s: is a folder, expected a JSON file", path), NULL;
  size_t len = 0;
  char *buf = slurp(path, &len);
  if (!buf)
    return muonref_fail(err, MUONREF_EIO, "%s: cannot read: %s", path, strerror(errno)), NULL;
  json_error_t je;
  json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES | (allow_nul ? JSON_ALLOW_NUL : 0), &je);
  free(buf);
  if (!j)
    muonref_fail(err, MUONREF_EFORMAT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
  return j;
}

/* The place being checked: "FILE: testGroups[g].tests[t] (tcId N)". */
typedef struct ctx {
  const char *file;
  char where[160];
  muonref_error *err;
} ctx;

__attribute__((format(printf, 2, 3))) static int failv(ctx *c, const char *fmt, ...)
{
  char rule[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rule, sizeof rule, fmt, ap);
  va_end(ap);
  if (c->where[0])
    return muonref_fail(c->err, MUONREF_EFORMAT, "%s: %s: %s", c->file, c->where, rule);
  return muonref_fail(c->err, MUONREF_EFORMAT, "%s: %s", c->file, rule);
}

/* The members of a state object (spec/vectors.md 2.1): a Muon parameter's
 * (its step, and the buffers after it) and an AdamW parameter's. */
static const char *const MUON[] = {"step", "momentum_buffer", "moment2", "grad_accum", "ema_average", "master", NULL};
static const char *const ADAM[] = {"step", "exp_avg", "exp_avg_sq", "grad_accum", "ema_average", "master", NULL};

/* Whether state buffer b is one a state holds only where the options keep it: the second moment (spec/muon.md
 * 7.4), the gradient accumulator (3.3), the moving average (8.2), the master weight of a bf16 parameter (10). */
static int optional_buffer(const char *b)
{
  return !strcmp(b, "moment2") || !strcmp(b, "grad_accum") || !strcmp(b, "ema_average") || !strcmp(b, "master");
}

/* Whether state object s is a Muon parameter's: it has one of the Muon
 * buffers (a state with moment2 but without momentum_buffer is one that
 * lacks its momentum_buffer, not an AdamW state with an unknown member). */
static int muon_state(const json_t *s) { return json_object_get(s, "momentum_buffer") || json_object_get(s, "moment2"); }

/* A state object `s` (named `name`) without the buffer `sn` names: a Muon
 * parameter's state (it has momentum_buffer or moment2) names what it
 * lacks; a state with neither kind of buffer is told so (a Muon
 * parameter's holds momentum_buffer, an AdamW parameter's exp_avg and
 * exp_avg_sq); else the missing AdamW buffer is named. */
static int missing_buffer(ctx *c, const json_t *s, const char *name, const char *sn)
{
  if (muon_state(s))
    return failv(c, "%s: missing (a Muon parameter's state holds momentum_buffer, and moment2 where the options keep "
                    "a second moment)", sn);
  if (!json_object_get(s, "exp_avg") && !json_object_get(s, "exp_avg_sq"))
    return failv(c, "%s: holds neither momentum_buffer (a Muon parameter's state) nor exp_avg and exp_avg_sq (an "
                    "AdamW parameter's)", name);
  return failv(c, "%s: missing (an AdamW parameter's state holds exp_avg and exp_avg_sq)", sn);
}

static int only_members(ctx *c, const json_t *o, const char *what, const char *const *allowed)
{
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)o, key, v) {
    int ok = 0;
    for (int i = 0; allowed[i] && !ok; i++)
      ok = !strcmp(key, allowed[i]);
    if (!ok)
      return failv(c, "%s: unknown member \"%s\" (not in the format of spec/vectors.md)", what, key);
  }
  return MUONREF_OK;
}

/* A string without NUL bytes (a results file is loaded with JSON_ALLOW_NUL
 * so that a port's message may hold one: only "error" and "skipped" may). */
static int is_string(const json_t *j) { return json_is_string(j) && json_string_length(j) == strlen(json_string_value(j)); }

/* An integer member in [lo, hi]. */
static int int_in(ctx *c, const json_t *v, const char *name, long long lo, long long hi, long long *out)
{
  if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
    return failv(c, "\"%s\" must be an integer from %lld to %lld", name, lo, hi);
  if (out)
    *out = json_integer_value(v);
  return MUONREF_OK;
}

/* A finite JSON number >= lo. */
static int number_min(ctx *c, const json_t *v, const char *name, double lo)
{
  if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < lo)
    return failv(c, "%s must be a finite number >= %g", name, lo);
  return MUONREF_OK;
}

enum { DT_F32 = 1, DT_F64 = 2, DT_BF16 = 4 };

static const char *const TENSOR_MEMBERS[] = {"dtype", "shape", "hex", "approx", NULL};
static const char *const GRAD_MEMBERS[] = {"dtype", "shape", "hex", "approx", "layout", NULL};

static int same_shape(const muonref_shape *a, const muonref_shape *b)
{
  if (a->ndim != b->ndim)
    return 0;
  for (int k = 0; k < a->ndim; k++)
    if (a->dims[k] != b->dims[k])
      return 0;
  return 1;
}

/* Decodes the tensor j (named `name` in messages) completely; checks its
 * dtype against the mask `dts` and, when want is not NULL, its shape
 * (`want_name` says where that shape comes from).  *shape_out receives
 * the tensor's shape when not NULL. */
static int tensor_ok(ctx *c, const json_t *j, const char *name, int dts, const muonref_shape *want,
                     const char *want_name, const char *const *members, muonref_shape *shape_out)
{
  char w[400], b1[64], b2[64];
  snprintf(w, sizeof w, "%s: %s%s%s", c->file, c->where, c->where[0] ? ": " : "", name);
  if (!json_is_object(j))
    return failv(c, "%s: expected a tensor object {\"dtype\", \"shape\", \"hex\"}", name);
  int st = only_members(c, j, name, members ? members : TENSOR_MEMBERS);
  if (st)
    return st;
  const json_t *approx = json_object_get(j, "approx");
  if (approx && !json_is_array(approx))
    return failv(c, "%s: \"approx\" must be an array", name);
  muonref_tensor t;
  if ((st = muonref_tensor_from_json(&t, j, w, c->err)))
    return st;
  int bit = t.dtype == MUONREF_TENSOR_F32 ? DT_F32 : t.dtype == MUONREF_TENSOR_F64 ? DT_F64 : DT_BF16;
  muonref_shape s = t.shape;
  muonref_tensor_free(&t);
  if (!(bit & dts))
    return failv(c, "%s: dtype \"%s\" is not allowed here (expected %s)", name,
                 json_string_value(json_object_get(j, "dtype")),
                 dts == DT_F32 ? "\"f32\"" : dts == DT_BF16 ? "\"bf16\""
                 : dts == (DT_F32 | DT_BF16) ? "\"f32\" or \"bf16\"" : "another dtype");
  if (want && !same_shape(&s, want))
    return failv(c, "%s: shape %s, expected %s (the shape of %s)", name,
                 muonref_py_shape(b1, sizeof b1, s.dims, s.ndim), muonref_py_shape(b2, sizeof b2, want->dims, want->ndim),
                 want_name);
  if (shape_out)
    *shape_out = s;
  return MUONREF_OK;
}

/* ---------------------------------------------------------------- vectors */

typedef struct vfile {
  const char *profile;
  const json_t *notes;
  long long n_steps;
  size_t n_params;
  muonref_shape *shapes; /* parameter shapes of the current step/error case */
  unsigned char master[256]; /* of the current case: parameter i is bf16 under master_weights (spec/muon.md 10),
                                so a state of it holds a "master" and no other state does */
  int format;            /* the file's formatVersion: 1, or 2 (steps may carry "setOptions") */
} vfile;

static int common_members(ctx *c, const json_t *t, const char *kind)
{
  if (!is_string(json_object_get(t, "comment")))
    return failv(c, "\"comment\" must be a string");
  const json_t *flags = json_object_get(t, "flags");
  if (!json_is_array(flags))
    return failv(c, "\"flags\" must be an array of names");
  for (size_t i = 0; i < json_array_size(flags); i++)
    if (!json_is_string(json_array_get(flags, i)))
      return failv(c, "\"flags\"[%zu] must be a string", i);
  const char *r = json_string_value(json_object_get(t, "result"));
  int is_error = !strcmp(kind, "error");
  if (!r || (strcmp(r, "valid") && strcmp(r, "invalid") && strcmp(r, "acceptable")))
    return failv(c, "\"result\" must be \"valid\", \"invalid\" or \"acceptable\"");
  if (is_error != (strcmp(r, "valid") != 0))
    return failv(c, "\"result\" \"%s\" does not fit a test of kind \"%s\" (error tests are \"invalid\" or "
                    "\"acceptable\", the others \"valid\")", r, kind);
  return MUONREF_OK;
}

/* The tolerance object tol.<fmt> of a test with n_tensors judged tensors
 * (step: one per parameter; ns: 1). */
static int tolerance_ok(ctx *c, const json_t *tol, const char *fmt, size_t n_tensors, int step)
{
  static const char *const MEMBERS[] = {"kind", "maxUlp", "atol", "stateAtol", "updateRel", "scaleRel", "max", "lo", "hi",
                                        NULL};
  char name[64];
  snprintf(name, sizeof name, "tolerance.%s", fmt);
  if (!json_is_object(tol))
    return failv(c, "\"%s\" must be a tolerance object", name);
  int st = only_members(c, tol, name, MEMBERS);
  if (st)
    return st;
  const char *k = json_string_value(json_object_get(tol, "kind"));
  char f[96];
  if (!k)
    return failv(c, "%s.kind must be \"bitwise\", \"elementwise\", \"relative\" or \"svBand\"", name);
  const char *needs = NULL;
  if (!strcmp(k, "bitwise")) {
    needs = "";
  } else if (!strcmp(k, "elementwise")) {
    needs = "maxUlp atol stateAtol updateRel scaleRel";
    snprintf(f, sizeof f, "%s.maxUlp", name);
    if ((st = number_min(c, json_object_get(tol, "maxUlp"), f, 0)))
      return st;
    const json_t *atol = json_object_get(tol, "atol"), *sa = json_object_get(tol, "stateAtol");
    if (!json_is_array(atol) || json_array_size(atol) != n_tensors)
      return failv(c, "%s.atol must be an array of %zu numbers, one per %s", name, n_tensors,
                   step ? "parameter" : "output");
    for (size_t i = 0; i < n_tensors; i++) {
      snprintf(f, sizeof f, "%s.atol[%zu]", name, i);
      if ((st = number_min(c, json_array_get(atol, i), f, 0)))
        return st;
    }
    static const char *const RELS[] = {"updateRel", "scaleRel"};
    for (int r = 0; r < 2; r++) {
      const json_t *ur = json_object_get(tol, RELS[r]);
      if (ur && (!step || !json_is_array(ur) || json_array_size(ur) != n_tensors))
        return failv(c, "%s.%s must be an array of %zu numbers, one per parameter (step tests only)", name, RELS[r],
                     n_tensors);
      for (size_t i = 0; ur && i < n_tensors; i++) {
        snprintf(f, sizeof f, "%s.%s[%zu]", name, RELS[r], i);
        if ((st = number_min(c, json_array_get(ur, i), f, 0)))
          return st;
      }
    }
    if (sa && (!step || !json_is_array(sa) || json_array_size(sa) != n_tensors))
      return failv(c, "%s.stateAtol must be an array of %zu objects, one per parameter (step tests only)", name,
                   n_tensors);
    for (size_t i = 0; sa && i < n_tensors; i++) {
      const json_t *o = json_array_get(sa, i);
      const char *key;
      json_t *v;
      snprintf(f, sizeof f, "%s.stateAtol[%zu]", name, i);
      if (!json_is_object(o))
        return failv(c, "%s must be an object of buffer tolerances", f);
      if ((st = only_members(c, o, f, muonref_case_state_buffers)))
        return st;
      json_object_foreach((json_t *)o, key, v) {
        char g[160];
        snprintf(g, sizeof g, "%s.%s", f, key);
        if ((st = number_min(c, v, g, 0)))
          return st;
      }
    }
  } else if (!strcmp(k, "relative")) {
    needs = "max";
    snprintf(f, sizeof f, "%s.max", name);
    if ((st = number_min(c, json_object_get(tol, "max"), f, 0)))
      return st;
  } else if (!strcmp(k, "svBand")) {
    needs = "lo hi";
    snprintf(f, sizeof f, "%s.lo", name);
    if ((st = number_min(c, json_object_get(tol, "lo"), f, 0)))
      return st;
    snprintf(f, sizeof f, "%s.hi", name);
    if ((st = number_min(c, json_object_get(tol, "hi"), f, json_number_value(json_object_get(tol, "lo")))))
      return st;
    if (step)
      return failv(c, "%s: kind \"svBand\" applies to Newton-Schulz outputs, not to step tests", name);
  } else {
    return failv(c, "%s.kind \"%s\" must be \"bitwise\", \"elementwise\", \"relative\" or \"svBand\"", name, k);
  }
  /* a member that belongs to another kind would be silently ignored */
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)tol, key, v) {
    if (strcmp(key, "kind") && !strstr(needs, key))
      return failv(c, "%s: member \"%s\" does not belong to kind \"%s\"", name, key, k);
  }
  return MUONREF_OK;
}

static int tolerances_ok(ctx *c, const json_t *t, size_t n_tensors, int step)
{
  static const char *const FMTS[] = {"fp32", "bf16", NULL};
  const json_t *tol = json_object_get(t, "tolerance");
  if (!json_is_object(tol))
    return failv(c, "\"tolerance\" must be an object {\"fp32\": TOL, \"bf16\": TOL}");
  int st = only_members(c, tol, "tolerance", FMTS);
  for (int i = 0; !st && FMTS[i]; i++)
    st = tolerance_ok(c, json_object_get(tol, FMTS[i]), FMTS[i], n_tensors, step);
  return st;
}

/* The options of groups[g]: JSON types always; in step tests also the
 * ranges (a valid test has valid options).  In error tests a spelling or
 * range the catalogue refuses is the point of the test. */
static int options_ok(ctx *c, const json_t *opts, const vfile *vf, size_t g, int error_test)
{
  char w[400];
  muonref_options o;
  muonref_error e = {0};
  snprintf(w, sizeof w, "%s: %s: groups[%zu].options", c->file, c->where, g);
  int st = muonref_case_options(opts, vf->profile, &o, w, &e);
  if (st == MUONREF_EFORMAT || st == MUONREF_ENOMEM)
    return muonref_fail(c->err, st, "%s", e.message);
  if (!st && !error_test)
    st = muonref_options_validate(&o, &e);
  if (st && !error_test)
    return failv(c, "groups[%zu].options: a \"valid\" test must have valid options, got: %s", g, e.message);
  return MUONREF_OK;
}

/* The optimizer's own keywords (keys of scope "init", muonref_option_key.init)
 * hold one value for every group: a port takes them once, so groups that
 * give two values are no case any port can run (spec/profiles/README.md,
 * "Building a port from the key table").  An optional key left out of a
 * group reads as the profile's default; a key of one branch is compared
 * over that branch's groups (muonref_case_group_branch). */
static int init_keys_agree(ctx *c, const json_t *gs, const vfile *vf)
{
  const muonref_profile *p = muonref_profile_get(vf->profile);
  for (size_t k = 0; p && k < p->n_keys; k++) {
    const muonref_option_key *key = &p->keys[k];
    if (!key->init)
      continue;
    json_t *dflt = key->optional ? muonref_case_key_json(p->defaults, key) : NULL;
    const json_t *first = NULL;
    int bad = 0;
    size_t g = 0;
    size_t first_g = SIZE_MAX; /* the first group compared (of the key's branch) */
    for (; g < json_array_size(gs) && !bad; g++) {
      const json_t *opts = json_object_get(json_array_get(gs, g), "options");
      if (key->branch != MUONREF_KEY_ANY && muonref_case_group_branch(opts) != key->branch)
        continue; /* a branch's own keyword (pytorch_optimizer's adamw_lr): its groups only */
      const json_t *v = json_object_get(opts, key->name);
      v = v ? v : dflt;
      if (first_g == SIZE_MAX)
        first = v, first_g = g;
      else
        bad = !(first == v || (first && v && json_equal(first, v)));
    }
    json_decref(dflt);
    if (bad)
      return failv(c, "groups[%zu].options: \"%s\" is the optimizer's own keyword (scope init in the profile "
                   "'%s'), one value for every group%s, but differs from groups[%zu]'s", g - 1, key->name, p->name,
                   key->branch == MUONREF_KEY_ANY ? "" : " of its branch", first_g);
  }
  return MUONREF_OK;
}

/* steps[k].setOptions (format 2, spec/vectors.md 2.8): one object per
 * group, members named by the profile and schedulable only; in a "valid"
 * test every group's options after the change must be valid.  The options
 * each group runs with are re-derived from "groups" and the earlier steps. */
static int set_options_ok(ctx *c, const json_t *t, const json_t *steps, const json_t *gs, const vfile *vf, size_t k, int error_test)
{
  const json_t *set = json_object_get(json_array_get(steps, k), "setOptions");
  if (!set)
    return MUONREF_OK;
  if (error_test)
    return failv(c, "steps[%zu]: \"setOptions\" belongs to step tests only", k);
  if (json_object_get(t, "roundTripAfter"))
    return failv(c, "steps[%zu]: a test with \"setOptions\" has no \"roundTripAfter\" (a state round trip restores "
                 "the options of the state's own file, spec/vectors.md 2.8)", k);
  size_t n_groups = json_array_size(gs);
  if (!json_is_array(set) || json_array_size(set) != n_groups)
    return failv(c, "steps[%zu].setOptions must be an array of %zu objects, one per group ({}: unchanged)", k, n_groups);
  for (size_t g = 0; g < n_groups; g++) {
    muonref_options o;
    muonref_error e = {0};
    char w[400];
    snprintf(w, sizeof w, "%s: %s: groups[%zu].options", c->file, c->where, g);
    int st = muonref_case_options(json_object_get(json_array_get(gs, g), "options"), vf->profile, &o, w, &e);
    for (size_t j = 0; !st && j <= k; j++) { /* the values group g runs step j with */
      const json_t *sj = json_object_get(json_array_get(steps, j), "setOptions");
      if (!sj)
        continue;
      snprintf(w, sizeof w, "%s: %s: steps[%zu].setOptions[%zu]", c->file, c->where, j, g);
      st = muonref_case_step_options(json_array_get(sj, g), vf->profile, &o, w, &e);
    }
    if (st == MUONREF_EFORMAT || st == MUONREF_ENOMEM)
      return muonref_fail(c->err, st, "%s", e.message);
    if (!st)
      st = muonref_options_validate(&o, &e);
    if (st)
      return failv(c, "steps[%zu].setOptions[%zu]: a \"valid\" test must run every step with valid options, got: %s",
                   k, g, e.message);
  }
  return MUONREF_OK;
}

/* "roundTripDtype" (spec/vectors.md 2.1): "bf16" or "f32", with "roundTripAfter" (whose range run_ok
 * checked), and every parameter created in the other dtype (the model is converted at the round trip).
 * Checked before the steps, whose gradients' dtypes it sets (muonref_case_grad_bf16). */
static int round_trip_dtype_ok(ctx *c, const json_t *t, const vfile *vf)
{
  const json_t *d = json_object_get(t, "roundTripDtype");
  const char *s = json_string_value(d);
  if (!d)
    return MUONREF_OK;
  if (!s || (strcmp(s, "bf16") && strcmp(s, "f32")))
    return failv(c, "\"roundTripDtype\" must be \"bf16\" or \"f32\" (the dtype the model is loaded in at the "
                    "state round trip)");
  if (!json_object_get(t, "roundTripAfter"))
    return failv(c, "\"roundTripDtype\" needs \"roundTripAfter\" (the step after which the model is converted)");
  for (size_t i = 0; i < vf->n_params; i++)
    if (muonref_case_param_bf16(t, i) == !strcmp(s, "bf16"))
      return failv(c, "\"roundTripDtype\" \"%s\": params[%zu] is created %s already; every parameter must change "
                      "dtype at the round trip", s, i, s);
  return MUONREF_OK;
}

/* Whether group object gj's options (read for profile) set master_weights; 0 where they do not read (their
 * check, options_ok, reports that). */
static int master_group(const json_t *gj, const char *profile)
{
  muonref_options o;
  return muonref_case_options(json_object_get(gj, "options"), profile, &o, "options", NULL) == MUONREF_OK &&
         o.master_weights;
}

/* params, groups, steps, roundTripAfter of a step or error test. */
static int run_ok(ctx *c, const json_t *t, vfile *vf, int error_test)
{
  const json_t *ps = json_object_get(t, "params"), *gs = json_object_get(t, "groups"),
               *steps = json_object_get(t, "steps");
  static const char *const PARAM_MEMBERS[] = {"name", "init", NULL};
  static const char *const GROUP_MEMBERS[] = {"options", "params", NULL};
  static const char *const STEP_MEMBERS[] = {"grads", NULL}, *const STEP_MEMBERS_V2[] = {"grads", "setOptions", NULL};
  char name[96];
  int st;
  if (!json_is_array(ps) || json_array_size(ps) == 0)
    return failv(c, "\"params\" must be a non-empty array of {\"name\", \"init\"}");
  vf->n_params = json_array_size(ps);
  memset(vf->master, 0, sizeof vf->master);
  for (size_t i = 0; i < vf->n_params; i++) {
    const json_t *p = json_array_get(ps, i);
    snprintf(name, sizeof name, "params[%zu]", i);
    if (!json_is_object(p) || !is_string(json_object_get(p, "name")))
      return failv(c, "%s must be an object with a string \"name\" and a tensor \"init\"", name);
    if ((st = only_members(c, p, name, PARAM_MEMBERS)))
      return st;
    snprintf(name, sizeof name, "params[%zu].init", i);
    if ((st = tensor_ok(c, json_object_get(p, "init"), name, DT_F32 | DT_BF16, NULL, NULL, NULL, &vf->shapes[i])))
      return st;
  }
  if (!json_is_array(gs) || json_array_size(gs) == 0)
    return failv(c, "\"groups\" must be a non-empty array of {\"options\", \"params\"}");
  unsigned char used[256] = {0};
  size_t listed = 0;
  int any_master = 0; /* a group under master_weights (spec/muon.md 10) */
  for (size_t g = 0; g < json_array_size(gs); g++) {
    const json_t *gj = json_array_get(gs, g), *idx = json_object_get(gj, "params");
    snprintf(name, sizeof name, "groups[%zu]", g);
    if (!json_is_object(gj) || !json_is_array(idx) || !json_is_object(json_object_get(gj, "options")))
      return failv(c, "%s must be an object with \"options\" (an object) and \"params\" (an array)", name);
    if ((st = only_members(c, gj, name, GROUP_MEMBERS)) || (st = options_ok(c, json_object_get(gj, "options"), vf, g,
                                                                             error_test)))
      return st;
    int master = master_group(gj, vf->profile);
    any_master |= master;
    for (size_t k = 0; k < json_array_size(idx); k++, listed++) {
      const json_t *v = json_array_get(idx, k);
      if (!json_is_integer(v) || json_integer_value(v) < 0 || (size_t)json_integer_value(v) >= vf->n_params)
        return failv(c, "%s.params[%zu] must be a parameter index from 0 to %zu", name, k, vf->n_params - 1);
      size_t i = (size_t)json_integer_value(v);
      if (used[i])
        return failv(c, "%s.params[%zu]: parameter %zu is listed twice (each parameter belongs to one group)", name,
                     k, i);
      used[i] = 1;
      vf->master[i] = master && muonref_case_param_bf16(t, i);
    }
  }
  if (listed != vf->n_params)
    return failv(c, "the groups list %zu parameters, \"params\" has %zu: every parameter belongs to one group", listed,
                 vf->n_params);
  if ((st = init_keys_agree(c, gs, vf)))
    return st;
  if (!json_is_array(steps) || json_array_size(steps) == 0)
    return failv(c, "\"steps\" must be a non-empty array of {\"grads\"}");
  vf->n_steps = (long long)json_array_size(steps);
  /* the round trip before the steps: it sets their gradients' dtypes (roundTripDtype) */
  const json_t *rt = json_object_get(t, "roundTripAfter");
  if (rt && vf->n_steps < 2)
    return failv(c, "\"roundTripAfter\" needs at least two steps");
  if ((rt && (st = int_in(c, rt, "roundTripAfter", 1, vf->n_steps - 1, NULL))) || (st = round_trip_dtype_ok(c, t, vf)))
    return st;
  if (json_object_get(t, "roundTripDtype") && any_master)
    return failv(c, "master_weights with \"roundTripDtype\": a master weight across a change of dtype is not "
                    "defined (spec/muon.md 10)");
  for (size_t k = 0; k < json_array_size(steps); k++) {
    const json_t *s = json_array_get(steps, k), *gl = json_object_get(s, "grads");
    snprintf(name, sizeof name, "steps[%zu]", k);
    if (!json_is_object(s) || (st = only_members(c, s, name, vf->format >= 2 ? STEP_MEMBERS_V2 : STEP_MEMBERS)))
      return json_is_object(s) ? st : failv(c, "%s must be an object {\"grads\"}", name);
    if ((st = set_options_ok(c, t, steps, gs, vf, k, error_test)))
      return st;
    if (!json_is_array(gl) || json_array_size(gl) != vf->n_params)
      return failv(c, "%s.grads must be an array of %zu entries, one per parameter (null: no gradient)", name,
                   vf->n_params);
    for (size_t i = 0; i < vf->n_params; i++) {
      const json_t *g = json_array_get(gl, i);
      char gn[128], pn[64];
      snprintf(gn, sizeof gn, "steps[%zu].grads[%zu]", k, i);
      snprintf(pn, sizeof pn, "params[%zu].init", i);
      if (json_is_null(g))
        continue;
      const char *dt = json_string_value(json_object_get(g, "dtype"));
      const char *layout = json_string_value(json_object_get(g, "layout"));
      if (json_object_get(g, "layout") && (!layout || strcmp(layout, "sparse")))
        return failv(c, "%s: \"layout\" must be \"sparse\"", gn);
      if ((dt && !strcmp(dt, "c64")) || layout) {
        if (!error_test)
          return failv(c, "%s: sparse and complex gradients belong to error tests only", gn);
      }
      if (dt && !strcmp(dt, "c64")) {
        static const char *const C64[] = {"dtype", "shape", NULL};
        /* a complex gradient: {"dtype": "c64", "shape"}, no values */
        const json_t *sh = json_object_get(g, "shape");
        muonref_shape cs = {0};
        if ((st = only_members(c, g, gn, C64)))
          return st;
        if (!json_is_array(sh) || json_array_size(sh) > MUONREF_MAX_NDIM)
          return failv(c, "%s: \"shape\" must be an array of at most %d positive integers", gn, MUONREF_MAX_NDIM);
        cs.ndim = (int)json_array_size(sh);
        for (int d = 0; d < cs.ndim; d++) {
          const json_t *v = json_array_get(sh, (size_t)d);
          if (!json_is_integer(v) || json_integer_value(v) < 1)
            return failv(c, "%s: \"shape\"[%d] must be a positive integer", gn, d);
          cs.dims[d] = (size_t)json_integer_value(v);
        }
        if (!same_shape(&cs, &vf->shapes[i])) {
          char b1[64], b2[64];
          return failv(c, "%s: shape %s, expected %s (the shape of %s)", gn,
                       muonref_py_shape(b1, sizeof b1, cs.dims, cs.ndim),
                       muonref_py_shape(b2, sizeof b2, vf->shapes[i].dims, vf->shapes[i].ndim), pn);
        }
        continue;
      }
      /* a parameter's gradients have its dtype (a bf16 parameter: area dtypes, spec/vectors.md 2.1),
       * after a round trip with "roundTripDtype" that dtype */
      int bf16 = muonref_case_grad_bf16(t, i, k);
      if (bf16 != muonref_case_param_bf16(t, i))
        snprintf(pn, sizeof pn, "\"roundTripDtype\"");
      if (dt && (!strcmp(dt, "f32") || !strcmp(dt, "bf16")) && strcmp(dt, bf16 ? "bf16" : "f32"))
        return failv(c, "%s: dtype \"%s\", expected \"%s\" (the dtype of %s)", gn, dt, bf16 ? "bf16" : "f32", pn);
      if ((st = tensor_ok(c, g, gn, bf16 ? DT_BF16 : DT_F32, &vf->shapes[i], pn, GRAD_MEMBERS, NULL)))
        return st;
    }
  }
  return MUONREF_OK;
}

/* gradAfter and gradAfterAtol of an outcome (spec/vectors.md 2.1): both or
 * neither; one entry per parameter, a tensor of its shape or null, and a
 * finite allowance >= 0. */
static int grad_after_ok(ctx *c, const json_t *o, const char *oname, const vfile *vf)
{
  const json_t *ga = json_object_get(o, "gradAfter"), *at = json_object_get(o, "gradAfterAtol");
  char name[160], pn[64];
  int st;
  if (!ga && !at)
    return MUONREF_OK;
  if (!json_is_array(ga) || json_array_size(ga) != vf->n_params || !json_is_array(at) ||
      json_array_size(at) != vf->n_params)
    return failv(c, "%s.gradAfter and .gradAfterAtol go together: arrays of %zu entries, one per parameter", oname,
                 vf->n_params);
  for (size_t i = 0; i < vf->n_params; i++) {
    const json_t *a = json_array_get(at, i);
    if (!json_is_number(a) || !(json_number_value(a) >= 0) || !isfinite(json_number_value(a)))
      return failv(c, "%s.gradAfterAtol[%zu] must be a finite number >= 0", oname, i);
    if (json_is_null(json_array_get(ga, i)))
      continue;
    snprintf(name, sizeof name, "%s.gradAfter[%zu]", oname, i);
    snprintf(pn, sizeof pn, "params[%zu].init", i);
    if ((st = tensor_ok(c, json_array_get(ga, i), name, DT_F32, &vf->shapes[i], pn, NULL, NULL)))
      return st;
  }
  return MUONREF_OK;
}

/* Whether two state lists (arrays of null or state objects) are equal but
 * for each state's member "moment2". */
static int same_state_but_moment2(const json_t *a, const json_t *b)
{
  if (!json_is_array(a) || !json_is_array(b) || json_array_size(a) != json_array_size(b))
    return json_equal(a, b);
  for (size_t i = 0; i < json_array_size(a); i++) {
    json_t *x = json_deep_copy(json_array_get(a, i)), *y = json_deep_copy(json_array_get(b, i));
    if (json_is_object(x))
      json_object_del(x, "moment2");
    if (json_is_object(y))
      json_object_del(y, "moment2");
    int same = json_equal(x, y);
    json_decref(x), json_decref(y);
    if (!same)
      return 0;
  }
  return 1;
}

/* expected / expectedBf16 of a step test: params and state (and gradAfter). */
static int outcome_ok(ctx *c, const json_t *o, const char *oname, const vfile *vf)
{
  static const char *const MEMBERS[] = {"params", "state", "gradAfter", "gradAfterAtol", NULL};
  char name[128], pn[64];
  int st;
  if (!json_is_object(o))
    return failv(c, "\"%s\" must be an object {\"params\", \"state\"}", oname);
  if ((st = only_members(c, o, oname, MEMBERS)))
    return st;
  const json_t *ps = json_object_get(o, "params"), *ss = json_object_get(o, "state");
  if ((st = grad_after_ok(c, o, oname, vf)))
    return st;
  if (!json_is_array(ps) || json_array_size(ps) != vf->n_params)
    return failv(c, "%s.params must be an array of %zu tensors, one per parameter", oname, vf->n_params);
  if (!json_is_array(ss) || json_array_size(ss) != vf->n_params)
    return failv(c, "%s.state must be an array of %zu entries (null or a state), one per parameter", oname,
                 vf->n_params);
  for (size_t i = 0; i < vf->n_params; i++) {
    snprintf(name, sizeof name, "%s.params[%zu]", oname, i);
    snprintf(pn, sizeof pn, "params[%zu].init", i);
    if ((st = tensor_ok(c, json_array_get(ps, i), name, DT_F32, &vf->shapes[i], pn, NULL, NULL)))
      return st;
    const json_t *s = json_array_get(ss, i);
    if (json_is_null(s))
      continue;
    snprintf(name, sizeof name, "%s.state[%zu]", oname, i);
    if (!json_is_object(s))
      return failv(c, "%s must be null or a state object", name);
    int muon = muon_state(s);
    if ((st = only_members(c, s, name, muon ? MUON : ADAM)))
      return st;
    char sn[160];
    snprintf(sn, sizeof sn, "%s.step", name);
    if ((st = int_in(c, json_object_get(s, "step"), sn, 1, vf->n_steps, NULL)))
      return st;
    if (vf->master[i] != (json_object_get(s, "master") != NULL))
      return failv(c, vf->master[i] ? "%s has no \"master\": params[%zu] is bf16 under master_weights (spec/muon.md 10)"
                                    : "%s has a \"master\": only a bf16 parameter under master_weights has one "
                                      "(spec/muon.md 10)", name, i);
    const char *const *bufs = muon ? MUON + 1 : ADAM + 1;
    for (int b = 0; bufs[b]; b++) {
      snprintf(sn, sizeof sn, "%s.%s", name, bufs[b]);
      int m2 = !strcmp(bufs[b], "moment2"); /* the second moment's shape is its own (7.4) */
      if (optional_buffer(bufs[b]) && !json_object_get(s, bufs[b]))
        continue;
      if (!json_object_get(s, bufs[b]))
        return missing_buffer(c, s, name, sn);
      if ((st = tensor_ok(c, json_object_get(s, bufs[b]), sn, DT_F32, m2 ? NULL : &vf->shapes[i], m2 ? NULL : pn,
                          NULL, NULL)))
        return st;
    }
  }
  return MUONREF_OK;
}

/* The accepted bf16 evaluation orders other than "separate" (spec/vectors.md
 * 2.1): {"keller": E, "fused": E}, each E an outcome of a step test (vf
 * given) or an f32 tensor of the input's shape (input given), or the name
 * of an earlier order. */
static int orders_ok(ctx *c, const json_t *o, const char *oname, const vfile *vf, const muonref_shape *input)
{
  static const char *const ORDERS[] = {"keller", "fused", NULL};
  static const char *const EARLIER[] = {"separate", "keller"};
  char name[96];
  int st;
  if (!json_is_object(o))
    return failv(c, "\"%s\" must be an object {\"keller\", \"fused\"}", oname);
  if ((st = only_members(c, o, oname, ORDERS)))
    return st;
  for (int k = 0; ORDERS[k]; k++) {
    const json_t *e = json_object_get(o, ORDERS[k]);
    snprintf(name, sizeof name, "%s.%s", oname, ORDERS[k]);
    if (!e)
      return failv(c, "%s: missing (every accepted order is published)", name);
    if (json_is_string(e)) {
      int ok = 0;
      for (int j = 0; j <= k; j++)
        ok |= !strcmp(json_string_value(e), EARLIER[j]);
      if (!ok)
        return failv(c, "%s: \"%s\" is not an earlier order", name, json_string_value(e));
      continue;
    }
    st = vf ? outcome_ok(c, e, name, vf) : tensor_ok(c, e, name, DT_F32, input, "input", NULL, NULL);
    if (st)
      return st;
  }
  return MUONREF_OK;
}

/* The "sharding" member of a step test (spec/vectors.md 2.6): a scheme,
 * an optional order (parameter indices, each at most once; ownership schemes
 * only) and one layout per world size (each size once), each giving every
 * parameter what its scheme allows: an owner or "replicated" under "sorted"
 * and "roundRobin", a split along the scheme's dimension (rows: 0, cols: 1)
 * with torch.tensor_split's bounds, or "replicated", under "rows" and
 * "cols". */
static int sharding_ok(ctx *c, const json_t *sh, const vfile *vf)
{
  static const char *const MEMBERS[] = {"scheme", "order", "layouts", NULL};
  static const char *const LAYOUT[] = {"worldSize", "params", NULL};
  int st;
  if (!json_is_object(sh))
    return failv(c, "\"sharding\" must be an object {\"scheme\", \"layouts\"}");
  if ((st = only_members(c, sh, "sharding", MEMBERS)))
    return st;
  const char *scheme = json_string_value(json_object_get(sh, "scheme"));
  if (!scheme || (strcmp(scheme, "sorted") && strcmp(scheme, "roundRobin") && strcmp(scheme, "rows") &&
                  strcmp(scheme, "cols")))
    return failv(c, "sharding.scheme must be \"sorted\", \"roundRobin\", \"rows\" or \"cols\"");
  int split = !strcmp(scheme, "rows") || !strcmp(scheme, "cols"), split_dim = !strcmp(scheme, "cols");
  const json_t *order = json_object_get(sh, "order");
  if (order && split)
    return failv(c, "sharding.order is for the ownership schemes (\"sorted\", \"roundRobin\"), not \"%s\"", scheme);
  for (size_t i = 0; order && i < json_array_size(order); i++) {
    char n[48];
    long long v = 0;
    snprintf(n, sizeof n, "sharding.order[%zu]", i);
    if ((st = int_in(c, json_array_get(order, i), n, 0, (long long)vf->n_params - 1, &v)))
      return st;
    for (size_t j = 0; j < i; j++)
      if (json_integer_value(json_array_get(order, j)) == v)
        return failv(c, "sharding.order[%zu]: parameter %lld is already at sharding.order[%zu] (an order lists each "
                     "parameter once)", i, v, j);
  }
  if (order && !json_is_array(order))
    return failv(c, "sharding.order must be an array of parameter indices");
  const json_t *layouts = json_object_get(sh, "layouts");
  if (!json_is_array(layouts) || json_array_size(layouts) == 0)
    return failv(c, "sharding.layouts must be a non-empty array of {\"worldSize\", \"params\"}");
  for (size_t l = 0; l < json_array_size(layouts); l++) {
    const json_t *lay = json_array_get(layouts, l), *ps = json_object_get(lay, "params");
    char n[96];
    long long ws = 0;
    snprintf(n, sizeof n, "sharding.layouts[%zu]", l);
    if (!json_is_object(lay) || (st = only_members(c, lay, n, LAYOUT)))
      return json_is_object(lay) ? st : failv(c, "%s must be an object {\"worldSize\", \"params\"}", n);
    snprintf(n, sizeof n, "sharding.layouts[%zu].worldSize", l);
    if ((st = int_in(c, json_object_get(lay, "worldSize"), n, 1, 64, &ws)))
      return st;
    for (size_t k = 0; k < l; k++)
      if (json_integer_value(json_object_get(json_array_get(layouts, k), "worldSize")) == ws)
        return failv(c, "%s: world size %lld already has sharding.layouts[%zu]", n, ws, k);
    if (!json_is_array(ps) || json_array_size(ps) != vf->n_params)
      return failv(c, "sharding.layouts[%zu].params must hold one entry per parameter (%zu)", l, vf->n_params);
    for (size_t i = 0; i < vf->n_params; i++) {
      const json_t *e = json_array_get(ps, i);
      snprintf(n, sizeof n, "sharding.layouts[%zu].params[%zu]", l, i);
      if (!json_is_object(e) || json_object_size(e) == 0)
        return failv(c, "%s must be {\"owner\": r}, {\"replicated\": true} or {\"dim\": d, \"bounds\": [...]}", n);
      if (json_object_get(e, "owner")) {
        static const char *const OWN[] = {"owner", NULL};
        if (split)
          return failv(c, "%s: an owner under the split scheme \"%s\" (its entries are splits or replicated)", n, scheme);
        char m[128];
        snprintf(m, sizeof m, "%s.owner", n);
        if ((st = only_members(c, e, n, OWN)) || (st = int_in(c, json_object_get(e, "owner"), m, 0, ws - 1, NULL)))
          return st;
      } else if (json_object_get(e, "replicated")) {
        static const char *const REP[] = {"replicated", NULL};
        if ((st = only_members(c, e, n, REP)))
          return st;
        if (!json_is_true(json_object_get(e, "replicated")))
          return failv(c, "%s.replicated must be true", n);
      } else {
        static const char *const SPLIT[] = {"dim", "bounds", NULL};
        char m[128];
        long long dim = 0;
        snprintf(m, sizeof m, "%s.dim", n);
        if ((st = only_members(c, e, n, SPLIT)) || (st = int_in(c, json_object_get(e, "dim"), m, 0, 1, &dim)))
          return st;
        if (!split || dim != split_dim)
          return failv(c, "%s: a split along dim %lld under the scheme \"%s\"%s", n, dim, scheme,
                       split ? " (its dimension is the other)" : " (an ownership scheme: owners or replicated)");
        const json_t *b = json_object_get(e, "bounds");
        if (vf->shapes[i].ndim < 2)
          return failv(c, "%s: a split needs a matrix parameter", n);
        if (!json_is_array(b) || json_array_size(b) != (size_t)ws + 1)
          return failv(c, "%s.bounds must hold world size + 1 = %lld integers", n, ws + 1);
        long long size = (long long)vf->shapes[i].dims[dim], q = size / ws, rem = size % ws;
        for (size_t k = 0; k <= (size_t)ws; k++) {
          long long v = 0, want = (long long)k * q + ((long long)k < rem ? (long long)k : rem);
          snprintf(m, sizeof m, "%s.bounds[%zu]", n, k);
          if ((st = int_in(c, json_array_get(b, k), m, 0, size, &v)))
            return st;
          if (v != want)
            return failv(c, "%s is %lld, expected %lld: bounds follow torch.tensor_split (%lld over %lld ranks: %lld "
                         "each, the first %lld one more)", m, v, want, size, ws, q, rem);
        }
      }
    }
  }
  return MUONREF_OK;
}

/* A step test's "muonSv" (spec/vectors.md 2.1) and the "scaleRel" of its
 * tolerances: {"without": [TENSOR | null per parameter], "bf16": {order:
 * [array | null per parameter]}} with a tensor of the parameter's shape
 * and, for every order, min(d0, numel / d0) finite numbers >= 0 (the
 * singular values of the parameter's matrix view) exactly where "without"
 * has a tensor; a parameter with scaleRel > 0 in either tolerance needs one. */
static int muon_sv_ok(ctx *c, const json_t *t, const vfile *vf)
{
  static const char *const BF16_ORDERS[] = {"separate", "keller", "fused", NULL}; /* muonref_bf16_order */
  static const char *const MEMBERS[] = {"without", "bf16", NULL};
  static const char *const FMTS[] = {"fp32", "bf16"};
  const json_t *ms = json_object_get(t, "muonSv");
  char name[128], pn[64];
  int st;
  if (ms) {
    if (!json_is_object(ms))
      return failv(c, "\"muonSv\" must be an object {\"without\", \"bf16\"}");
    if ((st = only_members(c, ms, "muonSv", MEMBERS)))
      return st;
    const json_t *w = json_object_get(ms, "without"), *by = json_object_get(ms, "bf16");
    if (!json_is_array(w) || json_array_size(w) != vf->n_params)
      return failv(c, "muonSv.without must be an array of %zu entries (a tensor or null), one per parameter",
                   vf->n_params);
    if (!json_is_object(by))
      return failv(c, "muonSv.bf16 must be an object of the accepted orders' singular values");
    if ((st = only_members(c, by, "muonSv.bf16", BF16_ORDERS)))
      return st;
    for (size_t i = 0; i < vf->n_params; i++) {
      const json_t *wi = json_array_get(w, i);
      size_t rows = vf->shapes[i].ndim ? vf->shapes[i].dims[0] : 1, n = muonref_shape_numel(&vf->shapes[i]);
      size_t cols = rows ? n / rows : 0, m = rows < cols ? rows : cols;
      snprintf(name, sizeof name, "muonSv.without[%zu]", i);
      snprintf(pn, sizeof pn, "params[%zu].init", i);
      if (!json_is_null(wi) && (st = tensor_ok(c, wi, name, DT_F32, &vf->shapes[i], pn, NULL, NULL)))
        return st;
      for (int k = 0; k < MUONREF_N_BF16_ORDERS; k++) {
        const json_t *a = json_object_get(by, BF16_ORDERS[k]), *x = json_array_get(a, i);
        snprintf(name, sizeof name, "muonSv.bf16.%s", BF16_ORDERS[k]);
        if (!json_is_array(a) || json_array_size(a) != vf->n_params)
          return failv(c, "%s must be an array of %zu entries, one per parameter", name, vf->n_params);
        if (json_is_null(wi) ? !json_is_null(x) : !json_is_array(x) || json_array_size(x) != m)
          return failv(c, "%s[%zu] must be %s", name, i,
                       json_is_null(wi) ? "null (without[i] is null)" : "an array of min(d0, numel / d0) numbers");
        for (size_t q = 0; q < json_array_size(x); q++) {
          const json_t *y = json_array_get(x, q);
          if (!json_is_number(y) || !(json_number_value(y) >= 0) || !isfinite(json_number_value(y)))
            return failv(c, "%s[%zu][%zu] must be a finite number >= 0", name, i, q);
        }
      }
    }
  }
  for (int f = 0; f < 2; f++) {
    const json_t *sr = json_object_get(json_object_get(json_object_get(t, "tolerance"), FMTS[f]), "scaleRel");
    for (size_t i = 0; i < json_array_size(sr); i++)
      if (json_number_value(json_array_get(sr, i)) > 0 && !json_is_object(json_array_get(json_object_get(ms, "without"), i)))
        return failv(c, "tolerance.%s.scaleRel[%zu] > 0 needs muonSv.without[%zu] (a tensor)", FMTS[f], i, i);
  }
  return MUONREF_OK;
}

static int step_test_ok(ctx *c, const json_t *t, vfile *vf)
{
  static const char *const MEMBERS[] = {"tcId", "comment", "flags", "result", "groups", "params", "steps",
                                        "roundTripAfter", "roundTripDtype", "expected", "expectedBf16",
                                        "expectedBf16Orders", "expectedNormOverflow", "muonSv", "tolerance",
                                        "sharding", NULL};
  int st = only_members(c, t, "test", MEMBERS);
  if (!st)
    st = run_ok(c, t, vf, 0);
  if (!st)
    st = outcome_ok(c, json_object_get(t, "expected"), "expected", vf);
  if (!st && json_object_get(t, "expectedBf16"))
    st = outcome_ok(c, json_object_get(t, "expectedBf16"), "expectedBf16", vf);
  const json_t *orders = json_object_get(t, "expectedBf16Orders");
  if (!st && orders && !json_object_get(t, "expectedBf16"))
    st = failv(c, "\"expectedBf16Orders\" needs \"expectedBf16\" (the separate order's result)");
  if (!st && orders)
    st = orders_ok(c, orders, "expectedBf16Orders", vf, NULL);
  const json_t *alt = json_object_get(t, "expectedNormOverflow");
  if (!st && alt)
    st = outcome_ok(c, alt, "expectedNormOverflow", vf);
  /* the alternative changes the Newton-Schulz output only: the state
   * (momentum buffers, AdamW moments, step counts) is the same bit for bit,
   * but for the second moment (moment2), which is the output's */
  if (!st && alt && !same_state_but_moment2(json_object_get(alt, "state"),
                                            json_object_get(json_object_get(t, "expected"), "state")))
    st = failv(c, "expectedNormOverflow.state must equal expected.state (only the Newton-Schulz output and its "
                  "second moment differ)");
  if (!st && json_object_get(t, "sharding"))
    st = sharding_ok(c, json_object_get(t, "sharding"), vf);
  if (!st)
    st = tolerances_ok(c, t, vf->n_params, 1);
  if (!st)
    st = muon_sv_ok(c, t, vf);
  return st;
}

static int ns_test_ok(ctx *c, const json_t *t, const char *kind)
{
  static const char *const MEMBERS[] = {"tcId", "comment", "flags", "result", "input", "nsSteps", "expected",
                                        "tolerance", NULL};
  static const char *const NS_EXP[] = {"exact", "polar", "bf16", "normOverflow", "bf16Orders", NULL};
  static const char *const TR_EXP[] = {"exact", "bf16", "normOverflow", "bf16Orders", NULL};
  int tr = !strcmp(kind, "transpose");
  muonref_shape s;
  char b[64];
  int st = only_members(c, t, "test", MEMBERS);
  if (!st)
    st = tensor_ok(c, json_object_get(t, "input"), "input", DT_F32, NULL, NULL, NULL, &s);
  if (st)
    return st;
  if (s.ndim != 2)
    return failv(c, "input: shape %s, a Newton-Schulz test needs a matrix (an error test refuses other shapes)",
                 muonref_py_shape(b, sizeof b, s.dims, s.ndim));
  if (tr && s.dims[0] == s.dims[1])
    return failv(c, "input: a transpose test needs a non-square matrix");
  if ((st = int_in(c, json_object_get(t, "nsSteps"), "nsSteps", 1, MUONREF_MAX_NS_STEPS, NULL)))
    return st;
  const json_t *e = json_object_get(t, "expected");
  if (!json_is_object(e))
    return failv(c, "\"expected\" must be an object {\"exact\"%s}", tr ? ", \"bf16\"" : ", \"polar\", \"bf16\"");
  if ((st = only_members(c, e, "expected", tr ? TR_EXP : NS_EXP)))
    return st;
  if (!json_object_get(e, "exact"))
    return failv(c, "expected.exact: missing (every Newton-Schulz test has its exact iterate)");
  if (json_object_get(e, "bf16Orders") && !json_object_get(e, "bf16"))
    return failv(c, "expected.bf16Orders needs expected.bf16 (the separate order's result)");
  if (json_object_get(e, "bf16Orders") && (st = orders_ok(c, json_object_get(e, "bf16Orders"), "expected.bf16Orders",
                                                        NULL, &s)))
    return st;
  const json_t *zero = json_object_get(e, "normOverflow");
  if (zero) { /* the norm-overflow alternative: the zero matrix of the input's shape */
    muonref_tensor z = {0};
    muonref_error e2;
    int nonzero = 0;
    if ((st = tensor_ok(c, zero, "expected.normOverflow", DT_F32, &s, "input", NULL, NULL)))
      return st;
    if (muonref_tensor_from_json(&z, zero, "expected.normOverflow", &e2) != MUONREF_OK)
      return failv(c, "expected.normOverflow: %s", e2.message);
    for (size_t k = 0; k < z.numel && !nonzero; k++)
      nonzero = (z.f ? (double)z.f[k] : z.d[k]) != 0.0;
    muonref_tensor_free(&z);
    if (nonzero)
      return failv(c, "expected.normOverflow must be the zero matrix (a binary32 norm's overflow gives X = 0)");
  }
  for (int i = 0; i < 3; i++) { /* the tensors: exact, polar, bf16 */
    char n[32];
    snprintf(n, sizeof n, "expected.%s", NS_EXP[i]);
    if (json_object_get(e, NS_EXP[i]) &&
        (st = tensor_ok(c, json_object_get(e, NS_EXP[i]), n, DT_F32, &s, "input", NULL, NULL)))
      return st;
  }
  return tolerances_ok(c, t, 1, 0);
}

static int error_test_ok(ctx *c, const json_t *t, vfile *vf)
{
  static const char *const RUN[] = {"tcId", "comment", "flags", "result", "groups", "params", "steps",
                                    "roundTripAfter", "expected", NULL};
  static const char *const NS[] = {"tcId", "comment", "flags", "result", "input", "nsSteps", "expected", NULL};
  static const char *const EXP[] = {"error", "run", NULL};
  static const char *const ERR[] = {"status", "message", "match", NULL};
  int ns = json_object_get(t, "input") != NULL;
  int st = only_members(c, t, "test", ns ? NS : RUN);
  if (st)
    return st;
  if (ns) {
    if ((st = tensor_ok(c, json_object_get(t, "input"), "input", DT_F32, NULL, NULL, NULL, NULL)))
      return st;
    if (!json_is_integer(json_object_get(t, "nsSteps")))
      return failv(c, "\"nsSteps\" must be an integer");
    if ((st = int_in(c, json_object_get(t, "nsSteps"), "nsSteps", -1000000, 1000000, NULL)))
      return st;
  } else if ((st = run_ok(c, t, vf, 1))) {
    return st;
  }
  const json_t *e = json_object_get(t, "expected"), *er = json_object_get(e, "error");
  if (!json_is_object(e) || !json_is_object(er))
    return failv(c, "expected.error must be an object {\"status\", \"message\"}: an error test names the error "
                    "it expects");
  if ((st = only_members(c, e, "expected", EXP)) || (st = only_members(c, er, "expected.error", ERR)))
    return st;
  const json_t *run = json_object_get(e, "run");
  const char *result = json_string_value(json_object_get(t, "result"));
  if (run && !(json_is_string(run) && !strcmp(json_string_value(run), "nonFinite")))
    return failv(c, "expected.run must be \"nonFinite\"");
  if (run && (ns || !result || strcmp(result, "acceptable")))
    return failv(c, "expected.run belongs to an \"acceptable\" step error test (it says how a run is judged)");
  const char *status = json_string_value(json_object_get(er, "status"));
  const char *msg = json_string_value(json_object_get(er, "message"));
  const json_t *match = json_object_get(er, "match");
  if (match && !(json_is_string(match) && (!strcmp(json_string_value(match), "exact") ||
                                           !strcmp(json_string_value(match), "any"))))
    return failv(c, "expected.error.match must be \"exact\" or \"any\"");
  if (!muonref_case_status_known(status))
    return failv(c, "expected.error.status must be the name of a muonref error status (\"EOPTION\", \"ESHAPE\", ...)");
  if (!msg || !msg[0])
    return failv(c, "expected.error.message must be a non-empty string");
  return MUONREF_OK;
}

static int test_ok(ctx *c, const json_t *t, const char *kind, vfile *vf)
{
  if (!json_is_object(t))
    return failv(c, "a test must be an object");
  int st = common_members(c, t, kind);
  if (st)
    return st;
  if (!strcmp(kind, "step"))
    return step_test_ok(c, t, vf);
  if (!strcmp(kind, "error"))
    return error_test_ok(c, t, vf);
  return ns_test_ok(c, t, kind);
}

int muonref_vector_file_validate(const json_t *j, const char *file, muonref_error *err)
{
  static const char *const TOP[] = {"schema", "formatVersion", "release", "generator", "profile", "area",
                                    "numberOfTests", "header", "notes", "testGroups", NULL};
  static const char *const GEN[] = {"name", "version", "reference", "seed", NULL};
  static const char *const GROUP[] = {"kind", "tests", NULL};
  ctx c = {file, "", err};
  vfile vf = {0};
  muonref_options o;
  muonref_error e = {0};
  if (!json_is_object(j))
    return failv(&c, "the file must hold a JSON object");
  int st = only_members(&c, j, "the file", TOP);
  if (st)
    return st;
  const char *schema = json_string_value(json_object_get(j, "schema"));
  const json_t *fv = json_object_get(j, "formatVersion");
  if (!json_is_integer(fv) || (json_integer_value(fv) != 1 && json_integer_value(fv) != 2))
    return failv(&c, "member \"formatVersion\" must be 1 or 2 (2: steps may set options, spec/vectors.md 2.8)");
  vf.format = (int)json_integer_value(fv);
  if (!schema || strcmp(schema, vf.format == 2 ? "muonref-vectors-v2" : "muonref-vectors-v1"))
    return failv(&c, "member \"schema\" must be \"muonref-vectors-v%d\" (formatVersion %d)", vf.format, vf.format);
  const json_t *release = json_object_get(j, "release");
  if (release && !muonref_release_valid(json_string_value(release)))
    return failv(&c, "member \"release\" must be a vector release \"YYYY.MM.N\" (spec/vectors.md 2.9)");
  const json_t *gen = json_object_get(j, "generator");
  if (!json_is_object(gen) || !is_string(json_object_get(gen, "name")))
    return failv(&c, "member \"generator\" must be an object with a string \"name\"");
  if ((st = only_members(&c, gen, "generator", GEN)))
    return st;
  vf.profile = json_string_value(json_object_get(j, "profile"));
  if (!vf.profile)
    return failv(&c, "member \"profile\" must be a string");
  if (muonref_profile_options(vf.profile, &o, &e)) /* a user's record's vectors: the record is --profile-file */
    /* not the list of built-in profiles (`muonref profile` prints it): it would push the hint out of the message */
    return failv(&c, "member \"profile\": Unknown profile '%.64s' (no built-in profile; the vectors of a user's "
                 "record: give the record they were written from with --profile-file FILE)", vf.profile);
  const char *area = json_string_value(json_object_get(j, "area"));
  if (!area || !area[0])
    return failv(&c, "member \"area\" must be a non-empty string");
  const json_t *header = json_object_get(j, "header");
  if (header && !json_is_array(header))
    return failv(&c, "member \"header\" must be an array of strings");
  for (size_t i = 0; i < json_array_size(header); i++)
    if (!is_string(json_array_get(header, i)))
      return failv(&c, "member \"header\"[%zu] must be a string", i);
  vf.notes = json_object_get(j, "notes");
  if (!json_is_object(vf.notes))
    return failv(&c, "member \"notes\" must be an object of flag names and their meaning");
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)vf.notes, key, v) {
    /* a structured note (spec/vectors.md 2.5); a plain string in files
     * written before the notes table */
    static const char *const NOTE[] = {"bugType", "description", "effect", "links", "faults", NULL};
    char nn[160];
    snprintf(nn, sizeof nn, "notes.%s", key);
    if (is_string(v))
      continue;
    if (!json_is_object(v) || only_members(&c, v, nn, NOTE) || !is_string(json_object_get(v, "bugType")) ||
        !is_string(json_object_get(v, "description")))
      return failv(&c, "member \"notes\".%s must be a note {\"bugType\", \"description\", ...} or a string", key);
  }
  const json_t *groups = json_object_get(j, "testGroups");
  if (!json_is_array(groups))
    return failv(&c, "member \"testGroups\" must be an array");
  json_t *seen = json_object();
  if (!seen)
    return muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  long long n_tests = 0;
  for (size_t g = 0; !st && g < json_array_size(groups); g++) {
    const json_t *grp = json_array_get(groups, g), *tests = json_object_get(grp, "tests");
    const char *kind = json_string_value(json_object_get(grp, "kind"));
    snprintf(c.where, sizeof c.where, "testGroups[%zu]", g);
    if (!json_is_object(grp) || !kind || !json_is_array(tests) ||
        (strcmp(kind, "step") && strcmp(kind, "ns") && strcmp(kind, "transpose") && strcmp(kind, "error"))) {
      st = failv(&c, "a test group must be {\"kind\": \"step\" | \"ns\" | \"transpose\" | \"error\", \"tests\": [...]}");
      break;
    }
    if ((st = only_members(&c, grp, "the group", GROUP)))
      break;
    for (size_t t = 0; !st && t < json_array_size(tests); t++, n_tests++) {
      const json_t *test = json_array_get(tests, t);
      const json_t *id = json_object_get(test, "tcId");
      snprintf(c.where, sizeof c.where, "testGroups[%zu].tests[%zu]", g, t);
      long long idv = 0;
      if ((st = int_in(&c, id, "tcId", 1, TCID_MAX, &idv)))
        break;
      char k[32];
      snprintf(k, sizeof k, "%lld", idv);
      snprintf(c.where, sizeof c.where, "testGroups[%zu].tests[%zu] (tcId %lld)", g, t, idv);
      if (json_object_get(seen, k)) {
        st = failv(&c, "tcId %lld appears twice in the file", idv);
        break;
      }
      json_object_set_new(seen, k, json_true());
      size_t np = json_array_size(json_object_get(test, "params"));
      vf.shapes = calloc(np + 1, sizeof *vf.shapes);
      if (!vf.shapes) {
        st = muonref_fail(err, MUONREF_ENOMEM, "out of memory");
        break;
      }
      if (np > 255)
        st = failv(&c, "\"params\" has %zu entries, at most 255 are supported", np);
      else
        st = test_ok(&c, test, kind, &vf);
      free(vf.shapes);
      vf.shapes = NULL;
    }
  }
  json_decref(seen);
  if (st)
    return st;
  c.where[0] = '\0';
  const json_t *nt = json_object_get(j, "numberOfTests");
  if (!json_is_integer(nt) || json_integer_value(nt) != n_tests)
    return failv(&c, "member \"numberOfTests\" must be %lld, the number of tests in the file", n_tests);
  if (n_tests == 0) /* it would pass any implementation with "0 passed, 0 failed" */
    return failv(&c, "the file holds no test (a vector file holds at least one)");
  return MUONREF_OK;
}

/* ---------------------------------------------------------------- results */

static int state_list_ok(ctx *c, const json_t *ss)
{
  int st;
  if (!json_is_array(ss))
    return failv(c, "\"state\" must be an array (one state or null per parameter)");
  for (size_t i = 0; i < json_array_size(ss); i++) {
    const json_t *s = json_array_get(ss, i);
    char name[64], sn[128];
    snprintf(name, sizeof name, "state[%zu]", i);
    if (json_is_null(s))
      continue;
    if (!json_is_object(s))
      return failv(c, "%s must be null or a state object", name);
    int muon = muon_state(s);
    if ((st = only_members(c, s, name, muon ? MUON : ADAM)))
      return st;
    snprintf(sn, sizeof sn, "%s.step", name);
    if ((st = int_in(c, json_object_get(s, "step"), sn, 0, TCID_MAX, NULL)))
      return st;
    const char *const *bufs = muon ? MUON + 1 : ADAM + 1;
    for (int b = 0; bufs[b]; b++) {
      snprintf(sn, sizeof sn, "%s.%s", name, bufs[b]);
      if (optional_buffer(bufs[b]) && !json_object_get(s, bufs[b]))
        continue;
      if (!json_object_get(s, bufs[b]))
        return missing_buffer(c, s, name, sn);
      if ((st = tensor_ok(c, json_object_get(s, bufs[b]), sn, DT_F32 | DT_BF16, NULL, NULL, NULL, NULL)))
        return st;
    }
  }
  return MUONREF_OK;
}

static int entry_ok(ctx *c, const json_t *e)
{
  static const char *const STEP[] = {"file", "tcId", "params", "state", "gradAfter", NULL};
  static const char *const NS[] = {"file", "tcId", "output", "outputT", NULL};
  static const char *const ERR[] = {"file", "tcId", "error", NULL};
  static const char *const SKIP[] = {"file", "tcId", "skipped", NULL};
  int st;
  const json_t *ps = json_object_get(e, "params"), *out = json_object_get(e, "output");
  const json_t *er = json_object_get(e, "error"), *sk = json_object_get(e, "skipped");
  int outcomes = !!ps + !!out + !!er + !!sk;
  if (outcomes != 1)
    return failv(c, "an entry holds exactly one outcome: \"params\" (with \"state\"), \"output\" (with \"outputT\"), "
                    "\"error\" or \"skipped\"; this one has %d", outcomes);
  if ((st = only_members(c, e, "the entry", ps ? STEP : out ? NS : er ? ERR : SKIP)))
    return st;
  if (er && !json_is_string(er)) /* NUL bytes allowed: judged as the port's failure (judge.c) */
    return failv(c, "\"error\" must be a string (the message the implementation raised)");
  if (sk && !json_is_string(sk))
    return failv(c, "\"skipped\" must be a string (why)");
  if (ps) {
    if (!json_is_array(ps))
      return failv(c, "\"params\" must be an array of f32 or bf16 tensors");
    for (size_t i = 0; i < json_array_size(ps); i++) {
      char n[32];
      snprintf(n, sizeof n, "params[%zu]", i);
      if ((st = tensor_ok(c, json_array_get(ps, i), n, DT_F32 | DT_BF16, NULL, NULL, NULL, NULL)))
        return st;
    }
    const json_t *ga = json_object_get(e, "gradAfter");
    if (ga && !json_is_array(ga))
      return failv(c, "\"gradAfter\" must be an array (an f32 or bf16 tensor or null per parameter)");
    for (size_t i = 0; ga && i < json_array_size(ga); i++) {
      char n[32];
      snprintf(n, sizeof n, "gradAfter[%zu]", i);
      if (!json_is_null(json_array_get(ga, i)) &&
          (st = tensor_ok(c, json_array_get(ga, i), n, DT_F32 | DT_BF16, NULL, NULL, NULL, NULL)))
        return st;
    }
    if (json_object_get(e, "state"))
      return state_list_ok(c, json_object_get(e, "state"));
  }
  if (out) {
    /* a Newton-Schulz result in any dtype of the format: a port iterating in
     * float64 returns f64, judged by its values (judge.c); a shape other than
     * the expected one is the case's failure (judge.c), not malformed input */
    if ((st = tensor_ok(c, out, "output", DT_F32 | DT_F64 | DT_BF16, NULL, NULL, NULL, NULL)))
      return st;
    const json_t *ot = json_object_get(e, "outputT");
    if (ot && (st = tensor_ok(c, ot, "outputT", DT_F32 | DT_F64 | DT_BF16, NULL, NULL, NULL, NULL)))
      return st;
  }
  return MUONREF_OK;
}

static int entries_ok(ctx *cp, const json_t *rs, const char *member);

int muonref_results_file_validate(const json_t *j, const char *file, muonref_error *err)
{
  static const char *const TOP[] = {"implementation", "nsFormat", "results", "mode", "lifecycle", "platform", "torch",
                                    "cpu", "distributed", "rawResults", NULL};
  ctx c = {file, "", err};
  if (!json_is_object(j))
    return failv(&c, "the file must hold a JSON object");
  int st = only_members(&c, j, "the file", TOP);
  if (st)
    return st;
  const json_t *impl = json_object_get(j, "implementation");
  if (impl && !is_string(impl))
    return failv(&c, "member \"implementation\" must be a string");
  const char *fmt = is_string(json_object_get(j, "nsFormat")) ? json_string_value(json_object_get(j, "nsFormat")) : NULL;
  if (!fmt || (strcmp(fmt, "bf16") && strcmp(fmt, "fp32")))
    return failv(&c, "member \"nsFormat\" must be \"bf16\" or \"fp32\"");
  const json_t *mode = json_object_get(j, "mode"), *plat = json_object_get(j, "platform");
  if (mode && !(is_string(mode) && (!strcmp(json_string_value(mode), "raw") ||
                                         !strcmp(json_string_value(mode), "neutral"))))
    return failv(&c, "member \"mode\" must be \"raw\" or \"neutral\" (the driver's --mode)");
  const json_t *lc = json_object_get(j, "lifecycle");
  if (lc && !(is_string(lc) && (!strcmp(json_string_value(lc), "assign") ||
                                     !strcmp(json_string_value(lc), "training-loop"))))
    return failv(&c, "member \"lifecycle\" must be \"assign\" or \"training-loop\" (the driver's --lifecycle)");
  if (plat && !json_is_object(plat))
    return failv(&c, "member \"platform\" must be an object of probe findings (name: value)");
  const char *pk;
  json_t *pv;
  json_object_foreach((json_t *)plat, pk, pv)
    if (!is_string(pv))
      return failv(&c, "member \"platform\".%s must be a string", pk);
  if (json_object_get(j, "torch") && !is_string(json_object_get(j, "torch")))
    return failv(&c, "member \"torch\" must be a string (the PyTorch version)");
  if (json_object_get(j, "cpu") && !json_is_array(json_object_get(j, "cpu")))
    return failv(&c, "member \"cpu\" must be an array of strings (CPU flags)");
  const json_t *dist = json_object_get(j, "distributed");
  if (dist && !(json_is_object(dist) && json_is_integer(json_object_get(dist, "worldSize")) &&
                json_integer_value(json_object_get(dist, "worldSize")) >= 1 &&
                (!json_object_get(dist, "ranksDisagree") || json_is_array(json_object_get(dist, "ranksDisagree")))))
    return failv(&c, "member \"distributed\" must be an object with an integer \"worldSize\" >= 1 (and an array "
                     "\"ranksDisagree\"), as torch_driver.py --world-size writes it");
  const json_t *rs = json_object_get(j, "results");
  if (!json_is_array(rs))
    return failv(&c, "member \"results\" must be an array");
  const json_t *raw = json_object_get(j, "rawResults");
  if (raw && !(json_is_array(raw) && mode && !strcmp(json_string_value(mode), "neutral")))
    return failv(&c, "member \"rawResults\" must be an array, in a file whose \"mode\" is \"neutral\" (the raw "
                     "results of the driver's --mode neutral+raw)");
  if ((st = entries_ok(&c, rs, "results")))
    return st;
  return entries_ok(&c, raw, "rawResults");
}

/* Every entry of the array rs (member `member`: "results", "rawResults"). */
static int entries_ok(ctx *cp, const json_t *rs, const char *member)
{
  ctx c = *cp;
  int st;
  for (size_t i = 0; i < json_array_size(rs); i++) {
    const json_t *e = json_array_get(rs, i);
    const char *f = is_string(json_object_get(e, "file")) ? json_string_value(json_object_get(e, "file")) : NULL;
    snprintf(c.where, sizeof c.where, "%s[%zu]", member, i);
    if (!json_is_object(e))
      return failv(&c, "an entry must be an object");
    if (!f || !f[0] || strchr(f, '/'))
      return failv(&c, "\"file\" must be the base name of a vector file (no '/', no NUL byte)");
    long long id;
    if ((st = int_in(&c, json_object_get(e, "tcId"), "tcId", 1, TCID_MAX, &id)))
      return st;
    snprintf(c.where, sizeof c.where, "%s[%zu] (%.80s tcId %lld)", member, i, f, id);
    if ((st = entry_ok(&c, e)))
      return st;
  }
  return MUONREF_OK;
}
