/* muonref: the vector generator's driver: the area table, file headers,
 * writing (see gen.h; spec/vectors.md section 6). */
#include <mpfr.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "files.h"
#include "gen.h"
#include "gen_run.h"

#define GEN_SEED 20261130u

static const struct {
  const char *name;
  void (*fill)(gen_ctx *);
  const char *header;
} AREAS[] = {
  {"routing", gen_area_routing, "Routing between the Muon update and the AdamW fallback by shape, threshold and use_muon "
                                "(spec/muon.md section 2); each shape once with a gradient and once with a zero gradient, "
                                "where only the branch's decay acts."},
  {"scaling", gen_area_scaling, "The shape factor of the update for fan_in, fan_out and none on tall, wide and square "
                                "matrices, both layouts of one layer, and forced convolution filters (section 5)."},
  {"weight_decay", gen_area_weight_decay, "Decoupled weight decay with the unscaled lr in both branches, per group, "
                                          "before the update (sections 4, 8, 9)."},
  {"momentum", gen_area_momentum, "Sum-form momentum and Nesterov over several steps whose gradient directions change "
                                  "(section 6); expected momentum buffers included."},
  {"adamw", gen_area_adamw, "The AdamW fallback: moments, bias correction, eps placement, lr ratio (section 9)."},
  {"gradients", gen_area_gradients, "Missing gradients (skipped), zero gradients (finite zero update) and the "
                                    "scale invariance of the orthogonalised update (sections 3, 7)."},
  {"newton_schulz", gen_area_newton_schulz, "Newton-Schulz on structured inputs (bf16 exactly defined), random inputs, "
                                            "step counts, tiny norms, zero and rank-deficient matrices; the exact iterate "
                                            "and the exact polar factor (section 7)."},
  {"transpose", gen_area_transpose, "Transpose pairs: NS(G^T) must be bitwise NS(G)^T for one implementation (section 7)."},
  {"state", gen_area_state, "State export and import into a fresh optimizer in the middle of a run (section 11)."},
  {"errors", gen_area_errors, "Invalid options and inputs with the exact message of the error catalogue (section 12)."},
  {"sharded", gen_area_sharded, "Muon matrices owned whole by ranks (sorted by size as in Keller's distributed Muon, or "
                                "round robin as in ZeRO-1): the expected values are the unsharded run's; the member "
                                "\"sharding\" says which rank owns which parameter (spec/vectors.md 2.5)."},
  {"sharded_tp", gen_area_sharded_tp, "Muon matrices split by rows or columns over ranks (tensor parallel): the "
                                      "expected values are the update of the whole matrix; the member \"sharding\" "
                                      "gives each rank's slice (spec/vectors.md 2.5)."},
};

static json_t *notes(void)
{
  static const char *const N[][2] = {
    {"Bf16Exact", "expectedBf16 / expected.bf16 is the exact result of the bf16 semantics in each accepted evaluation order (expectedBf16Orders / bf16Orders), certified independent of the order of accumulation"},
    {"Bf16Noise", "the bf16 Newton-Schulz result is not exactly defined here (2-5 % from the exact one at these sizes); a Muon parameter's update is judged relative to its norm, with an allowance 1.5 times the largest deviation measured for correct bf16 implementations"},
    {"PlatformRobust", "no measured platform effect of PyTorch 1.13 CPU (bf16-rounded scalars, bf16 accumulation on strided operands) can change this case's verdict: a correct port passes it on that platform, raw"},
    {"ZeroGradient", "zero gradients: only decay acts"},
    {"ErrorMessage", "the implementation must refuse with exactly this message"},
    {"NanOption", "NeMo accepts this value; refusing it or running are both acceptable"},
    {"StateRoundTrip", "the optimizer state is exported and imported into a fresh optimizer mid-run"},
  };
  json_t *o = json_object();
  for (size_t i = 0; i < sizeof N / sizeof N[0]; i++)
    json_object_set_new(o, N[i][0], json_string(N[i][1]));
  json_object_set_new(o, "BugB01", json_string("bug-reports B01: a Muon-routed matrix must not get plain lr * g"));
  json_object_set_new(o, "BugB03", json_string("bug-reports B03: conv filters forced to Muon are flattened to (out, rest)"));
  json_object_set_new(o, "BugB04", json_string("bug-reports B04: a (C, 1, 1) LayerScale is not a matrix"));
  json_object_set_new(o, "BugB07", json_string("bug-reports B07: the scale ratio depends on the storage layout"));
  json_object_set_new(o, "BugB09", json_string("bug-reports B09: sum vs EMA momentum buffers"));
  json_object_set_new(o, "BugB13", json_string("bug-reports B13: save, load, step equals an uninterrupted run"));
  json_object_set_new(o, "BugB14", json_string("bug-reports B14: the saved state holds every momentum buffer"));
  json_object_set_new(o, "BugB15", json_string("bug-reports B15: a parameter without gradient is skipped, not zero-filled"));
  json_object_set_new(o, "BugB16", json_string("bug-reports B16: a zero gradient gives a finite zero update"));
  json_object_set_new(o, "BugB19", json_string("bug-reports B19: complex gradients are refused"));
  json_object_set_new(o, "BugB21", json_string("bug-reports B21: the orthogonalised update is not clipped by the gradient norm"));
  json_object_set_new(o, "BugB24", json_string("bug-reports B24: a non-matrix input to Newton-Schulz gets a clear error"));
  return o;
}

