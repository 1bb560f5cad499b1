#!/bin/sh
# tests/mutation-faults.sh: runs the Check program tests/check_faults (the
# mutation tests of the golden vectors, tests/check_faults.c), one of the
# longest tests, from a script so that `make -j2 check` starts it in its
# place in TESTS.  (make starts a test program's log only after checking
# the program is up to date, which waits on config.h's stamp rule: every
# program test would otherwise start after all the scripts.)  Its summary
# line "N%: Checks: N, Failures: N, Errors: N" is in this script's log, as
# tests/summary.sh counts it.
prog=${MUONREF_BUILDDIR:-.}/tests/check_faults
[ -x "$prog" ] || { echo "FAIL: $prog is not built (make check builds it)"; exit 1; }
exec "$prog"
