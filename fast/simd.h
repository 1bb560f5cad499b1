/* muonref: portable 8-lane float vectors (GCC vector extensions) and the
 * bf16 rounding on them, for the fused element-wise passes of the fast path.
 * Not installed.
 *
 * The vector extensions compile on any x86-64 (two SSE2 halves per 8-lane
 * operation); functions marked MUONREF_CLONES also get an AVX2 clone and an
 * x86-64-v4 (AVX-512) clone, chosen at load time (GCC target_clones).  No
 * FMA: the AVX2 target has none, and the files of these passes are built
 * with -ffp-contract=off (Makefile.am), so that a * x + y stays two
 * roundings, as the definitions (fast/ns.c, fast/step_kernels.c) require;
 * check_ns and check_step compare every pass with them bit for bit on the
 * clone the test machine picks.  The v4 clone: on the 2-core Xeon with
 * AVX-512 (2026-12-06), 256x1024 Newton-Schulz 4.7 -> 4.3 ms, step 5.3 ->
 * 4.6 ms (docs/speed.md).  Loads and
 * stores go through memcpy, so any alignment is fine. */
#ifndef MUONREF_SIMD_H
#define MUONREF_SIMD_H

#include <stdint.h>
#include <string.h>

typedef float v8f __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
/* 4 lanes: binary64 arithmetic on binary32 data (the optimizer step) */
typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4l __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(MUONREF_NO_CLONES)
#if __GNUC__ >= 12 /* arch= names in target_clones: built with GCC 12 (Debian 12); older compilers keep the AVX2 clone */
#define MUONREF_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define MUONREF_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#else
#define MUONREF_CLONES
#endif

#define MUONREF_INLINE static inline __attribute__((always_inline))

/* Bits of a bf16-rounded binary32 (RNE, NaN quieted), as in fast/bf16.c. */
MUONREF_INLINE uint32_t simd_bf16_bits(uint32_t v)
{
  uint32_t r = (v + 0x7FFFu + ((v >> 16) & 1u)) & 0xFFFF0000u;
  uint32_t q = (v | 0x00400000u) & 0xFFFF0000u;
  return (v & 0x7FFFFFFFu) > 0x7F800000u ? q : r;
}

/* x rounded to bf16 (scalar). */
MUONREF_INLINE float simd_bf16(float x)
{
  uint32_t v;
  memcpy(&v, &x, sizeof v);
  v = simd_bf16_bits(v);
  memcpy(&x, &v, sizeof v);
  return x;
}

/* *x rounded to bf16, lane by lane (the same bits as simd_bf16). */
MUONREF_INLINE void simd_bf16_v(v8f *x)
{
  v8u v;
  memcpy(&v, x, sizeof v);
  v8u r = (v + 0x7FFFu + ((v >> 16) & 1u)) & 0xFFFF0000u;
  v8u q = (v | 0x00400000u) & 0xFFFF0000u;
  v8u nan = (v8u)((v8i)(v & 0x7FFFFFFFu) > (v8i){0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000,
                                                  0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000});
  v = (r & ~nan) | (q & nan);
  memcpy(x, &v, sizeof v);
}

/* *x rounded to bf16, lane by lane (4 lanes). */
MUONREF_INLINE void simd_bf16_v4(v4f *x)
{
  v4u v;
  memcpy(&v, x, sizeof v);
  v4u r = (v + 0x7FFFu + ((v >> 16) & 1u)) & 0xFFFF0000u;
  v4u q = (v | 0x00400000u) & 0xFFFF0000u;
  v4u nan = (v4u)((v4i)(v & 0x7FFFFFFFu) > (v4i){0x7F800000, 0x7F800000, 0x7F800000, 0x7F800000});
  v = (r & ~nan) | (q & nan);
  memcpy(x, &v, sizeof v);
}

MUONREF_INLINE void simd_load(v8f *v, const float *p) { memcpy(v, p, sizeof *v); }
MUONREF_INLINE void simd_store(float *p, const v8f *v) { memcpy(p, v, sizeof *v); }
MUONREF_INLINE void simd_load4(v4f *v, const float *p) { memcpy(v, p, sizeof *v); }
MUONREF_INLINE void simd_store4(float *p, const v4f *v) { memcpy(p, v, sizeof *v); }

#endif
