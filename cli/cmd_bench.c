/* muonref bench: times our bf16 and fp32 Newton-Schulz and a whole optimizer
 * step against a naive fp32 baseline (three sgemm per step) and, where
 * PyTorch is importable, PyTorch's CPU bf16 and fp32 Newton-Schulz, all in
 * one run, and prints the figures, the ratios and the targets of issue 6
 * (a table, or JSON with --json).  Speeds are measured here, never asserted
 * by the tests. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "config.h"
#include "../bench/bench.h"
#include "../fast/ns_dnnl.h"
#include "commands.h"
#include "datapath.h"

#ifndef MUONREF_PYTHON
#define MUONREF_PYTHON "/usr/bin/python3"
#endif
#ifndef MUONREF_TORCH_SCRIPT_SRC
#define MUONREF_TORCH_SCRIPT_SRC "bench/torch_ns.py"
#endif
#ifndef MUONREF_TORCH_SCRIPT_INST
#define MUONREF_TORCH_SCRIPT_INST MUONREF_TORCH_SCRIPT_SRC
#endif

enum { MAX_CASES = 16, MAX_DIM = 16384 };

static const char USAGE[] =
  "usage: muonref bench [--json | --markdown] [--quick] [--shapes LIST] [--reps N] [--set-reps N]\n"
  "                     [--no-torch] [--torch-bf16-shapes LIST] [--torch-fp32-shapes LIST]\n"
  "                     [--torch-bf16-native-shapes LIST] [--torch-reps N] [--python PATH]\n"
  "                     [--torch-script PATH] [--time-budget S]\n"
  "  --json: one JSON object; --markdown: a page for docs/ (muonref bench --markdown >\n"
  "        docs/bench.md), with the CPU and the load average; default: aligned tables.\n"
  "  LIST: comma-separated RxC shapes (1..16384) and 'transformer' (12 layers of 768x768 x4\n"
  "        and 768x3072 x2, and for the optimizer step their 120 AdamW vectors); 'none' for no\n"
  "        case.\n"
  "  Defaults: --shapes 256x1024,1024x1024,1024x4096,4096x1024,transformer;\n"
  "        --torch-bf16-shapes 1024x1024,1024x4096; --torch-fp32-shapes: the single shapes run;\n"
  "        --torch-bf16-native-shapes none (PyTorch bf16 with oneDNN disabled: ~2.7 GFLOP/s,\n"
  "        12 s a run for 1024x1024); --reps 5 (single shapes, after 1 warm-up);\n"
  "        --set-reps 2 (sets, no warm-up: the single shapes before warm the library up);\n"
  "        --torch-reps 3 (after a warm-up on the case's first matrix);\n"
  "        --time-budget 300: seconds for our timings (PyTorch comes after); a case takes fewer\n"
  "        runs (at least one) and fewer paired (NS, step) runs for step / NS (up to 16, at most\n"
  "        15 s a case, 90 s a set) rather than overrun it, so that the default bench ends\n"
  "        within 7 minutes on a 2-core machine.  The runs and pairs taken are reported.\n"
  "  --quick: 64x256, 256x64 and 2 layers of d = 32, 3 runs (sets 2), no PyTorch unless a\n"
  "        --torch-*-shapes option asks for it.\n";

typedef struct args {
  int json, markdown, quick, no_torch, reps, set_reps, torch_reps, budget;
  const char *shapes, *torch_list[TORCH_KINDS], *python, *script;
} args;

static int bad(const char *input, const char *rule)
{
  fprintf(stderr, "muonref bench: %s: %s\n%s", input, rule, USAGE);
  return EXIT_USAGE;
}

/* *out <- the integer in s when it lies in [lo, hi]; -1 otherwise. */
static int parse_int(const char *s, int lo, int hi, int *out)
{
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi)
    return -1;
  *out = (int)v;
  return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
  *a = (args){0, 0, 0, 0, 5, 2, 3, 300, NULL, {NULL, NULL, NULL}, MUONREF_PYTHON, NULL};
  int reps_set = 0, set_reps_set = 0;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(o, "--json")) a->json = 1;
    else if (!strcmp(o, "--markdown")) a->markdown = 1;
    else if (!strcmp(o, "--quick")) a->quick = 1;
    else if (!strcmp(o, "--no-torch")) a->no_torch = 1;
    else if (!v && o[0] == '-' && o[1] == '-' && strcmp(o, "--help"))
      return bad(o, "this option needs a value");
    else if (!strcmp(o, "--reps") && ++i) {
      if (parse_int(v, 1, 64, &a->reps)) return bad("--reps", "must be an integer from 1 to 64");
      reps_set = 1;
    } else if (!strcmp(o, "--set-reps") && ++i) {
      if (parse_int(v, 1, 64, &a->set_reps)) return bad("--set-reps", "must be an integer from 1 to 64");
      set_reps_set = 1;
    } else if (!strcmp(o, "--torch-reps") && ++i) {
      if (parse_int(v, 1, 64, &a->torch_reps)) return bad("--torch-reps", "must be an integer from 1 to 64");
    } else if (!strcmp(o, "--time-budget") && ++i) {
      if (parse_int(v, 1, 86400, &a->budget)) return bad("--time-budget", "must be an integer from 1 to 86400 (seconds)");
    } else if (!strcmp(o, "--shapes") && ++i) a->shapes = v;
    else if (!strcmp(o, "--torch-bf16-shapes") && ++i) a->torch_list[TORCH_BF16] = v;
    else if (!strcmp(o, "--torch-fp32-shapes") && ++i) a->torch_list[TORCH_FP32] = v;
    else if (!strcmp(o, "--torch-bf16-native-shapes") && ++i) a->torch_list[TORCH_BF16_NATIVE] = v;
    else if (!strcmp(o, "--python") && ++i) a->python = v;
    else if (!strcmp(o, "--torch-script") && ++i) a->script = v;
    else if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      fputs(USAGE, stdout);
      exit(EXIT_OK);
    } else
      return bad(o, "unknown option");
  }
  if (a->json && a->markdown)
    return bad("--json/--markdown", "choose one output format");
  if (a->quick) {
    a->reps = reps_set ? a->reps : 3;
    a->set_reps = set_reps_set ? a->set_reps : 2;
  }
  return EXIT_OK;
}

