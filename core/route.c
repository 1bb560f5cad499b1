/* muonref: routing between the Muon update and the AdamW fallback (see
 * route.h; rule from the NeMo seed, Muon.selects_muon and _muon_update). */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include "core/option_fields.h"
#include "core/plan.h"
#include "core/pyfmt.h"
#include "muonref/route.h"
#include "core/fail.h"
#include <ctype.h>
#include <string.h>

size_t muonref_shape_numel(const muonref_shape *s)
{
  if (!s || s->ndim < 0 || s->ndim > MUONREF_MAX_NDIM)
    return 0;
  size_t n = 1;
  for (int i = 0; i < s->ndim; i++)
    n *= s->dims[i];
  return n;
}

/* Whether the shape itself is acceptable, whatever the routing. */
static int check_shape(const muonref_shape *s, muonref_error *err)
{
  char b[256];
  size_t n = 1;
  if (s->ndim < 0 || s->ndim > MUONREF_MAX_NDIM)
    return muonref_fail(err, MUONREF_ESHAPE,
                        "Invalid parameter shape: %d dimensions, at most %d are supported", s->ndim,
                        MUONREF_MAX_NDIM);
  for (int i = 0; i < s->ndim; i++)
    if (s->dims[i] == 0)
      return muonref_fail(err, MUONREF_ESHAPE,
                          "Invalid parameter shape %s: every dimension must be at least 1",
                          muonref_py_shape(b, sizeof b, s->dims, s->ndim));
  for (int i = 0; i < s->ndim; i++) {
    if (s->dims[i] > MUONREF_MAX_NUMEL / n)
      return muonref_fail(err, MUONREF_ESHAPE, "Invalid parameter shape %s: more than %zu elements",
                          muonref_py_shape(b, sizeof b, s->dims, s->ndim), (size_t)MUONREF_MAX_NUMEL);
    n *= s->dims[i];
  }
  return MUONREF_OK;
}

/* timm's heuristic (huggingface/pytorch-image-models timm/optim/muon.py
 * @aa4b5850 _is_suitable_for_muon, min_dim_size = 4, max_aspect_ratio =
 * 128.0): at least two dimensions above 1, neither dims[0] nor dims[1] is
 * 1, and the matrix (dims[0], product of the rest) has both sides >= 4 and
 * an aspect ratio max / min <= 128 (the ratio in binary64, as Python's `/`). */
static int timm_suitable(const muonref_shape *s)
{
  int big = 0;
  for (int i = 0; i < s->ndim; i++)
    big += s->dims[i] > 1;
  if (s->ndim < 2 || big < 2 || s->dims[0] == 1 || s->dims[1] == 1)
    return 0;
  size_t rows = s->dims[0], cols = muonref_shape_numel(s) / s->dims[0];
  size_t lo = rows < cols ? rows : cols, hi = rows < cols ? cols : rows;
  return lo >= 4 && (double)hi / (double)lo <= 128.0;
}

/* Whether needle occurs in hay ignoring ASCII case (Python's
 * `needle.lower() in hay.lower()` on ASCII names). */
static int contains_ci(const char *hay, const char *needle)
{
  size_t n = strlen(needle);
  for (const char *h = hay; *h; h++) {
    size_t i = 0;
    while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n)
      return 1;
  }
  return n == 0;
}

/* Compiles pattern as a POSIX ERE into *re: MUONREF_OK, or MUONREF_EOPTION
 * "Invalid exclude pattern 'P': <regerror text>" (nothing to free). */
static int pattern_compile(regex_t *re, const char *pattern, muonref_error *err)
{
  int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
  if (rc == 0)
    return MUONREF_OK;
  char msg[128];
  regerror(rc, re, msg, sizeof msg);
  return muonref_fail(err, MUONREF_EOPTION, "Invalid exclude pattern '%s': %s", pattern, msg);
}

int muonref_pattern_check(const char *pattern, muonref_error *err)
{
  if (!pattern)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_pattern_check: pattern must not be NULL");
  regex_t re;
  int st = pattern_compile(&re, pattern, err);
  if (!st)
    regfree(&re);
  return st;
}

/* keras `re.search(pattern, name)`: a POSIX ERE match anywhere in name;
 * 1 or 0, -1 (err set) when the pattern does not compile. */
static int regex_search(const char *pattern, const char *name, muonref_error *err)
{
  regex_t re;
  if (pattern_compile(&re, pattern, err))
    return -1;
  int hit = regexec(&re, name, 0, NULL, 0) == 0;
  regfree(&re);
  return hit;
}

