/* muonref study: `muonref ns --report DIR` -- the whole study as CSV
 * tables, gnuplot plots and a markdown page (spec/ns-study.md, "Report"). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "config.h"
#include "muonref/mpmat.h"
#include "study.h"
#include "core/fail.h"

/* Steps of the band table and of the band plots. */
#define BAND_STEPS 30
/* Points of each scalar map file and of the sampling cross-check. */
#define MAP_POINTS 801
#define SAMPLE_POINTS 4001
/* The step count at which the page's first paragraph ranks the sets in bf16
 * (the default of most ports). */
#define ANSWER_STEP 5

/* The matrix inputs: full size, or small for make check (quick). */
static const mst_input FULL[] = {
  {"gauss_64x128", MST_GAUSS, 64, 128, 0},
  {"gauss_128x64", MST_GAUSS, 128, 64, 0},
  {"illcond_96x96_1e4", MST_ILLCOND, 96, 96, 1e4},
  {"illcond_64x128_1e6", MST_ILLCOND, 64, 128, 1e6},
};
static const mst_input QUICK[] = {
  {"gauss_12x20", MST_GAUSS, 12, 20, 0},
  {"gauss_20x12", MST_GAUSS, 20, 12, 0}, /* the tall layout: tables only, no plot (mst_input_plot_of) */
  {"illcond_16x16_1e3", MST_ILLCOND, 16, 16, 1e3},
};

/* Inputs of the exact (MPFR) check of the binary64 column, seed 1. */
static const mst_input EXACT_FULL[] = {
  {"gauss_24x36", MST_GAUSS, 24, 36, 0},
  {"illcond_24x24_1e4", MST_ILLCOND, 24, 24, 1e4},
};
static const mst_input EXACT_QUICK[] = {
  {"gauss_8x12", MST_GAUSS, 8, 12, 0},
};

/* Opens dir/name for writing; NULL with err set on failure. */
static FILE *open_in(const char *dir, const char *name, muonref_error *err)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f)
    muonref_fail(err, MUONREF_EIO, "cannot write '%s': %s", path, strerror(errno));
  return f;
}

