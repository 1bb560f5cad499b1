/* muonref check: judges an implementation against vector files
 * (spec/vectors.md): our fast path in-process (--impl fast-bf16 |
 * fast-fp32, optionally with a deliberate --fault) or an outside
 * implementation's results file (--results FILE).  The verdicts go to
 * standard output (FAIL lines and the per-area table), and on request to a
 * JUnit XML file (--junit) or as TAP 14 on standard output (--tap; the
 * human-readable lines then go to standard error); vectors/report.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../fast/faults.h"
#include "../vectors/checker.h"
#include "../vectors/files.h"
#include "../vectors/report.h"
#include "commands.h"

static int usage(void)
{
  fprintf(stderr, "usage: muonref %s\n", MUONREF_CHECK_USAGE);
  return EXIT_USAGE;
}

/* What the per-case callback feeds: the JUnit log, the TAP stream, the
 * --verbose lines and the progress line on a terminal. */
typedef struct sinks {
  muonref_case_log junit; /* kept only with --junit */
  int want_junit;
  muonref_tap tap;
  int want_tap;
  FILE *verbose;           /* one line per passing case (--verbose), or NULL */
  int progress;            /* 1: a progress line on standard error (a terminal) */
  long done, failed;
  struct timespec last;
} sinks;

static double seconds_since(struct timespec *last)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double s = (double)(now.tv_sec - last->tv_sec) + 1e-9 * (double)(now.tv_nsec - last->tv_nsec);
  *last = now;
  return s;
}

static int on_case(void *ctx, const muonref_case_verdict *v, muonref_error *err)
{
  sinks *s = ctx;
  double t = seconds_since(&s->last);
  s->done++, s->failed += !v->pass;
  if (s->verbose && v->pass)
    fprintf(s->verbose, "ok   %s tcId %lld [%s] %s (%.3g of the allowance)\n", v->file, v->tc_id, v->flags, v->comment,
            v->worst);
  if (s->want_tap)
    muonref_tap_case(&s->tap, v);
  if (s->progress) /* ends in \r: the next line written to the terminal overwrites it */
    fprintf(stderr, "\033[Kmuonref check: %ld cases judged, %ld failed so far\r", s->done, s->failed);
  return s->want_junit ? muonref_case_log_add(&s->junit, v, t, err) : MUONREF_OK;
}

static int list_faults(void)
{
  for (int f = 1; f < MUONREF_FAULT_COUNT; f++) {
    const muonref_fault_info *i = muonref_fault_info_at(f);
    printf("%-26s %s [%s]\n", i->name, i->description, i->source);
  }
  return EXIT_OK;
}

int cmd_check(int argc, char **argv)
{
  const char *impl = NULL, *results = NULL, *fault = NULL, *write = NULL, *junit = NULL;
  char *paths[256];
  int n = 0, quiet = muonref_verbosity < 0, verbose = muonref_verbosity > 0, tap = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int takes = !strcmp(a, "--impl") || !strcmp(a, "--results") || !strcmp(a, "--fault") ||
                !strcmp(a, "--write-results") || !strcmp(a, "--junit");
    if (takes && i + 1 >= argc) {
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
    else if (!strcmp(a, "--junit"))
      junit = argv[++i];
    else if (!strcmp(a, "--tap"))
      tap = 1;
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
  int f = 0;
  if (fault && (!impl || (f = muonref_fault_parse(fault)) < 0)) {
    fprintf(stderr, "muonref check: --fault '%s': %s\n", fault,
            impl ? "unknown fault (muonref check --fault list names them)" : "faults apply to --impl only");
    return EXIT_USAGE;
  }
  if (write && !impl) {
    fprintf(stderr, "muonref check: --write-results applies to --impl only\n");
    return EXIT_USAGE;
  }
  muonref_checker c;
  muonref_error err = {0};
  if (impl) {
    muonref_checker_fast(&c, strcmp(impl, "fast-bf16") ? MUONREF_NS_FP32 : MUONREF_NS_BF16, f);
    if (fault)
      snprintf(c.impl_name, sizeof c.impl_name, "%s with fault %s", impl, fault);
  } else if (muonref_checker_results(&c, results, &err)) {
    fprintf(stderr, "muonref check: %s\n", err.message);
    muonref_checker_free(&c);
    return EXIT_USAGE;
  }
  FILE *human = tap ? stderr : stdout; /* with --tap, standard output is TAP only */
  c.log = quiet ? NULL : human;
  sinks sk = {0};
  sk.want_junit = junit != NULL;
  sk.want_tap = tap;
  sk.verbose = verbose ? human : NULL;
  sk.progress = !quiet && !verbose && !tap && isatty(STDERR_FILENO);
  clock_gettime(CLOCK_MONOTONIC, &sk.last);
  c.on_case = on_case;
  c.on_case_ctx = &sk;
  if (write) {
    c.written = json_object();
    json_object_set_new(c.written, "implementation", json_string(c.impl_name));
    json_object_set_new(c.written, "nsFormat", json_string(muonref_ns_format_name(c.format)));
    json_object_set_new(c.written, "results", json_array());
  }
  if (n == 0) {
    const char *dflt = muonref_default_vectors(&err);
    if (!dflt) {
      fprintf(stderr, "muonref check: %s\n", err.message);
      muonref_checker_free(&c);
      return EXIT_USAGE;
    }
    paths[n++] = (char *)dflt;
  }
  if (tap)
    muonref_tap_begin(&sk.tap, stdout, c.impl_name);
  int st = muonref_checker_run(&c, paths, n, &err);
  if (sk.progress)
    fputs("\033[K", stderr);
  if (!st && write)
    st = muonref_json_write_atomic(c.written, write, 0, &err);
  if (!st && junit)
    st = muonref_junit_write(&sk.junit, c.impl_name, muonref_ns_format_name(c.format), junit, &err);
  muonref_case_log_free(&sk.junit);
  if (st) {
    if (tap)
      muonref_tap_bail(&sk.tap, err.message);
    fprintf(stderr, "muonref check: %s\n", err.message);
    muonref_checker_free(&c);
    return st == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  if (tap)
    muonref_tap_end(&sk.tap);
  muonref_checker_report(&c, human);
  muonref_checker_free(&c);
  return c.failed ? EXIT_FAILED : EXIT_OK;
}
