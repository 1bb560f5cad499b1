/* muonref check: judges an implementation against vector files
 * (spec/vectors.md).  Our fast path runs in-process (--impl fast-bf16 |
 * fast-fp32, optionally with a deliberate --fault); an outside
 * implementation is judged from its results file (--results FILE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../fast/faults.h"
#include "../vectors/files.h"
#include "../vectors/judge.h"
#include "../vectors/run_fast.h"
#include "commands.h"

typedef struct area_count { char name[128]; long passed, failed; } area_count;

typedef struct checker {
  int fast;                 /* 1: run our fast path; 0: judge a results file */
  muonref_ns_format format;
  int fault;
  json_t *results;          /* "file#tcId" -> result entry (results mode) */
  json_t *written;          /* results to write (--write-results), or NULL */
  const char *impl_name;
  area_count areas[256];
  int n_areas;
  long passed, failed;
  int quiet;
} checker;

static int usage(void)
{
  fprintf(stderr,
          "usage: muonref check (--impl fast-bf16|fast-fp32 [--fault NAME] | --results FILE)\n"
          "                     [--write-results FILE] [--quiet] [VECTOR FILES OR DIRS...]\n"
          "       muonref check --fault list\n"
          "Judges an implementation against golden vectors (default: the vectors/ folder).\n");
  return EXIT_USAGE;
}

static area_count *area(checker *c, const char *profile, const char *name)
{
  char key[128];
  snprintf(key, sizeof key, "%s/%s", profile, name);
  for (int i = 0; i < c->n_areas; i++)
    if (!strcmp(c->areas[i].name, key))
      return &c->areas[i];
  area_count *a = &c->areas[c->n_areas < 255 ? c->n_areas++ : 255];
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

static json_t *result_for(checker *c, const json_t *test, const char *kind, const char *file, const char *profile,
                          const char *where, muonref_error *err)
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
  return json_incref(r);
}

/* Judges every test of one file; returns MUONREF_OK or a format error. */
static int check_file(checker *c, const char *file, muonref_error *err)
{
  json_t *j = muonref_vector_file_load(file, err);
  if (!j)
    return err->status;
  const char *profile = json_string_value(json_object_get(j, "profile"));
  area_count *a = area(c, profile, json_string_value(json_object_get(j, "area")));
  const json_t *groups = json_object_get(j, "testGroups");
  int st = MUONREF_OK;
  for (size_t g = 0; !st && g < json_array_size(groups); g++) {
    const json_t *grp = json_array_get(groups, g), *tests = json_object_get(grp, "tests");
    const char *kind = json_string_value(json_object_get(grp, "kind"));
    if (!kind || !json_is_array(tests)) {
      st = muonref_fail(err, MUONREF_EFORMAT, "%s: testGroups[%zu] needs \"kind\" and \"tests\"", file, g);
      break;
    }
    for (size_t t = 0; !st && t < json_array_size(tests); t++) {
      const json_t *test = json_array_get(tests, t);
      char where[512], flags[256];
      snprintf(where, sizeof where, "%s: testGroups[%zu].tests[%zu]", file, g, t);
      json_t *r = result_for(c, test, kind, file, profile, where, err);
      if (!r && c->fast)
        st = err->status;
      muonref_verdict v;
      if (!st)
        st = muonref_judge(test, kind, r, c->format, &v, where, err);
      json_decref(r);
      if (st)
        break;
      if (v.pass) {
        a->passed++, c->passed++;
        continue;
      }
      a->failed++, c->failed++;
      flags_text(test, flags, sizeof flags);
      if (!c->quiet)
        printf("FAIL %s tcId %lld [%s] %s: %s\n", muonref_basename(file),
               (long long)json_integer_value(json_object_get(test, "tcId")), flags,
               json_string_value(json_object_get(test, "comment")), v.detail);
    }
  }
  json_decref(j);
  return st;
}

/* Loads a results file into c->results ("file#tcId" -> entry). */
static int load_results(checker *c, const char *path, muonref_error *err)
{
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
    json_object_set(c->results, key, (json_t *)e);
  }
  c->impl_name = json_string_value(json_object_get(j, "implementation"));
  c->impl_name = c->impl_name ? strdup(c->impl_name) : "results file";
  json_decref(j);
  return st;
}

