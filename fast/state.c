/* muonref: the state file (see state.h; spec/muon.md section 11.1).
 *
 * Layout, every integer and float little-endian, IEEE binary64 / binary32:
 *   magic "MUONSTAT" (8 bytes), version u32, profile (32 bytes, NUL-padded),
 *   n_groups u64, n_params u64;
 *   per group, format 12 (11, ..., 2: the same without the entries since format 12, 11, ..., 3):
 *     every entry of core/option_fields.c's table in its order: a double as f64, an int or enum as i32, adam_dim_threshold as
 *     i64, coeffs as n_coeffs u32 then n_coeffs x (a, b, c) f64,
 *     exclude_patterns as n_exclude_patterns u32 then each pattern as its
 *     length u32 (0..63) and its bytes (no NUL), ns_split as n_ns_split u32
 *     then n_ns_split x i32;
 *   per group, format 1 (read only): lr f64, momentum f64, nesterov u32,
 *     ns_steps i32, weight_decay f64, scale_mode u32, adam_beta1 f64,
 *     adam_beta2 f64, adam_eps f64, adam_lr_ratio f64, adam_dim_threshold
 *     i64, use_muon i32, momentum_form u32, coeff_order u32, ns_eps f64,
 *     eps_mode u32, ns_format u32, n_coeffs u32, n_coeffs x (a, b, c) f64;
 *   per parameter: group u64, ndim u32, ndim x dim u64, initialized u32,
 *     use_muon u32, step i64, numel u64, then when initialized the buffers
 *     as numel f32 each: momentum_buffer (Muon) or exp_avg, exp_avg_sq; a Muon
 *     state then (format 3 and later) moment2_numel u64 and as many f32 (the second
 *     moment of the Newton-Schulz output; 0 when the options keep none); then
 *     (format 12 and later) accum_calls u64 and, when the group's grad_accumulation
 *     is above 0, numel f32: the gradient accumulator (spec/muon.md 3.3), and,
 *     when the group's use_ema is set, numel f32: the moving average (8.2),
 *     both also for an uninitialized state;
 *   CRC-32 (zlib's crc32, the ISO-HDLC polynomial) of every byte before it,
 *   u32. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "core/option_fields.h"
#include "core/pyfmt.h"
#include "muonref/state.h"
#include "core/fail.h"
#include "core/output.h"

/* ------------------------------------------------------------- writing */

typedef struct buf {
  unsigned char *p;
  size_t n, cap;
  int oom;
} buf;

static void put(buf *b, const void *src, size_t n)
{
  if (b->oom)
    return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n)
      cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p) {
      b->oom = 1;
      return;
    }
    b->p = p, b->cap = cap;
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}

static void put_u32(buf *b, uint32_t v)
{
  unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
  put(b, x, 4);
}

static void put_u64(buf *b, uint64_t v)
{
  put_u32(b, (uint32_t)v);
  put_u32(b, (uint32_t)(v >> 32));
}

static void put_f64(buf *b, double d)
{
  uint64_t u;
  memcpy(&u, &d, 8);
  put_u64(b, u);
}

static void put_f32s(buf *b, const float *x, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &x[i], 4);
    put_u32(b, u);
  }
}

