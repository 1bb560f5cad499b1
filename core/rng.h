/* muonref: the seeded random source of the vector generator, the tests and
 * the Newton-Schulz study: splitmix64 (Steele, Lea, Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014) and standard normal deviates
 * by Box-Muller in binary64.  Deterministic on every IEEE platform with a
 * correctly rounded or faithful libm; spec/vectors.md section 6 names it as
 * part of the vector format. */
#ifndef MUONREF_RNG_H
#define MUONREF_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The next 64 random bits; advances *state. */
uint64_t muonref_rng_next(uint64_t *state);

/* A standard normal deviate from two 53-bit uniforms u1 in (0, 1), u2 in
 * [0, 1): sqrt(-2 ln u1) cos(2 pi u2); advances *state twice. */
double muonref_rng_normal(uint64_t *state);

#ifdef __cplusplus
}
#endif
#endif
