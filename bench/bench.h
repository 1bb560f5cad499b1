/* muonref bench: helpers of `muonref bench` (cli/cmd_bench.c).  Not installed.
 *
 * Matrices are row-major float arrays of shape (rows, cols).  Times are
 * seconds of wall-clock time (CLOCK_MONOTONIC). */
#ifndef MUONREF_BENCH_H
#define MUONREF_BENCH_H

#include <stddef.h>
#include <stdio.h>
#include "muonref.h"

/* One benchmark case: `n` matrices, matrix k of shape (rows[k], cols[k]).
 * A single shape is a case of one matrix; the transformer-like set is 72. */
enum { BENCH_MAX_MATS = 128 };
typedef struct bench_case {
  char name[32];
  size_t n;
  size_t rows[BENCH_MAX_MATS], cols[BENCH_MAX_MATS];
} bench_case;

/* Fills *c with the case of one (rows, cols) matrix, named "RxC". */
void bench_case_single(bench_case *c, size_t rows, size_t cols);

/* Fills *c with `layers` transformer-like layers, each four (d, d) and two
 * (d, 4d) matrices (attention q, k, v, o; MLP in, out^T), named `name`.
 * layers * 6 <= BENCH_MAX_MATS. */
void bench_case_layers(bench_case *c, const char *name, size_t layers, size_t d);

/* The case's matrices as bench/torch_ns.py's SPEC ("768x768*48+768x3072*24"),
 * consecutive equal shapes merged; returns 0, or -1 when it does not fit. */
int bench_case_spec(const bench_case *c, char *buf, size_t size);

/* Seconds since an arbitrary origin (CLOCK_MONOTONIC). */
double bench_now(void);

/* The median of t[0..n) (n >= 1); sorts t in place. */
double bench_median(double *t, size_t n);

/* GEMM flops of one Newton-Schulz run on (rows, cols) with `steps` steps,
 * under the model of every implementation compared here: per step
 * 4 m^2 n + 2 m^3 with m = min(rows, cols), n = max(rows, cols) (the three
 * GEMMs X X^T, A A, B X; shared/reference/measurements.md), element-wise
 * work not counted. */
double bench_ns_flops(size_t rows, size_t cols, int steps);

/* Floats of workspace bench_naive_ns needs for (rows, cols): 2 m n + 2 m^2. */
size_t bench_naive_workspace_floats(size_t rows, size_t cols);

/* The naive fp32 baseline: out <- NS(in) in binary32 with three plain
 * cblas_sgemm calls per step (A = X X^T, AA = A A, B X) and plain loops for
 * the rest (transpose when rows > cols, X / (||X||_F + eps) with the norm
 * in binary32, B = b A + c AA, X = a X + B X), coefficients and steps from
 * *o.  work holds bench_naive_workspace_floats(rows, cols) floats.  No
 * error case: the caller sizes work; it exists to be timed, and is checked
 * against muonref_fast_ns in fp32 by the bench (relative error printed). */
void bench_naive_ns(float *out, const float *in, size_t rows, size_t cols, const muonref_options *o,
                    float *work);

/* The PyTorch variants bench/torch_ns.py times: bf16 (oneDNN where torch
 * uses it), fp32, and bf16 with oneDNN disabled (ATen's own bf16 matmul). */
enum { TORCH_BF16, TORCH_FP32, TORCH_BF16_NATIVE, TORCH_KINDS };

/* Measured figures of one case (seconds: the median over the runs of the
 * whole case, each matrix once per run; -1 where not measured). */
typedef struct bench_result {
  double flops;          /* model flops of one Newton-Schulz over the case */
  int runs;              /* timed runs of each of ours and the naive baseline */
  double naive_s, bf16_s, fp32_s, step_s;
  double bf16_blas_s;    /* our bf16 forced onto OpenBLAS (bf16_s: native bf16 where usable) */
  double torch_s[TORCH_KINDS]; /* indexed by TORCH_BF16, TORCH_FP32, TORCH_BF16_NATIVE */
  double fp32_vs_naive;  /* max over distinct shapes of ||ours fp32 - naive||_F / ||naive||_F */
  size_t ns_work_bytes;  /* muonref_ns_workspace_floats of the largest matrix, bytes */
  size_t opt_work_bytes; /* muonref_optimizer_workspace_floats of the case's optimizer, bytes */
} bench_result;

