/* muonref tests: the fast optimizer step (both branches), state, errors. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "muonref.h"
#include "testutil.h"
#include "fast/step_kernels.h"

#define LR 0.02
#define WD 0.01

/* The seed's parameter set: hidden 48x32 (Muon), tall 64x16 (Muon),
 * bias 48 (AdamW), conv 8x4x3x3 (AdamW by shape), embedding 8200x16 (AdamW). */
static const muonref_shape SEED_SHAPES[] = {
  {2, {48, 32}}, {2, {64, 16}}, {1, {48}}, {4, {8, 4, 3, 3}}, {2, {8200, 16}},
};
enum { NP = 5 };

typedef struct fixture {
  float *p[NP], *g[NP];
  size_t n[NP];
} fixture;

static void fixture_init(fixture *f, uint64_t seed)
{
  tu_rng r = {tu_seed(5) + seed};
  for (int i = 0; i < NP; i++) {
    f->n[i] = muonref_shape_numel(&SEED_SHAPES[i]);
    f->p[i] = malloc(f->n[i] * 4);
    f->g[i] = malloc(f->n[i] * 4);
    tu_fill_normal(&r, f->p[i], f->n[i], 1.0);
  }
}

static void fixture_grads(fixture *f, uint64_t seed)
{
  tu_rng r = {seed * 7919 + 3};
  for (int i = 0; i < NP; i++)
    tu_fill_normal(&r, f->g[i], f->n[i], 1.0);
}

static void fixture_free(fixture *f)
{
  for (int i = 0; i < NP; i++)
    free(f->p[i]), free(f->g[i]);
}

static void dense(muonref_grad *gr, fixture *f)
{
  for (int i = 0; i < NP; i++)
    gr[i] = (muonref_grad){f->g[i], MUONREF_DENSE, MUONREF_FLOAT32};
}

static muonref_optimizer *make(const muonref_options *o, size_t first, size_t count)
{
  muonref_group g = {*o, count, &SEED_SHAPES[first]};
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create(&g, 1, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  return opt;
}

static muonref_options opts(void)
{
  muonref_options o = tu_nemo();
  o.lr = LR;
  o.weight_decay = WD;
  return o;
}

/* Zero gradients: exactly p(1 - lr wd) on Muon and p(1 - lr ratio wd) on AdamW
 * parameters, nothing at all in a group with weight_decay 0 (seed:
 * test_weight_decay_uses_the_group_learning_rate). */
START_TEST(zero_gradients_decay_only)
{
  fixture f;
  fixture_init(&f, 1);
  float *keep[NP];
  for (int i = 0; i < NP; i++) {
    memset(f.g[i], 0, f.n[i] * 4);
    keep[i] = malloc(f.n[i] * 4);
    memcpy(keep[i], f.p[i], f.n[i] * 4);
  }
  muonref_options o = opts(), o0 = opts();
  o.adam_lr_ratio = 0.1;
  o0.adam_lr_ratio = 0.1;
  o0.weight_decay = 0.0;
  const muonref_shape sh[4] = {SEED_SHAPES[0], SEED_SHAPES[2], SEED_SHAPES[1], SEED_SHAPES[3]};
  muonref_group groups[2] = {{o, 2, sh}, {o0, 2, sh + 2}};
  muonref_optimizer *opt = muonref_optimizer_create(groups, 2, NULL);
  float *params[4] = {f.p[0], f.p[2], f.p[1], f.p[3]};
  muonref_grad gr[4] = {{f.g[0], 0, 0}, {f.g[2], 0, 0}, {f.g[1], 0, 0}, {f.g[3], 0, 0}};
  ck_assert_int_eq(muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), params, gr, NULL), MUONREF_OK);
  for (size_t j = 0; j < f.n[0]; j++)
    ck_assert(f.p[0][j] == (float)((double)keep[0][j] * (1.0 - LR * WD)));
  for (size_t j = 0; j < f.n[2]; j++)
    ck_assert(f.p[2][j] == (float)((double)keep[2][j] * (1.0 - LR * 0.1 * WD)));
  ck_assert(memcmp(f.p[1], keep[1], f.n[1] * 4) == 0);
  ck_assert(memcmp(f.p[3], keep[3], f.n[3] * 4) == 0);
  muonref_optimizer_free(opt);
  for (int i = 0; i < NP; i++)
    free(keep[i]);
  fixture_free(&f);
}
END_TEST

/* AdamW over 3 steps against the formulas evaluated here by hand, on a
 * 3-element bias with gradients chosen to be exact binary values. */
START_TEST(adamw_three_steps_by_hand)
{
  muonref_options o = opts();
  o.adam_lr_ratio = 1.0;
  o.weight_decay = 0.1;
  muonref_shape s = {1, {3}};
  muonref_group g = {o, 1, &s};
  muonref_optimizer *opt = muonref_optimizer_create(&g, 1, NULL);
  float p[3] = {1.0f, -0.5f, 0.25f};
  const float G[3][3] = {{0.5f, -1.0f, 2.0f}, {0.25f, 0.0f, -2.0f}, {-0.75f, 1.0f, 4.0f}};
  double hp[3] = {1.0, -0.5, 0.25}, hm[3] = {0}, hv[3] = {0};
  for (int t = 1; t <= 3; t++) {
    float gt[3];
    memcpy(gt, G[t - 1], sizeof gt);
    muonref_grad gr = {gt, MUONREF_DENSE, MUONREF_FLOAT32};
    float *pp = p;
    ck_assert_int_eq(muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), &pp, &gr, NULL), MUONREF_OK);
    for (int i = 0; i < 3; i++) {
      /* m = 0.9 m + 0.1 g; v = 0.95 v + 0.05 g^2; p = p(1 - lr wd) - lr/(1-0.9^t) m/(sqrt(v)/sqrt(1-0.95^t) + eps) */
      hm[i] = 0.9 * hm[i] + 0.1 * G[t - 1][i];
      hv[i] = 0.95 * hv[i] + 0.05 * G[t - 1][i] * G[t - 1][i];
      double den = sqrt(hv[i]) / sqrt(1 - pow(0.95, t)) + 1e-8;
      hp[i] = hp[i] * (1 - LR * 0.1) - LR / (1 - pow(0.9, t)) * hm[i] / den;
      ck_assert_msg(fabs(p[i] - hp[i]) <= 2e-7 * fabs(hp[i]), "t %d i %d: %.9g vs %.9g", t, i, p[i], hp[i]);
      hp[i] = p[i], hm[i] = (float)hm[i], hv[i] = (float)hv[i]; /* the state is fp32 */
    }
  }
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(opt, 0, &st, NULL), MUONREF_OK);
  ck_assert(st.initialized && !st.use_muon && st.step == 3 && st.momentum_buffer == NULL);
  /* step 1 of element 0: the update is lr * sign(g) up to eps (bias correction cancels) */
  muonref_optimizer_free(opt);
}
END_TEST

