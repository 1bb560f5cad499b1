/* muonref: the catalogues of checks as data (internal; muonref_options_validate
 * runs them, `muonref profile NAME` prints them).
 *
 * Each catalogue (muonref_catalogue; a profile's record names the one it
 * uses in defaults.catalogue, and the record of the port that defines it
 * holds its rows in its member "catalogue", spec/profiles/README.md) is the
 * ordered list of the checks its port's constructor makes on the option
 * values, each a row: the field, the rule and the message, whose "{}" is
 * the value as Python prints it.  The C rows (core/checks_table.h) and the
 * enum (include/muonref/catalogue_ids.h) are generated from the records.  The first
 * row that fails gives the error (spec/muon.md 12 and spec/profiles/NAME.md
 * give each port's order and words).  Checks that every catalogue makes the
 * same way (the enums, the 0/1 flags, the coefficients) stay in
 * core/options.c. */
#ifndef MUONREF_CORE_CHECKS_H
#define MUONREF_CORE_CHECKS_H

#include <stddef.h>
#include "muonref/options.h"

typedef enum muonref_check_rule {
  MUONREF_RULE_FINITE,      /* a real: finite (what muonref cannot compute is refused everywhere) */
  MUONREF_RULE_NONNEGATIVE, /* a real: finite and >= 0 */
  MUONREF_RULE_UNIT,        /* a real: finite and 0 <= x < 1 */
  MUONREF_RULE_RANGE,       /* an integer: lo <= x <= hi (grad_accumulation: 0, off, passes too) */
  MUONREF_RULE_COEFFS_FIT,  /* under coeff_order list, a list of n >= 2 triples has n <= ns_steps (optax) */
  MUONREF_RULE_AT_MOST_ONE, /* field "clip": at most one of clip_grad_norm_each, clip_grad_value, clip_grad_norm
                               is nonzero (keras' BaseOptimizer: clipnorm, clipvalue, global_clipnorm) */
  MUONREF_RULE_COEFFS_MULTIPLE, /* field "coeffs": ns_steps is a multiple of the number of triples (Emerging-
                                  Optimizers v0.1.0 newton_schulz, which runs the list in whole cycles); the
                                  message's two "{}" are ns_steps and the number of triples */
  MUONREF_RULE_UNIT_CLOSED  /* a real: 0 <= x <= 1, or NaN (field "ema_momentum", checked under use_ema
                               only: keras' `if ema_momentum > 1 or ema_momentum < 0`, False for NaN, which
                               muonref's own check then refuses in its words) */
} muonref_check_rule;

/* One check: field "lr", "momentum", "weight_decay", "ns_eps", "adam_eps",
 * "adam_betas" (both betas, the value printed "(b1, b2)"), "ns_steps",
 * "coeffs" (whose message shows ns_steps), "grad_accumulation" (0 is off and
 * passes: keras' `if gradient_accumulation_steps:`), "ema_momentum" and
 * "ema_overwrite" (both checked under use_ema only; ema_overwrite 0 is off
 * and passes) or "clip" (whose message has
 * three "{}": clip_grad_norm_each, clip_grad_value and clip_grad_norm in
 * that order, keras' clipnorm, clipvalue, global_clipnorm, each as Python
 * prints it and 0 as None: muonref's 0 is keras' None, unset). */
typedef struct muonref_check {
  const char *field;
  muonref_check_rule rule;
  int lo, hi;           /* MUONREF_RULE_RANGE */
  const char *message;  /* "{}" is replaced by the value (rule at_most_one: three, by the three values;
                           coeffs_multiple: two, ns_steps and the number of triples) */
  int fallback;         /* 1: muonref's own check of a value it cannot compute, which the port does not make
                           (the record row's "fallback": true); the port fails its own way */
} muonref_check;

/* The refusals outside a catalogue's rows that are muonref's own, not the
 * port's (the record's catalogue.fallback): those core/options.c makes
 * under every catalogue (the enums, the flags, the coefficients, ...), and
 * a parameter's shape refused at the step (core/route.c). */
