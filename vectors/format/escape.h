/* muonref: the one escaper of strings that come from outside (a port's
 * error message, skip reason and implementation name in a results file; a
 * vector file's comment, file name and flags) on their way into a report:
 * the text report (FAIL lines, the table's footer), JUnit XML and TAP.
 *
 * Unsafe, in every mode: a byte that is not part of valid UTF-8 (overlong
 * forms, surrogates, code points past U+10FFFF, a sequence cut short), the
 * C0 controls U+0000-U+001F, DEL U+007F, the C1 controls U+0080-U+009F, the
 * line and paragraph separators U+2028/U+2029, the bidirectional controls
 * U+200E/U+200F, U+202A-U+202E and U+2066-U+2069, and the noncharacters
 * U+FDD0-U+FDEF and U+xFFFE/U+xFFFF of every plane (U+FFFE and U+FFFF are
 * not XML 1.0 characters; YAML does not allow them either).  Everything
 * else is copied as it is.  The modes:
 *   TEXT: an unsafe character as a visible escape: "\n", "\r", "\t", a
 *         byte "\x1b" (C0, DEL, invalid UTF-8), a code point "\u009b"; so a
 *         port cannot start a line, move the cursor or clear the terminal;
 *   XML:  an unsafe character as U+FFFD, except tab, line feed and carriage
 *         return, which XML carries (report_junit.c writes them as
 *         character references in attributes);
 *   TAP:  a test point's description: unsafe as U+FFFD, tab, line feed and
 *         carriage return as a space (one line), '#' and '\' as "\#" and
 *         "\\" (TAP 14, "Escaping");
 *   YAML: a value for a JSON (YAML double-quoted) string: unsafe as U+FFFD
 *         except the C0 controls, which the JSON encoder writes as \uXXXX.
 * Sources: XML 1.0 (fifth edition) section 2.2 "Characters" (Char) and its
 * advice against C1 controls and noncharacters; YAML 1.2 section 5.1
 * "Character Set"; Unicode Technical Standard #39 / CVE-2021-42574
 * ("Trojan Source") for the bidirectional controls. */
#ifndef MUONREF_VECTORS_ESCAPE_H
#define MUONREF_VECTORS_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

typedef enum muonref_escape_mode {
  MUONREF_ESCAPE_TEXT = 0,
  MUONREF_ESCAPE_XML = 1,
  MUONREF_ESCAPE_TAP = 2,
  MUONREF_ESCAPE_YAML = 3
} muonref_escape_mode;

/* Writes the n bytes at s (NUL bytes included: a NUL is a C0 control) to f,
 * escaped for mode. */
void muonref_escape_write(FILE *f, const char *s, size_t n, muonref_escape_mode mode);
/* The same for the NUL-terminated s (NULL: nothing). */
void muonref_escape_fputs(FILE *f, const char *s, muonref_escape_mode mode);
/* The escaped s as a new NUL-terminated string (free it); NULL when out of
 * memory. */
char *muonref_escape_dup(const char *s, size_t n, muonref_escape_mode mode);

#endif