/* Format 2: every field of the table (core/option_fields.c), in order. */
static void put_options(buf *b, const muonref_options *o)
{
  for (size_t i = 0; i < muonref_option_field_count; i++) {
    const muonref_option_field *f = &muonref_option_fields[i];
    switch (f->kind) {
    case MUONREF_FIELD_F64: put_f64(b, muonref_option_field_f64(o, f)); break;
    case MUONREF_FIELD_I32: put_u32(b, (uint32_t)(int32_t)muonref_option_field_int(o, f)); break;
    case MUONREF_FIELD_I64: put_u64(b, (uint64_t)(int64_t)muonref_option_field_int(o, f)); break;
    case MUONREF_FIELD_COEFFS:
      put_u32(b, (uint32_t)o->n_coeffs);
      for (int k = 0; k < o->n_coeffs && k < MUONREF_MAX_COEFFS; k++) {
        put_f64(b, o->coeffs[k].a);
        put_f64(b, o->coeffs[k].b);
        put_f64(b, o->coeffs[k].c);
      }
      break;
    case MUONREF_FIELD_SIZES:
      put_u32(b, (uint32_t)o->n_ns_split);
      for (int k = 0; k < o->n_ns_split && k < MUONREF_MAX_SPLIT; k++)
        put_u32(b, (uint32_t)(int32_t)o->ns_split[k]);
      break;
    case MUONREF_FIELD_PATTERNS:
      put_u32(b, (uint32_t)o->n_exclude_patterns);
      for (int k = 0; k < o->n_exclude_patterns && k < MUONREF_MAX_PATTERNS; k++) {
        size_t len = strnlen(o->exclude_patterns[k], MUONREF_PATTERN_LEN - 1);
        put_u32(b, (uint32_t)len);
        put(b, o->exclude_patterns[k], len);
      }
      break;
    }
  }
}

int muonref_state_save(const muonref_optimizer *opt, const char *profile, const char *path, muonref_error *err)
{
  if (!opt || !path)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_state_save: opt and path must not be NULL");
  if (!profile || !profile[0])
    profile = "custom";
  if (strlen(profile) > 31)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_state_save: profile name '%.40s...' longer than 31 bytes",
                        profile);
  for (const char *p = profile; *p; p++) /* what the reader accepts: never write a file it refuses */
    if (*p < 0x20 || *p > 0x7e)
      return muonref_fail(err, MUONREF_EOPTION, "muonref_state_save: the profile name holds byte 0x%02x at %zu; it "
                          "must be printable ASCII", (unsigned char)*p, (size_t)(p - profile));
  /* what the reader refuses is not written (spec/muon.md 3.3): counts of micro-steps that differ, set by
   * muonref_optimizer_set_state, which takes each parameter's as given */
  size_t np0 = muonref_optimizer_param_count(opt), first = np0;
  for (size_t i = 0; i < np0; i++) {
    muonref_param_state st;
    if (muonref_optimizer_state(opt, i, &st, NULL) || !st.grad_accum)
      continue;
    muonref_param_state f0;
    if (first < np0 && !muonref_optimizer_state(opt, first, &f0, NULL) && f0.accum_calls != st.accum_calls)
      return muonref_fail(err, MUONREF_ESTATE, "muonref_state_save: parameter %zu has %ld micro-steps accumulated, "
                          "parameter %zu %ld: the optimizer counts them alike (no file written)", i, st.accum_calls,
                          first, f0.accum_calls);
    first = first < np0 ? first : i;
  }
  buf b = {0};
  char name[32] = {0};
  memcpy(name, profile, strlen(profile));
  put(&b, MUONREF_STATE_MAGIC, 8);
  put_u32(&b, MUONREF_STATE_VERSION);
  put(&b, name, 32);
  size_t ng = muonref_optimizer_group_count(opt), np = muonref_optimizer_param_count(opt);
  put_u64(&b, ng);
  put_u64(&b, np);
  for (size_t g = 0; g < ng; g++)
    put_options(&b, muonref_optimizer_group_options(opt, g));
  for (size_t i = 0; i < np; i++) {
    size_t group;
    muonref_shape sh;
    muonref_param_state st;
    if (muonref_optimizer_param_info(opt, i, &group, &sh) || muonref_optimizer_state(opt, i, &st, NULL)) {
      free(b.p); /* never: i < np */
      return muonref_fail(err, MUONREF_EOPTION, "muonref_state_save: parameter %zu of %zu has no state", i, np);
    }
    put_u64(&b, group);
    put_u32(&b, (uint32_t)sh.ndim);
    for (int k = 0; k < sh.ndim; k++)
      put_u64(&b, sh.dims[k]);
    put_u32(&b, (uint32_t)st.initialized);
    put_u32(&b, (uint32_t)(st.initialized ? st.use_muon : 0)); /* one encoding: no branch before a state */
    put_u64(&b, (uint64_t)(int64_t)(st.initialized ? st.step : 0));
    put_u64(&b, muonref_optimizer_route(opt, i)->numel);
    if (st.initialized && st.use_muon) {
      put_f32s(&b, st.momentum_buffer, st.numel);
      put_u64(&b, st.moment2_numel); /* since format 3: the second moment, 0 entries when none */
      put_f32s(&b, st.moment2, st.moment2_numel);
    } else if (st.initialized) {
      put_f32s(&b, st.exp_avg, st.numel);
      put_f32s(&b, st.exp_avg_sq, st.numel);
    }
    put_u64(&b, (uint64_t)st.accum_calls); /* since format 12 */
    if (muonref_optimizer_group_options(opt, group)->grad_accumulation > 0)
      put_f32s(&b, st.grad_accum, st.numel);
    if (muonref_optimizer_group_options(opt, group)->use_ema)
      put_f32s(&b, st.ema_average, st.numel);
  }
  if (b.oom) {
    free(b.p);
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state file of %zu parameters", np);
  }
  /* the CRC of every byte before it (crc32_z: no 4 GiB limit of uInt) */
  put_u32(&b, (uint32_t)crc32_z(crc32_z(0L, Z_NULL, 0), b.p, b.n));
  if (b.oom) {
    free(b.p);
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state file of %zu parameters", np);
  }

  int st = muonref_output_write(path, b.p, b.n, NULL, "the state file", MUONREF_OUTPUT_FSYNC, err);
  free(b.p);
  return st;
}

