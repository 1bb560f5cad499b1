/* muonref: the cases of each area of the golden vectors (profile nemo).
 * Every case states in its comment what it pins down; flags name the spec
 * area and, where a case reproduces a public report, the report
 * (shared/reference/bug-reports.md numbering, e.g. BugB09). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/gen/gen.h"
#include "vectors/format/case.h"
#include "core/plan.h"
#include "muonref/bf16.h"
#include "muonref/presets.h"
#include "muonref/profile.h"
#include "core/fail.h"

/* ---- small builders ---- */

/* The profile's defaults (its routing rule, the catalogue its validation
 * applies). */
static muonref_options defaults(gen_ctx *g)
{
  muonref_options o;
  MUONREF_UNCHECKED(muonref_profile_options(g->profile, &o, NULL)); /* the profile is known here */
  return o;
}

/* Cases written after the nemo set was published run for every other
 * profile; vectors/nemo/ stays byte for byte what it was (its cases are
 * frozen until a change to them is explained). */
static int nemo_frozen(const gen_ctx *g) { return !strcmp(g->profile, "nemo"); }

/* Whether the profile's key table has a key of kind k: cases that only such
 * a key can express are built for those profiles alone (and, last in their
 * area, draw no input another profile's cases would have drawn). */
static int has_key_kind(const gen_ctx *g, muonref_key_kind k)
{
  return muonref_case_has_key_kind(muonref_profile_get(g->profile), k);
}

/* Whether the profile's record has a key for the option field at `offset` (offsetof(muonref_options, F)). */
static int has_field_key(const gen_ctx *g, size_t offset)
{
  const muonref_profile *prof = muonref_profile_get(g->profile);
  for (size_t k = 0; prof && k < prof->n_keys; k++)
    if (prof->keys[k].offset == offset)
      return 1;
  return 0;
}

static muonref_options base(gen_ctx *g, double lr, double wd)
{
  muonref_options o;
  MUONREF_UNCHECKED(muonref_profile_options(g->profile, &o, NULL)); /* checked by gen */
  o.lr = lr;
  o.weight_decay = wd;
  return o;
}

/* Options for cases with structured gradients: momentum 0.75, so that the
 * Nesterov input G + beta M stays exactly binary32 and bf16 results are
 * exactly defined (spec/vectors.md section 5.2). */
static muonref_options base_s(gen_ctx *g, double lr, double wd)
{
  muonref_options o = base(g, lr, wd);
  o.momentum = 0.75;
  return o;
}

static void begin(gen_step_case *c, const char *comment, const muonref_options *o)
{
  memset(c, 0, sizeof *c);
  c->comment = comment;
  c->n_groups = 1;
  c->options[0] = *o;
}

static muonref_shape shape2(size_t r, size_t k) { return (muonref_shape){2, {r, k}}; }

/* Adds a parameter of shape s in group gi, initialised with N(0, 1). */
static int param(gen_ctx *g, gen_step_case *c, const char *name, muonref_shape s, int gi)
{
  int i = c->n_params++;
  c->names[i] = name;
  c->shapes[i] = s;
  c->group_of[i] = gi;
  c->init[i] = gen_normal_array(g, muonref_shape_numel(&s), 1.0);
  return i;
}

static size_t numel(const gen_step_case *c, int i) { return muonref_shape_numel(&c->shapes[i]); }

/* Gradient of parameter i at step k: N(0, scale^2). */
static void grad_normal(gen_ctx *g, gen_step_case *c, int k, int i, double scale)
{
  c->grads[k][i] = gen_normal_array(g, numel(c, i), scale);
  if (k >= c->n_steps)
    c->n_steps = k + 1;
}

/* Gradient of parameter i at step k: structured D H on its matrix view
 * (rows, cols) with cols (or rows, if transposed) a power of two. */
static void grad_structured(gen_ctx *g, gen_step_case *c, int k, int i, int shift)
{
  size_t rows = c->shapes[i].dims[0], cols = numel(c, i) / rows;
  int tr = rows > cols;
  size_t m = tr ? cols : rows, n = tr ? rows : cols;
  float d[64];
  gen_dyadic_scales(g, d, m, shift);
  c->grads[k][i] = gen_structured(m, n, d, tr);
  if (k >= c->n_steps)
    c->n_steps = k + 1;
}

/* Gradient of parameter i at step k: scale times the first rows of a
 * Sylvester Hadamard matrix (all singular values equal).  On a wide
 * (16, 32) matrix the bf16 Newton-Schulz result of such a gradient is the
 * same with the scalars rounded to bf16 (checked by the generator, flag
 * PlatformRobust): these cases judge a port's logic on PyTorch 1.13 CPU. */
static void grad_equal_scales(gen_step_case *c, int k, int i, float scale)
{
  size_t rows = c->shapes[i].dims[0], cols = numel(c, i) / rows;
  float d[64];
  for (size_t r = 0; r < rows && r < 64; r++)
    d[r] = scale;
  c->grads[k][i] = gen_structured(rows, cols, d, 0);
  if (k >= c->n_steps)
    c->n_steps = k + 1;
}

static void grad_zero(gen_step_case *c, int k, int i)
{
  c->grads[k][i] = gen_zeros(numel(c, i));
  if (k >= c->n_steps)
    c->n_steps = k + 1;
}

static void flags(gen_step_case *c, const char *a, const char *b, const char *d)
{
  c->flags[0] = a, c->flags[1] = b, c->flags[2] = d;
}

/* ---- routing ---- */

/* optax's routing (route rule ndim_2, spec/profiles/optax.md 7): every 2-D
 * leaf takes Muon whatever its size, embeddings and heads included, and
 * every other leaf Adam; two steps of N(0, 1) gradients.  The (8200, 2)
 * matrix is one that nemo's threshold 8192 sends to AdamW. */
static void routing_ndim_2(gen_ctx *g)
{
  static const struct { const char *what; muonref_shape s[4]; int n; } R[] = {
    {"every 2-D leaf takes Muon (an embedding (64, 8), a head (8, 64)); a bias (8,) and a 3-D (2, 4, 8) tensor Adam",
     {{2, {64, 8}}, {2, {8, 64}}, {1, {8}}, {3, {2, 4, 8}}}, 4},
    {"a (8200, 2) matrix takes Muon: optax has no size threshold (nemo's 8192 would send it to AdamW)",
     {{2, {8200, 2}}, {1, {4}}}, 2},
    {"a conv filter (4, 2, 3, 3) takes Adam without dimension numbers; a (16, 16) matrix Muon",
     {{4, {4, 2, 3, 3}}, {2, {16, 16}}}, 2},
  };
  static const char *const NAMES[] = {"a", "b", "c", "d"};
  for (size_t k = 0; k < sizeof R / sizeof R[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.01);
    begin(&c, R[k].what, &o);
    for (int i = 0; i < R[k].n; i++)
      param(g, &c, NAMES[i], R[k].s[i], 0);
    for (int st = 0; st < 2; st++)
      for (int i = 0; i < R[k].n; i++)
        grad_normal(g, &c, st, i, 1.0);
    flags(&c, "Routing", "RoutingShape", NULL);
    gen_add_step(g, &c);
  }
}

/* Megatron's routing (route_rule TAGGED_2D, and NOT_1D; spec/profiles/
 * megatron.md 3): the is_embedding_or_output_parameter tag (use_muon
 * false) sends a 2-D parameter to AdamW whatever its shape; untagged 2-D
 * ones go to Muon (under NOT_1D everything not 1-D); 1-D ones to AdamW with
 * weight decay 0 (their own group).  The tied embedding (bug-reports B02): the output layer sharing
 * the embedding's shape is tagged too, under its own name. */
static void routing_tagged(gen_ctx *g)
{
  static const struct { const char *what; int tied, steps; } T[] = {
    {"a tagged embedding (32, 16) takes AdamW, an untagged (16, 16) Muon, a bias (16,) AdamW without decay", 0, 2},
    {"a tagged embedding (32, 16) and its tied output layer (32, 16), tagged under a second name: both AdamW "
     "(bug-reports B02: the replica must keep the tag)", 1, 2},
  };
  for (size_t k = 0; k < sizeof T / sizeof T[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.1);
    o.clip_grad_norm = 0.0; /* the routing alone */
    begin(&c, T[k].what, &o);
    c.options[1] = o;
    c.options[1].use_muon = MUONREF_USE_MUON_FALSE;
    c.options[2] = o;
    c.options[2].weight_decay = 0.0;
    c.n_groups = 3;
    param(g, &c, "decoder.linear_qkv.weight", shape2(16, 16), 0);
    param(g, &c, "embedding.word_embeddings.weight", shape2(32, 16), 1);
    if (T[k].tied)
      param(g, &c, "output_layer.weight", shape2(32, 16), 1);
    param(g, &c, "decoder.linear_qkv.bias", (muonref_shape){1, {16}}, 2);
    for (int s = 0; s < T[k].steps; s++)
      for (int i = 0; i < c.n_params; i++)
        grad_normal(g, &c, s, i, 1.0);
    flags(&c, "Routing", "RoutingForced", "TaggedEmbedding");
    gen_add_step(g, &c);
  }
  if (defaults(g).route_rule != MUONREF_ROUTE_TAGGED_2D)
    return;
  /* Megatron Core (core_v0.16.0 on): an untagged parameter that is not 2-D
   * takes Adam, with the weight decay of its group (_get_param_groups exempts
   * only 1-D parameters and biases), where the dev snapshot 025c931a handed
   * it to Muon, which refused it */
  gen_step_case c;
  muonref_options o = base(g, 0.02, 0.1);
  o.clip_grad_norm = 0.0;
  begin(&c, "an untagged conv filter (4, 2, 3, 3) and an untagged 0-D scalar beside an untagged (16, 16): the "
            "matrix takes Muon, the two others Adam with the group's decay (not 2-D: Megatron Core core_v0.16.0 on)",
        &o);
  param(g, &c, "decoder.linear_fc1.weight", shape2(16, 16), 0);
  param(g, &c, "decoder.conv.weight", (muonref_shape){4, {4, 2, 3, 3}}, 0);
  param(g, &c, "decoder.gate_scale", (muonref_shape){0, {0}}, 0);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < c.n_params; i++)
      grad_normal(g, &c, s, i, 1.0);
  flags(&c, "Routing", "RoutingShape", NULL);
  gen_add_step(g, &c);
}

/* Paddle's default rule (spec/profiles/paddle.md 7; muon.py @98af0a0f
 * _default_should_use_muon): 2-D or 3-D and no exclude pattern a
 * case-insensitive substring of the name, with Paddle's own example
 * patterns; names that pin the substring rule (not a word, not a regex). */
static void routing_by_name(gen_ctx *g)
{
  static const char *const PAT[] = {"embed", "bias", "lm_head", "mlp.gate"};
  static const struct { const char *what, *name; int ndim; size_t d[3]; } N[] = {
    {"'bias' is a substring of 'unbiased_proj.weight': AdamW", "unbiased_proj.weight", 2, {16, 8}},
    {"'embed' is a substring of 'embedding_proj.weight': AdamW", "embedding_proj.weight", 2, {8, 16}},
    {"case-insensitive: 'embed' excludes 'Model.Embed_Tokens.weight': AdamW", "Model.Embed_Tokens.weight", 2, {32, 8}},
    {"'mlp.gate' excludes 'layers.0.mlp.gate_proj.weight': AdamW", "layers.0.mlp.gate_proj.weight", 2, {8, 16}},
    {"'mlp.gate' as a substring, not a regex: 'layers.0.mlp_gate.weight' takes Muon", "layers.0.mlp_gate.weight", 2,
     {8, 16}},
    {"no pattern in 'layers.0.attn.qkv.weight': Muon", "layers.0.attn.qkv.weight", 2, {8, 24}},
    {"'lm_head.weight': AdamW", "lm_head.weight", 2, {16, 32}},
    {"3-D 'experts.w1' (2, 4, 8), no pattern: Muon, a batch of two (4, 8) matrices", "experts.w1", 3, {2, 4, 8}},
    {"3-D 'expert_bias' (2, 4, 8): excluded by name before its shape counts: AdamW", "expert_bias", 3, {2, 4, 8}},
  };
  for (size_t k = 0; k < sizeof N / sizeof N[0]; k++) {
    gen_step_case c;
    char comment[256];
    snprintf(comment, sizeof comment, "Paddle's default rule with muon_exclude_patterns ['embed', 'bias', 'lm_head', "
             "'mlp.gate']: %s (one step)", N[k].what);
    muonref_options o = base(g, 0.05, 0.1);
    o.n_exclude_patterns = 4;
    for (int j = 0; j < 4; j++)
      snprintf(o.exclude_patterns[j], MUONREF_PATTERN_LEN, "%s", PAT[j]);
    begin(&c, comment, &o);
    muonref_shape sh = {N[k].ndim, {N[k].d[0], N[k].d[1], N[k].d[2]}};
    int i = param(g, &c, N[k].name, sh, 0);
    grad_normal(g, &c, 0, i, 1.0);
    flags(&c, "Routing", "RoutingName", NULL);
    gen_add_step(g, &c);
  }
  gen_step_case c; /* all of them in one step, and a name no pattern matches */
  muonref_options o = base(g, 0.05, 0.1);
  o.n_exclude_patterns = 4;
  for (int j = 0; j < 4; j++)
    snprintf(o.exclude_patterns[j], MUONREF_PATTERN_LEN, "%s", PAT[j]);
  begin(&c, "Paddle's default rule with muon_exclude_patterns ['embed', 'bias', 'lm_head', 'mlp.gate'] over a small "
            "model: each parameter routed by its name and shape (two steps)", &o);
  for (size_t k = 0; k < 6; k++)
    param(g, &c, N[k].name, (muonref_shape){N[k].ndim, {N[k].d[0], N[k].d[1], N[k].d[2]}}, 0);
  param(g, &c, "layers.0.norm.weight", (muonref_shape){1, {8}}, 0);
  c.n_steps = 2;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < c.n_params; i++)
      grad_normal(g, &c, k, i, 1.0);
  flags(&c, "Routing", "RoutingName", NULL);
  gen_add_step(g, &c);
}

/* keras v3.10 to v3.12 (profile keras@3.10, spec/profiles/keras.md 12):
 * `not 1 < len(variable.shape) < 4` takes AdamW, so a 3-D variable takes
 * Muon as a batch of its last two dimensions' matrices, scaled by
 * sqrt(max(1, shape[0] / shape[1])) of its own shape, and a 4-D one AdamW;
 * the embedding rule holds for 3-D names too.  Two steps, gradients N(0,
 * 1), lr 0.05, weight_decay 0.1, adam_lr_ratio 0.2: each branch shows. */
static void routing_keras_3d(gen_ctx *g)
{
  static const struct { const char *what, *name; int ndim; size_t d[4]; } N[] = {
    {"3-D dense/kernel (6, 3, 8): Muon, six (3, 8) matrices, the update scaled by sqrt(max(1, 6 / 3)) = sqrt(2) "
     "from the variable's first two dimensions (each matrix's own (3, 8) would give 1)", "dense/kernel", 3, {6, 3, 8}},
    {"3-D dense/kernel (2, 16, 8): Muon, two tall (16, 8) matrices orthogonalised transposed, scale sqrt(max(1, "
     "2 / 16)) = 1 (each matrix's own (16, 8) would give sqrt(2))", "dense/kernel", 3, {2, 16, 8}},
    {"3-D dense/kernel (12, 4, 4): Muon, twelve square (4, 4) matrices, scale sqrt(max(1, 12 / 4)) = sqrt(3)",
     "dense/kernel", 3, {12, 4, 4}},
    {"4-D conv2d/kernel (3, 3, 4, 8): AdamW (v3.10 routes only 2-D and 3-D variables to Muon)", "conv2d/kernel", 4,
     {3, 3, 4, 8}},
    {"3-D token_embedding/table (4, 8, 16): AdamW under exclude_embeddings, whatever its shape",
     "token_embedding/table", 3, {4, 8, 16}},
  };
  for (size_t k = 0; k < sizeof N / sizeof N[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.05, 0.1);
    o.adam_lr_ratio = 0.2;
    begin(&c, N[k].what, &o);
    muonref_shape sh = {N[k].ndim, {N[k].d[0], N[k].d[1], N[k].d[2], N[k].d[3]}};
    int i = param(g, &c, N[k].name, sh, 0);
    for (int s = 0; s < 2; s++)
      grad_normal(g, &c, s, i, 1.0);
    if (k < 3) /* 3-D Muon */
      flags(&c, "Routing", "ScaleFirstTwo", "NdMuon");
    else /* AdamW by its shape (4-D) or by its name */
      flags(&c, "Routing", N[k].ndim == 4 ? "RoutingShape" : "RoutingRegex", NULL);
    gen_add_step(g, &c);
  }
}

/* keras' name rules (spec/profiles/keras.md 7): exactly 2-D, minus names
 * containing "embedding" in any case (exclude_embeddings), minus names
 * where an exclude_layers regular expression is found (re.search,
 * case-sensitive).  The patterns stay in the common subset of Python's re
 * and POSIX ERE.  One step, gradients N(0, 1), weight_decay 0.1 (Muon) and
 * adam_weight_decay 0.05 (AdamW), adam_lr_ratio 0.2: each branch shows. */
static void routing_names(gen_ctx *g)
{
  static const struct { const char *what; int emb; const char *pat[2]; const char *names[5]; } N[] = {
    {"exclude_embeddings (default): embedding/embeddings and Token_Embedding/table take AdamW, dense/kernel Muon", 1,
     {NULL}, {"embedding/embeddings", "Token_Embedding/table", "dense/kernel", NULL}},
    {"exclude_embeddings False: every 2-D variable takes Muon, embedding/embeddings too", 0, {NULL},
     {"embedding/embeddings", "dense/kernel", NULL}},
    {"exclude_layers [\"dense.*out\"]: a regular expression, so dense_1/output takes AdamW (no substring "
     "\"dense.*out\" in it), dense_2/kernel Muon", 1, {"dense.*out"}, {"dense_1/output", "dense_2/kernel", NULL}},
    {"exclude_layers [\"^head\"]: anchored, head/kernel takes AdamW, lm_head/kernel Muon (a substring rule would "
     "exclude both)", 1, {"^head"}, {"head/kernel", "lm_head/kernel", NULL}},
    {"exclude_layers [\"Attn\"]: case-sensitive, Attn/query takes AdamW, attn/query Muon", 1, {"Attn"},
     {"Attn/query", "attn/query", NULL}},
    {"exclude_layers [\"dense\", \"(q|k)_proj\"]: dense_1/kernel, q_proj/kernel and k_proj/kernel take AdamW, "
     "v_proj/kernel Muon", 1, {"dense", "(q|k)_proj"}, {"dense_1/kernel", "q_proj/kernel", "k_proj/kernel",
     "v_proj/kernel", NULL}},
  };
  for (size_t k = 0; k < sizeof N / sizeof N[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.05, 0.1);
    o.adam_lr_ratio = 0.2, o.adam_weight_decay = 0.05, o.exclude_embeddings = N[k].emb;
    for (int p = 0; p < 2 && N[k].pat[p]; p++)
      snprintf(o.exclude_patterns[o.n_exclude_patterns++], MUONREF_PATTERN_LEN, "%s", N[k].pat[p]);
    begin(&c, N[k].what, &o);
    for (int i = 0; N[k].names[i]; i++)
      grad_normal(g, &c, 0, param(g, &c, N[k].names[i], shape2(8, 16), 0), 1.0);
    flags(&c, "Routing", "RoutingRegex", NULL);
    gen_add_step(g, &c);
  }
}

/* timm's group key use_fallback (timm/optim/muon.py @aa4b5850 Muon.step:
 * `if group.get("use_fallback", False)` before `elif "use_muon" in group`):
 * a group with use_fallback true takes the AdamW fallback, even with
 * use_muon true and a shape the heuristic would send to Muon.  The options
 * are written as the port's group dict (use_fallback is the key that
 * decides; muonref's options say use_muon false). */
static void routing_use_fallback(gen_ctx *g)
{
  static const struct { const char *what, *extra; } U[] = {
    {"use_fallback true on a (32, 32) matrix (timm's heuristic: Muon) and a bias: both take the AdamW fallback",
     NULL},
    {"use_fallback true with use_muon true on a (32, 32) matrix and a bias: use_fallback is read first, both AdamW",
     "true"},
  };
  for (size_t k = 0; k < sizeof U / sizeof U[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.1);
    o.use_muon = MUONREF_USE_MUON_FALSE;
    begin(&c, U[k].what, &o);
    int a = param(g, &c, "matrix", shape2(32, 32), 0), b = param(g, &c, "bias", (muonref_shape){1, {32}}, 0);
    for (int s = 0; s < 2; s++)
      grad_normal(g, &c, s, a, 1.0), grad_normal(g, &c, s, b, 1.0);
    json_t *j = muonref_case_options_json(&o, g->profile);
    json_object_set_new(j, "use_fallback", json_true());
    json_object_set_new(j, "use_muon", U[k].extra ? json_true() : json_null());
    if (!U[k].extra)
      json_object_del(j, "use_muon");
    c.raw_options[0] = j;
    flags(&c, "Routing", "UseFallback", NULL);
    gen_add_step(g, &c);
  }
}

void gen_area_routing(gen_ctx *g)
{
  static const struct { const char *what; int ndim; size_t d[4]; int use_muon; long thr; const char *fl; } R[] = {
    {"hidden (16, 8): a matrix below the threshold takes Muon", 2, {16, 8}, -1, 8192, "RoutingShape"},
    {"wide (8, 32): Muon", 2, {8, 32}, -1, 8192, "RoutingShape"},
    {"bias (16,): AdamW", 1, {16}, -1, 8192, "RoutingShape"},
    {"scalar (): AdamW", 0, {0}, -1, 8192, "RoutingShape"},
    {"conv filter (4, 2, 3, 3): AdamW by shape", 4, {4, 2, 3, 3}, -1, 8192, "RoutingShape"},
    {"3-D tensor (2, 4, 8): AdamW by shape", 3, {2, 4, 8}, -1, 8192, "RoutingShape"},
    {"LayerScale (16, 1, 1): AdamW by shape", 3, {16, 1, 1}, -1, 8192, "BugB04"},
    {"(1, 1) matrix: Muon", 2, {1, 1}, -1, 8192, "RoutingShape"},
    {"(64, 16) with threshold 64: a dimension equal to the threshold goes to AdamW", 2, {64, 16}, -1, 64, "RoutingThreshold"},
    {"(63, 16) with threshold 64: below it, Muon", 2, {63, 16}, -1, 64, "RoutingThreshold"},
    {"(16, 64) with threshold 64: AdamW", 2, {16, 64}, -1, 64, "RoutingThreshold"},
    {"(64, 16) with threshold 65: Muon", 2, {64, 16}, -1, 65, "RoutingThreshold"},
    {"embedding-like (40, 8) with threshold 32: AdamW", 2, {40, 8}, -1, 32, "RoutingThreshold"},
    {"matrix (16, 8) with use_muon=False: AdamW", 2, {16, 8}, 0, 8192, "RoutingForced"},
    {"conv (4, 2, 3, 3) with use_muon=True: Muon on the flattened (4, 18)", 4, {4, 2, 3, 3}, 1, 8192, "BugB03"},
    {"LayerScale (16, 1, 1) with use_muon=True: Muon on (16, 1)", 3, {16, 1, 1}, 1, 8192, "BugB04"},
    {"(64, 16) over the threshold 64 with use_muon=True: Muon", 2, {64, 16}, 1, 64, "RoutingForced"},
    {"3-D (2, 4, 8) with use_muon=True: Muon on (2, 32)", 3, {2, 4, 8}, 1, 8192, "RoutingForced"},
  };
  gen_group(g, "step");
  for (size_t k = 0; k < sizeof R / sizeof R[0]; k++)
    for (int zero = 0; zero < 2; zero++) {
      gen_step_case c;
      char comment[256];
      snprintf(comment, sizeof comment, "%s (%s)", R[k].what,
               zero ? "zero gradient: only the branch's decay acts" : "one step with a gradient");
      muonref_options o = base(g, 0.05, 0.1);
      o.adam_lr_ratio = 0.2;
      o.adam_dim_threshold = R[k].thr;
      o.use_muon = R[k].use_muon < 0 ? MUONREF_USE_MUON_AUTO : R[k].use_muon ? MUONREF_USE_MUON_TRUE : MUONREF_USE_MUON_FALSE;
      begin(&c, comment, &o);
      muonref_shape s = {R[k].ndim, {R[k].d[0], R[k].d[1], R[k].d[2], R[k].d[3]}};
      int i = param(g, &c, "p", s, 0);
      if (zero)
        grad_zero(&c, 0, i);
      else
        grad_normal(g, &c, 0, i, 1.0);
      flags(&c, "Routing", R[k].fl, zero ? "ZeroGradient" : NULL);
      gen_add_step(g, &c);
    }
  if (defaults(g).route_rule == MUONREF_ROUTE_TIMM) {
    /* timm's heuristic (spec/profiles/timm.md 2; options.h MUONREF_ROUTE_TIMM):
     * its boundaries, one step each; AUTO routing, the profile's defaults */
    static const struct { const char *what; int ndim; size_t d[4]; } H[] = {
      {"(4, 512): aspect ratio exactly 128 (AdamW only above 128): Muon", 2, {4, 512}},
      {"(4, 520): aspect ratio 130 > 128: AdamW", 2, {4, 520}},
      {"(4, 4): both sides at the minimum 4: Muon", 2, {4, 4}},
      {"(3, 16): a side below 4: AdamW", 2, {3, 16}},
      {"(8, 1): a unit dimension: AdamW", 2, {8, 1}},
      {"(1, 8, 16): a leading unit dimension (a position embedding): AdamW", 3, {1, 8, 16}},
      {"(8, 1, 3, 3): dims[1] = 1 (a depthwise conv): AdamW", 4, {8, 1, 3, 3}},
      {"(4, 2, 2, 2): flattened (4, 8): Muon", 4, {4, 2, 2, 2}},
      {"(2, 8, 8): flattened (2, 64), a side below 4: AdamW", 3, {2, 8, 8}},
      {"(16, 4, 3, 3): flattened (16, 36): Muon", 4, {16, 4, 3, 3}},
    };
    for (size_t k = 0; k < sizeof H / sizeof H[0]; k++) {
      gen_step_case c;
      char comment[256];
      snprintf(comment, sizeof comment, "timm's routing heuristic, %s (one step, weight_decay 0.1)", H[k].what);
      muonref_options o = base(g, 0.05, 0.1);
      begin(&c, comment, &o);
      muonref_shape sh = {H[k].ndim, {H[k].d[0], H[k].d[1], H[k].d[2], H[k].d[3]}};
      int i = param(g, &c, "p", sh, 0);
      grad_normal(g, &c, 0, i, 1.0);
      flags(&c, "Routing", "RoutingHeuristic", NULL);
      gen_add_step(g, &c);
    }
  }
  if (defaults(g).catalogue == MUONREF_CATALOGUE_OPTAX) /* optax's ndim_2: after every other case, so their inputs stay */
    routing_ndim_2(g);
  if (defaults(g).route_rule == MUONREF_ROUTE_NOT_1D || defaults(g).route_rule == MUONREF_ROUTE_TAGGED_2D)
    /* megatron's tag, after every other profile's cases */
    routing_tagged(g);
  if (defaults(g).route_rule == MUONREF_ROUTE_NDIM_2_3 && defaults(g).pattern_match == MUONREF_MATCH_SUBSTRING_CI)
    routing_by_name(g); /* Paddle's substrings */
  if (defaults(g).catalogue == MUONREF_CATALOGUE_KERAS) /* keras' name rules (2-D names) */
    routing_names(g);
  if (defaults(g).catalogue == MUONREF_CATALOGUE_KERAS && defaults(g).route_rule == MUONREF_ROUTE_NDIM_2_3)
    routing_keras_3d(g); /* keras v3.10: 3-D Muon */
  if (has_key_kind(g, MUONREF_KEY_USE_FALLBACK))
    routing_use_fallback(g);
  if (defaults(g).route_rule != MUONREF_ROUTE_MANUAL)
    return;
  /* a port routed by the caller's lists (Moonlight's muon_params and
   * adamw_params): each parameter takes the branch it was given, at the
   * profile's own AdamW lr */
  static const struct { const char *what; int ndim; size_t d[4]; int muon; } M[] = {
    {"hidden (16, 8) in the Muon list", 2, {16, 8}, 1},
    {"wide (8, 32) in the Muon list", 2, {8, 32}, 1},
    {"(1, 1) in the Muon list", 2, {1, 1}, 1},
    {"(64, 16) in the Muon list", 2, {64, 16}, 1},
    {"matrix (16, 8) in the AdamW list", 2, {16, 8}, 0},
    {"embedding-like (40, 8) in the AdamW list", 2, {40, 8}, 0},
    {"bias (16,) in the AdamW list", 1, {16}, 0},
    {"conv filter (4, 2, 3, 3) in the AdamW list", 4, {4, 2, 3, 3}, 0},
    {"LayerScale (16, 1, 1) in the AdamW list", 3, {16, 1, 1}, 0},
  };
  for (size_t k = 0; k < sizeof M / sizeof M[0]; k++)
    for (int zero = 0; zero < 2; zero++) {
      gen_step_case c;
      char comment[256];
      snprintf(comment, sizeof comment, "%s (%s)", M[k].what,
               zero ? "zero gradient: only the branch's decay acts" : "one step with a gradient");
      muonref_options o = base(g, 0.05, 0.1);
      o.use_muon = M[k].muon ? MUONREF_USE_MUON_TRUE : MUONREF_USE_MUON_FALSE;
      begin(&c, comment, &o);
      muonref_shape s = {M[k].ndim, {M[k].d[0], M[k].d[1], M[k].d[2], M[k].d[3]}};
      int i = param(g, &c, "p", s, 0);
      if (zero)
        grad_zero(&c, 0, i);
      else
        grad_normal(g, &c, 0, i, 1.0);
      flags(&c, "Routing", "RoutingForced", zero ? "ZeroGradient" : NULL);
      gen_add_step(g, &c);
    }
}

/* ---- scaling ---- */

/* One Paddle case: a wide (8, 32) and a tall (32, 8) Muon matrix and a bias
 * (AdamW), two steps, under o. */
static void paddle_case(gen_ctx *g, const char *comment, const muonref_options *o, const char *flag)
{
  gen_step_case c;
  begin(&c, comment, o);
  param(g, &c, "wide.weight", shape2(8, 32), 0);
  param(g, &c, "tall.weight", shape2(32, 8), 0);
  param(g, &c, "norm.bias", (muonref_shape){1, {8}}, 0);
  c.n_steps = 2;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 3; i++)
      grad_normal(g, &c, k, i, 1.0);
  flags(&c, "Scaling", flag, NULL);
  gen_add_step(g, &c);
}

/* paddle.optimizer.Muon's own options (spec/profiles/paddle.md 4, 5, 11):
 * muon_version 2 and 3, muon_extra_scale_factor, every ns_coeff_type preset
 * (cycled: aol at 5 steps wraps to its first triple, deepseekv4 past 10),
 * a custom list, a negative weight_decay (Muon skips its decay, AdamW's
 * kernel applies it). */
static void paddle_scaling(gen_ctx *g)
{
  static const struct { const char *what; int version; double extra; const char *preset; int steps; double wd; } P[] = {
    {"muon_version 2: sqrt(cols/rows) without max: 2 on (8, 32), 0.5 on (32, 8), times 0.2", 2, 0.2, "simple", 5, 0.1},
    {"muon_version 3: sqrt(max(rows, cols)) = 5.66 on both, times 0.2", 3, 0.2, "simple", 5, 0.1},
    {"muon_version 1 with muon_extra_scale_factor 1.0: sqrt(max(1, cols/rows)) alone", 1, 1.0, "simple", 5, 0.1},
    {"muon_version 2 with muon_extra_scale_factor 0.5", 2, 0.5, "simple", 5, 0.1},
    {"ns_coeff_type quintic (five triples, once each)", 1, 0.2, "quintic", 5, 0.1},
    {"ns_coeff_type polar_express: the first five of its eight triples", 1, 0.2, "polar_express", 5, 0.1},
    {"ns_coeff_type aol at ns_steps 5: triples 0, 1, 2, 3, then 0 again (cycle, not repeat-last)", 1, 0.2, "aol", 5,
     0.1},
    {"ns_coeff_type aol at ns_steps 6: 0, 1, 2, 3, 0, 1", 1, 0.2, "aol", 6, 0.1},
    {"ns_coeff_type deepseekv4 at ns_steps 10: eight simple triples, then (2, -1.5, 0.5) twice", 1, 0.2, "deepseekv4",
     10, 0.1},
    {"ns_coeff_type deepseekv4 at ns_steps 12: past its ten triples it wraps to the first", 1, 0.2, "deepseekv4", 12,
     0.1},
    {"ns_coeff_type custom [(3.4445, -4.775, 2.0315), (2, -1.5, 0.5)] at ns_steps 5: cycled", 1, 0.2, NULL, 5, 0.1},
    {"weight_decay -0.1: the Muon parameters are not decayed (only weight_decay > 0 decays), the bias is (AdamW's "
     "1 - lr wd grows it)", 1, 0.2, "simple", 5, -0.1},
  };
  for (size_t k = 0; k < sizeof P / sizeof P[0]; k++) {
    char comment[256];
    muonref_options o = base(g, 0.05, P[k].wd);
    o.scale_mode = P[k].version == 1 ? MUONREF_SCALE_FAN_OUT : P[k].version == 2 ? MUONREF_SCALE_RATIO_COLS
                                                                                  : MUONREF_SCALE_SQRT_MAX;
    o.scale_extra = P[k].extra;
    o.ns_steps = P[k].steps;
    if (P[k].preset) {
      muonref_preset_apply(muonref_preset_find(P[k].preset), &o);
    } else {
      o.n_coeffs = 2;
      o.coeffs[0] = (muonref_coeff){3.4445, -4.7750, 2.0315}, o.coeffs[1] = (muonref_coeff){2.0, -1.5, 0.5};
    }
    o.coeff_order = MUONREF_ORDER_CYCLE; /* Paddle cycles every list */
    snprintf(comment, sizeof comment, "paddle: %s; a wide (8, 32), a tall (32, 8) Muon matrix and a bias, two steps",
             P[k].what);
    paddle_case(g, comment, &o, k < 4 ? "ScaleExtra" : k < 11 ? "CoeffCycle" : "DecayPositiveOnly");
  }
}