/* The Muon step equals its definition, evaluated with the public pieces
 * (seed: test_muon_step_matches_definition), two steps, fp32 NS. */
START_TEST(muon_step_matches_definition)
{
  muonref_options o = opts();
  o.ns_format = MUONREF_NS_FP32;
  muonref_optimizer *opt = make(&o, 0, 1);
  fixture f;
  fixture_init(&f, 2);
  size_t n = f.n[0];
  float *want = malloc(n * 4), *buf = calloc(n, 4), *u = malloc(n * 4), *orth = malloc(n * 4);
  memcpy(want, f.p[0], n * 4);
  for (int step = 0; step < 2; step++) {
    fixture_grads(&f, 100 + step);
    muonref_grad gr = {f.g[0], MUONREF_DENSE, MUONREF_FLOAT32};
    ck_assert_int_eq(muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), f.p, &gr, NULL), MUONREF_OK);
    for (size_t j = 0; j < n; j++) {
      double m = 0.95 * buf[j] + f.g[0][j];
      u[j] = (float)(f.g[0][j] + 0.95 * m);
      buf[j] = (float)m;
    }
    ck_assert_int_eq(muonref_fast_ns(orth, u, 48, 32, &o, NULL, NULL), MUONREF_OK);
    for (size_t j = 0; j < n; j++)
      want[j] = (float)((1 - LR * WD) * want[j] - LR * sqrt(48.0 / 32.0) * orth[j]);
  }
  ck_assert(memcmp(f.p[0], want, n * 4) == 0);
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(opt, 0, &st, NULL), MUONREF_OK);
  ck_assert(memcmp(st.momentum_buffer, buf, n * 4) == 0);
  ck_assert(st.use_muon && st.step == 2 && st.exp_avg == NULL);
  free(want), free(buf), free(u), free(orth);
  fixture_free(&f);
  muonref_optimizer_free(opt);
}
END_TEST

/* Scale modes on the 64x16 matrix, from a zero parameter so that the
 * update is stored without the rounding of p + update: fan_in = 2 x fan_out
 * and fan_out == none, bitwise; fan_in on the matrix and fan_out on its transpose give
 * transposed parameters over 3 steps (seed: test_scale_modes). */
START_TEST(scale_modes_on_tall_matrix)
{
  float *upd[3];
  fixture f;
  for (int mode = 0; mode < 3; mode++) {
    fixture_init(&f, 3);
    muonref_options o = tu_nemo();
    o.lr = LR;
    o.scale_mode = (muonref_scale_mode)mode;
    muonref_optimizer *opt = make(&o, 1, 1);
    memset(f.p[1], 0, 1024 * 4);
    float *keep = malloc(1024 * 4);
    memcpy(keep, f.p[1], 1024 * 4);
    fixture_grads(&f, 300);
    muonref_grad gr = {f.g[1], MUONREF_DENSE, MUONREF_FLOAT32};
    ck_assert_int_eq(muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), &f.p[1], &gr, NULL), MUONREF_OK);
    upd[mode] = malloc(1024 * 4);
    for (int j = 0; j < 1024; j++)
      upd[mode][j] = keep[j] - f.p[1][j];
    free(keep);
    muonref_optimizer_free(opt);
    fixture_free(&f);
  }
  int nonzero = 0;
  for (int j = 0; j < 1024; j++) {
    ck_assert(upd[0][j] == 2 * upd[1][j]);
    ck_assert(upd[1][j] == upd[2][j]);
    nonzero += upd[0][j] != 0.0f;
  }
  ck_assert_int_gt(nonzero, 900);
  for (int m = 0; m < 3; m++)
    free(upd[m]);
  /* transposed layout, paired modes */
  fixture_init(&f, 4);
  muonref_options oi = tu_nemo(), oo = tu_nemo();
  oi.lr = oo.lr = LR;
  oo.scale_mode = MUONREF_SCALE_FAN_OUT;
  muonref_shape st = {2, {16, 64}};
  muonref_group gi = {oi, 1, &SEED_SHAPES[1]}, go = {oo, 1, &st};
  muonref_optimizer *a = muonref_optimizer_create(&gi, 1, NULL), *b = muonref_optimizer_create(&go, 1, NULL);
  float *pt = malloc(1024 * 4), *gt = malloc(1024 * 4);
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 16; j++)
      pt[j * 64 + i] = f.p[1][i * 16 + j];
  for (int step = 0; step < 3; step++) {
    fixture_grads(&f, 310 + step);
    for (int i = 0; i < 64; i++)
      for (int j = 0; j < 16; j++)
        gt[j * 64 + i] = f.g[1][i * 16 + j];
    muonref_grad ga = {f.g[1], 0, 0}, gb = {gt, 0, 0};
    ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), &f.p[1], &ga, NULL), MUONREF_OK);
    ck_assert_int_eq(muonref_optimizer_step(b, muonref_optimizer_param_count(b), &pt, &gb, NULL), MUONREF_OK);
  }
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 16; j++)
      ck_assert(pt[j * 64 + i] == f.p[1][i * 16 + j]);
  free(pt), free(gt);
  muonref_optimizer_free(a), muonref_optimizer_free(b);
  fixture_free(&f);
}
END_TEST

