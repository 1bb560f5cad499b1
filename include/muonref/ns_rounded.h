/* muonref: the reference's Newton-Schulz in the bf16 number format of
 * spec/muon.md section 7, computed exactly and rounded once per operation,
 * with a certificate that the result does not depend on the order of
 * accumulation (spec/vectors.md section 5.2). */
#ifndef MUONREF_NS_ROUNDED_H
#define MUONREF_NS_ROUNDED_H

#include "muonref/api.h"
#include <stddef.h>
#include "muonref/options.h"
#include "muonref/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a bf16 result is not certified (bit flags of *uncertain). */
enum {
  MUONREF_NSR_INEXACT_SUM = 1u << 0,  /* some dot product or the norm has a partial
                                         sum binary32 cannot hold in some order */
  MUONREF_NSR_DOUBLE_ROUNDING = 1u << 1, /* rounding through binary32 first gives
                                         another bf16 value at some operation */
  MUONREF_NSR_RANGE = 1u << 2,        /* a value left the normal bf16 range */
  MUONREF_NSR_INPUT_NOT_FP32 = 1u << 3, /* (steps) U is not exactly binary32, so
                                         ports computing U in fp32 may differ */
  /* Informational, not a reason to withhold the certificate: some partial
   * sum of some dot product does not fit bf16's 8 significant bits in some
   * order, so an implementation that accumulates in bf16 (PyTorch 1.13 CPU's
   * bf16 matmul on strided operands, measured) may give another result. */
  MUONREF_NSR_BF16_ACCUM = 1u << 4
};
/* The bits that withhold the certificate. */
#define MUONREF_NSR_UNCERTAIN \
  (MUONREF_NSR_INEXACT_SUM | MUONREF_NSR_DOUBLE_ROUNDING | MUONREF_NSR_RANGE | MUONREF_NSR_INPUT_NOT_FP32)

/* out <- NS(in) in bf16 semantics for the row-major (rows, cols) matrix
 * `in` (float32 values), under o's coefficients, order, ns_steps, ns_eps and
 * eps_mode: every operation's exact result (GNU MPFR, 128 bits, enough to
 * hold every exact intermediate of a certified input) rounded to bf16 to
 * nearest even; scalars as binary32.  out (rows*cols floats, bf16 values)
 * must not overlap in.  *uncertain receives 0 when the result is certified
 * order-independent (every partial sum of every dot product, in any order,
 * is exact in binary32: all terms are integer multiples of the smallest
 * term's ulp u and the sum of their magnitudes is below 2^24 u) and the
 * same bf16 value results when each operation is rounded to binary32 first
 * (as PyTorch's bf16 kernels do); otherwise the MUONREF_NSR_* reasons.
 * MUONREF_NSR_BF16_ACCUM may be set on a certified result: test
 * (*uncertain & MUONREF_NSR_UNCERTAIN) for the certificate.
 * Returns MUONREF_OK or MUONREF_ENOMEM; MUONREF_EOPTION for out, in or o
 * NULL, or rows * cols overflowing. */
MUONREF_API MUONREF_NODISCARD int muonref_ref_ns_bf16(float *out, const float *in, size_t rows, size_t cols, const muonref_options *o,
                                                      unsigned *uncertain, muonref_error *err);

#ifdef __cplusplus
}
#endif
#endif
