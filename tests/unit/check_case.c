/* muonref tests: a vector case's options under a profile's key table
 * (vectors/format/case.c): timm's algo key (the key kind algo_timm, include/
 * muonref/profile.h).  The expected fields are what timm/optim/muon.py
 * @aa4b5850 _single_tensor_adamuon and get_adamuon_lr_scale compute
 * (spec/profiles/timm.md 11), written out by hand.  And Emerging-Optimizers'
 * coefficient_type (kind coefficient_type): the lists and orders of
 * muon_utils.py @fd77292 _COEFFICIENT_SETS and get_coefficient_iterator
 * (spec/profiles/emerging.md 4), written out by hand. */
#include <check.h>
#include <math.h>
#include <string.h>
#include <jansson.h>
#include "core/checks.h"
#include "core/plan.h"
#include "vectors/format/case.h"
#include "muonref/presets.h"
#include "testutil.h"

/* The options of a case of `profile` whose options object is the JSON text j. */
static int case_options(const char *profile, const char *j, muonref_options *o, muonref_error *e)
{
  json_error_t je;
  json_t *v = json_loads(j, 0, &je);
  ck_assert_msg(v != NULL, "bad test JSON %s: %s", j, je.text);
  int st = muonref_case_options(v, profile, o, "case", e);
  json_decref(v);
  return st;
}

static int timm_options(const char *j, muonref_options *o, muonref_error *e) { return case_options("timm", j, o, e); }

/* dion's use_polar_express (kind use_polar_express): true dion/polar_express.py @0a059a4's five triples,
 * each once, on X / (1.02 ||X|| + epsilon); false zeropower_via_newtonschulz5's five quintic triples on
 * X / (||X|| + epsilon) (dion/muon.py @0a059a4), written out by hand; written back as false, absent at
 * dion's default (an optional key), and "?" for another list. */
START_TEST(dion_use_polar_express)
{
  static const struct { const char *j; int n; double safety; muonref_coeff first, last; } U[] = {
    {"{\"use_polar_express\": true}", 5, 1.02, {8.156554524902461, -22.48329292557795, 15.878769915207462},
     {2.3465413258596377, -1.7097828382687081, 0.42323551169305323}},
    {"{\"use_polar_express\": false}", 5, 1.0, {4.0848, -6.8946, 2.9270}, {2.8366, -3.0525, 1.2012}},
  };
  for (size_t k = 0; k < sizeof U / sizeof U[0]; k++) {
    muonref_options o;
    muonref_error e = {0};
    ck_assert_int_eq(case_options("dion", U[k].j, &o, &e), MUONREF_OK);
    ck_assert_int_eq(o.n_coeffs, U[k].n);
    ck_assert(o.ns_safety == U[k].safety);
    ck_assert(o.coeffs[0].a == U[k].first.a && o.coeffs[0].b == U[k].first.b && o.coeffs[0].c == U[k].first.c);
    const muonref_coeff *l = &o.coeffs[U[k].n - 1];
    ck_assert(l->a == U[k].last.a && l->b == U[k].last.b && l->c == U[k].last.c);
    json_t *w = muonref_case_options_json(&o, "dion");
    const json_t *v = json_object_get(w, "use_polar_express");
    ck_assert_msg(k ? json_is_false(v) : v == NULL, "use_polar_express written back wrong for %s", U[k].j);
    json_decref(w);
  }
  muonref_options o;
  muonref_error e = {0};
  ck_assert_int_eq(case_options("dion", "{}", &o, &e), MUONREF_OK);
  muonref_preset_apply(muonref_preset_find("simple"), &o);
  json_t *w = muonref_case_options_json(&o, "dion");
  ck_assert_str_eq(json_string_value(json_object_get(w, "use_polar_express")), "?");
  json_decref(w);
  ck_assert_int_eq(case_options("dion", "{\"use_polar_express\": 1}", &o, &e), MUONREF_EFORMAT);
}
END_TEST

