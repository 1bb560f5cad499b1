/* muonref: gradient descriptors and the checks every step makes on them
 * before it writes anything (spec/muon.md, "Gradients"). */
#ifndef MUONREF_GRAD_H
#define MUONREF_GRAD_H

#include "muonref/api.h"
#include <stddef.h>
#include "muonref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum muonref_layout { MUONREF_DENSE = 0, MUONREF_SPARSE = 1 } muonref_layout;
typedef enum muonref_dtype { MUONREF_FLOAT32 = 0, MUONREF_COMPLEX64 = 1 } muonref_dtype;

/* The gradient of one parameter: numel float32 values in the parameter's
 * row-major layout, or data == NULL for "no gradient" (the parameter is
 * skipped).  layout and dtype exist so that callers can describe what a
 * framework handed them: only DENSE FLOAT32 gradients are accepted. */
typedef struct muonref_grad {
  const float *data;
  muonref_layout layout;
  muonref_dtype dtype;
} muonref_grad;

/* Checks gradient g of parameter number `index` with numel elements:
 *   sparse  -> MUONREF_EGRAD "Muon does not support sparse gradients"
 *              (the timm wording, timm/optim/muon.py)
 *   complex -> MUONREF_EGRAD "Muon does not support complex gradients"
 *   NaN/Inf -> MUONREF_ENONFINITE "Non-finite gradient for parameter 2:
 *              element 17 is nan"
 * A NULL data pointer (no gradient) is valid. */
MUONREF_API MUONREF_NODISCARD int muonref_grad_check(const muonref_grad *g, size_t index, size_t numel, muonref_error *err);

#ifdef __cplusplus
}
#endif
#endif
