/* muonref tests: tensors in the vector format: exact round trips of every
 * value class, and the error messages of malformed tensors. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>
#include "vectors/judge/judge.h"
#include "vectors/judge/singular_values.h"
#include "vectors/format/tensor.h"
#include "testutil.h"

static json_t *parse(const char *text)
{
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  ck_assert_msg(j != NULL, "%s", e.text);
  return j;
}

START_TEST(f32_round_trip_exact)
{
  muonref_shape s = {2, {2, 3}};
  muonref_tensor t, u;
  ck_assert_int_eq(muonref_tensor_alloc(&t, MUONREF_TENSOR_F32, &s, NULL), 0);
  float v[6] = {1.0f, -0.0f, INFINITY, 0x1p-149f, 3.4028235e38f, NAN};
  memcpy(t.f, v, sizeof v);
  json_t *j = muonref_tensor_to_json(&t, 1);
  ck_assert_str_eq(json_string_value(json_object_get(j, "hex")),
                   "3f80000080000000" "7f80000000000001" "7f7fffff7fc00000");
  ck_assert(json_is_null(json_array_get(json_object_get(j, "approx"), 2)));
  ck_assert_int_eq(muonref_tensor_from_json(&u, j, "t", NULL), 0);
  ck_assert(memcmp(t.f, u.f, sizeof v) == 0 && u.shape.ndim == 2 && u.shape.dims[1] == 3);
  json_decref(j);
  muonref_tensor_free(&t);
  muonref_tensor_free(&u);
}
END_TEST

START_TEST(f64_and_bf16_round_trip)
{
  json_t *j = parse("{\"dtype\":\"f64\",\"shape\":[2],\"hex\":\"3ff00000000000008000000000000000\"}");
  muonref_tensor t;
  ck_assert_int_eq(muonref_tensor_from_json(&t, j, "t", NULL), 0);
  ck_assert(t.d[0] == 1.0 && t.d[1] == 0.0 && signbit(t.d[1]));
  json_t *k = muonref_tensor_to_json(&t, 0);
  ck_assert(json_equal(j, k));
  json_decref(j), json_decref(k);
  muonref_tensor_free(&t);
  j = parse("{\"dtype\":\"bf16\",\"shape\":[1,3],\"hex\":\"3f80c0000001\"}");
  ck_assert_int_eq(muonref_tensor_from_json(&t, j, "t", NULL), 0);
  ck_assert(t.f[0] == 1.0f && t.f[1] == -2.0f && t.f[2] == 0x1p-133f);
  k = muonref_tensor_to_json(&t, 0);
  ck_assert(json_equal(j, k));
  json_decref(j), json_decref(k);
  muonref_tensor_free(&t);
}
END_TEST

/* Found by fuzz/fuzz_tensor.c: a bf16 signalling NaN (quiet bit clear,
 * 0x7fb1) came back quieted (0x7ff1); every bf16 pattern must survive. */
START_TEST(bf16_signalling_nan_survives)
{
  json_t *j = parse("{\"dtype\":\"bf16\",\"shape\":[1,4],\"hex\":\"7fb1ff817f80ffff\"}");
  muonref_tensor t;
  ck_assert_int_eq(muonref_tensor_from_json(&t, j, "t", NULL), 0);
  json_t *k = muonref_tensor_to_json(&t, 0);
  ck_assert_str_eq(json_string_value(json_object_get(k, "hex")), "7fb1ff817f80ffff");
  json_decref(j), json_decref(k);
  muonref_tensor_free(&t);
}
END_TEST

static const struct { const char *json, *message; } BAD[] = {
  {"[1]", "f.json: x: expected a tensor object {\"dtype\", \"shape\", \"hex\"}"},
  {"{\"dtype\":\"f16\",\"shape\":[1],\"hex\":\"0000\"}", "f.json: x: \"dtype\" must be one of \"f32\", \"f64\", \"bf16\""},
  {"{\"dtype\":\"f32\",\"shape\":[0],\"hex\":\"\"}", "f.json: x: \"shape\"[0] must be a positive integer"},
  {"{\"dtype\":\"f32\",\"shape\":\"2\",\"hex\":\"\"}", "f.json: x: \"shape\" must be an array of at most 8 positive integers"},
  {"{\"dtype\":\"f32\",\"shape\":[2,1],\"hex\":\"3f800000\"}", "f.json: x: \"hex\" has 8 digits, expected 16 for shape (2, 1) f32"},
  {"{\"dtype\":\"f32\",\"shape\":[1],\"hex\":\"3F800000\"}", "f.json: x: \"hex\" character 1 is 'F', expected 0-9 or a-f"},
  {"{\"dtype\":\"f32\",\"shape\":[1]}", "f.json: x: \"hex\" must be a string"},
};

