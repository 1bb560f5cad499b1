/* muonref bench: the report, as a table or as JSON (see bench.h). */
#include "bench.h"

static const char FLOP_MODEL[] = "per Newton-Schulz step on (rows, cols), m = min, n = max: 4 m^2 n + 2 m^3 "
                                 "flops for every implementation (three GEMMs), element-wise work not counted; "
                                 "GFLOP/s = model flops / time, so GFLOP/s ratios are time ratios";
static const char PEAK_MODEL[] = "fraction of peak = model GFLOP/s / the measured peak of the arithmetic it runs on "
                                 "(bf16 peak: oneDNN bf16 matmul 2048^3; fp32 peak: OpenBLAS sgemm 2048^3); our "
                                 "paths skip half of X X^T and A A, so they can exceed 1";

static const char BOUND_BLAS[] = "symmetric products on fp32 arithmetic (no bf16 instructions: OpenBLAS ssyrk and "
                                 "ssymm on bf16-valued floats): our bf16 time / naive fp32 time is at least our GEMM "
                                 "flops / the naive flops, (3 m^2 n + m^3) / (4 m^2 n + 2 m^3) per step (0.667 for a "
                                 "square matrix), when both run at the same GFLOP/s";
static const char BOUND_NATIVE[] = "native bf16 (oneDNN bf16 matmul): the bf16 peak, not the symmetric products' "
                                   "flop ratio (which bounds the bf16 BLAS column)";

static const char STEP_BOUND[] = "the memory bound of step / NS: 1 + the time the least memory traffic a step "
                                 "adds to its Newton-Schulz takes at the speed of copying the case's parameters "
                                 "(read M and P, write the new M: 1.5 copies a matrix element; AdamW's 3.5 a vector "
                                 "element) / NS; muonref's step also writes and reads back each new value (a refused "
                                 "step changes nothing), 2.5 copies a matrix element";

static const char *bound_kind(const bench_meta *m) { return m->native ? BOUND_NATIVE : BOUND_BLAS; }

/* The bound of our bf16 time over the naive fp32 time on fp32 arithmetic. */
static double bound(const bench_result *r) { return r->flops > 0 ? r->sym_flops / r->flops : -1; }

/* (num / den) / the bound: 1 at the bound, above it slower; -1 when unknown. */
static double of_bound(const bench_result *r, double num, double den)
{
  return num > 0 && den > 0 && bound(r) > 0 ? num / den / bound(r) : -1;
}

/* "15.2 13.0 9.8", the load averages, or "unknown". */
static const char *loads(char *buf, size_t size, const double *l)
{
  if (l[0] < 0)
    snprintf(buf, size, "unknown");
  else
    snprintf(buf, size, "%.2f %.2f %.2f", l[0], l[1], l[2]);
  return buf;
}

/* The machine line of the text and Markdown reports. */
static void machine_line(FILE *f, const bench_meta *m)
{
  char a[64], b[64];
  const bench_machine *mc = &m->machine;
  fprintf(f, "machine: %s, %d processors online, %s, %s; load average (1, 5, 15 min) %s at the start, %s at the end; "
             "%s\n",
          mc->cpu, mc->cores, mc->avx2 ? "AVX2" : "no AVX2", mc->avx512_bf16 ? "AVX-512 BF16" : "no AVX-512 BF16",
          loads(a, sizeof a, mc->load_start), loads(b, sizeof b, mc->load_end), mc->date);
}

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

/* The targets, one line each in `line` (what, case, value, rule, limit,
 * verdict: "met" or `not_met`), or `none` when no target is judgeable. */
static void print_targets(FILE *f, const bench_case *cases, const bench_result *results, size_t n,
                          const bench_meta *m, const char *line, const char *not_met, const char *none)
{
  bench_target t[64];
  size_t k = bench_targets(cases, results, n, m->native, t, 64);
  for (size_t i = 0; i < k; i++)
    fprintf(f, line, t[i].what, t[i].case_name, t[i].value, t[i].rule, t[i].limit, t[i].met ? "met" : not_met);
  if (!k)
    fputs(none, f);
}

