/* muonref: the fast Muon optimizer with AdamW fallback for float32
 * parameters (spec/muon.md, "The step").
 *
 * The optimizer is built from parameter groups (shapes and options), like a
 * PyTorch optimizer; the caller owns the parameter and gradient arrays and
 * hands them to each step, the optimizer owns the state. */
#ifndef MUONREF_OPTIMIZER_H
#define MUONREF_OPTIMIZER_H

#include "muonref/api.h"
#include <stddef.h>
#include "muonref/options.h"
#include "muonref/route.h"
#include "muonref/grad.h"
#include "muonref/param_state.h"

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

/* Creates an optimizer over the parameters of n_groups groups, numbered in
 * group order (group 0's parameters first).  Validates every group's options
 * (muonref_options_validate) and routes every shape (muonref_route_param).
 * Returns the optimizer, or NULL with err set (MUONREF_EOPTION,
 * MUONREF_ESHAPE with the message of the offending group, MUONREF_ENOMEM).
 * MUONREF_EOPTION names the argument for impossible arguments: groups NULL
 * with n_groups > 0 ("muonref_optimizer_create: groups is NULL and n_groups
 * is 1"), a group's shapes NULL with n_params > 0, parameter counts whose
 * sum passes what memory can hold (a sum that would wrap past SIZE_MAX).
 * The groups are copied; the caller keeps ownership of its arrays. */
MUONREF_API muonref_optimizer *muonref_optimizer_create(const muonref_group *groups, size_t n_groups,
                                                        muonref_error *err);

/* muonref_optimizer_create with the parameters' names, for the name rules
 * of route_rule NDIM_2_3 (Paddle's exclude patterns) and NDIM_2 (keras'
 * exclude_layers and exclude_embeddings; muonref_route_param_named):
 * names[k] is the name of parameter k in the optimizer's numbering (group
 * 0's parameters first), NULL for none; names NULL: no parameter has a name
 * (the same as muonref_optimizer_create).  The names are read during the
 * call only. */
MUONREF_API muonref_optimizer *muonref_optimizer_create_named(const muonref_group *groups, size_t n_groups,
                                                              const char *const *names, muonref_error *err);

/* Frees the optimizer and its state (NULL is a no-op). */
MUONREF_API void muonref_optimizer_free(muonref_optimizer *opt);

/* Number of parameters (the n_params every step takes; 0 for opt NULL),
 * and the routing of parameter i (owned by opt, valid until
 * muonref_optimizer_free; NULL for i out of range or opt NULL). */
MUONREF_API size_t muonref_optimizer_param_count(const muonref_optimizer *opt);
MUONREF_API const muonref_route *muonref_optimizer_route(const muonref_optimizer *opt, size_t i);

/* One step over all n_params parameters of opt.  n_params must equal
 * muonref_optimizer_param_count(opt); params and grads hold n_params
 * entries each, in parameter order (group 0's parameters first).
 * params[i] is parameter i's float32 array (numel floats of its shape,
 * row-major), updated in place; grads[i] is its gradient (data NULL: no
 * gradient, the parameter and its state are left as they are).  The caller
 * owns every array; the optimizer keeps no pointer to them.
 * Every gradient is checked first (muonref_grad_check); on any failure
 * nothing is written: parameters and state stay as they were.  The whole
 * step is then computed (every Newton-Schulz output kept in a buffer the
 * optimizer allocates at creation, as large as its Muon parameters) and
 * every value it would store is checked before the first is written: a
 * step whose momentum, Newton-Schulz output or parameters would not be
 * finite binary32 values (gradients near FLT_MAX, an element that rounds
 * to bf16 infinity, coefficients that make the iteration diverge) is
 * refused the same way with MUONREF_ENUMERIC ("Step for parameter I would
 * overflow binary32: ..."), never stored as Inf or NaN.  Under
 * grad_accumulation N (options.h, spec/muon.md 3.3) a step that is not a
 * parameter's N-th micro-step only adds its gradient into the parameter's
 * accumulator (a sum that is not finite is refused the same way: "Step for
 * parameter I would overflow binary32: its accumulated gradient
 * (grad_accumulation) is not finite").
 * Returns MUONREF_OK, MUONREF_EGRAD, MUONREF_ENONFINITE, MUONREF_ENUMERIC,
 * MUONREF_EOPTION (NULL opt, params or grads; params[i] NULL where grads[i]
 * has data; "muonref_optimizer_step: n_params is N, the optimizer has M
 * parameters" when the counts differ), MUONREF_ESTATE when a step count it
 * would advance is already MUONREF_MAX_STEP (a state imported at the limit:
 * "Step for parameter 0: its step count is 9007199254740992, the most a
 * state may count (MUONREF_MAX_STEP, 2^53)"; nothing is written) or
 * MUONREF_ENOMEM. */
MUONREF_API MUONREF_NODISCARD int muonref_optimizer_step(muonref_optimizer *opt, size_t n_params,
                                                         float *const *params, const muonref_grad *grads,
                                                         muonref_error *err);

/* A view of parameter i's state into *out (the optimizer owns the buffers:
 * numel floats each, read-only for the caller; the pointers stay valid
 * until the next step, set_state, load or free).  Returns MUONREF_OK, or
 * MUONREF_EOPTION ("State for parameter I: the optimizer has N parameters")
 * for an index out of range or NULL opt or out, *out then untouched. */
MUONREF_API MUONREF_NODISCARD int muonref_optimizer_state(const muonref_optimizer *opt, size_t i,
                                                          muonref_param_state *out, muonref_error *err);

/* Replaces parameter i's state by a copy of *st (st's buffers, numel floats
 * each, stay the caller's).  An uninitialized *st clears the state.  Errors leave the state unchanged: MUONREF_ESTATE when
 * st->use_muon differs from the parameter's routing, st->numel from its size,
 * a needed buffer is NULL, step < 1 for an initialized state, step above
 * MUONREF_MAX_STEP, initialized or use_muon not 0 or 1, or st NULL,
 * accum_calls outside 0..N-1 under the options' grad_accumulation N (0
 * without it; grad_accum NULL reads as zeros); also
 * MUONREF_ENONFINITE for a non-finite buffer value, MUONREF_ENOMEM;
 * MUONREF_EOPTION for opt NULL. */
MUONREF_API MUONREF_NODISCARD int muonref_optimizer_set_state(muonref_optimizer *opt, size_t i,
                                                              const muonref_param_state *st, muonref_error *err);

/* The optimizer's groups as created: their number (0 for opt NULL), the
 * options of group g (NULL for g out of range or opt NULL; the pointer lives
 * as long as opt), and the group and shape of parameter i into *group and
 * *shape (either may be NULL; MUONREF_EOPTION, no message, for i out of
 * range or opt NULL).
 * Used by the state file (state.h) to record and compare them. */
MUONREF_API size_t muonref_optimizer_group_count(const muonref_optimizer *opt);
MUONREF_API const muonref_options *muonref_optimizer_group_options(const muonref_optimizer *opt, size_t g);
MUONREF_API MUONREF_NODISCARD int muonref_optimizer_param_info(const muonref_optimizer *opt, size_t i, size_t *group, muonref_shape *shape);

/* Floats of Newton-Schulz workspace the optimizer holds (sized once at
 * creation for its largest Muon matrix; no allocation inside a step; 0 for
 * opt NULL). */
MUONREF_API size_t muonref_optimizer_workspace_floats(const muonref_optimizer *opt);

#ifdef __cplusplus
}
#endif
#endif
