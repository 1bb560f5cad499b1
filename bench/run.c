/* muonref bench: timing one case (see bench.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "fast/ns_internal.h"
#include "fast/step_kernels.h"
#include "core/fail.h"

/* Pseudo-random N(0, 1) values (xorshift64* and Box-Muller), deterministic. */
static void fill_normal(float *x, size_t n, uint64_t *s)
{
  for (size_t i = 0; i < n; i++) {
    double u[2];
    for (int k = 0; k < 2; k++) {
      *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
      u[k] = ((double)((*s * 2685821657736338717ull) >> 11) + 0.5) / 9007199254740992.0;
    }
    x[i] = (float)(sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]));
  }
}

/* The buffers of a case: per matrix an input (the gradient of the step),
 * an output and a parameter; per vector a parameter and a gradient, after
 * the matrices' in param and grad (the step's order). */
typedef struct bufs {
  float *in[BENCH_MAX_MATS], *out[BENCH_MAX_MATS], *param[BENCH_MAX_MATS + BENCH_MAX_VECS];
  float *vec_grad[BENCH_MAX_VECS];
  muonref_grad grad[BENCH_MAX_MATS + BENCH_MAX_VECS];
  float *work, *naive_work;
} bufs;

static void free_bufs(bufs *b, const bench_case *c)
{
  for (size_t i = 0; i < c->n; i++)
    free(b->in[i]), free(b->out[i]), free(b->param[i]);
  for (size_t i = 0; i < c->n_vec; i++)
    free(b->param[c->n + i]), free(b->vec_grad[i]);
  free(b->work), free(b->naive_work);
}

static int alloc_bufs(bufs *b, const bench_case *c, bench_result *r)
{
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  size_t ws = 0, nws = 0;
  memset(b, 0, sizeof *b);
  for (size_t i = 0; i < c->n; i++) {
    size_t len = c->rows[i] * c->cols[i];
    b->in[i] = malloc(len * sizeof(float));
    b->out[i] = malloc(len * sizeof(float));
    b->param[i] = malloc(len * sizeof(float));
    if (!b->in[i] || !b->out[i] || !b->param[i])
      return -1;
    fill_normal(b->in[i], len, &seed);
    fill_normal(b->param[i], len, &seed);
    b->grad[i] = (muonref_grad){b->in[i], MUONREF_DENSE, MUONREF_FLOAT32};
    size_t w = muonref_ns_workspace_floats(c->rows[i], c->cols[i]);
    size_t nw = bench_naive_workspace_floats(c->rows[i], c->cols[i]);
    ws = w > ws ? w : ws;
    nws = nw > nws ? nw : nws;
  }
  for (size_t i = 0; i < c->n_vec; i++) {
    float *p = b->param[c->n + i] = malloc(c->vec_len[i] * sizeof(float));
    float *g = b->vec_grad[i] = malloc(c->vec_len[i] * sizeof(float));
    if (!p || !g)
      return -1;
    fill_normal(p, c->vec_len[i], &seed);
    fill_normal(g, c->vec_len[i], &seed);
    b->grad[c->n + i] = (muonref_grad){g, MUONREF_DENSE, MUONREF_FLOAT32};
  }
  r->ns_work_bytes = ws * sizeof(float);
  b->work = malloc(ws * sizeof(float));
  b->naive_work = malloc(nws * sizeof(float));
  return b->work && b->naive_work ? 0 : -1;
}

/* OURS_BF16 dispatches as a user's call does (native bf16 where usable);
 * OURS_BF16_BLAS is forced onto OpenBLAS (the path of CPUs without bf16). */
enum impl { NAIVE, OURS_BF16, OURS_FP32, STEP, OURS_BF16_BLAS, N_IMPL };

/* One run of the whole case with implementation `im`. */
static int run_once(enum impl im, const bench_case *c, bufs *b, const muonref_options *o, muonref_optimizer *opt,
                    muonref_error *err)
{
  if (im == STEP)
    return muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), b->param, b->grad, err);
  muonref_options f = *o;
  f.ns_format = im == OURS_FP32 ? MUONREF_NS_FP32 : MUONREF_NS_BF16;
  unsigned flags = im == OURS_BF16_BLAS ? MUONREF_NSF_GEMM_BLAS : 0;
  for (size_t i = 0; i < c->n; i++) {
    if (im == NAIVE) {
      bench_naive_ns(b->out[i], b->in[i], c->rows[i], c->cols[i], o, b->naive_work);
    } else {
      int st = muonref_fast_ns_flags(b->out[i], b->in[i], c->rows[i], c->cols[i], &f, b->work, flags, err);
      if (st)
        return st;
    }
  }
  return MUONREF_OK;
}

