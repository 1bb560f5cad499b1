/* muonref: vector releases (spec/vectors.md 2.9).  A release names one
 * published state of every profile's golden vectors, "YYYY.MM.N" (the
 * year and month it was cut, N counting the releases of that month from 1).
 * Its one place is vectors/RELEASE, read by configure into
 * MUONREF_VECTORS_RELEASE (config.h); the generator writes it into every
 * file's "release" member; NEWS says what each release changed and why. */
#ifndef MUONREF_VECTORS_RELEASE_H
#define MUONREF_VECTORS_RELEASE_H

#include <stdio.h>
#include "muonref/status.h"

/* Whether s is a release identifier: four digits, '.', two digits, '.',
 * one or more digits (nothing else; NULL is not). */
int muonref_release_valid(const char *s);

/* Merges the release of one more file into the release of a set: *set is
 * "" before the first file; a file without one counts as "none" (written
 * before releases, format 1 allows it); two different releases make the
 * set "mixed".  set has room for n bytes (at least 32). */
void muonref_release_merge(char *set, size_t n, const char *file_release);

/* The counts of muonref_release_diff. */
typedef struct muonref_release_counts {
  long added, changed, removed; /* cases (a test, by file and tcId) */
  long files_added, files_removed;
} muonref_release_counts;

/* Lists the cases that differ between two vector folders old_dir and
 * new_dir (e.g. two releases), one line per case on out, sorted by file
 * (its path under the folder, e.g. "keller/keller_adamw.json") then tcId:
 *   "added   FILE tcId N: COMMENT", "changed FILE tcId N: COMMENT",
 *   "removed FILE tcId N: COMMENT"
 * after a first line "release OLD -> NEW" (the folders' releases, as
 * muonref_release_merge gives them).  A case is changed when its test
 * object differs in any member (json_equal); a file's header, notes or
 * generator alone is no case change.  Every file of both folders is loaded
 * and validated first, so that an error prints nothing.  The counts go
 * to *counts.  Errors: MUONREF_EIO (a folder missing or unreadable),
 * MUONREF_EFORMAT (a file that is not a valid vector file, naming it),
 * MUONREF_ENOMEM. */
int muonref_release_diff(const char *old_dir, const char *new_dir, FILE *out, muonref_release_counts *counts,
                         muonref_error *err);

#endif
