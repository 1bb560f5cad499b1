/* muonref: the fast optimizer (see optimizer.h).  The scalar schedule comes
 * from core/plan.c; this file does the float32 tensor arithmetic.
 * Element-wise updates are evaluated in binary64 from the float32 inputs
 * and rounded once to float32, so that each stored value is within one
 * rounding of the exact step defined in spec/muon.md. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "faults.h"
#include "muonref/bf16.h"
#include "muonref/ns.h"
#include "muonref/optimizer.h"
#include "core/plan.h"
#include "ns_internal.h"
#include "optimizer_internal.h"
#include "core/fail.h"

typedef struct param {
  const muonref_options *options; /* the group's options (in opt->groups) */
  size_t group;
  muonref_shape shape;
  muonref_route route;
  muonref_param_state state;      /* buffers allocated at creation */
  size_t pending_off;             /* Muon: where its Newton-Schulz output waits in opt->pending */
  size_t pending2_off;            /* Muon with a second moment: where its new v waits in opt->pending2 */
} param;

struct muonref_optimizer {
  size_t n_groups, n_params;
  muonref_options *groups;
  param *params;
  float *ns_work;   /* Newton-Schulz workspace, sized for the largest matrix */
  size_t ns_work_floats;
  float *update;    /* the Newton-Schulz input (U or M) of the largest Muon matrix */
  float *pending;   /* every Muon parameter's Newton-Schulz output of the step being computed:
                       a step is computed and checked whole before anything is written */
  float *pending2;  /* every Muon parameter's new second moment (moment2) of the step; NULL when none has one */
  double *m2d;      /* the second moment's denominators d of one parameter (its moment2_numel) */
  float *clipped;   /* clip_grad_norm > 0: every parameter's clipped gradient of the step, at
                       clip_off[i] (numel floats each); NULL without clipping */
  size_t *clip_off;
  const float **gptr; /* the gradient each parameter steps with (its own, or clipped) */
  float *zeros;     /* the zero gradient of missing_grad ZEROS (and of the
                       fault missing_grad_as_zeros); NULL when no group needs it */
#ifdef MUONREF_TEST_HOOKS
  int fault;        /* MUONREF_FAULT_NONE, or a deliberate fault (faults.h) */
#endif
};

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
    free(opt->params[i].state.exp_avg);
    free(opt->params[i].state.exp_avg_sq);
    free(opt->params[i].state.moment2);
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
  free(opt->update);
  free(opt->pending);
  free(opt->pending2);
  free(opt->m2d);
  free(opt->zeros);
  free(opt->clipped);
  free(opt->clip_off);
  free(opt->gptr);
  free(opt);
}

/* Allocates the branch's state buffers of p (zeroed, uninitialized state). */
static int alloc_state(param *p)
{
  size_t n = p->route.numel;
  p->state.numel = n;
  p->state.use_muon = p->route.use_muon;
  if (p->route.use_muon) {
    size_t m2 = muonref_moment2_numel(p->options, &p->route);
    p->state.moment2_numel = m2;
    if (m2 && !(p->state.moment2 = calloc(m2, sizeof(float))))
      return 0;
    return (p->state.momentum_buffer = calloc(n, sizeof(float))) != NULL;
  }
  p->state.exp_avg = calloc(n, sizeof(float));
  p->state.exp_avg_sq = calloc(n, sizeof(float));
  return p->state.exp_avg && p->state.exp_avg_sq;
}