/* *ratio <- the median of step / bf16 NS over the rounds' times and extra
 * (NS, step) pairs run after them (up to BENCH_PAIRS in all, while they fit in
 * BENCH_PAIR_BUDGET_S, BENCH_SET_PAIR_BUDGET_S for a set, and before
 * `deadline`); *pairs <- how many.  On the
 * project's 2-core machines a run of a case varies by 10 % or more from one
 * run to the next, while the two runs of a pair share the machine's state:
 * the ratio of the medians of a case's few runs wandered (the 12-layer set:
 * 1.42 from its one run on 2026-12-02, where 25 paired runs of its two
 * shapes gave 1.01 and 1.02), the median of paired ratios much less. */
static int step_pairs(const bench_case *c, bufs *b, const muonref_options *o, muonref_optimizer *opt,
                      double t_ns[], double t_step[], int k, double deadline, double *ratio, int *pairs,
                      muonref_error *err)
{
  double r[BENCH_PAIRS], start = bench_now(), budget = c->n > 1 ? BENCH_SET_PAIR_BUDGET_S : BENCH_PAIR_BUDGET_S;
  int n = 0;
  for (; n < k && n < BENCH_PAIRS; n++)
    r[n] = t_step[n] / t_ns[n];
  while (n < BENCH_PAIRS) {
    double pair = t_ns[0] + t_step[0], now = bench_now();
    if (now + pair - start > budget || (deadline > 0 && now + pair > deadline))
      break;
    double t0 = bench_now();
    if (run_once(OURS_BF16, c, b, o, opt, err))
      return err->status;
    double t1 = bench_now();
    if (run_once(STEP, c, b, o, opt, err))
      return err->status;
    r[n++] = (bench_now() - t1) / (t1 - t0);
  }
  *ratio = bench_median(r, (size_t)n);
  *pairs = n;
  return 0;
}

/* slot[im] <- median seconds of the timed runs of implementation im, after
 * `warmup` runs of each.  The implementations take turns run by run, so
 * that a slow spell of a noisy machine falls on all of them alike and the
 * ratios hold better than the times.  Stops after `reps` rounds, or earlier
 * when another round would end past `deadline` (bench_now() seconds; 0: no
 * deadline), but always times one round; *runs gets the rounds timed.
 * Returns 0, or the error status. */
static int time_impls(const bench_case *c, bufs *b, const muonref_options *o, muonref_optimizer *opt, int warmup,
                      int reps, double deadline, double *slot[N_IMPL], int *runs, bench_result *res,
                      muonref_error *err)
{
  double t[N_IMPL][64];
  reps = reps > 64 ? 64 : reps;
  for (int k = 0; k < warmup; k++)
    for (int im = NAIVE; im < N_IMPL; im++)
      if (run_once((enum impl)im, c, b, o, opt, err))
        return err->status;
  int k = 0;
  while (k < reps) {
    double round = bench_now();
    for (int im = NAIVE; im < N_IMPL; im++) {
      double t0 = bench_now();
      if (run_once((enum impl)im, c, b, o, opt, err))
        return err->status;
      t[im][k] = bench_now() - t0;
    }
    k++;
    round = bench_now() - round;
    if (deadline > 0 && bench_now() + round > deadline)
      break;
  }
  *runs = k;
  int st = step_pairs(c, b, o, opt, t[OURS_BF16], t[STEP], k, deadline, &res->step_over_ns, &res->pairs, err);
  for (int im = NAIVE; im < N_IMPL; im++) /* after step_pairs: bench_median sorts */
    *slot[im] = bench_median(t[im], (size_t)k);
  return st;
}

/* The median seconds of 5 copies of every parameter of the case (the matrices' into their out buffers,
 * the vectors' into their gradients: both scratch after the timings), after one untimed. */
static double copy_time(const bench_case *c, bufs *b)
{
  double t[5];
  for (int k = -1; k < 5; k++) {
    double t0 = bench_now();
    for (size_t i = 0; i < c->n; i++)
      muonref_stk_copy(b->out[i], b->param[i], c->rows[i] * c->cols[i]);
    for (size_t i = 0; i < c->n_vec; i++)
      muonref_stk_copy(b->vec_grad[i], b->param[c->n + i], c->vec_len[i]);
    if (k >= 0)
      t[k] = bench_now() - t0;
  }
  return bench_median(t, 5);
}

