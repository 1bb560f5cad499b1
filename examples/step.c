/* examples/step.c: the fast Muon optimizer through the public API alone.
 *
 * Builds the NeMo profile's options with the initializer, creates an
 * optimizer over a (16, 8) weight matrix (routed to Muon) and a bias of 8
 * (routed to AdamW), takes three steps with a fixed gradient, reads the
 * state back and prints what a reader can check by hand: the routing, the
 * step counts, the momentum after the first step (the sum form keeps
 * M = G exactly) and the refusal of a call with the wrong parameter count.
 *
 * From an installed muonref:
 *   cc step.c $(pkg-config --cflags --libs muonref) -o step && ./step */
#include <math.h>
#include <stdio.h>
#include <muonref.h>

#define ROWS 16
#define COLS 8

int main(void)
{
  muonref_error err = {0};
  muonref_options o;
  if (muonref_options_init(&o, MUONREF_PROFILE_NEMO, &err) != MUONREF_OK) {
    fprintf(stderr, "options: %s\n", err.message);
    return 1;
  }
  o.weight_decay = 0.01; /* any field may be changed after the initializer */

  muonref_shape shapes[2] = {{2, {ROWS, COLS}}, {1, {COLS}}};
  muonref_group group = {o, 2, shapes};
  muonref_optimizer *opt = muonref_optimizer_create(&group, 1, &err);
  if (!opt) {
    fprintf(stderr, "create: %s\n", err.message);
    return 1;
  }

  static float w[ROWS * COLS], b[COLS], gw[ROWS * COLS], gb[COLS];
  for (int i = 0; i < ROWS * COLS; i++) {
    w[i] = (float)((i % 7) - 3) / 8.0f;  /* exact binary32 values */
    gw[i] = (float)((i % 5) - 2) / 16.0f;
  }
  for (int i = 0; i < COLS; i++)
    b[i] = 0.5f, gb[i] = (float)(i + 1) / 64.0f;

  float *params[2] = {w, b};
  muonref_grad grads[2] = {{gw, MUONREF_DENSE, MUONREF_FLOAT32}, {gb, MUONREF_DENSE, MUONREF_FLOAT32}};
  for (int t = 0; t < 3; t++)
    if (muonref_optimizer_step(opt, 2, params, grads, &err) != MUONREF_OK) {
      fprintf(stderr, "step %d: %s\n", t + 1, err.message);
      return 1;
    }

  size_t n = muonref_optimizer_param_count(opt);
  for (size_t i = 0; i < n; i++) {
    muonref_param_state st;
    if (muonref_optimizer_state(opt, i, &st, &err) != MUONREF_OK) {
      fprintf(stderr, "state: %s\n", err.message);
      return 1;
    }
    const muonref_route *r = muonref_optimizer_route(opt, i);
    printf("param %zu: %zu elements, %s, step %ld\n", i, st.numel, r->use_muon ? "muon" : "adamw", st.step);
  }

  /* Muon's sum-form momentum after three equal gradients: (1 + beta + beta^2) G */
  muonref_param_state st;
  if (muonref_optimizer_state(opt, 0, &st, &err) != MUONREF_OK)
    return 1;
  double expect = (1.0 + o.momentum + o.momentum * o.momentum) * gw[1];
  printf("momentum[1] = %.6f (expected %.6f)\n", st.momentum_buffer[1], expect);
  int finite = 1;
  for (int i = 0; i < ROWS * COLS; i++)
    finite &= isfinite(w[i]) != 0;
  printf("weights finite: %s, changed: %s\n", finite ? "yes" : "no", w[0] != -3.0f / 8.0f ? "yes" : "no");

  /* a call with the wrong count is refused and changes nothing */
  int s = muonref_optimizer_step(opt, 1, params, grads, &err);
  printf("wrong count: %s: %s\n", muonref_status_name(s), err.message);

  muonref_optimizer_free(opt);
  return 0;
}
