#!/bin/sh
# muonref test: vector releases (spec/vectors.md 2.9, NEWS).
#  1. vectors/RELEASE holds one identifier YYYY.MM.N, NEWS has a section for
#     it, and every committed vector file carries it in "release" (read
#     here with Python's json, not with muonref);
#  2. `muonref vectors` prints it, and says so when a set's release is not
#     the one this muonref generates (another, or "mixed");
#  3. `muonref check` prints it at the head of its report ("none" for a
#     file from before the first release);
#  4. `muonref vectors --diff OLD NEW` lists exactly the cases a known edit
#     of two small files added, changed and removed (by file and tcId), and
#     a removed file's cases, with the two releases;
#     vectors/release-diff.sh gives the same from two git refs (a repository
#     of the two folders made here) or a ref and a folder;
#  5. a "release" that is not an identifier is refused (exit 2, naming the
#     member), as is --diff with a missing folder.
# Cheap: a few small files of vectors/keller.  Prints a Check-style summary.
src=${MUONREF_SRCDIR:-.}
muonref=${MUONREF:-./muonref}
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || { echo "SKIP: no $py"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/release.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
checks=0 fails=0
ok() { checks=$((checks + 1)); }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "release:0:F:release:$1:0: $2"; }

# 1. the one place, NEWS, and every committed file
rel=$(cat "$src/vectors/RELEASE")
echo "$rel" | grep -qxE '[0-9]{4}\.[0-9]{2}\.[0-9]+' && [ "$(wc -l <"$src/vectors/RELEASE")" -eq 1 ] && ok ||
  bad release-file "vectors/RELEASE is not one line YYYY.MM.N: '$rel'"
grep -q "^## Vector release $rel" "$src/NEWS" && ok || bad news "NEWS has no section '## Vector release $rel'"
"$py" - "$src/vectors" "$rel" >"$work/files.out" <<'PY'
import json, pathlib, sys
files = sorted(p for p in pathlib.Path(sys.argv[1]).glob("*/*.json"))
wrong = [f"{p}: {json.loads(p.read_text()).get('release')!r}" for p in files
         if json.loads(p.read_text()).get("release") != sys.argv[2]]
print(len(files), len(wrong), *wrong[:3], sep="\n")
PY
n=$(sed -n 1p "$work/files.out") w=$(sed -n 2p "$work/files.out")
[ "${n:-0}" -gt 0 ] && [ "$w" = 0 ] && ok || bad committed "of $n vector files $w lack release $rel: $(sed -n 3p "$work/files.out")"

# 2. muonref vectors prints it
"$muonref" vectors "$src/vectors/keller" >"$work/v.out" 2>&1
sed -n 2p "$work/v.out" | grep -qx "release: $rel" && ok || bad vectors-release "muonref vectors: '$(sed -n 2p "$work/v.out")'"

# 4's files: old and new copies of three keller files, edited here with known effects
mkdir -p "$work/old/keller" "$work/new/keller"
for a in errors routing adamw; do cp "$src/vectors/keller/keller_$a.json" "$work/old/keller/"; done
cp "$src/vectors/keller/keller_errors.json" "$src/vectors/keller/keller_routing.json" "$work/new/keller/"
"$py" - "$work" >"$work/expected" <<'PY'
import json, sys
w = sys.argv[1]
def edit(path, fn):
    d = json.load(open(path)); fn(d)
    d["numberOfTests"] = sum(len(g["tests"]) for g in d["testGroups"])
    json.dump(d, open(path, "w"), indent=1)
def old(d): d["release"] = "2000.01.1"
for a in ("errors", "routing", "adamw"): edit(f"{w}/old/keller/keller_{a}.json", old)
out = []
def errors(d):  # the first case removed, the second's comment changed
    t = d["testGroups"][0]["tests"]
    out.append(f"removed keller/keller_errors.json tcId {t[0]['tcId']}: {t[0]['comment']}")
    t[1]["comment"] += " (reworded)"
    out.append(f"changed keller/keller_errors.json tcId {t[1]['tcId']}: {t[1]['comment']}")
    del t[0]
def routing(d):  # a copy of its first case added under a new tcId; the header alone changed is no case change
    t = d["testGroups"][0]["tests"]
    new = dict(t[0], tcId=max(x["tcId"] for g in d["testGroups"] for x in g["tests"]) + 1)
    t.append(new)
    d["header"].append("edited")
    out.append(f"added   keller/keller_routing.json tcId {new['tcId']}: {new['comment']}")
edit(f"{w}/new/keller/keller_errors.json", errors)
edit(f"{w}/new/keller/keller_routing.json", routing)
adamw = json.load(open(f"{w}/old/keller/keller_adamw.json"))
out += [f"removed keller/keller_adamw.json tcId {t['tcId']}: {t['comment']}"
        for g in adamw["testGroups"] for t in sorted(g["tests"], key=lambda t: t["tcId"])]
key = lambda l: (l.split()[1], int(l.split()[3].rstrip(":")))
print("release 2000.01.1 -> " + json.load(open(f"{w}/new/keller/keller_errors.json")).get("release", "none"))
print(*sorted(out, key=key), sep="\n")
print(f"1 added, 1 changed, {1 + len(out) - 3} removed cases; 0 files added, 1 removed")
PY

# 3. muonref check prints the release at the head of its report (and "none" for files from before)
"$muonref" check --impl fast-fp32 "$src/vectors/keller/keller_errors.json" >"$work/c.out" 2>&1
grep -qx "vectors release: $rel" "$work/c.out" && ok || bad check-release "muonref check: $(grep -m1 release "$work/c.out")"
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("release"); json.dump(d, open(sys.argv[2], "w"))' \
  "$src/vectors/keller/keller_errors.json" "$work/keller_errors.json"
