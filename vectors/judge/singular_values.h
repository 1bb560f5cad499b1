/* muonref: the singular values of a small binary64 matrix, with the same
 * bits on every CPU.  Not installed.
 *
 * The generator writes singular values into the golden vectors (a
 * Bf16Noise case's svBand and muonSv, spec/vectors.md 2.1 and 5.1), and
 * `muonref gen` must write the same bytes on every machine (tests/
 * gen-reproducible.sh, the main job).  LAPACKE_dgesdd did not: OpenBLAS
 * picks its kernels by CPU, and on an AVX-512 Xeon a few singular values
 * of vectors/dion/dion_conv.json differed from an AVX2 machine's in their
 * last bits (2026-12-02).  This is one-sided Jacobi (Hestenes 1958;
 * Demmel and Veselic 1992, which shows its high relative accuracy) in
 * plain binary64 arithmetic in a fixed order, contraction into FMA off,
 * no BLAS: its bits depend only on the input. */
#ifndef MUONREF_VECTORS_SINGULAR_VALUES_H
#define MUONREF_VECTORS_SINGULAR_VALUES_H

#include <stddef.h>

/* The min(rows, cols) singular values of the row-major (rows, cols) a, in
 * descending order, into s.  a is not changed (the work is on a copy, the
 * matrix scaled by a power of two so that no square overflows).  Returns
 * 0; 1 when a holds Inf or NaN (s untouched); -1 when out of memory.  Time:
 * about 10 sweeps of min^2 / 2 rotations of length max(rows, cols): a few
 * milliseconds for the vectors' matrices (at most 16 400 elements). */
int muonref_singular_values(const double *a, size_t rows, size_t cols, double *s);

#endif
