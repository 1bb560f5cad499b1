/* muonref bench: helpers of `muonref bench` (cli/cmd_bench.c).  Not installed.
 *
 * Matrices are row-major float arrays of shape (rows, cols).  Times are
 * seconds of wall-clock time (CLOCK_MONOTONIC). */
#ifndef MUONREF_BENCH_H
#define MUONREF_BENCH_H

#include <stddef.h>
#include <stdio.h>
#include "muonref.h"

/* One benchmark case: `n` matrices, matrix k of shape (rows[k], cols[k]),
 * and `n_vec` 1-D parameters of vec_len[k] elements that only the optimizer
 * step sees (AdamW: biases and norms).  A single shape is a case of one
 * matrix; the transformer-like set is 72 matrices and 120 vectors. */
enum { BENCH_MAX_MATS = 128, BENCH_MAX_VECS = 128 };
typedef struct bench_case {
  char name[32];
  size_t n;
  size_t rows[BENCH_MAX_MATS], cols[BENCH_MAX_MATS];
  size_t n_vec;
  size_t vec_len[BENCH_MAX_VECS];
} bench_case;

/* Fills *c with the case of one (rows, cols) matrix, named "RxC". */
void bench_case_single(bench_case *c, size_t rows, size_t cols);

/* Fills *c with `layers` transformer-like layers, each four (d, d) and two
 * (d, 4d) matrices (attention q, k, v, o; MLP in, out^T) and ten vectors
 * (two layer norms' weight and bias, d each; the biases of q, k, v, o, d
 * each, and of the MLP, 4d and d), named `name`; at most
 * BENCH_MAX_MATS / 6 layers. */
void bench_case_layers(bench_case *c, const char *name, size_t layers, size_t d);

/* The case's matrices as bench/torch_ns.py's SPEC ("768x768*48+768x3072*24"),
 * consecutive equal shapes merged; returns 0, or -1 when it does not fit. */
int bench_case_spec(const bench_case *c, char *buf, size_t size);

/* Seconds since an arbitrary origin (CLOCK_MONOTONIC). */
double bench_now(void);

/* The median of t[0..n) (n >= 1); sorts t in place. */
double bench_median(double *t, size_t n);

/* The GEMM flops our BLAS path does in one Newton-Schulz run on (rows,
 * cols): per step 3 m^2 n + m^3 (X X^T and A A by ssyrk, half of a product
 * each, m^2 n and m^3; B X whole, 2 m^2 n; fast/ns.c).  Over bench_ns_flops this is the
 * bound of our bf16 time over the naive fp32 time on a CPU without bf16
 * instructions, where both run fp32 arithmetic at the same rate: 2/3 for
 * a square matrix, (3 n + m) / (4 n + 2 m) in general. */
double bench_sym_flops(size_t rows, size_t cols, int steps);

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

enum {
  BENCH_PAIRS = 16,         /* paired (bf16 NS, step) runs for step / NS, the rounds' included */
  BENCH_PAIR_BUDGET_S = 15, /* seconds a single matrix may spend on the extra pairs (within the deadline) */
  BENCH_SET_PAIR_BUDGET_S = 90 /* a set's (the 12-layer set: about 20 s a pair, one pair varying by 5 %) */
};

/* Measured figures of one case (seconds: the median over the runs of the
 * whole case, each matrix once per run; -1 where not measured). */
typedef struct bench_result {
  double flops;          /* model flops of one Newton-Schulz over the case */
  double sym_flops;      /* bench_sym_flops over the case */
  int runs;              /* timed runs of each of ours and the naive baseline */
  double naive_s, bf16_s, fp32_s, step_s;
  double bf16_blas_s;    /* our bf16 forced onto OpenBLAS (bf16_s: native bf16 where usable) */
  double step_over_ns;   /* the median over `pairs` paired runs of step time / bf16 NS time, each pair
                            run back to back (a slow spell of the machine falls on both of a pair) */
  int pairs;             /* the runs' rounds and the extra (NS, step) pairs after them */
  double copy_s;         /* the median over 5 runs of copying every parameter of the case once (muonref_stk_copy,
                            the step's threaded copy: 8 bytes an element, read and written) */
  double step_bound;     /* the memory bound of step / NS: (NS + the least memory traffic a step adds to it at
                            the copy's speed) / NS, bench_step_bound; -1 where not measured */
  double torch_s[TORCH_KINDS]; /* indexed by TORCH_BF16, TORCH_FP32, TORCH_BF16_NATIVE */
  double fp32_vs_naive;  /* max over distinct shapes of ||ours fp32 - naive||_F / ||naive||_F */
  size_t ns_work_bytes;  /* muonref_ns_workspace_floats of the largest matrix, bytes */
  size_t opt_work_bytes; /* muonref_optimizer_workspace_floats of the case's optimizer, bytes */
} bench_result;

