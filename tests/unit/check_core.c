/* muonref tests: core/ semantics: Python formatting, profiles, option
 * validation and the error catalogue, routing, scale rules, coefficient
 * order, the scalar schedule, gradient checks. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "muonref.h"
#include "testutil.h"
#include "core/fail.h"
#include "core/pyfmt.h"
#include "core/plan.h"

/* One past the last route rule (options.h): every reader of the enum refuses it. */
#define ROUTE_PAST_LAST ((muonref_route_rule)(MUONREF_ROUTE_MOMENTUM_1D + 1))

static muonref_options nemo(void)
{
  muonref_options o;
  ck_assert_int_eq(muonref_profile_options("nemo", &o, NULL), MUONREF_OK);
  return o;
}

/* ---- Python repr ---- */
static const struct { double x; const char *repr; } FLOATS[] = {
  {-1.0, "-1.0"}, {1e-7, "1e-07"}, {0.95, "0.95"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"},
  {0.0001, "0.0001"}, {0.00001, "1e-05"}, {2.5e-05, "2.5e-05"}, {123.456, "123.456"}, {0.1, "0.1"},
  {1e22, "1e+22"}, {-0.0, "-0.0"}, {0.0, "0.0"}, {0.02, "0.02"}, {1.5e300, "1.5e+300"},
  {5e-324, "5e-324"}, {1.0 / 3.0, "0.3333333333333333"}, {8192.0, "8192.0"}, {1.0, "1.0"},
};

START_TEST(py_float_matches_python_repr)
{
  char b[64];
  ck_assert_str_eq(muonref_py_float(b, sizeof b, FLOATS[_i].x), FLOATS[_i].repr);
}
END_TEST

START_TEST(py_float_special_values)
{
  char b[64];
  ck_assert_str_eq(muonref_py_float(b, sizeof b, NAN), "nan");
  ck_assert_str_eq(muonref_py_float(b, sizeof b, INFINITY), "inf");
  ck_assert_str_eq(muonref_py_float(b, sizeof b, -INFINITY), "-inf");
}
END_TEST

START_TEST(py_shape_and_tuple)
{
  char b[64];
  size_t s[3] = {3, 4, 5};
  ck_assert_str_eq(muonref_py_shape(b, sizeof b, s, 0), "()");
  ck_assert_str_eq(muonref_py_shape(b, sizeof b, (size_t[]){48}, 1), "(48,)");
  ck_assert_str_eq(muonref_py_shape(b, sizeof b, s, 3), "(3, 4, 5)");
  const char *names[] = {"nemo", "x"};
  ck_assert_str_eq(muonref_py_str_tuple(b, sizeof b, names, 1), "('nemo',)");
  ck_assert_str_eq(muonref_py_str_tuple(b, sizeof b, names, 2), "('nemo', 'x')");
  ck_assert_str_eq(muonref_py_shape(b, 5, s, 3), "(3, ");   /* truncated, terminated */
}
END_TEST

/* ---- profiles ---- */
START_TEST(nemo_profile_has_the_seed_defaults)
{
  muonref_options o = nemo();
  ck_assert(o.lr == 0.02 && o.momentum == 0.95 && o.nesterov == 1 && o.ns_steps == 5);
  ck_assert(o.weight_decay == 0.0 && o.scale_mode == MUONREF_SCALE_FAN_IN);
  ck_assert(o.adam_beta1 == 0.9 && o.adam_beta2 == 0.95 && o.adam_eps == 1e-8);
  ck_assert(o.adam_lr_ratio == 0.025 && o.adam_dim_threshold == 8192 && o.use_muon == MUONREF_USE_MUON_AUTO);
  ck_assert(o.momentum_form == MUONREF_MOMENTUM_SUM && o.n_coeffs == 1);
  ck_assert(o.coeffs[0].a == 3.4445 && o.coeffs[0].b == -4.7750 && o.coeffs[0].c == 2.0315);
  ck_assert(o.ns_eps == 1e-7 && o.eps_mode == MUONREF_EPS_ADD && o.ns_format == MUONREF_NS_BF16);
  ck_assert_int_eq(muonref_options_validate(&o, NULL), MUONREF_OK);
}
END_TEST

START_TEST(unknown_profile_is_named)
{
  muonref_error e;
  muonref_options o;
  ck_assert_int_eq(muonref_profile_options("mxnet", &o, &e), MUONREF_EOPTION);
  /* the names in the records' order (spec/profiles/, core/profile_table.h), not a list that drifts */
  char want[1024] = "Unknown profile 'mxnet', expected one of (";
  for (size_t i = 0; i < muonref_profile_count(); i++)
    snprintf(want + strlen(want), sizeof want - strlen(want), "%s'%s'", i ? ", " : "", muonref_profile_name(i));
  strcat(want, ")");
  ck_assert_uint_ge(muonref_profile_count(), 12);
  ck_assert_str_eq(e.message, want);
  ck_assert_str_eq(muonref_profile_name(0), "nemo");
  ck_assert_ptr_null(muonref_profile_name(muonref_profile_count()));
}
END_TEST

/* spec/profiles/keller.md: Muon and AdamW group defaults (adam_defaults), the
 * fixed Keller semantics, N-D routing (4-D flattened, other N-D batched),
 * the scale from the last two dims, the scale multiplied into the bf16
 * update only in the bf16 format. */
/* keras v3.10 to v3.12 (profile keras@3.10; muon.py @717a64a3 _muon_update_step: `max(1, shape[0] /
 * shape[1]) ** 0.5` on the variable's shape, and `not 1 < len(shape) < 4` for AdamW): a 3-D variable takes
 * Muon as a batch of its last two dimensions' matrices and its scale comes from its first two */
START_TEST(first_two_scale)
{
  muonref_error e;
  muonref_options o;
  ck_assert_int_eq(muonref_profile_options("keras@3.10", &o, &e), MUONREF_OK);
  ck_assert(o.scale_shape == MUONREF_SCALE_SHAPE_FIRST_TWO && o.route_rule == MUONREF_ROUTE_NDIM_2_3);
  ck_assert_str_eq(muonref_scale_shape_name(o.scale_shape), "first_two");
  muonref_route r;
  muonref_shape t3 = {3, {6, 3, 8}}, tall = {3, {2, 16, 8}}, m = {2, {12, 4}}, conv = {4, {3, 3, 4, 8}};
  ck_assert_int_eq(muonref_route_param(&o, &t3, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon && r.batch == 6 && r.rows == 3 && r.cols == 8 && r.scale_rows == 6 && r.scale_cols == 3);
  ck_assert(muonref_scale_factor(o.scale_mode, r.scale_rows, r.scale_cols) == sqrt(2.0));
  ck_assert_int_eq(muonref_route_param(&o, &tall, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon && r.batch == 2 && r.rows == 16 && r.cols == 8 && r.scale_rows == 2 && r.scale_cols == 16);
  ck_assert(muonref_scale_factor(o.scale_mode, r.scale_rows, r.scale_cols) == 1.0);
  ck_assert_int_eq(muonref_route_param(&o, &m, &r, &e), MUONREF_OK); /* 2-D: its own shape */
  ck_assert(r.scale_rows == 12 && r.scale_cols == 4);
  ck_assert_int_eq(muonref_route_param(&o, &conv, &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  /* the embedding rule holds for a 3-D name under ndim_2_3 too */
  ck_assert_int_eq(muonref_route_param_named(&o, &t3, "token_embedding/table", &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
}
END_TEST

START_TEST(keller_profile)
{
  muonref_error e;
  muonref_options o, a;
  const muonref_profile *p = muonref_profile_get("keller");
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_KELLER, &e), MUONREF_OK);
  ck_assert(o.lr == 0.02 && o.momentum == 0.95 && o.weight_decay == 0.0 && o.nesterov == 1 && o.ns_steps == 5);
  ck_assert(o.momentum_form == MUONREF_MOMENTUM_EMA && o.bf16_order == MUONREF_BF16_KELLER);
  ck_assert(o.eps_mode == MUONREF_EPS_ADD && o.ns_eps == 1e-7 && o.route_rule == MUONREF_ROUTE_MANUAL);
  ck_assert(o.scale_shape == MUONREF_SCALE_SHAPE_LAST_TWO && o.scale_format == MUONREF_SCALE_FORMAT_BF16_UPDATE);
  ck_assert(o.conv_mode == MUONREF_CONV_KELLER && o.missing_grad == MUONREF_MISSING_GRAD_ZEROS);
  ck_assert(o.catalogue == MUONREF_CATALOGUE_NONE && o.adam_lr_ratio == 1.0 && o.adam_eps == 1e-10);
  ck_assert_ptr_nonnull(p->adam_defaults);
  a = *p->adam_defaults; /* the AdamW groups' defaults differ only in lr */
  ck_assert(a.lr == 3e-4 && a.adam_beta1 == 0.9 && a.adam_beta2 == 0.95);
  a.lr = o.lr;
  ck_assert(memcmp(&a, &o, sizeof a) == 0);
  /* the key table: momentum only in Muon groups, betas and eps only in AdamW groups */
  int muon_only = 0, adam_only = 0;
  for (size_t k = 0; k < p->n_keys; k++) {
    muon_only += p->keys[k].branch == MUONREF_KEY_MUON_ONLY;
    adam_only += p->keys[k].branch == MUONREF_KEY_ADAM_ONLY;
  }
  ck_assert_int_eq(muon_only, 1);
  ck_assert_int_eq(adam_only, 2);
  o.use_muon = MUONREF_USE_MUON_TRUE;
  muonref_route r;
  muonref_shape conv = {4, {8, 4, 3, 1}}, t3 = {3, {3, 16, 8}}, t5 = {5, {2, 2, 4, 4, 8}}, bias = {1, {48}};
  ck_assert_int_eq(muonref_route_param(&o, &conv, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon && r.batch == 1 && r.rows == 8 && r.cols == 12 && r.scale_rows == 3 && r.scale_cols == 1);
  ck_assert_int_eq(muonref_route_param(&o, &t3, &r, &e), MUONREF_OK);
  ck_assert(r.batch == 3 && r.rows == 16 && r.cols == 8 && r.scale_rows == 16 && r.scale_cols == 8);
  ck_assert_int_eq(muonref_route_param(&o, &t5, &r, &e), MUONREF_OK);
  ck_assert(r.batch == 16 && r.rows == 4 && r.cols == 8 && r.numel == 512);
  ck_assert_int_eq(muonref_route_param(&o, &bias, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "use_muon=True needs at least two dimensions, got shape (48,)");
  /* the scale: sqrt(max(1, 3/1)) from the kernel, into the bf16 update, lr alone as alpha */
  ck_assert_int_eq(muonref_route_param(&o, &conv, &r, &e), MUONREF_OK);
  muonref_muon_plan pl;
  muonref_muon_plan_make(&o, &r, &pl);
  ck_assert(pl.scale == sqrt(3.0) && pl.update_scale == 1 && pl.alpha == 0.02);
  o.ns_format = MUONREF_NS_FP32;
  muonref_muon_plan_make(&o, &r, &pl);
  ck_assert(pl.update_scale == 0 && pl.alpha == 0.02 * sqrt(3.0));
  /* nemo's flattening of the same filter: one (8, 12) matrix, scale from it */
  muonref_options n;
  ck_assert_int_eq(muonref_options_init(&n, MUONREF_PROFILE_NEMO, &e), MUONREF_OK);
  n.use_muon = MUONREF_USE_MUON_TRUE;
  ck_assert_int_eq(muonref_route_param(&n, &t3, &r, &e), MUONREF_OK);
  ck_assert(r.batch == 1 && r.rows == 3 && r.cols == 128 && r.scale_rows == 3 && r.scale_cols == 128);
}
END_TEST

/* spec/profiles/moonlight.md: defaults, no checks (only what cannot be
 * computed is refused), manual routing, AdamW eps on the uncorrected
 * sqrt(v) (spec/muon.md 9). */
START_TEST(moonlight_profile)
{
  muonref_error e;
  muonref_options o, t;
  ck_assert_int_eq(muonref_profile_options("moonlight", &o, &e), MUONREF_OK);
  ck_assert(o.lr == 1e-3 && o.weight_decay == 0.1 && o.momentum == 0.95 && o.nesterov == 1 && o.ns_steps == 5);
  ck_assert(o.adam_beta1 == 0.9 && o.adam_beta2 == 0.95 && o.adam_eps == 1e-8 && o.adam_lr_ratio == 1.0);
  ck_assert(o.scale_mode == MUONREF_SCALE_RMS_ADAMW && o.bf16_order == MUONREF_BF16_KELLER);
  ck_assert(o.momentum_form == MUONREF_MOMENTUM_SUM && o.eps_mode == MUONREF_EPS_ADD);
  ck_assert(o.route_rule == MUONREF_ROUTE_MANUAL && o.adam_eps_mode == MUONREF_ADAM_EPS_UNCORRECTED);
  t = o, t.lr = -1.0, t.momentum = 1.5, t.weight_decay = -0.1, t.adam_beta1 = 1.0, t.adam_eps = -1.0, t.ns_steps = 0;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_OK); /* Moonlight checks nothing */
  t = o, t.lr = NAN;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid learning rate: nan");
  t = o, t.ns_steps = -1;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  muonref_shape conv = {4, {4, 2, 3, 3}}, bias = {1, {48}};
  muonref_route r;
  o.use_muon = MUONREF_USE_MUON_TRUE;
  ck_assert_int_eq(muonref_route_param(&o, &conv, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "use_muon=True needs exactly two dimensions, got shape (4, 2, 3, 3)");
  o.use_muon = MUONREF_USE_MUON_FALSE;
  ck_assert_int_eq(muonref_route_param(&o, &bias, &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  /* eps on the uncorrected sqrt(v): eps / sqrt(1 - beta2^t) in the corrected form */
  muonref_adamw_plan pl;
  muonref_adamw_plan_make(&o, 2, &pl);
  ck_assert(pl.eps == 1e-8 / sqrt(1.0 - 0.95 * 0.95));
}
END_TEST

/* spec/profiles/torch.md sections 1 and 1.1: torch.optim.Muon's defaults,
 * its checks and their exact messages (compared with upstream's by
 * tests/scripts/upstream-diff.py), 2-D-only routing, ns_steps 0..99. */
START_TEST(torch_profile_defaults_and_catalogue)
{
  muonref_error e;
  muonref_options o, t;
  ck_assert_int_eq(muonref_profile_options("torch", &o, &e), MUONREF_OK);
  ck_assert(o.lr == 1e-3 && o.weight_decay == 0.1 && o.momentum == 0.95 && o.nesterov == 1 && o.ns_steps == 5);
  ck_assert(o.n_coeffs == 1 && o.coeffs[0].a == 3.4445 && o.coeffs[0].b == -4.775 && o.coeffs[0].c == 2.0315);
  ck_assert(o.ns_eps == 1e-7 && o.eps_mode == MUONREF_EPS_CLAMP && o.momentum_form == MUONREF_MOMENTUM_EMA);
  ck_assert(o.bf16_order == MUONREF_BF16_FUSED && o.route_rule == MUONREF_ROUTE_TWO_D_ONLY);
  ck_assert_int_eq(muonref_options_validate(&o, NULL), MUONREF_OK);
  static const struct { int field; double v; const char *msg; } C[] = {
    {0, -1.0, "Learning rate should be >= 0 but is: -1.0"},
    {0, NAN, "Learning rate should be >= 0 but is: nan"},
    {1, -0.5, "momentum should be >= 0 but is: -0.5"},
    {2, -0.01, "weight decay should be >= 0 but is: -0.01"},
    {3, 100, "Number of steps must be less than 100 for computational efficiency"},
    {3, -3, "Invalid number of Newton-Schulz steps: -3"},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    t = o;
    if (C[k].field == 0) t.lr = C[k].v;
    if (C[k].field == 1) t.momentum = C[k].v;
    if (C[k].field == 2) t.weight_decay = C[k].v;
    if (C[k].field == 3) t.ns_steps = (int)C[k].v;
    ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
    ck_assert_str_eq(e.message, C[k].msg);
  }
  t = o, t.momentum = 2.0, t.ns_steps = 0; /* no upper bound on momentum; 0 steps: the normalised input */
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_OK);
  ck_assert_int_eq(muonref_ns_options_validate(&t, &e), MUONREF_OK);
  muonref_shape bias = {1, {48}}, conv = {4, {4, 2, 3, 3}}, w = {2, {16, 8}};
  muonref_route r;
  ck_assert_int_eq(muonref_route_param(&o, &bias, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Muon only supports 2D parameters whereas we found a parameter with size: torch.Size([48])");
  ck_assert_int_eq(muonref_route_param(&o, &conv, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message,
                   "Muon only supports 2D parameters whereas we found a parameter with size: torch.Size([4, 2, 3, 3])");
  o.use_muon = MUONREF_USE_MUON_FALSE; /* unused under two_d_only */
  ck_assert_int_eq(muonref_route_param(&o, &w, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon == 1 && r.rows == 16 && r.cols == 8);
}
END_TEST

/* emerging (spec/profiles/emerging.md; NVIDIA-NeMo/Emerging-Optimizers
 * orthogonalized_optimizers/muon.py @fd77292): the defaults of Muon's
 * signature, its one check and message, the 2-D rule's message, the three
 * scale modes on get_muon_scale_factor's formulas (the values by hand), the
 * extra factor in the plan, the decoupled decay first with 1 - lr wd. */
/* spec/profiles/mlx.md: the defaults (L2 decay 0.01, EMA momentum, fp32
 * Newton-Schulz, Keller's scale of the last two dimensions), route rule
 * momentum_1d (every parameter on the Muon branch: 2-D and more
 * orthogonalized, flattened to (d0, rest); 0-D and 1-D momentum_only with
 * rows = numel, cols = 1; use_muon TRUE as AUTO, FALSE AdamW), and the plan
 * of a momentum_only parameter (scale 1, alpha = lr, no decay factor under
 * L2: the decay is in the gradient). */
START_TEST(mlx_profile_momentum_1d)
{
  muonref_error e;
  muonref_options o;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_MLX, &e), MUONREF_OK);
  ck_assert_str_eq(muonref_profile_name(MUONREF_PROFILE_MLX), "mlx");
  ck_assert(o.momentum == 0.95 && o.nesterov == 1 && o.ns_steps == 5 && o.weight_decay == 0.01);
  ck_assert(o.decay_method == MUONREF_DECAY_L2 && o.momentum_form == MUONREF_MOMENTUM_EMA && o.ns_eps == 1e-7);
  ck_assert(o.eps_mode == MUONREF_EPS_ADD && o.ns_format == MUONREF_NS_FP32 && o.scale_mode == MUONREF_SCALE_FAN_IN);
  ck_assert(o.scale_shape == MUONREF_SCALE_SHAPE_LAST_TWO && o.conv_mode == MUONREF_CONV_FLATTEN);
  ck_assert(o.route_rule == MUONREF_ROUTE_MOMENTUM_1D && o.catalogue == MUONREF_CATALOGUE_NONE);
  ck_assert_str_eq(muonref_route_rule_name(MUONREF_ROUTE_MOMENTUM_1D), "momentum_1d");
  muonref_route r;
  muonref_shape mat = {2, {32, 8}}, bias = {1, {16}}, conv = {4, {4, 2, 6, 3}}, scalar = {0, {0}};
  ck_assert_int_eq(muonref_route_param(&o, &mat, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon == 1 && r.momentum_only == 0 && r.rows == 32 && r.cols == 8);
  ck_assert_int_eq(muonref_route_param(&o, &conv, &r, &e), MUONREF_OK); /* (4, 36), scale from (6, 3) */
  ck_assert(r.use_muon == 1 && r.momentum_only == 0 && r.rows == 4 && r.cols == 36 && r.batch == 1);
  ck_assert(r.scale_rows == 6 && r.scale_cols == 3);
  muonref_muon_plan pl;
  muonref_muon_plan_make(&o, &r, &pl);
  ck_assert(pl.scale == sqrt(2.0) && pl.alpha == o.lr * sqrt(2.0)); /* max(1, 6 / 3) ** 0.5 */
  ck_assert(pl.l2 == 0.01 && pl.apply_decay == 0);
  for (int k = 0; k < 2; k++) {
    muonref_shape s = k ? scalar : bias;
    ck_assert_int_eq(muonref_route_param(&o, &s, &r, &e), MUONREF_OK);
    ck_assert(r.use_muon == 1 && r.momentum_only == 1 && r.rows == (k ? 1 : 16) && r.cols == 1 && r.batch == 1);
    muonref_muon_plan_make(&o, &r, &pl);
    ck_assert(pl.scale == 1.0 && pl.alpha == o.lr && pl.update_scale == 0 && pl.apply_decay == 0);
  }
  o.use_muon = MUONREF_USE_MUON_TRUE; /* as AUTO: no "needs at least two dimensions" */
  ck_assert_int_eq(muonref_route_param(&o, &bias, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon == 1 && r.momentum_only == 1);
  o.use_muon = MUONREF_USE_MUON_FALSE;
  ck_assert_int_eq(muonref_route_param(&o, &mat, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon == 0 && r.momentum_only == 0);
  o.use_muon = MUONREF_USE_MUON_AUTO, o.route_rule = MUONREF_ROUTE_THRESHOLD; /* no other rule sets it */
  ck_assert_int_eq(muonref_route_param(&o, &bias, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon == 0 && r.momentum_only == 0);
}
END_TEST

/* spec/profiles/megatron.md: the defaults (emerging's Muon with
 * Emerging-Optimizers v0.2.0's eps 1e-7, Megatron's AdamW, clip_grad 1.0),
 * its one check, route rule tagged_2d (the tag, else ndim == 2; 0-D and
 * 3-D parameters AdamW; use_muon TRUE as AUTO), the dev snapshot's not_1d
 * (0-D and 3-D Muon parameters refused with the 2-D message), and
 * the clipping coefficient and scaling by hand (Megatron clip_grads.py:
 * max_norm / (total_norm + 1e-6) when below 1; the gradient times the
 * float32 coefficient, rounded once). */
/* keras' clipping (spec/muon.md 3.1; grad.h): the expected values worked out by hand and, for the roundings,
 * with Python's exact fractions rounded once to binary32 (struct.pack('f', ...)), not by the code under test. */
/* Paddle's ClipGradByGlobalNorm (spec/muon.md 3.2; python/paddle/nn/clip.py): s = R32(R32(c) / max(N32,
 * R32(c))), the values worked by hand (a float32 division of float32 numbers) */
START_TEST(paddle_clipping_by_hand)
{
  ck_assert_str_eq(muonref_clip_form_name(MUONREF_CLIP_PADDLE), "paddle");
  /* (3, 4) and (12,): S32 = 169, N32 = 13, s = R32(1 / 13) = 0x1.3b13b2p-4 (struct.pack('f', 1 / 13)) */
  const double sums[2] = {25.0, 144.0};
  ck_assert(muonref_clip_paddle_global(1.0, sums, 2) == (double)0x1.3b13b2p-4f);
  /* at and below the bound exactly 1 (c / c), where Megatron's c / (N + 1e-6) would not scale and keras' is 1 or
   * an ulp from it */
  const double small[1] = {0.01}, zero[1] = {0.0}, at[1] = {0.09};
  ck_assert(muonref_clip_paddle_global(0.3, small, 1) == 1.0 && muonref_clip_paddle_global(0.3, zero, 1) == 1.0);
  ck_assert(muonref_clip_paddle_global(0.3, at, 1) == 1.0); /* R32(sqrt(R32(0.09))) = R32(0.3): c / c */
  /* c = 0.3 and N32 = 3: R32(R32(0.3) / 3) = 0x1.99999ap-4 (struct.pack('f', numpy.float32(0.3) / numpy.float32(3))) */
  const double nine[1] = {9.0};
  ck_assert(muonref_clip_paddle_global(0.3, nine, 1) == (double)0x1.99999ap-4f);
  /* a sum of squares beyond binary32: N32 = inf, s = 0 (c / inf) */
  const double huge[2] = {3e38, 3e38};
  ck_assert(muonref_clip_paddle_global(1.0, huge, 2) == 0.0);
  /* a NaN norm: paddle.maximum is `a > b ? a : b` (phi MaximumFunctor), so c / c = 1 */
  const double nan_sum[1] = {NAN};
  ck_assert(muonref_clip_paddle_global(1.0, nan_sum, 1) == 1.0);
  /* through the options: clip_grad_form paddle dispatches to it */
  muonref_options o;
  muonref_error e;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_PADDLE, &e), MUONREF_OK);
  o.clip_grad_norm = 1.0, o.clip_grad_form = MUONREF_CLIP_PADDLE;
  ck_assert(muonref_clip_global(&o, 13.0, sums, 2) == (double)0x1.3b13b2p-4f);
}
END_TEST

START_TEST(keras_clipping_by_hand)
{
  muonref_error e;
  muonref_options o, t;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_KERAS, &e), MUONREF_OK);
  ck_assert(o.clip_grad_form == MUONREF_CLIP_KERAS && o.clip_grad_norm == 0.0 && o.clip_grad_norm_each == 0.0 &&
            o.clip_grad_value == 0.0);
  ck_assert_str_eq(muonref_clip_form_name(MUONREF_CLIP_KERAS), "keras");
  /* clipnorm 1 on (3, 4): norm 5, each value R32(R32(g 1) / 5) */
  float g[2] = {3.0f, 4.0f};
  muonref_clip_keras_each(g, 2, 1.0, 25.0);
  ck_assert(g[0] == 0.6f && g[1] == 0.8f);
  /* clipnorm 0.9 on a gradient of norm 0.456 (below the bound): keras divides anyway, R32(R32(g R32(0.9)) /
   * R32(0.9)) is one ulp above g (0x1.d2faa6p-2 -> 0x1.d2faa8p-2) */
  float b[1] = {0x1.d2faa6p-2f};
  muonref_clip_keras_each(b, 1, 0.9, (double)b[0] * (double)b[0]);
  ck_assert(b[0] == 0x1.d2faa8p-2f);
  /* global_clipnorm 1 over (3, 4) and (12,): N = 13, s = R32(1 / 13) = 0.07692307978868484 */
  const double sums[2] = {25.0, 144.0};
  double s = muonref_clip_keras_global(1.0, sums, 2);
  ck_assert(s == (double)0.07692307978868484f);
  float h[3] = {3.0f, 4.0f, 12.0f};
  muonref_clip_scale(h, 3, s);
  ck_assert(h[0] == 0.23076924681663513f && h[1] == 0.3076923191547394f && h[2] == 0.9230769872665405f);
  /* below the bound: R32(R32(0.3) R32(1 / 0.3)) = 1; and the zero gradient: 1 / 0 = inf, the same scale */
  const double small[1] = {0.01}, zero[1] = {0.0};
  ck_assert(muonref_clip_keras_global(0.3, small, 1) == 1.0 && muonref_clip_keras_global(0.3, zero, 1) == 1.0);
  /* loss_scale_factor 3: R32(1 / R32(3)) = 0x1.555556p-2 (Python: struct.pack('f', 1 / 3)); 1024 exact */
  float u[2] = {1.0f, 3072.0f};
  muonref_grad_unscale(u, 1, 3.0);
  muonref_grad_unscale(u + 1, 1, 1024.0);
  ck_assert(u[0] == 0x1.555556p-2f && u[1] == 3.0f);
  t = o, t.loss_scale = -2.0;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid loss scale factor (loss_scale): -2.0");
  /* clipvalue 0.1: a clamp to [-R32(0.1), R32(0.1)] */
  float v[3] = {-0.5f, 0.05f, 0.2f};
  muonref_clip_value(v, 3, 0.1);
  ck_assert(v[0] == -0.1f && v[1] == 0.05f && v[2] == 0.1f);
  /* BaseOptimizer.__init__'s check, in keras' words (the record's at_most_one row); muonref's 0 is keras' None */
  t = o, t.clip_grad_norm_each = 1.0, t.clip_grad_value = 0.5;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
                              "clipnorm=1.0, clipvalue=0.5, global_clipnorm=None");
  t = o, t.clip_grad_norm = 2.0, t.clip_grad_value = 0.5;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
                              "clipnorm=None, clipvalue=0.5, global_clipnorm=2.0");
  t = o, t.clip_grad_norm_each = -1.0;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid gradient clipping norm per gradient (clip_grad_norm_each): -1.0");
  /* under another catalogue: muonref's own words */
  ck_assert_int_eq(muonref_options_init(&t, MUONREF_PROFILE_NEMO, &e), MUONREF_OK);
  t.clip_grad_norm_each = 1.0, t.clip_grad_value = 0.5;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "At most one gradient clipping may be set: clip_grad_norm_each=1.0, clip_grad_value=0.5, "
                              "clip_grad_norm=0.0");
  t.clip_grad_value = 0.0;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_OK);
}
END_TEST

START_TEST(megatron_profile_routing_and_clipping)
{
  muonref_error e;
  muonref_options o, t;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_MEGATRON, &e), MUONREF_OK);
  ck_assert_str_eq(muonref_profile_name(MUONREF_PROFILE_MEGATRON), "megatron");
  ck_assert(o.momentum == 0.95 && o.nesterov == 0 && o.ns_steps == 5 && o.weight_decay == 0.01 && o.scale_extra == 1.0);
  ck_assert(o.scale_mode == MUONREF_SCALE_SQRT_MAX && o.momentum_form == MUONREF_MOMENTUM_EMA && o.ns_eps == 1e-7);
  ck_assert(o.eps_mode == MUONREF_EPS_CLAMP);
  ck_assert(o.norm_format == MUONREF_NORM_FORMAT_INPUT && o.bf16_order == MUONREF_BF16_FUSED);
  ck_assert(o.adam_beta1 == 0.9 && o.adam_beta2 == 0.999 && o.adam_eps == 1e-8 && o.adam_lr_ratio == 1.0);
  ck_assert(o.adam_eps_mode == MUONREF_ADAM_EPS_CORRECTED && o.adam_variant == MUONREF_ADAM_ADAMW);
  ck_assert(o.route_rule == MUONREF_ROUTE_TAGGED_2D && o.catalogue == MUONREF_CATALOGUE_MEGATRON && o.clip_grad_norm == 1.0);
  ck_assert_str_eq(muonref_route_rule_name(MUONREF_ROUTE_NOT_1D), "not_1d");
  ck_assert_str_eq(muonref_route_rule_name(MUONREF_ROUTE_TAGGED_2D), "tagged_2d");
  ck_assert_str_eq(muonref_catalogue_name(MUONREF_CATALOGUE_MEGATRON), "megatron");
  t = o, t.ns_steps = 0;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "num_ns_steps must be at least 1, got 0");
  t = o, t.lr = -1.0, t.momentum = 1.5, t.adam_beta1 = 1.0; /* checked by nothing upstream */
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_OK);
  t = o, t.clip_grad_norm = -1.0;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid gradient clipping norm (clip_grad): -1.0");
  t = o, t.route_rule = ROUTE_PAST_LAST;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  muonref_route r;
  muonref_shape mat = {2, {16, 8}}, bias = {1, {16}}, conv = {4, {4, 2, 3, 3}}, scalar = {0, {0}};
  ck_assert_int_eq(muonref_route_param(&o, &mat, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon && r.rows == 16 && r.cols == 8);
  ck_assert_int_eq(muonref_route_param(&o, &bias, &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  ck_assert_int_eq(muonref_route_param(&o, &conv, &r, &e), MUONREF_OK); /* not 2-D: Adam */
  ck_assert(!r.use_muon);
  ck_assert_int_eq(muonref_route_param(&o, &scalar, &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  t = o, t.use_muon = MUONREF_USE_MUON_TRUE; /* as AUTO: no way to force Muon, nor a refusal */
  ck_assert_int_eq(muonref_route_param(&t, &conv, &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  ck_assert_int_eq(muonref_route_param(&t, &bias, &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  ck_assert_int_eq(muonref_route_param(&t, &mat, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon);
  t = o, t.route_rule = MUONREF_ROUTE_NOT_1D; /* the dev snapshot 025c931a */
  ck_assert_int_eq(muonref_route_param(&t, &conv, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Only 2D parameters are supported.");
  ck_assert_int_eq(muonref_route_param(&t, &scalar, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Only 2D parameters are supported.");
  ck_assert_int_eq(muonref_route_param(&t, &bias, &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  t = o, t.use_muon = MUONREF_USE_MUON_FALSE; /* is_embedding_or_output_parameter */
  ck_assert_int_eq(muonref_route_param(&t, &mat, &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  ck_assert_int_eq(muonref_route_param(&t, &conv, &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  /* the coefficient: 1 / (4 + 1e-6) below 1; none below the bound minus 1e-6; none when off */
  ck_assert(muonref_clip_coeff(1.0, 4.0) == 1.0 / (4.0 + 1e-6));
  ck_assert(muonref_clip_coeff(1.0, 0.5) == 1.0 && muonref_clip_coeff(1.0, 1.0 - 2e-6) == 1.0);
  ck_assert(muonref_clip_coeff(1.0, 1.0) == 1.0 / (1.0 + 1e-6)); /* a norm equal to the bound is clipped (by the eps) */
  ck_assert(muonref_clip_coeff(0.0, 100.0) == 1.0 && muonref_clip_coeff(2.0, 0.0) == 1.0);
  /* R32(g R32(c)): 3 R32(1/3) = 1.0000000298 rounds to 1; 0.75 R32(0.1) exactly as float32's product */
  float g[3] = {3.0f, 0.75f, -5.0f};
  muonref_clip_scale(g, 3, 1.0 / 3.0);
  ck_assert(g[0] == 1.0f && g[1] == (float)(0.75 * (double)(float)(1.0 / 3.0)) && g[2] == -5.0f * (float)(1.0 / 3.0));
  ck_assert(muonref_grad_sumsq((const float[]){3.0f, 4.0f}, 2) == 25.0);
  /* the fast optimizer: a bias (AdamW) and a matrix (Muon) with gradients of global norm 5 (clip 1.0) step as
   * unclipped optimizers given the gradients times R32(1 / (5 + 1e-6)), by hand; two steps (AdamW sees it) */
  muonref_shape shapes[2] = {{1, {2}}, {2, {2, 2}}};
  float g0[2] = {3.0f, 0.0f}, g1[4] = {0.0f, 4.0f, 0.0f, 0.0f}, h0[2], h1[4];
  float c32 = (float)(1.0 / (5.0 + 1e-6));
  for (int j = 0; j < 2; j++)
    h0[j] = g0[j] * c32;
  for (int j = 0; j < 4; j++)
    h1[j] = g1[j] * c32;
  float pa[2][6] = {{0.5f, -0.25f, 1.0f, 2.0f, -1.0f, 0.5f}, {0.5f, -0.25f, 1.0f, 2.0f, -1.0f, 0.5f}};
  t = o, t.ns_format = MUONREF_NS_FP32;
  muonref_group gc = {t, 2, shapes}, gu = gc;
  gu.options.clip_grad_norm = 0.0;
  muonref_optimizer *oc = muonref_optimizer_create(&gc, 1, &e), *ou = muonref_optimizer_create(&gu, 1, &e);
  ck_assert(oc && ou);
  float *pc[2] = {pa[0], pa[0] + 2}, *pu[2] = {pa[1], pa[1] + 2};
  muonref_grad gcl[2] = {{g0, MUONREF_DENSE, MUONREF_FLOAT32}, {g1, MUONREF_DENSE, MUONREF_FLOAT32}};
  muonref_grad gun[2] = {{h0, MUONREF_DENSE, MUONREF_FLOAT32}, {h1, MUONREF_DENSE, MUONREF_FLOAT32}};
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(muonref_optimizer_step(oc, 2, pc, gcl, &e), MUONREF_OK);
    ck_assert_int_eq(muonref_optimizer_step(ou, 2, pu, gun, &e), MUONREF_OK);
  }
  ck_assert(memcmp(pa[0], pa[1], sizeof pa[0]) == 0);
  ck_assert(g0[0] == 3.0f && g1[1] == 4.0f); /* the caller's gradients are not written */
  muonref_optimizer_free(oc), muonref_optimizer_free(ou);
  /* groups must agree on the one clip_grad_norm */
  muonref_group two[2] = {gc, gu};
  ck_assert_ptr_null(muonref_optimizer_create(two, 2, &e));
  ck_assert_str_eq(e.message, "clip_grad_norm is one value for the optimizer: group 1 has 0, group 0 1");
}
END_TEST

/* paddle (spec/profiles/paddle.md; expected values from its formulas, by hand) */
START_TEST(paddle_profile)
{
  muonref_error e;
  muonref_options o, t;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_PADDLE, &e), MUONREF_OK);
  ck_assert_str_eq(muonref_profile_name(MUONREF_PROFILE_PADDLE), "paddle");
  ck_assert(o.lr == 0.02 && o.momentum == 0.95 && o.weight_decay == 0.01 && o.nesterov == 1 && o.ns_steps == 5);
  ck_assert(o.scale_mode == MUONREF_SCALE_FAN_OUT && o.scale_extra == 0.2 && o.norm_format == MUONREF_NORM_FORMAT_INPUT);
  ck_assert(o.ns_eps == 1e-9 && o.adam_eps == 1e-9 && o.eps_mode == MUONREF_EPS_CLAMP && o.bf16_order == MUONREF_BF16_FUSED);
  ck_assert(o.momentum_form == MUONREF_MOMENTUM_EMA && o.coeff_order == MUONREF_ORDER_CYCLE && o.n_coeffs == 1);
  ck_assert(o.route_rule == MUONREF_ROUTE_NDIM_2_3 && o.catalogue == MUONREF_CATALOGUE_PADDLE);
  ck_assert(o.scale_format == MUONREF_SCALE_FORMAT_BF16_SCALE_EXTRA && o.conv_mode == MUONREF_CONV_BATCHED);
  ck_assert(o.adam_lr_ratio == 1.0 && o.adam_beta1 == 0.9 && o.adam_beta2 == 0.95 && o.n_exclude_patterns == 0);
  t = o, t.lr = -1.0, t.momentum = 1.5, t.weight_decay = -0.1, t.ns_steps = 0; /* no value checks */
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_OK);
  t = o, t.n_exclude_patterns = 9;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid number of exclude patterns: 9 (expected 0 to 8)");
  /* the default rule: 2-D or 3-D and no pattern a case-insensitive substring */
  t = o, t.n_exclude_patterns = 2;
  snprintf(t.exclude_patterns[0], MUONREF_PATTERN_LEN, "bias");
  snprintf(t.exclude_patterns[1], MUONREF_PATTERN_LEN, "mlp.gate");
  muonref_shape m2 = {2, {8, 16}}, m3 = {3, {2, 4, 8}}, m4 = {4, {4, 2, 3, 3}}, v1 = {1, {8}};
  muonref_route r;
  static const struct { const char *name; int muon; } N[] = {
    {"unbiased_proj.weight", 0}, {"BIAS", 0}, {"layers.0.mlp.gate_proj", 0}, {"layers.0.mlp_gate", 1},
    {"attn.qkv.weight", 1}, {NULL, 1}};
  for (size_t k = 0; k < sizeof N / sizeof N[0]; k++) {
    ck_assert_int_eq(muonref_route_param_named(&t, &m2, N[k].name, &r, &e), MUONREF_OK);
    ck_assert_msg(r.use_muon == N[k].muon, "%s", N[k].name ? N[k].name : "(null)");
    ck_assert_int_eq(muonref_name_excluded(&t, N[k].name, NULL), !N[k].muon);
  }
  ck_assert_int_eq(muonref_route_param_named(&t, &m3, "experts.w1", &r, &e), MUONREF_OK);
  ck_assert(r.use_muon && r.batch == 2 && r.rows == 4 && r.cols == 8 && r.scale_rows == 4 && r.scale_cols == 8);
  ck_assert_int_eq(muonref_route_param_named(&t, &m4, "conv.weight", &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  ck_assert_int_eq(muonref_route_param_named(&t, &v1, "norm.weight", &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  t.use_muon = MUONREF_USE_MUON_TRUE;
  ck_assert_int_eq(muonref_route_param_named(&t, &m4, "conv.weight", &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Input tensor X must be 2D or 3D (batched), got 4D");
  ck_assert_int_eq(muonref_route_param(&t, &v1, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Input tensor X must be 2D or 3D (batched), got 1D");
  t.use_muon = MUONREF_USE_MUON_FALSE;
  ck_assert_int_eq(muonref_route_param_named(&t, &m2, "w", &r, &e), MUONREF_OK);
  ck_assert(!r.use_muon);
  /* muon_version 2: sqrt(cols/rows) without max */
  ck_assert(muonref_scale_factor(MUONREF_SCALE_RATIO_COLS, 8, 32) == 2.0);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_RATIO_COLS, 32, 8) == 0.5);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_FAN_OUT, 8, 32) == 2.0 && muonref_scale_factor(MUONREF_SCALE_FAN_OUT, 32, 8) == 1.0);
  /* the update: in bf16 two products by fl32(s) and fl32(0.2), alpha = fl32(lr); decay in binary32 */
  ck_assert_int_eq(muonref_route_param(&o, &m2, &r, &e), MUONREF_OK);
  muonref_muon_plan pl;
  muonref_muon_plan_make(&o, &r, &pl);
  ck_assert(pl.update_scale && pl.update_factor == sqrt(2.0) && pl.update_factor2 == 0.2 && pl.alpha == (double)0.02f);
  ck_assert(pl.apply_decay && pl.decay == (double)(1.0f - 0.02f * 0.01f));
  ck_assert(pl.decay != 1.0 - 0.02 * 0.01);
  t = o, t.ns_format = MUONREF_NS_FP32;
  muonref_muon_plan_make(&t, &r, &pl);
  ck_assert(!pl.update_scale && pl.alpha == (double)0.02f * (sqrt(2.0) * 0.2));
  t = o, t.weight_decay = -0.1; /* `weight_decay > 0` only: the Muon branch skips it; AdamW applies it */
  muonref_muon_plan_make(&t, &r, &pl);
  ck_assert(!pl.apply_decay);
  muonref_adamw_plan ap;
  muonref_adamw_plan_make(&t, 1, &ap);
  ck_assert(ap.apply_decay && ap.decay == 1.0 + 0.02 * 0.1);
  ck_assert_str_eq(muonref_scale_mode_name(MUONREF_SCALE_RATIO_COLS), "ratio_cols");
  ck_assert_str_eq(muonref_route_rule_name(MUONREF_ROUTE_NDIM_2_3), "ndim_2_3");
  ck_assert_str_eq(muonref_catalogue_name(MUONREF_CATALOGUE_PADDLE), "paddle");
  ck_assert_str_eq(muonref_scale_format_name(MUONREF_SCALE_FORMAT_BF16_SCALE_EXTRA), "bf16_scale_extra");
  ck_assert_str_eq(muonref_pattern_match_name(MUONREF_MATCH_SUBSTRING_CI), "substring_ci");
}
END_TEST

START_TEST(emerging_profile_defaults_scale_and_decay)
{
  muonref_error e;
  muonref_options o, t;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_EMERGING, &e), MUONREF_OK);
  ck_assert_str_eq(muonref_profile_name(MUONREF_PROFILE_EMERGING), "emerging");
  ck_assert(o.lr == 3e-4 && o.momentum == 0.95 && o.weight_decay == 0.01 && o.nesterov == 0 && o.ns_steps == 5);
  ck_assert(o.scale_mode == MUONREF_SCALE_SQRT_MAX && o.scale_extra == 1.0 && o.norm_format == MUONREF_NORM_FORMAT_INPUT);
  ck_assert(o.ns_eps == 1e-15 && o.eps_mode == MUONREF_EPS_CLAMP && o.bf16_order == MUONREF_BF16_FUSED);
  ck_assert(o.momentum_form == MUONREF_MOMENTUM_EMA && o.coeff_order == MUONREF_ORDER_CYCLE);
  ck_assert(o.route_rule == MUONREF_ROUTE_TWO_D_ONLY && o.catalogue == MUONREF_CATALOGUE_EMERGING);
  ck_assert(o.n_coeffs == 5 && o.coeffs[0].a == 4.0848 && o.coeffs[4].c == 1.2012);
  muonref_coeff k6 = muonref_ns_coeff_at(&o, 6); /* get_coefficient_iterator(mode="cycle"): list[6 % 5] */
  ck_assert(k6.a == 3.9505 && k6.b == -6.3029 && k6.c == 2.6377);
  t = o, t.ns_steps = 0;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "num_ns_steps must be at least 1, got 0");
  t = o, t.lr = -1.0, t.momentum = 1.5, t.weight_decay = -0.1; /* unchecked by the port */
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_OK);
  t = o, t.scale_extra = INFINITY;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid extra scale factor: inf");
  muonref_shape bias = {1, {48}}, mat = {2, {64, 16}};
  muonref_route r;
  ck_assert_int_eq(muonref_route_param(&o, &bias, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Only 2D parameters are supported.");
  ck_assert(muonref_scale_factor(MUONREF_SCALE_SQRT_MAX, 16, 64) == 8.0);  /* spectral: max(16, 64) ** 0.5 */
  ck_assert(muonref_scale_factor(MUONREF_SCALE_SQRT_MAX, 64, 16) == 8.0);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_RMS_TO_RMS, 16, 64) == 0.5); /* unit_rms_norm: (16 / 64) ** 0.5 */
  ck_assert(muonref_scale_factor(MUONREF_SCALE_FAN_IN, 16, 64) == 1.0);     /* shape_scaling: max(1, 16/64) ** 0.5 */
  ck_assert(muonref_scale_factor(MUONREF_SCALE_FAN_IN, 64, 16) == 2.0);
  ck_assert_int_eq(muonref_route_param(&o, &mat, &r, &e), MUONREF_OK);
  muonref_muon_plan pl;
  t = o, t.scale_extra = 0.2;
  muonref_muon_plan_make(&t, &r, &pl);
  ck_assert(pl.scale == 8.0 * 0.2 && pl.alpha == 3e-4 * (8.0 * 0.2));
  ck_assert(pl.mom_keep == 0.95 && pl.mom_grad == 1.0 - 0.95 && pl.in_mom == 1.0 && pl.in_grad == 0.0);
  ck_assert(pl.apply_decay && pl.decay == 1.0 - 3e-4 * 0.01);
  /* p.add_(p, alpha=-wd * lr) in binary32 is P + R(a P) with a = fl32(-lr wd):
   * R(a P) errs by 2^-24 |a P|, so the sum differs from P (1 - lr wd) rounded
   * once only where that tiny error crosses a rounding boundary: never on
   * these 4096 values at the defaults (lr wd = 3e-6), at most one ulp with
   * the vectors' lr 0.02, wd 0.1 (within the element-wise allowance,
   * spec/vectors.md 5.1): no field for it */
  static const double LW[][2] = {{3e-4, 0.01}, {0.02, 0.1}};
  for (int w = 0; w < 2; w++) {
    float a = (float)(-LW[w][1] * LW[w][0]);
    int differ = 0;
    for (int k = 0; k < 4096; k++) {
      float p = ldexpf(1.0f + (float)k / 4096.0f, k % 7 - 3);
      volatile float prod = a * p;
      float torch_way = p + prod, ours = (float)((double)p * (1.0 - LW[w][0] * LW[w][1]));
      ck_assert(fabsf(torch_way - ours) <= nextafterf(fabsf(ours), INFINITY) - fabsf(ours));
      differ += torch_way != ours;
    }
    if (w == 0)
      ck_assert_int_eq(differ, 0);
  }
  ck_assert_str_eq(muonref_scale_mode_name(MUONREF_SCALE_SQRT_MAX), "sqrt_max");
  ck_assert_str_eq(muonref_catalogue_name(MUONREF_CATALOGUE_EMERGING), "emerging");
  ck_assert_str_eq(muonref_norm_format_name(MUONREF_NORM_FORMAT_INPUT), "input");
  t = o, t.norm_format = (muonref_norm_format)2;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
}
END_TEST

/* spec/profiles/dion.md (microsoft/dion @0a059a4): dion's defaults (muon.py
 * Muon.__init__'s signature), its catalogue's messages (the constructor's
 * f-strings, the step's assertion), N-D parameters batched by their last
 * two dimensions, the scale sqrt(rows/cols) without max
 * (adjust_lr_spectral_norm), and lr s multiplied into the bf16 output
 * (`_foreach_mul(U, adjusted_lr)`), only in the bf16 format. */
START_TEST(dion_profile)
{
  muonref_error e;
  muonref_options o;
  const muonref_profile *p = muonref_profile_get("dion");
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_eq(p, muonref_profile_at(MUONREF_PROFILE_DION));
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_DION, &e), MUONREF_OK);
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_OK);
  ck_assert(o.lr == 0.01 && o.momentum == 0.95 && o.adam_beta1 == 0.9 && o.adam_beta2 == 0.95);
  ck_assert(o.weight_decay == 0.01 && o.ns_eps == 1e-8 && o.adam_eps == 1e-8 && o.nesterov == 0);
  ck_assert(o.momentum_form == MUONREF_MOMENTUM_SUM && o.eps_mode == MUONREF_EPS_ADD && o.ns_safety == 1.02);
  ck_assert(o.ns_steps == 5 && o.n_coeffs == 5 && o.coeffs[0].a == 8.156554524902461 &&
            o.coeffs[4].c == 0.42323551169305323 && o.bf16_order == MUONREF_BF16_SEPARATE);
  ck_assert(o.scale_mode == MUONREF_SCALE_RMS_TO_RMS && o.scale_format == MUONREF_SCALE_FORMAT_BF16_ALPHA);
  ck_assert(o.route_rule == MUONREF_ROUTE_MANUAL && o.conv_mode == MUONREF_CONV_BATCHED && o.adam_lr_ratio == 1.0);
  ck_assert(o.catalogue == MUONREF_CATALOGUE_DION && o.missing_grad == MUONREF_MISSING_GRAD_SKIP);
  /* the catalogue: dion's messages, its missing bounds */
  muonref_options b = o;
  b.lr = -1.0;
  ck_assert_int_eq(muonref_options_validate(&b, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid learning rate: -1.0");
  b = o, b.momentum = -0.5;
  ck_assert_int_eq(muonref_options_validate(&b, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid momentum factor (mu): -0.5");
  b = o, b.adam_beta2 = -0.1;
  ck_assert_int_eq(muonref_options_validate(&b, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid betas: (0.9, -0.1)");
  b = o, b.momentum = 1.0, b.adam_beta1 = 1.0, b.weight_decay = -0.01; /* dion checks none of these */
  ck_assert_int_eq(muonref_options_validate(&b, &e), MUONREF_OK);
  /* routing: a (3, 16, 8) parameter is three (16, 8) matrices; the scale sqrt(16/8) */
  o.use_muon = MUONREF_USE_MUON_TRUE;
  muonref_route r;
  muonref_shape t3 = {3, {3, 16, 8}}, wide = {2, {8, 32}}, bias = {1, {48}};
  ck_assert_int_eq(muonref_route_param(&o, &t3, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon && r.batch == 3 && r.rows == 16 && r.cols == 8 && r.scale_rows == 16 && r.scale_cols == 8);
  ck_assert_int_eq(muonref_route_param(&o, &bias, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Muon optimizer only supports matrix parameters.");
  b = o, b.conv_mode = MUONREF_CONV_FLATTEN; /* flatten=True: (3, 128) */
  ck_assert_int_eq(muonref_route_param(&b, &t3, &r, &e), MUONREF_OK);
  ck_assert(r.batch == 1 && r.rows == 3 && r.cols == 128 && r.scale_rows == 3 && r.scale_cols == 128);
  /* the scale of a wide (8, 32) matrix: sqrt(8/32) = 0.5, below 1; alpha = lr 0.5 into the bf16 output */
  ck_assert_int_eq(muonref_route_param(&o, &wide, &r, &e), MUONREF_OK);
  muonref_muon_plan pl;
  muonref_muon_plan_make(&o, &r, &pl);
  ck_assert(pl.scale == 0.5 && pl.update_scale == 1 && pl.update_factor == 0.005 && pl.alpha == 1.0);
  ck_assert(pl.apply_decay && pl.decay == 1.0 - 0.01 * 0.01);
  o.ns_format = MUONREF_NS_FP32;
  muonref_muon_plan_make(&o, &r, &pl);
  ck_assert(pl.update_scale == 0 && pl.alpha == 0.005);
}
END_TEST

/* spec/profiles/timm.md sections 1, 1.1, 2, 4, 5, 6: timm's defaults, its
 * checks and their exact messages (upstream's _validate_scalar wording,
 * timm/optim/muon.py @aa4b5850), the routing heuristic on the docstring's
 * examples and its boundaries, rms_to_rms, the quintic list repeating its
 * last triple, NAdamW under nesterov, the safety factor's range. */
START_TEST(timm_profile_defaults_catalogue_and_routing)
{
  muonref_error e;
  muonref_options o, t;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_TIMM, &e), MUONREF_OK);
  ck_assert_str_eq(muonref_profile_name(MUONREF_PROFILE_TIMM), "timm");
  ck_assert(o.lr == 0.02 && o.weight_decay == 0.0 && o.momentum == 0.95 && o.nesterov == 0 && o.ns_steps == 5);
  ck_assert(o.ns_eps == 1e-7 && o.adam_eps == 1e-7 && o.ns_safety == 1.0 && o.adam_lr_ratio == 1.0);
  ck_assert(o.adam_beta1 == 0.9 && o.adam_beta2 == 0.95 && o.scale_mode == MUONREF_SCALE_RMS_ADAMW);
  ck_assert(o.momentum_form == MUONREF_MOMENTUM_EMA && o.eps_mode == MUONREF_EPS_CLAMP && o.bf16_order == MUONREF_BF16_FUSED);
  ck_assert(o.route_rule == MUONREF_ROUTE_TIMM && o.catalogue == MUONREF_CATALOGUE_TIMM);
  ck_assert(o.adam_variant == MUONREF_ADAM_FOLLOW_NESTEROV && o.coeff_order == MUONREF_ORDER_REPEAT_LAST);
  ck_assert(o.n_coeffs == 5 && o.coeffs[0].a == 4.0848 && o.coeffs[4].c == 1.2012);
  muonref_coeff k7 = muonref_ns_coeff_at(&o, 7); /* coeffs + [coeffs[-1]] * (steps - n) */
  ck_assert(k7.a == 2.8366 && k7.b == -3.0525 && k7.c == 1.2012);
  static const struct { int field; double v; const char *msg; } C[] = {
    {0, -1.0, "Invalid learning rate: -1.0"},   {1, -0.01, "Invalid weight_decay: -0.01"},
    {2, 1.0, "Invalid momentum: 1.0"},          {2, -0.5, "Invalid momentum: -0.5"},
    {3, -1e-7, "Invalid epsilon: -1e-07"},      {4, -3, "Invalid number of Newton-Schulz steps: -3"},
    {5, 0.0, "Invalid Newton-Schulz safety factor: 0.0"}, {0, NAN, "Invalid learning rate: nan"},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    t = o;
    if (C[k].field == 0) t.lr = C[k].v;
    if (C[k].field == 1) t.weight_decay = C[k].v;
    if (C[k].field == 2) t.momentum = C[k].v;
    if (C[k].field == 3) t.ns_eps = C[k].v;
    if (C[k].field == 4) t.ns_steps = (int)C[k].v;
    if (C[k].field == 5) t.ns_safety = C[k].v;
    ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
    ck_assert_str_eq(e.message, C[k].msg);
  }
  t = o, t.lr = -1.0, t.weight_decay = -1.0; /* timm's order: lr first */
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid learning rate: -1.0");
  t = o, t.ns_steps = 0, t.ns_safety = 1.01; /* 0 steps: no iteration */
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_OK);
  static const struct { int ndim; size_t d[4]; int muon; size_t rows, cols; } R[] = {
    {2, {64, 128}, 1, 64, 128}, {4, {96, 3, 4, 4}, 1, 96, 48}, {2, {4, 2048}, 0, 8192, 1}, {1, {64}, 0, 64, 1},
    {3, {1, 196, 768}, 0, 150528, 1}, {2, {3, 16}, 0, 48, 1}, {2, {4, 512}, 1, 4, 512}, {2, {4, 516}, 0, 2064, 1},
    {2, {512, 4}, 1, 512, 4}, {4, {8, 1, 3, 3}, 0, 72, 1}, {3, {16, 1, 1}, 0, 16, 1}, {2, {1, 1}, 0, 1, 1},
  };
  for (size_t k = 0; k < sizeof R / sizeof R[0]; k++) {
    muonref_shape s = {R[k].ndim, {R[k].d[0], R[k].d[1], R[k].d[2], R[k].d[3]}};
    muonref_route r;
    ck_assert_int_eq(muonref_route_param(&o, &s, &r, &e), MUONREF_OK);
    ck_assert_msg(r.use_muon == R[k].muon && r.rows == R[k].rows && r.cols == R[k].cols, "shape %zu", k);
  }
  muonref_shape bias = {1, {48}}, tall = {3, {16, 1, 1}};
  muonref_route r;
  t = o, t.use_muon = MUONREF_USE_MUON_TRUE; /* no shape check but the Newton-Schulz input's */
  ck_assert_int_eq(muonref_route_param(&t, &bias, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Input must be 2D or 3D, got 1D. Flatten batch dims first.");
  ck_assert_int_eq(muonref_route_param(&t, &tall, &r, &e), MUONREF_OK);
  ck_assert(r.use_muon && r.rows == 16 && r.cols == 1);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_RMS_TO_RMS, 16, 64) == 0.5);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_RMS_TO_RMS, 64, 16) == 2.0);
  muonref_adamw_plan pl;
  muonref_adamw_plan_make(&o, 1, &pl);
  ck_assert(!pl.nadamw && pl.eps == 1e-7 && pl.lr == 0.02);
  t = o, t.nesterov = 1;
  muonref_adamw_plan_make(&t, 1, &pl);
  ck_assert(pl.nadamw);
  t.adam_variant = MUONREF_ADAM_ADAMW;
  muonref_adamw_plan_make(&t, 1, &pl);
  ck_assert(!pl.nadamw);
  ck_assert_str_eq(muonref_adam_variant_name(MUONREF_ADAM_FOLLOW_NESTEROV), "follow_nesterov");
  ck_assert_str_eq(muonref_route_rule_name(MUONREF_ROUTE_TIMM), "timm");
  ck_assert_str_eq(muonref_catalogue_name(MUONREF_CATALOGUE_TIMM), "timm");
  ck_assert_str_eq(muonref_scale_mode_name(MUONREF_SCALE_RMS_TO_RMS), "rms_to_rms");
  t = o, t.adam_variant = (muonref_adam_variant)4;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message,
                   "Unknown adam_variant 4, expected one of ('adamw', 'nadamw', 'follow_nesterov', 'optax_follow_nesterov')");
}
END_TEST

/* The initializer by id gives the profile's options bit for bit, valid;
 * an id without a profile is refused and writes nothing. */
START_TEST(options_init_by_profile_id)
{
  muonref_error e;
  ck_assert_uint_eq(muonref_profile_count(), MUONREF_PROFILE_COUNT);
  for (int id = 0; id < MUONREF_PROFILE_COUNT; id++) {
    ck_assert_ptr_nonnull(muonref_profile_name((size_t)id)); /* every id has its row */
    muonref_options a, b;
    memset(&a, 0xa5, sizeof a), memset(&b, 0x5a, sizeof b);
    ck_assert_int_eq(muonref_options_init(&a, (muonref_profile_id)id, &e), MUONREF_OK);
    ck_assert_int_eq(muonref_profile_options(muonref_profile_name((size_t)id), &b, &e), MUONREF_OK);
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    ck_assert_int_eq(muonref_options_validate(&a, &e), MUONREF_OK);
  }
  ck_assert_str_eq(muonref_profile_name(MUONREF_PROFILE_NEMO), "nemo");
  muonref_options o, before;
  memset(&o, 0x11, sizeof o), before = o;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_COUNT, &e), MUONREF_EOPTION);
  char want[96];
  snprintf(want, sizeof want, "Unknown profile id %d, expected 0 to %d", MUONREF_PROFILE_COUNT, MUONREF_PROFILE_COUNT - 1);
  ck_assert_str_eq(e.message, want);
  ck_assert(memcmp(&o, &before, sizeof o) == 0);
  ck_assert_int_eq(muonref_options_init(&o, (muonref_profile_id)-1, &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_options_init(NULL, MUONREF_PROFILE_NEMO, &e), MUONREF_EOPTION);
}
END_TEST

/* ---- the error catalogue: every invalid option with its exact message ---- */
typedef void (*mutate)(muonref_options *);
#define M(name, body) static void name(muonref_options *o) { body; }
M(m_lr, o->lr = -1.0)
M(m_lr_nan, o->lr = NAN)
M(m_lr_inf, o->lr = INFINITY)
M(m_mom_hi, o->momentum = 1.0)
M(m_mom_lo, o->momentum = -0.5)
M(m_steps0, o->ns_steps = 0)
M(m_steps_big, o->ns_steps = 1001)
M(m_wd, o->weight_decay = -0.01)
M(m_beta1, o->adam_beta1 = 1.0)
M(m_beta2, o->adam_beta2 = -0.1)
M(m_beta_nan, o->adam_beta2 = NAN)
M(m_eps, o->adam_eps = -1e-8)
M(m_ratio, o->adam_lr_ratio = -0.025)
M(m_thr, o->adam_dim_threshold = 0)
M(m_scale, o->scale_mode = (muonref_scale_mode)9)
M(m_nesterov, o->nesterov = 2)
M(m_use_muon, o->use_muon = (muonref_use_muon)3)
M(m_form, o->momentum_form = (muonref_momentum_form)5)
M(m_ncoef0, o->n_coeffs = 0)
M(m_ncoef_big, o->n_coeffs = 33)
M(m_coef_nan, o->coeffs[0].b = NAN)
M(m_order, o->coeff_order = (muonref_coeff_order)3)
M(m_nseps, o->ns_eps = -1.0)
M(m_epsmode, o->eps_mode = (muonref_eps_mode)3)
M(m_format, o->ns_format = (muonref_ns_format)3)
M(m_m2eps_scaled, o->moment2_eps_mode = MUONREF_EPS_ADD_SCALED)
#undef M

static const struct { mutate f; const char *message; } CATALOGUE[] = {
  {m_lr, "Invalid learning rate: -1.0"},
  {m_lr_nan, "Invalid learning rate: nan"},
  {m_lr_inf, "Invalid learning rate: inf"},
  {m_mom_hi, "Invalid momentum: 1.0"},
  {m_mom_lo, "Invalid momentum: -0.5"},
  {m_steps0, "Invalid number of Newton-Schulz steps: 0"},
  {m_steps_big, "Invalid number of Newton-Schulz steps: 1001"},
  {m_wd, "Invalid weight decay: -0.01"},
  {m_beta1, "Invalid AdamW betas: (1.0, 0.95)"},
  {m_beta2, "Invalid AdamW betas: (0.9, -0.1)"},
  {m_beta_nan, "Invalid AdamW betas: (0.9, nan)"},
  {m_eps, "Invalid AdamW epsilon: -1e-08"},
  {m_ratio, "Invalid AdamW learning rate ratio: -0.025"},
  {m_thr, "Invalid AdamW dimension threshold: 0"},
  {m_scale, "Unknown scale_mode 9, expected one of ('fan_in', 'fan_out', 'none', 'rms_adamw', 'rms_to_rms', 'sqrt_max', 'ratio_cols', 'rms_numel', 'rsqrt_cols')"},
  {m_nesterov, "Invalid nesterov: 2 (expected 0 or 1)"},
  {m_use_muon, "Invalid use_muon: 3 (expected None, False or True)"},
  {m_form, "Unknown momentum_form 5, expected one of ('sum', 'ema')"},
  {m_ncoef0, "Invalid number of Newton-Schulz coefficient triples: 0 (expected 1 to 32)"},
  {m_ncoef_big, "Invalid number of Newton-Schulz coefficient triples: 33 (expected 1 to 32)"},
  {m_coef_nan, "Invalid Newton-Schulz coefficient b of triple 0: nan"},
  {m_order, "Unknown coeff_order 3, expected one of ('cycle', 'repeat_last', 'list')"},
  {m_nseps, "Invalid Newton-Schulz epsilon: -1.0"},
  {m_epsmode, "Unknown eps_mode 3, expected one of ('add', 'clamp', 'add_scaled')"},
  {m_format, "Unknown ns_format 3, expected one of ('bf16', 'fp32', 'exact')"},
  {m_m2eps_scaled, "Invalid moment2_eps_mode 'add_scaled' (expected 'add' or 'clamp')"},
};

START_TEST(catalogue_option_messages)
{
  muonref_options o = nemo();
  muonref_error e;
  CATALOGUE[_i].f(&o);
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  ck_assert_int_eq(e.status, MUONREF_EOPTION);
  ck_assert_str_eq(e.message, CATALOGUE[_i].message);
}
END_TEST

START_TEST(catalogue_first_violation_wins_in_nemo_order)
{
  muonref_options o = nemo();
  muonref_error e;
  o.lr = -1.0;
  o.momentum = 2.0;
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid learning rate: -1.0");
  o = nemo();
  o.lr = 0.0; /* the boundaries are valid */
  o.momentum = 0.0;
  o.weight_decay = 0.0;
  o.adam_eps = 0.0;
  o.ns_steps = 1;
  o.adam_dim_threshold = 1;
  ck_assert_int_eq(muonref_options_validate(&o, NULL), MUONREF_OK);
}
END_TEST

START_TEST(enum_parse_messages)
{
  muonref_error e;
  muonref_scale_mode m;
  ck_assert_int_eq(muonref_scale_mode_parse("rows", &m, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Unknown scale_mode 'rows', expected one of ('fan_in', 'fan_out', 'none')");
  ck_assert_int_eq(muonref_scale_mode_parse("fan_out", &m, &e), MUONREF_OK);
  ck_assert_int_eq(m, MUONREF_SCALE_FAN_OUT);
  muonref_ns_format f;
  ck_assert_int_eq(muonref_ns_format_parse("fp16", &f, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Unknown ns_format 'fp16', expected one of ('bf16', 'fp32', 'exact')");
  muonref_eps_mode em;
  ck_assert_int_eq(muonref_eps_mode_parse("clamp", &em, NULL), MUONREF_OK);
  ck_assert_int_eq(em, MUONREF_EPS_CLAMP);
  muonref_coeff_order co;
  ck_assert_int_eq(muonref_coeff_order_parse("repeat_last", &co, NULL), MUONREF_OK);
  ck_assert_int_eq(co, MUONREF_ORDER_REPEAT_LAST);
  muonref_momentum_form mf;
  ck_assert_int_eq(muonref_momentum_form_parse("ema", &mf, NULL), MUONREF_OK);
  ck_assert_int_eq(mf, MUONREF_MOMENTUM_EMA);
}
END_TEST

/* ---- routing (the seed's test_parameter_selection) ---- */
static muonref_route route(const muonref_options *o, int ndim, const size_t *dims, int expect_status)
{
  muonref_shape s = {.ndim = ndim};
  memcpy(s.dims, dims, (size_t)ndim * sizeof *dims);
  muonref_route r = {0};
  ck_assert_int_eq(muonref_route_param(o, &s, &r, NULL), expect_status);
  return r;
}

START_TEST(routing_by_shape)
{
  muonref_options o = nemo();
  ck_assert(route(&o, 2, (size_t[]){48, 32}, 0).use_muon);
  ck_assert(route(&o, 2, (size_t[]){64, 16}, 0).use_muon);
  ck_assert(!route(&o, 1, (size_t[]){48}, 0).use_muon);
  ck_assert(!route(&o, 4, (size_t[]){8, 4, 3, 3}, 0).use_muon);
  ck_assert(!route(&o, 2, (size_t[]){8200, 16}, 0).use_muon);
  ck_assert(!route(&o, 2, (size_t[]){8192, 16}, 0).use_muon); /* threshold is exclusive */
  ck_assert(route(&o, 2, (size_t[]){8191, 16}, 0).use_muon);
  ck_assert(route(&o, 2, (size_t[]){1026, 512}, 0).use_muon); /* small-vocabulary embedding */
  ck_assert(!route(&o, 0, (size_t[]){0}, 0).use_muon);         /* a scalar */
  o.adam_dim_threshold = 48;
  ck_assert(!route(&o, 2, (size_t[]){48, 32}, 0).use_muon);
}
END_TEST

START_TEST(routing_forced)
{
  muonref_options o = nemo();
  o.use_muon = MUONREF_USE_MUON_FALSE;
  ck_assert(!route(&o, 2, (size_t[]){48, 32}, 0).use_muon);
  o.use_muon = MUONREF_USE_MUON_TRUE;
  muonref_route r = route(&o, 4, (size_t[]){8, 4, 3, 3}, 0);
  ck_assert(r.use_muon && r.rows == 8 && r.cols == 36 && r.numel == 288);
  r = route(&o, 2, (size_t[]){8200, 16}, 0);
  ck_assert(r.use_muon && r.rows == 8200 && r.cols == 16);
}
END_TEST

START_TEST(routing_errors)
{
  muonref_options o = nemo();
  muonref_error e;
  muonref_route r;
  o.use_muon = MUONREF_USE_MUON_TRUE;
  muonref_shape bias = {.ndim = 1, .dims = {48}};
  ck_assert_int_eq(muonref_route_param(&o, &bias, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "use_muon=True needs at least two dimensions, got shape (48,)");
  muonref_shape scalar = {.ndim = 0};
  ck_assert_int_eq(muonref_route_param(&o, &scalar, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "use_muon=True needs at least two dimensions, got shape ()");
  muonref_shape zero = {.ndim = 2, .dims = {0, 4}};
  ck_assert_int_eq(muonref_route_param(&o, &zero, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Invalid parameter shape (0, 4): every dimension must be at least 1");
  muonref_shape deep = {.ndim = 9};
  ck_assert_int_eq(muonref_route_param(&o, &deep, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Invalid parameter shape: 9 dimensions, at most 8 are supported");
}
END_TEST

START_TEST(transpose_rule)
{
  muonref_error e;
  muonref_shape t3 = {3, {3, 4, 5}}, m = {2, {3, 4}};
  ck_assert_int_eq(muonref_ns_check_shape(&t3, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Expected a matrix, got a tensor of shape (3, 4, 5)");
  ck_assert_int_eq(muonref_ns_check_shape(&m, &e), MUONREF_OK);
  ck_assert(muonref_ns_transposes(64, 16));
  ck_assert(!muonref_ns_transposes(16, 64));
  ck_assert(!muonref_ns_transposes(32, 32));
}
END_TEST

/* ---- scale rules (the seed's test_scale_modes) ---- */
START_TEST(scale_factors)
{
  ck_assert(muonref_scale_factor(MUONREF_SCALE_FAN_IN, 64, 16) == 2.0);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_FAN_OUT, 64, 16) == 1.0);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_FAN_IN, 16, 64) == 1.0);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_FAN_OUT, 16, 64) == 2.0);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_NONE, 64, 16) == 1.0);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_FAN_IN, 48, 32) == sqrt(1.5));
  /* rms_adamw: Python's 0.2 * math.sqrt(max(A, B)) printed 1.6, 1.1313708498984762 */
  ck_assert(muonref_scale_factor(MUONREF_SCALE_RMS_ADAMW, 64, 16) == 1.6);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_RMS_ADAMW, 16, 64) == 1.6);
  ck_assert(muonref_scale_factor(MUONREF_SCALE_RMS_ADAMW, 32, 32) == 1.1313708498984762);
}
END_TEST

/* ---- coefficient order ---- */
START_TEST(coefficient_order)
{
  muonref_options o = nemo();
  o.n_coeffs = 3;
  for (int k = 0; k < 3; k++)
    o.coeffs[k] = (muonref_coeff){k + 1.0, -(k + 1.0), 0.5 * k};
  int cyc[] = {0, 1, 2, 0, 1, 2, 0}, rep[] = {0, 1, 2, 2, 2, 2, 2};
  for (int k = 0; k < 7; k++) {
    o.coeff_order = MUONREF_ORDER_CYCLE;
    ck_assert(muonref_ns_coeff_at(&o, k).a == o.coeffs[cyc[k]].a);
    o.coeff_order = MUONREF_ORDER_REPEAT_LAST;
    ck_assert(muonref_ns_coeff_at(&o, k).a == o.coeffs[rep[k]].a);
  }
  const muonref_preset *p = muonref_preset_find("original");
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(p->name, "simple");
  ck_assert_ptr_null(muonref_preset_find("no-such-preset"));
}
END_TEST

/* ---- scalar schedule ---- */
START_TEST(muon_plan_forms)
{
  muonref_options o = nemo();
  o.weight_decay = 0.01;
  muonref_route r = {1, 64, 16, 1024, 1, 64, 16, 0, 0, 0, 0.0};
  muonref_muon_plan p;
  muonref_muon_plan_make(&o, &r, &p);
  ck_assert(p.mom_keep == 0.95 && p.mom_grad == 1.0 && p.in_grad == 1.0 && p.in_mom == 0.95);
  ck_assert(p.apply_decay && p.decay == 1.0 - 0.02 * 0.01); /* unscaled lr */
  ck_assert(p.scale == 2.0 && p.alpha == 0.04);
  o.momentum_form = MUONREF_MOMENTUM_EMA;
  o.nesterov = 0;
  o.weight_decay = 0.0;
  muonref_muon_plan_make(&o, &r, &p);
  ck_assert(p.mom_grad == 1.0 - 0.95 && p.in_grad == 0.0 && p.in_mom == 1.0 && !p.apply_decay);
  o.nesterov = 1;
  muonref_muon_plan_make(&o, &r, &p);
  ck_assert(p.in_grad == 1.0 - 0.95 && p.in_mom == 0.95);
}
END_TEST

/* decay_method (spec/muon.md 4; Emerging-Optimizers mixin.py weight_decay_method): the lr in the
 * Muon decay, once (decoupled), not at all (independent) or squared (palm), or the decay added to the
 * gradient (l2), the AdamW decay unchanged; a value outside the enum is refused by name. */
START_TEST(muon_plan_decay_methods)
{
  muonref_options o = nemo();
  o.lr = 0.3, o.weight_decay = 0.1;
  muonref_route r = {1, 64, 16, 1024, 1, 64, 16, 0, 0, 0, 0.0};
  muonref_muon_plan p;
  muonref_adamw_plan a;
  muonref_adamw_plan_make(&o, 1, &a);
  double adam_decay = a.decay;
  static const struct { muonref_decay_method m; double decay; const char *name; } M[] = {
    {MUONREF_DECAY_DECOUPLED, 1.0 - 0.3 * 0.1, "decoupled"},
    {MUONREF_DECAY_INDEPENDENT, 1.0 - 0.1, "independent"},
    {MUONREF_DECAY_PALM, 1.0 - 0.1 * 0.3 * 0.3, "palm"},
  };
  muonref_error e;
  for (size_t k = 0; k < sizeof M / sizeof M[0]; k++) {
    o.decay_method = M[k].m;
    muonref_muon_plan_make(&o, &r, &p);
    ck_assert_msg(p.apply_decay && p.decay == M[k].decay, "%s: decay %.17g", M[k].name, p.decay);
    muonref_adamw_plan_make(&o, 1, &a);
    ck_assert(a.decay == adam_decay);
    ck_assert_str_eq(muonref_decay_method_name(M[k].m), M[k].name);
    ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_OK);
  }
  /* l2: no decay of P; wd goes to the gradient (plan.l2), and nothing at all with wd 0 */
  o.decay_method = MUONREF_DECAY_L2;
  muonref_muon_plan_make(&o, &r, &p);
  ck_assert(!p.apply_decay && p.l2 == 0.1);
  ck_assert_str_eq(muonref_decay_method_name(MUONREF_DECAY_L2), "l2");
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_OK);
  o.weight_decay = 0.0;
  muonref_muon_plan_make(&o, &r, &p);
  ck_assert(!p.apply_decay && p.l2 == 0.0);
  o.decay_method = MUONREF_DECAY_DECOUPLED;
  muonref_muon_plan_make(&o, &r, &p);
  ck_assert(p.l2 == 0.0);
  o.decay_method = (muonref_decay_method)4;
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Unknown decay_method 4, expected one of ('decoupled', 'independent', 'palm', 'l2')");
}
END_TEST

START_TEST(adamw_plan_bias_corrections)
{
  muonref_options o = nemo();
  o.weight_decay = 0.1;
  muonref_adamw_plan p;
  for (long t = 1; t <= 3; t++) {
    muonref_adamw_plan_make(&o, t, &p);
    double bc1 = 1.0 - pow(0.9, (double)t), bc2 = 1.0 - pow(0.95, (double)t);
    ck_assert(p.lr == 0.02 * 0.025);
    ck_assert(p.bias_correction1 == bc1 && p.bias_correction2 == bc2 && p.sqrt_bc2 == sqrt(bc2));
    ck_assert(p.step_size == 0.02 * 0.025 / bc1);
    ck_assert(p.decay == 1.0 - 0.02 * 0.025 * 0.1 && p.apply_decay);
  }
  muonref_adamw_plan_make(&o, 1, &p);
  ck_assert(fabs(p.bias_correction1 - 0.1) < 1e-15);
}
END_TEST

/* adam_eps_root (optax scale_by_adam: sqrt(v_hat + eps_root) + eps, spec/muon.md 9): the plan's
 * eps_root * bc2, 0 by default; one fast AdamW step on a bias with g = 3 and eps_root 16 moves it by
 * step_size m / (sqrt(v / bc2 + 16) + eps) = lr_a / 0.1 * 0.3 / (sqrt(9 + 16) + 1e-8), optax's form
 * in binary64 here (m_hat = g, v_hat = g^2 at t = 1), within an ulp of the float; a negative value
 * is refused. */
START_TEST(adamw_plan_eps_root)
{
  muonref_options o = nemo();
  muonref_adamw_plan p;
  muonref_adamw_plan_make(&o, 2, &p);
  ck_assert(p.eps_root_bc2 == 0.0);
  o.adam_eps_root = 16.0;
  muonref_adamw_plan_make(&o, 2, &p);
  ck_assert(p.eps_root_bc2 == 16.0 * p.bias_correction2);
  muonref_shape s = {1, {2}};
  muonref_group gr = {o, 1, &s};
  gr.options.adam_dim_threshold = 8192;
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create(&gr, 1, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  float par[2] = {1.0f, -2.0f}, g[2] = {3.0f, -3.0f}, *pp[1] = {par};
  muonref_grad gd[1] = {{g, MUONREF_DENSE, MUONREF_FLOAT32}};
  ck_assert_int_eq(muonref_optimizer_step(opt, 1, pp, gd, &e), MUONREF_OK);
  double lr_a = 0.02 * 0.025, bc1 = 1.0 - 0.9, m = 0.1 * 3.0, v = 0.05 * 9.0, bc2 = 1.0 - 0.95;
  double want = 1.0 - lr_a / bc1 * m / (sqrt(v / bc2 + 16.0) + 1e-8); /* about 1 - 0.005 * 0.3 / 5 */
  ck_assert_msg(fabs(par[0] - want) <= nextafterf((float)want, 2.0f) - (float)want, "%.9g vs %.17g", par[0], want);
  ck_assert_msg(fabs(par[0] - 0.9997) < 1e-6, "%.9g", par[0]); /* not 1 - 0.005 * 0.3 / 3 = 0.9995 */
  muonref_optimizer_free(opt);
  o.adam_eps_root = -1.0;
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid AdamW eps_root (adam_eps_root): -1.0");
}
END_TEST

/* adam_l2 (Megatron's Adam with decoupled_weight_decay False: torch.optim.Adam's
 * `grad = grad.add(param, alpha=weight_decay)`, spec/muon.md 9): the plan takes the decay into l2 and
 * applies none to P; one fast step on a bias P = 2, g = 0 with wd 0.5 gives the moments g' = 1, so
 * at t = 1 the step is lr_a / bc1 * 0.1 / (sqrt(0.05) / sqrt(0.05) + 1e-8), about lr_a, where the
 * decoupled decay would leave P (1 - lr_a wd) with no step; a value other than 0 or 1 is refused. */
START_TEST(adamw_plan_l2)
{
  muonref_options o = nemo();
  o.weight_decay = 0.5, o.adam_l2 = 1;
  muonref_adamw_plan p;
  muonref_adamw_plan_make(&o, 1, &p);
  ck_assert(!p.apply_decay && p.l2 == 0.5);
  o.adam_decay_own = 1, o.adam_weight_decay = 0.25;
  muonref_adamw_plan_make(&o, 1, &p);
  ck_assert(!p.apply_decay && p.l2 == 0.25);
  o.adam_decay_own = 0;
  muonref_shape s = {1, {2}};
  muonref_group gr = {o, 1, &s};
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create(&gr, 1, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  float par[2] = {2.0f, -2.0f}, g[2] = {0.0f, 0.0f}, *pp[1] = {par};
  muonref_grad gd[1] = {{g, MUONREF_DENSE, MUONREF_FLOAT32}};
  ck_assert_int_eq(muonref_optimizer_step(opt, 1, pp, gd, &e), MUONREF_OK);
  double lr_a = 0.02 * 0.025, want = 2.0 - lr_a / 0.1 * 0.1 / (1.0 + 1e-8); /* m = 0.1 * 1, v = 0.05 * 1 */
  ck_assert_msg(fabs(par[0] - want) < 1e-6 && fabs(par[1] + want) < 1e-6, "%.9g %.9g vs %.9g", par[0], par[1], want);
  ck_assert(g[0] == 0.0f); /* the caller's gradient is not written */
  muonref_optimizer_free(opt);
  o.adam_l2 = 2;
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid adam_l2: 2 (expected 0 or 1)");
}
END_TEST

/* ---- gradient checks ---- */
START_TEST(gradient_checks)
{
  muonref_error e;
  float g[3] = {1, 2, 3};
  muonref_grad ok = {g, MUONREF_DENSE, MUONREF_FLOAT32};
  ck_assert_int_eq(muonref_grad_check(&ok, 0, 3, &e), MUONREF_OK);
  muonref_grad none = {NULL, MUONREF_SPARSE, MUONREF_COMPLEX64};
  ck_assert_int_eq(muonref_grad_check(&none, 0, 3, &e), MUONREF_OK);
  muonref_grad sparse = {g, MUONREF_SPARSE, MUONREF_FLOAT32};
  ck_assert_int_eq(muonref_grad_check(&sparse, 0, 3, &e), MUONREF_EGRAD);
  ck_assert_str_eq(e.message, "Muon does not support sparse gradients");
  muonref_grad cplx = {g, MUONREF_DENSE, MUONREF_COMPLEX64};
  ck_assert_int_eq(muonref_grad_check(&cplx, 0, 3, &e), MUONREF_EGRAD);
  ck_assert_str_eq(e.message, "Muon does not support complex gradients");
  g[2] = -INFINITY;
  ck_assert_int_eq(muonref_grad_check(&ok, 4, 3, &e), MUONREF_ENONFINITE);
  ck_assert_str_eq(e.message, "Non-finite gradient for parameter 4: element 2 is -inf");
  g[1] = NAN;
  ck_assert_int_eq(muonref_grad_check(&ok, 4, 3, &e), MUONREF_ENONFINITE);
  ck_assert_str_eq(e.message, "Non-finite gradient for parameter 4: element 1 is nan");
}
END_TEST

START_TEST(status_names_and_errors)
{
  muonref_error e;
  ck_assert_int_eq(muonref_fail(&e, MUONREF_EIO, "x %d", 3), MUONREF_EIO);
  ck_assert_str_eq(e.message, "x 3");
  ck_assert_str_eq(muonref_status_name(MUONREF_ESHAPE), "MUONREF_ESHAPE");
  ck_assert_str_eq(muonref_status_name(42), "unknown");
  muonref_error_clear(&e);
  ck_assert_int_eq(e.status, 0);
  ck_assert_str_eq(e.message, "");
  ck_assert_int_eq(muonref_fail(NULL, MUONREF_EOPTION, "ignored"), MUONREF_EOPTION);
}
END_TEST

/* optax (spec/profiles/optax.md): the row; the bias-corrected Nesterov input
 * and optax's NAdam numerator, by hand from the formulas (beta 0.95, t = 1:
 * beta / (1 - beta^2) = 0.95 / 0.0975, (1 - beta) / (1 - beta) = 1; b1 0.9,
 * t = 1: 0.9 / 0.19 and 0.1 / 0.1, step size lr without 1 / bc1); the decay
 * of its own; the routing by ndim; the list run once and its message. */
START_TEST(optax_profile_plan_routing_and_list)
{
  muonref_options o, t;
  muonref_error e;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_OPTAX, &e), MUONREF_OK);
  ck_assert_str_eq(muonref_profile_name(MUONREF_PROFILE_OPTAX), "optax");
  ck_assert(o.momentum_form == MUONREF_MOMENTUM_EMA && o.nesterov == 1 && o.ns_eps == 1e-8);
  ck_assert(o.eps_mode == MUONREF_EPS_ADD && o.ns_format == MUONREF_NS_FP32 && o.scale_mode == MUONREF_SCALE_FAN_OUT);
  ck_assert(o.adam_beta1 == 0.9 && o.adam_beta2 == 0.999 && o.adam_eps == 1e-8 && o.adam_lr_ratio == 1.0);
  ck_assert(o.coeff_order == MUONREF_ORDER_LIST && o.n_coeffs == 1 && o.coeffs[0].a == 3.4445);
  ck_assert(o.momentum_bias_correction == 1 && o.adam_decay_own == 1 && o.adam_weight_decay == 0.0);
  ck_assert(o.route_rule == MUONREF_ROUTE_NDIM_2 && o.catalogue == MUONREF_CATALOGUE_OPTAX);
  ck_assert_str_eq(muonref_route_rule_name(MUONREF_ROUTE_NDIM_2), "ndim_2");
  ck_assert_str_eq(muonref_catalogue_name(MUONREF_CATALOGUE_OPTAX), "optax");
  ck_assert_str_eq(muonref_coeff_order_name(MUONREF_ORDER_LIST), "list");
  /* the Muon input */
  muonref_route r = {1, 8, 16, 128, 1, 8, 16, 0, 0, 0, 0.0};
  muonref_muon_plan pl;
  muonref_muon_plan_make(&o, &r, &pl);
  muonref_muon_plan_correct(&o, 1, &pl);
  ck_assert(pl.nesterov == 1);
  ck_assert_double_eq_tol(pl.in_mom, 0.95 / 0.0975, 1e-14);
  ck_assert_double_eq_tol(pl.in_grad, 1.0, 1e-14);
  ck_assert_double_eq_tol(pl.alpha, 0.02 * sqrt(2.0), 1e-16); /* fan_out: sqrt(16 / 8) */
  t = o, t.nesterov = 0;
  muonref_muon_plan_make(&t, &r, &pl);
  muonref_muon_plan_correct(&t, 2, &pl);
  ck_assert(pl.nesterov == 1 && pl.in_grad == 0.0);
  ck_assert_double_eq_tol(pl.in_mom, 1.0 / 0.0975, 1e-12);
  t = o, t.momentum_bias_correction = 0; /* as before: (1 - beta) G + beta M */
  muonref_muon_plan_make(&t, &r, &pl);
  muonref_muon_plan_correct(&t, 3, &pl);
  ck_assert(pl.in_mom == 0.95 && pl.in_grad == 1.0 - 0.95);
  /* the Adam branch: NAdam with nesterov, AdamW without; its own decay */
  muonref_adamw_plan ap;
  t = o, t.weight_decay = 0.5, t.adam_weight_decay = 0.25;
  muonref_adamw_plan_make(&t, 1, &ap);
  ck_assert(ap.nadamw == 1 && ap.step_size == 0.02 && ap.apply_decay);
  ck_assert_double_eq_tol(ap.num_mom, 0.9 / 0.19, 1e-14);
  ck_assert_double_eq_tol(ap.num_grad, 1.0, 1e-14);
  ck_assert_double_eq_tol(ap.decay, 1.0 - 0.02 * 0.25, 1e-16);
  t.nesterov = 0;
  muonref_adamw_plan_make(&t, 1, &ap);
  ck_assert(ap.nadamw == 0);
  ck_assert_double_eq_tol(ap.step_size, 0.02 / 0.1, 1e-14);
  t.adam_decay_own = 0; /* as before: the group's weight_decay */
  muonref_adamw_plan_make(&t, 1, &ap);
  ck_assert_double_eq_tol(ap.decay, 1.0 - 0.02 * 0.5, 1e-16);
  /* routing: every 2-D leaf, whatever its size; nothing else */
  muonref_route rr;
  ck_assert_int_eq(muonref_route_param(&o, &(muonref_shape){2, {9000, 16}}, &rr, &e), MUONREF_OK);
  ck_assert(rr.use_muon);
  ck_assert_int_eq(muonref_route_param(&o, &(muonref_shape){1, {64}}, &rr, &e), MUONREF_OK);
  ck_assert(!rr.use_muon);
  ck_assert_int_eq(muonref_route_param(&o, &(muonref_shape){3, {2, 3, 4}}, &rr, &e), MUONREF_OK);
  ck_assert(!rr.use_muon);
  /* a triple runs ns_steps times; a list once, ns_steps only validated */
  t = o, t.ns_steps = 7;
  ck_assert_int_eq(muonref_ns_step_count(&t), 7);
  muonref_preset_apply(muonref_preset_find("quintic"), &t);
  t.coeff_order = MUONREF_ORDER_LIST;
  ck_assert_int_eq(muonref_ns_step_count(&t), 5);
  ck_assert(muonref_ns_coeff_at(&t, 4).a == 2.8366);
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_OK);
  t.ns_steps = 4; /* optax's message, the wrong way round as upstream words it */
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Not enough coeffs to perform 4 steps");
  t.catalogue = MUONREF_CATALOGUE_NONE; /* another catalogue has no such rule */
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_OK);
  t = o, t.momentum_bias_correction = 2;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid momentum_bias_correction: 2 (expected 0 or 1)");
  t = o, t.adam_weight_decay = NAN;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid AdamW weight decay: nan");
  t = o, t.route_rule = ROUTE_PAST_LAST;
  ck_assert_int_eq(muonref_options_validate(&t, &e), MUONREF_EOPTION);
}
END_TEST

/* ---- keras (spec/profiles/keras.md): routing by name, AdamW decay and step count ---- */

static muonref_options keras(void)
{
  muonref_options o;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_KERAS, NULL), MUONREF_OK);
  return o;
}

/* The Muon/AdamW decision of shape s named `name` under o (1 Muon, 0 AdamW). */
static int keras_muon(const muonref_options *o, muonref_shape s, const char *name)
{
  muonref_route r;
  muonref_error e;
  ck_assert_msg(muonref_route_param_named(o, &s, name, &r, &e) == MUONREF_OK, "%s", e.message);
  return r.use_muon;
}

/* keras.md 7: exactly 2-D; "embedding" in any case; exclude_layers by
 * re.search (case-sensitive, anchors honoured); SUBSTRING_CI (Paddle) by
 * case-insensitive substring; no name: no name rule. */
START_TEST(keras_routing_by_name)
{
  muonref_options o = keras();
  muonref_shape m = {2, {8, 16}}, b = {1, {8}}, t3 = {3, {2, 4, 8}}, c4 = {4, {3, 3, 4, 8}};
  ck_assert_int_eq(o.route_rule, MUONREF_ROUTE_NDIM_2);
  ck_assert_str_eq(muonref_route_rule_name(MUONREF_ROUTE_NDIM_2), "ndim_2");
  ck_assert_str_eq(muonref_catalogue_name(MUONREF_CATALOGUE_KERAS), "keras");
  ck_assert_str_eq(muonref_pattern_match_name(MUONREF_MATCH_REGEX), "regex");
  ck_assert_ptr_null(muonref_route_rule_name(ROUTE_PAST_LAST));
  ck_assert_int_eq(keras_muon(&o, m, "dense/kernel"), 1);
  ck_assert_int_eq(keras_muon(&o, b, "dense/bias"), 0);
  ck_assert_int_eq(keras_muon(&o, t3, "attn/kernel"), 0);
  ck_assert_int_eq(keras_muon(&o, c4, "conv/kernel"), 0);
  ck_assert_int_eq(keras_muon(&o, m, "embedding/embeddings"), 0);
  ck_assert_int_eq(keras_muon(&o, m, "Token_EMBEDDING/table"), 0);
  ck_assert_int_eq(keras_muon(&o, m, NULL), 1);
  o.exclude_embeddings = 0;
  ck_assert_int_eq(keras_muon(&o, m, "embedding/embeddings"), 1);
  o.n_exclude_patterns = 2;
  snprintf(o.exclude_patterns[0], MUONREF_PATTERN_LEN, "dense.*out");
  snprintf(o.exclude_patterns[1], MUONREF_PATTERN_LEN, "^head");
  ck_assert_int_eq(keras_muon(&o, m, "dense_1/output"), 0);
  ck_assert_int_eq(keras_muon(&o, m, "Dense_1/output"), 1); /* case-sensitive */
  ck_assert_int_eq(keras_muon(&o, m, "head/kernel"), 0);
  ck_assert_int_eq(keras_muon(&o, m, "lm_head/kernel"), 1); /* anchored */
  ck_assert_int_eq(keras_muon(&o, m, NULL), 1);
  o.pattern_match = MUONREF_MATCH_SUBSTRING_CI; /* the same patterns as substrings: neither occurs literally */
  ck_assert_int_eq(keras_muon(&o, m, "dense_1/output"), 1);
  snprintf(o.exclude_patterns[0], MUONREF_PATTERN_LEN, "DENSE");
  ck_assert_int_eq(keras_muon(&o, m, "dense_1/kernel"), 0);
  o = keras();
  o.use_muon = MUONREF_USE_MUON_TRUE; /* the name rules apply to AUTO only */
  ck_assert_int_eq(keras_muon(&o, m, "embedding/embeddings"), 1);
}
END_TEST

START_TEST(keras_pattern_validation)
{
  muonref_options o = keras();
  muonref_error e;
  o.n_exclude_patterns = 1;
  snprintf(o.exclude_patterns[0], MUONREF_PATTERN_LEN, "(a");
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  ck_assert_msg(!strncmp(e.message, "Invalid exclude pattern '(a': ", 30), "%s", e.message);
  o.pattern_match = MUONREF_MATCH_SUBSTRING_CI; /* a substring needs no compiling */
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_OK);
  o.n_exclude_patterns = MUONREF_MAX_PATTERNS + 1;
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid number of exclude patterns: 9 (expected 0 to 8)");
  o = keras();
  o.adam_step_global = 2;
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid adam_step_global: 2 (expected 0 or 1)");
  o = keras();
  o.lr = -1.0, o.momentum = 1.0; /* keras checks no value */
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_OK);
}
END_TEST

/* keras.md 3, 6: the AdamW decay with adam_weight_decay and the Muon lr;
 * the bias corrections of the float32 betas (expected values: PyTorch
 * float32 `1 - torch.pow(torch.tensor(0.999), t)`). */
START_TEST(keras_adamw_plan)
{
  muonref_options o = keras();
  muonref_adamw_plan p;
  o.lr = 0.05, o.adam_lr_ratio = 0.1, o.adam_weight_decay = 0.2, o.weight_decay = 0.01;
  muonref_adamw_plan_make(&o, 1, &p);
  ck_assert(p.apply_decay && p.decay == 1.0 - 0.05 * 0.2);
  ck_assert(p.lr == 0.05 * 0.1);
  ck_assert(p.bias_correction2 == 0.0009999871253967285);
  ck_assert(p.eps == 1e-7 / sqrt(0.0009999871253967285)); /* epsilon hat: eps on the uncorrected sqrt(v) */
  muonref_adamw_plan_make(&o, 2, &p);
  ck_assert(p.bias_correction2 == 0.0019989609718322754);
  o.adam_decay_muon_lr = 0; /* the AdamW lr, as before */
  muonref_adamw_plan_make(&o, 1, &p);
  ck_assert(p.decay == 1.0 - (0.05 * 0.1) * 0.2);
  o.adam_decay_own = 0; /* weight_decay, as before */
  muonref_adamw_plan_make(&o, 1, &p);
  ck_assert(p.decay == 1.0 - (0.05 * 0.1) * 0.01);
  o.adam_bias_fp32 = 0;
  muonref_adamw_plan_make(&o, 2, &p);
  ck_assert(p.bias_correction2 == 1.0 - pow(0.999, 2.0));
  o = keras();
  o.adam_weight_decay = 0.0;
  muonref_adamw_plan_make(&o, 1, &p);
  ck_assert(!p.apply_decay);
}
END_TEST

/* keras.md 3: one step count for the optimizer; a step without any
 * gradient is refused with base_optimizer.py's message. */
START_TEST(keras_global_step_and_empty_step)
{
  muonref_options o = keras();
  muonref_shape sh[2] = {{2, {4, 8}}, {1, {4}}};
  const char *names[2] = {"dense/kernel", "dense/bias"};
  muonref_group g = {o, 2, sh};
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create_named(&g, 1, names, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  float w[32] = {1.0f}, bias[4] = {1.0f, 2.0f, 3.0f, 4.0f}, gw[32], gb[4] = {0.5f, -0.5f, 1.0f, -1.0f};
  for (int i = 0; i < 32; i++)
    gw[i] = (float)(i % 5) - 2.0f;
  float *params[2] = {w, bias};
  muonref_grad none[2] = {{NULL, MUONREF_DENSE, MUONREF_FLOAT32}, {NULL, MUONREF_DENSE, MUONREF_FLOAT32}};
  ck_assert_int_eq(muonref_optimizer_step(opt, 2, params, none, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "No gradients provided for any variable.");
  muonref_grad only_w[2] = {{gw, MUONREF_DENSE, MUONREF_FLOAT32}, {NULL, MUONREF_DENSE, MUONREF_FLOAT32}};
  ck_assert_int_eq(muonref_optimizer_step(opt, 2, params, only_w, &e), MUONREF_OK);
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(opt, 1, &st, &e), MUONREF_OK);
  ck_assert(st.initialized && st.step == 1 && !st.use_muon); /* counted, untouched */
  ck_assert(bias[0] == 1.0f && st.exp_avg[0] == 0.0f && st.exp_avg_sq[0] == 0.0f);
  muonref_grad both[2] = {{gw, MUONREF_DENSE, MUONREF_FLOAT32}, {gb, MUONREF_DENSE, MUONREF_FLOAT32}};
  ck_assert_int_eq(muonref_optimizer_step(opt, 2, params, both, &e), MUONREF_OK);
  ck_assert_int_eq(muonref_optimizer_state(opt, 1, &st, &e), MUONREF_OK);
  ck_assert_int_eq(st.step, 2);
  /* t = 2: m = 0.1 g, v = 0.001 g^2; decay 1 - 0.001 * 0.004; step lr sqrt(bc2) / bc1 * m / (sqrt(v) + eps)
   * with bc1 = 1 - fl32(0.9)^2, bc2 = 1 - fl32(0.999)^2 (PyTorch float32: 0.19000005722045898,
   * 0.0019989609718322754) */
  double m = 0.1 * 0.5, v = 0.001 * 0.25;
  double want = 1.0 * (1.0 - 0.001 * 0.004) - 0.001 * sqrt(0.0019989609718322754) / 0.19000005722045898 * m /
                                                 (sqrt(v) + 1e-7);
  ck_assert_msg(fabs(bias[0] - want) <= 2e-7, "bias[0] %.9g, want %.9g", bias[0], want);
  muonref_optimizer_free(opt);
  o.all_missing_error = 0; /* as before: an empty step changes nothing */
  g.options = o;
  ck_assert_ptr_nonnull(opt = muonref_optimizer_create_named(&g, 1, names, &e));
  ck_assert_int_eq(muonref_optimizer_step(opt, 2, params, none, &e), MUONREF_OK);
  muonref_optimizer_free(opt);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("core");
  TCase *t = tcase_create("core");
  tcase_add_loop_test(t, py_float_matches_python_repr, 0, (int)(sizeof FLOATS / sizeof FLOATS[0]));
  tcase_add_test(t, py_float_special_values);
  tcase_add_test(t, py_shape_and_tuple);
  tcase_add_test(t, nemo_profile_has_the_seed_defaults);
  tcase_add_test(t, unknown_profile_is_named);
  tcase_add_test(t, torch_profile_defaults_and_catalogue);
  tcase_add_test(t, moonlight_profile);
  tcase_add_test(t, keller_profile);
  tcase_add_test(t, first_two_scale);
  tcase_add_test(t, timm_profile_defaults_catalogue_and_routing);
  tcase_add_test(t, dion_profile);
  tcase_add_test(t, options_init_by_profile_id);
  tcase_add_loop_test(t, catalogue_option_messages, 0, (int)(sizeof CATALOGUE / sizeof CATALOGUE[0]));
  tcase_add_test(t, catalogue_first_violation_wins_in_nemo_order);
  tcase_add_test(t, enum_parse_messages);
  tcase_add_test(t, routing_by_shape);
  tcase_add_test(t, routing_forced);
  tcase_add_test(t, routing_errors);
  tcase_add_test(t, transpose_rule);
  tcase_add_test(t, scale_factors);
  tcase_add_test(t, coefficient_order);
  tcase_add_test(t, muon_plan_forms);
  tcase_add_test(t, muon_plan_decay_methods);
  tcase_add_test(t, adamw_plan_eps_root);
  tcase_add_test(t, adamw_plan_l2);
  tcase_add_test(t, adamw_plan_bias_corrections);
  tcase_add_test(t, gradient_checks);
  tcase_add_test(t, status_names_and_errors);
  tcase_add_test(t, emerging_profile_defaults_scale_and_decay);
  tcase_add_test(t, optax_profile_plan_routing_and_list);
  tcase_add_test(t, megatron_profile_routing_and_clipping);
  tcase_add_test(t, keras_clipping_by_hand);
  tcase_add_test(t, paddle_clipping_by_hand);
  tcase_add_test(t, mlx_profile_momentum_1d);
  tcase_add_test(t, paddle_profile);
  tcase_add_test(t, keras_routing_by_name);
  tcase_add_test(t, keras_pattern_validation);
  tcase_add_test(t, keras_adamw_plan);
  tcase_add_test(t, keras_global_step_and_empty_step);
  suite_add_tcase(s, t);
  return tu_run_suite(s);
}
