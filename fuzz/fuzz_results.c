/* muonref fuzz target: the results file parser.  An input is a results
 * file (spec/vectors.md section 4); it is loaded with duplicate keys
 * refused and validated (vectors/format/validate.c); every entry of a valid file
 * is then judged against one case of each kind, fuzz/judge_cases.json
 * (its path is JUDGE_CASES, set by fuzz/run.sh), as `muonref check
 * --results` does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/judge/judge.h"
#include "vectors/format/validate.h"

static json_t *cases; /* {"step": test, "ns": test, "transpose": test, "error": test} */


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  json_error_t je;
  if (!cases && !(cases = json_load_file(JUDGE_CASES, 0, &je)))
    abort(); /* the embedded cases are the project's own: they must parse */
  json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
  if (!j)
    return 0;
  muonref_error err;
  if (muonref_results_file_validate(j, "fuzz.json", &err) == MUONREF_OK) {
    const char *fmt = json_string_value(json_object_get(j, "nsFormat"));
    muonref_ns_format f = !strcmp(fmt, "bf16") ? MUONREF_NS_BF16 : MUONREF_NS_FP32;
    const json_t *rs = json_object_get(j, "results");
    const char *kind;
    json_t *test;
    for (size_t i = 0; i < json_array_size(rs); i++)
      json_object_foreach(cases, kind, test) {
        muonref_verdict v;
        muonref_judge(test, kind, json_array_get(rs, i), f, &v, "case", &err);
      }
  }
  json_decref(j);
  return 0;
}
