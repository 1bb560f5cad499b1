#!/bin/sh
# tests/scripts/torch-lifecycle.sh: torch_driver.py --lifecycle training-loop (make check;
# spec/vectors.md 4.2, vectors/drivers/README.md "Lifecycle").
#
# 1. the micro-batch split is exact (tests/scripts/torch_lifecycle_test.py: g1 + g2 == g
#    bit for bit in float32 on every kind of value; a naive split is caught);
# 2. every profile's correct test port (the records': tests/lib/ports.sh) run over its
#    whole profile raw gives, in the training-loop lifecycle, the same results
#    bit for bit as with assigned gradients, hence the same verdicts; the
#    results file records "lifecycle" and the judge prints it;
# 3. tests/variants/torch_nemo_port_faulty_closure.py: IgnoresClosure (step never calls
#    the closure) and DropsLoss (step returns None) pass with assigned
#    gradients and fail in the training loop, every failure saying why;
# 4. bad input: an unknown --lifecycle, --lifecycle training-loop with
#    --world-size (exit 2), and a results file with an unknown "lifecycle"
#    (muonref check exit 2).
#
# The runs of 2. and 3. go through one plan (torch_driver.py --plan, tests/lib/plan.sh).
# Exit: 0 pass; 77 skip (no torch for $PYTHON); 1 fail.
# Environment: MUONREF_SRCDIR, MUONREF (default ./muonref), MUONREF_TORCH_PYTHON.

srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
driver=$srcdir/vectors/drivers/torch_driver.py
need_python torch
work_dir torch-lifecycle || exit 1
checks=0 fails=0
fail() { fails=$((fails + 1)); echo "torch-lifecycle:0:F:lifecycle:$1:0: $2"; }

# 1.
checks=$((checks + 1))
"$python" "$srcdir/tests/scripts/torch_lifecycle_test.py" "$srcdir" || fail split "the micro-batch split is not exact"

. "$srcdir/tests/lib/plan.sh"
# add NAME LIFECYCLE PORT:CLASS ADAPTER NS_FORMAT VECTORS...: a run of the plan
add() {
  name=$1 lc=$2 port=$3 adapter=$4 nsf=$5
  shift 5
  # assign is the driver's default lifecycle: left out, the line is the cross matrix's raw run of
  # the port over its profile, which MUONREF_PLAN_CACHE then gives without running it again (tests/lib/plan.sh)
  lcopt=; [ "$lc" = assign ] || lcopt="--lifecycle $lc"  # one word each: the lifecycles' names
  plan_add "$name" -q --mode raw $lcopt --optimizer "$port" --adapter "$adapter" --ns-format "$nsf" "$@"
}
# run NAME VECTORS...: judge the run's results into $work/NAME.out, exit in $rc (99: the driver failed);
# without the diagnosis: the raw runs fail by this platform's bf16, what is compared is the FAIL lines and
# the totals, and the fit of each failure cost most of this test's time (minutes)
run() {
  name=$1
  shift
  judge "$name" --no-diagnosis "$@"
  [ $rc -eq 99 ] && fail "$name" "$(cat "$work/$name.out")"
}

# every profile's test port (PORT:CLASS ADAPTER NS_FORMAT), from the records (tests/lib/ports.sh)
. "$srcdir/tests/lib/ports.sh"
ports_read || exit 1
profiles=$(port_profiles)
faulty=$srcdir/tests/variants/torch_nemo_port_faulty_closure.py
for p in $profiles; do
  add "$p-assign" assign $(port_of "$p") "$srcdir/vectors/$p"
  add "$p-loop" training-loop $(port_of "$p") "$srcdir/vectors/$p"
done
for cls in IgnoresClosure DropsLoss; do
  add "$cls-assign" assign "$faulty:$cls" nemo bf16 "$srcdir/vectors/nemo/nemo_momentum.json"
  add "$cls-loop" training-loop "$faulty:$cls" nemo bf16 "$srcdir/vectors/nemo/nemo_momentum.json"
done
plan_run

# 2.
for p in $profiles; do
  run "$p-assign" "$srcdir/vectors/$p"
  ra=$rc
  run "$p-loop" "$srcdir/vectors/$p"
  rl=$rc
  [ "$ra" -eq 99 ] || [ "$rl" -eq 99 ] && continue
  checks=$((checks + 4))
  "$python" - "$work/$p-assign.json" "$work/$p-loop.json" "$p" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
# a port whose step refuses a closure (Emerging-Optimizers: "closure is not
# supported") cannot run the training loop's step(closure): those cases are
# skipped there with that message, every other one must be equal bit for bit
# (as a skip, or as the error of an error case)
refused = lambda x, y: ('closure is not supported' in str(y.get('skipped', '')) + str(y.get('error', ''))
                        and 'closure is not supported' not in json.dumps(x))
