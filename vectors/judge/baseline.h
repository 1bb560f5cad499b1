/* muonref: a baseline, the expected-failures file of `muonref check
 * --baseline` (spec/vectors.md section 7), read into memory.
 *
 * A line is `FILE#TCID [REASON] [URL]`: the case (a vector file's base
 * name and a tcId >= 1), why it is known to fail (free text), and, as the
 * last word when it starts with http:// or https://, the issue that tracks
 * it.  Blank lines and lines starting with '#' are comments.  A file written
 * by muonref 0.1.0's --write-failures (its first line the comment "# muonref
 * check expected failures of IMPL: one FILE#TCID per line (--baseline reads
 * it)") held the case's comment after the key: in such a file that text is
 * kept as the case's comment, not taken as a reason. */
#ifndef MUONREF_VECTORS_BASELINE_H
#define MUONREF_VECTORS_BASELINE_H

#include <jansson.h>
#include "muonref/status.h"

/* Reads the baseline at path into *out (a new object the caller owns):
 * "FILE#TCID" -> {"reason": REASON ("" when the line gives none), "url":
 * URL or "", "line": the line number}.  Errors: MUONREF_EIO (unreadable,
 * naming path), MUONREF_EFORMAT "PATH:LINE: ..." (a line that does not
 * start with FILE#TCID, a line longer than 4095 bytes, a case listed
 * twice: both lines named), MUONREF_ENOMEM; *out is NULL then. */
int muonref_baseline_read(const char *path, json_t **out, muonref_error *err);

/* "known failure: REASON (URL)" for a baseline entry (an element of what
 * muonref_baseline_read returns; NULL allowed), written to buf (n bytes,
 * cut to fit): "no reason given" stands for an empty reason, " (URL)" is
 * left out when there is none.  Returns buf. */
const char *muonref_baseline_why(const json_t *entry, char *buf, size_t n);

#endif
