/* muonref tests: the coefficient presets against spec/coefficients.md and
 * the Newton-Schulz study (muonref ns).  The expected values come from the
 * spec file (parsed at test time), from this file's own MPFR Horner
 * evaluation and from the test helpers' binary64 Newton-Schulz
 * (testutil.c), never from the study code itself. */
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "muonref.h"
#include "muonref/ref.h"
#include "study/study.h"
#include "testutil.h"

/* ---- the spec's tables ---- */

typedef struct row { char name[64]; int k; double a, b, c; } row;
typedef struct srow { char name[64], order[16]; int entries, steps; double cs, ns; } srow;
static row ROWS[256];
static srow SROWS[64];
static int NROWS, NSROWS;

/* Splits a markdown table line "| x | y | ... |" into at most max cells. */
static int cells(char *line, char **out, int max)
{
  int n = 0;
  if (line[0] != '|')
    return 0;
  for (char *p = line + 1; n < max;) {
    char *q = strchr(p, '|');
    if (!q)
      break;
    *q = '\0';
    while (*p == ' ')
      p++;
    for (char *e = q - 1; e >= p && *e == ' '; e--)
      *e = '\0';
    out[n++] = p;
    p = q + 1;
  }
  return n;
}

static double safety(const char *s) { return strcmp(s, "–") == 0 ? 0.0 : strtod(s, NULL); }

static void load_spec(void)
{
  const char *dir = getenv("MUONREF_SRCDIR");
  char path[4096], line[1024];
  snprintf(path, sizeof path, "%s/spec/coefficients.md", dir ? dir : ".");
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  NROWS = NSROWS = 0;
  while (fgets(line, sizeof line, f)) {
    char *c[8], *end;
    line[strcspn(line, "\n")] = '\0';
    int n = cells(line, c, 8);
    if (n == 5 && strtol(c[1], &end, 10) >= 0 && *end == '\0' && c[1][0] && NROWS < 256) {
      row *r = &ROWS[NROWS++];
      snprintf(r->name, sizeof r->name, "%s", c[0]);
      r->k = atoi(c[1]);
      r->a = strtod(c[2], NULL), r->b = strtod(c[3], NULL), r->c = strtod(c[4], NULL);
    } else if (n == 7 && (!strcmp(c[3], "cycle") || !strcmp(c[3], "repeat_last")) && NSROWS < 64) {
      srow *r = &SROWS[NSROWS++];
      snprintf(r->name, sizeof r->name, "%s", c[0]);
      snprintf(r->order, sizeof r->order, "%s", c[3]);
      r->entries = atoi(c[2]);
      r->steps = atoi(c[4]);
      r->cs = safety(c[5]);
      r->ns = safety(c[6]);
    }
  }
  fclose(f);
}

START_TEST(presets_equal_the_spec_lists)
{
  load_spec();
  ck_assert_int_ge(NROWS, 60);
  for (size_t i = 0; i < muonref_preset_count(); i++) {
    const muonref_preset *p = muonref_preset_at(i);
    int seen = 0;
    for (int j = 0; j < NROWS; j++)
      if (!strcmp(ROWS[j].name, p->name)) {
        const row *r = &ROWS[j];
        ck_assert_msg(r->k == seen && r->k < p->n_coeffs, "%s: row k = %d out of order", p->name, r->k);
        ck_assert_msg(p->coeffs[r->k].a == r->a && p->coeffs[r->k].b == r->b && p->coeffs[r->k].c == r->c,
                      "%s[%d] differs from spec/coefficients.md", p->name, r->k);
        seen++;
      }
    ck_assert_msg(seen == p->n_coeffs, "%s: the spec lists %d triples, the code %d", p->name, seen, p->n_coeffs);
  }
  for (int j = 0; j < NROWS; j++)
    ck_assert_msg(muonref_preset_find(ROWS[j].name) != NULL, "spec preset %s is not in the code", ROWS[j].name);
}
END_TEST

