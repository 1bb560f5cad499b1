/* muonref: internal constructor of the fast optimizer with a deliberate
 * fault (faults.h), for mutation testing.  Not installed. */
#ifndef MUONREF_OPTIMIZER_INTERNAL_H
#define MUONREF_OPTIMIZER_INTERNAL_H

#include "muonref/optimizer.h"

#ifdef MUONREF_TEST_HOOKS
/* muonref_optimizer_create with the hooks of fault f (0: none) switched
 * on; the option values of f are the caller's (muonref_fault_options on
 * the groups' options first).  Only in builds with MUONREF_TEST_HOOKS. */
muonref_optimizer *muonref_optimizer_create_fault(const muonref_group *groups, size_t n_groups, int fault,
                                                  muonref_error *err);
/* The same with the parameters' names (muonref_optimizer_create_named). */
muonref_optimizer *muonref_optimizer_create_fault_named(const muonref_group *groups, size_t n_groups,
                                                        const char *const *names, int fault, muonref_error *err);
#endif

#endif
