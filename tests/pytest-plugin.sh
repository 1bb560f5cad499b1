#!/bin/sh
# muonref test: the pytest plugin vectors/drivers/pytest_muonref.py runs the
# project's PyTorch ports through pytest (make check).
#
#  - tests/torch_nemo_port.py: one item per vector case, all pass (exit 0);
#  - tests/torch_nemo_port_faulty_ema.py: exactly the cases `muonref check`
#    fails on the driver's results fail, with the judge's message;
#  - no --muonref-optimizer: the plugin adds no item (pytest exit 5);
#  - a missing port or profile: a usage error naming it (pytest exit 4);
#  - --muonref-mode is handed to the driver as --mode.
# The vectors are found as an installed user's would be: the plugin runs in
# an empty folder and takes the PROFILE folder above the driver's.
# (-p no:muonref: the plugin a `make install` registered stays out; this one is loaded.)
# Exit 0 pass, 1 fail, 77 skip (no torch or pytest for $PYTHON).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
muonref=${MUONREF:-$PWD/muonref}
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
"$python" -c 'import torch, pytest' >/dev/null 2>&1 ||
  { echo "SKIP: $python cannot import torch and pytest (apt-get install python3-torch python3-pytest)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/pytest-plugin.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
status=0
fail() { echo "FAIL: $*"; status=1; }

total=$("$muonref" vectors "$srcdir/vectors/nemo" | sed -n 's/^[0-9]* files, \([0-9]*\) cases$/\1/p')
run_pytest() { # NAME ARGS...: pytest in an empty folder; output in $work/NAME.out, exit status in $rc
  name=$1; shift
  mkdir -p "$work/$name"
  (cd "$work/$name" && PYTHONPATH="$srcdir/vectors/drivers" MUONREF="$muonref" \
     "$python" -m pytest -p no:muonref -p pytest_muonref -p no:cacheprovider -q -rf "$@") >"$work/$name.out" 2>&1
  rc=$?
}

# 1. the port passes every case, one item each
run_pytest port --muonref-optimizer="$srcdir/tests/torch_nemo_port.py:Muon" --muonref-profile nemo
grep -q "^$total passed" "$work/port.out" && [ $rc -eq 0 ] && echo "ok: the port: $total items pass" ||
  { fail "the port: exit $rc, expected $total passed"; tail -n 5 "$work/port.out"; }

# 1b. another profile: its own port, the adapter following --muonref-profile
ntorch=$("$muonref" vectors "$srcdir/vectors/torch" | sed -n 's/^[0-9]* files, \([0-9]*\) cases$/\1/p')
run_pytest torch --muonref-optimizer="$srcdir/tests/torch_torch_port.py:Muon" --muonref-profile torch --muonref-mode neutral
grep -q "^$ntorch passed" "$work/torch.out" && [ $rc -eq 0 ] && echo "ok: profile torch, its port (neutral): $ntorch items pass" ||
  { fail "profile torch: exit $rc, expected $ntorch passed"; tail -n 5 "$work/torch.out"; }

# 2. the faulty port fails exactly the cases muonref check fails
run_pytest ema --muonref-optimizer="$srcdir/tests/torch_nemo_port_faulty_ema.py:Muon"
"$python" "$srcdir/vectors/drivers/torch_driver.py" -q --optimizer "$srcdir/tests/torch_nemo_port_faulty_ema.py:Muon" \
  --out "$work/ema.json" "$srcdir/vectors/nemo"
"$muonref" check --results "$work/ema.json" "$srcdir/vectors/nemo" >"$work/ema.check"
want=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2 failed, \1 passed/p' "$work/ema.check")
[ $rc -eq 1 ] && [ -n "$want" ] && tail -n 1 "$work/ema.out" | grep -q "^$want in" &&
  echo "ok: the faulty port: $want, as muonref check" ||
  { fail "the faulty port: exit $rc, expected '$want'"; tail -n 3 "$work/ema.out"; }
# each FAIL line of muonref check is a failed item with the judge's message
# (the judge's message without the list of failing tensors the FAIL line appends)
# (the first "TENSOR: got" after the flags starts it: a detail may hold a
# second one, the norm-overflow alternative's, spec/vectors.md 2.7)
sed -e 's/ \[failing: .*\]$//' "$work/ema.check" | "$python" -c '
import re, sys
for line in sys.stdin:
    m = re.match(r"FAIL (\S+) tcId (\d+) \[[^\]]*\] .*?: ((?:params|state|output)[^ :]*: got .*)$", line.rstrip("\n"))
    if m:
        print(f"{m.group(1)}#{m.group(2)} {m.group(3)}")' >"$work/ema.fails"
nf=0
while read -r id msg; do
  grep -qF "::$id" "$work/ema.out" && grep -qF "muonref check: $id: $msg" "$work/ema.out" || { fail "no failed item $id with '$msg'"; break; }
  nf=$((nf + 1))
done <"$work/ema.fails"
[ $nf -gt 0 ] && [ $nf -eq "$(wc -l <"$work/ema.fails")" ] && echo "ok: $nf failed items carry the judge's message" ||
  fail "only $nf of $(wc -l <"$work/ema.fails") FAIL lines found as failed items"

# 3. without --muonref-optimizer the plugin adds nothing
run_pytest off
[ $rc -eq 5 ] && echo "ok: no --muonref-optimizer, no items" || fail "no --muonref-optimizer: exit $rc, expected 5"

# 4. usage errors name their cause
run_pytest missing --muonref-optimizer=no_such_port.py:Muon
[ $rc -eq 4 ] && grep -q "no_such_port.py" "$work/missing.out" && echo "ok: a missing port is a usage error" ||
  { fail "missing port: exit $rc"; tail -n 3 "$work/missing.out"; }
run_pytest profile --muonref-optimizer="$srcdir/tests/torch_nemo_port.py:Muon" --muonref-profile no_such_profile
[ $rc -eq 4 ] && grep -q "muonref-profile 'no_such_profile'" "$work/profile.out" &&
  echo "ok: an unknown profile is a usage error" || { fail "unknown profile: exit $rc"; tail -n 3 "$work/profile.out"; }
# 5. --muonref-mode reaches the driver as --mode (a mode it refuses: the driver's message)
run_pytest mode --muonref-optimizer="$srcdir/tests/torch_nemo_port.py:Muon" --muonref-mode no_such_mode
[ $rc -eq 4 ] && grep -q -- "--mode" "$work/mode.out" && grep -q "no_such_mode" "$work/mode.out" &&
  echo "ok: --muonref-mode goes to the driver" || { fail "--muonref-mode: exit $rc"; tail -n 3 "$work/mode.out"; }
exit $status