START_TEST(presets_equal_the_spec_summary)
{
  load_spec();
  ck_assert_int_eq(NSROWS, (int)muonref_preset_count());
  for (int j = 0; j < NSROWS; j++) {
    const srow *r = &SROWS[j];
    const muonref_preset *p = muonref_preset_find(r->name);
    ck_assert_msg(p && !strcmp(p->name, r->name), "summary row %s", r->name);
    ck_assert_int_eq(p->n_coeffs, r->entries);
    ck_assert_str_eq(muonref_coeff_order_name(p->order), r->order);
    ck_assert_int_eq(p->default_steps, r->steps);
    ck_assert_msg(p->coeff_safety == r->cs && p->norm_safety == r->ns, "%s safety factors", r->name);
  }
  ck_assert_ptr_eq(muonref_preset_find("original"), muonref_preset_find("simple"));
  ck_assert_ptr_eq(muonref_preset_find("keller"), muonref_preset_find("simple"));
}
END_TEST

/* The paper's division by 1.01^(1,3,5) on all but the last entry, against
 * the divided values the Polar Express paper's code produces (first entry
 * as quoted in spec/coefficients.md). */
START_TEST(polar_express_paper_safety_division)
{
  const muonref_preset *p = muonref_preset_find("polar_express_paper");
  muonref_options o = tu_nemo();
  muonref_preset_apply(p, &o);
  ck_assert(fabs(o.coeffs[0].a - 8.205160414005574) <= 1e-15 * 8.3);
  ck_assert(fabs(o.coeffs[0].b - -22.90193498705605) <= 1e-15 * 23);
  ck_assert(fabs(o.coeffs[0].c - 16.460724910180314) <= 1e-15 * 17);
  ck_assert(o.coeffs[7].a == 1.875 && o.coeffs[7].b == -1.25 && o.coeffs[7].c == 0.375);
  for (int k = 0; k < 7; k++)
    ck_assert(o.coeffs[k].a == p->coeffs[k].a / 1.01);
  /* the 4-decimal list of Emerging-Optimizers / Paddle is within 1e-4 of it */
  const muonref_preset *q = muonref_preset_find("polar_express");
  for (int k = 0; k < 8; k++)
    ck_assert_msg(fabs(q->coeffs[k].a - o.coeffs[k].a) <= 1.5e-4 && fabs(q->coeffs[k].c - o.coeffs[k].c) <= 1e-4,
                  "entry %d", k);
}
END_TEST

/* ---- this file's own MPFR evaluation ---- */

/* y <- p(x) written out term by term (not Horner): a x + b x^3 + c x^5. */
static void my_poly(mpfr_t y, const mpfr_t x, muonref_coeff t)
{
  mpfr_t x3, x5, s;
  mpfr_inits2(512, x3, x5, s, (mpfr_ptr)0);
  mpfr_pow_ui(x3, x, 3, MPFR_RNDN);
  mpfr_pow_ui(x5, x, 5, MPFR_RNDN);
  mpfr_mul_d(s, x, t.a, MPFR_RNDN);
  mpfr_mul_d(x3, x3, t.b, MPFR_RNDN);
  mpfr_mul_d(x5, x5, t.c, MPFR_RNDN);
  mpfr_add(s, s, x3, MPFR_RNDN);
  mpfr_add(y, s, x5, MPFR_RNDN);
  mpfr_clears(x3, x5, s, (mpfr_ptr)0);
}

/* y (512 bits) <- phi_K(x) for options o (list, order); x is exact. */
static void my_phi_mp(mpfr_t y, const muonref_options *o, int K, const mpfr_t x)
{
  mpfr_set(y, x, MPFR_RNDN);
  for (int k = 0; k < K; k++) {
    int n = o->n_coeffs, i = o->coeff_order == MUONREF_ORDER_CYCLE ? k % n : (k < n ? k : n - 1);
    my_poly(y, y, o->coeffs[i]);
  }
}

