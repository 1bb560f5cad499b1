/* muonref bench: the targets of issues 6, 15 and 28 (see bench.h). */
#include <string.h>
#include "bench.h"

/* Whether every matrix of c has min(rows, cols) >= 1024. */
static int large(const bench_case *c)
{
  for (size_t i = 0; i < c->n; i++)
    if ((c->rows[i] < c->cols[i] ? c->rows[i] : c->cols[i]) < 1024)
      return 0;
  return c->n > 0;
}

static int is_single(const bench_case *c, size_t rows, size_t cols)
{
  return c->n == 1 && c->rows[0] == rows && c->cols[0] == cols;
}

/* Appends a target on case c when k < max; returns the new count. */
static size_t add(bench_target *t, size_t k, size_t max, const char *what, const char *rule, double limit,
                  double value, const bench_case *c)
{
  if (k >= max)
    return k;
  int met = !strcmp(rule, "<=") ? value <= limit : value >= limit;
  t[k] = (bench_target){what, rule, limit, value, c->name, met};
  return k + 1;
}

size_t bench_targets(const bench_case *cases, const bench_result *results, size_t n, int native, bench_target *t,
                     size_t max)
{
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const bench_case *c = &cases[i];
    const bench_result *r = &results[i];
    double tb = r->torch_s[TORCH_BF16], tf = r->torch_s[TORCH_FP32], nv = r->naive_s, b = r->bf16_s;
    if (b > 0 && nv > 0) {
      if (native && large(c)) /* issue 15: native bf16 */
        k = add(t, k, max, "bf16 time / naive fp32 time", "<=", 0.70, b / nv, c);
      if (!native && is_single(c, 1024, 1024)) /* issue 28: fp32 arithmetic, bound 2/3 */
        k = add(t, k, max, "bf16 time / naive fp32 time", "<=", 0.72, b / nv, c);
      if (!native && is_single(c, 1024, 4096)) /* issue 28: bound 13/18 */
        k = add(t, k, max, "bf16 time / naive fp32 time", "<=", 0.76, b / nv, c);
    }
    if (native && large(c) && tb > 0 && b > 0)
      k = add(t, k, max, "bf16 time / PyTorch bf16 time", "<=", 0.75, b / tb, c);
    if (r->step_over_ns > 0) /* issue 28: every case; the median of paired runs (bench.h) */
      k = add(t, k, max, "step time / bf16 NS time", "<=", 1.03, r->step_over_ns, c);
    if (is_single(c, 1024, 1024) && tf > 0 && b > 0) /* issue 6 */
      k = add(t, k, max, "PyTorch fp32 time / bf16 time", ">=", 1.3, tf / b, c);
  }
  return k;
}
