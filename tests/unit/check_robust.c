/* muonref tests: robustness of the C API (issues 16 and 27).  muonref_fast_ns
 * validates what it is given and never writes Inf or NaN; an optimizer step
 * whose computed values would not be finite is refused with ENUMERIC and
 * changes nothing, in any parameter.  The reproducer of the report is
 * tests/data/repro/capi_coeffs_nan.c (coefficients (1.5, 0, 0), 300 steps). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "muonref.h"
#include "testutil.h"

/* Whether every one of n floats has the bit pattern of `bits`. */
static int all_bits(const float *x, size_t n, uint32_t bits)
{
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &x[i], 4);
    if (u != bits)
      return 0;
  }
  return 1;
}

#define SENTINEL 0x7fa5a5a5u /* a NaN pattern no computation writes */

static void fill_sentinel(float *x, size_t n)
{
  for (size_t i = 0; i < n; i++)
    memcpy(&x[i], &(uint32_t){SENTINEL}, 4);
}

START_TEST(ns_refuses_bad_arguments_and_writes_nothing)
{
  float in[6] = {1, 2, 3, 4, 5, 6}, out[6];
  muonref_error e;
  muonref_options o = tu_nemo(), b;
  o.ns_format = MUONREF_NS_FP32;
  struct { const char *what; int ns_steps, n_coeffs; double a, eps; int status; const char *message; } cases[] = {
    {"zero steps", 0, 1, 3.4445, 1e-7, MUONREF_EOPTION, "Invalid number of Newton-Schulz steps: 0"},
    {"negative steps", -4, 1, 3.4445, 1e-7, MUONREF_EOPTION, "Invalid number of Newton-Schulz steps: -4"},
    {"no coefficients", 5, 0, 3.4445, 1e-7, MUONREF_EOPTION,
     "Invalid number of Newton-Schulz coefficient triples: 0 (expected 1 to 32)"},
    {"NaN coefficient", 5, 1, NAN, 1e-7, MUONREF_EOPTION, "Invalid Newton-Schulz coefficient a of triple 0: nan"},
    {"negative eps", 5, 1, 3.4445, -1.0, MUONREF_EOPTION, "Invalid Newton-Schulz epsilon: -1.0"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    b = o;
    b.ns_steps = cases[k].ns_steps;
    b.n_coeffs = cases[k].n_coeffs;
    b.coeffs[0].a = cases[k].a;
    b.ns_eps = cases[k].eps;
    fill_sentinel(out, 6);
    ck_assert_int_eq(muonref_fast_ns(out, in, 2, 3, &b, NULL, &e), cases[k].status);
    ck_assert_str_eq(e.message, cases[k].message);
    ck_assert_msg(all_bits(out, 6, SENTINEL), "%s: out was written", cases[k].what);
  }
  b = o;
  b.eps_mode = (muonref_eps_mode)7;
  ck_assert_int_eq(muonref_fast_ns(out, in, 2, 3, &b, NULL, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Unknown eps_mode 7, expected one of ('add', 'clamp', 'add_scaled')");
  ck_assert_int_eq(muonref_fast_ns(out, in, 2, 3, NULL, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_fast_ns(NULL, in, 2, 3, &o, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_fast_ns(out, NULL, 2, 3, &o, NULL, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_fast_ns(out, in, 0, 3, &o, NULL, &e), MUONREF_ESHAPE);
  ck_assert_int_eq(muonref_fast_ns(out, in, 2, 0, &o, NULL, &e), MUONREF_ESHAPE);
  ck_assert_int_eq(muonref_fast_ns(out, in, SIZE_MAX / 2, 3, &o, NULL, &e), MUONREF_ESHAPE);
  ck_assert(all_bits(out, 6, SENTINEL));
}
END_TEST

/* Coefficients (1.5, 0, 0): each step multiplies X by 1.5, so 300 steps
 * overflow binary32 (1.5^300 ~ 1e52) in both formats. */
START_TEST(ns_divergence_is_refused_not_written)
{
  float in[16], out[16];
  for (int i = 0; i < 16; i++)
    in[i] = (float)((i % 3) - 1) + 0.01f * (float)i;
  muonref_options o = tu_nemo();
  o.n_coeffs = 1;
  o.coeffs[0] = (muonref_coeff){1.5, 0, 0};
  o.ns_steps = 300;
  muonref_error e;
  for (int f = 0; f < 2; f++) {
    o.ns_format = f ? MUONREF_NS_FP32 : MUONREF_NS_BF16;
    fill_sentinel(out, 16);
    ck_assert_int_eq(muonref_fast_ns(out, in, 4, 4, &o, NULL, &e), MUONREF_ENUMERIC);
    ck_assert_msg(strstr(e.message, "Newton-Schulz diverged: output element") != NULL, "%s", e.message);
    ck_assert(all_bits(out, 16, SENTINEL));
  }
  /* 40 steps stay finite (X ~ 1.5^40 ~ 1e7, A A ~ 1e28, even though b = c
   * = 0 the products are formed): computed and written */
  o.ns_steps = 40;
  ck_assert_int_eq(muonref_fast_ns(out, in, 4, 4, &o, NULL, &e), MUONREF_OK);
  for (int i = 0; i < 16; i++)
    ck_assert(isfinite(out[i]));
}
END_TEST

/* An optimizer over p0 (4, 4) Muon with Keller's coefficients and p1 (4, 4)
 * Muon with the diverging ones: the step is refused and neither parameter
 * nor any state changes (p0 comes first and would have been fine). */
START_TEST(step_divergence_changes_nothing_in_any_parameter)
{
  muonref_options good = tu_nemo(), bad = tu_nemo();
  bad.n_coeffs = 1;
  bad.coeffs[0] = (muonref_coeff){1.5, 0, 0};
  bad.ns_steps = 300;
  muonref_shape sh[1] = {{2, {4, 4}}};
  muonref_group g[2] = {{good, 1, sh}, {bad, 1, sh}};
  muonref_error e;
  for (int f = 0; f < 2; f++) {
    g[0].options.ns_format = g[1].options.ns_format = f ? MUONREF_NS_FP32 : MUONREF_NS_BF16;
    muonref_optimizer *opt = muonref_optimizer_create(g, 2, &e);
    ck_assert_ptr_nonnull(opt);
    float w0[16], w1[16], gr[16], c0[16], c1[16];
    for (int i = 0; i < 16; i++) {
      w0[i] = w1[i] = 0.1f * (float)i;
      gr[i] = (float)((i % 3) - 1) + 0.01f * (float)i;
    }
    memcpy(c0, w0, sizeof w0), memcpy(c1, w1, sizeof w1);
    float *ps[2] = {w0, w1};
    muonref_grad gg[2] = {{gr, MUONREF_DENSE, MUONREF_FLOAT32}, {gr, MUONREF_DENSE, MUONREF_FLOAT32}};
    ck_assert_int_eq(muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), ps, gg, &e), MUONREF_ENUMERIC);
    ck_assert_msg(strstr(e.message, "Step for parameter 1 would overflow binary32: Newton-Schulz diverged") == e.message,
                  "%s", e.message);
    ck_assert(memcmp(w0, c0, sizeof w0) == 0 && memcmp(w1, c1, sizeof w1) == 0);
    for (size_t i = 0; i < 2; i++) {
      muonref_param_state st;
      ck_assert_int_eq(muonref_optimizer_state(opt, i, &st, NULL), MUONREF_OK);
      ck_assert_int_eq(st.initialized, 0);
      ck_assert_int_eq(st.step, 0);
      ck_assert(all_bits(st.momentum_buffer, 16, 0));
    }
    muonref_optimizer_free(opt);
  }
}
END_TEST

/* The report's bf16 case: profile nemo, one (4, 8) Muon parameter,
 * momentum 0, no Nesterov, zero parameters, gradient zero except
 * g[0][0] = 0x7f7fc000 (3.3995e38, finite in binary32, bf16 +inf after
 * rounding) and g[1][1] = 1.  bf16: refused, nothing written; fp32: a
 * finite step. */
START_TEST(bf16_rounding_to_infinity_is_refused)
{
  muonref_options o = tu_nemo();
  o.momentum = 0.0;
  o.nesterov = 0;
  o.use_muon = MUONREF_USE_MUON_TRUE;
  muonref_shape sh[1] = {{2, {4, 8}}};
  muonref_error e;
  for (int f = 0; f < 2; f++) {
    o.ns_format = f ? MUONREF_NS_FP32 : MUONREF_NS_BF16;
    muonref_group g = {o, 1, sh};
    muonref_optimizer *opt = muonref_optimizer_create(&g, 1, &e);
    ck_assert_ptr_nonnull(opt);
    float w[32] = {0}, gr[32] = {0};
    memcpy(&gr[0], &(uint32_t){0x7f7fc000u}, 4);
    gr[9] = 1.0f;
    float *ps[1] = {w};
    muonref_grad gg[1] = {{gr, MUONREF_DENSE, MUONREF_FLOAT32}};
    int st = muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), ps, gg, &e);
    muonref_param_state s;
    ck_assert_int_eq(muonref_optimizer_state(opt, 0, &s, NULL), MUONREF_OK);
    if (f == 0) {
      ck_assert_int_eq(st, MUONREF_ENUMERIC);
      ck_assert_msg(strstr(e.message, "Step for parameter 0 would overflow binary32") == e.message, "%s", e.message);
      ck_assert(all_bits(w, 32, 0) && all_bits(s.momentum_buffer, 32, 0) && s.step == 0);
    } else {
      ck_assert_int_eq(st, MUONREF_OK);
      for (int i = 0; i < 32; i++)
        ck_assert(isfinite(w[i]));
      ck_assert(w[0] < 0.0f && s.step == 1);
    }
    muonref_optimizer_free(opt);
  }
}
END_TEST

/* A parameter near FLT_MAX that a finite update pushes past it: refused,
 * whatever |O| is (the old guard assumed |O| <= 2). */
START_TEST(parameter_overflow_is_refused)
{
  muonref_options o = tu_nemo();
  o.lr = 1e38;
  o.ns_format = MUONREF_NS_FP32;
  muonref_shape sh[1] = {{2, {2, 2}}};
  muonref_group g = {o, 1, sh};
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create(&g, 1, &e);
  ck_assert_ptr_nonnull(opt);
  float w[4] = {-FLT_MAX, 0, 0, 0}, gr[4] = {1, 0, 0, 1}, c[4];
  memcpy(c, w, sizeof w);
  float *ps[1] = {w};
  muonref_grad gg[1] = {{gr, MUONREF_DENSE, MUONREF_FLOAT32}};
  ck_assert_int_eq(muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), ps, gg, &e), MUONREF_ENUMERIC);
  ck_assert_str_eq(e.message,
                   "Step for parameter 0 would overflow binary32: element 0 of the parameter would become -inf "
                   "(it is -3.40282e+38)");
  ck_assert(memcmp(w, c, sizeof w) == 0);
  muonref_optimizer_free(opt);
}
END_TEST

