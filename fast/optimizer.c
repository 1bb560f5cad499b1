/* muonref: the fast optimizer (see optimizer.h).  The scalar schedule comes
 * from core/plan.c; the float32 tensor arithmetic is in fused passes
 * (fast/step_kernels.c): element-wise updates are evaluated in binary64
 * from the float32 inputs and rounded once to float32, so that each stored
 * value is within one rounding of the exact step defined in spec/muon.md.
 *
 * A step reads each gradient, state buffer and parameter as few times as
 * its two phases allow: phase 1 computes (Muon: one pass from G and M
 * into the Newton-Schulz iterate and the new momentum, which also checks G
 * and the momentum's range and sums the norm; Newton-Schulz; one pass from
 * the iterate and the parameter into the pending new parameter, which also
 * checks it; AdamW: one checking pass), phase 2 stores (Muon: a copy of
 * the new parameter and a swap of the momentum buffers; AdamW: one pass).  The passes only say
 * whether something is wrong; the checks of spec/muon.md section 3 then
 * run in their order (input_checks) to say what, so that a refused step
 * reports the same error as when each check was a pass of its own. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "faults.h"
#include "muonref/bf16.h"
#include "muonref/ns.h"
#include "muonref/optimizer.h"
#include "core/ema.h"
#include "core/plan.h"
#include "ns_internal.h"
#include "optimizer_internal.h"
#include "step_kernels.h"
#include "core/fail.h"

typedef struct param {
  const muonref_options *options; /* the group's options (in opt->groups) */
  size_t group;
  muonref_shape shape;
  muonref_route route;
  muonref_param_state state;      /* buffers allocated at creation */
  float *momentum_next;           /* Muon: the new momentum of the step being computed (numel floats);
                                     phase 2 swaps it with state.momentum_buffer */
  size_t pending_off;             /* Muon: where its new parameter values wait in opt->pending */
  size_t pending2_off;            /* Muon with a second moment: where its new v waits in opt->pending2 */
} param;

struct muonref_optimizer {
  size_t n_groups, n_params;
  muonref_options *groups;
  param *params;
  float *ns_work;   /* Newton-Schulz workspace, sized for the largest matrix; its iterate is
                       loaded by the step's input pass (muonref_stk_muon_input) */
  size_t ns_work_floats;
  float *blocks;    /* 5 n floats, n the largest Muon parameter with row blocks (route.split): a block's
                       values, gradient, momentum, next momentum and pending values (muon_compute_blocks) */
  float *update;    /* 2 n floats, n the largest Muon parameter of muon_unfused: its Newton-Schulz
                       input and output in matrix order; NULL when no parameter needs it */
  float *pending;   /* every Muon parameter's new values of the step being computed (under the fault
                       megatron_clip_update, its update until clip_update_fault): a step is
                       computed and checked whole before anything is written */
  float *pending2;  /* every Muon parameter's new second moment (moment2) of the step; NULL when none has one */
  double *m2d;      /* the second moment's denominators d of one parameter (its moment2_numel) */
  float *m2perm;    /* 2 * moment2_numel floats: an element-wise v of interleaved matrices in matrix order */
  float *clipped;   /* grads_transformed (the loss scale, clipping) or maximize: every parameter's gradient
                       of the step as the step uses it, at clip_off[i] (numel floats each); NULL without */
  double *sumsq;    /* with clipped: the binary64 sum of squares of each present gradient's copy (n_params) */
  float *l2g;       /* decay_method L2, adam_l2 (options.h): every such parameter's gradient with
                       wd P added, at clip_off[i]; NULL when no group needs it */
  size_t *clip_off;
  const float **gptr; /* the gradient each parameter steps with (its own, clipped, or with L2) */
  float *zeros;     /* the zero gradient of missing_grad ZEROS (and of the
                       fault missing_grad_as_zeros); NULL when no group needs it */
#ifdef MUONREF_TEST_HOOKS
  int fault;        /* MUONREF_FAULT_NONE, or a deliberate fault (faults.h) */
#endif
};

/* The coefficient of P that parameter p's gradient takes before its step
 * (l2_prepare; core/plan.h muonref_l2_coeff). */
static double l2_coeff(const param *p) { return muonref_l2_coeff(p->options, p->route.use_muon); }

static int uses_l2(const param *p) { return l2_coeff(p) != 0.0; }

/* Whether options o transform the gradients before the step: clipping, the loss scale or their
 * accumulation (spec/muon.md 3.1, 3.2, 3.3). */
static int grads_transformed(const muonref_options *o)
{
  return o->clip_grad_norm > 0.0 || o->clip_grad_norm_each > 0.0 || o->clip_grad_value > 0.0 || o->loss_scale > 0.0 ||
         o->grad_accumulation > 0;
}

/* Clipping and the loss scale are the optimizer's: group g must carry group 0's values (MUONREF_EOPTION naming the first that
 * differs). */
static int same_clip(const muonref_options *o, const muonref_options *o0, size_t g, muonref_error *err)
{
  static const struct { const char *name; size_t off; } F[] = {
    {"clip_grad_norm", offsetof(muonref_options, clip_grad_norm)},
    {"clip_grad_norm_each", offsetof(muonref_options, clip_grad_norm_each)},
    {"clip_grad_value", offsetof(muonref_options, clip_grad_value)},
    {"loss_scale", offsetof(muonref_options, loss_scale)},
  };
  for (size_t k = 0; k < sizeof F / sizeof F[0]; k++) {
    double a, b;
    memcpy(&a, (const char *)o + F[k].off, sizeof a), memcpy(&b, (const char *)o0 + F[k].off, sizeof b);
    if (a != b)
      return muonref_fail(err, MUONREF_EOPTION, "%s is one value for the optimizer: group %zu has %g, group 0 %g",
                          F[k].name, g, a, b);
  }
  if (o->clip_grad_form != o0->clip_grad_form)
    return muonref_fail(err, MUONREF_EOPTION, "clip_grad_form is one value for the optimizer: group %zu has %s, "
                        "group 0 %s", g, muonref_clip_form_name(o->clip_grad_form),
                        muonref_clip_form_name(o0->clip_grad_form));
  if (o->grad_accumulation != o0->grad_accumulation)
    return muonref_fail(err, MUONREF_EOPTION, "grad_accumulation is one value for the optimizer: group %zu has %d, "
                        "group 0 %d", g, o->grad_accumulation, o0->grad_accumulation);
  if (o->use_ema != o0->use_ema || (o->use_ema && (o->ema_momentum != o0->ema_momentum ||
                                                   o->ema_overwrite != o0->ema_overwrite)))
    return muonref_fail(err, MUONREF_EOPTION, "use_ema, ema_momentum and ema_overwrite are one value for the "
                        "optimizer: group %zu differs from group 0", g);
  return MUONREF_OK;
}

/* The test-control seam (faults.h): without MUONREF_TEST_HOOKS, as in the
 * installed library, FAULT_IS is 0. */
#define FAULT_IS(opt, name) MUONREF_HOOK_OR((opt)->fault == MUONREF_FAULT_##name, 0)

/* The gradient parameter p steps with when it has none: zeros under
 * missing_grad ZEROS (Keller), else NULL (the parameter is skipped). */
static const float *missing_grad(const muonref_optimizer *opt, const struct param *p)
{
  int zeros = p->options->missing_grad == MUONREF_MISSING_GRAD_ZEROS || FAULT_IS(opt, MISSING_GRAD_AS_ZEROS);
  return zeros ? opt->zeros : NULL;
}

static void free_params(muonref_optimizer *opt)
{
  for (size_t i = 0; opt->params && i < opt->n_params; i++) {
    free(opt->params[i].state.momentum_buffer);
    free(opt->params[i].momentum_next);
    free(opt->params[i].state.exp_avg);
    free(opt->params[i].state.exp_avg_sq);
    free(opt->params[i].state.moment2);
    free(opt->params[i].state.grad_accum);
    free(opt->params[i].state.ema_average);
  }
  free(opt->params);
}

void muonref_optimizer_free(muonref_optimizer *opt)
{
  if (!opt)
    return;
  free_params(opt);
  free(opt->groups);
  free(opt->ns_work);
  free(opt->pending);
  free(opt->pending2);
  free(opt->m2d);
  free(opt->m2perm);
  free(opt->update);
  free(opt->blocks);
  free(opt->zeros);
  free(opt->clipped);
  free(opt->sumsq);
  free(opt->l2g);
  free(opt->clip_off);
  free(opt->gptr);
  free(opt);
}