/* A step case under o: a wide (8, 32) and a tall (32, 8) matrix, two steps of structured gradients (the
 * second step's scales shifted by one: exactly defined in bf16), flagged area and what. */
static void wide_tall_structured_case(gen_ctx *g, const char *comment, const muonref_options *o, const char *area,
                                      const char *what)
{
  gen_step_case c;
  begin(&c, comment, o);
  param(g, &c, "wide", shape2(8, 32), 0);
  param(g, &c, "tall", shape2(32, 8), 0);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < 2; i++)
      grad_structured(g, &c, s, i, s);
  flags(&c, area, what, NULL);
  gen_add_step(g, &c);
}

/* Emerging-Optimizers' coefficient_type (spec/profiles/emerging.md 4; muon_utils.py @fd77292
 * get_coefficient_iterator): each preset's list in its own order, where cycling and repeating the
 * last triple differ (polar_express and cans past their lists, deepseekv4 past its ten triples, aol
 * from step 5), and where they agree (polar_express at 5 steps).  A wide (8, 32) and a tall (32, 8)
 * matrix, two steps of structured gradients (singular values powers of two: exactly defined in bf16; CANS
 * on N(0, 1) gradients blows up in bf16 on some inputs, spec/ns-study.md), with the decay.  Only for a
 * profile with such a key. */
static void scaling_coefficient_type(gen_ctx *g)
{
  static const struct { const char *preset; int steps, unclipped; const char *what; } P[] = {
    {"polar_express", 5, 0, "coefficient_type polar_express at 5 steps: the first five of its eight triples"},
    {"polar_express", 10, 0, "coefficient_type polar_express at 10 steps: its eight triples, then the last twice "
                             "(repeat-last, not the first two again)"},
    {"cans", 5, 1, "coefficient_type cans at 5 steps: its five triples once each"},
    {"cans", 7, 1, "coefficient_type cans at 7 steps: its five triples, then the last twice (repeat-last)"},
    {"aol", 5, 0, "coefficient_type aol at 5 steps: triples 0, 1, 2, 3, then 0 again (cycle)"},
    {"deepseekv4", 12, 0, "coefficient_type deepseekv4 at 12 steps: eight simple triples, then (2, -1.5, 0.5) four "
                          "times (repeat-last; Paddle's cycle wraps to the first)"},
    {"simple", 5, 0, "coefficient_type simple at 5 steps: Keller's triple five times"},
  };
  for (size_t k = 0; k < sizeof P / sizeof P[0]; k++) {
    muonref_options o = base(g, 0.05, 0.1);
    muonref_preset_apply(muonref_preset_find(P[k].preset), &o);
    o.ns_steps = P[k].steps;
    /* unclipped: a profile that clips by default (Megatron's clip_grad 1.0, whose main pins the
     * Emerging-Optimizers with cans) would scale the structured gradient by a binary32 coefficient: its
     * bf16 result is then not exactly defined, and CANS's first triple (8.4703, -25.1081, 18.6293)
     * drives one correct bf16 evaluation (the fast path's) to 4e12 times the update at 5 steps, while
     * the exact result at 7 steps is not certified at 2048 bits.  The cases are about the iteration, so
     * their gradients are not clipped (the other presets run clipped) */
    if (P[k].unclipped)
      o.clip_grad_norm = 0.0;
    wide_tall_structured_case(g, P[k].what, &o, "Scaling", "CoefficientType");
  }
}

/* dion's use_polar_express False (spec/profiles/dion.md 4; dion/megabatch_base.py @0a059a4 picks
 * zeropower_via_newtonschulz5): the quintic preset's five triples once each on X / (||X|| + epsilon),
 * without Polar Express's 1.02.  Structured gradients on a wide and a tall matrix (exactly defined in
 * bf16), then N(0, 1) gradients over three steps with Nesterov.  Only for a profile with the key;
 * appended after the area's other cases, so that they keep their inputs. */
static void scaling_use_polar_express(gen_ctx *g)
{
  muonref_options o = base(g, 0.05, 0.1);
  muonref_preset_apply(muonref_preset_find("quintic"), &o);
  o.ns_safety = 1.0;
  double mu = o.momentum;
  o.momentum = 0.0; /* the Newton-Schulz input is the structured gradient itself: exactly defined in bf16 */
  wide_tall_structured_case(g, "use_polar_express False: zeropower_via_newtonschulz5, the quintic preset's five "
                               "triples once each on X / (||X|| + epsilon), no 1.02; mu 0, a wide (8, 32) and a tall "
                               "(32, 8) matrix, two steps of structured gradients", &o, "Scaling", "QuinticNs");
  gen_step_case c;
  o.momentum = mu, o.nesterov = 1;
  begin(&c, "use_polar_express False with Nesterov: three steps of N(0, 1) gradients on (16, 24)", &o);
  int i = param(g, &c, "w", shape2(16, 24), 0);
  for (int s = 0; s < 3; s++)
    grad_normal(g, &c, s, i, 1.0);
  flags(&c, "Scaling", "QuinticNs", NULL);
  gen_add_step(g, &c);
  /* the optimizer's epsilon reaches zeropower_via_newtonschulz5 (its own default is 1e-7): gradients
   * of norm about 1e-11, far below either, so that X / (||X|| + eps) keeps its singular values below
   * 1e-3, where five quintic steps multiply them by about 500 and no more: 1e-8 and 1e-7 give
   * updates about ten times apart */
  o.nesterov = 0;
  begin(&c, "use_polar_express False on gradients N(0, 2^-40) on (8, 16), norm about 1e-11: X / (||X|| + "
            "epsilon) with the optimizer's epsilon 1e-8, not the function's default 1e-7 (ten times smaller "
            "updates)", &o);
  i = param(g, &c, "w", shape2(8, 16), 0);
  for (int s = 0; s < 2; s++)
    grad_normal(g, &c, s, i, ldexp(1.0, -40));
  flags(&c, "Scaling", "QuinticNs", "TinyNorm");
  gen_add_step(g, &c);
}

/* Block-wise Newton-Schulz per head (ns_heads, spec/muon.md 7.5; dion's group key num_heads,
 * megabatch_base.py @0a059a4 _prepare_head_split): a Muon matrix (H d, n) is H matrices (d, n), each
 * normalised, orthogonalized and scaled on its own shape.  N(0, 1) gradients: a wide matrix of two heads
 * over two steps; a tall (32, 8) of four square heads with Nesterov, where the head's scale (1 under
 * sqrt(rows / cols)) differs from the whole matrix's (2).  Only for a profile with a key setting ns_heads;
 * appended after the area's other cases, so that they keep their inputs. */
static void scaling_num_heads(gen_ctx *g)
{
  static const struct { int heads; size_t r, c; int nesterov, steps; const char *what; } H[] = {
    {2, 8, 16, 0, 2, "num_heads 2 on (8, 16): two heads (4, 16), each orthogonalized on its own, two steps of "
                     "N(0, 1) gradients"},
    {4, 32, 8, 1, 2, "num_heads 4 on a tall (32, 8) with Nesterov: four square heads (8, 8), each scaled by its own "
                     "shape (sqrt(8/8) = 1, not the whole matrix's sqrt(32/8) = 2)"},
    {1, 16, 24, 0, 1, "num_heads 1: one head, the whole matrix (dion's no-op value)"},
  };
  for (size_t k = 0; k < sizeof H / sizeof H[0]; k++) {
    muonref_options o = base(g, 0.05, 0.1);
    o.ns_heads = H[k].heads;
    o.nesterov = H[k].nesterov;
    gen_step_case c;
    begin(&c, H[k].what, &o);
    int i = param(g, &c, "qkv", shape2(H[k].r, H[k].c), 0);
    for (int s = 0; s < H[k].steps; s++)
      grad_normal(g, &c, s, i, 1.0);
    flags(&c, "Scaling", "HeadNs", NULL);
    gen_add_step(g, &c);
  }
}

/* Block-wise Newton-Schulz of unequal row blocks (ns_split, spec/muon.md 7.6), N(0, 1) gradients.
 * Under ns_split_mode ROWS (dion's group key split_sizes, megabatch_base.py @0a059a4): blocks in order,
 * the bf16 output of each first multiplied by adjust(block) / adjust(matrix).  Under GROUPS (Megatron's
 * qkv_split_shapes with muon_split_qkv, TensorParallelMuon.orthogonalize): the sizes repeat over the
 * query groups, each of Q, K and V gathered from every group and scaled by its own shape; and
 * muon_split_qkv false on the same matrix, which is one matrix.  Only for a profile with a key setting
 * ns_split; appended after the area's other cases, so that they keep their inputs. */
static void scaling_split(gen_ctx *g)
{
  static const struct { int n, sizes[4], groups, off; size_t r, c; int nesterov; const char *what; } S[] = {
    {3, {4, 2, 2}, 0, 0, 8, 16, 0, "split_sizes [4, 2, 2] on (8, 16): blocks (4, 16), (2, 16), (2, 16), each "
                                  "orthogonalized on its own%s, two steps"},
    {2, {2, 6}, 0, 0, 8, 4, 1, "split_sizes [2, 6] on a tall (8, 4) with Nesterov: a wide block (2, 4) and a tall one "
                               "(6, 4), two steps"},
    {3, {4, 2, 2}, 1, 0, 16, 8, 0, "qkv_split_shapes [4, 2, 2] on (16, 8): two query groups, Q rows 0-3 and 8-11 "
                                   "(8, 8), K rows 4, 5, 12, 13 (4, 8), V rows 6, 7, 14, 15 (4, 8), each orthogonalized "
                                   "and scaled by its own shape, two steps"},
    {3, {2, 1, 1}, 1, 0, 8, 16, 1, "qkv_split_shapes [2, 1, 1] on (8, 16) with Nesterov: two query groups, Q (4, 16), "
                                   "K (2, 16), V (2, 16), two steps"},
    {4, {2, 2, 1, 1}, 1, 0, 12, 8, 0, "qkv_split_shapes [2, 2, 1, 1] on (12, 8) (attention_output_gate: Q, gate, K, "
                                      "V): two query groups, four blocks, two steps"},
    {3, {4, 2, 2}, 1, 1, 16, 8, 0, "muon_split_qkv false with qkv_split_shapes [4, 2, 2] on (16, 8): the whole matrix, "
                                   "two steps"},
  };
  int groups = defaults(g).ns_split_mode == MUONREF_SPLIT_GROUPS;
  for (size_t k = 0; !has_key_kind(g, MUONREF_KEY_SPLIT_CONCAT) && k < sizeof S / sizeof S[0]; k++) {
    if (S[k].groups != groups)
      continue;
    muonref_options o = base(g, 0.05, 0.1);
    o.n_ns_split = S[k].n;
    memcpy(o.ns_split, S[k].sizes, sizeof S[k].sizes);
    o.nesterov = S[k].nesterov;
    if (S[k].off)
      o.ns_split_mode = MUONREF_SPLIT_OFF;
    gen_step_case c;
    /* the first case's comment names dion's ratio (sqrt(rows / cols)) only where the profile has it */
    int ratio = o.ns_split_scale == MUONREF_SPLIT_SCALE_RATIO && o.scale_mode == MUONREF_SCALE_RMS_TO_RMS;
    char what[400];
    snprintf(what, sizeof what, S[k].what,
             ratio ? " and its bf16 output times adjust(block) / adjust(8, 16) (sqrt(1/2), 1/2, 1/2)" : "");
    begin(&c, what, &o);
    int i = param(g, &c, "qkv", shape2(S[k].r, S[k].c), 0);
    for (int st = 0; st < 2; st++)
      grad_normal(g, &c, st, i, 1.0);
    flags(&c, "Scaling", "SplitNs", NULL);
    gen_add_step(g, &c);
  }
  /* Paddle's split_concat_func (MuonParamInfo; paddle.md 8): split along axis 1 of its (in, out) weight, the
   * fused projection's output, or along axis 0, each part through ortho_fn (Newton-Schulz and _scaling_fn on
   * the part's shape), concatenated back */
  static const struct { int axis, n, sizes[3]; size_t r, c; int nesterov; const char *what; } P[] = {
    {1, 3, {8, 4, 4}, 8, 16, 1, "split_concat_func splitting axis 1 of an (8, 16) weight into [8, 4, 4] (a fused "
                                "projection's outputs): parts (8, 8), (8, 4), (8, 4), each orthogonalized and scaled "
                                "by its own shape, two steps"},
    {0, 2, {4, 12}, 16, 8, 0, "split_concat_func splitting axis 0 of a (16, 8) weight into [4, 12], nesterov false: "
                              "a wide part (4, 8) and a tall one (12, 8), two steps"},
  };
  for (size_t k = 0; has_key_kind(g, MUONREF_KEY_SPLIT_CONCAT) && k < sizeof P / sizeof P[0]; k++) {
    muonref_options o = base(g, 0.05, 0.1);
    o.n_ns_split = P[k].n;
    memcpy(o.ns_split, P[k].sizes, sizeof P[k].sizes);
    o.ns_split_mode = P[k].axis ? MUONREF_SPLIT_COLUMNS : MUONREF_SPLIT_ROWS;
    o.nesterov = P[k].nesterov;
    gen_step_case c;
    begin(&c, P[k].what, &o);
    int i = param(g, &c, "qkv", shape2(P[k].r, P[k].c), 0);
    for (int st = 0; st < 2; st++)
      grad_normal(g, &c, st, i, 1.0);
    flags(&c, "Scaling", "SplitNs", NULL);
    gen_add_step(g, &c);
  }
}

/* timm's scale_eps (eps_mode add_scaled): Newton-Schulz divides by
 * ||X|| + eps sqrt(cols/rows) instead of max(||X||, eps) (timm/optim/muon.py
 * @aa4b5850 scale_eps_for_ns); on gradients of norm near eps the added,
 * shape-scaled eps shrinks the update, on a wide matrix more than on a tall
 * one. */
static void scaling_scale_eps(gen_ctx *g)
{
  static const struct { size_t r, c; int tiny; double safety; const char *what; } E[] = {
    {8, 32, 1, 1.0, "scale_eps on a wide (8, 32) tiny gradient 2^-26 x 8: eps' = 1e-7 sqrt(32/8) = 2e-7 added to the norm"},
    {32, 8, 1, 1.0, "scale_eps on a tall (32, 8) tiny gradient 2^-26 x 8: eps' = 1e-7 sqrt(8/32) = 5e-8 added"},
    {16, 16, 1, 1.0, "scale_eps on a square (16, 16) tiny gradient 2^-26 x 8: eps' = 1e-7 added (not a clamp)"},
    {8, 16, 0, 1.01, "scale_eps with safety factor 1.01 on (8, 16): ||X|| 1.01 + eps sqrt(2)"},
    {8, 32, 2, 1.0, "scale_eps on random (8, 32) gradients N(0, (1.25e-10)^2), Newton-Schulz input of norm about 1e-10: "
                    "X / (||X|| + 2e-7) is half of X / max(||X||, 1e-7), and five steps keep that ratio in the update"},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++) {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, 0.0);
    o.eps_mode = MUONREF_EPS_ADD_SCALED;
    o.ns_safety = E[k].safety;
    begin(&c, E[k].what, &o);
    int i = param(g, &c, "w", shape2(E[k].r, E[k].c), 0);
    if (E[k].tiny == 2) {
      o.momentum = 0.95; /* U = M = 0.05 G (timm: no Nesterov by default) */
      c.options[0] = o;
      grad_normal(g, &c, 0, i, 1.25e-10);
    } else if (E[k].tiny) {
      size_t m = E[k].r < E[k].c ? E[k].r : E[k].c, n = E[k].r < E[k].c ? E[k].c : E[k].r;
      float d[64];
      for (size_t j = 0; j < m; j++)
        d[j] = ldexpf(1.0f, -26);
      c.grads[0][i] = gen_structured(m, n, d, E[k].r > E[k].c);
      c.n_steps = 1;
    } else {
      grad_structured(g, &c, 0, i, 0);
    }
    flags(&c, "Scaling", "ScaleEps", E[k].tiny ? "TinyNorm" : NULL);
    gen_add_step(g, &c);
  }
}

/* optax's adaptive (nuclear_scale: the update times <U, O>, PolarGrad's
 * nuclear-norm scale) and preconditioning (ns_precondition: AOL's row
 * rescaling, Turbo-Muon; the Schatten-4 norm) on random gradients, two
 * steps (google-deepmind/optax optax/contrib/_muon.py @2edbcbe2). */
static void scaling_adaptive_preconditioned(gen_ctx *g)
{
  static const struct { const char *what; size_t r, c; int adaptive, nesterov, zero_row; muonref_precondition pre;
                        const char *preset; } A[] = {
    {"adaptive: the update times <U, O> (the nuclear norm of U when O is its polar factor), a wide (8, 16) matrix",
     8, 16, 1, 1, 0, MUONREF_PRECOND_FROBENIUS, NULL},
    {"adaptive without nesterov on a tall (32, 8) matrix: <U, O> with U = mu / (1 - beta^t)", 32, 8, 1, 0, 0,
     MUONREF_PRECOND_FROBENIUS, NULL},
    {"preconditioning aol: row i of X divided by sqrt(sum_j |(X X^T)_ij|) instead of ||X||_F, (8, 16)", 8, 16, 0, 1, 0,
     MUONREF_PRECOND_AOL, NULL},
    {"preconditioning aol on a tall (24, 8) matrix with the 'dion' list (five triples, each once)", 24, 8, 0, 1, 0,
     MUONREF_PRECOND_AOL, "quintic"},
    {"preconditioning aol with a zero row: its row sum 0 is floored at 1e-8 and the row stays 0", 8, 16, 0, 1, 1,
     MUONREF_PRECOND_AOL, NULL},
    {"preconditioning schatten: X / sqrt(||X X^T||_F), the Schatten-4 norm, (8, 16)", 8, 16, 0, 1, 0,
     MUONREF_PRECOND_SCHATTEN, NULL},
    {"adaptive with preconditioning aol (Turbo-Muon's rescaling, PolarGrad's scale) on (16, 16)", 16, 16, 1, 1, 0,
     MUONREF_PRECOND_AOL, NULL},
  };
  for (size_t k = 0; k < sizeof A / sizeof A[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0);
    o.nuclear_scale = A[k].adaptive;
    o.nesterov = A[k].nesterov;
    o.ns_precondition = A[k].pre;
    if (A[k].preset) { /* the list in the profile's own order (optax: each triple once) */
      muonref_coeff_order order = o.coeff_order;
      muonref_preset_apply(muonref_preset_find(A[k].preset), &o);
      o.coeff_order = order;
    }
    begin(&c, A[k].what, &o);
    int i = param(g, &c, "w", shape2(A[k].r, A[k].c), 0);
    for (int s = 0; s < 2; s++) {
      grad_normal(g, &c, s, i, 1.0);
      if (A[k].zero_row)
        memset(c.grads[s][i] + A[k].c * 3, 0, A[k].c * sizeof(float));
    }
    const char *pre = A[k].pre != MUONREF_PRECOND_FROBENIUS ? "Preconditioning" : NULL;
    flags(&c, "Scaling", A[k].adaptive ? "NuclearScale" : pre, A[k].adaptive ? pre : NULL);
    gen_add_step(g, &c);
  }
}

void gen_area_scaling(gen_ctx *g)
{
  static const size_t SH[][2] = {{16, 4}, {4, 16}, {8, 8}, {32, 8}, {8, 32}, {64, 16}};
  gen_group(g, "step");
  for (size_t k = 0; k < sizeof SH / sizeof SH[0]; k++)
    for (int mode = 0; mode < 3; mode++) {
      gen_step_case c;
      char comment[256];
      muonref_options o = base_s(g, 0.02, 0.0);
      o.scale_mode = (muonref_scale_mode)mode;
      snprintf(comment, sizeof comment, "(%zu, %zu) with scale_mode %s: factor %g", SH[k][0], SH[k][1],
               muonref_scale_mode_name(o.scale_mode),
               mode == 0 ? sqrt(fmax(1.0, (double)SH[k][0] / SH[k][1]))
               : mode == 1 ? sqrt(fmax(1.0, (double)SH[k][1] / SH[k][0])) : 1.0);
      begin(&c, comment, &o);
      int i = param(g, &c, "w", shape2(SH[k][0], SH[k][1]), 0);
      grad_structured(g, &c, 0, i, 0);
      flags(&c, "Scaling", SH[k][0] != SH[k][1] ? "NonSquare" : "Square", NULL);
      gen_add_step(g, &c);
    }
  /* the same layer in both layouts (bug-reports B07) */
  for (int layout = 0; layout < 2; layout++) {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, 0.0);
    o.scale_mode = layout ? MUONREF_SCALE_FAN_OUT : MUONREF_SCALE_FAN_IN;
    begin(&c, layout ? "a 16-in, 64-out layer stored (in, out) = (16, 64) with fan_out: factor 2"
                     : "a 16-in, 64-out layer stored (out, in) = (64, 16) with fan_in: factor 2",
          &o);
    int i = param(g, &c, "w", layout ? shape2(16, 64) : shape2(64, 16), 0);
    grad_structured(g, &c, 0, i, 0);
    flags(&c, "Scaling", "BugB07", "Layout");
    gen_add_step(g, &c);
  }
  /* a forced conv filter: the scale uses the flattened matrix (8, 8): factor 1 */
  for (int mode = 0; mode < 2; mode++) {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, 0.0);
    o.use_muon = MUONREF_USE_MUON_TRUE;
    o.scale_mode = mode ? MUONREF_SCALE_FAN_OUT : MUONREF_SCALE_FAN_IN;
    begin(&c, mode ? "conv (16, 2, 1, 4) forced to Muon, fan_out: flattened (16, 8), factor 1"
                   : "conv (16, 2, 1, 4) forced to Muon, fan_in: flattened (16, 8), factor sqrt(2) (not from the kernel dims 1/4)",
          &o);
    int i = param(g, &c, "conv", (muonref_shape){4, {16, 2, 1, 4}}, 0);
    grad_structured(g, &c, 0, i, 0);
    flags(&c, "Scaling", "ConvFlatten", NULL);
    gen_add_step(g, &c);
  }
  /* 0.2 sqrt(max(rows, cols)), torch.optim.Muon's "match_rms_adamw" (the
   * RMS of AdamW's update, arXiv:2502.16982): left out of profiles whose
   * port has no such rule (nemo); last in the area, so that the earlier
   * cases' inputs do not depend on it */
  static const size_t RS[][2] = {{16, 64}, {64, 16}, {32, 32}, {8, 128}};
  for (size_t k = 0; k < sizeof RS / sizeof RS[0]; k++) {
    gen_step_case c;
    char comment[256];
    muonref_options o = base_s(g, 0.02, 0.0);
    o.scale_mode = MUONREF_SCALE_RMS_ADAMW;
    snprintf(comment, sizeof comment, "(%zu, %zu) with the rms_adamw rule 0.2 sqrt(max(rows, cols)): factor %g", RS[k][0],
             RS[k][1], muonref_scale_factor(o.scale_mode, RS[k][0], RS[k][1]));
    begin(&c, comment, &o);
    int i = param(g, &c, "w", shape2(RS[k][0], RS[k][1]), 0);
    grad_structured(g, &c, 0, i, 0);
    flags(&c, "Scaling", "RmsAdamw", NULL);
    gen_add_step(g, &c);
  }
  if (nemo_frozen(g))
    return;
  /* sqrt(rows/cols), timm's "rms_to_rms" (below 1 for a wide matrix):
   * left out of profiles whose port has no such rule */
  static const size_t TS[][2] = {{16, 64}, {64, 16}, {32, 32}};
  for (size_t k = 0; k < sizeof TS / sizeof TS[0]; k++) {
    gen_step_case c;
    char comment[256];
    muonref_options o = base_s(g, 0.02, 0.0);
    o.scale_mode = MUONREF_SCALE_RMS_TO_RMS;
    snprintf(comment, sizeof comment, "(%zu, %zu) with the rms_to_rms rule sqrt(rows/cols): factor %g", TS[k][0], TS[k][1],
             muonref_scale_factor(o.scale_mode, TS[k][0], TS[k][1]));
    begin(&c, comment, &o);
    int i = param(g, &c, "w", shape2(TS[k][0], TS[k][1]), 0);
    grad_structured(g, &c, 0, i, 0);
    flags(&c, "Scaling", "RmsToRms", NULL);
    gen_add_step(g, &c);
  }
  /* the norm times a safety factor before eps (timm's safety_factor):
   * 1.01 shrinks every update by about 1%; with a tiny norm the clamp acts
   * on the product.  Left out of profiles whose port has no such factor. */
  static const struct { double safety; int tiny; const char *what; } SF[] = {
    {1.01, 0, "safety factor 1.01 on (8, 16): X / (1.01 ||X||)"},
    {1.25, 0, "safety factor 1.25 on (16, 8)"},
    {1.01, 1, "safety factor 1.01 on a tiny gradient 2^-26 x 8 (the clamp at eps acts on 1.01 ||X||)"},
  };
  for (size_t k = 0; k < sizeof SF / sizeof SF[0]; k++) {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, 0.0);
    o.ns_safety = SF[k].safety;
    begin(&c, SF[k].what, &o);
    int i = param(g, &c, "w", k == 1 ? shape2(16, 8) : shape2(8, 16), 0);
    if (SF[k].tiny) {
      float d[8];
      for (int j = 0; j < 8; j++)
        d[j] = ldexpf(1.0f, -26);
      c.grads[0][i] = gen_structured(8, 16, d, 0);
      c.n_steps = 1;
    } else {
      grad_structured(g, &c, 0, i, 0);
    }
    flags(&c, "Scaling", "SafetyFactor", SF[k].tiny ? "TinyNorm" : NULL);
    gen_add_step(g, &c);
  }
  /* sqrt(max(rows, cols)) without 0.2, Emerging-Optimizers' "spectral"
   * (bug-reports B08), then an extra factor multiplying the shape factor
   * (its extra_scale_factor: 0.2 matches Moonlight, sqrt(0.1/1.9) AdamW's
   * update RMS for beta1 0.9, as its docstring suggests).  Left out of
   * profiles whose port has neither. */
  static const struct { size_t r, c; muonref_scale_mode mode; double extra; } QS[] = {
    {16, 64, MUONREF_SCALE_SQRT_MAX, 1.0}, {64, 16, MUONREF_SCALE_SQRT_MAX, 1.0}, {32, 32, MUONREF_SCALE_SQRT_MAX, 1.0},
    {16, 64, MUONREF_SCALE_SQRT_MAX, 0.2}, {64, 16, MUONREF_SCALE_SQRT_MAX, 0.22941573387056177},
    {64, 16, MUONREF_SCALE_FAN_IN, 0.5}, {16, 64, MUONREF_SCALE_RMS_TO_RMS, 2.0},
  };
  for (size_t k = 0; k < sizeof QS / sizeof QS[0]; k++) {
    gen_step_case c;
    char comment[256];
    muonref_options o = base_s(g, 0.02, 0.0);
    o.scale_mode = QS[k].mode;
    o.scale_extra = QS[k].extra;
    snprintf(comment, sizeof comment, "(%zu, %zu) with the %s rule times an extra factor %.17g: factor %.17g", QS[k].r,
             QS[k].c, muonref_scale_mode_name(QS[k].mode), QS[k].extra,
             muonref_scale_factor(QS[k].mode, QS[k].r, QS[k].c) * QS[k].extra);
    begin(&c, comment, &o);
    int i = param(g, &c, "w", shape2(QS[k].r, QS[k].c), 0);
    grad_structured(g, &c, 0, i, 0);
    flags(&c, "Scaling", QS[k].mode == MUONREF_SCALE_SQRT_MAX ? "SqrtMax" : NULL, QS[k].extra != 1.0 ? "ScaleExtra" : NULL);
    gen_add_step(g, &c);
  }
  if (has_key_kind(g, MUONREF_KEY_SCALE_EPS))
    scaling_scale_eps(g);
  /* Emerging-Optimizers' coefficient_type family: its releases before v0.4.0 clamp at 1e-7 (emerging@0.3) */
  int eo = has_key_kind(g, MUONREF_KEY_COEFFICIENT_TYPE);
  /* a whole step on gradients of norm about 1e-11, for a profile whose eps
   * is far below it (Emerging-Optimizers 1e-15): the update has its full
   * size; an eps floor of 1e-7 shrinks it about 50-fold (the same cases
   * under emerging@0.3's floor: the update that much smaller) */
  for (int k = 0; (defaults(g).ns_eps < 1e-7 || eo) && k < 2; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0);
    char what[160];
    snprintf(what, sizeof what, "two steps on (%s) gradients N(0, 2^-40): %s", k ? "16, 8" : "8, 16",
             defaults(g).ns_eps < 1e-7 ? "the update keeps its size (eps far below the norm)"
                                       : "the eps floor (far above the norm) shrinks the update about 50-fold");
    begin(&c, what, &o);
    int i = param(g, &c, "w", k ? shape2(16, 8) : shape2(8, 16), 0);
    grad_normal(g, &c, 0, i, ldexp(1.0, -40));
    grad_normal(g, &c, 1, i, ldexp(1.0, -40));
    flags(&c, "Scaling", "TinyNorm", "EpsFloor");
    gen_add_step(g, &c);
  }
  if (defaults(g).catalogue == MUONREF_CATALOGUE_PADDLE)
    paddle_scaling(g);
  if (has_key_kind(g, MUONREF_KEY_PRECONDITIONING))
    scaling_adaptive_preconditioned(g);
  if (has_key_kind(g, MUONREF_KEY_COEFFICIENT_TYPE))
    scaling_coefficient_type(g);
  if (has_key_kind(g, MUONREF_KEY_USE_POLAR_EXPRESS))
    scaling_use_polar_express(g);
  if (has_field_key(g, offsetof(muonref_options, ns_heads)))
    scaling_num_heads(g);
  if (has_field_key(g, offsetof(muonref_options, ns_split)))
    scaling_split(g);
}

/* ---- weight decay ---- */

/* A tall (32, 8) Muon matrix and a bias (32,) with lr and weight decay wd
 * (and the AdamW lr ratio, unless negative: the profile's), one step with
 * structured and N(0, 1) gradients, or with zero gradients. */
static void decay_case(gen_ctx *g, const char *comment, double lr, double wd, double ratio, int zero)
{
  gen_step_case c;
  muonref_options o = base_s(g, lr, wd);
  if (ratio >= 0.0)
    o.adam_lr_ratio = ratio;
  begin(&c, comment, &o);
  int w = param(g, &c, "tall", shape2(32, 8), 0), b = param(g, &c, "bias", (muonref_shape){1, {32}}, 0);
  if (zero)
    grad_zero(&c, 0, w), grad_zero(&c, 0, b);
  else
    grad_structured(g, &c, 0, w, 0), grad_normal(g, &c, 0, b, 1.0);
  flags(&c, "WeightDecay", zero ? "ZeroGradient" : "DecayOrder", NULL);
  gen_add_step(g, &c);
}

/* L2 in both branches (kozistr/pytorch_optimizer's weight_decouple False: decay_method l2 with adam_l2; its
 * `grad.add_(p, alpha=wd)` on p.grad, so adam_l2_grad): G + wd P feeds the Muon momentum and the AdamW moments,
 * no parameter is decayed, and p.grad holds G + wd P after the step (the Nesterov input of it on a Muon
 * parameter with Nesterov): expected.gradAfter.  A wide Muon matrix and a bias on AdamW, three steps of N(0, 1)
 * gradients on N(0, 1) parameters, with Nesterov (where the profile's default has it) and without.  Written for
 * the profiles whose port writes AdamW's L2 gradient (adam_l2_grad). */
static void weight_decay_l2_both(gen_ctx *g)
{
  static const struct { int nesterov_off; const char *what; } L[] = {
    {0, "L2 in both branches (weight_decouple False), lr 0.1, weight_decay 0.1, three steps on a (8, 16) Muon matrix "
        "and a bias on AdamW: G + wd P feeds the momentum and the moments, P is not decayed, p.grad holds G + wd P "
        "(the Nesterov input of it on the Muon matrix)"},
    {1, "L2 in both branches (weight_decouple False), nesterov False, lr 0.1, weight_decay 0.1, three steps on a "
        "(8, 16) Muon matrix and a bias on AdamW: p.grad holds G + wd P on both"},
    {1, "L2 in both branches (weight_decouple False), lr 0.1, weight_decay 0.1, three steps on a (8, 16) Muon matrix "
        "and a bias on AdamW, no Nesterov: p.grad holds G + wd P on both"},
  };
  int nesterov = defaults(g).nesterov; /* the first two with Nesterov by default, the last without */
  for (size_t k = nesterov ? 0 : 2; k < (nesterov ? 2 : 3); k++) {
    gen_step_case c;
    muonref_options o = base_s(g, 0.1, 0.1);
    o.decay_method = MUONREF_DECAY_L2;
    o.adam_l2 = 1;
    if (L[k].nesterov_off)
      o.nesterov = 0;
    begin(&c, L[k].what, &o);
    int w = param(g, &c, "hidden", shape2(8, 16), 0), b = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    for (int s = 0; s < 3; s++)
      grad_normal(g, &c, s, w, 1.0), grad_normal(g, &c, s, b, 1.0);
    flags(&c, "WeightDecay", "L2BothBranches", "AdamW");
    gen_add_step(g, &c);
  }
}

