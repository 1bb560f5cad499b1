/* muonref state FILE: checks a state file completely (muonref_state_file_read:
 * magic, version, CRC-32, every count, shape, option and buffer) and prints
 * a summary: format, profile, each group's options, each parameter's group,
 * shape, branch and step.  Exit 2 naming the file and the rule when it is
 * not a valid state file (spec/muon.md section 11.1). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "muonref.h"
#include "core/pyfmt.h"

static void print_group(size_t g, const muonref_options *o, size_t n_params)
{
  char b1[40], b2[40], b3[40], b4[40];
  printf("group %zu (%zu parameters): lr %s, momentum %s, nesterov %s, ns_steps %d, weight_decay %s, scale_mode %s,\n",
         g, n_params, muonref_py_float(b1, sizeof b1, o->lr), muonref_py_float(b2, sizeof b2, o->momentum),
         o->nesterov ? "True" : "False", o->ns_steps, muonref_py_float(b3, sizeof b3, o->weight_decay),
         muonref_scale_mode_name(o->scale_mode));
  printf("  adam_betas (%s, %s), adam_eps %s, adam_lr_ratio %s, adam_dim_threshold %ld, use_muon %s,\n",
         muonref_py_float(b1, sizeof b1, o->adam_beta1), muonref_py_float(b2, sizeof b2, o->adam_beta2),
         muonref_py_float(b3, sizeof b3, o->adam_eps), muonref_py_float(b4, sizeof b4, o->adam_lr_ratio),
         o->adam_dim_threshold, o->use_muon == MUONREF_USE_MUON_AUTO ? "None"
                                : o->use_muon == MUONREF_USE_MUON_TRUE ? "True" : "False");
  printf("  momentum_form %s, %d coefficient triple%s (%s), ns_eps %s (%s), ns_format %s\n",
         muonref_momentum_form_name(o->momentum_form), o->n_coeffs, o->n_coeffs == 1 ? "" : "s",
         muonref_coeff_order_name(o->coeff_order), muonref_py_float(b1, sizeof b1, o->ns_eps),
         muonref_eps_mode_name(o->eps_mode), muonref_ns_format_name(o->ns_format));
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
  for (size_t g = 0; g < f.n_groups; g++) {
    size_t n = 0;
    for (size_t i = 0; i < f.n_params; i++)
      n += f.param_group[i] == g;
    print_group(g, &f.options[g], n);
  }
  for (size_t i = 0; i < f.n_params; i++) {
    char shape[64];
    const muonref_param_state *s = &f.states[i];
    muonref_py_shape(shape, sizeof shape, f.shapes[i].dims, f.shapes[i].ndim);
    if (s->initialized)
      printf("parameter %zu: group %zu, shape %s, %s, step %ld\n", i, f.param_group[i], shape,
             s->use_muon ? "Muon (momentum_buffer)" : "AdamW (exp_avg, exp_avg_sq)", s->step);
    else
      printf("parameter %zu: group %zu, shape %s, no state yet (no step with a gradient)\n", i, f.param_group[i],
             shape);
  }
  muonref_state_file_free(&f);
  return EXIT_OK;
}
