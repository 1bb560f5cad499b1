/* muonref: profiles, the named option settings of the ports we judge.
 *
 * A profile is one complete muonref_options value: the defaults of one port.
 * `nemo` is the first (seed: NVIDIA-NeMo PR #16427, nemo/core/optim/muon.py);
 * spec/muon.md, section "Profiles", lists each profile's settings. */
#ifndef MUONREF_PROFILE_H
#define MUONREF_PROFILE_H

#include "muonref/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the defaults of profile `name` into *out.  Returns MUONREF_OK, or
 * MUONREF_EOPTION with "Unknown profile 'NAME', expected one of ('nemo')"
 * (out untouched) when no profile has that name. */
int muonref_profile_options(const char *name, muonref_options *out, muonref_error *err);

/* Number of profiles, and the name of profile i (0-based; NULL past the end). */
size_t muonref_profile_count(void);
const char *muonref_profile_name(size_t i);

#ifdef __cplusplus
}
#endif
#endif
