/* muonref ns: the Newton-Schulz convergence study (spec/ns-study.md).
 *
 *   muonref ns (--preset NAME | --coeffs LIST [--order ORDER]) [--steps K] --sigma S
 *       phi_K(S) in MPFR (256 bits), 17 significant digits
 *   muonref ns [--preset NAME | --coeffs LIST] [--steps K] [--smin S]
 *       the scalar study table (every preset when none is named)
 *   muonref ns --report DIR [--presets A,B,..] [--smin S] [--seeds N] [--quick]
 *       the whole study as CSV, plots and markdown in the new directory DIR
 * Exit status: 0 success (gnuplot missing: plots skipped, still 0); 2 bad
 * command line or a non-empty report directory; 3 internal failure
 * (memory, LAPACKE, writing files, gnuplot failing), nothing left behind. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"
#include "config.h"
#include "study/study.h"

#ifndef MUONREF_GNUPLOT
#define MUONREF_GNUPLOT "no"
#endif

typedef struct ns_args {
  const char *preset, *coeffs, *order, *presets, *report, *sigma_s;
  int steps, seeds, quick;
  double smin, sigma;
} ns_args;

static int usage(const char *msg, const char *input)
{
  if (msg)
    fprintf(stderr, "muonref ns: %s%s%s%s\n", input ? "'" : "", input ? input : "", input ? "': " : "", msg);
  fprintf(stderr,
          "usage: muonref ns (--preset NAME | --coeffs 'a,b,c;...' [--order cycle|repeat_last]) [--steps K] "
          "--sigma S\n"
          "       muonref ns [--preset NAME | --coeffs LIST] [--steps K] [--smin S]\n"
          "       muonref ns --report DIR [--presets A,B,...] [--smin S] [--seeds N] [--quick]\n");
  return EXIT_USAGE;
}

/* Parses a finite double; -1 if s is not one. */
static int parse_double(const char *s, double *v)
{
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return end == s || *end || errno == ERANGE || !isfinite(*v) ? -1 : 0;
}

static int parse_int(const char *s, int lo, int hi, int *v)
{
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (end == s || *end || errno || x < lo || x > hi)
    return -1;
  *v = (int)x;
  return 0;
}

/* Fills a from argv; returns EXIT_OK or the usage status after a message. */
static int parse_args(int argc, char **argv, ns_args *a)
{
  memset(a, 0, sizeof *a);
  a->smin = 1e-3;
  a->seeds = 5;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (!strcmp(o, "--quick")) {
      a->quick = 1;
      continue;
    }
    if (i + 1 >= argc)
      return usage("needs a value", o);
    const char *v = argv[++i];
    if (!strcmp(o, "--preset"))
      a->preset = v;
    else if (!strcmp(o, "--coeffs"))
      a->coeffs = v;
    else if (!strcmp(o, "--order"))
      a->order = v;
    else if (!strcmp(o, "--presets"))
      a->presets = v;
    else if (!strcmp(o, "--report"))
      a->report = v;
    else if (!strcmp(o, "--steps")) {
      if (parse_int(v, 1, MUONREF_MAX_NS_STEPS, &a->steps))
        return usage("--steps must be an integer from 1 to 1000", v);
    } else if (!strcmp(o, "--seeds")) {
      if (parse_int(v, 1, 100, &a->seeds))
        return usage("--seeds must be an integer from 1 to 100", v);
    } else if (!strcmp(o, "--sigma")) {
      if (parse_double(v, &a->sigma))
        return usage("--sigma must be a finite number", v);
      a->sigma_s = v;
    } else if (!strcmp(o, "--smin")) {
      if (parse_double(v, &a->smin) || !(a->smin > 0 && a->smin < 1))
        return usage("--smin must be a number with 0 < smin < 1", v);
    } else
      return usage("unknown option", o);
  }
  if (a->preset && a->coeffs)
    return usage("--preset and --coeffs exclude each other", NULL);
  if (a->order && !a->coeffs)
    return usage("--order applies to --coeffs only (a preset has its own order)", NULL);
  if (a->report && (a->sigma_s || a->preset || a->coeffs || a->steps))
    return usage("--report takes --presets, --smin, --seeds and --quick only", NULL);
  if (!a->report && (a->presets || a->quick))
    return usage("--presets and --quick need --report", NULL);
  if (a->sigma_s && !a->preset && !a->coeffs)
    return usage("--sigma needs --preset or --coeffs", NULL);
  return EXIT_OK;
}

/* The set named by --preset or --coeffs/--order. */
static int one_set(const ns_args *a, mst_set *s)
{
  muonref_error err;
  if (a->preset) {
    const muonref_preset *p = muonref_preset_find(a->preset);
    if (!p)
      return usage("unknown preset (muonref ns lists the presets)", a->preset);
    mst_set_from_preset(s, p);
    return EXIT_OK;
  }
  muonref_coeff_order order = MUONREF_ORDER_REPEAT_LAST;
  if (a->order && muonref_coeff_order_parse(a->order, &order, &err))
    return usage(err.message, NULL);
  if (mst_set_parse_custom(s, a->coeffs, order, &err))
    return usage(err.message, NULL);
  return EXIT_OK;
}

static int print_sigma(const ns_args *a, const mst_set *s)
{
  mpfr_t x, y;
  mpfr_inits2(MST_PREC, x, y, (mpfr_ptr)0);
  mpfr_set_d(x, a->sigma, MPFR_RNDN);
  mst_mp_phi(y, x, s, a->steps ? a->steps : s->default_steps, 0);
  if (mpfr_nan_p(y))
    printf("undefined (the iteration left the real numbers' range)\n");
  else if (mpfr_inf_p(y))
    printf("diverged (beyond MPFR's exponent range)\n");
  else
    mpfr_printf("%#.17Rg\n", y);
  mpfr_clears(x, y, (mpfr_ptr)0);
  return EXIT_OK;
}