void gen_area_weight_decay(gen_ctx *g)
{
  gen_group(g, "step");
  static const struct { double lr, wd, ratio; } D[] = {{0.02, 0.01, 0.025}, {0.5, 0.2, 0.1}, {1.0, 0.5, 1.0}};
  for (size_t k = 0; k < 3; k++)
    for (int zero = 0; zero < 2; zero++) {
      char comment[256];
      snprintf(comment, sizeof comment,
               "lr %g, weight_decay %g, adam_lr_ratio %g on a tall Muon matrix (scale 2) and a bias: %s", D[k].lr,
               D[k].wd, D[k].ratio,
               zero ? "zero gradients, so exactly p (1 - lr wd) and p (1 - lr ratio wd)"
                    : "decay with the unscaled lr before the update");
      decay_case(g, comment, D[k].lr, D[k].wd, D[k].ratio, zero);
    }
  /* two groups, the second without decay (the seed's test_weight_decay_uses_the_group_learning_rate) */
  for (int zero = 0; zero < 2; zero++) {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, 0.01), o0 = base_s(g, 0.02, 0.0);
    o.adam_lr_ratio = o0.adam_lr_ratio = 0.1;
    begin(&c, zero ? "two groups, weight_decay 0.01 and 0.0, zero gradients: the second group is untouched"
                   : "two groups, weight_decay 0.01 and 0.0, two steps with gradients",
          &o);
    c.n_groups = 2;
    c.options[1] = o0;
    int a = param(g, &c, "hidden", shape2(16, 8), 0), b = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    int t = param(g, &c, "tall", shape2(32, 8), 1), cv = param(g, &c, "conv", (muonref_shape){4, {4, 2, 3, 3}}, 1);
    for (int k = 0; k < (zero ? 1 : 2); k++) {
      if (zero) {
        grad_zero(&c, k, a), grad_zero(&c, k, b), grad_zero(&c, k, t), grad_zero(&c, k, cv);
      } else {
        grad_structured(g, &c, k, a, 0), grad_normal(g, &c, k, b, 1.0);
        grad_structured(g, &c, k, t, 0), grad_normal(g, &c, k, cv, 1.0);
      }
    }
    flags(&c, "WeightDecay", "Groups", zero ? "ZeroGradient" : NULL);
    gen_add_step(g, &c);
  }
  /* two groups with different decays: each group's own weight_decay acts */
  {
    gen_step_case c;
    muonref_options o = base_s(g, 0.1, 0.05), o2 = base_s(g, 0.1, 0.3);
    o.adam_lr_ratio = o2.adam_lr_ratio = 0.5;
    begin(&c, "two groups with weight_decay 0.05 and 0.3, two steps: each group decays with its own value", &o);
    c.n_groups = 2;
    c.options[1] = o2;
    int a = param(g, &c, "hidden", shape2(16, 8), 0), b = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    int t = param(g, &c, "tall", shape2(32, 8), 1), cv = param(g, &c, "conv", (muonref_shape){4, {4, 2, 3, 3}}, 1);
    for (int k = 0; k < 2; k++) {
      grad_structured(g, &c, k, a, 0), grad_normal(g, &c, k, b, 1.0);
      grad_structured(g, &c, k, t, 0), grad_normal(g, &c, k, cv, 1.0);
    }
    flags(&c, "WeightDecay", "Groups", NULL);
    gen_add_step(g, &c);
  }
  /* AdamW's decay uses lr * adam_lr_ratio, checked over three steps */
  for (int k3 = 0; k3 < 2; k3++) {
    gen_step_case c;
    muonref_options o = base(g, 0.1, 0.3);
    o.adam_lr_ratio = k3 ? 0.5 : 0.025;
    begin(&c, k3 ? "AdamW decay with adam_lr_ratio 0.5, three steps" : "AdamW decay with adam_lr_ratio 0.025, three steps", &o);
    int b = param(g, &c, "bias", (muonref_shape){1, {24}}, 0);
    for (int k = 0; k < 3; k++)
      grad_normal(g, &c, k, b, 0.5);
    flags(&c, "WeightDecay", "AdamW", NULL);
    gen_add_step(g, &c);
  }
  /* platform-robust decay order: a wide matrix with equal singular values
   * (spec/vectors.md 5.3) */
  static const struct { double lr, wd; } R[] = {{0.5, 0.2}, {1.0, 0.5}};
  for (size_t k = 0; k < 2; k++) {
    gen_step_case c;
    char comment[256];
    snprintf(comment, sizeof comment,
             "lr %g, weight_decay %g on a wide (16, 32) Muon matrix with equal singular values, two steps: decay "
             "before the update (a case PyTorch 1.13 CPU's bf16 effects cannot change)", R[k].lr, R[k].wd);
    muonref_options o = base_s(g, R[k].lr, R[k].wd);
    begin(&c, comment, &o);
    int w = param(g, &c, "wide", shape2(16, 32), 0);
    grad_equal_scales(&c, 0, w, 1.0f), grad_equal_scales(&c, 1, w, 0.5f);
    flags(&c, "WeightDecay", "DecayOrder", NULL);
    gen_add_step(g, &c);
  }
  if (nemo_frozen(g))
    return;
  /* decay in both branches at the profile's own AdamW lr ratio */
  for (size_t k = 0; k < 3; k++)
    for (int zero = 0; zero < 2; zero++) {
      char comment[256];
      snprintf(comment, sizeof comment,
               "lr %g, weight_decay %g at the profile's AdamW lr on a tall Muon matrix and a bias: %s", D[k].lr, D[k].wd,
               zero ? "zero gradients, so exactly the decay" : "decay with the unscaled lr before the update");
      decay_case(g, comment, D[k].lr, D[k].wd, -1.0, zero);
    }
  /* cautious weight decay (cautious_wd, spec/muon.md 4.1): N(0, 1) parameters, so that about half of their
   * elements disagree in sign with the update and keep their value; a wide matrix with equal singular values
   * (exactly defined in bf16, robust on PyTorch 1.13 CPU) and a bias.  Profiles whose port has no such key
   * leave these out. */
  static const struct { double lr, wd; int steps, zero; const char *what; } C[] = {
    {0.5, 0.2, 2, 0, "cautious weight decay, lr 0.5, weight_decay 0.2, two steps: the decay only where the "
                     "parameter and the update agree in sign (about half the elements of both parameters)"},
    {1.0, 0.5, 3, 0, "cautious weight decay, lr 1, weight_decay 0.5, three steps: each element decays by half or not "
                     "at all, as its sign and its update's agree"},
    {0.5, 0.2, 1, 1, "cautious weight decay, zero gradients: the update is exactly zero everywhere, so every element "
                     "decays (P U >= 0; a strict P U > 0 decays none)"},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    gen_step_case c;
    muonref_options o = base_s(g, C[k].lr, C[k].wd);
    o.cautious_wd = 1;
    begin(&c, C[k].what, &o);
    int w = param(g, &c, "wide", shape2(16, 32), 0), b = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    for (int s = 0; s < C[k].steps; s++) {
      if (C[k].zero)
        grad_zero(&c, s, w), grad_zero(&c, s, b);
      else
        grad_equal_scales(&c, s, w, s == 1 ? 0.5f : 1.0f), grad_normal(g, &c, s, b, 1.0);
    }
    flags(&c, "WeightDecay", "CautiousDecay", C[k].zero ? "ZeroGradient" : NULL);
    gen_add_step(g, &c);
  }
  { /* the AdamW branch alone (no Newton-Schulz: robust on every platform): the mask is the quotient's sign */
    gen_step_case c;
    muonref_options o = base(g, 0.1, 0.5);
    o.cautious_wd = 1;
    o.use_muon = MUONREF_USE_MUON_FALSE;
    begin(&c, "cautious weight decay on AdamW parameters only, lr 0.1, weight_decay 0.5, three steps: the decay only "
              "where the parameter and the AdamW step agree in sign", &o);
    int a = param(g, &c, "bias", (muonref_shape){1, {24}}, 0), b = param(g, &c, "norm", (muonref_shape){1, {16}}, 0);
    for (int s = 0; s < 3; s++)
      grad_normal(g, &c, s, a, 1.0), grad_normal(g, &c, s, b, 0.5);
    flags(&c, "WeightDecay", "CautiousDecay", "AdamW");
    gen_add_step(g, &c);
  }
  /* the lr in the Muon decay (decay_method, spec/muon.md 4.2): a wide matrix with equal singular values (exact in
   * bf16, robust on PyTorch 1.13 CPU), lr 0.5 so that 1 - wd, 1 - lr wd and 1 - lr^2 wd all differ; zero
   * gradients give the decay alone.  Profiles whose port has no such key leave these out. */
  static const struct { muonref_decay_method m; int zero; const char *what; } M[] = {
    {MUONREF_DECAY_INDEPENDENT, 0, "decay_method independent, lr 0.5, weight_decay 0.2, two steps: the Muon decay "
                                   "P (1 - wd) without the lr, before the update"},
    {MUONREF_DECAY_INDEPENDENT, 1, "decay_method independent, lr 0.5, weight_decay 0.2, zero gradients: exactly "
                                   "P (1 - wd) = 0.8 P"},
    {MUONREF_DECAY_PALM, 0, "decay_method palm, lr 0.5, weight_decay 0.2, two steps: the Muon decay "
                            "P (1 - lr^2 wd) = 0.95 P, before the update"},
  };
  for (size_t k = 0; k < sizeof M / sizeof M[0]; k++) {
    gen_step_case c;
    muonref_options o = base_s(g, 0.5, 0.2);
    o.decay_method = M[k].m;
    begin(&c, M[k].what, &o);
    int w = param(g, &c, "wide", shape2(16, 32), 0);
    for (int s = 0; s < (M[k].zero ? 1 : 2); s++) {
      if (M[k].zero)
        grad_zero(&c, s, w);
      else
        grad_equal_scales(&c, s, w, s == 1 ? 0.5f : 1.0f);
    }
    flags(&c, "WeightDecay", "DecayMethod", M[k].zero ? "ZeroGradient" : NULL);
    gen_add_step(g, &c);
  }
  /* decay_method l2 (Emerging-Optimizers `grad.add_(p, alpha=wd)`): no decay of P; G + wd P feeds the momentum
   * and Newton-Schulz, and is p.grad after the step (expected.gradAfter).  A parameter and gradients of one
   * Hadamard sign pattern keep G + wd P in it (exact in bf16: 1 + 0.25 = 1.25); zero gradients leave wd P
   * alone, orthogonalized (a decoupled port gives 0.875 P); N(0, 1) values with Nesterov make the decay turn
   * the update's direction. */
  static const struct { int kind; double lr, wd; const char *what; } L[] = {
    {0, 0.5, 0.25, "decay_method l2, lr 0.5, weight_decay 0.25, two steps, the parameter and the gradients of one "
                   "sign pattern: G + wd P feeds the momentum, P is not decayed, p.grad holds G + wd P after"},
    {1, 0.5, 0.25, "decay_method l2, lr 0.5, weight_decay 0.25, zero gradient: the decay wd P alone goes through "
                   "the momentum and Newton-Schulz (not P (1 - lr wd))"},
    {2, 0.1, 0.1, "decay_method l2, lr 0.1, weight_decay 0.1, Nesterov, three steps of N(0, 1) gradients on an "
                  "N(0, 1) parameter: wd P turns the update's direction"},
  };
  for (size_t k = 0; k < sizeof L / sizeof L[0]; k++) {
    gen_step_case c;
    muonref_options o = base_s(g, L[k].lr, L[k].wd);
    o.decay_method = MUONREF_DECAY_L2;
    o.nesterov = L[k].kind == 2;
    begin(&c, L[k].what, &o);
    int w = param(g, &c, "wide", shape2(16, 32), 0);
    if (L[k].kind < 2) { /* the parameter in the gradients' pattern: all entries +-1 */
      free(c.init[w]);
      float d[16];
      for (int r = 0; r < 16; r++)
        d[r] = 1.0f;
      c.init[w] = gen_structured(16, 32, d, 0);
    }
    for (int s = 0; s < (L[k].kind == 1 ? 1 : L[k].kind == 0 ? 2 : 3); s++) {
      if (L[k].kind == 1)
        grad_zero(&c, s, w);
      else if (L[k].kind == 0)
        grad_equal_scales(&c, s, w, s == 1 ? 0.5f : 1.0f);
      else
        grad_normal(g, &c, s, w, 1.0);
    }
    flags(&c, "WeightDecay", "DecayMethod", L[k].kind == 1 ? "ZeroGradient" : L[k].kind == 2 ? "Nesterov" : NULL);
    gen_add_step(g, &c);
  }
  if (defaults(g).adam_l2_grad) /* only a port that writes AdamW's L2 gradient: the other profiles' draws stay */
    weight_decay_l2_both(g);
}

/* ---- momentum and Nesterov ---- */

/* Emerging-Optimizers' moment2_method "normuon" (adaptive_muon.py @fd77292 231-245): the fields the
 * profile's key kind sets for it (moment2_method_v0_2: v0.2.0's, the norm not restored). */
static void set_normuon(const gen_ctx *g, muonref_options *o)
{
  MUONREF_UNCHECKED(muonref_case_moment2_method_of("normuon", has_key_kind(g, MUONREF_KEY_MOMENT2_METHOD_V0_2), o));
}
#define NORMUON_HEAD "moment2_method normuon: "

/* The second moment of the Newton-Schulz output (spec/muon.md 7.4), for a
 * profile that keeps one: several steps, so that the EMA of the squares
 * (not only its first value, (1 - beta2) O^2) normalises the update; wide
 * and tall matrices (a per-row second moment differs from one over the
 * shorter side only on a wide one: fault normuon_longer_side); gradients
 * whose rows differ in scale by powers of two (structured: exactly defined
 * in bf16), so that Newton-Schulz's output rows differ in norm after five
 * steps and the per-row division is not a constant factor; beta2 0.5 and
 * 0.99 besides the profile's.  With normuon: the same cases under Emerging-
 * Optimizers' moment2_method "normuon" (the key kind moment2_method), for a
 * profile whose own method is another, each comment saying so. */
static void momentum_moment2(gen_ctx *g, int normuon)
{
  static const struct { size_t r, c; double beta2; int steps; } M[] = {
    {16, 32, -1.0, 4}, {32, 16, -1.0, 4}, {16, 32, 0.5, 3}, {16, 32, 0.99, 3}, {8, 64, -1.0, 3}};
  for (size_t k = 0; k < sizeof M / sizeof M[0]; k++) {
    gen_step_case c;
    char comment[256];
    muonref_options o = base_s(g, 0.1, 0.0);
    if (M[k].beta2 >= 0.0)
      o.moment2_beta = M[k].beta2;
    if (normuon)
      set_normuon(g, &o);
    snprintf(comment, sizeof comment,
             "%ssecond moment over %d steps on a %s (%zu, %zu) matrix, beta2 %g, rows of the gradient scaled by powers "
             "of two: the normalised update", normuon ? NORMUON_HEAD : "", M[k].steps,
             M[k].r < M[k].c ? "wide" : "tall", M[k].r, M[k].c, o.moment2_beta);
    begin(&c, comment, &o);
    int i = param(g, &c, "w", shape2(M[k].r, M[k].c), 0);
    for (int s = 0; s < M[k].steps; s++)
      grad_structured(g, &c, s, i, -s);
    flags(&c, "Momentum", "SecondMoment", NULL);
    gen_add_step(g, &c);
  }
  /* random gradients (bf16 noise), with Nesterov: a matrix and a batched 3-D parameter */
  {
    gen_step_case c;
    muonref_options o = base(g, 0.05, 0.01);
    o.nesterov = 1;
    char comment[256];
    if (normuon) /* Emerging-Optimizers takes 2-D parameters only */
      set_normuon(g, &o);
    snprintf(comment, sizeof comment, "%ssecond moment over three random steps with Nesterov on a (16, 24) matrix and "
             "a %s", normuon ? NORMUON_HEAD : "", normuon ? "(24, 16) matrix" : "(2, 8, 12) batch");
    begin(&c, comment, &o);
    int a = param(g, &c, "w", shape2(16, 24), 0),
        b = param(g, &c, "qkv", normuon ? shape2(24, 16) : (muonref_shape){3, {2, 8, 12}}, 0);
    for (int s = 0; s < 3; s++)
      grad_normal(g, &c, s, a, 1.0), grad_normal(g, &c, s, b, 1.0);
    flags(&c, "Momentum", "SecondMoment", "Nesterov");
    gen_add_step(g, &c);
  }
  /* microsoft/dion #24 (PR 2971bba): a zero gradient on zero-initialised weights made NorMuon's restored
   * norm 0/0 = NaN; the second moment stays 0 and the update is a finite zero */
  {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, 0.01);
    char comment[256];
    if (normuon)
      set_normuon(g, &o);
    snprintf(comment, sizeof comment, "%ssecond moment with zero gradients on a zero-initialised (8, 16) matrix, two "
             "steps: v stays 0, the update is a finite zero, no NaN (dion #24)", normuon ? NORMUON_HEAD : "");
    begin(&c, comment, &o);
    int i = param(g, &c, "out_proj", shape2(8, 16), 0);
    memset(c.init[i], 0, numel(&c, i) * sizeof(float));
    grad_zero(&c, 0, i), grad_zero(&c, 1, i);
    flags(&c, "SecondMoment", "ZeroGradient", "BugB16");
    gen_add_step(g, &c);
  }
}

/* Options of timm's AdaMuon (algo "adamuon", the key kind algo_timm):
 * the profile's at lr, wd with momentum 0.75, adjust_lr_fn `scale` (its
 * Muon meaning: rms_adamw for "match_rms_adamw", rsqrt_cols for
 * "rsqrt_in") and betas[1] `beta2` (< 0: the profile's), then what timm
 * derives from them (muonref_case_timm_algo). */
static muonref_options adamuon(gen_ctx *g, double lr, double wd, muonref_scale_mode scale, double beta2)
{
  muonref_options o = base_s(g, lr, wd);
  o.moment2 = MUONREF_MOMENT2_ELEMENT;
  o.scale_mode = scale;
  if (beta2 >= 0.0)
    o.adam_beta2 = beta2;
  MUONREF_UNCHECKED(muonref_case_timm_algo(&o, NULL)); /* no fan_in here */
  return o;
}

/* timm's AdaMuon (algo "adamuon", timm/optim/muon.py @aa4b5850
 * _single_tensor_adamuon; spec/profiles/timm.md 11): the element-wise
 * second moment of the Newton-Schulz output over several steps, under each
 * adjust_lr_fn (match_rms_adamw: no bias correction, the whole update to
 * unit norm, 0.2 sqrt(rows cols); rms_to_rms, rsqrt_in, None: the bias
 * correction, no rescale), betas[1] 0.5 and 0.99 besides timm's 0.95,
 * Nesterov with random gradients, a conv filter (its scale from the last
 * two dimensions, timm's quirk), zero gradients, and wide matrices with
 * equal singular values (exactly defined in bf16: robust on PyTorch 1.13
 * CPU).  Appended to the momentum area of a profile with an algo key, so
 * that the cases before them keep their draws. */
static void momentum_adamuon(gen_ctx *g)
{
  static const struct { muonref_scale_mode scale; const char *fn; size_t r, c; double beta2; int steps; } A[] = {
    {MUONREF_SCALE_RMS_ADAMW, "match_rms_adamw", 16, 32, -1.0, 4}, {MUONREF_SCALE_RMS_ADAMW, "match_rms_adamw", 32, 16, -1.0, 4},
    {MUONREF_SCALE_RMS_TO_RMS, "rms_to_rms", 16, 32, -1.0, 3}, {MUONREF_SCALE_RSQRT_COLS, "rsqrt_in", 32, 16, -1.0, 3},
    {MUONREF_SCALE_NONE, "None", 16, 32, -1.0, 3}, {MUONREF_SCALE_RMS_ADAMW, "match_rms_adamw", 16, 32, 0.5, 3},
    {MUONREF_SCALE_RMS_TO_RMS, "rms_to_rms", 8, 64, 0.99, 3}};
  for (size_t k = 0; k < sizeof A / sizeof A[0]; k++) {
    gen_step_case c;
    char comment[320];
    muonref_options o = adamuon(g, 0.1, 0.0, A[k].scale, A[k].beta2);
    snprintf(comment, sizeof comment,
             "AdaMuon (algo adamuon), adjust_lr_fn %s, over %d steps on a %s (%zu, %zu) matrix, beta2 %g, rows of the "
             "gradient scaled by powers of two: %s", A[k].fn, A[k].steps, A[k].r < A[k].c ? "wide" : "tall", A[k].r,
             A[k].c, o.moment2_beta,
             o.moment2_rescale == MUONREF_MOMENT2_RESCALE_UNIT ? "no bias correction, the update to unit norm times "
                                                                 "0.2 sqrt(rows cols)"
                                                               : "the bias-corrected second moment, no rescale");
    begin(&c, comment, &o);
    int i = param(g, &c, "w", shape2(A[k].r, A[k].c), 0);
    for (int s = 0; s < A[k].steps; s++)
      grad_structured(g, &c, s, i, -s);
    flags(&c, "Momentum", "SecondMoment", "AdaMuon");
    gen_add_step(g, &c);
  }
  { /* random gradients (bf16 noise) with Nesterov and weight decay */
    gen_step_case c;
    muonref_options o = adamuon(g, 0.05, 0.01, MUONREF_SCALE_RMS_ADAMW, -1.0);
    o.nesterov = 1;
    begin(&c, "AdaMuon with Nesterov and weight_decay 0.01, three random steps on a (16, 24) and a (24, 16) matrix", &o);
    int a = param(g, &c, "w", shape2(16, 24), 0), b = param(g, &c, "v", shape2(24, 16), 0);
    for (int s = 0; s < 3; s++)
      grad_normal(g, &c, s, a, 1.0), grad_normal(g, &c, s, b, 1.0);
    flags(&c, "Momentum", "SecondMoment", "AdaMuon");
    gen_add_step(g, &c);
  }
  /* a conv filter (8, 4, 3, 3), flattened to (8, 36) for Newton-Schulz: timm scales AdaMuon by the parameter's
   * last two dimensions (get_adamuon_lr_scale(update_ortho.shape)), 0.2 sqrt(3 * 3) = 0.6, not by the matrix */
  static const struct { muonref_scale_mode scale; const char *what; } C[] = {
    {MUONREF_SCALE_RMS_ADAMW, "AdaMuon on a conv filter (8, 4, 3, 3), adjust_lr_fn match_rms_adamw, two steps: the "
                              "scale 0.2 sqrt(3 * 3) of its last two dimensions (timm), not 0.2 sqrt(8 * 36)"},
    {MUONREF_SCALE_RMS_TO_RMS, "AdaMuon on a conv filter (8, 4, 3, 3), adjust_lr_fn rms_to_rms, two steps: the scale "
                               "sqrt(3 / 3) = 1 of its last two dimensions, not sqrt(8 / 36)"}};
  for (size_t k = 0; k < 2; k++) {
    gen_step_case c;
    muonref_options o = adamuon(g, 0.05, 0.0, C[k].scale, -1.0);
    begin(&c, C[k].what, &o);
    int i = param(g, &c, "conv", (muonref_shape){4, {8, 4, 3, 3}}, 0);
    for (int s = 0; s < 2; s++)
      grad_structured(g, &c, s, i, -s);
    flags(&c, "SecondMoment", "AdaMuon", "ConvScale");
    gen_add_step(g, &c);
  }
  { /* zero gradients on zero weights: v stays 0, the update 0 / eps = 0 and its norm 0 + eps: a finite zero */
    gen_step_case c;
    muonref_options o = adamuon(g, 0.02, 0.01, MUONREF_SCALE_RMS_ADAMW, -1.0);
    begin(&c, "AdaMuon with zero gradients on a zero-initialised (8, 16) matrix, two steps: v stays 0, the update "
              "is a finite zero, no NaN", &o);
    int i = param(g, &c, "out_proj", shape2(8, 16), 0);
    memset(c.init[i], 0, numel(&c, i) * sizeof(float));
    grad_zero(&c, 0, i), grad_zero(&c, 1, i);
    flags(&c, "SecondMoment", "AdaMuon", "ZeroGradient");
    gen_add_step(g, &c);
  }
  /* wide matrices with equal singular values under each adjust_lr_fn (the scale, the RMS alignment and the bias
   * correction each move the update) with ns_steps 0: the normalised input alone, with no product whose bf16
   * evaluation order PyTorch 1.13 CPU changes (timm's addmm) and none of timm's triples, which are no bf16
   * values and which it rounds: exactly defined in bf16, robust there */
  static const struct { muonref_scale_mode scale; const char *what; } R[] = {
    {MUONREF_SCALE_RMS_ADAMW, "AdaMuon, adjust_lr_fn match_rms_adamw, on a wide (16, 32) matrix with equal singular "
                              "values, ns_steps 0, three steps: the update's RMS is 0.2 lr"},
    {MUONREF_SCALE_RMS_TO_RMS, "AdaMuon, adjust_lr_fn rms_to_rms, on a wide (16, 32) matrix with equal singular "
                               "values, ns_steps 0, three steps: the bias-corrected second moment"},
    {MUONREF_SCALE_RSQRT_COLS, "AdaMuon, adjust_lr_fn rsqrt_in, on a wide (16, 32) matrix with equal singular "
                               "values, ns_steps 0, two steps: the scale 32 ** -0.5"}};
  for (size_t k = 0; k < sizeof R / sizeof R[0]; k++) {
    gen_step_case c;
    muonref_options o = adamuon(g, 0.5, 0.0, R[k].scale, -1.0);
    o.ns_steps = 0;
    begin(&c, R[k].what, &o);
    int w = param(g, &c, "wide", shape2(16, 32), 0);
    for (int s = 0; s < (R[k].scale == MUONREF_SCALE_RSQRT_COLS ? 2 : 3); s++)
      grad_equal_scales(&c, s, w, s == 1 ? 0.5f : 1.0f);
    flags(&c, "SecondMoment", "AdaMuon", NULL);
    gen_add_step(g, &c);
  }
  /* conv_mode "batched": the filter (8, 4, 3, 3) as nine (8, 4) matrices interleaved in it, its second moment
   * element-wise in the parameter's own order (exp_avg_sq), the RMS alignment over the whole parameter, and
   * normalize_spatial's 9 ** -0.5 on the scale of its last two dimensions */
  static const struct { muonref_scale_mode scale; int spatial; const char *what; } B[] = {
    {MUONREF_SCALE_RMS_ADAMW, 1, "AdaMuon with conv_mode batched on a conv filter (8, 4, 3, 3), adjust_lr_fn "
                                 "match_rms_adamw, two steps: nine (8, 4) matrices, the second moment in the "
                                 "filter's order, the scale 0.2 sqrt(3 * 3) times 9 ** -0.5"},
    {MUONREF_SCALE_RMS_TO_RMS, 0, "AdaMuon with conv_mode batched and normalize_spatial False on a conv filter "
                                  "(8, 4, 3, 3), adjust_lr_fn rms_to_rms, three steps: the bias-corrected second "
                                  "moment in the filter's order"}};
  for (size_t k = 0; k < sizeof B / sizeof B[0]; k++) {
    gen_step_case c;
    muonref_options o = adamuon(g, 0.05, 0.01, B[k].scale, -1.0);
    o.conv_mode = MUONREF_CONV_SPATIAL;
    o.normalize_spatial = B[k].spatial;
    begin(&c, B[k].what, &o);
    int i = param(g, &c, "conv", (muonref_shape){4, {8, 4, 3, 3}}, 0);
    for (int s = 0; s < 2 + (int)k; s++)
      grad_normal(g, &c, s, i, 1.0);
    flags(&c, "SecondMoment", "AdaMuon", "ConvSpatial");
    gen_add_step(g, &c);
  }
}

/* optax's coefficient list (coeff_order LIST, spec/profiles/optax.md 4 and
 * 10): the five 'dion' triples run once each whatever ns_steps is (7 and
 * 10 here, each validated >= 5); a port that cycles the list or honours
 * ns_steps runs 7 or 10 steps and moves the update (fault
 * optax_list_cycled).  Two steps of N(0, 1) gradients on a (8, 16) and a
 * (16, 8) matrix. */
static void momentum_coeff_list(gen_ctx *g)
{
  static const int STEPS[] = {7, 10};
  for (size_t k = 0; k < 2; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0);
    muonref_preset_apply(muonref_preset_find("quintic"), &o);
    o.coeff_order = MUONREF_ORDER_LIST; /* the preset brings its own order (cycle): optax's is the list's */
    o.ns_steps = STEPS[k];
    begin(&c, k == 0 ? "the 'dion' list of five triples with ns_steps 7: each triple once, five steps (optax)"
                     : "the 'dion' list of five triples with ns_steps 10: each triple once, five steps (optax)", &o);
    int a = param(g, &c, "wide", shape2(8, 16), 0), b = param(g, &c, "tall", shape2(16, 8), 0);
    for (int s = 0; s < 2; s++)
      grad_normal(g, &c, s, a, 1.0), grad_normal(g, &c, s, b, 1.0);
    flags(&c, "Momentum", "StepCount", "Nesterov");
    gen_add_step(g, &c);
  }
}

/* ns_steps in the step, not only in the Newton-Schulz function's own cases: 2 and 3 steps of the profile's
 * coefficients on a wide and a tall matrix, two steps of structured gradients.  A port whose step() runs a
 * fixed count (novrion/MUON's `n_iter=5`, a wild port of tests/eval) moves the update.  Fewer steps than
 * 5, not more: a cycled five-triple list (quintic) past its end restarts at its first triple on converged
 * singular values (p(1) = 0.12), which bf16 rounding then moves beyond the noise allowance.  Left out
 * where the port has no ns_steps key (the round trip drops the case) and for optax, whose list runs once
 * whatever ns_steps is (momentum_coeff_list). */
static void momentum_ns_steps(gen_ctx *g)
{
  static const int STEPS[] = {2, 3};
  for (size_t k = 0; k < sizeof STEPS / sizeof STEPS[0]; k++) {
    char comment[160];
    muonref_options o = base_s(g, 0.02, 0.0);
    o.ns_steps = STEPS[k];
    snprintf(comment, sizeof comment, "ns_steps %d in the step: a wide (8, 32) and a tall (32, 8) matrix, two steps "
             "of structured gradients (a step() that runs 5 moves the update)", STEPS[k]);
    wide_tall_structured_case(g, comment, &o, "Momentum", "StepCount");
  }
}

void gen_area_momentum(gen_ctx *g)
{
  gen_group(g, "step");
  static const double BETA[] = {0.5, 0.75};
  static const size_t SH[][2] = {{8, 16}, {16, 8}, {4, 32}};
  for (int b = 0; b < 2; b++)
    for (int nes = 0; nes < 2; nes++)
      for (size_t s = 0; s < 3; s++) {
        gen_step_case c;
        char comment[256];
        muonref_options o = base(g, 0.02, 0.0);
        o.momentum = BETA[b];
        o.nesterov = nes;
        snprintf(comment, sizeof comment,
                 "three steps on (%zu, %zu), momentum %g, nesterov %s: directions change between steps", SH[s][0],
                 SH[s][1], BETA[b], nes ? "True" : "False");
        begin(&c, comment, &o);
        int i = param(g, &c, "w", shape2(SH[s][0], SH[s][1]), 0);
        for (int k = 0; k < 3; k++)
          grad_structured(g, &c, k, i, -k);
        flags(&c, "Momentum", nes ? "Nesterov" : "NoNesterov", NULL);
        gen_add_step(g, &c);
      }
  /* the default beta 0.95 with random gradients: fp32-tight, bf16-loose */
  for (int nes = 0; nes < 2; nes++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.01);
    o.nesterov = nes;
    begin(&c, nes ? "momentum 0.95 with Nesterov, three random steps on (16, 24)" : "momentum 0.95 without Nesterov, three random steps on (16, 24)", &o);
    int i = param(g, &c, "w", shape2(16, 24), 0);
    for (int k = 0; k < 3; k++)
      grad_normal(g, &c, k, i, 1.0);
    flags(&c, "Momentum", nes ? "Nesterov" : "NoNesterov", NULL);
    gen_add_step(g, &c);
  }
  /* bug-reports B09: buffer values after steps with a ones gradient */
  for (int nes = 0; nes < 2; nes++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0);
    o.momentum = 0.9;
    o.nesterov = nes;
    int ema = o.momentum_form == MUONREF_MOMENTUM_EMA; /* the profile's form */
    static const char *const TEXT[2][2] = {
      {"beta 0.9, ones gradient, two steps, no Nesterov: the buffer holds 1 then 1.9 (sum form)",
       "beta 0.9, ones gradient, two steps, Nesterov: the buffer holds 1 then 1.9 (sum form)"},
      {"beta 0.9, ones gradient, two steps, no Nesterov: the buffer holds 0.1 then 0.19 (EMA form)",
       "beta 0.9, ones gradient, two steps, Nesterov: the buffer holds 0.1 then 0.19 (EMA form)"}};
    begin(&c, TEXT[ema][nes], &o);
    int i = param(g, &c, "w", shape2(4, 8), 0);
    for (int k = 0; k < 2; k++) {
      c.grads[k][i] = gen_zeros(32);
      for (int j = 0; j < 32; j++)
        c.grads[k][i][j] = 1.0f;
    }
    c.n_steps = 2;
    flags(&c, "Momentum", "BugB09", nes ? "Nesterov" : "NoNesterov");
    gen_add_step(g, &c);
  }
  if (defaults(g).coeff_order == MUONREF_ORDER_LIST) /* optax: after every other case, so their inputs stay */
    momentum_coeff_list(g);
  if (defaults(g).moment2 != MUONREF_MOMENT2_NONE) /* only a profile with a second moment: the others' draws stay */
    momentum_moment2(g, 0);
  if ((has_key_kind(g, MUONREF_KEY_MOMENT2_METHOD) || has_key_kind(g, MUONREF_KEY_MOMENT2_METHOD_V0_2)) &&
      defaults(g).moment2 != MUONREF_MOMENT2_LONGER)
    momentum_moment2(g, 1); /* its other method, after the profile's own */
  if (has_key_kind(g, MUONREF_KEY_ALGO_TIMM)) /* timm's AdaMuon, after every other case */
    momentum_adamuon(g);
  if (!nemo_frozen(g) && defaults(g).coeff_order != MUONREF_ORDER_LIST) /* last (vector release 2026.12.8) */
    momentum_ns_steps(g);
}

/* ---- AdamW fallback ---- */

/* Whether betas (b1, b2) are outside what the suite can judge for keras:
 * its moments are `m + (g - m) * (1 - beta1)` in float32, and with a beta
 * of 0 the new moment is g only up to the rounding of g - m, a relative
 * error of ulp(max(|g|, |m|)) / |g| that no allowance of the AdamW update
 * bounds (spec/profiles/keras.md 6).  Those cases are left out for keras. */
static int keras_cancels(gen_ctx *g, double b1, double b2)
{
  return defaults(g).catalogue == MUONREF_CATALOGUE_KERAS && (b1 == 0.0 || b2 == 0.0);
}

/* keras (spec/profiles/keras.md 3, 6): the decay of an AdamW variable with
 * adam_weight_decay and the Muon lr, and the optimizer's step count in the
 * bias correction of a variable that missed steps. */
