/* muonref: Newton-Schulz coefficient presets with their provenance.
 *
 * Each preset is a list of quintic triples (a, b, c) and the order its
 * ports run it in; spec/coefficients.md gives the numbers, the source
 * (paper, repository, commit) and which port uses which name. */
#ifndef MUONREF_PRESETS_H
#define MUONREF_PRESETS_H

#include "muonref/api.h"
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
  /* Added for the coefficient study (spec/coefficients.md); a zero value
   * means "none", so older positional initialisers stay valid. */
  double coeff_safety;        /* f > 0: the list as published is run as
                                 (a/f, b/f^3, c/f^5) for every entry but
                                 the last (Polar Express, arXiv:2505.16932,
                                 Algorithm 1); 0: the list is run as is  */
  double norm_safety;         /* f > 0: the port normalises X by
                                 f * ||X||_F (+ eps); 0: by ||X||_F       */
} muonref_preset;

/* The preset named `name` (canonical name or alias), or NULL. */
MUONREF_API const muonref_preset *muonref_preset_find(const char *name);

/* Number of presets and preset i (0-based; NULL past the end). */
MUONREF_API size_t muonref_preset_count(void);
MUONREF_API const muonref_preset *muonref_preset_at(size_t i);

/* Copies preset p's list and order into o (n_coeffs, coeffs, coeff_order);
 * other fields are left as they are.  When p->coeff_safety is f > 0, entry
 * k < n_coeffs - 1 is stored as (a/f, b/pow(f,3), c/pow(f,5)) in binary64,
 * the division the Polar Express paper's Python performs.  norm_safety is
 * not represented in muonref_options (see muonref_preset_norm_safety).
 * p or o NULL: nothing. */
MUONREF_API void muonref_preset_apply(const muonref_preset *p, muonref_options *o);

/* The effective triple k (0 <= k < p->n_coeffs) of p after coeff_safety,
 * as muonref_preset_apply stores it; (0, 0, 0) for p NULL or k out of
 * range. */
MUONREF_API muonref_coeff muonref_preset_coeff(const muonref_preset *p, int k);

/* p's normalisation safety factor: p->norm_safety, or 1.0 when it is 0 or
 * p is NULL. */
MUONREF_API double muonref_preset_norm_safety(const muonref_preset *p);

#ifdef __cplusplus
}
#endif
#endif
