/* muonref: the vector checker as a library: judges our fast path (with an
 * optional deliberate fault) or an outside results file against vector
 * files, counting per area (spec/vectors.md).  Used by `muonref check` and
 * by the mutation tests (tests/unit/check_faults.c). */
#ifndef MUONREF_VECTORS_CHECKER_H
#define MUONREF_VECTORS_CHECKER_H

#include <jansson.h>
#include <stdio.h>
#include "muonref/options.h"
#include "vectors/judge/other_run.h"

typedef struct muonref_area_count {
  char name[128];
  long passed, failed, known; /* known: failures listed in the baseline */
  int any_passed;
  double worst; /* the largest deviation / allowance seen among passing cases */
} muonref_area_count;

/* One judged case, as handed to muonref_checker.on_case (the JUnit and TAP
 * writers of vectors/judge/report.h, the progress line of `muonref check`).  The
 * strings belong to the checker and live only during the call. */
typedef struct muonref_case_verdict {
  const char *file;      /* the vector file's name (no folder), e.g. "nemo_routing.json" */
  long long tc_id;       /* the case's tcId in that file */
  const char *profile;   /* the file's "profile", e.g. "nemo" */
  const char *area;      /* the file's "area", e.g. "routing" */
  const char *kind;      /* the test group's "kind": step, ns, transpose, error */
  const char *comment;   /* the case's "comment" ("" when it has none) */
  const char *flags;     /* its "flags", joined by commas ("" when none) */
  int pass;              /* 1 passed, 0 failed */
  const char *message;   /* on failure the judge's detail (quantity, deviation, allowance); "" on a pass */
  const char *diagnosis; /* a likely cause of a failure; "" when the judge gives none */
  double worst;          /* deviation / allowance (muonref_verdict.worst) */
  int known;             /* 1: a failure the baseline lists: not counted as failed (pass is 0) */
  int fixed;             /* 1: the baseline lists it, but it passes now (pass is 1) */
  const char *why;       /* known or fixed: "known failure: REASON (URL)" (muonref_baseline_why); else "" */
  const char *note;      /* a passing case that an other run not enforced fails: "raw (...): DETAIL"; else "" */
} muonref_case_verdict;

typedef struct muonref_checker {
  int fast;                 /* 1: run our fast path; 0: judge a results file */
  muonref_ns_format format;
  int fault;                /* fast path: deliberate fault (0 none) */
  json_t *results;          /* results mode: "file#tcId" -> result entry */
  json_t *used;             /* the judged files: base name -> path, and "FILE#TCID" -> true for each case */
  char results_path[1024];
  json_t *written;          /* fast mode: results to write, or NULL */
  char impl_name[256];
  char release[64];         /* the judged files' vector release (release.h: "" before the first file, "none",
                               "mixed"), printed at the head of the report */
  muonref_area_count areas[256];
  int n_areas;
  long passed, failed;
  long skipped;             /* of the failed (not known) cases, those whose result is "skipped" (the port could
                               not run them: an option its adapter cannot express) */
  FILE *log;                /* one line per failing case, or NULL */
  /* bf16 evaluation orders (spec/muon.md 7.2) over the passing cases that
   * publish them: how many matched each order, and the orders that matched
   * every one of them so far (all bits set before the first) */
  long order_cases, order_count[MUONREF_N_BF16_ORDERS];
  unsigned orders_all;
  long norm_overflow;       /* passing cases that matched their norm-overflow
                               alternative (spec/vectors.md 2.7) */
  char order_break[256];    /* the first case that no order shared with the
                               earlier ones, or "" */
  char mode[32];            /* results mode: the driver's "mode" ("raw", "neutral") or "" */
  char lifecycle[32];       /* results lifecycle: the driver's "lifecycle" ("assign", "training-loop") or "" */
  char torch[128];          /* results mode: the driver's "torch" (the PyTorch version) or "" */
  char platform[1024];      /* results mode: the driver's "platform" findings, one line */
  json_t *baseline;         /* known failures "file#tcId" -> {"reason", "url", "line"} (baseline.h), or NULL */
  long not_judged;          /* results entries for files not judged in this run */
  char not_judged_file[256]; /* the first of those files */
  long known, fixed;        /* failures listed in the baseline; baseline cases now passing */
  json_t *failures;         /* every failing case "file#tcId" -> {"comment", "detail"} (for --write-failures) */
  /* Second verdicts (other_run.h): the raw run of the results file's
   * "rawResults" and the runs added by muonref_checker_add_run. */
  muonref_other_run others[4];
  int n_others;
  long judged_passed, judged_failed; /* the judged run's own verdicts, other runs left out */
  FILE *notes;              /* one line per case that an other run not enforced fails (NULL: none) */
  int diagnose;             /* results mode: diagnose failing cases (diagnose.h) */
  const char *only_flag;    /* judge only the cases carrying this flag (NULL: all) */
  const json_t *any_flag;   /* NULL, or an array of flags: judge only the cases carrying at least one of
                               them (and only_flag where set); not owned.  tests/unit/check_faults.c judges the
                               cases of the flags whose notes link a fault first (spec/vectors.md 2.5) */
  json_t *platform_json;    /* results mode: the "platform" object, or NULL */
  json_t *distributed_json; /* results mode: the driver's "distributed" object (--world-size), or NULL */
  long sharded_failed;      /* failing cases with a "sharding" member, run over several ranks */
  json_t *diagnoses;        /* diagnosis key -> {"count": n, "text": first text, "cases": ["FILE#TCID", ...]};
                               the key "" holds the failures nothing explains (no text) */
  struct muonref_fit *fit;  /* results mode with diagnosis: the fit of the port to the option
                               space (vectors/judge/fit.h), made at the first judged case */
  long undiagnosed;         /* failing cases (not error cases) nothing explains */
  long undiagnosed_adamw;   /* of them, those whose failing tensors are all AdamW parameters' */
  /* Called once per judged case after it is counted (NULL: not called);
   * a nonzero return (a muonref_status, e.g. MUONREF_ENOMEM or
   * MUONREF_EIO) stops the run with that status, its message in *err. */
  int (*on_case)(void *ctx, const muonref_case_verdict *v, muonref_error *err);
  void *on_case_ctx;
  /* The mutation tests (tests/unit/check_faults.c) judge the same files some
   * hundreds of times and ask only whether a fault fails a case: */
  json_t *loaded;           /* NULL, or an object path -> vector file as loaded and validated, shared
                               between runs (not owned): a run takes its files from it and adds those
                               it had to load */
  long stop_after;          /* stop the run once this many cases failed (0: judge every case) */
  int stopped;              /* set when the run stopped there (the counts cover the cases judged) */
  long max_dim;             /* leave out the cases with a tensor dimension above this (0: none): a first,
                               cheap pass when asking whether a fault fails some case (an (8200, 2)
                               matrix iterated on its tall side costs minutes); counted in skipped_large */
  long skipped_large;
} muonref_checker;

