/* muonref: a vector case on the fast path (see run_fast.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fast/faults.h"
#include "fast/ns_internal.h"
#include "fast/optimizer_internal.h"
#include "vectors/format/case.h"
#include "muonref/bf16.h"
#include "muonref/profile.h"
#include "vectors/judge/run_fast.h"
#include "core/fail.h"
#include "core/plan.h"
#include "vectors/judge/judge.h"

static json_t *error_result(const char *message)
{
  json_t *r = json_object();
  json_object_set_new(r, "error", json_string(message));
  return r;
}

/* The parameters of a step case: their initial tensors. */
typedef struct run {
  size_t n;
  muonref_tensor *params;
  muonref_shape *shapes;   /* in group order, for the optimizer */
  const char **names;      /* in group order: params[i].name (borrowed from the case), for routing by name */
  size_t *order;           /* order[k]: parameter index of group slot k */
  muonref_group *groups;
  size_t n_groups;
  float **before;          /* grad_after: each parameter before the case's last step (decay_method L2) */
} run;

static void run_free(run *r)
{
  for (size_t i = 0; r->params && i < r->n; i++)
    muonref_tensor_free(&r->params[i]), free(r->before ? r->before[i] : NULL);
  free(r->before);
  free(r->params), free(r->shapes), free(r->order), free(r->groups), free(r->names);
}

static int load_params(run *r, const json_t *test, const char *where, muonref_error *err)
{
  const json_t *ps = json_object_get(test, "params");
  if (!json_is_array(ps))
    return muonref_fail(err, MUONREF_EFORMAT, "%s: \"params\" must be an array", where);
  r->n = json_array_size(ps);
  r->params = calloc(r->n + 1, sizeof *r->params);
  for (size_t i = 0; i < r->n; i++) {
    char w[512];
    snprintf(w, sizeof w, "%s.params[%zu].init", where, i);
    int st = muonref_tensor_from_json(&r->params[i], json_object_get(json_array_get(ps, i), "init"), w, err);
    if (st)
      return st;
    if (r->params[i].dtype == MUONREF_TENSOR_F64)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameters must be f32 or bf16", w);
  }
  return MUONREF_OK;
}

/* Groups: options (may fail with the catalogue's EOPTION) and slots. */
static int load_groups(run *r, const json_t *test, const char *profile, muonref_ns_format format,
                       const char *where, muonref_error *err)
{
  const json_t *gs = json_object_get(test, "groups");
  if (!json_is_array(gs))
    return muonref_fail(err, MUONREF_EFORMAT, "%s: \"groups\" must be an array", where);
  r->n_groups = json_array_size(gs);
  r->groups = calloc(r->n_groups + 1, sizeof *r->groups);
  r->shapes = calloc(r->n + 1, sizeof *r->shapes);
  r->names = calloc(r->n + 1, sizeof *r->names);
  r->order = calloc(r->n + 1, sizeof *r->order);
  if (!r->groups || !r->shapes || !r->order || !r->names)
    return muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory for the groups", where);
  const json_t *ps = json_object_get(test, "params");
  size_t slot = 0;
  for (size_t g = 0; g < r->n_groups; g++) {
    char w[512];
    const json_t *gj = json_array_get(gs, g), *idx = json_object_get(gj, "params");
    snprintf(w, sizeof w, "%s.groups[%zu]", where, g);
    int st = muonref_case_options(json_object_get(gj, "options"), profile, &r->groups[g].options, w, err);
    if (st)
      return st;
    r->groups[g].options.ns_format = format;
    r->groups[g].shapes = r->shapes + slot;
    for (size_t k = 0; k < json_array_size(idx); k++, slot++) {
      json_int_t i = json_integer_value(json_array_get(idx, k));
      if (i < 0 || (size_t)i >= r->n || slot >= r->n)
        return muonref_fail(err, MUONREF_EFORMAT, "%s.params[%zu]: not a parameter index", w, k);
      r->order[slot] = (size_t)i;
      r->shapes[slot] = r->params[i].shape;
      r->names[slot] = json_string_value(json_object_get(json_array_get(ps, (size_t)i), "name"));
    }
    r->groups[g].n_params = json_array_size(idx);
  }
  if (slot != r->n)
    return muonref_fail(err, MUONREF_EFORMAT, "%s: the groups list %zu parameters, \"params\" has %zu", where, slot,
                        r->n);
  return MUONREF_OK;
}