/* n floats, zeroed by writing them (NULL when out of memory, or n == 0):
 * every buffer of the optimizer is written once at creation, so that no
 * step, the first included, takes the page faults of memory that calloc or
 * malloc left untouched (no allocation inside a step, the kernel's
 * included).  The empty asm keeps GCC from folding malloc and memset into
 * calloc, which leaves the pages of a large block untouched: it did (GCC 12
 * -O2), and the first two steps of the 12-layer bench set took the page
 * faults of the pending values and both momentum buffers, about 5 % of a
 * step in `perf` (clear_page_erms under muonref_stk_muon_input). */
static float *alloc_zeroed(size_t n)
{
  float *b = n ? malloc(n * sizeof(float)) : NULL;
  if (b) {
    __asm__ volatile("" : : "r"(b) : "memory");
    memset(b, 0, n * sizeof(float));
  }
  return b;
}

/* Allocates the branch's state buffers of p (zeroed, uninitialized state). */
static int alloc_state(param *p)
{
  size_t n = p->route.numel;
  p->state.numel = n;
  p->state.use_muon = p->route.use_muon;
  if (p->options->grad_accumulation > 0 && !(p->state.grad_accum = alloc_zeroed(n + !n)))
    return 0;
  if (p->options->use_ema && !(p->state.ema_average = alloc_zeroed(n + !n)))
    return 0;
  if (p->route.use_muon) {
    size_t m2 = muonref_moment2_numel(p->options, &p->route);
    p->state.moment2_numel = m2;
    if (m2 && !(p->state.moment2 = alloc_zeroed(m2)))
      return 0;
    p->momentum_next = alloc_zeroed(n + !n);
    return (p->state.momentum_buffer = alloc_zeroed(n + !n)) != NULL && p->momentum_next;
  }
  p->state.exp_avg = alloc_zeroed(n + !n);
  p->state.exp_avg_sq = alloc_zeroed(n + !n);
  return p->state.exp_avg && p->state.exp_avg_sq;
}

/* Whether Muon parameter p steps outside the fused passes (muon_compute_unfused):
 * its matrices interleave in the parameter (conv_mode SPATIAL), its update is
 * scaled by <U, O> (nuclear_scale), which needs U after the Newton-Schulz, or it
 * has no Newton-Schulz at all (momentum_only: route_rule MOMENTUM_1D). */
static int muon_unfused(const param *p)
{
  return p->route.interleaved || p->route.momentum_only || p->route.split || p->options->nuclear_scale ||
         p->options->cautious_update;
}

/* cautious_update (options.h, spec/muon.md 8) on the Newton-Schulz output X
 * of parameter p (its matrices in matrix order, n elements): X_j kept where
 * X_j C_j > 0, C the Nesterov input U (matrix order) under Nesterov with
 * grad_after_step NESTEROV_INPUT, else the gradient g the momentum read
 * (the parameter's order); kept elements times the float32 factor
 * fl32(n / (k + 1)), each product rounded to float32 and, in the bf16
 * format, then to bf16 (the port's `update.mul_(mask)`: a bf16 tensor times
 * a float32 one), the rest 0.  Faults: PYTORCH_OPTIMIZER_CAUTIOUS_BUFFER
 * reads C from the new momentum p->momentum_next, _UNSCALED keeps the
 * factor 1. */
static void cautious_mask(const muonref_optimizer *opt, const param *p, float *X, const float *U, const float *g,
                          const muonref_stk_muon *k)
{
  size_t n = p->route.numel, kept = 0;
  int from_u = muonref_grad_holds_nesterov_input(p->options, k->nesterov);
  int bf16 = p->options->ns_format == MUONREF_NS_BF16;
  (void)opt; /* read by the fault hooks only */
  if (FAULT_IS(opt, PYTORCH_OPTIMIZER_CAUTIOUS_BUFFER))
    from_u = 0, g = p->momentum_next;
  for (size_t j = 0; j < n; j++) {
    size_t x = muonref_route_matrix_index(&p->route, j);
    int so = muonref_sign(X[x]), sc = muonref_sign(from_u ? U[x] : g[j]);
    int keep = FAULT_IS(opt, CAUTIOUS_MASK_NONSTRICT) ? so * sc >= 0 : muonref_cautious_keeps(so, sc);
    kept += keep;
    if (!keep)
      X[x] = 0.0f;
  }
  float f = FAULT_IS(opt, PYTORCH_OPTIMIZER_CAUTIOUS_UNSCALED) ? 1.0f : (float)muonref_cautious_factor(n, kept);
  if (FAULT_IS(opt, CAUTIOUS_MEAN_RESCALE)) /* binary32 as torch: mean = fl32(kept / n), clamped, then 1 / mean */
    f = 1.0f / fmaxf((float)kept / (float)n, 1e-3f);
  for (size_t j = 0; j < n; j++) {
    float v = (float)((double)X[j] * (double)f);
    X[j] = bf16 ? (float)muonref_bf16_round_double(v) : v;
  }
}

/* Routes and allocates every parameter; sizes the shared workspaces. */
static int build_params(muonref_optimizer *opt, const muonref_group *groups, const char *const *names,
                        muonref_error *err)
{
  size_t k = 0, max_ws = 0, pending = 0, pending2 = 0, max_m2 = 0, max_unfused = 0, max_split = 0;
  unsigned flags = MUONREF_HOOK_OR(muonref_fault_ns_flags(opt->fault), 0);
  for (size_t g = 0; g < opt->n_groups; g++)
    for (size_t j = 0; j < groups[g].n_params; j++, k++) {
      param *p = &opt->params[k];
      p->options = &opt->groups[g];
      p->group = g;
      p->shape = groups[g].shapes[j];
      const char *name = names ? names[k] : NULL;
      int st = muonref_route_param_named(p->options, &p->shape, name, &p->route, err);
      if (st)
        return st;
      MUONREF_HOOK(muonref_fault_route(opt->fault, p->options, &p->shape, &p->route));
      MUONREF_HOOK(muonref_fault_route_named(opt->fault, p->options, &p->shape, names ? names[k] : NULL, &p->route));
      if (!alloc_state(p))
        return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state of parameter %zu", k);
      if (p->route.use_muon) {
        size_t ws = p->route.momentum_only ? 0 : muonref_ns_workspace_floats_flags(p->route.rows, p->route.cols, flags);
        max_ws = ws > max_ws ? ws : max_ws;
        for (size_t b = 0; b < p->route.split; b++) { /* row blocks: each its own matrix */
          muonref_route sub;
          muonref_route_block(p->options, &p->route, b, &sub);
          ws = muonref_ns_workspace_floats_flags(sub.rows, sub.cols, flags);
          max_ws = ws > max_ws ? ws : max_ws;
        }
        p->pending_off = pending;
        pending += p->route.numel;
        p->pending2_off = pending2;
        pending2 += p->state.moment2_numel;
        max_m2 = p->state.moment2_numel > max_m2 ? p->state.moment2_numel : max_m2;
        if (muon_unfused(p) && p->route.numel > max_unfused)
          max_unfused = p->route.numel;
        if (p->route.split && p->route.numel > max_split)
          max_split = p->route.numel;
      }
    }
  size_t max_numel = 0;
  int zeros = FAULT_IS(opt, MISSING_GRAD_AS_ZEROS);
  for (size_t i = 0; i < opt->n_params; i++) {
    max_numel = opt->params[i].route.numel > max_numel ? opt->params[i].route.numel : max_numel;
    zeros |= opt->params[i].options->missing_grad == MUONREF_MISSING_GRAD_ZEROS;
  }
  if (zeros && !(opt->zeros = calloc(max_numel + 1, sizeof(float))))
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the optimizer");
  if (!(opt->gptr = calloc(opt->n_params + 1, sizeof *opt->gptr)))
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the optimizer");
  int clip = opt->n_groups && grads_transformed(&opt->groups[0]), l2 = 0;
  for (size_t i = 0; i < opt->n_params; i++) {
    l2 |= uses_l2(&opt->params[i]);
    clip |= opt->params[i].options->maximize; /* the negated gradient takes the clipped one's place */
  }
  if (clip || l2) {
    size_t total = 0;
    if (!(opt->clip_off = calloc(opt->n_params + 1, sizeof *opt->clip_off)))
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the optimizer");
    for (size_t i = 0; i < opt->n_params; i++)
      opt->clip_off[i] = total, total += opt->params[i].route.numel;
    if (clip && !(opt->clipped = malloc((total + 1) * sizeof(float))))
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the clipped gradients");
    if (clip && !(opt->sumsq = calloc(opt->n_params + 1, sizeof(double))))
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the clipped gradients");
    if (l2 && !(opt->l2g = malloc((total + 1) * sizeof(float))))
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the L2 gradients");
  }
  opt->ns_work_floats = max_ws;
  opt->ns_work = alloc_zeroed(max_ws);
  opt->pending = alloc_zeroed(pending);
  opt->pending2 = alloc_zeroed(pending2);
  opt->m2d = max_m2 ? malloc(max_m2 * sizeof(double)) : NULL;
  opt->m2perm = max_m2 ? malloc(2 * max_m2 * sizeof(float)) : NULL;
  if ((pending2 && !opt->pending2) || (max_m2 && (!opt->m2d || !opt->m2perm)))
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the second moments");
  opt->update = max_unfused ? alloc_zeroed(2 * max_unfused) : NULL;
  opt->blocks = max_split ? alloc_zeroed(5 * max_split) : NULL;
  if ((max_ws && !opt->ns_work) || (pending && !opt->pending) || (max_unfused && !opt->update) ||
      (max_split && !opt->blocks))
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the Newton-Schulz workspace");
  return MUONREF_OK;
}

