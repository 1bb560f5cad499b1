/* muonref: second verdicts, the results of the same port run another way
 * than the judged run (spec/vectors.md section 7, "Second verdicts"):
 *
 *  - "raw": the driver's default `--mode neutral+raw` runs every case in
 *    neutral mode (the judged run: the port's logic) and again raw (this
 *    platform's own bf16 arithmetic), and writes the raw result of each
 *    case where it differs as the results file's "rawResults" (a case not
 *    listed gave the same result raw).  Not enforced unless asked
 *    (`muonref check --enforce-raw`): a correct port is green by default.
 *  - "training-loop": `muonref check --torch` runs the port in the assign
 *    lifecycle (the judged run) and in the training-loop lifecycle (a
 *    second results file, every case); enforced.
 *
 * A case's counted verdict fails when the judged run fails it or when an
 * enforced other run fails it; an other run that is not enforced only adds
 * a note to a passing case. */
#ifndef MUONREF_VECTORS_OTHER_RUN_H
#define MUONREF_VECTORS_OTHER_RUN_H

#include <jansson.h>
#include "vectors/judge/judge.h"
#include "muonref/options.h"

typedef struct muonref_other_run {
  char name[32];     /* "raw" or "training-loop" */
  char path[1024];   /* the results file it came from */
  json_t *results;   /* "FILE#TCID" -> result entry (owned) */
  int partial;       /* 1: a case not in results gave the judged run's result (rawResults); 0: it was not run */
  int enforced;      /* 1: its failures count in the case's verdict and the exit status */
  long passed, failed; /* its own verdicts over the judged cases */
  long only;         /* the cases it fails that the judged run passes */
} muonref_other_run;

/* The verdict of one case in an other run. */
typedef struct muonref_other_verdict {
  int pass;
  char detail[800]; /* on failure: the judge's detail (muonref_verdict.detail) */
} muonref_other_verdict;

/* Fills run from the entries array `entries` of the results file `path`
 * (already validated: muonref_results_file_validate), named `name`;
 * partial and enforced as above.  Errors: MUONREF_EFORMAT (an entry given
 * twice, naming path), MUONREF_ENOMEM. */
int muonref_other_run_init(muonref_other_run *run, const char *name, const char *path, const json_t *entries,
                           int partial, int enforced, muonref_error *err);

/* Judges case `test` (kind, the vector file's base name `file`) in run:
 * its entry, or the judged run's entry `judged` (NULL: none) when run is
 * partial and has none, or when its entry equals `judged` (then
 * `judged_pass` is the verdict: nothing is judged twice).  Counts the
 * verdict in run.  Errors: those of muonref_judge (MUONREF_EFORMAT naming
 * where and, for a malformed entry, run->path). */
int muonref_other_run_judge(muonref_other_run *run, const json_t *test, const char *kind, const char *file,
                            const json_t *judged, int judged_pass, muonref_ns_format format, const char *where,
                            muonref_other_verdict *out, muonref_error *err);

void muonref_other_run_free(muonref_other_run *run);

#endif
