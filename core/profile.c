/* muonref: the profile table (see profile.h; spec/muon.md "Profiles"). */
#include <string.h>
#include "core/pyfmt.h"
#include "muonref/presets.h"
#include "muonref/profile.h"
#include "core/fail.h"

/* nemo: the defaults of nemo.core.optim.muon.Muon (NVIDIA-NeMo PR #16427)
 * and its zeropower_via_newtonschulz5: Keller's triple for every step,
 * X / (||X||_F + 1e-7), bf16. */
static void nemo(muonref_options *o)
{
  memset(o, 0, sizeof *o);
  o->lr = 2e-2;
  o->momentum = 0.95;
  o->nesterov = 1;
  o->ns_steps = 5;
  o->weight_decay = 0.0;
  o->scale_mode = MUONREF_SCALE_FAN_IN;
  o->adam_beta1 = 0.9;
  o->adam_beta2 = 0.95;
  o->adam_eps = 1e-8;
  o->adam_lr_ratio = 0.025;
  o->adam_dim_threshold = 8192;
  o->use_muon = MUONREF_USE_MUON_AUTO;
  o->momentum_form = MUONREF_MOMENTUM_SUM;
  muonref_preset_apply(muonref_preset_find("simple"), o);
  o->coeff_order = MUONREF_ORDER_CYCLE;
  o->ns_eps = 1e-7;
  o->eps_mode = MUONREF_EPS_ADD;
  o->ns_format = MUONREF_NS_BF16;
  o->bf16_order = MUONREF_BF16_SEPARATE;
}

static const struct {
  const char *name;
  void (*fill)(muonref_options *);
} PROFILES[] = {[MUONREF_PROFILE_NEMO] = {"nemo", nemo}};

/* every id has its entry, in id order */
_Static_assert(sizeof PROFILES / sizeof PROFILES[0] == MUONREF_PROFILE_COUNT, "one PROFILES entry per profile id");

size_t muonref_profile_count(void) { return sizeof PROFILES / sizeof PROFILES[0]; }

const char *muonref_profile_name(size_t i)
{
  return i < muonref_profile_count() ? PROFILES[i].name : NULL;
}

int muonref_options_init(muonref_options *o, muonref_profile_id id, muonref_error *err)
{
  if (!o)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_options_init: o must not be NULL");
  if ((int)id < 0 || (size_t)id >= muonref_profile_count())
    return muonref_fail(err, MUONREF_EOPTION, "Unknown profile id %d, expected 0 to %zu", (int)id,
                        muonref_profile_count() - 1);
  PROFILES[id].fill(o);
  return MUONREF_OK;
}

int muonref_profile_options(const char *name, muonref_options *out, muonref_error *err)
{
  for (size_t i = 0; name && i < muonref_profile_count(); i++)
    if (strcmp(name, PROFILES[i].name) == 0) {
      PROFILES[i].fill(out);
      return MUONREF_OK;
    }
  const char *names[sizeof PROFILES / sizeof PROFILES[0]];
  for (size_t i = 0; i < muonref_profile_count(); i++)
    names[i] = PROFILES[i].name;
  char list[256];
  return muonref_fail(err, MUONREF_EOPTION, "Unknown profile '%s', expected one of %s", name ? name : "",
                      muonref_py_str_tuple(list, sizeof list, names, muonref_profile_count()));
}
