/* muonref bench: the report, as a table or as JSON (see bench.h). */
#include "bench.h"

static const char FLOP_MODEL[] = "per Newton-Schulz step on (rows, cols), m = min, n = max: 4 m^2 n + 2 m^3 "
                                 "flops for every implementation (three GEMMs), element-wise work not counted; "
                                 "GFLOP/s = model flops / time, so GFLOP/s ratios are time ratios";
static const char PEAK_MODEL[] = "fraction of peak = model GFLOP/s / the measured peak of the arithmetic it runs on "
                                 "(bf16 peak: oneDNN bf16 matmul 2048^3; fp32 peak: OpenBLAS sgemm 2048^3); our "
                                 "paths skip half of X X^T and A A, so they can exceed 1";

/* The peak (GFLOP/s) our dispatched bf16 path runs against. */
static double bf16_peak(const bench_meta *m) { return m->native ? m->peak_bf16 : m->peak_fp32; }

/* Model GFLOP/s over peak, or -1. */
static double frac(double flops, double s, double peak) { return s > 0 && peak > 0 ? flops / s * 1e-9 / peak : -1; }

/* "  12.345 ms  123.4" for seconds s and flops, or blanks when s < 0. */
static void cell(FILE *f, double s, double flops)
{
  if (s < 0)
    fprintf(f, " %10s %6s", "-", "-");
  else
    fprintf(f, " %10.2f %6.1f", s * 1e3, flops / s * 1e-9);
}

static void ratio(FILE *f, double num, double den)
{
  if (num < 0 || den <= 0)
    fprintf(f, " %7s", "-");
  else
    fprintf(f, " %7.3f", num / den);
}

void bench_print_text(FILE *f, const bench_case *cases, const bench_result *results, size_t n,
                      const bench_meta *m)
{
  fprintf(f, "muonref bench: Newton-Schulz (%d steps) and optimizer step; median of up to %d runs after %d warm-up "
             "(sets: up to %d runs, no warm-up; fewer to keep within %.0f s: column runs); OpenBLAS threads %d, "
             "kernels %s\n",
          m->ns_steps, m->reps, m->warmup, m->set_reps, m->budget_s, m->threads, m->blas_core);
  fprintf(f, "flop model: %s\n\n", FLOP_MODEL);
  fprintf(f, "our bf16 GEMM: %s; OMP_WAIT_POLICY %s; measured peak: fp32 %.1f GFLOP/s, bf16 ", m->native_note,
          m->omp_wait_policy, m->peak_fp32);
  if (m->peak_bf16 > 0)
    fprintf(f, "%.1f GFLOP/s\n", m->peak_bf16);
  else
    fprintf(f, "not measured\n");
  fprintf(f, "%s\n\n", PEAK_MODEL);
  fprintf(f, "%-12s %4s %4s %8s | %-17s | %-17s | %-17s | %-17s | %-17s | %-17s | %-17s | %-17s |", "case", "mats", "runs",
          "GFLOP", "naive fp32 ms GF/s", "bf16 ms GF/s", "bf16 BLAS ms GF/s", "fp32 ms GF/s", "step(bf16) ms GF/s",
          "torch bf16 ms GF/s", "torch fp32 ms GF/s", "t.bf16 noDNN ms GF/s");
  fprintf(f, " %7s %7s %7s %7s %7s %7s\n", "bf16/nv", "fp32/nv", "step/nv", "tb16/b", "tf32/b", "tnat/b");
  for (size_t i = 0; i < n; i++) {
    const bench_result *r = &results[i];
    fprintf(f, "%-12s %4zu %4d %8.2f |", cases[i].name, cases[i].n, r->runs, r->flops * 1e-9);
    cell(f, r->naive_s, r->flops), fputs(" |", f);
    cell(f, r->bf16_s, r->flops), fputs(" |", f);
    cell(f, r->bf16_blas_s, r->flops), fputs(" |", f);
    cell(f, r->fp32_s, r->flops), fputs(" |", f);
    cell(f, r->step_s, r->flops), fputs(" |", f);
    for (int k = 0; k < TORCH_KINDS; k++)
      cell(f, r->torch_s[k], r->flops), fputs(" |", f);
    ratio(f, r->bf16_s, r->naive_s), ratio(f, r->fp32_s, r->naive_s), ratio(f, r->step_s, r->naive_s);
    for (int k = 0; k < TORCH_KINDS; k++)
      ratio(f, r->torch_s[k], r->bf16_s);
    fputc('\n', f);
  }
  fprintf(f, "\nratios: x/nv = time / naive fp32 time (lower is faster); tb16/b, tf32/b, tnat/b = PyTorch bf16, "
             "fp32, bf16 without oneDNN time / our bf16 time (higher: we are faster)\n");
  fprintf(f, "\nfraction of peak, and our bf16 against PyTorch bf16 and against its own step:\n");
  fprintf(f, "%-12s %9s %9s %9s %9s %9s | %9s %9s %9s\n", "case", "naive", "bf16", "bf16 BLAS", "fp32", "torch b16",
          "bf16/tb16", "bf16B/nv", "step/bf16");
  for (size_t i = 0; i < n; i++) {
    const bench_result *r = &results[i];
    fprintf(f, "%-12s %9.3f %9.3f %9.3f %9.3f", cases[i].name, frac(r->flops, r->naive_s, m->peak_fp32),
            frac(r->flops, r->bf16_s, bf16_peak(m)), frac(r->flops, r->bf16_blas_s, m->peak_fp32),
            frac(r->flops, r->fp32_s, m->peak_fp32));
    double tb = frac(r->flops, r->torch_s[TORCH_BF16], m->peak_bf16);
    if (tb < 0)
      fprintf(f, " %9s |", "-");
    else
      fprintf(f, " %9.3f |", tb);
    ratio(f, r->bf16_s, r->torch_s[TORCH_BF16]), ratio(f, r->bf16_blas_s, r->naive_s), ratio(f, r->step_s, r->bf16_s);
    fputc('\n', f);
  }
  fprintf(f, "\n%-12s %14s %14s %12s\n", "case", "NS work KiB", "opt work KiB", "fp32-naive");
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%-12s %14.1f %14.1f %12.2e\n", cases[i].name, results[i].ns_work_bytes / 1024.0,
            results[i].opt_work_bytes / 1024.0, results[i].fp32_vs_naive);
  fprintf(f, "\npeak resident memory: %ld KiB (this process)", m->peak_rss_kib);
  if (m->torch_ok)
    fprintf(f, ", %ld KiB (PyTorch, %d threads)\n", m->torch_peak_rss_kib, m->torch_threads);
  else
    fprintf(f, "; PyTorch not measured: %s\n", m->torch_note);
  bench_target t[64];
  size_t k = bench_targets(cases, results, n, m->native, t, 64);
  fprintf(f, "\ntargets:\n");
  for (size_t i = 0; i < k; i++)
    fprintf(f, "  %-32s %-12s %8.3f %s %-5g %s\n", t[i].what, t[i].case_name, t[i].value, t[i].rule, t[i].limit,
            t[i].met ? "met" : "NOT met");
  if (!k)
    fprintf(f, "  (none judgeable from these cases)\n");
}