/* The arguments of muonref_optimizer_create: groups NULL only when there
 * are none, every group's shapes NULL only when it has no parameter, and
 * the parameter counts summing below SIZE_MAX (a sum that wraps would size
 * the parameter table too small). */
static int check_groups(const muonref_group *groups, size_t n_groups, muonref_error *err)
{
  if (!groups && n_groups)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_create: groups is NULL and n_groups is %zu", n_groups);
  if (n_groups > SIZE_MAX / sizeof(muonref_options))
    return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_create: n_groups %zu is more than memory can hold",
                        n_groups);
  size_t total = 0;
  for (size_t g = 0; g < n_groups; g++) {
    if (groups[g].n_params && !groups[g].shapes)
      return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_create: groups[%zu].shapes is NULL and its n_params "
                          "is %zu", g, groups[g].n_params);
    if (groups[g].n_params > (SIZE_MAX - 1) / sizeof(struct param) - total)
      return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_create: groups[%zu].n_params %zu brings the "
                          "parameter count past what memory can hold", g, groups[g].n_params);
    total += groups[g].n_params;
  }
  return MUONREF_OK;
}

/* muonref_optimizer_create; fault is used only with MUONREF_TEST_HOOKS. */
static muonref_optimizer *create(const muonref_group *groups, size_t n_groups, const char *const *names, int fault,
                                 muonref_error *err)
{
  if (check_groups(groups, n_groups, err))
    return NULL;
  muonref_optimizer *opt = calloc(1, sizeof *opt);
  if (!opt) {
    muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the optimizer");
    return NULL;
  }
#ifdef MUONREF_TEST_HOOKS
  opt->fault = fault;
#else
  (void)fault;
#endif
  opt->n_groups = n_groups;
  for (size_t g = 0; g < n_groups; g++)
    opt->n_params += groups[g].n_params;
  opt->groups = calloc(n_groups ? n_groups : 1, sizeof *opt->groups);
  opt->params = calloc(opt->n_params ? opt->n_params : 1, sizeof *opt->params);
  int st = (!opt->groups || !opt->params) ? muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the optimizer")
                                          : MUONREF_OK;
  for (size_t g = 0; !st && g < n_groups; g++) {
    opt->groups[g] = groups[g].options;
    st = muonref_options_validate(&groups[g].options, err);
    if (!st)
      st = same_clip(&groups[g].options, &groups[0].options, g, err);
    if (!st && groups[g].options.ns_format == MUONREF_NS_EXACT)
      st = muonref_fail(err, MUONREF_EOPTION, "ns_format 'exact' is not available on the fast path");
  }
  if (!st)
    st = build_params(opt, groups, names, err);
  if (st) {
    muonref_optimizer_free(opt);
    return NULL;
  }
  return opt;
}

muonref_optimizer *muonref_optimizer_create(const muonref_group *groups, size_t n_groups, muonref_error *err)
{
  return create(groups, n_groups, NULL, 0, err);
}

muonref_optimizer *muonref_optimizer_create_named(const muonref_group *groups, size_t n_groups,
                                                  const char *const *names, muonref_error *err)
{
  return create(groups, n_groups, names, 0, err);
}

#ifdef MUONREF_TEST_HOOKS
muonref_optimizer *muonref_optimizer_create_fault(const muonref_group *groups, size_t n_groups, int fault,
                                                  muonref_error *err)
{
  return create(groups, n_groups, NULL, fault, err);
}

muonref_optimizer *muonref_optimizer_create_named_fault(const muonref_group *groups, size_t n_groups,
                                                        const char *const *names, int fault, muonref_error *err)
{
  return create(groups, n_groups, names, fault, err);
}
#endif

/* The scalar schedules of parameter p (core/plan.c), the one place the
 * plan hooks act: the range check and both phases of the step use these. */
static void muon_plan(const muonref_optimizer *opt, const param *p, long t, muonref_muon_plan *pl)
{
  (void)opt;
  muonref_muon_plan_make(p->options, &p->route, pl);
  muonref_muon_plan_correct(p->options, t, pl); /* t: the step count after this step */
  MUONREF_HOOK(muonref_fault_muon_plan(opt->fault, p->group, p->options, &p->shape, pl));
}

static void adamw_plan(const muonref_optimizer *opt, const param *p, long t, muonref_adamw_plan *pl)
{
  (void)opt;
  muonref_adamw_plan_make(p->options, t, pl);
  MUONREF_HOOK(muonref_fault_adamw_plan(opt->fault, p->group, p->options, pl));
}

size_t muonref_optimizer_param_count(const muonref_optimizer *opt) { return opt ? opt->n_params : 0; }

const muonref_route *muonref_optimizer_route(const muonref_optimizer *opt, size_t i)
{
  return opt && i < opt->n_params ? &opt->params[i].route : NULL;
}

size_t muonref_optimizer_workspace_floats(const muonref_optimizer *opt) { return opt ? opt->ns_work_floats : 0; }

size_t muonref_optimizer_group_count(const muonref_optimizer *opt) { return opt ? opt->n_groups : 0; }

const muonref_options *muonref_optimizer_group_options(const muonref_optimizer *opt, size_t g)
{
  return opt && g < opt->n_groups ? &opt->groups[g] : NULL;
}

int muonref_optimizer_param_info(const muonref_optimizer *opt, size_t i, size_t *group, muonref_shape *shape)
{
  if (!opt || i >= opt->n_params)
    return MUONREF_EOPTION;
  if (group)
    *group = opt->params[i].group;
  if (shape)
    *shape = opt->params[i].shape;
  return MUONREF_OK;
}

/* The scalars of the fused passes from the plans (core/plan.c). */
static void muon_scalars(const muonref_muon_plan *pl, muonref_stk_muon *k)
{
  *k = (muonref_stk_muon){pl->mom_keep, pl->mom_grad, pl->in_grad, pl->in_mom, pl->nesterov, 0,
                          {(double)(float)pl->update_factor, (double)(float)pl->update_factor2}, /* Keller's s, dion's lr s */
                          pl->apply_decay ? pl->decay : 1.0, pl->alpha, pl->cautious};
  if (pl->update_scale) /* Keller: the bf16 update scaled in place; Paddle: `* extra_scale_factor`, a second product */
    k->n_factors = pl->update_factor2 != 1.0 ? 2 : 1;
}

static void adamw_scalars(const muonref_adamw_plan *pl, muonref_stk_adamw *k)
{
  *k = (muonref_stk_adamw){pl->beta1, pl->one_minus_beta1, pl->beta2, pl->one_minus_beta2, pl->sqrt_bc2, pl->eps,
                           pl->step_size, pl->apply_decay ? pl->decay : 1.0, pl->nadamw, pl->num_mom, pl->num_grad,
                           pl->cautious, pl->eps_root_bc2};
}

/* The range check of spec/muon.md section 3 on parameter i (gradient g):
 * whether the momentum and its Nesterov input (Muon) or the second moment
 * (AdamW) stay inside binary32.  A step that would overflow is refused
 * before anything is written (MUONREF_ENUMERIC), instead of storing Inf or
 * NaN.  The Newton-Schulz output and the parameters are checked where they
 * are computed (muon_compute, adamw_compute). */
static int range_check(const muonref_optimizer *opt, size_t i, const float *g, muonref_error *err)
{
  const param *p = &opt->params[i];
  size_t n = p->route.numel, j;
  if (p->route.use_muon) {
    muonref_muon_plan pl;
    muonref_stk_muon k;
    muon_plan(opt, p, p->state.step + 1, &pl);
    muon_scalars(&pl, &k);
    if ((j = muonref_stk_muon_range_first(g, p->state.momentum_buffer, n, &k)) < n)
      return muonref_fail(err, MUONREF_ENUMERIC,
                          "Step for parameter %zu would overflow binary32: the momentum at element %zu exceeds %g", i, j,
                          (double)FLT_MAX);
  } else {
    muonref_adamw_plan pl;
    muonref_stk_adamw k;
    adamw_plan(opt, p, p->state.step + 1, &pl);
    adamw_scalars(&pl, &k);
    if ((j = muonref_stk_adamw_range_first(p->state.exp_avg_sq, g, n, &k)) < n)
      return muonref_fail(err, MUONREF_ENUMERIC,
                          "Step for parameter %zu would overflow binary32: the second moment at element %zu exceeds %g",
                          i, j, (double)FLT_MAX);
  }
  return MUONREF_OK;
}

