/* muonref ref-bench: wall-clock times of the high-precision reference on
 * this machine (not a test).  Prints, at 256 bits unless a precision is
 * given as the first argument: the polar factor of a 64x256 and a 256x256
 * Gaussian matrix, 5 exact Newton-Schulz steps on the same matrices, and a
 * 3-step exact optimizer case (a 64x64 Muon matrix and a 1024-element
 * AdamW vector).  Times are CPU seconds of this single-threaded process.  Usage: ref/bench_ref [PREC [SKIP_256x256]] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "muonref.h"
#include "muonref/ref.h"

/* CPU time of this process: robust to other jobs sharing the machine
 * (the reference is single-threaded, so it is also its wall time when idle). */
static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Deterministic Gaussian-like fill (sum of uniforms), no dependence on tests/. */
static void fill(float *x, size_t n, unsigned long seed)
{
  unsigned long s = seed * 2654435761ul + 1;
  for (size_t i = 0; i < n; i++) {
    double u = 0;
    for (int k = 0; k < 4; k++) {
      s = s * 6364136223846793005ul + 1442695040888963407ul;
      u += (double)(s >> 11) * 0x1p-53;
    }
    x[i] = (float)(u - 2.0);
  }
}

static int bench_shape(size_t r, size_t c, mpfr_prec_t prec, const muonref_options *o)
{
  size_t k = r < c ? r : c;
  float *x = malloc(r * c * sizeof *x);
  fill(x, r * c, r * 1000 + c);
  muonref_mpmat g, q, sv, out;
  if (muonref_mpmat_init(&g, r, c, 64) || muonref_mpmat_init(&q, r, c, prec) || muonref_mpmat_init(&sv, k, 1, prec) ||
      muonref_mpmat_init(&out, r, c, prec)) {
    fprintf(stderr, "ref-bench: out of memory\n");
    return 1;
  }
  muonref_mpmat_set_float(&g, x);
  muonref_error e;
  double t0 = now();
  int st = muonref_ref_polar(&q, &sv, &g, &e);
  double t1 = now();
  printf("polar    %4zux%-4zu %4ld bits  %8.3f s cpu%s%s\n", r, c, (long)prec, t1 - t0, st ? "  FAILED: " : "",
         st ? e.message : "");
  t0 = now();
  st = muonref_ref_ns(&out, &g, o, &e);
  t1 = now();
  printf("ns x%d    %4zux%-4zu %4ld bits  %8.3f s cpu%s%s\n", o->ns_steps, r, c, (long)prec, t1 - t0,
         st ? "  FAILED: " : "", st ? e.message : "");
  muonref_mpmat_clear(&g), muonref_mpmat_clear(&q), muonref_mpmat_clear(&sv), muonref_mpmat_clear(&out);
  free(x);
  return 0;
}

static int bench_step(mpfr_prec_t prec, const muonref_options *o)
{
  muonref_shape shapes[2] = {{2, {64, 64}}, {1, {1024}}};
  double t0 = now();
  for (int i = 0; i < 2; i++) {
    muonref_route r;
    muonref_error e;
    if (muonref_route_param(o, &shapes[i], &r, &e))
      return fprintf(stderr, "ref-bench: %s\n", e.message), 1;
    float *p = malloc(r.numel * 4), *g = malloc(r.numel * 4), *b1 = calloc(r.numel, 4), *b2 = calloc(r.numel, 4);
    fill(p, r.numel, 7 + (unsigned long)i);
    muonref_param_state st = {0, 0, 0, 0, r.use_muon ? b1 : NULL, r.use_muon ? NULL : b1, r.use_muon ? NULL : b2, NULL, 0, NULL, 0, NULL};
    for (int s = 0; s < 3; s++) {
      fill(g, r.numel, 100 + (unsigned long)(s + 10 * i));
      if (muonref_ref_step(o, &r, p, &st, g, prec, &e))
        return fprintf(stderr, "ref-bench: %s\n", e.message), 1;
    }
    free(p), free(g), free(b1), free(b2);
  }
  printf("step x3  64x64 Muon + 1024 AdamW %ld bits  %8.3f s cpu\n", (long)prec, now() - t0);
  return 0;
}

int main(int argc, char **argv)
{
  mpfr_prec_t prec = argc > 1 ? (mpfr_prec_t)atol(argv[1]) : MUONREF_REF_PREC;
  int skip_big = argc > 2 && atoi(argv[2]);
  muonref_options o;
  if (muonref_profile_options("nemo", &o, NULL))
    return 1;
  int st = bench_shape(64, 256, prec, &o);
  if (!st && !skip_big)
    st = bench_shape(256, 256, prec, &o);
  if (!st)
    st = bench_shape(64, 64, prec, &o);
  if (!st)
    st = bench_step(prec, &o);
  return st;
}
