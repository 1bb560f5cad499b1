/* muonref study: the Newton-Schulz convergence study behind `muonref ns`
 * (spec/ns-study.md).  Internal to the muonref program and its tests; not
 * installed.
 *
 * Conventions: matrices are row-major (rows, cols) arrays of double; a
 * "set" is a coefficient list with its order and normalisation safety
 * factor; step k is 1-based in every table (step 0 = the input). */
#ifndef MUONREF_STUDY_H
#define MUONREF_STUDY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <mpfr.h>
#include "muonref.h"

/* Precision, in bits, of every MPFR computation of the study. */
#define MST_PREC 256
/* Most steps a scalar run follows (convergence horizon). */
#define MST_HORIZON 100
/* Most steps a matrix run follows (it unrolls its list into options). */
#define MST_MATRIX_MAX_STEPS MUONREF_MAX_COEFFS

/* One coefficient set as the study runs it. */
typedef struct mst_set {
  char name[64];         /* preset name, or "custom"                      */
  muonref_options o;     /* n_coeffs, coeffs (after coeff safety), order  */
  double norm_safety;    /* g >= 1: singular values enter step 1 in (0, 1/g] */
  int default_steps;     /* the preset's default step count               */
} mst_set;

/* --- sets (study/set.c) --- */

/* The set of preset p (muonref_preset_apply plus its norm safety). */
void mst_set_from_preset(mst_set *s, const muonref_preset *p);

/* Parses a custom list "a,b,c;a,b,c;..." (1..MUONREF_MAX_COEFFS triples of
 * finite decimal numbers, whitespace allowed around numbers) into s with
 * the given order, norm safety 1 and default steps = the list length.
 * Returns MUONREF_OK, or MUONREF_EOPTION with a message in err naming the
 * triple and the rule it broke. */
int mst_set_parse_custom(mst_set *s, const char *text, muonref_coeff_order order, muonref_error *err);

/* The triple step k (1-based) applies, with the norm safety g folded into
 * step 1 as (a/g, b/g^3, c/g^5) (exact in exact arithmetic). */
muonref_coeff mst_step_coeff(const mst_set *s, int k);

/* --- scalar maps in MPFR (study/mp_poly.c) --- */

/* y <- p(x) = a x + b x^3 + c x^5 by Horner in x^2, rounding to nearest at
 * y's precision; the triple's binary64 values enter exactly.  y may be x. */
void mst_mp_poly(mpfr_t y, const mpfr_t x, muonref_coeff t);

/* y <- phi_K(x) = p_K(...p_1(x)) for the triples steps 1..K of s take
 * (mst_step_coeff with the norm safety folded in when fold != 0). */
void mst_mp_phi(mpfr_t y, const mpfr_t x, const mst_set *s, int K, int fold);

/* [lo, hi] <- the exact range of p over [xlo, xhi] (xlo <= xhi): the
 * extreme values at the ends and at the real roots of
 * p'(x) = a + 3b x^2 + 5c x^4 inside (closed form in x^2), all in MPFR. */
void mst_mp_range(mpfr_t lo, mpfr_t hi, muonref_coeff t, const mpfr_t xlo, const mpfr_t xhi);

/* --- the scalar study (study/scalar.c) --- */

/* The band of a set: lo[k], hi[k] = min, max of phi_k over
 * [smin/g, 1/g] for k = 0..K (K <= MST_HORIZON; arrays of K + 1 doubles,
 * each the MPFR value rounded to nearest).  The range of a continuous map
 * on an interval is an interval, so band k = p_k(band k-1) exactly
 * (mst_mp_range); phik_smin[k] = phi_k(smin/g). */
void mst_band(const mst_set *s, double smin, int K, double *lo, double *hi, double *phik_smin);

/* Cross-check of the band by sampling: min and max of phi_k over n >= 2
 * points (n/2 log-spaced, n/2 equally spaced, both ends included) of
 * [smin/g, 1/g], k = 1..K, in MPFR; arrays of K + 1 doubles. */
void mst_band_sampled(const mst_set *s, double smin, int K, int n, double *lo, double *hi);

