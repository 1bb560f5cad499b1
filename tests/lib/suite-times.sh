#!/bin/sh
# tests/lib/suite-times.sh [MAKE ARGUMENTS...]: `make -j2 check` with every test
# timed, then a table of the tests, the slowest first (docs/speed.md).  Not a
# test: how the suite's times are measured.  Run in the build tree, e.g.
#
#     tests/lib/suite-times.sh                           # the whole suite, -j2
#     tests/lib/suite-times.sh TESTS='tests/unit/check_faults tests/scripts/cross-matrix.sh'
#
# Each test runs under automake's own driver (build-aux/test-driver),
# wrapped so that its start and end (wall clock) and its CPU time (user +
# system, its children included: /usr/bin/time) are recorded.  The table:
# test, wall seconds, CPU seconds, CPU / wall (about 1: one core kept busy;
# about 2: both), start and end in seconds after the first test started,
# the 1-minute load average at its end (other work on the machine shows
# there); then make's wall time, the sum of the tests' CPU, and the
# seconds in which fewer than two tests ran.  Exit status: make's.
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
build=$PWD
[ -f "$build/Makefile" ] || { echo "tests/lib/suite-times.sh: run it in the build tree (no ./Makefile)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "tests/lib/suite-times.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/suite-times.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
cat >"$tmp/driver" <<'EOF'
#!/bin/sh
# DRIVER ARGS...: automake's test driver, timed into $SUITE_TIMES
real=$1
shift
name= prev=
for a in "$@"; do [ "$prev" = --test-name ] && name=$a; prev=$a; done
start=$(date +%s.%N)
/usr/bin/time -f '%U %S' -o "$SUITE_TIMES.$$" sh "$real" "$@"
rc=$?
echo "$name $start $(date +%s.%N) $(tail -n 1 "$SUITE_TIMES.$$") $(cut -d' ' -f1 /proc/loadavg)" >>"$SUITE_TIMES"
rm -f "$SUITE_TIMES.$$"
exit $rc
EOF
: >"$tmp/times"
t0=$(date +%s.%N)
SUITE_TIMES=$tmp/times make -j2 check LOG_DRIVER="sh $tmp/driver $srcdir/build-aux/test-driver" "$@" >"$tmp/make.log" 2>&1
rc=$?
t1=$(date +%s.%N)
grep -E '^(PASS|FAIL|ERROR|SKIP|XFAIL|XPASS):' "$tmp/make.log" | grep -v '^PASS' | head -n 20
echo "| test | wall s | CPU s | CPU/wall | start | end | load |"
echo "|---|---|---|---|---|---|---|"
awk -v t0="$t0" '{ w = $3 - $2; c = $4 + $5
  printf "| %s | %.1f | %.1f | %.2f | %.0f | %.0f | %s |\n", $1, w, c, (w > 0 ? c / w : 0), $2 - t0, $3 - t0, $6 }' \
  "$tmp/times" | sort -t'|' -k3 -rn
awk -v t0="$t0" -v t1="$t1" '{ c += $4 + $5; s[NR] = $2; e[NR] = $3 }
  END {
    # seconds in which fewer than two tests ran, between the first start and the last end (1 s steps)
    lo = t1; hi = t0
    for (i = 1; i <= NR; i++) { if (s[i] < lo) lo = s[i]; if (e[i] > hi) hi = e[i] }
    idle = 0
    for (t = lo; t < hi; t += 1) { n = 0; for (i = 1; i <= NR; i++) if (s[i] <= t && t < e[i]) n++; if (n < 2) idle++ }
    printf "\nmake -j2 check: %.0f s wall; the %d tests: %.0f s CPU; %d s with fewer than two tests running\n",
      t1 - t0, NR, c, idle }' "$tmp/times"
exit $rc