/* Whether the parameter of optimizer slot s is a bf16 one stepped as its
 * float32 master weight (master_weights, Paddle's multi_precision:
 * spec/muon.md 10): its values in r are the master, which the step leaves
 * unrounded, and the port's bf16 parameter is their rounding (step_result). */
static int master_weight(const muonref_optimizer *opt, const run *r, size_t s)
{
  size_t g;
  return r->params[r->order[s]].dtype == MUONREF_TENSOR_BF16 && !muonref_optimizer_param_info(opt, s, &g, NULL) &&
         muonref_optimizer_group_options(opt, g)->master_weights;
}

/* A fresh optimizer holding opt's state (the round trip of spec/vectors.md 2.1, checkpoint 1; or the
 * carrying of set_options, 0); under the fault state_dropped_on_load a checkpoint's buffers are zeros (the
 * momentum, the moments, the second moment), its step counts kept; under master_lost_on_load a
 * checkpoint's master weights (r's values of a master_weight parameter) are lost and made anew from the
 * bf16 parameters, their rounding.  Errors: the optimizer's, ENOMEM. */
static muonref_optimizer *round_trip(muonref_optimizer *opt, run *r, int fault, int checkpoint, muonref_error *err)
{
  muonref_optimizer *fresh = muonref_optimizer_create_named_fault(r->groups, r->n_groups, r->names, fault, err);
  int zero = checkpoint && fault == MUONREF_FAULT_STATE_DROPPED_ON_LOAD;
  for (size_t s = 0; checkpoint && fault == MUONREF_FAULT_MASTER_LOST_ON_LOAD && s < r->n; s++)
    if (master_weight(opt, r, s))
      muonref_bf16_round_array(r->params[r->order[s]].f, r->params[r->order[s]].numel);
  for (size_t s = 0; fresh && s < r->n; s++) {
    muonref_param_state st;
    float *z = NULL;
    int st_ = muonref_optimizer_state(opt, s, &st, err);
    if (!st_ && zero && (st.initialized || st.grad_accum || st.ema_average)) {
      size_t n = st.numel > st.moment2_numel ? st.numel : st.moment2_numel;
      if (!(z = calloc(n + 1, sizeof(float))))
        st_ = muonref_fail(err, MUONREF_ENOMEM, "Out of memory for a zeroed state");
      st.momentum_buffer = st.momentum_buffer ? z : NULL, st.exp_avg = st.exp_avg ? z : NULL;
      st.exp_avg_sq = st.exp_avg_sq ? z : NULL, st.moment2 = st.moment2 ? z : NULL;
      st.grad_accum = st.grad_accum ? z : NULL, st.ema_average = st.ema_average ? z : NULL;
    }
    if (st_ || muonref_optimizer_set_state(fresh, s, &st, err)) {
      muonref_optimizer_free(fresh);
      fresh = NULL;
    }
    free(z);
  }
  muonref_optimizer_free(opt);
  return fresh;
}

/* Before step k: a step's "setOptions" (format 2, spec/vectors.md 2.8)
 * set in every group as a scheduler sets param_groups.  The fast optimizer
 * fixes its groups' options at creation, so the change is made as PyTorch
 * keeps it: the state (buffers, moments, step counts) carried into a fresh
 * optimizer over the changed groups (the state round trip, which checks
 * that every parameter keeps its branch).  The fault cached_group_options
 * is a port that never sees the change.  Errors: MUONREF_EFORMAT for a
 * malformed entry (validate.c refuses it first), the optimizer's own. */