diff = [f"{x['file']}#{x['tcId']}" for x, y in zip(a['results'], b['results']) if x != y and not refused(x, y)]
nref = sum(1 for x, y in zip(a['results'], b['results']) if x != y and refused(x, y))
if len(a['results']) != len(b['results']) or diff:
    print(f"results differ: {len(a['results'])} vs {len(b['results'])} entries; {diff[:8]}")
    sys.exit(1)
if a.get('lifecycle') != 'assign' or b.get('lifecycle') != 'training-loop':
    print(f"lifecycle recorded as {a.get('lifecycle')!r} and {b.get('lifecycle')!r}")
    sys.exit(1)
if nref:
    print(f"ok: the {sys.argv[3]} port refuses step(closure) ('closure is not supported'): {nref} cases skipped in the training loop, the other {len(a['results']) - nref} equal bit for bit in both lifecycles")
    sys.exit(3)
PY
  prc=$?
  [ "$prc" -eq 3 ] && continue
  [ "$prc" -eq 0 ] || fail "$p-bits" "the $p port's results differ between the lifecycles"
  [ "$ra" -eq "$rl" ] || fail "$p-exit" "judge exit $ra with assigned gradients, $rl in the training loop"
  if [ "$(grep '^FAIL' "$work/$p-assign.out")" = "$(grep '^FAIL' "$work/$p-loop.out")" ] &&
     [ "$(tail -n 1 "$work/$p-assign.out")" = "$(tail -n 1 "$work/$p-loop.out")" ]; then
    echo "ok: the $p port: same results bit for bit and same verdicts in both lifecycles ($(tail -n 1 "$work/$p-loop.out"))"
  else
    fail "$p-verdicts" "the $p port's verdicts differ between the lifecycles"
  fi
  grep -q '^lifecycle: training-loop' "$work/$p-loop.out" || fail "$p-report" "the judge does not print the lifecycle"
done

# 3.
for v in "IgnoresClosure:called the closure 0 times" "DropsLoss:not the closure's loss"; do
  cls=${v%%:*} why=${v#*:}
  checks=$((checks + 3))
  run "$cls-assign" "$srcdir/vectors/nemo/nemo_momentum.json"
  [ "$rc" -eq 0 ] || fail "$cls-assign" "$cls fails with assigned gradients (exit $rc): its fault is the closure's"
  run "$cls-loop" "$srcdir/vectors/nemo/nemo_momentum.json"
  [ "$rc" -eq 1 ] || fail "$cls-loop" "$cls passes the training loop (exit $rc)"
  n=$(grep -c '^FAIL' "$work/$cls-loop.out")
  nw=$(grep '^FAIL' "$work/$cls-loop.out" | grep -c "skipped: LifecycleError: step 1: .*$why")
  if [ "$n" -gt 0 ] && [ "$n" -eq "$nw" ]; then
    echo "ok: $cls fails all $n cases of nemo_momentum.json in the training loop, each saying '$why'"
  else
    fail "$cls-message" "$cls: $n failures, $nw saying '$why'"
  fi
done

# 4.
checks=$((checks + 3))
"$python" "$driver" -q --lifecycle loop --optimizer "$srcdir/tests/ports/torch_nemo_port.py:Muon" --out "$work/x.json" \
  "$srcdir/vectors/nemo/nemo_momentum.json" 2>"$work/bad1"
rc=$?
[ "$rc" -eq 2 ] && grep -q "lifecycle 'loop': expected one of" "$work/bad1" || fail bad-lifecycle "exit $rc: $(cat "$work/bad1")"
"$python" "$driver" -q --lifecycle training-loop --world-size 2 --optimizer "$srcdir/tests/ports/torch_nemo_port.py:Muon" \
  --out "$work/x.json" "$srcdir/vectors/nemo/nemo_momentum.json" 2>"$work/bad2"
rc=$?
[ "$rc" -eq 2 ] && grep -q "not available with --world-size" "$work/bad2" || fail bad-world "exit $rc: $(cat "$work/bad2")"
printf '{"nsFormat": "fp32", "lifecycle": "loop", "results": []}\n' >"$work/bad.json"
"$muonref" check --results "$work/bad.json" "$srcdir/vectors/nemo/nemo_momentum.json" >"$work/bad3" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q 'member "lifecycle" must be "assign" or "training-loop"' "$work/bad3" ||
  fail bad-results "muonref check exit $rc: $(cat "$work/bad3")"
echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
[ "$fails" -eq 0 ]
