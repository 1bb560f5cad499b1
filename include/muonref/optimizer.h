/* muonref: the fast Muon optimizer with AdamW fallback for float32
 * parameters (spec/muon.md, "The step").
 *
 * The optimizer is built from parameter groups (shapes and options), like a
 * PyTorch optimizer; the caller owns the parameter and gradient arrays and
 * hands them to each step, the optimizer owns the state. */
#ifndef MUONREF_OPTIMIZER_H
#define MUONREF_OPTIMIZER_H

#include <stddef.h>
#include "muonref/options.h"
#include "muonref/route.h"
#include "muonref/grad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A parameter group: n_params shapes sharing one set of options. */
typedef struct muonref_group {
  muonref_options options;
  size_t n_params;
  const muonref_shape *shapes;
} muonref_group;

typedef struct muonref_optimizer muonref_optimizer;

/* Most steps a state may count (2^53: exactly representable in binary64,
 * the format the bias corrections are computed in). */
#define MUONREF_MAX_STEP (1L << 53)

/* The state of one parameter (spec/muon.md, "State").  initialized is 0
 * until the parameter's first step with a gradient; then use_muon tells the
 * branch, step counts the steps taken, and the branch's buffers hold numel
 * floats each (momentum_buffer for Muon; exp_avg and exp_avg_sq for AdamW;
 * the other pointers are NULL). */
typedef struct muonref_param_state {
  int initialized;
  int use_muon;
  long step;
  size_t numel;
  float *momentum_buffer;
  float *exp_avg;
  float *exp_avg_sq;
} muonref_param_state;

/* Creates an optimizer over the parameters of n_groups groups, numbered in
 * group order (group 0's parameters first).  Validates every group's options
 * (muonref_options_validate) and routes every shape (muonref_route_param).
 * Returns the optimizer, or NULL with err set (MUONREF_EOPTION,
 * MUONREF_ESHAPE with the message of the offending group, MUONREF_ENOMEM).
 * The groups are copied; the caller keeps ownership of its arrays. */
muonref_optimizer *muonref_optimizer_create(const muonref_group *groups, size_t n_groups,
                                            muonref_error *err);

/* Frees the optimizer and its state (NULL is a no-op). */
void muonref_optimizer_free(muonref_optimizer *opt);

/* Number of parameters, and the routing of parameter i. */
size_t muonref_optimizer_param_count(const muonref_optimizer *opt);
const muonref_route *muonref_optimizer_route(const muonref_optimizer *opt, size_t i);

/* One step.  params[i] is parameter i's float array (numel floats,
 * row-major), updated in place; grads[i] is its gradient (data NULL: no
 * gradient, the parameter and its state are left as they are).
 * Every gradient is checked first (muonref_grad_check); on any failure
 * nothing is written: parameters and state stay as they were.  The whole
 * step is then computed (every Newton-Schulz output kept in a buffer the
 * optimizer allocates at creation, as large as its Muon parameters) and
 * every value it would store is checked before the first is written: a
 * step whose momentum, Newton-Schulz output or parameters would not be
 * finite binary32 values (gradients near FLT_MAX, an element that rounds
 * to bf16 infinity, coefficients that make the iteration diverge) is
 * refused the same way with MUONREF_ENUMERIC ("Step for parameter I would
 * overflow binary32: ..."), never stored as Inf or NaN.
 * Returns MUONREF_OK, MUONREF_EGRAD, MUONREF_ENONFINITE, MUONREF_ENUMERIC,
 * MUONREF_EOPTION (NULL params or grads) or MUONREF_ENOMEM. */
int muonref_optimizer_step(muonref_optimizer *opt, float *const *params,
                           const muonref_grad *grads, muonref_error *err);

/* A view of parameter i's state; the pointers stay valid until the next
 * step, import or free.  Returns MUONREF_OK or MUONREF_EOPTION for an index
 * out of range. */
int muonref_optimizer_state(const muonref_optimizer *opt, size_t i, muonref_param_state *out);

/* Replaces parameter i's state by a copy of *st.  An uninitialized *st
 * clears the state.  Errors leave the state unchanged: MUONREF_ESTATE when
 * st->use_muon differs from the parameter's routing, st->numel from its size,
 * a needed buffer is NULL, step < 1 for an initialized state, step above
 * MUONREF_MAX_STEP, initialized or use_muon not 0 or 1, or st NULL; also
 * MUONREF_ENONFINITE for a non-finite buffer value, MUONREF_ENOMEM. */
int muonref_optimizer_set_state(muonref_optimizer *opt, size_t i,
                                const muonref_param_state *st, muonref_error *err);

/* The optimizer's groups as created: their number, the options of group g
 * (NULL for g out of range; the pointer lives as long as opt), and the
 * group and shape of parameter i (MUONREF_EOPTION for i out of range).
 * Used by the state file (state.h) to record and compare them. */
size_t muonref_optimizer_group_count(const muonref_optimizer *opt);
const muonref_options *muonref_optimizer_group_options(const muonref_optimizer *opt, size_t g);
int muonref_optimizer_param_info(const muonref_optimizer *opt, size_t i, size_t *group, muonref_shape *shape);

/* Floats of Newton-Schulz workspace the optimizer holds (sized once at
 * creation for its largest Muon matrix; no allocation inside a step). */
size_t muonref_optimizer_workspace_floats(const muonref_optimizer *opt);

#ifdef __cplusplus
}
#endif
#endif
