/* muonref fuzz target: the vector file parser.  An input is a vector file;
 * it is loaded with duplicate keys refused and validated completely
 * (vectors/format/validate.c).  A valid file's cases are then run on the fast path
 * in bf16 and fp32 and judged against themselves, as `muonref check
 * --impl` does: no input may crash, leak, or trip a sanitizer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/judge/judge.h"
#include "vectors/judge/run_fast.h"
#include "vectors/format/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  json_error_t je;
  json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
  if (!j)
    return 0;
  muonref_error err;
  if (muonref_vector_file_validate(j, "fuzz.json", &err) == MUONREF_OK) {
    const char *profile = json_string_value(json_object_get(j, "profile"));
    const json_t *groups = json_object_get(j, "testGroups");
    for (size_t g = 0; g < json_array_size(groups); g++) {
      const json_t *grp = json_array_get(groups, g), *tests = json_object_get(grp, "tests");
      const char *kind = json_string_value(json_object_get(grp, "kind"));
      for (size_t t = 0; t < json_array_size(tests); t++)
        for (int f = 0; f < 2; f++) {
          muonref_ns_format fmt = f ? MUONREF_NS_FP32 : MUONREF_NS_BF16;
          json_t *r = muonref_run_fast(json_array_get(tests, t), kind, profile, fmt, 0, "fuzz.json", &err);
          muonref_verdict v;
          if (r)
            muonref_judge(json_array_get(tests, t), kind, r, fmt, &v, "fuzz.json", &err);
          json_decref(r);
        }
    }
  }
  json_decref(j);
  return 0;
}
