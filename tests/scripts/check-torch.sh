#!/bin/sh
# muonref test: `muonref check --torch MODULE_OR_FILE:CLASS` (driver and
# judge in one command) gives the verdicts of the two-step path
# (torch_driver.py, then muonref check --results) plus the training-loop
# lifecycle's, passes --torch-option on to the driver, reports a port the
# driver cannot load as a usage error (exit 2), refuses --torch with
# --impl, gives the driver the adapter of --profile (a correct keller port
# passes by default: judged neutral, raw a second verdict), catches a
# zero_grad fault in the training loop that assigned gradients hide, and
# leaves no temporary file.
# Exit 0 pass, 1 fail, 77 skip (no torch for $PYTHON).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
need_python torch
work_dir check-torch || exit 1
mkdir "$work/tmp"
status=0
fail() { echo "FAIL: $*"; status=1; }
vec=$srcdir/vectors/nemo

# the two-step path: both ports in one plan (tests/lib/plan.sh)
. "$srcdir/tests/lib/plan.sh"
# over_ PORT: the vectors a port runs over: the correct one every nemo file; the
# faulty one the momentum file, where its every failure is explained (each
# failure's fit costs more than its run: over every file 55 s, stop 50)
over_() { case $1 in *faulty*) echo "$vec/nemo_momentum.json" ;; *) echo "$vec" ;; esac; }
for port in torch_nemo_port torch_nemo_port_faulty_ema; do
  plan_add "$port" -q --mode raw --optimizer "$(port_file $port):Muon" "$(over_ $port)"
done
plan_run
for port in torch_nemo_port torch_nemo_port_faulty_ema; do
  p=$(port_file $port)
  # (raw: these ports round explicitly, and a raw run is the cheapest)
  TMPDIR=$work/tmp "$muonref" check --torch "$p:Muon" --torch-option=--mode=raw "$(over_ $port)" >"$work/one.out" \
    2>"$work/one.err"
  rc1=$?
  judge "$port" "$(over_ $port)"; rc2=$rc
  mv "$work/$port.out" "$work/two.out"
  # the one command's report adds the training-loop lifecycle's verdict (the same: these ports keep no state
  # of a training loop) and, with it, the judged run's own counts
  grep -v '^training-loop lifecycle: \|^the judged run (raw mode, assign lifecycle): ' "$work/one.out" >"$work/one.cmp"
  if [ $rc1 -eq $rc2 ] && diff "$work/one.cmp" "$work/two.out" >"$work/diff" &&
     grep -q '^training-loop lifecycle: .*; enforced: they count$' "$work/one.out"; then
    echo "ok: $port: one command gives the two-step verdicts and the training loop's (exit $rc1, $(tail -n 1 "$work/one.out"))"
  else
    fail "$port: exit $rc1 vs $rc2"; head -n 5 "$work/diff"
  fi
done
[ "$rc1" -eq 1 ] || fail "the faulty port passes"

TMPDIR=$work/tmp "$muonref" check -q --torch "$srcdir/tests/ports/torch_nemo_port.py:Muon" \
  --torch-option=--ns-format=fp32 "$vec/nemo_newton_schulz.json" >"$work/fp32.out" 2>&1
grep -q 'Newton-Schulz in fp32' "$work/fp32.out" && echo "ok: --torch-option reaches the driver" ||
  fail "--torch-option=--ns-format=fp32 did not: $(tail -n 2 "$work/fp32.out")"

TMPDIR=$work/tmp "$muonref" check --torch "$work/no_such_port.py:Muon" "$vec" >/dev/null 2>"$work/bad.err"; rc=$?
[ $rc -eq 2 ] && grep -q "no_such_port.py" "$work/bad.err" && echo "ok: a port the driver cannot load: exit 2" ||
  fail "missing port: exit $rc: $(cat "$work/bad.err")"
"$muonref" check --torch x.py:Muon --impl fast-bf16 "$vec" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && echo "ok: --torch with --impl is a usage error" || fail "--torch with --impl: exit $rc"
# a Python without torch (-S: no site packages, so no python3-torch): the
# driver says what is missing and exits 2, not a traceback with exit 1
"$python" -S "$srcdir/vectors/drivers/torch_driver.py" --optimizer x.py:M --out "$work/x.json" "$vec" \
  >/dev/null 2>"$work/notorch.err"; rc=$?
