/* muonref: judging one result against one vector case, with the case's
 * tolerance for the implementation's Newton-Schulz format
 * (spec/vectors.md section 5). */
#ifndef MUONREF_VECTORS_JUDGE_H
#define MUONREF_VECTORS_JUDGE_H

#include <jansson.h>
#include "muonref/options.h"

typedef struct muonref_verdict {
  int pass;
  char detail[768]; /* on failure: the first failing quantity, its deviation
                       and its allowance */
  char failing[512]; /* on failure: every failing tensor, comma-separated
                        ("params[0], state[0].momentum_buffer") */
  double worst;      /* the largest deviation / allowance over the judged values
                        (0 for exact matches; a measure of the margin) */
  unsigned orders;   /* bf16 cases with accepted evaluation orders: bit k set
                        when the result matches order k (muonref_bf16_order);
                        0 for other cases */
  int norm_overflow; /* the result matched the case's norm-overflow
                        alternative (spec/vectors.md 2.7): the port's
                        binary32 Frobenius norm overflowed to +Inf and its
                        Newton-Schulz output was zero */
  int bad_result;    /* the error returned is about the result entry (a
                        malformed tensor or state), not about the vector */
} muonref_verdict;

/* Judges `result` (spec/vectors.md section 4; NULL = not run) against
 * `test` of kind `kind` for an implementation whose Newton-Schulz runs in
 * `format` (BF16 or FP32).  A bf16 case with accepted evaluation orders
 * (spec/vectors.md 2.1, "expectedBf16Orders" / "bf16Orders") passes when
 * the result matches any one of them; v->orders names those it matches.
 * Every parameter and state tensor is judged (v->failing lists the failing
 * ones).  Writes *v and returns MUONREF_OK, or
 * MUONREF_EFORMAT naming `where` when the test or the result is malformed
 * (a missing or mistyped member). */
int muonref_judge(const json_t *test, const char *kind, const json_t *result, muonref_ns_format format,
                  muonref_verdict *v, const char *where, muonref_error *err);

/* Singular values (descending) of the 2-D tensor t into s (min(rows, cols)
 * doubles), by muonref_singular_values (vectors/judge/singular_values.h: the same
 * bits on every CPU) on a binary64 copy.  Returns 0, -1 when out of
 * memory, 1 when t holds Inf or NaN. */
struct muonref_tensor;
int muonref_tensor_singular_values(const struct muonref_tensor *t, double *s);

/* The binary32 ulp of x: the spacing of binary32 numbers at |x|, the
 * smallest subnormal 2^-149 for |x| < 2^-126 (glibc's ULPDIFF convention). */
double muonref_ulp32(double x);

/* The bf16 ulp of x: the spacing of bf16 numbers at |x| (8 significant bits), 2^-133 for
 * |x| < 2^-126 (bf16's subnormal spacing); the unit of the bf16 storage allowance of
 * spec/vectors.md 5.1. */
double muonref_ulp_bf16(double x);

/* The allowance on what a port leaves in p.grad after a step (spec/vectors.md 2.1, 5.1,
 * "gradAfterAtol"), for a gradient whose elements stay below `big` in magnitude: 8 binary32
 * ulps of big for a Nesterov input written in place (nesterov_input), 2 for the L2 gradient
 * G + wd P (l2); either plus 4 times `spread`, the largest difference of what is written
 * (G', or the Nesterov input formed from G') over the Newton-Schulz formats' runs (0 without
 * L2); 2 bf16 ulps of big more for a bf16 parameter's (bf16) written gradient; 0 for a
 * gradient kept as it was.  Used by the generator and by the fast path's own runs. */
double muonref_grad_after_atol(int nesterov_input, int l2, double big, double spread, int bf16);

#endif
