#!/bin/sh
# muonref test: the pytest plugin vectors/drivers/pytest_muonref.py runs the
# project's PyTorch ports through pytest (make check).
#
#  - tests/ports/torch_nemo_port.py: one item per vector case, all pass (exit 0);
#  - tests/variants/torch_nemo_port_faulty_ema.py: exactly the cases `muonref check`
#    fails on the driver's results fail, with the judge's message;
#  - no --muonref-optimizer: the plugin adds no item (pytest exit 5);
#  - a missing port or profile: a usage error naming it (pytest exit 4);
#  - --muonref-mode is handed to the driver as --mode;
#  - pytest's selection works as for any test file: --collect-only runs
#    nothing, -m muonref, -k by file, tcId or flag, a node id FILE::tcN, --lf.
# The vectors are found as an installed user's would be: the plugin runs in
# an empty folder and takes the PROFILE folder above the driver's.
# (-p no:muonref: the plugin a `make install` registered stays out; this one is loaded.)
# Exit 0 pass, 1 fail, 77 skip (no torch or pytest for $PYTHON).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
muonref=${MUONREF:-$PWD/muonref}
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
need_python torch pytest
work_dir pytest-plugin || exit 1
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
run_pytest port --muonref-optimizer="$srcdir/tests/ports/torch_nemo_port.py:Muon" --muonref-profile nemo
grep -q "^$total passed" "$work/port.out" && [ $rc -eq 0 ] && echo "ok: the port: $total items pass" ||
  { fail "the port: exit $rc, expected $total passed"; tail -n 5 "$work/port.out"; }

# 1b. another profile: its own port, the adapter following --muonref-profile
ntorch=$("$muonref" vectors "$srcdir/vectors/torch" | sed -n 's/^[0-9]* files, \([0-9]*\) cases$/\1/p')
run_pytest torch --muonref-optimizer="$srcdir/tests/ports/torch_torch_port.py:Muon" --muonref-profile torch --muonref-mode neutral
grep -q "^$ntorch passed" "$work/torch.out" && [ $rc -eq 0 ] && echo "ok: profile torch, its port (neutral): $ntorch items pass" ||
  { fail "profile torch: exit $rc, expected $ntorch passed"; tail -n 5 "$work/torch.out"; }

# 1c. pytest's own selection works on the items (issue 29): --collect-only
# collects one item per case and runs nothing (a port that does not exist is
# not loaded), -m muonref selects them, -k selects by tcId and by flag, a
# node id reruns one case, and --lf reruns only the failures
run_pytest collect --collect-only --muonref-optimizer=no_such_port.py:Muon --muonref-profile nemo
[ $rc -eq 0 ] && grep -q "^$total tests collected" "$work/collect.out" &&
  echo "ok: --collect-only: $total items, the port not run" ||
  { fail "--collect-only: exit $rc, expected $total tests collected"; tail -n 3 "$work/collect.out"; }
run_pytest marker --collect-only -m muonref --muonref-optimizer=no_such_port.py:Muon --muonref-profile nemo
grep -q "^$total tests collected" "$work/marker.out" && echo "ok: -m muonref selects every item" ||
  { fail "-m muonref: exit $rc"; tail -n 3 "$work/marker.out"; }