/* The checks of the step's inputs, in the order of spec/muon.md section 3:
 * every gradient (muonref_grad_check; the fault nonfinite_accepted lets
 * non-finite ones through) and its parameter array, then the range of
 * every parameter's buffers (after clip_prepare: on the gradients the step
 * uses).  The fused passes report only that something is wrong; this says
 * what, with the first offending parameter and element. */
static int grad_checks(const muonref_optimizer *opt, float *const *params, const muonref_grad *grads,
                       muonref_error *err)
{
  for (size_t i = 0; i < opt->n_params; i++) {
    int st = muonref_grad_check(&grads[i], i, opt->params[i].route.numel, err);
    if (st && !(FAULT_IS(opt, NONFINITE_ACCEPTED) && st == MUONREF_ENONFINITE))
      return st;
    if (!st && grads[i].data && !params[i])
      return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_step: params[%zu] is NULL", i);
  }
  return MUONREF_OK;
}

static int input_checks(const muonref_optimizer *opt, float *const *params, const muonref_grad *grads,
                        muonref_error *err)
{
  int st = grad_checks(opt, params, grads, err);
  for (size_t i = 0; !st && i < opt->n_params; i++)
    /* as before: only a gradient that passed its check (the fault nonfinite_accepted lets others through) */
    if (grads[i].data && !muonref_grad_check(&grads[i], i, opt->params[i].route.numel, NULL))
      st = range_check(opt, i, opt->gptr[i], err);
  return st;
}

/* What phase 1 knows of the step's inputs: they were checked (input_checks
 * ran and passed: every later anomaly is a fault's or a zero gradient's). */
typedef struct step_ctx {
  float *const *params;
  const muonref_grad *grads;
  int checked;
} step_ctx;

/* input_checks once per step, when a pass saw something wrong; returns its
 * status (MUONREF_OK: the step goes on). */
static int check_inputs(const muonref_optimizer *opt, step_ctx *c, muonref_error *err)
{
  if (c->checked)
    return MUONREF_OK;
  c->checked = 1;
  return input_checks(opt, c->params, c->grads, err);
}

static int param_overflow(muonref_error *err, size_t i, size_t j, float nw, float w)
{
  return muonref_fail(err, MUONREF_ENUMERIC,
                      "Step for parameter %zu would overflow binary32: element %zu of the parameter would become %s "
                      "(it is %g)", i, j, isnan(nw) ? "nan" : nw > 0 ? "inf" : "-inf", (double)w);
}

/* What opt->pending holds for a Muon parameter after phase 1: its new
 * values (MUONREF_STK_PARAM), or under the fault megatron_clip_update its
 * update, which clip_update_fault scales before it makes the new values. */
static int pending_kind(const muonref_optimizer *opt)
{
  (void)opt;
  return FAULT_IS(opt, MEGATRON_CLIP_UPDATE) ? MUONREF_STK_UPDATE : MUONREF_STK_PARAM;
}

/* The overflow error of Muon parameter i (values w), whose pending values
 * (pend, pending_kind's) hold a new value that is not finite. */
static int muon_param_error(const muonref_optimizer *opt, size_t i, const float *w, const float *pend,
                            const muonref_stk_muon *k, muonref_error *err)
{
  size_t n = opt->params[i].route.numel, j;
  float nw = 0.0f;
  if (pending_kind(opt) == MUONREF_STK_PARAM) {
    j = muonref_stk_first_nonfinite(pend, n);
    nw = j < n ? pend[j] : 0.0f;
  } else {
    j = muonref_stk_muon_param_first(w, pend, n, k, &nw);
  }
  return j < n ? param_overflow(err, i, j, nw, w[j]) : MUONREF_OK;
}

/* Newton-Schulz of parameter i failed with st (its message in e): a
 * non-finite input of the step is reported first (check_inputs: the input,
 * not its consequence, is what the caller must fix), then an overflow as the
 * parameter's, any other failure as Newton-Schulz reported it. */
static int ns_failed(const muonref_optimizer *opt, step_ctx *c, size_t i, int st, const muonref_error *e,
                     muonref_error *err)
{
  int sti = check_inputs(opt, c, err);
  if (sti)
    return sti;
  if (st == MUONREF_ENUMERIC)
    return muonref_fail(err, st, "Step for parameter %zu would overflow binary32: %s", i, e->message);
  return muonref_fail(err, st, "%s", e->message);
}

/* The second moment of the Newton-Schulz output (spec/muon.md 7.4) of
 * parameter p, routed as a batch of (rows, cols) matrices O (row-major,
 * the parameter's layout, before the update's bf16 products): v' from the
 * stored v into V2 (the parameter's moment2_numel floats, in the order the
 * state keeps them: an element-wise v of interleaved matrices in the
 * parameter's, read and written through opt->m2perm), O replaced by
 * the normalised update; d (the denominators, binary64) in opt->m2d.
 * Element-wise in binary64 from the binary32 O and v, each result rounded
 * once.  Not fused: only parameters with a second moment run it, between
 * their Newton-Schulz and the output pass (muon_compute). */
static void moment2_apply(muonref_optimizer *opt, const param *p, long t, float *O, float *V2)
{
  muonref_moment2_plan m;
  muonref_moment2_plan_make(p->options, t, &m);
  MUONREF_HOOK(muonref_fault_moment2_plan(opt->fault, p->options, &m));
  const muonref_route *r = &p->route;
  size_t rows = r->rows, cols = r->cols, mat = rows * cols, per = p->state.moment2_numel / r->batch;
  if (p->options->moment2_prescale) { /* O <- s O first (the plan's alpha is lr alone): Emerging-Optimizers v0.2.0 */
    muonref_muon_plan pl;
    muonref_muon_plan_make(p->options, r, &pl);
    if (!pl.update_scale)
      for (size_t j = 0; j < r->numel; j++)
        O[j] = (float)(pl.scale * (double)O[j]);
  }
  const float *V = p->state.moment2;
  float *V2p = V2; /* v' in the parameter's order */
  int perm = muonref_moment2_interleaved(p->options, r);
  if (perm) { /* an element-wise v is the parameter's (timm's exp_avg_sq): here in matrix order */
    float *Vm = opt->m2perm;
    for (size_t j = 0; j < r->numel; j++)
      Vm[muonref_route_matrix_index(r, j)] = V[j];
    V = Vm, V2 = opt->m2perm + r->numel;
  }
  double *d = opt->m2d, total = 0.0;
  for (size_t b = 0; b < r->batch; b++) {
    const float *Ob = O + b * mat;
    double *db = d + b * per;
    for (size_t k = 0; k < per; k++)
      db[k] = 0.0;
    for (size_t i = 0; i < rows; i++) /* the sums of squares of each entry's elements */
      for (size_t j = 0; j < cols; j++)
        db[muonref_moment2_index(&m, rows, cols, i, j)] += (double)Ob[i * cols + j] * (double)Ob[i * cols + j];
    double count = m.kind == MUONREF_MOMENT2_ELEMENT ? 1.0 : (double)(mat / per); /* the mean's divisor */
    for (size_t k = 0; k < per; k++) {
      double v = m.keep * (double)V[b * per + k] + m.take * (db[k] / count);
      V2[b * per + k] = (float)v;
      double w = v / m.bias_correction2;
      db[k] = m.clamp ? sqrt(fmax(w, m.eps)) : sqrt(w) + m.eps;
    }
    double norm_o = 0.0, norm_n = 0.0;
    for (size_t i = 0; i < rows; i++)
      for (size_t j = 0; j < cols; j++) {
        double o = Ob[i * cols + j], dk = db[muonref_moment2_index(&m, rows, cols, i, j)];
        double n = dk == 0.0 ? 0.0 : o / dk; /* a zero denominator moves nothing */
        norm_o += o * o, norm_n += n * n;
      }
    total += norm_n;
    if (muonref_moment2_rescale_whole(m.rescale))
      continue;
    double ratio = 1.0; /* NORM: dion `norm_U / norm_U_new.clamp(min=1e-8)` */
    if (m.rescale == MUONREF_MOMENT2_RESCALE_NORM)
      ratio = m.ratio_nan ? sqrt(norm_o) / sqrt(norm_n) : sqrt(norm_o) / fmax(sqrt(norm_n), m.eps);
    float *Ow = O + b * mat;
    for (size_t i = 0; i < rows; i++)
      for (size_t j = 0; j < cols; j++) {
        double dk = db[muonref_moment2_index(&m, rows, cols, i, j)];
        double n = dk == 0.0 ? 0.0 : (double)Ow[i * cols + j] / dk;
        Ow[i * cols + j] = (float)(n * ratio);
      }
  }
  for (size_t j = 0; perm && j < r->numel; j++)
    V2p[j] = V2[muonref_route_matrix_index(r, j)];
  if (!muonref_moment2_rescale_whole(m.rescale))
    return;
  double f = 1.0 / (sqrt(total) + m.eps); /* timm: `update_adaptive / update_adaptive.norm().add_(eps)` */
  if (m.rescale == MUONREF_MOMENT2_RESCALE_RMS) /* times 0.2 sqrt(numel), the binary64 factor */
    f *= muonref_moment2_rms_factor(r->numel);
  for (size_t b = 0; b < r->batch; b++)
    for (size_t i = 0; i < rows; i++)
      for (size_t j = 0; j < cols; j++) {
        double dk = d[b * per + muonref_moment2_index(&m, rows, cols, i, j)];
        float *x = &O[b * mat + i * cols + j];
        *x = (float)((dk == 0.0 ? 0.0 : (double)*x / dk) * f);
      }
}

