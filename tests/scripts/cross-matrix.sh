#!/bin/sh
# muonref test (and the main job's last table): the cross matrix of the
# profiles.  Each profile's PyTorch test port, written from its spec page
# (spec/profiles/), runs through vectors/drivers/torch_driver.py over every
# profile's golden vectors; `muonref check` judges each run.  The matrix must
# be diagonal: a port passes every case of its own profile and fails at least
# one case of every other profile (and each such failure carries a reason).
# Ports run in --mode neutral (bf16 operations computed in binary32 and
# rounded once): the matrix compares the ports' logic, not PyTorch 1.13 CPU's
# bf16 kernels (spec/vectors.md 5.3).  Each port also runs raw over its own
# profile: it must pass every case flagged PlatformRobust there (the flag's
# promise, spec/vectors.md 5.3, checked for every profile).
# Every run goes through one plan (torch_driver.py --plan, tests/lib/plan.sh):
# one Python process; MUONREF_JOBS (default 1) worker processes, and as many
# judges at a time.  MUONREF_CROSS_RESULTS=DIR keeps every results file
# (PORT-VECTORS.json, raw-PORT.json) and judge's output (.out) in DIR (the
# main job reads its per-profile table from there).
# In the sanitizer build (.ci/sanitize sets MUONREF_SANITIZER_BUILD=1) the
# diagonal, the raw runs and one cell off the diagonal per row and per
# column (port i on the vectors of profile i + 1, cyclically) are judged:
# every port's results and every profile's vectors go through the sanitized
# judge, failing and passing, and the main build of the same CI run has
# judged the whole matrix (the other cells repeated the same C code on
# other data: 255 judges, about 150 s of the sanitizer build's CPU).
# Usage: tests/scripts/cross-matrix.sh [VECTORS_DIR]   (default: $srcdir/vectors)
# Exit 0 pass, 1 fail, 77 skip (no torch for $PYTHON).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
vectors=${1:-$srcdir/vectors}
need_python torch
if [ -n "${MUONREF_CROSS_RESULTS:-}" ]; then
  work=$MUONREF_CROSS_RESULTS
  mkdir -p "$work" || exit 1
else
  work_dir cross-matrix || exit 1
fi
status=0
fail() { echo "FAIL: $*"; status=1; }
. "$srcdir/tests/lib/plan.sh"

# profile -> the port written from its page, its adapter and Newton-Schulz format (optax and keras
# run in the parameter's dtype, float32, judged by the fp32 tolerances: spec/vectors.md 5.1), from
# the records (tests/lib/ports.sh)
. "$srcdir/tests/lib/ports.sh"
ports_read || exit 1

