/* muonref: writing profile records out: as JSON (`muonref profile --json`),
 * as the C table of libmuonref (`--c-table`, `--c-ids`) and as the markdown
 * table of spec/profiles/README.md (`--markdown`); see record.h. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "vectors/format/record.h"
#include "vectors/format/case.h"
#include "core/checks.h"
#include "core/pyfmt.h"
#include "core/preset_match.h"

/* ---- JSON ---- */

static json_t *field_json(const muonref_options *o, const muonref_option_field *f)
{
  const void *p = (const char *)o + muonref_record_field_offset(f);
  switch (muonref_record_spelling(f)) {
  case MUONREF_SPELL_REAL: return muonref_case_real_json(*(const double *)p);
  case MUONREF_SPELL_INT: return json_integer(*(const int *)p);
  case MUONREF_SPELL_LONG: return json_integer(*(const long *)p);
  case MUONREF_SPELL_BOOL: return json_boolean(*(const int *)p);
  case MUONREF_SPELL_ENUM: {
    const char *s = f->enum_name(*(const int *)p);
    return s ? json_string(s) : json_integer(*(const int *)p);
  }
  case MUONREF_SPELL_USE_MUON:
    return o->use_muon == MUONREF_USE_MUON_AUTO ? json_null() : json_boolean(o->use_muon == MUONREF_USE_MUON_TRUE);
  case MUONREF_SPELL_COEFFS: {
    json_t *l = json_array();
    for (int k = 0; k < o->n_coeffs && k < MUONREF_MAX_COEFFS; k++)
      json_array_append_new(l, json_pack("[o, o, o]", muonref_case_real_json(o->coeffs[k].a),
                                         muonref_case_real_json(o->coeffs[k].b), muonref_case_real_json(o->coeffs[k].c)));
    return l;
  }
  case MUONREF_SPELL_PATTERNS: {
    json_t *l = json_array();
    for (int k = 0; k < o->n_exclude_patterns && k < MUONREF_MAX_PATTERNS; k++)
      json_array_append_new(l, json_stringn(o->exclude_patterns[k], strnlen(o->exclude_patterns[k], MUONREF_PATTERN_LEN)));
    return l;
  }
  case MUONREF_SPELL_SIZES: {
    json_t *l = json_array();
    for (int k = 0; k < o->n_ns_split && k < MUONREF_MAX_SPLIT; k++)
      json_array_append_new(l, json_integer(o->ns_split[k]));
    return l;
  }
  }
  return json_null();
}

static json_t *options_json(const muonref_options *o, const unsigned char *only)
{
  json_t *j = json_object();
  for (size_t i = 0; i < muonref_option_field_count; i++)
    if (!only || only[i])
      json_object_set_new(j, muonref_option_fields[i].name, field_json(o, &muonref_option_fields[i]));
  return j;
}

static void set_str(json_t *j, const char *key, const char *s)
{
  if (s && *s)
    json_object_set_new(j, key, json_string(s));
}

/* One check as a record writes it: {"field", "rule"[, "min"][, "max"][, "late"][, "fallback"], "message"}
 * (min, max of a range row only, absent where INT_MIN, INT_MAX). */
static json_t *check_json(const char *field, muonref_check_rule rule, int lo, int hi, int late, int fallback,
                          const char *message)
{
  json_t *e = json_pack("{s:s, s:s}", "field", field, "rule", muonref_check_rule_name(rule));
  if (rule == MUONREF_RULE_RANGE && lo != INT_MIN)
    json_object_set_new(e, "min", json_integer(lo));
  if (rule == MUONREF_RULE_RANGE && hi != INT_MAX)
    json_object_set_new(e, "max", json_integer(hi));
  if (late)
    json_object_set_new(e, "late", json_true());
  if (fallback)
    json_object_set_new(e, "fallback", json_true());
  json_object_set_new(e, "message", json_string(message));
  return e;
}

