/* muonref: the internal error helper shared by every part of the tree (not
 * installed; every library that uses it compiles its own hidden copy). */
#ifndef MUONREF_CORE_FAIL_H
#define MUONREF_CORE_FAIL_H

#include <stddef.h>
#include "muonref/status.h"

/* Writes status and a printf-formatted message into err (if err is not NULL)
 * and returns status, so that callers can write `return muonref_fail(...)`.
 * The message is truncated to MUONREF_ERROR_MESSAGE_MAX - 1 bytes, on a
 * UTF-8 character boundary (muonref_utf8_cut). */
int muonref_fail(muonref_error *err, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* s (len bytes, NUL-terminated) was cut by a bounded formatter: drops a
 * UTF-8 sequence the cut left incomplete at its end (a lead byte followed
 * by fewer continuation bytes than it announces), so that the text stays
 * valid UTF-8 where it was.  Returns the new length. */
size_t muonref_utf8_cut(char *s, size_t len);

/* A call whose status cannot be an error where it is made (shapes and
 * options fixed by construction): the status is dropped on purpose
 * (the public functions are MUONREF_NODISCARD; a (void) cast alone does
 * not silence GCC's warn_unused_result). */
#define MUONREF_UNCHECKED(call) ((void)!(call))

#endif
