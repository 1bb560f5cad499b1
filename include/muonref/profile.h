/* muonref: profiles, the named option settings of the ports we judge.
 *
 * A profile is data: one complete muonref_options value (the defaults of
 * one port) and the table of the port's own option names, each mapped to
 * the field it sets.  The vectors of a profile write every option under
 * the port's name (vectors/case.c reads and writes them through this
 * table), so the generator, the judge and the driver need no code per
 * profile.  `nemo` is the first (seed: NVIDIA-NeMo PR #16427,
 * nemo/core/optim/muon.py); spec/muon.md "Profiles" and spec/profiles/
 * describe each one. */
#ifndef MUONREF_PROFILE_H
#define MUONREF_PROFILE_H

#include <stddef.h>
#include "muonref/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a port's option maps onto muonref_options (the JSON spelling in
 * spec/vectors.md section 2.2). */
typedef enum muonref_key_kind {
  MUONREF_KEY_REAL,       /* a double field: a number, or "nan"/"inf"/"-inf" */
  MUONREF_KEY_BOOL,       /* an int field 0/1: false/true */
  MUONREF_KEY_INT,        /* an int field */
  MUONREF_KEY_LONG,       /* a long field */
  MUONREF_KEY_BETAS,      /* adam_beta1 and adam_beta2: [b1, b2] */
  MUONREF_KEY_SCALE_MODE, /* NeMo's scale_mode: "fan_in" | "fan_out" | "none" */
  MUONREF_KEY_USE_MUON,   /* use_muon: null (AUTO) | true | false */
  MUONREF_KEY_COEFF3,     /* one triple for every step (n_coeffs 1): [a, b, c];
                             another length: "Coefficients must be a tuple of
                             exactly 3 values" (torch.optim.Muon) */
  MUONREF_KEY_ADJUST_LR   /* torch's adjust_lr_fn: null or "original" (fan_in),
                             "match_rms_adamw" (rms_adamw); another string:
                             "Adjust learning rate function X is not supported" */
} muonref_key_kind;

/* One option of a port: its name, kind and the muonref_options field it
 * sets (offsetof). */
typedef struct muonref_option_key {
  const char *name;
  muonref_key_kind kind;
  size_t offset;
} muonref_option_key;

/* One row of the profile table (static data; never freed). */
typedef struct muonref_profile {
  const char *name;                /* "nemo", "torch" */
  const char *source;              /* the port described: repository, path, version */
  void (*fill)(muonref_options *); /* writes the complete defaults */
  const muonref_option_key *keys;  /* the port's option names, in its signature's order */
  size_t n_keys;
  int one_group;                   /* 1: the port puts every parameter into one group
                                      (Moonlight): groups may differ only in use_muon */
} muonref_profile;

/* The profile named `name`, or NULL. */
const muonref_profile *muonref_profile_get(const char *name);

/* Writes the defaults of profile `name` into *out.  Returns MUONREF_OK, or
 * MUONREF_EOPTION with "Unknown profile 'NAME', expected one of ('nemo',
 * 'torch', 'moonlight')" (out untouched) when no profile has that name. */
int muonref_profile_options(const char *name, muonref_options *out, muonref_error *err);

/* Number of profiles; profile i (0-based; NULL past the end) and its name. */
size_t muonref_profile_count(void);
const muonref_profile *muonref_profile_at(size_t i);
const char *muonref_profile_name(size_t i);

#ifdef __cplusplus
}
#endif
#endif
