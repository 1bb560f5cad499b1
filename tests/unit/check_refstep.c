/* muonref tests: the exact optimizer step (ref/step_exact.c) against the
 * fast fp32 step over several steps, against element-wise formulas
 * evaluated in MPFR at 1024 bits and rounded by MPFR's own mpfr_get_flt,
 * its precision-doubling check, and its errors. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "muonref.h"
#include "muonref/ns_rounded.h"
#include "muonref/ref.h"
#include "testutil.h"
#include "core/plan.h"

/* Muon 24x16 (tall), Muon 16x40 (wide), AdamW vector 48. */
static const muonref_shape SHAPES[] = {{2, {24, 16}}, {2, {16, 40}}, {1, {48}}};
enum { NP = 3, STEPS = 4 };

typedef struct ref_param {
  float *p, *b1, *b2;
  muonref_param_state st;
} ref_param;

static void ref_param_init(ref_param *rp, size_t n, const float *p0)
{
  rp->p = malloc(n * 4), rp->b1 = malloc(n * 4), rp->b2 = malloc(n * 4);
  memcpy(rp->p, p0, n * 4);
  memset(&rp->st, 0, sizeof rp->st);
}

static void ref_param_bind(ref_param *rp, int use_muon)
{
  rp->st.momentum_buffer = use_muon ? rp->b1 : NULL;
  rp->st.exp_avg = use_muon ? NULL : rp->b1;
  rp->st.exp_avg_sq = use_muon ? NULL : rp->b2;
}

static void ref_param_free(ref_param *rp) { free(rp->p), free(rp->b1), free(rp->b2); }

/* |a - b| <= k ulp(max(|a|, |b|)) + abs_tol */
static int close_ulps(float a, float b, double k, double abs_tol)
{
  double m = fmax(fabs((double)a), fabs((double)b));
  double ulp = m > 0x1p-126 ? ldexp(1.0, ilogb(m) - 23) : 0x1p-149;
  return fabs((double)a - (double)b) <= k * ulp + abs_tol;
}

/* Options variant v: nesterov (bit 0), EMA (bit 1), weight decay (bit 2). */
static muonref_options variant(int v)
{
  muonref_options o = tu_nemo();
  o.ns_format = MUONREF_NS_FP32;
  o.nesterov = v & 1;
  o.momentum_form = (v & 2) ? MUONREF_MOMENTUM_EMA : MUONREF_MOMENTUM_SUM;
  o.weight_decay = (v & 4) ? 0.01 : 0.0;
  o.use_muon = MUONREF_USE_MUON_AUTO;
  return o;
}

/* The exact step follows the fast fp32 step over STEPS steps, both
 * branches: Muon parameters within 1e-5 lr * scale per step plus 4 ulps,
 * momentum within 2 ulps plus 4e-7 per step (the two trajectories differ
 * by an ulp of the terms, which cancellation turns into more ulps of a
 * small result), AdamW values within 4 ulps (+1e-7 for exp_avg) per step. */
START_TEST(exact_step_tracks_fast_fp32_step)
{
  muonref_options o = variant(_i);
  muonref_group grp = {o, NP, SHAPES};
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create(&grp, 1, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  tu_rng rng = {tu_seed(31) + (uint64_t)_i};
  float *fp[NP], *g[NP];
  ref_param rp[NP];
  for (int i = 0; i < NP; i++) {
    size_t n = muonref_shape_numel(&SHAPES[i]);
    fp[i] = malloc(n * 4), g[i] = malloc(n * 4);
    tu_fill_normal(&rng, fp[i], n, 1.0);
    ref_param_init(&rp[i], n, fp[i]);
    ref_param_bind(&rp[i], muonref_optimizer_route(opt, (size_t)i)->use_muon);
  }
  ck_assert(muonref_optimizer_route(opt, 0)->use_muon && !muonref_optimizer_route(opt, 2)->use_muon);
  for (int s = 1; s <= STEPS; s++) {
    muonref_grad gr[NP];
    for (int i = 0; i < NP; i++) {
      tu_fill_normal(&rng, g[i], muonref_shape_numel(&SHAPES[i]), 0.5);
      gr[i] = (muonref_grad){g[i], MUONREF_DENSE, MUONREF_FLOAT32};
    }
    ck_assert_int_eq(muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), fp, gr, &e), MUONREF_OK);
    for (int i = 0; i < NP; i++) {
      const muonref_route *r = muonref_optimizer_route(opt, (size_t)i);
      ck_assert_msg(muonref_ref_step(&o, r, rp[i].p, &rp[i].st, g[i], 160, &e) == MUONREF_OK, "%s", e.message);
      ck_assert(rp[i].st.initialized && rp[i].st.step == s && rp[i].st.numel == r->numel);
      muonref_param_state fs;
      ck_assert_int_eq(muonref_optimizer_state(opt, (size_t)i, &fs, NULL), MUONREF_OK);
      double scale = muonref_scale_factor(o.scale_mode, r->rows, r->cols);
      for (size_t k = 0; k < r->numel; k++) {
        if (r->use_muon) {
          ck_assert_msg(close_ulps(rp[i].p[k], fp[i][k], 4.0 * s, 1e-5 * o.lr * scale * s),
                        "variant %d step %d param %d[%zu]: ref %.9g fast %.9g", _i, s, i, k, (double)rp[i].p[k],
                        (double)fp[i][k]);
          ck_assert_msg(close_ulps(rp[i].b1[k], fs.momentum_buffer[k], 2.0 * s, 4e-7 * s), "momentum %d[%zu] step %d: %a vs %a", i, k, s, (double)rp[i].b1[k], (double)fs.momentum_buffer[k]);
        } else {
          ck_assert_msg(close_ulps(rp[i].p[k], fp[i][k], 4.0 * s, 0), "adamw param [%zu]", k);
          ck_assert(close_ulps(rp[i].b1[k], fs.exp_avg[k], 4.0 * s, 1e-7 * s));
          ck_assert(close_ulps(rp[i].b2[k], fs.exp_avg_sq[k], 4.0 * s, 0));
        }
      }
    }
  }
  for (int i = 0; i < NP; i++)
    free(fp[i]), free(g[i]), ref_param_free(&rp[i]);
  muonref_optimizer_free(opt);
}
END_TEST

/* The parameters the fused passes leave to muon_compute_unfused (fast/optimizer.c: a conv under conv_mode
 * SPATIAL, whose matrices interleave, and nuclear_scale) with a second moment (rows, the norm restored),
 * cautious decay and Nesterov: the fast fp32 step follows the exact one over three steps, the parameter
 * within 1e-4 of the largest move and the second moment within 1e-4 of its largest entry; loop 2 is the
 * fused path's control.  The same fast run is far (> 1e-2) from the reference without the second moment,
 * so a path that dropped it fails. */
