/* muonref: the vector checker (see checker.h). */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "checker.h"
#include "diagnose.h"
#include "fit.h"
#include "files.h"
#include "judge.h"
#include "run_fast.h"
#include "validate.h"
#include "core/fail.h"

void muonref_checker_fast(muonref_checker *c, muonref_ns_format format, int fault)
{
  memset(c, 0, sizeof *c);
  c->fast = 1;
  c->format = format;
  c->fault = fault;
  c->orders_all = ~0u;
  snprintf(c->impl_name, sizeof c->impl_name, "muonref fast path (%s)", format == MUONREF_NS_BF16 ? "bf16" : "fp32");
}

static muonref_area_count *area(muonref_checker *c, const char *profile, const char *name)
{
  char key[128];
  snprintf(key, sizeof key, "%s/%s", profile, name);
  for (int i = 0; i < c->n_areas; i++)
    if (!strcmp(c->areas[i].name, key))
      return &c->areas[i];
  muonref_area_count *a = &c->areas[c->n_areas < 255 ? c->n_areas++ : 255];
  snprintf(a->name, sizeof a->name, "%s", key);
  return a;
}

static void flags_text(const json_t *test, char *buf, size_t n)
{
  size_t used = 0;
  buf[0] = '\0';
  const json_t *f = json_object_get(test, "flags");
  for (size_t i = 0; i < json_array_size(f) && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? "," : "", json_string_value(json_array_get(f, i)));
}

static json_t *result_for(muonref_checker *c, const json_t *test, const char *kind, const char *file,
                          const char *profile, const char *where, muonref_error *err)
{
  long long id = json_integer_value(json_object_get(test, "tcId"));
  if (c->fast) {
    json_t *r = muonref_run_fast(test, kind, profile, c->format, c->fault, where, err);
    if (r && c->written) {
      json_t *entry = json_deep_copy(r);
      json_object_set_new(entry, "file", json_string(muonref_basename(file)));
      json_object_set_new(entry, "tcId", json_integer(id));
      json_array_append_new(json_object_get(c->written, "results"), entry);
    }
    return r;
  }
  char key[512];
  snprintf(key, sizeof key, "%s#%lld", muonref_basename(file), id);
  json_t *r = json_object_get(c->results, key);
  if (r)
    json_object_set_new(c->used, key, json_true());
  return json_incref(r);
}

/* Counts the bf16 evaluation orders a passing case matched (bit mask);
 * remembers the first case that shares no order with the earlier ones. */
static void count_orders(muonref_checker *c, unsigned orders, const char *key)
{
  c->order_cases++;
  for (int k = 0; k < MUONREF_N_BF16_ORDERS; k++)
    c->order_count[k] += (orders >> k) & 1u;
  if (c->orders_all && !(c->orders_all & orders) && !c->order_break[0]) {
    char names[64] = "";
    for (int k = 0; k < MUONREF_N_BF16_ORDERS; k++)
      if ((orders >> k) & 1u)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? "," : "",
                 muonref_bf16_order_name((muonref_bf16_order)k));
    snprintf(c->order_break, sizeof c->order_break, "%.160s matched only %.60s", key, names);
  }
  c->orders_all &= orders;
}

/* The fit of the port (made at first use): in raw mode on a platform whose
 * probe found Python scalars rounded to bf16, every run also with them. */
static struct muonref_fit *fit_of(muonref_checker *c)
{
  if (!c->fit) {
    const char *scal = strcmp(c->mode, "neutral") && c->platform_json
                           ? json_string_value(json_object_get(c->platform_json, "scalar_mul")) : NULL;
    c->fit = muonref_fit_new(c->format, scal && strstr(scal, "bf16"));
  }
  return c->fit;
}

/* Diagnoses a failing case of an outside implementation; counts and logs
 * the diagnosis; its text into text (n bytes). */