/* Closes f, reporting a write error on path dir/name. */
static int close_in(FILE *f, const char *dir, const char *name, muonref_error *err)
{
  int bad = ferror(f);
  if (fclose(f) || bad)
    return muonref_fail(err, MUONREF_EIO, "cannot write '%s/%s'", dir, name);
  return MUONREF_OK;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* Removes the temporary directory tree dir (which this program made). */
static void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* Steps a matrix run of set s follows. */
static int matrix_steps(const mst_set *s)
{
  int K = (s->default_steps > s->o.n_coeffs ? s->default_steps : s->o.n_coeffs) + 2;
  return K > MST_MATRIX_MAX_STEPS ? MST_MATRIX_MAX_STEPS : K;
}

static int write_presets(const char *dir, const mst_set *sets, size_t n, muonref_error *err)
{
  FILE *f = open_in(dir, "presets.csv", err);
  if (!f)
    return err->status;
  fprintf(f, "set,step,a,b,c,order,norm_safety\n");
  for (size_t i = 0; i < n; i++)
    for (int k = 1; k <= matrix_steps(&sets[i]); k++) {
      muonref_coeff t = muonref_ns_coeff_at(&sets[i].o, k - 1);
      fprintf(f, "%s,%d,%.17g,%.17g,%.17g,%s,%.17g\n", sets[i].name, k, t.a, t.b, t.c,
              muonref_coeff_order_name(sets[i].o.coeff_order), sets[i].norm_safety);
    }
  return close_in(f, dir, "presets.csv", err);
}

/* scalar_band.csv, data/band_<set>.dat and scalar_summary.csv. */
static int write_scalar(const char *dir, const mst_set *sets, size_t n, double smin, mst_scalar_summary *sum,
                        muonref_error *err)
{
  double lo[BAND_STEPS + 1], hi[BAND_STEPS + 1], ps[BAND_STEPS + 1];
  FILE *f = open_in(dir, "scalar_band.csv", err);
  if (!f)
    return err->status;
  fprintf(f, "set,step,lo,hi,width,phi_smin\n");
  for (size_t i = 0; i < n; i++) {
    char name[512];
    mst_band(&sets[i], smin, BAND_STEPS, lo, hi, ps);
    snprintf(name, sizeof name, "data/band_%s.dat", sets[i].name);
    FILE *d = open_in(dir, name, err);
    if (!d) {
      fclose(f);
      return err->status;
    }
    fprintf(d, "# step lo hi width phi_smin\n");
    for (int k = 0; k <= BAND_STEPS; k++) {
      fprintf(f, "%s,%d,%.17g,%.17g,%.17g,%.17g\n", sets[i].name, k, lo[k], hi[k], hi[k] - lo[k], ps[k]);
      fprintf(d, "%d %.17g %.17g %.17g %.17g\n", k, lo[k], hi[k], hi[k] - lo[k], ps[k]);
    }
    if (close_in(d, dir, name, err)) {
      fclose(f);
      return err->status;
    }
    mst_scalar_summary_of(&sets[i], smin, &sum[i]);
  }
  if (close_in(f, dir, "scalar_band.csv", err))
    return err->status;
  f = open_in(dir, "scalar_summary.csv", err);
  if (!f)
    return err->status;
  fprintf(f, "set,steps,band_lo,band_hi,sampled_lo,sampled_hi,stop_step,stop_lo,stop_hi,convergent,"
             "steps_smin_1pct,steps_band_1pct,phi_smin\n");
  for (size_t i = 0; i < n; i++) {
    const mst_scalar_summary *s = &sum[i];
    double slo[MST_HORIZON + 1], shi[MST_HORIZON + 1];
    mst_band_sampled(&sets[i], smin, s->steps, SAMPLE_POINTS, slo, shi);
    fprintf(f, "%s,%d,%.17g,%.17g,%.17g,%.17g,%d,%.17g,%.17g,%d,%d,%d,%.17g\n", sets[i].name, s->steps, s->lo, s->hi,
            slo[s->steps], shi[s->steps], s->stop_step, s->stop_lo, s->stop_hi, s->convergent, s->steps_smin_1pct,
            s->steps_band_1pct, s->phi_smin);
  }
  return close_in(f, dir, "scalar_summary.csv", err);
}

/* data/map_<set>.dat: x, phi_1(x) .. phi_K(x) at MAP_POINTS points spaced
 * evenly in log x over [s_min/g, 1/g], K = default steps: the small singular
 * values, which the study is about, get as many points per decade as the
 * large ones (the plot's x axis is logarithmic too). */
static int write_maps(const char *dir, const mst_set *sets, size_t n, double smin, muonref_error *err)
{
  mpfr_t x;
  mpfr_init2(x, MST_PREC);
  int rc = MUONREF_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    char name[512];
    snprintf(name, sizeof name, "data/map_%s.dat", sets[i].name);
    FILE *f = open_in(dir, name, err);
    if (!f) {
      rc = err->status;
      break;
    }
    fprintf(f, "# x phi_1 .. phi_%d (x = singular value after the port's normalisation)\n", sets[i].default_steps);
    for (int j = 0; j < MAP_POINTS; j++) {
      double u = smin * pow(1.0 / smin, (double)j / (MAP_POINTS - 1)); /* unfolded variable; x = u / g */
      mpfr_set_d(x, u, MPFR_RNDN);
      fprintf(f, "%.10g", u / sets[i].norm_safety);
      for (int k = 1; k <= sets[i].default_steps; k++) {
        mst_mp_poly(x, x, mst_step_coeff(&sets[i], k));
        fprintf(f, " %.10g", mpfr_get_d(x, MPFR_RNDN));
      }
      fprintf(f, "\n");
    }
    rc = close_in(f, dir, name, err);
  }
  mpfr_clear(x);
  return rc;
}

/* What the page says about a set's matrix runs: on the first input at the
 * set's default steps, and bf16 runs that blew up on any input. */
typedef struct mat_final {
  double f64, fp32, bf16_min, bf16_max; /* distance, mean (min/max) over seeds */
  double bf16_at5;                      /* bf16 distance at step ANSWER_STEP, mean
                                           over seeds (+inf: a run blew up) */
  double bf16_smin_at5;                 /* the smallest singular value of X at step
                                           ANSWER_STEP in bf16 on the first
                                           ill-conditioned input, minimum over seeds
                                           (NaN: none, or a run blew up) */
  double bf16_ill_at5;                  /* the bf16 distance there, mean over seeds */
  int blowups[MST_NFORMATS], runs;      /* runs (per format) with a distance
                                           > 2 at some step, out of runs    */
  double exact_diff;                    /* max |dist f64 - dist MPFR|       */
  double exact_rel;                     /* the same relative to dist MPFR   */
} mat_final;

/* Per (set, input, format, step): min, mean, max over seeds. */
typedef struct agg {
  double dmin, dsum, dmax, smin, smax;
} agg;

static void agg_add(agg *a, const mst_trace *t, int k, int first)
{
  if (first) {
    a->dmin = a->dmax = t->dist[k];
    a->dsum = 0.0;
    a->smin = t->smin[k];
    a->smax = t->smax[k];
  }
  a->dmin = fmin(a->dmin, t->dist[k]);
  a->dmax = fmax(a->dmax, t->dist[k]);
  a->dsum += t->dist[k];
  a->smin = fmin(a->smin, t->smin[k]);
  a->smax = fmax(a->smax, t->smax[k]);
}

