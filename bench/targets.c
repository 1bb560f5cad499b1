/* muonref bench: the targets of issue 6 (see bench.h). */
#include "bench.h"

/* Whether every matrix of c has min(rows, cols) >= 1024. */
static int large(const bench_case *c)
{
  for (size_t i = 0; i < c->n; i++)
    if ((c->rows[i] < c->cols[i] ? c->rows[i] : c->cols[i]) < 1024)
      return 0;
  return c->n > 0;
}

static int is_square_1024(const bench_case *c) { return c->n == 1 && c->rows[0] == 1024 && c->cols[0] == 1024; }

size_t bench_targets(const bench_case *cases, const bench_result *results, size_t n, bench_target *t, size_t max)
{
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const bench_result *r = &results[i];
    if (k < max && large(&cases[i]) && r->naive_s > 0 && r->bf16_s > 0)
      t[k++] = (bench_target){"bf16 time / naive fp32 time", "<=", 0.8, r->bf16_s / r->naive_s, cases[i].name,
                              r->bf16_s / r->naive_s <= 0.8};
    double tb = r->torch_s[TORCH_BF16], tn = r->torch_s[TORCH_BF16_NATIVE], tf = r->torch_s[TORCH_FP32];
    if (k < max && tb > 0 && r->bf16_s > 0)
      t[k++] = (bench_target){"PyTorch bf16 time / bf16 time", ">=", 30.0, tb / r->bf16_s, cases[i].name,
                              tb / r->bf16_s >= 30.0};
    if (k < max && tn > 0 && r->bf16_s > 0)
      t[k++] = (bench_target){"PyTorch bf16 no-oneDNN / bf16", ">=", 30.0, tn / r->bf16_s, cases[i].name,
                              tn / r->bf16_s >= 30.0};
    if (k < max && is_square_1024(&cases[i]) && tf > 0 && r->bf16_s > 0)
      t[k++] = (bench_target){"PyTorch fp32 time / bf16 time", ">=", 1.3, tf / r->bf16_s, cases[i].name,
                              tf / r->bf16_s >= 1.3};
  }
  return k;
}