/* phi_K(x) for options o in 512-bit MPFR, rounded to a double. */
static double my_phi(const muonref_options *o, int K, double x)
{
  mpfr_t y, xx;
  mpfr_inits2(512, y, xx, (mpfr_ptr)0);
  mpfr_set_d(xx, x, MPFR_RNDN);
  my_phi_mp(y, o, K, xx);
  double r = mpfr_get_d(y, MPFR_RNDN);
  mpfr_clears(y, xx, (mpfr_ptr)0);
  return r;
}

static const char *const SETS[] = {"simple", "quintic", "polar_express", "polar_express_paper", "deepseekv4",
                                   "cans", "aol", "cubic5"};

/* phi_K by the scalar map equals the Newton-Schulz iteration on a diagonal
 * matrix: the fast fp32 path within 1e-5, the helpers' binary64 loop within
 * 1e-12, for the diagonal values d_i / ||D||_F. */
START_TEST(phi_equals_matrix_iteration_on_diagonals)
{
  const muonref_preset *p = muonref_preset_find(SETS[_i]);
  muonref_options o = tu_nemo();
  muonref_preset_apply(p, &o);
  o.ns_steps = p->default_steps;
  o.ns_eps = 0.0;
  o.ns_format = MUONREF_NS_FP32;
  enum { M = 6, N = 9 };
  static const float d[M] = {0.9f, 0.55f, 0.31f, 0.12f, 0.05f, 0.02f};
  float g[M * N] = {0}, out[M * N];
  double o64[M * N], nrm = 0;
  for (int i = 0; i < M; i++) {
    g[i * N + i + 2] = d[i]; /* off the main diagonal: a permuted diagonal */
    nrm += (double)d[i] * d[i];
  }
  nrm = sqrt(nrm);
  /* fp32: 1e-5, but 1e-4 for lists whose first step has slope a > 8 (Polar
   * Express, cans), which amplifies the first roundings by about a. */
  double tol = p->coeffs[0].a > 8 ? 1e-4 : 1e-5;
  ck_assert_int_eq(muonref_fast_ns(out, g, M, N, &o, NULL, NULL), MUONREF_OK);
  tu_ns_double(o64, g, M, N, &o);
  for (int i = 0; i < M; i++) {
    double want = my_phi(&o, o.ns_steps, d[i] / nrm);
    ck_assert_msg(fabs(out[i * N + i + 2] - want) <= tol * fmax(1, fabs(want)), "%s d=%g: fp32 %g vs %g", p->name,
                  d[i], out[i * N + i + 2], want);
    ck_assert_msg(fabs(o64[i * N + i + 2] - want) <= 1e-12 * fmax(1, fabs(want)), "%s binary64", p->name);
  }
}
END_TEST

/* The exact reference (muonref_ref_ns, 256 bits, eps 0) on a diagonal
 * matrix D: its diagonal is phi_K(d_i / ||D||_F) by this file's 512-bit
 * evaluation, to 2^-200 (both are exact up to their working precision). */
