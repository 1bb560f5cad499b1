#!/bin/sh
# tests/scripts/torch-schedule.sh: options changed between steps (format 2,
# spec/vectors.md 2.8; the `schedule` area of every profile), through the
# PyTorch driver (make check).
#
# 1. every profile's correct test port (the records': tests/lib/ports.sh)
#    passes its profile's schedule file neutral, and raw every case that is
#    PlatformRobust (the others may fail on this platform's bf16): the
#    driver sets each step's setOptions in optimizer.param_groups by the
#    port's own names;
# 2. tests/variants/torch_nemo_port_faulty_cached.py (options copied at
#    construction, scheduler changes ignored) fails every case of
#    nemo_schedule.json, each diagnosed as the fast path's fault
#    cached_group_options, and passes a format-1 file (nemo_momentum.json):
#    only the schedule shows the fault;
# 3. the fast path with --fault cached_group_options fails the schedule
#    file of every profile in bf16 and in fp32.
#
# The ports run in one plan (torch_driver.py --plan, tests/lib/plan.sh).
# Exit: 0 pass; 77 skip (no torch for $PYTHON, or no schedule vectors); 1 fail.
# Environment: MUONREF_SRCDIR, MUONREF (default ./muonref), MUONREF_TORCH_PYTHON.

srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
need_python torch
ls "$srcdir"/vectors/*/*_schedule.json >/dev/null 2>&1 || { echo "SKIP: no schedule vectors"; exit 77; }
work_dir torch-schedule || exit 1
checks=0 fails=0
fail() { fails=$((fails + 1)); echo "torch-schedule:0:F:schedule:$1:0: $2"; }

. "$srcdir/tests/lib/plan.sh"
# add NAME MODE PORT ADAPTER NS_FORMAT FILES...: a run of the plan
add() {
  name=$1 mode=$2 port=$3 adapter=$4 nsf=$5
  shift 5
  plan_add "$name" -q --mode "$mode" --optimizer "$port" --adapter "$adapter" --ns-format "$nsf" "$@"
}
# drive NAME [CHECK OPTIONS] FILES...: judge the run; the judge's exit in $rc (99: the driver failed)
drive() {
  name=$1
  shift
  checks=$((checks + 1))
  judge "$name" "$@"
  [ $rc -eq 99 ] && fail "$name" "$(cat "$work/$name.out")"
}

# every profile's test port (PORT:CLASS ADAPTER NS_FORMAT: optax and keras run Newton-Schulz in the
# parameter's dtype, float32), from the records (tests/lib/ports.sh)
. "$srcdir/tests/lib/ports.sh"
ports_read || exit 1
profiles=$(port_profiles)
cached=$srcdir/tests/variants/torch_nemo_port_faulty_cached.py:Muon
for p in $profiles; do
  f=$srcdir/vectors/$p/${p}_schedule.json
  [ -f "$f" ] || continue
  for mode in raw neutral; do
    add "$p-$mode" "$mode" $(port_of "$p") "$f"
  done
done
add cached raw "$cached" nemo bf16 "$srcdir/vectors/nemo/nemo_schedule.json"
add cached-v1 raw "$cached" nemo bf16 "$srcdir/vectors/nemo/nemo_momentum.json"
plan_run

for p in $profiles; do
  f=$srcdir/vectors/$p/${p}_schedule.json
  [ -f "$f" ] || { fail "$p" "no $f"; continue; }
  for mode in raw neutral; do
    # the verdicts only (the FAIL lines' flags): no explanation is read
    drive "$p-$mode" --no-diagnosis "$f"
    if [ "$rc" -eq 0 ]; then
      echo "ok: the $p port passes ${p}_schedule.json ($mode): $(tail -n 1 "$work/$p-$mode.out")"
    elif [ "$rc" -eq 1 ] && [ "$mode" = raw ] && ! grep '^FAIL' "$work/$p-$mode.out" | grep -q PlatformRobust; then
      # raw: this platform's bf16 arithmetic may fail a case that is not
      # PlatformRobust (the Bf16Noise scale check, spec/vectors.md 5.1); the
      # driver's default reports it as a second verdict only
      echo "ok: the $p port passes every PlatformRobust case of ${p}_schedule.json (raw): $(tail -n 1 "$work/$p-$mode.out")"
    elif [ "$rc" -ne 99 ]; then
      fail "$p-$mode" "the $p port fails its schedule file:"; grep '^FAIL' "$work/$p-$mode.out"
    fi
  done
  for impl in fast-bf16 fast-fp32; do
    checks=$((checks + 1))
    "$muonref" check --quiet --impl "$impl" --fault cached_group_options "$f" >"$work/fault.out" 2>&1
    rc=$?
    [ "$rc" -eq 1 ] || fail "fault-$p-$impl" "--fault cached_group_options exits $rc on $f, expected 1"
  done
done

drive cached "$srcdir/vectors/nemo/nemo_schedule.json"
if [ "$rc" -eq 1 ]; then
  n=$(grep -c '^FAIL' "$work/cached.out")
  total=$(grep -c '"tcId"' "$srcdir/vectors/nemo/nemo_schedule.json")
  nd=$(grep -cE "^  diagnosis: (exactly|within this case's tolerance,) what fault cached_group_options gives" "$work/cached.out")
  checks=$((checks + 1))
  if [ "$n" -eq "$total" ] && [ "$nd" -eq "$n" ]; then
    echo "ok: the caching port fails all $n schedule cases, each diagnosed as cached_group_options"
  else
    fail cached-diagnosis "the caching port fails $n of $total cases, $nd diagnosed as cached_group_options:"
    grep -E '^FAIL|diagnosis' "$work/cached.out"
  fi
elif [ "$rc" -ne 99 ]; then
  fail cached "the caching port: judge exit $rc on nemo_schedule.json, expected 1"
fi
drive cached-v1 "$srcdir/vectors/nemo/nemo_momentum.json"
if [ "$rc" -eq 0 ]; then
  echo "ok: the caching port passes nemo_momentum.json (format 1: no option changes)"
elif [ "$rc" -ne 99 ]; then
  fail cached-v1 "the caching port fails nemo_momentum.json (exit $rc): its fault should show only under a schedule"
fi
echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
[ "$fails" -eq 0 ]