json_t *muonref_record_json(const muonref_record *r)
{
  json_t *j = json_object();
  set_str(j, "name", r->name);
  if (r->id >= 0)
    json_object_set_new(j, "id", json_integer(r->id));
  set_str(j, "base", r->base);
  json_t *src = json_object();
  set_str(src, "repository", r->repository);
  json_t *paths = json_array();
  for (const char *p = r->paths; *p;) { /* joined with ", " by the reader */
    const char *q = strstr(p, ", ");
    json_array_append_new(paths, json_stringn(p, q ? (size_t)(q - p) : strlen(p)));
    p = q ? q + 2 : p + strlen(p);
  }
  json_object_set_new(src, "paths", paths);
  set_str(src, "commit", r->commit);
  set_str(src, "release", r->release);
  set_str(src, "describes", r->describes);
  set_str(src, "notes", r->source_notes);
  if (!*r->repository) /* a built-in row read from C: only its one-line source */
    json_object_set_new(src, "text", json_string(r->source));
  json_object_set_new(j, "source", src);
  set_str(j, "page", r->page);
  json_object_set_new(j, "defaults", options_json(&r->defaults, NULL));
  if (r->has_adam)
    json_object_set_new(j, "adam_defaults", options_json(&r->adam_defaults, r->adam_set));
  json_object_set_new(j, "one_group", json_boolean(r->one_group));
  if (*r->bf16_refusal_status)
    json_object_set_new(j, "bf16_refusal", json_pack("{s:s, s:s}", "status", r->bf16_refusal_status, "message",
                                                     r->bf16_refusal_message));
  if (*r->bf16_unmodeled)
    json_object_set_new(j, "bf16_unmodeled", json_string(r->bf16_unmodeled));
  if (r->n_coeff_types) {
    json_t *ct = json_array();
    for (size_t i = 0; i < r->n_coeff_types; i++)
      json_array_append_new(ct, json_string(r->coeff_type_names[i]));
    json_object_set_new(j, "coefficient_types", ct);
  }
  if (*r->coeff_type_refusal)
    json_object_set_new(j, "coefficient_type_refusal", json_string(r->coeff_type_refusal));
  json_t *keys = json_array();
  for (size_t i = 0; i < r->n_keys; i++) {
    const muonref_option_key *k = &r->keys[i];
    json_t *e = json_pack("{s:s, s:s, s:s}", "name", r->key_names[i], "kind", muonref_record_kind_name(k->kind), "field",
                          muonref_record_key_field(k));
    if (k->branch != MUONREF_KEY_ANY)
      json_object_set_new(e, "branch", json_string(muonref_record_branch_name(k->branch)));
    if (k->schedulable)
      json_object_set_new(e, "schedulable", json_true());
    if (k->optional)
      json_object_set_new(e, "optional", json_true());
    if (k->required)
      json_object_set_new(e, "required", json_true());
    if (k->branch_default)
      json_object_set_new(e, "branch_default", json_true());
    if (r->scopes[i] != MUONREF_SCOPE_GROUP)
      json_object_set_new(e, "scope", json_string(muonref_record_scope_name(r->scopes[i])));
    json_array_append_new(keys, e);
  }
  json_object_set_new(j, "keys", keys);
  json_t *areas = json_array();
  for (size_t i = 0; i < r->n_areas; i++)
    json_array_append_new(areas, json_string(r->area_names[i]));
  json_object_set_new(j, "areas", areas);
  if (r->n_unexpressed) {
    json_t *ne = json_array();
    for (size_t i = 0; i < r->n_unexpressed; i++) {
      json_t *e = json_pack("{s:s, s:s}", "option", r->unexpressed[i], "why", r->unexpressed_why[i]);
      if (r->unexpressed_unobservable[i])
        json_object_set_new(e, "unobservable", json_true());
      json_array_append_new(ne, e);
    }
    json_object_set_new(j, "not_expressed", ne);
  }
  if (r->port.present) {
    json_t *tp = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "file", r->port.file, "class", r->port.cls, "adapter",
                           r->port.adapter, "ns_format", r->port.ns_format, "mode", r->port.mode, "constructor",
                           r->port.constructor);
    if (tp && r->port.n_refuses) {
      json_t *a = json_array();
      for (int i = 0; i < r->port.n_refuses; i++)
        json_array_append_new(a, json_string(r->port.refuses[i]));
      json_object_set_new(tp, "refuses", a);
    }
    json_object_set_new(j, "test_port", tp);
  }
  if (r->catalogue.present) { /* the catalogue it defines, its own rows as the record holds them */
    const muonref_record_catalogue *c = &r->catalogue;
    json_t *cat = json_pack("{s:s, s:i, s:s}", "name", c->name, "id", c->id, "source", c->source), *rows = json_array();
    if (*c->checks_of)
      json_object_set_new(cat, "checks_of", json_string(c->checks_of));
    if (c->fallback) {
      json_t *fb = json_array();
      if (c->fallback & MUONREF_FALLBACK_OPTIONS)
        json_array_append_new(fb, json_string("options"));
      if (c->fallback & MUONREF_FALLBACK_SHAPE)
        json_array_append_new(fb, json_string("shape"));
      json_object_set_new(cat, "fallback", fb);
    }
    for (size_t i = 0; i < c->n_rows; i++) {
      const muonref_record_check *k = &c->rows[i];
      json_array_append_new(rows, check_json(k->field, k->rule, k->lo, k->hi, k->late, k->fallback, k->message));
    }
    if (c->n_rows || !*c->checks_of) /* the reader requires checks without checks_of, even an empty list */
      json_object_set_new(cat, "checks", rows);
    else
      json_decref(rows);
    json_object_set_new(j, "catalogue", cat);
  }
  return j;
}

