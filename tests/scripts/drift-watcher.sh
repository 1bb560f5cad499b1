#!/bin/sh
# muonref test: vectors/drift.py, the drift watcher, on a fixture repository
# made here (git init, two commits): the first holds the emerging test port
# at the record's path (its other two files trivial and unchanged), the
# second changes its Newton-Schulz eps default 1e-15 -> 1e-7 (Emerging-
# Optimizers before v0.4.0) and one message of its catalogue, and adds a
# function. Compared with itself it reports nothing (exit 0); across the two
# commits it names exactly those changes (exit 1); with --run the upstream at
# each commit goes through the driver over emerging_newton_schulz.json: the
# first passes, the second fails the two tiny-norm cases that eps decides,
# and the fit names exactly ns_eps 1e-15 -> 1e-7. Bad input exits 2 naming
# it.  Exit 0 pass, 1 fail, 77 skip (no git).
srcdir=$(cd "${MUONREF_SRCDIR:-$(dirname "$0")/../..}" && pwd)
muonref=$(cd "$(dirname "${MUONREF:-./muonref}")" && pwd)/$(basename "${MUONREF:-./muonref}")
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
. "$srcdir/tests/lib/lib.sh"
command -v git >/dev/null 2>&1 || { echo "SKIP: no git"; exit 77; }
work_dir drift-watcher || exit 1
status=0
fail() { echo "FAIL: $*"; status=1; }
drift() { "$python" "$srcdir/vectors/drift.py" --muonref "$muonref" "$@" >"$work/out" 2>&1; }

repo=$work/eo
f=emerging_optimizers/orthogonalized_optimizers/muon.py
mkdir -p "$repo/${f%/*}" && cp "$srcdir/tests/ports/torch_emerging_port.py" "$repo/$f" || exit 1
for u in muon_utils orthogonalized_optimizer; do   # the record's other files: there, unchanged
  printf 'def %s_unchanged(eps=1e-15):\n    raise ValueError("kept")\n' "$u" >"$repo/${f%/*}/$u.py" || exit 1
done
g() { git -C "$repo" -c user.name=t -c user.email=t@t -c commit.gpgsign=false "$@" >/dev/null; }
g init -q && g add . && g commit -q -m v0.4 || exit 1
sed -e 's/eps=1e-15):/eps=1e-7):/' -e 's/num_ns_steps must be at least 1, got/num_ns_steps must be >= 1, got/' \
  "$srcdir/tests/ports/torch_emerging_port.py" >"$repo/$f" && printf '\n\ndef helper():\n    return 0\n' >>"$repo/$f" || exit 1
g commit -q -a -m v0.3 || exit 1

drift emerging "$repo" HEAD~1 --pinned HEAD~1; rc=$?
[ $rc -eq 0 ] && grep -q '^0 change(s)' "$work/out" && echo "ok: a commit against itself: no change, exit 0" ||
  fail "self: exit $rc: $(cat "$work/out")"

drift emerging "$repo" HEAD --pinned HEAD~1; rc=$?
n=$(sed -n 's/^\([0-9]*\) change(s).*/\1/p' "$work/out")
for want in "newton_schulz: default eps 1e-15 -> 1e-07" "Muon.__init__: body changed" "helper: added" \
  "message removed: 'num_ns_steps must be at least 1, got {}'" \
  "message added: 'num_ns_steps must be >= 1, got {}'" \
  "catalogue message 'num_ns_steps must be at least 1, got {}': in the files at the pin, not at REF"; do
  grep -qF "$want" "$work/out" || fail "drift across the commits does not say '$want': $(cat "$work/out")"
done
# the six changes and no other (newton_schulz's body and Muon.step are as they were)
[ $rc -eq 1 ] && [ "$n" = 6 ] && echo "ok: across the commits: exit 1, the 6 changes named" ||
  fail "across: exit $rc, $n changes: $(cat "$work/out")"

if has_python torch; then
  v=$srcdir/vectors/emerging/emerging_newton_schulz.json
  drift emerging "$repo" HEAD~1 --pinned HEAD~1 --run "$f:Muon" --vectors "$v"; rc=$?
  [ $rc -eq 0 ] && grep -q "muonref check exit 0" "$work/out" && echo "ok: --run at the pin passes its profile" ||
    fail "--run at the pin: exit $rc: $(tail -n 5 "$work/out")"
  drift emerging "$repo" HEAD --pinned HEAD~1 --run "$f:Muon" --vectors "$v"; rc=$?
  # the fit names the release's one difference, as the data of the two releases give it
  [ $rc -eq 1 ] && grep -q "muonref check exit 1" "$work/out" && grep -q "FAIL" "$work/out" &&
    grep -q "^explained: eps_floor_1e-7 = ns_eps 1e-15 -> 1e-7 (2 of 2 failures" "$work/out" &&
    echo "ok: --run at REF fails, $(grep '^explained:' "$work/out")" || fail "--run at REF: exit $rc: $(tail -n 5 "$work/out")"
else
  echo "skip: --run (no torch)"
fi

# a user's record (--profile-file) pinning its own commit, its base from spec/profiles: its one file, no catalogue
pin=$(git -C "$repo" rev-parse HEAD~1)
printf '{"name": "myeo", "base": "emerging", "source": {"repository": "me/eo", "paths": ["%s"], "commit": "%s"}}\n' \
  "$f" "$pin" >"$work/myeo.json"
drift myeo "$repo" HEAD --profile-file "$work/myeo.json"; rc=$?
[ $rc -eq 1 ] && grep -q '^5 change(s)' "$work/out" && grep -q "default eps 1e-15 -> 1e-07" "$work/out" &&
  echo "ok: a user record pinning its own commit: exit 1, 5 changes" || fail "--profile-file: exit $rc: $(cat "$work/out")"

drift no_such_port "$repo" HEAD; rc=$?
[ $rc -eq 2 ] && grep -q "profile 'no_such_port'" "$work/out" && echo "ok: an unknown profile: exit 2" || fail "unknown: exit $rc"
drift emerging "$repo" HEAD; rc=$?   # the record's pin fd77292 is not in the fixture
[ $rc -eq 2 ] && grep -q "the pin 'fd77292' is not in the repository" "$work/out" && echo "ok: a pin the clone lacks: exit 2" ||
  fail "missing pin: exit $rc: $(cat "$work/out")"
blob=$(git -C "$repo" rev-parse "HEAD:$f")   # a record pinning a blob (megatron's 025c931a)
drift emerging "$repo" HEAD --pinned "$blob"; rc=$?
[ $rc -eq 2 ] && grep -q "is a blob, not a commit (pass --pinned REV)" "$work/out" && echo "ok: a blob pin: exit 2" ||
  fail "blob pin: exit $rc: $(cat "$work/out")"
drift emerging "$repo" no_such_ref --pinned HEAD~1; rc=$?
[ $rc -eq 2 ] && grep -q "REF 'no_such_ref'" "$work/out" && echo "ok: an unknown REF: exit 2" || fail "bad ref: exit $rc"
drift emerging "$work/none" HEAD --pinned HEAD; rc=$?
[ $rc -eq 2 ] && echo "ok: no repository: exit 2" || fail "no repo: exit $rc"
exit $status
