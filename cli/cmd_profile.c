/* muonref profile NAME: prints the options of a profile (spec/muon.md). */
#include <stdio.h>
#include "commands.h"
#include "muonref.h"
#include "core/pyfmt.h"

static void print_options(const char *name, const muonref_options *o)
{
  char b[40];
  printf("profile            %s\n", name);
  printf("lr                 %s\n", muonref_py_float(b, sizeof b, o->lr));
  printf("momentum           %s\n", muonref_py_float(b, sizeof b, o->momentum));
  printf("nesterov           %s\n", o->nesterov ? "True" : "False");
  printf("ns_steps           %d\n", o->ns_steps);
  printf("weight_decay       %s\n", muonref_py_float(b, sizeof b, o->weight_decay));
  printf("scale_mode         %s\n", muonref_scale_mode_name(o->scale_mode));
  printf("adam_betas         (%s, ", muonref_py_float(b, sizeof b, o->adam_beta1));
  printf("%s)\n", muonref_py_float(b, sizeof b, o->adam_beta2));
  printf("adam_eps           %s\n", muonref_py_float(b, sizeof b, o->adam_eps));
  printf("adam_lr_ratio      %s\n", muonref_py_float(b, sizeof b, o->adam_lr_ratio));
  printf("adam_dim_threshold %ld\n", o->adam_dim_threshold);
  printf("use_muon           %s\n", o->use_muon == MUONREF_USE_MUON_AUTO ? "None"
                                    : o->use_muon == MUONREF_USE_MUON_TRUE ? "True" : "False");
  printf("momentum_form      %s\n", muonref_momentum_form_name(o->momentum_form));
  printf("coeff_order        %s\n", muonref_coeff_order_name(o->coeff_order));
  for (int k = 0; k < o->n_coeffs; k++) {
    printf("coeffs[%d]          (%s, ", k, muonref_py_float(b, sizeof b, o->coeffs[k].a));
    printf("%s, ", muonref_py_float(b, sizeof b, o->coeffs[k].b));
    printf("%s)\n", muonref_py_float(b, sizeof b, o->coeffs[k].c));
  }
  printf("ns_eps             %s\n", muonref_py_float(b, sizeof b, o->ns_eps));
  printf("eps_mode           %s\n", muonref_eps_mode_name(o->eps_mode));
  printf("ns_format          %s\n", muonref_ns_format_name(o->ns_format));
  printf("bf16_order         %s (the judge accepts every order: spec/muon.md 7.1)\n", muonref_bf16_order_name(o->bf16_order));
}

int cmd_profile(int argc, char **argv)
{
  muonref_error err;
  muonref_options o;
  if (argc != 2) {
    fprintf(stderr, "usage: muonref profile NAME   (profiles:");
    for (size_t i = 0; i < muonref_profile_count(); i++)
      fprintf(stderr, " %s", muonref_profile_name(i));
    fprintf(stderr, ")\n");
    return EXIT_USAGE;
  }
  if (muonref_profile_options(argv[1], &o, &err)) {
    fprintf(stderr, "muonref profile: %s\n", err.message);
    return EXIT_USAGE;
  }
  print_options(argv[1], &o);
  return EXIT_OK;
}
