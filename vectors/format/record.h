/* muonref: profile records, one JSON file per profile (spec/profiles/NAME.json;
 * the format: spec/profiles/profile.schema.json and spec/profiles/README.md).
 *
 * A record is everything about one profile: its name and stable id, the
 * port's source, its spec page, its defaults as muonref_options fields
 * under their spec names (enums by their spelled names, coefficients as a
 * preset name or a list of triples), the AdamW group defaults, the port's
 * own option names (the key table: name, kind, field, branch, schedulable,
 * scope), one_group, the vector areas, the test port, and the catalogue of
 * checks its port defines (member "catalogue").  A record with a
 * "base" gives only what differs from that profile.
 *
 * The built-in profiles' records are read by `muonref profile --c-table`
 * and `--c-ids`, which write the C table of libmuonref (core/profile_table.h,
 * include/muonref/profile_ids.h); a user's record (a "base" among the
 * built-in profiles) is read at run time by `muonref gen|check
 * --profile-file FILE` and registered (core/profile_user.h).  This needs
 * jansson, so it lives here, outside libmuonref's core. */
#ifndef MUONREF_VECTORS_RECORD_H
#define MUONREF_VECTORS_RECORD_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include "muonref/profile.h"
#include "core/checks.h"
#include "core/option_fields.h"

#define MUONREF_RECORD_NAME_LEN 32  /* bytes of a profile name, with the NUL */
#define MUONREF_RECORD_MAX_KEYS 32
#define MUONREF_RECORD_MAX_AREAS 24
#define MUONREF_RECORD_MAX_UNEXPRESSED 16
#define MUONREF_RECORD_MAX_FIELDS 128 /* >= muonref_option_field_count (67; tests/unit/check_state checks <= 128) */
#define MUONREF_RECORD_MAX_CHECKS 16

/* Where a key goes when a port is built from a vector (for the Python
 * driver, spec/profiles/README.md "Building a port from the key table"). */
typedef enum muonref_key_scope {
  MUONREF_SCOPE_GROUP = 0,      /* each param-group dict, and a constructor keyword from the first group */
  MUONREF_SCOPE_INIT = 1,       /* a constructor keyword only: one value for the optimizer */
  MUONREF_SCOPE_GROUP_ONLY = 2, /* each param-group dict only (timm's use_muon, dion's algorithm) */
  MUONREF_SCOPE_ROUTE = 3       /* no keyword: which branch or list a parameter joins (the adapter's) */
} muonref_key_scope;

/* The test port of a profile (tests/ports/torch_NAME_port.py): PyTorch, run by
 * vectors/drivers/torch_driver.py with `adapter` in `mode`, Newton-Schulz
 * in `ns_format`; `constructor` says how its constructor takes the key
 * table (groups_and_keywords, groups, keywords, adapter). */
enum { MUONREF_RECORD_MAX_REFUSES = 4 };

typedef struct muonref_test_port {
  int present;
  char file[256], cls[64], adapter[64], ns_format[8], mode[16], constructor[32];
  /* "refuses": the exceptions (a prefix of "Type: message") the test port
   * raises on inputs its upstream refuses and no error case of the vectors
   * carries: a bare assert, a rule of another profile's case (optax's
   * "every leaf needs a gradient"); tests/scripts/profile-ports.sh accepts these
   * skips in cross-profile runs (spec/profiles/README.md) */
  char refuses[MUONREF_RECORD_MAX_REFUSES][200];
  int n_refuses;
} muonref_test_port;

/* One row of a catalogue of checks as a record holds it (core/checks.h's
 * muonref_check, its text inline). */
typedef struct muonref_record_check {
  char field[24];
  muonref_check_rule rule;
  int lo, hi;        /* MUONREF_RULE_RANGE: INT_MIN, INT_MAX where "min", "max" is absent */
  int late;          /* "late": runs after the optax fields (optax's own position) */
  int fallback;      /* "fallback": muonref's own check, which the port does not make */
  char message[200]; /* "{}" is the value */
} muonref_record_check;

/* The catalogue of checks a record's port defines (member "catalogue";
 * never inherited from a base): its name (the spelling of the field
 * catalogue), its stable number (muonref_catalogue), its source, and its
 * rows: those of the catalogue `checks_of` (when not "") first, then its
 * own. */
typedef struct muonref_record_catalogue {
  int present;
  char name[MUONREF_RECORD_NAME_LEN];
  int id;
  char source[1024];
  char checks_of[MUONREF_RECORD_NAME_LEN];
  unsigned fallback; /* "fallback": MUONREF_FALLBACK_* bits (core/checks.h), "options" and "shape" */
  muonref_record_check rows[MUONREF_RECORD_MAX_CHECKS];
  size_t n_rows;
} muonref_record_catalogue;

/* One record, resolved against its base (every member complete).  The
 * arrays are inline, so the profile row points into the record: keep the
 * record alive (and unmoved) as long as the row is used. */