START_TEST(phi_equals_exact_reference_on_diagonals)
{
  const muonref_preset *p = muonref_preset_find(SETS[_i]);
  muonref_options o = tu_nemo();
  muonref_preset_apply(p, &o);
  o.ns_steps = p->default_steps;
  o.ns_eps = 0.0;
  o.ns_format = MUONREF_NS_EXACT;
  enum { M = 4, N = 7 };
  static const double d[M] = {0.9, 0.37, 0.05, 0.004};
  double g[M * N] = {0};
  for (int i = 0; i < M; i++)
    g[i * N + i + 1] = d[i];
  muonref_mpmat G, X;
  ck_assert_int_eq(muonref_mpmat_init(&G, M, N, 256), MUONREF_OK);
  ck_assert_int_eq(muonref_mpmat_init(&X, M, N, 256), MUONREF_OK);
  muonref_mpmat_set_double(&G, g);
  muonref_error err;
  ck_assert_msg(muonref_ref_ns(&X, &G, &o, &err) == MUONREF_OK, "%s", err.message);
  mpfr_t nrm, x, y, diff;
  mpfr_inits2(512, nrm, x, y, diff, (mpfr_ptr)0);
  mpfr_set_ui(nrm, 0, MPFR_RNDN);
  for (int i = 0; i < M; i++) {
    mpfr_set_d(x, d[i], MPFR_RNDN);
    mpfr_fma(nrm, x, x, nrm, MPFR_RNDN);
  }
  mpfr_sqrt(nrm, nrm, MPFR_RNDN);
  for (int i = 0; i < M; i++) {
    mpfr_set_d(x, d[i], MPFR_RNDN);
    mpfr_div(x, x, nrm, MPFR_RNDN);
    my_phi_mp(y, &o, o.ns_steps, x);
    mpfr_sub(diff, X.e[i * N + i + 1], y, MPFR_RNDN);
    ck_assert_msg(mpfr_cmpabs_ui(diff, 0) == 0 || mpfr_get_exp(diff) < -200, "%s: diagonal %d differs by %g",
                  p->name, i, mpfr_get_d(diff, MPFR_RNDN));
    ck_assert(mpfr_zero_p(X.e[i * N])); /* column 0 holds no diagonal value */
  }
  mpfr_clears(nrm, x, y, diff, (mpfr_ptr)0);
  muonref_mpmat_clear(&G), muonref_mpmat_clear(&X);
}
END_TEST

/* The study's MPFR phi and its binary64 matrix run agree with this file's
 * evaluation (a diagonal 1 x 1 input for the run: one singular value 1). */
START_TEST(study_phi_matches_independent_mpfr)
{
  const muonref_preset *p = muonref_preset_find(SETS[_i]);
  mst_set s;
  mst_set_from_preset(&s, p);
  mpfr_t x, y;
  mpfr_inits2(MST_PREC, x, y, (mpfr_ptr)0);
  for (double v = 0.001; v <= 1.0; v *= 1.7) {
    mpfr_set_d(x, v, MPFR_RNDN);
    mst_mp_phi(y, x, &s, s.default_steps, 0);
    double want = my_phi(&s.o, s.default_steps, v);
    ck_assert_msg(fabs(mpfr_get_d(y, MPFR_RNDN) - want) <= 1e-15 * fmax(1, fabs(want)), "%s at %g", p->name, v);
  }
  mpfr_clears(x, y, (mpfr_ptr)0);
}
END_TEST

/* The band of step K contains every sampled phi_K and its ends are reached
 * by the samples within 1e-4 (this file's sampling: 20001 equally spaced
 * and 20001 log-spaced points of [1e-3, 1]; narrow peaks near 0 keep the
 * sampled extremes slightly inside the exact band). */
START_TEST(band_contains_samples_and_is_tight)
{
  const muonref_preset *p = muonref_preset_find(SETS[_i]);
  mst_set s;
  mst_set_from_preset(&s, p);
  int K = s.default_steps;
  double lo[MST_HORIZON + 1], hi[MST_HORIZON + 1], ps[MST_HORIZON + 1];
  mst_band(&s, 1e-3, K, lo, hi, ps);
  double smin = INFINITY, smax = -INFINITY;
  muonref_options o = s.o; /* norm safety is 1 for these sets but polar_express_paper's 1.01 */
  for (int i = 0; i <= 40001; i++) {
    double u = i <= 20000 ? 1e-3 + (1 - 1e-3) * i / 20000.0 : 1e-3 * pow(1e3, (i - 20001) / 20000.0);
    double x = u / s.norm_safety;
    double v = my_phi(&o, K, x);
    smin = fmin(smin, v), smax = fmax(smax, v);
  }
  ck_assert_msg(smin >= lo[K] - 1e-12 && smax <= hi[K] + 1e-12, "%s: samples outside the band", p->name);
  ck_assert_msg(smin - lo[K] <= 1e-4 && hi[K] - smax <= 1e-4, "%s: band [%g, %g] vs samples [%g, %g]", p->name,
                lo[K], hi[K], smin, smax);
}
END_TEST

