/* muonref: every field of muonref_options, once, in the order of state file
 * format 6 (spec/muon.md 11.1): the state file (fast/state.c) writes,
 * reads and compares the options through this table, `muonref state`
 * prints them from it, and the profile records (vectors/format/record.c) spell
 * them by it, so that a field added to the struct and not here
 * is caught by tests/unit/check_state (option_table_covers_every_field: every
 * byte of the struct that is not padding belongs to one entry) instead of
 * being silently left out of checkpoints.  Internal (not installed). */
#ifndef MUONREF_CORE_OPTION_FIELDS_H
#define MUONREF_CORE_OPTION_FIELDS_H

#include <stddef.h>
#include "muonref/options.h"

typedef enum muonref_field_kind {
  MUONREF_FIELD_F64 = 0,     /* double */
  MUONREF_FIELD_I32 = 1,     /* int or an enum (4 bytes, signed) */
  MUONREF_FIELD_I64 = 2,     /* long (adam_dim_threshold) */
  MUONREF_FIELD_COEFFS = 3,  /* n_coeffs (int) at off, coeffs[MUONREF_MAX_COEFFS] at off2 */
  MUONREF_FIELD_PATTERNS = 4, /* n_exclude_patterns (int) at off, exclude_patterns at off2 */
  MUONREF_FIELD_SIZES = 5     /* n_ns_split (int) at off, ns_split[MUONREF_MAX_SPLIT] (int) at off2 */
} muonref_field_kind;

typedef struct muonref_option_field {
  const char *name;           /* the field's name in the struct and in spec/muon.md 11.1 */
  muonref_field_kind kind;
  size_t off, off2;           /* offsetof the field (the count for COEFFS, PATTERNS and SIZES), the array's */
  const char *(*enum_name)(int); /* an enum's spelling (options.h *_name), or NULL */
  int since;                  /* the first state file format that stores the entry (1 to 4) */
  int boolean;                /* 1: an int that is 0 or 1 (a record spells it false/true) */
  const char *c_prefix;       /* an enum's C constants: prefix + its spelling in capitals
                                 ("MUONREF_SCALE_" "FAN_IN"), or NULL */
} muonref_option_field;

/* The table (muonref_option_field_count entries). */
extern const muonref_option_field muonref_option_fields[];
extern const size_t muonref_option_field_count;

/* The name of the first entry in which a and b differ (doubles bitwise,
 * the coefficient triples, patterns and sizes up to their counts), or NULL;
 * only the entries that state file format `version` stores (0: every entry). */
const char *muonref_option_fields_differ(const muonref_options *a, const muonref_options *b, unsigned version);

/* Every entry in which `changed` differs from `base` copied from `changed`
 * into o; o's other entries are left as they are.  Two changes made to the
 * same options so act at once, each judged on the options before either
 * (the fit's pairs, vectors/judge/fit.c: a swap of two values is two conditional
 * changes, and made one after the other the second undoes the first). */
void muonref_option_fields_take_changed(muonref_options *o, const muonref_options *base, const muonref_options *changed);

/* The entry named `name` ("decay_method"), or NULL (none, or name NULL). */
const muonref_option_field *muonref_option_field_named(const char *name);

/* The value whose spelling is s of enum entry f (f->enum_name), or -1 when
 * s is NULL, f is no enum or no value of it is spelled s. */
int muonref_option_field_enum_value(const muonref_option_field *f, const char *s);

/* Entry f of o as text into buf (n bytes, NUL-terminated, cut to fit): a
 * double as Python prints it, an enum by its spelling (its number when it
 * has none), the coefficient triples as [(a, b, c), ...], the patterns as
 * ['p', ...], the sizes as [3, 2, 2].  Returns buf.  (`muonref state`, `muonref profile`.) */
char *muonref_option_field_text(const muonref_options *o, const muonref_option_field *f, char *buf, size_t n);

/* Accessors of an entry's value in o (I32 and I64 as long long). */
double muonref_option_field_f64(const muonref_options *o, const muonref_option_field *f);
long long muonref_option_field_int(const muonref_options *o, const muonref_option_field *f);

#endif