int muonref_name_excluded(const muonref_options *o, const char *name, muonref_error *err)
{
  if (!o)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_name_excluded: o must not be NULL"), -1;
  for (int i = 0; name && i < o->n_exclude_patterns && i < MUONREF_MAX_PATTERNS; i++) {
    int hit = o->pattern_match == MUONREF_MATCH_REGEX ? regex_search(o->exclude_patterns[i], name, err)
                                                      : contains_ci(name, o->exclude_patterns[i]);
    if (hit)
      return hit;
  }
  return 0;
}

/* keras _should_use_adamw (keras/src/optimizers/muon.py @3422977a), for a
 * 2-D parameter under NDIM_2 (and v3.10.0's, for a 2-D or 3-D one under
 * NDIM_2_3) with use_muon AUTO: 1 when its name excludes it from Muon, 0
 * when not, -1 on a pattern error (err set).  exclude_embeddings is 0 for
 * Paddle, whose rule is then muonref_name_excluded alone. */
static int name_rule_adamw(const muonref_options *o, const char *name, muonref_error *err)
{
  if (!name)
    return 0;
  if (o->exclude_embeddings && contains_ci(name, "embedding"))
    return 1;
  return muonref_name_excluded(o, name, err);
}

static int selects_muon(const muonref_options *o, const muonref_shape *s, const char *name)
{
  if (o->route_rule == MUONREF_ROUTE_TAGGED_2D) /* Megatron Core _is_nonlinear_or_embedding; TRUE as AUTO */
    return o->use_muon != MUONREF_USE_MUON_FALSE && s->ndim == 2;
  if (o->route_rule == MUONREF_ROUTE_MOMENTUM_1D) /* mlx Muon.apply_single: every parameter; TRUE as AUTO */
    return o->use_muon != MUONREF_USE_MUON_FALSE;
  if (o->use_muon != MUONREF_USE_MUON_AUTO)
    return o->use_muon == MUONREF_USE_MUON_TRUE;
  if (o->route_rule == MUONREF_ROUTE_TIMM)
    return timm_suitable(s);
  if (o->route_rule == MUONREF_ROUTE_NDIM_2) /* optax/contrib/_muon.py @2edbcbe2: `'muon' if x.ndim == 2 else 'adam'` */
    return s->ndim == 2;
  if (o->route_rule == MUONREF_ROUTE_NOT_1D) /* Megatron-LM muon.py 025c931a: `len(param.shape) != 1` */
    return s->ndim != 1;
  if (o->route_rule == MUONREF_ROUTE_NDIM_2_3) /* Paddle's _default_should_use_muon; keras v3.10 _should_use_adamw */
    return (s->ndim == 2 || s->ndim == 3) && name_rule_adamw(o, name, NULL) == 0; /* patterns validated */
  return s->ndim == 2 && s->dims[0] < (size_t)o->adam_dim_threshold &&
         s->dims[1] < (size_t)o->adam_dim_threshold;
}

/* Block-wise Newton-Schulz per head (ns_heads H > 1, spec/muon.md 7.5) on a
 * Muon parameter of shape s, in the order of microsoft/dion @0a059a4
 * megabatch_base.py: _resolve_num_heads (flatten), then _prepare_head_split
 * (two dimensions, H divides dim 0), with their messages. */
static int heads_check(const muonref_options *o, const muonref_shape *s, muonref_error *err)
{
  char b[256];
  if (o->conv_mode == MUONREF_CONV_FLATTEN &&
      (o->catalogue == MUONREF_CATALOGUE_DION || o->catalogue == MUONREF_CATALOGUE_NORMUON)) /* dion: any shape */
    return muonref_fail(err, MUONREF_ESHAPE, "num_heads > 1 is incompatible with flatten=True: flattening the "
                        "per-head 3D view collapses heads back into a single 2D matrix, defeating per-head "
                        "Newton-Schulz.");
  if (s->ndim != 2)
    return muonref_fail(err, MUONREF_ESHAPE, "num_heads is only supported for 2D parameters, got shape %s.",
                        muonref_py_shape(b, sizeof b, s->dims, s->ndim));
  if (s->dims[0] % (size_t)o->ns_heads)
    return muonref_fail(err, MUONREF_ESHAPE, "num_heads (%d) must divide dim 0 of the parameter (got shape %s).",
                        o->ns_heads, muonref_py_shape(b, sizeof b, s->dims, s->ndim));
  return MUONREF_OK;
}

