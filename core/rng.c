/* muonref: splitmix64 and Box-Muller normal deviates (see rng.h). */
#include <math.h>
#include "core/rng.h"

uint64_t muonref_rng_next(uint64_t *state)
{
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double muonref_rng_normal(uint64_t *state)
{
  double u1 = ((double)(muonref_rng_next(state) >> 11) + 0.5) * 0x1p-53;
  double u2 = (double)(muonref_rng_next(state) >> 11) * 0x1p-53;
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}
