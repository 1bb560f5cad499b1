/* muonref: the scalar schedule of one optimizer step.
 *
 * Every scalar that a step combines tensors with (momentum weights, the
 * decay factor, the step size with its shape factor, AdamW's bias
 * corrections) is computed here, once, in binary64, from the options, as
 * the Python ports compute them in Python floats.  Both the fast path and
 * the exact reference consume these same binary64 values; the reference
 * then does the tensor arithmetic without rounding.  spec/muon.md, section
 * "Scalar schedule", defines each field. */
#ifndef MUONREF_PLAN_H
#define MUONREF_PLAN_H

#include "muonref/options.h"
#include "muonref/param_state.h"
#include "muonref/route.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One Muon step on a (rows, cols) matrix:
 *   G <- R32(G + l2 * P)                    (only when l2 != 0)
 *   M <- mom_keep * M + mom_grad * G
 *   U <- in_grad * G + in_mom * M          (Nesterov; else U = M)
 *   O <- NS(U)
 *   O <- R_bf16(fl32(update_factor) * O)    (only when update_scale)
 *   P <- decay * P                          (only when apply_decay)
 *   P <- P - alpha * O                      (alpha = lr * scale, or lr
 *                                            when update_scale)
 * update_factor is scale under scale_format BF16_UPDATE (Keller: alpha =
 * lr) and lr * scale under BF16_ALPHA (dion: alpha = 1), both in the bf16
 * format only.  Under nuclear_scale O is multiplied by <U, O> before the
 * update (the caller computes it: it depends on the data).  scale includes
 * normalize_spatial's S^-1/2.  A row block's route with scale_ratio
 * (ns_split_scale RATIO, dion) puts the ratio first: update_factor is the
 * ratio and update_factor2 the factor above, two bf16 products. */
typedef struct muonref_muon_plan {
  double mom_keep, mom_grad;
  int nesterov;
  double in_grad, in_mom;
  double l2;        /* decay_method L2: weight_decay, the coefficient of P added to the gradient
                       (muonref_l2_grad); 0: the gradient as given */
  int apply_decay;
  double decay;
  double scale;
  int update_scale; /* scale_format BF16_UPDATE or BF16_ALPHA in the bf16 format */
  double update_factor; /* the binary64 factor of the bf16 update when update_scale */
  double update_factor2; /* a second bf16 product O <- R_bf16(fl32(update_factor2) O) after the
                            first, when update_scale and it is not 1.0 (Paddle's extra_scale_factor) */
  double alpha;
  int cautious;          /* 0: the decay applies to every element; 1 (cautious_wd): only where
                            P O >= 0; 2 (the fault cautious_wd_strict): only where P O > 0 */
} muonref_muon_plan;

/* One AdamW step, t = step count after this step (t >= 1):
 *   g <- R32(g + l2 * P)                    (only when l2 != 0)
 *   m <- beta1 * m + one_minus_beta1 * g
 *   v <- beta2 * v + one_minus_beta2 * g * g
 *   P <- decay * P                          (only when apply_decay)
 *   P <- P - step_size * n / (sqrt(v + eps_root_bc2) / sqrt_bc2 + eps)
 * with n = m (AdamW) or n = num_mom * m + num_grad * g (nadamw: timm's
 * NAdamW, timm/optim/nadamw.py @aa4b5850, num_mom = beta1, num_grad =
 * 1 - beta1; optax's NAdam, see muonref_adam_variant; m the new first
 * moment).  decay is 1 - lr * weight_decay, or 1 - lr * adam_weight_decay
 * under adam_decay_own. */
typedef struct muonref_adamw_plan {
  long step;
  double lr;              /* lr * adam_lr_ratio */
  double beta1, one_minus_beta1, beta2, one_minus_beta2;
  double bias_correction1;   /* 1 - beta1^t */
  double bias_correction2;   /* 1 - beta2^t */
  double sqrt_bc2;           /* sqrt(bias_correction2) */
  double step_size;          /* lr / bias_correction1 */
  double eps;                /* adam_eps; adam_eps / sqrt_bc2 when UNCORRECTED */
  double l2;                 /* adam_l2: the decay's wd, added as G <- R32(G + l2 P) before the moments
                                (muonref_l2_grad; apply_decay is then 0); 0: the gradient as given */
  double eps_root_bc2;       /* adam_eps_root * bias_correction2 (binary64): the denominator is
                                sqrt(v' + eps_root_bc2) / sqrt_bc2 + eps, which is optax's
                                sqrt(v_hat + eps_root) + eps; 0 (every profile's default) adds nothing */
  int apply_decay;
  double decay;              /* 1 - lr * weight_decay (adam_decay_own: adam_weight_decay; adam_decay_muon_lr:
                                the Muon lr, not lr * adam_lr_ratio) */
  int nadamw;                /* 1: the numerator is num_mom m + num_grad g (adam_variant) */
  int cautious;              /* as muonref_muon_plan's, with the AdamW quotient n / denom for O */
  double num_mom, num_grad;  /* NADAMW (timm): beta1, 1 - beta1, with step_size lr / bc1;
                                OPTAX_FOLLOW_NESTEROV with nesterov: beta1 / (1 - beta1^(t+1)),
                                (1 - beta1) / (1 - beta1^t), with step_size lr */
} muonref_adamw_plan;

