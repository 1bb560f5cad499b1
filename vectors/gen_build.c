/* muonref: building vector cases and computing their expected values with
 * the reference (see gen.h).  Tolerances follow spec/vectors.md section 5. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "case.h"
#include "gen.h"
#include "judge.h"
#include "muonref/bf16.h"
#include "muonref/ns_rounded.h"
#include "core/plan.h"
#include "muonref/profile.h"
#include "muonref/ref.h"
#include "core/rng.h"
#include "tensor.h"
#include "core/fail.h"

/* ---- the seeded source (spec/vectors.md section 6) ---- */

uint64_t gen_next(gen_rng *r) { return muonref_rng_next(&r->s); }

double gen_normal(gen_rng *r) { return muonref_rng_normal(&r->s); }

float *gen_normal_array(gen_ctx *g, size_t n, double scale)
{
  float *x = malloc((n ? n : 1) * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(scale * gen_normal(&g->rng));
  return x;
}

float *gen_zeros(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

float *gen_structured(size_t m, size_t n, const float *d, int transpose)
{
  float *x = malloc(m * n * sizeof *x);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      float h = (__builtin_popcountll((unsigned long long)(i & j)) & 1) ? -d[i] : d[i];
      x[transpose ? j * m + i : i * n + j] = h;
    }
  return x;
}

void gen_dyadic_scales(gen_ctx *g, float *d, size_t m, int shift)
{
  static const float V[] = {1.0f, 0.75f, 0.5f, 0.375f, 0.25f, 0.125f, 0.0625f, 0.03125f};
  for (size_t i = 0; i < m; i++)
    d[i] = ldexpf(V[gen_next(&g->rng) % 8], shift);
}

/* ---- JSON pieces ---- */

static json_t *tensor_json(const float *x, const muonref_shape *s)
{
  muonref_tensor t;
  muonref_tensor_alloc(&t, MUONREF_TENSOR_F32, s, NULL);
  memcpy(t.f, x, t.numel * sizeof(float));
  json_t *j = muonref_tensor_to_json(&t, 0);
  muonref_tensor_free(&t);
  return j;
}

static json_t *flags_json(const char *const *flags, int n)
{
  json_t *a = json_array();
  for (int i = 0; i < n && flags && flags[i]; i++)
    json_array_append_new(a, json_string(flags[i]));
  return a;
}

static json_t *new_test(gen_ctx *g, const char *comment, const char *const *flags, int n_flags, const char *result)
{
  json_t *t = json_object();
  json_object_set_new(t, "tcId", json_integer(++g->next_id));
  json_object_set_new(t, "comment", json_string(comment));
  json_object_set_new(t, "flags", flags_json(flags, n_flags));
  json_object_set_new(t, "result", json_string(result ? result : "valid"));
  g->n_tests++;
  return t;
}

void gen_group(gen_ctx *g, const char *kind)
{
  g->group = json_object();
  json_object_set_new(g->group, "kind", json_string(kind));
  json_object_set_new(g->group, "tests", json_array());
  json_array_append_new(g->groups, g->group);
}

static void push_test(gen_ctx *g, json_t *t) { json_array_append_new(json_object_get(g->group, "tests"), t); }

static void gen_fail(gen_ctx *g, const char *comment, const muonref_error *e)
{
  if (!g->failed)
    snprintf(g->error, sizeof g->error, "case \"%.400s\": %.512s", comment, e->message);
  g->failed = 1;
}

/* ---- step cases ---- */

typedef struct sim {
  float *p[GEN_MAX_PARAMS];
  muonref_param_state st[GEN_MAX_PARAMS];
  int muon_steps[GEN_MAX_PARAMS], steps[GEN_MAX_PARAMS];
  double max_grad[GEN_MAX_PARAMS];
  double max_param[GEN_MAX_PARAMS]; /* largest |p| before or after any step */
} sim;

static void sim_free(sim *s, int n)
{
  for (int i = 0; i < n; i++) {
    free(s->p[i]);
    free(s->st[i].momentum_buffer), free(s->st[i].exp_avg), free(s->st[i].exp_avg_sq);
  }
}

/* Runs the reference over the case's steps with Newton-Schulz in `format`
 * (EXACT or BF16); *uncertain collects the bf16 certificate. */
static int simulate(gen_ctx *g, const gen_step_case *c, muonref_ns_format format, muonref_bf16_order order, sim *s,
                    unsigned *uncertain, muonref_error *err)
{
  memset(s, 0, sizeof *s);
  *uncertain = 0;
  for (int i = 0; i < c->n_params; i++) {
    size_t n = muonref_shape_numel(&c->shapes[i]);
    s->p[i] = malloc(n * sizeof(float));
    memcpy(s->p[i], c->init[i], n * sizeof(float));
    s->st[i].numel = n;
    s->st[i].momentum_buffer = calloc(n, sizeof(float));
    s->st[i].exp_avg = calloc(n, sizeof(float));
    s->st[i].exp_avg_sq = calloc(n, sizeof(float));
    for (size_t j = 0; j < n; j++)
      s->max_param[i] = fmax(s->max_param[i], fabs(c->init[i][j]));
  }
  for (int k = 0; k < c->n_steps; k++)
    for (int i = 0; i < c->n_params; i++) {
      const float *gr = c->grads[k][i];
      if (!gr)
        continue;
      muonref_options o = c->options[c->group_of[i]];
      o.ns_format = format;
      o.bf16_order = order;
      muonref_route r;
      int st = muonref_route_param(&o, &c->shapes[i], &r, err);
      if (st)
        return st;
      muonref_ref_cr_report rep = {0};
      s->st[i].use_muon = r.use_muon;
      if ((st = muonref_ref_step_cr(&o, &r, s->p[i], &s->st[i], gr, g->prec, &rep, err)))
        return st;
      *uncertain |= rep.ns_uncertain;
      s->steps[i]++;
      s->muon_steps[i] += r.use_muon;
      for (size_t j = 0; j < r.numel; j++) {
        s->max_grad[i] = fmax(s->max_grad[i], fabs(gr[j]));
        s->max_param[i] = fmax(s->max_param[i], fabs(s->p[i][j]));
      }
    }
  return MUONREF_OK;
}

/* Whether a and b hold the same parameters and state buffers bit for bit. */
static int sim_equal(const gen_step_case *c, const sim *a, const sim *b)
{
  for (int i = 0; i < c->n_params; i++) {
    size_t n = muonref_shape_numel(&c->shapes[i]) * sizeof(float);
    if (memcmp(a->p[i], b->p[i], n) || memcmp(a->st[i].momentum_buffer, b->st[i].momentum_buffer, n) ||
        memcmp(a->st[i].exp_avg, b->st[i].exp_avg, n) || memcmp(a->st[i].exp_avg_sq, b->st[i].exp_avg_sq, n) ||
        a->st[i].step != b->st[i].step)
      return 0;
  }
  return 1;
}

static json_t *expected_json(const gen_step_case *c, const sim *s)
{
  json_t *e = json_object(), *ps = json_array(), *sts = json_array();
  for (int i = 0; i < c->n_params; i++) {
    json_array_append_new(ps, tensor_json(s->p[i], &c->shapes[i]));
    json_array_append_new(sts, muonref_case_state_json(&s->st[i], &c->shapes[i]));
  }
  json_object_set_new(e, "params", ps);
  json_object_set_new(e, "state", sts);
  return e;
}

/* The relative deviation allowed to the update of a Muon parameter whose
 * bf16 Newton-Schulz result is not exactly defined (Bf16Noise): 1.5 times
 * the largest measured on the nemo set by correct bf16 implementations,
 * PyTorch 1.13 CPU's platform effects included (spec/vectors.md 5.1). */
#define BF16_NOISE_UPDATE_REL 0.15

/* The tolerance of a step case for one format (spec/vectors.md 5.1). */
static json_t *step_tolerance(const gen_step_case *c, const sim *s, int bf16, int bf16_exact)
{
  json_t *t = json_object(), *atol = json_array(), *satol = json_array(), *urel = json_array();
  int max_steps = 0, any_rel = 0;
  for (int i = 0; i < c->n_params; i++) {
    const muonref_options *o = &c->options[c->group_of[i]];
    muonref_route r = {0};
    MUONREF_UNCHECKED(muonref_route_param(o, &c->shapes[i], &r, NULL));
    double a = 0, lr_a = o->lr * o->adam_lr_ratio, rel = 0;
    max_steps = s->steps[i] > max_steps ? s->steps[i] : max_steps;
    json_t *sa = json_object();
    if (r.use_muon) {
      double alpha = o->lr * muonref_scale_factor(o->scale_mode, r.rows, r.cols);
      if (bf16 && !bf16_exact && s->muon_steps[i] > 0)
        rel = BF16_NOISE_UPDATE_REL; /* judged on the update, relative */
      else
        a = s->muon_steps[i] * (bf16 ? 0.0 : 5e-5) * alpha * 1.5;
      json_object_set_new(sa, "momentum_buffer", json_real(1e-6 * s->max_grad[i] * s->steps[i] / (1.0 - o->momentum)));
    } else {
      a = s->steps[i] * lr_a * 1e-5;
      json_object_set_new(sa, "exp_avg", json_real(1e-6 * s->max_grad[i] * s->steps[i]));
      json_object_set_new(sa, "exp_avg_sq", json_real(1e-6 * s->max_grad[i] * s->max_grad[i] * s->steps[i]));
    }
    /* A port that rounds p d and alpha O separately before subtracting
     * loses up to an ulp of the larger of them per step, which is many ulps
     * of the result where the two nearly cancel. */
    double big = fmax(s->max_param[i], r.use_muon ? 1.5 * o->lr * muonref_scale_factor(o->scale_mode, r.rows, r.cols) : lr_a);
    a += s->steps[i] * 2.0 * muonref_ulp32(big);
    json_array_append_new(atol, json_real(a));
    json_array_append_new(satol, sa);
    json_array_append_new(urel, json_real(rel));
    any_rel |= rel > 0;
  }
  json_object_set_new(t, "kind", json_string("elementwise"));
  json_object_set_new(t, "maxUlp", json_integer(4 + 2 * max_steps));
  json_object_set_new(t, "atol", atol);
  json_object_set_new(t, "stateAtol", satol);
  if (any_rel)
    json_object_set_new(t, "updateRel", urel);
  else
    json_decref(urel);
  return t;
}

static json_t *step_inputs(gen_step_case *c, json_t *t)
{
  json_t *groups = json_array(), *params = json_array(), *steps = json_array();
  for (int gi = 0; gi < c->n_groups; gi++) {
    json_t *gj = json_object(), *idx = json_array();
    json_object_set_new(gj, "options", c->raw_options[gi] ? json_incref(c->raw_options[gi])
                                                          : muonref_case_options_json(&c->options[gi]));
    for (int i = 0; i < c->n_params; i++)
      if (c->group_of[i] == gi)
        json_array_append_new(idx, json_integer(i));
    json_object_set_new(gj, "params", idx);
    json_array_append_new(groups, gj);
  }
  for (int i = 0; i < c->n_params; i++) {
    json_t *p = json_object();
    json_object_set_new(p, "name", json_string(c->names[i] ? c->names[i] : "p"));
    json_object_set_new(p, "init", tensor_json(c->init[i], &c->shapes[i]));
    json_array_append_new(params, p);
  }
  for (int k = 0; k < c->n_steps; k++) {
    json_t *st = json_object(), *gl = json_array();
    for (int i = 0; i < c->n_params; i++) {
      json_t *gr = c->grads[k][i] ? tensor_json(c->grads[k][i], &c->shapes[i]) : json_null();
      const char *kind = c->grad_kind[k][i];
      if (kind && !strcmp(kind, "sparse"))
        json_object_set_new(gr, "layout", json_string("sparse"));
      if (kind && !strcmp(kind, "c64")) {
        json_object_set_new(gr, "dtype", json_string("c64"));
        json_object_del(gr, "hex");
      }
      json_array_append_new(gl, gr);
    }
    json_object_set_new(st, "grads", gl);
    json_array_append_new(steps, st);
  }
  json_object_set_new(t, "groups", groups);
  json_object_set_new(t, "params", params);
  json_object_set_new(t, "steps", steps);
  if (c->round_trip_after)
    json_object_set_new(t, "roundTripAfter", json_integer(c->round_trip_after));
  return t;
}

static void free_case(gen_step_case *c)
{
  json_decref(c->sharding);
  c->sharding = NULL;
  for (int i = 0; i < c->n_params; i++) {
    free(c->init[i]);
    json_decref(c->raw_options[i]);
    for (int k = 0; k < c->n_steps; k++)
      free(c->grads[k][i]);
  }
}

static int n_flags(const gen_step_case *c)
{
  int n = 0;
  while (n < 6 && c->flags[n])
    n++;
  return n;
}

/* ---- the queue of reference computations ---- */

struct gen_job {
  int is_step;               /* gen_add_step's case, else gen_add_ns's */
  json_t *t;                 /* the case's JSON (a reference of our own) */
  mpfr_prec_t prec;
  const char *profile;
  char *comment;
  gen_step_case c;           /* step: the case (owned arrays) */
  int ns_kind_ns;            /* ns: "ns" (with the polar factor) or "transpose" */
  float *in;                 /* ns: the input (owned) */
  size_t rows, cols;
  int ns_steps;
  int failed;                /* results */
  muonref_error err;
  long n_bf16_certified;
};

static void enqueue(gen_ctx *g, gen_job *j)
{
  if (g->n_jobs == g->cap_jobs) {
    size_t cap = g->cap_jobs ? 2 * g->cap_jobs : 64;
    gen_job **a = realloc(g->jobs, cap * sizeof *a);
    if (!a) { /* out of memory: fail the area (its file is not written) */
      muonref_error e;
      muonref_fail(&e, MUONREF_ENOMEM, "out of memory for the case queue");
      gen_fail(g, j->comment, &e);
      return;
    }
    g->jobs = a, g->cap_jobs = cap;
  }
  g->jobs[g->n_jobs++] = j;
}

static gen_job *new_job(gen_ctx *g, json_t *t, const char *comment)
{
  gen_job *j = calloc(1, sizeof *j);
  if (j) {
    j->t = json_incref(t);
    j->prec = g->prec;
    j->profile = g->profile;
    j->comment = strdup(comment ? comment : "");
  }
  return j;
}

static void free_job(gen_job *j)
{
  json_decref(j->t);
  free(j->comment);
  free(j->in);
  free(j);
}

/* o with the Newton-Schulz scalars (coefficients, eps) rounded to bf16:
 * what PyTorch 1.13 on CPU computes with Python scalars times bf16 tensors
 * (spec/vectors.md 5.3). */
static muonref_options scalars_bf16(muonref_options o)
{
  for (int k = 0; k < o.n_coeffs; k++) {
    o.coeffs[k].a = muonref_bf16_round((float)o.coeffs[k].a);
    o.coeffs[k].b = muonref_bf16_round((float)o.coeffs[k].b);
    o.coeffs[k].c = muonref_bf16_round((float)o.coeffs[k].c);
  }
  o.ns_eps = muonref_bf16_round((float)o.ns_eps);
  return o;
}

/* Whether some parameter of c takes the Muon update on a tall matrix
 * (rows > cols after flattening), where ports that transpose with a strided
 * view meet PyTorch 1.13 CPU's bf16 matmul on strided operands. */
static int has_tall_muon(const gen_step_case *c)
{
  for (int i = 0; i < c->n_params; i++) {
    muonref_route r = {0};
    if (muonref_route_param(&c->options[c->group_of[i]], &c->shapes[i], &r, NULL) == MUONREF_OK && r.use_muon &&
        r.rows > r.cols)
      return 1;
  }
  return 0;
}

/* Whether the case's bf16 result is the same with the scalars rounded to
 * bf16 (b16 is the separate order's result): the platform's scalar
 * rounding cannot change it. */
static int scalars_robust(gen_ctx *g, const gen_step_case *c, const sim *b16)
{
  gen_step_case r = *c;
  for (int k = 0; k < c->n_groups; k++)
    r.options[k] = scalars_bf16(c->options[k]);
  sim s;
  unsigned unc = 0;
  muonref_error err = {0};
  if (simulate(g, &r, MUONREF_NS_BF16, MUONREF_BF16_SEPARATE, &s, &unc, &err))
    return 0;
  int same = sim_equal(c, &s, b16);
  sim_free(&s, c->n_params);
  return same;
}

/* The expected values of a valid step case, into j->t. */
static void run_step(gen_job *j)
{
  gen_step_case *c = &j->c;
  gen_ctx g = {.prec = j->prec, .profile = j->profile};
  json_t *t = j->t;
  muonref_error *err = &j->err;
  sim exact;
  unsigned unc_exact, unc_bf16 = 0;
  int st = simulate(&g, c, MUONREF_NS_EXACT, MUONREF_BF16_SEPARATE, &exact, &unc_exact, err);
  int any_muon = 0;
  for (int i = 0; !st && i < c->n_params; i++)
    any_muon |= exact.muon_steps[i] > 0;
  /* bf16: every accepted evaluation order (spec/muon.md 7.2) must be
   * certified; expectedBf16 is the SEPARATE order's result, and
   * expectedBf16Orders names each other order's result or the order it
   * equals bit for bit. */
  int with_bf16 = 0, n_sims = 0;
  sim b16[MUONREF_N_BF16_ORDERS];
  if (!st && any_muon) {
    with_bf16 = 1;
    for (int k = 0; !st && with_bf16 && k < MUONREF_N_BF16_ORDERS; k++) {
      st = simulate(&g, c, MUONREF_NS_BF16, (muonref_bf16_order)k, &b16[k], &unc_bf16, err);
      n_sims = k + 1;
      with_bf16 = !st && (unc_bf16 & MUONREF_NSR_UNCERTAIN) == 0;
    }
    if (!with_bf16) {
      for (int k = 0; k < n_sims; k++)
        sim_free(&b16[k], c->n_params);
      n_sims = 0;
    }
  }
  if (st) {
    j->failed = 1;
    sim_free(&exact, c->n_params);
    free_case(c);
    return;
  }
  json_object_set_new(t, "expected", expected_json(c, &exact));
  if (with_bf16) {
    json_t *orders = json_object();
    json_object_set_new(t, "expectedBf16", expected_json(c, &b16[0]));
    for (int k = 1; k < MUONREF_N_BF16_ORDERS; k++) {
      int same = 0;
      while (same < k && !sim_equal(c, &b16[same], &b16[k]))
        same++;
      json_object_set_new(orders, muonref_bf16_order_name((muonref_bf16_order)k),
                          same < k ? json_string(muonref_bf16_order_name((muonref_bf16_order)same))
                                   : expected_json(c, &b16[k]));
    }
    json_object_set_new(t, "expectedBf16Orders", orders);
    json_array_append_new(json_object_get(t, "flags"), json_string("Bf16Exact"));
    if ((!has_tall_muon(c) || !(unc_bf16 & MUONREF_NSR_BF16_ACCUM)) && scalars_robust(&g, c, &b16[0]))
      json_array_append_new(json_object_get(t, "flags"), json_string("PlatformRobust"));
    j->n_bf16_certified++;
  } else if (any_muon) {
    json_array_append_new(json_object_get(t, "flags"), json_string("Bf16Noise"));
    json_array_append_new(json_object_get(t, "flags"), json_string("PlatformRobust"));
  } else {
    json_array_append_new(json_object_get(t, "flags"), json_string("PlatformRobust")); /* no Muon step */
  }
  json_t *tol = json_object();
  json_object_set_new(tol, "fp32", step_tolerance(c, &exact, 0, 0));
  json_object_set_new(tol, "bf16", step_tolerance(c, &exact, 1, with_bf16));
  json_object_set_new(t, "tolerance", tol);
  sim_free(&exact, c->n_params);
  for (int k = 0; k < n_sims; k++)
    sim_free(&b16[k], c->n_params);
  free_case(c);
}

void gen_add_step(gen_ctx *g, gen_step_case *c)
{
  if (g->failed) {
    free_case(c);
    return;
  }
  json_t *t = new_test(g, c->comment, c->flags, n_flags(c), c->error_message ? (c->result ? c->result : "invalid") : c->result);
  step_inputs(c, t);
  if (c->sharding) /* how ranks hold the parameters; the expected values stay the unsharded run's */
    json_object_set(t, "sharding", c->sharding);
  if (c->error_message) {
    json_t *e = json_object(), *er = json_object();
    json_object_set_new(er, "status", json_string(c->error_status));
    json_object_set_new(er, "message", json_string(c->error_message));
    if (c->error_any)
      json_object_set_new(er, "match", json_string("any"));
    json_array_append_new(json_object_get(t, "flags"), json_string("PlatformRobust"));
    json_object_set_new(e, "error", er);
    json_object_set_new(t, "expected", e);
    push_test(g, t);
    free_case(c);
    return;
  }
  push_test(g, t); /* in order now; the expected values follow from the queue */
  gen_job *j = new_job(g, t, c->comment);
  if (!j) {
    muonref_error e;
    muonref_fail(&e, MUONREF_ENOMEM, "out of memory for the case queue");
    gen_fail(g, c->comment, &e);
    free_case(c);
    return;
  }
  for (int i = 0; i < c->n_params; i++) { /* only step_inputs needed them: drop them on this thread */
    json_decref(c->raw_options[i]);
    c->raw_options[i] = NULL;
  }
  j->is_step = 1;
  j->c = *c; /* takes the arrays */
  j->c.comment = j->comment;
  enqueue(g, j);
}

/* ---- ns and transpose cases ---- */

/* The expected values of an ns or transpose case, into j->t. */
static void run_ns(gen_job *j)
{
  muonref_error *err = &j->err;
  muonref_options o;
  size_t rows = j->rows, cols = j->cols;
  const float *in = j->in;
  json_t *t = j->t;
  MUONREF_UNCHECKED(muonref_profile_options(j->profile, &o, NULL));
  o.ns_steps = j->ns_steps;
  o.ns_format = MUONREF_NS_EXACT;
  size_t n = rows * cols, m = rows < cols ? rows : cols;
  float *exact = malloc(n * sizeof *exact), *b16 = malloc(n * sizeof *b16), *q = malloc(n * sizeof *q);
  double *gd = malloc(n * sizeof *gd), *sv = malloc(m * sizeof *sv);
  float *ob[MUONREF_N_BF16_ORDERS] = {NULL}; /* the bf16 result per evaluation order; ob[0] is b16 */
  muonref_shape shape = {2, {rows, cols}};
  json_t *e = json_object(), *tol = json_object(), *tf = json_object(), *tb = json_object();
  int st = muonref_ref_ns_cr(exact, NULL, in, rows, cols, &o, j->prec, NULL, err);
  if (st) {
    j->failed = 1;
    goto done;
  }
  json_object_set_new(e, "exact", tensor_json(exact, &shape));
  for (size_t i = 0; i < n; i++)
    gd[i] = in[i];
  if (j->ns_kind_ns) {
    if (muonref_ref_polar_cr(q, NULL, NULL, gd, rows, cols, j->prec, NULL, err) == MUONREF_OK)
      json_object_set_new(e, "polar", tensor_json(q, &shape));
    else
      json_array_append_new(json_object_get(t, "flags"), json_string("NoPolarFactor"));
  }
  unsigned unc = 0;
  o.ns_format = MUONREF_NS_BF16;
  ob[0] = b16;
  for (int k = 1; k < MUONREF_N_BF16_ORDERS; k++)
    ob[k] = malloc(n * sizeof(float));
  for (int k = 0; (unc & MUONREF_NSR_UNCERTAIN) == 0 && k < MUONREF_N_BF16_ORDERS; k++) {
    unsigned u = 1;
    o.bf16_order = (muonref_bf16_order)k;
    if (!ob[k] || muonref_ref_ns_bf16(ob[k], in, rows, cols, &o, &u, err) != MUONREF_OK)
      u = 1;
    unc |= u;
  }
  if ((unc & MUONREF_NSR_UNCERTAIN) == 0) {
    json_t *orders = json_object();
    json_object_set_new(e, "bf16", tensor_json(b16, &shape));
    for (int k = 1; k < MUONREF_N_BF16_ORDERS; k++) {
      int same = 0;
      while (same < k && memcmp(ob[same], ob[k], n * sizeof(float)))
        same++;
      json_object_set_new(orders, muonref_bf16_order_name((muonref_bf16_order)k),
                          same < k ? json_string(muonref_bf16_order_name((muonref_bf16_order)same))
                                   : tensor_json(ob[k], &shape));
    }
    json_object_set_new(e, "bf16Orders", orders);
    json_array_append_new(json_object_get(t, "flags"), json_string("Bf16Exact"));
    muonref_options os = scalars_bf16(o);
    os.bf16_order = MUONREF_BF16_SEPARATE;
    unsigned u = 1;
    if (j->ns_kind_ns && (rows <= cols || !(unc & MUONREF_NSR_BF16_ACCUM)) && ob[1] &&
        muonref_ref_ns_bf16(ob[1], in, rows, cols, &os, &u, err) == MUONREF_OK && !memcmp(ob[1], b16, n * sizeof(float)))
      json_array_append_new(json_object_get(t, "flags"), json_string("PlatformRobust"));
    json_object_set_new(tb, "kind", json_string("bitwise"));
    j->n_bf16_certified++;
  } else {
    muonref_tensor et = {MUONREF_TENSOR_F32, shape, n, exact, NULL};
    muonref_tensor_singular_values(&et, sv);
    json_array_append_new(json_object_get(t, "flags"), json_string("Bf16Noise"));
    if (j->ns_kind_ns) /* a transpose pair's bitwise rule meets the strided kernels */
      json_array_append_new(json_object_get(t, "flags"), json_string("PlatformRobust"));
    json_object_set_new(tb, "kind", json_string("svBand"));
    json_object_set_new(tb, "lo", json_real(fmax(0.0, sv[m - 1] - 0.3)));
    json_object_set_new(tb, "hi", json_real(sv[0] + 0.3));
  }
  json_object_set_new(tf, "kind", json_string("relative"));
  json_object_set_new(tf, "max", json_real(3e-5));
  json_object_set_new(tol, "fp32", tf);
  json_object_set_new(tol, "bf16", tb);
  tf = tb = NULL;
  json_object_set_new(t, "expected", e);
  json_object_set_new(t, "tolerance", tol);
  e = tol = NULL;
done:
  json_decref(e), json_decref(tol), json_decref(tf), json_decref(tb);
  for (int k = 1; k < MUONREF_N_BF16_ORDERS; k++)
    free(ob[k]);
  free(exact), free(b16), free(q), free(gd), free(sv);
}

void gen_add_ns(gen_ctx *g, const char *kind, const char *comment, const char *const *flags, const float *in,
                size_t rows, size_t cols, int ns_steps)
{
  if (g->failed)
    return;
  int nf = 0;
  while (flags && flags[nf])
    nf++;
  json_t *t = new_test(g, comment, flags, nf, "valid");
  muonref_shape shape = {2, {rows, cols}};
  json_object_set_new(t, "input", tensor_json(in, &shape));
  json_object_set_new(t, "nsSteps", json_integer(ns_steps));
  push_test(g, t); /* in order now; the expected values follow from the queue */
  gen_job *j = new_job(g, t, comment);
  if (j)
    j->in = malloc(rows * cols * sizeof *j->in);
  if (!j || !j->in || !j->comment) {
    muonref_error e;
    muonref_fail(&e, MUONREF_ENOMEM, "out of memory for the case queue");
    gen_fail(g, comment, &e);
    if (j)
      free_job(j);
    return;
  }
  memcpy(j->in, in, rows * cols * sizeof *j->in);
  j->ns_kind_ns = !strcmp(kind, "ns");
  j->rows = rows, j->cols = cols, j->ns_steps = ns_steps;
  enqueue(g, j);
}

/* ---- running the queue ---- */

typedef struct pool {
  gen_job **jobs; /* every context's jobs, in order */
  size_t n;
  size_t next;    /* the next job to take (under lock) */
  pthread_mutex_t lock;
} pool;

static void run_job(gen_job *j)
{
  if (j->is_step)
    run_step(j);
  else
    run_ns(j);
}

static void *worker(void *arg)
{
  pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    size_t i = p->next < p->n ? p->next++ : p->n;
    pthread_mutex_unlock(&p->lock);
    if (i == p->n)
      break;
    run_job(p->jobs[i]);
  }
  mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); /* this thread's constant caches */
  return NULL;
}

