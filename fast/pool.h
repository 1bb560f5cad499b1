/* muonref: the worker threads of the fused element-wise passes (fast/ns_kernels.c,
 * fast/step_kernels.c).  Not installed.
 *
 * A pass splits its work into chunks whose results do not depend on one
 * another (element ranges, tile rows), so that the bits are the same
 * whoever runs which chunk.  The threads sleep on a condition variable
 * between passes (no spinning: the next BLAS call needs every core), and
 * the caller takes chunks too, so a worker that is slow to wake on a busy
 * machine delays nothing: the caller waits only for chunks a worker has
 * started.  OpenMP was not used: libgomp's threads spin after each
 * parallel region (300 000 rounds by default, milliseconds on the project's
 * CPU) against OpenBLAS's threads, and a library cannot set
 * OMP_WAIT_POLICY for its caller (docs/design.md, "Decisions").
 *
 * The workers keep the floating-point environment of the thread that
 * started the pool: a caller that later sets flush-to-zero or
 * denormals-are-zero (torch.set_flush_denormal(True)) runs its chunks in
 * another mode than theirs, and then subnormal values may depend on which
 * thread ran which chunk.  The passes' bits are defined for the default
 * environment only (spec/muon.md section 10). */
#ifndef MUONREF_POOL_H
#define MUONREF_POOL_H

#pragma GCC visibility push(hidden)

#include <stddef.h>

/* Runs chunk c of a pass. */
typedef void muonref_pool_body(void *ctx, size_t c);

/* Threads a pass may use, the caller included: OpenBLAS's thread count
 * (openblas_get_num_threads: OPENBLAS_NUM_THREADS, or the processors),
 * at most 8; 1 when the worker threads could not be started. */
int muonref_pool_threads(void);

/* Calls body(ctx, c) once for every c in [0, chunks), on the caller's
 * thread and the pool's, and returns when every call has returned.  One
 * pass at a time: a call made while another thread's pass runs (or from
 * inside a body) runs its chunks on the caller alone.  Never fails. */
void muonref_pool_for(size_t chunks, muonref_pool_body *body, void *ctx);

/* Chunks for a pass over len elements (or rows) of about `cost` elements
 * each: 1 below 64 Ki elements of work (a wake-up costs more than it
 * saves), else up to 4 per thread, at least 16 Ki elements each. */
size_t muonref_pool_chunks(size_t len, size_t cost);

/* The element range [*lo, *hi) of chunk c of `chunks` over len elements,
 * its ends multiples of 8 (the vector width) except the last. */
void muonref_pool_range(size_t len, size_t chunks, size_t c, size_t *lo, size_t *hi);

#pragma GCC visibility pop

#endif