static void diagnose(muonref_checker *c, const json_t *test, const char *kind, const char *file, const char *profile,
                     const json_t *r, char *text, size_t n)
{
  muonref_diagnosis d;
  if (!strcmp(kind, "error"))
    return;
  /* in neutral mode the port's bf16 arithmetic did not run on the platform's
   * kernels: the probe's findings cannot explain a failure */
  const json_t *plat = strcmp(c->mode, "neutral") ? c->platform_json : NULL;
  if (!muonref_diagnose(test, kind, profile, muonref_basename(file), r, c->format, plat, fit_of(c), &d)) {
    c->undiagnosed++;
    snprintf(text, n, "none: no catalogued fault, single option change or measured platform effect gives this result");
    if (c->log)
      fprintf(c->log, "  diagnosis: %s\n", text);
    return;
  }
  snprintf(text, n, "%s", d.text);
  if (!c->diagnoses)
    c->diagnoses = json_object();
  json_t *e = json_object_get(c->diagnoses, d.key);
  if (!e) {
    e = json_pack("{s:i,s:s}", "count", 0, "text", d.text);
    json_object_set_new(c->diagnoses, d.key, e);
  }
  json_object_set_new(e, "count", json_integer(json_integer_value(json_object_get(e, "count")) + 1));
  if (c->log)
    fprintf(c->log, "  diagnosis: %s\n", d.text);
}

/* Hands one verdict to c->on_case, if set. */
static int on_case(muonref_checker *c, const muonref_area_count *a, const json_t *test, const char *kind,
                   const char *file, const char *profile, const muonref_verdict *v, const char *diagnosis,
                   muonref_error *err)
{
  if (!c->on_case)
    return MUONREF_OK;
  char flags[256];
  flags_text(test, flags, sizeof flags);
  const char *comment = json_string_value(json_object_get(test, "comment"));
  const char *area = strchr(a->name, '/') ? strchr(a->name, '/') + 1 : a->name; /* "profile/area" */
  muonref_case_verdict cv = {muonref_basename(file), (long long)json_integer_value(json_object_get(test, "tcId")),
                             profile ? profile : "", area, kind, comment ? comment : "", flags,
                             v->pass, v->pass ? "" : v->detail, diagnosis, v->worst};
  return c->on_case(c->on_case_ctx, &cv, err);
}

/* A failing case with a "sharding" member run over several ranks: the
 * catalogue of faults knows single-process ports only, so say where to
 * look (spec/vectors.md 2.6). */
static void sharding_hint(muonref_checker *c, const json_t *test, const char *key)
{
  json_int_t ws = json_integer_value(json_object_get(c->distributed_json, "worldSize"));
  if (!json_object_get(test, "sharding") || ws < 2)
    return;
  c->sharded_failed++;
  if (!c->log)
    return;
  fprintf(c->log, "  hint: sharded case: run at world size %lld, the port does not give the whole matrix's update; if it "
                  "passes with --world-size 1, the fault is in the sharding (a slice orthogonalised alone, padding with "
                  "stale data, ranks disagreeing on the parameter order: spec/vectors.md 2.6)", (long long)ws);
  const json_t *dis = json_object_get(c->distributed_json, "ranksDisagree");
  size_t n = strlen(key);
  for (size_t i = 0; i < json_array_size(dis); i++) {
    const char *d = json_string_value(json_array_get(dis, i));
    if (d && !strncmp(d, key, n) && d[n] == ':')
      fprintf(c->log, "; ranks hold different values of%s", d + n + 1);
  }
  fputc('\n', c->log);
}

/* Judges one test; counts it in a; logs a failure. */
static int has_flag(const json_t *test, const char *flag)
{
  const json_t *f = json_object_get(test, "flags");
  for (size_t i = 0; i < json_array_size(f); i++)
    if (json_is_string(json_array_get(f, i)) && !strcmp(json_string_value(json_array_get(f, i)), flag))
      return 1;
  return 0;
}

