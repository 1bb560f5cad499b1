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
# bf16_refusal (spec/profiles/README.md): a port that refuses bf16 parameters; its dtypes area is that one
# error case, which the fast path passes by refusing with the record's message; a bad member is refused
b=$work/mybf16.json
cat >"$b" <<'JSON'
{
  "name": "mybf16",
  "base": "torch",
  "source": {"repository": "me/my-muon", "paths": ["my_muon.py"], "commit": "0123abc"},
  "bf16_refusal": {"status": "EGRAD", "message": "my port takes float32 parameters only"}
}
JSON
"$muonref" gen -q --profile-file "$b" --area dtypes --out "$work/v" >"$work/gen2.out" 2>&1 ||
  fail "gen --area dtypes: $(cat "$work/gen2.out")"
f=$work/v/mybf16/mybf16_dtypes.json
grep -q '"kind": "error"' "$f" && grep -q '"message": "my port takes float32 parameters only"' "$f" &&
  "$muonref" check -q --impl fast-fp32 --profile-file "$b" "$f" >"$work/b.out" 2>&1 &&
  echo "ok: bf16_refusal: the dtypes area is the refusal, and the fast path refuses" ||
  fail "bf16_refusal: $(tail -n 2 "$work/b.out" 2>/dev/null)"
for bad in '"status": "ENOPE", "message": "x"|bf16_refusal.status' '"status": "EGRAD", "message": ""|bf16_refusal.message' \
           '"status": "EGRAD"|bf16_refusal.message'; do
  body=${bad%|*} want=${bad#*|}
  sed "s/\"bf16_refusal\": {.*}/\"bf16_refusal\": {$body}/" "$b" >"$work/bad.json"
  "$muonref" gen -q --profile-file "$work/bad.json" --area dtypes --out "$work/vbad" >"$work/bad.out" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q "$want" "$work/bad.out" && echo "ok: a bad bf16_refusal ($body) is refused: exit 2" ||
    fail "bf16_refusal {$body}: exit $rc (expected 2 naming $want): $(cat "$work/bad.out")"
done
# an area whose every case the record's port cannot be given (optax has no conv cases: its Muon
# takes 2-D parameters only) gets no file, which the reader would refuse, and the summary says so
e=$work/empty.json
printf '%s\n' '{"name": "myoptax", "base": "optax", "source": {"repository": "me/x", "paths": ["x.py"], "commit": "0"},' \
  ' "areas": ["conv", "defaults"]}' >"$e"
"$muonref" gen --profile-file "$e" --out "$work/ve" >"$work/empty.out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q 'no file for 1 area whose every case was left out' "$work/empty.out" &&
  [ ! -e "$work/ve/myoptax/myoptax_conv.json" ] && [ -e "$work/ve/myoptax/myoptax_defaults.json" ] &&
  "$muonref" vectors -q --profile-file "$e" "$work/ve" >/dev/null 2>&1 &&
  echo "ok: an area with no case left gets no file, and the set reads" ||
  fail "empty area: exit $rc: $(cat "$work/empty.out"; ls "$work/ve/myoptax" 2>&1)"
# an optional key need not spell the record's defaults (no case at them writes it): a record based on dion
# at another ns_safety, which no value of use_polar_express gives, reads, and its scaling cases pass the fast path
d=$work/mydion.json
printf '%s\n' '{"name": "mydion", "base": "dion", "source": {"repository": "me/x", "paths": ["x.py"], "commit": "0"},' \
  ' "defaults": {"ns_safety": 1.01}}' >"$d"
"$muonref" gen -q --profile-file "$d" --area scaling --out "$work/vd" >"$work/dion.out" 2>&1 &&
  "$muonref" check -q --impl fast-bf16 --profile-file "$d" "$work/vd/mydion" >>"$work/dion.out" 2>&1 &&
  echo "ok: a dion record at ns_safety 1.01 reads (its optional use_polar_express unspelled): $(tail -n 1 "$work/dion.out")" ||
  fail "a dion record at ns_safety 1.01: $(tail -n 3 "$work/dion.out")"
# a record whose defaults the cases' shapes break (row blocks [4, 2, 2], spec/muon.md 7.6): a schedule case it
# refuses is an error test without setOptions (gen wrote ones the reader refused), and an error case written for
# dion (num_heads 3) takes the library's own refusal (split_sizes against num_heads); the fast path passes all
s=$work/mysplit.json
printf '%s
' '{"name": "mysplit", "base": "dion", "source": {"repository": "me/x", "paths": ["x.py"], "commit": "0"},' \
  ' "defaults": {"ns_split": [4, 2, 2]}, "areas": ["schedule", "errors"]}' >"$s"
"$muonref" gen -q --profile-file "$s" --out "$work/vs" >"$work/split.out" 2>&1 &&
  "$muonref" vectors -q --profile-file "$s" "$work/vs" >>"$work/split.out" 2>&1 &&
  "$muonref" check -q --impl fast-bf16 --profile-file "$s" "$work/vs/mysplit" >>"$work/split.out" 2>&1 &&
  grep -q 'split_sizes is incompatible with num_heads' "$work/vs/mysplit/mysplit_errors.json" &&
  echo "ok: a record with row blocks its cases' shapes break: $(tail -n 1 "$work/split.out")" ||
  fail "a record with row blocks: $(tail -n 3 "$work/split.out")"
# the same row blocks on a port that checks nothing (moonlight's catalogue none, whose record marks its
# refusals outside the rows fallback, core/checks.h): muonref's refusal is written as any error ("match":
# "any") and the comment says the port makes no such check (under dion's catalogue above they stay the
# library's words: dion splits and checks); the fast path passes
m=$work/mysplitm.json
printf '%s
' '{"name": "mysplitm", "base": "moonlight", "source": {"repository": "me/x", "paths": ["x.py"], "commit": "0"},' \
  ' "defaults": {"ns_split": [4, 2, 2]}, "areas": ["scaling"]}' >"$m"
fm=$work/vm/mysplitm/mysplitm_scaling.json
"$muonref" gen -q --profile-file "$m" --out "$work/vm" >"$work/splitm.out" 2>&1 &&
  "$muonref" check -q --impl fast-bf16 --profile-file "$m" "$work/vm/mysplitm" >>"$work/splitm.out" 2>&1 &&
  [ "$(grep -c '"match": "any"' "$fm")" -gt 0 ] &&
  [ "$(grep -c '"match": "any"' "$fm")" -eq "$(grep -c 'the port makes no such check and fails its own way' "$fm")" ] &&
  ! grep -q '\[profile mysplitm refuses it' "$fm" && ! grep -q '"match"' "$work/vs/mysplit/mysplit_scaling.json" 2>/dev/null &&
  echo "ok: a record on catalogue none: its shape refusals are any error: $(tail -n 1 "$work/splitm.out")" ||
  fail "a record on catalogue none with row blocks: $(tail -n 3 "$work/splitm.out")"
exit $status