START_TEST(malformed_tensors_are_named)
{
  json_t *j = parse(BAD[_i].json);
  muonref_tensor t;
  muonref_error e;
  ck_assert_int_eq(muonref_tensor_from_json(&t, j, "f.json: x", &e), MUONREF_EFORMAT);
  ck_assert_str_eq(e.message, BAD[_i].message);
  ck_assert_ptr_null(t.f);
  json_decref(j);
}
END_TEST

/* The judge says whether an error is about the result entry or about the
 * vector (the checker adds the results file's context on that flag, never
 * by reading the message). */
/* vectors/format/tensor.c keeps a memo of recent decodings found by the hex
 * string's address.  Other digits at the same address (a string freed and
 * another allocated where it was; here the same string's bytes rewritten
 * in place) must decode to their own values, the same digits twice to the
 * same ones. */
START_TEST(decoding_memo_follows_the_digits)
{
  json_t *j = json_pack("{s:s, s:[i], s:s}", "dtype", "f32", "shape", 1, "hex", "3f800000");
  char *hex = (char *)json_string_value(json_object_get(j, "hex"));
  for (int k = 0; k < 40; k++) {
    snprintf(hex, 9, "%08x", 0x3f800000u + (unsigned)k); /* 1 + k ulp, at the same address */
    for (int twice = 0; twice < 2; twice++) {
      muonref_tensor t;
      muonref_error e;
      ck_assert_int_eq(muonref_tensor_from_json(&t, j, "x", &e), MUONREF_OK);
      ck_assert_msg(t.f[0] == 1.0f + (float)k * 0x1p-23f, "k %d: %a", k, (double)t.f[0]);
      muonref_tensor_free(&t);
    }
  }
  json_decref(j);
}
END_TEST

START_TEST(judge_flags_result_side_errors)
{
  json_t *test = parse("{\"tcId\": 1, \"comment\": \"c\", \"flags\": [], \"result\": \"valid\", \"input\": "
                       "{\"dtype\":\"f32\",\"shape\":[1,1],\"hex\":\"3f800000\"}, \"nsSteps\": 5, "
                       "\"expected\": {\"exact\": {\"dtype\":\"f32\",\"shape\":[1,1],\"hex\":\"3f800000\"}}, "
                       "\"tolerance\": {\"fp32\": {\"kind\": \"elementwise\", \"maxUlp\": 2}, "
                       "\"bf16\": {\"kind\": \"elementwise\", \"maxUlp\": 2}}}");
  json_t *good = parse("{\"output\": {\"dtype\":\"f32\",\"shape\":[1,1],\"hex\":\"3f800000\"}}");
  json_t *bad = parse("{\"output\": {\"dtype\":\"f32\",\"shape\":[1,1],\"hex\":\"zz\"}}");
  muonref_verdict v = {0};
  muonref_error e;
  ck_assert_msg(muonref_judge(test, "ns", good, MUONREF_NS_FP32, &v, "f.json tcId 1", &e) == MUONREF_OK, "%s",
                e.message);
  ck_assert(v.pass && !v.bad_result);
  ck_assert_int_eq(muonref_judge(test, "ns", bad, MUONREF_NS_FP32, &v, "f.json tcId 1", &e), MUONREF_EFORMAT);
  ck_assert(v.bad_result);
  json_object_set_new(json_object_get(json_object_get(test, "expected"), "exact"), "hex", json_string("zz"));
  ck_assert_int_eq(muonref_judge(test, "ns", good, MUONREF_NS_FP32, &v, "f.json tcId 1", &e), MUONREF_EFORMAT);
  ck_assert(!v.bad_result);
  json_decref(test), json_decref(good), json_decref(bad);
}
END_TEST

/* vectors/judge/singular_values.c against an independent implementation
 * (LAPACKE_dgesdd) on Gaussian and rank-deficient matrices of the vectors'
 * shapes, and exactly where the answer is known: orthogonal columns (no
 * rotation: the column norms), a power-of-two scale (the same bits
 * scaled), non-finite input refused, the input left unchanged. */
