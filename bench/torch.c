/* muonref bench: PyTorch CPU timings through bench/torch_ns.py (see bench.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* Reads the script's "RESULT DTYPE NAME SECONDS" lines into the figures. */
static int read_results(FILE *p, const bench_case *cases, size_t n, double *bf16_s, double *fp32_s, const char **why)
{
  char line[512], dtype[16], name[64];
  double s;
  int notorch = 0;
  while (fgets(line, sizeof line, p)) {
    if (!strncmp(line, "NOTORCH", 7))
      notorch = 1;
    if (sscanf(line, "RESULT %15s %63s %lf", dtype, name, &s) != 3)
      continue;
    for (size_t i = 0; i < n; i++)
      if (!strcmp(name, cases[i].name))
        (strcmp(dtype, "bf16") ? fp32_s : bf16_s)[i] = s;
  }
  if (notorch)
    *why = "torch is not importable by that interpreter";
  return notorch ? -1 : 0;
}

int bench_torch(const char *python, const char *script, const bench_case *cases, size_t n,
                const int *want_bf16, const int *want_fp32, int reps, double *bf16_s, double *fp32_s,
                long *rss_kib, const char **why)
{
  static char cmd[8192];
  int any = 0;
  *rss_kib = 0;
  for (size_t i = 0; i < n; i++)
    bf16_s[i] = fp32_s[i] = -1;
  snprintf(cmd, sizeof cmd, "'%s' '%s' --reps %d", python, script, reps);
  for (size_t i = 0; i < n; i++) {
    if ((want_bf16[i] && add_case(cmd, sizeof cmd, "bf16", &cases[i])) ||
        (want_fp32[i] && add_case(cmd, sizeof cmd, "fp32", &cases[i]))) {
      *why = "too many PyTorch cases for one command line";
      return -1;
    }
    any |= want_bf16[i] || want_fp32[i];
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
  int st = read_results(p, cases, n, bf16_s, fp32_s, why);
  int rc = pclose(p);
  struct rusage ru;
  if (!getrusage(RUSAGE_CHILDREN, &ru))
    *rss_kib = ru.ru_maxrss;
  if (!st && (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0)) {
    *why = "the PyTorch script failed (run it by hand to see why)";
    st = -1;
  }
  return st;
}