static void adamw_keras(gen_ctx *g)
{
  static const struct { double ratio, awd, wd, b2; int skip; const char *what; } K[] = {
    {0.5, 0.05, 0.1, 0.999, 1, "adam_lr_ratio 0.5, adam_weight_decay 0.05: the bias has no gradient at step 1, so its "
     "first AdamW step is the optimizer's second (bias correction with t = 2, not 1)"},
    {0.1, 0.2, 0.01, 0.95, 1, "adam_lr_ratio 0.1, adam_weight_decay 0.2, beta2 0.95: the bias skips step 1"},
    {0.1, 0.2, 0.01, 0.999, 0, "adam_lr_ratio 0.1, adam_weight_decay 0.2: every variable decays with the Muon lr, "
     "lr * adam_weight_decay for AdamW, lr * weight_decay for Muon"},
  };
  for (size_t k = 0; k < sizeof K / sizeof K[0]; k++) {
    gen_step_case c;
    char comment[320];
    muonref_options o = base(g, 0.05, K[k].wd);
    o.adam_lr_ratio = K[k].ratio, o.adam_weight_decay = K[k].awd, o.adam_beta2 = K[k].b2;
    snprintf(comment, sizeof comment, "keras, three steps on dense/kernel (8, 16) and dense/bias (16,), %s", K[k].what);
    begin(&c, comment, &o);
    int w = param(g, &c, "dense/kernel", shape2(8, 16), 0), b = param(g, &c, "dense/bias", (muonref_shape){1, {16}}, 0);
    for (int s = 0; s < 3; s++) {
      grad_normal(g, &c, s, w, 1.0);
      if (s >= K[k].skip)
        grad_normal(g, &c, s, b, 1.0);
    }
    flags(&c, "AdamW", K[k].skip ? "MissingGradient" : "WeightDecay", "BiasCorrection");
    gen_add_step(g, &c);
  }
  {
    gen_step_case c;
    muonref_options o = base(g, 0.05, 0.0);
    o.adam_weight_decay = 0.0;
    begin(&c, "keras, epsilon hat: gradients 1e-6 on dense/bias (16,), three steps: eps 1e-7 is added to the "
              "uncorrected sqrt(v), i.e. eps / sqrt(1 - beta2^t) after the correction", &o);
    int b = param(g, &c, "dense/bias", (muonref_shape){1, {16}}, 0);
    for (int s = 0; s < 3; s++)
      grad_normal(g, &c, s, b, 1e-6);
    flags(&c, "AdamW", "AdamEps", NULL);
    gen_add_step(g, &c);
  }
}

/* The fallback of a profile whose AdamW becomes NAdam(W) with nesterov
 * (adam_variant other than adamw: timm, optax), and optax's eps_root. */
static void adamw_nadam(gen_ctx *g)
{
  /* a fallback that becomes NAdamW with nesterov (timm): the numerator
   * beta1 m + (1 - beta1) g, with and without Nesterov, with decay */
  static const struct { int nes; double b1, b2, eps, ratio, wd, scale; const char *what; } N[] = {
    {1, 0.9, 0.95, 1e-7, 1.0, 0.0, 1.0, "nesterov=True: NAdamW, the defaults"},
    {1, 0.8, 0.99, 1e-6, 0.5, 0.1, 1.0, "nesterov=True: NAdamW, betas (0.8, 0.99), lr scale 0.5, weight_decay 0.1"},
    {1, 0.9, 0.95, 1e-4, 1.0, 0.0, 1e-4, "nesterov=True: NAdamW, gradients 1e-4 with eps 1e-4"},
    {0, 0.8, 0.99, 1e-6, 0.5, 0.1, 1.0, "nesterov=False: AdamW, betas (0.8, 0.99), lr scale 0.5, weight_decay 0.1"},
  };
  for (size_t k = 0; k < sizeof N / sizeof N[0]; k++) {
    gen_step_case c;
    char comment[256];
    muonref_options o = base(g, 0.02, N[k].wd);
    o.nesterov = N[k].nes;
    o.adam_beta1 = N[k].b1, o.adam_beta2 = N[k].b2, o.adam_eps = N[k].eps, o.ns_eps = N[k].eps;
    o.adam_lr_ratio = N[k].ratio;
    snprintf(comment, sizeof comment, "the fallback, three steps on a bias (32,) and a (3, 16) matrix, %s", N[k].what);
    begin(&c, comment, &o);
    int b = param(g, &c, "bias", (muonref_shape){1, {32}}, 0), m = param(g, &c, "small", shape2(3, 16), 0);
    for (int s = 0; s < 3; s++)
      grad_normal(g, &c, s, b, N[k].scale), grad_normal(g, &c, s, m, N[k].scale);
    flags(&c, "AdamW", N[k].nes ? "NAdamW" : "NoNesterov", NULL);
    gen_add_step(g, &c);
  }
  /* optax's adam_eps_root (scale_by_adam: sqrt(v_hat + eps_root) + eps): where v_hat is far below eps_root
   * (gradients 1e-4, eps_root 1e-6) the denominator is about 1e-3, not 1e-4; where they are alike both
   * count.  A profile whose port has no such key leaves these out. */
  static const struct { int nes; double root, scale; const char *what; } R[] = {
    {1, 1e-6, 1e-4, "adam_eps_root 1e-6 with gradients 1e-4 (nesterov=True): sqrt(v_hat + eps_root) + eps, "
                    "eps_root dominating"},
    {0, 1e-2, 0.1, "adam_eps_root 0.01 with gradients 0.1 (nesterov=False): v_hat and eps_root alike"},
  };
  for (size_t k = 0; k < sizeof R / sizeof R[0]; k++) {
    gen_step_case c;
    char comment[256];
    muonref_options o = base(g, 0.02, 0.0);
    o.nesterov = R[k].nes;
    o.adam_eps_root = R[k].root;
    snprintf(comment, sizeof comment, "the fallback, three steps on a bias (32,) and a (3, 16) matrix, %s", R[k].what);
    begin(&c, comment, &o);
    int b = param(g, &c, "bias", (muonref_shape){1, {32}}, 0), m = param(g, &c, "small", shape2(3, 16), 0);
    for (int s = 0; s < 3; s++)
      grad_normal(g, &c, s, b, R[k].scale), grad_normal(g, &c, s, m, R[k].scale);
    flags(&c, "AdamW", "AdamEps", R[k].nes ? "NAdamW" : "NoNesterov");
    gen_add_step(g, &c);
  }
}

/* Adam's L2 decay in the fallback (adam_l2: Megatron's Adam with
 * decoupled_weight_decay False, torch.optim.Adam `grad = grad.add(param,
 * alpha=weight_decay)`): the decay goes into the moments, P is not
 * decayed; a Muon matrix beside the biases keeps its decoupled decay.  Last
 * in the area for every profile (its draws move no other case); a profile
 * whose port has no such key leaves them out. */
/* A port whose constructor takes the AdamW groups' defaults (keys marked branch_default:
 * kozistr/pytorch_optimizer's adamw_lr, adamw_betas, adamw_wd, adamw_eps, which its __init__ writes
 * into each use_muon=False group by setdefault, spec/profiles/pytorch_optimizer.md 1.2): the AdamW
 * group gives none of those keys, the constructor gives values other than its defaults.  After the
 * area's other cases, so that their inputs stay (vector release 2026.12.33). */
static void adamw_branch_defaults(gen_ctx *g)
{
  const muonref_profile *p = muonref_profile_get(g->profile);
  char names[160] = "";
  for (size_t k = 0; p && k < p->n_keys; k++)
    if (p->keys[k].branch_default)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", *names ? ", " : "", p->keys[k].name);
  if (!*names)
    return;
  gen_step_case c;
  char comment[512];
  muonref_options o = base(g, 0.02, 0.0);
  o.use_muon = MUONREF_USE_MUON_TRUE;
  snprintf(comment, sizeof comment, "an AdamW group at lr 1e-3, betas (0.8, 0.9), weight_decay 0.05, eps 1e-6, "
           "the constructor giving what its keys for the AdamW groups' defaults can (%s), the group the rest; "
           "three steps", names);
  begin(&c, comment, &o);
  c.options[1] = o;
  c.options[1].use_muon = MUONREF_USE_MUON_FALSE;
  c.options[1].lr = 1e-3, c.options[1].weight_decay = 0.05;
  c.options[1].adam_beta1 = 0.8, c.options[1].adam_beta2 = 0.9, c.options[1].adam_eps = 1e-6;
  c.n_groups = 2;
  c.branch_defaults = 1;
  int w = param(g, &c, "hidden", shape2(8, 16), 0), b = param(g, &c, "bias", (muonref_shape){1, {32}}, 1);
  for (int s = 0; s < 3; s++)
    grad_normal(g, &c, s, w, 1.0), grad_normal(g, &c, s, b, 1.0);
  flags(&c, "AdamW", "BranchDefaults", NULL);
  gen_add_step(g, &c);
}

static void adamw_l2(gen_ctx *g)
{
  static const struct { double lr, wd; int zero; const char *what; } L[] = {
    {0.01, 0.1, 0, "Adam with L2 (decoupled_weight_decay False), lr 0.01, weight_decay 0.1, three steps on a bias (32,) "
                   "and a (4, 8) Muon matrix: wd P added to the Adam gradient, the Muon decay still decoupled"},
    {0.01, 0.5, 1, "Adam with L2, zero gradients on the bias: the moments take wd P alone, so the step is about "
                   "-lr sign(P), not the decay P (1 - lr wd)"},
  };
  for (size_t k = 0; k < sizeof L / sizeof L[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, L[k].lr, L[k].wd);
    o.adam_l2 = 1;
    o.adam_lr_ratio = 1.0;
    begin(&c, L[k].what, &o);
    int b = param(g, &c, "bias", (muonref_shape){1, {32}}, 0), m = param(g, &c, "small", shape2(4, 8), 0);
    for (int s = 0; s < (L[k].zero ? 2 : 3); s++) {
      if (L[k].zero)
        grad_zero(&c, s, b);
      else
        grad_normal(g, &c, s, b, 1.0);
      grad_normal(g, &c, s, m, 1.0);
    }
    flags(&c, "AdamW", "WeightDecay", L[k].zero ? "ZeroGradient" : NULL);
    gen_add_step(g, &c);
  }
}

void gen_area_adamw(gen_ctx *g)
{
  gen_group(g, "step");
  static const struct { double b1, b2, eps, ratio, scale; const char *what; } A[] = {
    {0.9, 0.95, 1e-8, 0.025, 1.0, "betas (0.9, 0.95), eps 1e-8 (NeMo's defaults)"},
    {0.9, 0.999, 1e-8, 1.0, 1.0, "betas (0.9, 0.999)"},
    {0.0, 0.0, 1e-8, 1.0, 1.0, "betas (0, 0): sign-like steps"},
    {0.5, 0.5, 1e-3, 0.1, 1.0, "a large eps 1e-3"},
    {0.9, 0.95, 1e-8, 1.0, 1e-6, "tiny gradients 1e-6: eps placement matters"},
    {0.9, 0.95, 1e-4, 1.0, 1e-4, "gradients 1e-4 with eps 1e-4 at step 1 (eps inside or outside the correction)"},
    {0.95, 0.95, 0.0, 0.5, 1.0, "eps 0"},
  };
  for (size_t k = 0; k < sizeof A / sizeof A[0]; k++) {
    gen_step_case c;
    char comment[256];
    if (keras_cancels(g, A[k].b1, A[k].b2))
      continue;
    muonref_options o = base(g, 0.02, 0.0);
    o.adam_beta1 = A[k].b1, o.adam_beta2 = A[k].b2, o.adam_eps = A[k].eps, o.adam_lr_ratio = A[k].ratio;
    snprintf(comment, sizeof comment, "AdamW, three steps, lr ratio %g: %s", A[k].ratio, A[k].what);
    begin(&c, comment, &o);
    int b = param(g, &c, "bias", (muonref_shape){1, {32}}, 0), cv = param(g, &c, "conv", (muonref_shape){4, {4, 2, 3, 3}}, 0);
    for (int s = 0; s < 3; s++)
      grad_normal(g, &c, s, b, A[k].scale), grad_normal(g, &c, s, cv, A[k].scale);
    flags(&c, "AdamW", k >= 4 ? "AdamEps" : NULL, NULL);
    gen_add_step(g, &c);
  }
  for (int steps = 1; steps <= 5; steps += 2) {
    gen_step_case c;
    char comment[256];
    muonref_options o = base(g, 0.01, 0.0);
    o.adam_lr_ratio = 1.0;
    snprintf(comment, sizeof comment,
             "AdamW bias correction over %d step%s on a (%d, 1) embedding at the default threshold 8192 (step 1: about lr sign(g))",
             steps, steps > 1 ? "s" : "", steps == 1 ? 8192 : 4096);
    begin(&c, comment, &o);
    if (steps > 1)
      c.options[0].adam_dim_threshold = 4096;
    int e = param(g, &c, "embedding", shape2(steps == 1 ? 8192 : 4096, 1), 0);
    for (int s = 0; s < steps; s++)
      grad_normal(g, &c, s, e, 1.0);
    flags(&c, "AdamW", "BiasCorrection", "RoutingThreshold");
    gen_add_step(g, &c);
  }
  if (nemo_frozen(g))
    return;
  /* the same semantics at the profile's own AdamW lr ratio */
  for (size_t k = 0; k < sizeof A / sizeof A[0]; k++) {
    gen_step_case c;
    char comment[256];
    if (keras_cancels(g, A[k].b1, A[k].b2))
      continue;
    muonref_options o = base(g, 0.02, 0.0);
    o.adam_beta1 = A[k].b1, o.adam_beta2 = A[k].b2, o.adam_eps = A[k].eps;
    snprintf(comment, sizeof comment, "AdamW at the profile's lr ratio, three steps: %s", A[k].what);
    begin(&c, comment, &o);
    int b = param(g, &c, "bias", (muonref_shape){1, {32}}, 0), cv = param(g, &c, "conv", (muonref_shape){4, {4, 2, 3, 3}}, 0);
    for (int s = 0; s < 3; s++)
      grad_normal(g, &c, s, b, A[k].scale), grad_normal(g, &c, s, cv, A[k].scale);
    flags(&c, "AdamW", k >= 4 ? "AdamEps" : NULL, NULL);
    gen_add_step(g, &c);
  }
  if (defaults(g).adam_step_global)
    adamw_keras(g);
  if (defaults(g).adam_variant != MUONREF_ADAM_ADAMW)
    adamw_nadam(g);
  adamw_l2(g);
  adamw_branch_defaults(g);
}

/* ---- gradients: missing, zero, scale ---- */

/* Step k's gradients of every parameter of c: N(0, 1), then scaled
 * together so that their global L2 norm is about `norm` (the binary64
 * norm of the draws; each value rounded to binary32 after scaling). */
static void grads_global_norm(gen_ctx *g, gen_step_case *c, int k, double norm)
{
  double sumsq = 0.0;
  for (int i = 0; i < c->n_params; i++) {
    grad_normal(g, c, k, i, 1.0);
    for (size_t j = 0; j < numel(c, i); j++)
      sumsq += (double)c->grads[k][i][j] * (double)c->grads[k][i][j];
  }
  double f = norm / sqrt(sumsq);
  for (int i = 0; i < c->n_params; i++)
    for (size_t j = 0; j < numel(c, i); j++)
      c->grads[k][i][j] = (float)(f * (double)c->grads[k][i][j]);
}

/* Gradient clipping by the global norm (clip_grad_norm; Megatron-LM
 * clip_grads.py), for a profile that clips (megatron): a Muon matrix, a
 * bias in a group without weight decay (Megatron's _get_param_groups) and
 * a tagged embedding (use_muon false: AdamW), over steps whose global
 * norms lie above and below the bound, so that the coefficient differs
 * between steps and changes the AdamW moments (one step alone would not:
 * m / sqrt(v) does not see a common factor) and the Muon momentum. */
static void gradients_clip(gen_ctx *g)
{
  static const struct { const char *what; double clip, norms[4]; int n_steps, adam_only; } C[] = {
    {"clip_grad 1.0, global norms 4, 0.25, 2: steps 1 and 3 clipped (coefficient about 1/4, 1/2), step 2 not", 1.0,
     {4.0, 0.25, 2.0}, 3, 0},
    {"clip_grad 0.5, global norms 3, 0.3, 0.8: steps 1 and 3 clipped, step 2 not", 0.5, {3.0, 0.3, 0.8}, 3, 0},
    {"clip_grad 2.0, global norms 1.5, 6, 0.5, 9: steps 2 and 4 clipped", 2.0, {1.5, 6.0, 0.5, 9.0}, 4, 0},
    {"clip_grad 0 (off), global norms 4, 0.25, 2: no clipping (the same draws as the first case)", 0.0,
     {4.0, 0.25, 2.0}, 3, 0},
    {"clip_grad 1.0, AdamW parameters only (two biases), global norms 10, 0.1, 3: steps 1 and 3 clipped", 1.0,
     {10.0, 0.1, 3.0}, 3, 1},
    {"clip_grad 1.0, global norms 0.9, 0.6, 0.3: below the bound, nothing clipped", 1.0, {0.9, 0.6, 0.3}, 3, 0},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.1);
    o.clip_grad_norm = C[k].clip;
    begin(&c, C[k].what, &o);
    g->rng.s = 4242; /* the same draws for the on and off cases */
    c.options[1] = o;
    c.options[1].weight_decay = 0.0; /* Megatron: no decay for biases and 1-D parameters */
    c.n_groups = 2;
    if (!C[k].adam_only) {
      c.options[2] = o;
      c.options[2].use_muon = MUONREF_USE_MUON_FALSE; /* is_embedding_or_output_parameter */
      c.n_groups = 3;
      param(g, &c, "decoder.linear_fc1.weight", shape2(16, 32), 0);
      param(g, &c, "decoder.linear_fc1.bias", (muonref_shape){1, {16}}, 1);
      param(g, &c, "embedding.word_embeddings.weight", shape2(24, 16), 2);
    } else {
      param(g, &c, "decoder.final_layernorm.weight", (muonref_shape){1, {32}}, 1);
      param(g, &c, "decoder.linear_fc1.bias", (muonref_shape){1, {16}}, 1);
      c.options[0] = c.options[1], c.n_groups = 1;
      for (int i = 0; i < c.n_params; i++)
        c.group_of[i] = 0;
    }
    for (int s = 0; s < C[k].n_steps; s++)
      grads_global_norm(g, &c, s, C[k].norms[s]);
    flags(&c, "GradClip", C[k].adam_only ? NULL : "TaggedEmbedding", NULL);
    gen_add_step(g, &c);
  }
}

/* One KerasClip case of keras' clipping and loss scale (below): options o, three steps whose gradients have
 * the global norms `norms`, on a Muon kernel (16, 32) when `kernel`, an AdamW bias (16,) and an AdamW embedding
 * (24, 16), in keras' one group. */
static void clip_case(gen_ctx *g, const char *what, const muonref_options *o, const double *norms, int kernel,
                      const char *flag)
{
  gen_step_case c;
  begin(&c, what, o);
  if (kernel)
    param(g, &c, "dense.kernel", shape2(16, 32), 0);
  param(g, &c, "dense.bias", (muonref_shape){1, {16}}, 0);
  param(g, &c, "embedding.embeddings", shape2(24, 16), 0);
  for (int s = 0; s < 3; s++)
    grads_global_norm(g, &c, s, norms[s]);
  flags(&c, flag, NULL, NULL);
  gen_add_step(g, &c);
}

static void keras_clip_case(gen_ctx *g, const char *what, const muonref_options *o, const double *norms, int kernel)
{
  clip_case(g, what, o, norms, kernel, "KerasClip");
}

/* Paddle's grad_clip (spec/muon.md 3.2, spec/profiles/paddle.md 8; PaddlePaddle python/paddle/nn/clip.py): a
 * ClipGradByGlobalNorm (clip_grad_form paddle: c / max(N, c) in float32, exactly 1 below the bound), a
 * ClipGradByNorm (each gradient by its own norm) and a ClipGradByValue (a clamp), over three steps whose global
 * norms lie above and below the bound, on the kernel, bias and embedding of keras' cases (Paddle clips every
 * gradient, both branches, before its step; under Paddle's routing the embedding is a Muon matrix, so the
 * bias is the one AdamW gradient: the last case clips it).  After every other case of the area (their
 * inputs stay). */
static void gradients_clip_paddle(gen_ctx *g)
{
  static const struct { const char *what; double each, value, global, norms[3]; } C[] = {
    {"ClipGradByGlobalNorm(1.0), global norms 4, 0.25, 2: steps 1 and 3 scaled by R32(1 / N32), step 2 by "
     "R32(1 / max(0.25, 1)) = 1 exactly", 0.0, 0.0, 1.0, {4.0, 0.25, 2.0}},
    {"ClipGradByGlobalNorm(0.3), global norms 3, 0.1, 0.9: steps 1 and 3 scaled, step 2 below the bound by exactly "
     "1 (R32(0.3) / R32(0.3))", 0.0, 0.0, 0.3, {3.0, 0.1, 0.9}},
    {"ClipGradByNorm(1.0), global norms 4, 0.25, 2: at steps 1 and 3 the kernel and the embedding clipped to norm "
     "1, the bias not (each gradient by its own norm)", 1.0, 0.0, 0.0, {4.0, 0.25, 2.0}},
    {"ClipGradByValue(0.1), global norms 4, 0.25, 2: elements of steps 1 and 3 clamped to [-0.1, 0.1], none of "
     "step 2's", 0.0, 0.1, 0.0, {4.0, 0.25, 2.0}},
    {"ClipGradByNorm(0.1), global norms 3, 0.5, 1.2: every Muon gradient clipped to norm 0.1 at every step, the "
     "AdamW bias's at steps 1 and 3 (norms about 0.25 and 0.15), not at step 2 (a port that clips the Muon "
     "gradients only fails here)", 0.1, 0.0, 0.0, {3.0, 0.5, 1.2}},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    muonref_options o = base(g, 0.02, 0.004);
    o.clip_grad_norm_each = C[k].each, o.clip_grad_value = C[k].value, o.clip_grad_norm = C[k].global;
    if (C[k].global > 0.0)
      o.clip_grad_form = MUONREF_CLIP_PADDLE;
    clip_case(g, C[k].what, &o, C[k].norms, 1, "PaddleClip");
  }
}

/* keras' loss_scale_factor (loss_scale; spec/muon.md 3.2, base_optimizer.py
 * @3422977a apply: `g / scale` before the clipping): the gradients of a
 * loss scaled by the factor, divided by it first; a power of two (exact),
 * a factor whose quotients round, and one before clipnorm (the norm is the
 * unscaled gradient's).  Same kernel, bias and embedding as the clipping
 * cases. */
static void gradients_loss_scale(gen_ctx *g)
{
  static const struct { const char *what; double scale, each, norms[3]; } C[] = {
    {"loss_scale_factor 1024: the gradients of a loss scaled by 1024 (global norms 4096, 256, 2048), divided by it "
     "first: exact, the step of global norms 4, 0.25, 2", 1024.0, 0.0, {4096.0, 256.0, 2048.0}},
    {"loss_scale_factor 3: the gradients divided by 3 in float32 (each quotient rounded) before the step", 3.0, 0.0,
     {12.0, 0.75, 6.0}},
    {"loss_scale_factor 1000 with clipnorm 1.0: unscaled first, then each gradient clipped by its own unscaled norm "
     "(global norms 4000, 250, 2000)", 1000.0, 1.0, {4000.0, 250.0, 2000.0}},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    muonref_options o = base(g, 0.02, 0.004);
    o.loss_scale = C[k].scale, o.clip_grad_norm_each = C[k].each;
    keras_clip_case(g, C[k].what, &o, C[k].norms, 1);
  }
}


/* keras' clipping (clip_grad_form keras; spec/muon.md 3.2, keras-team/keras
 * base_optimizer.py @3422977a _clip_gradients), for a profile with keras'
 * keys: clipnorm (each gradient by its own norm), global_clipnorm (the
 * global scale, applied also below the bound) and clipvalue (a clamp), each
 * over three steps whose global norms lie above and below the bound, on a
 * Muon kernel, an AdamW bias and an AdamW embedding (one group: keras has
 * none).  The per-gradient norms follow the sizes (about 3, 0.5 and 2.6 of
 * a global 4), so that clipnorm clips some gradients of a step and not
 * others, which the global form cannot give. */
static void gradients_clip_keras(gen_ctx *g)
{
  static const struct { const char *what; double each, value, global, norms[3]; int adam_only; } C[] = {
    {"clipnorm 1.0, global norms 4, 0.25, 2: at steps 1 and 3 the kernel and the embedding clipped to norm 1, the "
     "bias not (each gradient by its own norm)", 1.0, 0.0, 0.0, {4.0, 0.25, 2.0}, 0},
    {"clipnorm 0.3, global norms 3, 0.5, 1.2: each gradient above 0.3 clipped to it, at every step", 0.3, 0.0, 0.0,
     {3.0, 0.5, 1.2}, 0},
    {"global_clipnorm 1.0, global norms 4, 0.25, 2: steps 1 and 3 scaled by about 1/4 and 1/2, step 2 by "
     "R32(1.0 * R32(1 / 1.0)) = 1", 0.0, 0.0, 1.0, {4.0, 0.25, 2.0}, 0},
    {"global_clipnorm 0.3, global norms 3, 0.1, 0.9: steps 1 and 3 scaled, step 2 below the bound by R32(R32(0.3) "
     "R32(1 / 0.3)) = 1 (keras scales always; here as no scaling)", 0.0, 0.0, 0.3, {3.0, 0.1, 0.9}, 0},
    {"clipvalue 0.1, global norms 4, 0.25, 2: about 44 % of step 1's elements and 13 % of step 3's clamped to "
     "[-0.1, 0.1], none of step 2's", 0.0, 0.1, 0.0, {4.0, 0.25, 2.0}, 0},
    {"clipnorm 1.0, AdamW variables only (a bias and an embedding), global norms 4, 0.25, 2: at steps 1 and 3 the "
     "embedding clipped, the bias not", 1.0, 0.0, 0.0, {4.0, 0.25, 2.0}, 1},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    muonref_options o = base(g, 0.02, 0.004);
    o.clip_grad_norm_each = C[k].each, o.clip_grad_value = C[k].value, o.clip_grad_norm = C[k].global;
    keras_clip_case(g, C[k].what, &o, C[k].norms, !C[k].adam_only);
  }
}

/* keras' gradient_accumulation_steps (grad_accumulation; spec/muon.md 3.3, keras-team/keras
 * base_optimizer.py @3422977a _backend_apply_gradients): a micro-step that is not the N-th only adds its
 * gradients into the accumulators, the N-th steps with R32(R32(G + A) / N) and empties them.  The
 * kernel, bias and embedding of the clipping cases (keras' one group); N(0, 1) gradients of global norm 2
 * where a case does not say otherwise. */
static void gradients_accumulation(gen_ctx *g)
{
  static const struct { const char *what; int n, steps, round_trip, missing; double each, scale; } C[] = {
    {"gradient_accumulation_steps 2, four micro-steps: updates at the 2nd and 4th with the mean of two gradients, "
     "nothing moves at the 1st and 3rd", 2, 4, 0, 0, 0.0, 0.0},
    {"gradient_accumulation_steps 3, five micro-steps: one update at the 3rd, two micro-steps pending at the end "
     "(in the accumulators, not the parameters)", 3, 5, 0, 0, 0.0, 0.0},
    {"gradient_accumulation_steps 3, a state round trip after the 2nd micro-step: the accumulated sum and the count "
     "of micro-steps survive it, the 3rd updates with the mean of all three", 3, 4, 2, 0, 0.0, 0.0},
    {"gradient_accumulation_steps 2 with clipnorm 1.0: the mean of the two gradients is clipped, not each "
     "micro-step's (global norms 4, 4, 0.5, 0.5)", 2, 4, 0, 0, 1.0, 0.0},
    {"gradient_accumulation_steps 2 with loss_scale_factor 1024 (global norms 2048 each): each micro-step's gradient "
     "unscaled (exactly: the order of unscaling and adding cannot show here)", 2, 4, 0, 0, 0.0, 1024.0},
    {"gradient_accumulation_steps 2, the bias without a gradient at the 2nd micro-step: it does not move, and its "
     "pending sum is emptied with every other (keras' TF and torch backends reset all accumulators)", 2, 4, 0, 1,
     0.0, 0.0},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    muonref_options o = base(g, 0.02, 0.004);
    o.grad_accumulation = C[k].n, o.clip_grad_norm_each = C[k].each, o.loss_scale = C[k].scale;
    gen_step_case c;
    begin(&c, C[k].what, &o);
    param(g, &c, "dense.kernel", shape2(16, 32), 0);
    int bias = param(g, &c, "dense.bias", (muonref_shape){1, {16}}, 0);
    param(g, &c, "embedding.embeddings", shape2(24, 16), 0);
    for (int s = 0; s < C[k].steps; s++) {
      double norm = C[k].scale > 0.0 ? 2.0 * C[k].scale : C[k].each > 0.0 ? (s < 2 ? 4.0 : 0.5) : 2.0;
      grads_global_norm(g, &c, s, norm);
    }
    if (C[k].missing) {
      free(c.grads[1][bias]);
      c.grads[1][bias] = NULL;
    }
    c.round_trip_after = C[k].round_trip;
    flags(&c, "GradAccumulation", C[k].round_trip ? "StateRoundTrip" : NULL, NULL);
    gen_add_step(g, &c);
  }
  /* AdamW variables only (no Newton-Schulz: what PyTorch 1.13 CPU's bf16 cannot change), gradients of about 1e-6
   * where keras' epsilon 1e-7 is of the order of sqrt(v): a port that steps at every micro-step, or with the sum
   * (whose scale Adam's quotient alone would hide), moves them otherwise */
  muonref_options o = base(g, 0.02, 0.004);
  o.grad_accumulation = 2;
  gen_step_case c;
  begin(&c, "gradient_accumulation_steps 2 on AdamW variables only (a bias and an embedding), gradients N(0, 1) times 1e-6, "
            "where epsilon 1e-7 is of the order of sqrt(v): four micro-steps", &o);
  int b = param(g, &c, "dense.bias", (muonref_shape){1, {16}}, 0);
  int e = param(g, &c, "embedding.embeddings", shape2(24, 16), 0);
  for (int s = 0; s < 4; s++)
    grad_normal(g, &c, s, b, 1e-6), grad_normal(g, &c, s, e, 1e-6);
  flags(&c, "GradAccumulation", NULL, NULL);
  gen_add_step(g, &c);
  /* a gradient missing at a micro-step that is not the N-th: the mean still divides by N (keras' `/ steps`), not by
   * the micro-steps that had one */
  muonref_options o2 = base(g, 0.02, 0.004);
  o2.grad_accumulation = 2;
  begin(&c, "gradient_accumulation_steps 2, the bias without a gradient at the 1st micro-step of each update: it "
            "steps with its one gradient divided by 2, not by the micro-steps that had one", &o2);
  param(g, &c, "dense.kernel", shape2(16, 32), 0);
  b = param(g, &c, "dense.bias", (muonref_shape){1, {16}}, 0);
  param(g, &c, "embedding.embeddings", shape2(24, 16), 0);
  for (int s = 0; s < 4; s++)
    grads_global_norm(g, &c, s, 2.0);
  for (int s = 0; s < 4; s += 2) {
    free(c.grads[s][b]);
    c.grads[s][b] = NULL;
  }
  flags(&c, "GradAccumulation", "MissingGradient", NULL);
  gen_add_step(g, &c);
  /* clipnorm on AdamW variables alone (PlatformRobust): micro-steps of norms 4 and 0.5 clipped before they are
   * added give another direction than their mean clipped */
  o2.clip_grad_norm_each = 1.0;
  begin(&c, "gradient_accumulation_steps 2 with clipnorm 1.0 on AdamW variables only (a bias and an embedding), "
            "global norms 4, 0.5, 4, 0.5: the mean of each pair clipped, not each micro-step's gradient", &o2);
  param(g, &c, "dense.bias", (muonref_shape){1, {16}}, 0);
  param(g, &c, "embedding.embeddings", shape2(24, 16), 0);
  for (int s = 0; s < 4; s++)
    grads_global_norm(g, &c, s, s % 2 ? 0.5 : 4.0);
  flags(&c, "GradAccumulation", "KerasClip", NULL);
  gen_add_step(g, &c);
}

/* maximize (options.h; kozistr/pytorch_optimizer's `maximize`, spec/profiles/pytorch_optimizer.md 4): every
 * gradient negated first, in place.  A structured Muon matrix (exact in bf16) and a bias on AdamW, with the
 * profile's Nesterov, then without it and with a decoupled decay: p.grad holds the Nesterov input of -G, or -G
 * (gradAfter).  Written for the profiles whose record has the key. */
static void gradients_maximize(gen_ctx *g)
{
  static const struct { int nesterov_off; double wd; const char *what; } C[] = {
    {0, 0.0, "maximize True, two steps on a (8, 16) Muon matrix and a bias on AdamW: every gradient is negated "
             "first, in place (the parameters ascend; p.grad ends as -G or what the step writes from it)"},
    {1, 0.1, "maximize True, nesterov False, weight_decay 0.1, two steps on a (8, 16) Muon matrix and a bias on "
             "AdamW: the momentum and the moments take -G, the decay is unchanged, p.grad ends as -G"}};
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, C[k].wd);
    o.maximize = 1;
    if (C[k].nesterov_off)
      o.nesterov = 0;
    begin(&c, C[k].what, &o);
    int w = param(g, &c, "hidden", shape2(8, 16), 0), b = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    for (int s = 0; s < 2; s++)
      grad_structured(g, &c, s, w, -s), grad_normal(g, &c, s, b, 1.0);
    flags(&c, "Maximize", "AdamW", C[k].wd != 0.0 ? "WeightDecay" : NULL);
    gen_add_step(g, &c);
  }
}

/* cautious_update (options.h; kozistr/pytorch_optimizer's group key `cautious`, spec/profiles/pytorch_optimizer.md
 * 4 step 7): the Newton-Schulz output masked where it disagrees in sign with p.grad at that point and the rest
 * rescaled by n / (k + 1).  A wide and a tall Muon matrix and a bias on AdamW (whose group has the key too, as
 * upstream's constructor keyword gives it to every group, and ignores it), four steps of normal gradients at the
 * profile's momentum (0.95: the Nesterov input's signs follow the buffer, not the gradient), with the profile's
 * Nesterov (the mask reads the Nesterov input) and without it and with a decoupled decay (the mask reads the
 * gradient, not the buffer), and without it where a third of each gradient is exactly zero (`> 0`, not
 * `>= 0`: the mask keeps those elements out).  Written for the profiles whose record has the key. */
