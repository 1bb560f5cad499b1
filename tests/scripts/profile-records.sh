#!/bin/sh
# muonref test: the profile records (spec/profiles/NAME.json) are the one source of every
# profile, and what is generated from them is in step:
#  - every record validates against spec/profiles/profile.schema.json (JSON Schema draft-07),
#    and the schema's fields, enum spellings, key kinds and areas are exactly the C reader's
#    (vectors/format/record.c: a record with an unknown value is refused with the accepted list);
#  - core/profile_table.h, include/muonref/profile_ids.h, core/checks_table.h and
#    include/muonref/catalogue_ids.h equal `muonref profile --c-table`, `--c-ids`, `--c-checks`
#    and `--c-catalogue-ids` (make profile-tables), a message changed in a record is in the
#    catalogues' table, and a folder whose catalogues break a rule is refused; the table of spec/profiles/README.md equals
#    `muonref profile --markdown`, and `muonref profile` lists every record;
#  - the option keys of spec/vectors.schema.json are the union of the records' keys (and its
#    scheduledOptions the union of their schedulable keys);
#  - a record that breaks a rule is refused with exit 2 and a message naming the file, the
#    member and the rule (and each check can fail: a changed table is caught).
# Prints a Check-style summary.  Exit 0 pass, 1 fail, 77 skip (no python3-jsonschema).
src=${MUONREF_SRCDIR:-.}
muonref=${MUONREF:-./muonref}
py=${MUONREF_PYTHON:-/usr/bin/python3}
"$py" -c 'import jsonschema' 2>/dev/null || { echo "SKIP: $py has no jsonschema (apt-get install python3-jsonschema)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/profile-records.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
checks=0 fails=0
ok() { checks=$((checks + 1)); }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "profile-records:0:F:records:$1:0: $2"; }
rec=$src/spec/profiles

# 1. the generated files and the markdown table
"$muonref" profile --c-table --records "$rec" >"$work/table.h" 2>"$work/err" || bad c-table "$(cat "$work/err")"
cmp -s "$work/table.h" "$src/core/profile_table.h" && ok || bad c-table "core/profile_table.h is not the records' (make profile-tables)"
"$muonref" profile --c-ids --records "$rec" >"$work/ids.h" 2>"$work/err" || bad c-ids "$(cat "$work/err")"
cmp -s "$work/ids.h" "$src/include/muonref/profile_ids.h" && ok || bad c-ids "include/muonref/profile_ids.h is not the records' (make profile-tables)"
"$muonref" profile --c-checks --records "$rec" >"$work/checks.h" 2>"$work/err" || bad c-checks "$(cat "$work/err")"
cmp -s "$work/checks.h" "$src/core/checks_table.h" && ok || bad c-checks "core/checks_table.h is not the records' (make profile-tables)"
"$muonref" profile --c-catalogue-ids --records "$rec" >"$work/catids.h" 2>"$work/err" || bad c-catalogue-ids "$(cat "$work/err")"
cmp -s "$work/catids.h" "$src/include/muonref/catalogue_ids.h" && ok ||
  bad c-catalogue-ids "include/muonref/catalogue_ids.h is not the records' (make profile-tables)"
