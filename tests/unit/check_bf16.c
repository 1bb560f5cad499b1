/* muonref tests: bf16 rounding against an independent oracle and the
 * special cases (ties to even, subnormals, NaN, Inf, overflow). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "muonref/bf16.h"
#include "testutil.h"

static float from_bits(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
static uint32_t bits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }

/* Oracle written from the definition: the two bf16 neighbours of x (its
 * truncation and the next bf16 away from zero), compared in binary64;
 * the nearer wins, a tie goes to the even one. */
static uint16_t oracle(float x)
{
  uint32_t u = bits(x);
  uint16_t lo = (uint16_t)(u >> 16), hi = (uint16_t)(lo + 1);
  double xl = muonref_bf16_to_float(lo);
  double xh = (hi & 0x7F80) == 0x7F80 && (lo & 0x7F80) == 0x7F00 && (lo & 0x7F) == 0x7F
                  ? copysign(0x1p128, x) /* the neighbour past the largest finite: 2^128 */
                  : (double)muonref_bf16_to_float(hi);
  double dl = fabs((double)x - xl), dh = fabs((double)x - xh);
  if (dl < dh)
    return lo;
  if (dh < dl)
    return hi;
  return (lo & 1) ? hi : lo;
}

START_TEST(ties_to_even)
{
  /* 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties to 1 (even). */
  ck_assert_uint_eq(muonref_bf16_from_float(1.0f + 0x1p-8f), 0x3F80);
  /* 1 + 3*2^-8 lies halfway between 1+2^-7 (odd) and 1+2^-6: ties up. */
  ck_assert_uint_eq(muonref_bf16_from_float(1.0f + 3 * 0x1p-8f), 0x3F82);
  ck_assert_uint_eq(muonref_bf16_from_float(-1.0f - 3 * 0x1p-8f), 0xBF82);
  /* just above and below the tie */
  ck_assert_uint_eq(muonref_bf16_from_float(1.0f + 0x1p-8f + 0x1p-23f), 0x3F81);
  ck_assert_uint_eq(muonref_bf16_from_float(1.0f + 0x1p-8f - 0x1p-23f), 0x3F80);
}
END_TEST

START_TEST(subnormals)
{
  ck_assert_uint_eq(muonref_bf16_from_float(0x1p-133f), 0x0001);       /* smallest bf16 subnormal */
  ck_assert_uint_eq(muonref_bf16_from_float(0x1p-134f), 0x0000);       /* half of it: tie to even 0 */
  ck_assert_uint_eq(muonref_bf16_from_float(0x1.8p-133f), 0x0002);     /* 1.5 ulp: tie to even 2 */
  ck_assert_uint_eq(muonref_bf16_from_float(0x1p-149f), 0x0000);       /* float's smallest: to 0 */
  ck_assert_uint_eq(muonref_bf16_from_float(-0x1p-133f), 0x8001);
  ck_assert_uint_eq(muonref_bf16_from_float(FLT_MIN), 0x0080);         /* smallest normal */
  ck_assert_uint_eq(muonref_bf16_from_float(from_bits(0x007FFFFF)), 0x0080); /* largest subnormal rounds up */
  ck_assert_uint_eq(muonref_bf16_from_float(-0.0f), 0x8000);
}
END_TEST

START_TEST(nan_and_inf)
{
  ck_assert_uint_eq(muonref_bf16_from_float(INFINITY), 0x7F80);
  ck_assert_uint_eq(muonref_bf16_from_float(-INFINITY), 0xFF80);
  uint16_t n = muonref_bf16_from_float(NAN);
  ck_assert((n & 0x7F80) == 0x7F80 && (n & 0x7F) != 0 && !(n & 0x8000));
  /* a signalling NaN whose payload sits only in the low bits stays NaN */
  n = muonref_bf16_from_float(from_bits(0xFF800001));
  ck_assert((n & 0x7F80) == 0x7F80 && (n & 0x7F) != 0 && (n & 0x8000));
  ck_assert(isnan(muonref_bf16_round(NAN)));
}
END_TEST

START_TEST(overflow)
{
  ck_assert_uint_eq(muonref_bf16_from_float(FLT_MAX), 0x7F80);           /* above the midpoint: Inf */
  ck_assert_uint_eq(muonref_bf16_from_float(-FLT_MAX), 0xFF80);
  ck_assert_uint_eq(muonref_bf16_from_float(from_bits(0x7F7F8000)), 0x7F80); /* the tie: odd -> up, Inf */
  ck_assert_uint_eq(muonref_bf16_from_float(from_bits(0x7F7F7FFF)), 0x7F7F); /* below: largest finite */
  ck_assert(muonref_bf16_to_float(0x7F7F) == 0x1.fep127f);
}
END_TEST

