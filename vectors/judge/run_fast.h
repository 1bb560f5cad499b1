/* muonref: running a vector case on muonref's own fast path, producing the
 * result entry an outside implementation would write (spec/vectors.md 4). */
#ifndef MUONREF_VECTORS_RUN_FAST_H
#define MUONREF_VECTORS_RUN_FAST_H

#include <jansson.h>
#include "muonref/options.h"

/* Runs `test` (a test object of a group of kind `kind`: "step", "ns",
 * "transpose", "error") under `profile` with Newton-Schulz in `format`
 * (BF16 or FP32) and deliberate fault `fault` (0 for none).  Returns a new
 * result object ({"params", "state"}, {"output"[, "outputT"]} or
 * {"error": message}), or NULL with err set (MUONREF_EFORMAT naming
 * `where`) when the case itself is malformed. */
json_t *muonref_run_fast(const json_t *test, const char *kind, const char *profile, muonref_ns_format format,
                         int fault, const char *where, muonref_error *err);

/* What the judge's fit (vectors/judge/fit.c) changes in a run, on top of a fault. */
typedef struct muonref_run_edit {
  /* Called on every group's options o after the fault's option values are
   * set (and again after a step's setOptions), with the group's "options"
   * object of the case (given is NULL for an ns/transpose case, which runs
   * the profile's defaults) and the options as the case gave them, before
   * the fault's values (`read`: the edit's changes are judged on these, so
   * that a fault and an edit act at once).  NULL: no change. */
  void (*edit)(const void *ctx, const json_t *given, const muonref_options *read, muonref_options *o);
  const void *ctx;
  /* 1: a step result also holds "gradAfter" and "gradAfterAtol", what a
   * PyTorch port with the run's options leaves in p.grad after the last
   * step (spec/muon.md 8.1): under grad_after_step NESTEROV_INPUT and
   * Nesterov, a Muon parameter's U = in_grad G + in_mom M' from the run's
   * own momentum M' (within 8 binary32 ulps of max(|G|, |M'|), as the
   * generator's expected.gradAfter, vectors/gen/gen_build.c), otherwise the
   * gradient itself (allowance 0; null without one) */
  int grad_after;
} muonref_run_edit;

/* muonref_run_fast with the changes of x (NULL: none). */
json_t *muonref_run_fast_ex(const json_t *test, const char *kind, const char *profile, muonref_ns_format format,
                            int fault, const muonref_run_edit *x, const char *where, muonref_error *err);

#endif