static void print_study(const mst_set *s, int steps, double smin)
{
  double lo[MST_HORIZON + 1], hi[MST_HORIZON + 1], ps[MST_HORIZON + 1];
  mst_scalar_summary sum;
  int K = steps ? (steps < MST_HORIZON ? steps : MST_HORIZON) : s->default_steps;
  mst_band(s, smin, K, lo, hi, ps);
  mst_scalar_summary_of(s, smin, &sum);
  printf("# %s (%s, %d triples, norm safety %g), s_min = %g\n", s->name, muonref_coeff_order_name(s->o.coeff_order),
         s->o.n_coeffs, s->norm_safety, smin);
  printf("%-5s %-20s %-20s %-20s\n", "step", "min phi_k", "max phi_k", "phi_k(s_min)");
  for (int k = 0; k <= K; k++)
    printf("%-5d %-20s %-20s %-20s\n", k, mst_num("%.12g", lo[k]), mst_num("%.12g", hi[k]), mst_num("%.12g", ps[k]));
  printf("band stops shrinking after step: %d\nconvergent: %s\nsteps for phi(s_min) within 1%%: %d\n"
         "steps for the band within 1%%: %d\n\n",
         sum.stop_step, sum.convergent ? "yes" : "no", sum.steps_smin_1pct, sum.steps_band_1pct);
}

/* gnuplot: $MUONREF_GNUPLOT (empty: none), the configured path, or PATH. */
static const char *find_gnuplot(char *buf, size_t size)
{
  const char *env = getenv("MUONREF_GNUPLOT");
  if (env)
    return *env ? env : NULL;
  if (strcmp(MUONREF_GNUPLOT, "no") && access(MUONREF_GNUPLOT, X_OK) == 0)
    return MUONREF_GNUPLOT;
  const char *path = getenv("PATH");
  for (const char *p = path; p && *p;) {
    const char *q = strchr(p, ':');
    size_t len = q ? (size_t)(q - p) : strlen(p);
    snprintf(buf, size, "%.*s/gnuplot", (int)len, p);
    if (len && access(buf, X_OK) == 0)
      return buf;
    p = q ? q + 1 : NULL;
  }
  return NULL;
}

/* Whether dir may receive the report: absent, or an empty directory, in a
 * parent directory that exists and is writable (the report is built there
 * in a temporary directory first). */
static int dir_usable(const char *dir)
{
  char parent[4096];
  snprintf(parent, sizeof parent, "%s", dir);
  size_t n = strlen(parent);
  while (n > 1 && parent[n - 1] == '/')
    parent[--n] = '\0';
  char *slash = strrchr(parent, '/');
  if (!slash)
    snprintf(parent, sizeof parent, ".");
  else if (slash == parent)
    parent[1] = '\0';
  else
    *slash = '\0';
  if (access(parent, W_OK | X_OK))
    return 0;
  DIR *d = opendir(dir);
  if (!d)
    return errno == ENOENT;
  struct dirent *e;
  int empty = 1;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      empty = 0;
  closedir(d);
  return empty;
}

static int run_report(const ns_args *a)
{
  mst_set *sets = calloc(muonref_preset_count(), sizeof *sets);
  size_t n = 0;
  if (!sets)
    return EXIT_INTERNAL;
  if (a->presets) {
    char *copy = strdup(a->presets), *save = NULL;
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
      const muonref_preset *p = muonref_preset_find(w);
      if (!p || n == muonref_preset_count()) {
        int rc = usage(p ? "too many presets" : "unknown preset in --presets", w);
        free(copy), free(sets);
        return rc;
      }
      mst_set_from_preset(&sets[n++], p);
    }
    free(copy);
    if (!n) {
      free(sets);
      return usage("--presets names no preset", a->presets);
    }
  } else {
    for (; n < muonref_preset_count(); n++)
      mst_set_from_preset(&sets[n], muonref_preset_at(n));
  }
  if (!a->report[0] || !dir_usable(a->report)) {
    free(sets);
    return usage("--report needs a new or empty directory in an existing writable directory", a->report);
  }
  char buf[4096];
  mst_report_config cfg = {a->smin, a->seeds, a->quick, find_gnuplot(buf, sizeof buf)};
  muonref_error err;
  int plotted = 0;
  /* an empty existing directory is replaced by the renamed temporary one (rename(2)) */
  int rc = mst_report(a->report, sets, n, &cfg, &plotted, &err);
  free(sets);
  if (rc) {
    fprintf(stderr, "muonref ns: %s\n", err.message);
    return EXIT_INTERNAL;
  }
  if (!plotted)
    fprintf(stderr, "muonref ns: gnuplot not found: plots skipped (CSV and index.md written)\n");
  if (muonref_verbosity >= 0)
    printf("report written to %s\n", a->report);
  return EXIT_OK;
}

int cmd_ns(int argc, char **argv)
{
  ns_args a;
  mst_set s;
  int rc = parse_args(argc, argv, &a);
  if (rc)
    return rc;
  if (a.report)
    return run_report(&a);
  if (a.preset || a.coeffs) {
    if ((rc = one_set(&a, &s)))
      return rc;
    if (a.sigma_s) {
      if (a.smin != 1e-3)
        fprintf(stderr, "muonref ns: --smin applies to the band study, not to --sigma; ignored\n");
      return print_sigma(&a, &s);
    }
    print_study(&s, a.steps, a.smin);
    return EXIT_OK;
  }
  for (size_t i = 0; i < muonref_preset_count(); i++) {
    mst_set_from_preset(&s, muonref_preset_at(i));
    print_study(&s, a.steps, a.smin);
  }
  return EXIT_OK;
}