/* Nesterov on and off on a hand-computable case: diagonal gradients
 * G1 = diag(1, 0), G2 = diag(0, 1) on a 2x2 Muon parameter (fp32 NS).
 * NS of a diagonal matrix D is diag(phi(d_i / (||D||_F + eps))).
 *   off: U2 = M2 = diag(beta, 1)
 *   on:  U2 = G2 + beta M2 = diag(beta^2, 1 + beta) */
START_TEST(nesterov_on_and_off_by_hand)
{
  const double beta = 0.95;
  for (int nes = 0; nes < 2; nes++) {
    muonref_options o = tu_nemo();
    o.ns_format = MUONREF_NS_FP32;
    o.nesterov = nes;
    o.lr = 1.0;
    muonref_shape s = {2, {2, 2}};
    muonref_group g = {o, 1, &s};
    muonref_optimizer *opt = muonref_optimizer_create(&g, 1, NULL);
    float p[4] = {0, 0, 0, 0}, g1[4] = {1, 0, 0, 0}, g2[4] = {0, 0, 0, 1};
    float *pp = p;
    muonref_grad gr1 = {g1, 0, 0}, gr2 = {g2, 0, 0};
    ck_assert_int_eq(muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), &pp, &gr1, NULL), MUONREF_OK);
    float after1 = p[0];
    ck_assert_int_eq(muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), &pp, &gr2, NULL), MUONREF_OK);
    double u0 = nes ? beta * beta : beta, u1 = nes ? 1 + beta : 1.0;
    double nrm = sqrt(u0 * u0 + u1 * u1) + 1e-7;
    /* step 1: U1 = (1 + beta) G1 or G1, both normalize to diag(~1, 0) */
    double s1 = tu_phi(&o, 1.0 / (1.0 + 1e-7 / (nes ? 1 + beta : 1.0)));
    ck_assert_msg(fabs(after1 + s1) < 1e-5, "nesterov %d step 1: %g vs %g", nes, after1, -s1);
    ck_assert_msg(fabs(p[0] - (after1 - tu_phi(&o, u0 / nrm))) < 1e-5, "nesterov %d p00", nes);
    ck_assert_msg(fabs(p[3] + tu_phi(&o, u1 / nrm)) < 1e-5, "nesterov %d p11 %g", nes, p[3]);
    ck_assert(p[1] == 0.0f && p[2] == 0.0f);
    muonref_param_state st;
    ck_assert_int_eq(muonref_optimizer_state(opt, 0, &st, NULL), MUONREF_OK);
    ck_assert(st.momentum_buffer[0] == (float)beta && st.momentum_buffer[3] == 1.0f);
    muonref_optimizer_free(opt);
  }
}
END_TEST

/* step, export, import into a fresh optimizer, step == stepping on, bitwise
 * (seed: test_state_dict_round_trip). */
START_TEST(state_round_trip_bitwise)
{
  muonref_options o = opts();
  fixture f, h;
  fixture_init(&f, 6);
  fixture_init(&h, 6);
  muonref_grad gr[NP];
  muonref_optimizer *a = make(&o, 0, NP);
  for (int step = 0; step < 2; step++) {
    fixture_grads(&f, 100 + step);
    dense(gr, &f);
    ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), f.p, gr, NULL), MUONREF_OK);
  }
  for (int i = 0; i < NP; i++)
    memcpy(h.p[i], f.p[i], f.n[i] * 4);
  muonref_optimizer *b = make(&o, 0, NP);
  for (int i = 0; i < NP; i++) {
    muonref_param_state st;
    ck_assert_int_eq(muonref_optimizer_state(a, (size_t)i, &st, NULL), MUONREF_OK);
    ck_assert_int_eq(muonref_optimizer_set_state(b, (size_t)i, &st, NULL), MUONREF_OK);
  }
  fixture_grads(&f, 102);
  dense(gr, &f);
  ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), f.p, gr, NULL), MUONREF_OK);
  ck_assert_int_eq(muonref_optimizer_step(b, muonref_optimizer_param_count(b), h.p, gr, NULL), MUONREF_OK);
  for (int i = 0; i < NP; i++)
    ck_assert_msg(memcmp(f.p[i], h.p[i], f.n[i] * 4) == 0, "parameter %d", i);
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(b, 2, &st, NULL), MUONREF_OK);
  ck_assert_int_eq(st.step, 3);
  muonref_optimizer_free(a), muonref_optimizer_free(b);
  fixture_free(&f), fixture_free(&h);
}
END_TEST

