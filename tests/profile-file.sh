#!/bin/sh
# muonref test: a twelfth profile from a record outside the tree (spec/profiles/README.md,
# "A user profile"): "keller with Newton-Schulz eps 1e-8 and weight decay 0.1, its decay key
# called wd", under a name of its own.  `muonref gen --profile-file` writes its vectors (two
# areas, to stay cheap: weight_decay, where both defaults act, and newton_schulz, where the eps
# does); `muonref check --impl fast-bf16/fast-fp32 --profile-file` passes them, a deliberate
# fault fails them, and without the record they cannot be read (exit 2).  No file of the
# tree is touched.  Exit 0 pass, 1 fail.
muonref=$(cd "$(dirname "${MUONREF:-./muonref}")" && pwd)/$(basename "${MUONREF:-./muonref}")
work=$(mktemp -d "${TMPDIR:-/tmp}/profile-file.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
status=0
fail() { echo "FAIL: $*"; status=1; }
cat >"$work/mykeller.json" <<'JSON'
{
  "name": "mykeller",
  "base": "keller",
  "source": {"repository": "me/my-muon", "paths": ["my_muon.py"], "commit": "0123abc"},
  "defaults": {"ns_eps": 1e-8, "weight_decay": 0.1},
  "rename_keys": {"weight_decay": "wd"}
}
JSON
r=$work/mykeller.json
for area in weight_decay newton_schulz; do
  "$muonref" gen -q --profile-file "$r" --area $area --out "$work/v" >"$work/gen.out" 2>&1 ||
    fail "gen --area $area: $(cat "$work/gen.out")"
done
n=$(ls "$work/v/mykeller/"*.json 2>/dev/null | wc -l)
[ "$n" -eq 2 ] && echo "ok: gen --profile-file wrote $n files of profile mykeller" || fail "gen wrote $n files"
f=$work/v/mykeller/mykeller_weight_decay.json
grep -q '"profile": "mykeller"' "$f" && grep -q '"wd":' "$f" && ! grep -q '"weight_decay":' "$f" &&
  echo "ok: the vectors name the profile and give the renamed key" || fail "the vectors do not name mykeller or lack \"wd\""
for impl in fast-bf16 fast-fp32; do
  "$muonref" check -q --impl $impl --profile-file "$r" "$work/v/mykeller" >"$work/check.out" 2>&1; rc=$?
  [ $rc -eq 0 ] && echo "ok: check --impl $impl --profile-file: $(tail -n 1 "$work/check.out")" ||
    fail "check --impl $impl: exit $rc: $(tail -n 3 "$work/check.out")"
done
"$muonref" check -q --impl fast-bf16 --fault decay_after_update --profile-file "$r" "$work/v/mykeller" >"$work/fault.out" 2>&1; rc=$?
[ $rc -eq 1 ] && echo "ok: the fault decay_after_update fails: $(tail -n 1 "$work/fault.out")" ||
  fail "fault decay_after_update: exit $rc (expected 1): $(tail -n 3 "$work/fault.out")"
"$muonref" check -q --impl fast-bf16 --fault eps_1e-8 --profile-file "$r" "$work/v/mykeller" >"$work/fault2.out" 2>&1; rc=$?
[ $rc -eq 0 ] && echo "ok: the fault eps_1e-8 is the record's own eps: passes" ||
  fail "fault eps_1e-8 on a profile with eps 1e-8: exit $rc (expected 0): $(tail -n 3 "$work/fault2.out")"
"$muonref" vectors --profile-file "$r" "$work/v" >"$work/list.out" 2>&1 && grep -q "^mykeller  *weight_decay" "$work/list.out" &&
  echo "ok: vectors --profile-file lists them" || fail "vectors --profile-file: $(tail -n 2 "$work/list.out")"
"$muonref" check -q --impl fast-bf16 "$work/v/mykeller" >"$work/norec.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "mykeller" "$work/norec.out" && echo "ok: without the record: exit 2" ||
  fail "without --profile-file: exit $rc (expected 2): $(tail -n 2 "$work/norec.out")"
exit $status