/* The summary of a set's scalar behaviour (spec/ns-study.md, "Scalar"). */
typedef struct mst_scalar_summary {
  int steps;             /* K: the set's default steps                    */
  double lo, hi;         /* band after K steps                            */
  int stop_step;         /* first step k whose band width no later step
                            j <= MST_HORIZON undercuts by more than 0.1 %;
                            -1 if the band still shrinks at the horizon
                            or the set is convergent                     */
  double horizon_lo, horizon_hi; /* the band at MST_HORIZON              */
  double late_width;     /* the widest band after stop_step (if >= 0)     */
  double late_lo, late_hi; /* lowest and highest value after stop_step    */
  double stop_lo, stop_hi; /* the band at stop_step (if >= 0)             */
  int convergent;        /* band at MST_HORIZON inside [1-1e-6, 1+1e-6]   */
  int steps_smin_1pct;   /* first k with |phi_j(smin)-1| <= 0.01 for all
                            j in [k, MST_HORIZON]; -1 if none            */
  int steps_band_1pct;   /* same for the whole band; -1 if none           */
  double phi_smin;       /* phi_K(smin/g)                                 */
} mst_scalar_summary;

void mst_scalar_summary_of(const mst_set *s, double smin, mst_scalar_summary *out);

/* --- matrix runs (study/matrix.c, study/inputs.c) --- */

/* Input kinds: GAUSS i.i.d. N(0,1) entries; ILLCOND U diag(sv) V^T with
 * Haar-like orthogonal U, V (QR of Gaussian matrices) and sv log-spaced
 * from 1 down to 1/cond. */
typedef enum mst_input_kind { MST_GAUSS = 0, MST_ILLCOND = 1 } mst_input_kind;

typedef struct mst_input {
  char name[32];         /* label in tables, e.g. "gauss_32x64"           */
  mst_input_kind kind;
  size_t rows, cols;
  double cond;           /* ILLCOND only                                  */
} mst_input;

/* Fills g (rows*cols doubles) with input `in` for seed `seed`
 * (splitmix64 + Box-Muller; deterministic on every platform with IEEE
 * binary64).  Returns MUONREF_OK, MUONREF_ENOMEM, or MUONREF_ENUMERIC
 * when LAPACKE's QR fails. */
int mst_input_fill(double *g, const mst_input *in, uint64_t seed);

/* Which binary64 plot the report draws for input j of ins[0..j]:
 *   DIST  the distance to the polar factor per step (Gaussian inputs: it
 *         falls visibly within the steps shown);
 *   SMIN  the smallest singular value of X_k per step, log scale
 *         (ill-conditioned inputs: their distance stays near 1 for every
 *         set within the steps shown, a plot of flat lines, while the
 *         smallest singular values are what the sets differ in);
 *   NONE  input j has the transposed shape of an earlier input of the same
 *         kind: in binary64 X^T iterates exactly as X transposed, so its
 *         plot would repeat that input's (its fp32/bf16 runs stay in the
 *         tables, where the tall layout matters). */
typedef enum mst_input_plot { MST_PLOT_NONE = 0, MST_PLOT_DIST = 1, MST_PLOT_SMIN = 2 } mst_input_plot;
mst_input_plot mst_input_plot_of(const mst_input *ins, size_t j);

/* The polar factor Q = U V^T of the (rows, cols) matrix g via LAPACKE_dgesdd
 * in binary64 (q: rows*cols doubles).  Returns MUONREF_OK, MUONREF_ENOMEM,
 * or MUONREF_ENUMERIC when dgesdd does not converge. */
int mst_polar(double *q, const double *g, size_t rows, size_t cols);

/* Number formats of the matrix runs. */
typedef enum mst_format { MST_F64 = 0, MST_FP32 = 1, MST_BF16 = 2 } mst_format;
#define MST_NFORMATS 3
const char *mst_format_name(mst_format f);