START_TEST(adamuon_match_rms_adamw)
{
  muonref_options o;
  muonref_error e = {0};
  ck_assert_int_eq(timm_options("{\"algo\": \"adamuon\"}", &o, &e), MUONREF_OK);
  ck_assert_int_eq(o.moment2, MUONREF_MOMENT2_ELEMENT);
  ck_assert(o.moment2_beta == 0.95); /* betas[1] of timm's (0.9, 0.95) */
  ck_assert(o.moment2_eps == 1e-7);  /* eps, added: `exp_avg_sq.sqrt().add_(eps)` */
  ck_assert_int_eq(o.moment2_eps_mode, MUONREF_EPS_ADD);
  ck_assert_int_eq(o.moment2_bias_correction, 0); /* "Bias correction not needed if scaling by norm" */
  ck_assert_int_eq(o.moment2_rescale, MUONREF_MOMENT2_RESCALE_UNIT);
  ck_assert_int_eq(o.scale_mode, MUONREF_SCALE_RMS_NUMEL);
  ck_assert_int_eq(o.scale_shape, MUONREF_SCALE_SHAPE_LAST_TWO);
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_OK);
  json_t *j = muonref_case_options_json(&o, "timm");
  ck_assert_str_eq(json_string_value(json_object_get(j, "algo")), "adamuon");
  ck_assert_str_eq(json_string_value(json_object_get(j, "adjust_lr_fn")), "match_rms_adamw");
  json_decref(j);
}
END_TEST

START_TEST(adamuon_other_scales_and_key_order)
{
  muonref_options a, b;
  muonref_error e = {0};
  ck_assert_int_eq(timm_options("{\"algo\": \"adamuon\", \"adjust_lr_fn\": \"rms_to_rms\", \"betas\": [0.9, 0.5], "
                                "\"eps\": 1e-8}", &a, &e), MUONREF_OK);
  ck_assert_int_eq(timm_options("{\"eps\": 1e-8, \"betas\": [0.9, 0.5], \"adjust_lr_fn\": \"rms_to_rms\", "
                                "\"algo\": \"adamuon\"}", &b, &e), MUONREF_OK);
  ck_assert(memcmp(&a, &b, sizeof a) == 0); /* betas and eps count in whatever order the keys come */
  ck_assert(a.moment2_beta == 0.5 && a.moment2_eps == 1e-8);
  ck_assert_int_eq(a.moment2_bias_correction, 1);
  ck_assert_int_eq(a.moment2_rescale, MUONREF_MOMENT2_RESCALE_NONE);
  ck_assert_int_eq(a.scale_mode, MUONREF_SCALE_RMS_TO_RMS);
  ck_assert_int_eq(timm_options("{\"algo\": \"adamuon\", \"adjust_lr_fn\": \"rsqrt_in\"}", &a, &e), MUONREF_OK);
  ck_assert_int_eq(a.scale_mode, MUONREF_SCALE_RSQRT_COLS);
  ck_assert(muonref_scale_factor(a.scale_mode, 32, 16) == 0.25);              /* 16 ** -0.5 */
  ck_assert(muonref_scale_factor(a.scale_mode, 3, 7) == 0.37796447300922725); /* Python: 7 ** -0.5, not 1 / sqrt(7) */
  ck_assert_int_eq(timm_options("{\"algo\": \"adamuon\", \"adjust_lr_fn\": null}", &a, &e), MUONREF_OK);
  ck_assert_int_eq(a.scale_mode, MUONREF_SCALE_NONE);
  ck_assert_int_eq(a.moment2_bias_correction, 1);
  ck_assert_int_eq(timm_options("{\"algo\": \"muon\"}", &a, &e), MUONREF_OK);
  ck_assert_int_eq(a.moment2, MUONREF_MOMENT2_NONE);
  json_t *j = muonref_case_options_json(&a, "timm");
  ck_assert_ptr_null(json_object_get(j, "algo")); /* optional, at timm's default */
  json_decref(j);
}
END_TEST