static int check_test(muonref_checker *c, muonref_area_count *a, const json_t *test, const char *kind,
                      const char *file, const char *profile, const char *where, muonref_error *err)
{
  if (c->only_flag && !has_flag(test, c->only_flag))
    return MUONREF_OK;
  json_t *r = result_for(c, test, kind, file, profile, where, err);
  if (!r && c->fast)
    return err->status;
  muonref_verdict v = {0};
  int st = muonref_judge(test, kind, r, c->format, &v, where, err);
  if (st)
    json_decref(r), r = NULL;
  if (st == MUONREF_EFORMAT && !c->fast && v.bad_result) {
    char msg[MUONREF_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err->message);
    muonref_fail(err, st, "%s: the entry for %s tcId %lld: %.400s", c->results_path, muonref_basename(file),
                 (long long)json_integer_value(json_object_get(test, "tcId")), msg);
  }
  if (st)
    return st;
  long long id = json_integer_value(json_object_get(test, "tcId"));
  char key[512];
  snprintf(key, sizeof key, "%s#%lld", muonref_basename(file), id);
  int known = c->baseline && json_object_get(c->baseline, key);
  if (v.pass && c->diagnose && !c->fast && r)
    muonref_fit_pass(fit_of(c), test, kind, profile, muonref_basename(file), r, v.orders);
  if (v.pass) {
    a->passed++, c->passed++;
    a->any_passed = 1;
    a->worst = v.worst > a->worst ? v.worst : a->worst;
    if (v.orders)
      count_orders(c, v.orders, key);
    if (v.norm_overflow) {
      c->norm_overflow++;
      if (c->log)
        fprintf(c->log, "PASS %s tcId %lld: %s\n", muonref_basename(file), id, v.detail);
    }
    if (known) {
      c->fixed++;
      if (c->log)
        fprintf(c->log, "FIXED %s tcId %lld: listed in the baseline, passes now\n", muonref_basename(file), id);
    }
    json_decref(r);
    return on_case(c, a, test, kind, file, profile, &v, "", err);
  }
  if (known)
    a->known++, c->known++;
  else
    a->failed++, c->failed++;
  if (c->failures)
    json_object_set_new(c->failures, key, json_string(json_string_value(json_object_get(test, "comment"))));
  if (c->log) {
    char flags[256];
    flags_text(test, flags, sizeof flags);
    fprintf(c->log, "%s %s tcId %lld [%s] %s: %s", known ? "KNOWN" : "FAIL", muonref_basename(file), id, flags,
            json_string_value(json_object_get(test, "comment")), v.detail);
    if (strchr(v.failing, ','))
      fprintf(c->log, " [failing: %s]", v.failing);
    fputc('\n', c->log);
  }
  char dtext[512] = "";
  if (c->diagnose && !known)
    diagnose(c, test, kind, file, profile, r, dtext, sizeof dtext);
  if (!known)
    sharding_hint(c, test, key);
  json_decref(r);
  return on_case(c, a, test, kind, file, profile, &v, dtext, err);
}

/* Every tcId an integer >= 1, unique in the file; numberOfTests right. */
static int check_ids(const json_t *j, const char *file, muonref_error *err)
{
  json_t *seen = json_object();
  const json_t *groups = json_object_get(j, "testGroups");
  long n = 0;
  int st = MUONREF_OK;
  for (size_t g = 0; !st && g < json_array_size(groups); g++) {
    const json_t *tests = json_object_get(json_array_get(groups, g), "tests");
    for (size_t t = 0; !st && t < json_array_size(tests); t++, n++) {
      const json_t *id = json_object_get(json_array_get(tests, t), "tcId");
      char key[32];
      snprintf(key, sizeof key, "%lld", (long long)json_integer_value(id));
      if (!json_is_integer(id) || json_integer_value(id) < 1)
        st = muonref_fail(err, MUONREF_EFORMAT, "%s: testGroups[%zu].tests[%zu]: \"tcId\" must be an integer >= 1", file,
                          g, t);
      else if (json_object_get(seen, key))
        st = muonref_fail(err, MUONREF_EFORMAT, "%s: testGroups[%zu].tests[%zu]: tcId %s appears twice", file, g, t, key);
      else
        json_object_set_new(seen, key, json_true());
    }
  }
  json_decref(seen);
  if (!st && json_integer_value(json_object_get(j, "numberOfTests")) != n)
    st = muonref_fail(err, MUONREF_EFORMAT, "%s: \"numberOfTests\" must be %ld, the number of tests in the file", file, n);
  return st;
}

