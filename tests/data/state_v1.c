/* Writes tests/data/state_v1.bin with muonref d7bd2c1's muonref_state_save (format 1): the
 * optimizer of tests/unit/check_state.c's make(0.5, SHAPES) after two steps, profile "nemo". */
#include <stdio.h>
#include <muonref.h>
int main(int argc, char **argv)
{
  muonref_error e;
  muonref_options a, b;
  if (muonref_profile_options("nemo", &a, &e) || muonref_profile_options("nemo", &b, &e)) return 3;
  b.lr = 0.5;
  b.ns_format = MUONREF_NS_FP32;
  muonref_shape sh[3] = {{2, {4, 8}}, {1, {8}}, {2, {2, 2}}};
  muonref_group g[2] = {{a, 2, sh}, {b, 1, sh + 2}};
  muonref_optimizer *opt = muonref_optimizer_create(g, 2, &e);
  if (!opt) return 3;
  float w[3][32], gr[3][32];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 32; j++)
      w[i][j] = 0.03125f * (float)((j * 7 + i) % 11) - 0.15f, gr[i][j] = 0.0078125f * (float)((j * 5 + 3 * i) % 13) - 0.04f;
  for (int k = 0; k < 2; k++) {
    float *ps[3] = {w[0], w[1], w[2]};
    muonref_grad gs[3] = {{gr[0], 0, 0}, {gr[1], 0, 0}, {k ? gr[2] : NULL, 0, 0}};
    if (muonref_optimizer_step(opt, 3, ps, gs, &e)) return printf("%s\n", e.message), 3;
  }
  if (muonref_state_save(opt, "nemo", argv[1], &e)) return printf("%s\n", e.message), 3;
  muonref_optimizer_free(opt);
  return 0;
}
