/* muonref: machine-readable verdicts of `muonref check`, fed by the
 * checker's per-case callback (muonref_checker.on_case, checker.h):
 *
 *  - JUnit XML (report_junit.c), the format GitLab, Jenkins and GitHub test
 *    reporters read: one <testsuite> per vector file (profile.area), one
 *    <testcase> per vector case.  The structure follows the Ant/Surefire
 *    JUnit report as described by the Jenkins xUnit plugin's junit-10.xsd
 *    and Maven Surefire's surefire-test-report-3.0.xsd; vectors/junit.xsd is
 *    our own schema of the subset we write, and tests/scripts/report-formats.sh
 *    validates our output against it with xmllint.
 *  - TAP version 14 or 13 (report_tap.c;
 *    https://testanything.org/tap-version-14-specification.html,
 *    tap-version-13-specification.html) streamed case by case;
 *    tests/scripts/report-formats.sh parses it with Perl's TAP::Parser and prove.
 *
 * Nothing is half-written: the JUnit file is composed in memory and written
 * by muonref_output_write (core/output.h: a regular file or a new name
 * appears whole, through a temporary file and rename(2), or not at all; a
 * FIFO, a device, /dev/stdout or a symbolic link is written through, never
 * replaced); a TAP stream that stops early ends in "Bail out!". */
#ifndef MUONREF_VECTORS_REPORT_H
#define MUONREF_VECTORS_REPORT_H

#include <stdio.h>
#include "vectors/judge/checker.h"

/* One case kept for the JUnit file: owned copies of a muonref_case_verdict. */
typedef struct muonref_case_record {
  char *file, *profile, *area, *kind, *comment, *flags, *message, *diagnosis, *why, *note;
  long long tc_id;
  int pass, known, fixed;
  double seconds; /* wall-clock seconds spent on the case (running it, if ours, and judging it) */
} muonref_case_record;

/* The cases of one run, in the order judged.  Zero-initialise; free with
 * muonref_case_log_free. */
typedef struct muonref_case_log {
  muonref_case_record *v;
  size_t n, cap;
} muonref_case_log;

/* Appends a copy of v taking `seconds`.  Errors: MUONREF_ENOMEM. */
int muonref_case_log_add(muonref_case_log *log, const muonref_case_verdict *v, double seconds, muonref_error *err);
void muonref_case_log_free(muonref_case_log *log);

/* Writes the cases of log to path as JUnit XML (UTF-8): <testsuites> named
 * "muonref check: IMPL" holding one <testsuite name="PROFILE.AREA"> per
 * area in order of first appearance, with the properties implementation and
 * nsFormat; each case a <testcase classname="PROFILE.AREA" name="FILE#TCID
 * COMMENT" file="FILE" time="SECONDS">, a failing one with
 * <failure message="JUDGE'S MESSAGE" type="muonref.judge"> whose text is
 * the message and, when not empty, a "diagnosis: ..." line; a failure the
 * baseline lists (known) with <skipped message="known failure: REASON
 * (URL)"> holding the judge's message instead (counted as skipped, not as a
 * failure); a passing case listed in the baseline (fixed) or failing only
 * in an other run not enforced (a note, other_run.h) with <system-out>
 * "FIXED: known failure: ..., passes now" or the note.  Characters
 * XML 1.0 forbids are written as U+FFFD.  Written by muonref_output_write
 * (core/output.h).  Errors: MUONREF_EIO "--junit PATH: cannot write: WHY"
 * (folder missing or not writable, disk full, a folder or a block device
 * at path, a dangling symbolic link); nothing is left behind. */
int muonref_junit_write(const muonref_case_log *log, const char *impl, const char *ns_format, const char *path,
                        muonref_error *err);

/* A TAP stream on out, version 14 or 13.  The stream uses only what both
 * versions share (test points, "\#" escapes, YAML blocks, the plan last),
 * so the version line alone differs: 13 for consumers that refuse 14, such
 * as Debian 12's prove (Test::Harness 3.44: "TAP specified version 14 but
 * we don't know about versions later than 13", "Result: FAIL" for an
 * all-pass stream). */
typedef struct muonref_tap {
  FILE *out;
  long n;      /* test points written */
  int version; /* 13 or 14 */
} muonref_tap;

/* Writes "TAP version VERSION" (13 or 14) and a comment naming the
 * implementation. */
void muonref_tap_begin(muonref_tap *t, FILE *out, const char *impl, int version);
/* Writes one test point: "ok N - PROFILE.AREA FILE#TCID COMMENT" (escaped
 * by escape.h's TAP mode: '#' and '\' as TAP 14 requires, line breaks as
 * spaces, controls as U+FFFD) and, for a failure, a YAML block (message,
 * diagnosis, file, tcId, kind, flags; JSON strings of the YAML-escaped
 * values).  A case the baseline lists gets the directive "# TODO known
 * failure: REASON (URL)" ("not ok" when it fails: a TAP consumer does not
 * count it; "ok" when it passes now: reported as a TODO that passed); a
 * passing case with a note (other_run.h) gets a YAML block with the note. */
void muonref_tap_case(muonref_tap *t, const muonref_case_verdict *v);
/* Writes the plan "1..N" (TAP 14 allows it last). */
void muonref_tap_end(muonref_tap *t);
/* Writes "Bail out! WHY" (why on one line, escaped as a description): the
 * run stopped early. */
void muonref_tap_bail(muonref_tap *t, const char *why);

#endif
