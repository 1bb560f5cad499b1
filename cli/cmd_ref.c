/* muonref ref polar|ns|step FILE: runs the high-precision reference on a
 * tensor read from FILE (the tensor format of spec/vectors.md, "Tensors")
 * and prints the correctly rounded result as JSON on stdout.  Each result
 * is computed at --prec bits and again at twice that; a disagreement of
 * the rounded outputs is an error (exit 3), never a silent answer.
 *   polar FILE  FILE holds a 2-D tensor G (f32, bf16 or f64): prints
 *               {"q": f32, "q64": f64, "sv": f64} (the polar factor U V^T,
 *               its binary64 rounding, the singular values)
 *   ns FILE     FILE holds a 2-D f32 or bf16 tensor: prints {"out": f32,
 *               "out64": f64}, the exact Newton-Schulz of the profile
 *   step FILE   FILE holds a tensor (the gradient of one step from a zero
 *               parameter and a fresh state) or an object {"param": tensor,
 *               "grads": [tensor, ...]}: prints {"param": f32, "state": ...}
 *               after the steps, routed by the profile's options
 * Options: --prec BITS (default 256, at most 65536), --profile NAME
 * (default nemo), --max-cpu SECONDS (default 600).
 * Resource limits (spec/reference.md, "Cost and limits"): before computing,
 * the CPU time is estimated from the shape, the steps and the precision
 * (measured here: polar 6e-6 s and 5 Newton-Schulz steps 3e-6 s per
 * min(r,c)^2 max(r,c) at 256 bits, the p and 2p runs included, times
 * (BITS / 256)^1.2); above 10 s the estimate is printed on stderr, above
 * --max-cpu the run is refused (exit 2) naming the estimate. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/format/case.h"
#include "vectors/format/tensor.h"
#include "commands.h"
#include "muonref.h"
#include "muonref/ref.h"

typedef struct ref_args {
  const char *what, *file, *profile;
  long prec;
  double max_cpu; /* seconds of estimated CPU time allowed */
  muonref_options o;
} ref_args;

/* Estimated CPU seconds of the reference on an (r, c) matrix: `polar`, or
 * `ns_steps` Newton-Schulz steps; calibrated on this project's machine
 * (see the file comment).  The exponent 1.2 of the precision is measured
 * from 256 to 4096 bits (32x32: x28 for 16x the bits). */
static double estimate_seconds(int polar, size_t r, size_t c, int ns_steps, long prec)
{
  double m = (double)(r < c ? r : c), n = (double)(r < c ? c : r);
  double per = polar ? 6e-6 : 3e-6 * ns_steps / 5.0;
  return per * m * m * n * pow((double)prec / 256.0, 1.2);
}

/* Refuses (exit 2) or warns about a run estimated at `sec` CPU seconds. */
static int within_limits(const ref_args *a, const char *what, double sec)
{
  if (sec > a->max_cpu) {
    fprintf(stderr, "muonref ref: %s at %ld bits: estimated %.3g s of CPU time, more than the limit of %.3g s "
                    "(raise it with --max-cpu SECONDS, or lower --prec)\n", what, a->prec, sec, a->max_cpu);
    return EXIT_USAGE;
  }
  if (sec > 10)
    fprintf(stderr, "muonref ref: %s at %ld bits: estimated %.3g s of CPU time\n", what, a->prec, sec);
  return EXIT_OK;
}

static int usage(void)
{
  fprintf(stderr, "usage: muonref ref polar|ns|step FILE [--prec BITS] [--profile NAME] [--max-cpu SECONDS]\n"
                  "Runs the high-precision reference on the tensor in FILE and prints the correctly\n"
                  "rounded result as JSON (computed at BITS and 2*BITS; default 256).  Runs whose\n"
                  "estimated CPU time exceeds --max-cpu (default 600 s) are refused.\n");
  return EXIT_USAGE;
}

