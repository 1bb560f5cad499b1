#!/bin/sh
# muonref test: `muonref check --profile NAME` judges only that profile's
# folder of the default vectors (./vectors here), refuses an unknown profile
# and --profile beside vector paths (exit 2); the driver, given no vectors,
# runs its adapter's profile.  Exit 0 pass, 1 fail.
srcdir=$(cd "${MUONREF_SRCDIR:-$(dirname "$0")/../..}" && pwd)
muonref=$(cd "$(dirname "${MUONREF:-./muonref}")" && pwd)/$(basename "${MUONREF:-./muonref}")
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
. "$srcdir/tests/lib/lib.sh"
work_dir check-profile || exit 1
status=0
fail() { echo "FAIL: $*"; status=1; }
ln -s "$srcdir/vectors" "$work/vectors"
cd "$work" || exit 1
profiles=$("$muonref" profile | awk '{print $1}') # every record (spec/profiles/NAME.json)
[ "$(echo "$profiles" | wc -w)" -ge 11 ] || fail "muonref profile lists $(echo "$profiles" | wc -w) profiles"
for p in $profiles; do
  n=$(ls "vectors/$p"/*.json | wc -l)
  "$muonref" check --impl fast-bf16 --profile "$p" >out 2>&1; rc=$?
  areas=$(grep -c "^$p/" out); others=$(grep -E '^[a-z]+/' out | grep -vc "^$p/")
  [ $rc -eq 0 ] && [ "$areas" -eq "$n" ] && [ "$others" -eq 0 ] && echo "ok: --profile $p: $n areas, $(tail -n 1 out)" ||
    fail "--profile $p: exit $rc, $areas of $n areas, $others of other profiles"
done
"$muonref" check --impl fast-bf16 --profile no_such_port >out 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "Unknown profile 'no_such_port'" out && echo "ok: an unknown profile: exit 2" || fail "unknown: exit $rc: $(cat out)"
"$muonref" check --impl fast-bf16 --profile nemo vectors/nemo >out 2>&1; rc=$?
[ $rc -eq 2 ] && echo "ok: --profile with vector paths: exit 2" || fail "--profile with paths: exit $rc"
# `muonref profile NAME` prints every field of the option table (the fields nemo's record lists, in
# its order), whatever the profile: no field is left out of a hand-kept list
fields=$("$python" -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["defaults"]))' \
  "$srcdir/spec/profiles/nemo.json" 2>/dev/null) || echo "skipped: no Python at $python to read nemo.json's fields"
for p in $([ -n "$fields" ] && echo $profiles); do
  "$muonref" profile "$p" >prof.out 2>&1 || fail "muonref profile $p: exit $?"
  got=$(sed -n '/^fields (/,/^[a-z]/p' prof.out | awk '/^  /{printf "%s ", $1}' | sed 's/ $//')
  [ "$got" = "$fields" ] && echo "ok: muonref profile $p prints every field ($(echo $fields | wc -w))" ||
    fail "muonref profile $p: fields '$got', expected '$fields'"
done
if has_python torch; then
  "$python" "$srcdir/vectors/drivers/torch_driver.py" -q --optimizer "$srcdir/tests/ports/torch_torch_port.py:Muon" \
    --adapter torch --mode neutral --out r.json >drv.out 2>&1 || fail "driver: $(cat drv.out)"
  "$muonref" check --profile torch --results r.json >out 2>&1; rc=$?
  [ $rc -eq 0 ] && echo "ok: the driver with no vectors ran its adapter's profile (torch): $(tail -n 1 out)" ||
    fail "driver default: exit $rc: $(tail -n 2 out)"
fi
exit $status