/* Routes and allocates every parameter; sizes the shared workspaces. */
static int build_params(muonref_optimizer *opt, const muonref_group *groups, const char *const *names,
                        muonref_error *err)
{
  size_t k = 0, max_ws = 0, max_mat = 0, pending = 0, pending2 = 0, max_m2 = 0;
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
        size_t ws = muonref_ns_workspace_floats(p->route.rows, p->route.cols);
        max_ws = ws > max_ws ? ws : max_ws;
        max_mat = p->route.numel > max_mat ? p->route.numel : max_mat;
        p->pending_off = pending;
        pending += p->route.numel;
        p->pending2_off = pending2;
        pending2 += p->state.moment2_numel;
        max_m2 = p->state.moment2_numel > max_m2 ? p->state.moment2_numel : max_m2;
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
  if (opt->n_groups && opt->groups[0].clip_grad_norm > 0.0) {
    size_t total = 0;
    if (!(opt->clip_off = calloc(opt->n_params + 1, sizeof *opt->clip_off)))
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the optimizer");
    for (size_t i = 0; i < opt->n_params; i++)
      opt->clip_off[i] = total, total += opt->params[i].route.numel;
    if (!(opt->clipped = malloc((total + 1) * sizeof(float))))
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the clipped gradients");
  }
  opt->ns_work_floats = max_ws;
  opt->ns_work = max_ws ? malloc(max_ws * sizeof(float)) : NULL;
  opt->update = max_mat ? malloc(max_mat * sizeof(float)) : NULL;
  opt->pending = pending ? malloc(pending * sizeof(float)) : NULL;
  opt->pending2 = pending2 ? malloc(pending2 * sizeof(float)) : NULL;
  opt->m2d = max_m2 ? malloc(max_m2 * sizeof(double)) : NULL;
  if ((pending2 && !opt->pending2) || (max_m2 && !opt->m2d))
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the second moments");
  if ((max_ws && !opt->ns_work) || (max_mat && !opt->update) || (pending && !opt->pending))
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
    if (!st && groups[g].options.clip_grad_norm != groups[0].options.clip_grad_norm)
      st = muonref_fail(err, MUONREF_EOPTION, "clip_grad_norm is one value for the optimizer: group %zu has %g, "
                        "group 0 %g", g, groups[g].options.clip_grad_norm, groups[0].options.clip_grad_norm);
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

/* The second moment of the Newton-Schulz output (spec/muon.md 7.4) of
 * parameter p, routed as a batch of (rows, cols) matrices O: v' from the
 * stored v into V2, O replaced by the normalised update; d (the
 * denominators, binary64) in opt->m2d.  Element-wise in binary64 from the
 * binary32 O and v, each result rounded once. */
static void moment2_apply(muonref_optimizer *opt, const param *p, long t, float *O, float *V2)
{
  muonref_moment2_plan m;
  muonref_moment2_plan_make(p->options, t, &m);
  MUONREF_HOOK(muonref_fault_moment2_plan(opt->fault, p->options, &m));
  const muonref_route *r = &p->route;
  size_t rows = r->rows, cols = r->cols, mat = rows * cols, per = p->state.moment2_numel / r->batch;
  const float *V = p->state.moment2;
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
    if (m.rescale == MUONREF_MOMENT2_RESCALE_UNIT)
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
  if (m.rescale != MUONREF_MOMENT2_RESCALE_UNIT)
    return;
  double f = 1.0 / (sqrt(total) + m.eps); /* timm: `update_adaptive / update_adaptive.norm().add_(eps)` */
  for (size_t b = 0; b < r->batch; b++)
    for (size_t i = 0; i < rows; i++)
      for (size_t j = 0; j < cols; j++) {
        double dk = d[b * per + muonref_moment2_index(&m, rows, cols, i, j)];
        float *x = &O[b * mat + i * cols + j];
        *x = (float)((dk == 0.0 ? 0.0 : (double)*x / dk) * f);
      }
}

/* Phase 1 of the Muon branch on parameter i (gradient g): the new momentum
 * and Newton-Schulz input into opt->update, O into the parameter's place in
 * opt->pending, and a check that every value the step will store (the
 * momentum, the parameter) is finite.  Writes no state and no parameter. */
static int muon_compute(muonref_optimizer *opt, size_t i, const float *w, const float *g, muonref_error *err)
{
  param *p = &opt->params[i];
  muonref_muon_plan pl;
  muon_plan(opt, p, p->state.step + 1, &pl);
  size_t n = p->route.numel;
  const float *M = p->state.momentum_buffer;
  float *U = opt->update, *O = opt->pending + p->pending_off;
  for (size_t j = 0; j < n; j++) {
    double m = pl.mom_keep * (double)M[j] + pl.mom_grad * (double)g[j];
    U[j] = (float)(pl.nesterov ? pl.in_grad * (double)g[j] + pl.in_mom * m : m);
  }
  muonref_error e = {0};
  size_t mat = p->route.rows * p->route.cols;
  int st = MUONREF_OK;
  for (size_t b = 0; !st && b < p->route.batch; b++) /* each matrix of a batch on its own */
    st = muonref_fast_ns_flags(O + b * mat, U + b * mat, p->route.rows, p->route.cols, p->options, opt->ns_work,
                               MUONREF_HOOK_OR(muonref_fault_ns_flags(opt->fault), 0), &e);
  if (st == MUONREF_ENUMERIC)
    return muonref_fail(err, st, "Step for parameter %zu would overflow binary32: %s", i, e.message);
  if (st)
    return muonref_fail(err, st, "%s", e.message);
  if (p->state.moment2_numel) /* the second moment (NorMuon, AdaMuon) on the Newton-Schulz output */
    moment2_apply(opt, p, p->state.step + 1, O, opt->pending2 + p->pending2_off);
  if (pl.update_scale) { /* Keller: the bf16 update scaled in place, s a binary32 scalar */
    double s32 = (double)(float)pl.update_factor; /* Keller's s, dion's lr s */
    for (size_t j = 0; j < n; j++)
      O[j] = muonref_bf16_round_double(s32 * (double)O[j]);
    if (pl.update_factor2 != 1.0) { /* Paddle: `* extra_scale_factor`, a second bf16 product */
      double e32 = (double)(float)pl.update_factor2;
      for (size_t j = 0; j < n; j++)
        O[j] = muonref_bf16_round_double(e32 * (double)O[j]);
    }
  }
  if (FAULT_IS(opt, NONFINITE_ACCEPTED))
    return MUONREF_OK;
  double decay = pl.apply_decay ? pl.decay : 1.0;
  for (size_t j = 0; j < n; j++) {
    double dj = muonref_cautious_decays(pl.cautious, muonref_sign(w[j]), muonref_sign(O[j])) ? decay : 1.0;
    float nw = (float)(dj * (double)w[j] - pl.alpha * (double)O[j]);
    if (!isfinite(nw))
      return muonref_fail(err, MUONREF_ENUMERIC,
                          "Step for parameter %zu would overflow binary32: element %zu of the parameter would become "
                          "%s (it is %g)", i, j, isnan(nw) ? "nan" : nw > 0 ? "inf" : "-inf", (double)w[j]);
  }
  return MUONREF_OK;
}

/* Phase 2 of the Muon branch: stores the momentum and the parameter from
 * the checked O (the momentum recomputed exactly as in phase 1). */
static void muon_apply(muonref_optimizer *opt, param *p, float *w, const float *g)
{
  muonref_muon_plan pl;
  muon_plan(opt, p, p->state.step, &pl); /* phase 2: the count is already incremented */
  size_t n = p->route.numel;
  float *M = p->state.momentum_buffer;
  const float *O = opt->pending + p->pending_off;
  for (size_t j = 0; j < n; j++)
    M[j] = (float)(pl.mom_keep * (double)M[j] + pl.mom_grad * (double)g[j]);
  if (p->state.moment2_numel)
    memcpy(p->state.moment2, opt->pending2 + p->pending2_off, p->state.moment2_numel * sizeof(float));
  double decay = pl.apply_decay ? pl.decay : 1.0;
  for (size_t j = 0; j < n; j++) {
    double dj = muonref_cautious_decays(pl.cautious, muonref_sign(w[j]), muonref_sign(O[j])) ? decay : 1.0;
    w[j] = (float)(dj * (double)w[j] - pl.alpha * (double)O[j]);
  }
}

/* The AdamW branch on parameter i whose step count becomes t: with write
 * == 0 only checks that every value it would store is finite (phase 1);
 * with write == 1 stores them (phase 2). */
static int adamw_step(const muonref_optimizer *opt, size_t i, long t, float *w, const float *g, int write,
                      muonref_error *err)
{
  const param *p = &opt->params[i];
  muonref_adamw_plan pl;
  adamw_plan(opt, p, t, &pl);
  float *m = p->state.exp_avg, *v = p->state.exp_avg_sq;
  double decay = pl.apply_decay ? pl.decay : 1.0;
  for (size_t j = 0; j < p->route.numel; j++) {
    double gj = g[j];
    double mj = pl.beta1 * (double)m[j] + pl.one_minus_beta1 * gj;
    double vj = pl.beta2 * (double)v[j] + pl.one_minus_beta2 * gj * gj;
    double denom = sqrt(vj) / pl.sqrt_bc2 + pl.eps;
    double nj = pl.nadamw ? pl.num_mom * mj + pl.num_grad * gj : mj; /* timm's NAdamW, optax's NAdam numerator */
    double q = denom == 0.0 ? 0.0 : nj / denom; /* spec: a zero denominator moves nothing */
    double dj = muonref_cautious_decays(pl.cautious, muonref_sign(w[j]), muonref_sign(q)) ? decay : 1.0;
    float nw = (float)(dj * (double)w[j] - pl.step_size * q);
    if (write) {
      w[j] = nw;
      m[j] = (float)mj;
      v[j] = (float)vj;
    } else if (!isfinite(nw) && !FAULT_IS(opt, NONFINITE_ACCEPTED)) {
      return muonref_fail(err, MUONREF_ENUMERIC,
                          "Step for parameter %zu would overflow binary32: element %zu of the parameter would become "
                          "%s (it is %g)", i, j, isnan(nw) ? "nan" : nw > 0 ? "inf" : "-inf", (double)w[j]);
    }
  }
  return MUONREF_OK;
}

/* Whether the buffers of the step of parameter i (gradient g) stay inside
 * binary32: the momentum and its Nesterov input (Muon), the second moment
 * (AdamW), computed element-wise in binary64 exactly as the step will.  A
 * step that would overflow is refused before anything is written
 * (MUONREF_ENUMERIC), instead of storing Inf or NaN.  The Newton-Schulz
 * output and the parameters are checked where they are computed
 * (muon_compute, adamw_step with write == 0). */
static int range_check(const muonref_optimizer *opt, size_t i, const float *g, muonref_error *err)
{
  const param *p = &opt->params[i];
  double limit = FLT_MAX;
  size_t n = p->route.numel;
  if (p->route.use_muon) {
    muonref_muon_plan pl;
    muon_plan(opt, p, p->state.step + 1, &pl);
    const float *M = p->state.momentum_buffer;
    for (size_t j = 0; j < n; j++) {
      double m = pl.mom_keep * (double)M[j] + pl.mom_grad * (double)g[j];
      double u = pl.in_grad * (double)g[j] + pl.in_mom * m;
      if (fabs(m) > limit || fabs(u) > limit)
        return muonref_fail(err, MUONREF_ENUMERIC,
                            "Step for parameter %zu would overflow binary32: the momentum at element %zu exceeds %g", i, j,
                            limit);
    }
  } else {
    muonref_adamw_plan pl;
    adamw_plan(opt, p, p->state.step + 1, &pl);
    const float *v = p->state.exp_avg_sq;
    for (size_t j = 0; j < n; j++)
      if (pl.beta2 * (double)v[j] + pl.one_minus_beta2 * (double)g[j] * (double)g[j] > limit)
        return muonref_fail(err, MUONREF_ENUMERIC,
                            "Step for parameter %zu would overflow binary32: the second moment at element %zu exceeds %g",
                            i, j, limit);
  }
  return MUONREF_OK;
}

#ifdef MUONREF_TEST_HOOKS
/* The fault megatron_clip_update: the coefficient from the global norm of
 * the Muon parameters' Newton-Schulz outputs (opt->pending), applied to
 * them; the gradients were left unclipped (clip_prepare). */
static void clip_update_fault(muonref_optimizer *opt)
{
  if (!FAULT_IS(opt, MEGATRON_CLIP_UPDATE) || !opt->clipped)
    return;
  double sumsq = 0.0;
  for (int pass = 0; pass < 2; pass++) {
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
}
#endif

/* Sets opt->gptr[i], the gradient parameter i steps with: grads[i].data,
 * or missing_grad's, or (clip_grad_norm > 0 and the global norm above it)
 * its clipped copy in opt->clipped (core/grad.c: the coefficient from the
 * binary64 norm of every present gradient, each value R32(g R32(c))). */
static void clip_prepare(muonref_optimizer *opt, const muonref_grad *grads)
{
  double sumsq = 0.0;
  for (size_t i = 0; i < opt->n_params; i++) {
    opt->gptr[i] = grads[i].data ? grads[i].data : missing_grad(opt, &opt->params[i]);
    if (opt->clipped && grads[i].data)
      sumsq += muonref_grad_sumsq(grads[i].data, opt->params[i].route.numel);
  }
  double c = opt->clipped ? muonref_clip_coeff(opt->groups[0].clip_grad_norm, sqrt(sumsq)) : 1.0;
  if (c == 1.0 || FAULT_IS(opt, MEGATRON_CLIP_UPDATE))
    return;
  for (size_t i = 0; i < opt->n_params; i++) {
    if (!grads[i].data)
      continue;
    float *d = opt->clipped + opt->clip_off[i];
    memcpy(d, grads[i].data, opt->params[i].route.numel * sizeof(float));
    muonref_clip_scale(d, opt->params[i].route.numel, c);
    opt->gptr[i] = d;
  }
}

/* keras (all_missing_error): a step in which no parameter has a gradient
 * (nor a zero-filled one) is refused, base_optimizer.py
 * _filter_empty_gradients: `raise ValueError("No gradients provided for any
 * variable.")`.  An optimizer without parameters steps as before. */
static int all_missing(const muonref_optimizer *opt, const muonref_grad *grads, muonref_error *err)
{
  int refuse = 0;
  for (size_t i = 0; i < opt->n_params; i++) {
    if (grads[i].data || missing_grad(opt, &opt->params[i]))
      return MUONREF_OK;
    refuse |= opt->params[i].options->all_missing_error;
  }
  return refuse ? muonref_fail(err, MUONREF_EOPTION, "No gradients provided for any variable.") : MUONREF_OK;
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

int muonref_optimizer_step(muonref_optimizer *opt, size_t n_params, float *const *params,
                           const muonref_grad *grads, muonref_error *err)
{
  if (!opt || !params || !grads)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_step: opt, params and grads must not be NULL");
  if (n_params != opt->n_params)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_step: n_params is %zu, the optimizer has %zu parameters",
                        n_params, opt->n_params);
  int st;
  for (size_t i = 0; i < opt->n_params; i++) {
    st = muonref_grad_check(&grads[i], i, opt->params[i].route.numel, err);
    if (st && !(FAULT_IS(opt, NONFINITE_ACCEPTED) && st == MUONREF_ENONFINITE))
      return st;
    if (!st && grads[i].data && !params[i])
      return muonref_fail(err, MUONREF_EOPTION, "muonref_optimizer_step: params[%zu] is NULL", i);
  }
  clip_prepare(opt, grads);
  for (size_t i = 0; i < opt->n_params; i++) {
    /* as before: only a gradient that passed its check (the fault nonfinite_accepted lets others through) */
    int st = grads[i].data && !muonref_grad_check(&grads[i], i, opt->params[i].route.numel, NULL)
                 ? range_check(opt, i, opt->gptr[i], err) : MUONREF_OK;
    if (st)
      return st;
  }
  if ((st = all_missing(opt, grads, err)) || (st = step_counts_fit(opt, err)))
    return st;
  /* Phase 1: compute every parameter's step and check what would be
   * stored; nothing is written, so a refused step changes nothing. */
  for (size_t i = 0; i < opt->n_params; i++) {
    param *p = &opt->params[i];
    const float *g = opt->gptr[i];
    if (!g)
      continue;
    st = p->route.use_muon ? muon_compute(opt, i, params[i], g, err)
                               : adamw_step(opt, i, p->state.step + 1, params[i], g, 0, err);
    if (st)
      return st;
  }
  MUONREF_HOOK(clip_update_fault(opt));
  /* Phase 2: store. */
  for (size_t i = 0; i < opt->n_params; i++) {
    param *p = &opt->params[i];
    const float *g = opt->gptr[i];
    if (!g) {
      muonref_state_missing_grad(p->options, &p->route, &p->state); /* keras: the optimizer's count */
      continue;
    }
    p->state.initialized = 1;
    p->state.step++;
    if (p->route.use_muon)
      muon_apply(opt, p, params[i], g);
    else
      adamw_step(opt, i, p->state.step, params[i], g, 1, NULL);
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
  if (!st->initialized) {
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
