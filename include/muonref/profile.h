/* muonref: profiles, the named option settings of the ports we judge.
 *
 * A profile is one complete muonref_options value: the defaults of one port.
 * `nemo` is the first (seed: NVIDIA-NeMo PR #16427, nemo/core/optim/muon.py);
 * spec/muon.md, section "Profiles", lists each profile's settings. */
#ifndef MUONREF_PROFILE_H
#define MUONREF_PROFILE_H

#include "muonref/api.h"
#include "muonref/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The profiles by number.  The numbers are stable: a new profile is
 * appended before MUONREF_PROFILE_COUNT and no number is ever reused, so
 * code written against one version keeps meaning the same port.
 * muonref_profile_name(id) is the profile's name. */
typedef enum muonref_profile_id {
  MUONREF_PROFILE_NEMO = 0, /* nemo.core.optim.muon.Muon (NVIDIA-NeMo PR #16427) */
  MUONREF_PROFILE_COUNT     /* not a profile: how many there are */
} muonref_profile_id;

/* The options initializer: writes the complete defaults of profile `id`
 * into *o, every field set (a zero-initialised muonref_options is not
 * valid: lr and ns_steps 0, no coefficients).  The result passes
 * muonref_options_validate; change single fields afterwards.  Returns
 * MUONREF_OK, or MUONREF_EOPTION ("Unknown profile id N, expected 0 to M")
 * with *o untouched for an id without a profile, or for NULL o. */
MUONREF_API MUONREF_NODISCARD int muonref_options_init(muonref_options *o, muonref_profile_id id, muonref_error *err);

/* The same by name: writes the defaults of profile `name` into *out.
 * Returns MUONREF_OK, or MUONREF_EOPTION with "Unknown profile 'NAME',
 * expected one of ('nemo')" (out untouched) when no profile has that name. */
MUONREF_API MUONREF_NODISCARD int muonref_profile_options(const char *name, muonref_options *out, muonref_error *err);

/* Number of profiles (MUONREF_PROFILE_COUNT of the library: a library newer
 * than the header may know more), and the name of the profile with id i
 * (NULL past the end). */
MUONREF_API size_t muonref_profile_count(void);
MUONREF_API const char *muonref_profile_name(size_t i);

#ifdef __cplusplus
}
#endif
#endif