START_TEST(state_import_errors)
{
  muonref_options o = opts();
  muonref_optimizer *a = make(&o, 0, NP);
  muonref_error e;
  float buf[48 * 32] = {0};
  muonref_param_state st = {1, 0, 1, 48 * 32, NULL, buf, buf, NULL, 0, NULL, 0, NULL};
  ck_assert_int_eq(muonref_optimizer_set_state(a, 0, &st, &e), MUONREF_ESTATE);
  ck_assert_str_eq(e.message, "State for parameter 0: routed to Muon, the state is AdamW's");
  st = (muonref_param_state){1, 1, 1, 100, buf, NULL, NULL, NULL, 0, NULL, 0, NULL};
  ck_assert_int_eq(muonref_optimizer_set_state(a, 0, &st, &e), MUONREF_ESTATE);
  ck_assert_str_eq(e.message, "State for parameter 0: 100 elements, the parameter has 1536");
  st = (muonref_param_state){1, 1, 0, 48 * 32, buf, NULL, NULL, NULL, 0, NULL, 0, NULL};
  ck_assert_int_eq(muonref_optimizer_set_state(a, 0, &st, &e), MUONREF_ESTATE);
  ck_assert_str_eq(e.message, "State for parameter 0: step 0, an initialized state has step >= 1");
  st = (muonref_param_state){1, 1, 1, 48 * 32, NULL, NULL, NULL, NULL, 0, NULL, 0, NULL};
  ck_assert_int_eq(muonref_optimizer_set_state(a, 0, &st, &e), MUONREF_ESTATE);
  ck_assert_str_eq(e.message, "State for parameter 0: the momentum buffer is missing");
  buf[5] = NAN;
  st = (muonref_param_state){1, 1, 1, 48 * 32, buf, NULL, NULL, NULL, 0, NULL, 0, NULL};
  ck_assert_int_eq(muonref_optimizer_set_state(a, 0, &st, &e), MUONREF_ENONFINITE);
  ck_assert_str_eq(e.message, "State for parameter 0: a buffer holds a non-finite value");
  ck_assert_int_eq(muonref_optimizer_set_state(a, 9, &st, &e), MUONREF_ESTATE);
  ck_assert_str_eq(e.message, "State for parameter 9: the optimizer has 5 parameters");
  muonref_param_state now;
  ck_assert_int_eq(muonref_optimizer_state(a, 0, &now, NULL), MUONREF_OK);
  ck_assert(!now.initialized && now.momentum_buffer[5] == 0.0f);
  muonref_optimizer_free(a);
}
END_TEST

/* A parameter without gradient: untouched, no state, no decay. */
START_TEST(no_gradient_skipped)
{
  muonref_options o = opts();
  fixture f;
  fixture_init(&f, 7);
  fixture_grads(&f, 1);
  float *keep0 = malloc(f.n[0] * 4), *keep2 = malloc(f.n[2] * 4);
  memcpy(keep0, f.p[0], f.n[0] * 4);
  memcpy(keep2, f.p[2], f.n[2] * 4);
  muonref_optimizer *a = make(&o, 0, NP);
  muonref_grad gr[NP];
  dense(gr, &f);
  gr[0].data = NULL;
  gr[2].data = NULL;
  ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), f.p, gr, NULL), MUONREF_OK);
  ck_assert(memcmp(f.p[0], keep0, f.n[0] * 4) == 0 && memcmp(f.p[2], keep2, f.n[2] * 4) == 0);
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(a, 0, &st, NULL), MUONREF_OK);
  ck_assert(!st.initialized && st.step == 0);
  ck_assert_int_eq(muonref_optimizer_state(a, 2, &st, NULL), MUONREF_OK);
  ck_assert(!st.initialized && st.step == 0);
  ck_assert_int_eq(muonref_optimizer_state(a, 1, &st, NULL), MUONREF_OK);
  ck_assert(st.initialized && st.step == 1);
  free(keep0), free(keep2);
  muonref_optimizer_free(a);
  fixture_free(&f);
}
END_TEST

/* A NaN (Inf, sparse) gradient anywhere: rejected, nothing written. */
START_TEST(bad_gradient_changes_nothing)
{
  muonref_options o = opts();
  fixture f;
  fixture_init(&f, 8);
  muonref_optimizer *a = make(&o, 0, NP);
  muonref_grad gr[NP];
  fixture_grads(&f, 1);
  dense(gr, &f);
  ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), f.p, gr, NULL), MUONREF_OK); /* state exists */
  float *keep[NP], *mom = malloc(f.n[0] * 4);
  for (int i = 0; i < NP; i++) {
    keep[i] = malloc(f.n[i] * 4);
    memcpy(keep[i], f.p[i], f.n[i] * 4);
  }
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(a, 0, &st, NULL), MUONREF_OK);
  memcpy(mom, st.momentum_buffer, f.n[0] * 4);
  muonref_error e;
  for (int kind = 0; kind < 3; kind++) {
    fixture_grads(&f, 2);
    dense(gr, &f);
    if (kind == 0)
      f.g[3][17] = NAN;
    else if (kind == 1)
      f.g[4][0] = INFINITY;
    else
      gr[4].layout = MUONREF_SPARSE;
    int s = muonref_optimizer_step(a, muonref_optimizer_param_count(a), f.p, gr, &e);
    ck_assert_int_eq(s, kind == 2 ? MUONREF_EGRAD : MUONREF_ENONFINITE);
    for (int i = 0; i < NP; i++)
      ck_assert(memcmp(f.p[i], keep[i], f.n[i] * 4) == 0);
    ck_assert_int_eq(muonref_optimizer_state(a, 0, &st, NULL), MUONREF_OK);
    ck_assert(memcmp(st.momentum_buffer, mom, f.n[0] * 4) == 0 && st.step == 1);
  }
  ck_assert_str_eq(e.message, "Muon does not support sparse gradients");
  for (int i = 0; i < NP; i++)
    free(keep[i]);
  free(mom);
  muonref_optimizer_free(a);
  fixture_free(&f);
}
END_TEST

/* Forced Muon on a conv filter equals the flattened (8, 36) matrix, bitwise
 * (seed: test_forced_muon_flattens_filters). */
START_TEST(forced_muon_flattens_filters)
{
  muonref_options o = opts();
  o.use_muon = MUONREF_USE_MUON_TRUE;
  muonref_shape flat = {2, {8, 36}};
  muonref_group g1 = {o, 1, &SEED_SHAPES[3]}, g2 = {o, 1, &flat};
  muonref_optimizer *a = muonref_optimizer_create(&g1, 1, NULL), *b = muonref_optimizer_create(&g2, 1, NULL);
  fixture f;
  fixture_init(&f, 9);
  float q[288];
  memcpy(q, f.p[3], sizeof q);
  float *pq = q;
  for (int step = 0; step < 2; step++) {
    fixture_grads(&f, 400 + step);
    muonref_grad gr = {f.g[3], 0, 0};
    ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), &f.p[3], &gr, NULL), MUONREF_OK);
    ck_assert_int_eq(muonref_optimizer_step(b, muonref_optimizer_param_count(b), &pq, &gr, NULL), MUONREF_OK);
  }
  ck_assert(memcmp(q, f.p[3], sizeof q) == 0);
  ck_assert(muonref_optimizer_route(a, 0)->use_muon && muonref_optimizer_route(a, 0)->cols == 36);
  muonref_optimizer_free(a), muonref_optimizer_free(b);
  fixture_free(&f);
}
END_TEST

