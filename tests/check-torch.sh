#!/bin/sh
# muonref test: `muonref check --torch MODULE_OR_FILE:CLASS` (driver and
# judge in one command) gives the verdicts of the two-step path
# (torch_driver.py, then muonref check --results), passes --torch-option on
# to the driver, reports a port the driver cannot load as a usage error
# (exit 2), refuses --torch with --impl, gives the driver the adapter of
# --profile, and leaves no temporary file.
# Exit 0 pass, 1 fail, 77 skip (no torch for $PYTHON).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
muonref=${MUONREF:-./muonref}
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
"$python" -c 'import torch' >/dev/null 2>&1 || { echo "SKIP: $python cannot import torch"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/check-torch.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/tmp"
status=0
fail() { echo "FAIL: $*"; status=1; }
vec=$srcdir/vectors/nemo

# the two-step path: both ports in one plan (tests/plan.sh)
. "$srcdir/tests/plan.sh"
for port in torch_nemo_port torch_nemo_port_faulty_ema; do
  plan_add "$port" -q --optimizer "$srcdir/tests/$port.py:Muon" "$vec"
done
plan_run
for port in torch_nemo_port torch_nemo_port_faulty_ema; do
  p=$srcdir/tests/$port.py
  TMPDIR=$work/tmp "$muonref" check --torch "$p:Muon" "$vec" >"$work/one.out" 2>"$work/one.err"; rc1=$?
  judge "$port" "$vec"; rc2=$rc
  mv "$work/$port.out" "$work/two.out"
  if [ $rc1 -eq $rc2 ] && diff "$work/one.out" "$work/two.out" >"$work/diff"; then
    echo "ok: $port: one command gives the two-step verdicts (exit $rc1, $(tail -n 1 "$work/one.out"))"
  else
    fail "$port: exit $rc1 vs $rc2"; head -n 5 "$work/diff"
  fi
done
[ "$rc1" -eq 1 ] || fail "the faulty port passes"

TMPDIR=$work/tmp "$muonref" check -q --torch "$srcdir/tests/torch_nemo_port.py:Muon" \
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
(cd "$work/p" && TMPDIR=$work/tmp "$muonref" check --profile keller \
   --torch "$srcdir/tests/torch_keller_port.py:SingleDeviceMuonWithAuxAdam" --torch-option=--mode=neutral) \
  >"$work/keller.out" 2>&1; rc=$?
[ $rc -eq 0 ] && tail -n 1 "$work/keller.out" | grep -q ' passed, 0 failed$' &&
  echo "ok: --profile keller --torch: the keller adapter ($(tail -n 1 "$work/keller.out"))" ||
  fail "--profile keller --torch: exit $rc: $(tail -n 2 "$work/keller.out")"
[ -z "$(ls -A "$work/tmp")" ] && echo "ok: no temporary file left" || fail "left in TMPDIR: $(ls -A "$work/tmp")"
exit $status