json_t *muonref_record_checks_json(muonref_catalogue c)
{
  const muonref_check *rows[2];
  size_t n[2];
  json_t *l = json_array();
  if (!muonref_catalogue_checks(c, &rows[0], &n[0], &rows[1], &n[1]))
    return l;
  for (int part = 0; part < 2; part++)
    for (size_t i = 0; i < n[part]; i++) {
      const muonref_check *k = &rows[part][i];
      json_array_append_new(l, check_json(k->field, k->rule, k->lo, k->hi, part, k->fallback, k->message));
    }
  return l;
}

/* ---- C ---- */

/* s as a C comment's text: wrapped at 100 columns after `indent`, "*\/" and "/\*" broken. */
static void comment(FILE *f, const char *indent, const char *s)
{
  size_t col = 0;
  fprintf(f, "%s/*", indent);
  col = strlen(indent) + 2;
  while (*s) {
    size_t w = strcspn(s, " ");
    if (col + 1 + w > 100 && col > strlen(indent) + 3) {
      fprintf(f, "\n%s *", indent);
      col = strlen(indent) + 2;
    }
    fputc(' ', f);
    for (size_t i = 0; i < w; i++)
      fputc(s[i] == '/' && ((i > 0 && s[i - 1] == '*') || (i + 1 < w && s[i + 1] == '*')) ? ' ' : s[i], f);
    col += 1 + w;
    s += w;
    while (*s == ' ')
      s++;
  }
  fprintf(f, " */\n");
}

static void c_string(FILE *f, const char *s)
{
  fputc('"', f);
  for (; *s; s++)
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else
      fputc(*s, f);
  fputc('"', f);
}

/* A profile's name as a C identifier: a release's "@" and "." as "_"
 * ("emerging@0.3": emerging_0_3), into a static buffer. */
static const char *c_ident(const char *name)
{
  static char b[64];
  size_t i = 0;
  for (; name[i] && i + 1 < sizeof b; i++)
    b[i] = isalnum((unsigned char)name[i]) ? name[i] : '_';
  b[i] = 0;
  return b;
}

/* s as an upper-case C identifier (as c_ident maps it, written out rather than through its static
 * buffer, which a caller may still hold): a profile's MUONREF_PROFILE_ suffix, an enum value's. */
static void c_upper(FILE *f, const char *s)
{
  for (; *s; s++)
    fputc(isalnum((unsigned char)*s) ? toupper((unsigned char)*s) : '_', f);
}

static void c_real(FILE *f, double x)
{
  char b[40];
  fputs(muonref_py_float(b, sizeof b, x), f); /* the shortest decimal that reads back as x */
}

