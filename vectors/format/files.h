/* muonref: finding and loading vector files, and writing JSON files
 * atomically (a failed write leaves no partial file). */
#ifndef MUONREF_VECTORS_FILES_H
#define MUONREF_VECTORS_FILES_H

#include <jansson.h>
#include <stddef.h>
#include "muonref/status.h"

/* The *.json files named by paths (files as given; directories searched
 * recursively, names sorted), as a NULL-terminated array of owned strings
 * in *out (free with muonref_files_free).  Errors: MUONREF_EIO naming a
 * path that does not exist or cannot be read. */
int muonref_files_collect(char *const *paths, int n, char ***out, size_t *count, muonref_error *err);
void muonref_files_free(char **files);

/* Loads a vector file (duplicate JSON keys refused) and validates all of
 * it (muonref_vector_file_validate, validate.h) before anything is judged.
 * Errors: MUONREF_EIO (unreadable), MUONREF_EFORMAT ("FILE:LINE:COL: what"
 * for JSON syntax and duplicate keys, "FILE: testGroups[g].tests[t] (tcId
 * N): rule" for the content). */
json_t *muonref_vector_file_load(const char *path, muonref_error *err);

/* Writes j to path as one line of JSON text (indented by `indent`; 0:
 * compact; keys in their order) by muonref_output_write (core/output.h): a
 * regular file or a new name through a temporary file and rename(2), a
 * FIFO, a character device, /dev/stdout or a symbolic link written
 * through, never replaced.  Errors: MUONREF_EIO ("PATH: cannot write:
 * REASON"), MUONREF_ENOMEM. */
int muonref_json_write_atomic(const json_t *j, const char *path, int indent, muonref_error *err);

/* The golden vectors used when a command is given none: "vectors" (the
 * folder of that name in the working directory, as in a source checkout)
 * if it exists, else the installed set MUONREF_VECTORS_DIR
 * ($(pkgdatadir)/vectors, e.g. /usr/local/share/muonref/vectors, where
 * `make install` puts every profile's files).  Returns a static string, or
 * NULL with MUONREF_EIO naming both places when neither is a folder. */
const char *muonref_default_vectors(muonref_error *err);

/* The last path component of path. */
const char *muonref_basename(const char *path);

#endif