static void gradients_cautious(gen_ctx *g)
{
  static const struct { int nesterov_off; double wd; const char *what; } C[] = {
    {0, 0.0, "cautious True in every group, four steps on a (8, 16) and a (16, 8) Muon matrix and a bias on AdamW: "
             "the Newton-Schulz output kept where it agrees in sign with the Nesterov input, times n / (kept + 1); "
             "AdamW ignores the key"},
    {1, 0.1, "cautious True in every group, nesterov False, weight_decay 0.1, four steps on a (8, 16) and a (16, 8) "
             "Muon matrix and a bias on AdamW: the mask reads the gradient, not the momentum buffer"},
    {1, 0.0, "cautious True in every group, nesterov False, four steps on a (8, 16) and a (16, 8) Muon matrix and a "
             "bias on AdamW, every third element of each gradient exactly zero: `update * grad > 0` keeps those "
             "elements out (a mask with >= keeps them, and counts them)"}};
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, C[k].wd);
    o.cautious_update = 1;
    if (C[k].nesterov_off)
      o.nesterov = 0;
    begin(&c, C[k].what, &o);
    int w = param(g, &c, "wide", shape2(8, 16), 0), t = param(g, &c, "tall", shape2(16, 8), 0),
        b = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    for (int s = 0; s < 4; s++)
      grad_normal(g, &c, s, w, 1.0), grad_normal(g, &c, s, t, 1.0), grad_normal(g, &c, s, b, 1.0);
    for (int s = 0; k == 2 && s < 4; s++) /* the third case: exact zeros where the momentum is not zero */
      for (size_t j = (size_t)s % 3; j < numel(&c, w); j += 3)
        c.grads[s][w][j] = c.grads[s][t][j] = 0.0f;
    flags(&c, "CautiousUpdate", "AdamW", C[k].wd != 0.0 ? "WeightDecay" : NULL);
    gen_add_step(g, &c);
  }
}

void gen_area_gradients(gen_ctx *g)
{
  gen_group(g, "step");
  for (int wd = 0; wd < 2; wd++) {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, wd ? 0.1 : 0.0);
    begin(&c, wd ? "a Muon matrix and a bias without gradient, weight_decay 0.1: both untouched, no state (not zeros)"
                 : "parameters without gradient among others: untouched, no state",
          &o);
    int a = param(g, &c, "hidden", shape2(8, 16), 0), b = param(g, &c, "bias", (muonref_shape){1, {8}}, 0);
    int d = param(g, &c, "other", shape2(8, 16), 0), e = param(g, &c, "bias2", (muonref_shape){1, {8}}, 0);
    (void)a, (void)b;
    for (int k = 0; k < 2; k++)
      grad_structured(g, &c, k, d, 0), grad_normal(g, &c, k, e, 1.0);
    flags(&c, "MissingGradient", "BugB15", NULL);
    gen_add_step(g, &c);
  }
  {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, 0.1);
    begin(&c, "a gradient at step 1, none at step 2, one at step 3: the missing step neither decays nor moves momentum", &o);
    int a = param(g, &c, "hidden", shape2(8, 16), 0), b = param(g, &c, "bias", (muonref_shape){1, {8}}, 0);
    grad_structured(g, &c, 0, a, 0), grad_normal(g, &c, 0, b, 1.0);
    grad_structured(g, &c, 2, a, -1), grad_normal(g, &c, 2, b, 1.0);
    flags(&c, "MissingGradient", "BugB15", NULL);
    gen_add_step(g, &c);
  }
  for (int k = 0; k < 3; k++) {
    gen_step_case c;
    static const size_t S[][2] = {{8, 8}, {16, 4}, {4, 16}};
    char comment[256];
    snprintf(comment, sizeof comment, "zero gradient on a zero-initialised (%zu, %zu) matrix: a finite zero update, no NaN",
             S[k][0], S[k][1]);
    muonref_options o = base_s(g, 0.02, 0.01);
    begin(&c, comment, &o);
    int i = param(g, &c, "out_proj", shape2(S[k][0], S[k][1]), 0);
    memset(c.init[i], 0, numel(&c, i) * sizeof(float));
    grad_zero(&c, 0, i);
    grad_zero(&c, 1, i);
    flags(&c, "ZeroGradient", "BugB16", NULL);
    gen_add_step(g, &c);
  }
  /* bug-reports B21/B01: the update does not depend on the gradient's scale, and is not lr * g */
  static const int SHIFT[] = {-20, 0, 10};
  for (int k = 0; k < 3; k++) {
    gen_step_case c;
    char comment[256];
    snprintf(comment, sizeof comment, "gradient scaled by 2^%d: the orthogonalised update is the same (no clipping of the update)",
             SHIFT[k]);
    muonref_options o = base_s(g, 0.02, 0.0);
    begin(&c, comment, &o);
    int i = param(g, &c, "w", shape2(8, 32), 0);
    g->rng.s = 77; /* the same scales for the three cases */
    grad_structured(g, &c, 0, i, SHIFT[k]);
    flags(&c, "GradientScale", "BugB21", "BugB01");
    gen_add_step(g, &c);
  }
  /* platform-robust missing gradient: a wide matrix with equal singular
   * values (spec/vectors.md 5.3) */
  {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, 0.1);
    begin(&c, "a wide (16, 32) Muon matrix with equal singular values: a gradient at step 1, none at step 2, one at "
              "step 3 (a case PyTorch 1.13 CPU's bf16 effects cannot change)", &o);
    int a = param(g, &c, "wide", shape2(16, 32), 0);
    grad_equal_scales(&c, 0, a, 1.0f);
    grad_equal_scales(&c, 2, a, 0.25f);
    flags(&c, "MissingGradient", "BugB15", NULL);
    gen_add_step(g, &c);
  }
  if (defaults(g).clip_grad_norm > 0.0) /* only a profile that clips: the other profiles' draws stay as they were */
    gradients_clip(g);
  if (has_field_key(g, offsetof(muonref_options, maximize))) /* the same: only a port with the option */
    gradients_maximize(g);
  if (has_field_key(g, offsetof(muonref_options, cautious_update))) /* the same */
    gradients_cautious(g);
  if (has_field_key(g, offsetof(muonref_options, clip_grad_norm_each))) /* the same: keras' clipping */
    gradients_clip_keras(g);
  if (has_field_key(g, offsetof(muonref_options, loss_scale))) /* the same: keras' loss_scale_factor */
    gradients_loss_scale(g);
  if (has_field_key(g, offsetof(muonref_options, grad_accumulation))) /* the same: keras' accumulation */
    gradients_accumulation(g);
  if (has_key_kind(g, MUONREF_KEY_PADDLE_GRAD_CLIP)) /* the same: Paddle's grad_clip */
    gradients_clip_paddle(g);
}

/* ---- Newton-Schulz ---- */

void gen_area_newton_schulz(gen_ctx *g)
{
  gen_group(g, "ns");
  static const struct { size_t m, n; int tr, shift; } S[] = {
    {4, 16, 0, 0}, {8, 32, 0, 0}, {8, 8, 0, 0}, {16, 16, 0, 0}, {4, 64, 0, 0}, {8, 16, 1, 0},
    {2, 8, 0, 0}, {16, 32, 0, 3}, {8, 32, 1, -6}, {1, 16, 0, 0}, {4, 8, 0, 12}, {32, 64, 0, 0},
  };
  const char *fs[] = {"NewtonSchulz", "Structured", NULL};
  for (size_t k = 0; k < sizeof S / sizeof S[0]; k++) {
    char comment[256];
    float d[64];
    gen_dyadic_scales(g, d, S[k].m, S[k].shift);
    float *x = gen_structured(S[k].m, S[k].n, d, S[k].tr);
    size_t rows = S[k].tr ? S[k].n : S[k].m, cols = S[k].tr ? S[k].m : S[k].n;
    snprintf(comment, sizeof comment, "structured (%zu, %zu): Hadamard rows times dyadic scales 2^%d: bf16 exactly defined",
             rows, cols, S[k].shift);
    gen_add_ns(g, "ns", comment, fs, x, rows, cols, 5);
    free(x);
  }
  for (int steps = 1; steps <= 7; steps++) {
    char comment[256];
    float d[8];
    gen_dyadic_scales(g, d, 8, 0);
    float *x = gen_structured(8, 16, d, 0);
    snprintf(comment, sizeof comment, "ns_steps %d on a structured (8, 16) matrix", steps);
    const char *f2[] = {"NewtonSchulz", "StepCount", NULL};
    gen_add_ns(g, "ns", comment, f2, x, 8, 16, steps);
    free(x);
  }
  static const size_t R[][2] = {{8, 8}, {16, 40}, {48, 32}, {64, 16}, {32, 96}, {12, 20}};
  const char *fr[] = {"NewtonSchulz", "Random", NULL};
  for (size_t k = 0; k < sizeof R / sizeof R[0]; k++) {
    char comment[256];
    float *x = gen_normal_array(g, R[k][0] * R[k][1], 1.0);
    snprintf(comment, sizeof comment, "Gaussian (%zu, %zu): fp32 close to exact, bf16 only in the singular-value band", R[k][0],
             R[k][1]);
    gen_add_ns(g, "ns", comment, fr, x, R[k][0], R[k][1], 5);
    free(x);
  }
  /* tiny norms: the epsilon and its placement decide the result */
  static const int TINY[] = {-26, -25, -24, -23};
  const char *ft[] = {"NewtonSchulz", "TinyNorm", "Epsilon", NULL};
  for (int k = 0; k < 4; k++) {
    char comment[256];
    float d[4] = {1, 1, 1, 1};
    for (int i = 0; i < 4; i++)
      d[i] = ldexpf(1.0f, TINY[k]);
    float *x = gen_structured(4, 16, d, 0);
    snprintf(comment, sizeof comment,
             defaults(g).ns_eps != 1e-7 /* Emerging-Optimizers: 1e-15; the eps is far below these norms */
                 ? "tiny norm 2^%d x 8: X / max(||X||, eps) with the profile's eps"
             : defaults(g).eps_mode == MUONREF_EPS_CLAMP
                 ? "tiny norm 2^%d x 8: X / max(||X||, 1e-7) differs from an added or another eps"
                 : "tiny norm 2^%d x 8: X / (||X|| + 1e-7) differs from a clamp or another eps",
             TINY[k]);
    gen_add_ns(g, "ns", comment, ft, x, 4, 16, 5);
    free(x);
  }
  {
    float *z = gen_zeros(8 * 12);
    const char *fz[] = {"NewtonSchulz", "ZeroMatrix", "BugB16", NULL};
    gen_add_ns(g, "ns", "the zero matrix gives the zero matrix (no NaN)", fz, z, 8, 12, 5);
    free(z);
  }
  {
    float d[8] = {1, 0.5f, 0, 0.25f, 0, 0, 0.125f, 0};
    float *x = gen_structured(8, 16, d, 0);
    const char *fz[] = {"NewtonSchulz", "RankDeficient", NULL};
    gen_add_ns(g, "ns", "rank 4 of 8: zero rows stay zero", fz, x, 8, 16, 5);
    free(x);
  }
  {
    float *x = gen_normal_array(g, 16 * 24, 1.0);
    for (int j = 0; j < 24; j++)
      x[15 * 24 + j] = x[14 * 24 + j] * 1e-6f; /* a parallel row: only the rounding of 1e-6 x keeps it
                                                  independent; condition number 1.5e14 (muonref ref polar:
                                                  s_min 5.0e-14, s_max 7.5) */
    const char *fz[] = {"NewtonSchulz", "IllConditioned", NULL};
    gen_add_ns(g, "ns", "an ill-conditioned (16, 24) matrix: its last row is 1e-6 times the one before, rounded to binary32, so its "
               "condition number is about 1.5e14", fz, x, 16, 24, 5);
    free(x);
  }
  gen_group(g, "error");
  gen_add_ns_error(g, "a 3-D input is refused by the Newton-Schulz function (bug-reports B24)",
                   &(muonref_shape){3, {3, 4, 5}}, "ESHAPE", "Expected a matrix, got a tensor of shape (3, 4, 5)");
  gen_add_ns_error(g, "a 1-D input is refused by the Newton-Schulz function", &(muonref_shape){1, {7}}, "ESHAPE",
                   "Expected a matrix, got a tensor of shape (7,)");
  /* tall matrices with equal singular values: the transpose rule shows in
   * the bf16 rounding, and the generator checks that PyTorch 1.13 CPU's
   * bf16 effects cannot change the result (PlatformRobust): every partial
   * sum fits bf16 and bf16-rounded scalars give the same bits */
  gen_group(g, "ns");
  /* (rows, cols) and the column scales: the first four were found by a search
   * of small dyadic scales for inputs where the transpose rule changes the
   * bf16 bits while bf16-rounded scalars do not */
  static const struct { size_t rows, cols; float d[8]; } T[] = {
    {16, 4, {0.75f, 0.5f, 1, 1}}, {16, 4, {1, 0.75f, 0.5f, 1}}, {16, 4, {0.375f, 1, 1, 1}},
    {8, 4, {0.375f, 0.375f, 0.25f, 0.75f}}, {32, 8, {1, 1, 1, 0.5f, 1, 1, 1, 0.5f}}, {64, 8, {1, 0.5f, 1, 0.5f, 1, 0.5f, 1, 0.5f}},
  };
  const char *fe[] = {"NewtonSchulz", "Structured", "Transpose", NULL};
  for (size_t k = 0; k < sizeof T / sizeof T[0]; k++) {
    char comment[256];
    float *x = gen_structured(T[k].cols, T[k].rows, T[k].d, 1);
    snprintf(comment, sizeof comment,
             "tall (%zu, %zu), Hadamard columns times dyadic scales: iterated on the wide side and transposed back",
             T[k].rows, T[k].cols);
    gen_add_ns(g, "ns", comment, fe, x, T[k].rows, T[k].cols, 5);
    free(x);
  }
  if (!(defaults(g).ns_eps < 1e-7) && !has_key_kind(g, MUONREF_KEY_COEFFICIENT_TYPE))
    return;
  /* norms below 1e-7 for a profile whose eps is smaller (Emerging-Optimizers
   * 1e-15 since 7ebd3cf, issue #229): an eps floor of 1e-7 divides by 1e-7
   * and leaves the input far from orthogonal (emerging@0.3, the releases
   * before: that floor, the same inputs) */
  static const int BELOW[] = {-30, -36};
  const char *fb[] = {"NewtonSchulz", "TinyNorm", "EpsFloor", NULL};
  for (int k = 0; k < 2; k++) {
    char comment[256];
    float d[4];
    for (int i = 0; i < 4; i++)
      d[i] = ldexpf(1.0f, BELOW[k]);
    float *x = gen_structured(4, 16, d, 0);
    if (defaults(g).ns_eps < 1e-7)
      snprintf(comment, sizeof comment, "norm 2^%d below 1e-7: X / max(||X||, %g) normalises it; an eps of 1e-7 does "
               "not", BELOW[k] + 3, defaults(g).ns_eps);
    else
      snprintf(comment, sizeof comment, "norm 2^%d below 1e-7: X / max(||X||, %g) is far from normalised; an eps of "
               "1e-15 normalises it", BELOW[k] + 3, defaults(g).ns_eps);
    gen_add_ns(g, "ns", comment, fb, x, 4, 16, 5);
    free(x);
  }
}

/* ---- transpose pairs ---- */

void gen_area_transpose(gen_ctx *g)
{
  gen_group(g, "transpose");
  static const size_t S[][2] = {{16, 4}, {4, 16}, {32, 8}, {8, 64}};
  for (size_t k = 0; k < 4; k++) {
    char comment[256];
    float d[64];
    size_t m = S[k][0] < S[k][1] ? S[k][0] : S[k][1], n = S[k][0] < S[k][1] ? S[k][1] : S[k][0];
    gen_dyadic_scales(g, d, m, 0);
    float *x = gen_structured(m, n, d, S[k][0] > S[k][1]);
    snprintf(comment, sizeof comment, "structured (%zu, %zu) and its transpose: outputs exact transposes", S[k][0], S[k][1]);
    const char *f[] = {"Transpose", "Structured", NULL};
    gen_add_ns(g, "transpose", comment, f, x, S[k][0], S[k][1], 5);
    free(x);
  }
  static const size_t R[][2] = {{16, 40}, {40, 16}, {48, 32}, {10, 30}, {64, 24}, {3, 17}};
  for (size_t k = 0; k < 6; k++) {
    char comment[256];
    float *x = gen_normal_array(g, R[k][0] * R[k][1], 1.0);
    snprintf(comment, sizeof comment, "Gaussian (%zu, %zu) and its transpose: each output, transposed back, within the "
             "case's tolerance of the exact iterate", R[k][0], R[k][1]);
    const char *f[] = {"Transpose", "Random", NULL};
    gen_add_ns(g, "transpose", comment, f, x, R[k][0], R[k][1], 5);
    free(x);
  }
}

/* ---- state round trips ---- */

/* keras' use_ema (spec/muon.md 8.2; base_optimizer.py @3422977a _update_model_variables_moving_average and the
 * overwrite of _backend_apply_gradients): the average kept after every step, the variables overwritten by it every
 * ema_overwrite_frequency updates.  keras' kernel, bias and embedding, N(0, 1) gradients of global norm 2, except
 * the last case: AdamW variables alone (no Newton-Schulz: PlatformRobust). */
static void state_ema(gen_ctx *g)
{
  static const struct { const char *what; double m; int freq, steps, round_trip, accum, adam_only, missing, off; } C[] = {
    {"use_ema, ema_overwrite_frequency 2: after steps 2 and 4 every variable takes its moving average (momentum "
     "0.99), which the first step set to the variable itself", 0.99, 2, 4, 0, 0, 0, -1, 0},
    {"use_ema without ema_overwrite_frequency: the variables move as without it, the average kept beside them "
     "(each state's ema_average)", 0.99, 0, 3, 0, 0, 0, -1, 0},
    {"use_ema, ema_momentum 0.5, ema_overwrite_frequency 3, a state round trip after step 2: the average survives "
     "it and overwrites the variables after step 3", 0.5, 3, 4, 2, 0, 0, -1, 0},
    {"use_ema, ema_momentum 0.5, ema_overwrite_frequency 3, gradient_accumulation_steps 2, five micro-steps: at "
     "the 5th, a micro-step after the second update (keras' iterations 2), the average moves and the overwrite "
     "writes it back", 0.5, 3, 5, 0, 2, 0, -1, 0},
    {"use_ema, ema_momentum 0.75, ema_overwrite_frequency 2 on AdamW variables only (a bias and an embedding): the "
     "average of steps 1 and 2 written back after step 2", 0.75, 2, 3, 0, 0, 1, -1, 0},
    {"use_ema, ema_momentum 0.5, ema_overwrite_frequency 4, the bias without a gradient at step 3: its average "
     "still moves there (keras averages every variable), as the overwrite after step 4 shows", 0.5, 4, 4, 0, 0, 0,
     2, 0},
    {"ema_momentum 1.5 without use_ema: keras checks it only under use_ema, and the step runs as without an "
     "average", 1.5, 0, 2, 0, 0, 0, -1, 1},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    muonref_options o = base(g, 0.02, 0.004);
    o.use_ema = !C[k].off, o.ema_momentum = C[k].m, o.ema_overwrite = C[k].freq, o.grad_accumulation = C[k].accum;
    gen_step_case c;
    begin(&c, C[k].what, &o);
    if (!C[k].adam_only)
      param(g, &c, "dense.kernel", shape2(16, 32), 0);
    int b = param(g, &c, "dense.bias", (muonref_shape){1, {16}}, 0);
    param(g, &c, "embedding.embeddings", shape2(24, 16), 0);
    for (int s = 0; s < C[k].steps; s++)
      grads_global_norm(g, &c, s, 2.0);
    if (C[k].missing >= 0) {
      free(c.grads[C[k].missing][b]);
      c.grads[C[k].missing][b] = NULL;
    }
    c.round_trip_after = C[k].round_trip;
    flags(&c, "MovingAverage", C[k].round_trip ? "StateRoundTrip" : C[k].accum ? "GradAccumulation" : NULL, NULL);
    gen_add_step(g, &c);
  }
}

void gen_area_state(gen_ctx *g)
{
  gen_group(g, "step");
  for (int rt = 1; rt <= 3; rt++)
    for (int structured = 0; structured < 2; structured++) {
      gen_step_case c;
      char comment[256];
      muonref_options o = structured ? base_s(g, 0.02, 0.01) : base(g, 0.02, 0.01);
      snprintf(comment, sizeof comment, "four steps with export, import into a fresh optimizer and continue after step %d (%s)",
               rt, structured ? "structured gradients" : "random gradients");
      begin(&c, comment, &o);
      int a = param(g, &c, "hidden", shape2(8, 16), 0), b = param(g, &c, "bias", (muonref_shape){1, {8}}, 0);
      int t = param(g, &c, "tall", shape2(32, 8), 0);
      for (int k = 0; k < 4; k++) {
        if (structured)
          grad_structured(g, &c, k, a, 0), grad_structured(g, &c, k, t, -k);
        else
          grad_normal(g, &c, k, a, 1.0), grad_normal(g, &c, k, t, 1.0);
        grad_normal(g, &c, k, b, 1.0);
      }
      c.round_trip_after = rt;
      flags(&c, "StateRoundTrip", "BugB13", "BugB14");
      gen_add_step(g, &c);
    }
  {
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, 0.0);
    begin(&c, "round trip after step 1 while one parameter has had no gradient yet (no state to carry)", &o);
    int a = param(g, &c, "hidden", shape2(8, 16), 0), b = param(g, &c, "late", shape2(8, 16), 0);
    grad_structured(g, &c, 0, a, 0);
    grad_structured(g, &c, 1, a, 0), grad_structured(g, &c, 1, b, 0);
    grad_structured(g, &c, 2, a, 0), grad_structured(g, &c, 2, b, 0);
    c.round_trip_after = 1;
    flags(&c, "StateRoundTrip", "MissingGradient", NULL);
    gen_add_step(g, &c);
  }
  {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0);
    o.adam_lr_ratio = 1.0;
    begin(&c, "AdamW step counts survive the round trip (bias correction continues at t = 3)", &o);
    int b = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    for (int k = 0; k < 4; k++)
      grad_normal(g, &c, k, b, 1.0);
    c.round_trip_after = 2;
    flags(&c, "StateRoundTrip", "AdamW", NULL);
    gen_add_step(g, &c);
  }
  if (has_field_key(g, offsetof(muonref_options, use_ema))) /* only a port with the option: the others' draws stay */
    state_ema(g);
}

/* ---- errors ---- */

/* An error case with one matrix and one bias (a second matrix where the
 * profile takes only 2-D parameters), options given verbatim. */
static void error_case(gen_ctx *g, const char *comment, const char *options_json, const char *status,
                       const char *message, const char *result)
{
  gen_step_case c;
  muonref_options o = base(g, 0.02, 0.0);
  begin(&c, comment, &o);
  json_error_t je;
  c.raw_options[0] = json_loads(options_json, 0, &je);
  int two_d = o.route_rule == MUONREF_ROUTE_TWO_D_ONLY;
  int a = param(g, &c, "hidden", shape2(8, 16), 0);
  int b = two_d ? param(g, &c, "proj", shape2(8, 8), 0) : param(g, &c, "bias", (muonref_shape){1, {8}}, 0);
  grad_normal(g, &c, 0, a, 1.0), grad_normal(g, &c, 0, b, 1.0);
  c.error_status = status;
  c.error_message = message;
  c.result = result;
  flags(&c, "ErrorMessage", result ? "NanOption" : NULL, NULL);
  gen_add_step(g, &c);
}

/* A case of a bad shape or gradient: parameter 0 ("hidden", shape s0)
 * and parameter 1 (name1, shape s1, in group g1; a second group takes
 * use_muon FALSE), one step of N(0, 1) gradients, made bad by e->kind:
 * 1 a NaN in parameter 1's gradient, 2 an Inf in parameter 0's, 3
 * parameter 0's gradient sparse, 4 complex, 8 neither parameter has a
 * gradient (0, 5 and 6: the shape alone; 7 an exclude pattern). */
typedef struct bad_input {
  const char *what;
  int kind;
  const char *status, *msg, *result;
  int any;
} bad_input;

static void bad_input_case(gen_ctx *g, const bad_input *e, const muonref_options *o, muonref_shape s0,
                           const char *name1, muonref_shape s1, int g1, const char *flag2, const char *flag3)
{
  gen_step_case c;
  begin(&c, e->what, o);
  int a = param(g, &c, "hidden", s0, 0);
  if (g1) {
    c.options[1] = *o;
    c.options[1].use_muon = MUONREF_USE_MUON_FALSE;
    c.n_groups = 2;
  }
  int b = param(g, &c, name1, s1, g1);
  grad_normal(g, &c, 0, a, 1.0), grad_normal(g, &c, 0, b, 1.0);
  if (e->kind == 1)
    c.grads[0][b][3] = NAN;
  if (e->kind == 2)
    c.grads[0][a][5] = INFINITY;
  if (e->kind == 3)
    c.grad_kind[0][a] = "sparse";
  if (e->kind == 4)
    c.grad_kind[0][a] = "c64";
  if (e->kind == 8) /* no gradient at all in the step */
    free(c.grads[0][a]), free(c.grads[0][b]), c.grads[0][a] = c.grads[0][b] = NULL;
  c.error_status = e->status;
  c.error_message = e->msg;
  c.result = e->result;
  c.error_any = e->any;
  flags(&c, "ErrorMessage", flag2, flag3);
  gen_add_step(g, &c);
}

/* torch.optim.Muon's catalogue (spec/profiles/torch.md 1.1, 1.2): the
 * constructor's checks in order, then the step's. */
