/* muonref tests: helpers shared by the Check programs (independent of the
 * code under test: a seeded generator, a binary64 Newton-Schulz written
 * from the spec's formulas, singular values through LAPACKE). */
#ifndef MUONREF_TESTUTIL_H
#define MUONREF_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include "muonref.h"

/* Seed for the random tests: MUONREF_TEST_SEED if set, else `fallback`;
 * printed once so that a failure can be reproduced. */
uint64_t tu_seed(uint64_t fallback);

/* splitmix64 generator and standard normal deviates (Box-Muller). */
typedef struct tu_rng { uint64_t s; } tu_rng;
uint64_t tu_next(tu_rng *r);
double tu_normal(tu_rng *r);
void tu_fill_normal(tu_rng *r, float *x, size_t n, double scale);

/* The spec's Newton-Schulz in binary64 (no rounding to bf16/fp32) on the
 * row-major (rows, cols) matrix in (floats), written from spec/muon.md with
 * plain loops: out (rows*cols doubles). */
void tu_ns_double(double *out, const float *in, size_t rows, size_t cols, const muonref_options *o);

/* Singular values (descending) of the row-major (rows, cols) matrix a,
 * via LAPACKE_dgesdd; s holds min(rows, cols) doubles.  Returns 0 on success. */
int tu_singular_values(double *s, const double *a, size_t rows, size_t cols);

/* The composed scalar map phi(x) = p_K(...p_1(x)) of o's coefficient list
 * over ns_steps steps, by Horner in binary64. */
double tu_phi(const muonref_options *o, double x);

/* max |a - b| / max |b| over n elements (relative max-norm error). */
double tu_rel_err(const float *a, const double *b, size_t n);

/* Runs suite s (CK_ENV verbosity), frees it, and returns the process exit
 * status: EXIT_SUCCESS when no test failed. */
#include <check.h>
int tu_run_suite(Suite *s);

/* The nemo profile, or aborts the test. */
muonref_options tu_nemo(void);

#endif
