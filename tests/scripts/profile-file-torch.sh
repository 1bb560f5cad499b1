#!/bin/sh
# muonref test: a user's record through the PyTorch driver (spec/profiles/README.md, "A user
# profile: my port is keller with three differences"; issue 23 "Done when").  A twelfth profile
# from a record outside the tree, "keller with Newton-Schulz eps 1e-8 and weight decay 0.1, its
# decay key called wd", with a test port this script writes from keller's
# (tests/ports/torch_keller_port.py with those three differences), and no file of the tree changed:
#  1. `muonref gen --profile-file` writes its vectors (two areas, to stay cheap: weight_decay,
#     where both changed defaults and the renamed key act, and newton_schulz, where the eps does);
#  2. through one plan (tests/lib/plan.sh), `torch_driver.py --profile-file` runs keller's test port
#     and the changed copy over them with no Python written for the record: the copy PASSES
#     (`muonref check --results --profile-file`), keller's port FAILS, each failure with a reason;
#  3. `muonref check --torch COPY --profile-file` passes the record on to the driver and passes;
#  4. bad input: a record without "base", or named like a built-in profile, is refused (exit 2,
#     the message names the file and the member) and writes no results file.
# Exit 0 pass, 1 fail, 77 skip (no torch for $PYTHON).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
muonref=$(cd "$(dirname "${MUONREF:-./muonref}")" && pwd)/$(basename "${MUONREF:-./muonref}")
need_python torch
work_dir profile-file-torch || exit 1
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

r=$work/mykeller.json
cat >"$r" <<'JSON'
{
  "name": "mykeller",
  "base": "keller",
  "source": {"repository": "me/my-muon", "paths": ["my_muon.py"], "commit": "0123abc"},
  "defaults": {"ns_eps": 1e-8, "weight_decay": 0.1},
  "rename_keys": {"weight_decay": "wd"}
}
JSON
# the user's port: keller's test port with the record's three differences
port=$work/my_muon.py
sed -e 's/"weight_decay"/"wd"/g' -e 's/setdefault("wd", 0)/setdefault("wd", 0.1)/' -e 's/^NS_EPS = 1e-7$/NS_EPS = 1e-8/' \
  "$srcdir/tests/ports/torch_keller_port.py" >"$port"
[ "$(grep -c '"wd"' "$port")" -ge 4 ] && [ "$(grep -c 'setdefault("wd", 0.1)' "$port")" -eq 2 ] &&
  grep -q '^NS_EPS = 1e-8$' "$port" && ok "the copy of keller's port has the three differences" ||
  fail "the copy of tests/ports/torch_keller_port.py lacks a difference (the sed no longer matches the port)"

# 1.
for area in weight_decay newton_schulz; do
  "$muonref" gen -q --profile-file "$r" --area $area --out "$work/v" >"$work/gen.out" 2>&1 ||
    fail "gen --area $area: $(cat "$work/gen.out")"
done
v=$work/v/mykeller

# 2. and 4. in one plan
. "$srcdir/tests/lib/plan.sh"
keller=$srcdir/tests/ports/torch_keller_port.py:SingleDeviceMuonWithAuxAdam
plan_add mine -q --mode neutral --optimizer "$port:SingleDeviceMuonWithAuxAdam" --profile-file "$r" "$v"
plan_add keller -q --mode neutral --optimizer "$keller" --profile-file "$r" "$v"
printf '{"name": "nobase", "defaults": {"weight_decay": 0.1}}\n' >"$work/nobase-record.json"
plan_add nobase -q --optimizer "$keller" --profile-file "$work/nobase-record.json" "$v"
printf '{"name": "timm", "base": "keller"}\n' >"$work/builtin-record.json"
plan_add builtin -q --optimizer "$keller" --profile-file "$work/builtin-record.json" "$v"
plan_add norecord -q --optimizer "$port:SingleDeviceMuonWithAuxAdam" "$v"
plan_add otherrecord -q --optimizer "$keller" --profile-file "$r" "$srcdir/vectors/keller/keller_defaults.json"
plan_run

# judge NAME: muonref check --results $work/NAME.json with the record (plan.sh's judge takes no option value)
judge() { "$muonref" check --profile-file "$r" --results "$work/$1.json" "$v" >"$work/$1.out" 2>&1; rc=$?; }
judge mine
[ $rc -eq 0 ] && ok "the changed copy passes the record's vectors through the driver: $(tail -n 1 "$work/mine.out")" ||
  { fail "the changed copy: check exit $rc (expected 0):"; grep -v 'platform:' "$work/plan.err" | tail -n 3; grep '^FAIL' "$work/mine.out" | head -n 5; }