static void errors_torch(gen_ctx *g)
{
  static const struct { const char *what, *opt, *msg, *result; } E[] = {
    {"negative learning rate", "{\"lr\": -1.0}", "Learning rate should be >= 0 but is: -1.0", NULL},
    {"negative learning rate, small", "{\"lr\": -0.001}", "Learning rate should be >= 0 but is: -0.001", NULL},
    {"lr = nan: `not 0.0 <= nan` refuses it", "{\"lr\": \"nan\"}", "Learning rate should be >= 0 but is: nan", NULL},
    {"negative momentum", "{\"momentum\": -0.5}", "momentum should be >= 0 but is: -0.5", NULL},
    {"negative weight decay", "{\"weight_decay\": -0.01}", "weight decay should be >= 0 but is: -0.01", NULL},
    {"weight_decay = inf: torch accepts it, muonref refuses it", "{\"weight_decay\": \"inf\"}",
     "weight decay should be >= 0 but is: inf", "acceptable"},
    {"unknown adjust_lr_fn", "{\"adjust_lr_fn\": \"cosine\"}", "Adjust learning rate function cosine is not supported", NULL},
    {"adjust_lr_fn spelled in capitals", "{\"adjust_lr_fn\": \"ORIGINAL\"}",
     "Adjust learning rate function ORIGINAL is not supported", NULL},
    {"100 Newton-Schulz steps (at the step)", "{\"ns_steps\": 100}",
     "Number of steps must be less than 100 for computational efficiency", NULL},
    {"two coefficients (at the step)", "{\"ns_coefficients\": [3.4445, -4.775]}",
     "Coefficients must be a tuple of exactly 3 values", NULL},
    {"four coefficients (at the step)", "{\"ns_coefficients\": [3.4445, -4.775, 2.0315, 0.0]}",
     "Coefficients must be a tuple of exactly 3 values", NULL},
    {"first violation wins: lr before momentum", "{\"lr\": -1.0, \"momentum\": -2.0}",
     "Learning rate should be >= 0 but is: -1.0", NULL},
    {"first violation wins: momentum before weight_decay", "{\"momentum\": -2.0, \"weight_decay\": -1.0}",
     "momentum should be >= 0 but is: -2.0", NULL},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++)
    error_case(g, E[k].what, E[k].opt, "EOPTION", E[k].msg, E[k].result);
  static const bad_input G[] = {
    {"a bias (48,): refused at construction", 0, "ESHAPE",
     "Muon only supports 2D parameters whereas we found a parameter with size: torch.Size([48])", NULL, 0},
    {"a conv filter (4, 2, 3, 3): refused at construction", 5, "ESHAPE",
     "Muon only supports 2D parameters whereas we found a parameter with size: torch.Size([4, 2, 3, 3])", NULL, 0},
    {"a NaN gradient: muonref refuses it before anything is written; torch runs and stores NaN (acceptable)", 1,
     "ENONFINITE", "Non-finite gradient for parameter 1: element 3 is nan", "acceptable", 0},
    {"an infinite gradient: muonref refuses it; torch runs (acceptable)", 2, "ENONFINITE",
     "Non-finite gradient for parameter 0: element 5 is inf", "acceptable", 0},
    {"a sparse gradient: refused at the step", 3, "EGRAD", "Muon does not support sparse gradients", NULL, 0},
    {"a complex gradient on a real parameter: refused (PyTorch refuses the assignment itself, so any message passes)",
     4, "EGRAD", "Muon does not support complex gradients", NULL, 1},
  };
  for (size_t k = 0; k < sizeof G / sizeof G[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    int shape = G[k].kind == 0 || G[k].kind == 5;
    muonref_shape s0 = G[k].kind == 0 ? (muonref_shape){1, {48}} : G[k].kind == 5 ? (muonref_shape){4, {4, 2, 3, 3}}
                                                                                   : shape2(8, 16);
    bad_input_case(g, &G[k], &o, s0, "proj", shape2(8, 8), 0, shape ? "RoutingShape" : "BadGradient",
                   G[k].kind == 4 ? "BugB19" : G[k].kind == 5 ? "BugB03" : NULL);
  }
}

/* A port that checks nothing (Moonlight, spec/profiles/moonlight.md 1.1):
 * only what its code refuses on its own, with its own exception (any
 * message passes), and what muonref refuses while the port runs on. */
static void errors_none(gen_ctx *g)
{
  static const bad_input G[] = {
    {"a conv filter (4, 2, 3, 3) among the Muon parameters: the port asserts p.ndim == 2 (bug-reports B03)", 0, "ESHAPE",
     "use_muon=True needs exactly two dimensions, got shape (4, 2, 3, 3)", NULL, 1},
    {"a bias (48,) among the Muon parameters: refused", 5, "ESHAPE",
     "use_muon=True needs exactly two dimensions, got shape (48,)", NULL, 1},
    {"a NaN gradient: muonref refuses it before anything is written; the port runs and stores NaN (acceptable)", 1,
     "ENONFINITE", "Non-finite gradient for parameter 1: element 3 is nan", "acceptable", 0},
    {"an infinite gradient on the Muon matrix: muonref refuses it; the port runs (acceptable)", 2, "ENONFINITE",
     "Non-finite gradient for parameter 0: element 5 is inf", "acceptable", 0},
    {"a sparse gradient: refused, with any message (the port's own check, or PyTorch failing inside the step)", 3,
     "EGRAD", "Muon does not support sparse gradients", NULL, 1},
    /* any message: a port without checks that refuses it does so with its own exception
       (kozistr/pytorch_optimizer's NoComplexParameterError, spec/profiles/pytorch_optimizer.md 2) */
    {"a complex gradient (bug-reports B19): muonref refuses it; the port casts it to real with a warning, or refuses "
     "it with its own message (acceptable)", 4,
     "EGRAD", "Muon does not support complex gradients", "acceptable", 1},
  };
  for (size_t k = 0; k < sizeof G / sizeof G[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    o.use_muon = MUONREF_USE_MUON_TRUE;
    int shape = G[k].kind == 0 || G[k].kind == 5;
    muonref_shape s0 = G[k].kind == 0 ? (muonref_shape){4, {4, 2, 3, 3}} : G[k].kind == 5 ? (muonref_shape){1, {48}}
                                                                                           : shape2(8, 16);
    bad_input e = G[k];
    muonref_route r;
    muonref_error re;
    if (shape && muonref_route_param(&o, &s0, &r, &re) == MUONREF_OK)
      continue; /* the profile's port takes it (Keller: a 4-D filter is flattened); the routing area has such cases */
    if (shape)
      e.msg = re.message; /* the profile's own shape rule (core/route.c) */
    bad_input_case(g, &e, &o, s0, "bias", (muonref_shape){1, {8}}, 1, shape ? "RoutingForced" : "BadGradient",
                   G[k].kind == 4 ? "BugB19" : G[k].kind == 0 ? "BugB03" : NULL);
  }
}

/* An option value a port refuses at the step, and its words. */
typedef struct option_error {
  const char *what, *opt, *msg;
} option_error;

/* An EOPTION case for each of C[0..n): in the words of the profile's
 * release where the case reader gives others (a release without a preset:
 * emerging@0.3 has no cubic5), the comment then saying so; none where the
 * release accepts the options (megatron@0.20.dev's Emerging-Optimizers
 * v0.3.0 has cans). */
static void release_error_cases(gen_ctx *g, const option_error *C, size_t n)
{
  for (size_t k = 0; k < n; k++) {
    json_t *j = json_loads(C[k].opt, 0, NULL);
    muonref_options o;
    muonref_error e = {0};
    const char *msg = C[k].msg;
    char what[256];
    snprintf(what, sizeof what, "%s", C[k].what);
    int st = j ? muonref_case_options(j, g->profile, &o, "gen", &e) : MUONREF_EFORMAT;
    if (st == MUONREF_EOPTION && strcmp(e.message, msg)) {
      msg = e.message;
      snprintf(what, sizeof what, "%s [profile %.40s: %.120s]", C[k].what, g->profile, e.message);
    }
    if (st != MUONREF_OK) /* a release that accepts it (megatron@0.20.dev's cans) has no such refusal */
      error_case(g, what, C[k].opt, "EOPTION", msg, NULL);
    json_decref(j);
  }
}

/* Emerging-Optimizers' checks (spec/profiles/emerging.md section 2;
 * orthogonalized_optimizers/muon.py, orthogonalized_optimizer.py @fd77292):
 * num_ns_steps >= 1 at construction; an unknown scale_mode and a parameter
 * that is not 2-D at the step.  No value of lr, momentum or weight_decay is
 * checked (a negative one runs); NaN and Inf gradients run (muonref refuses
 * them: acceptable); a sparse or complex gradient fails inside PyTorch
 * (any message). */
static void errors_emerging(gen_ctx *g)
{
  static const struct { const char *what, *opt, *msg, *result; } E[] = {
    {"zero Newton-Schulz steps (refused at construction)", "{\"num_ns_steps\": 0}",
     "num_ns_steps must be at least 1, got 0", NULL},
    {"negative Newton-Schulz steps", "{\"num_ns_steps\": -3}", "num_ns_steps must be at least 1, got -3", NULL},
    {"unknown scale_mode (get_muon_scale_factor, at the step)", "{\"scale_mode\": \"rows\"}",
     "Invalid mode for Muon update scale factor: rows", NULL},
    {"scale_mode of another port (NeMo's fan_in)", "{\"scale_mode\": \"fan_in\"}",
     "Invalid mode for Muon update scale factor: fan_in", NULL},
    {"lr = nan: the port checks nothing and runs, muonref refuses it", "{\"lr\": \"nan\"}",
     "Invalid learning rate: nan", "acceptable"},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++)
    error_case(g, E[k].what, E[k].opt, "EOPTION", E[k].msg, E[k].result);
  static const bad_input G[] = {
    {"a bias (48,): refused at the step (`grad.ndim != 2`)", 0, "ESHAPE", "Only 2D parameters are supported.", NULL, 0},
    {"a conv filter (4, 2, 3, 3): refused at the step", 5, "ESHAPE", "Only 2D parameters are supported.", NULL, 0},
    {"a NaN gradient: muonref refuses it before anything is written; the port runs and stores NaN (acceptable)", 1,
     "ENONFINITE", "Non-finite gradient for parameter 1: element 3 is nan", "acceptable", 0},
    {"an infinite gradient: muonref refuses it; the port runs (acceptable)", 2, "ENONFINITE",
     "Non-finite gradient for parameter 0: element 5 is inf", "acceptable", 0},
    {"a sparse gradient: refused; the port fails inside PyTorch with PyTorch's own message", 3, "EGRAD",
     "Muon does not support sparse gradients", NULL, 1},
    {"a complex gradient on a real parameter: refused (PyTorch refuses the assignment itself, so any message passes)",
     4, "EGRAD", "Muon does not support complex gradients", NULL, 1},
  };
  for (size_t k = 0; k < sizeof G / sizeof G[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    int shape = G[k].kind == 0 || G[k].kind == 5;
    bad_input e = G[k];
    muonref_shape s0 = G[k].kind == 0 ? (muonref_shape){1, {48}} : G[k].kind == 5 ? (muonref_shape){4, {4, 2, 3, 3}}
                                                                                   : shape2(8, 16);
    muonref_route r;
    muonref_error re;
    if (shape && muonref_route_param(&o, &s0, &r, &re) != MUONREF_OK) /* the catalogue's words (core/route.c) */
      e.msg = re.message;
    bad_input_case(g, &e, &o, s0, "proj", shape2(8, 8), 0, shape ? "RoutingShape" : "BadGradient",
                   G[k].kind == 4 ? "BugB19" : G[k].kind == 5 ? "BugB03" : NULL);
  }
  /* after the others, so that their inputs stay (vector release 2026.12.5): mixin.py @fd77292
   * _apply_weight_decay_inplace raises at the step, when weight_decay != 0 (the profile's default 0.01) */
  error_case(g, "unknown weight_decay_method (mixin.py, at the step, with weight_decay 0.01)",
             "{\"weight_decay_method\": \"lion\", \"weight_decay\": 0.01}", "EOPTION",
             "Invalid weight decay method: lion", NULL);
  /* coefficient_type, after the others (vector release 2026.12.8): muon_utils.py @fd77292 newton_schulz raises at
   * the step */
  static const option_error C[] = {
    {"unknown coefficient_type (newton_schulz, at the step)", "{\"coefficient_type\": \"quartic\"}",
     "Invalid coefficient type: quartic"},
    {"coefficient_type of another port (timm's polar_express_safer)",
     "{\"coefficient_type\": \"polar_express_safer\"}", "Invalid coefficient type: polar_express_safer"},
    {"coefficient_type custom: Muon never passes custom_coefficient_sets", "{\"coefficient_type\": \"custom\"}",
     "custom_coefficient_sets must be provided when coefficient_type is 'custom'."},
    {"coefficient_type cubic5 with num_ns_steps 6 (a fixed 5-step schedule)",
     "{\"coefficient_type\": \"cubic5\", \"num_ns_steps\": 6}",
     "cubic5 is a fixed 5-step schedule; got steps=6. Use steps=5, or pass explicit custom coefficients."},
  };
  release_error_cases(g, C, sizeof C / sizeof C[0]);
}

/* Megatron's checks (spec/profiles/megatron.md section 2; core_v0.19.0):
 * TensorParallelMuon's num_ns_steps >= 1 at construction; Emerging-Optimizers'
 * unknown scale_mode at the step; under the dev snapshot's route rule NOT_1D
 * also its 2-D rule, which every untagged parameter that is not 1-D met (a
 * conv filter, a 0-D scalar; under TAGGED_2D they take Adam: routing_tagged).
 * Nothing else is checked: a negative clip_grad turns clipping off
 * (`if clip_grad > 0.0`), NaN and Inf gradients run (the norm is NaN, `nan <
 * 1.0` is False: no clipping; the step stores NaN); muonref refuses them
 * (acceptable).  The fp16 refusal and the import check are outside what a
 * vector expresses. */
static void errors_megatron(gen_ctx *g)
{
  static const struct { const char *what, *opt, *msg, *result; } E[] = {
    {"zero Newton-Schulz steps (TensorParallelMuon, at construction)", "{\"muon_num_ns_steps\": 0}",
     "num_ns_steps must be at least 1, got 0", NULL},
    {"negative Newton-Schulz steps", "{\"muon_num_ns_steps\": -3}", "num_ns_steps must be at least 1, got -3", NULL},
    {"unknown muon_scale_mode (get_muon_scale_factor, at the step)", "{\"muon_scale_mode\": \"rows\"}",
     "Invalid mode for Muon update scale factor: rows", NULL},
    {"negative clip_grad: Megatron turns clipping off (`if clip_grad > 0.0`), muonref refuses it",
     "{\"clip_grad\": -1.0}", "Invalid gradient clipping norm (clip_grad): -1.0", "acceptable"},
    {"lr = nan: nothing checks it, muonref refuses it", "{\"lr\": \"nan\"}", "Invalid learning rate: nan",
     "acceptable"},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++)
    error_case(g, E[k].what, E[k].opt, "EOPTION", E[k].msg, E[k].result);
  static const bad_input G[] = {
    /* the next two under NOT_1D only (Megatron-LM's dev snapshot 025c931a) */
    {"a conv filter (4, 2, 3, 3), untagged: not 1-D, so Muon, refused at the step", 5, "ESHAPE",
     "Only 2D parameters are supported.", NULL, 0},
    {"a 0-D scalar, untagged: `len(()) != 1`, so Muon, refused at the step", 6, "ESHAPE",
     "Only 2D parameters are supported.", NULL, 0},
    {"a NaN gradient: muonref refuses it before anything is written; the port runs and stores NaN (acceptable)", 1,
     "ENONFINITE", "Non-finite gradient for parameter 1: element 3 is nan", "acceptable", 0},
    {"an infinite gradient: muonref refuses it; the port runs (acceptable)", 2, "ENONFINITE",
     "Non-finite gradient for parameter 0: element 5 is inf", "acceptable", 0},
    {"a sparse gradient: refused; the port fails inside PyTorch with PyTorch's own message", 3, "EGRAD",
     "Muon does not support sparse gradients", NULL, 1},
    {"a complex gradient on a real parameter: refused (PyTorch refuses the assignment itself, so any message passes)",
     4, "EGRAD", "Muon does not support complex gradients", NULL, 1},
  };
  for (size_t k = 0; k < sizeof G / sizeof G[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    int shape = G[k].kind == 5 || G[k].kind == 6;
    if (shape && o.route_rule == MUONREF_ROUTE_TAGGED_2D)
      continue; /* Megatron Core sends them to Adam: the routing area's case (routing_tagged) */
    muonref_shape s0 = G[k].kind == 5 ? (muonref_shape){4, {4, 2, 3, 3}} : G[k].kind == 6 ? (muonref_shape){0, {0}}
                                                                                          : shape2(8, 16);
    bad_input_case(g, &G[k], &o, s0, "bias", (muonref_shape){1, {8}}, 0, shape ? "RoutingShape" : "BadGradient",
                   G[k].kind == 4 ? "BugB19" : G[k].kind == 5 ? "BugB03" : NULL);
  }
  /* muon_coefficient_type, after the others (vector release 2026.12.20): Megatron passes it unchecked
   * (validate_coefficient_type is called nowhere); Emerging-Optimizers v0.2.0's newton_schulz raises at the
   * step, in the words the case reader gives (the record's coefficient_types) */
  static const option_error C[] = {
    {"unknown muon_coefficient_type (Emerging-Optimizers' newton_schulz, at the step)",
     "{\"muon_coefficient_type\": \"quartic\"}", "Invalid coefficient type: quartic"},
    {"muon_coefficient_type cans: a preset of Emerging-Optimizers v0.3.0 (Megatron main), not of the v0.2.0 the "
     "releases pin", "{\"muon_coefficient_type\": \"cans\"}", "Invalid coefficient type: cans"},
    {"muon_coefficient_type custom: Megatron has no field for custom_coefficient_sets",
     "{\"muon_coefficient_type\": \"custom\"}",
     "custom_coefficient_sets must be provided when coefficient_type is 'custom'."},
  };
  release_error_cases(g, C, sizeof C / sizeof C[0]);
  /* core_v0.17.x on Emerging-Optimizers v0.1.0 (megatron@0.17; spec/profiles/megatron.md 9): every preset but
   * quintic refused at construction, and a step count that is not a multiple of quintic's five triples at the
   * first step; after the others, so that their inputs stay */
  static const option_error V017[] = {
    {"muon_coefficient_type simple: a preset of Emerging-Optimizers, refused by core_v0.17's "
     "validate_coefficient_type (without v0.2 only quintic)", "{\"muon_coefficient_type\": \"simple\"}",
     "Unsupported muon coefficient type 'simple'. Supported types: ('quintic',)"},
  };
  if (defaults(g).catalogue == MUONREF_CATALOGUE_MEGATRON_0_17) {
    release_error_cases(g, V017, sizeof V017 / sizeof V017[0]);
    error_case(g, "muon_num_ns_steps 6: not a multiple of quintic's five triples (v0.1.0's newton_schulz, at the "
               "first step; v0.2.0 cycles)", "{\"muon_num_ns_steps\": 6}", "EOPTION",
               "steps (6) must be multiple of len(coefficient_sets) (5).", NULL);
  }
  /* qkv_split_shapes whose sum does not divide dim 0 (TensorParallelMuon.orthogonalize, at the step; spec/muon.md
   * 7.6): core_v0.19's RuntimeError; core_v0.17 and core_v0.18 fail inside PyTorch's view; after the others */
  static const bad_input Q = {"qkv_split_shapes [3, 2, 2] on a (16, 8) matrix: dim 0 is no multiple of their sum 7 "
                              "(core_v0.19's RuntimeError at the step; core_v0.17 and core_v0.18 fail inside PyTorch's "
                              "view, so any message passes)", 0, "ESHAPE",
                              "Muon QKV split shape mismatch: grad_shape=(16, 8), split_shapes=[3, 2, 2]", NULL, 1};
  if (has_field_key(g, offsetof(muonref_options, ns_split))) {
    muonref_options o = base(g, 0.02, 0.0);
    o.n_ns_split = 3, o.ns_split[0] = 3, o.ns_split[1] = 2, o.ns_split[2] = 2;
    bad_input_case(g, &Q, &o, shape2(16, 8), "bias", (muonref_shape){1, {8}}, 1, "SplitNs", NULL);
  }
}

/* timm's catalogue (spec/profiles/timm.md 1.1, 1.2; timm/optim/muon.py
 * @aa4b5850): the constructor's _validate_scalar checks in order (lr,
 * weight_decay, momentum < 1, eps), then the step's (sparse gradients,
 * coefficients, get_lr_scale's assertion, Newton-Schulz's 2-D/3-D
 * assertion).  NaN passes timm's checks (`nan < 0` is False): muonref
 * refuses it, "acceptable". */
static void errors_timm(gen_ctx *g)
{
  static const struct { const char *what, *opt, *msg, *result; } E[] = {
    {"negative learning rate", "{\"lr\": -1.0}", "Invalid learning rate: -1.0", NULL},
    {"negative learning rate, small", "{\"lr\": -0.001}", "Invalid learning rate: -0.001", NULL},
    {"negative weight decay (timm spells it weight_decay)", "{\"weight_decay\": -0.01}", "Invalid weight_decay: -0.01",
     NULL},
    {"momentum 1.0 (must be below 1)", "{\"momentum\": 1.0}", "Invalid momentum: 1.0", NULL},
    {"negative momentum", "{\"momentum\": -0.5}", "Invalid momentum: -0.5", NULL},
    {"negative eps", "{\"eps\": -1e-07}", "Invalid epsilon: -1e-07", NULL},
    {"first violation wins: lr before weight_decay", "{\"lr\": -1.0, \"weight_decay\": -1.0}",
     "Invalid learning rate: -1.0", NULL},
    {"first violation wins: weight_decay before momentum", "{\"weight_decay\": -1.0, \"momentum\": 2.0}",
     "Invalid weight_decay: -1.0", NULL},
    {"first violation wins: momentum before eps", "{\"momentum\": 2.0, \"eps\": -1.0}", "Invalid momentum: 2.0", NULL},
    {"lr = nan: timm's check (nan < 0) lets it through, muonref refuses it", "{\"lr\": \"nan\"}",
     "Invalid learning rate: nan", "acceptable"},
    {"unknown coefficient preset (at the step)", "{\"ns_coefficients\": \"cubic\"}",
     "Unknown coefficients preset 'cubic'. Valid options: original, polar_express, polar_express_safer, quintic", NULL},
    {"empty coefficient list (at the step)", "{\"ns_coefficients\": []}", "Coefficient list cannot be empty", NULL},
    {"unknown adjust_lr_fn (an assertion at the step)", "{\"adjust_lr_fn\": \"cosine\"}",
     "Invalid scaling function \"cosine\" for Muon", NULL},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++)
    error_case(g, E[k].what, E[k].opt, "EOPTION", E[k].msg, E[k].result);
  static const bad_input G[] = {
    {"use_muon=True on a bias (48,): timm asserts a 2-D or 3-D Newton-Schulz input at the step", 0, "ESHAPE",
     "Input must be 2D or 3D, got 1D. Flatten batch dims first.", NULL, 0},
    {"a NaN gradient: muonref refuses it before anything is written; timm runs and stores NaN (acceptable)", 1,
     "ENONFINITE", "Non-finite gradient for parameter 1: element 3 is nan", "acceptable", 0},
    {"an infinite gradient on the Muon matrix: muonref refuses it; timm runs (acceptable)", 2, "ENONFINITE",
     "Non-finite gradient for parameter 0: element 5 is inf", "acceptable", 0},
    {"a sparse gradient: timm's own message (seed 000, muon.py L825)", 3, "EGRAD",
     "Muon does not support sparse gradients", NULL, 0},
    {"a complex gradient (bug-reports B19): muonref refuses it; timm casts it to real with a warning (acceptable)", 4,
     "EGRAD", "Muon does not support complex gradients", "acceptable", 0},
  };
  for (size_t k = 0; k < sizeof G / sizeof G[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    if (G[k].kind == 0)
      o.use_muon = MUONREF_USE_MUON_TRUE;
    bad_input_case(g, &G[k], &o, G[k].kind == 0 ? (muonref_shape){1, {48}} : shape2(8, 16), "bias",
                   (muonref_shape){1, {8}}, 0, G[k].kind ? "BadGradient" : "RoutingForced",
                   G[k].kind == 4 ? "BugB19" : NULL);
  }
  /* algo (timm's constructor) and the scaling functions each algo's step asserts on; after the cases above */
  static const struct { const char *what, *opt, *msg; } A[] = {
    {"an unknown algo", "{\"algo\": \"lion\"}", "Invalid algo: lion. Must be 'muon' or 'adamuon'"},
    {"adjust_lr_fn \"original\" with algo adamuon (get_adamuon_lr_scale asserts at the step)",
     "{\"algo\": \"adamuon\", \"adjust_lr_fn\": \"original\"}", "Invalid scaling function \"original\" for AdaMuon"},
    {"adjust_lr_fn \"rsqrt_in\", AdaMuon's alone, with algo muon (get_lr_scale asserts at the step)",
     "{\"adjust_lr_fn\": \"rsqrt_in\"}", "Invalid scaling function \"rsqrt_in\" for Muon"},
  };
  for (size_t k = 0; k < sizeof A / sizeof A[0]; k++)
    error_case(g, A[k].what, A[k].opt, "EOPTION", A[k].msg, NULL);
}

/* dion's catalogue (spec/profiles/dion.md 2; microsoft/dion dion/muon.py
 * @0a059a4): the constructor's checks in order (lr, mu, betas, adjust_lr),
 * then the step's (an unknown algorithm, the assertion on a Muon
 * parameter of fewer than two dimensions).  dion accepts mu >= 1, betas
 * >= 1, a negative weight_decay and NaN (`nan < 0` is False): muonref
 * refuses NaN, "acceptable"; the rest are step cases elsewhere or not
 * computable. */
static void errors_dion(gen_ctx *g)
{
  static const struct { const char *what, *opt, *msg, *result; } E[] = {
    {"negative learning rate", "{\"lr\": -1.0}", "Invalid learning rate: -1.0", NULL},
    {"negative learning rate, small", "{\"lr\": -0.001}", "Invalid learning rate: -0.001", NULL},
    {"negative momentum (dion spells it mu)", "{\"mu\": -0.5}", "Invalid momentum factor (mu): -0.5", NULL},
    {"negative beta2", "{\"betas\": [0.9, -0.1]}", "Invalid betas: (0.9, -0.1)", NULL},
    {"negative beta1", "{\"betas\": [-0.5, 0.95]}", "Invalid betas: (-0.5, 0.95)", NULL},
    {"unknown adjust_lr", "{\"adjust_lr\": \"spectral\"}",
     "Invalid adjust_lr value: spectral. Must be 'spectral_norm', 'rms_norm', or None.", NULL},
    {"torch's adjust_lr_fn value given to dion's adjust_lr", "{\"adjust_lr\": \"match_rms_adamw\"}",
     "Invalid adjust_lr value: match_rms_adamw. Must be 'spectral_norm', 'rms_norm', or None.", NULL},
    {"first violation wins: lr before mu", "{\"lr\": -1.0, \"mu\": -2.0}", "Invalid learning rate: -1.0", NULL},
    {"first violation wins: mu before betas", "{\"mu\": -2.0, \"betas\": [0.9, -1.0]}",
     "Invalid momentum factor (mu): -2.0", NULL},
    {"lr = nan in an AdamW group (the case's bias cannot be a Muon parameter): dion's check (nan < 0) lets it "
     "through, muonref refuses it", "{\"lr\": \"nan\", \"algorithm\": \"adamw\"}", "Invalid learning rate: nan",
     "acceptable"},
    {"an unknown algorithm (at the step)", "{\"algorithm\": \"sgd\"}", "Unknown algorithm: sgd", NULL},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++)
    error_case(g, E[k].what, E[k].opt, "EOPTION", E[k].msg, E[k].result);
  /* dion's NorMuon (dion/normuon.py @0a059a4): its muon_beta2 check between mu and betas; a muon_beta2
   * above 1 runs there (lerp with a negative weight: v turns negative, sqrt NaN), muonref refuses it */
  static const struct { const char *what, *opt, *msg, *result; } N[] = {
    {"negative muon_beta2", "{\"muon_beta2\": -0.5}", "Invalid muon_beta2: -0.5", NULL},
    {"first violation wins: mu before muon_beta2", "{\"mu\": -1.0, \"muon_beta2\": -0.5}",
     "Invalid momentum factor (mu): -1.0", NULL},
    {"first violation wins: muon_beta2 before betas", "{\"muon_beta2\": -0.5, \"betas\": [0.9, -1.0]}",
     "Invalid muon_beta2: -0.5", NULL},
    {"muon_beta2 1.5 (in an AdamW group, which does not use it): NorMuon accepts it (on a NorMuon group the second "
     "moment turns negative, its root NaN), muonref refuses it", "{\"muon_beta2\": 1.5, \"algorithm\": \"adamw\"}",
     "Invalid second-moment beta (moment2_beta): 1.5", "acceptable"},
  };
  int nor = defaults(g).catalogue == MUONREF_CATALOGUE_NORMUON;
  for (size_t k = 0; nor && k < sizeof N / sizeof N[0]; k++)
    error_case(g, N[k].what, N[k].opt, "EOPTION", N[k].msg, N[k].result);
  static const bad_input G[] = {
    {"algorithm \"muon\" on a bias (48,): dion asserts matrix parameters at the step", 0, "ESHAPE",
     "Muon optimizer only supports matrix parameters.", NULL, 0},
    {"a NaN gradient: muonref refuses it before anything is written; dion runs and stores NaN (acceptable)", 1,
     "ENONFINITE", "Non-finite gradient for parameter 1: element 3 is nan", "acceptable", 0},
    {"an infinite gradient on the Muon matrix: muonref refuses it; dion runs (acceptable)", 2, "ENONFINITE",
     "Non-finite gradient for parameter 0: element 5 is inf", "acceptable", 0},
    {"a sparse gradient: refused; dion fails inside PyTorch with PyTorch's own message", 3, "EGRAD",
     "Muon does not support sparse gradients", NULL, 1},
    {"a complex gradient (bug-reports B19): muonref refuses it; dion casts it to the parameter's dtype (acceptable)", 4,
     "EGRAD", "Muon does not support complex gradients", "acceptable", 0},
  };
  for (size_t k = 0; k < sizeof G / sizeof G[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    o.use_muon = MUONREF_USE_MUON_TRUE;
    bad_input g1 = G[k];
    if (nor && k == 0)
      g1.what = "algorithm \"normuon\" on a bias (48,): dion's NorMuon asserts matrix parameters at the step",
      g1.msg = "NorMuon optimizer only supports matrix parameters.";
    if (nor && G[k].kind == 4) /* normuon.py: U.to(V.dtype), V complex, then lerp with a real weight */
      g1.what = "a complex gradient (bug-reports B19): refused; NorMuon fails inside PyTorch (its complex second "
                "moment lerped with a real weight), so any message passes",
      g1.result = NULL, g1.any = 1;
    bad_input_case(g, &g1, &o, G[k].kind == 0 ? (muonref_shape){1, {48}} : shape2(8, 16), "bias",
                   (muonref_shape){1, {8}}, 1, G[k].kind ? "BadGradient" : "RoutingForced",
                   G[k].kind == 4 ? "BugB19" : NULL);
  }
  /* num_heads at the step (megabatch_base.py @0a059a4 _resolve_num_heads, then _prepare_head_split); after
   * the cases above, so that their inputs stay */
  static const struct { int heads, flatten; muonref_shape s; bad_input e; } H[] = {
    {3, 0, {2, {8, 16}}, {"num_heads 3 on an (8, 16) matrix: the head count must divide dim 0 (at the step)", 0,
                          "ESHAPE", "num_heads (3) must divide dim 0 of the parameter (got shape (8, 16)).", NULL, 0}},
    {2, 0, {3, {2, 4, 8}}, {"num_heads 2 on a (2, 4, 8) parameter: per-head Newton-Schulz takes 2-D parameters only "
                            "(at the step)", 0, "ESHAPE",
                            "num_heads is only supported for 2D parameters, got shape (2, 4, 8).", NULL, 0}},
    {2, 1, {2, {8, 16}}, {"num_heads 2 with flatten True (at the step, whatever the shape)", 0, "ESHAPE",
                          "num_heads > 1 is incompatible with flatten=True: flattening the per-head 3D view collapses "
                          "heads back into a single 2D matrix, defeating per-head Newton-Schulz.", NULL, 0}},
  };
  for (size_t k = 0; has_field_key(g, offsetof(muonref_options, ns_heads)) && k < sizeof H / sizeof H[0]; k++) {
    if (H[k].flatten && nor) /* NorMuon's record has no flatten key */
      continue;
    muonref_options o = base(g, 0.02, 0.0);
    o.use_muon = MUONREF_USE_MUON_TRUE;
    o.ns_heads = H[k].heads;
    if (H[k].flatten)
      o.conv_mode = MUONREF_CONV_FLATTEN;
    bad_input_case(g, &H[k].e, &o, H[k].s, "bias", (muonref_shape){1, {8}}, 1, "HeadNs", NULL);
  }
  /* split_sizes (megabatch_base.py @0a059a4 _resolve_split_sizes: the list, its entries, num_heads, flatten;
   * then _validate_split_shape: 2-D, the sum); after the cases above */
  static const struct { int n, sizes[3], heads, flatten; muonref_shape s; bad_input e; } P[] = {
    {3, {3, 2, 2}, 0, 0, {2, {8, 16}}, {"split_sizes [3, 2, 2] on an (8, 16) matrix: the sizes must sum to dim 0 (at the "
                                        "step)", 0, "ESHAPE", "split_sizes (3, 2, 2) must sum to dim 0 of the parameter "
                                        "(got shape (8, 16)).", NULL, 0}},
    {2, {4, 4}, 0, 0, {3, {2, 8, 8}}, {"split_sizes [4, 4] on a (2, 8, 8) parameter: row blocks of 2-D parameters only "
                                       "(at the step)", 0, "ESHAPE",
                                       "split_sizes is only supported for 2D parameters, got shape (2, 8, 8).", NULL, 0}},
    {1, {8}, 0, 0, {2, {8, 16}}, {"split_sizes [8]: a list of fewer than two sizes", 0, "EOPTION",
                                  "split_sizes must be a tuple or list of at least 2 block sizes, got [8].", NULL, 0}},
    {3, {6, 0, 2}, 0, 0, {2, {8, 16}}, {"split_sizes [6, 0, 2]: a size below 1", 0, "EOPTION",
                                        "split_sizes entries must be positive integers, got [6, 0, 2].", NULL, 0}},
    {2, {4, 4}, 2, 0, {2, {8, 16}}, {"split_sizes [4, 4] with num_heads 2", 0, "EOPTION",
                                     "split_sizes is incompatible with num_heads > 1: use num_heads for uniform per-head "
                                     "splits or split_sizes for uneven row blocks, not both.", NULL, 0}},
    {2, {4, 4}, 0, 1, {2, {8, 16}}, {"split_sizes [4, 4] with flatten True", 0, "EOPTION",
                                     "split_sizes is incompatible with flatten=True: split_sizes applies to 2D parameters "
                                     "only.", NULL, 0}},
  };
  for (size_t k = 0; has_field_key(g, offsetof(muonref_options, ns_split)) && k < sizeof P / sizeof P[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    o.use_muon = MUONREF_USE_MUON_TRUE;
    o.n_ns_split = P[k].n;
    memcpy(o.ns_split, P[k].sizes, sizeof P[k].sizes);
    o.ns_heads = P[k].heads;
    if (P[k].flatten)
      o.conv_mode = MUONREF_CONV_FLATTEN;
    bad_input_case(g, &P[k].e, &o, P[k].s, "bias", (muonref_shape){1, {8}}, 1, "SplitNs", NULL);
  }
}

/* optax.contrib.muon's checks (spec/profiles/optax.md 2; google-deepmind/
 * optax optax/contrib/_muon.py @2edbcbe2): an unknown preset string at
 * muon(), the coefficient shape and "Not enough coeffs" (inverted) at
 * tx.init.  No value of learning_rate, beta, eps or weight_decay is
 * checked; NaN and Inf gradients run (muonref refuses them: acceptable),
 * and so do complex ones (the conjugate transpose since 17e3e7ae). */
static void errors_optax(gen_ctx *g)
{
  static const struct { const char *what, *opt, *msg, *result; } E[] = {
    {"ns_coeffs 'muon', the preset name optax's docstring gives: the key is 'standard'", "{\"learning_rate\": 0.02, \"ns_coeffs\": \"muon\"}",
     "Unknown ns_coeff preset string: muon", NULL},
    {"ns_coeffs 'quintic' (timm's and Paddle's name of optax's 'dion' list)", "{\"learning_rate\": 0.02, \"ns_coeffs\": \"quintic\"}",
     "Unknown ns_coeff preset string: quintic", NULL},
    {"ns_coeffs of shape (2, 2)", "{\"learning_rate\": 0.02, \"ns_coeffs\": [[1.0, 2.0], [3.0, 4.0]]}",
     "ns_coeffs must have shape (3,) or (n, 3), got (2, 2)", NULL},
    {"ns_coeffs of shape (2,)", "{\"learning_rate\": 0.02, \"ns_coeffs\": [3.4445, -4.775]}", "ns_coeffs must have shape (3,) or (n, 3), got (2,)",
     NULL},
    {"ns_coeffs of shape (2, 4)", "{\"learning_rate\": 0.02, \"ns_coeffs\": [[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]]}",
     "ns_coeffs must have shape (3,) or (n, 3), got (2, 4)", NULL},
    {"the five 'dion' triples with ns_steps 4: too many coeffs, worded 'not enough' (optax's inverted message)",
     "{\"learning_rate\": 0.02, \"ns_coeffs\": \"dion\", \"ns_steps\": 4}", "Not enough coeffs to perform 4 steps", NULL},
    {"the five 'dion' triples with ns_steps 3", "{\"learning_rate\": 0.02, \"ns_coeffs\": \"dion\", \"ns_steps\": 3}",
     "Not enough coeffs to perform 3 steps", NULL},
    {"a list of three triples with ns_steps 2",
     "{\"learning_rate\": 0.02, \"ns_coeffs\": [[3.4445, -4.775, 2.0315], [3.4445, -4.775, 2.0315], [3.4445, -4.775, 2.0315]], \"ns_steps\": 2}",
     "Not enough coeffs to perform 2 steps", NULL},
    {"learning_rate = nan: optax checks nothing, muonref refuses it", "{\"learning_rate\": \"nan\"}",
     "Invalid learning rate: nan", "acceptable"},
    {"beta = inf: optax checks nothing, muonref refuses it", "{\"learning_rate\": 0.02, \"beta\": \"inf\"}", "Invalid momentum: inf",
     "acceptable"},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++)
    error_case(g, E[k].what, E[k].opt, "EOPTION", E[k].msg, E[k].result);
  static const bad_input G[] = {
    {"a NaN gradient: muonref refuses it before anything is written; optax runs and stores NaN (acceptable)", 1,
     "ENONFINITE", "Non-finite gradient for parameter 1: element 3 is nan", "acceptable", 0},
    {"an infinite gradient on the Muon matrix: muonref refuses it; optax runs (acceptable)", 2, "ENONFINITE",
     "Non-finite gradient for parameter 0: element 5 is inf", "acceptable", 0},
    {"a complex gradient (bug-reports B19): muonref refuses it; optax orthogonalises it with the conjugate transpose "
     "(acceptable)", 4, "EGRAD", "Muon does not support complex gradients", "acceptable", 0},
  };
  for (size_t k = 0; k < sizeof G / sizeof G[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    bad_input_case(g, &G[k], &o, shape2(8, 16), "bias", (muonref_shape){1, {8}}, 0, "BadGradient",
                   G[k].kind == 4 ? "BugB19" : NULL);
  }
}

/* paddle.optimizer.Muon's catalogue (spec/profiles/paddle.md 2): no value
 * is checked; the constructor asserts the coefficient preset (P-98af:
 * "Invalid ns_coeff_type: quartic", "ns_coeffs must be provided when
 * ns_coeff_type is 'custom'."), the step refuses a Muon parameter that is
 * not 2-D or 3-D.  NaN and Inf run there (muonref refuses them:
 * acceptable). */
static void errors_paddle(gen_ctx *g)
{
  static const struct { const char *what, *opt, *msg, *result; } E[] = {
    {"an unknown preset (P-98af asserts; P-0678 ran 'simple')", "{\"ns_coeff_type\": \"quartic\"}",
     "Invalid ns_coeff_type: quartic", NULL},
    {"a preset name in capitals", "{\"ns_coeff_type\": \"Simple\"}", "Invalid ns_coeff_type: Simple", NULL},
    {"the unmerged fork's preset polar_express_v3", "{\"ns_coeff_type\": \"polar_express_v3\"}",
     "Invalid ns_coeff_type: polar_express_v3", NULL},
    {"timm's name of the simple triple", "{\"ns_coeff_type\": \"original\"}", "Invalid ns_coeff_type: original", NULL},
    {"'custom' without ns_coeffs", "{\"ns_coeff_type\": \"custom\"}",
     "ns_coeffs must be provided when ns_coeff_type is 'custom'.", NULL},
    {"'custom' with ns_coeffs None", "{\"ns_coeff_type\": \"custom\", \"ns_coeffs\": null}",
     "ns_coeffs must be provided when ns_coeff_type is 'custom'.", NULL},
    {"learning_rate = nan: the port checks nothing and runs, muonref refuses it", "{\"learning_rate\": \"nan\"}",
     "Invalid learning rate: nan", "acceptable"},
    {"weight_decay = inf: the port runs, muonref refuses it", "{\"weight_decay\": \"inf\"}",
     "Invalid weight decay: inf", "acceptable"},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++)
    error_case(g, E[k].what, E[k].opt, "EOPTION", E[k].msg, E[k].result);
  static const bad_input G[] = {
    {"a conv filter (4, 2, 3, 3) mapped to Muon: refused at the step", 0, "ESHAPE",
     "Input tensor X must be 2D or 3D (batched), got 4D", NULL, 0},
    {"a bias (48,) mapped to Muon: refused at the step", 5, "ESHAPE",
     "Input tensor X must be 2D or 3D (batched), got 1D", NULL, 0},
    {"a NaN gradient: muonref refuses it before anything is written; the port runs and stores NaN (acceptable)", 1,
     "ENONFINITE", "Non-finite gradient for parameter 1: element 3 is nan", "acceptable", 0},
    {"an infinite gradient on the Muon matrix: muonref refuses it; the port runs (acceptable)", 2, "ENONFINITE",
     "Non-finite gradient for parameter 0: element 5 is inf", "acceptable", 0},
    {"a sparse gradient: refused; the port fails with its framework's own message", 3, "EGRAD",
     "Muon does not support sparse gradients", NULL, 1},
    {"a complex gradient: muonref refuses it; the port casts it to float32 (`grad.astype(float32)`) and runs "
     "(inferred: acceptable)", 4, "EGRAD", "Muon does not support complex gradients", "acceptable", 0},
  };
  for (size_t k = 0; k < sizeof G / sizeof G[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    o.use_muon = MUONREF_USE_MUON_TRUE;
    int shape = G[k].kind == 0 || G[k].kind == 5;
    muonref_shape s0 = G[k].kind == 0 ? (muonref_shape){4, {4, 2, 3, 3}} : G[k].kind == 5 ? (muonref_shape){1, {48}}
                                                                                           : shape2(8, 16);
    bad_input_case(g, &G[k], &o, s0, "bias", (muonref_shape){1, {8}}, 1, shape ? "RoutingForced" : "BadGradient",
                   G[k].kind == 0 ? "BugB03" : NULL);
  }
  /* a split_concat_func whose sizes do not cover the axis (spec/muon.md 7.6): the split itself fails, in the
   * framework's own words; after the cases above */
  static const bad_input S = {"split_concat_func splitting axis 1 of an (8, 16) weight into [8, 4, 2] (sum 14): the "
                              "split fails at the step, with the framework's own message", 0, "ESHAPE",
                              "split sizes [8, 4, 2] must sum to dim 1 of the parameter (got shape (8, 16))", NULL, 1};
  if (has_key_kind(g, MUONREF_KEY_SPLIT_CONCAT)) {
    muonref_options o = base(g, 0.02, 0.0);
    o.use_muon = MUONREF_USE_MUON_TRUE;
    o.n_ns_split = 3, o.ns_split[0] = 8, o.ns_split[1] = 4, o.ns_split[2] = 2;
    o.ns_split_mode = MUONREF_SPLIT_COLUMNS;
    bad_input_case(g, &S, &o, shape2(8, 16), "bias", (muonref_shape){1, {8}}, 1, "SplitNs", NULL);
  }
}

/* keras.optimizers.Muon (spec/profiles/keras.md 2): no value is checked;
 * muonref refuses what it cannot compute (acceptable: the port runs), a
 * pattern that is no regular expression (Python's re raises at build, its
 * own message), and a step without any gradient with base_optimizer.py's
 * message. */
static void errors_keras(gen_ctx *g)
{
  static const struct { const char *what, *opt, *msg, *result; } E[] = {
    {"learning_rate = nan: keras checks nothing and runs, muonref refuses it", "{\"learning_rate\": \"nan\"}",
     "Invalid learning rate: nan", "acceptable"},
    {"weight_decay = inf: keras runs, muonref refuses it", "{\"weight_decay\": \"inf\"}", "Invalid weight decay: inf",
     "acceptable"},
    {"ns_steps = -1: keras runs `range(-1)`, no iteration, muonref refuses it", "{\"ns_steps\": -1}",
     "Invalid number of Newton-Schulz steps: -1", "acceptable"},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++)
    error_case(g, E[k].what, E[k].opt, "EOPTION", E[k].msg, E[k].result);
  static const bad_input G[] = {
    {"exclude_layers holds \"(a\", no regular expression: Python's re.search raises re.error at build, its own "
     "message (any message passes)", 7, "EOPTION", "Invalid exclude pattern '(a': Missing ')'", NULL, 1},
    {"no gradient for any variable: BaseOptimizer.apply raises", 8, "EOPTION", "No gradients provided for any variable.",
     NULL, 0},
    {"a NaN gradient: muonref refuses it before anything is written; keras runs and stores NaN (acceptable)", 1,
     "ENONFINITE", "Non-finite gradient for parameter 1: element 3 is nan", "acceptable", 0},
    {"an infinite gradient on the Muon matrix: muonref refuses it; keras runs (acceptable)", 2, "ENONFINITE",
     "Non-finite gradient for parameter 0: element 5 is inf", "acceptable", 0},
    {"a sparse gradient: refused; the port fails inside its framework with the framework's message", 3, "EGRAD",
     "Muon does not support sparse gradients", NULL, 1},
    {"a complex gradient (bug-reports B19): muonref refuses it; the port casts or fails in its framework (acceptable)",
     4, "EGRAD", "Muon does not support complex gradients", "acceptable", 1},
  };
  for (size_t k = 0; k < sizeof G / sizeof G[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    bad_input e = G[k];
    muonref_error pe;
    if (G[k].kind == 7) { /* the message of this build's regcomp */
      o.n_exclude_patterns = 1;
      snprintf(o.exclude_patterns[0], MUONREF_PATTERN_LEN, "(a");
      if (muonref_pattern_check(o.exclude_patterns[0], &pe) == MUONREF_OK)
        continue;
      e.msg = pe.message;
    }
    bad_input_case(g, &e, &o, shape2(8, 16), "bias", (muonref_shape){1, {8}}, 0,
                   G[k].kind == 7 ? "RoutingRegex" : G[k].kind == 8 ? "MissingGradient" : "BadGradient",
                   G[k].kind == 4 ? "BugB19" : NULL);
  }
  /* BaseOptimizer.__init__'s one check (the record's catalogue row at_most_one), and a negative bound,
   * which keras takes as none (`if self.clipnorm and self.clipnorm > 0`); after the cases above, so that
   * their inputs stay */
  static const struct { const char *what, *opt, *msg, *result; } C[] = {
    {"clipnorm and clipvalue both set: BaseOptimizer.__init__ refuses", "{\"clipnorm\": 1.0, \"clipvalue\": 0.5}",
     "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: clipnorm=1.0, clipvalue=0.5, "
     "global_clipnorm=None", NULL},
    {"clipnorm and global_clipnorm both set: refused", "{\"clipnorm\": 2.0, \"global_clipnorm\": 1.0}",
     "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: clipnorm=2.0, clipvalue=None, "
     "global_clipnorm=1.0", NULL},
    {"clipnorm = -1.0: keras clips nothing (`self.clipnorm > 0` is false), muonref refuses it",
     "{\"clipnorm\": -1.0}", "Invalid gradient clipping norm per gradient (clip_grad_norm_each): -1.0", "acceptable"},
  };
  if (has_field_key(g, offsetof(muonref_options, clip_grad_norm_each)))
    for (size_t k = 0; k < sizeof C / sizeof C[0]; k++)
      error_case(g, C[k].what, C[k].opt, "EOPTION", C[k].msg, C[k].result);
  /* gradient_accumulation_steps (spec/muon.md 3.3): BaseOptimizer.__init__ refuses a value that is set and below 2
   * (`if gradient_accumulation_steps: if not gradient_accumulation_steps >= 2`), before its clipping check; after
   * the cases above */
  static const struct { const char *what, *opt, *msg; } A[] = {
    {"gradient_accumulation_steps 1: BaseOptimizer.__init__ refuses (at least 2 where set)",
     "{\"gradient_accumulation_steps\": 1}",
     "`gradient_accumulation_steps` must be an integer >= 2. Received: gradient_accumulation_steps=1"},
    {"gradient_accumulation_steps -2: refused, in the same words", "{\"gradient_accumulation_steps\": -2}",
     "`gradient_accumulation_steps` must be an integer >= 2. Received: gradient_accumulation_steps=-2"},
    {"gradient_accumulation_steps 1 with clipnorm and clipvalue both set: the accumulation is checked first",
     "{\"gradient_accumulation_steps\": 1, \"clipnorm\": 1.0, \"clipvalue\": 0.5}",
     "`gradient_accumulation_steps` must be an integer >= 2. Received: gradient_accumulation_steps=1"},
  };
  if (has_field_key(g, offsetof(muonref_options, grad_accumulation)))
    for (size_t k = 0; k < sizeof A / sizeof A[0]; k++)
      error_case(g, A[k].what, A[k].opt, "EOPTION", A[k].msg, NULL);
  /* use_ema's two checks (spec/muon.md 8.2; BaseOptimizer.__init__ `if use_ema:`), after the accumulation's and
   * before the clipping's */
  static const struct { const char *what, *opt, *msg; } M[] = {
    {"use_ema with ema_momentum 1.5: refused (the range [0, 1])", "{\"use_ema\": true, \"ema_momentum\": 1.5}",
     "`ema_momentum` must be in the range [0, 1]. Received: ema_momentum=1.5"},
    {"use_ema with ema_overwrite_frequency -1: refused (an integer at least 1 where set)",
     "{\"use_ema\": true, \"ema_overwrite_frequency\": -1}",
     "`ema_overwrite_frequency` must be an integer >= 1 or None. Received: ema_overwrite_frequency=-1"},
    {"use_ema with ema_momentum -0.5 and clipnorm and clipvalue both set: the average's check comes first",
     "{\"use_ema\": true, \"ema_momentum\": -0.5, \"clipnorm\": 1.0, \"clipvalue\": 0.5}",
     "`ema_momentum` must be in the range [0, 1]. Received: ema_momentum=-0.5"},
    {"gradient_accumulation_steps 1 with use_ema and ema_momentum 1.5: the accumulation's check comes first",
     "{\"gradient_accumulation_steps\": 1, \"use_ema\": true, \"ema_momentum\": 1.5}",
     "`gradient_accumulation_steps` must be an integer >= 2. Received: gradient_accumulation_steps=1"},
  };
  if (has_field_key(g, offsetof(muonref_options, use_ema))) {
    for (size_t k = 0; k < sizeof M / sizeof M[0]; k++)
      error_case(g, M[k].what, M[k].opt, "EOPTION", M[k].msg, NULL);
    error_case(g, "use_ema with ema_momentum nan: keras runs (its `> 1 or < 0` is False for NaN) and stores NaN "
               "averages; muonref refuses it (acceptable)", "{\"use_ema\": true, \"ema_momentum\": \"nan\"}",
               "EOPTION", "Invalid ema_momentum: nan (0 <= m <= 1)", "acceptable");
  }
}

void gen_area_errors(gen_ctx *g)
{
  gen_group(g, "error");
  if (defaults(g).catalogue == MUONREF_CATALOGUE_OPTAX) {
    errors_optax(g);
    return;
  }
  if (defaults(g).catalogue == MUONREF_CATALOGUE_PADDLE) {
    errors_paddle(g);
    return;
  }
  if (defaults(g).catalogue == MUONREF_CATALOGUE_KERAS) {
    errors_keras(g);
    return;
  }
  if (defaults(g).catalogue == MUONREF_CATALOGUE_DION || defaults(g).catalogue == MUONREF_CATALOGUE_NORMUON) {
    errors_dion(g);
    return;
  }
  if (defaults(g).catalogue == MUONREF_CATALOGUE_TIMM) {
    errors_timm(g);
    return;
  }
  if (defaults(g).catalogue == MUONREF_CATALOGUE_EMERGING ||
      defaults(g).catalogue == MUONREF_CATALOGUE_EMERGING_ADAPTIVE) {
    errors_emerging(g);
    return;
  }
  if (defaults(g).catalogue == MUONREF_CATALOGUE_MEGATRON || defaults(g).catalogue == MUONREF_CATALOGUE_MEGATRON_0_17) {
    errors_megatron(g);
    return;
  }
  if (defaults(g).catalogue == MUONREF_CATALOGUE_TORCH) {
    errors_torch(g);
    return;
  }
  if (defaults(g).catalogue == MUONREF_CATALOGUE_NONE) {
    errors_none(g);
    return;
  }
  static const struct { const char *what, *opt, *msg; } E[] = {
    {"negative learning rate", "{\"lr\": -1.0}", "Invalid learning rate: -1.0"},
    {"negative learning rate, small", "{\"lr\": -0.001}", "Invalid learning rate: -0.001"},
    {"momentum 1.0 (must be below 1)", "{\"momentum\": 1.0}", "Invalid momentum: 1.0"},
    {"negative momentum", "{\"momentum\": -0.5}", "Invalid momentum: -0.5"},
    {"zero Newton-Schulz steps", "{\"ns_steps\": 0}", "Invalid number of Newton-Schulz steps: 0"},
    {"negative Newton-Schulz steps", "{\"ns_steps\": -3}", "Invalid number of Newton-Schulz steps: -3"},
    {"negative weight decay", "{\"weight_decay\": -0.01}", "Invalid weight decay: -0.01"},
    {"beta1 = 1", "{\"adam_betas\": [1.0, 0.95]}", "Invalid AdamW betas: (1.0, 0.95)"},
    {"negative beta2", "{\"adam_betas\": [0.9, -0.1]}", "Invalid AdamW betas: (0.9, -0.1)"},
    {"negative AdamW epsilon", "{\"adam_eps\": -1e-08}", "Invalid AdamW epsilon: -1e-08"},
    {"negative AdamW lr ratio", "{\"adam_lr_ratio\": -0.025}", "Invalid AdamW learning rate ratio: -0.025"},
    {"zero dimension threshold", "{\"adam_dim_threshold\": 0}", "Invalid AdamW dimension threshold: 0"},
    {"unknown scale_mode", "{\"scale_mode\": \"rows\"}",
     "Unknown scale_mode 'rows', expected one of ('fan_in', 'fan_out', 'none')"},
    {"scale_mode spelled in capitals", "{\"scale_mode\": \"FAN_IN\"}",
     "Unknown scale_mode 'FAN_IN', expected one of ('fan_in', 'fan_out', 'none')"},
    {"first violation wins: lr before momentum", "{\"lr\": -1.0, \"momentum\": 2.0}", "Invalid learning rate: -1.0"},
    {"first violation wins: momentum before ns_steps", "{\"momentum\": 2.0, \"ns_steps\": 0}", "Invalid momentum: 2.0"},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++)
    error_case(g, E[k].what, E[k].opt, "EOPTION", E[k].msg, NULL);
  error_case(g, "lr = nan: NeMo's check (lr < 0) lets it through, muonref refuses it", "{\"lr\": \"nan\"}", "EOPTION",
             "Invalid learning rate: nan", "acceptable");
  error_case(g, "weight_decay = inf", "{\"weight_decay\": \"inf\"}", "EOPTION", "Invalid weight decay: inf", "acceptable");
  /* shapes and gradients */
  /* The catalogue rule (spec/vectors.md 2.4): what NeMo's own optimizer
   * accepts while muonref refuses is "acceptable"; NeMo runs on NaN, Inf
   * and complex gradients (measured: PyTorch 1.13 CPU, seed
   * nemo/core/optim/muon.py), and refuses a sparse one with PyTorch's own
   * error, so any error message passes there. */
  static const bad_input G[] = {
    {"use_muon=True on a bias (48,)", 0, "ESHAPE", "use_muon=True needs at least two dimensions, got shape (48,)", NULL, 0},
    {"a NaN gradient: muonref refuses it before anything is written; NeMo runs and stores NaN (acceptable)", 1,
     "ENONFINITE", "Non-finite gradient for parameter 1: element 3 is nan", "acceptable", 0},
    {"an infinite gradient on the Muon matrix: muonref refuses it; NeMo runs (acceptable)", 2, "ENONFINITE",
     "Non-finite gradient for parameter 0: element 5 is inf", "acceptable", 0},
    {"a sparse gradient: refused; NeMo raises PyTorch's own error, so any message passes", 3, "EGRAD",
     "Muon does not support sparse gradients", NULL, 1},
    {"a complex gradient (bug-reports B19): muonref refuses it; NeMo casts it to real with a warning (acceptable)", 4,
     "EGRAD", "Muon does not support complex gradients", "acceptable", 0},
  };
  for (size_t k = 0; k < sizeof G / sizeof G[0]; k++) {
    muonref_options o = base(g, 0.02, 0.0);
    if (G[k].kind == 0)
      o.use_muon = MUONREF_USE_MUON_TRUE;
    bad_input_case(g, &G[k], &o, G[k].kind == 0 ? (muonref_shape){1, {48}} : shape2(8, 16), "bias",
                   (muonref_shape){1, {8}}, 0, G[k].kind ? "BadGradient" : "RoutingForced",
                   G[k].kind == 4 ? "BugB19" : NULL);
  }
}

/* ---- sharded and tensor-parallel cases (spec/vectors.md 2.6) ----
 * The case is an ordinary step case (its expected values are the
 * unsharded run's); the "sharding" member says how each world size in
 * SHARD_WORLD_SIZES lays the parameters over the ranks. */

static const int SHARD_WORLD_SIZES[] = {1, 2, 4};

static int routed_muon(const gen_step_case *c, int i)
{
  muonref_route r = {0};
  return muonref_route_param_named(&c->options[c->group_of[i]], &c->shapes[i], c->names[i], &r, NULL) == MUONREF_OK && r.use_muon;
}

/* Whether shape a sorts before shape b in "sorted" order: larger first,
 * comparing the dimensions lexicographically (as Python compares
 * torch.Size tuples), a prefix before its extensions in reverse. */
static int shape_greater(const muonref_shape *a, const muonref_shape *b)
{
  for (int k = 0; k < a->ndim && k < b->ndim; k++)
    if (a->dims[k] != b->dims[k])
      return a->dims[k] > b->dims[k];
  return a->ndim > b->ndim;
}

/* The processing order of the Muon parameters: per group, in group order;
 * "sorted": a stable sort by shape, largest first; else the case's order. */
static int shard_order(const gen_step_case *c, int sorted, int *order)
{
  int n = 0;
  for (int gi = 0; gi < c->n_groups; gi++) {
    int first = n;
    for (int i = 0; i < c->n_params; i++)
      if (c->group_of[i] == gi && routed_muon(c, i))
        order[n++] = i;
    for (int a = first + 1; sorted && a < n; a++) /* insertion sort: stable */
      for (int b = a; b > first && shape_greater(&c->shapes[order[b]], &c->shapes[order[b - 1]]); b--) {
        int t = order[b];
        order[b] = order[b - 1], order[b - 1] = t;
      }
  }
  return n;
}

/* "sharding" of an ownership scheme: per world size N, the Muon parameter at
 * position j of its group's order is owned by rank j mod N; the others are
 * replicated. */
static json_t *sharding_owner(const gen_step_case *c, int sorted)
{
  int order[GEN_MAX_PARAMS], pos[GEN_MAX_PARAMS];
  int n = shard_order(c, sorted, order);
  json_t *s = json_object(), *jo = json_array(), *layouts = json_array();
  for (int i = 0; i < c->n_params; i++)
    pos[i] = -1;
  for (int gi = 0, j = 0; gi < c->n_groups; gi++)
    for (int k = 0, p = 0; k < n; k++)
      if (c->group_of[order[k]] == gi)
        pos[order[k]] = p++, (void)j;
  for (int k = 0; k < n; k++)
    json_array_append_new(jo, json_integer(order[k]));
  json_object_set_new(s, "scheme", json_string(sorted ? "sorted" : "roundRobin"));
  json_object_set_new(s, "order", jo);
  for (size_t w = 0; w < sizeof SHARD_WORLD_SIZES / sizeof SHARD_WORLD_SIZES[0]; w++) {
    int ws = SHARD_WORLD_SIZES[w];
    json_t *l = json_object(), *ps = json_array();
    json_object_set_new(l, "worldSize", json_integer(ws));
    for (int i = 0; i < c->n_params; i++) {
      json_t *e = json_object();
      if (pos[i] >= 0)
        json_object_set_new(e, "owner", json_integer(pos[i] % ws));
      else
        json_object_set_new(e, "replicated", json_true());
      json_array_append_new(ps, e);
    }
    json_object_set_new(l, "params", ps);
    json_array_append_new(layouts, l);
  }
  json_object_set_new(s, "layouts", layouts);
  return s;
}

/* "sharding" of a split scheme: every Muon matrix (2-D) split along dim
 * over N ranks, rank r holding [bounds[r], bounds[r+1]) with the first
 * (size mod N) ranks one row or column more (torch.tensor_split); the
 * others are replicated. */
static json_t *sharding_split(const gen_step_case *c, int dim)
{
  json_t *s = json_object(), *layouts = json_array();
  json_object_set_new(s, "scheme", json_string(dim ? "cols" : "rows"));
  for (size_t w = 0; w < sizeof SHARD_WORLD_SIZES / sizeof SHARD_WORLD_SIZES[0]; w++) {
    int ws = SHARD_WORLD_SIZES[w];
    json_t *l = json_object(), *ps = json_array();
    json_object_set_new(l, "worldSize", json_integer(ws));
    for (int i = 0; i < c->n_params; i++) {
      json_t *e = json_object();
      if (routed_muon(c, i) && c->shapes[i].ndim == 2) {
        size_t len = c->shapes[i].dims[dim], q = len / (size_t)ws, rem = len % (size_t)ws, at = 0;
        json_t *b = json_array();
        json_array_append_new(b, json_integer(0));
        for (int r = 0; r < ws; r++) {
          at += q + ((size_t)r < rem);
          json_array_append_new(b, json_integer((json_int_t)at));
        }
        json_object_set_new(e, "dim", json_integer(dim));
        json_object_set_new(e, "bounds", b);
      } else {
        json_object_set_new(e, "replicated", json_true());
      }
      json_array_append_new(ps, e);
    }
    json_object_set_new(l, "params", ps);
    json_array_append_new(layouts, l);
  }
  json_object_set_new(s, "layouts", layouts);
  return s;
}

void gen_area_sharded(gen_ctx *g)
{
  /* shapes of the Muon matrices (0-terminated), a (32,) AdamW bias or not,
   * steps, the scheme; structured gradients unless random */
  static const struct {
    const char *what;
    size_t sh[6][2];
    int bias, steps, sorted, random, nesterov;
    int missing; /* 1 + the index of the matrix without a gradient at step 2 (0: none) */
    double wd;
    int round_trip; /* roundTripAfter */
  } S[] = {
    {"three matrices of different shapes, two steps: sorted by size, padded to the world size", {{8, 32}, {16, 32}, {32, 8}}, 1, 2, 1, 0, 1, 0, 0.0, 0},
    {"two equal (16, 32) matrices and an (8, 16): ranks must agree on the order of equal shapes", {{16, 32}, {8, 16}, {16, 32}}, 0, 2, 1, 0, 1, 0, 0.0, 0},
    {"five matrices, three steps, weight decay 0.1: more matrices than ranks", {{16, 32}, {8, 16}, {16, 8}, {4, 16}, {16, 32}}, 1, 3, 1, 0, 1, 0, 0.1, 0},
    {"one matrix: at world size 4 three ranks own nothing", {{16, 32}}, 1, 2, 1, 0, 1, 0, 0.0, 0},
    {"three matrices, the second without a gradient at step 2: its owner skips it (no zero fill)", {{16, 32}, {8, 32}, {32, 16}}, 0, 3, 1, 0, 1, 2, 0.0, 0},
    {"four equal (16, 32) matrices without Nesterov: as many as ranks at world size 4", {{16, 32}, {16, 32}, {16, 32}, {16, 32}}, 0, 2, 1, 0, 0, 0, 0.01, 0},
    {"three matrices owned round robin in the case's order, with a bias", {{8, 32}, {32, 8}, {16, 16}}, 1, 2, 0, 0, 1, 0, 0.0, 0},
    {"four matrices round robin, weight decay 0.05, three steps", {{16, 32}, {16, 32}, {8, 16}, {16, 8}}, 0, 3, 0, 0, 1, 0, 0.05, 0},
    {"three random (16, 24) / (24, 16) matrices sorted by size (bf16 judged on the update)", {{16, 24}, {24, 16}, {16, 24}}, 1, 2, 1, 1, 1, 0, 0.0, 0},
    /* added in vector release 2026.12.30 (a break-test's finding): case 5's matrix without a gradient is last in
     * the sorted order, so a port that deals the owners among the matrices with a gradient passed it */
    {"three matrices, the largest without a gradient at step 2: its owner skips it and no other owner changes",
     {{32, 16}, {16, 16}, {8, 16}}, 0, 3, 1, 0, 1, 1, 0.0, 0},
    {"three matrices owned round robin, a checkpoint saved and loaded after step 1 (each rank's own state): the resumed "
     "run equals the unbroken one", {{16, 32}, {8, 16}, {16, 8}}, 1, 3, 0, 0, 1, 0, 0.02, 1},
  };
  gen_group(g, "step");
  for (size_t k = 0; k < sizeof S / sizeof S[0]; k++) {
    gen_step_case c;
    char comment[256];
    muonref_options o = S[k].random ? base(g, 0.02, S[k].wd) : base_s(g, 0.02, S[k].wd);
    o.nesterov = S[k].nesterov;
    snprintf(comment, sizeof comment, "%s (%s)", S[k].what, S[k].sorted ? "sorted by size" : "round robin");
    begin(&c, comment, &o);
    int idx[6], n = 0;
    for (; n < 6 && S[k].sh[n][0]; n++)
      idx[n] = param(g, &c, "w", shape2(S[k].sh[n][0], S[k].sh[n][1]), 0);
    int b = S[k].bias ? param(g, &c, "bias", (muonref_shape){1, {32}}, 0) : -1;
    for (int s = 0; s < S[k].steps; s++) {
      for (int i = 0; i < n; i++) {
        if (s == 1 && i + 1 == S[k].missing)
          continue;
        if (S[k].random)
          grad_normal(g, &c, s, idx[i], 1.0);
        else
          grad_structured(g, &c, s, idx[i], -s);
      }
      if (b >= 0)
        grad_normal(g, &c, s, b, 1.0);
    }
    c.round_trip_after = S[k].round_trip;
    flags(&c, "Sharded", S[k].sorted ? "SortedBySize" : "RoundRobin",
          S[k].missing ? "MissingGradient" : S[k].round_trip ? "StateRoundTrip" : NULL);
    c.sharding = sharding_owner(&c, S[k].sorted);
    gen_add_step(g, &c);
  }
}

void gen_area_sharded_tp(gen_ctx *g)
{
  static const struct {
    const char *what;
    size_t sh[3][2];
    int bias, steps, dim, random, nesterov;
    double wd;
    int round_trip; /* roundTripAfter */
  } S[] = {
    /* random gradients where rows are split: the rows of a structured
     * gradient are orthogonal, so orthogonalising row blocks alone would
     * change little */
    {"a random (16, 32) matrix split by rows, with a replicated bias, two steps", {{16, 32}}, 1, 2, 0, 1, 1, 0.0, 0},
    {"a (16, 32) matrix split by columns, two steps", {{16, 32}}, 0, 2, 1, 0, 1, 0.0, 0},
    {"random (10, 32) and (32, 8) matrices split by rows, unevenly at world size 4 (3, 3, 2, 2)", {{10, 32}, {32, 8}}, 0, 2, 0, 1, 1, 0.0, 0},
    {"a tall (16, 10) matrix split by columns unevenly, weight decay 0.1, three steps", {{16, 10}}, 1, 3, 1, 0, 1, 0.1, 0},
    {"a random (16, 24) matrix split by rows (bf16 judged on the update)", {{16, 24}}, 0, 2, 0, 1, 1, 0.0, 0},
    {"two matrices (8, 32) and (32, 16) split by columns, without Nesterov, three steps", {{8, 32}, {32, 16}}, 0, 3, 1, 0, 0, 0.01, 0},
    /* added in vector release 2026.12.30 */
    {"a random (16, 32) matrix split by rows, a checkpoint saved and loaded after step 1 (each rank its slice's state): "
     "the resumed run equals the unbroken one", {{16, 32}}, 0, 3, 0, 1, 1, 0.0, 1},
  };
  gen_group(g, "step");
  for (size_t k = 0; k < sizeof S / sizeof S[0]; k++) {
    gen_step_case c;
    muonref_options o = S[k].random ? base(g, 0.02, S[k].wd) : base_s(g, 0.02, S[k].wd);
    o.nesterov = S[k].nesterov;
    begin(&c, S[k].what, &o);
    int idx[3], n = 0;
    for (; n < 3 && S[k].sh[n][0]; n++)
      idx[n] = param(g, &c, "w", shape2(S[k].sh[n][0], S[k].sh[n][1]), 0);
    int b = S[k].bias ? param(g, &c, "bias", (muonref_shape){1, {16}}, 0) : -1;
    for (int s = 0; s < S[k].steps; s++) {
      for (int i = 0; i < n; i++) {
        if (S[k].random)
          grad_normal(g, &c, s, idx[i], 1.0);
        else
          grad_structured(g, &c, s, idx[i], -s);
      }
      if (b >= 0)
        grad_normal(g, &c, s, b, 1.0);
    }
    c.round_trip_after = S[k].round_trip;
    flags(&c, "Sharded", S[k].dim ? "ColSplit" : "RowSplit", S[k].round_trip ? "StateRoundTrip" : NULL);
    c.sharding = sharding_split(&c, S[k].dim);
    gen_add_step(g, &c);
  }
}

/* Gradients of the (rows, cols) Muon parameter i of c (its group's options,
 * no decay of the argument: momentum and Nesterov only) for `steps` steps
 * whose Newton-Schulz input U (the Nesterov input, or the momentum) is at
 * every step diag(t) H with H Sylvester Hadamard rows and targets t of at
 * most three significant bits (1, 1.25, 1.5, 1.75 times 2^-(k mod 2) 2^-s):
 * each gradient row solves U = t for the profile's momentum and Nesterov
 * coefficients (core/plan.c) given the binary32 buffer, so U lies within a
 * few binary32 ulps of t, its bf16 cast is t exactly for any port
 * (ref/step_exact.c bf16_cast_robust), every sum of squares and product of
 * the iteration is exact in binary32, and the bf16 step is exactly defined
 * (spec/vectors.md 5.2) whatever momentum factor the profile defaults to. */
static void grad_targets(gen_step_case *c, int i, int steps)
{
  static const double T[] = {1.0, 1.5, 1.25, 1.75};
  size_t rows = c->shapes[i].dims[0], cols = numel(c, i) / rows;
  int tr = rows > cols;
  size_t m = tr ? cols : rows, n = tr ? rows : cols;
  muonref_route r = {1, rows, cols, rows * cols, 1, rows, cols, 0, 0, 0, 0.0};
  float d[64];
  double buf[64] = {0}; /* the binary32 buffer's magnitude, per row (every element of a row is +-it) */
  for (int s = 0; s < steps && m <= 64; s++) {
    muonref_muon_plan pl;
    muonref_options o = c->options[c->group_of[i]];
    muonref_muon_plan_make(&o, &r, &pl);
    muonref_muon_plan_correct(&o, s + 1, &pl); /* optax's bias-corrected input */
    for (size_t k = 0; k < m; k++) {
      double t = ldexp(T[k % 4], -(int)(k / 4 % 2) - s);
      double coef = pl.nesterov ? pl.in_grad + pl.in_mom * pl.mom_grad : pl.mom_grad;
      double rest = (pl.nesterov ? pl.in_mom : 1.0) * pl.mom_keep * buf[k];
      d[k] = (float)((t - rest) / coef);
      buf[k] = (float)(pl.mom_keep * buf[k] + pl.mom_grad * d[k]);
    }
    c->grads[s][i] = gen_structured(m, n, d, tr);
    if (s >= c->n_steps)
      c->n_steps = s + 1;
  }
}

/* The AdamW eps default observed (vector release 2026.12.4): gradients of
 * N(0, 1e-16) on AdamW's parameters make sqrt(v_hat) of the order of the
 * defaults in the field (1e-10 keller, 1e-8 nemo, moonlight, optax, 1e-7
 * keras), so the eps moves each AdamW element's update by a large fraction
 * of itself; with N(0, 1) gradients (every other defaults case) it moves it
 * by about eps, far below a binary32 ulp of the parameter, and a Keller copy
 * defaulting to eps 1e-8 passed every case.  After the other defaults cases,
 * so that their inputs stay; none for a profile with no AdamW (route rule
 * two_d_only: torch.optim.Muon). */
static void defaults_adam_eps(gen_ctx *g)
{
  if (defaults(g).route_rule == MUONREF_ROUTE_TWO_D_ONLY)
    return;
  gen_group(g, "step");
  gen_step_case c;
  muonref_options o = defaults(g);
  begin(&c, "no options: a (16, 16) Muon matrix beside a bias (32,) and an embedding-like bias (64,) whose gradients "
            "are about 1e-8, two steps: the default AdamW eps, which is of the order of sqrt(v)", &o);
  c.defaults_only = 1;
  int a = param(g, &c, "square", shape2(16, 16), 0);
  int b = param(g, &c, "bias", (muonref_shape){1, {32}}, 0);
  int e = param(g, &c, "embed_bias", (muonref_shape){1, {64}}, 0);
  for (int s = 0; s < 2; s++) {
    grad_normal(g, &c, s, a, 1.0);
    grad_normal(g, &c, s, b, 1e-8);
    grad_normal(g, &c, s, e, 1e-8);
  }
  flags(&c, "Defaults", "AdamW", "AdamEps");
  gen_add_step(g, &c);
}

/* ---- defaults: cases that give no options ----
 * Judged against the profile's own constructor defaults (its record, spec/profiles/NAME.json):
 * a port whose default differs from its profile's (Nesterov, lr, weight
 * decay, betas, eps, coefficients) fails here although every case that
 * states its options passes. */
void gen_area_defaults(gen_ctx *g)
{
  gen_group(g, "step");
  static const struct { const char *what; int steps, with_bias, zero_mid; } D[] = {
    {"no options: a tall (32, 8) and a wide (8, 32) Muon matrix and a bias, three steps", 3, 1, 0},
    {"no options: a square (16, 16) Muon matrix, two steps", 2, 0, 0},
    {"no options: three steps, the middle one with zero gradients (the decay alone)", 3, 1, 1},
    {"no options: one step on a (64, 16) matrix and an embedding-like bias (64,)", 1, 1, 0},
  };
  for (size_t k = 0; k < sizeof D / sizeof D[0]; k++) {
    gen_step_case c;
    muonref_options o = defaults(g);
    begin(&c, D[k].what, &o);
    c.defaults_only = 1;
    int a = k == 1 ? param(g, &c, "square", shape2(16, 16), 0) : k == 3 ? param(g, &c, "proj", shape2(64, 16), 0)
                                                                     : param(g, &c, "tall", shape2(32, 8), 0);
    int w = k == 0 || k == 2 ? param(g, &c, "wide", shape2(8, 32), 0) : -1;
    int b = D[k].with_bias ? param(g, &c, "bias", (muonref_shape){1, {k == 3 ? 64u : 32u}}, 0) : -1;
    for (int s = 0; s < D[k].steps; s++) {
      int zero = D[k].zero_mid && s == 1;
      if (zero)
        grad_zero(&c, s, a);
      else
        grad_normal(g, &c, s, a, 1.0);
      if (w >= 0)
        zero ? grad_zero(&c, s, w) : grad_normal(g, &c, s, w, 1.0);
      if (b >= 0)
        zero ? grad_zero(&c, s, b) : grad_normal(g, &c, s, b, 1.0);
    }
    flags(&c, "Defaults", D[k].zero_mid ? "ZeroGradient" : NULL, NULL);
    gen_add_step(g, &c);
  }
  /* The defaults observed bit for bit (issue 22, item 4c): zero-initialised
   * parameters, so that the update is not lost in the rounding of p (a
   * one-digit typo in a coefficient, 3.4445 -> 3.4454, moves the exact
   * iterate by about 2e-3 of an element, 0.26 % in norm: below the bf16
   * noise, far above a binary32 ulp of alpha O), and structured gradients,
   * on which the bf16 result is exactly defined (spec/vectors.md 5.2;
   * grad_targets: with the profile's momentum factor, not a dyadic one): the
   * default coefficients, eps, momentum, Nesterov, scale and lr enter a
   * Bf16Exact expectation, judged element for element in bf16 and in fp32. */
  static const struct { const char *what; size_t rows, cols; int steps; } E[] = {
    {"no options, zero-initialised: a wide (8, 32) Muon matrix, two steps of structured gradients: the default "
     "Newton-Schulz coefficients, eps, momentum and lr bit for bit", 8, 32, 2},
    {"no options, zero-initialised: a tall (32, 8) Muon matrix, one step of a structured gradient: the default "
     "Newton-Schulz coefficients, eps, scale and lr bit for bit", 32, 8, 1},
  };
  for (size_t k = 0; k < sizeof E / sizeof E[0]; k++) {
    gen_step_case c;
    muonref_options o = defaults(g);
    begin(&c, E[k].what, &o);
    c.defaults_only = 1;
    int a = param(g, &c, E[k].rows < E[k].cols ? "wide" : "tall", shape2(E[k].rows, E[k].cols), 0);
    memset(c.init[a], 0, numel(&c, a) * sizeof(float));
    grad_targets(&c, a, E[k].steps);
    flags(&c, "Defaults", "Structured", NULL);
    gen_add_step(g, &c);
  }
  /* The Newton-Schulz function as the driver calls it for this profile's
   * cases: where the adapter leaves the coefficients to the port (it passes
   * a preset name, or none) its default table is observed bit for bit; a
   * profile normalising in float32 before the bf16 cast (the record's
   * ns_format) has no exactly defined step above, so this case is its.
   * Which profiles these are is the records' (spec/profiles/), not a list
   * here. */
  gen_group(g, "ns");
  float d[64];
  gen_dyadic_scales(g, d, 8, 0);
  float *x = gen_structured(8, 32, d, 0);
  const char *nf[] = {"Defaults", "Structured", NULL};
  gen_add_ns(g, "ns", "no options: the Newton-Schulz function with the port's own default coefficients and eps on a "
             "structured (8, 32) input, bit for bit in bf16", nf, x, 8, 32, defaults(g).ns_steps);
  free(x);
  defaults_adam_eps(g);
}

/* ---- overflow: norms beyond fp16 and binary32, elements at bf16 infinity ----
 * spec/muon.md 7.3, spec/vectors.md 2.7.  One builder for every profile's
 * table: the options are the profile's (base, base_s), the inputs scaled
 * Hadamard matrices whose bf16 results are exactly defined. */

/* A step case with one Muon matrix of shape (rows, cols) whose gradient is
 * scale times Hadamard rows at each of `steps` steps, weight decay 0.1 so
 * that the decay shows beside a zero update. */
static void overflow_step(gen_ctx *g, const char *comment, size_t rows, size_t cols, float scale, int steps,
                          const char *flag)
{
  gen_step_case c;
  muonref_options o = base_s(g, 0.02, 0.1);
  o.clip_grad_norm = 0.0; /* see gen_area_overflow */
  begin(&c, comment, &o);
  int i = param(g, &c, "hidden", shape2(rows, cols), 0);
  for (int k = 0; k < steps; k++)
    grad_equal_scales(&c, k, i, scale);
  flags(&c, "Overflow", flag, NULL);
  gen_add_step(g, &c);
}

/* Elements in [0x7f7fc000, FLT_MAX] round to bf16 +Inf, and with Nesterov
 * (the profile's default) G + beta M leaves binary32 in every format: no
 * finite step is defined.  muonref refuses (ENUMERIC); NeMo runs and stores
 * NaN.  A run passes only when it stores a non-finite value: a finite one
 * means the port altered the gradient (clamped or dropped it).  No ns case:
 * in fp32 such an input has a finite result.  An EMA profile's Nesterov
 * input (1 - beta) G + beta M stays below bf16's largest value: the step is
 * defined there, and the case is not made (gen_area_overflow). */
static void overflow_bf16_infinity(gen_ctx *g)
{
  gen_group(g, "error");
  {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.1);
    o.nesterov = 1; /* every sum-form profile's default but dion's */
    begin(&c, "gradient elements between 0x7f7fc000 (3.3961e38, rounds to bf16 +Inf) and FLT_MAX, Nesterov: no finite step "
              "is defined; refusing (muonref: ENUMERIC) or storing a non-finite value (NeMo: NaN) pass, a finite result "
              "fails", &o);
    int a = param(g, &c, "hidden", shape2(8, 16), 0);
    grad_zero(&c, 0, a);
    union { uint32_t u; float f; } lo = {0x7f7fc000u}, hi = {0x7f7fffffu};
    for (size_t e = 0; e < numel(&c, a); e++)
      c.grads[0][a][e] = (e % 3 == 0 ? -1.0f : 1.0f) * (e % 2 ? hi.f : lo.f);
    c.error_status = "ENUMERIC";
    c.error_message = "Step for parameter 0 would overflow binary32: the Nesterov input at element 0 exceeds 3.40282e+38";
    c.result = "acceptable";
    c.error_any = 1;
    c.error_run_nonfinite = 1;
    flags(&c, "ErrorMessage", "Overflow", "Bf16Infinity");
    gen_add_step(g, &c);
  }
}

/* A Gaussian gradient of standard deviation 2^22 (elements up to about
 * 1.5e7, as a loss-scaled gradient not yet unscaled), one step: finite in
 * binary32 and bf16 with an ordinary sum of squares (about 2^53), and a
 * Newton-Schulz input beyond fp16's 65504 under every momentum form (the
 * EMA form's (1 - beta) G with beta 0.99 included), so that a port that
 * casts the input to fp16 before it normalises gets +Inf, then NaN or a
 * zero update, where normalising first (the fix of DeepSpeed PR #8533 and
 * openvpi/DiffSinger PR #301, bug-reports N02) gives the ordinary step.
 * The elements +-69632 of the first step case overflow fp16 in the
 * gradient but not in an EMA profile's momentum. */
static void overflow_fp16_input(gen_ctx *g)
{
  gen_group(g, "step");
  gen_step_case c;
  muonref_options o = base(g, 0.02, 0.1);
  o.clip_grad_norm = 0.0; /* see gen_area_overflow */
  begin(&c, "a random (8, 16) gradient of standard deviation 2^22 (a loss-scaled gradient): its Newton-Schulz input "
            "exceeds fp16's 65504 under any momentum; normalising before a cast to fp16 gives the ordinary step, "
            "casting first +Inf (bug-reports N02)", &o);
  int i = param(g, &c, "hidden", shape2(8, 16), 0);
  grad_normal(g, &c, 0, i, 0x1p22);
  flags(&c, "Overflow", "Fp16Range", NULL);
  gen_add_step(g, &c);
}

void gen_area_overflow(gen_ctx *g)
{
  /* 69632 = 1.0625 * 2^16: above fp16's largest finite value (65504), so a
   * port that computes in fp16 overflows; the sum of squares (about 2^41)
   * is far from binary32's limit, so there is no alternative outcome */
  const float FP16_OVER = 69632.0f;
  /* 1.375 * 2^66 ~ 1.01e20: each square (1.0e40) already overflows binary32 */
  const float HUGE_G = 0x1.6p66f;
  /* The step cases run without gradient clipping (megatron's clip_grad_norm
   * 0; no other profile clips): clipped, the Newton-Schulz input would be
   * small and nothing would overflow; and Megatron's float32 global norm of
   * such gradients overflows to +Inf itself (coefficient 0: every gradient
   * zeroed), which muonref's exact norm does not model (spec/muon.md 3.1) */
  gen_group(g, "step");
  overflow_step(g, "gradient elements +-69632 (beyond fp16's 65504), two steps: the ordinary step; a port computing in fp16 "
                "overflows", 16, 32, FP16_OVER, 2, "Fp16Range");
  overflow_step(g, "gradient elements +-1.01e20, two steps: the exact norm gives the full step; a binary32 norm overflows to "
                "+Inf and gives a zero Newton-Schulz output, so only the decay moves the parameter (both published)", 16,
                32, HUGE_G, 2, NULL);
  overflow_step(g, "a tall (32, 16) matrix with gradient elements +-1.01e20: both outcomes, on the transposed side", 32, 16,
                HUGE_G, 1, NULL);
  { /* an AdamW parameter beside it: its step must be the ordinary one in
       both outcomes */
    gen_step_case c;
    muonref_options o = base_s(g, 0.02, 0.1);
    o.clip_grad_norm = 0.0;
    begin(&c, "a matrix with gradient elements +-1.01e20 (both outcomes) beside a bias on AdamW with an ordinary gradient, "
              "whose step must be the same in both", &o);
    int a = param(g, &c, "huge", shape2(16, 32), 0), d = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    grad_equal_scales(&c, 0, a, HUGE_G);
    grad_normal(g, &c, 0, d, 1.0);
    flags(&c, "Overflow", NULL, NULL);
    gen_add_step(g, &c);
  }
  gen_group(g, "ns");
  {
    const char *f16[] = {"NewtonSchulz", "Overflow", "Fp16Range", NULL};
    const char *fno[] = {"NewtonSchulz", "Overflow", NULL};
    float d[16];
    for (int k = 0; k < 16; k++)
      d[k] = FP16_OVER;
    float *x = gen_structured(16, 32, d, 0);
    gen_add_ns(g, "ns", "input elements +-69632 (beyond fp16's 65504): the ordinary result", f16, x, 16, 32, 5);
    free(x);
    for (int k = 0; k < 16; k++)
      d[k] = HUGE_G;
    x = gen_structured(16, 32, d, 0);
    gen_add_ns(g, "ns", "input elements +-1.01e20: the exact norm gives the ordinary result, a binary32 norm the zero matrix "
               "(both published)", fno, x, 16, 32, 5);
    free(x);
  }
  if (defaults(g).momentum_form == MUONREF_MOMENTUM_SUM)
    overflow_bf16_infinity(g);
  overflow_fp16_input(g);
}


/* ---- conv: Muon parameters of more than two dimensions (spec/muon.md 2, 5) ----
 * Which matrices a port orthogonalises (conv_mode: the flattened (d0,
 * rest) matrix, or each trailing (d[-2], d[-1]) matrix of a batch) and the
 * shape its scale factor comes from (scale_shape), on random full-rank
 * gradients (Bf16Noise: judged on the update, so that PyTorch 1.13 CPU's
 * bf16 effects cannot change a verdict), plus a missing gradient among
 * random ones (missing_grad).  The profiles whose port takes N-D Muon
 * parameters run it (the record's "areas"). */
/* timm's conv_mode "batched" (conv_mode spatial): one (d0, d1) matrix per
 * position of the trailing dimensions, each orthogonalised on its own, the
 * scale factor from (d0, d1) and, with normalize_spatial, times S^-1/2
 * (timm/optim/muon.py @aa4b5850 reshape_for_muon, _single_tensor_muon). */
static void conv_spatial(gen_ctx *g)
{
  static const struct { const char *what; muonref_shape s; int normalize, force, scale_eps; } C[] = {
    {"conv_mode batched: a conv (8, 4, 3, 3) forced to Muon is nine (8, 4) matrices, one per kernel position; "
     "normalize_spatial: scale times 9^-1/2", {4, {8, 4, 3, 3}}, 1, 1, 0},
    {"conv_mode batched without normalize_spatial: the same conv (8, 4, 3, 3), the scale of one (8, 4) matrix",
     {4, {8, 4, 3, 3}}, 0, 1, 0},
    {"conv_mode batched: a conv (16, 4, 2, 1) is two tall (16, 4) matrices, each orthogonalised transposed; "
     "normalize_spatial: times 2^-1/2", {4, {16, 4, 2, 1}}, 1, 1, 0},
    {"conv_mode batched: a 3-D (6, 4, 5) tensor is five (6, 4) matrices (its last dimension is the position)",
     {3, {6, 4, 5}}, 1, 1, 0},
    {"conv_mode batched: a 1x1 conv (12, 8, 1, 1) is one (12, 8) matrix; normalize_spatial multiplies by 1^-1/2 = 1",
     {4, {12, 8, 1, 1}}, 1, 1, 0},
    {"conv_mode batched on a conv (32, 8, 3, 3) routed by timm's heuristic (flattened (32, 72): Muon): nine (32, 8) "
     "matrices", {4, {32, 8, 3, 3}}, 1, 0, 0},
    {"conv_mode batched with scale_eps: each (8, 4) matrix of a conv (8, 4, 3, 3) takes eps sqrt(4/8) added",
     {4, {8, 4, 3, 3}}, 1, 1, 1},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.1);
    o.use_muon = C[k].force ? MUONREF_USE_MUON_TRUE : MUONREF_USE_MUON_AUTO;
    o.conv_mode = MUONREF_CONV_SPATIAL;
    o.normalize_spatial = C[k].normalize;
    if (C[k].scale_eps)
      o.eps_mode = MUONREF_EPS_ADD_SCALED;
    begin(&c, C[k].what, &o);
    int i = param(g, &c, "filter", C[k].s, 0);
    for (int s = 0; s < 2; s++)
      grad_normal(g, &c, s, i, 1.0);
    flags(&c, "NdMuon", "ConvSpatial", C[k].normalize ? "NormalizeSpatial" : NULL);
    gen_add_step(g, &c);
  }
}

void gen_area_conv(gen_ctx *g)
{
  gen_group(g, "step");
  static const struct { const char *what; muonref_shape s; } C[] = {
    {"a 1x1 conv (64, 16, 1, 1) forced to Muon: flattened (64, 16); its scale from (64, 16) or from the kernel (1, 1)",
     {4, {64, 16, 1, 1}}},
    {"a conv (8, 4, 3, 1) with a non-square kernel forced to Muon: its scale from (8, 12) or from the kernel (3, 1)",
     {4, {8, 4, 3, 1}}},
    {"a 3-D (3, 8, 16) tensor forced to Muon: one (3, 128) matrix or a batch of three (8, 16) matrices",
     {3, {3, 8, 16}}},
    {"a 3-D (2, 16, 8) tensor forced to Muon: one (2, 128) matrix or a batch of two tall (16, 8) matrices",
     {3, {2, 16, 8}}},
    {"a 5-D (2, 2, 4, 4, 8) tensor forced to Muon: one (2, 128) matrix or a batch of sixteen (4, 8) matrices",
     {5, {2, 2, 4, 4, 8}}},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.1);
    o.use_muon = MUONREF_USE_MUON_TRUE;
    begin(&c, C[k].what, &o);
    int i = param(g, &c, "filter", C[k].s, 0);
    for (int s = 0; s < 2; s++)
      grad_normal(g, &c, s, i, 1.0);
    flags(&c, "NdMuon", k < 2 ? "ConvScale" : NULL, NULL);
    gen_add_step(g, &c);
  }
  {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.1);
    begin(&c, "a wide (16, 32) matrix and a bias with random gradients at steps 1 and 3 and none at step 2", &o);
    int a = param(g, &c, "wide", shape2(16, 32), 0), b = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    for (int s = 0; s < 3; s += 2)
      grad_normal(g, &c, s, a, 1.0), grad_normal(g, &c, s, b, 1.0);
    flags(&c, "MissingGradient", NULL, NULL);
    gen_add_step(g, &c);
  }
  if (has_key_kind(g, MUONREF_KEY_CONV_MODE_TIMM))
    conv_spatial(g);
}

/* ---- schedule: options changed between steps (format v2, spec/vectors.md 2.8) ----
 * A scheduler sets lr, weight_decay, momentum (and an AdamW group's betas)
 * in optimizer.param_groups before a step; the step and every later one
 * use the new values, and the state (momentum buffer, moments, step
 * counts) is kept.  Each case states the values of every step. */

/* Starts the schedule of c: every step runs with its groups' options. */
static void sched_begin(gen_step_case *c)
{
  c->has_schedule = 1;
  for (int k = 0; k < GEN_MAX_STEPS; k++)
    for (int gi = 0; gi < c->n_groups; gi++)
      c->sched[k][gi] = (gen_sched){c->options[gi].lr, c->options[gi].momentum, c->options[gi].weight_decay,
                                    c->options[gi].adam_beta1, c->options[gi].adam_beta2};
}

/* Group gi's value of `field` (an offset into gen_sched) is v from step k on. */
#define SCHED_SET(c, k, gi, field, v)                                                                                 \
  do {                                                                                                                \
    for (int k_ = (k); k_ < GEN_MAX_STEPS; k_++)                                                                      \
      (c)->sched[k_][gi].field = (v);                                                                                 \
  } while (0)

void gen_area_schedule(gen_ctx *g)
{
  gen_group(g, "step");
  {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.1);
    begin(&c, "lr warm-up 0.005, 0.01, 0.02 over the first three steps (set before each), then decayed to 0.01; "
              "a wide (16, 32) matrix and a bias, weight decay 0.1 (decay 1 - lr wd follows the lr)", &o);
    int w = param(g, &c, "wide", shape2(16, 32), 0), b = param(g, &c, "bias", (muonref_shape){1, {32}}, 0);
    for (int k = 0; k < 4; k++)
      grad_normal(g, &c, k, w, 1.0), grad_normal(g, &c, k, b, 1.0);
    sched_begin(&c);
    SCHED_SET(&c, 0, 0, lr, 0.005);
    SCHED_SET(&c, 1, 0, lr, 0.01);
    SCHED_SET(&c, 2, 0, lr, 0.02);
    SCHED_SET(&c, 3, 0, lr, 0.01);
    flags(&c, "Schedule", "WeightDecay", NULL);
    gen_add_step(g, &c);
  }
  {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.1);
    begin(&c, "lr decayed 0.02, 0.01, then 0 at step 3 (the parameters stay; the momentum buffer, the AdamW moments "
              "and the step counts still advance), then 0.01 again; a tall (32, 16) matrix and a bias, weight decay 0.1", &o);
    int t = param(g, &c, "tall", shape2(32, 16), 0), b = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    for (int k = 0; k < 4; k++)
      grad_normal(g, &c, k, t, 1.0), grad_normal(g, &c, k, b, 1.0);
    sched_begin(&c);
    SCHED_SET(&c, 1, 0, lr, 0.01);
    SCHED_SET(&c, 2, 0, lr, 0.0);
    SCHED_SET(&c, 3, 0, lr, 0.01);
    flags(&c, "Schedule", "WeightDecay", NULL);
    gen_add_step(g, &c);
  }
  {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0);
    begin(&c, "weight decay 0 for two steps, then 0.1, then 0.05; the bias has no gradient at step 3 (it is neither "
              "decayed nor stepped there); a (16, 16) matrix and a bias", &o);
    int s = param(g, &c, "square", shape2(16, 16), 0), b = param(g, &c, "bias", (muonref_shape){1, {16}}, 0);
    for (int k = 0; k < 4; k++) {
      grad_normal(g, &c, k, s, 1.0);
      if (k != 2)
        grad_normal(g, &c, k, b, 1.0);
    }
    sched_begin(&c);
    SCHED_SET(&c, 2, 0, weight_decay, 0.1);
    SCHED_SET(&c, 3, 0, weight_decay, 0.05);
    flags(&c, "Schedule", "WeightDecay", "MissingGradient");
    gen_add_step(g, &c);
  }
  {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0);
    begin(&c, "momentum 0.95 for two steps, then 0.5, then 0.9: the buffer is kept and the new beta multiplies it "
              "(Nesterov input G + beta M with the new beta); a tall (24, 8) and a wide (8, 24) matrix", &o);
    int t = param(g, &c, "tall", shape2(24, 8), 0), w = param(g, &c, "wide", shape2(8, 24), 0);
    for (int k = 0; k < 4; k++)
      grad_normal(g, &c, k, t, 1.0), grad_normal(g, &c, k, w, 1.0);
    sched_begin(&c);
    SCHED_SET(&c, 2, 0, momentum, 0.5);
    SCHED_SET(&c, 3, 0, momentum, 0.9);
    flags(&c, "Schedule", "ScheduleMomentum", NULL);
    gen_add_step(g, &c);
  }
  {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.05);
    begin(&c, "two groups scheduled apart: the first (a (16, 32) matrix) decays its lr 0.02, 0.01, 0.005 and its "
              "momentum to 0.9; the second (a bias and a (16, 8) matrix forced to AdamW) warms its lr up 0.01, 0.02, "
              "0.04, changes its weight decay to 0.1 and its AdamW betas to (0.8, 0.99)", &o);
    int w = param(g, &c, "hidden", shape2(16, 32), 0);
    c.n_groups = 2;
    c.options[1] = base(g, 0.01, 0.05);
    c.options[1].use_muon = MUONREF_USE_MUON_FALSE;
    int b = param(g, &c, "bias", (muonref_shape){1, {16}}, 1), e = param(g, &c, "emb", shape2(16, 8), 1);
    for (int k = 0; k < 3; k++)
      grad_normal(g, &c, k, w, 1.0), grad_normal(g, &c, k, b, 1.0), grad_normal(g, &c, k, e, 1.0);
    sched_begin(&c);
    SCHED_SET(&c, 1, 0, lr, 0.01);
    SCHED_SET(&c, 2, 0, lr, 0.005);
    SCHED_SET(&c, 2, 0, momentum, 0.9);
    SCHED_SET(&c, 1, 1, lr, 0.02);
    SCHED_SET(&c, 2, 1, lr, 0.04);
    SCHED_SET(&c, 1, 1, weight_decay, 0.1);
    SCHED_SET(&c, 2, 1, adam_beta1, 0.8);
    SCHED_SET(&c, 2, 1, adam_beta2, 0.99);
    flags(&c, "Schedule", "ScheduleMomentum", "AdamW");
    gen_add_step(g, &c);
  }
  {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0);
    begin(&c, "AdamW betas (0.9, 0.95) changed to (0.5, 0.999) before step 3 (bias correction 1 - beta^t with the new "
              "betas and the kept step count) and lr 0.02 to 0.01 before step 2; a (8, 16) matrix and a bias", &o);
    int m = param(g, &c, "hidden", shape2(8, 16), 0), b = param(g, &c, "bias", (muonref_shape){1, {8}}, 0);
    for (int k = 0; k < 3; k++)
      grad_normal(g, &c, k, m, 1.0), grad_normal(g, &c, k, b, 1.0);
    sched_begin(&c);
    SCHED_SET(&c, 1, 0, lr, 0.01);
    SCHED_SET(&c, 2, 0, adam_beta1, 0.5);
    SCHED_SET(&c, 2, 0, adam_beta2, 0.999);
    flags(&c, "Schedule", "AdamW", NULL);
    gen_add_step(g, &c);
  }
}

