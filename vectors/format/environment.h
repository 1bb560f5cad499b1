/* muonref: the environment statement of a submission (spec/vectors.md
 * section 9): what a port author says about the run that wrote a results
 * file (the port, its source, the framework and its version, the device,
 * the mode, the vector release and profile), checked by `muonref check
 * --environment FILE` against the results file and the judged vectors
 * before the results are listed (vectors/publish.py). */
#ifndef MUONREF_VECTORS_ENVIRONMENT_H
#define MUONREF_VECTORS_ENVIRONMENT_H

#include "vectors/judge/checker.h"
#include "muonref/status.h"

/* Checks the environment statement at path (a JSON object, schema
 * "muonref-environment-v1") against c, a checker of a results file
 * (muonref_checker_results, before its run), and the vector files under
 * the n paths (muonref_files_collect), before any case is judged: the
 * statement's "mode" is the results file's (a file without one is "raw"),
 * its "nsFormat" (optional) the file's, its "framework" is "torch VERSION"
 * where the file names a "torch" version, its "vectors" the judged files'
 * one release (spec/vectors.md 2.9; not "none" or "mixed") and its
 * "profile" the profile of every judged file.  Errors: MUONREF_EIO
 * (unreadable), MUONREF_EFORMAT "PATH: member \"NAME\": RULE" (not JSON,
 * a duplicate, missing, unknown or empty member, a wrong type) and "PATH:
 * member \"NAME\" is \"A\", the results file's is \"B\"" (a statement the
 * run contradicts), MUONREF_ENOMEM. */
int muonref_environment_check(const char *path, const muonref_checker *c, char *const *paths, int n,
                              muonref_error *err);

#endif