static int list_faults(void)
{
  for (int f = 1; f < MUONREF_FAULT_COUNT; f++) {
    const muonref_fault_info *i = muonref_fault_info_at(f);
    printf("%-26s %s [%s]\n", i->name, i->description, i->source);
  }
  return EXIT_OK;
}

static void report(const checker *c)
{
  printf("\n%-32s %8s %8s\n", "area", "passed", "failed");
  for (int i = 0; i < c->n_areas; i++)
    printf("%-32s %8ld %8ld\n", c->areas[i].name, c->areas[i].passed, c->areas[i].failed);
  printf("implementation: %s, Newton-Schulz in %s\n", c->impl_name, muonref_ns_format_name(c->format));
  printf("%ld passed, %ld failed\n", c->passed, c->failed);
}

int cmd_check(int argc, char **argv)
{
  checker c = {0};
  const char *impl = NULL, *results = NULL, *fault = NULL, *write = NULL;
  char *paths[256];
  int n = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if ((!strcmp(a, "--impl") || !strcmp(a, "--results") || !strcmp(a, "--fault") || !strcmp(a, "--write-results")) &&
        i + 1 >= argc) {
      fprintf(stderr, "muonref check: %s needs a value\n", a);
      return usage();
    }
    if (!strcmp(a, "--impl"))
      impl = argv[++i];
    else if (!strcmp(a, "--results"))
      results = argv[++i];
    else if (!strcmp(a, "--fault"))
      fault = argv[++i];
    else if (!strcmp(a, "--write-results"))
      write = argv[++i];
    else if (!strcmp(a, "--quiet"))
      c.quiet = 1;
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "muonref check: unknown option %s\n", a);
      return usage();
    } else if (n < 256)
      paths[n++] = argv[i];
  }
  if (fault && !strcmp(fault, "list"))
    return list_faults();
  if (!!impl == !!results) {
    fprintf(stderr, "muonref check: give exactly one of --impl and --results\n");
    return usage();
  }
  if (impl && strcmp(impl, "fast-bf16") && strcmp(impl, "fast-fp32")) {
    fprintf(stderr, "muonref check: --impl '%s': expected fast-bf16 or fast-fp32\n", impl);
    return EXIT_USAGE;
  }
  if (fault && (!impl || (c.fault = muonref_fault_parse(fault)) < 0)) {
    fprintf(stderr, "muonref check: --fault '%s': %s\n", fault,
            impl ? "unknown fault (muonref check --fault list names them)" : "faults apply to --impl only");
    return EXIT_USAGE;
  }
  muonref_error err = {0};
  if (impl) {
    c.fast = 1;
    c.format = strcmp(impl, "fast-bf16") ? MUONREF_NS_FP32 : MUONREF_NS_BF16;
    c.impl_name = impl;
  } else if (load_results(&c, results, &err)) {
    fprintf(stderr, "muonref check: %s\n", err.message);
    json_decref(c.results);
    return EXIT_USAGE;
  }
  if (write && c.fast) {
    c.written = json_object();
    json_object_set_new(c.written, "implementation", json_string(fault ? fault : impl));
    json_object_set_new(c.written, "nsFormat", json_string(muonref_ns_format_name(c.format)));
    json_object_set_new(c.written, "results", json_array());
  }
  if (n == 0)
    paths[n++] = "vectors";
  char **files = NULL;
  size_t count = 0;
  int st = muonref_files_collect(paths, n, &files, &count, &err);
  for (size_t i = 0; !st && i < count; i++)
    st = check_file(&c, files[i], &err);
  if (!st && count == 0)
    st = muonref_fail(&err, MUONREF_EFORMAT, "no vector files (*.json) under the given paths");
  muonref_files_free(files);
  json_decref(c.results);
  if (!st && c.written)
    st = muonref_json_write_atomic(c.written, write, 0, &err);
  json_decref(c.written);
  if (st) {
    fprintf(stderr, "muonref check: %s\n", err.message);
    return st == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  report(&c);
  return c.failed ? EXIT_FAILED : EXIT_OK;
}