/* Phase 1 of the Muon branch on parameter i (gradient g): each matrix of
 * the parameter loaded from G and M into the Newton-Schulz iterate
 * (muonref_stk_muon_input), its Newton-Schulz, and its output with the
 * update's bf16 products into the parameter's place in opt->pending, the
 * parameter checked against it (muonref_stk_muon_output).  Writes no
 * state and no parameter.  Errors in the order of the separate checks: the
 * inputs' (check_inputs), then each matrix's Newton-Schulz, then the
 * parameter's first element that would not be finite. */
/* muon_compute for a parameter the fused passes do not cover
 * (muon_unfused): U (its matrices one after the other: conv_mode SPATIAL
 * interleaves them in the parameter) into opt->update and the new momentum
 * into p->momentum_next, each matrix's Newton-Schulz into the second half
 * of opt->update (a momentum_only parameter: U itself), under nuclear_scale O <- <U, O> O with the inner product
 * over the whole parameter in binary64 (optax's adaptive, options.h), then
 * the second moment (moment2_apply, on the matrices in their order), then
 * the bf16 products of k into the parameter's place in opt->pending, in
 * the parameter's order, and from them the new values (pending_kind).  The
 * same checks, in the same order, as the fused path. */
static int muon_compute_unfused(muonref_optimizer *opt, const param *p, size_t i, float *O, const float *w,
                                const float *g, step_ctx *c, const muonref_stk_muon *k, int check, muonref_error *err)
{
  size_t n = p->route.numel, mat = p->route.rows * p->route.cols;
  unsigned flags = MUONREF_HOOK_OR(muonref_fault_ns_flags(opt->fault), 0);
  const float *M = p->state.momentum_buffer;
  float *U = opt->update, *X = opt->update + n, *Mn = p->momentum_next;
  int bad = 0, st;
  for (size_t j = 0; j < n; j++) {
    double gd = g[j], m = k->mom_keep * (double)M[j] + k->mom_grad * gd, v = k->in_grad * gd + k->in_mom * m;
    bad |= !(fabs(gd) <= FLT_MAX) | !(fabs(m) <= FLT_MAX) | !(fabs(v) <= FLT_MAX);
    U[muonref_route_matrix_index(&p->route, j)] = (float)(k->nesterov ? v : m);
    Mn[j] = (float)m;
  }
  if (bad && (st = check_inputs(opt, c, err)))
    return st;
  if (p->route.momentum_only) /* mlx: `parameter - lr * update` on the momentum itself */
    memcpy(X, U, n * sizeof *X);
  for (size_t b = 0; !p->route.momentum_only && b < p->route.batch; b++) {
    muonref_error e = {0};
    st = muonref_fast_ns_flags(X + b * mat, U + b * mat, p->route.rows, p->route.cols, p->options, opt->ns_work,
                               flags, &e);
    if (st)
      return ns_failed(opt, c, i, st, &e, err);
  }
  if (p->options->nuclear_scale) { /* optax adaptive: `jnp.sum(x.conj() * y) * y` */
    double nuc = 0.0;
    for (size_t j = 0; j < n; j++)
      nuc += (double)U[j] * (double)X[j];
    for (size_t j = 0; j < n; j++)
      X[j] = (float)(nuc * (double)X[j]);
  }
  if (p->options->cautious_update)
    cautious_mask(opt, p, X, U, g, k);
  if (p->state.moment2_numel) /* spec/muon.md 7.4 on the matrices, as the fused path's */
    moment2_apply(opt, p, p->state.step + 1, X, opt->pending2 + p->pending2_off);
  for (size_t j = 0; j < n; j++) {
    float o = X[muonref_route_matrix_index(&p->route, j)];
    for (int f = 0; f < k->n_factors; f++) /* Keller's s, Paddle's extra factor: bf16 products */
      o = muonref_bf16_round_double(k->factor[f] * (double)o);
    O[j] = o;
  }
  muonref_stk_muon ko = *k;
  ko.n_factors = 0; /* the products are in O */
  if (muonref_stk_muon_output(O, O, w, n, 1, 0, &ko, pending_kind(opt)) || FAULT_IS(opt, NONFINITE_ACCEPTED) || !check)
    return MUONREF_OK;
  if ((st = check_inputs(opt, c, err)))
    return st;
  return muon_param_error(opt, i, w, O, k, err);
}

/* Phase 1 of the Muon branch on parameter i with row blocks (its route's
 * split, spec/muon.md 7.6): each block's rows of w, g and the momentum
 * gathered into a parameter of its own (muonref_route_block, its own plan)
 * and computed unfused, its pending values and next momentum put back in
 * the parameter's rows; then the check of the whole parameter's values,
 * as muon_compute's.  (No second moment, mask or nuclear scale: options
 * validation refuses them with row blocks.) */
static int muon_compute_blocks(muonref_optimizer *opt, size_t i, const float *w, const float *g, step_ctx *c,
                               muonref_error *err)
{
  param *p = &opt->params[i];
  const muonref_options *o = p->options;
  size_t n = p->route.numel;
  float *O = opt->pending + p->pending_off, *blk = opt->blocks; /* 5 n floats, allocated with the optimizer */
  int st = MUONREF_OK;
  muonref_muon_plan pl;
  muonref_stk_muon k = {0};
  for (size_t b = 0; !st && b < p->route.split; b++) {
    param q = *p;
    muonref_route_block(o, &p->route, b, &q.route);
    size_t m = q.route.numel;
    float *wb = blk, *gb = blk + m, *mb = blk + 2 * m, *nb = blk + 3 * m, *ob = blk + 4 * m;
    size_t bw = q.route.cols; /* a block row: bw elements of the parameter from muonref_route_block_at */
    for (size_t r = 0; r < q.route.rows; r++) {
      size_t at = muonref_route_block_at(o, &p->route, b, r);
      memcpy(wb + r * bw, w + at, bw * sizeof *wb);
      memcpy(gb + r * bw, g + at, bw * sizeof *gb);
      memcpy(mb + r * bw, p->state.momentum_buffer + at, bw * sizeof *mb);
    }
    q.state.momentum_buffer = mb, q.momentum_next = nb;
    muon_plan(opt, &q, p->state.step + 1, &pl);
    muon_scalars(&pl, &k);
    st = muon_compute_unfused(opt, &q, i, ob, wb, gb, c, &k, 0, err);
    for (size_t r = 0; !st && r < q.route.rows; r++) {
      size_t at = muonref_route_block_at(o, &p->route, b, r);
      memcpy(O + at, ob + r * bw, bw * sizeof *ob);
      memcpy(p->momentum_next + at, nb + r * bw, bw * sizeof *nb);
    }
  }
  if (st || pending_kind(opt) != MUONREF_STK_PARAM || muonref_stk_first_nonfinite(O, n) == n ||
      FAULT_IS(opt, NONFINITE_ACCEPTED))
    return st;
  if ((st = check_inputs(opt, c, err)))
    return st;
  return muon_param_error(opt, i, w, O, &k, err);
}