static int set_options(muonref_optimizer **opt, run *r, const json_t *test, const json_t *step, const char *profile,
                       int fault, const muonref_run_edit *x, size_t k, const char *where, muonref_error *err)
{
  const json_t *set = json_object_get(step, "setOptions");
  if (!set || fault == MUONREF_FAULT_CACHED_GROUP_OPTIONS)
    return MUONREF_OK;
  if (!json_is_array(set) || json_array_size(set) != r->n_groups)
    return muonref_fail(err, MUONREF_EFORMAT, "%s.steps[%zu].setOptions must be an array of %zu objects, one per group",
                        where, k, r->n_groups);
  for (size_t g = 0; g < r->n_groups; g++) {
    char w[512];
    snprintf(w, sizeof w, "%s.steps[%zu].setOptions[%zu]", where, k, g);
    int st = muonref_case_step_options(json_array_get(set, g), profile, &r->groups[g].options, w, err);
    if (st)
      return st;
    if (x && x->edit) {
      const muonref_options read = r->groups[g].options;
      x->edit(x->ctx, json_object_get(json_array_get(json_object_get(test, "groups"), g), "options"), &read,
              &r->groups[g].options);
    }
  }
  if (!(*opt = round_trip(*opt, r, fault, 0, err)))
    return err->status;
  return MUONREF_OK;
}

/* r->before: a copy of every parameter (before the last step). */
static int keep_before(run *r, muonref_error *err)
{
  if (!r->before && !(r->before = calloc(r->n + 1, sizeof *r->before)))
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the parameters before the last step");
  for (size_t i = 0; i < r->n; i++) {
    size_t n = r->params[i].numel;
    if (!r->before[i] && !(r->before[i] = malloc(n * sizeof(float) + 1)))
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the parameters before the last step");
    memcpy(r->before[i], r->params[i].f, n * sizeof(float));
  }
  return MUONREF_OK;
}

/* The refusal of a profile whose port refuses bf16 parameters at its first step (the record's
 * bf16_refusal, spec/vectors.md 2.1), where a parameter that takes Muon is bf16: an error result
 * with the port's message; NULL otherwise. */
static json_t *bf16_refused(const muonref_optimizer *opt, const run *r, const char *profile)
{
  const muonref_profile *p = muonref_profile_get(profile);
  if (!p || !p->bf16_refusal_message)
    return NULL;
  for (size_t s = 0; s < r->n; s++) {
    const muonref_route *rt = muonref_optimizer_route(opt, s);
    if (r->params[r->order[s]].dtype == MUONREF_TENSOR_BF16 && rt && rt->use_muon)
      return error_result(p->bf16_refusal_message);
  }
  return NULL;
}

/* The fault torch_alias_buffer on a bf16 buffer b of n elements: b / max(||b||_F, eps) as
 * torch.optim.Muon 098e03f's `ortho_grad.div_(ortho_grad.norm().clamp(min=eps))` leaves it when
 * `ortho_grad` is the buffer itself: the norm rounded once to bf16, each quotient too. */
static void alias_normalise(float *b, size_t n, double eps)
{
  double ss = 0.0;
  for (size_t j = 0; j < n; j++)
    ss += (double)b[j] * b[j];
  double norm = fmax((double)muonref_bf16_round_double(sqrt(ss)), eps);
  for (size_t j = 0; j < n; j++)
    b[j] = muonref_bf16_round_double(b[j] / norm);
}

/* The fault pytorch_optimizer_alias_iterate on the bf16 Newton-Schulz input b, the (rows, cols)
 * row-major matrix of a Muon parameter (its first dimension by the rest): what
 * zero_power_via_newton_schulz_5 leaves in it when `g.bfloat16()` is g itself.  A tall matrix
 * holds the normalised input (the transposed view is divided in place, then `contiguous()`
 * copies it); a wide or square one the iterate of the largest even step count <= ns_steps
 * (`out=c` then `x, c = c, x` writes steps 2, 4, ... into it), computed by the fast path in
 * bf16 under o.  A matrix the fast path refuses keeps the normalised input. */
