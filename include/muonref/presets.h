/* muonref: Newton-Schulz coefficient presets with their provenance.
 *
 * Each preset is a list of quintic triples (a, b, c) and the order its
 * ports run it in; spec/coefficients.md gives the numbers, the source
 * (paper, repository, commit) and which port uses which name. */
#ifndef MUONREF_PRESETS_H
#define MUONREF_PRESETS_H

#include "muonref/options.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct muonref_preset {
  const char *name;           /* canonical name, e.g. "simple"            */
  const char *aliases;        /* other names ports use, comma-separated   */
  int n_coeffs;               /* length of the list                       */
  const muonref_coeff *coeffs;
  muonref_coeff_order order;  /* the order its main port uses            */
  int default_steps;          /* steps the preset is meant to run        */
  const char *provenance;     /* paper / repository@commit / file        */
} muonref_preset;

/* The preset named `name` (canonical name or alias), or NULL. */
const muonref_preset *muonref_preset_find(const char *name);

/* Number of presets and preset i (0-based; NULL past the end). */
size_t muonref_preset_count(void);
const muonref_preset *muonref_preset_at(size_t i);

/* Copies preset p's list and order into o (n_coeffs, coeffs, coeff_order);
 * other fields are left as they are. */
void muonref_preset_apply(const muonref_preset *p, muonref_options *o);

#ifdef __cplusplus
}
#endif
#endif
