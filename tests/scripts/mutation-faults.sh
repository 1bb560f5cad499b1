#!/bin/sh
# tests/scripts/mutation-faults.sh: runs the Check program tests/unit/check_faults (the
# mutation tests of the golden vectors, tests/unit/check_faults.c), one of the
# longest tests, from a script so that `make -j2 check` starts it in its
# place in TESTS.  (make starts a test program's log only after checking
# the program is up to date, which waits on config.h's stamp rule: every
# program test would otherwise start after all the scripts.)  Its summary
# line "N%: Checks: N, Failures: N, Errors: N" is in this script's log, as
# tests/lib/summary.sh counts it.
prog=${MUONREF_BUILDDIR:-.}/tests/unit/check_faults
[ -x "$prog" ] || { echo "FAIL: $prog is not built (make check builds it)"; exit 1; }
# In the sanitizer build (.ci/sanitize) the checks run in one process
# (CK_FORK=no): there, forking this process (every vector file loaded: a
# large heap and its shadow memory) and LeakSanitizer's scan at each
# child's exit cost more than the checks (stop 50, alone on 2 cores: 7 min
# 10 s a process per check, 65 s in one process).  The sanitizers see every
# check alike, and LeakSanitizer scans once, at the end.  The main build
# keeps a process per check and the hang guard.
[ "${MUONREF_SANITIZER_BUILD:-0}" = 1 ] && export CK_FORK=no
exec "$prog"