static void c_field(FILE *f, const muonref_options *o, const muonref_option_field *fd)
{
  const void *p = (const char *)o + muonref_record_field_offset(fd);
  switch (muonref_record_spelling(fd)) {
  case MUONREF_SPELL_REAL: fprintf(f, "  .%s = ", fd->name), c_real(f, *(const double *)p), fputs(",\n", f); break;
  case MUONREF_SPELL_INT: fprintf(f, "  .%s = %d,\n", fd->name, *(const int *)p); break;
  case MUONREF_SPELL_LONG: fprintf(f, "  .%s = %ld,\n", fd->name, *(const long *)p); break;
  case MUONREF_SPELL_BOOL: fprintf(f, "  .%s = %d,\n", fd->name, *(const int *)p); break;
  case MUONREF_SPELL_ENUM:
    fprintf(f, "  .%s = %s", fd->name, fd->c_prefix), c_upper(f, fd->enum_name(*(const int *)p)), fputs(",\n", f);
    break;
  case MUONREF_SPELL_USE_MUON:
    fprintf(f, "  .use_muon = %s,\n", o->use_muon == MUONREF_USE_MUON_AUTO ? "MUONREF_USE_MUON_AUTO"
                                      : o->use_muon == MUONREF_USE_MUON_TRUE ? "MUONREF_USE_MUON_TRUE"
                                                                              : "MUONREF_USE_MUON_FALSE");
    break;
  case MUONREF_SPELL_COEFFS:
    fprintf(f, "  .n_coeffs = %d,\n  .coeffs = {", o->n_coeffs);
    for (int k = 0; k < o->n_coeffs; k++) {
      fputs(k ? ",\n              {" : "{", f);
      c_real(f, o->coeffs[k].a), fputs(", ", f), c_real(f, o->coeffs[k].b), fputs(", ", f), c_real(f, o->coeffs[k].c);
      fputs("}", f);
    }
    fputs("},\n", f);
    break;
  case MUONREF_SPELL_SIZES:
    fprintf(f, "  .n_ns_split = %d,\n", o->n_ns_split);
    if (o->n_ns_split > 0) {
      fputs("  .ns_split = {", f);
      for (int k = 0; k < o->n_ns_split; k++)
        fprintf(f, "%s%d", k ? ", " : "", o->ns_split[k]);
      fputs("},\n", f);
    }
    break;
  case MUONREF_SPELL_PATTERNS:
    fprintf(f, "  .n_exclude_patterns = %d,\n", o->n_exclude_patterns);
    if (o->n_exclude_patterns > 0) {
      fputs("  .exclude_patterns = {", f);
      for (int k = 0; k < o->n_exclude_patterns; k++)
        fputs(k ? ", " : "", f), c_string(f, o->exclude_patterns[k]);
      fputs("},\n", f);
    }
    break;
  }
}

static void c_options(FILE *f, const char *name, const char *suffix, const muonref_options *o)
{
  fprintf(f, "static const muonref_options %s_%s = {\n", name, suffix);
  for (size_t i = 0; i < muonref_option_field_count; i++)
    c_field(f, o, &muonref_option_fields[i]);
  fputs("};\n", f);
}