static void alias_iterate(float *b, size_t rows, size_t cols, const muonref_options *o)
{
  muonref_options k = *o;
  k.ns_steps = o->ns_steps / 2 * 2;
  k.ns_format = MUONREF_NS_BF16;
  float *out = rows > cols || !k.ns_steps ? NULL : malloc(rows * cols * sizeof *out + 1);
  if (out && muonref_fast_ns(out, b, rows, cols, &k, NULL, NULL) == MUONREF_OK)
    memcpy(b, out, rows * cols * sizeof *out);
  else
    alias_normalise(b, rows * cols, o->ns_eps);
  free(out);
}

/* A bf16 parameter (area dtypes, spec/vectors.md 2.1) as a port that
 * stores it in bf16 keeps it: after each step the parameter and every
 * buffer of its state rounded to bf16 (nearest even), the rounding a
 * PyTorch port's in-place bf16 operations make (once per step here; a port
 * rounds after each operation, within the case's allowance), except one with
 * a master weight (master_weight: Paddle keeps every state float32); under the fault
 * torch_alias_buffer the buffer normalised as that port leaves it.  Errors:
 * muonref_optimizer_set_state's (ENONFINITE where a buffer rounds to bf16
 * infinity), ENOMEM. */
static int store_bf16(muonref_optimizer *opt, run *r, int fault, muonref_error *err)
{
  for (size_t s = 0; s < r->n; s++) {
    muonref_tensor *p = &r->params[r->order[s]];
    muonref_param_state st;
    size_t g;
    if (p->dtype != MUONREF_TENSOR_BF16 || master_weight(opt, r, s))
      continue;
    muonref_bf16_round_array(p->f, p->numel);
    int res = muonref_optimizer_state(opt, s, &st, err);
    if (res)
      return res;
    if (!st.initialized) /* no gradient yet: no state to store */
      continue;
    const muonref_options *o =
      muonref_optimizer_param_info(opt, s, &g, NULL) ? NULL : muonref_optimizer_group_options(opt, g);
    float *bufs[] = {st.momentum_buffer, st.exp_avg, st.exp_avg_sq, st.moment2};
    size_t lens[] = {st.numel, st.numel, st.numel, st.moment2_numel};
    float *copy[4] = {NULL};
    for (int b = 0; !res && b < 4; b++) {
      if (!bufs[b])
        continue;
      if (!(copy[b] = malloc(lens[b] * sizeof(float) + 1))) {
        res = muonref_fail(err, MUONREF_ENOMEM, "Out of memory for a bf16 state");
        break;
      }
      memcpy(copy[b], bufs[b], lens[b] * sizeof(float));
      muonref_bf16_round_array(copy[b], lens[b]);
    }
    if (!res && fault == MUONREF_FAULT_TORCH_ALIAS_BUFFER && st.use_muon && o && !o->nesterov && copy[0])
      alias_normalise(copy[0], st.numel, o->ns_eps);
    if (!res && fault == MUONREF_FAULT_PYTORCH_OPTIMIZER_ALIAS_ITERATE && st.use_muon && o && !o->nesterov && copy[0] &&
        p->shape.ndim >= 2)
      alias_iterate(copy[0], p->shape.dims[0], st.numel / p->shape.dims[0], o);
    st.momentum_buffer = copy[0], st.exp_avg = copy[1], st.exp_avg_sq = copy[2], st.moment2 = copy[3];
    if (!res)
      res = muonref_optimizer_set_state(opt, s, &st, err);
    for (int b = 0; b < 4; b++)
      free(copy[b]);
    if (res)
      return res;
  }
  return MUONREF_OK;
}

/* The model loaded in another dtype at the round trip (the case's "roundTripDtype", spec/vectors.md
 * 2.1): every parameter takes that dtype; in bf16 the parameter and its state are rounded to bf16, as
 * PyTorch's Optimizer.load_state_dict casts floating state to its parameter's dtype.  No effect
 * without the member.  Errors: store_bf16's. */