double bench_step_bound(const bench_case *c, double copy_s, double ns_s)
{
  double mats = 0, vecs = 0;
  for (size_t i = 0; i < c->n; i++)
    mats += (double)c->rows[i] * c->cols[i];
  for (size_t i = 0; i < c->n_vec; i++)
    vecs += (double)c->vec_len[i];
  if (copy_s <= 0 || ns_s <= 0 || mats + vecs <= 0)
    return -1;
  return 1.0 + copy_s * (1.5 * mats + 3.5 * vecs) / (mats + vecs) / ns_s;
}

/* max over the case's distinct shapes of ||ours fp32 - naive||_F / ||naive||_F. */
static double fp32_vs_naive(const bench_case *c, bufs *b, const muonref_options *o)
{
  muonref_options f = *o;
  f.ns_format = MUONREF_NS_FP32;
  double worst = 0.0;
  for (size_t i = 0; i < c->n; i++) {
    int seen = 0; /* each shape once: the set repeats its layers */
    for (size_t j = 0; j < i; j++)
      seen |= c->rows[j] == c->rows[i] && c->cols[j] == c->cols[i];
    if (seen)
      continue;
    size_t len = c->rows[i] * c->cols[i];
    float *ours = b->param[i]; /* scratch: the parameters are not needed after the step timing */
    bench_naive_ns(b->out[i], b->in[i], c->rows[i], c->cols[i], o, b->naive_work);
    MUONREF_UNCHECKED(muonref_fast_ns(ours, b->in[i], c->rows[i], c->cols[i], &f, b->work, NULL));
    double num = 0.0, den = 0.0;
    for (size_t j = 0; j < len; j++) {
      double d = (double)ours[j] - (double)b->out[i][j];
      num += d * d;
      den += (double)b->out[i][j] * (double)b->out[i][j];
    }
    worst = fmax(worst, den > 0 ? sqrt(num / den) : sqrt(num));
  }
  return worst;
}

/* The case's optimizer: group 0 the matrices (Muon), group 1 the vectors
 * (AdamW), both with options *o but use_muon. */
static muonref_optimizer *make_optimizer(const bench_case *c, const muonref_options *o, muonref_error *err)
{
  muonref_shape shapes[BENCH_MAX_MATS + BENCH_MAX_VECS];
  for (size_t i = 0; i < c->n; i++)
    shapes[i] = (muonref_shape){2, {c->rows[i], c->cols[i]}};
  for (size_t i = 0; i < c->n_vec; i++)
    shapes[c->n + i] = (muonref_shape){1, {c->vec_len[i]}};
  muonref_group g[2] = {{*o, c->n, shapes}, {*o, c->n_vec, shapes + c->n}};
  g[0].options.use_muon = MUONREF_USE_MUON_TRUE;
  g[1].options.use_muon = MUONREF_USE_MUON_FALSE;
  return muonref_optimizer_create(g, c->n_vec ? 2 : 1, err);
}

int bench_run_case(const bench_case *c, int warmup, int reps, double deadline, bench_result *r, muonref_error *err)
{
  bufs b;
  muonref_options o;
  memset(r, 0, sizeof *r);
  for (int k = 0; k < TORCH_KINDS; k++)
    r->torch_s[k] = -1;
  r->copy_s = r->step_bound = -1;
  if (muonref_options_init(&o, MUONREF_PROFILE_NEMO, err))
    return err ? err->status : MUONREF_EOPTION;
  for (size_t i = 0; i < c->n; i++) {
    r->flops += bench_ns_flops(c->rows[i], c->cols[i], o.ns_steps);
    r->sym_flops += bench_sym_flops(c->rows[i], c->cols[i], o.ns_steps);
  }
  muonref_optimizer *opt = NULL;
  int st = alloc_bufs(&b, c, r) ? muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the case %s", c->name)
                                : MUONREF_OK;
  if (!st && !(opt = make_optimizer(c, &o, err)))
    st = err->status;
  if (!st) {
    r->opt_work_bytes = muonref_optimizer_workspace_floats(opt) * sizeof(float);
    double *slot[] = {&r->naive_s, &r->bf16_s, &r->fp32_s, &r->step_s, &r->bf16_blas_s};
    st = time_impls(c, &b, &o, opt, warmup, reps, deadline, slot, &r->runs, r, err);
  }
  if (!st) {
    r->copy_s = copy_time(c, &b);
    r->step_bound = bench_step_bound(c, r->copy_s, r->bf16_s);
    r->fp32_vs_naive = fp32_vs_naive(c, &b, &o);
  }
  muonref_optimizer_free(opt);
  free_bufs(&b, c);
  return st;
}