static int muon_compute(muonref_optimizer *opt, size_t i, const float *w, const float *g, step_ctx *c,
                        muonref_error *err)
{
  param *p = &opt->params[i];
  muonref_muon_plan pl;
  muonref_stk_muon k;
  if (p->route.split)
    return muon_compute_blocks(opt, i, w, g, c, err);
  muon_plan(opt, p, p->state.step + 1, &pl);
  muon_scalars(&pl, &k);
  if (muon_unfused(p))
    return muon_compute_unfused(opt, p, i, opt->pending + p->pending_off, w, g, c, &k, 1, err);
  size_t rows = p->route.rows, cols = p->route.cols, mat = rows * cols, m, n;
  unsigned flags = MUONREF_HOOK_OR(muonref_fault_ns_flags(opt->fault), 0);
  int tr, nb = muonref_ns_load_bf16(p->options), param_bad = 0, st, kind = pending_kind(opt);
  muonref_ns_orient(rows, cols, flags, &m, &n, &tr);
  const float *M = p->state.momentum_buffer;
  float *O = opt->pending + p->pending_off;
  /* with a second moment the output pass runs twice: first only the
   * transpose into O (the update, no products: ko), then, after the second
   * moment, the products, the new values and their check on the whole
   * parameter in place */
  int m2 = p->state.moment2_numel != 0;
  muonref_stk_muon ko = k;
  ko.n_factors = 0;
  for (size_t b = 0; b < p->route.batch; b++) { /* each matrix of a batch on its own */
    int bad = 0;
    double ss = muonref_stk_muon_input(opt->ns_work, p->momentum_next + b * mat, g + b * mat, M + b * mat,
                                       O + b * mat, rows, cols, tr, nb, &k, &bad); /* O: scratch until the output */
    if (bad && (st = check_inputs(opt, c, err)))
      return st;
    muonref_error e = {0};
    if ((st = muonref_fast_ns_loaded(opt->ns_work, rows, cols, ss, p->options, flags, &e)))
      return ns_failed(opt, c, i, st, &e, err);
    param_bad |= !muonref_stk_muon_output(O + b * mat, opt->ns_work, w + b * mat, rows, cols, tr, m2 ? &ko : &k,
                                          m2 ? MUONREF_STK_UPDATE : kind);
  }
  if (m2) { /* spec/muon.md 7.4, then the update's products and decay (sections 8, 9) on the normalised O */
    moment2_apply(opt, p, p->state.step + 1, O, opt->pending2 + p->pending2_off);
    param_bad = !muonref_stk_muon_output(O, O, w, p->route.numel, 1, 0, &k, kind);
  }
  if (!param_bad || FAULT_IS(opt, NONFINITE_ACCEPTED))
    return MUONREF_OK;
  if ((st = check_inputs(opt, c, err)))
    return st;
  return muon_param_error(opt, i, w, O, &k, err);
}

/* Phase 2 of the Muon branch: the checked new values into the parameter,
 * the new momentum made current by swapping the buffers (the pointers a
 * muonref_optimizer_state view held stay valid only until this step, as
 * optimizer.h says). */
static void muon_apply(muonref_optimizer *opt, param *p, float *w)
{
  muonref_stk_copy(w, opt->pending + p->pending_off, p->route.numel);
  float *m = p->state.momentum_buffer;
  p->state.momentum_buffer = p->momentum_next;
  p->momentum_next = m;
  if (p->state.moment2_numel)
    memcpy(p->state.moment2, opt->pending2 + p->pending2_off, p->state.moment2_numel * sizeof(float));
}

/* Phase 1 of the AdamW branch on parameter i: checks that every value its
 * step would store is finite (muonref_stk_adamw_check), errors in the
 * order of muon_compute's. */
static int adamw_compute(muonref_optimizer *opt, size_t i, const float *w, const float *g, step_ctx *c,
                         muonref_error *err)
{
  const param *p = &opt->params[i];
  muonref_adamw_plan pl;
  muonref_stk_adamw k;
  adamw_plan(opt, p, p->state.step + 1, &pl);
  adamw_scalars(&pl, &k);
  size_t n = p->route.numel;
  const float *m = p->state.exp_avg, *v = p->state.exp_avg_sq;
  if (!muonref_stk_adamw_check(w, m, v, g, n, &k))
    return MUONREF_OK;
  int st = check_inputs(opt, c, err);
  if (st || FAULT_IS(opt, NONFINITE_ACCEPTED))
    return st;
  float nw = 0.0f;
  size_t j = muonref_stk_adamw_param_first(w, m, v, g, n, &k, &nw);
  return j < n ? param_overflow(err, i, j, nw, w[j]) : MUONREF_OK;
}

/* Phase 2 of the AdamW branch, the step count t already incremented. */
static void adamw_apply(const muonref_optimizer *opt, param *p, float *w, const float *g)
{
  muonref_adamw_plan pl;
  muonref_stk_adamw k;
  adamw_plan(opt, p, p->state.step, &pl);
  adamw_scalars(&pl, &k);
  muonref_stk_adamw_apply(w, p->state.exp_avg, p->state.exp_avg_sq, g, p->route.numel, &k);
}

#ifdef MUONREF_TEST_HOOKS
/* The fault megatron_clip_update: the coefficient from the global norm of
 * the Muon parameters' updates (opt->pending, pending_kind), applied to
 * them; the gradients were left unclipped (clip_prepare).  Then the new
 * values of every Muon parameter (params) from its update, in place. */
static void clip_update_fault(muonref_optimizer *opt, float *const *params)
{
  if (!FAULT_IS(opt, MEGATRON_CLIP_UPDATE))
    return;
  double sumsq = 0.0;
  for (int pass = 0; opt->clipped && pass < 2; pass++) {
    double c = pass ? muonref_clip_coeff(opt->groups[0].clip_grad_norm, sqrt(sumsq)) : 1.0;
    for (size_t i = 0; i < opt->n_params; i++) {
      const param *p = &opt->params[i];
      if (!p->route.use_muon || !opt->gptr[i])
        continue;
      if (pass)
        muonref_clip_scale(opt->pending + p->pending_off, p->route.numel, c);
      else
        sumsq += muonref_grad_sumsq(opt->pending + p->pending_off, p->route.numel);
    }
  }
  for (size_t i = 0; i < opt->n_params; i++) {
    const param *p = &opt->params[i];
    if (!p->route.use_muon || !opt->gptr[i])
      continue;
    muonref_muon_plan pl;
    muonref_stk_muon k;
    muon_plan(opt, p, p->state.step + 1, &pl);
    muon_scalars(&pl, &k);
    k.n_factors = 0; /* the products are in the update */
    float *O = opt->pending + p->pending_off;
    (void)muonref_stk_muon_output(O, O, params[i], p->route.numel, 1, 0, &k, MUONREF_STK_PARAM);
  }
}
#endif

/* Whether parameter p updates in this step: always without grad_accumulation; under it (spec/muon.md
 * 3.3) at its N-th micro-step, keras' `is_update_step = (self._iterations + 1) %
 * self.gradient_accumulation_steps == 0` on the parameter's own count of micro-steps. */
static int accum_update(const param *p)
{
  int n = p->options->grad_accumulation;
  return n <= 0 || (p->state.accum_calls + 1) % n == 0;
}

/* Under grad_accumulation N, the copy d (n floats, the gradient after maximize and the loss scale) of
 * parameter p becomes what the step keeps: at a micro-step that is not the N-th the new accumulator
 * R32(A + d), at the N-th the gradient it steps with, R32(R32(d + A) / N) (keras base_optimizer.py
 * _backend_increment_gradient_accumulators `g + acc_g`; _update_step_fn `(g + acc_g) / steps`).
 * Returns 1 when a value is not finite (the step is then refused, nothing written). */
static int accumulate(const muonref_optimizer *opt, const param *p, float *d, size_t n)
{
  const float *a = p->state.grad_accum;
  int bad = 0;
  (void)opt; /* FAULT_IS only */
  float steps = FAULT_IS(opt, KERAS_ACCUMULATION_SUM) ? 1.0f : (float)p->options->grad_accumulation;
  if (!accum_update(p))
    for (size_t j = 0; j < n; j++) {
      d[j] = a[j] + d[j];
      bad |= !isfinite(d[j]);
    }
  else
    for (size_t j = 0; j < n; j++) {
      d[j] = (d[j] + a[j]) / steps;
      bad |= !isfinite(d[j]);
    }
  return bad;
}

/* Whether clip_prepare made parameter i's copy in opt->clipped: a gradient, or under grad_accumulation a
 * zero-filled one (missing_grad ZEROS). */
static int clip_copied(const muonref_optimizer *opt, const muonref_grad *grads, size_t i)
{
  return grads[i].data || (opt->params[i].state.grad_accum && missing_grad(opt, &opt->params[i]));
}

/* The clipping of the copies in opt->clipped (k of them, in parameter
 * order, opt->sumsq their binary64 sums of squares): Megatron's (the
 * coefficient from the global norm, below 1 only; not under the fault
 * megatron_clip_update, which clips the updates instead) or keras' global
 * scale, then keras' clipping of each gradient by its own norm, or the
 * clamp (grad.h; spec/muon.md 3.1, 3.2). */