/* Parses one LIST token into case c: "RxC" or "transformer". */
static int parse_case(const char *tok, bench_case *c)
{
  if (!strcmp(tok, "transformer")) {
    bench_case_layers(c, "transformer", 12, 768);
    return 0;
  }
  unsigned long r, k;
  char tail;
  if (sscanf(tok, "%lux%lu%c", &r, &k, &tail) != 2 || r < 1 || k < 1 || r > MAX_DIM || k > MAX_DIM ||
      strspn(tok, "0123456789x") != strlen(tok))
    return -1;
  bench_case_single(c, r, k);
  return 0;
}

/* The cases of --shapes (or the defaults) into cases; returns the count, or
 * -1 after printing the usage error. */
static int build_cases(const args *a, bench_case *cases)
{
  if (!a->shapes && a->quick) {
    bench_case_single(&cases[0], 64, 256);
    bench_case_single(&cases[1], 256, 64);
    bench_case_layers(&cases[2], "mini-set", 2, 32);
    return 3;
  }
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", a->shapes ? a->shapes : "256x1024,1024x1024,1024x4096,4096x1024,transformer");
  int n = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (n == MAX_CASES)
      return bad("--shapes", "at most 16 cases"), -1;
    if (parse_case(tok, &cases[n++])) {
      fprintf(stderr, "muonref bench: --shapes: '%s' is neither RxC with 1 <= R, C <= 16384 nor 'transformer'\n",
              tok);
      return -1;
    }
  }
  if (!n)
    return bad("--shapes", "needs at least one case"), -1;
  return n;
}

/* want[i] <- whether case i is named in list (NULL: the default rule). */
static int select_cases(const char *opt, const char *list, const bench_case *cases, int n, int *want,
                        int default_singles, int default_1024)
{
  for (int i = 0; i < n; i++)
    want[i] = list ? 0 : (default_singles && cases[i].n == 1) ||
                           (default_1024 && (!strcmp(cases[i].name, "1024x1024") ||
                                             !strcmp(cases[i].name, "1024x4096")));
  if (!list || !strcmp(list, "none"))
    return 0;
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int found = 0;
    for (int i = 0; i < n; i++)
      if (!strcmp(tok, cases[i].name))
        want[i] = found = 1;
    if (!found) {
      fprintf(stderr, "muonref bench: %s: '%s' is not one of the cases run (see --shapes)\n", opt, tok);
      return -1;
    }
  }
  return 0;
}

static const char *torch_script(const args *a)
{
  if (a->script)
    return a->script;
  return cli_data_path(NULL, MUONREF_TORCH_SCRIPT_SRC, MUONREF_TORCH_SCRIPT_INST);
}

/* Runs the PyTorch part into results and *m. */
static void run_torch(const args *a, const bench_case *cases, int n, int *const want[TORCH_KINDS],
                      bench_result *results, bench_meta *m)
{
  double s[TORCH_KINDS][MAX_CASES];
  double *const secs[TORCH_KINDS] = {s[0], s[1], s[2]};
  const char *script = torch_script(a);
  if (access(a->python, X_OK) != 0) {
    m->torch_note = "the Python interpreter was not found (--python)";
    return;
  }
  if (access(script, R_OK) != 0) {
    m->torch_note = "bench/torch_ns.py was not found (--torch-script)";
    return;
  }
  m->torch_ok = !bench_torch(a->python, script, cases, (size_t)n, want, a->torch_reps, secs, &m->torch_peak_rss_kib,
                             &m->torch_threads, &m->torch_note);
  for (int k = 0; k < TORCH_KINDS; k++)
    for (int i = 0; i < n; i++)
      results[i].torch_s[k] = s[k][i];
}

