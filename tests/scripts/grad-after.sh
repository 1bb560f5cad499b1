#!/bin/sh
# muonref test: what step() leaves in p.grad is judged (spec/muon.md 8.1,
# spec/vectors.md 2.1 "gradAfter").  Two variants whose parameters and
# state are exactly their correct port's differ only there:
# - tests/variants/torch_keller_port_grad_kept.py keeps the caller's gradient where
#   Keller's port writes the Nesterov input into it (vectors/keller publish
#   expected.gradAfter);
# - tests/variants/torch_nemo_port_faulty_grad_written.py writes the Nesterov input
#   into p.grad where NeMo's port leaves it (the judge takes the last
#   step's gradients themselves).
# Each must fail, every failure must be a p.grad failure, and the correct
# ports pass (their own profiles: tests/scripts/cross-matrix.sh).  A results file
# without "gradAfter" (an older driver) is not judged on it.
# Exit 0 pass, 1 fail, 77 skip (no torch for $PYTHON).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
need_python torch
work_dir grad-after || exit 1
status=0
. "$srcdir/tests/lib/plan.sh"  # both variants in one plan

# variant name, vector files
check_variant() {
  name=$1
  shift
  plan_ran "$name" || { echo "FAIL: $name: the driver failed: $(grep -v 'platform:' "$work/plan.err" | tail -n 2)"; status=1; return; }
  "$muonref" check --no-diagnosis --results "$work/$name.json" "$@" >"$work/$name.out" 2>&1
  rc=$?
  nf=$(grep -c '^FAIL ' "$work/$name.out")
  ng=$(grep '^FAIL ' "$work/$name.out" | grep -c 'after the step')
  if [ $rc -ne 1 ] || [ "$nf" -eq 0 ]; then
    echo "FAIL: $name passes (exit $rc): $(tail -n 1 "$work/$name.out")"
    status=1
  elif [ "$nf" -ne "$ng" ]; then
    echo "FAIL: $name: $nf failures, only $ng about p.grad:"
    grep '^FAIL ' "$work/$name.out" | grep -v 'after the step' | head -3
    status=1
  else
    echo "ok: $name fails $nf cases, each on what p.grad holds after the step ($(grep '^FAIL ' "$work/$name.out" | head -n 1 | sed 's/.*: \(params\[[0-9]*\]\.grad\)/\1/' | cut -c1-160))"
  fi
  # the same results without gradAfter are not judged on it: they pass
  "$python" - "$work/$name.json" "$work/$name-old.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for e in r['results']:
    e.pop('gradAfter', None)
json.dump(r, open(sys.argv[2], 'w'))
PY
  "$muonref" check -q --results "$work/$name-old.json" "$@" >"$work/$name-old.out" 2>&1 ||
    { echo "FAIL: $name without gradAfter: $(tail -n 1 "$work/$name-old.out")"; status=1; }
}

k=$srcdir/vectors/keller n=$srcdir/vectors/nemo
plan_add keller_grad_kept -q --mode neutral --adapter keller \
  --optimizer "$srcdir/tests/variants/torch_keller_port_grad_kept.py:SingleDeviceMuonWithAuxAdam" \
  "$k/keller_momentum.json" "$k/keller_gradients.json"
plan_add nemo_grad_written -q --mode raw --adapter nemo --optimizer "$srcdir/tests/variants/torch_nemo_port_faulty_grad_written.py:Muon" \
  "$n/nemo_momentum.json" "$n/nemo_gradients.json"
plan_run
check_variant keller_grad_kept "$k/keller_momentum.json" "$k/keller_gradients.json"
check_variant nemo_grad_written "$n/nemo_momentum.json" "$n/nemo_gradients.json"
exit $status
