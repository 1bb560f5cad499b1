/* muonref: the scalar schedule of a step (see plan.h).  The formulas are
 * those of the NeMo seed (nemo/core/optim/muon.py: update_scale,
 * _muon_update, _adamw_update), evaluated in binary64 like Python floats;
 * the EMA momentum form is that of KellerJordan/Muon muon_update @857d1ad. */
#include <math.h>
#include <string.h>
#include "core/plan.h"

double muonref_scale_factor(muonref_scale_mode mode, size_t rows, size_t cols)
{
  double r = (double)rows, c = (double)cols;
  switch (mode) {
  case MUONREF_SCALE_FAN_IN: return sqrt(fmax(1.0, r / c));
  case MUONREF_SCALE_FAN_OUT: return sqrt(fmax(1.0, c / r));
  /* torch/optim/_muon.py _adjust_lr "match_rms_adamw": 0.2 * math.sqrt(max(A, B)) */
  case MUONREF_SCALE_RMS_ADAMW: return 0.2 * sqrt(fmax(r, c));
  /* timm/optim/muon.py @aa4b5850 get_lr_scale "rms_to_rms": (out_chs / in_chs) ** 0.5 */
  case MUONREF_SCALE_RMS_TO_RMS: return sqrt(r / c);
  /* Emerging-Optimizers muon.py @fd77292 get_muon_scale_factor "spectral": max(size_out, size_in) ** 0.5 */
  case MUONREF_SCALE_SQRT_MAX: return sqrt(fmax(r, c));
  /* Paddle muon.py @98af0a0f _scaling_fn, muon_version 2: (dout / din) ** 0.5 */
  case MUONREF_SCALE_RATIO_COLS: return sqrt(c / r);
  /* timm/optim/muon.py @aa4b5850 get_adamuon_lr_scale "match_rms_adamw": 0.2 * (out_chs * in_chs) ** 0.5 */
  case MUONREF_SCALE_RMS_NUMEL: return 0.2 * sqrt(r * c);
  /* timm/optim/muon.py @aa4b5850 get_adamuon_lr_scale "rsqrt_in": in_chs ** -0.5 */
  case MUONREF_SCALE_RSQRT_COLS: return pow(c, -0.5);
  default: return 1.0;
  }
}

/* Paddle's update (muon.py @98af0a0f _scaling_fn, _muon_update; lr a
 * float32 0-D tensor): the decay only when weight_decay > 0, its factor
 * `1 - lr * weight_decay` evaluated in binary32; `O * lr` with fl32(lr);
 * in the bf16 format `u * scale * extra_scale_factor` two bf16 products. */
static void paddle_update(const muonref_options *o, const muonref_route *r, muonref_muon_plan *p)
{
  float lr32 = (float)o->lr;
  float lw = lr32 * (float)o->weight_decay;
  p->apply_decay = o->weight_decay > 0.0;
  p->decay = (double)(1.0f - lw);
  p->alpha = (double)lr32 * p->scale;
  if (o->ns_format == MUONREF_NS_BF16) {
    p->update_scale = 1;
    p->update_factor = muonref_scale_factor(o->scale_mode, r->scale_rows, r->scale_cols);
    p->update_factor2 = o->scale_extra;
    p->alpha = (double)lr32;
  }
}

const muonref_options *muonref_ns_options_for(const muonref_options *o, size_t rows, size_t cols,
                                              muonref_options *buf)
{
  if (!o || o->eps_mode != MUONREF_EPS_ADD_SCALED || rows < 1 || cols < 1)
    return o;
  *buf = *o;
  /* timm/optim/muon.py @aa4b5850 scale_eps_for_ns: `dout, din = (shape[-2],
   * shape[-1])`, `return eps * (din / dout) ** 0.5`; then `.add_(eps)` */
  buf->ns_eps = o->ns_eps * pow((double)cols / (double)rows, 0.5);
  buf->eps_mode = MUONREF_EPS_ADD;
  return buf;
}

