/* muonref bench: PyTorch CPU timings through bench/torch_ns.py (see bench.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "bench.h"

/* Appends " 'DTYPE:NAME:SPEC'" for case c to cmd (size bytes); -1 if full. */
static int add_case(char *cmd, size_t size, const char *dtype, const bench_case *c)
{
  char spec[512];
  if (bench_case_spec(c, spec, sizeof spec))
    return -1;
  size_t used = strlen(cmd);
  int w = snprintf(cmd + used, size - used, " '%s:%s:%s'", dtype, c->name, spec);
  return w < 0 || (size_t)w >= size - used ? -1 : 0;
}

static const char *const KIND[TORCH_KINDS] = {"bf16", "fp32", "bf16native"};

/* Reads the script's RESULT, THREADS and PEAKRSS lines into the figures. */
static int read_results(FILE *p, const bench_case *cases, size_t n, double *const secs[TORCH_KINDS],
                        long *rss_kib, int *threads, const char **why)
{
  char line[512], dtype[16], name[64];
  double s;
  int notorch = 0;
  while (fgets(line, sizeof line, p)) {
    if (!strncmp(line, "NOTORCH", 7))
      notorch = 1;
    if (sscanf(line, "THREADS %d", threads) == 1 || sscanf(line, "PEAKRSS %ld", rss_kib) == 1)
      continue;
    if (sscanf(line, "RESULT %15s %63s %lf", dtype, name, &s) != 3)
      continue;
    for (int k = 0; k < TORCH_KINDS; k++)
      for (size_t i = 0; i < n; i++)
        if (!strcmp(dtype, KIND[k]) && !strcmp(name, cases[i].name))
          secs[k][i] = s;
  }
  if (notorch)
    *why = "torch is not importable by that interpreter";
  return notorch ? -1 : 0;
}

int bench_torch(const char *python, const char *script, const bench_case *cases, size_t n,
                int *const want[TORCH_KINDS], int reps, double *const secs[TORCH_KINDS], long *rss_kib,
                int *threads, const char **why)
{
  static char cmd[8192];
  int any = 0;
  *rss_kib = -1;
  *threads = 0;
  for (int k = 0; k < TORCH_KINDS; k++)
    for (size_t i = 0; i < n; i++)
      secs[k][i] = -1;
  snprintf(cmd, sizeof cmd, "'%s' '%s' --reps %d", python, script, reps);
  for (int k = 0; k < TORCH_KINDS; k++)
    for (size_t i = 0; i < n; i++) {
      if (want[k][i] && add_case(cmd, sizeof cmd, KIND[k], &cases[i])) {
        *why = "too many PyTorch cases for one command line";
        return -1;
      }
      any |= want[k][i];
    }
  if (!any) {
    *why = "no PyTorch case asked for";
    return -1;
  }
  fflush(NULL);
  FILE *p = popen(cmd, "r");
  if (!p) {
    *why = "could not start the Python interpreter";
    return -1;
  }
  int st = read_results(p, cases, n, secs, rss_kib, threads, why);
  int rc = pclose(p);
  if (!st && (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0)) {
    *why = "the PyTorch script failed (run it by hand to see why)";
    st = -1;
  }
  return st;
}