/* ---- dtypes: bf16 parameters (issue 26; spec/vectors.md 2.1) ---- */

/* A bf16 parameter of shape s in group 0: N(0, 2^-18) values (std 2^-9) rounded to bf16,
 * below the size of one update (lr 0.02), so that each element moves by many of its
 * bf16 ulps and the storage allowance (one bf16 ulp of the largest element per rounding)
 * stays a few % of the update: the scale is still judged (spec/vectors.md 5.1). */
static int bf16_param(gen_ctx *g, gen_step_case *c, const char *name, muonref_shape s)
{
  int i = param(g, c, name, s, 0);
  for (size_t j = 0; j < numel(c, i); j++)
    c->init[i][j] = muonref_bf16_round(c->init[i][j] * 0x1p-9f);
  c->bf16[i] = 1;
  return i;
}

/* Step k's gradient of bf16 parameter i: N(0, 1) rounded to bf16. */
static void bf16_grad(gen_ctx *g, gen_step_case *c, int k, int i)
{
  grad_normal(g, c, k, i, 1.0);
  muonref_bf16_round_array(c->grads[k][i], numel(c, i));
}

/* A port whose first step refuses a bf16 parameter (the record's bf16_refusal: Emerging-Optimizers'
 * newton_schulz raises TypeError on a non-float32 input, spec/profiles/emerging.md 3): one bf16 matrix,
 * one step, refused with the port's message; a port that runs it fails. */