/* Per-step measures of one run: dist[k] = ||X_k - Q||_F / ||Q||_F,
 * smin[k], smax[k] = extreme singular values of X_k, k = 0..K (X_0 = the
 * normalised input); an iterate that overflowed binary64 gets dist = +Inf
 * (binary64 runs) and smin = smax = NaN: divergence is a result, not an
 * error. */
typedef struct mst_trace {
  int K;
  double dist[MST_MATRIX_MAX_STEPS + 1];
  double smin[MST_MATRIX_MAX_STEPS + 1];
  double smax[MST_MATRIX_MAX_STEPS + 1];
} mst_trace;

/* Runs set s for K steps (1..MST_MATRIX_MAX_STEPS) on g (rows, cols) in
 * format f and measures every step against q (mst_polar of g).  MST_F64:
 * binary64 loop written from the definition (normalise by g*||G||_F, no
 * eps); MST_FP32 / MST_BF16: muonref_fast_ns with ns_steps = k for each k,
 * the norm safety folded into step 1, eps 1e-7 added (NeMo).  Returns
 * MUONREF_OK, MUONREF_ENOMEM or MUONREF_ENUMERIC (an SVD failed). */
int mst_run(mst_trace *t, const mst_set *s, int K, const double *g, const double *q, size_t rows, size_t cols,
            mst_format f);

/* The exact column: set s for K steps on g (rows, cols) in MPFR at prec
 * bits through the reference (muonref_ref_ns, called with ns_steps = k for
 * each k, on the nemo options with s's triples unrolled, the norm safety
 * folded into step 1, and eps 0), measured against the MPFR polar factor
 * of g (muonref_ref_polar); distances in MPFR, singular values by a
 * binary64 SVD of the iterate rounded to binary64.  Returns MUONREF_OK or
 * the reference's error (e.g. MUONREF_ENUMERIC when g is numerically rank
 * deficient for the polar factor) with its message in err. */
int mst_run_exact(mst_trace *t, const mst_set *s, int K, const double *g, size_t rows, size_t cols,
                  mpfr_prec_t prec, muonref_error *err);

/* Singular values (descending) of the (rows, cols) matrix a: s holds
 * min(rows, cols) doubles; LAPACKE_dgesdd.  Returns 0 or MUONREF_ENUMERIC. */
int mst_singular_values(double *s, const double *a, size_t rows, size_t cols);

/* --- the report (study/report.c, study/plot.c) --- */

typedef struct mst_report_config {
  double smin;           /* scalar interval [smin, 1]                    */
  int seeds;             /* seeds per input (>= 1)                        */
  int quick;             /* small shapes (make check)                     */
  const char *gnuplot;   /* gnuplot program, or NULL: plots skipped       */
} mst_report_config;

/* x in printf format fmt (one double conversion) for pages and tables
 * meant for people, or "diverged" (+-Inf: the iteration overflowed) or
 * "undefined" (NaN): such output never shows "nan" or "inf".  The result
 * lives in one of 16 rotating static buffers (valid for 15 more calls; not
 * thread-safe), so that one printf may hold several. */
const char *mst_num(const char *fmt, double x);

/* Writes the whole study of sets[0..n) into the new directory dir (see
 * spec/ns-study.md, "Report" for the files).  The files are written into a
 * temporary sibling directory renamed to dir at the end, so nothing is left
 * behind on failure.  *plotted is set to 1 when gnuplot drew the plots.
 * Returns MUONREF_OK, MUONREF_EIO (message names the path), MUONREF_ENOMEM,
 * MUONREF_ENUMERIC. */
int mst_report(const char *dir, const mst_set *sets, size_t n, const mst_report_config *cfg, int *plotted,
               muonref_error *err);

/* Writes the gnuplot script for the report in dir (absolute-free: it
 * refers to the data files by name) and runs `gnuplot` on it with dir as the
 * working directory.  Returns MUONREF_OK, or MUONREF_EIO when gnuplot could
 * not be started or exited with a non-zero status. */
int mst_plot(const char *dir, const char *gnuplot, const mst_set *sets, size_t n, const mst_input *inputs,
             size_t n_inputs, muonref_error *err);

#endif