typedef struct muonref_record {
  char name[MUONREF_RECORD_NAME_LEN];
  int id;                                   /* the built-in number; -1 for a user record */
  char base[MUONREF_RECORD_NAME_LEN];       /* "" without a base */
  char path[1024];                          /* the file it was read from ("" for a built-in row) */
  char source[512];                         /* one line: "REPO PATHS @COMMIT (DESCRIBES)" */
  char repository[128], paths[512], commit[64], release[64], describes[128], source_notes[512]; /* its parts */
  char page[128];                           /* its spec page, relative to spec/profiles/ */
  char summary[2048], keys_note[1024];      /* prose for the C table's comments ("" if none) */
  muonref_options defaults, adam_defaults;
  unsigned char adam_set[MUONREF_RECORD_MAX_FIELDS]; /* fields adam_defaults sets (by field index) */
  int has_adam;                             /* adam_defaults differs from defaults */
  muonref_option_key keys[MUONREF_RECORD_MAX_KEYS];
  char key_names[MUONREF_RECORD_MAX_KEYS][64];
  muonref_key_scope scopes[MUONREF_RECORD_MAX_KEYS];
  size_t n_keys;
  int one_group;
  char area_names[MUONREF_RECORD_MAX_AREAS][32];
  const char *areas[MUONREF_RECORD_MAX_AREAS + 1]; /* into area_names, NULL-terminated */
  size_t n_areas;
  muonref_test_port port;
  char bf16_refusal_status[16], bf16_refusal_message[256]; /* member "bf16_refusal" ("" without) */
  char bf16_unmodeled[512];     /* member "bf16_unmodeled" ("" without; muonref_profile.bf16_unmodeled) */
  char coeff_type_names[8][16];  /* member "coefficient_types" (n_coeff_types 0 without) */
  size_t n_coeff_types;
  const char *coeff_types[9];    /* muonref_profile.coefficient_types: the names, NULL-terminated */
  char coeff_type_refusal[256];  /* member "coefficient_type_refusal" ("" without) */
  /* the upstream options the key table does not express, each with why
   * (member "not_expressed"; spec/profiles/completeness.md) */
  char unexpressed[MUONREF_RECORD_MAX_UNEXPRESSED][64];
  char unexpressed_why[MUONREF_RECORD_MAX_UNEXPRESSED][320];
  /* 1 where no vector can observe the option (member "unobservable": an
   * evaluation order or kernel, a user function, what lies outside the
   * optimizer step), 0 where it is not expressed yet */
  unsigned char unexpressed_unobservable[MUONREF_RECORD_MAX_UNEXPRESSED];
  size_t n_unexpressed;
  muonref_record_catalogue catalogue;       /* member "catalogue" (present 0 without) */
  muonref_profile profile;                  /* the row, pointing into this record */
} muonref_record;

/* Reads the record in `path` on top of `base` (NULL for a record without a
 * "base"; the caller looks the base up by its name, muonref_record_base_name)
 * into *out, validated completely.  Errors: MUONREF_EIO (unreadable),
 * MUONREF_EFORMAT "PATH: member \"M\": RULE" naming the file, the member and
 * the rule it broke (JSON syntax with its line and column; an unknown
 * member; a wrong type; an unknown field, enum spelling, kind, branch,
 * scope, area or preset; a key whose kind cannot set its field; a
 * duplicate key or area; defaults that muonref_options_validate refuses,
 * with its message). */
int muonref_record_read(const char *path, const muonref_record *base, muonref_record *out, muonref_error *err);

/* The "base" member of the record in `path` into name (size n; "" when it
 * has none).  Errors: as muonref_record_read for the file and that member. */
int muonref_record_base_name(const char *path, char *name, size_t n, muonref_error *err);

/* The record of built-in profile p (its C row): defaults, keys, areas,
 * one_group, adam defaults; no test port, page or prose. */
void muonref_record_of_profile(const muonref_profile *p, int id, muonref_record *out);

/* Reads every record of folder `dir` (*.json but profile.schema.json),
 * each resolved on its base among them, sorted by id, into a new array
 * *out of *n records (free with free()).  The records must be the
 * built-in set: every one with an id, the ids 0..n-1 each once.  Errors:
 * as muonref_record_read, and MUONREF_EFORMAT for a missing or repeated
 * id, a base that is not in the folder, a cycle of bases; for catalogues
 * (member "catalogue") whose numbers are not 0 to k - 1 each once, a name
 * defined twice, a checks_of that names no catalogue or one that has a
 * checks_of itself, more than MUONREF_RECORD_MAX_CHECKS rows in all. */
int muonref_record_read_dir(const char *dir, muonref_record **out, size_t *n, muonref_error *err);

/* Reads a user's record (its base a built-in profile, no "id", a name no
 * built-in profile has) and registers its profile for every lookup by name
 * (core/profile_user.h).  The base is the built-in record of folder
 * `records` (NULL: none) where that folder reads, so that what only the
 * records hold (the keys' scopes, the prose) is inherited too; else the
 * built-in C row.  The record is allocated and kept for the life of the
 * process; *out (may be NULL) receives it.  Errors: as muonref_record_read;
 * MUONREF_EFORMAT for a missing or unknown base, a built-in name, an "id",
 * a "catalogue" (a user's record uses a built-in one, defaults.catalogue). */