/* The runs of one set on one input: every seed and format; writes the rows
 * of matrix_runs.csv and fills ag[format][step]. */
static int run_input(FILE *runs, const mst_set *s, const mst_input *in, int seeds,
                     agg ag[MST_NFORMATS][MST_MATRIX_MAX_STEPS + 1], mat_final *mf, muonref_error *err)
{
  size_t len = in->rows * in->cols;
  int K = matrix_steps(s), rc = MUONREF_OK;
  double *g = malloc(len * sizeof *g), *q = malloc(len * sizeof *q);
  mst_trace t;
  if (!g || !q)
    rc = muonref_fail(err, MUONREF_ENOMEM, "out of memory for a (%zu, %zu) study matrix", in->rows, in->cols);
  for (int seed = 1; !rc && seed <= seeds; seed++) {
    if ((rc = mst_input_fill(g, in, (uint64_t)seed)) || (rc = mst_polar(q, g, in->rows, in->cols))) {
      muonref_fail(err, rc, "input %s seed %d: LAPACKE failed", in->name, seed);
      break;
    }
    for (int f = 0; f < MST_NFORMATS && !rc; f++) {
      if ((rc = mst_run(&t, s, K, g, q, in->rows, in->cols, (mst_format)f))) {
        muonref_fail(err, rc, "set %s input %s seed %d format %s: the run failed", s->name, in->name, seed,
                     mst_format_name(f));
        break;
      }
      int blew = 0;
      for (int k = 0; k <= K; k++) {
        blew |= !(t.dist[k] <= 2.0);
        fprintf(runs, "%s,%s,%zu,%zu,%d,%s,%d,%.6e,%.6e,%.6e\n", s->name, in->name, in->rows, in->cols, seed,
                mst_format_name(f), k, t.dist[k], t.smin[k], t.smax[k]);
        agg_add(&ag[f][k], &t, k, seed == 1);
      }
      mf->blowups[f] += blew;
      mf->runs += f == MST_F64;
    }
  }
  free(g), free(q);
  return rc;
}

/* Whether ins[j] is the first ill-conditioned input. */
static int first_illcond(const mst_input *ins, size_t j)
{
  for (size_t i = 0; i < j; i++)
    if (ins[i].kind == MST_ILLCOND)
      return 0;
  return ins[j].kind == MST_ILLCOND;
}

/* matrix_runs.csv, matrix_summary.csv, data/mat_<set>_<input>.dat. */
static int write_matrix(const char *dir, const mst_set *sets, size_t n, const mst_input *ins, size_t nin, int seeds,
                        mat_final *mf, muonref_error *err)
{
  static agg ag[MST_NFORMATS][MST_MATRIX_MAX_STEPS + 1];
  FILE *runs = open_in(dir, "matrix_runs.csv", err), *sum = runs ? open_in(dir, "matrix_summary.csv", err) : NULL;
  int rc = runs && sum ? MUONREF_OK : err->status;
  if (!rc) {
    fprintf(runs, "set,input,rows,cols,seed,format,step,dist,smin,smax\n");
    fprintf(sum, "set,input,format,step,seeds,dist_min,dist_mean,dist_max,smin_min,smax_max\n");
  }
  for (size_t i = 0; i < n && !rc; i++)
    for (size_t j = 0; j < nin && !rc; j++) {
      int K = matrix_steps(&sets[i]);
      if ((rc = run_input(runs, &sets[i], &ins[j], seeds, ag, &mf[i], err)))
        break;
      char name[512];
      snprintf(name, sizeof name, "data/mat_%s_%s.dat", sets[i].name, ins[j].name);
      FILE *d = open_in(dir, name, err);
      if (!d) {
        rc = err->status;
        break;
      }
      fprintf(d, "# step; then per format f64 fp32 bf16: dist_min dist_mean dist_max smin_min smax_max\n");
      for (int k = 0; k <= K; k++) {
        fprintf(d, "%d", k);
        for (int f = 0; f < MST_NFORMATS; f++) {
          const agg *a = &ag[f][k];
          fprintf(sum, "%s,%s,%s,%d,%d,%.6e,%.6e,%.6e,%.6e,%.6e\n", sets[i].name, ins[j].name, mst_format_name(f), k,
                  seeds, a->dmin, a->dsum / seeds, a->dmax, a->smin, a->smax);
          fprintf(d, " %.6e %.6e %.6e %.6e %.6e", a->dmin, a->dsum / seeds, a->dmax, a->smin, a->smax);
        }
        fprintf(d, "\n");
      }
      if (j == 0) {
        int K0 = sets[i].default_steps;
        mf[i].f64 = ag[MST_F64][K0].dsum / seeds;
        mf[i].fp32 = ag[MST_FP32][K0].dsum / seeds;
        mf[i].bf16_min = ag[MST_BF16][K0].dmin;
        mf[i].bf16_max = ag[MST_BF16][K0].dmax;
        mf[i].bf16_at5 = ANSWER_STEP <= K ? ag[MST_BF16][ANSWER_STEP].dsum / seeds : INFINITY;
        mf[i].bf16_smin_at5 = NAN;
      }
      if (ins[j].kind == MST_ILLCOND && isnan(mf[i].bf16_smin_at5) && first_illcond(ins, j))
      {
        mf[i].bf16_smin_at5 = ANSWER_STEP <= K ? ag[MST_BF16][ANSWER_STEP].smin : NAN;
        mf[i].bf16_ill_at5 = ANSWER_STEP <= K ? ag[MST_BF16][ANSWER_STEP].dsum / seeds : INFINITY;
      }
      rc = close_in(d, dir, name, err);
    }
  if (runs && close_in(runs, dir, "matrix_runs.csv", err) && !rc)
    rc = err->status;
  if (sum && close_in(sum, dir, "matrix_summary.csv", err) && !rc)
    rc = err->status;
  return rc;
}

