/* muonref: the fused element-wise passes of the fast optimizer step
 * (fast/optimizer.c), vectorized (fast/simd.h).  Not installed.
 *
 * Every array is a float32 array of the parameter's elements, row-major
 * (rows, cols) for a Muon matrix.  Each value is computed in binary64 from
 * the float32 inputs and the binary64 scalars of core/plan.c, and rounded
 * once to binary32 (spec/muon.md sections 6, 8 to 10): every pass gives the
 * bits of the element-by-element loop, whatever the vector width.  A pass
 * reads and writes each element once; what the step used to do in
 * separate passes over memory (the gradient's finiteness, the range
 * checks, the momentum, the Newton-Schulz input and its load, the norm, the
 * output's store and bf16 products, the parameter's check) is done in one.
 * The checks only say whether something is wrong; the *_first functions
 * then find the first offending element for the error message. */
#ifndef MUONREF_STEP_KERNELS_H
#define MUONREF_STEP_KERNELS_H

#pragma GCC visibility push(hidden)

#include <stddef.h>

/* The scalars of one Muon step (from muonref_muon_plan):
 *   M' = mom_keep M + mom_grad G;  V = in_grad G + in_mom M'
 *   U  = V (nesterov) or M'         (the Newton-Schulz input)
 *   O  <- R_bf16(factor[k] O) for k < n_factors (bf16 update products)
 *   P' = decay P - alpha O          (decay 1.0 when not applied; with
 *        cautious, only where muonref_cautious_decays(cautious, sign P,
 *        sign O), core/plan.h, spec/muon.md 4.1; elsewhere P - alpha O) */
typedef struct muonref_stk_muon {
  double mom_keep, mom_grad, in_grad, in_mom;
  int nesterov;
  int n_factors;    /* 0, 1 (update_scale) or 2 (and update_factor2 != 1) */
  double factor[2]; /* fl32(update_factor), fl32(update_factor2), as binary64 */
  double decay, alpha;
  int cautious;     /* the plan's: 0 every element decays; 1 cautious_wd; 2 the fault cautious_wd_strict.
                       Non-zero runs the passes' scalar element functions (no 4-lane body): the
                       cautious profiles are a few, the others keep the vector speed */
} muonref_stk_muon;

/* The scalars of one AdamW step (from muonref_adamw_plan):
 *   m' = beta1 m + one_minus_beta1 g;  v' = beta2 v + one_minus_beta2 g g
 *   q  = n / (sqrt(v') / sqrt_bc2 + eps), 0 when the denominator is 0,
 *        n = m' or (nadamw) num_mom m' + num_grad g
 *   P' = decay P - step_size q      (decay 1.0 when not applied; with
 *        cautious, only where sign P and sign q agree, as for Muon) */
typedef struct muonref_stk_adamw {
  double beta1, one_minus_beta1, beta2, one_minus_beta2, sqrt_bc2, eps, step_size, decay;
  int nadamw;
  double num_mom, num_grad;
  int cautious; /* as muonref_stk_muon's */
  double eps_root_bc2; /* muonref_adamw_plan's: under the square root with v' */
} muonref_stk_adamw;

/* Phase 1 of a Muon matrix: X <- R(fl32(U)) in the Newton-Schulz
 * orientation (tr == 0: X is (rows, cols); tr != 0: X is (cols, rows), U
 * transposed), R the bf16 rounding when bf16 != 0, from the gradient G and
 * the momentum M, both (rows, cols); Mn (rows, cols) <- fl32(M'), the new
 * momentum, in the same pass (phase 2 then only swaps the buffers).
 * Returns the binary64 sum of the squares of X added in X's index order
 * (what muonref_fast_ns_loaded takes).  Sets *bad to 1 when a gradient
 * element is not finite or an element of M' or V is not a finite binary32
 * value (|x| > FLT_MAX or NaN: the step's range check), else leaves it.
 * U: NULL, or rows * cols floats of scratch that a tall matrix (tr != 0)
 * large enough for the pool's threads uses as two passes instead of one
 * fused pass (its rows of G, M and Mn lie a row apart, 4 KiB and more: the
 * fused transposed pass took 15.6 ms at 4096x1024, the two take 10.6 ms,
 * a Newton-Schulz load alone 9.3 ms; this Xeon, AVX-512 BF16, mean of 10
 * steps); its contents are then U, row-major.  Writes X, Mn and U only. */