int gen_run_jobs(gen_ctx *const *ctx, size_t n, int threads)
{
  pool p = {NULL, 0, 0, PTHREAD_MUTEX_INITIALIZER};
  size_t total = 0;
  for (size_t k = 0; k < n; k++)
    total += ctx[k]->n_jobs;
  p.jobs = malloc((total ? total : 1) * sizeof *p.jobs);
  int st = 0;
  if (!p.jobs) { /* run each context's queue in place, on this thread */
    for (size_t k = 0; k < n; k++)
      for (size_t i = 0; i < ctx[k]->n_jobs; i++)
        run_job(ctx[k]->jobs[i]);
  } else {
    for (size_t k = 0; k < n; k++)
      for (size_t i = 0; i < ctx[k]->n_jobs; i++)
        p.jobs[p.n++] = ctx[k]->jobs[i];
    pthread_t tid[64];
    int started = 0;
    threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    for (int i = 1; i < threads && (size_t)i < p.n; i++) {
      if (pthread_create(&tid[started], NULL, worker, &p) != 0) {
        st = -1;
        break;
      }
      started++;
    }
    for (;;) { /* the calling thread works too */
      pthread_mutex_lock(&p.lock);
      size_t i = p.next < p.n ? p.next++ : p.n;
      pthread_mutex_unlock(&p.lock);
      if (i == p.n)
        break;
      run_job(p.jobs[i]);
    }
    for (int i = 0; i < started; i++)
      pthread_join(tid[i], NULL);
    free(p.jobs);
  }
  for (size_t k = 0; k < n; k++) {
    gen_ctx *g = ctx[k];
    for (size_t i = 0; i < g->n_jobs; i++) {
      gen_job *j = g->jobs[i];
      g->n_bf16_certified += j->n_bf16_certified;
      if (j->failed)
        gen_fail(g, j->comment, &j->err);
      free_job(j);
    }
    free(g->jobs);
    g->jobs = NULL;
    g->n_jobs = g->cap_jobs = 0;
  }
  return st;
}

void gen_add_ns_error(gen_ctx *g, const char *comment, const muonref_shape *shape, const char *status,
                      const char *message)
{
  const char *flags[] = {"ErrorMessage", "PlatformRobust", "BugB24", NULL}; /* B24: a non-matrix input */
  json_t *t = new_test(g, comment, flags, 3, "invalid");
  size_t n = muonref_shape_numel(shape);
  float *z = gen_zeros(n);
  json_object_set_new(t, "input", tensor_json(z, shape));
  free(z);
  json_object_set_new(t, "nsSteps", json_integer(5));
  json_t *e = json_object(), *er = json_object();
  json_object_set_new(er, "status", json_string(status));
  json_object_set_new(er, "message", json_string(message));
  json_object_set_new(e, "error", er);
  json_object_set_new(t, "expected", e);
  push_test(g, t);
}