/* exact_check.csv: the binary64 column against the MPFR reference. */
static int write_exact(const char *dir, const mst_set *sets, size_t n, const mst_input *ins, size_t nin,
                       mat_final *mf, muonref_error *err)
{
  FILE *f = open_in(dir, "exact_check.csv", err);
  if (!f)
    return err->status;
  fprintf(f, "set,input,step,dist_mpfr,dist_f64,abs_diff,smin_mpfr,smax_mpfr\n");
  int rc = MUONREF_OK;
  mst_trace te, t64;
  for (size_t j = 0; j < nin && !rc; j++) {
    size_t len = ins[j].rows * ins[j].cols;
    double *g = malloc(len * sizeof *g), *q = malloc(len * sizeof *q);
    if (!g || !q)
      rc = muonref_fail(err, MUONREF_ENOMEM, "out of memory for the exact check");
    if (!rc && ((rc = mst_input_fill(g, &ins[j], 1)) || (rc = mst_polar(q, g, ins[j].rows, ins[j].cols))))
      muonref_fail(err, rc, "input %s: LAPACKE failed", ins[j].name);
    for (size_t i = 0; i < n && !rc; i++) {
      int K = matrix_steps(&sets[i]);
      if ((rc = mst_run_exact(&te, &sets[i], K, g, ins[j].rows, ins[j].cols, MUONREF_REF_PREC, err)))
        break;
      if ((rc = mst_run(&t64, &sets[i], K, g, q, ins[j].rows, ins[j].cols, MST_F64))) {
        muonref_fail(err, rc, "set %s input %s: the binary64 run failed", sets[i].name, ins[j].name);
        break;
      }
      for (int k = 0; k <= K; k++) {
        double d = fabs(t64.dist[k] - te.dist[k]);
        fprintf(f, "%s,%s,%d,%.10e,%.10e,%.3e,%.10e,%.10e\n", sets[i].name, ins[j].name, k, te.dist[k], t64.dist[k], d,
                te.smin[k], te.smax[k]);
        if (isfinite(te.dist[k]) && te.dist[k] <= 2.0) { /* diverged runs are compared in neither */
          mf[i].exact_diff = fmax(mf[i].exact_diff, d);
          if (te.dist[k] > 1e-8) /* relative only where the distance is not itself at rounding level */
            mf[i].exact_rel = fmax(mf[i].exact_rel, d / te.dist[k]);
        }
      }
    }
    free(g), free(q);
  }
  if (close_in(f, dir, "exact_check.csv", err) && !rc)
    rc = err->status;
  return rc;
}

const char *mst_num(const char *fmt, double x)
{
  static char ring[16][64];
  static unsigned next;
  if (isnan(x))
    return "undefined";
  if (isinf(x))
    return "diverged";
  char *b = ring[next++ % 16];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  snprintf(b, sizeof ring[0], fmt, x);
#pragma GCC diagnostic pop
  return b;
}

static void steps_text(char *b, size_t n, int k) { k < 0 ? snprintf(b, n, "–") : snprintf(b, n, "%d", k); }

