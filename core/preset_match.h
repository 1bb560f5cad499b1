/* muonref (internal): which preset a coefficient list is. */
#ifndef MUONREF_CORE_PRESET_MATCH_H
#define MUONREF_CORE_PRESET_MATCH_H
#include "muonref/options.h"
#include "muonref/presets.h"

/* Whether o's coefficient list (n_coeffs, coeffs) is preset p's as
 * muonref_preset_apply stores it, bit for bit; coeff_order is not compared.
 * 0 for p or o NULL. */
int muonref_preset_holds(const muonref_preset *p, const muonref_options *o);

/* The first preset (muonref_preset_at order) whose list o holds, or NULL. */
const muonref_preset *muonref_preset_held(const muonref_options *o);

#endif