"$muonref" check --impl fast-fp32 "$work/keller_errors.json" >"$work/c0.out" 2>&1
grep -qx "vectors release: none" "$work/c0.out" && ok || bad check-none "muonref check, no release: $(grep -m1 release "$work/c0.out")"
"$muonref" vectors "$work/old" >"$work/v0.out" 2>&1
sed -n 2p "$work/v0.out" | grep -qx "release: 2000.01.1 (this muonref generates release $rel)" && ok ||
  bad vectors-other "muonref vectors, another release: '$(sed -n 2p "$work/v0.out")'"

"$muonref" vectors "$work/old/keller/keller_adamw.json" "$src/vectors/keller/keller_errors.json" >"$work/vm.out" 2>&1
sed -n 2p "$work/vm.out" | grep -qx "release: mixed (this muonref generates release $rel)" && ok ||
  bad vectors-mixed "muonref vectors, two releases: '$(sed -n 2p "$work/vm.out")'"

# 4. the diff
"$muonref" vectors --diff "$work/old" "$work/new" >"$work/diff.out" 2>"$work/diff.err"
rc=$?
[ $rc -eq 0 ] && cmp -s "$work/expected" "$work/diff.out" && ok ||
  bad diff "exit $rc; expected vs got: $(diff "$work/expected" "$work/diff.out" | head -n 6) $(head -c 300 "$work/diff.err")"
"$muonref" vectors --diff "$work/new" "$work/new" >"$work/same.out" 2>&1
tail -n 1 "$work/same.out" | grep -qx "0 added, 0 changed, 0 removed cases; 0 files added, 0 removed" && ok ||
  bad diff-same "a folder against itself: $(tail -n 1 "$work/same.out")"

# 4b. the same through vectors/release-diff.sh with two git refs of a repository made here (and a folder)
if command -v git >/dev/null 2>&1; then
  g="$work/git"
  mkdir -p "$g" && git -C "$g" init -q && cp -r "$work/old" "$g/vectors" &&
    git -C "$g" add vectors && git -C "$g" -c user.name=t -c user.email=t@t commit -qm old &&
    rm -rf "$g/vectors" && cp -r "$work/new" "$g/vectors" && git -C "$g" add -A vectors &&
    git -C "$g" -c user.name=t -c user.email=t@t commit -qm new || bad git-setup "a repository of two releases"
  MUONREF=$muonref sh "$src/vectors/release-diff.sh" --repo "$g" HEAD~1 HEAD >"$work/gdiff.out" 2>"$work/gdiff.err"
  rc=$?
  [ $rc -eq 0 ] && cmp -s "$work/expected" "$work/gdiff.out" && ok ||
    bad diff-git "two refs: exit $rc; $(diff "$work/expected" "$work/gdiff.out" | head -n 4) $(head -c 300 "$work/gdiff.err")"
  MUONREF=$muonref sh "$src/vectors/release-diff.sh" --repo "$g" HEAD~1 "$work/new" >"$work/gdiff2.out" 2>&1
  cmp -s "$work/expected" "$work/gdiff2.out" && ok || bad diff-git-folder "a ref and a folder: $(head -n 2 "$work/gdiff2.out")"
  MUONREF=$muonref sh "$src/vectors/release-diff.sh" --repo "$g" no-such-ref HEAD >/dev/null 2>"$work/gbad.err"
  rc=$?
  [ $rc -eq 2 ] && grep -q 'no-such-ref: neither a folder nor a git ref' "$work/gbad.err" && ok ||
    bad diff-git-bad "an unknown ref: exit $rc, $(head -c 200 "$work/gbad.err")"
fi

# 5. refusals
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["release"]="1.0"; json.dump(d, open(sys.argv[1], "w"))' \
  "$work/new/keller/keller_errors.json"
"$muonref" vectors "$work/new/keller/keller_errors.json" >/dev/null 2>"$work/bad.err"
rc=$?
[ $rc -eq 2 ] && grep -q 'keller_errors.json.*member "release" must be a vector release' "$work/bad.err" && ok ||
  bad refuse-release "exit $rc: $(head -c 300 "$work/bad.err")"
"$muonref" vectors --diff "$work/old" "$work/missing" >"$work/m.out" 2>"$work/m.err"
rc=$?
[ $rc -eq 2 ] && [ ! -s "$work/m.out" ] && grep -q missing "$work/m.err" && ok ||
  bad refuse-missing "--diff with a missing folder: exit $rc, $(head -c 200 "$work/m.err")"

# two profiles' folders (a profile and its release): paired by area, the profile's name in comments no change
"$muonref" vectors --diff "$src/vectors/emerging" "$src/vectors/emerging@0.3" >"$work/rel.out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^profile emerging -> emerging@0.3: the files paired by area$' "$work/rel.out" &&
  grep -q '^changed emerging@0.3_errors.json tcId 16: ' "$work/rel.out" &&
  grep -q '^0 added, 9 changed, 0 removed cases; 0 files added, 0 removed$' "$work/rel.out" && ok ||
  bad diff-release "exit $rc: $(tail -n 3 "$work/rel.out")"

pct=100
[ "$checks" -gt 0 ] && pct=$(((checks - fails) * 100 / checks))
echo "$pct%: Checks: $checks, Failures: $fails, Errors: 0"
[ "$fails" -eq 0 ]