START_TEST(unfused_step_with_second_moment_tracks_exact)
{
  static const muonref_shape SH[] = {{4, {8, 4, 3, 3}}, {2, {12, 20}}, {2, {12, 20}}};
  muonref_options o = variant(5), o0;
  o.weight_decay = 0.05;
  o.use_muon = MUONREF_USE_MUON_TRUE;
  o.moment2 = MUONREF_MOMENT2_ROWS, o.moment2_beta = 0.95, o.moment2_eps = 1e-8;
  o.moment2_rescale = MUONREF_MOMENT2_RESCALE_NORM, o.cautious_wd = 1;
  if (_i == 0)
    o.conv_mode = MUONREF_CONV_SPATIAL, o.normalize_spatial = 1;
  if (_i == 1)
    o.nuclear_scale = 1;
  o0 = o;
  o0.moment2 = MUONREF_MOMENT2_NONE;
  muonref_group grp = {o, 1, &SH[_i]};
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create(&grp, 1, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  const muonref_route *r = muonref_optimizer_route(opt, 0);
  ck_assert(r->use_muon && r->batch == (_i == 0 ? 9u : 1u));
  size_t n = r->numel, m2n = muonref_moment2_numel(&o, r);
  ck_assert_uint_eq(m2n, r->batch * r->rows);
  tu_rng rng = {tu_seed(31) + 90 + (uint64_t)_i};
  float *fp = malloc(n * 4), *g = malloc(n * 4), *p0 = malloc(n * 4), *v = calloc(m2n, 4);
  ref_param rp, rq; /* rq: the reference without the second moment */
  tu_fill_normal(&rng, fp, n, 1.0);
  memcpy(p0, fp, n * 4);
  ref_param_init(&rp, n, fp), ref_param_init(&rq, n, fp);
  ref_param_bind(&rp, 1), ref_param_bind(&rq, 1);
  rp.st.moment2 = v, rp.st.moment2_numel = m2n;
  double dmax = 0, move = 0, dnone = 0;
  for (int s = 1; s <= 3; s++) {
    tu_fill_normal(&rng, g, n, 0.5);
    muonref_grad gr = {g, MUONREF_DENSE, MUONREF_FLOAT32};
    float *pp = fp;
    ck_assert_int_eq(muonref_optimizer_step(opt, 1, &pp, &gr, &e), MUONREF_OK);
    ck_assert_msg(muonref_ref_step(&o, r, rp.p, &rp.st, g, 160, &e) == MUONREF_OK, "%s", e.message);
    ck_assert_msg(muonref_ref_step(&o0, r, rq.p, &rq.st, g, 160, &e) == MUONREF_OK, "%s", e.message);
    muonref_param_state fs;
    ck_assert_int_eq(muonref_optimizer_state(opt, 0, &fs, NULL), MUONREF_OK);
    ck_assert_uint_eq(fs.moment2_numel, m2n);
    double vmax = 0, vd = 0;
    for (size_t k = 0; k < m2n; k++)
      vmax = fmax(vmax, fabs(v[k])), vd = fmax(vd, fabs((double)v[k] - (double)fs.moment2[k]));
    ck_assert_msg(vd <= 1e-4 * vmax, "loop %d step %d: second moment off by %g of %g", _i, s, vd, vmax);
  }
  for (size_t k = 0; k < n; k++) {
    move = fmax(move, fabs((double)rp.p[k] - (double)p0[k]));
    dmax = fmax(dmax, fabs((double)rp.p[k] - (double)fp[k]));
    dnone = fmax(dnone, fabs((double)rq.p[k] - (double)fp[k]));
  }
  ck_assert_msg(dmax <= 1e-4 * move, "loop %d: fast off by %g of a move of %g", _i, dmax, move);
  ck_assert_msg(dnone > 1e-2 * move, "loop %d: the second moment changes only %g of %g", _i, dnone, move);
  free(fp), free(g), free(p0), free(v), ref_param_free(&rp), ref_param_free(&rq);
  muonref_optimizer_free(opt);
}
END_TEST

/* moment2_prescale (options.h; Emerging-Optimizers v0.2.0's AdaptiveMuon, Megatron's adaptive_muon):
 * the Muon scale s before an element-wise second moment (eps 1e-30, beta2 0.95, no rescale) and alpha = lr.
 * At the first step N_j = s O_j / (sqrt(0.05) s |O_j|) is sign(O_j) / sqrt(0.05) whatever s, so the exact
 * move without the prescale (the scale after N) is s times the exact move with it (to the binary32 roundings
 * of the stored parameter); the fast fp32 step follows the exact one with the prescale (1e-4 of the move).
 * s = sqrt(max(12, 20)) under scale_mode sqrt_max.  Only the factor comes from the definition. */
START_TEST(moment2_prescale_moves_by_lr_alone)
{
  static const muonref_shape SH = {2, {12, 20}};
  muonref_options o = variant(0), o0;
  o.use_muon = MUONREF_USE_MUON_TRUE, o.scale_mode = MUONREF_SCALE_SQRT_MAX, o.lr = 1e-3;
  o.moment2 = MUONREF_MOMENT2_ELEMENT, o.moment2_beta = 0.95, o.moment2_eps = 1e-30;
  o.moment2_prescale = 1;
  o0 = o, o0.moment2_prescale = 0;
  muonref_group grp = {o, 1, &SH};
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create(&grp, 1, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  const muonref_route *r = muonref_optimizer_route(opt, 0);
  size_t n = r->numel;
  tu_rng rng = {tu_seed(31) + 97};
  float *fp = malloc(n * 4), *g = malloc(n * 4), *p0 = malloc(n * 4), *v = calloc(n, 4), *v0 = calloc(n, 4);
  ref_param rp, rq;
  tu_fill_normal(&rng, fp, n, 1.0);
  memcpy(p0, fp, n * 4);
  ref_param_init(&rp, n, fp), ref_param_init(&rq, n, fp);
  ref_param_bind(&rp, 1), ref_param_bind(&rq, 1);
  rp.st.moment2 = v, rp.st.moment2_numel = n, rq.st.moment2 = v0, rq.st.moment2_numel = n;
  tu_fill_normal(&rng, g, n, 0.5);
  muonref_grad gr = {g, MUONREF_DENSE, MUONREF_FLOAT32};
  float *pp = fp;
  ck_assert_int_eq(muonref_optimizer_step(opt, 1, &pp, &gr, &e), MUONREF_OK);
  ck_assert_msg(muonref_ref_step(&o, r, rp.p, &rp.st, g, 160, &e) == MUONREF_OK, "%s", e.message);
  ck_assert_msg(muonref_ref_step(&o0, r, rq.p, &rq.st, g, 160, &e) == MUONREF_OK, "%s", e.message);
  double s = sqrt(20.0), move = 0, dfast = 0, dratio = 0;
  for (size_t k = 0; k < n; k++) {
    double m = (double)rp.p[k] - (double)p0[k], m0 = (double)rq.p[k] - (double)p0[k];
    move = fmax(move, fabs(m));
    dfast = fmax(dfast, fabs((double)rp.p[k] - (double)fp[k]));
    dratio = fmax(dratio, fabs(m0 - s * m));
  }
  ck_assert_msg(move > 1e-3, "the move %g", move);
  ck_assert_msg(dfast <= 1e-4 * move, "fast off by %g of a move of %g", dfast, move);
  ck_assert_msg(dratio <= 1e-3 * s * move, "the scale after moves by s times the prescaled move, off by %g", dratio);
  free(fp), free(g), free(p0), free(v), free(v0), ref_param_free(&rp), ref_param_free(&rq);
  muonref_optimizer_free(opt);
}
END_TEST

/* ns_heads (spec/muon.md 7.5): the exact step of a (3 d, n) Muon matrix with three heads is, bit for bit,
 * the exact steps of its three row blocks (d, n) as parameters of their own, over two steps with Nesterov
 * and decay (the reference of each head computed without heads); and the route's errors at the step, in
 * dion's words.  A port that orthogonalizes the whole matrix moves it elsewhere (checked: the whole
 * matrix's step differs). */
START_TEST(heads_are_separate_parameters)
{
  enum { D = 4, N = 6, H = 3 };
  muonref_options o = variant(5), oh;
  o.use_muon = MUONREF_USE_MUON_TRUE, o.scale_mode = MUONREF_SCALE_RMS_TO_RMS, o.ns_format = MUONREF_NS_BF16;
  oh = o, oh.ns_heads = H;
  muonref_shape whole = {2, {H * D, N}}, head = {2, {D, N}};
  muonref_route rh, r1, rw;
  muonref_error e;
  ck_assert_msg(muonref_route_param(&oh, &whole, &rh, &e) == MUONREF_OK, "%s", e.message);
  ck_assert_msg(muonref_route_param(&o, &head, &r1, &e) == MUONREF_OK, "%s", e.message);
  ck_assert_msg(muonref_route_param(&o, &whole, &rw, &e) == MUONREF_OK, "%s", e.message);
  ck_assert_uint_eq(rh.batch, H);
  ck_assert_uint_eq(rh.rows, D);
  ck_assert_uint_eq(rh.scale_rows, D);
  tu_rng rng = {tu_seed(41) + 13};
  float p0[H * D * N], g[2][H * D * N];
  tu_fill_normal(&rng, p0, H * D * N, 1.0);
  tu_fill_normal(&rng, g[0], H * D * N, 1.0), tu_fill_normal(&rng, g[1], H * D * N, 1.0);
  ref_param rp, rq, parts[H];
  ref_param_init(&rp, H * D * N, p0), ref_param_init(&rq, H * D * N, p0);
  ref_param_bind(&rp, 1), ref_param_bind(&rq, 1);
  memset(rp.b1, 0, sizeof p0), memset(rq.b1, 0, sizeof p0);
  for (int h = 0; h < H; h++) {
    ref_param_init(&parts[h], D * N, p0 + h * D * N), ref_param_bind(&parts[h], 1);
    memset(parts[h].b1, 0, D * N * 4);
  }
  for (int s = 0; s < 2; s++) {
    ck_assert_msg(muonref_ref_step(&oh, &rh, rp.p, &rp.st, g[s], 160, &e) == MUONREF_OK, "%s", e.message);
    ck_assert_msg(muonref_ref_step(&o, &rw, rq.p, &rq.st, g[s], 160, &e) == MUONREF_OK, "%s", e.message);
    for (int h = 0; h < H; h++)
      ck_assert_msg(muonref_ref_step(&o, &r1, parts[h].p, &parts[h].st, g[s] + h * D * N, 160, &e) == MUONREF_OK,
                    "%s", e.message);
  }
  int whole_differs = 0;
  for (int h = 0; h < H; h++)
    for (int k = 0; k < D * N; k++) {
      ck_assert_msg(rp.p[h * D * N + k] == parts[h].p[k], "head %d element %d: %a, alone %a", h, k,
                    rp.p[h * D * N + k], parts[h].p[k]);
      ck_assert(rp.b1[h * D * N + k] == parts[h].b1[k]);
      whole_differs |= rq.p[h * D * N + k] != rp.p[h * D * N + k];
    }
  ck_assert_msg(whole_differs, "the whole matrix's step is the heads' step: the case cannot see heads");
  static const struct { muonref_shape s; muonref_conv_mode conv; const char *msg; } E[] = {
    {{2, {8, 16}}, MUONREF_CONV_BATCHED, "num_heads (3) must divide dim 0 of the parameter (got shape (8, 16))."},
    {{3, {3, 4, 8}}, MUONREF_CONV_BATCHED, "num_heads is only supported for 2D parameters, got shape (3, 4, 8)."},
    {{2, {12, 16}}, MUONREF_CONV_FLATTEN, "num_heads > 1 is incompatible with flatten=True: flattening the per-head "
                                          "3D view collapses heads back into a single 2D matrix, defeating per-head "
                                          "Newton-Schulz."},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++) {
    muonref_options od = oh;
    od.catalogue = MUONREF_CATALOGUE_DION, od.conv_mode = E[k].conv;
    ck_assert_int_eq(muonref_route_param(&od, &E[k].s, &rw, &e), MUONREF_ESHAPE);
    ck_assert_str_eq(e.message, E[k].msg);
  }
  oh.ns_heads = -1;
  ck_assert_int_eq(muonref_options_validate(&oh, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid ns_heads: -1 (the number of heads must be at least 0)");
  ref_param_free(&rp), ref_param_free(&rq);
  for (int h = 0; h < H; h++)
    ref_param_free(&parts[h]);
}
END_TEST

/* The exact step under os (row blocks) of a (rows, cols) Muon matrix against the exact steps under o of its nb
 * blocks as parameters of their own, over two steps from the generator `seed`: block b is the (br[b], bc[b])
 * matrix whose element k (row-major) is the parameter's element at[b][k], by the caller's own layout
 * arithmetic; the values and the momentum agree bit for bit. */
static void blocks_are_separate(const muonref_options *o, const muonref_options *os, size_t rows, size_t cols, int nb,
                                const size_t *br, const size_t *bc, size_t *const *at, uint64_t seed, const char *what)
{
  size_t n = rows * cols;
  muonref_shape whole = {2, {rows, cols}};
  muonref_route rs;
  muonref_error e;
  ck_assert_msg(muonref_route_param(os, &whole, &rs, &e) == MUONREF_OK, "%s", e.message);
  ck_assert_uint_eq(rs.split, (size_t)nb);
  tu_rng rng = {seed};
  float *p0 = malloc(n * sizeof *p0), *g = malloc(2 * n * sizeof *g), *xb = malloc(n * sizeof *xb);
  tu_fill_normal(&rng, p0, n, 1.0);
  tu_fill_normal(&rng, g, n, 1.0), tu_fill_normal(&rng, g + n, n, 1.0);
  ref_param rp, parts[MUONREF_MAX_SPLIT];
  ref_param_init(&rp, n, p0), ref_param_bind(&rp, 1);
  memset(rp.b1, 0, n * sizeof *rp.b1);
  for (int b = 0; b < nb; b++) {
    for (size_t k = 0; k < br[b] * bc[b]; k++)
      xb[k] = p0[at[b][k]];
    ref_param_init(&parts[b], br[b] * bc[b], xb), ref_param_bind(&parts[b], 1);
    memset(parts[b].b1, 0, br[b] * bc[b] * sizeof *parts[b].b1);
  }
  for (int s = 0; s < 2; s++) {
    ck_assert_msg(muonref_ref_step(os, &rs, rp.p, &rp.st, g + s * n, 160, &e) == MUONREF_OK, "%s", e.message);
    for (int b = 0; b < nb; b++) {
      muonref_shape sh = {2, {br[b], bc[b]}};
      muonref_route rb;
      for (size_t k = 0; k < br[b] * bc[b]; k++)
        xb[k] = g[s * n + at[b][k]];
      ck_assert(muonref_route_param(o, &sh, &rb, &e) == MUONREF_OK);
      ck_assert_msg(muonref_ref_step(o, &rb, parts[b].p, &parts[b].st, xb, 160, &e) == MUONREF_OK, "%s", e.message);
    }
  }
  for (int b = 0; b < nb; b++)
    for (size_t k = 0; k < br[b] * bc[b]; k++) {
      ck_assert_msg(rp.p[at[b][k]] == parts[b].p[k], "%s block %d element %zu", what, b, k);
      ck_assert(rp.b1[at[b][k]] == parts[b].b1[k]);
    }
  ref_param_free(&rp);
  for (int b = 0; b < nb; b++)
    ref_param_free(&parts[b]);
  free(p0), free(g), free(xb);
}

/* ns_split (spec/muon.md 7.6), ns_split_mode GROUPS: the exact step of a (G S, n) Muon matrix with sizes
 * (4, 2, 2) over G = 2 query groups is, bit for bit, the exact steps of Q (rows 0-3, 8-11), K (4, 5, 12, 13)
 * and V (6, 7, 14, 15) gathered here by Megatron's layout as parameters of their own, over two steps; under
 * STACKED the blocks are rows 0-7, 8-11, 12-15 instead; under COLUMNS (Paddle's split on axis 1) columns 0-7,
 * 8-11, 12-15 of an (8, 16) matrix.  And the route's and validation's refusals. */
START_TEST(split_blocks_are_separate_parameters)
{
  enum { G = 2, S = 8, N = 8, R = G * S };
  static const int SIZE[3] = {4, 2, 2}, OFF[3] = {0, 4, 6};
  static size_t at0[R * N], at1[R * N], at2[R * N];
  size_t *at[3] = {at0, at1, at2}, br[3], bc[3];
  for (int stacked = 0; stacked < 2; stacked++) {
    muonref_options o = variant(5), os;
    o.use_muon = MUONREF_USE_MUON_TRUE, o.scale_mode = MUONREF_SCALE_SQRT_MAX, o.ns_format = MUONREF_NS_FP32;
    os = o, os.n_ns_split = 3, os.ns_split[0] = 4, os.ns_split[1] = 2, os.ns_split[2] = 2;
    os.ns_split_mode = stacked ? MUONREF_SPLIT_STACKED : MUONREF_SPLIT_GROUPS;
    for (int b = 0; b < 3; b++) { /* the parameter's rows of each block, by Megatron's layout (or stacked) */
      br[b] = (size_t)(G * SIZE[b]), bc[b] = N;
      for (int i = 0; i < G * SIZE[b]; i++)
        for (int j = 0; j < N; j++)
          at[b][i * N + j] = (size_t)((stacked ? G * OFF[b] + i : (i / SIZE[b]) * S + OFF[b] + i % SIZE[b]) * N + j);
    }
    blocks_are_separate(&o, &os, R, N, 3, br, bc, at, tu_seed(43) + 7 + (unsigned)stacked,
                        stacked ? "stacked" : "groups");
  }
  { /* COLUMNS (Paddle's split_concat_func on axis 1): an (8, 16) matrix cut into columns 0-7, 8-11, 12-15 */
    enum { RR = 8, CC = 16 };
    static const int W[3] = {8, 4, 4}, C0[3] = {0, 8, 12};
    muonref_options o = variant(1), os;
    o.use_muon = MUONREF_USE_MUON_TRUE, o.scale_mode = MUONREF_SCALE_FAN_OUT, o.ns_format = MUONREF_NS_FP32;
    os = o, os.n_ns_split = 3, os.ns_split[0] = 8, os.ns_split[1] = 4, os.ns_split[2] = 4;
    os.ns_split_mode = MUONREF_SPLIT_COLUMNS;
    for (int b = 0; b < 3; b++) {
      br[b] = RR, bc[b] = (size_t)W[b];
      for (int i = 0; i < RR; i++)
        for (int j = 0; j < W[b]; j++)
          at[b][i * W[b] + j] = (size_t)(i * CC + C0[b] + j);
    }
    blocks_are_separate(&o, &os, RR, CC, 3, br, bc, at, tu_seed(53) + 11, "columns");
  }
  /* the refusals (spec/muon.md 7.6), at the step */
  muonref_options o = variant(0);
  o.use_muon = MUONREF_USE_MUON_TRUE;
  o.n_ns_split = 3, o.ns_split[0] = 3, o.ns_split[1] = 2, o.ns_split[2] = 2;
  muonref_shape s816 = {2, {8, 16}}, s3 = {3, {2, 7, 4}}, s1416 = {2, {14, 16}};
  muonref_route r;
  muonref_error e;
  ck_assert_int_eq(muonref_route_param(&o, &s816, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "split_sizes (3, 2, 2) must sum to dim 0 of the parameter (got shape (8, 16)).");
  ck_assert_int_eq(muonref_route_param(&o, &s3, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "split_sizes is only supported for 2D parameters, got shape (2, 7, 4).");
  o.ns_split_mode = MUONREF_SPLIT_GROUPS;
  ck_assert_int_eq(muonref_route_param(&o, &s816, &r, &e), MUONREF_ESHAPE);
  ck_assert_str_eq(e.message, "Muon QKV split shape mismatch: grad_shape=(8, 16), split_shapes=[3, 2, 2]");
  ck_assert_int_eq(muonref_route_param(&o, &s1416, &r, &e), MUONREF_OK);
  ck_assert_uint_eq(r.split, 3);
  o.ns_split_mode = MUONREF_SPLIT_OFF; /* the sizes not applied: any shape */
  ck_assert_int_eq(muonref_route_param(&o, &s816, &r, &e), MUONREF_OK);
  ck_assert_uint_eq(r.split, 0);
  o.ns_split_mode = MUONREF_SPLIT_ROWS, o.ns_heads = 2;
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  muonref_options od = o; /* dion reads num_heads first: under flatten=True its refusal comes first */
  od.catalogue = MUONREF_CATALOGUE_DION, od.conv_mode = MUONREF_CONV_FLATTEN, od.ns_split[0] = 4, od.ns_split[1] = 4;
  od.n_ns_split = 2;
  ck_assert_int_eq(muonref_options_validate(&od, &e), MUONREF_EOPTION);
  ck_assert_msg(!strncmp(e.message, "num_heads > 1 is incompatible with flatten=True", 47), "%s", e.message);
  od.conv_mode = MUONREF_CONV_BATCHED;
  ck_assert_int_eq(muonref_options_validate(&od, &e), MUONREF_EOPTION);
  ck_assert_msg(!strncmp(e.message, "split_sizes is incompatible with num_heads > 1", 46), "%s", e.message);
  o.ns_heads = 0, o.moment2 = MUONREF_MOMENT2_ROWS;
  ck_assert_int_eq(muonref_options_validate(&o, &e), MUONREF_EOPTION);
  ck_assert_str_eq(e.message, "Invalid ns_split: row blocks with a second moment (moment2) are not modelled");
}
END_TEST

/* dion's ns_split_scale RATIO (spec/muon.md 7.6): on a (8, 16) matrix split (4, 2, 2) under dion's bf16
 * update (scale_format BF16_ALPHA, rms_to_rms), each block's update is R_bf16(R_bf16(O fl32(ratio)) fl32(lr s))
 * with s the matrix's factor: against the same blocks under OWN (R_bf16(O fl32(lr s_b)) in one product) the
 * parameters move by the same amount up to the bf16 roundings (2^-7 of the update), and differ somewhere;
 * the fast bf16 path gives the exact result bit for bit. */
START_TEST(split_ratio_is_a_first_bf16_product)
{
  muonref_options o;
  muonref_error e;
  ck_assert_int_eq(muonref_profile_options("dion", &o, &e), MUONREF_OK);
  o.use_muon = MUONREF_USE_MUON_TRUE, o.lr = 0.05, o.weight_decay = 0.0;
  o.n_ns_split = 3, o.ns_split[0] = 4, o.ns_split[1] = 2, o.ns_split[2] = 2;
  muonref_options own = o;
  own.ns_split_scale = MUONREF_SPLIT_SCALE_OWN;
  ck_assert_int_eq(o.ns_split_scale, MUONREF_SPLIT_SCALE_RATIO);
  muonref_shape sh = {2, {8, 16}};
  muonref_route r;
  ck_assert_int_eq(muonref_route_param(&o, &sh, &r, &e), MUONREF_OK);
  tu_rng rng = {tu_seed(47) + 3};
  float p0[128], g[128];
  tu_fill_normal(&rng, p0, 128, 1.0), tu_fill_normal(&rng, g, 128, 1.0);
  ref_param a, b;
  ref_param_init(&a, 128, p0), ref_param_init(&b, 128, p0);
  ref_param_bind(&a, 1), ref_param_bind(&b, 1);
  memset(a.b1, 0, sizeof p0), memset(b.b1, 0, sizeof p0);
  ck_assert_msg(muonref_ref_step(&o, &r, a.p, &a.st, g, 160, &e) == MUONREF_OK, "%s", e.message);
  ck_assert_msg(muonref_ref_step(&own, &r, b.p, &b.st, g, 160, &e) == MUONREF_OK, "%s", e.message);
  int differs = 0;
  for (int k = 0; k < 128; k++) {
    double ma = (double)a.p[k] - p0[k], mb = (double)b.p[k] - p0[k];
    ck_assert_msg(fabs(ma - mb) <= 0x1p-6 * fabs(mb) + 1e-9, "element %d: ratio move %g, own move %g", k, ma, mb);
    differs |= a.p[k] != b.p[k];
  }
  ck_assert_msg(differs, "RATIO and OWN round alike everywhere: the case cannot see the first product");
  muonref_group grp = {o, 1, &sh};
  muonref_optimizer *opt = muonref_optimizer_create(&grp, 1, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  float fp[128];
  memcpy(fp, p0, sizeof fp);
  float *pp = fp;
  muonref_grad gr = {g, MUONREF_DENSE, MUONREF_FLOAT32};
  ck_assert_msg(muonref_optimizer_step(opt, 1, &pp, &gr, &e) == MUONREF_OK, "%s", e.message);
  int same = 0;
  for (int k = 0; k < 128; k++)
    same += fp[k] == a.p[k];
  ck_assert_msg(same >= 120, "the fast bf16 step equals the exact one on %d of 128 elements", same);
  muonref_optimizer_free(opt);
  ref_param_free(&a), ref_param_free(&b);
}
END_TEST

/* moment2_rescale RMS (options.h) is UNIT times 0.2 sqrt(numel): over two steps of an element-wise second
 * moment on a (12, 20) matrix, the exact move under RMS is 0.2 sqrt(240) times the exact move under UNIT (up
 * to the binary32 roundings of the stored parameters), and the fast fp32 step follows the exact one under RMS
 * (1e-4 of the move).  The expected moves are the reference's; only the factor comes from the definition. */
START_TEST(rms_rescale_is_unit_times_the_rms_factor)
{
  static const muonref_shape SH = {2, {12, 20}};
  muonref_options o = variant(2);
  o.use_muon = MUONREF_USE_MUON_TRUE, o.lr = 0.1, o.scale_mode = MUONREF_SCALE_NONE;
  o.moment2 = MUONREF_MOMENT2_ELEMENT, o.moment2_beta = 0.95, o.moment2_eps = 1e-8;
  o.moment2_rescale = MUONREF_MOMENT2_RESCALE_RMS;
  muonref_options ou = o;
  ou.moment2_rescale = MUONREF_MOMENT2_RESCALE_UNIT;
  muonref_group grp = {o, 1, &SH};
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create(&grp, 1, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  const muonref_route *r = muonref_optimizer_route(opt, 0);
  size_t n = r->numel, m2n = muonref_moment2_numel(&o, r);
  ck_assert_uint_eq(m2n, n);
  tu_rng rng = {tu_seed(31) + 97};
  float *fp = malloc(n * 4), *g = malloc(n * 4), *p0 = malloc(n * 4), *v = calloc(m2n, 4), *vu = calloc(m2n, 4);
  ref_param rp, ru;
  tu_fill_normal(&rng, fp, n, 1.0);
  memcpy(p0, fp, n * 4);
  ref_param_init(&rp, n, fp), ref_param_init(&ru, n, fp);
  ref_param_bind(&rp, 1), ref_param_bind(&ru, 1);
  rp.st.moment2 = v, rp.st.moment2_numel = m2n, ru.st.moment2 = vu, ru.st.moment2_numel = m2n;
  for (int s = 1; s <= 2; s++) {
    tu_fill_normal(&rng, g, n, 0.5);
    muonref_grad gr = {g, MUONREF_DENSE, MUONREF_FLOAT32};
    float *pp = fp;
    ck_assert_int_eq(muonref_optimizer_step(opt, 1, &pp, &gr, &e), MUONREF_OK);
    ck_assert_msg(muonref_ref_step(&o, r, rp.p, &rp.st, g, 160, &e) == MUONREF_OK, "%s", e.message);
    ck_assert_msg(muonref_ref_step(&ou, r, ru.p, &ru.st, g, 160, &e) == MUONREF_OK, "%s", e.message);
  }
  double c = 0.2 * sqrt(240.0), move = 0, dfac = 0, dfast = 0, pmax = 0;
  for (size_t k = 0; k < n; k++)
    pmax = fmax(pmax, fmax(fabs((double)p0[k]), fmax(fabs((double)rp.p[k]), fabs((double)ru.p[k]))));
  double half_ulp = ldexp(1.0, ilogb(pmax) - 24); /* each stored parameter's rounding */
  for (size_t k = 0; k < n; k++) {
    double mr = (double)rp.p[k] - (double)p0[k], mu = (double)ru.p[k] - (double)p0[k];
    move = fmax(move, fabs(mr));
    dfac = fmax(dfac, fabs(mr - c * mu));
    dfast = fmax(dfast, fabs((double)rp.p[k] - (double)fp[k]));
  }
  ck_assert_msg(move > 1e-3, "the RMS move %g is too small to tell the factor", move);
  /* mr and mu each carry two roundings of a stored parameter: |mr - c mu| <= 2 (1 + c) half_ulp */
  ck_assert_msg(dfac <= 1e-6 * move + 2 * (1 + c) * half_ulp,
                "the RMS move is not 0.2 sqrt(240) times the unit one: off by %g of %g", dfac, move);
  ck_assert_msg(dfast <= 1e-4 * move, "fast off by %g of a move of %g", dfast, move);
  free(fp), free(g), free(p0), free(v), free(vu), ref_param_free(&rp), ref_param_free(&ru);
  muonref_optimizer_free(opt);
}
END_TEST

/* x = a b + c d at 1024 bits, rounded by MPFR's mpfr_get_flt. */
static float oracle_fmma(double a, double b, double c, double d, mpfr_t out)
{
  mpfr_t x, y;
  mpfr_init2(x, 1024), mpfr_init2(y, 1024);
  mpfr_set_d(x, a, MPFR_RNDN), mpfr_mul_d(x, x, b, MPFR_RNDN);
  mpfr_set_d(y, c, MPFR_RNDN), mpfr_mul_d(y, y, d, MPFR_RNDN);
  mpfr_add(out, x, y, MPFR_RNDN);
  mpfr_clear(x), mpfr_clear(y);
  return mpfr_get_flt(out, MPFR_RNDN);
}

/* AdamW outputs are bitwise the correct roundings of the formulas, computed
 * here at 1024 bits from the plan's binary64 scalars, over three steps
 * from an imported (nonzero) state, with weight decay. */
START_TEST(adamw_outputs_are_correctly_rounded)
{
  muonref_options o = tu_nemo();
  o.weight_decay = 0.1;
  o.adam_eps = 1e-8;
  muonref_route r = {0, 37, 1, 37, 1, 37, 1, 0, 0, 0, 0.0};
  tu_rng rng = {tu_seed(31) + 50};
  float p[37], m[37], v[37], g[37];
  tu_fill_normal(&rng, p, 37, 1.0);
  tu_fill_normal(&rng, m, 37, 0.1);
  tu_fill_normal(&rng, v, 37, 0.1);
  for (int k = 0; k < 37; k++)
    v[k] = v[k] * v[k];
  g[0] = 0; /* zero gradient element */
  muonref_param_state st = {1, 0, 5, 37, NULL, m, v, NULL, 0, NULL, 0, NULL};
  mpfr_t mm, vv, den, q, pp;
  mpfr_inits2(1024, mm, vv, den, q, pp, (mpfr_ptr)0);
  for (int s = 0; s < 3; s++) {
    tu_fill_normal(&rng, g + 1, 36, 1e-3);
    float p0[37], m0[37], v0[37];
    memcpy(p0, p, sizeof p), memcpy(m0, m, sizeof m), memcpy(v0, v, sizeof v);
    muonref_error e;
    ck_assert_msg(muonref_ref_step(&o, &r, p, &st, g, MUONREF_REF_PREC, &e) == MUONREF_OK, "%s", e.message);
    ck_assert_int_eq(st.step, 6 + s);
    muonref_adamw_plan pl;
    muonref_adamw_plan_make(&o, st.step, &pl);
    for (int k = 0; k < 37; k++) {
      float wm = oracle_fmma(pl.beta1, m0[k], pl.one_minus_beta1, g[k], mm);
      float wv = oracle_fmma(pl.beta2, v0[k], pl.one_minus_beta2, (double)g[k] * g[k], vv);
      mpfr_sqrt(den, vv, MPFR_RNDN);
      mpfr_div_d(den, den, pl.sqrt_bc2, MPFR_RNDN);
      mpfr_add_d(den, den, pl.eps, MPFR_RNDN);
      mpfr_div(q, mm, den, MPFR_RNDN);
      mpfr_mul_d(q, q, -pl.step_size, MPFR_RNDN);
      mpfr_set_d(pp, pl.decay, MPFR_RNDN);
      mpfr_mul_d(pp, pp, p0[k], MPFR_RNDN);
      mpfr_add(pp, pp, q, MPFR_RNDN);
      float wp = mpfr_get_flt(pp, MPFR_RNDN);
      ck_assert_msg(m[k] == wm && v[k] == wv && p[k] == wp, "step %d element %d: %a %a %a vs %a %a %a", s, k,
                    (double)m[k], (double)v[k], (double)p[k], (double)wm, (double)wv, (double)wp);
    }
  }
  mpfr_clears(mm, vv, den, q, pp, (mpfr_ptr)0);
}
END_TEST

/* Muon: the momentum is bitwise the correct rounding of mom_keep M +
 * mom_grad G; the parameter is bitwise decay P - alpha NS(U) with NS from
 * the reference at 1024 bits (a separate computation at 4x precision). */
START_TEST(muon_outputs_are_correctly_rounded)
{
  for (int v = 0; v < 8; v++) {
    muonref_options o = variant(v);
    muonref_shape sh = {2, {12, 20}};
    muonref_route r;
    ck_assert_int_eq(muonref_route_param(&o, &sh, &r, NULL), MUONREF_OK);
    tu_rng rng = {tu_seed(31) + 60 + (uint64_t)v};
    size_t n = r.numel;
    float *p = malloc(n * 4), *m = malloc(n * 4), *g = malloc(n * 4), *p0 = malloc(n * 4), *m0 = malloc(n * 4);
    tu_fill_normal(&rng, p, n, 1.0);
    tu_fill_normal(&rng, m, n, 0.3);
    tu_fill_normal(&rng, g, n, 1.0);
    memcpy(p0, p, n * 4), memcpy(m0, m, n * 4);
    muonref_param_state st = {1, 1, 2, n, m, NULL, NULL, NULL, 0, NULL, 0, NULL};
    muonref_error e;
    ck_assert_msg(muonref_ref_step(&o, &r, p, &st, g, MUONREF_REF_PREC, &e) == MUONREF_OK, "%s", e.message);
    muonref_muon_plan pl;
    muonref_muon_plan_make(&o, &r, &pl);
    muonref_mpmat U, O;
    ck_assert_int_eq(muonref_mpmat_init(&U, r.rows, r.cols, 1024), MUONREF_OK);
    ck_assert_int_eq(muonref_mpmat_init(&O, r.rows, r.cols, 1024), MUONREF_OK);
    mpfr_t mx, t;
    mpfr_inits2(1024, mx, t, (mpfr_ptr)0);
    for (size_t k = 0; k < n; k++) {
      float wm = oracle_fmma(pl.mom_keep, m0[k], pl.mom_grad, g[k], mx);
      ck_assert_msg(m[k] == wm, "variant %d momentum %zu", v, k);
      if (pl.nesterov) {
        mpfr_mul_d(U.e[k], mx, pl.in_mom, MPFR_RNDN);
        mpfr_set_d(t, pl.in_grad, MPFR_RNDN), mpfr_mul_d(t, t, g[k], MPFR_RNDN);
        mpfr_add(U.e[k], U.e[k], t, MPFR_RNDN);
      } else {
        mpfr_set(U.e[k], mx, MPFR_RNDN);
      }
    }
    ck_assert_int_eq(muonref_ref_ns(&O, &U, &o, NULL), MUONREF_OK);
    for (size_t k = 0; k < n; k++) {
      mpfr_mul_d(t, O.e[k], -pl.alpha, MPFR_RNDN);
      mpfr_set_d(mx, pl.apply_decay ? pl.decay : 1.0, MPFR_RNDN);
      mpfr_mul_d(mx, mx, p0[k], MPFR_RNDN);
      mpfr_add(t, t, mx, MPFR_RNDN);
      ck_assert_msg(p[k] == mpfr_get_flt(t, MPFR_RNDN), "variant %d param %zu", v, k);
    }
    mpfr_clears(mx, t, (mpfr_ptr)0);
    muonref_mpmat_clear(&U), muonref_mpmat_clear(&O);
    free(p), free(m), free(g), free(p0), free(m0);
  }
}
END_TEST

/* Precision doubling leaves every rounded output of several steps
 * unchanged, on both branches and all option variants. */
START_TEST(precision_doubling_step)
{
  muonref_options o = variant(_i);
  tu_rng rng = {tu_seed(31) + 70 + (uint64_t)_i};
  for (int i = 0; i < NP; i++) {
    muonref_route r;
    ck_assert_int_eq(muonref_route_param(&o, &SHAPES[i], &r, NULL), MUONREF_OK);
    size_t n = r.numel;
    float *p = malloc(n * 4), *g = malloc(n * 4);
    tu_fill_normal(&rng, p, n, 1.0);
    ref_param rp;
    ref_param_init(&rp, n, p);
    ref_param_bind(&rp, r.use_muon);
    for (int s = 0; s < 3; s++) {
      tu_fill_normal(&rng, g, n, 1.0);
      muonref_ref_cr_report rep;
      muonref_error e;
      ck_assert_msg(muonref_ref_step_cr(&o, &r, rp.p, &rp.st, g, 128, &rep, &e) == MUONREF_OK, "%s", e.message);
      ck_assert_uint_eq(rep.n_differ, 0);
      ck_assert_uint_eq(rep.n_outputs, (r.use_muon ? 2 : 3) * n);
      ck_assert_int_eq(rp.st.step, s + 1);
    }
    free(p), free(g);
    ref_param_free(&rp);
  }
}
END_TEST

START_TEST(no_gradient_changes_nothing)
{
  muonref_options o = tu_nemo();
  muonref_route r = {1, 4, 6, 24, 1, 4, 6, 0, 0, 0, 0.0};
  float p[24], m[24], keep_p[24], keep_m[24];
  for (int k = 0; k < 24; k++)
    p[k] = (float)k, m[k] = (float)-k;
  memcpy(keep_p, p, sizeof p), memcpy(keep_m, m, sizeof m);
  muonref_param_state st = {1, 1, 3, 24, m, NULL, NULL, NULL, 0, NULL, 0, NULL}, keep_st = st;
  ck_assert_int_eq(muonref_ref_step(&o, &r, p, &st, NULL, 256, NULL), MUONREF_OK);
  ck_assert(!memcmp(p, keep_p, sizeof p) && !memcmp(m, keep_m, sizeof m) && !memcmp(&st, &keep_st, sizeof st));
}
END_TEST

/* Bad inputs: a status and a message naming the input; nothing written. */
START_TEST(errors_change_nothing)
{
  muonref_options o = tu_nemo();
  muonref_route r = {1, 4, 6, 24, 1, 4, 6, 0, 0, 0, 0.0};
  float p[24] = {0}, m[24] = {0}, g[24] = {0}, a[24] = {0};
  muonref_param_state st = {1, 1, 3, 24, m, NULL, NULL, NULL, 0, NULL, 0, NULL}, keep = st;
  muonref_error e;
  g[7] = NAN;
  ck_assert_int_eq(muonref_ref_step(&o, &r, p, &st, g, 256, &e), MUONREF_ENONFINITE);
  ck_assert_msg(strstr(e.message, "grad element 7 is nan") != NULL, "%s", e.message);
  g[7] = 0;
  p[3] = -INFINITY;
  ck_assert_int_eq(muonref_ref_step(&o, &r, p, &st, g, 256, &e), MUONREF_ENONFINITE);
  ck_assert(strstr(e.message, "param element 3 is -inf") != NULL);
  p[3] = 0;
  ck_assert_int_eq(muonref_ref_step(&o, &r, p, &st, g, 20, &e), MUONREF_EOPTION);
  ck_assert(strstr(e.message, "precision 20") != NULL);
  muonref_param_state other = {1, 0, 3, 24, NULL, a, a, NULL, 0, NULL, 0, NULL};
  ck_assert_int_eq(muonref_ref_step(&o, &r, p, &other, g, 256, &e), MUONREF_ESTATE);
  ck_assert_msg(strstr(e.message, "momentum_buffer buffer is missing") != NULL, "%s", e.message);
  other.momentum_buffer = m;
  ck_assert_int_eq(muonref_ref_step(&o, &r, p, &other, g, 256, &e), MUONREF_ESTATE);
  ck_assert_msg(strstr(e.message, "routed to Muon, the state is AdamW's") != NULL, "%s", e.message);
  st.numel = 23;
  ck_assert_int_eq(muonref_ref_step(&o, &r, p, &st, g, 256, &e), MUONREF_ESTATE);
  st.numel = 24;
  o.lr = -1;
  ck_assert_int_eq(muonref_ref_step(&o, &r, p, &st, g, 256, &e), MUONREF_EOPTION);
  ck_assert(!memcmp(&st, &keep, sizeof st));
  for (int k = 0; k < 24; k++)
    ck_assert(p[k] == 0 && m[k] == 0);
}
END_TEST

/* A fresh state is zeros whatever its buffers held; a zero gradient with
 * weight decay moves P to the correct rounding of decay * P only. */
START_TEST(fresh_state_and_zero_gradient)
{
  muonref_options o = tu_nemo();
  o.weight_decay = 0.5;
  muonref_route r = {1, 3, 5, 15, 1, 3, 5, 0, 0, 0, 0.0};
  float p[15], m[15], g[15] = {0};
  for (int k = 0; k < 15; k++)
    p[k] = 1.0f + (float)k / 3.0f, m[k] = 99.0f;
  muonref_param_state st = {0, 0, 0, 0, m, NULL, NULL, NULL, 0, NULL, 0, NULL};
  float p0[15];
  memcpy(p0, p, sizeof p);
  ck_assert_int_eq(muonref_ref_step(&o, &r, p, &st, g, 256, NULL), MUONREF_OK);
  ck_assert(st.initialized && st.use_muon && st.step == 1 && st.numel == 15);
  mpfr_t x;
  mpfr_init2(x, 200);
  for (int k = 0; k < 15; k++) {
    ck_assert(m[k] == 0.0f);
    mpfr_set_d(x, 1.0 - o.lr * o.weight_decay, MPFR_RNDN);
    mpfr_mul_d(x, x, p0[k], MPFR_RNDN);
    ck_assert(p[k] == mpfr_get_flt(x, MPFR_RNDN));
  }
  mpfr_clear(x);
}
END_TEST

/* ns_format BF16 through muonref_ref_step_flags: on a structured gradient
 * G = D H (Hadamard rows, power-of-two diagonal) the step uses the
 * bf16-semantics NS of U = G + 0.5 G (exact in binary32) and is certified;
 * the parameter is bitwise the MPFR rounding of decay P - alpha O with O
 * from muonref_ref_ns_bf16 called directly.  A random gradient with EMA
 * momentum is not certified. */
START_TEST(bf16_format_step)
{
  enum { R = 8, C = 16 };
  muonref_options o = tu_nemo();
  o.momentum = 0.5;
  o.nesterov = 1;
  o.momentum_form = MUONREF_MOMENTUM_SUM;
  o.ns_format = MUONREF_NS_BF16;
  o.weight_decay = 0.01;
  muonref_route r = {1, R, C, R * C, 1, R, C, 0, 0, 0, 0.0};
  float g[R * C], p[R * C], p0[R * C], m[R * C] = {0}, u[R * C], out[R * C];
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) {
      int h = __builtin_popcount((unsigned)(i & j)) & 1 ? -1 : 1; /* Sylvester Hadamard */
      g[i * C + j] = (float)h * ldexpf((float)(1 + i % 3), -(i % 4));
      p[i * C + j] = 1.0f + (float)(i * C + j) / 64.0f;
    }
  memcpy(p0, p, sizeof p);
  muonref_param_state st = {0, 0, 0, 0, m, NULL, NULL, NULL, 0, NULL, 0, NULL};
  unsigned unc = 0;
  muonref_error e;
  ck_assert_msg(muonref_ref_step_flags(&o, &r, p, &st, g, 256, &unc, &e) == MUONREF_OK, "%s", e.message);
  ck_assert_uint_eq(unc & MUONREF_NSR_UNCERTAIN, 0);
  for (int k = 0; k < R * C; k++)
    u[k] = 1.5f * g[k];
  unsigned unc2;
  ck_assert_int_eq(muonref_ref_ns_bf16(out, u, R, C, &o, &unc2, NULL), MUONREF_OK);
  ck_assert_uint_eq(unc2 & MUONREF_NSR_UNCERTAIN, 0);
  muonref_muon_plan pl;
  muonref_muon_plan_make(&o, &r, &pl);
  mpfr_t x, y;
  mpfr_init2(x, 300), mpfr_init2(y, 300);
  int differs_from_exact = 0;
  float q[R * C];
  memcpy(q, p0, sizeof q);
  for (int k = 0; k < R * C; k++) {
    mpfr_set_d(x, pl.decay, MPFR_RNDN), mpfr_mul_d(x, x, p0[k], MPFR_RNDN);
    mpfr_set_d(y, -pl.alpha, MPFR_RNDN), mpfr_mul_d(y, y, out[k], MPFR_RNDN);
    mpfr_add(x, x, y, MPFR_RNDN);
    ck_assert_msg(p[k] == mpfr_get_flt(x, MPFR_RNDN), "element %d", k);
  }
  /* the exact-format step differs (bf16 NS is not the exact iteration) */
  muonref_param_state st2 = {0, 0, 0, 0, m, NULL, NULL, NULL, 0, NULL, 0, NULL};
  muonref_options ox = o;
  ox.ns_format = MUONREF_NS_EXACT;
  ck_assert_int_eq(muonref_ref_step(&ox, &r, q, &st2, g, 256, NULL), MUONREF_OK);
  for (int k = 0; k < R * C; k++)
    differs_from_exact |= q[k] != p[k];
  ck_assert(differs_from_exact);
  /* random gradient, EMA momentum 0.95: U is not a binary32 value */
  tu_rng rng = {tu_seed(31) + 80};
  tu_fill_normal(&rng, g, R * C, 1.0);
  o.momentum = 0.95;
  o.momentum_form = MUONREF_MOMENTUM_EMA;
  muonref_param_state st3 = {0, 0, 0, 0, m, NULL, NULL, NULL, 0, NULL, 0, NULL};
  muonref_ref_cr_report rep;
  ck_assert_msg(muonref_ref_step_cr(&o, &r, p, &st3, g, 128, &rep, &e) == MUONREF_OK, "%s", e.message);
  ck_assert(rep.ns_uncertain & MUONREF_NSR_UNCERTAIN);
  mpfr_clear(x), mpfr_clear(y);
}
END_TEST

/* spec/vectors.md 5.2: a Nesterov input U that binary32 cannot hold (sum
 * momentum 0.95: U = 1.95 G) still gives an exactly defined bf16 step when
 * every binary32 value near U casts to the same bf16 value (a port's own
 * binary32 U lands there): G = fl32(1.25 / 1.95) H puts U within an ulp of
 * 1.25, far from a bf16 rounding boundary, and the step is certified; G =
 * fl32((1 + 2^-8) / 1.95) H puts U within an ulp of the boundary between
 * the bf16 values 1 and 1 + 2^-7, and MUONREF_NSR_INPUT_NOT_FP32 withholds
 * the certificate. */
START_TEST(bf16_cast_of_an_inexact_input)
{
  enum { R = 8, C = 16 };
  static const double TARGET[2] = {1.25, 1.0 + 0x1p-8};
  for (int k = 0; k < 2; k++) {
    muonref_options o = tu_nemo();
    o.momentum = 0.95;
    o.nesterov = 1;
    o.momentum_form = MUONREF_MOMENTUM_SUM;
    o.ns_format = MUONREF_NS_BF16;
    muonref_route r = {1, R, C, R * C, 1, R, C, 0, 0, 0, 0.0};
    float g[R * C], p[R * C] = {0}, m[R * C] = {0};
    for (int i = 0; i < R; i++)
      for (int j = 0; j < C; j++)
        g[i * C + j] = (__builtin_popcount((unsigned)(i & j)) & 1 ? -1.0f : 1.0f) * (float)(TARGET[k] / 1.95);
    muonref_param_state st = {0, 0, 0, 0, m, NULL, NULL, NULL, 0, NULL, 0, NULL};
    muonref_ref_cr_report rep;
    muonref_error e;
    ck_assert_msg(muonref_ref_step_cr(&o, &r, p, &st, g, 256, &rep, &e) == MUONREF_OK, "%s", e.message);
    if (k == 0)
      ck_assert_uint_eq(rep.ns_uncertain & MUONREF_NSR_UNCERTAIN, 0);
    else
      ck_assert(rep.ns_uncertain & MUONREF_NSR_INPUT_NOT_FP32);
  }
}
END_TEST

/* The exact global norm of gradient clipping (ref.h muonref_ref_grad_norm):
 * by hand, ||(3, 4), (12)|| = 13 exactly, a missing gradient counts as
 * none, no gradient is 0; (1, 2^-27) has the exact norm sqrt(1 + 2^-54),
 * which rounds to 1 in binary64 (half an ulp above 1 is 2^-53 away: 2^-55
 * is below it); a value 2^100 squares beyond binary32 without harm. */
START_TEST(clip_norm_exact)
{
  muonref_error e;
  double n = -1.0;
  const float a[2] = {3.0f, 4.0f}, b[1] = {12.0f}, c[2] = {1.0f, 0x1p-27f}, d[1] = {0x1p100f};
  const float *g[3] = {a, NULL, b};
  size_t numel[3] = {2, 5, 1};
  ck_assert_int_eq(muonref_ref_grad_norm(&n, 3, g, numel, &e), MUONREF_OK);
  ck_assert(n == 13.0);
  ck_assert_int_eq(muonref_ref_grad_norm(&n, 0, NULL, NULL, &e), MUONREF_OK);
  ck_assert(n == 0.0);
  const float *g2[1] = {c};
  ck_assert_int_eq(muonref_ref_grad_norm(&n, 1, g2, numel, &e), MUONREF_OK);
  ck_assert(n == 1.0);
  const float *g3[1] = {d};
  size_t one = 1;
  ck_assert_int_eq(muonref_ref_grad_norm(&n, 1, g3, &one, &e), MUONREF_OK);
  ck_assert(n == 0x1p100);
  ck_assert_int_eq(muonref_ref_grad_norm(NULL, 1, g3, &one, &e), MUONREF_EOPTION);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("refstep");
  TCase *t = tcase_create("refstep");
  tcase_set_timeout(t, 600);
  tcase_add_loop_test(t, exact_step_tracks_fast_fp32_step, 0, 8);
  tcase_add_loop_test(t, unfused_step_with_second_moment_tracks_exact, 0, 3);
  tcase_add_test(t, rms_rescale_is_unit_times_the_rms_factor);
  tcase_add_test(t, moment2_prescale_moves_by_lr_alone);
  tcase_add_test(t, heads_are_separate_parameters);
  tcase_add_test(t, split_blocks_are_separate_parameters);
  tcase_add_test(t, split_ratio_is_a_first_bf16_product);
  tcase_add_test(t, adamw_outputs_are_correctly_rounded);
  tcase_add_test(t, muon_outputs_are_correctly_rounded);
  tcase_add_loop_test(t, precision_doubling_step, 0, 8);
  tcase_add_test(t, no_gradient_changes_nothing);
  tcase_add_test(t, errors_change_nothing);
  tcase_add_test(t, fresh_state_and_zero_gradient);
  tcase_add_test(t, bf16_format_step);
  tcase_add_test(t, bf16_cast_of_an_inexact_input);
  tcase_add_test(t, clip_norm_exact);
  suite_add_tcase(s, t);
  return tu_run_suite(s);
}