/* The second moment of the Newton-Schulz output of one Muon step (spec/muon.md
 * 7.4), for each (rows, cols) matrix O of the batch, t the Muon step count
 * after this step:
 *   m   = the mean of O^2 over each row (ROWS; LONGER with rows >= cols), each
 *         column (LONGER with rows < cols), or O^2 itself (ELEMENT)
 *   v'  = keep v + take m
 *   w   = v' / bias_correction2                (bias_correction2 = 1 without
 *                                               moment2_bias_correction)
 *   d   = sqrt(w) + eps (ADD) or sqrt(max(w, eps)) (CLAMP); N = O / d (0 where d = 0)
 *   NORM: N <- N ||O||_F / max(||N||_F, eps), per matrix
 *   UNIT: N <- N / (||N||_F + eps), over the whole parameter
 * keep = beta2 and take = 1 - beta2 in binary64 (dion's `torch.lerp(V, m,
 * 1 - muon_beta2)`, timm's `mul_(beta2).addcmul_(O, O, value=1 - beta2)`;
 * ports round these in binary32, within the element-wise allowance). */
typedef struct muonref_moment2_plan {
  muonref_moment2 kind;      /* NONE: no second moment (nothing below applies) */
  double keep, take;
  double bias_correction2;   /* 1 - beta2^t, or 1 */
  double eps;
  int clamp;                 /* moment2_eps_mode CLAMP */
  muonref_moment2_rescale rescale;
  int ratio_nan;             /* the fault normuon_zero_ratio_nan: NORM divides by the bare ||N||_F */
} muonref_moment2_plan;

/* Whether the decay applies to an element whose parameter has sign sp and
 * whose update (the direction subtracted) has sign su (each -1, 0 or 1),
 * under a plan's `cautious` (spec/muon.md 4.1): always (0), where sp su >= 0
 * (1: cautious_wd; dion `sign(X U) + 1` clipped at 1, modded-nanogpt and
 * nanochat `(g * p) >= 0`), or where sp su > 0 (2: the fault). */
static inline int muonref_cautious_decays(int cautious, int sp, int su)
{
  return cautious == 0 || (cautious == 1 ? sp * su >= 0 : sp * su > 0);
}

/* cautious_update (options.h, spec/muon.md 8): whether the Newton-Schulz
 * output element of sign so is kept where the tensor C of the mask has
 * sign sc (each -1, 0 or 1): only where O_j C_j > 0 (kozistr/
 * pytorch_optimizer apply_cautious `update * grad > 0`). */
static inline int muonref_cautious_keeps(int so, int sc) { return so * sc > 0; }

/* cautious_update: the factor the kept elements are multiplied by, n / (k
 * + 1) for k kept of n (apply_cautious `mask.numel() / (mask.sum() + 1)`:
 * a Python int over a float32 sum, so in float32 in the port). */
static inline double muonref_cautious_factor(size_t n, size_t kept) { return (double)n / ((double)kept + 1.0); }

/* Whether p.grad holds the Nesterov input U after a Muon parameter's step
 * (spec/muon.md 8.1): grad_after_step NESTEROV_INPUT with Nesterov on
 * (`nesterov`: the options' or the plan's, which a fault may turn off).
 * What gradAfter publishes there, and what the cautious mask reads. */
static inline int muonref_grad_holds_nesterov_input(const muonref_options *o, int nesterov)
{
  return nesterov && o->grad_after_step == MUONREF_GRAD_AFTER_NESTEROV_INPUT;
}

/* Whether a step writes L2's gradient G' = R32(G + wd P) into p.grad of a
 * parameter of the branch use_muon (spec/muon.md 8.1), where its L2
 * coefficient (muonref_l2_coeff) is nonzero: a Muon parameter unless
 * grad_after_step is KEEP (Emerging-Optimizers, kozistr/pytorch_optimizer:
 * `grad.add_(p, alpha=wd)`), an AdamW one under adam_l2_grad (kozistr's
 * weight_decouple False in the AdamW branch; torch.optim.Adam adds out of
 * place). */
static inline int muonref_l2_in_grad(const muonref_options *o, int use_muon)
{
  return use_muon ? o->grad_after_step != MUONREF_GRAD_AFTER_KEEP : o->adam_l2_grad != 0;
}

/* The sign of x: -1, 0 or 1. */
static inline int muonref_sign(double x) { return (x > 0) - (x < 0); }

/* Fills *p for the Muon step numbered t (>= 1) under *o. */
void muonref_moment2_plan_make(const muonref_options *o, long t, muonref_moment2_plan *p);

/* The second-moment entry that entry (i, j) of a (rows, cols) matrix of the
 * batch reads, counted within that matrix's block (p->kind not NONE). */
size_t muonref_moment2_index(const muonref_moment2_plan *p, size_t rows, size_t cols, size_t i, size_t j);