/* A number, or null when not measured (x < 0). */
static void num(FILE *f, const char *key, double x, int comma)
{
  if (x < 0)
    fprintf(f, "\"%s\": null", key);
  else
    fprintf(f, "\"%s\": %.9g", key, x);
  fputs(comma ? ", " : "", f);
}

static double div_or_neg(double a, double b) { return a < 0 || b <= 0 ? -1 : a / b; }

static void json_case(FILE *f, const bench_case *c, const bench_result *r, const bench_meta *m)
{
  fprintf(f, "{\"name\": \"%s\", \"matrices\": %zu, \"runs\": %d, ", c->name, c->n, r->runs);
  num(f, "gflop", r->flops * 1e-9, 1);
  fprintf(f, "\"ns_workspace_bytes\": %zu, \"optimizer_workspace_bytes\": %zu, ", r->ns_work_bytes,
          r->opt_work_bytes);
  fprintf(f, "\"seconds\": {");
  num(f, "naive_fp32", r->naive_s, 1), num(f, "bf16", r->bf16_s, 1), num(f, "bf16_blas", r->bf16_blas_s, 1);
  num(f, "fp32", r->fp32_s, 1);
  num(f, "step", r->step_s, 1), num(f, "torch_bf16", r->torch_s[TORCH_BF16], 1);
  num(f, "torch_fp32", r->torch_s[TORCH_FP32], 1), num(f, "torch_bf16_native", r->torch_s[TORCH_BF16_NATIVE], 0);
  fprintf(f, "}, \"gflops\": {");
  num(f, "naive_fp32", div_or_neg(r->flops * 1e-9, r->naive_s), 1);
  num(f, "bf16", div_or_neg(r->flops * 1e-9, r->bf16_s), 1);
  num(f, "bf16_blas", div_or_neg(r->flops * 1e-9, r->bf16_blas_s), 1);
  num(f, "fp32", div_or_neg(r->flops * 1e-9, r->fp32_s), 1);
  num(f, "step", div_or_neg(r->flops * 1e-9, r->step_s), 1);
  num(f, "torch_bf16", div_or_neg(r->flops * 1e-9, r->torch_s[TORCH_BF16]), 1);
  num(f, "torch_fp32", div_or_neg(r->flops * 1e-9, r->torch_s[TORCH_FP32]), 1);
  num(f, "torch_bf16_native", div_or_neg(r->flops * 1e-9, r->torch_s[TORCH_BF16_NATIVE]), 0);
  fprintf(f, "}, \"ratios\": {");
  num(f, "bf16_over_naive", div_or_neg(r->bf16_s, r->naive_s), 1);
  num(f, "bf16_blas_over_naive", div_or_neg(r->bf16_blas_s, r->naive_s), 1);
  num(f, "bf16_over_torch_bf16", div_or_neg(r->bf16_s, r->torch_s[TORCH_BF16]), 1);
  num(f, "step_over_bf16", div_or_neg(r->step_s, r->bf16_s), 1);
  num(f, "fp32_over_naive", div_or_neg(r->fp32_s, r->naive_s), 1);
  num(f, "step_over_naive", div_or_neg(r->step_s, r->naive_s), 1);
  num(f, "torch_bf16_over_bf16", div_or_neg(r->torch_s[TORCH_BF16], r->bf16_s), 1);
  num(f, "torch_fp32_over_bf16", div_or_neg(r->torch_s[TORCH_FP32], r->bf16_s), 1);
  num(f, "torch_bf16_native_over_bf16", div_or_neg(r->torch_s[TORCH_BF16_NATIVE], r->bf16_s), 0);
  fprintf(f, "}, \"fraction_of_peak\": {");
  num(f, "naive_fp32", frac(r->flops, r->naive_s, m->peak_fp32), 1);
  num(f, "bf16", frac(r->flops, r->bf16_s, bf16_peak(m)), 1);
  num(f, "bf16_blas", frac(r->flops, r->bf16_blas_s, m->peak_fp32), 1);
  num(f, "fp32", frac(r->flops, r->fp32_s, m->peak_fp32), 1);
  num(f, "torch_bf16", frac(r->flops, r->torch_s[TORCH_BF16], m->peak_bf16), 1);
  num(f, "torch_fp32", frac(r->flops, r->torch_s[TORCH_FP32], m->peak_fp32), 0);
  fprintf(f, "}, ");
  num(f, "fp32_vs_naive_rel_err", r->fp32_vs_naive, 0);
  fputc('}', f);
}

