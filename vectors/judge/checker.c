/* muonref: the vector checker (see checker.h). */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "vectors/judge/checker.h"
#include "vectors/format/case.h"
#include "vectors/judge/baseline.h"
#include "vectors/judge/diagnose.h"
#include "vectors/format/escape.h"
#include "vectors/judge/fit.h"
#include "vectors/format/files.h"
#include "vectors/judge/judge.h"
#include "vectors/judge/run_fast.h"
#include "vectors/format/validate.h"
#include "vectors/format/release.h"
#include "core/fail.h"
#include "core/output.h"

void muonref_checker_fast(muonref_checker *c, muonref_ns_format format, int fault)
{
  memset(c, 0, sizeof *c);
  c->fast = 1;
  c->format = format;
  c->fault = fault;
  c->orders_all = ~0u;
  snprintf(c->impl_name, sizeof c->impl_name, "muonref fast path (%s)", format == MUONREF_NS_BF16 ? "bf16" : "fp32");
}

/* Writes a string from a vector or results file to a text report, its
 * control characters escaped (escape.h): no forged lines, no terminal
 * escapes. */
static void put(FILE *f, const char *s)
{
  muonref_escape_fputs(f, s, MUONREF_ESCAPE_TEXT);
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
  return json_incref(json_object_get(c->results, key));
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

/* Whether every tensor of `failing` (the judge's list, "params[0],
 * state[2].exp_avg"; muonref_verdict.failing, complete) belongs to a
 * parameter whose expected state is AdamW's (exp_avg), and none is its
 * p.grad after the step ("params[1].grad": what step() wrote there, not the
 * fallback's arithmetic): then the difference lies in the fallback,
 * whatever the fit could not name. */
static int failing_only_adamw(const json_t *test, const char *failing, size_t cap)
{
  const json_t *st = json_object_get(json_object_get(test, "expected"), "state");
  if (!json_is_array(st) || !*failing || strlen(failing) + 40 >= cap) /* none, or the list may be cut */
    return 0;
  for (const char *at = failing; *at;) {
    const char *lb = strchr(at, '[');
    char *end;
    long i = lb ? strtol(lb + 1, &end, 10) : -1;
    if (i < 0 || !json_object_get(json_array_get(st, (size_t)i), "exp_avg"))
      return 0;
    if (!strncmp(end, "].grad", 6)) /* p.grad after the step (gradAfter): what step() left there, not the fallback */
      return 0;
    const char *comma = strchr(at, ',');
    at = comma ? comma + 1 + (comma[1] == ' ') : at + strlen(at);
  }
  return 1;
}

/* Counts failing case `label` ("FILE#TCID") under diagnosis `key` of
 * c->diagnoses (text: the first case's diagnosis; "" and NULL: the
 * failures nothing explains).  Out of memory the summary counts less. */
static void note_case(muonref_checker *c, const char *key, const char *text, const char *label)
{
  if (!c->diagnoses)
    c->diagnoses = json_object();
  json_t *e = json_object_get(c->diagnoses, key);
  if (!e && c->diagnoses) {
    e = json_pack("{s:i,s:s?,s:[]}", "count", 0, "text", text, "cases");
    json_object_set_new(c->diagnoses, key, e);
  }
  json_object_set_new(e, "count", json_integer(json_integer_value(json_object_get(e, "count")) + 1));
  json_array_append_new(json_object_get(e, "cases"), json_string(label));
}

/* Of the failing cases of diagnosis entry e, how many the fit's report
 * listed under a pair's line (muonref_fit_listed). */
static long listed_by_pair(const muonref_checker *c, const json_t *e)
{
  long n = 0;
  size_t i;
  const json_t *l;
  json_array_foreach(json_object_get(e, "cases"), i, l)
    n += muonref_fit_listed(c->fit, json_string_value(l));
  return n;
}

/* Whether the diagnosis line's text (which lists the option changes that
 * give the same: "the same here: ...") names one of the names of the fit's
 * line `first`: its " = "-separated names, and of a pair or a triple each
 * change (" and "). */
static int names_part(const char *text, const char *first)
{
  char names[600];
  snprintf(names, sizeof names, "%s", first);
  for (char *at = names, *end; at; at = end) {
    char *eq = strstr(at, " = "), *and = strstr(at, " and ");
    end = eq && (!and || eq < and) ? eq : and;
    if (end)
      *end = '\0', end += end == eq ? 3 : 5;
    if (*at && text && strstr(text, at))
      return 1;
  }
  return 0;
}

/* The change of the fit's first "explained:" line when it matches every
 * case of diagnosis entry e (key its key) and the line names neither it
 * nor a change the line lists as giving the same (the fit's first line
 * "ns_eps 1e-7 -> 1e-15" against the catalogue's [zero_norm_nan]): the
 * entry's cases are then ambiguous, and the fit, which sees every failure,
 * names what gives them all.  NULL otherwise; *all and *single as
 * muonref_fit_first's. */
static const char *first_names_other(const muonref_checker *c, const char *key, const json_t *e, int *all,
                                     int *single)
{
  const char *first = NULL;
  size_t i;
  const json_t *l;
  json_array_foreach(json_object_get(e, "cases"), i, l)
    if (!(first = muonref_fit_first(c->fit, json_string_value(l), all, single)))
      return NULL;
  char faults[400]; /* the key's faults, '+'-separated, before its "\n weak" mark (note_case) */
  snprintf(faults, sizeof faults, "%s", key);
  faults[strcspn(faults, "\n")] = '\0';
  for (char *save = NULL, *n = strtok_r(faults, "+", &save); first && n; n = strtok_r(NULL, "+", &save))
    if (strstr(first, n))
      return NULL;
  return first && !names_part(json_string_value(json_object_get(e, "text")), first) ? first : NULL;
}

/* Diagnoses a failing case of an outside implementation; counts and logs
 * the diagnosis; its text into text (n bytes).  failing: the judge's list of
 * failing tensors (cap bytes of room). */
static void diagnose(muonref_checker *c, const json_t *test, const char *kind, const char *file, const char *profile,
                     const json_t *r, const char *failing, size_t cap, char *text, size_t n)
{
  muonref_diagnosis d;
  char label[300]; /* as the fit names the case (muonref_fit_listed) */
  snprintf(label, sizeof label, "%s#%lld", muonref_basename(file), (long long)json_integer_value(json_object_get(test, "tcId")));
  /* in neutral mode the port's bf16 arithmetic did not run on the platform's
   * kernels: the probe's findings cannot explain a failure */
  const json_t *plat = strcmp(c->mode, "neutral") ? c->platform_json : NULL;
  if (!muonref_diagnose(test, kind, profile, muonref_basename(file), r, c->format, plat, fit_of(c), &d)) {
    if (!strcmp(kind, "error"))
      return; /* an error case refused with another message: its detail says which (no fit, no trait) */
    c->undiagnosed++;
    note_case(c, "", NULL, label);
    int adamw = failing_only_adamw(test, failing, cap);
    c->undiagnosed_adamw += adamw;
    snprintf(text, n, "none: no catalogued fault, single option change or measured platform effect gives this result "
                      "(a pair or triple of changes that explains it is listed under an \"explained:\" line after the last case, where "
                      "one does)%s%s%s",
             d.nearest[0] ? "; " : "", d.nearest, adamw ? "; every failing tensor is an AdamW parameter's: the difference lies in the fallback (its "
                     "moments, bias correction, eps, lr or decay: spec/muon.md 9)" : "");
    if (c->log)
      fprintf(c->log, "  diagnosis: %s\n", text); /* our own words */
    return;
  }
  snprintf(text, n, "%s", d.text);
  /* the summary counts a weak match ("within the bf16 noise allowance") apart from the strong ones of its key */
  char key[sizeof d.key + 8];
  snprintf(key, sizeof key, "%s%s", d.key, strncmp(d.text, "within the bf16 noise allowance", 31) ? "" : "\n weak");
  note_case(c, key, d.text, label);
  if (c->log) {
    fputs("  diagnosis: ", c->log);
    put(c->log, d.text);
    fputc('\n', c->log);
  }
}

/* What a case's verdict counts as, once the judged run, the other runs
 * (other_run.h) and the baseline are taken together. */
typedef struct counted {
  int pass;              /* 1: counted as passed */
  const char *message;   /* on failure: the failing run's detail */
  const char *diagnosis; /* on failure: what explains it, or "" */
  int known, fixed;      /* the baseline's word (muonref_case_verdict) */
  char why[600];         /* known or fixed: "known failure: REASON (URL)" */
  char note[900];        /* a pass that an other run not enforced fails: that run's verdict */
  char other[900];       /* a failure of an enforced other run only: "LABEL: DETAIL" */
} counted;

/* Hands one verdict to c->on_case, if set. */
static int on_case(muonref_checker *c, const muonref_area_count *a, const json_t *test, const char *kind,
                   const char *file, const char *profile, const counted *k, double worst, muonref_error *err)
{
  if (!c->on_case)
    return MUONREF_OK;
  char flags[256];
  flags_text(test, flags, sizeof flags);
  const char *comment = json_string_value(json_object_get(test, "comment"));
  const char *area = strchr(a->name, '/') ? strchr(a->name, '/') + 1 : a->name; /* "profile/area" */
  muonref_case_verdict cv = {muonref_basename(file), (long long)json_integer_value(json_object_get(test, "tcId")),
                             profile ? profile : "", area, kind, comment ? comment : "", flags,
                             k->pass, k->pass ? "" : k->message, k->pass ? "" : k->diagnosis, worst,
                             k->known, k->fixed, k->why, k->pass ? k->note : ""};
  return c->on_case(c->on_case_ctx, &cv, err);
}

/* How an other run is named in a verdict, and what explains a case that
 * fails there only (the judged run passes it). */
static const char *run_label(const muonref_other_run *o)
{
  return !strcmp(o->name, "raw") ? "raw mode (this platform's own bf16 arithmetic)"
         : !strcmp(o->name, "training-loop") ? "training-loop lifecycle" : o->name;
}

static const char *run_diagnosis(const muonref_other_run *o, const char *detail)
{
  if (!strcmp(o->name, "training-loop") && strstr(detail, "closure")) /* Emerging-Optimizers: `closure is not supported` */
    return "passes with assigned gradients: the port refuses step(closure), as Emerging-Optimizers' optimizers do "
           "(spec/profiles/emerging.md 2); to judge its numbers alone, run it with "
           "--torch-option=--lifecycle=assign (spec/vectors.md 4.2)";
  return !strcmp(o->name, "raw")
             ? "passes in neutral mode: the difference is this platform's bf16 arithmetic (see the platform line), "
               "not the port's logic"
         : !strcmp(o->name, "training-loop")
             ? "passes with assigned gradients: the port's zero_grad(set_to_none=True), step(closure) or gradient "
               "accumulation differs from a training loop's (spec/vectors.md 4.2)"
             : "passes in the judged run";
}

/* Judges the case in every other run and folds their verdicts into k
 * (k->pass holds the judged run's verdict). */
static int other_runs(muonref_checker *c, const json_t *test, const char *kind, const char *file, const json_t *r,
                      int judged_pass, const char *where, counted *k, muonref_error *err)
{
  for (int i = 0; i < c->n_others; i++) {
    muonref_other_run *o = &c->others[i];
    muonref_other_verdict ov;
    int st = muonref_other_run_judge(o, test, kind, muonref_basename(file), r, judged_pass, c->format, where, &ov,
                                     err);
    if (st)
      return st;
    if (!judged_pass || ov.pass)
      continue;
    if (o->enforced && k->pass) {
      k->pass = 0;
      snprintf(k->other, sizeof k->other, "%s: %s", run_label(o), ov.detail);
      k->message = k->other, k->diagnosis = run_diagnosis(o, ov.detail);
    } else if (!o->enforced && !k->note[0]) {
      snprintf(k->note, sizeof k->note, "%s, not enforced: %s", run_label(o), ov.detail);
    }
  }
  return MUONREF_OK;
}

/* A failing case with a "sharding" member run over several ranks: the
 * catalogue of faults knows single-process ports only, so say where to
 * look (spec/vectors.md 2.6). */
static void sharding_hint(muonref_checker *c, const json_t *test, const json_t *result, const char *key)
{
  json_int_t ws = json_integer_value(json_object_get(c->distributed_json, "worldSize"));
  if (!json_object_get(test, "sharding") || ws < 2 || json_object_get(result, "skipped"))
    return; /* a skipped case did not run: its reason says why */
  c->sharded_failed++;
  if (!c->log)
    return;
  fprintf(c->log, "  hint: sharded case: run at world size %lld, the port does not give the unsharded result (the "
                  "whole matrix's update, its state, p.grad after the step); if it passes with --world-size 1, the "
                  "fault is in the sharding (an owner's update not broadcast or gathered, a slice orthogonalised "
                  "alone, the shape scale taken from the slice instead of the whole matrix, padding with stale data, "
                  "ranks disagreeing on the parameter order, a state held whole: spec/vectors.md 2.6)",
          (long long)ws);
  const json_t *dis = json_object_get(c->distributed_json, "ranksDisagree");
  size_t n = strlen(key);
  for (size_t i = 0; i < json_array_size(dis); i++) {
    const char *d = json_string_value(json_array_get(dis, i));
    if (d && !strncmp(d, key, n) && d[n] == ':')
      fputs("; ranks hold different values of", c->log), put(c->log, d + n + 1);
  }
  fputc('\n', c->log);
}


/* One "FAIL"/"KNOWN"/"NOTE" line of the text report (the files' strings escaped). */
static void log_line(FILE *f, const char *tag, const json_t *test, const char *file, long long id, const char *detail)
{
  char flags[256];
  flags_text(test, flags, sizeof flags);
  fprintf(f, "%s ", tag), put(f, muonref_basename(file));
  fprintf(f, " tcId %lld [", id), put(f, flags), fputs("] ", f);
  put(f, json_string_value(json_object_get(test, "comment"))), fputs(": ", f), put(f, detail);
}

/* The largest dimension of the tensors a case gives: its parameters'
 * initial values and its input matrix (spec/vectors.md 2). */
static long largest_dim(const json_t *test)
{
  long m = 0;
  const json_t *ps = json_object_get(test, "params");
  for (size_t i = 0; i <= json_array_size(ps); i++) {
    const json_t *t = i < json_array_size(ps) ? json_object_get(json_array_get(ps, i), "init")
                                                : json_object_get(test, "input");
    const json_t *sh = json_object_get(t, "shape");
    for (size_t k = 0; k < json_array_size(sh); k++)
      if (json_integer_value(json_array_get(sh, k)) > m)
        m = (long)json_integer_value(json_array_get(sh, k));
  }
  return m;
}

/* Whether the case carries at least one of the flags in the array `flags`. */
static int has_any_flag(const json_t *test, const json_t *flags)
{
  for (size_t i = 0; i < json_array_size(flags); i++)
    if (muonref_case_has_flag(test, json_string_value(json_array_get(flags, i))))
      return 1;
  return 0;
}

static int check_test(muonref_checker *c, muonref_area_count *a, const json_t *test, const char *kind,
                      const char *file, const char *profile, const char *where, muonref_error *err)
{
  if (c->only_flag && !muonref_case_has_flag(test, c->only_flag))
    return MUONREF_OK;
  if (c->any_flag && !has_any_flag(test, c->any_flag))
    return MUONREF_OK;
  if (c->max_dim > 0 && largest_dim(test) > c->max_dim) {
    c->skipped_large++;
    return MUONREF_OK;
  }
  json_t *r = result_for(c, test, kind, file, profile, where, err);
  if (!r && c->fast)
    return err->status;
  muonref_verdict v = {0};
  int st = muonref_judge(test, kind, r, c->format, &v, where, err);
  if (st == MUONREF_EFORMAT && !c->fast && v.bad_result) {
    char msg[MUONREF_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err->message);
    muonref_fail(err, st, "%s: the entry for %s tcId %lld: %.400s", c->results_path, muonref_basename(file),
                 (long long)json_integer_value(json_object_get(test, "tcId")), msg);
  }
  counted k = {.pass = v.pass, .message = v.detail, .diagnosis = ""};
  if (!st)
    st = other_runs(c, test, kind, file, r, v.pass, where, &k, err);
  if (st) {
    json_decref(r);
    return st;
  }
  long long id = json_integer_value(json_object_get(test, "tcId"));
  char key[512];
  snprintf(key, sizeof key, "%s#%lld", muonref_basename(file), id);
  const json_t *listed = c->baseline ? json_object_get(c->baseline, key) : NULL;
  if (listed)
    muonref_baseline_why(listed, k.why, sizeof k.why);
  c->judged_passed += v.pass, c->judged_failed += !v.pass;
  if (v.pass && c->diagnose && !c->fast && r)
    muonref_fit_pass(fit_of(c), test, kind, profile, muonref_basename(file), r, v.orders);
  if (k.pass) {
    json_decref(r);
    a->passed++, c->passed++;
    a->any_passed = 1;
    a->worst = v.worst > a->worst ? v.worst : a->worst;
    if (v.orders)
      count_orders(c, v.orders, key);
    if (v.norm_overflow) {
      c->norm_overflow++;
      if (c->log) {
        fputs("PASS ", c->log), put(c->log, muonref_basename(file));
        fprintf(c->log, " tcId %lld: ", id), put(c->log, v.detail), fputc('\n', c->log);
      }
    }
    if (listed) {
      k.fixed = 1, c->fixed++;
      if (c->log) {
        fputs("FIXED ", c->log), put(c->log, muonref_basename(file));
        fprintf(c->log, " tcId %lld: listed in the baseline (", id), put(c->log, k.why);
        fputs("), passes now\n", c->log);
      }
    }
    if (k.note[0] && c->notes)
      log_line(c->notes, "NOTE", test, file, id, k.note), fputc('\n', c->notes);
    return on_case(c, a, test, kind, file, profile, &k, v.worst, err);
  }
  k.known = listed != NULL;
  if (k.known)
    a->known++, c->known++;
  else
    a->failed++, c->failed++, c->skipped += r && json_object_get(r, "skipped") != NULL;
  if (c->stop_after && c->failed >= c->stop_after)
    c->stopped = 1;
  if (c->failures)
    json_object_set_new(c->failures, key, json_pack("{s:s,s:s}", "comment",
                                                    json_string_value(json_object_get(test, "comment")) ?: "",
                                                    "detail", k.message));
  if (c->log) {
    log_line(c->log, k.known ? "KNOWN" : "FAIL", test, file, id, k.message);
    if (!v.pass && strchr(v.failing, ','))
      fputs(" [failing: ", c->log), put(c->log, v.failing), fputc(']', c->log);
    fputc('\n', c->log);
    if (k.known)
      fputs("  ", c->log), put(c->log, k.why), fputc('\n', c->log);
  }
  char dtext[1600] = "";
  if (c->diagnose && !k.known && !v.pass)
    diagnose(c, test, kind, file, profile, r, v.failing, sizeof v.failing, dtext, sizeof dtext);
  else if (!k.known && k.diagnosis[0]) {
    snprintf(dtext, sizeof dtext, "%s", k.diagnosis);
    if (c->log)
      fprintf(c->log, "  diagnosis: %s\n", dtext);
  }
  k.diagnosis = dtext;
  if (!k.known && !v.pass)
    sharding_hint(c, test, r, key);
  json_decref(r);
  return on_case(c, a, test, kind, file, profile, &k, v.worst, err);
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

/* Judges every case of the vector file j (read from `file` and validated
 * in pass 1; the reference is consumed). */
static int check_file(muonref_checker *c, const char *file, json_t *j, muonref_error *err)
{
  const char *profile = json_string_value(json_object_get(j, "profile"));
  muonref_area_count *a = area(c, profile, json_string_value(json_object_get(j, "area")));
  const json_t *groups = json_object_get(j, "testGroups");
  int st = check_ids(j, file, err);
  for (size_t g = 0; !st && !c->stopped && g < json_array_size(groups); g++) {
    const json_t *grp = json_array_get(groups, g), *tests = json_object_get(grp, "tests");
    const char *kind = json_string_value(json_object_get(grp, "kind"));
    if (!kind || !json_is_array(tests)) {
      st = muonref_fail(err, MUONREF_EFORMAT, "%s: testGroups[%zu] needs \"kind\" and \"tests\"", file, g);
      break;
    }
    for (size_t t = 0; !st && !c->stopped && t < json_array_size(tests); t++) {
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
  json_t *j = muonref_json_load(path, 1, err); /* a NUL in a port's message fails its case (judge.c) */
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
  const char *torch = json_string_value(json_object_get(j, "torch"));
  snprintf(c->torch, sizeof c->torch, "%s", torch ? torch : "");
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
  const json_t *raw = json_object_get(j, "rawResults"); /* the driver's --mode neutral+raw */
  if (!st && raw && !(st = muonref_other_run_init(&c->others[0], "raw", path, raw, 1, 0, err)))
    c->n_others = 1;
  const char *rk;
  json_t *rv;
  if (!st && raw)
    json_object_foreach(c->others[0].results, rk, rv)
      if (!st && !json_object_get(c->results, rk))
        st = muonref_fail(err, MUONREF_EFORMAT, "%s: a raw result for %s, which \"results\" does not hold (a case's "
                          "raw result is listed only where it differs from its neutral one)", path, rk);
  json_decref(j);
  return st;
}

int muonref_checker_add_run(muonref_checker *c, const char *name, const char *path, muonref_error *err)
{
  if (c->n_others == (int)(sizeof c->others / sizeof c->others[0]))
    return muonref_fail(err, MUONREF_EFORMAT, "%s: too many other runs", path);
  json_t *j = muonref_json_load(path, 1, err); /* as the judged run's: a NUL in a message fails its case */
  if (!j)
    return err->status;
  int st = muonref_results_file_validate(j, path, err);
  muonref_ns_format f;
  const char *fmt = json_string_value(json_object_get(j, "nsFormat"));
  if (!st && (muonref_ns_format_parse(fmt, &f, NULL) || f != c->format))
    st = muonref_fail(err, MUONREF_EFORMAT, "%s: nsFormat %s, but the judged run's (%s) is %s", path, fmt,
                      c->results_path, muonref_ns_format_name(c->format));
  if (!st && !(st = muonref_other_run_init(&c->others[c->n_others], name, path, json_object_get(j, "results"), 0, 1,
                                           err)))
    c->n_others++;
  json_decref(j);
  return st;
}

muonref_other_run *muonref_checker_other(muonref_checker *c, const char *name)
{
  for (int i = 0; i < c->n_others; i++)
    if (!strcmp(c->others[i].name, name))
      return &c->others[i];
  return NULL;
}

/* One vector file of a run: pass 1 reads and validates it, keeps the
 * document while the run's kept files stay within KEEP_BYTES, and notes
 * the file's identity, so that pass 2 judges exactly what was validated. */
typedef struct run_file {
  const char *path;
  json_t *doc;     /* kept from pass 1, or NULL: read again in pass 2 */
  struct stat sb;  /* the file as pass 1 read it */
} run_file;
#define KEEP_BYTES ((off_t)24 << 20) /* every profile's folder fits; all eleven are read twice past it */

/* Pass 1 for one vector file: read and validated whole, its base name and
 * every "FILE#TCID" recorded in c->used (a base name given twice is
 * refused: a results file names files by base name). */
static int index_file(muonref_checker *c, run_file *rf, off_t *kept, muonref_error *err)
{
  const char *file = rf->path;
  if (stat(file, &rf->sb) != 0)
    return muonref_fail(err, MUONREF_EIO, "%s: %s", file, strerror(errno));
  /* a file another run of this checker's caller loaded already (c->loaded, check_faults' many runs) is not
   * parsed again; it stays in the cache, so it is kept for pass 2 whatever its size */
  json_t *j = c->loaded ? json_incref(json_object_get(c->loaded, file)) : NULL;
  int cached = j != NULL;
  if (!j) {
    j = muonref_vector_file_load(file, err);
    if (!j)
      return err->status;
    if (c->loaded && json_object_set(c->loaded, file, j)) {
      json_decref(j);
      return muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory", file);
    }
    cached = c->loaded != NULL;
  }
  int st = check_ids(j, file, err);
  muonref_release_merge(c->release, sizeof c->release, json_string_value(json_object_get(j, "release")));
  const char *base = muonref_basename(file);
  const json_t *seen = json_object_get(c->used, base);
  if (!st && seen)
    st = muonref_fail(err, MUONREF_EFORMAT, "%s: a second vector file named %s in this run (the first: %s); a results "
                      "file names files by base name", file, base, json_string_value(seen));
  if (!st)
    json_object_set_new(c->used, base, json_string(file));
  const json_t *groups = json_object_get(j, "testGroups");
  for (size_t g = 0; !st && g < json_array_size(groups); g++) {
    const json_t *tests = json_object_get(json_array_get(groups, g), "tests");
    for (size_t t = 0; t < json_array_size(tests); t++) {
      char key[600];
      snprintf(key, sizeof key, "%s#%lld", base,
               (long long)json_integer_value(json_object_get(json_array_get(tests, t), "tcId")));
      json_object_set_new(c->used, key, json_true());
    }
  }
  if (!st && cached) {
    rf->doc = j;
  } else if (!st && *kept + rf->sb.st_size <= KEEP_BYTES) {
    rf->doc = j;
    *kept += rf->sb.st_size;
  } else {
    json_decref(j);
  }
  return st;
}

/* Pass 2's document of rf: the one kept, or the file read again, refused
 * when it is no longer the file pass 1 validated. */
static json_t *judged_doc(run_file *rf, muonref_error *err)
{
  json_t *j = rf->doc;
  rf->doc = NULL;
  if (j)
    return j;
  struct stat now;
  j = muonref_json_load_strict(rf->path, err);
  if (j && (stat(rf->path, &now) != 0 || now.st_ino != rf->sb.st_ino || now.st_dev != rf->sb.st_dev ||
            now.st_size != rf->sb.st_size || now.st_mtim.tv_sec != rf->sb.st_mtim.tv_sec ||
            now.st_mtim.tv_nsec != rf->sb.st_mtim.tv_nsec)) {
    json_decref(j);
    muonref_fail(err, MUONREF_EFORMAT, "%s: changed while muonref check ran (every file is validated before the "
                 "first case is judged): run it again", rf->path);
    return NULL;
  }
  return j;
}

/* Before any case is judged: every entry of `results` ("FILE#TCID" ->
 * entry; the results file `path`'s `what`, "result" or an other run's
 * name) that names a judged file names one of its cases (EFORMAT
 * otherwise); entries for files not judged in this run are counted in
 * *not_judged (when not NULL) and the first named in first (n bytes), for
 * the report. */
static int entries_name_cases(const muonref_checker *c, const json_t *results, const char *path, const char *what,
                              long *not_judged, char *first, size_t n, muonref_error *err)
{
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)results, key, v) {
    char file[600];
    snprintf(file, sizeof file, "%s", key);
    char *hash = strrchr(file, '#');
    if (hash)
      *hash = '\0';
    if (json_object_get(c->used, file) && !json_object_get(c->used, key))
      return muonref_fail(err, MUONREF_EFORMAT, "%s: a %s for %s tcId %s, which is no case of that file", path, what,
                          file, hash ? hash + 1 : "?");
    if (!json_object_get(c->used, file) && not_judged && (*not_judged)++ == 0)
      snprintf(first, n, "%.200s", file);
  }
  return MUONREF_OK;
}

/* The results file's entries and every other run's (entries_name_cases). */
static int check_results_index(muonref_checker *c, muonref_error *err)
{
  int st = entries_name_cases(c, c->results, c->results_path, "result", &c->not_judged, c->not_judged_file,
                              sizeof c->not_judged_file, err);
  /* a results file none of whose entries names a judged file was run on other vectors (another
   * profile's, most often): every case would fail "not run", which is no verdict on the port */
  if (!st && json_object_size(c->results) && c->not_judged == (long)json_object_size(c->results))
    st = muonref_fail(err, MUONREF_EFORMAT, "%s: none of its %ld results names a judged vector file (the first names "
                      "%s): it was run on other vectors; give the files it names (spec/vectors.md 8)",
                      c->results_path, c->not_judged, c->not_judged_file);
  for (int i = 0; !st && i < c->n_others; i++) {
    char what[64];
    snprintf(what, sizeof what, "%s result", c->others[i].name);
    st = entries_name_cases(c, c->others[i].results, c->others[i].path, what, NULL, NULL, 0, err);
  }
  return st;
}

int muonref_checker_run(muonref_checker *c, char *const *paths, int n, muonref_error *err)
{
  char **files = NULL;
  size_t count = 0;
  if (!c->used)
    c->used = json_object();
  int st = muonref_files_collect(paths, n, &files, &count, err);
  if (!st && count == 0)
    st = muonref_fail(err, MUONREF_EFORMAT, "no vector files (*.json) under the given paths");
  run_file *rf = st ? NULL : calloc(count, sizeof *rf);
  if (!st && !rf)
    st = muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  /* 1. every file read and validated, and the results file checked against their cases, before any case is
   *    judged (spec/vectors.md 8); 2. the files judged */
  off_t kept = 0;
  for (size_t i = 0; !st && i < count; i++) {
    rf[i].path = files[i];
    st = index_file(c, &rf[i], &kept, err);
  }
  if (!st && !c->fast)
    st = check_results_index(c, err);
  for (size_t i = 0; !st && !c->stopped && i < count; i++) {
    json_t *j = judged_doc(&rf[i], err);
    st = j ? check_file(c, files[i], j, err) : err->status;
  }
  for (size_t i = 0; rf && i < count; i++)
    json_decref(rf[i].doc);
  free(rf);
  muonref_files_free(files);
  return st;
}

void muonref_checker_report(const muonref_checker *c, FILE *out)
{
  fprintf(out, "\nvectors release: %s\n", c->release[0] ? c->release : "none");
  int w = 28; /* the area column: as wide as its longest name ("pytorch_optimizer/newton_schulz") */
  for (int i = 0; i < c->n_areas; i++)
    w = strlen(c->areas[i].name) > (size_t)w && strlen(c->areas[i].name) < 200 ? (int)strlen(c->areas[i].name) : w;
  fprintf(out, "%-*s %8s %8s  %s\n", w, "area", "passed", "failed", "worst deviation / allowance (passing cases)");
  for (int i = 0; i < c->n_areas; i++) {
    const muonref_area_count *a = &c->areas[i];
    char known[48] = "", *name = muonref_escape_dup(a->name, strlen(a->name), MUONREF_ESCAPE_TEXT);
    if (a->known)
      snprintf(known, sizeof known, "  (+%ld known)", a->known);
    if (a->any_passed)
      fprintf(out, "%-*s %8ld %8ld  %.3g%s\n", w, name ? name : "?", a->passed, a->failed, a->worst, known);
    else
      fprintf(out, "%-*s %8ld %8ld  -%s\n", w, name ? name : "?", a->passed, a->failed, known);
    free(name);
  }
  if (c->order_cases) {
    fprintf(out, "bf16 evaluation orders matched (of %ld cases that tell them apart or not):", c->order_cases);
    for (int k = 0; k < MUONREF_N_BF16_ORDERS; k++)
      fprintf(out, " %s %ld%s", muonref_bf16_order_name((muonref_bf16_order)k), c->order_count[k],
              k + 1 < MUONREF_N_BF16_ORDERS ? "," : "\n");
    if (c->order_break[0])
      fputs("WARNING: no one bf16 evaluation order matches every case (", out), put(out, c->order_break),
          fputs("): the port evaluates Newton-Schulz differently in different cases\n", out);
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
    fputs("platform (driver probe): ", out), put(out, c->platform), fputc('\n', out);
  fputs("implementation: ", out), put(out, c->impl_name);
  fprintf(out, "; Newton-Schulz in %s\n", c->format == MUONREF_NS_BF16 ? "bf16" : "fp32");
  for (int i = 0; i < c->n_others; i++) { /* each run's own verdict, then the one counted */
    const muonref_other_run *o = &c->others[i];
    if (!i)
      fprintf(out, "the judged run (%s mode, %s lifecycle): %ld passed, %ld failed\n", c->mode[0] ? c->mode : "given",
              c->lifecycle[0] ? c->lifecycle : "assign", c->judged_passed, c->judged_failed);
    fprintf(out, "%s: %ld passed, %ld failed (%ld of them pass in the judged run)%s\n", run_label(o), o->passed,
            o->failed, o->only,
            o->enforced ? "; enforced: they count"
                        : "; not enforced: a second verdict, --enforce-raw counts it (-v lists the cases as NOTE)");
  }
  if (c->baseline)
    fprintf(out, "baseline: %ld known failures not counted (KNOWN, with their reasons), %ld baseline cases pass now "
                 "(FIXED: take them out of the baseline)\n", c->known, c->fixed);
  /* the fit first, into memory: the diagnosis lines say how many of their
   * cases it lists under a pair (a pair matches them better) */
  char *fit_text = NULL;
  size_t fit_len = 0;
  FILE *fit_out = c->fit ? open_memstream(&fit_text, &fit_len) : NULL;
  muonref_fit_report(c->fit, fit_out ? fit_out : out);
  if (fit_out)
    fclose(fit_out);
  const char *key;
  json_t *e;
  json_object_foreach(c->diagnoses, key, e) {
    long listed = fit_out ? listed_by_pair(c, e) : 0;
    if (!*key)
      continue;
    fprintf(out, "diagnosis: %lld failure%s [", (long long)json_integer_value(json_object_get(e, "count")),
            json_integer_value(json_object_get(e, "count")) == 1 ? "" : "s");
    char shown[400]; /* the key without its "\n weak" mark (note_case) */
    snprintf(shown, sizeof shown, "%s", key);
    shown[strcspn(shown, "\n")] = '\0';
    put(out, shown), fputs("]: ", out), put(out, json_string_value(json_object_get(e, "text")));
    if (listed)
      fprintf(out, "; a pair or triple of changes matches %ld of them at their own tolerance (listed under its \"explained:\" "
                   "line below)", listed);
    int all = 0, single = 0;
    const char *first = fit_out ? first_names_other(c, key, e, &all, &single) : NULL;
    if (first) {
      fputs("; the fit's first \"explained:\" line below gives these too: ", out), put(out, first);
      fputs(!all ? "" : single ? " (one change for every failure: the likelier reading)"
                               : " (one explanation for every failure: the likelier reading)", out);
    }
    fputc('\n', out);
  }
  if (c->undiagnosed) {
    long listed = fit_out ? listed_by_pair(c, json_object_get(c->diagnoses, "")) : 0;
    fprintf(out, "diagnosis: %ld failure%s that no catalogued fault, single option change or measured platform effect "
                 "explains", c->undiagnosed, c->undiagnosed == 1 ? "" : "s");
    if (c->undiagnosed_adamw)
      fprintf(out, " (%ld of them in AdamW parameters only: the fallback differs, spec/muon.md 9)", c->undiagnosed_adamw);
    if (listed)
      fprintf(out, "; a pair or triple of changes explains %ld of them (listed under its \"explained:\" line below)", listed);
    fputc('\n', out);
  }
  if (fit_text)
    fwrite(fit_text, 1, fit_len, out);
  free(fit_text);
  if (c->sharded_failed)
    fprintf(out, "sharding: %ld failure%s of sharded cases run at world size %lld (hints under their FAIL lines)\n",
            c->sharded_failed, c->sharded_failed == 1 ? "" : "s", (long long)json_integer_value(json_object_get(c->distributed_json, "worldSize")));
  if (c->not_judged) {
    fprintf(out, "not judged: %ld results entr%s for files not given in this run (", c->not_judged,
            c->not_judged == 1 ? "y" : "ies");
    put(out, c->not_judged_file), fputs(c->not_judged > 1 ? ", ...)\n" : ")\n", out);
  }
  fprintf(out, "%ld passed, %ld failed\n", c->passed, c->failed);
}

int muonref_checker_baseline(muonref_checker *c, const char *path, muonref_error *err)
{
  json_decref(c->baseline);
  c->baseline = NULL;
  return muonref_baseline_read(path, &c->baseline, err);
}

int muonref_checker_write_failures(const muonref_checker *c, const char *path, muonref_error *err)
{
  muonref_output out;
  FILE *f = muonref_output_open(&out);
  if (!f)
    return muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory", path);
  fputs("# muonref check expected failures of ", f), put(f, c->impl_name);
  fputs("\n# One case per line, FILE#TCID REASON [URL]: write after each case why it is known to fail and, last,\n"
        "# the address of the issue that tracks it; muonref check --baseline reads this file and reports each\n"
        "# listed failure as KNOWN with its reason (JUnit: skipped; TAP: TODO; pytest: xfail).\n", f);
  const char *key;
  json_t *v;
  json_object_foreach(c->failures, key, v) { /* escaped: a comment cannot start a line of its own */
    fputs("# ", f), put(f, key), fputs(": ", f), put(f, json_string_value(json_object_get(v, "comment")));
    fputs(" -- fails: ", f), put(f, json_string_value(json_object_get(v, "detail")));
    fputc('\n', f), put(f, key), fputc('\n', f);
  }
  return muonref_output_commit(&out, path, NULL, NULL, 0, err);
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
  for (int i = 0; i < c->n_others; i++)
    muonref_other_run_free(&c->others[i]);
  c->n_others = 0;
  muonref_fit_free(c->fit);
  c->fit = NULL;
  c->results = c->written = c->used = c->baseline = c->failures = c->platform_json = c->diagnoses = NULL;
}
