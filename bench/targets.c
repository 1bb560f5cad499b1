/* muonref bench: the targets of issue 15 and issue 6 (see bench.h). */
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

size_t bench_targets(const bench_case *cases, const bench_result *results, size_t n, int native, bench_target *t,
                     size_t max)
{
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const bench_result *r = &results[i];
    double tb = r->torch_s[TORCH_BF16], tf = r->torch_s[TORCH_FP32];
    if (k < max && large(&cases[i]) && r->naive_s > 0 && r->bf16_s > 0)
      t[k++] = (bench_target){"bf16 time / naive fp32 time", "<=", 0.70, r->bf16_s / r->naive_s, cases[i].name,
                              r->bf16_s / r->naive_s <= 0.70};
    if (k < max && native && large(&cases[i]) && tb > 0 && r->bf16_s > 0)
      t[k++] = (bench_target){"bf16 time / PyTorch bf16 time", "<=", 0.75, r->bf16_s / tb, cases[i].name,
                              r->bf16_s / tb <= 0.75};
    if (k < max && large(&cases[i]) && r->step_s > 0 && r->bf16_s > 0)
      t[k++] = (bench_target){"step time / bf16 NS time", "<=", 1.05, r->step_s / r->bf16_s, cases[i].name,
                              r->step_s / r->bf16_s <= 1.05};
    if (k < max && is_square_1024(&cases[i]) && tf > 0 && r->bf16_s > 0)
      t[k++] = (bench_target){"PyTorch fp32 time / bf16 time", ">=", 1.3, tf / r->bf16_s, cases[i].name,
                              tf / r->bf16_s >= 1.3};
  }
  return k;
}
