/* muonref: the vector generator (muonref gen).  Builds every case of every
 * area from fixed seeds, computes the expected values with the reference
 * (ref/), and writes one file per profile and area (spec/vectors.md). */
#ifndef MUONREF_VECTORS_GEN_H
#define MUONREF_VECTORS_GEN_H

#include <jansson.h>
#include <mpfr.h>
#include <stdint.h>
#include "muonref/options.h"
#include "muonref/profile.h"
#include "muonref/route.h"

/* The generator's seeded source: splitmix64, normal deviates by
 * Box-Muller in binary64 (spec/vectors.md section 6). */
typedef struct gen_rng { uint64_t s; } gen_rng;
uint64_t gen_next(gen_rng *r);
double gen_normal(gen_rng *r);

/* The options a scheduler may change between steps (format v2,
 * spec/vectors.md 2.8): the values in effect for one group at one step.
 * Every other option stays the group's constructor value. */
typedef struct gen_sched { double lr, momentum, weight_decay, adam_beta1, adam_beta2; } gen_sched;

/* A test under construction (kind "step" or "error"): parameters and
 * groups and steps, kept as arrays until gen_step_finish writes the JSON. */
#define GEN_MAX_PARAMS 8
#define GEN_MAX_STEPS 6
typedef struct gen_step_case {
  const char *comment;
  const char *flags[6];
  const char *result;            /* "valid" (default), "invalid", "acceptable" */
  int n_params, n_groups, n_steps;
  const char *names[GEN_MAX_PARAMS];
  muonref_shape shapes[GEN_MAX_PARAMS];
  float *init[GEN_MAX_PARAMS];
  int bf16[GEN_MAX_PARAMS];      /* 1: parameter i, its gradients and its state are
                                    bf16 (area dtypes, spec/vectors.md 2.1): init and
                                    grads hold bf16 values, written with dtype "bf16" */
  float *grads[GEN_MAX_STEPS][GEN_MAX_PARAMS]; /* NULL: no gradient */
  const char *grad_kind[GEN_MAX_STEPS][GEN_MAX_PARAMS]; /* NULL, "sparse", "c64" */
  muonref_options options[GEN_MAX_PARAMS];     /* per group */
  int group_of[GEN_MAX_PARAMS];
  int round_trip_after;          /* 0: none */
  const char *round_trip_dtype;  /* with round_trip_after: "bf16" or "f32", the dtype every parameter
                                    is loaded in at the round trip (bf16[i] is the other one; the
                                    later steps' grads hold values of this dtype), or NULL */
  json_t *raw_options[GEN_MAX_PARAMS]; /* error cases: options JSON verbatim (owned) */
  const char *error_status, *error_message; /* error cases */
  int error_run_nonfinite;        /* "acceptable" error cases: a run passes only
                                    when it stores a non-finite value
                                    ("run": "nonFinite", spec/vectors.md 2.7) */
  int error_any;                 /* error cases: any error message passes (the
                                    profile's port raises its framework's own) */
  json_t *sharding;              /* step cases: the "sharding" member (owned;
                                    spec/vectors.md 2.6), or NULL */
  int branch_defaults;           /* step cases: each group's branch defaults written in
                                    place of the group keys they give the default of
                                    (muonref_case_options_json_as; pytorch_optimizer's
                                    adamw_lr for lr) */
  int defaults_only;             /* step cases: write no option but use_muon (the
                                    port's own constructor defaults apply) */
  int has_schedule;              /* step cases: sched[][] holds per-step option
                                    values (format v2, spec/vectors.md 2.8) */
  gen_sched sched[GEN_MAX_STEPS][GEN_MAX_PARAMS]; /* [k][gi]: the values group gi
                                    runs step k with (set in param_groups before
                                    that step); with has_schedule only */
  char comment_buf[512];         /* the comment as fitted to a profile */
  char error_buf[512];           /* the message of a case the profile refuses */
} gen_step_case;

/* A case whose expected values are still to be computed (gen_build.c). */
typedef struct gen_job gen_job;

/* A generation run: precision, the file being built, counters, and the
 * cases queued for the reference.  gen_add_step and gen_add_ns write a
 * case's inputs at once, in order, and queue its reference computation;
 * gen_run_jobs computes the queue, on several threads, writing each
 * case's expected values into its own JSON object, so that the files do
 * not depend on the thread count. */