static int load_as_dtype(muonref_optimizer *opt, run *r, const json_t *test, muonref_error *err)
{
  const char *dt = json_string_value(json_object_get(test, "roundTripDtype"));
  if (!dt)
    return MUONREF_OK;
  for (size_t i = 0; i < r->n; i++)
    r->params[i].dtype = !strcmp(dt, "bf16") ? MUONREF_TENSOR_BF16 : MUONREF_TENSOR_F32;
  return store_bf16(opt, r, 0, err);
}

/* Steps first..last-1 of the case on *opt, each after its option changes
 * (which replace *opt: set_options). */
static int run_steps(muonref_optimizer **opt, run *r, const json_t *test, size_t first, size_t last,
                     const char *profile, int fault, const muonref_run_edit *x, const char *where, muonref_error *err)
{
  const json_t *steps = json_object_get(test, "steps");
  float **ptrs = calloc(r->n + 1, sizeof *ptrs);
  muonref_grad *grads = calloc(r->n + 1, sizeof *grads);
  muonref_tensor *gt = calloc(r->n + 1, sizeof *gt);
  int st = MUONREF_OK;
  for (size_t k = first; !st && k < last; k++) {
    const json_t *gl = json_object_get(json_array_get(steps, k), "grads");
    if ((st = set_options(opt, r, test, json_array_get(steps, k), profile, fault, x, k, where, err)))
      break;
    for (size_t s = 0; !st && s < r->n; s++) {
      char w[512];
      size_t i = r->order[s];
      snprintf(w, sizeof w, "%s.steps[%zu].grads[%zu]", where, k, i);
      ptrs[s] = r->params[i].f;
      st = muonref_case_grad(json_array_get(gl, i), r->params[i].numel, &gt[s], &grads[s], w, err);
    }
    if (!st && x && x->grad_after && k + 1 == json_array_size(steps))
      st = keep_before(r, err);
    if (!st)
      st = muonref_optimizer_step(*opt, r->n, ptrs, grads, err);
    if (!st)
      st = store_bf16(*opt, r, fault, err);
    for (size_t s = 0; s < r->n; s++)
      muonref_tensor_free(&gt[s]);
  }
  free(ptrs), free(grads), free(gt);
  return st;
}

static json_t *step_result(muonref_optimizer *opt, run *r)
{
  json_t *res = json_object(), *ps = json_array(), *sts = json_array();
  for (size_t i = 0; i < r->n; i++) {
    json_array_append_new(ps, muonref_tensor_to_json(&r->params[i], 0));
    json_array_append_new(sts, json_null());
  }
  for (size_t s = 0; s < r->n; s++) {
    muonref_param_state st;
    if (muonref_optimizer_state(opt, s, &st, NULL)) /* s < r->n, the optimizer's count: never */
      continue;
    const muonref_shape *sh = &r->params[r->order[s]].shape;
    size_t g;
    muonref_shape m2 = {0, {0}};
    if (!muonref_optimizer_param_info(opt, s, &g, NULL))
      m2 = muonref_moment2_shape(muonref_optimizer_group_options(opt, g), muonref_optimizer_route(opt, s), sh);
    json_t *sj = muonref_case_state_json(&st, sh, &m2);
    if (master_weight(opt, r, s) && json_is_object(sj)) { /* the master, and the bf16 parameter its rounding */
      muonref_tensor *p = &r->params[r->order[s]], q = *p;
      json_object_set_new(sj, "master", muonref_case_tensor_f32_json(p->f, sh));
      if ((q.f = malloc(p->numel * sizeof(float) + 1))) {
        memcpy(q.f, p->f, p->numel * sizeof(float));
        muonref_bf16_round_array(q.f, p->numel);
        json_array_set_new(ps, r->order[s], muonref_tensor_to_json(&q, 0));
        free(q.f);
      }
    }
    json_array_set_new(sts, r->order[s], sj);
  }
  json_object_set_new(res, "params", ps);
  json_object_set_new(res, "state", sts);
  return res;
}

