/* muonref: what the cases a port refused have in common (issue 22).
 *
 * A port that raises on a case its profile runs (the driver records the
 * case as skipped with the exception), or runs a case its profile refuses
 * (an error case: "no error raised"), gives no result to fit.  Such a
 * failure is explained by the traits of the case, read from the vector
 * file (spec/vectors.md 2: the case's groups, params and steps): a trait
 * the refused cases share, and that the port's passing cases lack, is
 * what the port refuses.  spec/vectors.md 7 ("Refused cases") names each
 * trait and the profile behaviour it stands against. */
#ifndef MUONREF_VECTORS_REFUSAL_H
#define MUONREF_VECTORS_REFUSAL_H

#include <jansson.h>
#include <stddef.h>
#include "muonref/options.h"

typedef enum muonref_trait {
  MUONREF_TRAIT_MISSING_GRAD = 0, /* a step gives null for a parameter's gradient */
  MUONREF_TRAIT_MUON_3D,          /* a parameter of 3 dimensions in a group whose use_muon is not false */
  MUONREF_TRAIT_MUON_CONV,        /* one of 4 or more (a conv filter) in such a group */
  MUONREF_TRAIT_MUON_VECTOR,      /* a parameter of fewer than 2 dimensions in a group with use_muon true */
  MUONREF_TRAIT_ROUND_TRIP,       /* the state is exported and imported between steps (roundTripAfter) */
  MUONREF_TRAIT_SCHEDULE,         /* a group's options change between steps (setOptions) */
  MUONREF_TRAIT_SHARDED,          /* the case runs sharded (sharding) */
  MUONREF_TRAIT_DTYPE_RESUME,     /* the state is loaded into the model converted to another dtype (roundTripDtype) */
  MUONREF_TRAIT_BF16_PARAM,       /* a parameter is bf16 at some step (a bf16 init, or roundTripDtype bf16) */
  MUONREF_N_TRAITS
} muonref_trait;

/* The traits of a step or error case `test` (a test object of a vector
 * file) as a bit mask (1u << muonref_trait); 0 for the other kinds and for
 * a malformed case (no trait is read from what is not there). */
unsigned muonref_case_traits(const json_t *test);

/* The trait in words, for "N cases with ...": "a parameter without
 * gradient". */
const char *muonref_trait_text(muonref_trait t);

/* The explanation item of trait t under options `profile_defaults` (the
 * profile's own), for a port that refuses (refused = 1) or runs
 * (refused = 0) the cases with it, written to buf (n bytes):
 *   refused: "missing_grad zeros -> error" (the profile's value of the
 *            field that decides it, then "error"), "conv_mode keller ->
 *            error" (3-D parameters and conv filters apart: a port may
 *            refuse one and run the other); a trait without a field: "round trip refused", ...
 *   run:     "a Muon parameter of fewer than two dimensions accepted", ...
 * The grammar is the fit's (spec/vectors.md 7): FIELD OLD -> NEW where a
 * field decides the behaviour, else a name. */
void muonref_trait_item(muonref_trait t, const muonref_options *profile_defaults, int refused, char *buf, size_t n);

#endif
