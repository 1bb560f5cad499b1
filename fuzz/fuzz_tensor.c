/* muonref fuzz target: the tensor format (vectors/format/tensor.c).  An input is
 * a JSON tensor object; a decoded tensor must encode back to the same
 * dtype, shape and hex digits (the format is exact). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/format/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  json_error_t je;
  json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
  if (!j)
    return 0;
  muonref_tensor t;
  muonref_error err;
  if (muonref_tensor_from_json(&t, j, "fuzz", &err) == MUONREF_OK) {
    json_t *k = muonref_tensor_to_json(&t, 1);
    const char *a = json_string_value(json_object_get(j, "hex")), *b = json_string_value(json_object_get(k, "hex"));
    /* bf16 and f32 NaN payloads and every bit pattern survive the round trip */
    if (!k || !a || !b || strcmp(a, b) || !json_equal(json_object_get(j, "shape"), json_object_get(k, "shape")))
      abort();
    json_decref(k);
    muonref_tensor_free(&t);
  }
  json_decref(j);
  return 0;
}