static int check_file(muonref_checker *c, const char *file, muonref_error *err)
{
  json_t *j = muonref_vector_file_load(file, err);
  if (!j)
    return err->status;
  const char *profile = json_string_value(json_object_get(j, "profile"));
  muonref_area_count *a = area(c, profile, json_string_value(json_object_get(j, "area")));
  json_object_set_new(c->used, muonref_basename(file), json_true()); /* a judged file */
  const json_t *groups = json_object_get(j, "testGroups");
  int st = check_ids(j, file, err);
  for (size_t g = 0; !st && g < json_array_size(groups); g++) {
    const json_t *grp = json_array_get(groups, g), *tests = json_object_get(grp, "tests");
    const char *kind = json_string_value(json_object_get(grp, "kind"));
    if (!kind || !json_is_array(tests)) {
      st = muonref_fail(err, MUONREF_EFORMAT, "%s: testGroups[%zu] needs \"kind\" and \"tests\"", file, g);
      break;
    }
    for (size_t t = 0; !st && t < json_array_size(tests); t++) {
      char where[512];
      snprintf(where, sizeof where, "%s: testGroups[%zu].tests[%zu]", file, g, t);
      st = check_test(c, a, json_array_get(tests, t), kind, file, profile, where, err);
    }
  }
  json_decref(j);
  return st;
}