/* With Nesterov off, Newton-Schulz reads the momentum buffer and leaves it
 * as the momentum rule wrote it: M = beta M + G exactly (rounded once). */
START_TEST(momentum_buffer_untouched_by_ns)
{
  muonref_options o = opts();
  o.nesterov = 0;
  muonref_optimizer *a = make(&o, 0, 1);
  fixture f;
  fixture_init(&f, 10);
  float *m = calloc(f.n[0], 4);
  for (int step = 0; step < 3; step++) {
    fixture_grads(&f, 500 + step);
    muonref_grad gr = {f.g[0], 0, 0};
    ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), f.p, &gr, NULL), MUONREF_OK);
    for (size_t j = 0; j < f.n[0]; j++)
      m[j] = (float)(0.95 * m[j] + f.g[0][j]);
  }
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(a, 0, &st, NULL), MUONREF_OK);
  ck_assert(memcmp(st.momentum_buffer, m, f.n[0] * 4) == 0);
  free(m);
  muonref_optimizer_free(a);
  fixture_free(&f);
}
END_TEST

/* A zero gradient on a Muon parameter gives a finite (zero) update, in
 * both formats and with eps clamped at 0. */
START_TEST(zero_gradient_finite_update)
{
  for (int f = 0; f < 2; f++) {
    muonref_options o = tu_nemo();
    o.ns_format = f ? MUONREF_NS_FP32 : MUONREF_NS_BF16;
    o.eps_mode = MUONREF_EPS_CLAMP;
    o.ns_eps = 0.0;
    o.adam_eps = 0.0;
    muonref_shape sh[2] = {{2, {4, 6}}, {1, {5}}};
    muonref_group g = {o, 2, sh};
    muonref_optimizer *a = muonref_optimizer_create(&g, 1, NULL);
    float p[24], b[5], z[24] = {0};
    for (int i = 0; i < 24; i++)
      p[i] = (float)i;
    for (int i = 0; i < 5; i++)
      b[i] = (float)i;
    float *ps[2] = {p, b};
    muonref_grad gr[2] = {{z, 0, 0}, {z, 0, 0}};
    ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), ps, gr, NULL), MUONREF_OK);
    for (int i = 0; i < 24; i++)
      ck_assert(p[i] == (float)i);
    for (int i = 0; i < 5; i++)
      ck_assert(b[i] == (float)i); /* AdamW with eps 0: zero denominator moves nothing */
    muonref_optimizer_free(a);
  }
}
END_TEST

/* Finite gradients near FLT_MAX: the step is refused, nothing written
 * (never Inf or NaN stored); a step count beyond MUONREF_MAX_STEP, or
 * flags outside 0/1, are refused on import; NULL arrays are refused. */
