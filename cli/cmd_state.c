/* muonref state FILE: checks a state file completely (muonref_state_file_read:
 * magic, version, CRC-32, every count, shape, option and buffer) and prints
 * a summary: format, profile, each group's options (every field the file
 * stores, from core/option_fields.c's table; for a file of format 2 to 4,
 * the fields it does not store and the value each reads as), each parameter's group,
 * shape, branch and step.  Exit 2 naming the file and the rule when it is
 * not a valid state file (spec/muon.md section 11.1). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "muonref.h"
#include "core/option_fields.h"
#include "core/pyfmt.h"

/* The fields of the table (core/option_fields.c) stored since a format in
 * [since_lo, since_hi], in the table's order, as ", name value" (a double as
 * Python prints it, an enum by name), wrapped at 110 columns; col is the
 * column the line is at. */
static void print_fields(const muonref_options *o, unsigned since_lo, unsigned since_hi, int col)
{
  int any = 0;
  for (size_t i = 0; i < muonref_option_field_count; i++) {
    const muonref_option_field *f = &muonref_option_fields[i];
    char v[600];
    if ((unsigned)f->since < since_lo || (unsigned)f->since > since_hi)
      continue;
    muonref_option_field_text(o, f, v, sizeof v);
    int len = (int)(strlen(f->name) + strlen(v) + 3);
    if (col + len > 110)
      printf("%s\n ", any ? "," : ""), col = 1;
    else
      fputs(any ? "," : "", stdout);
    printf(" %s %s", f->name, v);
    col += len;
    any = 1;
  }
  putchar('\n');
}

/* One group's options: every field the file's format stores. */
static void print_group(size_t g, const muonref_options *o, size_t n_params, unsigned version)
{
  print_fields(o, 0, version, printf("group %zu (%zu parameters):", g, n_params));
}

/* A format 2 to 4 file: the fields added since, each with the value it reads
 * as, zero (the same in every group; spec/muon.md 11.1). */
static void print_unstored(const muonref_options *o, unsigned version)
{
  print_fields(o, version + 1, MUONREF_STATE_VERSION,
               printf("format %u does not store these fields; each reads as zero:", version));
}

int cmd_state(int argc, char **argv)
{
  if (argc != 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: muonref state FILE    (checks a state file written by muonref_state_save and "
                    "prints a summary)\n");
    return EXIT_USAGE;
  }
  muonref_state_file f;
  muonref_error err = {0};
  int st = muonref_state_file_read(argv[1], &f, &err);
  if (st) {
    fprintf(stderr, "muonref state: %s\n", err.message);
    return st == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  printf("state file %s: %llu bytes, format version %u, CRC-32 0x%08x (verified)\n", argv[1],
         (unsigned long long)f.bytes, f.version, f.crc);
  printf("profile %s, %zu groups, %zu parameters\n", f.profile, f.n_groups, f.n_params);
  if (f.version == 1)
    printf("format 1 stores 18 option fields; the others are not recorded and not checked at load "
           "(spec/muon.md 11.1)\n");
  else if (f.version < MUONREF_STATE_VERSION && f.n_groups)
    print_unstored(&f.options[0], f.version); /* spec/muon.md 11.1 */
  for (size_t g = 0; g < f.n_groups; g++) {
    size_t n = 0;
    for (size_t i = 0; i < f.n_params; i++)
      n += f.param_group[i] == g;
    print_group(g, &f.options[g], n, f.version);
  }
  for (size_t i = 0; i < f.n_params; i++) {
    char shape[64];
    const muonref_param_state *s = &f.states[i];
    muonref_py_shape(shape, sizeof shape, f.shapes[i].dims, f.shapes[i].ndim);
    char accum[96] = ""; /* spec/muon.md 3.3: the micro-steps since the last update */
    if (f.options[f.param_group[i]].grad_accumulation > 0)
      snprintf(accum, sizeof accum, "; %ld of %d micro-steps accumulated (grad_accum)", s->accum_calls,
               f.options[f.param_group[i]].grad_accumulation);
    if (s->initialized)
      printf("parameter %zu: group %zu, shape %s, %s, step %ld%s\n", i, f.param_group[i], shape,
             s->use_muon ? "Muon (momentum_buffer)" : "AdamW (exp_avg, exp_avg_sq)", s->step, accum);
    else
      printf("parameter %zu: group %zu, shape %s, no state yet (no step with a gradient)%s\n", i, f.param_group[i],
             shape, accum);
  }
  muonref_state_file_free(&f);
  return EXIT_OK;
}