/* What p.grad holds after the last step under the run's options (see
 * muonref_run_edit.grad_after): "gradAfter" and "gradAfterAtol" into res. */
static void grad_after(json_t *res, muonref_optimizer *opt, run *r, const json_t *test, int fault)
{
  const json_t *steps = json_object_get(test, "steps");
  const json_t *gl = json_object_get(json_array_get(steps, json_array_size(steps) - 1), "grads");
  json_t *ga = json_array(), *at = json_array();
  for (size_t i = 0; i < r->n; i++)
    json_array_append_new(ga, json_null()), json_array_append_new(at, json_real(0.0));
  size_t slot = 0;
  for (size_t g = 0; g < r->n_groups; g++)
    for (size_t k = 0; k < r->groups[g].n_params; k++, slot++) {
      const muonref_options *o = &r->groups[g].options;
      size_t i = r->order[slot], n = r->params[i].numel;
      muonref_tensor gt = {0};
      muonref_grad gd;
      if (muonref_case_grad(json_array_get(gl, i), n, &gt, &gd, "gradAfter", NULL))
        continue;
      muonref_param_state st = {0};
      int have = gd.data != NULL || o->missing_grad == MUONREF_MISSING_GRAD_ZEROS;
      int known = muonref_optimizer_state(opt, slot, &st, NULL) == MUONREF_OK && st.initialized;
      int muon = known && st.use_muon && st.momentum_buffer, adam = known && !st.use_muon;
      muonref_muon_plan pl = {0};
      muonref_route rt = {0};
      if (muon && muonref_route_param_named(o, &r->params[i].shape, r->names[slot], &rt, NULL) == MUONREF_OK) {
        muonref_muon_plan_make(o, &rt, &pl);
        muonref_fault_muon_plan(fault, g, o, &r->params[i].shape, &pl);
      }
      int u = muon && muonref_grad_holds_nesterov_input(o, pl.nesterov);
      double wd = muon ? pl.l2 : adam ? muonref_l2_coeff(o, 0) : 0.0;
      int l2 = (muon || adam) && gd.data && wd != 0.0 && r->before && /* p.grad += wd P before the momentum */
               muonref_l2_in_grad(o, muon);
      if (have) {
        muonref_tensor out;
        muonref_tensor_alloc(&out, MUONREF_TENSOR_F32, &r->params[i].shape, NULL);
        if (gd.data) /* maximize: p.grad negated in place first */
          muonref_grad_used(gt.f, gt.f, n, o->maximize, 1.0);
        if (l2)
          muonref_l2_grad(gt.f, gt.f, r->before[i], n, wd);
        double big = 0;
        for (size_t j = 0; j < n; j++) {
          double gj = gd.data ? gt.f[j] : 0.0, mj = u ? st.momentum_buffer[j] : 0.0;
          out.f[j] = u ? (float)(pl.in_grad * gj + pl.in_mom * mj) : (float)gj;
          big = fmax(big, fmax(fabs(gj), fabs(mj)));
        }
        if (fault == MUONREF_FAULT_PYTORCH_OPTIMIZER_ALIAS_ITERATE && u && r->params[i].dtype == MUONREF_TENSOR_BF16 &&
            r->params[i].shape.ndim >= 2) { /* the bf16 Nesterov input in p.grad is the iteration's input */
          muonref_bf16_round_array(out.f, n);
          alias_iterate(out.f, r->params[i].shape.dims[0], n / r->params[i].shape.dims[0], o);
        }
        json_array_set_new(ga, i, muonref_tensor_to_json(&out, 0));
        json_array_set_new(at, i, json_real(muonref_grad_after_atol(u, l2, big, 0.0,
                                                                    r->params[i].dtype == MUONREF_TENSOR_BF16)));
        muonref_tensor_free(&out);
      }
      muonref_tensor_free(&gt);
    }
  json_object_set_new(res, "gradAfter", ga);
  json_object_set_new(res, "gradAfterAtol", at);
}