/* ------------------------------------------------------------- reading */

typedef struct cur {
  const unsigned char *p;
  size_t n, at;
  int short_read;
  uint32_t bad_count; /* a count of coefficient triples, patterns or sizes out of range (get_options) */
} cur;

static int take(cur *c, void *dst, size_t n)
{
  if (c->short_read || n > c->n - c->at) {
    c->short_read = 1;
    memset(dst, 0, n);
    return 0;
  }
  memcpy(dst, c->p + c->at, n);
  c->at += n;
  return 1;
}

static uint32_t get_u32(cur *c)
{
  unsigned char x[4];
  take(c, x, 4);
  return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
}

static uint64_t get_u64(cur *c)
{
  uint64_t lo = get_u32(c);
  return lo | (uint64_t)get_u32(c) << 32;
}

static double get_f64(cur *c)
{
  uint64_t u = get_u64(c);
  double d;
  memcpy(&d, &u, 8);
  return d;
}

/* n_coeffs u32, then n_coeffs triples (a, b, c) f64 (both formats): 0, or
 * -1 (the count in c->bad_count) for a count of triples outside 1 to
 * MUONREF_MAX_COEFFS: what follows cannot be read in its place, so the
 * group is refused naming the count, not a later field read out of place. */
static int get_coeffs(cur *c, muonref_options *o)
{
  uint32_t nc = get_u32(c);
  if (!c->short_read && (nc < 1 || nc > MUONREF_MAX_COEFFS)) {
    c->bad_count = nc;
    return -1;
  }
  o->n_coeffs = (int)nc;
  for (int k = 0; k < o->n_coeffs; k++) {
    o->coeffs[k].a = get_f64(c);
    o->coeffs[k].b = get_f64(c);
    o->coeffs[k].c = get_f64(c);
  }
  return 0;
}

/* Format 2: every field of the table, in order.  0; -1 for a pattern
 * that cannot be one (63 bytes at most, no NUL byte); -2 for a count of
 * coefficient triples and -3 for a count of patterns out of range (the
 * count in c->bad_count). */
