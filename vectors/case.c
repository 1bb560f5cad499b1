/* muonref: the parts of a vector case (see case.h). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "case.h"
#include "muonref/profile.h"
#include "core/fail.h"

static int real_value(const json_t *v, double *out)
{
  const char *s = json_string_value(v);
  if (json_is_number(v))
    *out = json_number_value(v);
  else if (s && !strcmp(s, "nan"))
    *out = NAN;
  else if (s && !strcmp(s, "inf"))
    *out = INFINITY;
  else if (s && !strcmp(s, "-inf"))
    *out = -INFINITY;
  else
    return 0;
  return 1;
}

json_t *muonref_case_real_json(double x)
{
  if (isnan(x))
    return json_string("nan");
  if (isinf(x))
    return json_string(x < 0 ? "-inf" : "inf");
  return json_real(x);
}

static int bad(muonref_error *err, const char *where, const char *key, const char *what)
{
  return muonref_fail(err, MUONREF_EFORMAT, "%s: option \"%s\" must be %s", where, key, what);
}

/* One member of an options object. */
static int set_option(muonref_options *o, const char *key, const json_t *v, const char *where, muonref_error *err)
{
  double x;
  struct { const char *name; double *field; } reals[] = {
    {"lr", &o->lr}, {"momentum", &o->momentum}, {"weight_decay", &o->weight_decay},
    {"adam_eps", &o->adam_eps}, {"adam_lr_ratio", &o->adam_lr_ratio},
  };
  for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
    if (!strcmp(key, reals[i].name))
      return real_value(v, reals[i].field) ? MUONREF_OK : bad(err, where, key, "a number or \"nan\"/\"inf\"/\"-inf\"");
  if (!strcmp(key, "nesterov")) {
    if (!json_is_boolean(v))
      return bad(err, where, key, "true or false");
    o->nesterov = json_is_true(v);
  } else if (!strcmp(key, "ns_steps")) {
    if (!json_is_integer(v))
      return bad(err, where, key, "an integer");
    json_int_t n = json_integer_value(v);
    if (n < INT_MIN || n > INT_MAX) /* never clamped: the catalogue message must show the value given */
      return bad(err, where, key, "an integer that fits a C int (-2147483648 to 2147483647)");
    o->ns_steps = (int)n;
  } else if (!strcmp(key, "adam_dim_threshold")) {
    if (!json_is_integer(v))
      return bad(err, where, key, "an integer");
    o->adam_dim_threshold = (long)json_integer_value(v);
  } else if (!strcmp(key, "scale_mode")) {
    if (!json_is_string(v))
      return bad(err, where, key, "a string");
    return muonref_scale_mode_parse(json_string_value(v), &o->scale_mode, err);
  } else if (!strcmp(key, "adam_betas")) {
    if (!json_is_array(v) || json_array_size(v) != 2 || !real_value(json_array_get(v, 0), &x))
      return bad(err, where, key, "an array of two numbers");
    o->adam_beta1 = x;
    if (!real_value(json_array_get(v, 1), &o->adam_beta2))
      return bad(err, where, key, "an array of two numbers");
  } else if (!strcmp(key, "use_muon")) {
    if (json_is_null(v))
      o->use_muon = MUONREF_USE_MUON_AUTO;
    else if (json_is_boolean(v))
      o->use_muon = json_is_true(v) ? MUONREF_USE_MUON_TRUE : MUONREF_USE_MUON_FALSE;
    else
      return bad(err, where, key, "null, true or false");
  } else {
    return muonref_fail(err, MUONREF_EFORMAT, "%s: unknown option \"%s\"", where, key);
  }
  return MUONREF_OK;
}

int muonref_case_options(const json_t *j, const char *profile, muonref_options *out, const char *where,
                         muonref_error *err)
{
  const char *key;
  json_t *v;
  int st = muonref_profile_options(profile, out, err);
  if (st)
    return st;
  if (!json_is_object(j))
    return muonref_fail(err, MUONREF_EFORMAT, "%s: \"options\" must be an object", where);
  json_object_foreach((json_t *)j, key, v)
    if ((st = set_option(out, key, v, where, err)))
      return st;
  return MUONREF_OK;
}