void muonref_record_write_c_table(FILE *f, const muonref_record *r, size_t n)
{
  fputs("/* muonref: the built-in profiles' table, GENERATED by `muonref profile --c-table` from\n"
        " * spec/profiles/NAME.json (the records): do not edit; change a record and run `make\n"
        " * profile-tables` (tests/scripts/profile-records.sh checks this file is in step).  Included once, by\n"
        " * core/profile.c. */\n#include <stddef.h>\n#include \"muonref/profile.h\"\n", f);
  for (size_t i = 0; i < n; i++) {
    const muonref_record *p = &r[i];
    fprintf(f, "\n/* ---- %s: %s ---- */\n", p->name, p->source);
    if (*p->summary)
      comment(f, "", p->summary);
    c_options(f, c_ident(p->name), "defaults", &p->defaults);
    if (p->has_adam)
      c_options(f, c_ident(p->name), "adam_defaults", &p->adam_defaults);
    if (*p->keys_note)
      comment(f, "", p->keys_note);
    fprintf(f, "static const muonref_option_key %s_keys[] = {\n", c_ident(p->name));
    for (size_t k = 0; k < p->n_keys; k++) {
      const muonref_option_key *key = &p->keys[k];
      fputs("  {", f), c_string(f, p->key_names[k]), fputs(", MUONREF_KEY_", f);
      c_upper(f, muonref_record_kind_name(key->kind));
      fprintf(f, ", offsetof(muonref_options, %s), %s, %d", muonref_record_key_field(key),
              key->branch == MUONREF_KEY_MUON_ONLY   ? "MUONREF_KEY_MUON_ONLY"
              : key->branch == MUONREF_KEY_ADAM_ONLY ? "MUONREF_KEY_ADAM_ONLY"
                                                     : "MUONREF_KEY_ANY",
              key->schedulable);
      fprintf(f, ", %d, %d, %d, %d},\n", key->optional, key->init, key->required, key->branch_default);
    }
    fprintf(f, "};\nstatic const char *const %s_areas[] = {", c_ident(p->name));
    for (size_t a = 0; a < p->n_areas; a++)
      fputs(a % 8 == 0 ? "\n  " : " ", f), c_string(f, p->area_names[a]), fputs(",", f);
    fputs(" NULL};\n", f);
    if (p->n_coeff_types) {
      fprintf(f, "static const char *const %s_coefficient_types[] = {", c_ident(p->name));
      for (size_t t = 0; t < p->n_coeff_types; t++)
        c_string(f, p->coeff_type_names[t]), fputs(", ", f);
      fputs("NULL};\n", f);
    }
  }
  fputs("\n/* in muonref_profile_id order */\nstatic const muonref_profile PROFILES[] = {\n", f);
  for (size_t i = 0; i < n; i++) {
    const muonref_record *p = &r[i];
    fputs("  [MUONREF_PROFILE_", f), c_upper(f, p->name), fputs("] = {", f), c_string(f, p->name), fputs(", ", f);
    c_string(f, p->source);
    fprintf(f, ", &%s_defaults, ", c_ident(p->name));
    fprintf(f, "%s_keys, %zu, %d, ", c_ident(p->name), p->n_keys, p->one_group);
    if (p->has_adam)
      fprintf(f, "&%s_adam_defaults", c_ident(p->name));
    else
      fputs("NULL", f);
    fprintf(f, ", %s_areas", c_ident(p->name));
    int refusal = *p->coeff_type_refusal != 0;
    if (*p->bf16_refusal_status || *p->bf16_unmodeled || p->n_coeff_types || refusal) {
      fputs(", ", f);
      if (*p->bf16_refusal_status)
        c_string(f, p->bf16_refusal_status), fputs(", ", f), c_string(f, p->bf16_refusal_message);
      else
        fputs("NULL, NULL", f);
    }
    if (*p->bf16_unmodeled || p->n_coeff_types || refusal)
      fputs(", ", f), *p->bf16_unmodeled ? c_string(f, p->bf16_unmodeled) : (void)fputs("NULL", f);
    if (p->n_coeff_types)
      fprintf(f, ", %s_coefficient_types", c_ident(p->name));
    else if (refusal)
      fputs(", NULL", f);
    if (refusal)
      fputs(", ", f), c_string(f, p->coeff_type_refusal);
    fputs("},\n", f);
  }
  fputs("};\n", f);
}

void muonref_record_write_c_ids(FILE *f, const muonref_record *r, size_t n)
{
  fputs("/* muonref: the built-in profiles by number, GENERATED by `muonref profile --c-ids` from the\n"
        " * records spec/profiles/NAME.json (their \"id\"): do not edit; `make profile-tables`.\n"
        " * Included by muonref/profile.h. */\n#ifndef MUONREF_PROFILE_IDS_H\n#define MUONREF_PROFILE_IDS_H\n\n"
        "typedef enum muonref_profile_id {\n", f);
  for (size_t i = 0; i < n; i++) {
    fputs("  MUONREF_PROFILE_", f), c_upper(f, r[i].name);
    fprintf(f, " = %d, /* %s */\n", r[i].id, r[i].source);
  }
  fprintf(f, "  MUONREF_PROFILE_COUNT = %zu /* not a profile: how many there are */\n} muonref_profile_id;\n\n#endif\n", n);
}

/* ---- the test ports ---- */

void muonref_record_write_test_ports(FILE *f, const muonref_record *r, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (r[i].port.present)
      fprintf(f, "%s %s:%s %s %s %s %s\n", r[i].name, r[i].port.file, r[i].port.cls, r[i].port.adapter, r[i].port.mode,
              r[i].port.ns_format, r[i].port.constructor);
}

/* ---- markdown ---- */

void muonref_record_write_markdown(FILE *f, const muonref_record *r, size_t n)
{
  fputs("| profile | page | upstream described | areas | test port (mode, Newton-Schulz format) | adapter |\n"
        "|---|---|---|---|---|---|\n", f);
  for (size_t i = 0; i < n; i++) {
    const muonref_record *p = &r[i];
    fprintf(f, "| `%s` | [%s](%s) | %s ", p->name, *p->page ? p->page : "-", *p->page ? p->page : "", p->repository);
    for (const char *s = p->paths; *s;) {
      const char *q = strstr(s, ", ");
      size_t w = q ? (size_t)(q - s) : strlen(s);
      fprintf(f, "%s`%.*s`", s == p->paths ? "" : ", ", (int)w, s);
      s = q ? q + 2 : s + w;
    }
    if (*p->commit)
      fprintf(f, " @ `%s`", p->commit);
    if (*p->release)
      fprintf(f, " %s", p->release);
    if (*p->describes)
      fprintf(f, " (%s)", p->describes);
    fprintf(f, " | %zu | ", p->n_areas);
    if (p->port.present)
      fprintf(f, "`%s:%s` (%s, %s) | `%s` |\n", p->port.file, p->port.cls, p->port.mode, p->port.ns_format,
              p->port.adapter);
    else
      fputs("- | - |\n", f);
  }
}

