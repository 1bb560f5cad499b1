/* muonref: status codes and error reports shared by every muonref function.
 *
 * Every function that can fail returns an int status: MUONREF_OK (0) on
 * success, a negative muonref_status otherwise (GSL-style enum, never an
 * abort).  Where a function takes a `muonref_error *err`, it also writes a
 * human-readable message there on failure; err may be NULL.  The messages
 * are normative: spec/muon.md, section "Error catalogue", lists each one. */
#ifndef MUONREF_STATUS_H
#define MUONREF_STATUS_H

#include "muonref/api.h"
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum muonref_status {
  MUONREF_OK = 0,
  MUONREF_EOPTION = -1,    /* an option is outside its valid range       */
  MUONREF_ESHAPE = -2,     /* a shape breaks a rule (e.g. use_muon on 1-D) */
  MUONREF_ENONFINITE = -3, /* an input holds NaN or Inf                  */
  MUONREF_EGRAD = -4,      /* a gradient is sparse or complex            */
  MUONREF_ESTATE = -5,     /* imported state does not fit the optimizer  */
  MUONREF_ENOMEM = -6,     /* allocation failed                          */
  MUONREF_EIO = -7,        /* a file could not be read or written        */
  MUONREF_EFORMAT = -8,    /* malformed input file (vectors, matrices)   */
  MUONREF_ENUMERIC = -9    /* a numerical method failed (no convergence,
                              refused rank-deficient input, ...)         */
} muonref_status;

#define MUONREF_ERROR_MESSAGE_MAX 512

/* A failure report: the status and its message (NUL-terminated). */
typedef struct muonref_error {
  int status;
  char message[MUONREF_ERROR_MESSAGE_MAX];
} muonref_error;

/* Clears err to MUONREF_OK with an empty message (no-op on NULL). */
MUONREF_API void muonref_error_clear(muonref_error *err);

/* The symbolic name of a status ("MUONREF_EOPTION", ...); "unknown" else. */
MUONREF_API const char *muonref_status_name(int status);

#ifdef __cplusplus
}
#endif
#endif
