/* muonref: what the cases a port refused have in common (see refusal.h). */
#include <stdio.h>
#include <string.h>
#include "core/option_fields.h"
#include "vectors/format/case.h"
#include "vectors/judge/refusal.h"

/* Whether group g's options give use_muon false (an AdamW group). */
static int adamw_group(const json_t *g)
{
  const json_t *u = json_object_get(json_object_get(g, "options"), "use_muon");
  return json_is_false(u);
}

/* The rank of parameter i of the case (its init tensor's shape), or -1. */
static int param_rank(const json_t *params, size_t i)
{
  const json_t *shape = json_object_get(json_object_get(json_array_get(params, i), "init"), "shape");
  return json_is_array(shape) ? (int)json_array_size(shape) : -1;
}

unsigned muonref_case_traits(const json_t *test)
{
  unsigned t = 0;
  const json_t *steps = json_object_get(test, "steps"), *groups = json_object_get(test, "groups"),
               *params = json_object_get(test, "params");
  if (!json_is_array(steps) || !json_is_array(groups) || !json_is_array(params))
    return 0;
  for (size_t s = 0; s < json_array_size(steps); s++) {
    const json_t *step = json_array_get(steps, s), *grads = json_object_get(step, "grads");
    for (size_t i = 0; i < json_array_size(grads); i++)
      if (json_is_null(json_array_get(grads, i)))
        t |= 1u << MUONREF_TRAIT_MISSING_GRAD;
    if (json_object_get(step, "setOptions"))
      t |= 1u << MUONREF_TRAIT_SCHEDULE;
  }
  for (size_t g = 0; g < json_array_size(groups); g++) {
    const json_t *grp = json_array_get(groups, g), *idx = json_object_get(grp, "params");
    int forced = json_is_true(json_object_get(json_object_get(grp, "options"), "use_muon"));
    for (size_t k = 0; k < json_array_size(idx); k++) {
      int r = param_rank(params, (size_t)json_integer_value(json_array_get(idx, k)));
      if (r >= 3 && !adamw_group(grp))
        t |= 1u << (r == 3 ? MUONREF_TRAIT_MUON_3D : MUONREF_TRAIT_MUON_CONV);
      if (r >= 0 && r < 2 && forced)
        t |= 1u << MUONREF_TRAIT_MUON_VECTOR;
    }
  }
  if (json_object_get(test, "roundTripAfter"))
    t |= 1u << MUONREF_TRAIT_ROUND_TRIP;
  if (json_object_get(test, "sharding"))
    t |= 1u << MUONREF_TRAIT_SHARDED;
  if (json_object_get(test, "roundTripDtype"))
    t |= 1u << MUONREF_TRAIT_DTYPE_RESUME;
  for (size_t i = 0; i < json_array_size(params); i++)
    if (muonref_case_stored_bf16(test, i))
      t |= 1u << MUONREF_TRAIT_BF16_PARAM;
  return t;
}

const char *muonref_trait_text(muonref_trait t)
{
  switch (t) {
  case MUONREF_TRAIT_MISSING_GRAD: return "a parameter without gradient";
  case MUONREF_TRAIT_MUON_3D: return "a Muon parameter of 3 dimensions";
  case MUONREF_TRAIT_MUON_CONV: return "a Muon parameter of 4 or more dimensions (a conv filter)";
  case MUONREF_TRAIT_MUON_VECTOR: return "a parameter of fewer than 2 dimensions with use_muon true";
  case MUONREF_TRAIT_ROUND_TRIP: return "a state round trip between steps";
  case MUONREF_TRAIT_SCHEDULE: return "options changed between steps";
  case MUONREF_TRAIT_SHARDED: return "a sharded run";
  case MUONREF_TRAIT_DTYPE_RESUME:
    return "a checkpoint resumed in another dtype (load_state_dict must cast the state to its parameter's dtype: "
           "DeepSpeed #7746)";
  case MUONREF_TRAIT_BF16_PARAM:
    return "a bf16 parameter (a float32 tensor mixed into bf16 ones raises: NorMuon #4, muon-clip #9)";
  default: return "?";
  }
}

/* The spelling of enum field `name`'s value in o ("zeros"), or "?". */
static const char *enum_value(const muonref_options *o, const char *name)
{
  const muonref_option_field *f = muonref_option_field_named(name);
  const char *s = f && f->enum_name ? f->enum_name((int)muonref_option_field_int(o, f)) : NULL;
  return s ? s : "?";
}

void muonref_trait_item(muonref_trait t, const muonref_options *profile_defaults, int refused, char *buf, size_t n)
{
  if (refused && t == MUONREF_TRAIT_MISSING_GRAD) {
    snprintf(buf, n, "missing_grad %s -> error", enum_value(profile_defaults, "missing_grad"));
    return;
  }
  if (refused && (t == MUONREF_TRAIT_MUON_3D || t == MUONREF_TRAIT_MUON_CONV)) {
    snprintf(buf, n, "conv_mode %s -> error", enum_value(profile_defaults, "conv_mode"));
    return;
  }
  static const char *const name[MUONREF_N_TRAITS] = {"missing gradient", "Muon parameter of 3 dimensions",
                                                     "Muon conv filter",
                                                     "Muon parameter of fewer than 2 dimensions", "state round trip",
                                                     "options changed between steps", "sharded run",
                                                     "resume in another dtype", "bf16 parameter"};
  snprintf(buf, n, "%s %s", (unsigned)t < MUONREF_N_TRAITS ? name[t] : "?", refused ? "refused" : "accepted");
}
