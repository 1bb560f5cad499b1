/* muonref profile: lists the profiles, prints one profile's options
 * (spec/muon.md, spec/profiles/), and writes what is generated from the
 * records spec/profiles/NAME.json: the C table, the ids, the markdown table
 * (vectors/format/record.h). */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "datapath.h"
#include "muonref.h"
#include "core/pyfmt.h"
#include <stdlib.h>
#include "vectors/format/case.h"
#include "vectors/format/record.h"
#include "core/checks.h"
#include "core/option_fields.h"

/* A JSON value as Python writes it: None, True, False, 'text', an integer,
 * a float as repr() does (core/pyfmt.h), [a, b, ...] (a list for a JSON
 * array: the ports take a list or a tuple alike). */
static void print_py(const json_t *v)
{
  char b[40];
  if (!v || json_is_null(v))
    printf("None");
  else if (json_is_boolean(v))
    printf("%s", json_is_true(v) ? "True" : "False");
  else if (json_is_string(v))
    printf("'%s'", json_string_value(v));
  else if (json_is_integer(v))
    printf("%lld", (long long)json_integer_value(v));
  else if (json_is_real(v))
    printf("%s", muonref_py_float(b, sizeof b, json_real_value(v)));
  else if (json_is_array(v)) {
    printf("[");
    for (size_t i = 0; i < json_array_size(v); i++)
      printf("%s", i ? ", " : ""), print_py(json_array_get(v, i));
    printf("]");
  } else
    printf("?");
}

/* One option of the port, as its key table (profile.h) names it, with the
 * value the vectors would write for it (vectors/format/case.c, one writer for
 * every key kind). */
static void print_key(const muonref_options *o, const muonref_option_key *k)
{
  json_t *v = muonref_case_key_json(o, k);
  printf("%-18s ", k->name);
  if (json_is_null(v) && k->kind == MUONREF_KEY_ALGORITHM) { /* dion: a group without it is the class's */
    muonref_options t = *o;
    t.use_muon = MUONREF_USE_MUON_TRUE;
    json_decref(v), v = muonref_case_key_json(&t, k);
  }
  print_py(v);
  printf(k->required   ? "  (no default in the port: the vectors always give it)\n"
         : k->optional ? "  (optional: written only where a case sets another value; absent, the port's own default)\n"
                       : "\n");
  json_decref(v);
}

/* The port's options under its own names, then every field of
 * muonref_options the profile fixes (spec/muon.md, spec/profiles/). */
