#!/bin/sh
# muonref test: the driver meets ports whose shape no built-in adapter fits
# (issue 22 item 6):
#  1. tests/scripts/ns_binding_test.py: the Newton-Schulz function is called by the
#     names its signature gives (every test port's function bound as written
#     from its signature; positional-only, *args, an unnamed matrix), and
#     refused with a message naming the function and its parameters;
#  2. --adapter FILE:CLASS: tests/ports/torch_flat_port.py (a Muon over a flat list
#     with `wd`, an AdamW for the rest, its step count in the param group)
#     with its user adapter tests/ports/torch_flat_adapter.py passes keller's
#     momentum, AdamW, state and schedule cases; the same adapter as
#     MODULE:CLASS; without it (the built-in keller adapter) the port fails;
#     the AdamW state read back is the group's step (the port keeps none per
#     parameter: an AdamW case would be skipped with KeyError: 'step');
#  3. an --adapter that is no Adapter subclass, or unknown: exit 2 naming it;
#  4. --ns-function f(G, eps) with no steps parameter: exit 2 naming the
#     function and its parameters; f(X, eps=1e-7, steps=5) is called by
#     keyword and passes keller's Newton-Schulz cases;
#  5. no --adapter: the adapter of the profile the vector files name (keller's
#     port over keller's vectors passes; it had run under nemo's option names
#     and failed every case), and vectors of two profiles are exit 2 naming
#     both; the results name the driver that ran;
#  6. --state-name: keller's port with its momentum kept under state["m"] (as
#     the wild port plainLM keeps it) fails keller's momentum cases on "no
#     state" and the driver names the key it could not read; with
#     --state-name m=momentum_buffer it passes them; a malformed --state-name
#     is exit 2 naming the rule.
# The driver runs go through one plan (tests/lib/plan.sh), run from tests/ so
# that the adapter's module is importable by name.
# Exit 0 pass, 1 fail, 77 skip (no torch for $PYTHON).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
driver=$srcdir/vectors/drivers/torch_driver.py
need_python torch
work_dir driver-adapter || exit 1
status=0
fail() { echo "FAIL: $*"; status=1; }
. "$srcdir/tests/lib/plan.sh"
kv=$srcdir/vectors/keller
set -- "$kv/keller_momentum.json" "$kv/keller_adamw.json" "$kv/keller_state.json" "$kv/keller_schedule.json"
n=$("$muonref" vectors "$@" | sed -n 's/^[0-9]* files, \([0-9]*\) cases$/\1/p')
flat="$srcdir/tests/ports/torch_flat_port.py:Muon"

# 1.
"$python" "$srcdir/tests/scripts/ns_binding_test.py" >"$work/binding.out" 2>&1 &&
  echo "ok: ns_binding_test.py: $(grep -c '^ok' "$work/binding.out") checks" ||
  { fail "ns_binding_test.py"; grep -v '^ok' "$work/binding.out"; }

# the runs: 2. the user adapter by file and by module, the built-in one; 3. two bad adapters; 4. two signatures
keller="$srcdir/tests/ports/torch_keller_port.py:SingleDeviceMuonWithAuxAdam"
sig=$srcdir/tests/variants/torch_ns_signatures.py
plan_add flat -q --mode neutral --optimizer "$flat" --adapter "$srcdir/tests/ports/torch_flat_adapter.py:FlatMuonAdapter" "$@"
plan_add flat-module -q --mode neutral --optimizer "$flat" --adapter torch_flat_adapter:FlatMuonAdapter "$kv/keller_schedule.json"
plan_add builtin -q --mode raw --optimizer "$flat" --adapter keller "$kv/keller_momentum.json"
plan_add bad-class -q --optimizer "$flat" --adapter "$srcdir/tests/ports/torch_flat_port.py:AdamW" "$kv/keller_momentum.json"
plan_add bad-name -q --optimizer "$flat" --adapter no_such_adapter "$kv/keller_momentum.json"
plan_add ns-fixed -q --optimizer "$keller" --adapter keller --ns-function "$sig:fixed_steps" "$kv/keller_newton_schulz.json"
plan_add ns-kw -q --mode neutral --optimizer "$keller" --adapter keller --ns-function "$sig:keller_eps_first" \
  "$kv/keller_newton_schulz.json"