/* ---- the fields by profile (spec/profiles/fields.md) ---- */

/* s as a markdown table's cell into buf (n bytes): '|' escaped, a line
 * break as a space; cut short where buf ends. */
static void md_cell(const char *s, char *buf, size_t n)
{
  size_t w = 0;
  for (; *s && w + 3 < n; s++) {
    if (*s == '|')
      buf[w++] = '\\';
    buf[w++] = *s == '\n' || *s == '\r' ? ' ' : *s;
  }
  buf[w] = '\0';
}

/* Field f of o as a record spells it (a real as Python prints it, a
 * string without quotes, anything else compact JSON; a coefficient list by
 * its preset's name), as a markdown table's cell (md_cell). */
static void value_md(const muonref_options *o, const muonref_option_field *f, char *buf, size_t n)
{
  char raw[1024];
  const muonref_preset *held = muonref_record_spelling(f) == MUONREF_SPELL_COEFFS ? muonref_preset_held(o) : NULL;
  const char *preset = held ? held->name : NULL;
  json_t *j = preset ? NULL : field_json(o, f);
  if (preset) {
    snprintf(raw, sizeof raw, "preset %s", preset);
  } else if (json_is_real(j)) { /* as Python prints it: 0.0003, 1e-08 */
    muonref_py_float(raw, sizeof raw, json_real_value(j));
  } else if (json_is_string(j)) {
    snprintf(raw, sizeof raw, "%s", json_string_value(j));
  } else {
    char *t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(raw, sizeof raw, "%s", t ? t : "?");
    free(t);
  }
  json_decref(j);
  md_cell(raw, buf, n);
}

/* Entry k of the fields table for field i: record k's Muon groups' default
 * (k < n), or record k - n's AdamW groups' default where it sets one
 * that differs; the value's cell into buf.  0 where entry k does not exist. */
static int field_cell(const muonref_record *r, size_t n, size_t k, size_t i, char *buf, size_t len)
{
  const muonref_record *p = &r[k % n];
  char v[1024], muon[1024];
  if (k >= n && !(p->has_adam && p->adam_set[i]))
    return 0;
  value_md(k >= n ? &p->adam_defaults : &p->defaults, &muonref_option_fields[i], v, sizeof v);
  value_md(&p->defaults, &muonref_option_fields[i], muon, sizeof muon);
  if (k >= n && !strcmp(v, muon)) /* the AdamW groups take the Muon groups' value */
    return 0;
  snprintf(buf, len, "`%s`%s", v, k >= n ? " (AdamW groups)" : "");
  return 1;
}

void muonref_record_write_fields_markdown(FILE *f, const muonref_record *r, size_t n)
{
  fputs("| field | value | profiles |\n|---|---|---|\n", f);
  for (size_t i = 0; i < muonref_option_field_count; i++)
    for (size_t k = 0; k < 2 * n; k++) { /* each value, the first record to take it first */
      char v[1100], w[1100];
      int again = 0;
      if (!field_cell(r, n, k, i, v, sizeof v))
        continue;
      for (size_t e = 0; e < k && !again; e++)
        again = field_cell(r, n, e, i, w, sizeof w) && !strcmp(v, w);
      if (again)
        continue;
      fprintf(f, "| `%s` | %s | ", muonref_option_fields[i].name, v);
      for (size_t e = k, any = 0; e < 2 * n; e++) /* every record that takes it */
        if (field_cell(r, n, e, i, w, sizeof w) && !strcmp(v, w))
          fprintf(f, "%s%s", any++ ? ", " : "", r[e % n].name);
      fputs(" |\n", f);
    }
}

/* ---- completeness (spec/profiles/completeness.md) ---- */


/* One row of the completeness table: the options expressed, not expressed
 * yet and unobservable, and the share expressed of all and of the
 * observable (name NULL: the row "all"). */