START_TEST(adamuon_schedule_follows_betas)
{
  muonref_options o;
  muonref_error e = {0};
  ck_assert_int_eq(timm_options("{\"algo\": \"adamuon\"}", &o, &e), MUONREF_OK);
  json_t *set = json_pack("{s:[f,f]}", "betas", 0.9, 0.8);
  ck_assert_int_eq(muonref_case_step_options(set, "timm", &o, "setOptions", &e), MUONREF_OK);
  json_decref(set);
  ck_assert(o.adam_beta2 == 0.8 && o.moment2_beta == 0.8); /* timm reads group["betas"][1] at every step */
}
END_TEST

START_TEST(adamuon_not_expressible_is_written_so)
{
  muonref_options o;
  muonref_error e = {0};
  ck_assert_int_eq(timm_options("{\"algo\": \"adamuon\"}", &o, &e), MUONREF_OK);
  o.moment2_beta = 0.9; /* no longer betas[1] */
  json_t *j = muonref_case_options_json(&o, "timm");
  ck_assert_str_eq(json_string_value(json_object_get(j, "algo")), "?");
  ck_assert_str_eq(json_string_value(json_object_get(j, "adjust_lr_fn")), "?");
  json_decref(j);
}
END_TEST

static const struct { const char *options, *message; int status; } BAD[] = {
  {"{\"algo\": \"lion\"}", "Invalid algo: lion. Must be 'muon' or 'adamuon'", MUONREF_EOPTION},
  {"{\"algo\": \"adamuon\", \"adjust_lr_fn\": \"original\"}", "Invalid scaling function \"original\" for AdaMuon",
   MUONREF_EOPTION},
  {"{\"adjust_lr_fn\": \"original\", \"algo\": \"adamuon\"}", "Invalid scaling function \"original\" for AdaMuon",
   MUONREF_EOPTION},
  {"{\"adjust_lr_fn\": \"rsqrt_in\"}", "Invalid scaling function \"rsqrt_in\" for Muon", MUONREF_EOPTION},
  {"{\"adjust_lr_fn\": \"rsqrt_in\", \"algo\": \"muon\"}", "Invalid scaling function \"rsqrt_in\" for Muon",
   MUONREF_EOPTION},
  {"{\"algo\": 3}", "case: option \"algo\" must be \"muon\" or \"adamuon\"", MUONREF_EFORMAT},
};

START_TEST(algo_errors)
{
  muonref_options o;
  muonref_error e = {0};
  ck_assert_int_eq(timm_options(BAD[_i].options, &o, &e), BAD[_i].status);
  ck_assert_str_eq(e.message, BAD[_i].message);
}
END_TEST

/* timm's algo="adamuon" with conv_mode="batched": valid (its second
 * moment is kept in the parameter's order, spec/muon.md 7.4). */
START_TEST(adamuon_batched_valid)
{
  muonref_options o;
  muonref_error e = {0};
  ck_assert_int_eq(timm_options("{\"algo\": \"adamuon\", \"conv_mode\": \"batched\"}", &o, &e), MUONREF_OK);
  ck_assert_int_eq(o.conv_mode, MUONREF_CONV_SPATIAL);
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_OK);
}
END_TEST

static int emerging_options(const char *j, muonref_options *o, muonref_error *e)
{
  return case_options("emerging", j, o, e);
}

/* Each preset: its length, order, first and last triple (emerging.md 4's table). */
static const struct { const char *name; int n; muonref_coeff_order order; muonref_coeff first, last; } EO[] = {
  {"simple", 1, MUONREF_ORDER_CYCLE, {3.4445, -4.7750, 2.0315}, {3.4445, -4.7750, 2.0315}},
  {"quintic", 5, MUONREF_ORDER_CYCLE, {4.0848, -6.8946, 2.9270}, {2.8366, -3.0525, 1.2012}},
  {"polar_express", 8, MUONREF_ORDER_REPEAT_LAST, {8.2051, -22.9019, 16.4607}, {1.8750, -1.2500, 0.3750}},
  {"cans", 5, MUONREF_ORDER_REPEAT_LAST, {8.4703, -25.1081, 18.6293}, {2.2737, -1.6447, 0.4162}},
  {"aol", 4, MUONREF_ORDER_CYCLE, {4.0098, -7.0585, 2.4635}, {2.7215, -3.0494, 1.3169}},
  {"deepseekv4", 10, MUONREF_ORDER_REPEAT_LAST, {3.4445, -4.7750, 2.0315}, {2.0, -1.5, 0.5}},
  {"cubic5", 5, MUONREF_ORDER_CYCLE, {3.3656576, -3.3420992, 0.0}, {2.2230472, -0.9630650, 0.0}},
};