/* oneDNN runs on OpenMP (libgomp), whose threads spin after each parallel
 * region by default; on a shared 2-core machine they spin against
 * OpenBLAS's threads and other processes, and the native bf16
 * Newton-Schulz measured 790-930 ms a run at 1024x1024 instead of 93-171 ms
 * with OMP_WAIT_POLICY=PASSIVE (here, load average 7).  libgomp reads the
 * policy once, when it is loaded, so the bench sets it and re-executes
 * itself unless the caller chose a policy; the PyTorch script inherits it.
 * argv is main's argv + 1 (cli/main.c), so argv - 1 is the whole command. */
static void passive_openmp(char **argv)
{
#ifdef HAVE_DNNL
  if (getenv("OMP_WAIT_POLICY"))
    return;
  if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) == 0)
    execv("/proc/self/exe", argv - 1);
  /* exec failed: go on with the default policy (reported) */
#else
  (void)argv;
#endif
}

int cmd_bench(int argc, char **argv)
{
  static const char *const OPT[TORCH_KINDS] = {"--torch-bf16-shapes", "--torch-fp32-shapes",
                                               "--torch-bf16-native-shapes"};
  args a;
  bench_case cases[MAX_CASES];
  bench_result results[MAX_CASES];
  int w[TORCH_KINDS][MAX_CASES];
  int *const want[TORCH_KINDS] = {w[0], w[1], w[2]};
  if (parse_args(argc, argv, &a))
    return EXIT_USAGE;
  passive_openmp(argv);
  int n = build_cases(&a, cases);
  if (n < 0)
    return EXIT_USAGE;
  int dflt = !a.quick && !a.no_torch;
  for (int k = 0; k < TORCH_KINDS; k++)
    if (select_cases(OPT[k], a.torch_list[k], cases, n, want[k], dflt && k == TORCH_FP32, dflt && k == TORCH_BF16))
      return EXIT_USAGE;
  if (strchr(a.python, '\'') || (a.script && strchr(a.script, '\'')))
    return bad("--python/--torch-script", "a path must not contain a single quote");
  bench_meta m = {a.reps, a.set_reps, 1, 5, openblas_get_num_threads(), a.budget, openblas_get_corename(), 0, 0,
                  "not asked for (--no-torch)", -1, -1, -1, -1, 0, NULL, NULL, {"", 0, 0, 0, {0, 0, 0}, {0, 0, 0}, ""}};
  bench_machine_read(&m.machine);
  int quiet = a.json || a.markdown;
  const char *why = NULL;
  m.native = muonref_nsd_usable(&why);
  m.native_note = m.native ? "oneDNN bf16 matmul (AVX-512 BF16 or AMX) above m^2 n = 262144, OpenBLAS below" : why;
  m.omp_wait_policy = getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "default";
  if (!quiet)
    fprintf(stderr, "muonref bench: peak ...\n");
  if (bench_peak(a.quick ? 1 : 3, &m.peak_fp32, &m.peak_bf16, &why)) {
    fprintf(stderr, "muonref bench: out of memory for the peak microbenchmark\n");
    return EXIT_INTERNAL;
  }
  double deadline = bench_now() + a.budget;
  for (int i = 0; i < n; i++) {
    muonref_error err;
    int set = cases[i].n > 1;
    if (!quiet && muonref_verbosity >= 0)
      fprintf(stderr, "muonref bench: %s ...\n", cases[i].name);
    if (bench_run_case(&cases[i], set ? 0 : 1, set ? a.set_reps : a.reps, deadline, &results[i], &err)) {
      fprintf(stderr, "muonref bench: %s: %s\n", cases[i].name, err.message);
      return EXIT_INTERNAL;
    }
  }
  int any_torch = 0;
  for (int k = 0; k < TORCH_KINDS; k++)
    for (int i = 0; i < n; i++)
      any_torch |= want[k][i];
  if (!a.no_torch && any_torch) {
    if (!quiet && muonref_verbosity >= 0)
      fprintf(stderr, "muonref bench: PyTorch ...\n");
    run_torch(&a, cases, n, want, results, &m);
  } else if (!a.no_torch) {
    m.torch_note = "no PyTorch case asked for";
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  m.peak_rss_kib = ru.ru_maxrss;
  if (getloadavg(m.machine.load_end, 3) != 3)
    m.machine.load_end[0] = -1;
  if (a.markdown) {
    char command[1024] = "muonref";
    for (int i = 0; i < argc; i++) /* argv[0] is "bench" */
      snprintf(command + strlen(command), sizeof command - strlen(command), " %s", argv[i]);
    bench_print_markdown(stdout, cases, results, (size_t)n, &m, command);
  } else {
    (a.json ? bench_print_json : bench_print_text)(stdout, cases, results, (size_t)n, &m);
  }
  return EXIT_OK;
}
