/* muonref: gradient checks made before a step writes anything (grad.h). */
#include <math.h>
#include "muonref/grad.h"
#include "core/pyfmt.h"
#include "core/fail.h"

int muonref_grad_check(const muonref_grad *g, size_t index, size_t numel, muonref_error *err)
{
  char b[40];
  if (!g)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_grad_check: g must not be NULL (gradient %zu)", index);
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

double muonref_clip_coeff(double max_norm, double total_norm)
{
  if (!(max_norm > 0.0))
    return 1.0; /* clip_grad 0: off */
  double c = max_norm / (total_norm + 1.0e-6); /* Megatron clip_grads.py: `max_norm / (total_norm + 1.0e-6)` */
  return c < 1.0 ? c : 1.0;
}

void muonref_clip_scale(float *g, size_t n, double coeff)
{
  if (coeff == 1.0 || !g)
    return;
  double c32 = (double)(float)coeff; /* the float32 scale of multi_tensor_scale / Tensor.mul_ */
  for (size_t j = 0; j < n; j++)
    g[j] = (float)((double)g[j] * c32);
}

void muonref_grad_used(float *out, const float *g, size_t n, int maximize, double coeff)
{
  for (size_t j = 0; j < n; j++)
    out[j] = maximize ? -g[j] : g[j];
  muonref_clip_scale(out, n, coeff);
}

void muonref_l2_grad(float *out, const float *g, const float *p, size_t n, double wd)
{
  for (size_t j = 0; j < n; j++)
    out[j] = (float)fma(wd, (double)p[j], (double)g[j]);
}

double muonref_grad_sumsq(const float *g, size_t n)
{
  double s = 0.0;
  for (size_t j = 0; g && j < n; j++)
    s += (double)g[j] * (double)g[j];
  return s;
}

double muonref_clip_keras_norm(double sumsq)
{
  return (double)(float)sqrt((double)(float)sumsq); /* binary64 sqrt of a binary32, rounded once more: exact R32 */
}

double muonref_clip_keras_global(double max_norm, const double *sumsq, size_t n)
{
  double total = 0.0;
  for (size_t i = 0; i < n; i++)
    total += (double)(float)sumsq[i]; /* keras global_norm: ops.sum(ops.square(v)) per gradient, float32 */
  double n32 = muonref_clip_keras_norm(total);
  double inv_n = (double)(float)(1.0 / n32), inv_c = (double)(float)(1.0 / max_norm); /* 1/0 = inf */
  /* `clip_norm * ops.minimum(1.0 / use_norm, 1.0 / clip_norm)`, then `+ (use_norm - use_norm)`: +0 for a finite
   * norm, NaN for one that overflowed binary32 (keras: "For inf/-inf/NaN, this will make scale NaN") */
  return (double)(float)((double)(float)max_norm * (inv_n < inv_c ? inv_n : inv_c)) + (n32 - n32);
}

double muonref_clip_paddle_global(double max_norm, const double *sumsq, size_t n)
{
  float total = 0.0f;
  for (size_t i = 0; i < n; i++) /* paddle.add_n of the float32 squared_l2_norm of each gradient, in order */
    total += (float)sumsq[i];
  float n32 = (float)sqrt((double)total), c32 = (float)max_norm;
  /* paddle.maximum is `a > b ? a : b` (phi MaximumFunctor): a NaN norm gives c, the scale 1; an infinite norm
   * gives c / inf = 0 */
  float m = n32 > c32 ? n32 : c32;
  return (double)(c32 / m);
}

void muonref_clip_keras_each(float *g, size_t n, double max_norm, double sumsq)
{
  if (!g)
    return;
  double c32 = (double)(float)max_norm, n32 = muonref_clip_keras_norm(sumsq);
  double d = isnan(n32) || n32 > c32 ? n32 : c32; /* ops.maximum(l2norm, clipnorm), NaN kept as torch.maximum keeps it */
  for (size_t j = 0; j < n; j++) /* each operation rounded once to binary32 (binary64 first: innocuous for * and /) */
    g[j] = (float)((double)(float)((double)g[j] * c32) / d);
}

void muonref_clip_value(float *g, size_t n, double v)
{
  float hi = (float)v, lo = -hi;
  for (size_t j = 0; g && j < n; j++)
    g[j] = g[j] < lo ? lo : g[j] > hi ? hi : g[j];
}

void muonref_grad_unscale(float *g, size_t n, double s)
{
  double s32 = (double)(float)s;
  for (size_t j = 0; g && j < n; j++)
    g[j] = (float)((double)g[j] / s32);
}

double muonref_clip_global(const muonref_options *o, double norm, const double *sumsq, size_t n)
{
  if (!(o->clip_grad_norm > 0.0))
    return 1.0;
  return o->clip_grad_form == MUONREF_CLIP_KERAS    ? muonref_clip_keras_global(o->clip_grad_norm, sumsq, n)
         : o->clip_grad_form == MUONREF_CLIP_PADDLE ? muonref_clip_paddle_global(o->clip_grad_norm, sumsq, n)
                                                    : muonref_clip_coeff(o->clip_grad_norm, norm);
}

void muonref_clip_gradient(const muonref_options *o, float *g, size_t n, double s, double sumsq)
{
  muonref_clip_scale(g, n, s);
  if (o->clip_grad_norm_each > 0.0)
    muonref_clip_keras_each(g, n, o->clip_grad_norm_each, sumsq);
  if (o->clip_grad_value > 0.0)
    muonref_clip_value(g, n, o->clip_grad_value);
}
