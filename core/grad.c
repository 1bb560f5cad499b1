/* muonref: gradient checks made before a step writes anything (grad.h). */
#include <math.h>
#include "muonref/grad.h"
#include "core/pyfmt.h"
#include "core/fail.h"

int muonref_grad_check(const muonref_grad *g, size_t index, size_t numel, muonref_error *err)
{
  char b[40];
  if (!g->data)
    return MUONREF_OK;
  if (g->layout != MUONREF_DENSE)
    return muonref_fail(err, MUONREF_EGRAD, "Muon does not support sparse gradients");
  if (g->dtype != MUONREF_FLOAT32)
    return muonref_fail(err, MUONREF_EGRAD, "Muon does not support complex gradients");
  for (size_t i = 0; i < numel; i++)
    if (!isfinite(g->data[i]))
      return muonref_fail(err, MUONREF_ENONFINITE, "Non-finite gradient for parameter %zu: element %zu is %s",
                          index, i, muonref_py_float(b, sizeof b, g->data[i]));
  return MUONREF_OK;
}