void bench_print_text(FILE *f, const bench_case *cases, const bench_result *results, size_t n,
                      const bench_meta *m)
{
  fprintf(f, "muonref bench: Newton-Schulz (%d steps) and optimizer step; median of up to %d runs after %d warm-up "
             "(sets: up to %d runs, no warm-up; fewer to keep within %.0f s: column runs); OpenBLAS threads %d, "
             "kernels %s\n",
          m->ns_steps, m->reps, m->warmup, m->set_reps, m->budget_s, m->threads, m->blas_core);
  machine_line(f, m);
  fprintf(f, "flop model: %s\n\n", FLOP_MODEL);
  fprintf(f, "our bf16 GEMM: %s; OMP_WAIT_POLICY %s; measured peak: fp32 %.1f GFLOP/s, bf16 ", m->native_note,
          m->omp_wait_policy, m->peak_fp32);
  if (m->peak_bf16 > 0)
    fprintf(f, "%.1f GFLOP/s\n", m->peak_bf16);
  else
    fprintf(f, "not measured\n");
  fprintf(f, "%s\n", PEAK_MODEL);
  fprintf(f, "bound of our bf16 Newton-Schulz: %s\n\n", bound_kind(m));
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
  fprintf(f, "\nfraction of peak; our bf16 against PyTorch bf16, against the bound (of bound: 1.0 at it) and "
             "against its own optimizer step:\n");
  fprintf(f, "%-12s %9s %9s %9s %9s %9s | %9s %9s %9s %9s %9s %9s %-11s %10s\n", "case", "naive", "bf16", "bf16 BLAS",
          "fp32", "torch b16", "bf16/tb16", "bound", "bf16/nv", "of bound", "bf16B/nv", "step/NS", "", "step bound");
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
    ratio(f, r->bf16_s, r->torch_s[TORCH_BF16]);
    fprintf(f, "   %7.3f", bound(r));
    ratio(f, r->bf16_s, r->naive_s);
    double ob = m->native ? of_bound(r, r->bf16_blas_s, r->naive_s) : of_bound(r, r->bf16_s, r->naive_s);
    if (ob < 0)
      fprintf(f, "   %7s", "-");
    else
      fprintf(f, "   %7.3f", ob);
    ratio(f, r->bf16_blas_s, r->naive_s);
    char pairs[24];
    snprintf(pairs, sizeof pairs, "(%d pairs)", r->pairs);
    fprintf(f, "   %7.3f %-11s   ", r->step_over_ns, pairs);
    ratio(f, r->step_bound, 1.0);
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
  fprintf(f, "\ntargets:\n");
  print_targets(f, cases, results, n, m, "  %-32s %-12s %8.3f %s %-5g %s\n", "NOT met",
                "  (none judgeable from these cases)\n");
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
  fprintf(f, "{\"name\": \"%s\", \"matrices\": %zu, \"runs\": %d, \"step_pairs\": %d, ", c->name, c->n, r->runs,
          r->pairs);
  num(f, "gflop", r->flops * 1e-9, 1);
  fprintf(f, "\"ns_workspace_bytes\": %zu, \"optimizer_workspace_bytes\": %zu, ", r->ns_work_bytes,
          r->opt_work_bytes);
  fprintf(f, "\"seconds\": {");
  num(f, "naive_fp32", r->naive_s, 1), num(f, "bf16", r->bf16_s, 1), num(f, "bf16_blas", r->bf16_blas_s, 1);
  num(f, "fp32", r->fp32_s, 1);
  num(f, "step", r->step_s, 1), num(f, "copy", r->copy_s, 1), num(f, "torch_bf16", r->torch_s[TORCH_BF16], 1);
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
  num(f, "step_over_bf16", r->step_over_ns, 1); /* the median of paired runs (bench.h) */
  num(f, "step_over_bf16_memory_bound", r->step_bound, 1); /* bench_step_bound */
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
  fprintf(f, "}, \"bound\": {");
  num(f, "symmetric_flop_ratio", bound(r), 1);
  num(f, "bf16_over_naive_over_bound", m->native ? -1 : of_bound(r, r->bf16_s, r->naive_s), 1);
  num(f, "bf16_blas_over_naive_over_bound", of_bound(r, r->bf16_blas_s, r->naive_s), 0);
  fprintf(f, "}, \"vectors\": %zu, ", c->n_vec);
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
             "\"bf16_bound\": \"%s\",\n \"peak_model\": \"%s\", \"peak_gflops\": {",
          m->native ? "true" : "false", m->native_note, m->omp_wait_policy, bound_kind(m), PEAK_MODEL);
  num(f, "fp32", m->peak_fp32, 1), num(f, "bf16", m->peak_bf16, 0);
  const bench_machine *mc = &m->machine;
  fprintf(f, "},\n \"machine\": {\"cpu\": \"%s\", \"processors\": %d, \"avx2\": %s, \"avx512_bf16\": %s, "
             "\"date\": \"%s\", ", mc->cpu, mc->cores, mc->avx2 ? "true" : "false", mc->avx512_bf16 ? "true" : "false",
          mc->date);
  for (int e = 0; e < 2; e++) {
    const double *l = e ? mc->load_end : mc->load_start;
    fprintf(f, "\"load_average_%s\": ", e ? "end" : "start");
    if (l[0] < 0)
      fprintf(f, "null");
    else
      fprintf(f, "[%.2f, %.2f, %.2f]", l[0], l[1], l[2]);
    fputs(e ? "" : ", ", f);
  }
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

