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

#endif