/* spec/muon.md section 1: with every option invalid, validation reports
 * them one at a time in the documented order (each fixed in turn). */
START_TEST(validation_runs_in_the_documented_order)
{
  muonref_options o = tu_nemo();
  o.lr = -1.0;
  o.momentum = 1.0;
  o.ns_steps = 0;
  o.weight_decay = -0.01;
  o.adam_beta1 = 1.0;
  o.adam_eps = -1e-8;
  o.adam_lr_ratio = -0.025;
  o.adam_dim_threshold = 0;
  o.scale_mode = (muonref_scale_mode)9;
  o.nesterov = 2;
  o.use_muon = (muonref_use_muon)3;
  o.momentum_form = (muonref_momentum_form)5;
  o.n_coeffs = 0;
  o.coeff_order = (muonref_coeff_order)3;
  o.ns_eps = -1.0;
  o.eps_mode = (muonref_eps_mode)3;
  o.ns_format = (muonref_ns_format)3;
  const muonref_options ok = tu_nemo();
  static const char *const order[] = {
    "Invalid learning rate: -1.0", "Invalid momentum: 1.0", "Invalid number of Newton-Schulz steps: 0",
    "Invalid weight decay: -0.01", "Invalid AdamW betas: (1.0, 0.95)", "Invalid AdamW epsilon: -1e-08",
    "Invalid AdamW learning rate ratio: -0.025", "Invalid AdamW dimension threshold: 0",
    "Unknown scale_mode 9, expected one of ('fan_in', 'fan_out', 'none', 'rms_adamw', 'rms_to_rms', 'sqrt_max', 'ratio_cols', 'rms_numel', 'rsqrt_cols')", "Invalid nesterov: 2 (expected 0 or 1)",
    "Invalid use_muon: 3 (expected None, False or True)", "Unknown momentum_form 5, expected one of ('sum', 'ema')",
    "Invalid number of Newton-Schulz coefficient triples: 0 (expected 1 to 32)",
    "Unknown coeff_order 3, expected one of ('cycle', 'repeat_last', 'list')", "Invalid Newton-Schulz epsilon: -1.0",
    "Unknown eps_mode 3, expected one of ('add', 'clamp', 'add_scaled')",
    "Unknown ns_format 3, expected one of ('bf16', 'fp32', 'exact')",
  };
  muonref_error e;
  for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
    ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
    ck_assert_str_eq(e.message, order[k]);
    switch (k) { /* fix the option just reported */
    case 0: o.lr = ok.lr; break;
    case 1: o.momentum = ok.momentum; break;
    case 2: o.ns_steps = ok.ns_steps; break;
    case 3: o.weight_decay = ok.weight_decay; break;
    case 4: o.adam_beta1 = ok.adam_beta1; break;
    case 5: o.adam_eps = ok.adam_eps; break;
    case 6: o.adam_lr_ratio = ok.adam_lr_ratio; break;
    case 7: o.adam_dim_threshold = ok.adam_dim_threshold; break;
    case 8: o.scale_mode = ok.scale_mode; break;
    case 9: o.nesterov = ok.nesterov; break;
    case 10: o.use_muon = ok.use_muon; break;
    case 11: o.momentum_form = ok.momentum_form; break;
    case 12: o.n_coeffs = ok.n_coeffs; break;
    case 13: o.coeff_order = ok.coeff_order; break;
    case 14: o.ns_eps = ok.ns_eps; break;
    case 15: o.eps_mode = ok.eps_mode; break;
    default: o.ns_format = ok.ns_format; break;
    }
  }
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_OK);
}
END_TEST