static int get_options(cur *c, muonref_options *o, uint32_t version)
{
  memset(o, 0, sizeof *o); /* an entry a format does not store stays zero (format 2: no second moment) */
  for (size_t i = 0; i < muonref_option_field_count && !c->short_read; i++) {
    const muonref_option_field *f = &muonref_option_fields[i];
    char *at = (char *)o + f->off;
    if ((uint32_t)f->since > version)
      continue;
    switch (f->kind) {
    case MUONREF_FIELD_F64: {
      double d = get_f64(c);
      memcpy(at, &d, sizeof d);
      break;
    }
    case MUONREF_FIELD_I32: {
      int v = (int)(int32_t)get_u32(c);
      memcpy(at, &v, sizeof v);
      break;
    }
    case MUONREF_FIELD_I64: {
      long v = (long)(int64_t)get_u64(c);
      memcpy(at, &v, sizeof v);
      break;
    }
    case MUONREF_FIELD_COEFFS:
      if (get_coeffs(c, o))
        return -2;
      break;
    case MUONREF_FIELD_SIZES: {
      uint32_t ns = get_u32(c);
      if (!c->short_read && ns > MUONREF_MAX_SPLIT) {
        c->bad_count = ns;
        return -4;
      }
      o->n_ns_split = (int)ns;
      for (int k = 0; k < o->n_ns_split && !c->short_read; k++)
        o->ns_split[k] = (int)(int32_t)get_u32(c);
      break;
    }
    case MUONREF_FIELD_PATTERNS: {
      uint32_t np = get_u32(c);
      if (!c->short_read && np > MUONREF_MAX_PATTERNS) {
        c->bad_count = np;
        return -3;
      }
      o->n_exclude_patterns = (int)np;
      for (int k = 0; k < o->n_exclude_patterns && !c->short_read; k++) {
        uint32_t len = get_u32(c);
        if (c->short_read)
          break;
        if (len >= MUONREF_PATTERN_LEN)
          return -1;
        take(c, o->exclude_patterns[k], len);
        if (memchr(o->exclude_patterns[k], 0, len))
          return -1;
      }
      break;
    }
    }
  }
  return 0;
}

/* Format 1: 18 fields; the others keep the values below (nemo's). */
static int get_options_v1(cur *c, muonref_options *o)
{
  memset(o, 0, sizeof *o);
  /* fields the file does not store keep their nemo values (zero, except
   * ns_safety: 1.0, a factor that changes nothing; 0 is not valid) */
  o->ns_safety = 1.0;
  o->scale_extra = 1.0; /* not stored either (nor norm_format, which stays bf16, as bf16_order and
                           the other profile-level fields stay nemo's): 1.0 changes nothing;
                           clip_grad_norm, not stored, stays 0 (no clipping): a caller restoring
                           a megatron optimizer sets it again, as Megatron's config does */
  o->lr = get_f64(c);
  o->momentum = get_f64(c);
  o->nesterov = (int)get_u32(c);
  o->ns_steps = (int)get_u32(c);
  o->weight_decay = get_f64(c);
  o->scale_mode = (muonref_scale_mode)get_u32(c);
  o->adam_beta1 = get_f64(c);
  o->adam_beta2 = get_f64(c);
  o->adam_eps = get_f64(c);
  o->adam_lr_ratio = get_f64(c);
  o->adam_dim_threshold = (long)(int64_t)get_u64(c);
  o->use_muon = (muonref_use_muon)(int32_t)get_u32(c);
  o->momentum_form = (muonref_momentum_form)get_u32(c);
  o->coeff_order = (muonref_coeff_order)get_u32(c);
  o->ns_eps = get_f64(c);
  o->eps_mode = (muonref_eps_mode)get_u32(c);
  o->ns_format = (muonref_ns_format)get_u32(c);
  return get_coeffs(c, o) ? -2 : 0;
}

void muonref_state_file_free(muonref_state_file *f)
{
  if (!f)
    return;
  for (size_t i = 0; f->states && i < f->n_params; i++) {
    free(f->states[i].momentum_buffer);
    free(f->states[i].exp_avg);
    free(f->states[i].exp_avg_sq);
    free(f->states[i].moment2);
    free(f->states[i].grad_accum);
    free(f->states[i].ema_average);
  }
  free(f->options), free(f->param_group), free(f->shapes), free(f->states);
  memset(f, 0, sizeof *f);
}

