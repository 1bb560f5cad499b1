#!/bin/sh
# muonref test: published results and submissions (issue 29 items 4 and 5;
# spec/vectors.md 9, submissions/README.md).  vectors/publish.py judges
# the committed example submission (its environment statement verified by
# `muonref check --environment`) and a results file of the fast path with
# a deliberate fault: the JSON holds each entry's counts per area as the
# judge counts them, every failing case with its diagnosis, the fault's
# explanation; the page is the JSON's rendering byte for byte; a
# submission whose statement the run contradicts (another torch version,
# mode, profile, an unknown member) is refused, exit 2, and nothing is
# written or replaced; one of an older release is refused by muonref check
# and left out of the page, which names it; docs/results.md is what
# `publish.py --render docs/results.json` writes.  No PyTorch needed.
src=${MUONREF_SRCDIR:-.}
muonref=${MUONREF:-./muonref}
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
py=${PYTHON3:-/usr/bin/python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/publish.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }
ex=$src/submissions/example-keller

# the example submission, verified alone
"$muonref" check -q --results "$ex/results.json" --environment "$ex/environment.json" \
  "$src/vectors/keller/keller_momentum.json" >"$work/ex.out" 2>&1 &&
  ok "the example submission verifies and passes: $(tail -n 1 "$work/ex.out")" ||
  fail "the example submission: $(tail -n 3 "$work/ex.out")"

# a fast-path port with a deliberate fault, and the publication of both
"$muonref" check -q --impl fast-bf16 --fault ema_momentum --write-results "$work/ema.json" \
  "$src/vectors/nemo/nemo_momentum.json" "$src/vectors/nemo/nemo_defaults.json" >/dev/null
"$muonref" check --results "$work/ema.json" "$src/vectors/nemo/nemo_momentum.json" \
  "$src/vectors/nemo/nemo_defaults.json" >"$work/ema.out" 2>&1
MUONREF=$muonref "$py" "$src/vectors/publish.py" --vectors "$src/vectors" --out "$work/pub" \
  --submissions "$src/submissions" --results fast-ema "$work/ema.json" nemo >"$work/pub.log" 2>&1 ||
  fail "publish.py exited $?: $(cat "$work/pub.log")"
"$py" - "$work/pub.json" "$work/ema.out" <<'PY' || status=1
import json, re, sys
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
bad = []
e = {x['name']: x for x in doc['entries']}
sub, ema = e.get('example-keller (submitted)'), e.get('fast-ema')
if not sub or sub['verdict'] != 'pass' or sub['passed'] != 8 or not sub.get('environment'):
    bad.append(f"the example submission: {sub and (sub['verdict'], sub['passed'], sub['failed'])}")
# the judge's own table: area passed failed
table = {m.group(1).replace('/', '.'): (int(m.group(2)), int(m.group(3)))
         for m in re.finditer(r'^(nemo/\w+) +(\d+) +(\d+)', text, re.M)}
got = {a: (c['passed'], c['failed']) for a, c in ema['areas'].items()}
if got != table:
    bad.append(f"per-area counts {got}, the judge's {table}")
total = re.search(r'^(\d+) passed, (\d+) failed$', text, re.M)
if (ema['passed'], ema['failed']) != (int(total.group(1)), int(total.group(2))) or len(ema['failures']) != ema['failed']:
    bad.append(f"totals {ema['passed']}/{ema['failed']} ({len(ema['failures'])} listed), the judge's {total.group(0)}")
if not any('ema_momentum' in x for x in ema['explanation']):
    bad.append(f"explanation {ema['explanation']}")
if any(not f['diagnosis'] for f in ema['failures']):
    bad.append('a failing case without its diagnosis')
for b in bad:
    print('FAIL:', b)
if not bad:
    print(f"ok: published: {ema['failed']} failures of the ema_momentum port listed with their diagnosis, "
          f"counts per area as the judge's, explained as {ema['explanation'][0][:40]}...")
sys.exit(1 if bad else 0)
PY
"$py" "$src/vectors/publish.py" --render "$work/pub.json" | cmp -s - "$work/pub.md" &&
  ok "the page is the rendering of its JSON" || fail "the page differs from --render of its JSON"

# a contradicted statement refuses the publication: nothing written, nothing replaced
echo keep >"$work/old.md"
for change in 's/1\.13\.0a0/2.5.1/' 's/"neutral"/"raw"/' 's/"profile": "keller"/"profile": "nemo"/' \
              's/"notes"/"comment"/'; do
  rm -rf "$work/subs" && mkdir -p "$work/subs/bad" && cp "$ex/results.json" "$work/subs/bad/" &&
    sed "$change" "$ex/environment.json" >"$work/subs/bad/environment.json"
  cp "$work/old.md" "$work/bad.md"
  MUONREF=$muonref "$py" "$src/vectors/publish.py" --vectors "$src/vectors" --out "$work/bad" \
    --submissions "$work/subs" >"$work/bad.log" 2>&1
  rc=$?
  if [ $rc -eq 2 ] && [ ! -e "$work/bad.json" ] && cmp -s "$work/old.md" "$work/bad.md" &&
     grep -q 'environment.json' "$work/bad.log"; then
    ok "statement changed by $change: refused (exit 2), nothing written: $(cut -c1-150 "$work/bad.log")"
  else
    fail "statement changed by $change: exit $rc, $(cat "$work/bad.log")"
  fi
done

# a statement of another release: muonref check refuses it; the publication leaves it out and says so
sed 's/"vectors": "[^"]*"/"vectors": "2020.01.1"/' "$ex/environment.json" >"$work/subs/bad/environment.json"
"$muonref" check -q --results "$ex/results.json" --environment "$work/subs/bad/environment.json" \
  "$src/vectors/keller/keller_momentum.json" >"$work/rel.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'member "vectors" is "2020.01.1"' "$work/rel.out" &&
  ok "a statement of release 2020.01.1: refused by muonref check (exit 2)" || fail "release 2020.01.1: exit $rc, $(cat "$work/rel.out")"
MUONREF=$muonref "$py" "$src/vectors/publish.py" --vectors "$src/vectors" --out "$work/stale" \
  --submissions "$work/subs" >"$work/stale.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'nothing to publish' "$work/stale.log" &&
  ok "a submission of an older release alone: not listed, nothing to publish (exit 2)" ||
  fail "an older release: exit $rc, $(cat "$work/stale.log")"
cp -r "$ex" "$work/subs/example"
MUONREF=$muonref "$py" "$src/vectors/publish.py" --vectors "$src/vectors" --out "$work/stale" \
  --submissions "$work/subs" >"$work/stale.log" 2>&1 &&
  grep -q '^Not listed: submission bad, judged on vector release 2020.01.1' "$work/stale.md" &&
  ! grep -q '^## bad' "$work/stale.md" && grep -q '^## example (submitted)' "$work/stale.md" &&
  ok "beside a current one: listed the current, named the older as not listed" ||
  fail "an older release beside a current one: $(cat "$work/stale.log")"

# the committed page is its JSON's rendering
if [ -f "$src/docs/results.json" ]; then
  "$py" "$src/vectors/publish.py" --render "$src/docs/results.json" | cmp -s - "$src/docs/results.md" &&
    ok "docs/results.md is the rendering of docs/results.json" ||
    fail "docs/results.md is not what publish.py --render docs/results.json writes"
else
  fail "no docs/results.json (make results writes it)"
fi
exit $status
