/* muonref: tensors in the vector format (spec/vectors.md, "Tensors").
 *
 * A tensor is a JSON object {"dtype": "f32" | "f64" | "bf16", "shape": [d0,
 * d1, ...], "hex": "..."}: the row-major elements' IEEE bit patterns, each
 * written as fixed-width lower-case hex, most significant digit first (8
 * digits per f32, 16 per f64, 4 per bf16), concatenated without separators.
 * Every value is therefore stored exactly, NaN payloads, infinities and -0
 * included.  An optional "approx" member (an array of JSON numbers) is for
 * human readers only and is ignored on reading. */
#ifndef MUONREF_VECTORS_TENSOR_H
#define MUONREF_VECTORS_TENSOR_H

#include <jansson.h>
#include <stddef.h>
#include "muonref/route.h"
#include "muonref/status.h"

typedef enum muonref_tensor_dtype {
  MUONREF_TENSOR_F32 = 0,
  MUONREF_TENSOR_F64 = 1,
  MUONREF_TENSOR_BF16 = 2
} muonref_tensor_dtype;

/* An owned tensor.  f32 and bf16 tensors keep their values in `f` (a bf16
 * value as the float it denotes, exactly); f64 tensors in `d`; the other
 * pointer is NULL. */
typedef struct muonref_tensor {
  muonref_tensor_dtype dtype;
  muonref_shape shape;
  size_t numel;
  float *f;
  double *d;
} muonref_tensor;

/* Allocates a zero tensor of the given dtype and shape.  Returns MUONREF_OK
 * or MUONREF_ENOMEM / MUONREF_ESHAPE (ndim outside 0..MUONREF_MAX_NDIM). */
int muonref_tensor_alloc(muonref_tensor *t, muonref_tensor_dtype dtype, const muonref_shape *shape,
                         muonref_error *err);

/* Frees t's arrays and zeroes *t (NULL-safe). */
void muonref_tensor_free(muonref_tensor *t);

/* A new JSON object for t (the caller owns the reference), or NULL when out
 * of memory.  With approx != 0 an "approx" array of the values as JSON
 * numbers (17 significant digits; NaN/Inf written as null) is added. */
json_t *muonref_tensor_to_json(const muonref_tensor *t, int approx);

/* Reads a tensor object.  `where` names the place for messages (file and
 * JSON path, e.g. "v.json: testGroups[0].tests[3].inputs.grad").  Errors
 * (MUONREF_EFORMAT, t left zeroed): not an object; dtype missing or not one
 * of f32/f64/bf16; shape not an array of at most 8 positive integers; hex
 * missing, not a string, of the wrong length for the shape, or holding a
 * character other than 0-9a-f; also MUONREF_ENOMEM.  Thread-safe; recent
 * decodings of up to 16384 digits are kept (256 of them, a few MB at most,
 * until exit) and reused only for the same digits, dtype and shape. */
int muonref_tensor_from_json(muonref_tensor *t, const json_t *j, const char *where, muonref_error *err);

#endif