static float *get_buffer(cur *c, size_t n, int *nonfinite)
{
  if (c->short_read || n > (c->n - c->at) / 4) {
    c->short_read = 1;
    return NULL;
  }
  float *x = malloc(n ? n * sizeof *x : 1);
  for (size_t i = 0; x && i < n; i++) {
    uint32_t u = get_u32(c);
    memcpy(&x[i], &u, 4);
    if (!isfinite(x[i]))
      *nonfinite = 1;
  }
  return x;
}

/* The body of a file whose magic, CRC and version are checked. */
static int parse(cur *c, muonref_state_file *out, const char *path, muonref_error *err)
{
  uint32_t version = out->version;
  char b[64];
  unsigned char name[32];
  take(c, name, 32);
  size_t len = 0;
  while (len < 32 && name[len] >= 0x20 && name[len] < 0x7f)
    len++;
  for (size_t k = len; k < 32; k++)
    if (name[k] != 0)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: the profile name must be printable ASCII padded with NUL bytes "
                          "(at most 31)", path);
  if (len == 32)
    return muonref_fail(err, MUONREF_EFORMAT, "%s: the profile name must be printable ASCII padded with NUL bytes "
                        "(at most 31)", path);
  if (len == 0) /* one encoding: a save without a name writes "custom" */
    return muonref_fail(err, MUONREF_EFORMAT, "%s: the profile name is empty (a file saved without one says "
                        "\"custom\")", path);
  memcpy(out->profile, name, len);
  out->profile[len] = '\0';
  uint64_t ng = get_u64(c), np = get_u64(c);
  /* every group takes at least 100 bytes and every parameter 28: bounds
   * the counts by the file's size before anything is allocated */
  if (ng > c->n / 100 || np > c->n / 28)
    return muonref_fail(err, MUONREF_EFORMAT, "%s: %llu groups and %llu parameters do not fit in %zu bytes", path,
                        (unsigned long long)ng, (unsigned long long)np, c->n);
  out->n_groups = (size_t)ng;
  out->n_params = (size_t)np;
  out->options = calloc(out->n_groups + 1, sizeof *out->options);
  out->param_group = calloc(out->n_params + 1, sizeof *out->param_group);
  out->shapes = calloc(out->n_params + 1, sizeof *out->shapes);
  out->states = calloc(out->n_params + 1, sizeof *out->states);
  if (!out->options || !out->param_group || !out->shapes || !out->states)
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state file %s", path);
  for (size_t g = 0; g < out->n_groups; g++) {
    muonref_error e;
    int bad = version == 1 ? get_options_v1(c, &out->options[g]) : get_options(c, &out->options[g], version);
    if (bad == -1)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: group %zu: an exclude pattern of more than %d bytes or with a "
                          "NUL byte", path, g, MUONREF_PATTERN_LEN - 1);
    if (bad == -2)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: group %zu: %lu Newton-Schulz coefficient triples, expected 1 to %d",
                          path, g, (unsigned long)c->bad_count, MUONREF_MAX_COEFFS);
    if (bad == -3)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: group %zu: %lu exclude patterns, expected at most %d", path, g,
                          (unsigned long)c->bad_count, MUONREF_MAX_PATTERNS);
    if (bad == -4)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: group %zu: %lu row block sizes (ns_split), expected at most %d",
                          path, g, (unsigned long)c->bad_count, MUONREF_MAX_SPLIT);
    if (c->short_read)
      break;
    if (muonref_options_validate(&out->options[g], &e))
      return muonref_fail(err, MUONREF_EFORMAT, "%s: group %zu: invalid options: %s", path, g, e.message);
  }
  for (size_t i = 0; i < out->n_params && !c->short_read; i++) {
    muonref_param_state *st = &out->states[i];
    muonref_shape *sh = &out->shapes[i];
    uint64_t group = get_u64(c);
    uint32_t ndim = get_u32(c);
    if (c->short_read)
      break;
    if (group >= ng)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: group %llu, the file has %zu groups", path, i,
                          (unsigned long long)group, out->n_groups);
    if (i > 0 && group < out->param_group[i - 1])
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: group %llu after group %zu (parameters are "
                          "numbered in group order)", path, i, (unsigned long long)group, out->param_group[i - 1]);
    if (ndim > MUONREF_MAX_NDIM)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: %u dimensions, at most %d are supported", path, i,
                          ndim, MUONREF_MAX_NDIM);
    out->param_group[i] = (size_t)group;
    sh->ndim = (int)ndim;
    size_t numel = 1;
    for (uint32_t k = 0; k < ndim; k++) {
      uint64_t d = get_u64(c);
      if (!c->short_read && (d < 1 || d > MUONREF_MAX_NUMEL || numel > MUONREF_MAX_NUMEL / d))
        return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: dimension %u is %llu (each at least 1, at most "
                            "%zu elements in all)", path, i, k, (unsigned long long)d, (size_t)MUONREF_MAX_NUMEL);
      sh->dims[k] = (size_t)d;
      numel *= d ? (size_t)d : 1;
    }
    uint32_t init = get_u32(c), muon = get_u32(c);
    uint64_t step = get_u64(c), n = get_u64(c);
    if (c->short_read)
      break;
    if (init > 1 || muon > 1 || (!init && muon))
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: initialized %u and use_muon %u must be 0 or 1 "
                          "(use_muon 0 before a state exists)", path, i, init, muon);
    if ((int64_t)step < 0 || step > (uint64_t)MUONREF_MAX_STEP || (!init && step != 0) || (init && step < 1))
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: step %lld (an initialized state has 1 to 2^53, "
                          "an uninitialized one 0)", path, i, (long long)step);
    if (n != numel)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: %llu state elements, its shape %s has %zu", path,
                          i, (unsigned long long)n, muonref_py_shape(b, sizeof b, sh->dims, sh->ndim), numel);
    muonref_route rt;
    muonref_error re = {0};
    if (muonref_route_param(&out->options[group], sh, &rt, &re)) /* no optimizer saves a parameter it cannot route */
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: its group's options refuse its shape %s (%s)", path,
                          i, muonref_py_shape(b, sizeof b, sh->dims, sh->ndim), re.message);
    st->initialized = (int)init;
    st->use_muon = (int)muon;
    st->step = (long)step;
    st->numel = numel;
    int nonfinite = 0;
    if (init && muon) {
      if (!(st->momentum_buffer = get_buffer(c, numel, &nonfinite)) && !c->short_read)
        return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state file %s", path);
      uint64_t m2 = version >= 3 ? get_u64(c) : 0;
      if (!c->short_read && m2 > numel)
        return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: a second moment of %llu entries, more than its "
                            "%zu elements", path, i, (unsigned long long)m2, numel);
      st->moment2_numel = (size_t)m2;
      if (m2 && !c->short_read && !(st->moment2 = get_buffer(c, (size_t)m2, &nonfinite)) && !c->short_read)
        return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state file %s", path);
    } else if (init) {
      if (!(st->exp_avg = get_buffer(c, numel, &nonfinite)) && !c->short_read)
        return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state file %s", path);
      if (!c->short_read && !(st->exp_avg_sq = get_buffer(c, numel, &nonfinite)) && !c->short_read)
        return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state file %s", path);
    }
    int accum = out->options[group].grad_accumulation;
    uint64_t calls = version >= 12 ? get_u64(c) : 0;
    if (!c->short_read && calls >= (uint64_t)(accum > 0 ? accum : 1))
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: %llu micro-steps accumulated, its group's "
                          "grad_accumulation %d takes 0 to %d", path, i, (unsigned long long)calls, accum,
                          accum > 1 ? accum - 1 : 0);
    st->accum_calls = (long)calls;
    if (accum > 0 && version >= 12 && !c->short_read && !(st->grad_accum = get_buffer(c, numel, &nonfinite)) &&
        !c->short_read)
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state file %s", path);
    if (out->options[group].use_ema && version >= 12 && !c->short_read &&
        !(st->ema_average = get_buffer(c, numel, &nonfinite)) && !c->short_read)
      return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state file %s", path);
    if (nonfinite && !c->short_read)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: a state buffer holds a non-finite value", path, i);
  }
  if (c->short_read)
    return muonref_fail(err, MUONREF_EFORMAT, "%s: truncated: the counts in the file need more bytes than it has",
                        path);
  /* spec/muon.md 3.3: a step counts the micro-steps of every accumulating parameter alike, and the N-th
   * empties the accumulators: no optimizer saves other counts, or a sum beside a count of 0 */
  for (size_t i = 0, first = out->n_params; i < out->n_params; i++) {
    const muonref_param_state *st = &out->states[i];
    if (!st->grad_accum)
      continue;
    if (first < out->n_params && st->accum_calls != out->states[first].accum_calls)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: %ld micro-steps accumulated, parameter %zu %ld "
                          "(the optimizer counts them alike)", path, i, st->accum_calls, first,
                          out->states[first].accum_calls);
    first = first < out->n_params ? first : i;
    for (size_t j = 0; st->accum_calls == 0 && j < st->numel; j++)
      if (st->grad_accum[j] != 0.0f)
        return muonref_fail(err, MUONREF_EFORMAT, "%s: parameter %zu: an accumulator holding a sum (element %zu) "
                            "with no micro-step counted", path, i, j);
  }
  if (c->at != c->n)
    return muonref_fail(err, MUONREF_EFORMAT, "%s: %zu bytes after the last parameter (expected none)", path,
                        c->n - c->at);
  return MUONREF_OK;
}

