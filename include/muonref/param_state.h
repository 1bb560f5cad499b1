/* muonref: the state of one parameter, shared by the fast optimizer
 * (optimizer.h) and the reference step (ref.h): plain data, the caller or
 * the optimizer owns the buffers as each function says. */
#ifndef MUONREF_PARAM_STATE_H
#define MUONREF_PARAM_STATE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most steps a state may count (2^53: exactly representable in binary64,
 * the format the bias corrections are computed in). */
#define MUONREF_MAX_STEP (1L << 53)

/* The state of one parameter (spec/muon.md, "State").  initialized is 0
 * until the parameter's first step with a gradient; then use_muon tells the
 * branch, step counts the steps taken, and the branch's buffers hold numel
 * floats each (momentum_buffer for Muon; exp_avg and exp_avg_sq for AdamW;
 * the other pointers are NULL).  A Muon parameter whose options keep a
 * second moment of the Newton-Schulz output (moment2 not NONE, spec/muon.md
 * 7.4) also has moment2, moment2_numel floats (muonref_moment2_numel): the
 * EMA v, row-major over its shape (muonref_moment2_shape); else moment2 is
 * NULL and moment2_numel 0.  Under grad_accumulation N >= 1 (options.h,
 * spec/muon.md 3.3) grad_accum holds numel floats, the gradients added since
 * the last update (zeros after it), and accum_calls counts the micro-steps
 * since then (0 <= accum_calls < N), whether or not the parameter had a
 * gradient: the optimizer's count, which a step keeps the same for every
 * parameter (a state set with another count steps each parameter on its own
 * count; the state file refuses counts that differ); without it grad_accum
 * is NULL and accum_calls 0.  A sum beside a count of 0 is refused.  A state with accum_calls > 0 exists
 * before the parameter's first update: initialized then stays 0.  Under
 * use_ema (spec/muon.md 8.2) ema_average holds numel floats, the moving
 * average of the parameter's values (NULL without it). */
typedef struct muonref_param_state {
  int initialized;
  int use_muon;
  long step;
  size_t numel;
  float *momentum_buffer;
  float *exp_avg;
  float *exp_avg_sq;
  float *moment2;
  size_t moment2_numel;
  float *grad_accum;
  long accum_calls;
  float *ema_average;
} muonref_param_state;

#ifdef __cplusplus
}
#endif
#endif