static void print_options(const muonref_profile *p, const muonref_options *o)
{
  printf("profile            %s\n", p->name);
  printf("source             %s\n", p->source);
  if (!p->adam_defaults) {
    printf("options (the port's own names):\n");
    for (size_t i = 0; i < p->n_keys; i++)
      printf("  "), print_key(o, &p->keys[i]);
  } else { /* groups of each branch with their own keys and defaults (Keller) */
    muonref_options a = *p->adam_defaults;
    a.use_muon = MUONREF_USE_MUON_FALSE;
    muonref_options m = *o;
    m.use_muon = MUONREF_USE_MUON_TRUE;
    printf("Muon groups:\n");
    for (size_t i = 0; i < p->n_keys; i++)
      if (p->keys[i].branch != MUONREF_KEY_ADAM_ONLY)
        printf("  "), print_key(&m, &p->keys[i]);
    printf("AdamW groups:\n");
    for (size_t i = 0; i < p->n_keys; i++)
      if (p->keys[i].branch != MUONREF_KEY_MUON_ONLY)
        printf("  "), print_key(&a, &p->keys[i]);
  }
  /* every field of the option table (core/option_fields.c): no list here to keep */
  printf("fields (muonref_options, spec/muon.md):\n");
  for (size_t i = 0; i < muonref_option_field_count; i++) {
    const muonref_option_field *f = &muonref_option_fields[i];
    char v[600];
    printf("  %-24s %s%s\n", f->name, muonref_option_field_text(o, f, v, sizeof v),
           !strcmp(f->name, "bf16_order") ? " (the judge accepts every order: spec/muon.md 7.1)" : "");
  }
  const muonref_check *rows[2];
  size_t n[2];
  char rule[48];
  if (muonref_catalogue_checks(o->catalogue, &rows[0], &n[0], &rows[1], &n[1])) {
    printf("checks             (catalogue %s: what validation checks, in the port's order; the first row that fails "
           "gives the error, {} its value (ns_steps for coeffs); a row marked fallback is muonref's own refusal of "
           "a value it cannot compute, which the port does not make (spec/profiles/README.md; how the error cases "
           "judge a port: spec/vectors.md 2.4)\n",
           muonref_catalogue_name(o->catalogue));
    for (int part = 0; part < 2; part++)
      for (size_t i = 0; i < n[part]; i++)
        printf("  %-12s %-19s %s%s%s\n", rows[part][i].field, muonref_check_rule_text(&rows[part][i], rule, sizeof rule),
               rows[part][i].message, rows[part][i].fallback ? "  (fallback: muonref's)" : "",
               part ? "  (late: after the optax fields' own checks)" : "");
    unsigned fb = muonref_catalogue_fallback(o->catalogue);
    if (fb)
      printf("  %s muonref's own too: the port makes no such check\n",
             fb == (MUONREF_FALLBACK_OPTIONS | MUONREF_FALLBACK_SHAPE)
                 ? "every other refusal (the options' other checks, a shape refused at the step) is"
                 : fb == MUONREF_FALLBACK_OPTIONS ? "the options' other checks (the enums, the flags, the coefficients) are"
                                                  : "a shape refused at the step is");
  }
  printf("areas             ");
  for (size_t i = 0; p->areas && p->areas[i]; i++)
    printf(" %s", p->areas[i]);
  printf("\n");
  if (p->coefficient_types) { /* a release's presets (spec/profiles/README.md, "Releases") */
    printf("coefficient_types ");
    for (size_t i = 0; p->coefficient_types[i]; i++)
      printf(" %s", p->coefficient_types[i]);
    printf("  (the presets of its release; another: %s)\n",
           p->coefficient_type_refusal ? p->coefficient_type_refusal : "Invalid coefficient type");
  }
}

const char *muonref_cli_records_dir(const char *given)
{
  return given ? given : cli_data_path("MUONREF_RECORDS", MUONREF_RECORDS_SRC, MUONREF_RECORDS_INST);
}

static int usage(void)
{
  fprintf(stderr, "usage: muonref %s\n", MUONREF_PROFILE_USAGE);
  return EXIT_USAGE;
}

/* A usage error with its reason first, then the usage. */
static int misuse(const char *why, const char *what)
{
  fprintf(stderr, "muonref profile: %s%s\n", why, what ? what : "");
  return usage();
}

/* Every built-in profile, one line each: its name and the port it describes. */
static int list_profiles(void)
{
  for (size_t i = 0; i < muonref_profile_count(); i++)
    printf("%-10s %s\n", muonref_profile_name(i), muonref_profile_at(i)->source);
  return EXIT_OK;
}

/* --c-table, --c-ids, --c-checks, --c-catalogue-ids, --markdown, --fields-markdown,
 * --completeness-markdown, --test-ports: from the records of `dir`. */
