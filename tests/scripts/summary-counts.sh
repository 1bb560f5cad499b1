#!/bin/sh
# muonref test: tests/lib/summary.sh (the last line of CI) counts what it should,
# on fake test results in a temporary tree: a Check program's individual
# checks, a shell test as one, a failure, and a skipped test as skipped (never
# as passed, even when it printed a summary line before skipping); nothing
# passed is a failure; results in tests/ and in its folders (tests/unit/,
# tests/scripts/) count alike.  Exit 0 pass, 1 fail.
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
work_dir summary-counts || exit 1
status=0
case_() { # PATH RESULT LOG-LINE: PATH under tests/, without .trs
  printf ':test-result: %s\n' "$2" >"$work/tests/$1.trs"
  printf '%s\n' "$3" >"$work/tests/$1.log"
}
expect() { # WHAT EXPECTED-LAST-LINE EXPECTED-STATUS
  got=$(sh "$srcdir/tests/lib/summary.sh" "$work" | tail -n 1); sh "$srcdir/tests/lib/summary.sh" "$work" >/dev/null; rc=$?
  if [ "$got" = "$2" ] && [ $rc -eq "$3" ]; then echo "ok: $1: $got"; else echo "FAIL: $1: '$got' (exit $rc), expected '$2' (exit $3)"; status=1; fi
}
mkdir -p "$work/tests/unit" "$work/tests/scripts"
expect "nothing ran" "0 passed, 0 failed" 1
case_ unit/check_a PASS "100%: Checks: 5, Failures: 0, Errors: 0"
case_ scripts/script_b PASS "ok"
expect "a Check program's checks and a script" "6 passed, 0 failed" 0
case_ scripts/script_c SKIP "50%: Checks: 4, Failures: 2, Errors: 0"
expect "a skipped test that printed a summary line" "6 passed, 0 failed, 1 skipped" 0
case_ script_d FAIL "it broke"
expect "a failing script" "6 passed, 1 failed, 1 skipped" 1
exit $status