/* One sentence on what the scalar band of a set does up to the horizon. */
static void scalar_reading(FILE *f, const mst_set *set, const mst_scalar_summary *s)
{
  int finite = isfinite(s->horizon_lo) && isfinite(s->horizon_hi);
  fprintf(f, "After %d steps [s_min, 1] is mapped into [%s, %s] and phi(s_min) = %s. ", s->steps,
          mst_num("%.4f", s->lo), mst_num("%.4f", s->hi), mst_num("%.4g", s->phi_smin));
  if (s->lo < 0) {
    int neg = -1;
    for (int k = 0; k < set->o.n_coeffs && neg < 0; k++)
      if (set->o.coeffs[k].a + set->o.coeffs[k].b + set->o.coeffs[k].c < 0)
        neg = k;
    fprintf(f, "The band reaches **negative** values: some singular values change sign");
    if (neg >= 0)
      fprintf(f, " (triple %d has p(1) = %.4f < 0)", neg,
              set->o.coeffs[neg].a + set->o.coeffs[neg].b + set->o.coeffs[neg].c);
    fprintf(f, ". ");
  }
  if (s->convergent)
    fprintf(f, "The set converges to 1: the band lies within 1%% of 1 from step %d on, phi(s_min) from step %d.\n\n",
            s->steps_band_1pct, s->steps_smin_1pct);
  else if (!finite || fabs(s->horizon_lo) > 10 || fabs(s->horizon_hi) > 10)
    fprintf(f, "Run beyond its %d default steps (order %s) the iteration **diverges**: the band at step %d is "
               "%s%s%s%s%s.\n\n",
            s->steps, muonref_coeff_order_name(set->o.coeff_order), MST_HORIZON, finite ? "[" : "",
            finite ? mst_num("%.3g", s->horizon_lo) : "beyond binary64's range: diverged, no value", finite ? ", " : "",
            finite ? mst_num("%.3g", s->horizon_hi) : "", finite ? "]" : "");
  else if (s->horizon_hi - s->horizon_lo < 1e-6)
    fprintf(f, "Its last triple has a fixed point other than 1: repeated, it drives the band to %s, not 1.\n\n",
            mst_num("%.4f", s->horizon_hi));
  else if (s->stop_step == 0)
    fprintf(f, "The band is never narrower than [s_min, 1] itself (checked up to step %d).\n\n", MST_HORIZON);
  else {
    fprintf(f, "The band is narrowest at step %d, [%s, %s], and no later step narrows it", s->stop_step,
            mst_num("%.4f", s->stop_lo), mst_num("%.4f", s->stop_hi));
    if (s->late_width > 1.5 * (s->stop_hi - s->stop_lo) || s->late_lo < s->stop_lo - 0.05 ||
        s->late_hi > s->stop_hi + 0.05)
      fprintf(f, "; but later steps (order %s) move it away again: values from %s to %s occur up to step %d",
              muonref_coeff_order_name(set->o.coeff_order), mst_num("%.4f", s->late_lo), mst_num("%.4f", s->late_hi),
              MST_HORIZON);
    fprintf(f, ". It never closes on 1.\n\n");
  }
}

/* A markdown table's header row and its delimiter row, from one list of
 * cells, so that the two cannot disagree in length (GitHub renders a table
 * whose rows differ as a paragraph of pipes). */
static void table_header(FILE *f, const char *const *cells, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fprintf(f, "| %s ", cells[i]);
  fprintf(f, "|\n");
  for (size_t i = 0; i < n; i++)
    fprintf(f, "|---");
  fprintf(f, "|\n");
}

/* A distance for the answer paragraph: the number, or "diverged". */
static const char *dist_text(double d)
{
  return isfinite(d) ? mst_num("%.3g", d) : "diverged (a run blew up)";
}

/* The page's first paragraph: which set comes closest to the polar factor
 * after ANSWER_STEP steps in bf16 on the first (Gaussian) input, which is
 * next, and which is worst, by the mean distance over seeds. */