static void completeness_row(FILE *f, const char *name, size_t keys, size_t missing, size_t blind)
{
  size_t all = keys + missing + blind, seen = keys + missing;
  if (name)
    fprintf(f, "| `%s` ", name);
  else
    fputs("| all ", f);
  fprintf(f, "| %zu | %zu | %zu | %zu / %zu (%.0f %%); %zu / %zu (%.0f %%) |\n", keys, missing, blind, keys, all,
          all ? 100.0 * (double)keys / (double)all : 100.0, keys, seen, seen ? 100.0 * (double)keys / (double)seen : 100.0);
}

void muonref_record_write_completeness_markdown(FILE *f, const muonref_record *r, size_t n)
{
  size_t keys = 0, missing = 0, blind = 0;
  fputs("| profile | expressed (keys) | not expressed yet | no vector can observe | share expressed (of all; of "
        "the observable) |\n|---|---|---|---|---|\n", f);
  for (size_t i = 0; i < n; i++) {
    size_t b = 0;
    for (size_t k = 0; k < r[i].n_unexpressed; k++)
      b += r[i].unexpressed_unobservable[k];
    completeness_row(f, r[i].name, r[i].n_keys, r[i].n_unexpressed - b, b);
    keys += r[i].n_keys, missing += r[i].n_unexpressed - b, blind += b;
  }
  completeness_row(f, NULL, keys, missing, blind);
  fputs("\n| profile | option | why it is not expressed |\n|---|---|---|\n", f);
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < r[i].n_unexpressed; k++) {
      char option[2 * sizeof r[i].unexpressed[k]], why[2 * sizeof r[i].unexpressed_why[k]];
      md_cell(r[i].unexpressed[k], option, sizeof option), md_cell(r[i].unexpressed_why[k], why, sizeof why);
      fprintf(f, "| `%s` | `%s` | %s%s |\n", r[i].name, option, r[i].unexpressed_unobservable[k] ?
              "no vector can observe it: " : "", why);
    }
}

/* ---- the catalogues of checks ---- */

/* The record that defines catalogue number id (checked: there is one). */
static const muonref_record *catalogue_record(const muonref_record *r, size_t n, int id)
{
  for (size_t i = 0; i < n; i++)
    if (r[i].catalogue.present && r[i].catalogue.id == id)
      return &r[i];
  return NULL;
}

/* How many rows of c (its own, not checks_of's) are late (1) or in the head (0). */
static size_t rows_of(const muonref_record_catalogue *c, int late)
{
  size_t k = 0;
  for (size_t i = 0; c && i < c->n_rows; i++)
    k += c->rows[i].late == late;
  return k;
}

/* A range bound in C: INT_MIN, INT_MAX, MUONREF_MAX_NS_STEPS or the number. */
static void c_bound(FILE *f, int v)
{
  if (v == INT_MIN)
    fputs("INT_MIN", f);
  else if (v == INT_MAX)
    fputs("INT_MAX", f);
  else if (v == MUONREF_MAX_NS_STEPS)
    fputs("MUONREF_MAX_NS_STEPS", f);
  else
    fprintf(f, "%d", v);
}

/* The rows of `from` whose lateness is `late`, as C initialisers. */
static size_t c_rows(FILE *f, const muonref_record_catalogue *from, int late)
{
  size_t k = 0;
  for (size_t i = 0; i < from->n_rows; i++) {
    const muonref_record_check *c = &from->rows[i];
    if (c->late != late)
      continue;
    fputs("  {", f), c_string(f, c->field), fputs(", MUONREF_RULE_", f), c_upper(f, muonref_check_rule_name(c->rule));
    fputs(", ", f);
    if (c->rule == MUONREF_RULE_RANGE)
      c_bound(f, c->lo), fputs(", ", f), c_bound(f, c->hi);
    else
      fputs("0, 0", f);
    fputs(", ", f), c_string(f, c->message), fputs(c->fallback ? ", 1},\n" : ", 0},\n", f);
    k++;
  }
  return k;
}