/* A Markdown cell: "12.3" milliseconds, or "-". */
static void md_ms(FILE *f, double s)
{
  if (s < 0)
    fprintf(f, " - |");
  else
    fprintf(f, " %.1f |", s * 1e3);
}

static void md_ratio(FILE *f, double x)
{
  if (x < 0)
    fprintf(f, " - |");
  else
    fprintf(f, " %.3f |", x);
}

void bench_print_markdown(FILE *f, const bench_case *cases, const bench_result *results, size_t n,
                          const bench_meta *m, const char *command)
{
  fprintf(f, "# Benchmarks: one `muonref bench` run\n\n"
             "Written by `%s` (do not edit: run it again). Times are medians of the runs shown, in milliseconds; "
             "the implementations take turns run by run, so the ratios of one run hold better than its times on a "
             "shared machine. Speed is measured here, never asserted by the tests.\n\n", command);
  machine_line(f, m);
  fprintf(f, "\nOpenBLAS kernels %s, %d threads; OMP_WAIT_POLICY %s; our bf16 GEMM: %s. Measured peak: fp32 %.1f "
             "GFLOP/s", m->blas_core, m->threads, m->omp_wait_policy, m->native_note, m->peak_fp32);
  if (m->peak_bf16 > 0)
    fprintf(f, ", bf16 %.1f GFLOP/s", m->peak_bf16);
  fprintf(f, ". Newton-Schulz of %d steps; up to %d runs a case after %d warm-up (sets: up to %d, no warm-up), "
             "within %.0f s.\n\n", m->ns_steps, m->reps, m->warmup, m->set_reps, m->budget_s);
  fprintf(f, "| case | matrices | vectors | runs | naive fp32 | our bf16 | our bf16 (BLAS) | our fp32 | step | torch bf16 "
             "| torch fp32 | bf16 / naive | bound | of bound | step / NS | step bound |\n");
  fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < n; i++) {
    const bench_result *r = &results[i];
    fprintf(f, "| %s | %zu | %zu | %d |", cases[i].name, cases[i].n, cases[i].n_vec, r->runs);
    md_ms(f, r->naive_s), md_ms(f, r->bf16_s), md_ms(f, r->bf16_blas_s), md_ms(f, r->fp32_s), md_ms(f, r->step_s);
    md_ms(f, r->torch_s[TORCH_BF16]), md_ms(f, r->torch_s[TORCH_FP32]);
    md_ratio(f, div_or_neg(r->bf16_s, r->naive_s));
    md_ratio(f, bound(r));
    md_ratio(f, m->native ? of_bound(r, r->bf16_blas_s, r->naive_s) : of_bound(r, r->bf16_s, r->naive_s));
    md_ratio(f, r->step_over_ns);
    md_ratio(f, r->step_bound);
    fputc('\n', f);
  }
  fprintf(f, "\n- step: a whole `muonref_optimizer_step` over the case (profile nemo, bf16; Muon on the matrices, AdamW "
             "on the vectors), against our bf16 Newton-Schulz of its matrices (NS); step / NS: the median of the "
             "ratios of up to %d paired runs (NS then step, back to back: the runs' rounds and extra pairs, at most %d s "
             "a case, %d s a set). step bound: %s\n", BENCH_PAIRS, BENCH_PAIR_BUDGET_S, BENCH_SET_PAIR_BUDGET_S, STEP_BOUND);
  fprintf(f, "- bound: %s. of bound: bf16 / naive over the bound%s (1.0: at it).\n", bound_kind(m),
          m->native ? " for the BLAS column" : "");
  fprintf(f, "- flop model: %s.\n", FLOP_MODEL);
  fprintf(f, "\n| target | case | value | rule | verdict |\n|---|---|---|---|---|\n");
  print_targets(f, cases, results, n, m, "| %s | %s | %.3f | %s %g | %s |\n", "**not met**",
                "| (none judgeable from these cases) | | | | |\n");
  fprintf(f, "\nPeak resident memory: %ld KiB (muonref)", m->peak_rss_kib);
  if (m->torch_ok)
    fprintf(f, ", %ld KiB (PyTorch, %d threads).\n", m->torch_peak_rss_kib, m->torch_threads);
  else
    fprintf(f, "; PyTorch not measured: %s.\n", m->torch_note);
}
