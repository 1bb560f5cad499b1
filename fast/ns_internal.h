/* muonref: internal entry of the fast Newton-Schulz iteration with
 * deliberate deviations from the spec, used by the mutation tests of the
 * vector checker (muonref check --fault).  Not installed. */
#ifndef MUONREF_NS_INTERNAL_H
#define MUONREF_NS_INTERNAL_H

#include "muonref/ns.h"

/* Deviations (bit flags); 0 is the spec's iteration. */
enum {
  MUONREF_NSF_NO_TRANSPOSE = 1u << 0, /* iterate on the tall side as given  */
  MUONREF_NSF_MAX_NORM = 1u << 1,     /* normalize by max |x| not ||X||_F   */
  MUONREF_NSF_BF16_SCALARS = 1u << 2, /* coefficients and eps rounded to bf16 */
  /* Not deviations: which GEMM a bf16 run uses, over MUONREF_NS_GEMM
   * (fast/ns_dnnl.h); _DNNL fails with MUONREF_EOPTION where unavailable. */
  MUONREF_NSF_GEMM_BLAS = 1u << 3,    /* OpenBLAS on bf16-valued floats */
  MUONREF_NSF_GEMM_DNNL = 1u << 4,    /* oneDNN's native bf16 matmul at every size */
  MUONREF_NSF_ZERO_NORM_NAN = 1u << 5, /* a zero divisor gives X / 0 (NaN for X = 0), not zeros */
  /* Not a deviation: a bf16 run evaluates o->bf16_order (spec/muon.md 7.2)
   * instead of SEPARATE, with full sgemm products on OpenBLAS (slower; no
   * oneDNN).  Used by the judge's fit (vectors/judge/fit.c) to run a candidate
   * in the order the port evaluates; a test hook like the four above. */
  MUONREF_NSF_ORDER = 1u << 6
};

/* Whether flags ask for deviation f (NO_TRANSPOSE, MAX_NORM, BF16_SCALARS,
 * ZERO_NORM_NAN, and the evaluation order ORDER): these five are test hooks of the faults of the same names
 * (fast/faults.h); without MUONREF_TEST_HOOKS, as in the installed
 * library, they are constant 0 and their branches compile to nothing. */
#ifdef MUONREF_TEST_HOOKS
#define MUONREF_NSF_FAULT(flags, f) ((flags) & (f))
#else
#define MUONREF_NSF_FAULT(flags, f) ((void)(flags), 0u)
#endif

/* muonref_fast_ns with the deviations in flags (see ns.h for the rest). */
int muonref_fast_ns_flags(float *out, const float *in, size_t rows, size_t cols, const muonref_options *o,
                          float *work, unsigned flags, muonref_error *err);

/* The orientation of the iterate X of a (rows, cols) matrix under flags:
 * X is *m x *n, the input itself (*tr == 0) or its transpose (*tr != 0:
 * rows > cols, unless MUONREF_NSF_NO_TRANSPOSE). */
void muonref_ns_orient(size_t rows, size_t cols, unsigned flags, size_t *m, size_t *n, int *tr);

/* Floats of workspace muonref_fast_ns_loaded needs for (rows, cols) under
 * flags: muonref_ns_workspace_floats(rows, cols), or more under
 * MUONREF_NSF_NO_TRANSPOSE (2 m n + 3 m^2 + ceil(m n / 2) in the
 * orientation of muonref_ns_orient). */
size_t muonref_ns_workspace_floats_flags(size_t rows, size_t cols, unsigned flags);

/* Whether the load rounds to bf16: ns_format BF16 with norm_format BF16
 * (under norm_format INPUT the load and the norm stay binary32). */
int muonref_ns_load_bf16(const muonref_options *o);

/* Newton-Schulz of a matrix its caller has loaded: work (at least
 * muonref_ns_workspace_floats_flags(rows, cols, flags) floats) begins with
 * the iterate X (m x n as muonref_ns_orient says), each element the input's
 * rounded to bf16 where muonref_ns_load_bf16(o), else as is, and ss is the
 * binary64 sum of the squares of X added in X's index order (as
 * fast/passes.h pass_load_body computes it).  On MUONREF_OK X holds the
 * result (still m x n: the caller transposes it back when *tr); the errors
 * are muonref_fast_ns's, the same messages (none is about in or out; work
 * NULL is MUONREF_EOPTION). */
int muonref_fast_ns_loaded(float *work, size_t rows, size_t cols, double ss, const muonref_options *o,
                           unsigned flags, muonref_error *err);

#endif