typedef struct gen_ctx {
  mpfr_prec_t prec;
  const char *profile;
  json_t *groups;      /* the current file's testGroups */
  json_t *group;       /* the current test group */
  json_t *refused_group; /* the error group of cases the profile refuses (or NULL) */
  long next_id;
  long n_tests;
  long n_bf16_certified;
  long n_left_out;     /* cases the profile's port cannot be given */
  gen_rng rng;
  int failed;          /* a reference computation failed: stop */
  char error[1024];
  gen_job **jobs;      /* queued reference computations, in case order */
  size_t n_jobs, cap_jobs;
} gen_ctx;

/* Computes every queued case of ctx[0..n) on `threads` threads (>= 1;
 * jobs are taken in order, each by one thread), then, per context, adds
 * the certified bf16 count, sets failed/error from its first failing case
 * in case order, and frees the queue.  The computations must be reentrant
 * (MPFR with thread-local state: mpfr_buildopt_tls_p(), checked by the
 * caller).  Returns 0, or -1 when a thread could not be started (the
 * remaining jobs then run on the calling thread). */
int gen_run_jobs(gen_ctx *const *ctx, size_t n, int threads);

/* The options group gi (0 <= gi < c->n_groups) of case c runs step k
 * (0 <= k < c->n_steps) with, returned by value: c->options[gi], with lr,
 * momentum, weight_decay and the AdamW betas of c->sched[k][gi] when
 * c->has_schedule (spec/vectors.md 2.8: what a scheduler set in
 * param_groups before step k).  No errors; indices are the caller's to
 * keep in range. */
muonref_options gen_step_options(const gen_step_case *c, int k, int gi);

/* Starts a test group of `kind` in the current file. */
void gen_group(gen_ctx *g, const char *kind);

/* Adds a step / error case (computing expected values for valid ones);
 * frees the case's arrays. */
void gen_add_step(gen_ctx *g, gen_step_case *c);

/* Adds an ns or transpose case on the float32 (rows, cols) matrix in. */
void gen_add_ns(gen_ctx *g, const char *kind, const char *comment, const char *const *flags, const float *in,
                size_t rows, size_t cols, int ns_steps);

/* Adds an ns error case (input of any shape with an expected message). */
void gen_add_ns_error(gen_ctx *g, const char *comment, const muonref_shape *shape, const char *status,
                      const char *message);

/* Helpers for building inputs: owned float arrays (free()). */
float *gen_normal_array(gen_ctx *g, size_t n, double scale);
float *gen_zeros(size_t n);
/* D H: m x n rows of a Sylvester Hadamard matrix scaled by d[i] (n a power
 * of two), or its transpose (n x m) when transpose != 0. */
float *gen_structured(size_t m, size_t n, const float *d, int transpose);
/* d[0..m) drawn from small dyadic values {1, 3/4, 1/2, 3/8, 1/4, 1/8, ...}
 * times 2^shift. */
void gen_dyadic_scales(gen_ctx *g, float *d, size_t m, int shift);

/* The areas (vectors/gen/gen_areas.c): each fills the current file. */
void gen_area_routing(gen_ctx *g);
void gen_area_scaling(gen_ctx *g);
void gen_area_weight_decay(gen_ctx *g);
void gen_area_momentum(gen_ctx *g);
void gen_area_adamw(gen_ctx *g);
void gen_area_gradients(gen_ctx *g);
void gen_area_newton_schulz(gen_ctx *g);
void gen_area_transpose(gen_ctx *g);
void gen_area_state(gen_ctx *g);
void gen_area_errors(gen_ctx *g);
void gen_area_sharded(gen_ctx *g);
/* Gradients whose Frobenius norm leaves fp16 or binary32, and elements that
 * round to bf16 infinity (spec/muon.md 7.3): the builder every profile's
 * table runs for its area "overflow". */
void gen_area_overflow(gen_ctx *g);
void gen_area_sharded_tp(gen_ctx *g);
void gen_area_defaults(gen_ctx *g);
/* Muon parameters of more than two dimensions: batched or flattened, the
 * shape of the scale factor; a missing gradient among random ones. */
void gen_area_conv(gen_ctx *g);
/* lr, weight_decay, momentum and AdamW betas changed in param_groups
 * between steps, as a scheduler does (format v2, spec/vectors.md 2.8). */
void gen_area_schedule(gen_ctx *g);
/* Whether profile p writes area `area`: its row's list, from its record's
 * "areas" (spec/profiles/NAME.json: every area whose semantics its port has;
 * torch.optim.Muon has no AdamW fallback and no distributed variant); 0 for
 * p NULL. */
int gen_profile_has_area(const muonref_profile *p, const char *area);

/* Parameters, gradients and state in bf16 (issue 26, spec/vectors.md 2.1). */
void gen_area_dtypes(gen_ctx *g);

#endif