int muonref_checker_results(muonref_checker *c, const char *path, muonref_error *err)
{
  memset(c, 0, sizeof *c);
  struct stat sb;
  if (stat(path, &sb) != 0)
    return muonref_fail(err, MUONREF_EIO, "%s: %s", path, strerror(errno));
  if (S_ISDIR(sb.st_mode))
    return muonref_fail(err, MUONREF_EIO, "%s: is a folder, expected a results file (JSON)", path);
  json_t *j = muonref_json_load_strict(path, err);
  if (!j)
    return err->status;
  if (muonref_results_file_validate(j, path, err)) {
    json_decref(j);
    return err->status;
  }
  const char *fmt = json_string_value(json_object_get(j, "nsFormat"));
  const json_t *rs = json_object_get(j, "results");
  int st = MUONREF_OK;
  if (!fmt || muonref_ns_format_parse(fmt, &c->format, NULL) || c->format == MUONREF_NS_EXACT)
    st = muonref_fail(err, MUONREF_EFORMAT, "%s: member \"nsFormat\" must be \"bf16\" or \"fp32\"", path);
  else if (!json_is_array(rs))
    st = muonref_fail(err, MUONREF_EFORMAT, "%s: member \"results\" must be an array", path);
  c->results = json_object();
  for (size_t i = 0; !st && i < json_array_size(rs); i++) {
    const json_t *e = json_array_get(rs, i);
    const char *file = json_string_value(json_object_get(e, "file"));
    if (!file || !json_is_integer(json_object_get(e, "tcId"))) {
      st = muonref_fail(err, MUONREF_EFORMAT, "%s: results[%zu] needs \"file\" and an integer \"tcId\"", path, i);
      break;
    }
    char key[512];
    snprintf(key, sizeof key, "%s#%lld", file, (long long)json_integer_value(json_object_get(e, "tcId")));
    if (json_object_get(c->results, key)) {
      st = muonref_fail(err, MUONREF_EFORMAT, "%s: results[%zu]: a second result for %s tcId %lld", path, i, file,
                        (long long)json_integer_value(json_object_get(e, "tcId")));
      break;
    }
    json_object_set(c->results, key, (json_t *)e);
  }
  snprintf(c->results_path, sizeof c->results_path, "%s", path);
  c->orders_all = ~0u;
  const char *mode = json_string_value(json_object_get(j, "mode"));
  snprintf(c->mode, sizeof c->mode, "%s", mode ? mode : "");
  const char *lifecycle = json_string_value(json_object_get(j, "lifecycle"));
  snprintf(c->lifecycle, sizeof c->lifecycle, "%s", lifecycle ? lifecycle : "");
  const json_t *plat = json_object_get(j, "platform");
  if (plat && !json_is_object(plat) && !st)
    st = muonref_fail(err, MUONREF_EFORMAT, "%s: member \"platform\" must be an object (name: finding)", path);
  const char *pk;
  json_t *pv;
  if (json_is_object(plat))
    c->platform_json = json_incref((json_t *)plat);
  const json_t *dist = json_object_get(j, "distributed");
  if (json_is_object(dist))
    c->distributed_json = json_incref((json_t *)dist);
  size_t as_spec = 0;
  json_object_foreach((json_t *)plat, pk, pv) {
    const char *text = json_string_value(pv);
    /* the probe's values that spec/muon.md section 7 requires */
    if (text && (!strcmp(text, "binary32") || !strcmp(text, "one rounding") ||
                 !strcmp(text, "one rounding, binary32 scalars"))) {
      as_spec++;
      continue;
    }
    size_t used = strlen(c->platform);
    char *dump = text ? NULL : json_dumps(pv, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(c->platform + used, sizeof c->platform - used, "%s%s = %s", used ? "; " : "", pk, text ? text : dump);
    free(dump);
  }
  if (plat && json_object_size(plat)) {
    size_t used = strlen(c->platform);
    snprintf(c->platform + used, sizeof c->platform - used, "%s%zu other finding%s as the spec requires",
             used ? "; " : "", as_spec, as_spec == 1 ? "" : "s");
  }
  const char *name = json_string_value(json_object_get(j, "implementation"));
  snprintf(c->impl_name, sizeof c->impl_name, "%s", name ? name : path);
  json_decref(j);
  return st;
}

/* Every entry of a results file that names a judged file must name one of
 * its cases (entries for files not judged in this run are ignored). */
static int check_all_used(const muonref_checker *c, muonref_error *err)
{
  const char *key;
  json_t *v;
  json_object_foreach(c->results, key, v) {
    char file[512];
    snprintf(file, sizeof file, "%s", key);
    char *hash = strrchr(file, '#');
    if (hash)
      *hash = '\0';
    if (json_object_get(c->used, file) && !json_object_get(c->used, key))
      return muonref_fail(err, MUONREF_EFORMAT, "%s: a result for %s tcId %s, which is no case of that file",
                          c->results_path, file, hash ? hash + 1 : "?");
  }
  return MUONREF_OK;
}

int muonref_checker_run(muonref_checker *c, char *const *paths, int n, muonref_error *err)
{
  char **files = NULL;
  size_t count = 0;
  if (!c->used)
    c->used = json_object();
  int st = muonref_files_collect(paths, n, &files, &count, err);
  for (size_t i = 0; !st && i < count; i++)
    st = check_file(c, files[i], err);
  if (!st && count == 0)
    st = muonref_fail(err, MUONREF_EFORMAT, "no vector files (*.json) under the given paths");
  if (!st && !c->fast)
    st = check_all_used(c, err);
  muonref_files_free(files);
  return st;
}

void muonref_checker_report(const muonref_checker *c, FILE *out)
{
  fprintf(out, "\n%-28s %8s %8s  %s\n", "area", "passed", "failed", "worst deviation / allowance (passing cases)");
  for (int i = 0; i < c->n_areas; i++) {
    const muonref_area_count *a = &c->areas[i];
    char known[48] = "";
    if (a->known)
      snprintf(known, sizeof known, "  (+%ld known)", a->known);
    if (a->any_passed)
      fprintf(out, "%-28s %8ld %8ld  %.3g%s\n", a->name, a->passed, a->failed, a->worst, known);
    else
      fprintf(out, "%-28s %8ld %8ld  -%s\n", a->name, a->passed, a->failed, known);
  }
  if (c->order_cases) {
    fprintf(out, "bf16 evaluation orders matched (of %ld cases that tell them apart or not):", c->order_cases);
    for (int k = 0; k < MUONREF_N_BF16_ORDERS; k++)
      fprintf(out, " %s %ld%s", muonref_bf16_order_name((muonref_bf16_order)k), c->order_count[k],
              k + 1 < MUONREF_N_BF16_ORDERS ? "," : "\n");
    if (c->order_break[0])
      fprintf(out, "WARNING: no one bf16 evaluation order matches every case (%s): the port evaluates "
                   "Newton-Schulz differently in different cases\n", c->order_break);
  }
  if (c->norm_overflow)
    fprintf(out, "norm overflowed binary32: %ld case%s matched the alternative of a zero Newton-Schulz output "
                 "(spec/vectors.md 2.7)\n", c->norm_overflow, c->norm_overflow == 1 ? "" : "s");
  if (c->mode[0])
    fprintf(out, "mode: %s%s\n", c->mode,
            !strcmp(c->mode, "neutral") ? " (bf16 operations computed in binary32 and rounded once: the port's logic, "
                                          "not the platform's arithmetic)" : "");
  if (!strcmp(c->lifecycle, "training-loop"))
    fprintf(out, "lifecycle: training-loop (zero_grad(set_to_none=True), gradients accumulated in .grad over two "
                 "micro-batches, step(closure))\n");
  if (c->platform[0])
    fprintf(out, "platform (driver probe): %s\n", c->platform);
  fprintf(out, "implementation: %s; Newton-Schulz in %s\n", c->impl_name, c->format == MUONREF_NS_BF16 ? "bf16" : "fp32");
  if (c->baseline)
    fprintf(out, "baseline: %ld known failures not counted, %ld baseline cases pass now\n", c->known, c->fixed);
  const char *key;
  json_t *e;
  json_object_foreach(c->diagnoses, key, e)
    fprintf(out, "diagnosis: %lld failure%s [%s]: %s\n", (long long)json_integer_value(json_object_get(e, "count")),
            json_integer_value(json_object_get(e, "count")) == 1 ? "" : "s", key,
            json_string_value(json_object_get(e, "text")));
  if (c->undiagnosed)
    fprintf(out, "diagnosis: %ld failures that no catalogued fault, single option change or measured platform effect "
                 "explains\n", c->undiagnosed);
  muonref_fit_report(c->fit, out);
  if (c->sharded_failed)
    fprintf(out, "sharding: %ld failures of sharded cases run at world size %lld (hints under their FAIL lines)\n",
            c->sharded_failed, (long long)json_integer_value(json_object_get(c->distributed_json, "worldSize")));
  fprintf(out, "%ld passed, %ld failed\n", c->passed, c->failed);
}

int muonref_checker_baseline(muonref_checker *c, const char *path, muonref_error *err)
{
  FILE *f = fopen(path, "r");
  if (!f)
    return muonref_fail(err, MUONREF_EIO, "%s: %s", path, strerror(errno));
  c->baseline = json_object();
  char line[1024];
  int st = MUONREF_OK;
  for (long n = 1; !st && fgets(line, sizeof line, f); n++) {
    char key[1024];
    if (line[0] == '#' || sscanf(line, "%1023s", key) != 1)
      continue;
    char *hash = strrchr(key, '#');
    char *end = NULL;
    long long id = hash ? strtoll(hash + 1, &end, 10) : 0;
    if (!hash || hash == key || !end || *end || id < 1)
      st = muonref_fail(err, MUONREF_EFORMAT, "%s:%ld: expected FILE#TCID (e.g. nemo_momentum.json#3), got \"%.200s\"",
                        path, n, key);
    else
      json_object_set_new(c->baseline, key, json_true());
  }
  fclose(f);
  return st;
}

int muonref_checker_write_failures(const muonref_checker *c, const char *path, muonref_error *err)
{
  char tmp[4200];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
    return muonref_fail(err, MUONREF_EIO, "%s: path too long", path);
  FILE *f = fopen(tmp, "w");
  if (!f)
    return muonref_fail(err, MUONREF_EIO, "%s: %s", tmp, strerror(errno));
  fprintf(f, "# muonref check expected failures of %s: one FILE#TCID per line (--baseline reads it)\n", c->impl_name);
  const char *key;
  json_t *v;
  json_object_foreach(c->failures, key, v)
    fprintf(f, "%s  %s\n", key, json_string_value(v) ? json_string_value(v) : "");
  int bad = ferror(f);
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    int e = errno;
    remove(tmp);
    return muonref_fail(err, MUONREF_EIO, "%s: %s", path, strerror(e));
  }
  return MUONREF_OK;
}

void muonref_checker_free(muonref_checker *c)
{
  json_decref(c->results);
  json_decref(c->written);
  json_decref(c->used);
  json_decref(c->baseline);
  json_decref(c->failures);
  json_decref(c->platform_json);
  json_decref(c->distributed_json);
  c->distributed_json = NULL;
  json_decref(c->diagnoses);
  muonref_fit_free(c->fit);
  c->fit = NULL;
  c->results = c->written = c->used = c->baseline = c->failures = c->platform_json = c->diagnoses = NULL;
}
