/* muonref: the profile table (see profile.h; spec/muon.md "Profiles",
 * spec/profiles/).  A profile is data: one record per profile,
 * spec/profiles/NAME.json, from which `make profile-tables` generates
 * core/profile_table.h (the PROFILES rows: defaults, keys, areas) and
 * include/muonref/profile_ids.h.  Users' profiles registered at run time
 * (core/profile_user.h) are found by name after the built-in ones. */
#include <stddef.h>
#include <string.h>
#include "core/fail.h"
#include "core/profile_user.h"
#include "core/pyfmt.h"
#include "muonref/profile.h"
#include "core/profile_table.h"

#define N(a) (sizeof a / sizeof a[0])

/* every id has its entry, in id order */
_Static_assert(N(PROFILES) == MUONREF_PROFILE_COUNT, "one PROFILES entry per profile id");

static const muonref_profile *user_profiles[MUONREF_MAX_USER_PROFILES];
static size_t n_user;

size_t muonref_profile_count(void) { return N(PROFILES); }

int muonref_options_init(muonref_options *o, muonref_profile_id id, muonref_error *err)
{
  if (!o)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_options_init: o must not be NULL");
  if ((int)id < 0 || (size_t)id >= N(PROFILES) || !PROFILES[id].name)
    return muonref_fail(err, MUONREF_EOPTION, "Unknown profile id %d, expected 0 to %zu", (int)id, N(PROFILES) - 1);
  *o = *PROFILES[id].defaults;
  return MUONREF_OK;
}

const muonref_profile *muonref_profile_at(size_t i) { return i < N(PROFILES) && PROFILES[i].name ? &PROFILES[i] : NULL; }

const char *muonref_profile_name(size_t i) { return i < N(PROFILES) ? PROFILES[i].name : NULL; }

const muonref_profile *muonref_profile_get(const char *name)
{
  for (size_t i = 0; name && i < N(PROFILES); i++)
    if (PROFILES[i].name && strcmp(name, PROFILES[i].name) == 0)
      return &PROFILES[i];
  for (size_t i = 0; name && i < n_user; i++)
    if (strcmp(name, user_profiles[i]->name) == 0)
      return user_profiles[i];
  return NULL;
}

int muonref_profile_options(const char *name, muonref_options *out, muonref_error *err)
{
  if (!out)
    return muonref_fail(err, MUONREF_EOPTION, "muonref_profile_options: out must not be NULL");
  const muonref_profile *p = muonref_profile_get(name);
  if (p) {
    *out = *p->defaults;
    return MUONREF_OK;
  }
  const char *names[N(PROFILES) + MUONREF_MAX_USER_PROFILES];
  size_t n = 0;
  for (size_t i = 0; i < N(PROFILES); i++)
    names[n++] = PROFILES[i].name;
  for (size_t i = 0; i < n_user; i++)
    names[n++] = user_profiles[i]->name;
  char list[512];
  return muonref_fail(err, MUONREF_EOPTION, "Unknown profile '%s', expected one of %s", name ? name : "",
                      muonref_py_str_tuple(list, sizeof list, names, n));
}

int muonref_profile_register(const muonref_profile *p, muonref_error *err)
{
  if (!p || !p->name || !p->defaults)
    return muonref_fail(err, MUONREF_EOPTION, "a profile to register needs a name and defaults");
  if (muonref_profile_get(p->name))
    return muonref_fail(err, MUONREF_EOPTION, "a profile named '%s' exists already", p->name);
  if (n_user == MUONREF_MAX_USER_PROFILES)
    return muonref_fail(err, MUONREF_EOPTION, "at most %d user profiles can be registered", MUONREF_MAX_USER_PROFILES);
  user_profiles[n_user++] = p;
  return MUONREF_OK;
}
