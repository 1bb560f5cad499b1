/* muonref: deliberate faults of the fast path, for mutation testing of the
 * vectors (`muonref check --impl fast-bf16 --fault NAME`).  Each fault is a
 * real difference between Muon ports or a public bug report (the `source`
 * of each entry names it; ../shared/reference/ has the details).  A fault
 * perturbs the options, the routing, the scalar schedule, the
 * Newton-Schulz iteration or the step's gradient handling through the hooks
 * below; fault 0 (MUONREF_FAULT_NONE) is the spec.  Not installed. */
#ifndef MUONREF_FAULTS_H
#define MUONREF_FAULTS_H

#include "muonref/options.h"
#include "muonref/plan.h"
#include "muonref/route.h"

enum {
  MUONREF_FAULT_NONE = 0,
  MUONREF_FAULT_EMA_MOMENTUM,
  MUONREF_FAULT_NESTEROV_IGNORED,
  MUONREF_FAULT_NESTEROV_EMA_BLEND,
  MUONREF_FAULT_WRONG_COEFFICIENT,
  MUONREF_FAULT_BF16_SCALARS,
  MUONREF_FAULT_FOUR_STEPS,
  MUONREF_FAULT_SIX_STEPS,
  MUONREF_FAULT_EPS_CLAMP,
  MUONREF_FAULT_EPS_1E8,
  MUONREF_FAULT_FAN_SWAPPED,
  MUONREF_FAULT_DECAY_SCALED_LR,
  MUONREF_FAULT_DECAY_SKIPPED_GROUP,
  MUONREF_FAULT_DECAY_AFTER_UPDATE,
  MUONREF_FAULT_ADAM_EPS_INSIDE,
  MUONREF_FAULT_ADAM_NO_BIAS_CORRECTION,
  MUONREF_FAULT_ADAM_LR_NO_RATIO,
  MUONREF_FAULT_ADAM_DECAY_MUON_LR,
  MUONREF_FAULT_MISSING_GRAD_AS_ZEROS,
  MUONREF_FAULT_CONV_SCALE_UNFLATTENED,
  MUONREF_FAULT_NO_TRANSPOSE,
  MUONREF_FAULT_MAX_NORM,
  MUONREF_FAULT_THRESHOLD_INCLUSIVE,
  MUONREF_FAULT_ROUTE_ALL_MATRICES,
  MUONREF_FAULT_NONFINITE_ACCEPTED,
  MUONREF_FAULT_STATE_STEP_RESET,
  /* faults of the other profiles' ports (spec/profiles/, each page's section "Faults") */
  MUONREF_FAULT_SUM_MOMENTUM,
  MUONREF_FAULT_EPS_ADD,
  MUONREF_FAULT_NESTEROV_SUM_INPUT,
  MUONREF_FAULT_RMS_AS_FAN_IN,
  MUONREF_FAULT_RMS_WITHOUT_FACTOR,
  MUONREF_FAULT_ADAM_EPS_CORRECTED,
  MUONREF_FAULT_ND_FLATTENED,
  MUONREF_FAULT_FAN_IN_AS_RMS,
  MUONREF_FAULT_COUNT
};

typedef struct muonref_fault_info {
  const char *name;
  const char *description;
  const char *source;
} muonref_fault_info;

/* Fault f's entry (1 <= f < MUONREF_FAULT_COUNT), or NULL. */
const muonref_fault_info *muonref_fault_info_at(int f);

/* The fault named `name`, or -1. */
int muonref_fault_parse(const char *name);

/* Hooks, each a no-op for faults it does not concern.  group is the
 * parameter's group index, shape its shape. */
void muonref_fault_options(int f, muonref_options *o);
void muonref_fault_route(int f, const muonref_options *o, const muonref_shape *s, muonref_route *r);
void muonref_fault_muon_plan(int f, size_t group, const muonref_options *o, const muonref_shape *s,
                             muonref_muon_plan *p);
void muonref_fault_adamw_plan(int f, size_t group, const muonref_options *o, muonref_adamw_plan *p);
unsigned muonref_fault_ns_flags(int f);

#endif