double muonref_l2_coeff(const muonref_options *o, int use_muon)
{
  if (use_muon) /* Emerging-Optimizers mixin.py @fd77292: l2 `grad.add_(p, alpha=wd)` */
    return o->decay_method == MUONREF_DECAY_L2 ? o->weight_decay : 0.0;
  /* torch.optim.Adam: `grad = grad.add(param, alpha=weight_decay)` */
  return o->adam_l2 ? (o->adam_decay_own ? o->adam_weight_decay : o->weight_decay) : 0.0;
}

void muonref_muon_plan_make(const muonref_options *o, const muonref_route *r, muonref_muon_plan *p)
{
  double beta = o->momentum;
  int ema = o->momentum_form == MUONREF_MOMENTUM_EMA;
  p->mom_keep = beta;
  p->mom_grad = ema ? 1.0 - beta : 1.0;
  p->nesterov = o->nesterov;
  /* Nesterov: sum form U = G + beta M (NeMo), EMA form U = (1 - beta) G + beta M. */
  p->in_grad = o->nesterov ? p->mom_grad : 0.0;
  p->in_mom = o->nesterov ? beta : 1.0;
  /* Emerging-Optimizers mixin.py @fd77292 weight_decay_method: decoupled `-wd * lr`,
   * independent `-wd`, palm `-wd * lr * lr` (a binary64 product, as in Python), each
   * `p.add_(p, alpha=...)`; l2 `grad.add_(p, alpha=wd)`; none when wd is 0 */
  double wd = o->weight_decay;
  p->l2 = muonref_l2_coeff(o, 1);
  p->apply_decay = wd != 0.0 && o->decay_method != MUONREF_DECAY_L2;
  p->decay = o->decay_method == MUONREF_DECAY_INDEPENDENT ? 1.0 - wd
             : o->decay_method == MUONREF_DECAY_PALM      ? 1.0 - wd * o->lr * o->lr
                                                          : 1.0 - o->lr * wd;
  /* Emerging-Optimizers: `orth_grad * scale_factor * extra_scale_factor` */
  p->scale = muonref_scale_factor(o->scale_mode, r->scale_rows, r->scale_cols) * o->scale_extra;
  /* timm/optim/muon.py @aa4b5850 _single_tensor_muon: `if conv_mode == "batched" and
   * update_ortho.ndim >= 3: if normalize_spatial: scale *= update_ortho.shape[0] ** -0.5` */
  if (o->normalize_spatial && r->interleaved)
    p->scale *= pow((double)r->batch, -0.5);
  /* KellerJordan/Muon @857d1ad: `update *= s` on the bf16 Newton-Schulz
   * output (s a binary32 scalar, opmath), then `p.add_(update, alpha=-lr)` */
  p->update_scale = o->scale_format == MUONREF_SCALE_FORMAT_BF16_UPDATE && o->ns_format == MUONREF_NS_BF16;
  /* microsoft/dion @0a059a4 muon_update_post_orthogonalize: `U =
   * torch._foreach_mul(U, adjusted_lr)` on the bf16 output (adjusted_lr =
   * lr s, a Python float), then `torch._foreach_sub_(X, U)` */
  int alpha_in = o->scale_format == MUONREF_SCALE_FORMAT_BF16_ALPHA && o->ns_format == MUONREF_NS_BF16;
  p->alpha = p->update_scale ? o->lr : o->lr * p->scale;
  p->update_factor = p->update_scale ? p->scale : p->alpha;
  if (alpha_in)
    p->update_scale = 1, p->alpha = 1.0;
  p->update_factor2 = 1.0;
  p->cautious = o->cautious_wd;
  if (o->scale_format == MUONREF_SCALE_FORMAT_BF16_SCALE_EXTRA)
    paddle_update(o, r, p);
  /* Emerging-Optimizers v0.2.0 AdaptiveMuon: the scaled orthogonalize before the second moment, then
   * `p.add_(update, alpha=-lr)` (the caller multiplies O by p->scale first: fast/optimizer.c moment2_apply) */
  if (o->moment2_prescale && o->moment2 != MUONREF_MOMENT2_NONE && !p->update_scale)
    p->alpha = o->lr, p->update_factor = p->alpha;
  if (r->scale_ratio > 0.0 && r->scale_ratio != 1.0) {
    /* a row block under ns_split_scale RATIO (spec/muon.md 7.6): dion megabatch_base.py @0a059a4
     * _newton_schulz_row_blocks `block * split_scales[i]` on the bf16 output, before the update's
     * `_foreach_mul(U, adjusted_lr)`: a first bf16 product; in another format one binary64 factor */
    if (p->update_scale && p->update_factor2 == 1.0) {
      p->update_factor2 = p->update_factor;
      p->update_factor = r->scale_ratio;
    } else {
      p->scale *= r->scale_ratio, p->alpha *= r->scale_ratio;
      if (!p->update_scale)
        p->update_factor = p->alpha;
      else
        p->update_factor *= r->scale_ratio;
    }
  }
  if (r->momentum_only) { /* mlx: `parameter - lr * update`, no shape scale (route_rule MOMENTUM_1D) */
    p->scale = 1.0, p->alpha = o->lr, p->update_scale = 0;
    p->update_factor = p->alpha, p->update_factor2 = 1.0;
  }
}

