/* muonref: profiles added at run time (internal; not in the installed API).
 *
 * A user's profile record (spec/profiles/README.md "A user profile"),
 * loaded by vectors/format/record.c (jansson, outside libmuonref's core), is
 * registered here so that every lookup by name -- muonref_profile_get and
 * muonref_profile_options, used by the reader of vector files, the
 * generator and the judge -- finds it after the built-in profiles.  The
 * built-in ids (muonref_profile_count, muonref_profile_at) do not change.
 * Not thread-safe: register before any thread looks a profile up (the
 * commands register while parsing their arguments). */
#ifndef MUONREF_CORE_PROFILE_USER_H
#define MUONREF_CORE_PROFILE_USER_H

#include "muonref/profile.h"

/* How many profiles may be registered at once. */
#define MUONREF_MAX_USER_PROFILES 8

/* Registers *p (borrowed: it and everything it points to must outlive the
 * registration).  Errors: MUONREF_EOPTION when p->name is a built-in or an
 * already registered profile's name, or MUONREF_MAX_USER_PROFILES are
 * registered. */
int muonref_profile_register(const muonref_profile *p, muonref_error *err);

#endif