/* Asserts status st == want and that the message names `what`. */
#define REFUSED(call, want, what)                                                                        \
  do {                                                                                                  \
    muonref_error e_ = {0};                                                                             \
    int st_ = (call);                                                                                   \
    ck_assert_msg(st_ == (want), "%s: status %d, expected %d (%s)", #call, st_, (want), e_.message);    \
    ck_assert_msg(strstr(e_.message, (what)) != NULL, "%s: message '%s' lacks '%s'", #call, e_.message, \
                  (what));                                                                              \
  } while (0)

/* The five probes of tests/data/repro/capi_null.c (issue 27: each crashed):
 * NULL groups, a group with NULL shapes, parameter counts that wrap past
 * SIZE_MAX (a heap overflow), set_state on a NULL optimizer, state_file_read
 * with a NULL output; each is MUONREF_EOPTION naming the argument.  Then
 * every other public function of libmuonref with a NULL pointer argument:
 * those with a status refuse it with EOPTION, the others do nothing. */
START_TEST(null_and_impossible_arguments_are_refused)
{
  muonref_options o = tu_nemo();
  muonref_shape sh[1] = {{2, {4, 4}}};
  muonref_error e = {0};
  ck_assert_ptr_null(muonref_optimizer_create(NULL, 1, &e));
  ck_assert_int_eq(e.status, MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "muonref_optimizer_create: groups is NULL and n_groups is 1");
  muonref_group nulls = {o, 2, NULL};
  ck_assert_ptr_null(muonref_optimizer_create(&nulls, 1, &e));
  ck_assert_str_eq(e.message, "muonref_optimizer_create: groups[0].shapes is NULL and its n_params is 2");
  muonref_group wrap[2] = {{o, (size_t)1 << 63, sh}, {o, (size_t)1 << 63, sh}};
  ck_assert_ptr_null(muonref_optimizer_create(wrap, 2, &e));
  ck_assert_int_eq(e.status, MUONREF_EOPTION);
  ck_assert_msg(strstr(e.message, "n_params") && strstr(e.message, "past what memory can hold"), "%s", e.message);
  muonref_param_state v = {0};
  REFUSED(muonref_optimizer_set_state(NULL, 0, &v, &e_), MUONREF_EOPTION, "opt must not be NULL");
  REFUSED(muonref_state_file_read("any.state", NULL, &e_), MUONREF_EOPTION, "out must not be NULL");
  /* an empty optimizer (no group) is allowed */
  muonref_optimizer *none = muonref_optimizer_create(NULL, 0, &e);
  ck_assert_ptr_nonnull(none);
  ck_assert_uint_eq(muonref_optimizer_param_count(none), 0);
  muonref_optimizer_free(none);

  /* the rest of the API */
  muonref_group g = {o, 1, sh};
  muonref_optimizer *opt = muonref_optimizer_create(&g, 1, &e);
  ck_assert_ptr_nonnull(opt);
  float buf[16] = {0};
  muonref_route r;
  muonref_state_file sf;
  int iv;
  REFUSED(muonref_optimizer_step(NULL, 1, NULL, NULL, &e_), MUONREF_EOPTION, "must not be NULL");
  REFUSED(muonref_optimizer_state(NULL, 0, &v, &e_), MUONREF_EOPTION, "must not be NULL");
  ck_assert_uint_eq(muonref_optimizer_param_count(NULL), 0);
  ck_assert_uint_eq(muonref_optimizer_group_count(NULL), 0);
  ck_assert_uint_eq(muonref_optimizer_workspace_floats(NULL), 0);
  ck_assert_ptr_null(muonref_optimizer_route(NULL, 0));
  ck_assert_ptr_null(muonref_optimizer_group_options(NULL, 0));
  ck_assert_int_eq(muonref_optimizer_param_info(NULL, 0, NULL, NULL), MUONREF_EOPTION);
  REFUSED(muonref_options_validate(NULL, &e_), MUONREF_EOPTION, "o must not be NULL");
  REFUSED(muonref_ns_options_validate(NULL, &e_), MUONREF_EOPTION, "NULL");
  REFUSED(muonref_scale_mode_parse("fan_in", NULL, &e_), MUONREF_EOPTION, "out must not be NULL");
  REFUSED(muonref_ns_format_parse("bf16", NULL, &e_), MUONREF_EOPTION, "muonref_ns_format_parse: out must not be NULL");
  REFUSED(muonref_bf16_order_parse(NULL, (muonref_bf16_order *)&iv, &e_), MUONREF_EOPTION, "Unknown bf16_order");
  ck_assert(muonref_ns_coeff_at(NULL, 0).a == 0.0 && muonref_ns_step_count(NULL) == 0);
  muonref_options bad = o;
  bad.n_coeffs = 0; /* k % 0 before */
  ck_assert(muonref_ns_coeff_at(&bad, 3).a == 0.0);
  muonref_preset_apply(NULL, &o);
  muonref_preset_apply(muonref_preset_at(0), NULL);
  ck_assert(muonref_preset_coeff(NULL, 0).a == 0.0 && muonref_preset_coeff(muonref_preset_at(0), 99).a == 0.0);
  ck_assert(muonref_preset_norm_safety(NULL) == 1.0);
  ck_assert_ptr_null(muonref_preset_find(NULL));
  REFUSED(muonref_options_init(NULL, 0, &e_), MUONREF_EOPTION, "o must not be NULL");
  REFUSED(muonref_profile_options("nemo", NULL, &e_), MUONREF_EOPTION, "out must not be NULL");
  ck_assert_ptr_null(muonref_profile_get(NULL));
  ck_assert_uint_eq(muonref_shape_numel(NULL), 0);
  ck_assert_uint_eq(muonref_shape_numel(&(muonref_shape){99, {1}}), 0);
  REFUSED(muonref_route_param(NULL, sh, &r, &e_), MUONREF_EOPTION, "o, s and out must not be NULL");
  REFUSED(muonref_route_param(&o, NULL, &r, &e_), MUONREF_EOPTION, "o, s and out must not be NULL");
  REFUSED(muonref_route_param(&o, sh, NULL, &e_), MUONREF_EOPTION, "o, s and out must not be NULL");
  ck_assert_int_eq(muonref_name_excluded(NULL, "x", &e), -1);
  ck_assert_int_eq(e.status, MUONREF_EOPTION);
  REFUSED(muonref_pattern_check(NULL, &e_), MUONREF_EOPTION, "pattern must not be NULL");
  muonref_route_matrices(NULL, sh, &r);
  muonref_route_matrices(&o, NULL, &r);
  REFUSED(muonref_ns_check_shape(NULL, &e_), MUONREF_EOPTION, "s must not be NULL");
  REFUSED(muonref_grad_check(NULL, 2, 16, &e_), MUONREF_EOPTION, "g must not be NULL (gradient 2)");
  ck_assert(muonref_grad_sumsq(NULL, 4) == 0.0);
  muonref_clip_scale(NULL, 4, 0.5);
  muonref_bf16_round_array(NULL, 4);
  REFUSED(muonref_fast_ns(NULL, buf, 4, 4, &o, NULL, &e_), MUONREF_EOPTION, "");
  REFUSED(muonref_fast_ns(buf, buf, 4, 4, NULL, NULL, &e_), MUONREF_EOPTION, "");
  REFUSED(muonref_state_save(opt, NULL, NULL, &e_), MUONREF_EOPTION, "must not be NULL");
  REFUSED(muonref_state_file_read(NULL, &sf, &e_), MUONREF_EOPTION, "path must not be NULL");
  muonref_state_file_free(NULL);
  REFUSED(muonref_state_load(NULL, "x", &e_), MUONREF_EOPTION, "must not be NULL");
  muonref_error_clear(NULL);
  muonref_optimizer_free(NULL);
  muonref_optimizer_free(opt);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("robust");
  TCase *tc = tcase_create("robust");
  tcase_add_test(tc, ns_refuses_bad_arguments_and_writes_nothing);
  tcase_add_test(tc, ns_divergence_is_refused_not_written);
  tcase_add_test(tc, step_divergence_changes_nothing_in_any_parameter);
  tcase_add_test(tc, bf16_rounding_to_infinity_is_refused);
  tcase_add_test(tc, parameter_overflow_is_refused);
  tcase_add_test(tc, validation_runs_in_the_documented_order);
  tcase_add_test(tc, null_and_impossible_arguments_are_refused);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
