/* muonref: dense matrices of MPFR numbers for the high-precision reference.
 *
 * A muonref_mpmat is a row-major (rows, cols) matrix: element (i, j) is
 * e[i * cols + j], every element an mpfr_t of precision prec.  The matrix
 * owns its elements (init/clear).  Products accumulate in a register of
 * prec + MUONREF_REF_GUARD bits and round once to the destination's
 * precision (spec/reference.md, "Products"). */
#ifndef MUONREF_MPMAT_H
#define MUONREF_MPMAT_H

#include "muonref/api.h"
#include <stddef.h>
#include <stdint.h>
#include <mpfr.h>
#include "muonref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default working precision of the reference, in bits. */
#define MUONREF_REF_PREC 256
/* Smallest precision accepted: binary64 inputs must be held exactly. */
#define MUONREF_REF_PREC_MIN 53
/* Extra bits of the accumulator of dot products and norms. */
#define MUONREF_REF_GUARD 64

typedef struct muonref_mpmat {
  size_t rows, cols;
  mpfr_prec_t prec;
  mpfr_t *e; /* e[i * cols + j]; NULL when rows * cols == 0 */
} muonref_mpmat;

/* NULL arguments: the functions that return a status return
 * MUONREF_EOPTION (these take no error report), the others do nothing
 * (is_finite returns 0; frobenius sets out to NaN for m NULL). */

/* Initializes m as a (rows, cols) matrix of +0 at precision prec (bits).
 * Returns MUONREF_OK; MUONREF_EOPTION when m is NULL, prec is outside
 * [MUONREF_REF_PREC_MIN, MPFR_PREC_MAX] or rows * cols overflows;
 * MUONREF_ENOMEM.  On failure m is left empty (clear is a no-op on it). */
MUONREF_API MUONREF_NODISCARD int muonref_mpmat_init(muonref_mpmat *m, size_t rows, size_t cols, mpfr_prec_t prec);

/* Frees the elements of m and leaves it empty (0 x 0).  Idempotent. */
MUONREF_API void muonref_mpmat_clear(muonref_mpmat *m);

/* m <- x, x holding rows * cols values in m's row-major layout.  Exact (the
 * precision is at least 53 bits); NaN and +-Inf are kept. */
MUONREF_API void muonref_mpmat_set_float(muonref_mpmat *m, const float *x);
MUONREF_API void muonref_mpmat_set_double(muonref_mpmat *m, const double *x);

/* x <- m, each element correctly rounded to nearest-even in the target
 * format with its exact exponent range (mpround.h). */
MUONREF_API void muonref_mpmat_get_float(float *x, const muonref_mpmat *m);
MUONREF_API void muonref_mpmat_get_double(double *x, const muonref_mpmat *m);
MUONREF_API void muonref_mpmat_get_bf16(uint16_t *x, const muonref_mpmat *m);

/* 1 if every element is finite (no NaN, no Inf), else 0; *bad (if not
 * NULL) receives the index of the first non-finite element. */
MUONREF_API int muonref_mpmat_is_finite(const muonref_mpmat *m, size_t *bad);

/* dst <- src rounded (RNDN) to dst's precision.  Same shape required:
 * MUONREF_ESHAPE otherwise.  dst may be src. */
MUONREF_API MUONREF_NODISCARD int muonref_mpmat_copy(muonref_mpmat *dst, const muonref_mpmat *src);

/* dst (cols, rows) <- src^T for src (rows, cols), rounded to dst's
 * precision.  MUONREF_ESHAPE when the shapes do not match; dst must not be
 * src. */
MUONREF_API MUONREF_NODISCARD int muonref_mpmat_transpose(muonref_mpmat *dst, const muonref_mpmat *src);

/* c (r, k) <- a (r, n) b (n, k).  Each element is sum_l a_il b_lj
 * accumulated in prec(c) + MUONREF_REF_GUARD bits and rounded once to
 * prec(c): |error| <= 2^-prec(c) |s| + n 2^-(prec(c)+GUARD) sum_l |a_il b_lj|.
 * MUONREF_ESHAPE on mismatched shapes; c must not be a or b. */
MUONREF_API MUONREF_NODISCARD int muonref_mpmat_mul(muonref_mpmat *c, const muonref_mpmat *a, const muonref_mpmat *b);

/* c (r, r) <- a a^T for a (r, n), with the same accumulation as mul; only
 * the upper triangle is computed and mirrored, so c is exactly symmetric.
 * MUONREF_ESHAPE on mismatched shapes; c must not be a. */
MUONREF_API MUONREF_NODISCARD int muonref_mpmat_gram(muonref_mpmat *c, const muonref_mpmat *a);

/* c <- alpha a + beta b element-wise, alpha and beta binary64 scalars taken
 * exactly, each element rounded once (mpfr_fmma) to prec(c).  c may be a
 * or b.  MUONREF_ESHAPE on mismatched shapes. */
MUONREF_API MUONREF_NODISCARD int muonref_mpmat_axpby(muonref_mpmat *c, double alpha, const muonref_mpmat *a, double beta,
                                                      const muonref_mpmat *b);

/* out <- ||m||_F = sqrt(sum of squares), the sum accumulated in
 * prec(out) + MUONREF_REF_GUARD bits, the root rounded to prec(out). */
MUONREF_API void muonref_mpmat_frobenius(mpfr_ptr out, const muonref_mpmat *m);

#ifdef __cplusplus
}
#endif
#endif
