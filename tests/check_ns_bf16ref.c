/* muonref tests: the reference's bf16 Newton-Schulz (ref/ns_rounded.c):
 * certified on structured inputs, where it must equal any correct bf16
 * implementation bitwise (here: the fast path, an independent code), and
 * uncertified on random inputs. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "muonref.h"
#include "muonref/ns_rounded.h"
#include "testutil.h"

/* D H: rows of a Sylvester Hadamard matrix scaled by d[i]. */
static void structured(float *g, size_t m, size_t n, const float *d, int transpose)
{
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      float h = (__builtin_popcountll(i & j) & 1) ? -1.0f : 1.0f;
      if (transpose)
        g[j * m + i] = d[i] * h;
      else
        g[i * n + j] = d[i] * h;
    }
}

static const struct { size_t m, n; float d[8]; int tr; } CASES[] = {
  {4, 16, {1, 1, 1, 1}, 0},
  {4, 16, {1, 0.5f, 0.25f, 0.125f}, 0},
  {8, 32, {1, 0.75f, 0.5f, 0.375f, 0.25f, 0.125f, 0.0625f, 0.03125f}, 0},
  {8, 32, {3, 1, 0.5f, 0.5f, 0.25f, 0.25f, 0.125f, 0.0078125f}, 1},
  {2, 8, {1.5f, 0.5f}, 0},
};

START_TEST(structured_inputs_certified_and_equal_to_fast_bf16)
{
  size_t m = CASES[_i].m, n = CASES[_i].n, len = m * n;
  float *g = malloc(len * 4), *ref = malloc(len * 4), *fast = malloc(len * 4);
  structured(g, m, n, CASES[_i].d, CASES[_i].tr);
  size_t rows = CASES[_i].tr ? n : m, cols = CASES[_i].tr ? m : n;
  muonref_options o = tu_nemo();
  unsigned unc = 99;
  ck_assert_int_eq(muonref_ref_ns_bf16(ref, g, rows, cols, &o, &unc, NULL), MUONREF_OK);
  ck_assert_msg(unc == 0, "case %d not certified: flags %u", _i, unc);
  ck_assert_int_eq(muonref_fast_ns(fast, g, rows, cols, &o, NULL, NULL), MUONREF_OK);
  for (size_t k = 0; k < len; k++)
    ck_assert_msg(ref[k] == fast[k], "case %d element %zu: ref %a fast %a", _i, k, ref[k], fast[k]);
  free(g), free(ref), free(fast);
}
END_TEST

START_TEST(random_inputs_not_certified)
{
  tu_rng r = {tu_seed(31)};
  float g[16 * 40], out[16 * 40];
  tu_fill_normal(&r, g, 16 * 40, 1.0);
  muonref_options o = tu_nemo();
  unsigned unc = 0;
  ck_assert_int_eq(muonref_ref_ns_bf16(out, g, 16, 40, &o, &unc, NULL), MUONREF_OK);
  ck_assert(unc & MUONREF_NSR_INEXACT_SUM);
  for (int k = 0; k < 16 * 40; k++)
    ck_assert(isfinite(out[k]) && muonref_bf16_round(out[k]) == out[k]);
}
END_TEST

START_TEST(zero_input_gives_zero)
{
  float g[12] = {0}, out[12];
  muonref_options o = tu_nemo();
  unsigned unc = 9;
  ck_assert_int_eq(muonref_ref_ns_bf16(out, g, 3, 4, &o, &unc, NULL), MUONREF_OK);
  ck_assert_uint_eq(unc, 0);
  for (int k = 0; k < 12; k++)
    ck_assert(out[k] == 0.0f);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("ns_bf16ref");
  TCase *t = tcase_create("ns_bf16ref");
  tcase_set_timeout(t, 120);
  tcase_add_loop_test(t, structured_inputs_certified_and_equal_to_fast_bf16, 0, (int)(sizeof CASES / sizeof CASES[0]));
  tcase_add_test(t, random_inputs_not_certified);
  tcase_add_test(t, zero_input_gives_zero);
  suite_add_tcase(s, t);
  return tu_run_suite(s);
}
