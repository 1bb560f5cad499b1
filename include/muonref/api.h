/* muonref: the export and result-checking macros of the public headers.
 *
 * The libraries are built with -fvisibility=hidden: exactly the functions
 * declared with MUONREF_API in the installed headers are exported (the
 * test tests/scripts/api-symbols.sh compares the shared libraries' dynamic symbols
 * with those declarations).  MUONREF_NODISCARD marks every function whose
 * int result is a status (muonref/status.h): ignoring it is a warning. */
#ifndef MUONREF_API_H
#define MUONREF_API_H

#if defined(__GNUC__) || defined(__clang__)
#define MUONREF_API __attribute__((visibility("default")))
#define MUONREF_NODISCARD __attribute__((warn_unused_result))
#else
#define MUONREF_API
#define MUONREF_NODISCARD
#endif

#endif