START_TEST(coefficient_type_presets)
{
  char j[128];
  muonref_options o;
  muonref_error e = {0};
  snprintf(j, sizeof j, "{\"coefficient_type\": \"%s\"}", EO[_i].name);
  ck_assert_int_eq(emerging_options(j, &o, &e), MUONREF_OK);
  ck_assert_int_eq(o.n_coeffs, EO[_i].n);
  ck_assert_int_eq(o.coeff_order, EO[_i].order);
  ck_assert(o.coeffs[0].a == EO[_i].first.a && o.coeffs[0].b == EO[_i].first.b && o.coeffs[0].c == EO[_i].first.c);
  const muonref_coeff *l = &o.coeffs[EO[_i].n - 1];
  ck_assert(l->a == EO[_i].last.a && l->b == EO[_i].last.b && l->c == EO[_i].last.c);
  json_t *w = muonref_case_options_json(&o, "emerging"); /* written back by its name */
  const char *name = json_string_value(json_object_get(w, "coefficient_type"));
  if (strcmp(EO[_i].name, "quintic")) /* the default: an optional key at its default is not written */
    ck_assert_str_eq(name ? name : "(absent)", EO[_i].name);
  json_decref(w);
}
END_TEST

START_TEST(coefficient_type_order_not_expressible)
{
  muonref_options o;
  muonref_error e = {0};
  ck_assert_int_eq(emerging_options("{\"coefficient_type\": \"polar_express\"}", &o, &e), MUONREF_OK);
  o.coeff_order = MUONREF_ORDER_CYCLE; /* Paddle's order for the same list: no coefficient_type runs it so */
  json_t *w = muonref_case_options_json(&o, "emerging");
  ck_assert_str_eq(json_string_value(json_object_get(w, "coefficient_type")), "?");
  json_decref(w);
}
END_TEST

static const struct { const char *options, *message; } EO_BAD[] = {
  {"{\"coefficient_type\": \"quartic\"}", "Invalid coefficient type: quartic"},
  {"{\"coefficient_type\": \"Quintic\"}", "Invalid coefficient type: Quintic"},
  {"{\"coefficient_type\": \"custom\"}",
   "custom_coefficient_sets must be provided when coefficient_type is 'custom'."},
  {"{\"coefficient_type\": \"cubic5\", \"num_ns_steps\": 6}",
   "cubic5 is a fixed 5-step schedule; got steps=6. Use steps=5, or pass explicit custom coefficients."},
  {"{\"num_ns_steps\": 4, \"coefficient_type\": \"cubic5\"}",
   "cubic5 is a fixed 5-step schedule; got steps=4. Use steps=5, or pass explicit custom coefficients."},
  {"{\"coefficient_type\": 5}", "case: option \"coefficient_type\" must be a string"},
};

START_TEST(coefficient_type_errors)
{
  muonref_options o;
  muonref_error e = {0};
  ck_assert_int_ne(emerging_options(EO_BAD[_i].options, &o, &e), MUONREF_OK);
  ck_assert_str_eq(e.message, EO_BAD[_i].message);
}
END_TEST

/* megatron@0.17 (spec/profiles/megatron.md 10): core_v0.17's refusals in its words, from Megatron-LM
 * muon.py @core_v0.17.0 validate_coefficient_type and Emerging-Optimizers muon_utils.py @v0.1.0 newton_schulz
 * (the messages copied from those lines, the values worked out by hand). */
