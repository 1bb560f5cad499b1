/* muonref tests: the state file (include/muonref/state.h, spec/muon.md
 * section 11.1).  A round trip through the file is bitwise, and stepping on
 * after loading gives bitwise what stepping on without it gives; every
 * corruption kind (a bit flip in each byte, each truncation, trailing bytes,
 * another magic or version, a non-finite buffer, other options or shapes)
 * is refused and leaves the optimizer unchanged; `muonref state FILE`
 * prints the summary or exits 2. */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "muonref.h"
#include "core/option_fields.h"
#include "vectors/judge/fit_space.h"
#include "vectors/judge/refusal.h"
#include "testutil.h"

enum { NP = 3 };
static const muonref_shape SHAPES[NP] = {{2, {4, 8}}, {1, {8}}, {2, {2, 2}}};
static char dir[64];

static void setup(void)
{
  snprintf(dir, sizeof dir, "/tmp/muonref-state.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

static char *path(const char *name)
{
  static char p[4][128];
  static int k;
  char *s = p[k++ % 4];
  snprintf(s, 128, "%s/%s", dir, name);
  return s;
}

/* Group 0: the nemo profile over params 0 (Muon) and 1 (AdamW); group 1:
 * lr 0.5, fp32 Newton-Schulz over param 2 (Muon), which gets no gradient
 * unless `all`. */
static muonref_optimizer *make(double lr1, const muonref_shape *shapes)
{
  muonref_options a = tu_nemo(), b = tu_nemo();
  b.lr = lr1;
  b.ns_format = MUONREF_NS_FP32;
  muonref_group g[2] = {{a, 2, shapes}, {b, 1, shapes + 2}};
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create(g, 2, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  return opt;
}

typedef struct model {
  float w[NP][32];
  float g[NP][32];
} model;

static void init_model(model *m)
{
  tu_rng r = {20261130};
  for (int i = 0; i < NP; i++) {
    tu_fill_normal(&r, m->w[i], 32, 1.0);
    tu_fill_normal(&r, m->g[i], 32, 0.1);
  }
}

static void step(muonref_optimizer *opt, model *m, int all, int k)
{
  float *ps[NP];
  muonref_grad gs[NP];
  for (int i = 0; i < NP; i++) {
    for (int j = 0; j < 32; j++)
      m->g[i][j] = m->g[i][j] * 0.75f + 0.01f * (float)((j + k) % 5);
    ps[i] = m->w[i];
    gs[i] = (muonref_grad){i < 2 || all ? m->g[i] : NULL, MUONREF_DENSE, MUONREF_FLOAT32};
  }
  muonref_error e;
  ck_assert_msg(muonref_optimizer_step(opt, muonref_optimizer_param_count(opt), ps, gs, &e) == MUONREF_OK, "%s", e.message);
}

/* Whether the states of a and b are bitwise equal. */
static int same_state(const muonref_optimizer *a, const muonref_optimizer *b)
{
  for (size_t i = 0; i < NP; i++) {
    muonref_param_state x, y;
    ck_assert_int_eq(muonref_optimizer_state(a, i, &x, NULL), MUONREF_OK);
    ck_assert_int_eq(muonref_optimizer_state(b, i, &y, NULL), MUONREF_OK);
    if (x.initialized != y.initialized || x.step != y.step || x.use_muon != y.use_muon || x.numel != y.numel)
      return 0;
    size_t n = x.numel * sizeof(float);
    if (x.use_muon ? memcmp(x.momentum_buffer, y.momentum_buffer, n)
                   : memcmp(x.exp_avg, y.exp_avg, n) || memcmp(x.exp_avg_sq, y.exp_avg_sq, n))
      return 0;
  }
  return 1;
}

static unsigned char *slurp(const char *p, size_t *n)
{
  FILE *f = fopen(p, "rb");
  ck_assert_ptr_nonnull(f);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  rewind(f);
  unsigned char *b = malloc(*n + 1);
  ck_assert_uint_eq(fread(b, 1, *n, f), *n);
  fclose(f);
  return b;
}

static void spill(const char *p, const unsigned char *b, size_t n)
{
  FILE *f = fopen(p, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(b, 1, n, f), n);
  fclose(f);
}

/* Rewrites the trailing CRC-32 after an edit (a file that is valid again). */
static void fix_crc(unsigned char *b, size_t n)
{
  uint32_t c = (uint32_t)crc32(0L, b, (uInt)(n - 4));
  for (int k = 0; k < 4; k++)
    b[n - 4 + k] = (unsigned char)(c >> (8 * k));
}

START_TEST(round_trip_is_bitwise)
{
  model m1, m2;
  init_model(&m1);
  muonref_optimizer *a = make(0.5, SHAPES), *b = make(0.5, SHAPES);
  for (int k = 0; k < 3; k++)
    step(a, &m1, 0, k);
  muonref_error e;
  ck_assert_int_eq(muonref_state_save(a, "nemo", path("s1"), &e), MUONREF_OK);
  ck_assert_msg(muonref_state_load(b, path("s1"), &e) == MUONREF_OK, "%s", e.message);
  ck_assert(same_state(a, b));
  ck_assert_int_eq(muonref_state_save(b, "nemo", path("s2"), &e), MUONREF_OK);
  size_t n1, n2;
  unsigned char *f1 = slurp(path("s1"), &n1), *f2 = slurp(path("s2"), &n2);
  ck_assert(n1 == n2 && memcmp(f1, f2, n1) == 0); /* save(load(save(x))) == save(x), byte for byte */
  free(f1), free(f2);
  /* stepping on: with the loaded state as without the file */
  m2 = m1;
  for (int k = 3; k < 6; k++) {
    step(a, &m1, 1, k);
    step(b, &m2, 1, k);
  }
  ck_assert(memcmp(&m1, &m2, sizeof m1) == 0);
  ck_assert(same_state(a, b));
  muonref_optimizer_free(a);
  muonref_optimizer_free(b);
}
END_TEST

/* grad_accumulation (spec/muon.md 3.3): N micro-steps per update over make()'s two groups, with a moving
 * average of the weights (8.2, momentum 0.5, no overwrite: the parameters are make()'s). */
static muonref_optimizer *make_accum(int n)
{
  muonref_options a = tu_nemo(), b = tu_nemo();
  b.lr = 0.5;
  b.ns_format = MUONREF_NS_FP32;
  a.grad_accumulation = b.grad_accumulation = n;
  a.use_ema = b.use_ema = 1, a.ema_momentum = b.ema_momentum = 0.5;
  muonref_group g[2] = {{a, 2, SHAPES}, {b, 1, SHAPES + 2}};
  muonref_error e;
  muonref_optimizer *opt = muonref_optimizer_create(g, 2, &e);
  ck_assert_msg(opt != NULL, "%s", e.message);
  return opt;
}

/* The accumulator and the count of micro-steps are state: micro-steps move nothing, a save between them
 * and a load resume bitwise where the first optimizer goes on, and the update is the plain optimizer's
 * step with R32(R32(G3 + R32(G1 + G2)) / 3), the formula of spec/muon.md 3.3 */
START_TEST(accumulation_round_trip)
{
  model m1, m0, gs[3];
  init_model(&m1);
  m0 = m1;
  muonref_optimizer *a = make_accum(3), *b = make_accum(3), *plain = make(0.5, SHAPES);
  for (int k = 0; k < 2; k++) {
    step(a, &m1, 1, k);
    gs[k] = m1;
    ck_assert(memcmp(m1.w, m0.w, sizeof m1.w) == 0); /* a micro-step moves no parameter */
  }
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(a, 0, &st, NULL), MUONREF_OK);
  ck_assert(!st.initialized && st.accum_calls == 2 && st.grad_accum);
  for (int j = 0; j < 32; j++)
    ck_assert(st.grad_accum[j] == gs[0].g[0][j] + gs[1].g[0][j]);
  muonref_error e;
  ck_assert_int_eq(muonref_state_save(a, "nemo", path("acc"), &e), MUONREF_OK);
  ck_assert_msg(muonref_state_load(b, path("acc"), &e) == MUONREF_OK, "%s", e.message);
  model m2 = m1;
  step(a, &m1, 1, 2);
  step(b, &m2, 1, 2);
  ck_assert(memcmp(&m1, &m2, sizeof m1) == 0); /* resumed in phase: the 3rd micro-step updates */
  for (size_t i = 0; i < NP; i++) { /* and the moving averages came through the file */
    muonref_param_state x, y;
    ck_assert_int_eq(muonref_optimizer_state(a, i, &x, NULL), MUONREF_OK);
    ck_assert_int_eq(muonref_optimizer_state(b, i, &y, NULL), MUONREF_OK);
    ck_assert(x.ema_average && y.ema_average && !memcmp(x.ema_average, y.ema_average, x.numel * sizeof(float)));
  }
  ck_assert(memcmp(m1.w, m0.w, sizeof m1.w) != 0);
  /* the plain optimizer fed the mean */
  model mp = m0;
  float *ps[NP];
  muonref_grad gr[NP];
  float mean[NP][32];
  for (int i = 0; i < NP; i++) {
    for (int j = 0; j < 32; j++)
      mean[i][j] = (m1.g[i][j] + (gs[0].g[i][j] + gs[1].g[i][j])) / 3.0f;
    ps[i] = mp.w[i];
    gr[i] = (muonref_grad){mean[i], MUONREF_DENSE, MUONREF_FLOAT32};
  }
  ck_assert_msg(muonref_optimizer_step(plain, NP, ps, gr, &e) == MUONREF_OK, "%s", e.message);
  ck_assert(memcmp(mp.w, m1.w, sizeof mp.w) == 0);
  ck_assert_int_eq(muonref_optimizer_state(a, 0, &st, NULL), MUONREF_OK);
  ck_assert(st.initialized && st.step == 1 && st.accum_calls == 0 && st.grad_accum[0] == 0.0f);
  /* a count the options cannot have is refused, the state unchanged */
  st.accum_calls = 3;
  ck_assert_int_eq(muonref_optimizer_set_state(b, 0, &st, &e), MUONREF_ESTATE);
  ck_assert_msg(strstr(e.message, "grad_accumulation 3 takes 0 to 2"), "%s", e.message);
  ck_assert_int_eq(muonref_optimizer_set_state(plain, 0, &(muonref_param_state){0, 0, 0, 32, NULL, NULL, NULL, NULL,
                                                                                   0, NULL, 1, NULL}, &e), MUONREF_ESTATE);
  float sum[32] = {0.5f};
  ck_assert_int_eq(muonref_optimizer_set_state(b, 1, &(muonref_param_state){0, 0, 0, 8, NULL, NULL, NULL, NULL, 0,
                                                                               sum, 0, NULL}, &e), MUONREF_ESTATE);
  ck_assert_msg(strstr(e.message, "with no micro-step counted"), "%s", e.message);
  /* parameters set to count other micro-steps: a state no step leaves, which the file cannot hold; the save
   * refuses it and writes nothing, and a file patched so is refused (fix_crc) */
  size_t n0;
  unsigned char *f0 = slurp(path("acc"), &n0);
  ck_assert_int_eq(muonref_optimizer_set_state(b, 1, &(muonref_param_state){0, 0, 0, 8, NULL, NULL, NULL, NULL, 0,
                                                                               sum, 1, NULL}, &e), MUONREF_OK);
  ck_assert_int_eq(muonref_state_save(b, "nemo", path("desync"), &e), MUONREF_ESTATE);
  ck_assert_msg(strstr(e.message, "micro-steps accumulated, parameter 0"), "%s", e.message);
  ck_assert_int_eq(access(path("desync"), F_OK), -1);
  muonref_state_file sf;
  ck_assert_int_eq(muonref_state_file_read(path("acc"), &sf, &e), MUONREF_OK); /* counts 2, 2, 2 */
  ck_assert(sf.states[0].accum_calls == 2 && sf.states[1].accum_calls == 2);
  muonref_state_file_free(&sf);
  size_t at = n0 - 4 - 4 * 4 - 4 * 4 - 8; /* parameter 2, (2, 2), the last: its count, its accumulator and average
                                            (4 floats each), then the CRC */
  uint64_t one = 1;
  memcpy(f0 + at, &one, 8);
  fix_crc(f0, n0);
  spill(path("desync"), f0, n0);
  ck_assert_int_eq(muonref_state_file_read(path("desync"), &sf, &e), MUONREF_EFORMAT);
  ck_assert_msg(strstr(e.message, "parameter 2: 1 micro-steps accumulated, parameter 0 2"), "%s", e.message);
  free(f0);
  muonref_optimizer_free(a);
  muonref_optimizer_free(b);
  muonref_optimizer_free(plain);
}
END_TEST

/* Loads `file` into an optimizer with state; asserts refusal with `status`,
 * a message containing `what`, and no change. */
static void refused(muonref_optimizer *opt, const muonref_optimizer *snapshot, const char *file, int status,
                    const char *what)
{
  muonref_error e = {0};
  int st = muonref_state_load(opt, file, &e);
  ck_assert_msg(st == status, "status %d, expected %d: %s", st, status, e.message);
  ck_assert_msg(!what || strstr(e.message, what), "message '%s' lacks '%s'", e.message, what);
  ck_assert(same_state(opt, snapshot));
}

START_TEST(every_corruption_is_refused_and_changes_nothing)
{
  model m;
  init_model(&m);
  muonref_optimizer *a = make(0.5, SHAPES), *b = make(0.5, SHAPES), *snap = make(0.5, SHAPES);
  for (int k = 0; k < 2; k++)
    step(a, &m, 1, k);
  muonref_error e;
  ck_assert_int_eq(muonref_state_save(a, NULL, path("s"), &e), MUONREF_OK);
  /* b holds another state (one step): every refused load must keep it */
  step(b, &m, 0, 9);
  ck_assert_int_eq(muonref_state_save(b, NULL, path("b"), &e), MUONREF_OK);
  ck_assert_int_eq(muonref_state_load(snap, path("b"), &e), MUONREF_OK);
  size_t n;
  unsigned char *good = slurp(path("s"), &n), *x = malloc(n + 8);
  /* a single-bit flip in every byte of the file (bit i mod 8 of byte i;
   * CRC-32 detects every single-bit error, so each must be refused) */
  for (size_t i = 0; i < n; i++)
    for (int bit = (int)(i % 8); bit == (int)(i % 8); bit++) {
      memcpy(x, good, n);
      x[i] ^= (unsigned char)(1u << bit);
      spill(path("x"), x, n);
      muonref_error e2 = {0};
      ck_assert_msg(muonref_state_load(b, path("x"), &e2) == MUONREF_EFORMAT, "flip of bit %d of byte %zu accepted",
                    bit, i);
      ck_assert(same_state(b, snap));
    }
  /* every truncation, and trailing bytes */
  for (size_t len = 0; len < n; len++) {
    spill(path("x"), good, len);
    refused(b, snap, path("x"), MUONREF_EFORMAT, NULL);
  }
  memcpy(x, good, n);
  x[n] = 0;
  spill(path("x"), x, n + 1);
  refused(b, snap, path("x"), MUONREF_EFORMAT, "CRC-32 mismatch");
  /* another magic; another version (with a matching CRC) */
  memcpy(x, good, n);
  x[0] = 'X';
  spill(path("x"), x, n);
  refused(b, snap, path("x"), MUONREF_EFORMAT, "not a muonref state file (bad magic)");
  memcpy(x, good, n);
  x[8] = 14;
  fix_crc(x, n);
  spill(path("x"), x, n);
  refused(b, snap, path("x"), MUONREF_EFORMAT, "version 14, this muonref reads versions 1 to 13");
  /* an empty profile name (with a matching CRC): a save writes "custom" for none, so one encoding */
  memcpy(x, good, n);
  memset(x + 12, 0, 32);
  fix_crc(x, n);
  spill(path("x"), x, n);
  refused(b, snap, path("x"), MUONREF_EFORMAT, "the profile name is empty");
  /* a NaN in the last buffer with a matching CRC: caught by the content check (the last Muon state's
   * momentum buffer ends before its second moment's count, u64 0, its count of micro-steps, u64 0, and
   * the CRC) */
  memcpy(x, good, n);
  memcpy(x + n - 24, &(uint32_t){0x7fc00000u}, 4);
  fix_crc(x, n);
  spill(path("x"), x, n);
  refused(b, snap, path("x"), MUONREF_EFORMAT, "non-finite");
  /* files of other optimizers: other options, other shapes */
  muonref_optimizer *c = make(0.25, SHAPES);
  ck_assert_int_eq(muonref_state_save(c, NULL, path("c"), &e), MUONREF_OK);
  refused(b, snap, path("c"), MUONREF_ESTATE, "group 1: option lr differs from the optimizer's");
  muonref_shape other[NP] = {{2, {8, 4}}, {1, {8}}, {2, {2, 2}}};
  muonref_optimizer *d = make(0.5, other);
  ck_assert_int_eq(muonref_state_save(d, NULL, path("d"), &e), MUONREF_OK);
  refused(b, snap, path("d"), MUONREF_ESTATE, "parameter 0: group 0 shape (8, 4), the optimizer's is group 0 shape (4, 8)");
  refused(b, snap, path("missing"), MUONREF_EIO, "missing");
  free(good), free(x);
  muonref_optimizer_free(a), muonref_optimizer_free(b), muonref_optimizer_free(snap);
  muonref_optimizer_free(c), muonref_optimizer_free(d);
}
END_TEST

START_TEST(save_is_atomic_and_errors_are_named)
{
  muonref_optimizer *a = make(0.5, SHAPES);
  muonref_error e;
  ck_assert_int_eq(muonref_state_save(a, NULL, "/nonexistent-dir/s", &e), MUONREF_EIO);
  ck_assert(strstr(e.message, "/nonexistent-dir/s: cannot write the state file") == e.message);
  ck_assert_int_eq(muonref_state_save(a, "a-profile-name-longer-than-31-bytes", path("s"), &e), MUONREF_EOPTION);
  ck_assert_int_eq(access(path("s"), F_OK), -1); /* nothing written */
  ck_assert_int_eq(muonref_state_save(NULL, NULL, path("s"), &e), MUONREF_EOPTION);
  ck_assert_int_eq(muonref_state_load(a, NULL, &e), MUONREF_EOPTION);
  muonref_optimizer_free(a);
}
END_TEST

/* The save never replaces what is not a regular file: a symbolic link is
 * kept (its target rewritten, or a device written through), a folder and a
 * dangling link are refused with their reason (tests/scripts/output-targets.sh
 * covers the command's writers the same way). */
START_TEST(save_keeps_links_and_refuses_folders)
{
  muonref_optimizer *a = make(0.5, SHAPES);
  muonref_error e;
  char target[128], msg[600];
  snprintf(target, sizeof target, "%s", path("target"));
  FILE *f = fopen(target, "w");
  ck_assert_ptr_nonnull(f);
  fputs("old", f);
  fclose(f);
  ck_assert_int_eq(symlink("target", path("link")), 0);
  ck_assert_msg(muonref_state_save(a, NULL, path("link"), &e) == MUONREF_OK, "%s", e.message);
  struct stat sb;
  ck_assert_int_eq(lstat(path("link"), &sb), 0);
  ck_assert(S_ISLNK(sb.st_mode));
  ck_assert_msg(muonref_state_load(a, target, &e) == MUONREF_OK, "%s", e.message); /* the target is the state */
  ck_assert_int_eq(symlink("/dev/null", path("null")), 0);
  ck_assert_msg(muonref_state_save(a, NULL, path("null"), &e) == MUONREF_OK, "%s", e.message);
  ck_assert_int_eq(lstat(path("null"), &sb), 0);
  ck_assert(S_ISLNK(sb.st_mode));
  ck_assert_int_eq(stat("/dev/null", &sb), 0);
  ck_assert(S_ISCHR(sb.st_mode));
  ck_assert_int_eq(symlink("missing", path("dangling")), 0);
  ck_assert_int_eq(muonref_state_save(a, NULL, path("dangling"), &e), MUONREF_EIO);
  snprintf(msg, sizeof msg, "%s: cannot write the state file: a symbolic link to a missing file", path("dangling"));
  ck_assert_msg(strstr(e.message, msg) == e.message, "%s", e.message);
  ck_assert_int_eq(access(path("missing"), F_OK), -1);
  ck_assert_int_eq(mkdir(path("folder"), 0700), 0);
  ck_assert_int_eq(muonref_state_save(a, NULL, path("folder"), &e), MUONREF_EIO);
  ck_assert_msg(strstr(e.message, "cannot write the state file: a folder"), "%s", e.message);
  muonref_optimizer_free(a);
}
END_TEST

/* The table of option fields (core/option_fields.c) covers every field of
 * muonref_options: its entries, sorted by offset, tile the struct with no
 * gap but the alignment padding of the next entry and end where the struct
 * ends (a field added to the struct and not to the table leaves a gap and
 * fails here; option_fields.c also pins sizeof(muonref_options) on x86-64,
 * which catches a field put into a padding hole).  GCC's
 * __builtin_clear_padding would name the padding directly, but GCC 12.2
 * misplaces every hole after the coefficient array of this struct by the
 * array's size (measured: 100-103 reported for the hole at 868-871), so it
 * is not used.  spec/muon.md 11.1 lists the table's fields in its order. */
/* The judge's fit (vectors/judge/fit_space.c) searches every option field or
 * excludes it with a written reason: a field added to core/option_fields.c
 * is never silently left out of the explanations. */
/* The traits of a refused case (vectors/judge/refusal.h, spec/vectors.md 7
 * "Refused cases"), each read from a hand-written case. */
START_TEST(refused_case_traits)
{
  static const struct {
    const char *json;
    unsigned want;
  } cases[] = {
    /* a null gradient at step 2 */
    {"{\"groups\": [{\"options\": {\"use_muon\": true}, \"params\": [0]}], \"params\": [{\"init\": {\"shape\": [4, 4]}}],"
     " \"steps\": [{\"grads\": [{}]}, {\"grads\": [null]}]}", 1u << MUONREF_TRAIT_MISSING_GRAD},
    /* a conv filter in an AUTO group, a 3-D one forced to Muon, a bias in an AdamW group */
    {"{\"groups\": [{\"options\": {}, \"params\": [0]}, {\"options\": {\"use_muon\": true}, \"params\": [1]},"
     " {\"options\": {\"use_muon\": false}, \"params\": [2, 3]}], \"params\": [{\"init\": {\"shape\": [8, 4, 3, 3]}},"
     " {\"init\": {\"shape\": [2, 4, 8]}}, {\"init\": {\"shape\": [8]}}, {\"init\": {\"shape\": [8, 4, 3, 3]}}],"
     " \"steps\": [{\"grads\": [{}, {}, {}, {}]}]}",
     (1u << MUONREF_TRAIT_MUON_CONV) | (1u << MUONREF_TRAIT_MUON_3D)},
    /* a bias forced to Muon, options set between steps, a round trip */
    {"{\"groups\": [{\"options\": {\"use_muon\": true}, \"params\": [0]}], \"params\": [{\"init\": {\"shape\": [48]}}],"
     " \"steps\": [{\"grads\": [{}]}, {\"grads\": [{}], \"setOptions\": [{}]}], \"roundTripAfter\": 1}",
     (1u << MUONREF_TRAIT_MUON_VECTOR) | (1u << MUONREF_TRAIT_SCHEDULE) | (1u << MUONREF_TRAIT_ROUND_TRIP)},
    /* an ns case: no trait */
    {"{\"input\": {\"shape\": [4, 4]}, \"nsSteps\": 5}", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_error_t e;
    json_t *t = json_loads(cases[i].json, 0, &e);
    ck_assert_msg(t, "case %zu: %s", i, e.text);
    ck_assert_uint_eq(muonref_case_traits(t), cases[i].want);
    json_decref(t);
  }
  muonref_options o;
  ck_assert_int_eq(muonref_profile_options("keller", &o, NULL), MUONREF_OK);
  char buf[160];
  muonref_trait_item(MUONREF_TRAIT_MISSING_GRAD, &o, 1, buf, sizeof buf);
  ck_assert_str_eq(buf, "missing_grad zeros -> error");
  muonref_trait_item(MUONREF_TRAIT_MUON_CONV, &o, 1, buf, sizeof buf);
  ck_assert_str_eq(buf, "conv_mode keller -> error");
  muonref_trait_item(MUONREF_TRAIT_MUON_VECTOR, &o, 0, buf, sizeof buf);
  ck_assert_str_eq(buf, "Muon parameter of fewer than 2 dimensions accepted");
}
END_TEST

START_TEST(fit_space_covers_every_option_field)
{
  for (size_t i = 0; i < muonref_option_field_count; i++) {
    const char *why;
    int s = muonref_fit_field_searched(i, &why);
    ck_assert_msg(s >= 0, "option field %s is neither searched by the fit nor excluded with a reason "
                  "(vectors/judge/fit_space.c SEARCHED, EXCLUDED)", muonref_option_fields[i].name);
    ck_assert(s == 1 || (why && strlen(why) > 10));
  }
  const char *unknown = muonref_fit_space_unknown();
  ck_assert_msg(!unknown, "vectors/judge/fit_space.c names %s, which is no option field", unknown ? unknown : "");
  /* and a searched field has candidates: some profile's space changes it
   * (a field every profile sets alike and with no alternatives listed
   * would be searched in name only) */
  size_t np = muonref_profile_count();
  muonref_fit_change **space = calloc(np, sizeof *space);
  size_t *n = calloc(np, sizeof *n);
  ck_assert(space && n);
  for (size_t p = 0; p < np; p++)
    n[p] = muonref_fit_space(muonref_profile_at(p)->name, &space[p]);
  for (size_t i = 0; i < muonref_option_field_count; i++) {
    const char *why;
    int found = 0;
    if (muonref_fit_field_searched(i, &why) != 1)
      continue;
    for (size_t p = 0; p < np && !found; p++)
      for (size_t k = 0; k < n[p] && !found; k++)
        found = space[p][k].field == (int)i;
    ck_assert_msg(found, "no profile's fit space changes %s (vectors/judge/fit_space.c SEARCHED: give it candidates)",
                  muonref_option_fields[i].name);
  }
  for (size_t p = 0; p < np; p++)
    free(space[p]);
  free(space), free(n);
}
END_TEST

/* The names of the fit's changes (vectors/judge/fit_space.c muonref_fit_describe,
 * spec/vectors.md section 7): a value run in every group of a field the
 * profile's key table names replaces each case's own value, so it is named
 * "KEY (any) -> VALUE", never from the profile's default (a keller case
 * that gave weight_decay 0.1 was told "weight_decay 0 -> 0.01"); a changed
 * default keeps "default ... OLD -> NEW", and a field no key names (no case
 * gives it) "FIELD OLD -> NEW". */
START_TEST(fit_names_a_value_run_everywhere)
{
  muonref_fit_change *space = NULL;
  size_t n = muonref_fit_space("keller", &space);
  int any = 0, dflt = 0, unkeyed = 0;
  for (size_t k = 0; k < n; k++) {
    char text[512];
    muonref_fit_describe(&space[k], "keller", text, sizeof text);
    ck_assert_msg(strncmp(text, "weight_decay 0 ->", 17), "a change named from the profile's default: %s", text);
    any |= !strcmp(text, "weight_decay (any) -> 0.01");
    dflt |= !strcmp(text, "default (Muon groups) weight_decay 0 -> 0.01");
    unkeyed |= !strcmp(text, "ns_safety 1 -> 1.02");
  }
  ck_assert_msg(any && dflt && unkeyed, "keller's space names weight_decay (any) -> 0.01: %d, its default change: %d, "
                "ns_safety 1 -> 1.02: %d", any, dflt, unkeyed);
  free(space);
}
END_TEST

START_TEST(option_table_covers_every_field)
{
  size_t n = muonref_option_field_count, start[2 * 128], size[2 * 128], align[2 * 128], k = 0;
  ck_assert_uint_le(n, 128);
  for (size_t i = 0; i < n; i++) {
    const muonref_option_field *f = &muonref_option_fields[i];
    size_t w = f->kind == MUONREF_FIELD_F64 || f->kind == MUONREF_FIELD_I64 ? 8 : 4;
    start[k] = f->off, size[k] = w, align[k++] = w;
    if (f->kind == MUONREF_FIELD_COEFFS)
      start[k] = f->off2, size[k] = sizeof(((muonref_options *)0)->coeffs), align[k++] = _Alignof(muonref_coeff);
    if (f->kind == MUONREF_FIELD_PATTERNS)
      start[k] = f->off2, size[k] = sizeof(((muonref_options *)0)->exclude_patterns), align[k++] = 1;
    if (f->kind == MUONREF_FIELD_SIZES)
      start[k] = f->off2, size[k] = sizeof(((muonref_options *)0)->ns_split), align[k++] = _Alignof(int);
  }
  for (size_t i = 1; i < k; i++) /* insertion sort by offset */
    for (size_t j = i; j > 0 && start[j - 1] > start[j]; j--) {
      size_t t;
      t = start[j], start[j] = start[j - 1], start[j - 1] = t;
      t = size[j], size[j] = size[j - 1], size[j - 1] = t;
      t = align[j], align[j] = align[j - 1], align[j - 1] = t;
    }
  size_t end = 0;
  for (size_t i = 0; i < k; i++) {
    size_t want = (end + align[i] - 1) / align[i] * align[i];
    ck_assert_msg(start[i] == want, "bytes %zu to %zu of muonref_options belong to no entry of core/option_fields.c "
                  "(a new field?)", end, start[i] - 1);
    end = start[i] + size[i];
  }
  size_t a = _Alignof(muonref_options);
  ck_assert_msg(sizeof(muonref_options) == (end + a - 1) / a * a, "bytes %zu to %zu of muonref_options belong to no "
                "entry of core/option_fields.c (a new field at the end?)", end, sizeof(muonref_options) - 1);
  /* spec/muon.md 11.1: the format-5 row names the table's fields, in order */
  const char *src = getenv("MUONREF_SRCDIR");
  char spec[4200];
  snprintf(spec, sizeof spec, "%s/spec/muon.md", src ? src : ".");
  FILE *f = fopen(spec, "r");
  ck_assert_msg(f != NULL, "%s", spec);
  static char line[16384];
  int found = 0;
  while (!found && fgets(line, sizeof line, f))
    found = !strncmp(line, "| each group (format 13) |", 26);
  fclose(f);
  ck_assert_msg(found, "spec/muon.md has no row '| each group (format 13) |'");
  const char *at = line;
  for (size_t i = 0; i < muonref_option_field_count; i++) {
    const muonref_option_field *fl = &muonref_option_fields[i];
    char want[80];
    snprintf(want, sizeof want, "`%s`", fl->kind == MUONREF_FIELD_COEFFS ? "n_coeffs"
                                        : fl->kind == MUONREF_FIELD_PATTERNS ? "n_exclude_patterns"
                                        : fl->kind == MUONREF_FIELD_SIZES    ? "n_ns_split"
                                                                              : fl->name);
    const char *hit = strstr(at, want);
    ck_assert_msg(hit != NULL, "spec/muon.md 11.1 does not list %s after the fields before it", want);
    at = hit + strlen(want);
  }
}
END_TEST

/* A value of field f other than the one in o that o's validation accepts
 * and an optimizer over `shapes` can be built with (into *out). */
static int other_value(const muonref_options *o, const muonref_option_field *f, const muonref_shape *shapes,
                       size_t n, muonref_options *out)
{
  for (int k = 0; k < 8; k++) {
    *out = *o;
    char *at = (char *)out + f->off;
    if (f->kind == MUONREF_FIELD_F64) {
      static const double alt[8] = {0.5, 0.25, 1.5, 2.0, 0.0, 0.125, 0.75, 3.0};
      double d = muonref_option_field_f64(o, f) * (k < 2 ? 0.5 + 0.25 * k : 0) + (k < 2 ? 0 : alt[k]);
      memcpy(at, &d, sizeof d);
    } else if (f->kind == MUONREF_FIELD_I32) {
      int v = (int)muonref_option_field_int(o, f) + (k % 2 ? -(k / 2 + 1) : k / 2 + 1);
      memcpy(at, &v, sizeof v);
    } else if (f->kind == MUONREF_FIELD_I64) {
      long v = (long)muonref_option_field_int(o, f) + k + 1;
      memcpy(at, &v, sizeof v);
    } else if (f->kind == MUONREF_FIELD_COEFFS) {
      if (k == 0)
        out->coeffs[0].b += 0.125;
      else
        out->coeffs[out->n_coeffs] = out->coeffs[0], out->n_coeffs += k;
    } else if (f->kind == MUONREF_FIELD_SIZES) { /* sizes that are not applied: any shape routes */
      out->n_ns_split = 2, out->ns_split[0] = 1 + k, out->ns_split[1] = 1;
      out->ns_split_mode = MUONREF_SPLIT_OFF;
    } else {
      out->n_exclude_patterns = 1;
      snprintf(out->exclude_patterns[0], MUONREF_PATTERN_LEN, "%s", k ? "zz" : "x");
    }
    if (!muonref_option_fields_differ(o, out, 0) || muonref_options_validate(out, NULL))
      continue;
    muonref_group g = {*out, n, shapes};
    muonref_optimizer *t = muonref_optimizer_create(&g, 1, NULL);
    if (t) {
      muonref_optimizer_free(t);
      return 1;
    }
  }
  return 0;
}

/* Every field of the options is stored and checked: a file saved from an
 * optimizer loads into one whose options differ in any single field only
 * as MUONREF_ESTATE naming that field (repro state_load_ignores_options.c:
 * clip_grad_norm, adam_variant, scale_extra, ... were accepted in format
 * 1), for every entry of the table, from two profiles; and `muonref
 * state` prints each field. */
START_TEST(every_option_field_is_stored_and_checked)
{
  static const muonref_shape sh[2] = {{2, {4, 8}}, {2, {2, 2}}};
  const char *profiles[] = {"nemo", "keras"};
  model m;
  init_model(&m);
  for (int p = 0; p < 2; p++) {
    muonref_options o;
    ck_assert_int_eq(muonref_profile_options(profiles[p], &o, NULL), MUONREF_OK);
    o.n_exclude_patterns = 1; /* a pattern that matches nothing, so that exclude_patterns is tried on both */
    snprintf(o.exclude_patterns[0], MUONREF_PATTERN_LEN, "nothing-matches");
    muonref_group g = {o, 2, sh};
    muonref_error e;
    muonref_optimizer *a = muonref_optimizer_create(&g, 1, &e);
    ck_assert_msg(a != NULL, "%s", e.message);
    float *ps[2] = {m.w[0], m.w[2]};
    muonref_grad gs[2] = {{m.g[0], MUONREF_DENSE, MUONREF_FLOAT32}, {m.g[2], MUONREF_DENSE, MUONREF_FLOAT32}};
    ck_assert_msg(muonref_optimizer_step(a, 2, ps, gs, &e) == MUONREF_OK, "%s", e.message);
    ck_assert_int_eq(muonref_state_save(a, profiles[p], path("a"), &e), MUONREF_OK);
    size_t tried = 0;
    for (size_t i = 0; i < muonref_option_field_count; i++) {
      const muonref_option_field *f = &muonref_option_fields[i];
      muonref_options edited;
      if (!other_value(&o, f, sh, 2, &edited)) {
        fprintf(stderr, "%s: no other value of %s that validates and routes these shapes\n", profiles[p], f->name);
        continue;
      }
      tried++;
      muonref_group gb = {edited, 2, sh};
      muonref_optimizer *b = muonref_optimizer_create(&gb, 1, &e);
      ck_assert_msg(b != NULL, "%s: %s", f->name, e.message);
      char want[128];
      snprintf(want, sizeof want, "group 0: option %s differs from the optimizer's", f->name);
      muonref_error le = {0};
      int idle = !o.use_ema && !edited.use_ema && (!strcmp(f->name, "ema_momentum") || !strcmp(f->name, "ema_overwrite"));
      if (idle) /* the moving average's values where neither keeps one change no step (spec/muon.md 11.1) */
        ck_assert_msg(muonref_state_load(b, path("a"), &le) == MUONREF_OK, "%s %s: %s", profiles[p], f->name,
                      le.message);
      else
        ck_assert_msg(muonref_state_load(b, path("a"), &le) == MUONREF_ESTATE && strstr(le.message, want),
                      "%s %s: load gave %d '%s'", profiles[p], f->name, le.status, le.message);
      muonref_optimizer_free(b);
    }
    ck_assert_msg(tried == muonref_option_field_count, "%s: only %zu of %zu fields tried", profiles[p], tried,
                  muonref_option_field_count);
    muonref_optimizer_free(a);
  }
}
END_TEST

/* A format-1 file (tests/data/state_v1.bin, written by muonref d7bd2c1's
 * muonref_state_save: tests/data/state_v1.c) still loads under the
 * documented rule: its 18 fields are checked, the others are not recorded.
 * Saving again writes the current format, which reads back the same state. */
START_TEST(format_1_still_loads)
{
  const char *src = getenv("MUONREF_SRCDIR");
  char v1[4200];
  snprintf(v1, sizeof v1, "%s/tests/data/state_v1.bin", src ? src : ".");
  muonref_state_file f;
  muonref_error e;
  ck_assert_msg(muonref_state_file_read(v1, &f, &e) == MUONREF_OK, "%s", e.message);
  ck_assert_uint_eq(f.version, 1);
  ck_assert_str_eq(f.profile, "nemo");
  ck_assert(f.options[1].lr == 0.5 && f.options[1].ns_safety == 1.0 && f.options[1].scale_extra == 1.0);
  muonref_state_file_free(&f);
  muonref_optimizer *a = make(0.5, SHAPES);
  ck_assert_msg(muonref_state_load(a, v1, &e) == MUONREF_OK, "%s", e.message);
  muonref_param_state st;
  ck_assert_int_eq(muonref_optimizer_state(a, 0, &st, NULL), MUONREF_OK);
  ck_assert(st.initialized && st.use_muon && st.step == 2);
  /* a field format 1 does not store: not checked (the documented rule) */
  muonref_options x = tu_nemo(), y = tu_nemo();
  x.scale_extra = 2.0;
  y.lr = 0.5, y.ns_format = MUONREF_NS_FP32, y.scale_extra = 2.0;
  muonref_group g[2] = {{x, 2, SHAPES}, {y, 1, SHAPES + 2}};
  muonref_optimizer *b = muonref_optimizer_create(g, 2, &e);
  ck_assert_msg(muonref_state_load(b, v1, &e) == MUONREF_OK, "%s", e.message);
  /* a field it stores: checked */
  muonref_optimizer *c = make(0.25, SHAPES);
  ck_assert_int_eq(muonref_state_load(c, v1, &e), MUONREF_ESTATE);
  ck_assert_msg(strstr(e.message, "group 1: option lr differs"), "%s", e.message);
  /* saved again: format 2, the same state */
  ck_assert_int_eq(muonref_state_save(a, "nemo", path("v2"), &e), MUONREF_OK);
  ck_assert_int_eq(muonref_state_file_read(path("v2"), &f, &e), MUONREF_OK);
  ck_assert_uint_eq(f.version, MUONREF_STATE_VERSION);
  muonref_state_file_free(&f);
  muonref_optimizer *d = make(0.5, SHAPES);
  ck_assert_int_eq(muonref_state_load(d, path("v2"), &e), MUONREF_OK);
  ck_assert(same_state(a, d));
  muonref_optimizer_free(a), muonref_optimizer_free(b), muonref_optimizer_free(c), muonref_optimizer_free(d);
}
END_TEST

/* The number of bytes entry f of o takes in a state file (spec/muon.md 11.1). */
static size_t field_bytes(const muonref_options *o, const muonref_option_field *f)
{
  size_t len = f->kind == MUONREF_FIELD_I32 ? 4
               : f->kind == MUONREF_FIELD_SIZES ? 4 + 4 * (size_t)o->n_ns_split
               : f->kind != MUONREF_FIELD_COEFFS && f->kind != MUONREF_FIELD_PATTERNS ? 8
               : f->kind == MUONREF_FIELD_COEFFS ? 4 + 24 * (size_t)o->n_coeffs : 4;
  for (int k = 0; f->kind == MUONREF_FIELD_PATTERNS && k < o->n_exclude_patterns; k++)
    len += 4 + strlen(o->exclude_patterns[k]);
  return len;
}

/* The output of `muonref state FILE` (2>&1) into out; its exit status, or -1
 * where make check's MUONREF is not set (the test then checks nothing more). */
static int state_command_output(const char *file, char *out, size_t n)
{
  const char *mr = getenv("MUONREF");
  if (!mr || access(mr, X_OK) != 0)
    return -1;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "'%s' state '%s' 2>&1", mr, file);
  FILE *p = popen(cmd, "r");
  size_t got = fread(out, 1, n - 1, p);
  int rc = pclose(p);
  out[got] = '\0';
  return WEXITSTATUS(rc);
}

/* The parameters of a saved file of this test's three (src: the first's group; no group accumulates) into
 * dst without format 12's count of micro-steps (u64 after each state, spec/muon.md 11.1): its bytes. */
static size_t strip_accum_calls(const unsigned char *src, unsigned char *dst)
{
  size_t at = 0, out = 0;
  for (int i = 0; i < NP; i++) {
    uint32_t ndim, init, muon;
    uint64_t numel, m2 = 0;
    memcpy(&ndim, src + at + 8, 4);
    size_t head = 8 + 4 + 8 * (size_t)ndim;
    memcpy(&init, src + at + head, 4), memcpy(&muon, src + at + head + 4, 4);
    memcpy(&numel, src + at + head + 16, 8);
    size_t len = head + 24;
    if (init && muon) {
      memcpy(&m2, src + at + len + 4 * numel, 8);
      len += 4 * numel + 8 + 4 * m2;
    } else if (init) {
      len += 8 * numel;
    }
    memcpy(dst + out, src + at, len);
    out += len, at += len + 8;
  }
  return out;
}

/* A file of format 3 (before timm's and optax's fields, decay_method and adam_eps_root: the same bytes without the entries
 * since format 4 at the end of each group's options, spec/muon.md 11.1), made here from a saved file: it loads, those fields read
 * as zero, and the state is the one saved. */
START_TEST(format_3_still_loads)
{
  model m;
  init_model(&m);
  muonref_optimizer *a = make(0.5, SHAPES), *b = make(0.5, SHAPES);
  for (int k = 0; k < 2; k++)
    step(a, &m, 1, k);
  muonref_error e;
  ck_assert_int_eq(muonref_state_save(a, NULL, path("s"), &e), MUONREF_OK);
  size_t n, at = 60, out = 60; /* the header: magic, version, profile, n_groups, n_params */
  unsigned char *good = slurp(path("s"), &n), *x = malloc(n);
  memcpy(x, good, 60);
  x[8] = 3;
  for (size_t g = 0; g < 2; g++) {
    const muonref_options *o = muonref_optimizer_group_options(a, g);
    for (size_t i = 0; i < muonref_option_field_count; i++) {
      const muonref_option_field *f = &muonref_option_fields[i];
      size_t len = field_bytes(o, f);
      if (f->since <= 3)
        memcpy(x + out, good + at, len), out += len;
      at += len;
    }
  }
  ck_assert_uint_eq(at - out, 2 * 112); /* normalize_spatial, nuclear_scale, ns_precondition, decay_method, adam_eps_root,
                                        adam_l2, maximize, cautious_update, adam_l2_grad, moment2_prescale,
                                        clip_grad_form, clip_grad_norm_each, clip_grad_value, loss_scale, ns_heads,
                                        n_ns_split (no sizes), ns_split_mode, ns_split_scale, grad_accumulation,
                                        use_ema, ema_momentum, ema_overwrite, master_weights */
  out += strip_accum_calls(good + at, x + out); /* then the CRC's 4 bytes, rewritten below */
  out += 4;
  fix_crc(x, out);
  spill(path("v3"), x, out);
  muonref_state_file f;
  ck_assert_msg(muonref_state_file_read(path("v3"), &f, &e) == MUONREF_OK, "%s", e.message);
  ck_assert_uint_eq(f.version, 3);
  ck_assert(!f.options[1].nuclear_scale && !f.options[1].normalize_spatial && f.options[1].lr == 0.5 &&
            f.options[1].decay_method == MUONREF_DECAY_DECOUPLED && f.options[1].adam_eps_root == 0.0 &&
            !f.options[1].adam_l2 && !f.options[1].maximize && !f.options[1].cautious_update &&
            !f.options[1].adam_l2_grad && !f.options[1].moment2_prescale &&
            f.options[1].clip_grad_form == MUONREF_CLIP_MEGATRON && f.options[1].clip_grad_norm_each == 0.0 &&
            f.options[1].clip_grad_value == 0.0 && f.options[1].loss_scale == 0.0);
  muonref_state_file_free(&f);
  ck_assert_msg(muonref_state_load(b, path("v3"), &e) == MUONREF_OK, "%s", e.message);
  ck_assert(same_state(a, b));
  /* muonref state says which fields the file lacks and what each reads as */
  char text[8192];
  int rc = state_command_output(path("v3"), text, sizeof text);
  ck_assert_msg(rc == -1 || (rc == 0 && strstr(text, "format version 3") &&
                             strstr(text, "format 3 does not store these fields; each reads as zero: normalize_spatial 0, "
                                          "nuclear_scale 0,") &&
                             strstr(text, " ns_precondition frobenius, decay_method decoupled, adam_eps_root 0.0, adam_l2 0, "
                                          "maximize 0,\n  cautious_update 0, adam_l2_grad 0, moment2_prescale 0, clip_grad_form megatron, "
                                          "clip_grad_norm_each 0.0,\n  clip_grad_value 0.0, loss_scale 0.0, ns_heads 0, ns_split [], "
                                          "ns_split_mode rows, ns_split_scale own,\n  grad_accumulation 0, use_ema 0, "
                                          "ema_momentum 0.0, ema_overwrite 0, master_weights 0\n") &&
                             strstr(text, " cautious_wd 0\n")), /* each group's line ends with format 3's last field */
                "%s", text);
  free(good), free(x);
  muonref_optimizer_free(a), muonref_optimizer_free(b);
}
END_TEST

/* A file whose group options cannot route its parameters (row blocks [2, 1, 1] over query groups saved from a
 * (16, 8) and an (8, 8) matrix, then the mode patched to ROWS, whose sizes must sum to dim 0: 4), with a
 * matching CRC: no optimizer writes it, and the reader refuses it (EFORMAT, naming the parameter and the
 * route's message). */
START_TEST(unroutable_split_is_refused)
{
  static const muonref_shape sh[2] = {{2, {16, 8}}, {2, {8, 8}}};
  muonref_options o = tu_nemo();
  o.use_muon = MUONREF_USE_MUON_TRUE;
  o.n_ns_split = 3, o.ns_split[0] = 2, o.ns_split[1] = 1, o.ns_split[2] = 1;
  o.ns_split_mode = MUONREF_SPLIT_GROUPS;
  muonref_group grp = {o, 2, sh};
  muonref_error e;
  muonref_optimizer *a = muonref_optimizer_create(&grp, 1, &e);
  ck_assert_msg(a != NULL, "%s", e.message);
  ck_assert_int_eq(muonref_state_save(a, NULL, path("s"), &e), MUONREF_OK);
  size_t n, at = 60; /* the header: magic, version, profile, n_groups, n_params */
  unsigned char *x = slurp(path("s"), &n);
  const muonref_option_field *mode = muonref_option_field_named("ns_split_mode");
  for (size_t i = 0; i < muonref_option_field_count && &muonref_option_fields[i] != mode; i++)
    at += field_bytes(&o, &muonref_option_fields[i]);
  uint32_t v;
  memcpy(&v, x + at, 4);
  ck_assert_uint_eq(v, MUONREF_SPLIT_GROUPS);
  v = MUONREF_SPLIT_ROWS;
  memcpy(x + at, &v, 4);
  fix_crc(x, n);
  spill(path("x"), x, n);
  muonref_state_file f;
  ck_assert_int_eq(muonref_state_file_read(path("x"), &f, &e), MUONREF_EFORMAT);
  ck_assert_msg(strstr(e.message, "parameter 0: its group's options refuse its shape (16, 8)") &&
                strstr(e.message, "must sum to dim 0"), "%s", e.message);
  free(x);
  muonref_optimizer_free(a);
}
END_TEST

/* Every enum field stored as 0xffffffff (u32) in a file with a matching
 * CRC is refused (EFORMAT) with the number in the file, 4294967295, and the
 * field's name, by the library and by `muonref state` (exit 2); a count of
 * coefficient triples or of patterns out of range is refused naming the
 * count, not a later field read out of its place. */
START_TEST(an_enum_out_of_range_is_named_as_stored)
{
  muonref_optimizer *a = make(0.5, SHAPES);
  muonref_error e;
  ck_assert_int_eq(muonref_state_save(a, NULL, path("s"), &e), MUONREF_OK);
  size_t n, at = 60, tried = 0; /* the header: magic, version, profile, n_groups, n_params */
  unsigned char *good = slurp(path("s"), &n), *x = malloc(n);
  const muonref_options *o = muonref_optimizer_group_options(a, 0);
  for (size_t i = 0; i < muonref_option_field_count; i++) {
    const muonref_option_field *f = &muonref_option_fields[i];
    if (f->enum_name) {
      memcpy(x, good, n);
      memset(x + at, 0xff, 4);
      fix_crc(x, n);
      spill(path("x"), x, n);
      char want[128];
      snprintf(want, sizeof want, "group 0: invalid options: Unknown %s 4294967295, expected one of (", f->name);
      muonref_state_file sf;
      muonref_error le = {0};
      ck_assert_msg(muonref_state_file_read(path("x"), &sf, &le) == MUONREF_EFORMAT && strstr(le.message, want),
                    "%s: '%s'", f->name, le.message);
      char out[4096];
      int rc = state_command_output(path("x"), out, sizeof out);
      ck_assert_msg(rc == -1 || (rc == 2 && strstr(out, want)), "%s: exit %d '%s'", f->name, rc, out);
      tried++;
    }
    if (f->kind == MUONREF_FIELD_COEFFS || f->kind == MUONREF_FIELD_PATTERNS || f->kind == MUONREF_FIELD_SIZES)
      for (int k = 0; k < 2; k++) { /* a count out of range */
        uint32_t bad = k ? 0xffffffffu
                         : f->kind == MUONREF_FIELD_COEFFS ? 0
                         : f->kind == MUONREF_FIELD_SIZES  ? MUONREF_MAX_SPLIT + 1
                                                           : MUONREF_MAX_PATTERNS + 1;
        memcpy(x, good, n);
        memcpy(x + at, &bad, 4);
        fix_crc(x, n);
        spill(path("x"), x, n);
        char want[128];
        if (f->kind == MUONREF_FIELD_COEFFS)
          snprintf(want, sizeof want, "group 0: %lu Newton-Schulz coefficient triples, expected 1 to %d",
                   (unsigned long)bad, MUONREF_MAX_COEFFS);
        else if (f->kind == MUONREF_FIELD_SIZES)
          snprintf(want, sizeof want, "group 0: %lu row block sizes (ns_split), expected at most %d",
                   (unsigned long)bad, MUONREF_MAX_SPLIT);
        else
          snprintf(want, sizeof want, "group 0: %lu exclude patterns, expected at most %d", (unsigned long)bad,
                   MUONREF_MAX_PATTERNS);
        muonref_state_file sf;
        muonref_error le = {0};
        ck_assert_msg(muonref_state_file_read(path("x"), &sf, &le) == MUONREF_EFORMAT && strstr(le.message, want),
                      "%s %u: '%s'", f->name, bad, le.message);
      }
    at += field_bytes(o, f);
  }
  ck_assert_uint_ge(tried, 20);
  free(good), free(x);
  muonref_optimizer_free(a);
}
END_TEST

/* The library never writes a checkpoint it then refuses to read: a profile
 * name with a control character is refused at save; a state imported at
 * MUONREF_MAX_STEP saves and loads, and a step that would count past it is
 * refused (ESTATE) with nothing written. */
START_TEST(never_writes_what_it_refuses)
{
  muonref_optimizer *a = make(0.5, SHAPES);
  muonref_error e;
  ck_assert_int_eq(muonref_state_save(a, "nemo\n9999", path("s"), &e), MUONREF_EOPTION);
  ck_assert_msg(strstr(e.message, "byte 0x0a at 4"), "%s", e.message);
  ck_assert_int_eq(access(path("s"), F_OK), -1);
  ck_assert_int_eq(muonref_state_save(a, "nemo\x7f", path("s"), &e), MUONREF_EOPTION);
  /* a state at the limit */
  float buf[32] = {0};
  muonref_param_state st = {1, 1, MUONREF_MAX_STEP, 32, buf, NULL, NULL, NULL, 0, NULL, 0, NULL};
  ck_assert_int_eq(muonref_optimizer_set_state(a, 0, &st, &e), MUONREF_OK);
  ck_assert_int_eq(muonref_state_save(a, NULL, path("s"), &e), MUONREF_OK);
  muonref_optimizer *b = make(0.5, SHAPES);
  ck_assert_msg(muonref_state_load(b, path("s"), &e) == MUONREF_OK, "%s", e.message);
  model m;
  init_model(&m);
  model before = m;
  float *ps[NP];
  muonref_grad gs[NP];
  for (int i = 0; i < NP; i++)
    ps[i] = m.w[i], gs[i] = (muonref_grad){m.g[i], MUONREF_DENSE, MUONREF_FLOAT32};
  ck_assert_int_eq(muonref_optimizer_step(b, NP, ps, gs, &e), MUONREF_ESTATE);
  ck_assert_msg(strstr(e.message, "Step for parameter 0: its step count is 9007199254740992"), "%s", e.message);
  ck_assert(memcmp(&m, &before, sizeof m) == 0);
  ck_assert(same_state(a, b));
  muonref_optimizer_free(a), muonref_optimizer_free(b);
}
END_TEST

/* `muonref state FILE`: the summary of a good file, exit 2 for a bad one. */
START_TEST(state_command)
{
  const char *mr = getenv("MUONREF");
  if (!mr || access(mr, X_OK) != 0)
    return; /* run by make check, which sets MUONREF */
  model m;
  init_model(&m);
  muonref_optimizer *a = make(0.5, SHAPES);
  step(a, &m, 0, 0);
  muonref_error e;
  ck_assert_int_eq(muonref_state_save(a, "nemo", path("s"), &e), MUONREF_OK);
  char cmd[512], out[4096] = {0};
  snprintf(cmd, sizeof cmd, "'%s' state '%s' 2>&1", mr, path("s"));
  FILE *p = popen(cmd, "r");
  size_t got = fread(out, 1, sizeof out - 1, p);
  int rc = pclose(p);
  out[got] = '\0';
  ck_assert_msg(rc == 0, "%s", out);
  ck_assert_msg(strstr(out, "profile nemo, 2 groups, 3 parameters") && strstr(out, "(verified)") &&
                strstr(out, "parameter 0: group 0, shape (4, 8), Muon (momentum_buffer), step 1") &&
                strstr(out, "parameter 1: group 0, shape (8,), AdamW (exp_avg, exp_avg_sq), step 1") &&
                strstr(out, "parameter 2: group 1, shape (2, 2), no state yet") && strstr(out, "group 1 (1 parameters): lr 0.5") &&
                strstr(out, "format version 13") && strstr(out, " clip_grad_norm 0.0,") &&
                strstr(out, " scale_extra 1.0,") && strstr(out, " all_missing_error 0,") &&
                strstr(out, " moment2 none,") && strstr(out, " cautious_wd 0,") &&
                strstr(out, " ns_precondition frobenius,") && strstr(out, " decay_method decoupled, adam_eps_root 0.0, adam_l2 0, maximize 0,\n  cautious_update 0, adam_l2_grad 0, "
                                     "moment2_prescale 0, clip_grad_form megatron, clip_grad_norm_each 0.0,\n  clip_grad_value 0.0, loss_scale 0.0, "
                                     "ns_heads 0, ns_split [], ns_split_mode rows, ns_split_scale own,\n  grad_accumulation 0, use_ema 0, "
                                     "ema_momentum 0.0, ema_overwrite 0, master_weights 0\n"),
                "%s", out);
  size_t n;
  unsigned char *b = slurp(path("s"), &n);
  b[n / 2] ^= 4;
  spill(path("s"), b, n);
  free(b);
  snprintf(cmd, sizeof cmd, "'%s' state '%s' >/dev/null 2>&1", mr, path("s"));
  rc = system(cmd);
  ck_assert_int_eq(WEXITSTATUS(rc), 2);
  /* a FIFO is refused at once, not waited on for a writer */
  ck_assert_int_eq(mkfifo(path("fifo"), 0600), 0);
  muonref_state_file sf;
  muonref_error fe = {0};
  ck_assert_int_eq(muonref_state_file_read(path("fifo"), &sf, &fe), MUONREF_EIO);
  ck_assert_msg(strstr(fe.message, "not a regular file"), "%s", fe.message);
  snprintf(cmd, sizeof cmd, "timeout 20 '%s' state '%s' >/dev/null 2>&1", mr, path("fifo"));
  rc = system(cmd);
  ck_assert_int_eq(WEXITSTATUS(rc), 2);
  unlink(path("fifo"));
  muonref_optimizer_free(a);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("state");
  TCase *tc = tcase_create("state");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120); /* about 1200 small files are written and read */
  tcase_add_test(tc, round_trip_is_bitwise);
  tcase_add_test(tc, accumulation_round_trip);
  tcase_add_test(tc, every_corruption_is_refused_and_changes_nothing);
  tcase_add_test(tc, save_is_atomic_and_errors_are_named);
  tcase_add_test(tc, save_keeps_links_and_refuses_folders);
  tcase_add_test(tc, state_command);
  tcase_add_test(tc, option_table_covers_every_field);
  tcase_add_test(tc, fit_space_covers_every_option_field);
  tcase_add_test(tc, fit_names_a_value_run_everywhere);
  tcase_add_test(tc, refused_case_traits);
  tcase_add_test(tc, every_option_field_is_stored_and_checked);
  tcase_add_test(tc, format_1_still_loads);
  tcase_add_test(tc, format_3_still_loads);
  tcase_add_test(tc, unroutable_split_is_refused);
  tcase_add_test(tc, an_enum_out_of_range_is_named_as_stored);
  tcase_add_test(tc, never_writes_what_it_refuses);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
