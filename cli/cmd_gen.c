/* muonref gen [--prec BITS] [--out DIR] [--area NAME] [--profile NAME | --profile-file FILE] [--threads N]:
 * regenerates the golden vectors of every profile (or one; or a user's
 * profile record, vectors/format/record.h) from the reference (spec/vectors.md
 * section 6), the cases' computations on N threads (default: every core;
 * the output is the same bytes for any N). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "vectors/gen/gen_run.h"
#include "vectors/format/record.h"
#include "commands.h"

int cmd_gen(int argc, char **argv)
{
  const char *out = "vectors", *area = NULL, *profile = NULL, *profile_file = NULL;
  long prec = 256, threads = 0;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--prec")) {
      char *end;
      prec = strtol(argv[++i], &end, 10);
      if (*end || prec < 256 || prec > 65536) {
        fprintf(stderr, "muonref gen: --prec '%s': expected an integer from 256 to 65536 (bits)\n", argv[i]);
        return EXIT_USAGE;
      }
    } else if (i + 1 < argc && !strcmp(argv[i], "--out")) {
      out = argv[++i];
    } else if (i + 1 < argc && !strcmp(argv[i], "--threads")) {
      char *end;
      threads = strtol(argv[++i], &end, 10);
      if (!*argv[i] || *end || threads < 0 || threads > GEN_MAX_THREADS) {
        fprintf(stderr, "muonref gen: --threads '%s': expected an integer from 0 (every core) to %d\n", argv[i],
                GEN_MAX_THREADS);
        return EXIT_USAGE;
      }
    } else if (i + 1 < argc && !strcmp(argv[i], "--area")) {
      area = argv[++i];
    } else if (i + 1 < argc && !strcmp(argv[i], "--profile")) {
      profile = argv[++i];
    } else if (i + 1 < argc && !strcmp(argv[i], "--profile-file")) {
      profile_file = argv[++i];
    } else {
      fprintf(stderr, "muonref gen: unexpected argument '%s'\n"
                      "usage: muonref gen %s\n", argv[i], MUONREF_GEN_ARGS);
      return EXIT_USAGE;
    }
  }
  muonref_error err = {0};
  if (profile && profile_file) {
    fprintf(stderr, "muonref gen: give --profile or --profile-file, not both\n");
    return EXIT_USAGE;
  }
  const muonref_record *user = NULL;
  if (profile_file && muonref_record_use(profile_file, muonref_cli_records_dir(NULL), &user, &err)) {
    fprintf(stderr, "muonref gen: --profile-file: %s\n", err.message); /* checked whole: names the member */
    return err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  if (user)
    profile = user->name;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  gen_summary s;
  int st = muonref_gen_all(out, (mpfr_prec_t)prec, area, profile, (int)threads, &s, &err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (st) {
    fprintf(stderr, "muonref gen: %s\n", err.message);
    return st == MUONREF_EIO || st == MUONREF_EOPTION ? EXIT_USAGE : EXIT_INTERNAL;
  }
  if (muonref_verbosity >= 0) { /* the files are the result; this line is information */
    char empty[96] = ""; /* areas whose every case was left out get no file (a vector file holds a test) */
    if (s.empty_areas)
      snprintf(empty, sizeof empty, "; no file for %ld area%s whose every case was left out", s.empty_areas,
               s.empty_areas == 1 ? "" : "s");
    printf("muonref gen: %ld files, %ld tests (%ld with exact bf16 expectations; %ld cases left out where a profile's "
           "port cannot be given their options%s) in %s/ at %ld bits, %d threads, %.1f s\n",
           s.files, s.tests, s.bf16_certified, s.left_out, empty, s.dir, prec, s.threads,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  }
  return EXIT_OK;
}