/* Whether rescale r scales the whole parameter to a norm after the
 * division (UNIT, and RMS, which is UNIT times muonref_moment2_rms_factor),
 * rather than each matrix (NORM) or nothing (NONE). */
static inline int muonref_moment2_rescale_whole(muonref_moment2_rescale r)
{
  return r == MUONREF_MOMENT2_RESCALE_UNIT || r == MUONREF_MOMENT2_RESCALE_RMS;
}

/* The factor of moment2_rescale RMS for a parameter of numel elements:
 * 0.2 sqrt(numel) as binary64 computes it (AdaMuon's RMS alignment, arXiv
 * 2507.11005 eq. 8; kozistr/pytorch_optimizer muon.py @7a076d2f:601
 * `0.2 * math.sqrt(p.numel())`), the value the reference takes exactly. */
double muonref_moment2_rms_factor(size_t numel);

/* Whether the element-wise second moment of a parameter routed as r is
 * stored in another order than its matrices are computed in: moment2
 * element on a batch of matrices interleaved in the parameter (conv_mode
 * spatial, route.h `interleaved`).  v is kept in the parameter's order
 * (timm's exp_avg_sq = zeros_like(p), muonref_moment2_shape), so both paths
 * read it through muonref_route_matrix_index and write v' back likewise. */
int muonref_moment2_interleaved(const muonref_options *o, const muonref_route *r);

/* The shape factor of scale_mode for a (rows, cols) matrix (rows, cols >= 1):
 * fan_in sqrt(max(1, rows/cols)), fan_out sqrt(max(1, cols/rows)), none 1,
 * rms_adamw 0.2 sqrt(max(rows, cols)) (torch.optim.Muon "match_rms_adamw"),
 * rms_to_rms sqrt(rows/cols) (timm's "rms_to_rms");
 * the ratio and the root in binary64, as in the NeMo seed's update_scale. */
double muonref_scale_factor(muonref_scale_mode mode, size_t rows, size_t cols);

/* The options Newton-Schulz runs the (rows, cols) matrix given to it with
 * (before its transpose): o itself, or under eps_mode ADD_SCALED a copy in
 * *buf with ns_eps = ns_eps * (cols / rows) ** 0.5 (binary64, Python's
 * pow) and eps_mode ADD (timm's scale_eps_for_ns).  Every Newton-Schulz
 * entry point (fast/ns.c, ref/ns_exact.c, ref/ns_rounded.c) reads its
 * eps through this. */
const muonref_options *muonref_ns_options_for(const muonref_options *o, size_t rows, size_t cols,
                                              muonref_options *buf);

/* Fills *p for a Muon parameter routed as *r under options *o; for a
 * momentum_only route (route_rule MOMENTUM_1D) scale 1 and alpha = lr, with
 * no bf16 products (update_scale 0). */
void muonref_muon_plan_make(const muonref_options *o, const muonref_route *r,
                            muonref_muon_plan *p);

/* Applies o's momentum_bias_correction to *p (made by muonref_muon_plan_make
 * from the same o) for the Muon step numbered t (>= 1, the step count after
 * this step); nothing when the field is 0.  With the EMA form
 * (mom_grad = 1 - beta), optax's mu_hat (google-deepmind/optax
 * optax/contrib/_muon.py @2edbcbe2 scale_by_muon.update_fn):
 *   nesterov:  U = beta / (1 - beta^(t+1)) M' + mom_grad / (1 - beta^t) G
 *   otherwise: U = 1 / (1 - beta^t) M'     (nesterov set, in_grad 0)
 * the factors in binary64 (optax divides in float32: within the
 * element-wise allowance of spec/vectors.md 5.1). */
void muonref_muon_plan_correct(const muonref_options *o, long t, muonref_muon_plan *p);
/* A step in which the parameter routed as *r has no gradient (skipped):
 * under adam_step_global (keras: one `iterations` count for the optimizer)
 * its state still counts the step: a fresh state becomes an initialized one
 * with zero buffers (those present) and step 1, else step + 1; nothing else
 * changes.  Without adam_step_global nothing changes. */
void muonref_state_missing_grad(const muonref_options *o, const muonref_route *r, muonref_param_state *s);

/* 1 - beta^t in binary64; under adam_bias_fp32 (keras) 1 - fl32(fl32(beta)^t),
 * the power of the float32 beta rounded to float32 (t >= 1). */
double muonref_adam_bias_correction(const muonref_options *o, double beta, long t);

/* Fills *p for the AdamW step numbered t (>= 1) under options *o. */
void muonref_adamw_plan_make(const muonref_options *o, long t, muonref_adamw_plan *p);

/* The coefficient wd of P that a parameter's gradient takes before its
 * step, G <- R32(G + wd P) (the plans' l2): on a Muon parameter (use_muon
 * != 0) weight_decay under decay_method L2, on an AdamW one the branch's
 * decay (adam_weight_decay under adam_decay_own, else weight_decay) under
 * adam_l2; 0 otherwise (the gradient as given). */
double muonref_l2_coeff(const muonref_options *o, int use_muon);

#ifdef __cplusplus
}
#endif
#endif