/* Initialises c for our fast path in `format` with fault f (0: none). */
void muonref_checker_fast(muonref_checker *c, muonref_ns_format format, int fault);

/* Initialises c from an outside implementation's results file.  Errors:
 * MUONREF_EIO, MUONREF_EFORMAT (naming the file and the member). */
int muonref_checker_results(muonref_checker *c, const char *path, muonref_error *err);

/* Reads an expected-failures file (baseline.h: "FILE#TCID [REASON] [URL]"
 * per line, what --write-failures writes): failing cases listed there are
 * counted as known, not failed, and carry their reason; listed cases that
 * pass are reported as fixed.  Errors: those of muonref_baseline_read
 * (MUONREF_EIO, MUONREF_EFORMAT naming the file and line). */
int muonref_checker_baseline(muonref_checker *c, const char *path, muonref_error *err);

/* Writes every failing case as an expected-failures file (atomically):
 * per case a comment line (the case's comment and why it fails) and the
 * line "FILE#TCID", to which a user adds a reason and an issue URL. */
int muonref_checker_write_failures(const muonref_checker *c, const char *path, muonref_error *err);

/* Adds the results file at path as an other run named name (other_run.h:
 * "training-loop"), every case of it judged too and enforced.  Call after
 * muonref_checker_results.  Errors: MUONREF_EIO, MUONREF_EFORMAT (a
 * malformed file, another nsFormat than the judged run's, naming path). */
int muonref_checker_add_run(muonref_checker *c, const char *name, const char *path, muonref_error *err);

/* The other run named name, or NULL. */
muonref_other_run *muonref_checker_other(muonref_checker *c, const char *name);

/* Judges every case of the vector files named by paths (files or folders):
 * first reads and validates every file and checks the results file (and
 * every other run's) against their cases (an entry for a judged file with
 * an unknown tcId, or two files of one base name: MUONREF_EFORMAT), then
 * judges.  Errors: those of reading and validating (MUONREF_EIO,
 * MUONREF_EFORMAT), of judging, and of c->on_case. */
int muonref_checker_run(muonref_checker *c, char *const *paths, int n, muonref_error *err);

/* Prints the per-area table and the closing "N passed, N failed" line. */
void muonref_checker_report(const muonref_checker *c, FILE *out);

/* Frees what c holds. */
void muonref_checker_free(muonref_checker *c);

#endif