/* Runs cmd and returns its first output line in b and its exit status. */
static int run(const char *cmd, char *b, size_t n)
{
  FILE *f = popen(cmd, "r");
  ck_assert(f != NULL);
  b[0] = '\0';
  if (!fgets(b, (int)n, f))
    b[0] = '\0';
  char sink[256];
  while (fgets(sink, sizeof sink, f))
    ;
  int st = pclose(f);
  return WEXITSTATUS(st);
}

START_TEST(cli_sigma_prints_exact_phi)
{
  char b[256];
  ck_assert_int_eq(run("./muonref ns --preset simple --steps 5 --sigma 0.5", b, sizeof b), 0);
  muonref_options o = tu_nemo(); /* nemo runs Keller's triple */
  o.n_coeffs = 1;
  o.coeffs[0] = (muonref_coeff){3.4445, -4.7750, 2.0315};
  double want = my_phi(&o, 5, 0.5), got = strtod(b, NULL);
  ck_assert_msg(fabs(got - want) <= 2e-16 * fabs(want), "printed %s, expected %.17g", b, want);
  char *dot = strchr(b, '.');
  ck_assert(dot && strspn(dot + 1, "0123456789") >= 16); /* 17 significant digits */
  muonref_options d = o; /* DeepSeek-V4: Keller's triple 8 times, then (2, -1.5, 0.5) twice */
  d.n_coeffs = 10;
  d.coeff_order = MUONREF_ORDER_REPEAT_LAST;
  for (int k = 0; k < 10; k++)
    d.coeffs[k] = k < 8 ? (muonref_coeff){3.4445, -4.7750, 2.0315} : (muonref_coeff){2.0, -1.5, 0.5};
  ck_assert_int_eq(run("./muonref ns --preset deepseekv4 --sigma 0.01", b, sizeof b), 0);
  want = my_phi(&d, 10, 0.01);
  ck_assert_msg(fabs(strtod(b, NULL) - want) <= 2e-16 * fabs(want), "deepseekv4 at 0.01: %s vs %.17g", b, want);
  ck_assert_int_eq(run("./muonref ns --coeffs '2,-1.5,0.5' --steps 3 --sigma 1", b, sizeof b), 0);
  ck_assert_msg(strtod(b, NULL) == 1.0, "p(1) = 1 for (2, -1.5, 0.5): %s", b);
}
END_TEST

START_TEST(cli_bad_input_is_usage_error)
{
  char b[256];
  static const char *const BAD[] = {
    "./muonref ns --preset nosuch --sigma 0.5 2>&1",  "./muonref ns --preset simple --sigma abc 2>&1",
    "./muonref ns --smin 2 2>&1",                      "./muonref ns --preset simple --steps 0 --sigma 1 2>&1",
    "./muonref ns --coeffs '1,2' --sigma 1 2>&1",      "./muonref ns --coeffs '1,2,3;' --sigma 1 2>&1",
    "./muonref ns --preset simple --coeffs '1,2,3' 2>&1", "./muonref ns --report 2>&1",
    "./muonref ns --report /tmp --presets nosuch 2>&1", "./muonref ns --bogus 1 2>&1",
    "./muonref ns --report /nonexistent-muonref-dir/r --quick 2>&1", "./muonref ns --report . --quick 2>&1"};
  for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
    ck_assert_msg(run(BAD[i], b, sizeof b) == 2, "%s: exit status", BAD[i]);
    ck_assert_msg(strstr(b, "muonref ns:") != NULL, "%s: message '%s'", BAD[i], b);
  }
}
END_TEST

