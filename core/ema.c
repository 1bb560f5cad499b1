/* muonref: the moving average of the weights (see ema.h). */
#include "core/ema.h"
#include <string.h>

void muonref_ema_update(const muonref_options *o, float *e, float *w, size_t n, long updates)
{
  float m = updates ? (float)o->ema_momentum : 0.0f, k = 1.0f - m;
  for (size_t j = 0; j < n; j++) { /* binary64 products of two floats are exact: one rounding each */
    float a = (float)((double)m * (double)e[j]), b = (float)((double)k * (double)w[j]);
    e[j] = a + b;
  }
  if (o->ema_overwrite > 0 && (updates + 1) % o->ema_overwrite == 0)
    memcpy(w, e, n * sizeof(float));
}
