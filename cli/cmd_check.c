/* muonref check: judges an implementation against vector files
 * (spec/vectors.md): our fast path in-process (--impl fast-bf16 |
 * fast-fp32, optionally with a deliberate --fault) or an outside
 * implementation's results file (--results FILE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../fast/faults.h"
#include "../vectors/checker.h"
#include "../vectors/files.h"
#include "commands.h"

static int usage(void)
{
  fprintf(stderr,
          "usage: muonref check (--impl fast-bf16|fast-fp32 [--fault NAME] | --results FILE)\n"
          "                     [--write-results FILE] [--baseline FILE] [--write-failures FILE]\n"
          "                     [--no-diagnosis]\n"
          "                     [--quiet] [VECTOR FILES OR DIRS...]\n"
          "       muonref check --fault list\n"
          "Judges an implementation against golden vectors (default: the vectors/ folder).\n");
  return EXIT_USAGE;
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
  const char *impl = NULL, *results = NULL, *fault = NULL, *write = NULL, *baseline = NULL, *write_failures = NULL;
  char *paths[256];
  int n = 0, quiet = 0, no_diagnosis = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int takes = !strcmp(a, "--impl") || !strcmp(a, "--results") || !strcmp(a, "--fault") || !strcmp(a, "--write-results") ||
                !strcmp(a, "--baseline") || !strcmp(a, "--write-failures");
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
    else if (!strcmp(a, "--baseline"))
      baseline = argv[++i];
    else if (!strcmp(a, "--write-failures"))
      write_failures = argv[++i];
    else if (!strcmp(a, "--quiet"))
      quiet = 1;
    else if (!strcmp(a, "--no-diagnosis"))
      no_diagnosis = 1;
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
  c.log = quiet ? NULL : stdout;
  c.diagnose = !impl && !no_diagnosis;
  if (baseline && muonref_checker_baseline(&c, baseline, &err)) {
    fprintf(stderr, "muonref check: --baseline %s\n", err.message);
    muonref_checker_free(&c);
    return EXIT_USAGE;
  }
  if (write_failures)
    c.failures = json_object();
  if (write) {
    c.written = json_object();
    json_object_set_new(c.written, "implementation", json_string(c.impl_name));
    json_object_set_new(c.written, "nsFormat", json_string(muonref_ns_format_name(c.format)));
    json_object_set_new(c.written, "results", json_array());
  }
  if (n == 0)
    paths[n++] = "vectors";
  int st = muonref_checker_run(&c, paths, n, &err);
  if (!st && write)
    st = muonref_json_write_atomic(c.written, write, 0, &err);
  if (!st && write_failures)
    st = muonref_checker_write_failures(&c, write_failures, &err);
  if (st) {
    fprintf(stderr, "muonref check: %s\n", err.message);
    muonref_checker_free(&c);
    return st == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  muonref_checker_report(&c, stdout);
  muonref_checker_free(&c);
  return c.failed ? EXIT_FAILED : EXIT_OK;
}