/* Whether o's row blocks apply to a Muon parameter (spec/muon.md 7.6). */
static int split_on(const muonref_options *o)
{
  return o->n_ns_split > 0 && o->ns_split_mode != MUONREF_SPLIT_OFF;
}

static size_t split_sum(const muonref_options *o)
{
  size_t sum = 0;
  for (int k = 0; k < o->n_ns_split && k < MUONREF_MAX_SPLIT; k++)
    sum += (size_t)o->ns_split[k];
  return sum;
}

/* The row blocks of a Muon parameter of shape s, at the step: two
 * dimensions (dion's _validate_split_shape), then under ROWS sizes summing
 * to dim 0 (dion's message, the sizes as the tuple it keeps) and under
 * GROUPS dim 0 a multiple of their sum (Megatron-LM d98e8a64
 * TensorParallelMuon.orthogonalize: "Muon QKV split shape mismatch", the
 * shapes as its list). */
static int split_check(const muonref_options *o, const muonref_shape *s, muonref_error *err)
{
  char b[256], l[160]; /* the sizes as a Python list, "[3, 2, 2]"; dion's tuple is its inside in parentheses */
  muonref_option_field_text(o, muonref_option_field_named("ns_split"), l, sizeof l);
  int inner = (int)strlen(l) - 2;
  size_t sum = split_sum(o);
  int groups = o->ns_split_mode == MUONREF_SPLIT_GROUPS || o->ns_split_mode == MUONREF_SPLIT_STACKED;
  if (s->ndim != 2)
    return muonref_fail(err, MUONREF_ESHAPE, "split_sizes is only supported for 2D parameters, got shape %s.",
                        muonref_py_shape(b, sizeof b, s->dims, s->ndim));
  if (o->ns_split_mode == MUONREF_SPLIT_COLUMNS && s->dims[1] != sum) /* muonref's words: Paddle's split raises */
    return muonref_fail(err, MUONREF_ESHAPE, "split sizes %s must sum to dim 1 of the parameter (got shape %s)", l,
                        muonref_py_shape(b, sizeof b, s->dims, s->ndim));
  if (o->ns_split_mode == MUONREF_SPLIT_ROWS && s->dims[0] != sum)
    return muonref_fail(err, MUONREF_ESHAPE, "split_sizes (%.*s%s) must sum to dim 0 of the parameter (got shape %s).",
                        inner, l + 1, o->n_ns_split == 1 ? "," : "", muonref_py_shape(b, sizeof b, s->dims, s->ndim));
  if (groups && s->dims[0] % sum)
    return muonref_fail(err, MUONREF_ESHAPE, "Muon QKV split shape mismatch: grad_shape=%s, split_shapes=%s",
                        muonref_py_shape(b, sizeof b, s->dims, s->ndim), l);
  return MUONREF_OK;
}

/* The blocks of a Muon parameter of shape s (spec/muon.md 7.5, 7.6), at the step: heads, then row blocks; a
 * parameter mlx steps on its momentum alone (route_rule MOMENTUM_1D, fewer than two dimensions) has none. */
static int blocks_check(const muonref_options *o, const muonref_shape *s, muonref_error *err)
{
  int st;
  if (o->ns_heads > 1 && (st = heads_check(o, s, err)))
    return st;
  if (split_on(o) && !(o->route_rule == MUONREF_ROUTE_MOMENTUM_1D && s->ndim < 2))
    return split_check(o, s, err);
  return MUONREF_OK;
}

void muonref_route_block(const muonref_options *o, const muonref_route *r, size_t b, muonref_route *sub)
{
  int columns = o->ns_split_mode == MUONREF_SPLIT_COLUMNS;
  size_t periods = o->ns_split_mode == MUONREF_SPLIT_ROWS || columns ? 1 : r->rows / split_sum(o);
  size_t rows = columns ? r->rows : periods * (size_t)o->ns_split[b], cols = columns ? (size_t)o->ns_split[b] : r->cols;
  *sub = (muonref_route){1, rows, cols, rows * cols, 1, rows, cols, 0, 0, 0, 0.0};
  if (o->ns_split_scale != MUONREF_SPLIT_SCALE_OWN) /* the matrix's factor */
    sub->scale_rows = r->scale_rows, sub->scale_cols = r->scale_cols;
  if (o->ns_split_scale == MUONREF_SPLIT_SCALE_RATIO) /* dion's compute_split_lr_scales, binary64 */
    sub->scale_ratio = muonref_scale_factor(o->scale_mode, rows, cols) /
                       muonref_scale_factor(o->scale_mode, r->scale_rows, r->scale_cols);
}