# (-k matches a keyword case-insensitively as a substring: every flag holding "nesterov")
nflag=$("$python" -c 'import json, glob, os, sys
print(sum(any("nesterov" in k.lower() for k in t["flags"] + [os.path.basename(f)])
          for f in glob.glob(sys.argv[1] + "/*.json") for g in json.load(open(f))["testGroups"] for t in g["tests"]))' \
  "$srcdir/vectors/nemo")
run_pytest flagk --collect-only -k Nesterov --muonref-optimizer=no_such_port.py:Muon --muonref-profile nemo
grep -q "^$nflag/$total tests collected" "$work/flagk.out" && echo "ok: -k Nesterov selects the $nflag flagged cases" ||
  { fail "-k Nesterov: exit $rc, expected $nflag/$total"; tail -n 3 "$work/flagk.out"; }
# the vectors and the adapter chosen by default are said in the header (-v undoes -q's silence), not silently
run_pytest header --collect-only -v --muonref-optimizer=no_such_port.py:Muon
grep -q "^muonref: vectors .*/nemo (the default profile nemo: --muonref-profile NAME picks another)$" "$work/header.out" &&
  grep -q "^muonref: adapter the vector files' profile's (the driver's default)$" "$work/header.out" &&
  echo "ok: without --muonref-profile the header says nemo's vectors were chosen, and whose adapter runs" ||
  { fail "the report header: exit $rc"; grep '^muonref' "$work/header.out"; }
one="$srcdir/vectors/nemo/nemo_momentum.json::tc3"
run_pytest nodeid "$one" --muonref-optimizer="$srcdir/tests/ports/torch_nemo_port.py:Muon"
[ $rc -eq 0 ] && grep -q "^1 passed" "$work/nodeid.out" && echo "ok: a node id reruns one case" ||
  { fail "node id $one: exit $rc"; tail -n 3 "$work/nodeid.out"; }
run_pytest kid -k "nemo_momentum and tc3" --muonref-optimizer="$srcdir/tests/ports/torch_nemo_port.py:Muon"
[ $rc -eq 0 ] && grep -q "^1 passed, $((total - 1)) deselected" "$work/kid.out" && echo "ok: -k 'nemo_momentum and tc3' selects one case" ||
  { fail "-k by tcId: exit $rc"; tail -n 3 "$work/kid.out"; }

# 2. the faulty port fails exactly the cases muonref check fails
run_pytest ema --muonref-optimizer="$srcdir/tests/variants/torch_nemo_port_faulty_ema.py:Muon"
# (the driver's run through tests/lib/plan.sh: the sanitizer build takes it from
# MUONREF_PLAN_CACHE; judged without the diagnosis: only the FAIL lines and
# the totals are compared)
. "$srcdir/tests/lib/plan.sh"
plan_add ema -q --optimizer "$srcdir/tests/variants/torch_nemo_port_faulty_ema.py:Muon" "$srcdir/vectors/nemo"
plan_run || fail "the driver on the faulty port: $(tail -n 2 "$work/plan.err")"
"$muonref" check --no-diagnosis --results "$work/ema.json" "$srcdir/vectors/nemo" >"$work/ema.check"
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
  node="${id%%#*}::tc${id#*#}"
  grep -qF "$node" "$work/ema.out" && grep -qF "muonref check: $id: $msg" "$work/ema.out" || { fail "no failed item $node with '$msg'"; break; }
  nf=$((nf + 1))
done <"$work/ema.fails"
[ $nf -gt 0 ] && [ $nf -eq "$(wc -l <"$work/ema.fails")" ] && echo "ok: $nf failed items carry the judge's message" ||
  fail "only $nf of $(wc -l <"$work/ema.fails") FAIL lines found as failed items"

# 2b. --lf: a second run with the cache reruns exactly the failed cases; the cache in $work (pytest's
# default, the rootdir, is vectors/nemo: a .pytest_cache there made gen-reproducible.sh's diff -r fail)
mkdir -p "$work/lf"
lf_run() { (cd "$work/lf" && PYTHONPATH="$srcdir/vectors/drivers" MUONREF="$muonref" \
  "$python" -m pytest -p no:muonref -p pytest_muonref -o cache_dir="$work/lf/.cache" -q "$@" \
  --muonref-optimizer="$srcdir/tests/variants/torch_nemo_port_faulty_ema.py:Muon" "$srcdir/vectors/nemo/nemo_momentum.json") >"$work/lf.out" 2>&1; }
lf_run; nfail=$(sed -n 's/^\([0-9]*\) failed.*/\1/p' "$work/lf.out" | tail -n 1)
lf_run --lf
[ -n "$nfail" ] && [ "$nfail" -gt 0 ] && tail -n 1 "$work/lf.out" | grep -q "^$nfail failed in" &&
  echo "ok: --lf reruns the $nfail failed cases only" || { fail "--lf: expected $nfail failed only"; tail -n 3 "$work/lf.out"; }

# 3. without --muonref-optimizer the plugin adds nothing
run_pytest off
[ $rc -eq 5 ] && echo "ok: no --muonref-optimizer, no items" || fail "no --muonref-optimizer: exit $rc, expected 5"

# 4. usage errors name their cause
run_pytest missing --muonref-optimizer=no_such_port.py:Muon
[ $rc -eq 4 ] && grep -q "no_such_port.py" "$work/missing.out" && echo "ok: a missing port is a usage error" ||
  { fail "missing port: exit $rc"; tail -n 3 "$work/missing.out"; }
run_pytest profile --muonref-optimizer="$srcdir/tests/ports/torch_nemo_port.py:Muon" --muonref-profile no_such_profile
[ $rc -eq 4 ] && grep -q "muonref-profile 'no_such_profile'" "$work/profile.out" &&
  echo "ok: an unknown profile is a usage error" || { fail "unknown profile: exit $rc"; tail -n 3 "$work/profile.out"; }
# 5. --muonref-mode reaches the driver as --mode (a mode it refuses: the driver's message)
run_pytest mode --muonref-optimizer="$srcdir/tests/ports/torch_nemo_port.py:Muon" --muonref-mode no_such_mode
[ $rc -eq 4 ] && grep -q -- "--mode" "$work/mode.out" && grep -q "no_such_mode" "$work/mode.out" &&
  echo "ok: --muonref-mode goes to the driver" || { fail "--muonref-mode: exit $rc"; tail -n 3 "$work/mode.out"; }
exit $status