START_TEST(singular_values_match_lapack_and_known_values)
{
  static const size_t SH[][2] = {{1, 1}, {1, 7}, {7, 1}, {16, 16}, {16, 40}, {40, 16}, {64, 24}, {3, 17}, {8, 12}};
  tu_rng rng = {tu_seed(23)};
  for (size_t k = 0; k < sizeof SH / sizeof SH[0]; k++) {
    size_t r = SH[k][0], c = SH[k][1], n = r * c, m = r < c ? r : c;
    double *a = malloc(n * sizeof *a), *a0 = malloc(n * sizeof *a), *l = malloc(n * sizeof *a);
    double *s = malloc(m * sizeof *s), *sl = malloc(m * sizeof *s), *s2 = malloc(m * sizeof *s);
    for (size_t i = 0; i < n; i++)
      a[i] = tu_normal(&rng);
    memcpy(a0, a, n * sizeof *a);
    if (k == 8) /* rank 2: the sum of two outer products */
      for (size_t i = 0; i < r; i++)
        for (size_t j = 0; j < c; j++)
          a[i * c + j] = a0[i] * a0[j] - 0.5 * a0[r + i] * a0[2 * r + j];
    memcpy(a0, a, n * sizeof *a), memcpy(l, a, n * sizeof *a);
    ck_assert_int_eq(muonref_singular_values(a, r, c, s), 0);
    ck_assert(memcmp(a, a0, n * sizeof *a) == 0);
    ck_assert_int_eq((int)LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'N', (lapack_int)r, (lapack_int)c, l, (lapack_int)c, sl,
                                         NULL, (lapack_int)r, NULL, (lapack_int)c), 0);
    for (size_t q = 0; q < m; q++) {
      ck_assert_msg(fabs(s[q] - sl[q]) <= 1e-13 * sl[0], "(%zu, %zu) sv %zu: %.17g, LAPACK %.17g", r, c, q, s[q], sl[q]);
      ck_assert(q == 0 || s[q] <= s[q - 1]);
    }
    if (k == 8)
      ck_assert(s[2] <= 1e-13 * s[0]);
    for (size_t i = 0; i < n; i++)
      a[i] = ldexp(a0[i], 600);
    ck_assert_int_eq(muonref_singular_values(a, r, c, s2), 0);
    for (size_t q = 0; q < m; q++)
      ck_assert(s2[q] == ldexp(s[q], 600));
    a[n / 2] = NAN;
    s2[0] = -1.0;
    ck_assert_int_eq(muonref_singular_values(a, r, c, s2), 1);
    ck_assert(s2[0] == -1.0);
    free(a), free(a0), free(l), free(s), free(sl), free(s2);
  }
  /* orthogonal columns: (3, 4) with columns 3 e0, -5 e1, 0.5 e2 and 0; a 4x4 Hadamard matrix (all 2) */
  double d[12] = {3, 0, 0, 0, 0, -5, 0, 0, 0, 0, 0.5, 0}, h[16] = {1, 1, 1, 1, 1, -1, 1, -1, 1, 1, -1, -1, 1, -1, -1, 1};
  double sd[3], sh[4];
  ck_assert_int_eq(muonref_singular_values(d, 3, 4, sd), 0);
  ck_assert(sd[0] == 5.0 && sd[1] == 3.0 && sd[2] == 0.5);
  ck_assert_int_eq(muonref_singular_values(h, 4, 4, sh), 0);
  for (int q = 0; q < 4; q++)
    ck_assert(sh[q] == 2.0);
}
END_TEST


int main(void)
{
  Suite *s = suite_create("tensor");
  TCase *t = tcase_create("tensor");
  tcase_add_test(t, f32_round_trip_exact);
  tcase_add_test(t, decoding_memo_follows_the_digits);
  tcase_add_test(t, f64_and_bf16_round_trip);
  tcase_add_test(t, judge_flags_result_side_errors);
  tcase_add_test(t, singular_values_match_lapack_and_known_values);
  tcase_add_test(t, bf16_signalling_nan_survives);
  tcase_add_loop_test(t, malformed_tensors_are_named, 0, (int)(sizeof BAD / sizeof BAD[0]));
  suite_add_tcase(s, t);
  return tu_run_suite(s);
}