static int parse(int argc, char **argv, ref_args *a)
{
  a->what = a->file = NULL;
  a->profile = "nemo";
  a->prec = MUONREF_REF_PREC;
  a->max_cpu = 600;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--max-cpu")) {
      char *end;
      a->max_cpu = strtod(argv[++i], &end);
      if (*end || !(a->max_cpu > 0) || !isfinite(a->max_cpu)) {
        fprintf(stderr, "muonref ref: --max-cpu '%s': expected a positive number of seconds\n", argv[i]);
        return EXIT_USAGE;
      }
      continue;
    }
    if (i + 1 < argc && !strcmp(argv[i], "--prec")) {
      char *end;
      a->prec = strtol(argv[++i], &end, 10);
      if (*end || a->prec < MUONREF_REF_PREC_MIN || a->prec > 65536) {
        fprintf(stderr, "muonref ref: --prec '%s': expected an integer from %d to 65536 (bits)\n", argv[i],
                MUONREF_REF_PREC_MIN);
        return EXIT_USAGE;
      }
    } else if (i + 1 < argc && !strcmp(argv[i], "--profile")) {
      a->profile = argv[++i];
    } else if (!a->what) {
      a->what = argv[i];
    } else if (!a->file) {
      a->file = argv[i];
    } else {
      fprintf(stderr, "muonref ref: unexpected argument '%s'\n", argv[i]);
      return usage();
    }
  }
  if (!a->what || !a->file)
    return usage();
  muonref_error e;
  if (muonref_profile_options(a->profile, &a->o, &e)) {
    fprintf(stderr, "muonref ref: %s\n", e.message);
    return EXIT_USAGE;
  }
  a->o.ns_format = MUONREF_NS_EXACT; /* the reference: no rounding inside Newton-Schulz */
  return EXIT_OK;
}

/* Reads FILE as JSON, a key repeated in an object refused (as every JSON
 * input of muonref: JSON_REJECT_DUPLICATES); NULL (with a message naming
 * the file, line and column) on failure. */
static json_t *load(const char *file)
{
  json_error_t je;
  json_t *j = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
  if (!j)
    fprintf(stderr, "muonref ref: %s:%d:%d: %s\n", file, je.line, je.column, je.text);
  return j;
}

