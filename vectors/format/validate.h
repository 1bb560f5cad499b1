/* muonref: complete validation of vector files and results files
 * (spec/vectors.md sections 1-5) before anything is judged.
 *
 * A file that breaks a rule of the format is unusable input (exit 2 of
 * `muonref check`), never a port's failure: these checks run on the whole
 * file first, so that no case is judged from a half-read file and no member
 * is silently ignored.  Every message names the file, the case (test group,
 * test index and tcId where known) and the rule broken, e.g.
 *   "v.json: testGroups[0].tests[3] (tcId 4): expected.params[1]: shape
 *    (4, 8), expected (8, 4), the shape of params[1].init". */
#ifndef MUONREF_VECTORS_VALIDATE_H
#define MUONREF_VECTORS_VALIDATE_H

#include <jansson.h>
#include "muonref/status.h"

/* Loads the JSON file at path, refusing duplicate object keys
 * (JSON_REJECT_DUPLICATES).  Returns a new reference, or NULL with err:
 * MUONREF_EIO (missing, a folder, unreadable), MUONREF_EFORMAT
 * ("FILE:LINE:COL: what" for syntax errors and duplicate keys). */
json_t *muonref_json_load_strict(const char *path, muonref_error *err);
/* The same, with JSON_ALLOW_NUL when allow_nul is set (a results file: a
 * port's "error" or "skipped" string may hold "\u0000", which fails that
 * case; every other string with a NUL is refused by validation). */
json_t *muonref_json_load(const char *path, int allow_nul, muonref_error *err);

/* Checks every member of the vector file j (loaded from `file`, used in
 * messages): the header (schema, formatVersion 1, generator, a known
 * profile, area, numberOfTests equal to the number of tests, header,
 * notes), every group (kind step | ns | transpose | error, tests) and every
 * test of its kind: tcId an integer from 1 to 2^31-1, unique; comment;
 * flags (strings); result; options of the right JSON types (and, in
 * step cases, valid: muonref_options_validate); parameter indices each in
 * range and used exactly once; one gradient (null or an f32 tensor of the
 * parameter's shape) per parameter per step; roundTripAfter in 1..steps-1;
 * every tensor of every tier (expected, expectedBf16, exact, polar, bf16)
 * decodable, f32 and of the shape its rule gives; states with step in
 * 1..steps and the buffers of one kind; tolerances for fp32 and bf16 with
 * the fields of their kind, finite and non-negative, one atol and stateAtol
 * per parameter; error expectations with a known status and a non-empty
 * message.  Members not in the format are refused.
 * Returns MUONREF_OK or MUONREF_EFORMAT (MUONREF_ENOMEM when out of memory). */
int muonref_vector_file_validate(const json_t *j, const char *file, muonref_error *err);

/* Checks a results file (spec/vectors.md section 4): implementation (a
 * string, optional), nsFormat "bf16" or "fp32", results an array of
 * entries {file (a base name), tcId (1..2^31-1)} plus exactly one outcome:
 * params (f32 tensors) with an optional state (nulls or states of f32
 * buffers), output (f32 or bf16) with an optional outputT of the transposed
 * shape, error (a string) or skipped (a string).  Every tensor is decoded.
 * Members not in the protocol are refused.  Returns MUONREF_OK or
 * MUONREF_EFORMAT naming file, entry and rule. */
int muonref_results_file_validate(const json_t *j, const char *file, muonref_error *err);

#endif