void muonref_record_write_c_checks(FILE *f, const muonref_record *r, size_t n)
{
  size_t k = muonref_record_catalogue_count(r, n), n_head[256] = {0}, n_late[256] = {0};
  fputs("/* muonref: the catalogues of checks, GENERATED by `muonref profile --c-checks` from the\n"
        " * records spec/profiles/NAME.json (member \"catalogue\"): do not edit; change a record and run\n"
        " * `make profile-tables` (tests/scripts/profile-records.sh checks this file is in step).  Included\n"
        " * once, by core/checks.c. */\n#include <limits.h>\n#include \"core/checks.h\"\n", f);
  for (int id = 0; id < (int)k; id++) {
    const muonref_record *p = catalogue_record(r, n, id);
    const muonref_record_catalogue *c = &p->catalogue;
    const muonref_record *of = muonref_record_catalogue_named(r, n, c->checks_of);
    fprintf(f, "\n/* ---- %s (spec/profiles/%s.json%s%s) ---- */\n", c->name, p->name, of ? "; the rows of " : "",
            of ? c->checks_of : "");
    comment(f, "", c->source);
    for (int late = 0; late < 2; late++) {
      size_t m_own = rows_of(c, late);
      *(late ? &n_late[id] : &n_head[id]) = rows_of(of ? &of->catalogue : NULL, late) + m_own;
      if (!m_own) /* checks_of's rows alone: its array (named in CATALOGUES), not a copy */
        continue;
      fprintf(f, "static const muonref_check %s_%s[] = {\n", c_ident(c->name), late ? "late" : "head");
      if (of)
        c_rows(f, &of->catalogue, late);
      c_rows(f, c, late);
      fputs("};\n", f);
    }
  }
  fputs("\n/* in muonref_catalogue order */\nstatic const catalogue_row CATALOGUES[] = {\n", f);
  for (int id = 0; id < (int)k; id++) {
    const muonref_record_catalogue *c = &catalogue_record(r, n, id)->catalogue;
    fputs("  [MUONREF_CATALOGUE_", f), c_upper(f, c->name), fputs("] = {", f);
    for (int late = 0; late < 2; late++) {
      /* the array of its own (checks_of's rows copied first), or checks_of's when it adds none */
      const char *holder = rows_of(c, late) || !*c->checks_of ? c->name : c->checks_of;
      if (late ? n_late[id] : n_head[id])
        fprintf(f, "%s_%s, ", c_ident(holder), late ? "late" : "head");
      else
        fputs("NULL, ", f);
    }
    fprintf(f, "%zu, %zu, %s},\n", n_head[id], n_late[id],
            c->fallback == (MUONREF_FALLBACK_OPTIONS | MUONREF_FALLBACK_SHAPE) ? "MUONREF_FALLBACK_OPTIONS | MUONREF_FALLBACK_SHAPE"
            : c->fallback == MUONREF_FALLBACK_OPTIONS                          ? "MUONREF_FALLBACK_OPTIONS"
            : c->fallback == MUONREF_FALLBACK_SHAPE                            ? "MUONREF_FALLBACK_SHAPE"
                                                                               : "0");
  }
  fputs("};\nstatic const char *const CATALOGUE_NAMES[] = {", f);
  for (int id = 0; id < (int)k; id++)
    fputs(id % 6 == 0 ? "\n  " : " ", f), c_string(f, catalogue_record(r, n, id)->catalogue.name), fputs(",", f);
  fputs(" NULL};\n", f);
}

void muonref_record_write_c_catalogue_ids(FILE *f, const muonref_record *r, size_t n)
{
  size_t k = muonref_record_catalogue_count(r, n);
  fputs("/* muonref: the catalogues of checks by number (the field catalogue of muonref_options),\n"
        " * GENERATED by `muonref profile --c-catalogue-ids` from the records spec/profiles/NAME.json\n"
        " * (member \"catalogue\": its id, its source): do not edit; `make profile-tables`.  Included by\n"
        " * muonref/options.h. */\n#ifndef MUONREF_CATALOGUE_IDS_H\n#define MUONREF_CATALOGUE_IDS_H\n\n"
        "typedef enum muonref_catalogue {\n", f);
  for (int id = 0; id < (int)k; id++) {
    const muonref_record *p = catalogue_record(r, n, id);
    char text[1200];
    snprintf(text, sizeof text, "%s (spec/profiles/%s.json): %s", p->catalogue.name, p->name, p->catalogue.source);
    comment(f, "  ", text);
    fputs("  MUONREF_CATALOGUE_", f), c_upper(f, p->catalogue.name), fprintf(f, " = %d,\n", id);
  }
  fprintf(f, "  MUONREF_CATALOGUE_COUNT = %zu /* not a catalogue: how many there are */\n} muonref_catalogue;\n\n"
          "#endif\n", k);
}