judge keller
nf=$(grep -c '^FAIL' "$work/keller.out")
nr=$(grep -c '^  \(reason\|diagnosis\|skipped\)' "$work/keller.out")
[ $rc -eq 1 ] && [ "$nf" -gt 0 ] && ok "keller's own port fails them: $(tail -n 1 "$work/keller.out")" ||
  fail "keller's port: check exit $rc with $nf FAIL lines (expected 1 and some)"
grep -q 'profile file' "$work/keller.json" 2>/dev/null && ok "the results name the record" ||
  fail "the results file does not name the --profile-file record"
for bad in nobase builtin; do
  if plan_ran $bad; then
    fail "the record $bad-record.json was accepted"
  elif grep "$bad-record.json" "$work/plan.err" | grep -q 'member "\(base\|name\)"'; then
    ok "the record $bad-record.json is refused: $(grep "$bad-record.json" "$work/plan.err" | head -n 1 | cut -c1-160)"
  else
    fail "the record $bad-record.json: no message naming the file and the member: $(tail -n 2 "$work/plan.err")"
  fi
done

# the record's vectors without the record: refused (every case was skipped as not expressible, told to try
# muonref identify), the message naming the file, the profile and --profile-file
if plan_ran norecord; then
  fail "the driver ran the record's vectors without --profile-file"
elif grep "is not a built-in profile" "$work/plan.err" | grep -q -- '--profile-file FILE'; then
  ok "the record's vectors without the record are refused: $(grep 'is not a built-in' "$work/plan.err" | cut -c1-150)"
else
  fail "the record's vectors without --profile-file: no message naming --profile-file: $(tail -n 2 "$work/plan.err")"
fi
# the record with vectors of another profile (keller's): every case used to be skipped; refused, naming both
if plan_ran otherrecord; then
  fail "the driver ran keller's vectors with the record of mykeller"
elif grep -q "'keller', but --profile-file .* is the record of 'mykeller'" "$work/plan.err"; then
  ok "vectors of another profile than the record's are refused"
else
  fail "keller's vectors with mykeller's record: no message naming both: $(tail -n 2 "$work/plan.err")"
fi
# the refusal reads the built-in records; where MUONREF_RECORDS names no such folder, built-in vectors still run
MUONREF_RECORDS=$work/no-records "$python" "$srcdir/vectors/drivers/torch_driver.py" -q --optimizer "$keller" \
  --out "$work/norecords.json" "$srcdir/vectors/keller/keller_defaults.json" >"$work/norecords.out" 2>&1; rc=$?
[ $rc -eq 0 ] && [ -s "$work/norecords.json" ] && ok "built-in vectors run where MUONREF_RECORDS names a missing folder" ||
  fail "MUONREF_RECORDS missing: exit $rc: $(tail -n 3 "$work/norecords.out")"
"$muonref" check -q --results "$work/mine.json" "$v" >"$work/norec.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "Unknown profile 'mykeller'.*--profile-file FILE" "$work/norec.out" &&
  ok "muonref check without the record: exit 2, naming --profile-file" ||
  fail "muonref check without the record: exit $rc (expected 2, naming --profile-file): $(tail -n 2 "$work/norec.out")"

# 3.
"$muonref" check -q --torch "$port:SingleDeviceMuonWithAuxAdam" --profile-file "$r" "$v" >"$work/torch.out" 2>&1; rc=$?
[ $rc -eq 0 ] && ok "check --torch --profile-file passes the copy: $(tail -n 1 "$work/torch.out")" ||
  fail "check --torch --profile-file: exit $rc (expected 0): $(tail -n 3 "$work/torch.out")"
# the record with another profile's vectors: the driver would refuse every case as not expressible and count it
# as the port's failure; refused instead (exit 2), naming both profiles, before the driver runs
"$muonref" check -q --torch "$port:SingleDeviceMuonWithAuxAdam" --profile-file "$r" --profile keller \
  >"$work/mixed.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "is profile 'mykeller', --profile names 'keller'" "$work/mixed.out" &&
  ok "a record with --profile of another profile is refused: $(head -n 1 "$work/mixed.out" | cut -c1-120)" ||
  fail "check --torch --profile-file with --profile keller: exit $rc (expected 2): $(tail -n 2 "$work/mixed.out")"
exit $status
