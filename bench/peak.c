/* muonref bench: the machine's measured fp32 and bf16 matrix-product peak
 * (see bench.h): what the libraries reach on one large square product, the
 * yardstick for each case's fraction of peak. */
#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "fast/ns_dnnl.h"

int bench_peak(int reps, double *fp32_gflops, double *bf16_gflops, const char **why)
{
  enum { N = 2048 };
  const double flops = 2.0 * N * N * N;
  float *a = malloc(sizeof(float) * N * N), *c = malloc(sizeof(float) * N * N);
  uint16_t *ab = malloc(sizeof(uint16_t) * N * N);
  *fp32_gflops = *bf16_gflops = -1;
  if (!a || !c || !ab) {
    free(a), free(c), free(ab);
    return -1;
  }
  for (size_t i = 0; i < (size_t)N * N; i++) { /* small bf16-valued entries: the values do not change the speed */
    a[i] = (float)((int)(i % 17) - 8) / 8.0f;
    uint32_t bits;
    memcpy(&bits, &a[i], sizeof bits);
    ab[i] = (uint16_t)(bits >> 16);
  }
  double best = 0;
  for (int k = 0; k <= reps; k++) {
    double t = bench_now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, a, N, 0.0f, c, N);
    t = bench_now() - t;
    if (k && (best == 0 || t < best))
      best = t;
  }
  *fp32_gflops = flops / best * 1e-9;
  if (muonref_nsd_usable(why)) {
    best = 0;
    for (int k = 0; k <= reps; k++) {
      double t = bench_now();
      int st = muonref_nsd_matmul(c, N, ab, N, ab, N, 1, N, N, N);
      t = bench_now() - t;
      if (st) {
        *why = "oneDNN's bf16 matmul failed";
        best = 0;
        break;
      }
      if (k && (best == 0 || t < best))
        best = t;
    }
    if (best > 0)
      *bf16_gflops = flops / best * 1e-9;
  }
  free(a), free(c), free(ab);
  return 0;
}
