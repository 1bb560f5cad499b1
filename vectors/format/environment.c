/* muonref: the environment statement of a submission (environment.h). */
#include <string.h>
#include "vectors/format/environment.h"
#include "core/fail.h"
#include "vectors/format/files.h"
#include "vectors/format/release.h"
#include "vectors/format/validate.h"

#define SCHEMA "muonref-environment-v1"

/* The members, each a non-empty string; the required ones first. */
static const char *const REQUIRED[] = {"schema", "port", "source", "profile", "framework", "device", "mode", "vectors"};
static const char *const OPTIONAL[] = {"nsFormat", "notes"};
#define N_OF(a) (sizeof a / sizeof a[0])

static int known(const char *key)
{
  for (size_t i = 0; i < N_OF(REQUIRED); i++)
    if (!strcmp(key, REQUIRED[i]))
      return 1;
  for (size_t i = 0; i < N_OF(OPTIONAL); i++)
    if (!strcmp(key, OPTIONAL[i]))
      return 1;
  return 0;
}

/* The statement's form: an object of known, non-empty string members,
 * every required one present, the schema this reader knows. */
static int check_form(const char *path, const json_t *j, muonref_error *err)
{
  if (!json_is_object(j))
    return muonref_fail(err, MUONREF_EFORMAT, "%s: an environment statement is a JSON object", path);
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)j, key, v) {
    if (!known(key))
      return muonref_fail(err, MUONREF_EFORMAT, "%s: member \"%.100s\" is not one of an environment statement "
                                                "(spec/vectors.md 9)", path, key);
    if (!json_is_string(v) || !json_string_length(v))
      return muonref_fail(err, MUONREF_EFORMAT, "%s: member \"%s\" must be a non-empty string", path, key);
  }
  for (size_t i = 0; i < N_OF(REQUIRED); i++)
    if (!json_object_get(j, REQUIRED[i]))
      return muonref_fail(err, MUONREF_EFORMAT, "%s: member \"%s\" is missing (spec/vectors.md 9)", path,
                          REQUIRED[i]);
  const char *schema = json_string_value(json_object_get(j, "schema"));
  if (strcmp(schema, SCHEMA))
    return muonref_fail(err, MUONREF_EFORMAT, "%s: member \"schema\" is \"%.100s\", expected \"" SCHEMA "\"", path,
                        schema);
  return MUONREF_OK;
}

/* A member that must equal what the run shows. */
static int agree(const char *path, const json_t *j, const char *key, const char *shown, const char *where,
                 muonref_error *err)
{
  const char *said = json_string_value(json_object_get(j, key));
  if (said && strcmp(said, shown))
    return muonref_fail(err, MUONREF_EFORMAT, "%s: member \"%s\" is \"%.200s\", %s is \"%.200s\"", path, key, said,
                        where, shown);
  return MUONREF_OK;
}

/* The run's facts, as the checker read them from the results file. */
static int check_run(const char *path, const json_t *j, const muonref_checker *c, muonref_error *err)
{
  int st = agree(path, j, "mode", c->mode[0] ? c->mode : "raw", "the results file's", err);
  if (!st)
    st = agree(path, j, "nsFormat", muonref_ns_format_name(c->format), "the results file's", err);
  char fw[160];
  if (!st && c->torch[0]) {
    snprintf(fw, sizeof fw, "torch %.100s", c->torch);
    st = agree(path, j, "framework", fw, "the results file's (its \"torch\" member)", err);
  }
  return st;
}

/* The judged vector files' release and profile: each file read for its
 * "release" and "profile" members only (the run validates it in full). */
static int check_vectors(const char *path, const json_t *j, char *const *paths, int n, muonref_error *err)
{
  char **files = NULL, release[64] = "";
  size_t count = 0;
  int st = muonref_files_collect(paths, n, &files, &count, err);
  const char *profile = json_string_value(json_object_get(j, "profile"));
  for (size_t i = 0; !st && i < count; i++) {
    json_t *v = muonref_json_load_strict(files[i], err);
    if (!v) {
      st = err->status;
      break;
    }
    muonref_release_merge(release, sizeof release, json_string_value(json_object_get(v, "release")));
    const char *p = json_string_value(json_object_get(v, "profile"));
    if (p && strcmp(p, profile))
      st = muonref_fail(err, MUONREF_EFORMAT, "%s: member \"profile\" is \"%.100s\", the vector file %.300s is "
                        "profile \"%.100s\"", path, profile, files[i], p);
    json_decref(v);
  }
  muonref_files_free(files);
  if (st)
    return st;
  if (!release[0] || !strcmp(release, "none") || !strcmp(release, "mixed"))
    return muonref_fail(err, MUONREF_EFORMAT, "%s: the judged vector files have %s release: a submission is "
                        "judged against one release (spec/vectors.md 2.9)", path,
                        !strcmp(release, "mixed") ? "more than one" : "no");
  return agree(path, j, "vectors", release, "the judged vector files' release", err);
}

int muonref_environment_check(const char *path, const muonref_checker *c, char *const *paths, int n,
                              muonref_error *err)
{
  json_t *j = muonref_json_load(path, 0, err);
  if (!j)
    return err->status;
  int st = check_form(path, j, err);
  if (!st)
    st = check_run(path, j, c, err);
  if (!st)
    st = check_vectors(path, j, paths, n, err);
  json_decref(j);
  return st;
}
