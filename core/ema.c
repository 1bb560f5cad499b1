/* muonref: the moving average of the weights (see ema.h). */
#include "core/ema.h"
#include <string.h>

void muonref_ema_average(const muonref_options *o, float *e, const float *w, size_t n, int first)
{
  float m = first ? 0.0f : (float)o->ema_momentum, k = 1.0f - m;
  for (size_t j = 0; j < n; j++) { /* binary64 products of two floats are exact: one rounding each */
    float a = (float)((double)m * (double)e[j]), b = (float)((double)k * (double)w[j]);
    e[j] = a + b;
  }
}

void muonref_ema_overwrite(const muonref_options *o, const float *e, float *w, size_t n, long updates)
{
  if (o->ema_overwrite > 0 && (updates + 1) % o->ema_overwrite == 0)
    memcpy(w, e, n * sizeof(float));
}

void muonref_ema_update(const muonref_options *o, float *e, float *w, size_t n, long updates)
{
  muonref_ema_average(o, e, w, n, updates == 0);
  muonref_ema_overwrite(o, e, w, n, updates);
}