static void dtypes_refused(gen_ctx *g, const muonref_profile *prof)
{
  gen_group(g, "error");
  gen_step_case c;
  muonref_options o = base(g, 0.02, 0.0);
  begin(&c, "a bf16 parameter (8, 16) with a bf16 gradient: the port's first step refuses it", &o);
  int i = bf16_param(g, &c, "w", shape2(8, 16));
  bf16_grad(g, &c, 0, i);
  c.error_status = prof->bf16_refusal_status;
  c.error_message = prof->bf16_refusal_message;
  flags(&c, "Bf16Params", "ErrorMessage", NULL);
  gen_add_step(g, &c);
}

/* A checkpoint resumed in another dtype (issue 26 item 4; DeepSpeed #7746: "expected dtype
 * torch.float32 for `end`, but got dtype torch.bfloat16" on resuming in bf16): one step, the state
 * exported, the model converted to the other dtype (roundTripDtype, spec/vectors.md 2.1), the state
 * loaded into a fresh optimizer over it, two more steps with gradients of the new dtype.  PyTorch's
 * Optimizer.load_state_dict casts floating state to its parameter's dtype; a port whose state keeps
 * the dtype it was saved in meets gradients of the other.  With AdamW (`adamw`), a bias beside the
 * matrix, so that its moments are converted too. */
static void dtypes_resumed(gen_ctx *g, int adamw)
{
  static const struct { const char *to, *what[2]; } C[] = {
    {"bf16",
     {"a float32 matrix (8, 16), one step, its state loaded into the model converted to bf16, two bf16 steps "
      "(resume in bf16): the state becomes bf16 with its parameter",
      "a float32 matrix (8, 16) and a bias (16,) on AdamW, one step, their state loaded into the model converted "
      "to bf16, two bf16 steps (resume in bf16): the momentum and the moments become bf16 with their parameters"}},
    {"f32",
     {"a bf16 matrix (8, 16), one step, its state loaded into the model converted to float32, two float32 steps "
      "(a bf16 checkpoint resumed in float32): the state becomes float32 with its parameter",
      "a bf16 matrix (8, 16) and a bf16 bias (16,) on AdamW, one step, their state loaded into the model "
      "converted to float32, two float32 steps (a bf16 checkpoint resumed in float32): the momentum and the "
      "moments become float32 with their parameters"}}};
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0); /* the profile's nesterov: a port without the other runs it */
    begin(&c, C[k].what[adamw != 0], &o);
    int from_bf16 = !strcmp(C[k].to, "f32"), n = adamw ? 2 : 1;
    for (int j = 0; j < n; j++) { /* the size of bf16_param's, rounded only where created bf16 */
      int i = param(g, &c, j ? "bias" : "w", j ? (muonref_shape){1, {16}} : shape2(8, 16), 0);
      for (size_t e = 0; e < numel(&c, i); e++)
        c.init[i][e] = from_bf16 ? muonref_bf16_round(c.init[i][e] * 0x1p-9f) : c.init[i][e] * 0x1p-9f;
      c.bf16[i] = from_bf16;
    }
    c.round_trip_after = 1;
    c.round_trip_dtype = C[k].to;
    for (int s = 0; s < 3; s++)
      for (int i = 0; i < n; i++) {
        grad_normal(g, &c, s, i, 1.0);
        if ((s >= 1) != from_bf16) /* a step where the parameter is bf16 */
          muonref_bf16_round_array(c.grads[s][i], numel(&c, i));
      }
    flags(&c, "Bf16Params", "StateRoundTrip", adamw ? "AdamW" : NULL);
    gen_add_step(g, &c);
  }
}

/* Master weights (Paddle's multi_precision, issue 26 item 3; spec/muon.md 10): a bf16 matrix (and, with
 * AdamW, a bf16 bias) near 3 (values in [2.1, 3.9], a bf16 ulp of 2^-6), stepped six times with one
 * gradient at lr 0.04: most Muon updates stay below half a bf16 ulp, so a port that steps the bf16
 * parameter itself keeps most of the matrix's values while the float32 master moves by up to about
 * three ulps (the bias's AdamW steps, 0.04 each, round every step); its state has no master either.  No weight
 * decay: PyTorch multiplies a bf16 tensor by the factor 1 - lr wd rounded to bf16 (1.0 here), which a
 * port without master weights would add to the fault.  With `round_trip` the same six steps with the
 * state exported after step 3 and loaded into a fresh optimizer over the bf16 parameters (issue 26):
 * the master is float32 state and resumes as it was (Paddle keeps every state float32: paddle.md 6).
 * A port that loses it at the load and makes it anew from the bf16 parameter resumes from that
 * rounding (fault master_lost_on_load); one that loads it with torch's Optimizer.load_state_dict
 * unchanged gets it, and its other float32 state, cast to the parameter's bf16.
 * Written where the record has a key for master_weights, after every other case of the area (their
 * inputs stay), the round trip after the case without it (vector release 2026.12.32). */
static void dtypes_master(gen_ctx *g, int adamw, int round_trip)
{
  gen_step_case c;
  muonref_options o = base(g, 0.04, 0.0);
  o.master_weights = 1;
  if (round_trip)
    begin(&c, adamw ? "master weights (multi_precision) through a checkpoint: a bf16 matrix (8, 16) and a bf16 "
                      "bias (16,) near 3, six steps of one gradient at lr 0.04, the state exported after step 3 "
                      "and loaded into a fresh optimizer: the float32 masters resume as they were, not rounded to "
                      "their parameters' bf16"
                    : "master weights (multi_precision) through a checkpoint: a bf16 matrix (8, 16) near 3, six "
                      "steps of one gradient at lr 0.04, the state exported after step 3 and loaded into a fresh "
                      "optimizer: the float32 master resumes as it was, not rounded to its parameter's bf16", &o);
  else
    begin(&c, adamw ? "master weights (multi_precision): a bf16 matrix (8, 16) and a bf16 bias (16,) near 3, six "
                      "steps of one gradient at lr 0.04, most Muon steps below half a bf16 ulp: the float32 master "
                      "moves, the bf16 parameters are its rounding"
                    : "master weights (multi_precision): a bf16 matrix (8, 16) near 3, six steps of one gradient at "
                      "lr 0.04, most steps below half a bf16 ulp: the float32 master moves, the bf16 parameter is "
                      "its rounding", &o);
  int n = adamw ? 2 : 1;
  for (int j = 0; j < n; j++) {
    int i = param(g, &c, j ? "bias" : "w", j ? (muonref_shape){1, {16}} : shape2(8, 16), 0);
    for (size_t e = 0; e < numel(&c, i); e++)
      c.init[i][e] = muonref_bf16_round(3.0f + fmaxf(-0.9f, fminf(0.9f, 0.3f * c.init[i][e])));
    c.bf16[i] = 1;
    bf16_grad(g, &c, 0, i);
    for (int s = 1; s < 6; s++) {
      c.grads[s][i] = malloc(numel(&c, i) * sizeof(float));
      memcpy(c.grads[s][i], c.grads[0][i], numel(&c, i) * sizeof(float));
    }
  }
  c.n_steps = 6;
  c.round_trip_after = round_trip ? 3 : 0;
  flags(&c, "Bf16Params", "MasterWeights", adamw ? "AdamW" : NULL);
  if (round_trip)
    c.flags[adamw ? 3 : 2] = "StateRoundTrip";
  gen_add_step(g, &c);
}

/* Parameters, gradients and state in bf16, as a PyTorch model in bf16 holds them: the
 * port's momentum buffer is a bf16 tensor, and `grad.bfloat16()` returns the gradient or
 * the buffer itself, so a Newton-Schulz that normalises its input in place normalises
 * the buffer (torch.optim.Muon 098e03f with nesterov False, pytorch/pytorch PR #194664:
 * spec/profiles/torch.md 9) or p.grad.  Written for the profiles whose record lists the
 * area (their ports run bf16 parameters: docs/bf16-parameters.md); no weight decay (a
 * decay of lr wd = 2e-3 is below half a bf16 ulp of these parameters). */
void gen_area_dtypes(gen_ctx *g)
{
  const muonref_profile *prof = muonref_profile_get(g->profile);
  if (prof && prof->bf16_refusal_status) { /* the port refuses bf16 parameters: that is the area */
    dtypes_refused(g, prof);
    return;
  }
  gen_group(g, "step");
  static const struct { size_t rows, cols; int nesterov, steps, round_trip; const char *what; } C[] = {
    {8, 16, 0, 2, 0, "bf16 parameter, gradients and momentum, nesterov False, two steps on (8, 16): the buffer "
                     "is the Newton-Schulz input, and a port that normalises it in place stores a buffer of norm 1"},
    {16, 8, 1, 2, 0, "bf16 parameter, gradients and momentum, nesterov True, two steps on (16, 8): p.grad and the "
                     "buffer stay bf16, the Nesterov input is a new tensor"},
    {8, 16, 1, 3, 2, "bf16 parameter and state exported after step 2 and loaded into a fresh optimizer, three "
                     "steps on (8, 16): the state stays bf16 through the round trip"}};
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0);
    o.nesterov = C[k].nesterov;
    begin(&c, C[k].what, &o);
    int i = bf16_param(g, &c, "w", shape2(C[k].rows, C[k].cols));
    for (int s = 0; s < C[k].steps; s++)
      bf16_grad(g, &c, s, i);
    c.round_trip_after = C[k].round_trip;
    flags(&c, "Bf16Params", C[k].nesterov ? "Nesterov" : "NoNesterov", C[k].round_trip ? "StateRoundTrip" : NULL);
    gen_add_step(g, &c);
  }
  /* a bf16 matrix and a bf16 bias: the bias takes AdamW, whose moments the port keeps in bf16 too (keller,
   * moonlight, timm: zeros_like(p)); where AdamW is not the port's (torch), the bias is left out and the case
   * is #1's kind again, so it is written only where the profile has the area adamw */
  if (gen_profile_has_area(prof, "adamw")) {
    gen_step_case c;
    muonref_options o = base(g, 0.02, 0.0);
    begin(&c, "a bf16 matrix (8, 16) and a bf16 bias (16,), two steps: the bias takes AdamW, its moments stored "
              "in bf16", &o);
    int w = bf16_param(g, &c, "w", shape2(8, 16)), b = bf16_param(g, &c, "bias", (muonref_shape){1, {16}});
    for (int s = 0; s < 2; s++)
      bf16_grad(g, &c, s, w), bf16_grad(g, &c, s, b);
    flags(&c, "Bf16Params", "AdamW", NULL);
    gen_add_step(g, &c);
  }
  dtypes_resumed(g, gen_profile_has_area(prof, "adamw"));
  if (has_field_key(g, offsetof(muonref_options, master_weights))) {
    dtypes_master(g, gen_profile_has_area(prof, "adamw"), 0);
    dtypes_master(g, gen_profile_has_area(prof, "adamw"), 1);
  }
}
