/* muonref: why a port failed a case (see diagnose.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include "vectors/format/case.h"
#include "vectors/judge/diagnose.h"
#include "vectors/judge/fit.h"
#include "vectors/format/tensor.h"

/* Whether the case runs Newton-Schulz on a tall matrix (rows > cols): the
 * ports that transpose with a strided view are exposed there. */
static int has_tall_matrix(const json_t *test, const char *kind)
{
  if (strcmp(kind, "step")) {
    const json_t *shape = json_object_get(json_object_get(test, "input"), "shape");
    /* a transpose pair runs both orientations */
    return !strcmp(kind, "transpose") ||
           json_integer_value(json_array_get(shape, 0)) > json_integer_value(json_array_get(shape, 1));
  }
  const json_t *params = json_object_get(test, "params");
  for (size_t i = 0; i < json_array_size(params); i++) {
    const json_t *shape = json_object_get(json_object_get(json_array_get(params, i), "init"), "shape");
    if (json_array_size(shape) < 2)
      continue;
    long long rows = json_integer_value(json_array_get(shape, 0)), cols = 1;
    for (size_t k = 1; k < json_array_size(shape); k++)
      cols *= json_integer_value(json_array_get(shape, k));
    if (rows > cols)
      return 1;
  }
  return 0;
}

/* Whether an ns/transpose output holds values that are not bf16 values. */
static int output_not_bf16(const json_t *result)
{
  muonref_tensor t;
  muonref_error err = {0};
  if (muonref_tensor_from_json(&t, json_object_get(result, "output"), "output", &err))
    return 0;
  int wide = 0;
  for (size_t i = 0; i < t.numel && !wide; i++) {
    float x = t.d ? (float)t.d[i] : t.f[i];
    uint32_t u;
    memcpy(&u, &x, 4);
    wide = (u & 0xffffu) != 0 || (t.d && (double)x != t.d[i]);
  }
  muonref_tensor_free(&t);
  return wide;
}

/* The first element of the result that is not finite ("params[i][j]" of a
 * step result, "output[j]" of an ns one) into where; 0 when every element is
 * finite or the result cannot be read (the judge has said why). */
static int first_nonfinite(const json_t *result, const char *kind, char *where, size_t size)
{
  const json_t *ps = json_object_get(result, "params");
  int step = !strcmp(kind, "step");
  size_t n = step ? json_array_size(ps) : 1;
  for (size_t i = 0; i < n; i++) {
    muonref_tensor t;
    muonref_error err = {0};
    if (muonref_tensor_from_json(&t, step ? json_array_get(ps, i) : json_object_get(result, "output"), "result", &err))
      continue;
    size_t j = 0;
    while (j < t.numel && isfinite(t.d ? t.d[j] : (double)t.f[j]))
      j++;
    int found = j < t.numel;
    if (found && step)
      snprintf(where, size, "params[%zu][%zu] = %g", i, j, t.d ? t.d[j] : (double)t.f[j]);
    else if (found)
      snprintf(where, size, "output[%zu] = %g", j, t.d ? t.d[j] : (double)t.f[j]);
    muonref_tensor_free(&t);
    if (found)
      return 1;
  }
  return 0;
}

/* The value of platform finding `name` in the results file's "platform". */
static const char *finding(const json_t *platform, const char *name)
{
  return json_string_value(json_object_get(platform, name));
}

/* The first "matmul_*" finding of the probe whose value is not "binary32"
 * (vectors/drivers/platform_probe.py: e.g. "matmul_8x16x8_transposed_a":
 * "not binary32 (21 of 64 differ)"), or NULL. */
static const char *matmul_effect(const json_t *platform, const char **value)
{
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)platform, key, v)
    if (!strncmp(key, "matmul_", 7) && json_is_string(v) && strcmp(json_string_value(v), "binary32")) {
      *value = json_string_value(v);
      return key;
    }
  return NULL;
}

/* The first parameter of step result r whose dtype is not the one the judge requires
 * (muonref_case_result_dtype), or -1. */
static long wrong_dtype(const json_t *test, const json_t *r, const char **got)
{
  const json_t *ps = json_object_get(r, "params");
  for (size_t i = 0; i < json_array_size(ps); i++) {
    const char *dt = json_string_value(json_object_get(json_array_get(ps, i), "dtype"));
    const char *want = muonref_case_result_dtype(test, i, NULL);
    if (dt && want && strcmp(dt, want)) {
      *got = dt;
      return (long)i;
    }
  }
  return -1;
}