[ $rc -eq 2 ] && grep -q 'cannot import torch' "$work/notorch.err" && grep -q python3-torch "$work/notorch.err" &&
  ! grep -q Traceback "$work/notorch.err" && echo "ok: the driver without torch: exit 2 with a message" ||
  fail "the driver without torch: exit $rc: $(tail -n 2 "$work/notorch.err")"

# --profile NAME: the driver takes the profile's adapter (a Keller port
# judged with nemo's option names failed every case with "unexpected keyword
# argument 'adam_eps'"); run where ./vectors holds one keller file only
mkdir -p "$work/p/vectors/keller" && cp "$srcdir/vectors/keller/keller_defaults.json" "$work/p/vectors/keller/"
# (no --mode: a correct port is green by default, judged neutral, its raw run reported beside)
(cd "$work/p" && TMPDIR=$work/tmp "$muonref" check --profile keller \
   --torch "$srcdir/tests/ports/torch_keller_port.py:SingleDeviceMuonWithAuxAdam") \
  >"$work/keller.out" 2>&1; rc=$?
[ $rc -eq 0 ] && tail -n 1 "$work/keller.out" | grep -q ' passed, 0 failed$' &&
  grep -q '^the judged run (neutral mode, assign lifecycle): [0-9]* passed, 0 failed$' "$work/keller.out" &&
  grep -q '^raw mode (this platform.s own bf16 arithmetic): .*not enforced' "$work/keller.out" &&
  echo "ok: --profile keller --torch: the keller adapter, green by default ($(tail -n 1 "$work/keller.out"))" ||
  fail "--profile keller --torch: exit $rc: $(tail -n 4 "$work/keller.out")"

# a zero_grad that leaves AdamW's gradients: assigned gradients hide it (one
# lifecycle named: exit 0), the training loop catches it (both: exit 1, every
# failure naming the lifecycle)
zg=$srcdir/tests/variants/torch_keller_port_faulty_zero_grad.py:SingleDeviceMuonWithAuxAdam
ka=$srcdir/vectors/keller/keller_adamw.json
TMPDIR=$work/tmp "$muonref" check --torch "$zg" --torch-option=--adapter=keller --torch-option=--lifecycle=assign \
  --torch-option=--mode=neutral "$ka" >"$work/zg1.out" 2>&1; rc=$?
[ $rc -eq 0 ] && echo "ok: the zero_grad fault passes with assigned gradients alone" || fail "zero_grad, assign: exit $rc"
TMPDIR=$work/tmp "$muonref" check --torch "$zg" --torch-option=--adapter=keller "$ka" >"$work/zg2.out" 2>&1; rc=$?
nf=$(grep -c '^FAIL' "$work/zg2.out")
nl=$(grep -c '^FAIL .*: training-loop lifecycle: skipped: LifecycleError: .*zero_grad' "$work/zg2.out")
[ $rc -eq 1 ] && [ "$nf" -gt 0 ] && [ "$nf" -eq "$nl" ] &&
  grep -q '^the judged run (neutral mode, assign lifecycle): [0-9]* passed, 0 failed$' "$work/zg2.out" &&
  echo "ok: check --torch runs both lifecycles: the zero_grad fault fails $nf cases, each in the training loop" ||
  fail "zero_grad, both lifecycles: exit $rc, $nf failures, $nl naming the training loop: $(tail -n 3 "$work/zg2.out")"
# a Newton-Schulz function the driver cannot call (keller's with (G, eps) and its 5 steps fixed, as
# ultralytics' muon.py has it): its ns cases fail as "not run" (no fault is fitted to a call never made),
# and `muonref check --ns-function FILE:FUNC` (the driver's option, passed on as the hint says) runs a
# wrapper: the 5-step cases pass
sed 's/^def zeropower_via_newtonschulz5(G, steps=5):/def zeropower_via_newtonschulz5(G, eps=1e-7):\n    steps = 5/' \
  "$srcdir/tests/ports/torch_keller_port.py" >"$work/keller_eps.py"
printf 'import sys\nsys.path.insert(0, "%s")\nfrom keller_eps import zeropower_via_newtonschulz5 as ns5\n\n\ndef ns(G, steps):\n    if steps != 5:\n        raise ValueError("five steps only")\n    return ns5(G)\n' \
  "$work" >"$work/ns_wrap.py"