void muonref_muon_plan_correct(const muonref_options *o, long t, muonref_muon_plan *p)
{
  if (!o->momentum_bias_correction)
    return;
  double beta = o->momentum;
  double bc = 1.0 - pow(beta, (double)t);
  if (o->nesterov) { /* `beta * m + (1 - beta) * g` on bias_correction(mu, t + 1), bias_correction(g, t) */
    p->in_mom = beta / (1.0 - pow(beta, (double)(t + 1)));
    p->in_grad = p->mom_grad / bc;
  } else { /* `tree_bias_correction(mu, beta, count_inc)` */
    p->nesterov = 1;
    p->in_mom = 1.0 / bc;
    p->in_grad = 0.0;
  }
}

double muonref_adam_bias_correction(const muonref_options *o, double beta, long t)
{
  if (!o->adam_bias_fp32)
    return 1.0 - pow(beta, (double)t);
  /* keras _adamw_update_step: `ops.power(ops.cast(beta, float32), local_step)`
   * in float32, then `1 - power` (exact: Sterbenz) */
  return 1.0 - (double)(float)pow((double)(float)beta, (double)t);
}

void muonref_adamw_plan_make(const muonref_options *o, long t, muonref_adamw_plan *p)
{
  p->step = t;
  p->lr = o->lr * o->adam_lr_ratio;
  p->beta1 = o->adam_beta1;
  p->beta2 = o->adam_beta2;
  p->one_minus_beta1 = 1.0 - o->adam_beta1;
  p->one_minus_beta2 = 1.0 - o->adam_beta2;
  p->bias_correction1 = muonref_adam_bias_correction(o, o->adam_beta1, t);
  p->bias_correction2 = muonref_adam_bias_correction(o, o->adam_beta2, t);
  p->sqrt_bc2 = sqrt(p->bias_correction2);
  p->step_size = p->lr / p->bias_correction1;
  /* UNCORRECTED: m / ((sqrt(v) + eps) / s2) = m / (sqrt(v) / s2 + eps / s2) */
  p->eps = o->adam_eps_mode == MUONREF_ADAM_EPS_UNCORRECTED ? o->adam_eps / p->sqrt_bc2 : o->adam_eps;
  /* optax scale_by_adam: `nu_hat + eps_root` under the square root, nu_hat = nu / bc2 */
  p->eps_root_bc2 = o->adam_eps_root * p->bias_correction2;
  /* optax: the AdamW decay's own coefficient (adam_decay_own); keras: it
   * and the Muon lr (adam_decay_muon_lr; Muon._apply_weight_decay:
   * `variable - variable * wd * lr`, lr = self.learning_rate for both
   * branches).  Keras casts wd and lr to float32 and rounds (v wd) lr and
   * the difference in float32: relative 2^-24 of the decay term and one
   * rounding of the parameter, inside the element-wise allowance
   * (spec/vectors.md 5.1), so the binary64 factor is kept. */
  double wd = o->adam_decay_own ? o->adam_weight_decay : o->weight_decay;
  /* adam_l2 (Megatron's Adam with decoupled_weight_decay False: torch.optim.Adam's
   * `grad = grad.add(param, alpha=weight_decay)`): the decay through the gradient instead */
  p->l2 = muonref_l2_coeff(o, 0);
  p->apply_decay = wd != 0.0 && !o->adam_l2;
  p->decay = 1.0 - (o->adam_decay_muon_lr ? o->lr : p->lr) * wd;
  p->cautious = o->cautious_wd;
  /* timm/optim/muon.py @aa4b5850 Muon.step: nadamw(...) if group["nesterov"] else adamw(...) */
  p->nadamw = o->adam_variant == MUONREF_ADAM_NADAMW || (o->adam_variant == MUONREF_ADAM_FOLLOW_NESTEROV && o->nesterov);
  p->num_mom = p->beta1, p->num_grad = p->one_minus_beta1;
  if (o->adam_variant == MUONREF_ADAM_OPTAX_FOLLOW_NESTEROV && o->nesterov) {
    /* optax/_src/transform.py @2edbcbe2 scale_by_adam (nesterov): b1 * m / (1 - b1^(t+1)) + (1 - b1) * g / (1 - b1^t) */
    p->nadamw = 1;
    p->num_mom = p->beta1 / (1.0 - pow(o->adam_beta1, (double)(t + 1)));
    p->num_grad = p->one_minus_beta1 / p->bias_correction1;
    p->step_size = p->lr;
  }
}