int muonref_diagnose(const json_t *test, const char *kind, const char *profile, const char *file,
                     const json_t *result, muonref_ns_format format, const json_t *platform, muonref_fit *fit,
                     muonref_diagnosis *d)
{
  memset(d, 0, sizeof *d);
  const char *skip = json_string_value(json_object_get(result, "skipped"));
  if (skip && !strncmp(skip, "NotExpressible", 14)) { /* the driver's adapter, not the port, gave up */
    snprintf(d->key, sizeof d->key, "not expressible");
    snprintf(d->text, sizeof d->text, "not run: the driver's adapter cannot give the port this case's options (%.300s); "
             "the port may be of another profile (muonref identify names the nearest)", skip);
    return 1;
  }
  if (skip && strcmp(kind, "step") && strcmp(kind, "error")) { /* an ns or transpose call the driver could not make */
    snprintf(d->key, sizeof d->key, "not run");
    snprintf(d->text, sizeof d->text, "not run: the driver did not call the port's Newton-Schulz function (the "
             "reason above)%s; not a result", strncmp(skip, "NsSignatureError", 16) ? "" :
             ": give one that takes the matrix and the steps, muonref check --torch ... --ns-function FILE:FUNC");
    return 1;
  }
  if (fit && result && muonref_fit_refusal(fit, test, kind, profile, result, d->text, sizeof d->text)) {
    snprintf(d->key, sizeof d->key, "%s", !strcmp(kind, "error") ? "accepted" : "refused");
    return 1;
  }
  if (!strcmp(kind, "error") || !result || json_object_get(result, "skipped") || json_object_get(result, "error"))
    return 0;
  const char *dt = NULL;
  long wrong = strcmp(kind, "step") ? -1 : wrong_dtype(test, result, &dt);
  if (wrong >= 0) { /* no option of the fit changes a dtype: say what differs, fit nothing */
    int cast = json_object_get(test, "roundTripDtype") != NULL;
    snprintf(d->key, sizeof d->key, "dtype");
    snprintf(d->text, sizeof d->text,
             "dtype: the port returned params[%ld] as %s, where the case's model holds it in %s%s", wrong, dt,
             muonref_case_final_bf16(test, (size_t)wrong) ? "bf16" : "float32",
             cast ? " after the round trip (roundTripDtype: the parameters are converted before the state is loaded; "
                    "a port or glue that rebuilds them in their saved dtype, or widens them, fails so)"
                  : " (a model trained in bf16: a port that widens the parameter to float32 fails so)");
    return 1;
  }
  if (format == MUONREF_NS_BF16 && strcmp(kind, "step") && output_not_bf16(result)) {
    snprintf(d->key, sizeof d->key, "not-bf16");
    snprintf(d->text, sizeof d->text,
             "the Newton-Schulz output holds values that are not bf16: the port runs it in fp32 or wider; "
             "judge it with --ns-format fp32");
    return 1;
  }
  muonref_fit_case fc;
  if (fit && muonref_fit_failure(fit, test, kind, profile, file, result, &fc)) {
    snprintf(d->key, sizeof d->key, "%s", fc.key);
    snprintf(d->text, sizeof d->text, "%s", fc.text);
    return 1;
  }
  /* a non-finite result of a case whose expected values are finite: an
   * intermediate left the range of the port's format (spec/muon.md 7.3) */
  char at[96];
  if ((!strcmp(kind, "step") || !strcmp(kind, "ns")) && muonref_case_has_flag(test, "Overflow") &&
      first_nonfinite(result, kind, at, sizeof at)) {
    int f16 = muonref_case_has_flag(test, "Fp16Range");
    snprintf(d->key, sizeof d->key, "%s", f16 ? "nonfinite:fp16" : "nonfinite");
    snprintf(d->text, sizeof d->text,
             "the port's result is not finite (%s) where the exact %s is: %s", at, kind,
             f16 ? "the case's values lie beyond fp16's largest finite value 65504 with an ordinary binary32 norm; a "
                   "port that casts to fp16 before it normalises gets +Inf, then NaN (DeepSpeed PR #8533, "
                   "openvpi/DiffSinger PR #301: normalise in float32 first)"
                 : "an intermediate overflowed the port's format (a norm or a product accumulated where it does not "
                   "fit, or a cast to fp16 before the normalisation); spec/muon.md 7.3 allows only the exact step or, "
                   "for a norm that overflows binary32, the zero Newton-Schulz output");
    return 1;
  }
  if (fit && fc.nearest[0])
    snprintf(d->nearest, sizeof d->nearest,
             "the nearest run is %s: it lies %.2g from the port's result, the profile's own %.2g (the largest "
             "relative deviation of an update or of p.grad), but not within the case's tolerance%s%s", fc.nearest,
             fc.nearest_dist, fc.null_dist, fc.nearest_differs[0] ? "; against that run the port's result fails on " : "",
             fc.nearest_differs);
  /* platform effects the fast path does not model bit for bit */
  const char *scal = finding(platform, "scalar_mul");
  const char *mval = NULL, *mkey = matmul_effect(platform, &mval);
  int scal_bf16 = scal && strstr(scal, "bf16");
  if (format == MUONREF_NS_BF16 && mkey && has_tall_matrix(test, kind)) {
    snprintf(d->key, sizeof d->key, "platform:matmul%s", scal_bf16 ? "+scalars" : "");
    snprintf(d->text, sizeof d->text,
             "platform: no catalogued fault gives this result; the case runs Newton-Schulz on a tall matrix (a "
             "transposed view), and this PyTorch's bf16 matmul does not accumulate in binary32 for some shapes and "
             "layouts (driver probe: %s = %s)%s; rerun the driver with --mode neutral to judge the port's logic",
             mkey, mval, scal_bf16 ? ", and it rounds Python scalars to bf16" : "");
    return 1;
  }
  if (format == MUONREF_NS_BF16 && (scal_bf16 || mkey)) {
    /* a run that one change brings ten times nearer is named: the platform
     * may account for what is left, not for the whole */
    snprintf(d->key, sizeof d->key, "platform?:%s%s%s", scal_bf16 ? "scalars" : "matmul",
             d->nearest[0] ? " near " : "", d->nearest[0] ? fc.nearest : "");
    snprintf(d->text, sizeof d->text,
             "possibly platform: no catalogued fault gives this result%s%s, and this PyTorch %s (driver probe); rerun "
             "the driver with --mode neutral to tell the port's logic from the platform",
             d->nearest[0] ? "; " : "", d->nearest, scal_bf16 ? "rounds Python scalars to bf16 before multiplying a bf16 tensor"
                       : "has a bf16 matmul that does not accumulate in binary32 for some shapes");
    return 1;
  }
  return 0;
}
