/* muonref: the moving average of the weights kept after a step (use_ema;
 * spec/muon.md 8.2), shared by the fast path and the reference. */
#ifndef MUONREF_CORE_EMA_H
#define MUONREF_CORE_EMA_H

#include <stddef.h>
#include "muonref/options.h"

/* The average e (n floats, updated in place) of parameter values w (n
 * floats, row-major in the parameter's shape: the step's result) under
 * options o with use_ema set: e <- w where `first` (no update before this
 * step), else e <- R32(R32(m e) + R32(R32(1 - m) w)) with m =
 * R32(o->ema_momentum), each product and the sum rounded once to binary32
 * (keras-team/keras base_optimizer.py @3422977a
 * _update_model_variables_moving_average: `momentum =
 * ops.multiply(ops.cast(not_first_step, var.dtype), self.ema_momentum)`,
 * `ops.add(ops.multiply(momentum, average), ops.multiply(ops.subtract(1,
 * momentum), var))` in float32).  Values stay finite: 0 <= m <= 1 makes e a
 * convex combination of finite values. */
void muonref_ema_average(const muonref_options *o, float *e, const float *w, size_t n, int first);

/* The overwrite after the average: w <- e (n floats each) where
 * o->ema_overwrite F > 0 and updates + 1 is a multiple of F, `updates` the
 * updates before this step (keras' `(self.iterations + 1) %
 * self.ema_overwrite_frequency == 0`, then
 * _overwrite_model_variables_with_average_value). */
void muonref_ema_overwrite(const muonref_options *o, const float *e, float *w, size_t n, long updates);

/* Both, as a step runs them: the average with first = (updates == 0), then the overwrite. */
void muonref_ema_update(const muonref_options *o, float *e, float *w, size_t n, long updates);

#endif