enum {
  MUONREF_FALLBACK_OPTIONS = 1u,
  MUONREF_FALLBACK_SHAPE = 2u
};

/* The checks of catalogue c in its order, and where they run: `head` first
 * in muonref_options_validate, `late` after the optax fields (its own
 * position), *n_* their counts.  Returns 0 for a value outside the enum. */
int muonref_catalogue_checks(muonref_catalogue c, const muonref_check **head, size_t *n_head,
                             const muonref_check **late, size_t *n_late);

/* The MUONREF_FALLBACK_* bits of catalogue c; 0 for a value outside the enum. */
unsigned muonref_catalogue_fallback(muonref_catalogue c);

/* Whose refusal (status, message) of options *o is, by o->catalogue's
 * record: the row of the head or the late part that fails on *o with this
 * very message decides (PORT, or ROW where it is marked fallback); where
 * no failing row gives the message, the catalogue's fallback bits for the
 * refusal's source (MUONREF_ESHAPE: SHAPE; any other status: OPTIONS) give
 * SOURCE, else PORT.  The generator writes a refusal that is not PORT as an
 * error case with "match": "any" (spec/vectors.md 2.5), ROW as result
 * "acceptable" too (the port runs the value, or fails its own way), SOURCE
 * as "invalid" (what muonref cannot compute: the port fails its own way). */
typedef enum muonref_refusal_owner {
  MUONREF_REFUSAL_PORT,     /* the port's own check, in its words */
  MUONREF_REFUSAL_ROW,      /* a row marked fallback: the port does not check the value */
  MUONREF_REFUSAL_SOURCE    /* a check outside the rows that the catalogue marks fallback */
} muonref_refusal_owner;
muonref_refusal_owner muonref_refusal_owner_of(const muonref_options *o, int status, const char *message);

/* Runs rows[0..n-1] on *o (only those of field `only` when not NULL).
 * Returns MUONREF_OK or MUONREF_EOPTION with the first failing row's message. */
int muonref_checks_run(const muonref_check *rows, size_t n, const char *only, const muonref_options *o,
                       muonref_error *err);

/* The rule's name in a record ("finite", "nonnegative", "unit", "range",
 * "coeffs_fit", "at_most_one", "coeffs_multiple", "unit_closed"); NULL outside the enum.  muonref_check_rule_of: the rule
 * of a name, -1 for an unknown one. */
const char *muonref_check_rule_name(muonref_check_rule r);
int muonref_check_rule_of(const char *name);

/* msg (n bytes): message with its first k "{}" replaced by the k values in
 * vals, each ended by a NUL, one after another; a message with fewer "{}"
 * keeps the rest of vals unused.  Rows' messages (muonref_checks_run) and
 * a record's coefficient_type_refusal (vectors/format/case.c) are filled by
 * it. */
void muonref_check_fill(char *msg, size_t n, const char *message, const char *vals, int k);

/* How many "{}" a message of rule r may hold, filled in order (at_most_one
 * 3, coeffs_multiple 2, the others 1; none at all is allowed too). */
int muonref_check_holes(muonref_check_rule r);

/* 1 when a row of rule r may check `field` (the fields of muonref_check
 * with the rules that fit them: the reals with finite, nonnegative and
 * unit, ns_steps, grad_accumulation and ema_overwrite with range, ema_momentum with unit_closed, coeffs with
 * coeffs_fit and coeffs_multiple, clip with at_most_one), else 0. */
int muonref_check_field_takes(const char *field, muonref_check_rule r);

/* The catalogues' names by muonref_catalogue, NULL-terminated (the
 * spellings of the field catalogue). */
const char *const *muonref_catalogue_names(void);

/* The rule as a short text ("finite", ">= 0", "0 <= x < 1", "1..1000",
 * "triples <= ns_steps"),
 * into buf (size n); returns buf. */
char *muonref_check_rule_text(const muonref_check *c, char *buf, size_t n);

#endif