int muonref_record_use(const char *path, const char *records, const muonref_record **out, muonref_error *err);

/* The resolved record as JSON, every member complete (new reference): what
 * `muonref profile --json` prints. */
json_t *muonref_record_json(const muonref_record *r);

/* The checks of catalogue c as data (core/checks.h), for `muonref profile
 * --json`: [{"field", "rule", "message"[, "min", "max"]}, ...] in their
 * order, rule "finite", "nonnegative", "unit", "range" or "coeffs_fit", the
 * message's "{}" the value (new reference; an empty list for a value outside
 * the enum). */
json_t *muonref_record_checks_json(muonref_catalogue c);

/* The C of the built-in profile table (core/profile_table.h) and of the id
 * enum (include/muonref/profile_ids.h) for records r[0..n-1] (in id order),
 * written to f. */
void muonref_record_write_c_table(FILE *f, const muonref_record *r, size_t n);
void muonref_record_write_c_ids(FILE *f, const muonref_record *r, size_t n);

/* The record of r[0..n-1] that defines the catalogue `name` (member
 * "catalogue"); NULL when none does or name is NULL.  And how many of them
 * define one. */
const muonref_record *muonref_record_catalogue_named(const muonref_record *r, size_t n, const char *name);
size_t muonref_record_catalogue_count(const muonref_record *r, size_t n);

/* The C of the catalogues of checks the records r[0..n-1] define (as
 * muonref_record_read_dir checked them): their rows (core/checks_table.h,
 * included by core/checks.c) and their enum
 * (include/muonref/catalogue_ids.h), written to f. */
void muonref_record_write_c_checks(FILE *f, const muonref_record *r, size_t n);
void muonref_record_write_c_catalogue_ids(FILE *f, const muonref_record *r, size_t n);

/* The markdown table of the profiles (spec/profiles/README.md, between the
 * markers "<!-- muonref profile --markdown -->" and "<!-- end -->"). */
void muonref_record_write_markdown(FILE *f, const muonref_record *r, size_t n);

/* The markdown table of every option field's values (spec/profiles/fields.md,
 * between the markers "<!-- muonref profile --fields-markdown -->" and
 * "<!-- end -->"): one row per field and value that some record's defaults
 * take, with the records that take it, in id order (a coefficient list by
 * its preset's name; an AdamW groups' default that differs as its own row). */
void muonref_record_write_fields_markdown(FILE *f, const muonref_record *r, size_t n);

/* The markdown table of how complete each record is (spec/profiles/completeness.md,
 * between the markers "<!-- muonref profile --completeness-markdown -->" and
 * "<!-- end -->"): per record, its keys (the upstream options it expresses),
 * the options it does not express and the share expressed; a last row sums
 * them; then each option not expressed with why. */
void muonref_record_write_completeness_markdown(FILE *f, const muonref_record *r, size_t n);

/* The test ports, one line per record that has one, for shell scripts:
 * "NAME FILE:CLASS ADAPTER MODE NS_FORMAT CONSTRUCTOR" (FILE relative to the
 * source tree). */
void muonref_record_write_test_ports(FILE *f, const muonref_record *r, size_t n);

/* ---- the tables the reader and the writers share (vectors/format/record.c) ---- */

/* How a field of muonref_options (its entry of core/option_fields.c, the
 * one table of the fields) is spelled in a record. */
typedef enum muonref_spelling {
  MUONREF_SPELL_REAL,     /* a double: a JSON number */
  MUONREF_SPELL_INT,      /* an int: a JSON integer */
  MUONREF_SPELL_LONG,     /* a long: a JSON integer */
  MUONREF_SPELL_BOOL,     /* an int 0/1: false/true */
  MUONREF_SPELL_ENUM,     /* an enum: its spelled name (muonref_*_name) */
  MUONREF_SPELL_USE_MUON, /* use_muon: null (AUTO), true, false */
  MUONREF_SPELL_COEFFS,   /* n_coeffs and coeffs: a preset name (presets.h) or a list of triples */
  MUONREF_SPELL_PATTERNS, /* n_exclude_patterns and exclude_patterns: a list of strings */
  MUONREF_SPELL_SIZES     /* n_ns_split and ns_split: a list of integers, each at least 1 */
} muonref_spelling;
muonref_spelling muonref_record_spelling(const muonref_option_field *f);

/* The offset of a field's value (the array's for coeffs and
 * exclude_patterns: what a key of the field names). */
size_t muonref_record_field_offset(const muonref_option_field *f);

/* The record spelling of a key kind ("real", "coeff_list"), a branch
 * ("any", "muon", "adam") and a scope ("group", "init", "group_only",
 * "route"); the name of the field a key sets ("lr", "coeffs[0].a"). */
const char *muonref_record_kind_name(muonref_key_kind k);
const char *muonref_record_branch_name(muonref_key_branch b);
const char *muonref_record_scope_name(muonref_key_scope s);
const char *muonref_record_key_field(const muonref_option_key *k);

#endif