START_TEST(custom_list_parsing)
{
  mst_set s;
  muonref_error err;
  ck_assert_int_eq(mst_set_parse_custom(&s, " 3.4445, -4.7750 ,2.0315; 1.875,-1.25,0.375 ",
                                        MUONREF_ORDER_CYCLE, &err), MUONREF_OK);
  ck_assert_int_eq(s.o.n_coeffs, 2);
  ck_assert(s.o.coeffs[1].a == 1.875 && s.o.coeffs[0].b == -4.7750 && s.o.coeff_order == MUONREF_ORDER_CYCLE);
  static const char *const BAD[] = {"", "1,2", "1,2,3,4", "1,2,x", "1,2,inf", "1,2,3;;4,5,6", "1e999,0,0"};
  for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++)
    ck_assert_msg(mst_set_parse_custom(&s, BAD[i], MUONREF_ORDER_CYCLE, &err) == MUONREF_EOPTION, "'%s'", BAD[i]);
}
END_TEST

/* The deepseekv4 tail polynomial has p(1) = 1 and p'(1) = 0 with
 * p''(1) = 1 > 0: x = 1 is the minimum of p over [0.9, 1.1] (found by the
 * study's range code at the interior critical point), and the maximum is
 * p(1.1) = 1.0087... > 1 (values near 1 land on or above 1). */
START_TEST(deepseek_tail_fixed_point)
{
  mpfr_t lo, hi, a, b;
  mpfr_inits2(MST_PREC, lo, hi, a, b, (mpfr_ptr)0);
  mpfr_set_d(a, 0.9, MPFR_RNDN);
  mpfr_set_d(b, 1.1, MPFR_RNDN);
  mst_mp_range(lo, hi, (muonref_coeff){2.0, -1.5, 0.5}, a, b);
  ck_assert(mpfr_cmp_ui(lo, 1) == 0);
  ck_assert(fabs(mpfr_get_d(hi, MPFR_RNDN) - (2.2 - 1.5 * 1.331 + 0.5 * 1.61051)) < 1e-14);
  mpfr_clears(lo, hi, a, b, (mpfr_ptr)0);
}
END_TEST

/* Divergence is a result: cubic5 cycled for 20 steps overflows binary64
 * (its 6th step maps 1.3 to -2.97, spec/ns-study.md) and the run reports
 * dist = +Inf with NaN singular values instead of failing; its first 5
 * steps stay finite. */
START_TEST(divergent_run_is_reported_not_failed)
{
  mst_set s;
  mst_set_from_preset(&s, muonref_preset_find("cubic5"));
  mst_input in = {"g", MST_GAUSS, 6, 9, 0};
  double g[54], q[54];
  ck_assert_int_eq(mst_input_fill(g, &in, 3), MUONREF_OK);
  ck_assert_int_eq(mst_polar(q, g, 6, 9), MUONREF_OK);
  mst_trace t;
  ck_assert_int_eq(mst_run(&t, &s, 20, g, q, 6, 9, MST_F64), MUONREF_OK);
  for (int k = 0; k <= 5; k++)
    ck_assert(isfinite(t.dist[k]) && t.dist[k] < 1.0);
  ck_assert(isinf(t.dist[20]) && isnan(t.smax[20]));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("study");
  TCase *t = tcase_create("study");
  tcase_set_timeout(t, 120);
  int nsets = (int)(sizeof SETS / sizeof SETS[0]);
  tcase_add_test(t, presets_equal_the_spec_lists);
  tcase_add_test(t, presets_equal_the_spec_summary);
  tcase_add_test(t, polar_express_paper_safety_division);
  tcase_add_loop_test(t, phi_equals_matrix_iteration_on_diagonals, 0, nsets);
  tcase_add_loop_test(t, phi_equals_exact_reference_on_diagonals, 0, nsets);
  tcase_add_loop_test(t, study_phi_matches_independent_mpfr, 0, nsets);
  tcase_add_loop_test(t, band_contains_samples_and_is_tight, 0, nsets);
  tcase_add_test(t, cli_sigma_prints_exact_phi);
  tcase_add_test(t, cli_bad_input_is_usage_error);
  tcase_add_test(t, custom_list_parsing);
  tcase_add_test(t, deepseek_tail_fixed_point);
  tcase_add_test(t, divergent_run_is_reported_not_failed);
  suite_add_tcase(s, t);
  return tu_run_suite(s);
}
