/* muonref: internal constructor of the fast optimizer with a deliberate
 * fault (faults.h), for mutation testing.  Not installed. */
#ifndef MUONREF_OPTIMIZER_INTERNAL_H
#define MUONREF_OPTIMIZER_INTERNAL_H

#include "muonref/optimizer.h"

/* muonref_optimizer_create with fault f (0: none) switched on. */
muonref_optimizer *muonref_optimizer_create_fault(const muonref_group *groups, size_t n_groups, int fault,
                                                  muonref_error *err);

#endif