static json_t *run_step_case(const json_t *test, const char *profile, muonref_ns_format format, int fault,
                             const muonref_run_edit *x, const char *where, muonref_error *err)
{
  run r = {0};
  json_t *res = NULL;
  muonref_optimizer *opt = NULL;
  const json_t *steps = json_object_get(test, "steps");
  size_t n_steps = json_array_size(steps);
  const json_t *rtj = json_object_get(test, "roundTripAfter");
  json_int_t rt = json_integer_value(rtj);
  if (!json_is_array(steps) || n_steps == 0) {
    muonref_fail(err, MUONREF_EFORMAT, "%s: \"steps\" must be a non-empty array", where);
    return NULL;
  }
  if (rtj && (!json_is_integer(rtj) || rt < 1 || (size_t)rt >= n_steps)) {
    muonref_fail(err, MUONREF_EFORMAT, "%s: \"roundTripAfter\" must be an integer from 1 to %zu (steps - 1)", where,
                 n_steps - 1);
    return NULL;
  }
  int st = load_params(&r, test, where, err);
  if (!st)
    st = load_groups(&r, test, profile, format, where, err);
  if (st == MUONREF_EOPTION || st == MUONREF_ESHAPE) {
    res = error_result(err->message);
    goto done;
  }
  if (st)
    goto done;
  /* the fault's option values, set as a port would: on options it has
   * validated (invalid ones are refused by the optimizer as they are) */
  for (size_t g = 0; g < r.n_groups; g++)
    if (muonref_options_validate(&r.groups[g].options, NULL) == MUONREF_OK) {
      const muonref_options read = r.groups[g].options; /* as the case gives them */
      muonref_fault_options(fault, &r.groups[g].options);
      /* a default of the port, not an option value: it acts where the
       * case leaves nesterov out (the defaults area) */
      const json_t *oj = json_object_get(json_array_get(json_object_get(test, "groups"), g), "options");
      if (fault == MUONREF_FAULT_NESTEROV_DEFAULT_ON && !json_object_get(oj, "nesterov"))
        r.groups[g].options.nesterov = 1;
      if (fault == MUONREF_FAULT_MEGATRON_NESTEROV_DEFAULT_ON && !json_object_get(oj, "muon_nesterov"))
        r.groups[g].options.nesterov = 1; /* TensorParallelMuon's own default (megatron) */
      if (fault == MUONREF_FAULT_TIMM_USE_FALLBACK_IGNORED && json_is_true(json_object_get(oj, "use_fallback"))) {
        const json_t *um = json_object_get(oj, "use_muon"); /* timm's group key read as if absent */
        r.groups[g].options.use_muon = json_is_boolean(um) ? (json_is_true(um) ? MUONREF_USE_MUON_TRUE
                                                                               : MUONREF_USE_MUON_FALSE)
                                                           : MUONREF_USE_MUON_AUTO;
      }
      if (x && x->edit)
        x->edit(x->ctx, oj, &read, &r.groups[g].options);
    }
  if (!(opt = muonref_optimizer_create_named_fault(r.groups, r.n_groups, r.names, fault, err))) {
    res = err->status == MUONREF_ENOMEM ? NULL : error_result(err->message);
    goto done;
  }
  if ((res = bf16_refused(opt, &r, profile)))
    goto done;
  size_t split = rt > 0 && (size_t)rt < n_steps ? (size_t)rt : n_steps;
  st = run_steps(&opt, &r, test, 0, split, profile, fault, x, where, err);
  if (!st && split < n_steps) {
    if (!(opt = round_trip(opt, &r, fault, 1, err)))
      st = err->status;
    else if (!(st = load_as_dtype(opt, &r, test, err)))
      st = run_steps(&opt, &r, test, split, n_steps, profile, fault, x, where, err);
  }
  if (st == MUONREF_EFORMAT || st == MUONREF_ENOMEM)
    goto done;
  res = st ? error_result(err->message) : step_result(opt, &r);
  if (!st && x && x->grad_after)
    grad_after(res, opt, &r, test, fault);
done:
  muonref_optimizer_free(opt);
  run_free(&r);
  return res;
}