/* The memory bound of step / NS for a case: 1 + extra / ns_s, extra the
 * time the least memory traffic a step adds to its Newton-Schulz takes at
 * the speed of copying the parameters (copy_s: 8 bytes an element).  A
 * Muon matrix's step reads the momentum and the parameter and writes the
 * new momentum beside what its Newton-Schulz reads and writes (G in, the
 * result out: the new parameter takes the place of the result), 12 bytes an
 * element, 1.5 copies; an AdamW vector's reads G, P, m and v and writes P,
 * m and v, 28 bytes, 3.5 copies.  muonref's step moves more than that: it
 * keeps a step's new values apart until every parameter is checked
 * (spec/muon.md section 3: a refused step changes nothing), a write and a
 * read more per Muon element.  -1 where a time is missing. */
double bench_step_bound(const bench_case *c, double copy_s, double ns_s);

/* Times our bf16 Newton-Schulz as dispatched (native bf16 through oneDNN
 * where usable) and forced onto OpenBLAS, our fp32 Newton-Schulz
 * (muonref_fast_ns with a workspace made beforehand), a whole
 * muonref_optimizer_step over the case (nemo profile, bf16: Muon on every
 * matrix, AdamW on every vector; one untimed step first, as a training
 * loop's first step touches the optimizer's memory), and bench_naive_ns,
 * each `warmup`
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

/* The machine a report was measured on. */
typedef struct bench_machine {
  char cpu[96];          /* /proc/cpuinfo "model name", or "unknown" */
  int cores;             /* processors online */
  int avx2, avx512_bf16; /* the CPU flags that decide the bf16 path and its bound */
  double load_start[3], load_end[3]; /* getloadavg: 1, 5 and 15 minutes, before the peak and after the cases (-1: unknown) */
  char date[32];         /* UTC, when the run started */
} bench_machine;

/* Fills *mc but load_end (the CPU, the cores, the load now, the date). */
void bench_machine_read(bench_machine *mc);

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
  bench_machine machine;
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
 * are left out): issue 28's whole optimizer step <= 1.03 x its bf16
 * Newton-Schulz on every case; where `native` (our bf16 runs on bf16
 * instructions) issue 15's on every case whose matrices all have
 * min(rows, cols) >= 1024, bf16 time <= 0.70 x naive fp32 and <= 0.75 x
 * PyTorch bf16; without it issue 28's for fp32 arithmetic (the symmetric
 * products' bound, bench_sym_flops: 0.667 and 0.722), bf16 time <= 0.72
 * x naive fp32 on 1024x1024 and <= 0.76 x on 1024x4096; and issue 6's
 * PyTorch fp32 time >= 1.3 x our bf16 time on 1024x1024.  Writes at most
 * `max` into t; returns how many. */
size_t bench_targets(const bench_case *cases, const bench_result *results, size_t n, int native, bench_target *t,
                     size_t max);

/* The report as an aligned table, as one JSON object, or as a Markdown
 * page for docs/ (`muonref bench --markdown > docs/bench.md`), on f;
 * `command` is the command line, for the page. */
void bench_print_text(FILE *f, const bench_case *cases, const bench_result *results, size_t n,
                      const bench_meta *m);
void bench_print_json(FILE *f, const bench_case *cases, const bench_result *results, size_t n,
                      const bench_meta *m);
void bench_print_markdown(FILE *f, const bench_case *cases, const bench_result *results, size_t n,
                          const bench_meta *m, const char *command);

#endif