int muonref_state_file_read(const char *path, muonref_state_file *out, muonref_error *err)
{
  if (!out)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_state_file_read: out must not be NULL");
  memset(out, 0, sizeof *out);
  if (!path)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_state_file_read: path must not be NULL");
  /* opened without blocking, so that a FIFO is refused as not a regular
   * file instead of waiting for a writer */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) {
    int e = errno;
    if (fd >= 0)
      close(fd);
    return muonref_fail(err, MUONREF_EIO, "%s: cannot read: %s", path, strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return muonref_fail(err, MUONREF_EIO, "%s: not a regular file", path);
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    int e = errno;
    close(fd);
    return muonref_fail(err, MUONREF_EIO, "%s: cannot read: %s", path, strerror(e));
  }
  const uint64_t header = 8 + 4 + 32 + 8 + 8;
  if ((uint64_t)sb.st_size > MUONREF_STATE_MAX_BYTES) {
    fclose(f);
    return muonref_fail(err, MUONREF_EFORMAT, "%s: %lld bytes, a state file has at most %llu", path,
                        (long long)sb.st_size, (unsigned long long)MUONREF_STATE_MAX_BYTES);
  }
  size_t n = (size_t)sb.st_size;
  unsigned char *p = malloc(n ? n : 1);
  if (!p) {
    fclose(f);
    return muonref_fail(err, MUONREF_ENOMEM, "Out of memory for the state file %s (%zu bytes)", path, n);
  }
  size_t got = fread(p, 1, n, f);
  fclose(f);
  int st = MUONREF_OK;
  if (got != n)
    st = muonref_fail(err, MUONREF_EIO, "%s: cannot read: short read (%zu of %zu bytes)", path, got, n);
  else if (n >= 8 && memcmp(p, MUONREF_STATE_MAGIC, 8))
    st = muonref_fail(err, MUONREF_EFORMAT, "%s: not a muonref state file (bad magic)", path);
  else if (n < header + 4)
    st = muonref_fail(err, MUONREF_EFORMAT, "%s: truncated: %zu bytes, a state file has at least %llu", path, n,
                      (unsigned long long)(header + 4));
  if (!st) {
    cur c = {p, n - 4, 0, 0, 0};
    cur tail = {p + n - 4, 4, 0, 0, 0};
    out->crc = get_u32(&tail);
    out->bytes = n;
    uint32_t crc = (uint32_t)crc32_z(crc32_z(0L, Z_NULL, 0), p, n - 4);
    unsigned char magic[8];
    take(&c, magic, 8);
    out->version = get_u32(&c);
    if (crc != out->crc)
      st = muonref_fail(err, MUONREF_EFORMAT, "%s: CRC-32 mismatch: stored 0x%08x, computed 0x%08x (the file is "
                        "corrupted or truncated)", path, out->crc, crc);
    else if (out->version < 1 || out->version > MUONREF_STATE_VERSION)
      st = muonref_fail(err, MUONREF_EFORMAT, "%s: version %u, this muonref reads versions 1 to %u", path,
                        out->version, MUONREF_STATE_VERSION);
    else
      st = parse(&c, out, path, err);
  }
  free(p);
  if (st) {
    muonref_state_file_free(out);
  }
  return st;
}