profiles=
for d in "$vectors"/*/; do
  p=$(basename "$d")
  ls "$d"*.json >/dev/null 2>&1 && [ -n "$(port_of "$p")" ] && profiles="$profiles $p"
done
[ -n "$profiles" ] || { echo "FAIL: no profile with a test port under $vectors"; exit 1; }

# cell P V: whether port P on profile V's vectors is judged here (every cell
# but in the sanitizer build, see above)
sanitizer=${MUONREF_SANITIZER_BUILD:-0}
first=${profiles# }
first=${first%% *}
cell() {
  [ "$sanitizer" != 1 ] || [ "$1" = "$2" ] && return 0
  _c_prev=
  for _c in $profiles; do
    [ "$_c_prev" = "$1" ] && { [ "$_c" = "$2" ]; return; }
    _c_prev=$_c
  done
  [ "$_c_prev" = "$1" ] && [ "$2" = "$first" ] # the last profile's successor is the first
}

# every run: each port over every profile in neutral mode, and raw over its own
for p in $profiles; do
  set -- $(port_of "$p")
  for v in $profiles; do
    cell "$p" "$v" || continue
    plan_add "$p-$v" -q --mode neutral --optimizer "$1" --adapter "$2" --ns-format "$3" "$vectors/$v"
  done
  plan_add "raw-$p" -q --mode raw --optimizer "$1" --adapter "$2" --ns-format "$3" "$vectors/$p"
done
plan_run || fail "the driver's plan exited $?: $(grep -v 'platform:' "$work/plan.err" | tail -n 3)"

# every judge, MUONREF_JOBS at a time: $work/NAME.out and its exit status in
# $work/NAME.rc.  Off the diagonal and raw, without the diagnosis: it is most
# of a judge's time (keller's port on vectors/nemo, 117 failures: 2.6 s CPU instead of 0.3) and
# nothing here asserts it.  (The first failures shown below were once judged
# again with it, their file alone: 133 s of this test's 220 s, asserting nothing.)
n=0
for p in $profiles; do
  for v in $profiles raw; do
    name=$p-$v dir=$vectors/$v opt=--no-diagnosis
    [ "$v" = raw ] && name=raw-$p dir=$vectors/$p
    [ "$v" = raw ] || cell "$p" "$v" || continue
    [ "$v" = "$p" ] && opt=
    (judge "$name" $opt "$dir"; echo $rc >"$work/$name.rc") &
    n=$((n + 1))
    [ $n -ge "${MUONREF_JOBS:-1}" ] && { wait; n=0; }
  done
done
wait

printf '%-8s' "port"
for v in $profiles; do printf ' | %-18s' "vectors/$v"; done
printf '\n'
for p in $profiles; do
  printf '%-8s' "$p"
  for v in $profiles; do
    cell "$p" "$v" || { printf ' | %-18s' "(main build)"; continue; }
    rc=$(cat "$work/$p-$v.rc")
    [ $rc -eq 99 ] && { printf ' | %-18s' "driver failed"; fail "$p on $v: $(cat "$work/$p-$v.out")"; continue; }
    line=$(tail -n 1 "$work/$p-$v.out")
    printf ' | %-18s' "$line"
    if [ "$p" = "$v" ]; then
      [ $rc -eq 0 ] || fail "port $p fails its own profile: $line"
    else
      [ $rc -eq 1 ] || fail "port $p passes profile $v (exit $rc): the profiles are not told apart"
      # every failing case says why: a FAIL line with a reason after the case
      grep '^FAIL ' "$work/$p-$v.out" | grep -qv ': ' && fail "port $p on $v: a failure without a reason"
    fi
  done
  printf '\n'
done
torch_version=$(sed -n 's/.*"torch": "\([^"]*\)".*/\1/p' "$work/raw-$(echo $profiles | cut -d' ' -f1).json" 2>/dev/null | head -n 1)
# the first two failures of each cell off the diagonal, as judged above (their
# diagnosis is left out there; `muonref check --results DIR/P-V.json
# vectors/V` with MUONREF_CROSS_RESULTS=DIR gives it)
for p in $profiles; do
  for v in $profiles; do
    [ "$p" = "$v" ] || [ ! -f "$work/$p-$v.out" ] && continue
    echo "$p port on $v vectors, first failures:"
    grep '^FAIL ' "$work/$p-$v.out" | head -n 2 | cut -c1-220
  done
done
for p in $profiles; do
  rc=$(cat "$work/raw-$p.rc")
  [ $rc -eq 99 ] && { fail "$p raw: $(cat "$work/raw-$p.out")"; continue; }
  # judged to the end (exit 0 or 1 and its totals line): a judge that did not run finds no failure either
  { [ $rc -le 1 ] && tail -n 1 "$work/raw-$p.out" | grep -q '^[0-9]* passed, [0-9]* failed'; } ||
    { fail "$p raw: the judge exited $rc: $(tail -n 2 "$work/raw-$p.out")"; continue; }
  n=$(grep '^FAIL ' "$work/raw-$p.out" | grep -c 'PlatformRobust')
  [ "$n" -eq 0 ] && echo "ok: $p port raw on PyTorch $torch_version: $(tail -n 1 "$work/raw-$p.out"), every PlatformRobust case passes" ||
    { fail "$p port raw: $n PlatformRobust cases fail"; grep '^FAIL ' "$work/raw-$p.out" | grep PlatformRobust | head -n 3; }
done
if [ "$sanitizer" = 1 ]; then
  [ $status -eq 0 ] && echo "ok: the diagonal, the raw runs and one cell per row and column off the diagonal, over:$profiles"
else
  [ $status -eq 0 ] && echo "ok: the cross matrix is diagonal over:$profiles"
fi
exit $status