static void answer(FILE *f, const mst_set *sets, size_t n, const mst_input *ins, size_t nin, int seeds,
                   const mat_final *mf)
{
  const mst_input *in = &ins[0];
  size_t best = 0, second = n > 1 ? 1 : 0, worst = 0;
  for (size_t i = 0; i < n; i++) {
    double d = mf[i].bf16_at5;
    if (d < mf[best].bf16_at5)
      second = best, best = i;
    else if (i != best && (second == best || d < mf[second].bf16_at5))
      second = i;
    if (!(d <= mf[worst].bf16_at5)) /* a NaN or +inf distance is the worst */
      worst = i;
  }
  fprintf(f, "**Which set converges fastest.** After %d Newton–Schulz steps in bf16 on %s (a Gaussian matrix; "
             "||X_%d − Q||_F / ||Q||_F, mean over %d seed(s)), **%s** comes closest to the polar factor Q (%s)",
          ANSWER_STEP, in->name, ANSWER_STEP, seeds, sets[best].name, dist_text(mf[best].bf16_at5));
  if (n > 1)
    fprintf(f, ", then %s (%s)", sets[second].name, dist_text(mf[second].bf16_at5));
  fprintf(f, "; the worst is **%s** (%s).", sets[worst].name, dist_text(mf[worst].bf16_at5));
  if (isfinite(mf[best].bf16_at5) && isfinite(mf[worst].bf16_at5) && mf[best].bf16_at5 > 0)
    fprintf(f, " That is a factor %s between the best and the worst.", mst_num("%.3g", mf[worst].bf16_at5 / mf[best].bf16_at5));
  size_t j = 0;
  while (j < nin && !first_illcond(ins, j))
    j++;
  size_t lift = n;
  double dlo = INFINITY, dhi = 0.0;
  for (size_t i = 0; j < nin && i < n; i++) {
    if (!isnan(mf[i].bf16_smin_at5) && (lift == n || mf[i].bf16_smin_at5 > mf[lift].bf16_smin_at5))
      lift = i;
    if (isfinite(mf[i].bf16_ill_at5)) {
      dlo = fmin(dlo, mf[i].bf16_ill_at5);
      dhi = fmax(dhi, mf[i].bf16_ill_at5);
    }
  }
  if (lift < n)
    fprintf(f, " On the ill-conditioned %s (singular values spread over a factor %g), every set is still far from "
               "Q after %d steps in bf16 (distances %s to %s), and **%s** lifts the smallest singular value furthest "
               "(to %s, minimum over seeds).",
            ins[j].name, ins[j].cond, ANSWER_STEP, mst_num("%.3g", dlo), mst_num("%.3g", dhi), sets[lift].name,
            mst_num("%.3g", mf[lift].bf16_smin_at5));
  fprintf(f, " A set tuned for more steps (its default is in the summary) is compared here at %d; the binary64 "
             "distances at each set's own default, the exact scalar bands and the plots follow.\n\n", ANSWER_STEP);
}