/* The parameter's row of row i of a row block at offset off of size `size` (ROWS, GROUPS, STACKED). */
static size_t block_row(const muonref_options *o, const muonref_route *r, size_t off, size_t size, size_t i)
{
  if (o->ns_split_mode == MUONREF_SPLIT_STACKED)
    return r->rows / split_sum(o) * off + i;
  if (o->ns_split_mode != MUONREF_SPLIT_GROUPS)
    return off + i;
  return (i / size) * split_sum(o) + off + i % size;
}

size_t muonref_route_block_at(const muonref_options *o, const muonref_route *r, size_t b, size_t i)
{
  size_t off = 0;
  for (size_t k = 0; k < b; k++)
    off += (size_t)o->ns_split[k];
  if (o->ns_split_mode == MUONREF_SPLIT_COLUMNS)
    return i * r->cols + off;
  return block_row(o, r, off, (size_t)o->ns_split[b], i) * r->cols;
}

int muonref_route_param(const muonref_options *o, const muonref_shape *s, muonref_route *out,
                        muonref_error *err)
{
  return muonref_route_param_named(o, s, NULL, out, err);
}

int muonref_route_param_named(const muonref_options *o, const muonref_shape *s, const char *name,
                              muonref_route *out, muonref_error *err)
{
  char b[256];
  if (!o || !s || !out)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_route_param: o, s and out must not be NULL");
  int st = check_shape(s, err);
  if (st)
    return st;
  if (o->route_rule == MUONREF_ROUTE_TWO_D_ONLY) { /* torch.optim.Muon.__init__ (torch.md 1.1 rule 7) */
    if (s->ndim != 2 && o->catalogue == MUONREF_CATALOGUE_EMERGING)
      /* Emerging-Optimizers orthogonalized_optimizer.py @fd77292, at the step */
      return muonref_fail(err, MUONREF_ESHAPE, "Only 2D parameters are supported.");
    if (s->ndim != 2 && o->catalogue == MUONREF_CATALOGUE_EMERGING_ADAPTIVE) {
      /* Emerging-Optimizers adaptive_muon.py @fd77292: normuon's _init_group (169-172) before the
       * per-parameter check of step (286-287) */
      if (o->moment2 == MUONREF_MOMENT2_LONGER)
        return muonref_fail(err, MUONREF_ESHAPE, "AdaptiveMuon only supports 2D parameters, got shape %s",
                            muonref_py_shape(b, sizeof b, s->dims, s->ndim));
      return muonref_fail(err, MUONREF_ESHAPE, "AdaptiveMuon only supports 2D parameters");
    }
    if (s->ndim != 2)
      return muonref_fail(err, MUONREF_ESHAPE,
                          "Muon only supports 2D parameters whereas we found a parameter with size: %s",
                          muonref_py_torch_size(b, sizeof b, s->dims, s->ndim));
    if ((st = blocks_check(o, s, err)))
      return st;
    *out = (muonref_route){1, s->dims[0], s->dims[1], s->dims[0] * s->dims[1], 1, s->dims[0], s->dims[1], 0, 0, 0, 0.0};
    muonref_route_matrices(o, s, out); /* the same (rows, cols), or heads */
    return MUONREF_OK;
  }
  if (o->conv_mode == MUONREF_CONV_TWO_D && o->use_muon == MUONREF_USE_MUON_TRUE && s->ndim != 2)
    /* Moonlight: `assert p.ndim == 2, p.ndim` for every muon_params entry */
    return muonref_fail(err, MUONREF_ESHAPE, "use_muon=True needs exactly two dimensions, got shape %s",
                        muonref_py_shape(b, sizeof b, s->dims, s->ndim));
  if (o->route_rule == MUONREF_ROUTE_TIMM && o->use_muon == MUONREF_USE_MUON_TRUE && s->ndim < 2)
    /* timm's zeropower_via_newtonschulz: `assert G.ndim in (2, 3)`, at the step */
    return muonref_fail(err, MUONREF_ESHAPE, "Input must be 2D or 3D, got %dD. Flatten batch dims first.", s->ndim);
  if ((o->catalogue == MUONREF_CATALOGUE_DION || o->catalogue == MUONREF_CATALOGUE_NORMUON) &&
      o->use_muon == MUONREF_USE_MUON_TRUE && s->ndim < 2)
    /* microsoft/dion dion/muon.py @0a059a4 _create_ortho_tasks: `assert
     * all(p.ndim >= 2 ...), "Muon optimizer only supports matrix parameters."`;
     * dion/normuon.py the same with "NorMuon optimizer ..." */
    return muonref_fail(err, MUONREF_ESHAPE, "%s optimizer only supports matrix parameters.",
                        o->catalogue == MUONREF_CATALOGUE_NORMUON ? "NorMuon" : "Muon");
  if (o->route_rule == MUONREF_ROUTE_NDIM_2_3 && o->use_muon == MUONREF_USE_MUON_TRUE && s->ndim != 2 && s->ndim != 3)
    /* PaddlePaddle/Paddle python/paddle/optimizer/muon.py @98af0a0f
     * _zeropower_via_newtonschulz5: `raise ValueError(f"Input tensor X must
     * be 2D or 3D (batched), got {X.ndim}D")`, at the step */
    return muonref_fail(err, MUONREF_ESHAPE, "Input tensor X must be 2D or 3D (batched), got %dD", s->ndim);
  if (o->use_muon == MUONREF_USE_MUON_TRUE && s->ndim < 2 && o->route_rule != MUONREF_ROUTE_TAGGED_2D &&
      o->route_rule != MUONREF_ROUTE_MOMENTUM_1D)
    return muonref_fail(err, MUONREF_ESHAPE, "use_muon=True needs at least two dimensions, got shape %s",
                        muonref_py_shape(b, sizeof b, s->dims, s->ndim));
  if (o->route_rule == MUONREF_ROUTE_NOT_1D && selects_muon(o, s, name) && s->ndim != 2)
    /* Megatron-LM hands every untagged parameter that is not 1-D (0-D and
     * 3-D+ too) to Emerging-Optimizers' Muon, whose step refuses it
     * (orthogonalized_optimizer.py: `if grad.ndim != 2: raise
     * ValueError("Only 2D parameters are supported.")`) */
    return muonref_fail(err, MUONREF_ESHAPE, "Only 2D parameters are supported.");
  int muon = selects_muon(o, s, name);
  if (muon && o->route_rule == MUONREF_ROUTE_NDIM_2 && o->use_muon == MUONREF_USE_MUON_AUTO) {
    int adamw = name_rule_adamw(o, name, err);
    if (adamw < 0)
      return MUONREF_EOPTION;
    muon = !adamw;
  }
  if (muon && (st = blocks_check(o, s, err)))
    return st;
  out->numel = muonref_shape_numel(s);
  out->use_muon = muon;
  muonref_route_matrices(o, s, out);
  return MUONREF_OK;
}