START_TEST(against_oracle_random)
{
  tu_rng r = {tu_seed(1)};
  for (int i = 0; i < 1 << 20; i++) {
    uint32_t u = (uint32_t)tu_next(&r);
    float x = from_bits(u);
    if (isnan(x))
      continue;
    ck_assert_msg(muonref_bf16_from_float(x) == oracle(x), "x bits 0x%08x", u);
  }
}
END_TEST

START_TEST(array_equals_scalar)
{
  tu_rng r = {tu_seed(1) + 7};
  enum { N = 4099 };
  float x[N], y[N];
  for (int i = 0; i < N; i++)
    x[i] = from_bits((uint32_t)tu_next(&r));
  x[0] = NAN, x[1] = -INFINITY, x[2] = FLT_MAX, x[3] = 0x1p-134f, x[4] = -0.0f;
  memcpy(y, x, sizeof x);
  muonref_bf16_round_array(y, N);
  for (int i = 0; i < N; i++)
    ck_assert_msg(bits(y[i]) == (uint32_t)muonref_bf16_from_float(x[i]) << 16, "element %d", i);
}
END_TEST

START_TEST(round_trip_is_exact)
{
  for (uint32_t b = 0; b < 0x10000; b++) {
    float x = muonref_bf16_to_float((uint16_t)b);
    if (!isnan(x))
      ck_assert_uint_eq(muonref_bf16_from_float(x), b);
  }
}
END_TEST

/* Oracle for binary64 inputs, from the definition: the bf16 neighbours of
 * x below and above (found on the float truncation of x), compared with x
 * in binary64; the nearer wins, a tie goes to the even one. */
static float oracle_double(double x)
{
  float t = (float)x;
  if (fabs((double)t) > fabs(x))
    t = nextafterf(t, 0.0f); /* the truncation */
  uint16_t lo = (uint16_t)(bits(t) >> 16), hi = (uint16_t)(lo + 1);
  double xl = muonref_bf16_to_float(lo);
  double xh = (lo & 0x7FFF) == 0x7F7F ? copysign(0x1p128, x) : (double)muonref_bf16_to_float(hi);
  double dl = fabs(x - xl), dh = fabs(x - xh);
  uint16_t r = dl < dh ? lo : dh < dl ? hi : (lo & 1) ? hi : lo;
  return muonref_bf16_to_float(r);
}

/* muonref_bf16_round_double: the correct rounding of binary64 values,
 * including the double-rounding traps (a value just above a bf16 tie whose
 * rounding to binary32 lands on the tie), products of binary32 and bf16
 * values (Keller's scaled update), overflow and NaN. */
START_TEST(round_double_is_correct)
{
  /* 1 + 2^-8 + 2^-40: rounded to binary32 first it is the tie 1 + 2^-8 (to 1); correctly it rounds up */
  ck_assert(bits(muonref_bf16_round_double(1.0 + 0x1p-8 + 0x1p-40)) == 0x3F810000u);
  ck_assert(bits(muonref_bf16_round_double(1.0 + 0x1p-8 - 0x1p-40)) == 0x3F800000u);
  ck_assert(bits(muonref_bf16_round_double(1.0 + 0x1p-8)) == 0x3F800000u); /* the tie itself: even */
  ck_assert(bits(muonref_bf16_round_double(-(1.0 + 3 * 0x1p-8 - 0x1p-45))) == 0xBF810000u);
  ck_assert(isinf(muonref_bf16_round_double(0x1.ffp127)) && isinf(muonref_bf16_round_double(1e300)));
  ck_assert(muonref_bf16_round_double(0x1.fe7fffffp127) == 0x1.fep127f);
  ck_assert(isnan(muonref_bf16_round_double(NAN)));
  ck_assert(bits(muonref_bf16_round_double(0x1p-134 + 0x1p-160)) == 0x00000001u << 16); /* above half the smallest */
  tu_rng r = {tu_seed(1) + 11};
  for (int i = 0; i < 1 << 18; i++) {
    float a = from_bits(((uint32_t)tu_next(&r) & 0x807FFFFFu) | 0x3F000000u);   /* [0.5, 1) and sign */
    float b = muonref_bf16_to_float((uint16_t)(((uint32_t)tu_next(&r) & 0x807Fu) | 0x3F80u)); /* bf16 in [1, 2) */
    double x = (double)a * (double)b * ldexp(1.0, (int)(tu_next(&r) % 200) - 100); /* exact in binary64 */
    ck_assert_msg(bits(muonref_bf16_round_double(x)) == bits(oracle_double(x)), "x = %a", x);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("bf16");
  TCase *t = tcase_create("bf16");
  tcase_add_test(t, ties_to_even);
  tcase_add_test(t, subnormals);
  tcase_add_test(t, nan_and_inf);
  tcase_add_test(t, overflow);
  tcase_add_test(t, against_oracle_random);
  tcase_add_test(t, array_equals_scalar);
  tcase_add_test(t, round_trip_is_exact);
  tcase_add_test(t, round_double_is_correct);
  suite_add_tcase(s, t);
  return tu_run_suite(s);
}