START_TEST(megatron_0_17_refusals)
{
  muonref_error e;
  muonref_options o, t;
  ck_assert_int_eq(muonref_profile_options("megatron@0.17", &o, &e), MUONREF_OK);
  ck_assert(o.catalogue == MUONREF_CATALOGUE_MEGATRON_0_17 && o.ns_steps == 5 && o.n_coeffs == 5);
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_OK);
  t = o, t.ns_steps = 10; /* two whole cycles of quintic's five triples */
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_OK);
  t = o, t.ns_steps = 6;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "steps (6) must be multiple of len(coefficient_sets) (5).");
  t = o, t.ns_steps = 0; /* the rows of emerging come first */
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "num_ns_steps must be at least 1, got 0");
  /* the key muon_use_nesterov, and every preset but quintic refused in Megatron's words */
  json_t *j = json_loads("{\"muon_use_nesterov\": true}", 0, NULL);
  ck_assert_int_eq(muonref_case_options(j, "megatron@0.17", &t, "test", &e), MUONREF_OK);
  ck_assert_int_eq(t.nesterov, 1);
  json_decref(j);
  j = json_loads("{\"muon_coefficient_type\": \"simple\"}", 0, NULL);
  ck_assert_int_eq(muonref_case_options(j, "megatron@0.17", &t, "test", &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Unsupported muon coefficient type 'simple'. Supported types: ('quintic',)");
  ck_assert_int_eq(muonref_case_options(j, "megatron", &t, "test", &e), MUONREF_OK); /* core_v0.19: v0.2.0's */
  json_decref(j);
  j = json_loads("{\"muon_nesterov\": true}", 0, NULL); /* core_v0.17 has no such field: not its vectors' */
  ck_assert_int_eq(muonref_case_options(j, "megatron@0.17", &t, "test", &e), MUONREF_EFORMAT);
  ck_assert_msg(strstr(e.message, "muon_nesterov") != NULL, "%s", e.message);
  json_decref(j);
}
END_TEST

/* Whose refusal each is (core/checks.h muonref_refusal_owner_of), from the records' catalogues: a row the
 * port makes (NeMo's lr >= 0, Emerging-Optimizers' num_ns_steps >= 1 at fd77292, optax's coefficient
 * count, Megatron core_v0.17's multiple of five) is the port's; a row marked fallback (the catalogue
 * none's finite checks, also under paddle, which takes its rows; emerging's other rows) is ROW; a check
 * outside the rows (core/options.c's nesterov 0/1) or a shape refused at the step is SOURCE only where
 * the catalogue says so (none and optax: both; emerging: the options, its shape refusal being its own
 * words).  timm checks no ns_steps (ports-timm-paddle-coefficients.md 1.3: "Not validated at construction").
 * The library's own message is asserted first, so a row that stops refusing fails here too. */
static const struct {
  const char *profile;
  int what; /* 0 lr = nan, 1 ns_steps = 0, 2 nesterov = 2, 3 ns_steps = 6, 4 lr = -1, 5 a list of 3 triples at 2
               steps, 6 ns_steps = -1 */
  const char *message;
  muonref_refusal_owner owner, shape; /* the refusal's owner; a shape refused at the step */
} OWNERS[] = {
  {"emerging", 0, "Invalid learning rate: nan", MUONREF_REFUSAL_ROW, MUONREF_REFUSAL_PORT},
  {"emerging", 1, "num_ns_steps must be at least 1, got 0", MUONREF_REFUSAL_PORT, MUONREF_REFUSAL_PORT},
  {"emerging", 2, "Invalid nesterov: 2 (expected 0 or 1)", MUONREF_REFUSAL_SOURCE, MUONREF_REFUSAL_PORT},
  {"megatron", 0, "Invalid learning rate: nan", MUONREF_REFUSAL_ROW, MUONREF_REFUSAL_PORT},
  {"megatron@0.17", 3, "steps (6) must be multiple of len(coefficient_sets) (5).", MUONREF_REFUSAL_PORT,
   MUONREF_REFUSAL_PORT},
  {"nemo", 4, "Invalid learning rate: -1.0", MUONREF_REFUSAL_PORT, MUONREF_REFUSAL_PORT},
  {"nemo", 2, "Invalid nesterov: 2 (expected 0 or 1)", MUONREF_REFUSAL_PORT, MUONREF_REFUSAL_PORT},
  {"moonlight", 0, "Invalid learning rate: nan", MUONREF_REFUSAL_ROW, MUONREF_REFUSAL_SOURCE},
  {"moonlight", 2, "Invalid nesterov: 2 (expected 0 or 1)", MUONREF_REFUSAL_SOURCE, MUONREF_REFUSAL_SOURCE},
  {"paddle", 0, "Invalid learning rate: nan", MUONREF_REFUSAL_ROW, MUONREF_REFUSAL_PORT},
  {"paddle", 2, "Invalid nesterov: 2 (expected 0 or 1)", MUONREF_REFUSAL_PORT, MUONREF_REFUSAL_PORT},
  {"optax", 5, "Not enough coeffs to perform 2 steps", MUONREF_REFUSAL_PORT, MUONREF_REFUSAL_SOURCE},
  {"optax", 0, "Invalid learning rate: nan", MUONREF_REFUSAL_ROW, MUONREF_REFUSAL_SOURCE},
  {"timm", 6, "Invalid number of Newton-Schulz steps: -1", MUONREF_REFUSAL_ROW, MUONREF_REFUSAL_PORT},
  {"timm", 4, "Invalid learning rate: -1.0", MUONREF_REFUSAL_PORT, MUONREF_REFUSAL_PORT},
};

START_TEST(refusal_owners)
{
  muonref_options o;
  muonref_error e;
  ck_assert_int_eq(muonref_profile_options(OWNERS[_i].profile, &o, &e), MUONREF_OK);
  switch (OWNERS[_i].what) {
  case 0: o.lr = NAN; break;
  case 1: o.ns_steps = 0; break;
  case 2: o.nesterov = 2; break;
  case 3: o.ns_steps = 6; break;
  case 4: o.lr = -1.0; break;
  case 6: o.ns_steps = -1; break;
  default:
    o.coeff_order = MUONREF_ORDER_LIST, o.n_coeffs = 3, o.ns_steps = 2;
    for (int k = 1; k < 3; k++)
      o.coeffs[k] = o.coeffs[0];
  }
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, OWNERS[_i].message);
  ck_assert_int_eq(muonref_refusal_owner_of(&o, MUONREF_EOPTION, e.message), OWNERS[_i].owner);
  muonref_options ok;
  ck_assert_int_eq(muonref_profile_options(OWNERS[_i].profile, &ok, &e), MUONREF_OK);
  ck_assert_int_eq(muonref_refusal_owner_of(&ok, MUONREF_ESHAPE, "a shape"), OWNERS[_i].shape);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("case");
  TCase *t = tcase_create("timm_algo");
  tcase_add_test(t, adamuon_match_rms_adamw);
  tcase_add_test(t, adamuon_other_scales_and_key_order);
  tcase_add_test(t, adamuon_schedule_follows_betas);
  tcase_add_test(t, adamuon_not_expressible_is_written_so);
  tcase_add_loop_test(t, algo_errors, 0, (int)(sizeof BAD / sizeof BAD[0]));
  tcase_add_test(t, adamuon_batched_valid);
  suite_add_tcase(s, t);
  TCase *c = tcase_create("emerging_coefficient_type");
  tcase_add_loop_test(c, coefficient_type_presets, 0, (int)(sizeof EO / sizeof EO[0]));
  tcase_add_test(c, coefficient_type_order_not_expressible);
  tcase_add_test(c, megatron_0_17_refusals);
  tcase_add_test(c, dion_use_polar_express);
  tcase_add_loop_test(c, coefficient_type_errors, 0, (int)(sizeof EO_BAD / sizeof EO_BAD[0]));
  suite_add_tcase(s, c);
  TCase *w = tcase_create("refusal_owner");
  tcase_add_loop_test(w, refusal_owners, 0, (int)(sizeof OWNERS / sizeof OWNERS[0]));
  suite_add_tcase(s, w);
  return tu_run_suite(s);
}
