/* muonref bench: clock, median and the flop model (see bench.h). */
#include <stdlib.h>
#include <time.h>
#include "bench.h"

double bench_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *t, size_t n)
{
  qsort(t, n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

double bench_ns_flops(size_t rows, size_t cols, int steps)
{
  double m = (double)(rows < cols ? rows : cols), n = (double)(rows < cols ? cols : rows);
  return steps * (4.0 * m * m * n + 2.0 * m * m * m);
}

double bench_sym_flops(size_t rows, size_t cols, int steps)
{
  double m = (double)(rows < cols ? rows : cols), n = (double)(rows < cols ? cols : rows);
  return steps * (3.0 * m * m * n + m * m * m);
}