/* index.md: the page that shows the plots with a short reading of each. */
static int write_page(const char *dir, const mst_set *sets, size_t n, const mst_input *ins, size_t nin,
                      const mst_report_config *cfg, const mst_scalar_summary *sum, const mat_final *mf, int plotted,
                      const char *ex_names, muonref_error *err)
{
  FILE *f = open_in(dir, "index.md", err);
  if (!f)
    return err->status;
  fprintf(f, "# Newton–Schulz convergence study\n\n");
  answer(f, sets, n, ins, nin, cfg->seeds, mf);
  fprintf(f, "Generated by `muonref ns --report` (muonref %s); definitions in spec/ns-study.md. "
             "Scalar interval [s_min, 1] with s_min = %g (relative to the Frobenius-normalised matrix; "
             "a port with norm safety g sees [s_min/g, 1/g]). Matrix runs: %d seed(s) per input; column f64 = "
             "binary64 iteration (stands in for exact arithmetic; polar factor from a binary64 SVD), fp32 and "
             "bf16 = muonref_fast_ns.\n\n",
          PACKAGE_VERSION, cfg->smin, cfg->seeds);
  if (!plotted)
    fprintf(f, "**Plots skipped: gnuplot was not found** (set MUONREF_GNUPLOT or install gnuplot). "
               "The CSV tables are complete.\n\n");
  char horizon[64], first_in[64];
  snprintf(horizon, sizeof horizon, "band at step %d", MST_HORIZON);
  snprintf(first_in, sizeof first_in, "dist f64 (%s)", ins[0].name);
  const char *const summary[] = {"set", "steps", "band after steps", "band stops shrinking after step", "band there",
                                 "convergent", "steps: phi(s_min) within 1%", "steps: band within 1%", "phi(s_min)",
                                 horizon, first_in, "dist fp32", "dist bf16 spread",
                                 "runs with dist > 2 (f64/fp32/bf16)"};
  fprintf(f, "## Summary\n\n");
  table_header(f, summary, sizeof summary / sizeof summary[0]);
  for (size_t i = 0; i < n; i++) {
    const mst_scalar_summary *s = &sum[i];
    char a[16], b[16], c[16], band[64];
    steps_text(a, sizeof a, s->stop_step);
    steps_text(b, sizeof b, s->steps_smin_1pct);
    steps_text(c, sizeof c, s->steps_band_1pct);
    if (s->stop_step == 0)
      snprintf(band, sizeof band, "never narrower than step 0");
    else if (s->stop_step > 0)
      snprintf(band, sizeof band, "[%s, %s]", mst_num("%.4f", s->stop_lo), mst_num("%.4f", s->stop_hi));
    else
      snprintf(band, sizeof band, "still shrinking at %d", MST_HORIZON);
    fprintf(f, "| %s | %d | [%s, %s] | %s | %s | %s | %s | %s | %s | [%s, %s] | %s | %s | %s–%s | "
               "%d/%d/%d of %d |\n",
            sets[i].name, s->steps, mst_num("%.4f", s->lo), mst_num("%.4f", s->hi), a, band,
            s->convergent ? "yes" : "no", b, c, mst_num("%.4g", s->phi_smin), mst_num("%.4g", s->horizon_lo),
            mst_num("%.4g", s->horizon_hi), mst_num("%.4g", mf[i].f64), mst_num("%.4g", mf[i].fp32),
            mst_num("%.4g", mf[i].bf16_min), mst_num("%.4g", mf[i].bf16_max),
            mf[i].blowups[MST_F64], mf[i].blowups[MST_FP32], mf[i].blowups[MST_BF16], mf[i].runs);
  }
  fprintf(f, "\nThe last column counts runs (all inputs and seeds, steps 0 to default + 2) whose distance to the "
             "polar factor exceeded 2 at some step: divergence, or singular values that changed sign.\n\n");
  fprintf(f, "Tables: `presets.csv` (the triple of every step), `scalar_band.csv`, `scalar_summary.csv` "
             "(with the sampled cross-check), `matrix_runs.csv` (every seed), `matrix_summary.csv` (min/mean/max "
             "over seeds); plot data in `data/`, the gnuplot script `study.gp`.\n\n");
  fprintf(f, "## Scalar maps\n\nEach curve is phi_k on the singular values after normalisation; the Newton–Schulz "
             "goal is the constant 1. A curve that rises steeply near 0 treats small singular values well; its "
             "oscillation around 1 is the band.\n\n");
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "### %s\n\n", sets[i].name);
    if (plotted)
      fprintf(f, "![%s scalar maps](plots/map_%s.png)\n\n", sets[i].name, sets[i].name);
    scalar_reading(f, &sets[i], &sum[i]);
  }
  fprintf(f, "## Band versus step\n\n");
  if (plotted)
    fprintf(f, "![band width](plots/band.png)\n\n![phi(s_min)](plots/phi_smin.png)\n\n");
  fprintf(f, "Band width max − min of phi_k over [s_min, 1] (exact, by interval propagation) and |phi_k(s_min)|, "
             "for %d steps under each set's order. A width that falls to 0 means convergence to a single value "
             "(1, or another fixed point of the last triple); a flat width is a band that the iteration keeps; a "
             "rising one is divergence past the steps a list was designed for.\n\n", BAND_STEPS);
  fprintf(f, "## Distance to the polar factor, and the smallest singular values\n\n");
  for (size_t j = 0; j < nin; j++) {
    mst_input_plot what = mst_input_plot_of(ins, j);
    if (what == MST_PLOT_NONE) {
      fprintf(f, "%s: no plot; in binary64 it iterates exactly as the transposed input before it, so its plot "
                 "would repeat that one. Its fp32 and bf16 runs (the tall layout) are in the tables.\n\n",
              ins[j].name);
      continue;
    }
    if (plotted)
      fprintf(f, "![%s %s](plots/%s_%s.png)\n\n", what == MST_PLOT_SMIN ? "smallest singular value" : "distance",
              ins[j].name, what == MST_PLOT_SMIN ? "smin" : "dist", ins[j].name);
    if (what == MST_PLOT_DIST)
      fprintf(f, "%s: ||X_k − Q||_F / ||Q||_F in binary64, mean over seeds (log scale).", ins[j].name);
    else
      fprintf(f, "%s: the smallest singular value of X_k in binary64, minimum over seeds (log scale). Singular "
                 "values spread over a factor %g, so after normalisation the smallest lie near %.1e, below s_min: "
                 "the distance to the polar factor falls slowly for every set (the small singular values make "
                 "most of it), and what tells the sets apart is how far each step lifts the smallest singular "
                 "value towards 1.",
              ins[j].name, ins[j].cond,
              1.0 / (ins[j].cond * sqrt((double)(ins[j].rows < ins[j].cols ? ins[j].rows : ins[j].cols))));
    fprintf(f, "\n\n");
  }
  fprintf(f, "## The binary64 column against the exact reference\n\n");
  fprintf(f, "`exact_check.csv` repeats the binary64 runs (seed 1) on %s in MPFR at %d bits through the reference "
             "(muonref_ref_ns for each step count, muonref_ref_polar for Q). Largest difference of the distance "
             "to the polar factor, over every step with distance at most 2:\n\n",
          ex_names, MUONREF_REF_PREC);
  const char *const exact[] = {"set", "max abs difference", "max relative difference (distances > 1e-8)"};
  table_header(f, exact, sizeof exact / sizeof exact[0]);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "| %s | %s | %s |\n", sets[i].name, mst_num("%.2g", mf[i].exact_diff), mst_num("%.2g", mf[i].exact_rel));
  double worst = 0.0;
  for (size_t i = 0; i < n; i++)
    worst = fmax(worst, mf[i].exact_rel);
  if (worst < 1e-4)
    fprintf(f, "\nThe largest relative difference is %.2g, so the binary64 column gives the exact distances to the "
               "4 digits the tables print.\n\n", worst);
  else
    fprintf(f, "\nThe largest relative difference is %.2g: **the binary64 column is not exact to 4 digits** for "
               "some set; use exact_check.csv for those.\n\n", worst);
  fprintf(f, "## Exact versus fp32 versus bf16\n\n");
  for (size_t i = 0; i < n; i++) {
    if (plotted)
      fprintf(f, "![formats %s](plots/formats_%s.png)\n\n", sets[i].name, sets[i].name);
    fprintf(f, "%s on %s, step %d: binary64 %s, fp32 %s, bf16 %s–%s over seeds.", sets[i].name, ins[0].name,
            sets[i].default_steps, mst_num("%.4g", mf[i].f64), mst_num("%.4g", mf[i].fp32),
            mst_num("%.4g", mf[i].bf16_min), mst_num("%.4g", mf[i].bf16_max));
    if (mf[i].blowups[MST_BF16] > mf[i].blowups[MST_F64])
      fprintf(f, " **bf16 alone failed**: %d of %d bf16 runs reached a distance > 2 within the steps shown, "
                 "binary64 %d.", mf[i].blowups[MST_BF16], mf[i].runs, mf[i].blowups[MST_F64]);
    else if (mf[i].blowups[MST_F64])
      fprintf(f, " %d of %d runs reach a distance > 2 already in binary64 (beyond the default steps, or by a "
                 "sign change): a property of the list, not of rounding.", mf[i].blowups[MST_F64], mf[i].runs);
    fprintf(f, "\n\n");
  }
  return close_in(f, dir, "index.md", err);
}