plan_add own-profile -q --mode neutral --optimizer "$keller" "$kv/keller_momentum.json"
plan_add two-profiles -q --optimizer "$keller" "$kv/keller_momentum.json" "$srcdir/vectors/nemo/nemo_errors.json"
(cd "$srcdir/tests/ports" && plan_run)

# 2. the user adapter, by file and by module
judge flat --no-diagnosis "$@"
[ $rc -eq 0 ] && tail -n 1 "$work/flat.out" | grep -q "^$n passed, 0 failed" &&
  echo "ok: --adapter FILE:CLASS: the flat Muon + AdamW pair passes keller's $n cases" ||
  { fail "the user adapter: exit $rc"; grep -E '^FAIL|passed|driver' "$work/flat.out" | head -n 5; }
"$python" - "$work/flat.json" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
steps = [s['step'] for e in r['results'] if e['file'] == 'keller_adamw.json' for s in e.get('state') or [] if s]
ok = steps and all(isinstance(s, int) and s >= 1 for s in steps)
print(f"{'ok' if ok else 'FAIL'}: the AdamW states carry the group's step count ({len(steps)} states, steps {sorted(set(steps))})")
sys.exit(0 if ok else 1)
PY
"$python" - "$srcdir/tests/ports" <<'PY' || status=1
import sys, torch
sys.path.insert(0, sys.argv[1])
import torch_flat_port as port
p = torch.nn.Parameter(torch.zeros(3))
opt = port.AdamW([p])
p.grad = torch.ones(3)
opt.step()
ok = 'step' not in opt.state[p] and opt.param_groups[0]['step'] == 1
print(f"{'ok' if ok else 'FAIL'}: the port keeps AdamW's step in the param group only (state keys {sorted(opt.state[p])})")
sys.exit(0 if ok else 1)
PY
judge flat-module -q "$kv/keller_schedule.json"
[ $rc -eq 0 ] && echo "ok: --adapter MODULE:CLASS (a module of the working directory)" ||
  fail "--adapter MODULE:CLASS: exit $rc: $(tail -n 2 "$work/flat-module.out")"
judge builtin -q "$kv/keller_momentum.json"
[ $rc -eq 1 ] && echo "ok: without its adapter the flat port fails (the built-in keller adapter)" ||
  fail "the flat port with the built-in keller adapter: exit $rc"

