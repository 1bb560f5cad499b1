/* muonref: second verdicts from other runs of the same port (see other_run.h). */
#include <stdio.h>
#include <string.h>
#include "vectors/judge/other_run.h"
#include "core/fail.h"

int muonref_other_run_init(muonref_other_run *run, const char *name, const char *path, const json_t *entries,
                           int partial, int enforced, muonref_error *err)
{
  memset(run, 0, sizeof *run);
  snprintf(run->name, sizeof run->name, "%s", name);
  snprintf(run->path, sizeof run->path, "%s", path);
  run->partial = partial, run->enforced = enforced;
  run->results = json_object();
  if (!run->results)
    return muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  for (size_t i = 0; i < json_array_size(entries); i++) {
    const json_t *e = json_array_get(entries, i);
    char key[600];
    snprintf(key, sizeof key, "%s#%lld", json_string_value(json_object_get(e, "file")),
             (long long)json_integer_value(json_object_get(e, "tcId")));
    if (json_object_get(run->results, key))
      return muonref_fail(err, MUONREF_EFORMAT, "%s: %s results: a second result for %s", path, name, key);
    if (json_object_set(run->results, key, (json_t *)e))
      return muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  }
  return MUONREF_OK;
}

int muonref_other_run_judge(muonref_other_run *run, const json_t *test, const char *kind, const char *file,
                            const json_t *judged, int judged_pass, muonref_ns_format format, const char *where,
                            muonref_other_verdict *out, muonref_error *err)
{
  char key[600];
  snprintf(key, sizeof key, "%s#%lld", file, (long long)json_integer_value(json_object_get(test, "tcId")));
  const json_t *e = json_object_get(run->results, key);
  muonref_verdict v = {0};
  if ((!e && run->partial) || (e && judged && json_equal((json_t *)e, (json_t *)judged))) {
    v.pass = judged_pass;
    snprintf(v.detail, sizeof v.detail, "the same result as the judged run, which fails");
  } else {
    int st = muonref_judge(test, kind, e, format, &v, where, err);
    if (st == MUONREF_EFORMAT && v.bad_result) {
      char msg[MUONREF_ERROR_MESSAGE_MAX];
      snprintf(msg, sizeof msg, "%s", err->message);
      return muonref_fail(err, st, "%s: the %s entry for %s: %.400s", run->path, run->name, key, msg);
    }
    if (st)
      return st;
  }
  out->pass = v.pass;
  snprintf(out->detail, sizeof out->detail, "%s", v.pass ? "passes" : v.detail);
  if (v.pass)
    run->passed++;
  else
    run->failed++, run->only += judged_pass;
  return MUONREF_OK;
}

void muonref_other_run_free(muonref_other_run *run)
{
  json_decref(run->results);
  run->results = NULL;
}