static void clip_copies(muonref_optimizer *opt, const muonref_grad *grads, size_t k, int every)
{
  const muonref_options *o = &opt->groups[0];
  double total = 0.0;
  for (size_t j = 0; j < k; j++)
    total += opt->sumsq[j];
  int update_fault = o->clip_grad_form == MUONREF_CLIP_MEGATRON && FAULT_IS(opt, MEGATRON_CLIP_UPDATE);
  double s = update_fault ? 1.0 : muonref_clip_global(o, sqrt(total), opt->sumsq, k);
  k = 0;
  for (size_t i = 0; i < opt->n_params; i++)
    if (clip_copied(opt, grads, i) && (every || accum_update(&opt->params[i])))
      muonref_clip_gradient(o, opt->clipped + opt->clip_off[i], opt->params[i].route.numel, s, opt->sumsq[k++]);
}

/* Sets opt->gptr[i], the gradient parameter i steps with: grads[i].data,
 * or missing_grad's, or, where the step transforms the gradients
 * (opt->clipped: maximize, loss_scale, accumulation, any clipping), a copy
 * made in the ports' order (spec/muon.md 3, 3.1, 3.2, 3.3): negated under
 * maximize (exact), divided by the loss scale, accumulated (accumulate),
 * then clipped (clip_copies), the norms from those copies (the sign does
 * not change them); NULL for a parameter that does not update in this step
 * (a micro-step of grad_accumulation: its copy holds the new accumulator).
 * Returns the first parameter whose accumulation is not finite, or
 * n_params. */
static size_t clip_prepare(muonref_optimizer *opt, const muonref_grad *grads)
{
  size_t k = 0, bad = opt->n_params;
  int clip_first = FAULT_IS(opt, KERAS_ACCUMULATION_CLIP_EACH); /* each micro-step's gradient clipped, then added */
  for (size_t i = 0; i < opt->n_params; i++) {
    const param *p = &opt->params[i];
    opt->gptr[i] = grads[i].data ? grads[i].data : missing_grad(opt, p);
    if (!opt->clipped || !clip_copied(opt, grads, i))
      continue;
    float *d = opt->clipped + opt->clip_off[i];
    size_t n = p->route.numel;
    muonref_grad_used(d, opt->gptr[i], n, p->options->maximize, 1.0); /* a zero-filled one too: clip_copied */
    if (opt->groups[0].loss_scale > 0.0)
      muonref_grad_unscale(d, n, opt->groups[0].loss_scale);
    if (!clip_first && p->state.grad_accum && accumulate(opt, p, d, n) && bad == opt->n_params)
      bad = i;
    opt->gptr[i] = d;
    if (clip_first || accum_update(p))
      opt->sumsq[k++] = muonref_grad_sumsq(d, n);
  }
  if (opt->clipped)
    clip_copies(opt, grads, k, clip_first);
  for (size_t i = 0; clip_first && i < opt->n_params; i++)
    if (opt->params[i].state.grad_accum && clip_copied(opt, grads, i) &&
        accumulate(opt, &opt->params[i], opt->clipped + opt->clip_off[i], opt->params[i].route.numel) &&
        bad == opt->n_params)
      bad = i;
  for (size_t i = 0; i < opt->n_params; i++)
    if (!accum_update(&opt->params[i]))
      opt->gptr[i] = NULL;
  return bad;
}

/* decay_method L2 and adam_l2 (options.h): each parameter with a nonzero
 * l2_coeff steps with R32(G + wd P) (muonref_l2_grad), G the gradient
 * clip_prepare chose, P the parameter before the step (Emerging-Optimizers
 * mixin.py @fd77292 `grad.add_(p, alpha=wd)` before the momentum;
 * torch.optim.Adam `grad.add(param, alpha=weight_decay)` before the
 * moments). */
static void l2_prepare(muonref_optimizer *opt, float *const *params)
{
  for (size_t i = 0; opt->l2g && i < opt->n_params; i++) {
    const param *p = &opt->params[i];
    if (!opt->gptr[i] || !uses_l2(p))
      continue;
    float *d = opt->l2g + opt->clip_off[i];
    muonref_l2_grad(d, opt->gptr[i], params[i], p->route.numel, l2_coeff(p));
    opt->gptr[i] = d;
  }
}

/* keras (all_missing_error): a step in which no parameter has a gradient
 * (nor a zero-filled one) is refused, base_optimizer.py
 * _filter_empty_gradients: `raise ValueError("No gradients provided for any
 * variable.")`.  An optimizer without parameters steps as before. */
/* Whether no parameter has a gradient, nor a zero-filled one (missing_grad ZEROS). */
static int no_gradient(const muonref_optimizer *opt, const muonref_grad *grads)
{
  for (size_t i = 0; i < opt->n_params; i++)
    if (grads[i].data || missing_grad(opt, &opt->params[i]))
      return 0;
  return 1;
}

static int all_missing(const muonref_optimizer *opt, const muonref_grad *grads, muonref_error *err)
{
  int refuse = 0;
  for (size_t i = 0; i < opt->n_params; i++)
    refuse |= opt->params[i].options->all_missing_error;
  return refuse && no_gradient(opt, grads) ? muonref_fail(err, MUONREF_EOPTION, "No gradients provided for any variable.")
                                           : MUONREF_OK;
}

/* Every step count this step advances stays within MUONREF_MAX_STEP (a
 * state imported at the limit would count past it, and the state file,
 * which refuses such a count, could not read its checkpoint back). */
static int step_counts_fit(const muonref_optimizer *opt, muonref_error *err)
{
  for (size_t i = 0; i < opt->n_params; i++) {
    const param *p = &opt->params[i];
    if ((opt->gptr[i] || p->options->adam_step_global) && p->state.step >= MUONREF_MAX_STEP)
      return muonref_fail(err, MUONREF_ESTATE, "Step for parameter %zu: its step count is %ld, the most a state may "
                          "count (MUONREF_MAX_STEP, 2^53)", i, p->state.step);
  }
  return MUONREF_OK;
}

/* Whether the step can read every gradient as numel floats: dense float32,
 * with a parameter array (what muonref_grad_check and grad_checks check
 * before the values). */
static int readable(const muonref_optimizer *opt, float *const *params, const muonref_grad *grads)
{
  for (size_t i = 0; i < opt->n_params; i++)
    if (grads[i].data && (grads[i].layout != MUONREF_DENSE || grads[i].dtype != MUONREF_FLOAT32 || !params[i]))
      return 0;
  return 1;
}

/* Phase 2 of a step on parameter i: the accumulator (spec/muon.md 3.3: a micro-step keeps its sum, the
 * N-th empties it; not in a step where no parameter has a gradient, `none`), then the checked values of its
 * branch into the parameter and its state, or, without a gradient, the count of a profile whose state counts
 * the optimizer's steps. */
static void store(muonref_optimizer *opt, size_t i, float *const *params, const muonref_grad *grads, int none)
{
  param *p = &opt->params[i];
  const float *g = opt->gptr[i];
  if (p->state.grad_accum && !none) {
    size_t n = p->route.numel;
    if (!accum_update(p)) {
      if (clip_copied(opt, grads, i))
        memcpy(p->state.grad_accum, opt->clipped + opt->clip_off[i], n * sizeof(float));
      p->state.accum_calls++;
      return;
    }
    if (!FAULT_IS(opt, KERAS_ACCUMULATION_NO_RESET))
      memset(p->state.grad_accum, 0, n * sizeof(float));
    p->state.accum_calls = 0;
  }
  if (!g) {
    muonref_state_missing_grad(p->options, &p->route, &p->state); /* keras: the optimizer's count */
    return;
  }
  p->state.initialized = 1;
  p->state.step++;
  if (p->route.use_muon)
    muon_apply(opt, p, params[i]);
  else
    adamw_apply(opt, p, params[i], g);
}