int mst_report(const char *dir, const mst_set *sets, size_t n, const mst_report_config *cfg, int *plotted,
               muonref_error *err)
{
  char tmp[4096];
  const mst_input *ins = cfg->quick ? QUICK : FULL;
  size_t nin = cfg->quick ? sizeof QUICK / sizeof QUICK[0] : sizeof FULL / sizeof FULL[0];
  if (snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", dir) >= (int)sizeof tmp - 16)
    return muonref_fail(err, MUONREF_EIO, "report directory name too long: '%s'", dir);
  if (!mkdtemp(tmp))
    return muonref_fail(err, MUONREF_EIO, "cannot create a directory next to '%s': %s", dir, strerror(errno));
  char sub[4200];
  mst_scalar_summary *sum = calloc(n, sizeof *sum);
  mat_final *mf = calloc(n, sizeof *mf);
  int rc = sum && mf ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "out of memory for the report");
  *plotted = 0;
  snprintf(sub, sizeof sub, "%s/data", tmp);
  if (!rc && mkdir(sub, 0777))
    rc = muonref_fail(err, MUONREF_EIO, "cannot create '%s': %s", sub, strerror(errno));
  if (!rc)
    rc = write_presets(tmp, sets, n, err);
  if (!rc)
    rc = write_scalar(tmp, sets, n, cfg->smin, sum, err);
  if (!rc)
    rc = write_maps(tmp, sets, n, cfg->smin, err);
  if (!rc)
    rc = write_matrix(tmp, sets, n, ins, nin, cfg->seeds, mf, err);
  const mst_input *exi = cfg->quick ? EXACT_QUICK : EXACT_FULL;
  size_t nexi = cfg->quick ? sizeof EXACT_QUICK / sizeof EXACT_QUICK[0] : sizeof EXACT_FULL / sizeof EXACT_FULL[0];
  char ex_names[256] = "";
  for (size_t j = 0; j < nexi; j++)
    snprintf(ex_names + strlen(ex_names), sizeof ex_names - strlen(ex_names), "%s`%s`", j ? ", " : "", exi[j].name);
  if (!rc)
    rc = write_exact(tmp, sets, n, exi, nexi, mf, err);
  if (!rc && cfg->gnuplot) {
    snprintf(sub, sizeof sub, "%s/plots", tmp);
    if (mkdir(sub, 0777))
      rc = muonref_fail(err, MUONREF_EIO, "cannot create '%s': %s", sub, strerror(errno));
    if (!rc)
      rc = mst_plot(tmp, cfg->gnuplot, sets, n, ins, nin, err);
    *plotted = !rc;
  }
  if (!rc)
    rc = write_page(tmp, sets, n, ins, nin, cfg, sum, mf, *plotted, ex_names, err);
  if (!rc && rename(tmp, dir))
    rc = muonref_fail(err, MUONREF_EIO, "cannot move the report to '%s': %s", dir, strerror(errno));
  if (rc)
    rm_tree(tmp);
  free(sum), free(mf);
  return rc;
}