/* ------------------------------------------------------------- loading */

int muonref_state_load(muonref_optimizer *opt, const char *path, muonref_error *err)
{
  if (!opt || !path)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_state_load: opt and path must not be NULL");
  muonref_state_file f;
  int st = muonref_state_file_read(path, &f, err);
  if (st)
    return st;
  size_t ng = muonref_optimizer_group_count(opt), np = muonref_optimizer_param_count(opt);
  char b1[64], b2[64];
  if (f.n_groups != ng || f.n_params != np)
    st = muonref_fail(err, MUONREF_ESTATE, "%s: %zu groups and %zu parameters, the optimizer has %zu and %zu", path,
                      f.n_groups, f.n_params, ng, np);
  for (size_t g = 0; !st && g < ng; g++) {
    /* every field (format 1: the 18 it stores; spec/muon.md 11.1), but the moving average's values where
     * neither keeps one (they change no step then, 8.2) */
    muonref_options fo = f.options[g];
    const muonref_options *oo = muonref_optimizer_group_options(opt, g);
    if (!fo.use_ema && !oo->use_ema)
      fo.ema_momentum = oo->ema_momentum, fo.ema_overwrite = oo->ema_overwrite;
    const char *d = muonref_option_fields_differ(&fo, oo, f.version);
    if (d)
      st = muonref_fail(err, MUONREF_ESTATE, "%s: group %zu: option %s differs from the optimizer's", path, g, d);
  }
  for (size_t i = 0; !st && i < np; i++) {
    size_t group;
    muonref_shape sh;
    const muonref_route *r = muonref_optimizer_route(opt, i);
    int same = muonref_optimizer_param_info(opt, i, &group, &sh) == MUONREF_OK && f.param_group[i] == group && f.shapes[i].ndim == sh.ndim;
    for (int k = 0; same && k < sh.ndim; k++)
      same = f.shapes[i].dims[k] == sh.dims[k];
    if (!same)
      st = muonref_fail(err, MUONREF_ESTATE, "%s: parameter %zu: group %zu shape %s, the optimizer's is group %zu "
                        "shape %s", path, i, f.param_group[i],
                        muonref_py_shape(b1, sizeof b1, f.shapes[i].dims, f.shapes[i].ndim), group,
                        muonref_py_shape(b2, sizeof b2, sh.dims, sh.ndim));
    else if (f.states[i].initialized && f.states[i].use_muon != r->use_muon)
      st = muonref_fail(err, MUONREF_ESTATE, "%s: parameter %zu: routed to %s, the state is %s's", path, i,
                        r->use_muon ? "Muon" : "AdamW", f.states[i].use_muon ? "Muon" : "AdamW");
    else if (f.states[i].initialized &&
             f.states[i].moment2_numel != muonref_moment2_numel(muonref_optimizer_group_options(opt, group), r))
      st = muonref_fail(err, MUONREF_ESTATE, "%s: parameter %zu: a second moment (moment2) of %zu entries, the "
                        "optimizer's options keep %zu", path, i, f.states[i].moment2_numel,
                        muonref_moment2_numel(muonref_optimizer_group_options(opt, group), r));
  }
  /* every check that muonref_optimizer_set_state makes has passed: the
   * states are replaced only now, all of them */
  for (size_t i = 0; !st && i < np; i++)
    st = muonref_optimizer_set_state(opt, i, &f.states[i], err);
  muonref_state_file_free(&f);
  return st;
}