/* NS on the input (and, for "transpose", on its transpose). */
static json_t *run_ns_case(const json_t *test, const char *kind, const char *profile, muonref_ns_format format,
                           int fault, const muonref_run_edit *x, const char *where, muonref_error *err)
{
  muonref_tensor in, out, outT;
  muonref_options o;
  char w[512];
  snprintf(w, sizeof w, "%s.input", where);
  if (muonref_tensor_from_json(&in, json_object_get(test, "input"), w, err))
    return NULL;
  if (in.dtype != MUONREF_TENSOR_F32) { /* validate.c refuses it first; never read in.f of another dtype */
    muonref_tensor_free(&in);
    muonref_fail(err, MUONREF_EFORMAT, "%s: the input must be an f32 tensor", w);
    return NULL;
  }
  if (muonref_ns_check_shape(&in.shape, err)) {
    muonref_tensor_free(&in);
    return error_result(err->message);
  }
  if (muonref_profile_options(profile, &o, err)) { /* never run on uninitialised options */
    muonref_tensor_free(&in);
    muonref_fail(err, MUONREF_EFORMAT, "%s: unknown profile '%s'", where, profile);
    return NULL;
  }
  o.ns_format = format;
  json_t *steps = json_object_get(test, "nsSteps");
  if (steps)
    o.ns_steps = (int)json_integer_value(steps);
  const muonref_options read = o;
  muonref_fault_options(fault, &o);
  if (x && x->edit)
    x->edit(x->ctx, NULL, &read, &o);
  size_t rows = in.shape.dims[0], cols = in.shape.dims[1];
  muonref_tensor_alloc(&out, MUONREF_TENSOR_F32, &in.shape, NULL);
  json_t *res = json_object();
  if (muonref_fast_ns_flags(out.f, in.f, rows, cols, &o, NULL, muonref_fault_ns_flags(fault), err)) {
    json_decref(res);
    res = error_result(err->message);
  } else {
    json_object_set_new(res, "output", muonref_tensor_to_json(&out, 0));
  }
  if (!strcmp(kind, "transpose") && json_object_get(res, "output")) {
    muonref_shape ts = {2, {cols, rows}};
    muonref_tensor inT;
    muonref_tensor_alloc(&inT, MUONREF_TENSOR_F32, &ts, NULL);
    muonref_tensor_alloc(&outT, MUONREF_TENSOR_F32, &ts, NULL);
    for (size_t i = 0; i < rows; i++)
      for (size_t j = 0; j < cols; j++)
        inT.f[j * rows + i] = in.f[i * cols + j];
    muonref_fast_ns_flags(outT.f, inT.f, cols, rows, &o, NULL, muonref_fault_ns_flags(fault), NULL);
    json_object_set_new(res, "outputT", muonref_tensor_to_json(&outT, 0));
    muonref_tensor_free(&inT);
    muonref_tensor_free(&outT);
  }
  muonref_tensor_free(&in);
  muonref_tensor_free(&out);
  return res;
}

json_t *muonref_run_fast(const json_t *test, const char *kind, const char *profile, muonref_ns_format format,
                         int fault, const char *where, muonref_error *err)
{
  return muonref_run_fast_ex(test, kind, profile, format, fault, NULL, where, err);
}

json_t *muonref_run_fast_ex(const json_t *test, const char *kind, const char *profile, muonref_ns_format format,
                            int fault, const muonref_run_edit *x, const char *where, muonref_error *err)
{
  if (!strcmp(kind, "ns") || !strcmp(kind, "transpose") || (!strcmp(kind, "error") && json_object_get(test, "input")))
    return run_ns_case(test, kind, profile, format, fault, x, where, err);
  if (!strcmp(kind, "step") || !strcmp(kind, "error"))
    return run_step_case(test, profile, format, fault, x, where, err);
  muonref_fail(err, MUONREF_EFORMAT, "%s: unknown test kind \"%s\"", where, kind);
  return NULL;
}