static json_t *file_json(const char *profile, const char *area, const char *header, json_t *groups, long n_tests)
{
  json_t *f = json_object(), *gen = json_object(), *h = json_array();
  json_object_set_new(f, "schema", json_string("muonref-vectors-v1"));
  json_object_set_new(f, "formatVersion", json_integer(1));
  json_object_set_new(gen, "name", json_string("muonref"));
  json_object_set_new(gen, "version", json_string(PACKAGE_VERSION));
  char ref[256];
  snprintf(ref, sizeof ref,
           "GNU MPFR %s at a working precision of at least 256 bits; every value is the exact result correctly "
           "rounded to its format, identical at the working precision and at twice it",
           mpfr_get_version());
  json_object_set_new(gen, "reference", json_string(ref));
  json_object_set_new(gen, "seed", json_integer(GEN_SEED));
  json_object_set_new(f, "generator", gen);
  json_object_set_new(f, "profile", json_string(profile));
  json_object_set_new(f, "area", json_string(area));
  json_object_set_new(f, "numberOfTests", json_integer(n_tests));
  json_array_append_new(h, json_string(header));
  json_array_append_new(h, json_string("Generated by `muonref gen`; do not edit. Format: spec/vectors.md."));
  json_object_set_new(f, "header", h);
  json_object_set_new(f, "notes", notes());
  json_object_set_new(f, "testGroups", groups);
  return f;
}

/* Removes the temporary files of a failed run. */
static void unlink_all(char paths[][4200], size_t n)
{
  for (size_t i = 0; i < n; i++)
    unlink(paths[i]);
}

int muonref_gen_all(const char *out_dir, mpfr_prec_t prec, const char *only, gen_summary *sum, muonref_error *err)
{
  const char *profile = "nemo";
  size_t n_areas = sizeof AREAS / sizeof AREAS[0];
  int known = !only;
  for (size_t a = 0; only && a < n_areas; a++)
    known |= !strcmp(only, AREAS[a].name);
  if (!known) {
    char list[512] = "";
    for (size_t a = 0, used = 0; a < n_areas && used < sizeof list; a++)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", a ? ", " : "", AREAS[a].name);
    return muonref_fail(err, MUONREF_EOPTION, "--area '%s': expected one of %s", only, list);
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/%s", out_dir, profile);
  mkdir(out_dir, 0777);
  if (mkdir(dir, 0777) != 0 && access(dir, W_OK) != 0)
    return muonref_fail(err, MUONREF_EIO, "%s: cannot create the output folder", dir);
  memset(sum, 0, sizeof *sum);
  /* every file is written to a temporary name first and renamed into place
   * only when all of them were written, so a failure leaves no partial set */
  static char tmp[sizeof AREAS / sizeof AREAS[0]][4200], final[sizeof AREAS / sizeof AREAS[0]][4200];
  size_t n_written = 0;
  for (size_t a = 0; a < n_areas; a++) {
    if (only && strcmp(only, AREAS[a].name))
      continue;
    gen_ctx g = {.prec = prec, .profile = profile, .groups = json_array()};
    g.rng.s = GEN_SEED + 1000u * (unsigned)a;
    AREAS[a].fill(&g);
    if (g.failed) {
      json_decref(g.groups);
      unlink_all(tmp, n_written);
      return muonref_fail(err, MUONREF_ENUMERIC, "area %s: %s (no file was written)", AREAS[a].name, g.error);
    }
    json_t *f = file_json(profile, AREAS[a].name, AREAS[a].header, g.groups, g.n_tests);
    if (!strncmp(AREAS[a].name, "sharded", 7)) { /* only these files carry the flags: the others stay unchanged */
      static const char *const S[][2] = {
        {"Sharded", "the case carries a \"sharding\" member (spec/vectors.md 2.5): run over several ranks as it says, "
                    "it must give the unsharded result"},
        {"SortedBySize", "whole Muon matrices owned by rank (position mod world size) in the order sorted by shape, "
                         "largest first (Keller's distributed Muon)"},
        {"RoundRobin", "whole Muon matrices owned by rank (position mod world size) in the case's order (ZeRO-1)"},
        {"RowSplit", "every Muon matrix split by rows over the ranks (tensor parallel)"},
        {"ColSplit", "every Muon matrix split by columns over the ranks (tensor parallel)"},
      };
      for (size_t k = 0; k < sizeof S / sizeof S[0]; k++)
        json_object_set_new(json_object_get(f, "notes"), S[k][0], json_string(S[k][1]));
    }
    snprintf(final[n_written], sizeof final[0], "%s/%s_%s.json", dir, profile, AREAS[a].name);
    snprintf(tmp[n_written], sizeof tmp[0], "%s.new", final[n_written]);
    int st = muonref_json_write_atomic(f, tmp[n_written], 1, err);
    json_decref(f);
    if (st) {
      char msg[MUONREF_ERROR_MESSAGE_MAX];
      snprintf(msg, sizeof msg, "%s", err->message);
      unlink_all(tmp, n_written);
      return muonref_fail(err, st, "%.480s (no file was written)", msg);
    }
    n_written++;
    sum->files++;
    sum->tests += g.n_tests;
    sum->bf16_certified += g.n_bf16_certified;
  }
  for (size_t i = 0; i < n_written; i++)
    if (rename(tmp[i], final[i]) != 0) {
      unlink_all(tmp + i, n_written - i);
      return muonref_fail(err, MUONREF_EIO, "%s: cannot rename into place (%zu of %zu files were replaced)", final[i], i,
                          n_written);
    }
  snprintf(sum->dir, sizeof sum->dir, "%s", dir);
  return MUONREF_OK;
}
