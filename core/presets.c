/* muonref: Newton-Schulz coefficient presets (see presets.h and
 * spec/coefficients.md for the provenance of every number). */
#include <string.h>
#include "muonref/presets.h"

/* Keller Jordan's quintic triple, run for every step.  Source:
 * KellerJordan/Muon muon.py (zeropower_via_newtonschulz5) at 857d1ad; the
 * NeMo seed (PR #16427) uses the same numbers; Paddle calls it "simple",
 * timm "original". */
static const muonref_coeff SIMPLE[] = {{3.4445, -4.7750, 2.0315}};

static const muonref_preset PRESETS[] = {
  {"simple", "original,standard,keller", 1, SIMPLE, MUONREF_ORDER_CYCLE, 5,
   "Keller Jordan, Muon (2024), KellerJordan/Muon muon.py @857d1ad; NVIDIA-NeMo PR #16427"},
};

size_t muonref_preset_count(void) { return sizeof PRESETS / sizeof PRESETS[0]; }

const muonref_preset *muonref_preset_at(size_t i)
{
  return i < muonref_preset_count() ? &PRESETS[i] : NULL;
}

/* Whether `name` is one of the comma-separated words of `list`. */
static int in_list(const char *list, const char *name)
{
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *q = strchr(p, ',');
    size_t len = q ? (size_t)(q - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0)
      return 1;
    p = q ? q + 1 : NULL;
  }
  return 0;
}

const muonref_preset *muonref_preset_find(const char *name)
{
  for (size_t i = 0; name && i < muonref_preset_count(); i++)
    if (strcmp(PRESETS[i].name, name) == 0 || in_list(PRESETS[i].aliases, name))
      return &PRESETS[i];
  return NULL;
}

void muonref_preset_apply(const muonref_preset *p, muonref_options *o)
{
  o->n_coeffs = p->n_coeffs;
  memcpy(o->coeffs, p->coeffs, (size_t)p->n_coeffs * sizeof p->coeffs[0]);
  o->coeff_order = p->order;
}