START_TEST(overflow_and_bad_state_refused)
{
  muonref_options o = opts();
  muonref_shape sh[2] = {{2, {2, 2}}, {1, {3}}};
  muonref_group g = {o, 2, sh};
  muonref_error e;
  muonref_optimizer *a = muonref_optimizer_create(&g, 1, &e);
  float w[4] = {1, 2, 3, 4}, b[3] = {1, 2, 3}, gw[4] = {3e38f, 0, 0, 3e38f}, gb[3] = {0, 0, 0};
  float *ps[2] = {w, b};
  muonref_grad gr[2] = {{gw, 0, 0}, {gb, 0, 0}};
  ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), ps, gr, &e), MUONREF_ENUMERIC);
  ck_assert_str_eq(e.message, "Step for parameter 0 would overflow binary32: the momentum at element 0 exceeds 3.40282e+38");
  ck_assert(w[0] == 1 && w[3] == 4 && b[0] == 1);
  gw[0] = gw[3] = 1.0f;
  gb[1] = 2e19f; /* g^2 (1 - beta2) = 2e37: fine; 3e19: 4.5e37 still fine; 1e20 overflows */
  ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), ps, gr, &e), MUONREF_OK);
  gb[1] = 1e20f;
  ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), ps, gr, &e), MUONREF_ENUMERIC);
  ck_assert_str_eq(e.message, "Step for parameter 1 would overflow binary32: the second moment at element 1 exceeds 3.40282e+38");
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(a, 1, &st, NULL), MUONREF_OK);
  ck_assert(isfinite(st.exp_avg_sq[1]) && st.step == 1);
  muonref_param_state big = st;
  big.step = MUONREF_MAX_STEP + 1;
  ck_assert_int_eq(muonref_optimizer_set_state(a, 1, &big, &e), MUONREF_ESTATE);
  big = st;
  big.use_muon = 7;
  ck_assert_int_eq(muonref_optimizer_set_state(a, 1, &big, &e), MUONREF_ESTATE);
  ck_assert_str_eq(e.message, "State for parameter 1: initialized and use_muon must be 0 or 1");
  ck_assert_int_eq(muonref_optimizer_set_state(a, 1, NULL, &e), MUONREF_ESTATE);
  ck_assert_int_eq(muonref_optimizer_step(a, muonref_optimizer_param_count(a), ps, NULL, &e), MUONREF_EOPTION);
  /* the arrays' count must be the optimizer's; a mismatch changes nothing */
  w[0] = 1.0f;
  gb[1] = 0.0f;
  ck_assert_int_eq(muonref_optimizer_step(a, 1, ps, gr, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "muonref_optimizer_step: n_params is 1, the optimizer has 2 parameters");
  ck_assert_int_eq(muonref_optimizer_step(a, 3, ps, gr, &e), MUONREF_EOPTION);
  ck_assert(w[0] == 1.0f);
  ck_assert_int_eq(muonref_optimizer_state(a, 1, &st, NULL), MUONREF_OK);
  ck_assert(st.step == 1);
  /* the state getter reports an index out of range like its siblings */
  ck_assert_int_eq(muonref_optimizer_state(a, 2, &st, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "State for parameter 2: the optimizer has 2 parameters");
  ck_assert_int_eq(muonref_optimizer_state(a, 0, NULL, &e), MUONREF_EOPTION);
  muonref_optimizer_free(a);
  /* a shape whose element count overflows is refused, not wrapped to 0 */
  muonref_shape huge = {2, {(size_t)1 << 32, (size_t)1 << 32}};
  muonref_group gh = {o, 1, &huge};
  ck_assert_ptr_null(muonref_optimizer_create(&gh, 1, &e));
  ck_assert_int_eq(e.status, MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Invalid parameter shape (4294967296, 4294967296): more than 1099511627776 elements");
}
END_TEST

START_TEST(create_errors)
{
  muonref_error e;
  muonref_options o = opts();
  o.use_muon = MUONREF_USE_MUON_TRUE;
  muonref_group g = {o, 1, &SEED_SHAPES[2]};
  ck_assert_ptr_null(muonref_optimizer_create(&g, 1, &e));
  ck_assert_int_eq(e.status, MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "use_muon=True needs at least two dimensions, got shape (48,)");
  o = opts();
  o.lr = -1.0;
  g.options = o;
  ck_assert_ptr_null(muonref_optimizer_create(&g, 1, &e));
  ck_assert_str_eq(e.message, "Invalid learning rate: -1.0");
  o = opts();
  o.ns_format = MUONREF_NS_EXACT;
  g.options = o;
  ck_assert_ptr_null(muonref_optimizer_create(&g, 1, &e));
  ck_assert_str_eq(e.message, "ns_format 'exact' is not available on the fast path");
  o = opts();
  g = (muonref_group){o, NP, SEED_SHAPES};
  muonref_optimizer *a = muonref_optimizer_create(&g, 1, &e);
  ck_assert_uint_eq(muonref_optimizer_param_count(a), NP);
  ck_assert_uint_eq(muonref_optimizer_workspace_floats(a), muonref_ns_workspace_floats(48, 32));
  muonref_optimizer_free(a);
}
END_TEST


/* ---- the fused passes of the step (fast/step_kernels.c) against the
 * element-by-element definition written here from spec/muon.md sections
 * 6 to 10 (binary64 from the float32 inputs, one rounding to float32) ---- */

static int same_or_nan(const float *a, const float *b, size_t n)
{
  for (size_t k = 0; k < n; k++)
    if (memcmp(&a[k], &b[k], 4) && !(isnan(a[k]) && isnan(b[k])))
      return 0;
  return 1;
}

/* Shapes around the passes' boundaries: the 4-lane tails, tall and wide,
 * the 64-column bands and 64-row tiles of a tall load, the 32x32 tiles of
 * the output, a row longer than the 1024-float chunk, and two above the
 * 64 Ki elements from which the passes are split among the worker threads
 * of fast/pool.c (where OpenBLAS runs more than one thread). */
static const size_t KSHAPES[][2] = {
  {1, 1}, {1, 9}, {9, 1}, {3, 5}, {5, 3}, {7, 64}, {64, 7}, {65, 66},
  {66, 65}, {140, 65}, {131, 130}, {200, 129}, {2, 1030}, {1030, 2}, {17, 33}, {33, 17},
  {257, 301}, {301, 257},
};
enum { NKSHAPES = sizeof KSHAPES / sizeof KSHAPES[0] };

/* Values that exercise the rounding and the flags: NaN, Inf, beyond
 * FLT_MAX after the momentum, a bf16 tie, subnormals. */
static void put_specials(float *x, size_t n, int which)
{
  const float sp[] = {NAN, -INFINITY, 3.3e38f, 0x1.018p0f, -0x1.008p-130f, 1e-45f, -0.0f};
  for (size_t k = 0; k < 7 && which; k++)
    x[(k * 37 + (size_t)which) % n] = sp[k];
}

/* The binary32 spacing at |x|. */
static double ulp32(double x)
{
  float a = fabsf((float)x);
  return (double)nextafterf(a, INFINITY) - (double)a;
}

/* profile mlx (route_rule momentum_1d, spec/profiles/mlx.md 4 and 7): a
 * bias steps on its momentum alone, by hand over two steps in binary64 (the
 * buffer rounded to binary32 after each step, as the optimizer stores it;
 * L2: G' = R32(G + wd P)), to within two binary32 ulps; its state is a
 * momentum buffer; a matrix beside it is orthogonalized. */
START_TEST(momentum_only_bias_by_hand)
{
  muonref_options o;
  muonref_error e;
  ck_assert_int_eq(muonref_options_init(&o, MUONREF_PROFILE_MLX, &e), MUONREF_OK);
  o.lr = 0.05;
  const muonref_shape sh[2] = {{1, {6}}, {2, {4, 3}}};
  muonref_group grp = {o, 2, sh};
  muonref_optimizer *opt = muonref_optimizer_create(&grp, 1, &e);
  ck_assert_ptr_nonnull(opt);
  float b[6] = {1.0f, -0.5f, 0.25f, 2.0f, -3.0f, 0.0f}, w[12], g0[6] = {0.5f, 1.0f, -2.0f, 0.0f, 0.125f, -1.0f};
  float gw[12];
  for (int j = 0; j < 12; j++)
    w[j] = (float)(j % 5) * 0.25f - 0.5f, gw[j] = (float)((j * 7) % 11) * 0.1f - 0.5f;
  double p[6], m[6] = {0};
  for (int j = 0; j < 6; j++)
    p[j] = b[j];
  for (int s = 0; s < 2; s++) {
    float *params[2] = {b, w};
    muonref_grad gr[2] = {{g0, 0, 0}, {gw, 0, 0}};
    ck_assert_int_eq(muonref_optimizer_step(opt, 2, params, gr, &e), MUONREF_OK);
    for (int j = 0; j < 6; j++) {
      double g = (float)(g0[j] + 0.01 * (double)(float)p[j]);
      double mn = (float)(0.95 * m[j] + 0.05 * g);
      double u = 0.05 * g + 0.95 * mn;
      p[j] = (float)(p[j] - 0.05 * u), m[j] = mn;
      ck_assert(fabs(b[j] - p[j]) <= 2 * ulp32(p[j]));
    }
  }
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(opt, 0, &st, &e), MUONREF_OK);
  ck_assert(st.use_muon == 1 && st.step == 2 && st.momentum_buffer && !st.exp_avg);
  for (int j = 0; j < 6; j++)
    ck_assert(fabs(st.momentum_buffer[j] - m[j]) <= 2 * ulp32(m[j]));
  ck_assert_int_eq(muonref_optimizer_route(opt, 0)->momentum_only, 1);
  ck_assert_int_eq(muonref_optimizer_route(opt, 1)->momentum_only, 0);
  muonref_optimizer_free(opt);
}
END_TEST

/* The decay factor of one element under cautious weight decay
 * (spec/muon.md 4.1), written from the definition: 0 every element decays;
 * 1 (cautious_wd) unless the parameter p and the update u have opposite
 * signs; 2 (the fault cautious_wd_strict) only where both are non-zero of
 * one sign. */
static double cautious_decay(int cautious, double decay, double p, double u)
{
  int opposite = (p > 0 && u < 0) || (p < 0 && u > 0), same = (p > 0 && u > 0) || (p < 0 && u < 0);
  return cautious == 0 || (cautious == 1 && !opposite) || (cautious == 2 && same) ? decay : 1.0;
}

START_TEST(fused_passes_match_the_definition)
{
  size_t r = KSHAPES[_i % NKSHAPES][0], c = KSHAPES[_i % NKSHAPES][1], n = r * c;
  int specials = _i >= NKSHAPES, tr = r > c;
  tu_rng rng = {tu_seed(11) + (uint64_t)_i};
  float *G = malloc(n * 4), *M = malloc(n * 4), *P = malloc(n * 4), *X = malloc(n * 4), *Xd = malloc(n * 4),
        *O = malloc(n * 4), *Od = malloc(n * 4), *V = malloc(n * 4), *Md = malloc(n * 4), *Pd = malloc(n * 4),
        *Vd = malloc(n * 4), *Mn = malloc(n * 4), *Pn = malloc(n * 4), *U = malloc(n * 4);
  for (int cv = 0; cv < 18; cv++) { /* every variant plain, with cautious_wd, with the strict mask */
    int variant = cv % 6, cautious = cv / 6, bf = variant & 1, nf = variant / 2;
    tu_fill_normal(&rng, G, n, 1.0);
    tu_fill_normal(&rng, M, n, 2.0);
    tu_fill_normal(&rng, P, n, 1.0);
    tu_fill_normal(&rng, V, n, 1.0);
    for (size_t j = 0; j < n; j++)
      V[j] = V[j] * V[j]; /* a second moment is not negative */
    if (specials) {
      put_specials(G, n, 1 + variant);
      put_specials(P, n, 3 + variant);
    }
    muonref_stk_muon k = {0.95, variant > 3 ? 0.05 : 1.0, variant > 3 ? 0.05 : 1.0, 0.95, variant != 2, nf,
                          {(double)0.2f, (double)1.7f}, 0.999, 0.02, cautious};
    /* input: X and its norm */
    int bad = 0, bad_d = 0;
    /* with cautious_wd also with the scratch U (a tall matrix above the pool's chunk size: two passes) */
    double ss = muonref_stk_muon_input(X, Mn, G, M, cautious == 1 ? U : NULL, r, c, tr, bf, &k, &bad), ss_d = 0.0;
    for (size_t i = 0; i < r; i++)
      for (size_t j = 0; j < c; j++) {
        double g = G[i * c + j], m = k.mom_keep * (double)M[i * c + j] + k.mom_grad * g;
        double v = k.in_grad * g + k.in_mom * m;
        Md[i * c + j] = (float)m;
        bad_d |= !isfinite(g) || !(fabs(m) <= FLT_MAX) || !(fabs(v) <= FLT_MAX);
        float u = (float)(k.nesterov ? v : m);
        Xd[tr ? j * r + i : i * c + j] = bf ? muonref_bf16_round(u) : u;
      }
    for (size_t q = 0; q < n; q++)
      ss_d += (double)Xd[q] * (double)Xd[q];
    ck_assert_msg(same_or_nan(X, Xd, n), "input (%zu, %zu) variant %d", r, c, variant);
    ck_assert_msg(same_or_nan(Mn, Md, n), "new momentum (%zu, %zu) variant %d", r, c, variant);
    ck_assert_msg(memcmp(&ss, &ss_d, sizeof ss) == 0 || (isnan(ss) && isnan(ss_d)), "norm (%zu, %zu)", r, c);
    ck_assert_int_eq(bad, bad_d);
    if (n >= 64) /* the specials do not overwrite each other: the flag must be raised */
      ck_assert_int_eq(bad_d, specials);
    if (cautious) /* zeros in the update: where cautious_wd and the strict mask differ */
      for (size_t q = 0; q < n; q += 7)
        X[q] = Xd[q] = 0.0f;
    /* output: O with the bf16 products, or the new parameter; the parameter's check */
    int ok = muonref_stk_muon_output(O, X, P, r, c, tr, &k, MUONREF_STK_UPDATE), ok_d = 1;
    int okp = muonref_stk_muon_output(Pn, X, P, r, c, tr, &k, MUONREF_STK_PARAM);
    for (size_t i = 0; i < r; i++)
      for (size_t j = 0; j < c; j++) {
        float o = Xd[tr ? j * r + i : i * c + j];
        for (int f = 0; f < nf; f++)
          o = muonref_bf16_round_double(k.factor[f] * (double)o);
        Od[i * c + j] = o;
        double dj = cautious_decay(cautious, k.decay, P[i * c + j], o);
        Pd[i * c + j] = (float)(dj * (double)P[i * c + j] - k.alpha * (double)o);
        ok_d &= isfinite(Pd[i * c + j]);
      }
    ck_assert_msg(same_or_nan(O, Od, n), "output (%zu, %zu) variant %d", r, c, variant);
    ck_assert_msg(same_or_nan(Pn, Pd, n), "new parameter (%zu, %zu) variant %d", r, c, variant);
    ck_assert_int_eq(ok, ok_d);
    ck_assert_int_eq(okp, ok_d);
    float nw = 0.0f;
    size_t first = muonref_stk_muon_param_first(P, O, n, &k, &nw), first_d = n;
    for (size_t j = 0; j < n && first_d == n; j++)
      if (!isfinite((float)(cautious_decay(cautious, k.decay, P[j], O[j]) * (double)P[j] - k.alpha * (double)O[j])))
        first_d = j;
    ck_assert_uint_eq(first, first_d);
    ck_assert_uint_eq(muonref_stk_first_nonfinite(Pn, n), first_d);
    first_d = n;
    for (size_t j = 0; j < n && first_d == n; j++) {
      double m = k.mom_keep * (double)M[j] + k.mom_grad * (double)G[j];
      if (fabs(m) > FLT_MAX || fabs(k.in_grad * (double)G[j] + k.in_mom * m) > FLT_MAX)
        first_d = j;
    }
    ck_assert_uint_eq(muonref_stk_muon_range_first(G, M, n, &k), first_d);
    /* AdamW: eps 0 with zero moments gives the zero denominator (no move); variants 1 and 4 with optax's
     * eps_root (times bc2) under the square root */
    muonref_stk_adamw a = {0.9, 0.1, 0.95, 0.05, sqrt(1 - 0.95 * 0.95), variant == 5 ? 0.0 : 1e-8, 0.01 / 0.19,
                           0.998, variant >= 3, 0.9, 0.1, cautious, variant == 1 || variant == 4 ? 0.0975 : 0.0};
    if (variant == 5)
      for (size_t j = 0; j < n; j += 3)
        G[j] = M[j] = V[j] = 0.0f;
    int abad = muonref_stk_adamw_check(P, M, V, G, n, &a), abad_d = 0;
    size_t arange_d = n, aparam_d = n;
    memcpy(Md, M, n * 4), memcpy(Pd, P, n * 4), memcpy(Vd, V, n * 4);
    for (size_t j = 0; j < n; j++) {
      double g = G[j], m = a.beta1 * (double)M[j] + a.one_minus_beta1 * g;
      double v = a.beta2 * (double)V[j] + a.one_minus_beta2 * g * g;
      double den = sqrt(v + a.eps_root_bc2) / a.sqrt_bc2 + a.eps;
      double num = a.nadamw ? a.num_mom * m + a.num_grad * g : m;
      double q = den == 0.0 ? 0.0 : num / den;
      float w = (float)(cautious_decay(cautious, a.decay, P[j], q) * (double)P[j] - a.step_size * q);
      abad_d |= !isfinite(g) || !(v <= FLT_MAX) || !isfinite(w);
      if (arange_d == n && v > FLT_MAX)
        arange_d = j;
      if (aparam_d == n && !isfinite(w))
        aparam_d = j;
      Pd[j] = w, Md[j] = (float)m, Vd[j] = (float)v;
    }
    ck_assert_int_eq(abad, abad_d);
    ck_assert_uint_eq(muonref_stk_adamw_range_first(V, G, n, &a), arange_d);
    ck_assert_uint_eq(muonref_stk_adamw_param_first(P, M, V, G, n, &a, &nw), aparam_d);
    muonref_stk_adamw_apply(P, M, V, G, n, &a);
    ck_assert_msg(same_or_nan(P, Pd, n) && same_or_nan(M, Md, n) && same_or_nan(V, Vd, n), "adamw (%zu, %zu) %d",
                  r, c, variant);
  }
  free(G), free(M), free(P), free(X), free(Xd), free(O), free(Od), free(V), free(Md), free(Pd), free(Vd), free(Mn), free(Pn), free(U);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("step");
  TCase *t = tcase_create("step");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, zero_gradients_decay_only);
  tcase_add_test(t, adamw_three_steps_by_hand);
  tcase_add_test(t, muon_step_matches_definition);
  tcase_add_test(t, scale_modes_on_tall_matrix);
  tcase_add_test(t, nesterov_on_and_off_by_hand);
  tcase_add_test(t, state_round_trip_bitwise);
  tcase_add_test(t, state_import_errors);
  tcase_add_test(t, no_gradient_skipped);
  tcase_add_test(t, bad_gradient_changes_nothing);
  tcase_add_test(t, forced_muon_flattens_filters);
  tcase_add_test(t, momentum_buffer_untouched_by_ns);
  tcase_add_test(t, zero_gradient_finite_update);
  tcase_add_test(t, create_errors);
  tcase_add_test(t, overflow_and_bad_state_refused);
  tcase_add_loop_test(t, fused_passes_match_the_definition, 0, 2 * NKSHAPES);
  tcase_add_test(t, momentum_only_bias_by_hand);
  suite_add_tcase(s, t);
  return tu_run_suite(s);
}