kn=$srcdir/vectors/keller/keller_newton_schulz.json
TMPDIR=$work/tmp "$muonref" check --torch "$work/keller_eps.py:SingleDeviceMuonWithAuxAdam" --adapter keller "$kn" \
  >"$work/nssig.out" 2>&1; rc=$?
nf=$(grep -c '^FAIL' "$work/nssig.out")
nr=$(grep -c '^  diagnosis: not run: the driver did not call .*--ns-function FILE:FUNC' "$work/nssig.out")
TMPDIR=$work/tmp "$muonref" check --torch "$work/keller_eps.py:SingleDeviceMuonWithAuxAdam" --adapter keller \
  --ns-function "$work/ns_wrap.py:ns" "$kn" >"$work/nssig2.out" 2>&1; rc2=$?
n5=$("$python" -c 'import json, sys
print(sum(t["nsSteps"] == 5 for g in json.load(open(sys.argv[1]))["testGroups"] for t in g["tests"]))' "$kn")
[ $rc -eq 1 ] && [ "$nf" -gt 0 ] && [ "$nf" -eq "$nr" ] && [ $rc2 -eq 1 ] &&
  tail -n 1 "$work/nssig2.out" | grep -q "^$n5 passed, " &&
  echo "ok: an uncallable Newton-Schulz function: $nf cases not run, each saying so; --ns-function: $(tail -n 1 "$work/nssig2.out")" ||
  fail "Newton-Schulz signature: exit $rc, $nf failures, $nr not run; --ns-function exit $rc2: $(tail -n 2 "$work/nssig2.out")"
# a port that refuses step(closure) (Emerging-Optimizers' AdaptiveMuon, as upstream): each training-loop failure
# says so and how to judge the numbers alone; with --lifecycle=assign it passes
ea=$srcdir/vectors/emerging_adaptive/emerging_adaptive_errors.json
TMPDIR=$work/tmp "$muonref" check --torch "$srcdir/tests/ports/torch_emerging_adaptive_port.py:AdaptiveMuon" "$ea" \
  >"$work/closure.out" 2>&1; rc=$?
nf=$(grep -c '^FAIL' "$work/closure.out")
nh=$(grep -c '^  diagnosis: .*refuses step(closure).*--torch-option=--lifecycle=assign' "$work/closure.out")
TMPDIR=$work/tmp "$muonref" check --torch "$srcdir/tests/ports/torch_emerging_adaptive_port.py:AdaptiveMuon" \
  --torch-option=--lifecycle=assign "$ea" >"$work/closure2.out" 2>&1; rc2=$?
[ $rc -eq 1 ] && [ "$nf" -gt 0 ] && [ "$nf" -eq "$nh" ] && [ $rc2 -eq 0 ] &&
  echo "ok: a port refusing step(closure): $nf training-loop failures, each telling --lifecycle=assign; assign passes" ||
  fail "closure refused: exit $rc, $nf failures, $nh with the hint; assign exit $rc2: $(tail -n 2 "$work/closure2.out")"
# a release's profile (emerging@0.3) runs with its profile's adapter: named by --profile, and found from the
# vectors' own "profile" without it (spec/profiles/README.md, "Releases")
rel=$srcdir/tests/ports/torch_emerging_0_3_port.py:Muon
(cd "$srcdir" && TMPDIR=$work/tmp "$muonref" check --profile emerging@0.3 --torch "$rel" \
  --torch-option=--lifecycle=assign --torch-option=--mode=neutral) >"$work/rel1.out" 2>&1; rc1=$? # ./vectors: the source tree's
TMPDIR=$work/tmp "$muonref" check --torch "$rel" --torch-option=--lifecycle=assign --torch-option=--mode=neutral \
  "$srcdir/vectors/emerging@0.3/emerging@0.3_scaling.json" >"$work/rel2.out" 2>&1; rc2=$?
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && tail -n 1 "$work/rel1.out" | grep -q ' passed, 0 failed$' &&
  echo "ok: emerging@0.3 with --profile and from its vectors: $(tail -n 1 "$work/rel1.out"); $(tail -n 1 "$work/rel2.out")" ||
  fail "emerging@0.3: exit $rc1 and $rc2: $(tail -n 2 "$work/rel1.out") / $(tail -n 2 "$work/rel2.out")"
[ -z "$(ls -A "$work/tmp")" ] && echo "ok: no temporary file left" || fail "left in TMPDIR: $(ls -A "$work/tmp")"
exit $status