int muonref_optimizer_step(muonref_optimizer *opt, size_t n_params, float *const *params,
                           const muonref_grad *grads, muonref_error *err)
{
  if (!opt || !params || !grads)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_step: opt, params and grads must not be NULL");
  if (n_params != opt->n_params)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_step: n_params is %zu, the optimizer has %zu parameters",
                        n_params, opt->n_params);
  step_ctx c = {params, grads, 0};
  int st;
  if (!readable(opt, params, grads) && (st = grad_checks(opt, params, grads, err)))
    return st;
  size_t bad = clip_prepare(opt, grads);
  l2_prepare(opt, params);
  /* no gradient at all: no other check can fail; a step count at its limit refuses the step before any pass */
  if ((st = all_missing(opt, grads, err)) || (st = step_counts_fit(opt, err)))
    return st;
  if (bad < opt->n_params) /* a non-finite gradient is named as the input's (section 3), else the sum overflowed */
    return (st = check_inputs(opt, &c, err)) ? st
                                             : muonref_fail(err, MUONREF_ENUMERIC, "Step for parameter %zu would "
                                                            "overflow binary32: its accumulated gradient "
                                                            "(grad_accumulation) is not finite", bad);
  /* Phase 1: compute every parameter's step and check what would be
   * stored; nothing is written, so a refused step changes nothing. */
  for (size_t i = 0; i < opt->n_params; i++) {
    const float *g = opt->gptr[i];
    if (!g)
      continue;
    st = opt->params[i].route.use_muon ? muon_compute(opt, i, params[i], g, &c, err)
                                       : adamw_compute(opt, i, params[i], g, &c, err);
    if (st)
      return st;
  }
  MUONREF_HOOK(clip_update_fault(opt, params));
  /* Phase 2: store; then the moving average of every parameter (spec/muon.md 8.2), from the count of
   * updates before the step */
  int none = no_gradient(opt, grads); /* spec/muon.md 3: no micro-step and no average (keras refuses such a step) */
  for (size_t i = 0; i < opt->n_params; i++) {
    param *p = &opt->params[i];
    long updates = p->state.step;
    int ema = p->state.ema_average && !none, before = FAULT_IS(opt, KERAS_EMA_BEFORE_STEP);
    if (ema && before) /* the fault: the average of the values before the step */
      muonref_ema_average(p->options, p->state.ema_average, params[i], p->route.numel, updates == 0);
    store(opt, i, params, grads, none);
    if (ema && !before) /* the fault keras_ema_zero_start: no first-step rule, the overwrite as it is */
      muonref_ema_average(p->options, p->state.ema_average, params[i], p->route.numel,
                          updates == 0 && !FAULT_IS(opt, KERAS_EMA_ZERO_START));
    if (ema) /* the fault keras_ema_overwrite_late: the count after the step */
      muonref_ema_overwrite(p->options, p->state.ema_average, params[i], p->route.numel,
                            FAULT_IS(opt, KERAS_EMA_OVERWRITE_LATE) ? p->state.step : updates);
  }
  return MUONREF_OK;
}

int muonref_optimizer_state(const muonref_optimizer *opt, size_t i, muonref_param_state *out, muonref_error *err)
{
  if (!opt || !out)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_state: opt and out must not be NULL");
  if (i >= opt->n_params)
    return muonref_fail(err, MUONREF_EOPTION, "State for parameter %zu: the optimizer has %zu parameters", i,
                        opt->n_params);
  *out = opt->params[i].state;
  return MUONREF_OK;
}

/* Whether buffer b (n floats) is finite. */
static int finite_buffer(const float *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite(b[i]))
      return 0;
  return 1;
}

/* The accumulation and the moving average of state st for parameter p (spec/muon.md 3.3, 8.2): accum_calls
 * within 0..N-1 under the options' grad_accumulation N, 0 without; grad_accum finite (NULL: zeros), no sum
 * beside a count of 0; under use_ema the moving average finite (NULL: zeros).  ESTATE, ENONFINITE. */
static int lifecycle_state_ok(const param *p, size_t i, const muonref_param_state *st, muonref_error *err)
{
  int n = p->options->grad_accumulation;
  if (st->accum_calls < 0 || (n > 0 && st->accum_calls >= n) || (n <= 0 && st->accum_calls != 0))
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: %ld micro-steps accumulated (accum_calls), "
                        "the options' grad_accumulation %d takes 0 to %d", i, st->accum_calls, n, n > 1 ? n - 1 : 0);
  if (n > 0 && st->grad_accum && !finite_buffer(st->grad_accum, p->route.numel))
    return muonref_fail(err, MUONREF_ENONFINITE, "State for parameter %zu: the gradient accumulator holds a "
                        "non-finite value", i);
  for (size_t j = 0; n > 0 && st->grad_accum && st->accum_calls == 0 && j < p->route.numel; j++)
    if (st->grad_accum[j] != 0.0f) /* the N-th micro-step empties it: no step leaves such a state */
      return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: a gradient accumulator that holds a sum "
                          "(element %zu) with no micro-step counted (accum_calls 0)", i, j);
  if (p->state.ema_average && st->ema_average && !finite_buffer(st->ema_average, p->route.numel))
    return muonref_fail(err, MUONREF_ENONFINITE, "State for parameter %zu: the moving average (ema_average) holds "
                        "a non-finite value", i);
  return MUONREF_OK;
}

/* dst (n floats, the optimizer's; NULL: none kept) <- src, or zeros where src is NULL (keras builds its
 * accumulators and averages as zeros). */
static void copy_or_zero(float *dst, const float *src, size_t n)
{
  if (dst && src)
    memcpy(dst, src, n * sizeof(float));
  else if (dst)
    memset(dst, 0, n * sizeof(float));
}

/* The accumulation and the moving average of a state lifecycle_state_ok passed into parameter p. */
static void lifecycle_state_set(param *p, const muonref_param_state *st)
{
  copy_or_zero(p->state.ema_average, st->ema_average, p->route.numel);
  copy_or_zero(p->state.grad_accum, st->grad_accum, p->route.numel);
  if (p->state.grad_accum)
    p->state.accum_calls = st->accum_calls;
}

int muonref_optimizer_set_state(muonref_optimizer *opt, size_t i, const muonref_param_state *st,
                                muonref_error *err)
{
  if (!opt)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_set_state: opt must not be NULL");
  if (!st)
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: no state given (NULL)", i);
  if ((st->initialized != 0 && st->initialized != 1) || (st->use_muon != 0 && st->use_muon != 1))
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: initialized and use_muon must be 0 or 1", i);
  if (st->step > MUONREF_MAX_STEP)
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: step %ld, at most %ld are supported", i, st->step,
                        (long)MUONREF_MAX_STEP);
  if (i >= opt->n_params)
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: the optimizer has %zu parameters", i,
                        opt->n_params);
  param *p = &opt->params[i];
  size_t n = p->route.numel;
  int sa = lifecycle_state_ok(p, i, st, err);
  if (sa)
    return sa;
  if (!st->initialized) {
    lifecycle_state_set(p, st);
    p->state.initialized = 0;
    p->state.step = 0;
    memset(p->route.use_muon ? p->state.momentum_buffer : p->state.exp_avg, 0, n * sizeof(float));
    if (!p->route.use_muon)
      memset(p->state.exp_avg_sq, 0, n * sizeof(float));
    if (p->state.moment2_numel)
      memset(p->state.moment2, 0, p->state.moment2_numel * sizeof(float));
    return MUONREF_OK;
  }
  if (!st->use_muon != !p->route.use_muon)
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: routed to %s, the state is %s's", i,
                        p->route.use_muon ? "Muon" : "AdamW", st->use_muon ? "Muon" : "AdamW");
  if (st->numel != n)
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: %zu elements, the parameter has %zu", i,
                        st->numel, n);
  if (st->step < 1)
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: step %ld, an initialized state has step >= 1",
                        i, st->step);
  const float *b1 = p->route.use_muon ? st->momentum_buffer : st->exp_avg;
  const float *b2 = p->route.use_muon ? st->momentum_buffer : st->exp_avg_sq;
  if (!b1 || !b2)
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: the %s buffer is missing", i,
                        p->route.use_muon ? "momentum" : (b1 ? "exp_avg_sq" : "exp_avg"));
  size_t m2 = p->state.moment2_numel;
  if (m2 && (!st->moment2 || st->moment2_numel != m2))
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: the second moment (moment2) has %zu elements, "
                        "the options keep %zu", i, st->moment2 ? st->moment2_numel : 0, m2);
  if (!m2 && st->moment2 && st->moment2_numel)
    return muonref_fail(err, MUONREF_ESTATE, "State for parameter %zu: a second moment (moment2) of %zu elements, "
                        "the options keep none", i, st->moment2_numel);
  if (!finite_buffer(b1, n) || !finite_buffer(b2, n) || (m2 && !finite_buffer(st->moment2, m2)))
    return muonref_fail(err, MUONREF_ENONFINITE, "State for parameter %zu: a buffer holds a non-finite value", i);
  lifecycle_state_set(p, st);
  p->state.initialized = 1;
  p->state.step = FAULT_IS(opt, STATE_STEP_RESET) ? 0 : st->step;
  if (p->route.use_muon) {
    memcpy(p->state.momentum_buffer, st->momentum_buffer, n * sizeof(float));
    if (m2)
      memcpy(p->state.moment2, st->moment2, m2 * sizeof(float));
  } else {
    memcpy(p->state.exp_avg, st->exp_avg, n * sizeof(float));
    memcpy(p->state.exp_avg_sq, st->exp_avg_sq, n * sizeof(float));
  }
  return MUONREF_OK;
}
