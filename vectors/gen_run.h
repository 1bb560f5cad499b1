/* muonref: the entry of the vector generator (see gen.h). */
#ifndef MUONREF_VECTORS_GEN_RUN_H
#define MUONREF_VECTORS_GEN_RUN_H

#include <mpfr.h>
#include "muonref/status.h"

typedef struct gen_summary { long files, tests, bf16_certified; char dir[4096]; } gen_summary;

/* Writes every vector file (or only area `only`, if not NULL) under
 * out_dir/<profile>/ with the reference at prec bits (and 2 prec for the
 * correct-rounding check).  All files are written under temporary names and
 * renamed into place only when every one was written.  Errors:
 * MUONREF_EOPTION (unknown area), MUONREF_EIO (the folder or a file cannot
 * be written; no file is replaced), MUONREF_ENUMERIC (a reference value
 * could not be certified; no file is replaced). */
int muonref_gen_all(const char *out_dir, mpfr_prec_t prec, const char *only, gen_summary *sum, muonref_error *err);

#endif
