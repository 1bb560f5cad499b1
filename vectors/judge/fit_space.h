/* muonref: the option space the judge's fit (vectors/judge/fit.h) searches for an
 * explanation of a failing port (spec/vectors.md section 7): every
 * catalogued fault (fast/faults.h) and every single change of a
 * muonref_options field to another value that some profile uses (read from
 * the profile table at run time) or that the spec lists as a common
 * alternative (every named value of an enum field, the coefficient presets
 * and their bf16-rounded forms, the eps values and step counts of section 7). */
#ifndef MUONREF_VECTORS_FIT_SPACE_H
#define MUONREF_VECTORS_FIT_SPACE_H

#include <jansson.h>
#include <stddef.h>
#include "muonref/options.h"

/* What a change can alter, by kind of case (pruning: a change is run only
 * on the cases whose kind it touches). */
enum {
  MUONREF_FIT_NS = 1u << 0,   /* ns and transpose cases */
  MUONREF_FIT_MUON = 1u << 1, /* step cases with a Muon parameter */
  MUONREF_FIT_ADAM = 1u << 2, /* step cases with an AdamW parameter */
  MUONREF_FIT_STEP = 1u << 3, /* every step case (routing, gradients, p.grad) */
  MUONREF_FIT_ALL = 0xfu
};

/* One change: a fault, or one field set to a value. */
typedef struct muonref_fit_change {
  int fault;             /* > 0: the catalogued fault of that id; then field is -1 */
  int field;             /* >= 0: the field (an index of muonref_option_fields,
                            core/option_fields.h) */
  int only_default;      /* 1: only in a group whose case options give none of the
                            field's keys (the port's default differs; an ns or
                            transpose case, which gives no options, included) */
  int branch;            /* 0: every group; 1: groups not routed to AdamW by use_muon
                            (use_muon true or AUTO); 2: use_muon false groups only
                            (default changes of a profile whose AdamW groups have
                            defaults of their own, profile.h adam_fill: keller) */
  int typo;              /* 1: a one-digit typo of one coefficient (a large family of
                            unlikely changes: the fit probes it on a few failures first) */
  int ignored;           /* 1: the option ignored: every group runs the profile's default
                            whatever its case gives (value: the Muon groups' default; a
                            use_muon false group takes the profile's AdamW default where
                            it has one, profile.h adam_defaults); a port that never reads
                            a group's weight_decay, e.g.  Printed "KEY (any) -> VALUE". */
  int misread;           /* 1: an enum value misread: where a group's case options give one
                            of the field's keys and the field reads as `from`, the port
                            computes `value` (a string dispatch that sends one spelling to
                            another's formula; two of them are a swap).  Printed
                            "KEY FROM read as VALUE". */
  int from;              /* the enum value a misread acts on */
  int branch_key;        /* > 0, with ignored: key branch_key - 1 of the profile, a branch default
                            (profile.h branch_default: pytorch_optimizer's adamw_lr), ignored: only
                            in a group that gives that key, the group runs its branch's default (the
                            port swallows the constructor's keyword).  Printed "KEY (any) -> VALUE"
                            with that key's name. */
  int moment2_of;        /* > 0: the second moment of built-in profile moment2_of - 1 (its
                            defaults' moment2, moment2_beta, moment2_eps, moment2_eps_mode,
                            moment2_bias_correction, moment2_rescale, set at once in Muon
                            groups: a NorMuon judged as keller is "keller + normuon's second
                            moment"); then field is -1 and fault 0.  Printed "NAME's second
                            moment added (moment2 rows, ...)". */
  muonref_options value; /* the field's new value (only its bytes are read) */
} muonref_fit_change;

/* Every single change for profile `profile` (its defaults are the base):
 * the faults first, then for each field the value changes and, for a field
 * the profile's key table names, the default changes (first), each enum
 * value misread as another (after them, before the values) and the option
 * ignored (last); last the faults that are another profile's own (named after it:
 * megatron_nesterov_default_on under moonlight), so that of equal
 * explanations the change in this profile's terms comes first.  Returns the count
 * and a new array in *out (free() it), or 0 (*out NULL) for an unknown
 * profile or out of memory. */
size_t muonref_fit_space(const char *profile, muonref_fit_change **out);

/* Applies c to the options o of a group whose case gives the options
 * object `given` (NULL: none given) under `profile`; `read` holds the
 * group's options as the case gives them, before any change (a misread
 * tests its `from` there, and a fault maps `read` and sets in o the fields
 * it changed, so that two changes of one field, a swap of two values, act
 * at once rather than one after the other; it may be o itself). */
void muonref_fit_apply(const muonref_fit_change *c, const json_t *given, const char *profile,
                       const muonref_options *read, muonref_options *o);

/* Whether c can act on `test` (a step case's options objects, or none for
 * another kind): 0 for a default change where every group of the case
 * gives one of the field's keys, and for a misread where no group gives
 * the value it acts on. */
int muonref_fit_applies(const muonref_fit_change *c, const json_t *test, const char *kind, const char *profile);

/* What c can alter (MUONREF_FIT_*; a fault: MUONREF_FIT_ALL). */
unsigned muonref_fit_touches(const muonref_fit_change *c);

/* Whether c changes only option values (a fault whose muonref_fault_options
 * changes the profile's defaults counts as one: it can be combined with
 * another fault's hooks). */
int muonref_fit_option_only(const muonref_fit_change *c, const char *profile);

/* Whether the space searches entry i of muonref_option_fields
 * (core/option_fields.h): 1 searched; 0 excluded, *why set to the written
 * reason; -1 neither, both, or i out of range (a field the fit's tables
 * do not account for; tests/unit/check_state fails on it). */
int muonref_fit_field_searched(size_t i, const char **why);

/* The first name in the fit's tables of searched and excluded fields that
 * is no entry of muonref_option_fields (a renamed or removed field), or
 * NULL. */
const char *muonref_fit_space_unknown(void);

/* c in words, by the profile's own option names where its key table has
 * the field (and reads the written value back), else by the spec's field
 * name: "ns_eps 1e-07 -> 1e-08" (a field no key names: from the profile's
 * value), "default lr 0.02 -> 0.01", "weight_decay (any) -> 0.01" (a value
 * run in every group of a field a case can give: what it replaced is each
 * case's own value; the option ignored reads alike), a one-digit typo of a coefficient as the triple before and
 * after ("coefficients (3.4445, -4.775, 2.0315) -> (3.4445, -4.775,
 * 2.0351)"), or the fault's name.  Writes at most n bytes to buf. */
void muonref_fit_describe(const muonref_fit_change *c, const char *profile, char *buf, size_t n);

#endif