void muonref_route_matrices(const muonref_options *o, const muonref_shape *s, muonref_route *r)
{
  if (!o || !s || !r || s->ndim < 0 || s->ndim > MUONREF_MAX_NDIM)
    return;
  size_t numel = r->numel;
  int batched = o->conv_mode == MUONREF_CONV_BATCHED || (o->conv_mode == MUONREF_CONV_KELLER && s->ndim != 4);
  r->batch = 1;
  r->interleaved = 0;
  r->split = 0;
  r->scale_ratio = 0.0;
  /* mlx: `if update.ndim >= 2:` orthogonalize and scale; else the momentum as it is */
  r->momentum_only = r->use_muon && o->route_rule == MUONREF_ROUTE_MOMENTUM_1D && s->ndim < 2;
  if (!r->use_muon || r->momentum_only) {
    r->rows = numel, r->cols = 1;
    r->scale_rows = numel, r->scale_cols = 1;
    return;
  }
  if (batched && s->ndim > 2) {
    r->rows = s->dims[s->ndim - 2], r->cols = s->dims[s->ndim - 1];
    r->batch = numel / (r->rows * r->cols);
  } else if (o->conv_mode == MUONREF_CONV_SPATIAL && s->ndim > 2) {
    /* timm reshape_for_muon "batched": `reshape(out_ch, in_ch, -1).permute(2, 0, 1)` */
    r->rows = s->dims[0], r->cols = s->dims[1];
    r->batch = numel / (r->rows * r->cols);
    r->interleaved = 1;
  } else if (o->ns_heads > 1 && s->ndim == 2 && s->dims[0] % (size_t)o->ns_heads == 0) {
    /* dion's num_heads: `t.view(num_heads, head_dim, ...)`, adjust_lr on the head's (head_dim, cols) */
    r->rows = s->dims[0] / (size_t)o->ns_heads, r->cols = s->dims[1];
    r->batch = (size_t)o->ns_heads;
    r->scale_rows = r->rows, r->scale_cols = r->cols;
    return;
  } else {
    r->rows = s->dims[0], r->cols = numel / s->dims[0];
  }
  if (split_on(o) && s->ndim == 2) /* row blocks (spec/muon.md 7.6); their sizes checked by the caller */
    r->split = (size_t)o->n_ns_split;
  int last_two = o->scale_shape == MUONREF_SCALE_SHAPE_LAST_TWO && s->ndim >= 2;
  int first_two = o->scale_shape == MUONREF_SCALE_SHAPE_FIRST_TWO && s->ndim >= 2;
  r->scale_rows = last_two ? s->dims[s->ndim - 2] : first_two ? s->dims[0] : r->rows;
  r->scale_cols = last_two ? s->dims[s->ndim - 1] : first_two ? s->dims[1] : r->cols;
}

