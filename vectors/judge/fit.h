/* muonref: explaining a failing port by fitting it to the option space
 * (spec/vectors.md section 7, "Diagnosis"; issue 22).
 *
 * The fit sees every failing case of an outside implementation (and a
 * sample of its passing ones) and runs, on the fast path, every single
 * change of the option space (vectors/judge/fit_space.h: the catalogued faults
 * and each option field set to another value), then pairs of the most
 * promising ones.  A change explains a failing case when the port's result
 * passes the case judged against the change's run instead of the golden
 * expectation; on a Bf16Exact case the change's run is made in each
 * accepted bf16 evaluation order and, where the order no longer gives a
 * certified result, judged with the bf16 noise allowance of the profile's
 * Bf16Noise cases (a "weak" match, counted only where the unchanged run
 * does not match as well).  A run equal to the unchanged one explains
 * nothing.  Changes are ranked by failures explained, then by passing cases
 * they keep passing, then by how close their runs come to the port.
 *
 * Each failing step case also gives the ratio of the port's update norm to
 * the expected one per Muon parameter (||P_got - P_init||_F /
 * ||P_exp - P_init||_F), summarised per shape: a scale error shows as one
 * number per shape.
 *
 * Debugging (standard error): MUONREF_FIT_DEBUG=1 prints the runs made and
 * their time, the changes slower than 50 ms on a case and the passing cases
 * each checked change breaks; MUONREF_FIT_CASE=FILE#TCID every run on that
 * case (change, variant, distance, match). */
#ifndef MUONREF_VECTORS_FIT_H
#define MUONREF_VECTORS_FIT_H

#include <jansson.h>
#include <stdio.h>
#include "muonref/options.h"

typedef struct muonref_fit muonref_fit;

/* A new fit for results whose Newton-Schulz runs in `format`.
 * platform_scalars: the results come from raw mode on a platform whose
 * probe found Python scalars rounded to bf16 (vectors/drivers/
 * platform_probe.py "scalar_mul"): every run is then also made with the
 * coefficients and eps rounded to bf16 (the fault bf16_scalars), and the
 * better of the two counts.  NULL when out of memory. */
muonref_fit *muonref_fit_new(muonref_ns_format format, int platform_scalars);

/* The best explanations of one failing case, as the per-case diagnosis
 * line gives them. */
typedef struct muonref_fit_case {
  char key[256];  /* the best change's label, and those that give the same
                     result on this case, joined by '+'; "" when none */
  char text[512]; /* in a sentence */
  int fault;      /* the best change's fault id, or 0 */
  int platform;   /* 1: the unchanged run with the platform's bf16 scalars
                     gives the port's result (key "bf16_scalars") */
  /* where no change matches (key ""): the change whose run lies nearest
   * the port's result, when it is at most a tenth as far as the unchanged
   * run (distances: the largest relative deviation of a parameter's update
   * or of p.grad, as the fit measures them); "" when none is */
  char nearest[200];
  double nearest_dist, null_dist;
  char nearest_differs[240]; /* what the port's result still differs in from that
                                run: the judge's first failing quantity
                                ("state[0].step: 3, expected 2"); "" when none */
} muonref_fit_case;

/* Records a failing case: `test` (a test object of a group of kind
 * `kind`, "step", "ns" or "transpose") of `profile`, `file` its vector
 * file, the port's `result` (spec/vectors.md 4; not an error or skipped
 * entry).  Runs every single change of the profile's space that can touch
 * the case.  Fills *c with the case's best explanations; returns 1 when
 * some change explains the case, else 0.  The fit keeps references to test
 * and result. */
int muonref_fit_failure(muonref_fit *f, const json_t *test, const char *kind, const char *profile, const char *file,
                        const json_t *result, muonref_fit_case *c);

/* A failing case without a result to fit (vectors/judge/refusal.h): a step case
 * the port raised on (result {"skipped": MESSAGE}) or an error case it ran
 * (a result without "error").  Records it for the report's "refused" and
 * "accepted" sections (muonref_fit_report) and writes the case's diagnosis
 * to text (n bytes): what the port did and the case's traits.  Returns 1,
 * or 0 when the case is neither (nothing recorded) or memory ran out. */
int muonref_fit_refusal(muonref_fit *f, const json_t *test, const char *kind, const char *profile,
                        const json_t *result, char *text, size_t n);

/* Records a passing case (a sample of them is kept: an explanation must
 * keep them passing); orders: the bf16 evaluation orders it matched
 * (muonref_verdict.orders; 0 when it publishes none): the changes are
 * run first in the orders the passing cases matched most. */
void muonref_fit_pass(muonref_fit *f, const json_t *test, const char *kind, const char *profile, const char *file,
                      const json_t *result, unsigned orders);

/* Fits each profile that has failures and prints, per profile, the best
 * explanations ("explained: CHANGE (N of M failures; K of S passing cases
 * sampled broken)"), singles and pairs, the per-shape scale evidence
 * ("scale: (64, 16) x0.87 in 9 cases") and the time it took. */
void muonref_fit_report(muonref_fit *f, FILE *out);

/* Whether muonref_fit_report listed the failing case `label` ("FILE#TCID",
 * FILE the vector file's base name) under a pair's "explained:" line (the
 * pair matches it better than any single change; each case under the first
 * such pair only).  0 before the report, for f or label NULL, and for a
 * case not listed. */
int muonref_fit_listed(const muonref_fit *f, const char *label);

/* The change of the report's first "explained:" line of the case's
 * profile when that line matches the failing case `label` ("FILE#TCID", as
 * muonref_fit_listed), else NULL (before muonref_fit_report too); *all
 * (unless NULL) is set to whether that change explains every failure of
 * the profile and breaks none of the sampled passing cases, *single
 * (unless NULL) to whether it is one change (not a pair or a triple).  The
 * string belongs to f (freed with it). */
const char *muonref_fit_first(const muonref_fit *f, const char *label, int *all, int *single);

void muonref_fit_free(muonref_fit *f);

#endif
