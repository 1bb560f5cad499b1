/* muonref: the entry of the vector generator (see gen.h). */
#ifndef MUONREF_VECTORS_GEN_RUN_H
#define MUONREF_VECTORS_GEN_RUN_H

#include <mpfr.h>
#include "muonref/status.h"

/* What a run wrote: files, tests, tests with exact bf16 expectations,
 * cases left out (the profile's port cannot be given their options), areas
 * whose every case was left out (no file: a vector file holds at least one
 * test, spec/vectors.md 8), the threads used and the output folder. */
typedef struct gen_summary {
  long files, tests, bf16_certified, left_out, empty_areas;
  int threads;
  char dir[4096];
} gen_summary;

/* The most threads muonref_gen_all runs. */
#define GEN_MAX_THREADS 64

/* Writes every vector file of every built-in profile (or only area
 * `only`, only profile `only_profile`, where not NULL: a built-in profile or
 * a user's profile registered by muonref_record_use, vectors/format/record.h), the
 * areas of each profile's row, under out_dir/<profile>/ with the reference at prec bits (and 2 prec for the
 * correct-rounding check).  The cases' reference computations run on
 * `threads` threads (0: one per online core; 1 when MPFR was built without
 * thread-local storage, mpfr_buildopt_tls_p()); the files are the same
 * bytes for every thread count (sum->threads reports the count used).  The
 * folder is locked for the run (a concurrent gen into it is refused), all
 * files are staged and renamed into place only when every one was written,
 * and a failed rename restores the files replaced before it
 * (vectors/gen/gen_commit.h).  Errors: MUONREF_EOPTION (unknown area or
 * profile; threads outside 0..GEN_MAX_THREADS), MUONREF_EIO (the folder is
 * locked by another run, or it or a file cannot be written; the old set is
 * unchanged), MUONREF_ENUMERIC (a reference value could not be certified;
 * no file is replaced).  Test hook (MUONREF_TEST_HOOKS builds):
 * MUONREF_TEST_GEN_FAIL_RENAME=K makes the K-th rename into place fail. */
/* Whether `name` is a vector area of the generator (spec/vectors.md 6:
 * "routing", "adamw", ...); the areas as one line "routing, scaling, ..."
 * (static storage). */
int muonref_gen_area_known(const char *name);
const char *muonref_gen_area_list(void);

int muonref_gen_all(const char *out_dir, mpfr_prec_t prec, const char *only, const char *only_profile, int threads,
                    gen_summary *sum, muonref_error *err);

#endif
