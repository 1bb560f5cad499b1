/* muonref: the fast Newton-Schulz iteration (bf16 or fp32) on OpenBLAS.
 * spec/muon.md, section "Newton-Schulz", defines it. */
#ifndef MUONREF_NS_H
#define MUONREF_NS_H

#include "muonref/api.h"
#include <stddef.h>
#include "muonref/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Floats of workspace muonref_fast_ns needs for a (rows, cols) matrix:
 * with m = min(rows, cols), n = max(rows, cols): 2 m n + 3 m m + ceil(m n / 2)
 * (the last part holds a bf16 copy of the iterate for the native bf16 path,
 * fast/ns.c; the size is the same on every CPU). */
MUONREF_API size_t muonref_ns_workspace_floats(size_t rows, size_t cols);

/* out <- NS(in) for the row-major (rows, cols) matrix `in`, under the
 * coefficient list, order, ns_steps, ns_eps, eps_mode and ns_format of *o
 * (BF16 or FP32; EXACT is the reference's and is refused here).
 * `in` is never written; out must not overlap in.  work holds at least
 * muonref_ns_workspace_floats(rows, cols) floats, or is NULL (then it is
 * allocated and freed inside).  Returns MUONREF_OK; MUONREF_EOPTION for
 * ns_format EXACT ("ns_format 'exact' is not available on the fast path"),
 * for options muonref_ns_options_validate refuses (ns_steps outside
 * 1..MUONREF_MAX_NS_STEPS, no or non-finite coefficients, a bad enum or
 * eps) and for a NULL in, out or o; MUONREF_ESHAPE for rows or cols 0 or
 * more than MUONREF_MAX_NUMEL elements; MUONREF_ENUMERIC when the computed
 * result holds Inf or NaN ("Newton-Schulz diverged: ...": growing
 * coefficients, or a finite binary32 input element that rounds to bf16
 * infinity), out then untouched; MUONREF_ENOMEM (also when oneDNN's matmul
 * fails); MUONREF_EOPTION when the environment variable MUONREF_NS_GEMM is
 * not auto, blas or dnnl, or is dnnl where the native bf16 path is
 * unavailable (built without oneDNN, or a CPU without bf16 instructions).
 * Never aborts.
 * bf16 products: OpenBLAS sgemm on bf16-valued floats, or, where oneDNN
 * and bf16 instructions exist and m^2 n > 262144 (or MUONREF_NS_GEMM=dnnl),
 * oneDNN's bf16 matmul; both accumulate in binary32 and round once.
 * Transposition: when rows > cols it iterates on in^T and writes the
 * transpose back, so that NS(G^T) == NS(G)^T bitwise. */
MUONREF_API MUONREF_NODISCARD int muonref_fast_ns(float *out, const float *in, size_t rows, size_t cols,
                                                  const muonref_options *o, float *work, muonref_error *err);

#ifdef __cplusplus
}
#endif
#endif