/* A tensor from JSON j, required to be 2-D when matrix is set. */
static int read_tensor(muonref_tensor *t, const json_t *j, const char *where, int matrix)
{
  muonref_error e;
  if (muonref_tensor_from_json(t, j, where, &e)) {
    fprintf(stderr, "muonref ref: %s\n", e.message);
    return EXIT_USAGE;
  }
  if (matrix && t->shape.ndim != 2) {
    fprintf(stderr, "muonref ref: %s: a matrix (2-D tensor) is required, got %d dimensions\n", where,
            t->shape.ndim);
    muonref_tensor_free(t);
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

/* Prints obj (consumed) as indented JSON. */
static int emit(json_t *obj)
{
  int bad = json_dumpf(obj, stdout, JSON_INDENT(2)) != 0;
  json_decref(obj);
  fputc('\n', stdout);
  return bad ? EXIT_INTERNAL : EXIT_OK;
}

/* A new tensor of dtype d and shape (r, c) (c == 0: 1-D of r). */
static int new_tensor(muonref_tensor *t, muonref_tensor_dtype d, size_t r, size_t c)
{
  muonref_shape s = {c ? 2 : 1, {r, c}};
  return muonref_tensor_alloc(t, d, &s, NULL);
}

/* The reference's error on standard error, naming the input file. */
static int fail(const char *file, const muonref_error *e)
{
  fprintf(stderr, "muonref ref: %s: %s\n", file, e->message);
  return e->status == MUONREF_ENOMEM || e->status == MUONREF_ENUMERIC ? EXIT_INTERNAL : EXIT_USAGE;
}

static int run_polar(const ref_args *a, const muonref_tensor *g)
{
  size_t r = g->shape.dims[0], c = g->shape.dims[1], k = r < c ? r : c;
  int lim = within_limits(a, "polar factor", estimate_seconds(1, r, c, 0, a->prec));
  if (lim)
    return lim;
  double *gd = malloc(r * c * sizeof *gd);
  muonref_tensor q, q64, sv;
  if (!gd || new_tensor(&q, MUONREF_TENSOR_F32, r, c) || new_tensor(&q64, MUONREF_TENSOR_F64, r, c) ||
      new_tensor(&sv, MUONREF_TENSOR_F64, k, 0))
    return fprintf(stderr, "muonref ref: out of memory\n"), EXIT_INTERNAL;
  for (size_t i = 0; i < r * c; i++)
    gd[i] = g->d ? g->d[i] : (double)g->f[i];
  muonref_error e;
  int st = muonref_ref_polar_cr(q.f, q64.d, sv.d, gd, r, c, a->prec, NULL, &e);
  free(gd);
  int rc = st ? fail(a->file, &e) : EXIT_OK;
  if (!st) {
    json_t *o = json_object();
    json_object_set_new(o, "q", muonref_tensor_to_json(&q, 1));
    json_object_set_new(o, "q64", muonref_tensor_to_json(&q64, 0));
    json_object_set_new(o, "sv", muonref_tensor_to_json(&sv, 1));
    rc = emit(o);
  }
  muonref_tensor_free(&q), muonref_tensor_free(&q64), muonref_tensor_free(&sv);
  return rc;
}

static int run_ns(const ref_args *a, const muonref_tensor *g)
{
  if (!g->f) {
    fprintf(stderr, "muonref ref ns: %s: an f32 or bf16 tensor is required (Newton-Schulz inputs are float32)\n",
            a->file);
    return EXIT_USAGE;
  }
  size_t r = g->shape.dims[0], c = g->shape.dims[1];
  int lim = within_limits(a, "Newton-Schulz", estimate_seconds(0, r, c, a->o.ns_steps, a->prec));
  if (lim)
    return lim;
  muonref_tensor out, out64;
  if (new_tensor(&out, MUONREF_TENSOR_F32, r, c) || new_tensor(&out64, MUONREF_TENSOR_F64, r, c))
    return fprintf(stderr, "muonref ref: out of memory\n"), EXIT_INTERNAL;
  muonref_error e;
  int st = muonref_ref_ns_cr(out.f, out64.d, g->f, r, c, &a->o, a->prec, NULL, &e);
  int rc = st ? fail(a->file, &e) : EXIT_OK;
  if (!st) {
    json_t *o = json_object();
    json_object_set_new(o, "out", muonref_tensor_to_json(&out, 1));
    json_object_set_new(o, "out64", muonref_tensor_to_json(&out64, 0));
    rc = emit(o);
  }
  muonref_tensor_free(&out), muonref_tensor_free(&out64);
  return rc;
}

/* Runs the steps of j (a tensor or {"param", "grads"}) and prints the result. */
static int run_step(const ref_args *a, const json_t *j)
{
  const json_t *pj = json_object_get(j, "param"), *gl = json_object_get(j, "grads");
  int single = !pj && !gl;
  if (!single && (!pj || !json_is_array(gl) || json_array_size(gl) == 0)) {
    fprintf(stderr, "muonref ref step: %s: expected a tensor or {\"param\": tensor, \"grads\": [tensor, ...]}\n",
            a->file);
    return EXIT_USAGE;
  }
  muonref_tensor p;
  char where[600];
  snprintf(where, sizeof where, "%s%s", a->file, single ? "" : ": param");
  int rc = single ? EXIT_OK : read_tensor(&p, pj, where, 0);
  if (rc)
    return rc;
  muonref_tensor first;
  if ((rc = read_tensor(&first, single ? j : json_array_get(gl, 0), a->file, 0)))
    return single ? rc : (muonref_tensor_free(&p), rc);
  if (single && muonref_tensor_alloc(&p, MUONREF_TENSOR_F32, &first.shape, NULL))
    return muonref_tensor_free(&first), EXIT_INTERNAL;
  muonref_tensor_free(&first);
  muonref_route r;
  muonref_error e;
  if (!p.f || muonref_route_param(&a->o, &p.shape, &r, &e)) {
    fprintf(stderr, "muonref ref step: %s: %s\n", a->file, p.f ? e.message : "the parameter must be f32 or bf16");
    muonref_tensor_free(&p);
    return EXIT_USAGE;
  }
  size_t n_steps0 = single ? 1 : json_array_size(gl);
  double est = r.use_muon ? (double)n_steps0 * estimate_seconds(0, r.rows, r.cols, a->o.ns_steps, a->prec)
                          : (double)n_steps0 * 1e-6 * (double)r.numel * pow((double)a->prec / 256.0, 1.2);
  if ((rc = within_limits(a, r.use_muon ? "Muon steps" : "AdamW steps", est))) {
    muonref_tensor_free(&p);
    return rc;
  }
  float *b1 = calloc(r.numel, sizeof(float)), *b2 = calloc(r.numel, sizeof(float));
  float *b3 = calloc(r.numel, sizeof(float)); /* the second moment: at most numel floats */
  muonref_param_state st = {0, 0, 0, 0, r.use_muon ? b1 : NULL, r.use_muon ? NULL : b1, r.use_muon ? NULL : b2,
                            r.use_muon ? b3 : NULL, 0, NULL, 0, NULL};
  size_t n_steps = single ? 1 : json_array_size(gl);
  for (size_t k = 0; !rc && k < n_steps; k++) {
    muonref_tensor g;
    snprintf(where, sizeof where, "%s%s%zu%s", a->file, single ? "" : ": grads[", k, single ? "" : "]");
    if ((rc = read_tensor(&g, single ? j : json_array_get(gl, k), where, 0)))
      break;
    if (!g.f || g.numel != r.numel) {
      fprintf(stderr, "muonref ref step: %s: the gradient must be f32 or bf16 with %zu elements\n", where, r.numel);
      rc = EXIT_USAGE;
    } else if (muonref_ref_step_cr(&a->o, &r, p.f, &st, g.f, a->prec, NULL, &e)) {
      rc = fail(a->file, &e);
    }
    muonref_tensor_free(&g);
  }
  if (!rc) {
    json_t *o = json_object();
    json_object_set_new(o, "param", muonref_tensor_to_json(&p, 1));
    muonref_shape m2 = muonref_moment2_shape(&a->o, &r, &p.shape);
    json_object_set_new(o, "state", muonref_case_state_json(&st, &p.shape, &m2));
    rc = emit(o);
  }
  free(b1), free(b2), free(b3);
  muonref_tensor_free(&p);
  return rc;
}

int cmd_ref(int argc, char **argv)
{
  ref_args a;
  int rc = parse(argc, argv, &a);
  if (rc)
    return rc;
  int polar = !strcmp(a.what, "polar"), ns = !strcmp(a.what, "ns"), step = !strcmp(a.what, "step");
  if (!polar && !ns && !step) {
    fprintf(stderr, "muonref ref: unknown operation '%s', expected one of polar, ns, step\n", a.what);
    return usage();
  }
  json_t *j = load(a.file);
  if (!j)
    return EXIT_USAGE;
  if (step) {
    rc = run_step(&a, j);
  } else {
    muonref_tensor g;
    rc = read_tensor(&g, j, a.file, 1);
    if (!rc) {
      rc = polar ? run_polar(&a, &g) : run_ns(&a, &g);
      muonref_tensor_free(&g);
    }
  }
  json_decref(j);
  return rc;
}