# the catalogues' rows come from the records: a message changed in a copy of the records is in
# the table written from them; a folder whose catalogues break a rule is refused by file and member
mkdir -p "$work/recs" && cp "$rec"/*.json "$work/recs/"
sed 's/"Invalid weight_decay: {}"/"Invalid weight decay (timm): {}"/' "$rec/timm.json" >"$work/recs/timm.json"
"$muonref" profile --c-checks --records "$work/recs" >"$work/checks2.h" 2>&1
grep -q '"Invalid weight decay (timm): {}"' "$work/checks2.h" && ! grep -q '"Invalid weight_decay: {}"' "$work/checks2.h" &&
  ok || bad c-checks-from-records "a message changed in timm.json is not in the table: $(head -n 3 "$work/checks2.h")"
cp "$rec/timm.json" "$work/recs/timm.json"
catalogue_refused() { # NAME RECORD SED-EXPRESSION EXPECTED-TEXT
  sed "$3" "$rec/$2.json" >"$work/recs/$2.json"
  "$muonref" profile --c-checks --records "$work/recs" >"$work/$1.out" 2>&1; rc=$?
  if [ $rc -eq 2 ] && grep -qF "$work/recs/" "$work/$1.out" && grep -qF -- "$4" "$work/$1.out"; then ok
  else bad "catalogue-$1" "exit $rc, expected 2 and '$4': $(cat "$work/$1.out")"; fi
  cp "$rec/$2.json" "$work/recs/$2.json"
}
catalogue_refused same-id paddle '/"name": "paddle",/{n;s/"id": 6/"id": 5/}' 'member "catalogue.id": 5 is the number of the catalogue'
n_cat=$(grep -l '^  "catalogue": {' "$rec"/*.json | wc -l)
catalogue_refused gap paddle '/"name": "paddle",/{n;s/"id": 6/"id": 40/}' "member \"catalogue.id\": the catalogues' numbers must be 0 to $((n_cat - 1))"
catalogue_refused checks-of paddle 's/"checks_of": "none"/"checks_of": "nothing"/' \
  "member \"catalogue.checks_of\": no record of the folder defines the catalogue 'nothing'"
catalogue_refused checks-of-chain megatron 's/"checks_of": "emerging"/"checks_of": "paddle"/' \
  "member \"catalogue.checks_of\": 'paddle' takes its rows from 'none' itself"
# the record of the highest catalogue number, so that the others stay numbered 0 to n - 1
catalogue_refused undefined megatron@0.17 '/"catalogue": {/,/^  },/d' \
  "member \"defaults.catalogue\": 'megatron_0_17' is a catalogue of this build, but no record of the folder defines it"
catalogue_refused newline timm 's/"Invalid weight_decay: {}"/"Invalid\\nweight_decay: {}"/' \
  'member "catalogue.checks[1].message": must hold no control character'
catalogue_refused reserved timm '/^  "catalogue"/,/"name"/s/"name": "timm",/"name": "count",/' "member \"catalogue.name\": 'count' is taken"
catalogue_refused itself paddle 's/"checks_of": "none"/"checks_of": "paddle"/' 'member "catalogue.checks_of": names the catalogue itself'
catalogue_refused uncovered moonlight '/"field": "adam_eps", "rule": "finite"/d; s/"message": "Invalid AdamW betas: {}"},$/"message": "Invalid AdamW betas: {}"}/' \
  'member "catalogue.checks": no row (in the head) checks adam_eps'
catalogue_refused unbounded nemo 's/"min": 1, "max": 1000/"min": 1/' \
  'member "catalogue.checks": the rows on ns_steps (in the head) accept values above 1000'
"$muonref" profile --markdown --records "$rec" >"$work/table.md" 2>"$work/err" || bad markdown "$(cat "$work/err")"
sed -n '/^<!-- muonref profile --markdown -->$/,/^<!-- end -->$/p' "$src/spec/profiles/README.md" | sed '1d;$d' >"$work/readme.md"
cmp -s "$work/table.md" "$work/readme.md" && ok ||
  bad markdown "spec/profiles/README.md's table is not \`muonref profile --markdown\` (paste it between the markers)"
# the fields table (spec/profiles/fields.md), as the profiles table
"$muonref" profile --fields-markdown --records "$rec" >"$work/fields.md" 2>"$work/err" || bad fields-markdown "$(cat "$work/err")"
sed -n '/^<!-- muonref profile --fields-markdown -->$/,/^<!-- end -->$/p' "$src/spec/profiles/fields.md" | sed '1d;$d' >"$work/page.md"
cmp -s "$work/fields.md" "$work/page.md" && [ "$(wc -l <"$work/fields.md")" -gt 60 ] && ok ||
  bad fields-markdown "spec/profiles/fields.md's table is not \`muonref profile --fields-markdown\` (paste it between the markers)"
# the completeness tables (spec/profiles/completeness.md), as the profiles table
"$muonref" profile --completeness-markdown --records "$rec" >"$work/complete.md" 2>"$work/err" ||
  bad completeness-markdown "$(cat "$work/err")"
sed -n '/^<!-- muonref profile --completeness-markdown -->$/,/^<!-- end -->$/p' "$src/spec/profiles/completeness.md" |
  sed '1d;$d' >"$work/page.md"
cmp -s "$work/complete.md" "$work/page.md" && grep -q '^| all | ' "$work/complete.md" && ok ||
  bad completeness-markdown "spec/profiles/completeness.md's tables are not \`muonref profile --completeness-markdown\` (paste them between the markers)"
# a folder without records is refused, not written as an empty table; two tables at once are refused by name
mkdir -p "$work/empty"
"$muonref" profile --completeness-markdown --records "$work/empty" >"$work/empty.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "no profile records" "$work/empty.out" && ok || bad empty-records "exit $rc: $(cat "$work/empty.out")"
"$muonref" profile --fields-markdown --completeness-markdown >"$work/two.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "one generated table at a time: --completeness-markdown" "$work/two.out" && ok ||
  bad two-tables "exit $rc: $(head -n 2 "$work/two.out")"
"$muonref" profile emerging --fields-markdown >"$work/name.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "takes no NAME" "$work/name.out" && ok || bad table-with-name "exit $rc: $(head -n 2 "$work/name.out")"
# every field of the option table has a row
for f in $("$muonref" profile nemo | awk '/^[a-z]/ { on = /^fields / ; next } on && /^  [a-z]/ { print $1 }'); do
  grep -q "^| \`$f\` |" "$work/fields.md" || { bad fields-rows "no row for the field $f"; break; }
done
# the check can fail: a table with one row changed is caught
sed '$s/|/| x/' "$work/readme.md" >"$work/changed.md"
cmp -s "$work/table.md" "$work/changed.md" && bad self-check "a changed table passes" || ok
"$muonref" profile >"$work/list" 2>&1 || bad list "muonref profile: $(cat "$work/list")"
nrec=$(ls "$rec"/*.json | grep -vc '/profile\.schema\.json$')
[ "$(wc -l <"$work/list")" -eq "$nrec" ] && ok || bad list "muonref profile lists $(wc -l <"$work/list") profiles, the records are $nrec"
# every record's test port exists and defines its class (what scripts read from --test-ports)
"$muonref" profile --test-ports --records "$rec" >"$work/ports" 2>&1 || bad test-ports "$(cat "$work/ports")"
[ "$(wc -l <"$work/ports")" -eq "$nrec" ] && ok || bad test-ports "--test-ports lists $(wc -l <"$work/ports") ports, the records are $nrec"
while read -r name port adapter mode nsf ctor; do
  file=${port%%:*} cls=${port#*:}
  grep -q "^class $cls\b" "$src/$file" 2>/dev/null && ok || bad "port-$name" "test_port $file has no class $cls"
done <"$work/ports"
for p in $(awk '{print $1}' "$work/list"); do
  "$muonref" profile --json "$p" >"$work/$p.resolved.json" || bad json "muonref profile --json $p failed"
done
# the resolved record gives the catalogue a record defines as the record holds it
"$py" - "$rec" "$work" >"$work/cat.out" 2>&1 <<'PY' && ok || bad json-catalogue "$(cat "$work/cat.out")"
import glob, json, os, sys
rec, work = sys.argv[1:3]
bad, n = [], 0
for p in glob.glob(os.path.join(rec, '*.json')):
    if p.endswith('profile.schema.json'):
        continue
    r = json.load(open(p))
    n += 'catalogue' in r
    if r.get('catalogue') != json.load(open(os.path.join(work, r['name'] + '.resolved.json'))).get('catalogue'):
        bad.append(os.path.basename(p))
sys.exit(f"the catalogue of {bad} differs in muonref profile --json" if bad or n < 12 else 0)
PY

# 2. the schema against the records and the C reader; the vector schema's keys
"$muonref" profile --json nemo >"$work/nemo.resolved.json"
"$py" - "$src" "$muonref" "$work" >"$work/py.out" 2>&1 <<'PY'
import glob, json, os, subprocess, sys
import jsonschema
src, muonref, work = sys.argv[1:4]
muonref = os.path.abspath(muonref) if os.sep in muonref else muonref
rec = os.path.join(src, 'spec/profiles')
schema = json.load(open(os.path.join(rec, 'profile.schema.json')))
jsonschema.Draft7Validator.check_schema(schema)
v = jsonschema.Draft7Validator(schema)
out = []
records = {}
for path in sorted(glob.glob(os.path.join(rec, '*.json'))):
    if path.endswith('profile.schema.json'):
        continue
    r = json.load(open(path))
    records[r['name']] = r
    for e in v.iter_errors(r):
        out.append(f"schema {os.path.basename(path)}: {e.message} at {list(e.path)}")
fields = schema['definitions']['options']['properties']
c_fields = list(json.load(open(os.path.join(work, 'nemo.resolved.json')))['defaults'])
if list(fields) != c_fields:
    out.append(f"schema fields {list(fields)} are not the C reader's {c_fields} (vectors/format/record.c muonref_record_fields)")
def refused_list(record):
    """The accepted values the C reader names when it refuses `record`."""
    # a short relative path: the message (at most 511 bytes, MUONREF_ERROR_MESSAGE_MAX) names it before the list
    json.dump(record, open(os.path.join(work, 'probe.json'), 'w'))
    r = subprocess.run([muonref, 'profile', '--profile-file', 'probe.json'], capture_output=True, text=True, cwd=work)
    msg = r.stderr.strip()
    if r.returncode != 2:
        return None, f"exit {r.returncode}: {msg}"
    tail = msg.split('expected one of ')[-1] if 'expected one of' in msg else msg.split('must be one of ')[-1]
    if 'vector area' in msg:
        tail = msg.split('(')[-1].rstrip(')')
        return [s.strip() for s in tail.split(',')], msg
    return [s.strip(" '()") for s in tail.split(',') if s.strip(" '()")], msg
base = {'name': 'probe', 'base': 'nemo', 'source': {'repository': 'x/y', 'paths': ['p.py'], 'commit': '0'}}
for name, f in fields.items():
    if 'enum' not in f:
        continue
    got, msg = refused_list(dict(base, defaults={name: '?'}))
    if got != f['enum']:
        out.append(f"schema enum of {name} {f['enum']} is not the C reader's {got} ({msg})")
kinds = schema['definitions']['key']['properties']['kind']['enum']
# the C reader's message gives the number of kinds (their list is longer than a message holds);
# each of the schema's kinds must then be one the reader knows
_, msg = refused_list(dict(base, keys=[{'name': 'lr', 'kind': '?', 'field': 'lr'}]))
if f"expected one of the {len(kinds)} kinds" not in msg:
    out.append(f"schema key kinds ({len(kinds)}) are not as many as the C reader's ({msg})")
for kind in kinds:
    _, msg = refused_list(dict(base, keys=[{'name': 'lr', 'kind': kind, 'field': 'lr'}]))
    if 'is no key kind' in msg:
        out.append(f"schema key kind {kind!r} is not the C reader's ({msg})")
areas = schema['properties']['areas']['items']['enum']
got, msg = refused_list(dict(base, areas=['?']))
if got != areas:
    out.append(f"schema areas {areas} are not the generator's {got} ({msg})")
# the vector schema's option keys: the union of the records' (base records give theirs)
vs = json.load(open(os.path.join(src, 'spec/vectors.schema.json')))['definitions']
keys = {k['name'] for r in records.values() for k in r.get('keys', [])}
sched = {k['name'] for r in records.values() for k in r.get('keys', []) if k.get('schedulable')}
if set(vs['options']['properties']) != keys:
    out.append(f"spec/vectors.schema.json options: {sorted(set(vs['options']['properties']) ^ keys)} differ from the records' keys")
if set(vs['scheduledOptions']['properties']) != sched:
    out.append(f"spec/vectors.schema.json scheduledOptions: {sorted(set(vs['scheduledOptions']['properties']) ^ sched)} "
               "differ from the records' schedulable keys")
# the check can fail: a schema without one field is caught
if list(fields)[1:] == c_fields:
    out.append("self-check: a schema without its first field passes")
for line in out:
    print(line)
print(f"checked {len(records)} records")
PY
if grep -qv '^checked ' "$work/py.out"; then
  grep -v '^checked ' "$work/py.out" | while read -r line; do echo "profile-records:0:F:records:schema:0: $line"; done
  fails=$((fails + 1)); checks=$((checks + 1))
else
  ok
fi

# 3. bad records: exit 2, the file, the member and the rule named
refuse() { # NAME EXPECTED-TEXT JSON
  printf '%s\n' "$3" >"$work/$1.json"
  "$muonref" profile --profile-file "$work/$1.json" >"$work/$1.out" 2>&1; rc=$?
  if [ $rc -eq 2 ] && grep -qF "$work/$1.json" "$work/$1.out" && grep -qF -- "$2" "$work/$1.out"; then ok
  else bad "refuse-$1" "exit $rc, expected 2 and '$2': $(cat "$work/$1.out")"; fi
}
S='"source": {"repository": "me/myport", "paths": ["muon.py"], "commit": "0123abc"}'
refuse syntax "$work/syntax.json:2:0: string or '}' expected" '{"name": "x",'
refuse member 'member "colour": is not a member' "{\"name\": \"mine\", \"base\": \"keller\", $S, \"colour\": 1}"
refuse nobase 'member "base": is required' "{\"name\": \"mine\", $S}"
refuse unknownbase "member \"base\": 'adam' is not a built-in" "{\"name\": \"mine\", \"base\": \"adam\", $S}"
refuse builtin "member \"name\": 'keller' is already a profile" "{\"name\": \"keller\", \"base\": \"keller\", $S}"
refuse id 'member "id": belongs to built-in' "{\"name\": \"mine\", \"id\": 11, \"base\": \"keller\", $S}"
refuse source 'member "source": needs "commit" or "release"' '{"name": "mine", "base": "keller", "source": {"repository": "a/b", "paths": ["m.py"]}}'
refuse field 'member "defaults.ns_epsilon": is not a field' "{\"name\": \"mine\", \"base\": \"keller\", $S, \"defaults\": {\"ns_epsilon\": 1e-8}}"
refuse type 'member "defaults.weight_decay": must be a number' "{\"name\": \"mine\", \"base\": \"keller\", $S, \"defaults\": {\"weight_decay\": \"0.1\"}}"
refuse preset "member \"defaults.coeffs\": 'quartic' is no coefficient preset" "{\"name\": \"mine\", \"base\": \"keller\", $S, \"defaults\": {\"coeffs\": \"quartic\"}}"
refuse invalid 'member "defaults": the profile'"'"'s defaults are not valid options: Invalid Newton-Schulz epsilon: -1e-08' \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"defaults\": {\"ns_eps\": -1e-8}}"
refuse kindfield 'member "keys[0].field": a key of kind betas sets the field adam_beta1, not lr' \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"keys\": [{\"name\": \"b\", \"kind\": \"betas\", \"field\": \"lr\"}]}"
refuse duplicate "member \"keys\": the key 'lr' is named twice" \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"rename_keys\": {\"weight_decay\": \"lr\"}}"
refuse rename "member \"rename_keys.wd\": 'wd' is not a key" "{\"name\": \"mine\", \"base\": \"keller\", $S, \"rename_keys\": {\"wd\": \"decay\"}}"
refuse area "member \"areas[0]\": must be the name of a vector area" "{\"name\": \"mine\", \"base\": \"keller\", $S, \"areas\": [\"speed\"]}"
refuse name 'member "name": must be a lower-case name' "{\"name\": \"My Port\", \"base\": \"keller\", $S}"
# a catalogue of checks: its rows' rules and fields (in a copy of the records), and none in a user's record
catalogue_refused checkrule timm 's/{"field": "lr", "rule": "nonnegative", "message": "Invalid learning rate: {}"}/{"field": "lr", "rule": "range", "message": "Invalid learning rate: {}"}/' \
  "member \"catalogue.checks[0].rule\": 'range' cannot check the field 'lr'"
catalogue_refused checkname timm 's/{"field": "weight_decay", "rule": "nonnegative"/{"field": "weight_decay", "rule": "positive"/' \
  "member \"catalogue.checks[1].rule\": 'positive' is not a rule"
catalogue_refused checkmin timm 's/{"field": "lr", "rule": "nonnegative", "message"/{"field": "lr", "rule": "nonnegative", "min": 0, "message"/' \
  'member "catalogue.checks[0].min": belongs to a row of rule range only'
catalogue_refused checkvalue timm 's/"Invalid learning rate: {}"/"Invalid learning rate: {} {}"/' \
  'member "catalogue.checks[0].message": may hold "{}" (the value) once only'
catalogue_refused fallbackitem optax 's/"fallback": \["options", "shape"\]/"fallback": ["options", "dtype"]/' \
  'member "catalogue.fallback": item 1 must be "options" or "shape", each once'
catalogue_refused fallbackrow emerging 's/"rule": "finite", "fallback": true, "message": "Invalid learning rate/"rule": "finite", "fallback": "yes", "message": "Invalid learning rate/' \
  'member "catalogue.checks[0].fallback": must be true'
catalogue_refused checksnone paddle 's/"checks_of": "none"/"checks_of": ""/' 'member "catalogue.checks": is required without checks_of'
# a user's record: no catalogue of its own (said before its rows' errors), and its base's catalogue
C='"catalogue": {"name": "mine", "id": 0, "source": "my port"'
refuse usercatalogue 'member "catalogue": belongs to built-in records only' \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, $C, \"checks\": [{\"field\": \"lr\", \"rule\": \"range\", \"message\": \"x\"}]}}"
refuse usercataloguefield "member \"defaults.catalogue\": a user's record keeps its base's catalogue of checks ('none')" \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"defaults\": {\"catalogue\": \"nemo\"}}"
# a release's record: NAME@RELEASE on the base NAME (spec/profiles/README.md, "Releases")
refuse release 'member "name": must be a lower-case name [a-z][a-z0-9_]*, optionally @RELEASE' \
  "{\"name\": \"keller@x1\", \"base\": \"keller\", $S}"
refuse releasebase "member \"base\": must be 'keller': a release's record (keller@0.1) is its sibling's" \
  "{\"name\": \"keller@0.1\", \"base\": \"moonlight\", $S}"
printf '%s\n' "{\"name\": \"keller@0.1\", \"base\": \"keller\", $S, \"defaults\": {\"ns_eps\": 1e-8}}" >"$work/rel.json"
"$muonref" profile --profile-file "$work/rel.json" >"$work/rel.out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q '^profile  *keller@0.1$' "$work/rel.out" && ok || bad release-good "exit $rc: $(head -n 3 "$work/rel.out")"
# a default its own key cannot give: it would be written into every vector as "?"
refuse unspelled "member \"defaults\": no value of the key 'use_adjusted_lr' (kind use_adjusted_lr) gives these defaults" \
  "{\"name\": \"mine\", \"base\": \"pytorch_optimizer\", $S, \"defaults\": {\"scale_mode\": \"fan_out\"}}"
refuse unspelledbool "member \"defaults\": no value of the key 'flatten' (kind flatten) gives these defaults" \
  "{\"name\": \"mine\", \"base\": \"dion\", $S, \"defaults\": {\"conv_mode\": \"keller\"}}"
T='"test_port": {"file": "m.py", "class": "M", "adapter": "keller", "ns_format": "bf16", "mode": "neutral", "constructor": "groups"'
refuse refuses 'member "test_port.refuses": must be an array of at most 4 strings' \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, $T, \"refuses\": \"AssertionError: \"}}"
refuse refusesitem 'member "test_port.refuses[]": must not be empty' "{\"name\": \"mine\", \"base\": \"keller\", $S, $T, \"refuses\": [\"\"]}}"
refuse unexpressedkey "member \"not_expressed[0]\": names 'eps', a key of the record: it is expressed" \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"not_expressed\": [{\"option\": \"eps\", \"why\": \"x\"}]}"
refuse unexpressedwhy 'member "not_expressed[0].why": must not be empty' \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"not_expressed\": [{\"option\": \"ema\", \"why\": \"\"}]}"
refuse unexpressedname 'member "not_expressed[0].option": must be an option'"'"'s name' \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"not_expressed\": [{\"option\": \"eps \", \"why\": \"x\"}]}"
refuse unexpressedmember 'member "not_expressed[0].reason": is not a member' \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"not_expressed\": [{\"option\": \"ema\", \"reason\": \"x\"}]}"
refuse unexpressedfalse 'member "not_expressed[0]": member "unobservable" must be true where given' \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"not_expressed\": [{\"option\": \"ema\", \"why\": \"x\", \"unobservable\": false}]}"
# "unobservable" is kept through --json and inherited: paddle's kernel thresholds on a record based on it
printf '%s\n' "{\"name\": \"mine\", \"base\": \"paddle\", $S}" >"$work/blind.json"
"$muonref" profile --json --profile-file "$work/blind.json" >"$work/blind.out" 2>&1
[ "$(grep -c '"unobservable": true' "$work/blind.out")" -eq 4 ] && ok ||
  bad unobservable-inherit "a record on paddle: $(grep -c '"unobservable": true' "$work/blind.out") options marked unobservable, expected 4"
# a record on a base inherits the base's options not expressed, less those its own keys express
printf '%s\n' "{\"name\": \"mine\", \"base\": \"timm\", $S, \"rename_keys\": {\"lr\": \"capturable\"}}" >"$work/inherit.json"
"$muonref" profile --json --profile-file "$work/inherit.json" >"$work/inherit.out" 2>&1
grep -q '"option": "adamw_lr"' "$work/inherit.out" && ! grep -q '"option": "capturable"' "$work/inherit.out" && ok ||
  bad unexpressed-inherit "a record on timm whose key capturable is expressed: $(grep -c option "$work/inherit.out") options listed"
"$muonref" profile --profile-file "$work/no-such-file.json" >"$work/nofile.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "no-such-file.json: cannot read" "$work/nofile.out" && ok || bad nofile "exit $rc: $(cat "$work/nofile.out")"
# a good one: printed under its own name, with the base's keys renamed
printf '%s\n' "{\"name\": \"mine\", \"base\": \"keller\", $S, \"defaults\": {\"ns_eps\": 1e-8, \"weight_decay\": 0.1}, \"rename_keys\": {\"weight_decay\": \"wd\"}}" >"$work/good.json"
"$muonref" profile --profile-file "$work/good.json" >"$work/good.out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q '^profile  *mine$' "$work/good.out" && grep -q '^  wd  *0\.1$' "$work/good.out" &&
  grep -q '^  ns_eps  *1e-08$' "$work/good.out" && ok || bad good "exit $rc: $(cat "$work/good.out")"

# a second-moment field set while moment2 is none has no effect: refused, not silently untested
refuse inertrescale 'member "defaults": moment2_rescale is set while moment2 is "none"' \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"defaults\": {\"moment2_rescale\": \"unit\"}}"
refuse inertbeta 'member "defaults": moment2_beta is set (inherited from the base '"'"'normuon'"'"') while moment2 is "none"' \
  "{\"name\": \"mine\", \"base\": \"normuon\", $S, \"defaults\": {\"moment2\": \"none\", \"moment2_rescale\": \"none\"}}"
# bf16_refusal is inherited (a copy of emerging refuses bf16 parameters as emerging does); null clears it
printf '%s\n' "{\"name\": \"mine\", \"base\": \"emerging\", $S}" >"$work/refusal.json"
printf '%s\n' "{\"name\": \"mine\", \"base\": \"emerging\", $S, \"bf16_refusal\": null}" >"$work/norefusal.json"
"$muonref" profile --json --profile-file "$work/refusal.json" >"$work/refusal.out" 2>&1
"$muonref" profile --json --profile-file "$work/norefusal.json" >"$work/norefusal.out" 2>&1
grep -q '"message": "Input tensor x must be in float32, got torch.bfloat16"' "$work/refusal.out" &&
  ! grep -q '"bf16_refusal"' "$work/norefusal.out" && ok ||
  bad refusal-inherit "inherited: $(grep -c bf16_refusal "$work/refusal.out"), cleared: $(grep -c bf16_refusal "$work/norefusal.out")"
refuse coefftypesdefault "member \"coefficient_types\": must hold the defaults' preset 'quintic'" \
  "{\"name\": \"mine\", \"base\": \"emerging\", $S, \"coefficient_types\": [\"simple\"]}"
refuse coefftypesnokey 'member "coefficient_types": the record has no key of kind coefficient_type' \
  "{\"name\": \"mine\", \"base\": \"keller\", $S, \"coefficient_types\": [\"simple\"]}"
refuse coefftypesrepeat "member \"coefficient_types\": item 1 repeats 'quintic'" \
  "{\"name\": \"mine\", \"base\": \"emerging\", $S, \"coefficient_types\": [\"quintic\", \"quintic\"]}"
refuse coefftypes 'member "coefficient_types": item 1 must be a preset of the key kind coefficient_type' \
  "{\"name\": \"mine\", \"base\": \"emerging\", $S, \"coefficient_types\": [\"quintic\", \"quartic\"]}"
refuse unmodeledempty 'member "bf16_unmodeled": must not be empty' "{\"name\": \"mine\", \"base\": \"keller\", $S, \"bf16_unmodeled\": \"\"}"

# 4. keys whose fields follow the group's branch (kinds betas_by_branch, eps_by_branch): a Muon group's
# betas are (momentum, moment2_beta), an AdamW group's (adam_beta1, adam_beta2); eps moment2_eps or
# adam_eps.  The committed pytorch_optimizer_adamuon vectors write them so, and the C reader reads each
# group's back (the generator's round trip): a vector group's betas are its fields' values.
"$py" - "$src/vectors/pytorch_optimizer_adamuon" >"$work/branch.out" 2>&1 <<'PY' && ok || bad by-branch "$(cat "$work/branch.out")"
import glob, json, sys
seen = {True: set(), False: set()}
for f in sorted(glob.glob(sys.argv[1] + '/*.json')):
    for g in json.load(open(f))['testGroups']:
        for t in g['tests']:
            for grp in t.get('groups', []):
                o = grp.get('options', {})
                if 'betas' in o and 'use_muon' in o:
                    seen[o['use_muon']].add(tuple(o['betas']))
# the Muon groups' betas include AdaMuon's default (0.9, 0.95) and a varied momentum; the AdamW groups' (0.9, 0.999)
assert (0.9, 0.95) in seen[True] and len(seen[True]) > 1, seen[True]
assert (0.9, 0.999) in seen[False], seen[False]
print('ok', {k: len(v) for k, v in seen.items()})
PY
# bf16_unmodeled (spec/vectors.md 5.2): no step case with a Muon parameter of such a profile is Bf16Exact,
# and its ns cases are
"$py" - "$rec" "$src/vectors" >"$work/unmodeled.out" 2>&1 <<'PY' && ok || bad bf16-unmodeled "$(cat "$work/unmodeled.out")"
import glob, json, os, sys
names = [json.load(open(p))['name'] for p in glob.glob(sys.argv[1] + '/*.json')
         if os.path.basename(p) != 'profile.schema.json' and 'bf16_unmodeled' in json.load(open(p))]
assert names, 'no record has bf16_unmodeled'
for n in names:
    step_exact = ns_exact = muon_steps = 0
    for f in glob.glob(f'{sys.argv[2]}/{n}/*.json'):
        for g in json.load(open(f))['testGroups']:
            for t in g['tests']:
                exp = t.get('expected', {})
                if isinstance(exp, dict) and 'params' in exp:  # a step case: Muon parameters have a momentum buffer
                    if any(s and 'momentum_buffer' in s for s in exp.get('state', [])):
                        muon_steps += 1
                        step_exact += 'expectedBf16' in t
                elif isinstance(exp, dict) and 'bf16' in exp:  # an ns or transpose case's exact bf16 output
                    ns_exact += 1
    print(n, 'step cases with a Muon parameter', muon_steps, 'of them with expectedBf16', step_exact,
          'ns cases with expectedBf16', ns_exact)
    assert muon_steps > 0 and ns_exact > 0 and step_exact == 0, n
PY

echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
[ $fails -eq 0 ]