/* Times our bf16 Newton-Schulz as dispatched (native bf16 through oneDNN
 * where usable) and forced onto OpenBLAS, our fp32 Newton-Schulz
 * (muonref_fast_ns with a workspace made beforehand), a whole muonref_optimizer_step over the case (nemo
 * profile, Muon on every matrix, bf16), and bench_naive_ns, each `warmup`
 * untimed runs then up to `reps` timed runs (reps >= 1), taking turns; fewer
 * (at least one) when another run of all five would end past `deadline`
 * (bench_now() seconds, 0: none).  Fills *r (torch figures -1).  Inputs
 * are deterministic pseudo-random Gaussians.  Returns MUONREF_OK, or
 * MUONREF_ENOMEM / an optimizer error with err set. */
int bench_run_case(const bench_case *c, int warmup, int reps, double deadline, bench_result *r,
                   muonref_error *err);


/* PyTorch CPU timings from bench/torch_ns.py, run once with `python` for
 * every case i in cases[0..n) and kind k with want[k][i] set, `reps` runs
 * each after a warm-up.  Writes the median seconds into secs[k][i] (-1
 * where not run or where the script gave no figure), the script's peak
 * resident memory in KiB into *rss_kib and its intra-op threads into
 * *threads.  Returns 0, or -1 when the script could not be run or torch is
 * not importable; *why then gets a short reason. */
int bench_torch(const char *python, const char *script, const bench_case *cases, size_t n,
                int *const want[TORCH_KINDS], int reps, double *const secs[TORCH_KINDS], long *rss_kib,
                int *threads, const char **why);

/* The machine's measured matrix-product peak (GFLOP/s, 2 m n k flops per
 * product): the best of `reps` 2048^3 products after one warm-up, fp32 by
 * OpenBLAS sgemm and bf16 by oneDNN's bf16 matmul (binary32 results);
 * bf16 is -1 where the native path cannot run (*why then says why).
 * Returns 0, or -1 when out of memory. */
int bench_peak(int reps, double *fp32_gflops, double *bf16_gflops, const char **why);

/* What the report says besides the cases. */
typedef struct bench_meta {
  int reps, set_reps, warmup, ns_steps, threads;
  double budget_s;        /* --time-budget: seconds for our own timings */
  const char *blas_core;  /* OpenBLAS's kernel set (openblas_get_corename; OPENBLAS_CORETYPE forces it) */
  int torch_ok;           /* the PyTorch script ran */
  int torch_threads;      /* its intra-op threads */
  const char *torch_note; /* why not, when !torch_ok */
  long peak_rss_kib, torch_peak_rss_kib;
  double peak_fp32, peak_bf16; /* bench_peak, GFLOP/s; -1 where not measured */
  int native;                  /* our bf16 path runs oneDNN's bf16 matmul (large matrices) */
  const char *native_note;     /* the GEMM of our bf16 path, or why not native */
  const char *omp_wait_policy; /* OMP_WAIT_POLICY of this run (cli/cmd_bench.c sets PASSIVE) */
} bench_meta;

/* One target, judged on the figures of one case. */
typedef struct bench_target {
  const char *what; /* e.g. "bf16 time / naive fp32 time" */
  const char *rule; /* "<=" or ">=" */
  double limit, value;
  const char *case_name;
  int met;
} bench_target;

/* The targets judgeable from results[0..n) (cases without the figures
 * are left out), issue 15's on every case whose matrices all have
 * min(rows, cols) >= 1024: bf16 time <= 0.70 x naive fp32; bf16 time
 * <= 0.75 x PyTorch bf16 (only when `native`: our bf16 runs on bf16
 * instructions); a whole optimizer step <= 1.05 x its bf16 Newton-Schulz;
 * and issue 6's PyTorch fp32 time >= 1.3 x our bf16 time on 1024x1024.
 * Writes at most `max` into t; returns how many. */
size_t bench_targets(const bench_case *cases, const bench_result *results, size_t n, int native, bench_target *t,
                     size_t max);

/* The report as an aligned table, or as one JSON object, on f. */
void bench_print_text(FILE *f, const bench_case *cases, const bench_result *results, size_t n,
                      const bench_meta *m);
void bench_print_json(FILE *f, const bench_case *cases, const bench_result *results, size_t n,
                      const bench_meta *m);

#endif