json_t *muonref_case_options_json(const muonref_options *o)
{
  json_t *j = json_object();
  json_object_set_new(j, "lr", muonref_case_real_json(o->lr));
  json_object_set_new(j, "momentum", muonref_case_real_json(o->momentum));
  json_object_set_new(j, "nesterov", json_boolean(o->nesterov));
  json_object_set_new(j, "ns_steps", json_integer(o->ns_steps));
  json_object_set_new(j, "weight_decay", muonref_case_real_json(o->weight_decay));
  const char *sm = muonref_scale_mode_name(o->scale_mode);
  json_object_set_new(j, "scale_mode", json_string(sm ? sm : "?"));
  json_t *betas = json_array();
  json_array_append_new(betas, muonref_case_real_json(o->adam_beta1));
  json_array_append_new(betas, muonref_case_real_json(o->adam_beta2));
  json_object_set_new(j, "adam_betas", betas);
  json_object_set_new(j, "adam_eps", muonref_case_real_json(o->adam_eps));
  json_object_set_new(j, "adam_lr_ratio", muonref_case_real_json(o->adam_lr_ratio));
  json_object_set_new(j, "adam_dim_threshold", json_integer(o->adam_dim_threshold));
  json_object_set_new(j, "use_muon", o->use_muon == MUONREF_USE_MUON_AUTO ? json_null()
                                                                         : json_boolean(o->use_muon == MUONREF_USE_MUON_TRUE));
  return j;
}

int muonref_case_grad(const json_t *j, size_t numel, muonref_tensor *t, muonref_grad *g, const char *where,
                      muonref_error *err)
{
  memset(t, 0, sizeof *t);
  *g = (muonref_grad){NULL, MUONREF_DENSE, MUONREF_FLOAT32};
  if (json_is_null(j))
    return MUONREF_OK;
  const char *layout = json_string_value(json_object_get(j, "layout"));
  const char *dtype = json_string_value(json_object_get(j, "dtype"));
  if (dtype && !strcmp(dtype, "c64")) { /* a complex gradient: only its kind matters */
    muonref_shape s = {1, {numel}};
    int st = muonref_tensor_alloc(t, MUONREF_TENSOR_F32, &s, err);
    g->data = t->f;
    g->dtype = MUONREF_COMPLEX64;
    return st;
  }
  int st = muonref_tensor_from_json(t, j, where, err);
  if (st)
    return st;
  if (t->dtype != MUONREF_TENSOR_F32 || t->numel != numel) {
    muonref_tensor_free(t);
    return muonref_fail(err, MUONREF_EFORMAT, "%s: a gradient must be an f32 tensor of %zu elements", where, numel);
  }
  g->data = t->f;
  if (layout && !strcmp(layout, "sparse"))
    g->layout = MUONREF_SPARSE;
  return MUONREF_OK;
}

static json_t *buffer_json(const float *b, const muonref_shape *shape)
{
  muonref_tensor t;
  if (muonref_tensor_alloc(&t, MUONREF_TENSOR_F32, shape, NULL))
    return NULL;
  memcpy(t.f, b, t.numel * sizeof(float));
  json_t *j = muonref_tensor_to_json(&t, 0);
  muonref_tensor_free(&t);
  return j;
}

json_t *muonref_case_state_json(const muonref_param_state *st, const muonref_shape *shape)
{
  if (!st->initialized)
    return json_null();
  json_t *j = json_object();
  json_object_set_new(j, "step", json_integer(st->step));
  if (st->use_muon) {
    json_object_set_new(j, "momentum_buffer", buffer_json(st->momentum_buffer, shape));
  } else {
    json_object_set_new(j, "exp_avg", buffer_json(st->exp_avg, shape));
    json_object_set_new(j, "exp_avg_sq", buffer_json(st->exp_avg_sq, shape));
  }
  return j;
}