void muonref_state_missing_grad(const muonref_options *o, const muonref_route *r, muonref_param_state *s)
{
  if (!o->adam_step_global)
    return;
  if (!s->initialized) { /* keras builds every slot as zeros */
    size_t bytes = r->numel * sizeof(float);
    if (s->momentum_buffer)
      memset(s->momentum_buffer, 0, bytes);
    if (s->exp_avg)
      memset(s->exp_avg, 0, bytes);
    if (s->exp_avg_sq)
      memset(s->exp_avg_sq, 0, bytes);
    if (r->use_muon && s->moment2) { /* a second moment of zeros too (AdaMuon under adam_step_global) */
      s->moment2_numel = muonref_moment2_numel(o, r);
      memset(s->moment2, 0, s->moment2_numel * sizeof(float));
    }
    s->step = 0;
    s->use_muon = r->use_muon;
    s->numel = r->numel;
  }
  s->initialized = 1;
  s->step++;
}

void muonref_moment2_plan_make(const muonref_options *o, long t, muonref_moment2_plan *p)
{
  p->kind = o->moment2;
  p->keep = o->moment2_beta;
  p->take = 1.0 - o->moment2_beta;
  /* timm _single_tensor_adamuon: `1.0 - beta2 ** step` */
  p->bias_correction2 = o->moment2_bias_correction ? 1.0 - pow(o->moment2_beta, (double)t) : 1.0;
  p->eps = o->moment2_eps;
  p->clamp = o->moment2_eps_mode == MUONREF_EPS_CLAMP;
  p->rescale = o->moment2_rescale;
  p->ratio_nan = 0;
}

int muonref_moment2_interleaved(const muonref_options *o, const muonref_route *r)
{
  return o && r && o->moment2 == MUONREF_MOMENT2_ELEMENT && r->interleaved && r->batch > 1;
}

size_t muonref_moment2_index(const muonref_moment2_plan *p, size_t rows, size_t cols, size_t i, size_t j)
{
  switch (p->kind) {
  case MUONREF_MOMENT2_ELEMENT: return i * cols + j;
  case MUONREF_MOMENT2_LONGER: return rows < cols ? j : i;
  default: return i; /* ROWS */
  }
}

double muonref_moment2_rms_factor(size_t numel) { return 0.2 * sqrt((double)numel); }
