/* muonref: the vector checker (see checker.h). */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "checker.h"
#include "files.h"
#include "judge.h"
#include "run_fast.h"

void muonref_checker_fast(muonref_checker *c, muonref_ns_format format, int fault)
{
  memset(c, 0, sizeof *c);
  c->fast = 1;
  c->format = format;
  c->fault = fault;
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

/* Hands one verdict to c->on_case, if set. */
static int on_case(muonref_checker *c, const muonref_area_count *a, const json_t *test, const char *kind,
                   const char *file, const char *profile, const muonref_verdict *v, muonref_error *err)
{
  if (!c->on_case)
    return MUONREF_OK;
  char flags[256];
  flags_text(test, flags, sizeof flags);
  const char *comment = json_string_value(json_object_get(test, "comment"));
  const char *area = strchr(a->name, '/') ? strchr(a->name, '/') + 1 : a->name; /* "profile/area" */
  muonref_case_verdict cv = {muonref_basename(file), (long long)json_integer_value(json_object_get(test, "tcId")),
                             profile ? profile : "", area, kind, comment ? comment : "", flags,
                             v->pass, v->pass ? "" : v->detail, "", v->worst};
  return c->on_case(c->on_case_ctx, &cv, err);
}

/* Judges one test; counts it in a; logs a failure. */
static int check_test(muonref_checker *c, muonref_area_count *a, const json_t *test, const char *kind,
                      const char *file, const char *profile, const char *where, muonref_error *err)
{
  json_t *r = result_for(c, test, kind, file, profile, where, err);
  if (!r && c->fast)
    return err->status;
  muonref_verdict v;
  int st = muonref_judge(test, kind, r, c->format, &v, where, err);
  json_decref(r);
  if (st == MUONREF_EFORMAT && !c->fast && !strncmp(err->message, "result", 6)) {
    char msg[MUONREF_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err->message);
    muonref_fail(err, st, "%s: the entry for %s tcId %lld: %.400s", c->results_path, muonref_basename(file),
                 (long long)json_integer_value(json_object_get(test, "tcId")), msg);
  }
  if (st)
    return st;
  if (v.pass) {
    a->passed++, c->passed++;
    a->worst = v.worst > a->worst ? v.worst : a->worst;
    return on_case(c, a, test, kind, file, profile, &v, err);
  }
  a->failed++, c->failed++;
  if (c->log) {
    char flags[256];
    flags_text(test, flags, sizeof flags);
    fprintf(c->log, "FAIL %s tcId %lld [%s] %s: %s\n", muonref_basename(file),
            (long long)json_integer_value(json_object_get(test, "tcId")), flags,
            json_string_value(json_object_get(test, "comment")), v.detail);
  }
  return on_case(c, a, test, kind, file, profile, &v, err);
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
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (!j)
    return muonref_fail(err, je.line < 0 ? MUONREF_EIO : MUONREF_EFORMAT, "%s:%d:%d: %s", path, je.line, je.column,
                        je.text);
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
  for (int i = 0; i < c->n_areas; i++)
    fprintf(out, "%-28s %8ld %8ld  %.3g\n", c->areas[i].name, c->areas[i].passed, c->areas[i].failed, c->areas[i].worst);
  fprintf(out, "implementation: %s; Newton-Schulz in %s\n", c->impl_name, c->format == MUONREF_NS_BF16 ? "bf16" : "fp32");
  fprintf(out, "%ld passed, %ld failed\n", c->passed, c->failed);
}

void muonref_checker_free(muonref_checker *c)
{
  json_decref(c->results);
  json_decref(c->written);
  json_decref(c->used);
  c->results = c->written = c->used = NULL;
}
