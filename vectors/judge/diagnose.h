/* muonref: the diagnosis of a failing case (spec/vectors.md section 7):
 * which catalogued fault (fast/faults.h) or change of an option (the fit,
 * vectors/judge/fit.h) or which platform effect measured by the driver's probe
 * gives the port's result. */
#ifndef MUONREF_VECTORS_DIAGNOSE_H
#define MUONREF_VECTORS_DIAGNOSE_H

#include <jansson.h>
#include "muonref/options.h"

typedef struct muonref_diagnosis {
  char key[256];  /* what explains the failure: a fault name ("bf16_scalars") or
                     an option change ("eps 1e-7 -> 1e-8"; several joined by '+'
                     when they give the same result),
                     "not-bf16", "platform:..." (a platform effect the probe
                     measured); "" when nothing does */
  char text[1600]; /* the explanation in a sentence */
  char nearest[800]; /* where no change of the fit matches but one lies at most a
                        tenth as far from the result as the profile's own run
                        (muonref_fit_case.nearest): that change and both
                        distances in a clause ("the nearest run is fault X's:
                        ...") and what the result still differs from it in
                        (the judge's first failing quantity), also when 0 is
                        returned; else "" */
} muonref_diagnosis;

struct muonref_fit;

/* Explains why `result` (an outside implementation's entry, spec/vectors.md
 * section 4) fails `test` (a group of kind `kind` of `profile`, in vector
 * file `file`), for a port whose Newton-Schulz runs in `format`.  In this
 * order: an ns/transpose output that is not bf16-valued while judged as bf16
 * ("judge it with --ns-format fp32"); the fit `fit` (vectors/judge/fit.h; NULL:
 * none), which records the failure and names the catalogued fault or option
 * change whose fast-path run the result matches (the platform's bf16 scalars
 * first, as fault bf16_scalars); a platform effect recorded in `platform` (the
 * results file's "platform" object of vectors/drivers/platform_probe.py,
 * may be NULL): a "matmul_*" finding other than "binary32" on a case that
 * runs Newton-Schulz on a tall matrix, or, as a possible cause only,
 * "scalar_mul" rounded to bf16 or such a matmul finding on any bf16 case.
 * Returns 1 and fills *d when something explains it, else 0 (d->key empty). */
int muonref_diagnose(const json_t *test, const char *kind, const char *profile, const char *file,
                     const json_t *result, muonref_ns_format format, const json_t *platform, struct muonref_fit *fit,
                     muonref_diagnosis *d);

#endif