size_t muonref_route_matrix_index(const muonref_route *r, size_t i)
{
  if (!r || !r->interleaved || r->batch < 2)
    return i;
  return (i % r->batch) * r->rows * r->cols + i / r->batch;
}

int muonref_ns_check_shape(const muonref_shape *s, muonref_error *err)
{
  char b[256];
  if (!s)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_ns_check_shape: s must not be NULL");
  int ok = s->ndim == 2 && s->dims[0] >= 1 && s->dims[1] >= 1 && s->dims[0] <= MUONREF_MAX_NUMEL / s->dims[1];
  if (ok)
    return MUONREF_OK;
  int nd = s->ndim < 0 ? 0 : s->ndim > MUONREF_MAX_NDIM ? MUONREF_MAX_NDIM : s->ndim;
  if (s->ndim == 2 && s->dims[0] >= 1 && s->dims[1] >= 1)
    return muonref_fail(err, MUONREF_ESHAPE, "Invalid matrix shape %s: more than %zu elements",
                        muonref_py_shape(b, sizeof b, s->dims, nd), (size_t)MUONREF_MAX_NUMEL);
  return muonref_fail(err, MUONREF_ESHAPE, "Expected a matrix, got a tensor of shape %s",
                      muonref_py_shape(b, sizeof b, s->dims, nd));
}

int muonref_ns_transposes(size_t rows, size_t cols) { return rows > cols; }

/* Whether the reduced side of the second moment is the rows (one entry per
 * column kept: LONGER on a wide matrix) rather than the columns. */
static int moment2_per_column(const muonref_options *o, const muonref_route *r)
{
  return o->moment2 == MUONREF_MOMENT2_LONGER && r->rows < r->cols;
}

size_t muonref_moment2_numel(const muonref_options *o, const muonref_route *r)
{
  if (!o || !r || !r->use_muon)
    return 0;
  switch (o->moment2) {
  case MUONREF_MOMENT2_ROWS: return r->batch * r->rows;
  case MUONREF_MOMENT2_LONGER: return r->batch * (moment2_per_column(o, r) ? r->cols : r->rows);
  case MUONREF_MOMENT2_ELEMENT: return r->numel;
  default: return 0;
  }
}

muonref_shape muonref_moment2_shape(const muonref_options *o, const muonref_route *r, const muonref_shape *s)
{
  muonref_shape out = {0, {0}};
  if (!s || !muonref_moment2_numel(o, r))
    return out;
  if (o->moment2 == MUONREF_MOMENT2_ELEMENT)
    return *s;
  int col = moment2_per_column(o, r);
  if (s->ndim >= 2 && s->dims[s->ndim - 2] == r->rows && s->dims[s->ndim - 1] == r->cols) {
    out = *s; /* the parameter's own last two dimensions (2-D, or batched) */
    out.dims[s->ndim - (col ? 2 : 1)] = 1;
    return out;
  }
  if (s->ndim == 2 && r->batch > 1 && s->dims[0] == r->batch * r->rows && s->dims[1] == r->cols) {
    out.ndim = 2; /* heads (ns_heads): dion's variance_neuron of the whole parameter, `p[..., 0:1]` */
    out.dims[0] = col ? r->batch : s->dims[0];
    out.dims[1] = col ? r->cols : 1;
    return out;
  }
  out.ndim = 2; /* a flattened matrix */
  out.dims[0] = col ? 1 : r->rows;
  out.dims[1] = col ? r->cols : 1;
  return out;
}