double muonref_stk_muon_input(float *X, float *Mn, const float *G, const float *M, float *U, size_t rows, size_t cols,
                              int tr, int bf16, const muonref_stk_muon *k, int *bad);

/* What muonref_stk_muon_output stores. */
enum {
  MUONREF_STK_UPDATE = 0, /* O: the update after the bf16 products (for a pass that still changes it) */
  MUONREF_STK_PARAM = 1   /* the new parameter fl32(P'), P' = decay P - alpha O (phase 2 copies it) */
};

/* The end of phase 1: Dst (rows, cols) <- the Newton-Schulz result X (the
 * layout of muonref_stk_muon_input: X^T when tr) with the bf16 products of
 * k, as the update O (what == MUONREF_STK_UPDATE) or as the new parameter
 * fl32(P') from the parameter P (rows, cols) (what == MUONREF_STK_PARAM).
 * Dst may be X when tr == 0.  Returns 1 when every new parameter value
 * rounds to a finite binary32 value, else 0 (muonref_stk_first_nonfinite
 * on a MUONREF_STK_PARAM result, muonref_stk_muon_param_first on an
 * update, say where).  A tall X large enough for the pool's threads is
 * stored transposed first (muonref_nsk_store) and finished row by row in
 * place (the tiles of one fused pass: 12.2 ms at 4096x1024, the two passes
 * 11.4, this Xeon).  Writes Dst only. */
int muonref_stk_muon_output(float *Dst, const float *X, const float *P, size_t rows, size_t cols, int tr,
                            const muonref_stk_muon *k, int what);

/* dst[0..len) <- src[0..len) (not overlapping), on the pool's threads where
 * len is large enough (muonref_pool_chunks): phase 2's copy of a Muon
 * parameter's new values (a single thread's memcpy took 2.7 ms of a
 * 4096x1024 step, two threads 1.5 ms, this Xeon). */
void muonref_stk_copy(float *dst, const float *src, size_t len);

/* The first j < len with x[j] Inf or NaN, or len. */
size_t muonref_stk_first_nonfinite(const float *x, size_t len);

/* Phase 1 of an AdamW parameter: 1 when its step would go wrong (a gradient
 * element not finite, v' beyond FLT_MAX, a parameter value that rounds to
 * Inf or NaN), else 0.  Writes nothing. */
int muonref_stk_adamw_check(const float *P, const float *m, const float *v, const float *G, size_t len,
                            const muonref_stk_adamw *k);

/* Phase 2 of an AdamW parameter: P, m, v <- fl32(P'), fl32(m'), fl32(v'). */
void muonref_stk_adamw_apply(float *P, float *m, float *v, const float *G, size_t len, const muonref_stk_adamw *k);

/* The first element j < len whose M' or V exceeds FLT_MAX in magnitude
 * (the range check's message), or len. */
size_t muonref_stk_muon_range_first(const float *G, const float *M, size_t len, const muonref_stk_muon *k);

/* The first element j < len whose v' exceeds FLT_MAX, or len. */
size_t muonref_stk_adamw_range_first(const float *v, const float *G, size_t len, const muonref_stk_adamw *k);

/* The first element j < len whose new parameter value is Inf or NaN, that
 * value in *value, or len: for a Muon parameter from its update O
 * (muonref_stk_muon_output's MUONREF_STK_UPDATE), for an AdamW one from
 * its state. */
size_t muonref_stk_muon_param_first(const float *P, const float *O, size_t len, const muonref_stk_muon *k,
                                    float *value);
size_t muonref_stk_adamw_param_first(const float *P, const float *m, const float *v, const float *G, size_t len,
                                     const muonref_stk_adamw *k, float *value);

#pragma GCC visibility pop

#endif