# 3. bad adapters: no results, the driver's message names the option
for run in bad-class:"$srcdir/tests/ports/torch_flat_port.py:AdamW" bad-name:no_such_adapter; do
  name=${run%%:*} spec=${run#*:}
  ! plan_ran "$name" && grep -q -- "--adapter '$spec'" "$work/plan.err" &&
    echo "ok: --adapter $(basename "$spec"): refused, $(grep -- "--adapter '$spec'" "$work/plan.err" | cut -c1-110)..." ||
    fail "--adapter $spec: $(grep -- "--adapter" "$work/plan.err")"
done

# 4. Newton-Schulz signatures
! plan_ran ns-fixed && grep -q "fixed_steps(G, eps=1e-07): no parameter takes the number of steps" "$work/plan.err" &&
  echo "ok: f(G, eps) is refused, naming the function and its parameters" ||
  fail "f(G, eps): $(grep -i 'newton' "$work/plan.err")"
judge ns-kw -q "$kv/keller_newton_schulz.json"
[ $rc -eq 0 ] && echo "ok: f(X, eps=1e-7, steps=5) called by keyword passes keller's Newton-Schulz cases ($(tail -n 1 "$work/ns-kw.out"))" ||
  { fail "f(X, eps, steps): exit $rc"; tail -n 2 "$work/ns-kw.out"; }

# 5. the default adapter
judge own-profile -q "$kv/keller_momentum.json"
[ $rc -eq 0 ] && grep -q '(adapter keller, .*via vectors/drivers/torch_driver.py"' "$work/own-profile.json" &&
  echo "ok: no --adapter: keller's vectors run keller's adapter ($(tail -n 1 "$work/own-profile.out"))" ||
  { fail "no --adapter over keller's vectors: exit $rc"; tail -n 2 "$work/own-profile.out"; grep -o '"implementation": "[^"]*"' "$work/own-profile.json"; }
! plan_ran two-profiles && grep -q 'the vectors are of 2 profiles (keller, nemo): give --adapter NAME' "$work/plan.err" &&
  echo "ok: no --adapter over two profiles' vectors: refused, naming both" ||
  fail "two profiles without --adapter: $(grep -i 'profiles' "$work/plan.err")"

# 6. --state-name: a plan of its own, never from MUONREF_PLAN_CACHE (the driver's note on standard
# error is what is checked, and a cached results file carries none)
sed 's/state\["momentum_buffer"\]/state["m"]/g' "$srcdir/tests/ports/torch_keller_port.py" >"$work/keller_m.py"
plan_add state-m -q --mode neutral --optimizer "$work/keller_m.py:SingleDeviceMuonWithAuxAdam" --adapter keller \
  "$kv/keller_momentum.json"
plan_add state-named -q --mode neutral --optimizer "$work/keller_m.py:SingleDeviceMuonWithAuxAdam" --adapter keller \
  --state-name m=momentum_buffer "$kv/keller_momentum.json"
plan_add state-bad -q --optimizer "$work/keller_m.py:SingleDeviceMuonWithAuxAdam" --adapter keller \
  --state-name m "$kv/keller_momentum.json"
# a state of flags alone is no renamed buffer: Moonlight's port keeps state[p]["use_muon"] for a parameter
# that has not stepped yet (its missing-gradient cases), which no note may call an unread buffer
plan_add state-flags -q --mode neutral --optimizer "$srcdir/tests/ports/torch_moonlight_port.py:Muon" \
  --adapter moonlight "$srcdir/vectors/moonlight/moonlight_gradients.json"
(cd "$srcdir/tests/ports" && MUONREF_PLAN_CACHE= && plan_run)
grep -c 'state\["m"\]' "$work/keller_m.py" | grep -qx 2 || fail "keller_m.py: the sed did not rename both uses"
! grep -q "held the keys \['use_muon'\]" "$work/plan.err" &&
  echo "ok: moonlight's state of flags alone (use_muon) draws no note of an unread buffer" ||
  fail "the note called moonlight's use_muon flag an unread buffer: $(grep "held the keys" "$work/plan.err")"
judge state-m "$kv/keller_momentum.json"
[ $rc -eq 1 ] && grep -q '^FAIL .*no state, expected a state' "$work/state-m.out" &&
  grep -q "the port's optimizer state held the keys \['m'\], none of which adapter keller reads" "$work/plan.err" &&
  echo "ok: a momentum under state['m'] fails on 'no state', and the driver names the key it could not read" ||
  fail "state['m'] without --state-name: exit $rc; $(grep -c "held the keys" "$work/plan.err") driver notes"
judge state-named -q "$kv/keller_momentum.json"
[ $rc -eq 0 ] && echo "ok: --state-name m=momentum_buffer: $(tail -n 1 "$work/state-named.out")" ||
  fail "--state-name m=momentum_buffer: exit $rc: $(tail -n 1 "$work/state-named.out")"
! plan_ran state-bad && grep -q -- "--state-name 'm': expected PORT_KEY=KEY with KEY one of" "$work/plan.err" &&
  echo "ok: --state-name m: refused, naming the rule" || fail "--state-name m: $(grep -- '--state-name' "$work/plan.err")"
exit $status