void bench_print_json(FILE *f, const bench_case *cases, const bench_result *results, size_t n,
                      const bench_meta *m)
{
  fprintf(f, "{\"flop_model\": \"%s\", \"ns_steps\": %d, \"reps\": %d, \"set_reps\": %d, \"warmup\": %d, "
             "\"openblas_threads\": %d, \"openblas_core\": \"%s\", \"time_budget_s\": %g,\n \"cases\": [",
          FLOP_MODEL, m->ns_steps, m->reps, m->set_reps, m->warmup, m->threads, m->blas_core, m->budget_s);
  for (size_t i = 0; i < n; i++) {
    fputs(i ? ",\n  " : "\n  ", f);
    json_case(f, &cases[i], &results[i], m);
  }
  fprintf(f, "],\n \"bf16_gemm\": {\"native\": %s, \"note\": \"%s\", \"omp_wait_policy\": \"%s\"}, "
             "\"peak_model\": \"%s\", \"peak_gflops\": {",
          m->native ? "true" : "false", m->native_note, m->omp_wait_policy, PEAK_MODEL);
  num(f, "fp32", m->peak_fp32, 1), num(f, "bf16", m->peak_bf16, 0);
  fprintf(f, "},\n \"peak_rss_kib\": %ld, \"torch\": {\"measured\": %s, \"note\": \"%s\", \"peak_rss_kib\": %ld, "
             "\"threads\": %d},\n",
          m->peak_rss_kib, m->torch_ok ? "true" : "false", m->torch_ok ? "" : m->torch_note, m->torch_peak_rss_kib,
          m->torch_threads);
  bench_target t[64];
  size_t k = bench_targets(cases, results, n, m->native, t, 64);
  fprintf(f, " \"targets\": [");
  for (size_t i = 0; i < k; i++)
    fprintf(f, "%s{\"what\": \"%s\", \"case\": \"%s\", \"value\": %.6g, \"rule\": \"%s\", \"limit\": %g, \"met\": %s}",
            i ? ",\n  " : "\n  ", t[i].what, t[i].case_name, t[i].value, t[i].rule, t[i].limit,
            t[i].met ? "true" : "false");
  fprintf(f, "]}\n");
}