static int write_generated(const char *what, const char *dir)
{
  muonref_record *r;
  size_t n;
  muonref_error err;
  if (muonref_record_read_dir(dir, &r, &n, &err)) {
    fprintf(stderr, "muonref profile: %s\n", err.message);
    return err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  if (!n) { /* an empty table would be written as if complete */
    free(r);
    fprintf(stderr, "muonref profile: %s: no profile records (NAME.json) in this folder\n", dir);
    return EXIT_USAGE;
  }
  if (!strcmp(what, "--c-table"))
    muonref_record_write_c_table(stdout, r, n);
  else if (!strcmp(what, "--c-ids"))
    muonref_record_write_c_ids(stdout, r, n);
  else if (!strcmp(what, "--c-checks"))
    muonref_record_write_c_checks(stdout, r, n);
  else if (!strcmp(what, "--c-catalogue-ids"))
    muonref_record_write_c_catalogue_ids(stdout, r, n);
  else if (!strcmp(what, "--test-ports"))
    muonref_record_write_test_ports(stdout, r, n);
  else if (!strcmp(what, "--fields-markdown"))
    muonref_record_write_fields_markdown(stdout, r, n);
  else if (!strcmp(what, "--completeness-markdown"))
    muonref_record_write_completeness_markdown(stdout, r, n);
  else
    muonref_record_write_markdown(stdout, r, n);
  free(r);
  return fflush(stdout) == 0 ? EXIT_OK : EXIT_INTERNAL;
}

/* The resolved record: a user's as read; a built-in one from the records
 * where they read (everything), else from its C row (no test port, prose
 * or scopes). */
static int print_json(const muonref_profile *p, const muonref_record *user)
{
  muonref_record *all = NULL, *r = malloc(sizeof *r);
  size_t id = 0, n = 0;
  if (!r)
    return EXIT_INTERNAL;
  while (id < muonref_profile_count() && muonref_profile_at(id) != p)
    id++;
  if (user)
    *r = *user;
  else if (muonref_record_read_dir(muonref_cli_records_dir(NULL), &all, &n, NULL) == MUONREF_OK && id < n &&
           !strcmp(all[id].name, p->name))
    *r = all[id];
  else
    muonref_record_of_profile(p, id < muonref_profile_count() ? (int)id : -1, r);
  free(all);
  json_t *j = muonref_record_json(r); /* reads r's arrays, not its row's pointers */
  json_object_set_new(j, "checks", muonref_record_checks_json(r->defaults.catalogue)); /* derived: core/checks.c */
  char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(j), free(r);
  if (!t)
    return EXIT_INTERNAL;
  printf("%s\n", t);
  free(t);
  return EXIT_OK;
}

int cmd_profile(int argc, char **argv)
{
  muonref_error err;
  const char *name = NULL, *file = NULL, *records = NULL, *generate = NULL;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json"))
      json = 1;
    else if (!strcmp(a, "--c-table") || !strcmp(a, "--c-ids") || !strcmp(a, "--c-checks") ||
             !strcmp(a, "--c-catalogue-ids") || !strcmp(a, "--markdown") || !strcmp(a, "--test-ports") ||
             !strcmp(a, "--fields-markdown") || !strcmp(a, "--completeness-markdown")) {
      if (generate && strcmp(generate, a))
        return misuse("one generated table at a time: ", a);
      generate = a;
    } else if (i + 1 < argc && !strcmp(a, "--records"))
      records = argv[++i];
    else if (i + 1 < argc && !strcmp(a, "--profile-file"))
      file = argv[++i];
    else if (a[0] != '-' && !name)
      name = a;
    else if (a[0] != '-')
      return misuse("a second profile name: ", a);
    else
      return misuse(!strcmp(a, "--records") || !strcmp(a, "--profile-file") ? "a value is missing after " :
                    "unknown option ", a);
  }
  if (generate) {
    if (name || file || json)
      return misuse(generate, " writes a table from the records: it takes no NAME, --profile-file or --json");
    return write_generated(generate, muonref_cli_records_dir(records));
  }
  if (records)
    return misuse("--records goes with a generated table (--markdown, --c-table, ...) only", NULL);
  if (name && file)
    return misuse("NAME or --profile-file, not both", NULL);
  const muonref_record *user = NULL;
  if (file && muonref_record_use(file, muonref_cli_records_dir(NULL), &user, &err)) {
    fprintf(stderr, "muonref profile: %s\n", err.message);
    return err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  if (user)
    name = user->name;
  if (!name)
    return json ? misuse("--json needs NAME or --profile-file", NULL) : list_profiles();
  muonref_options o;
  if (muonref_profile_options(name, &o, &err)) {
    fprintf(stderr, "muonref profile: %s\n", err.message);
    return EXIT_USAGE;
  }
  if (json)
    return print_json(muonref_profile_get(name), user);
  print_options(muonref_profile_get(name), &o);
  return EXIT_OK;
}
