#!/bin/sh
# muonref test: every committed vector file validates against
# spec/vectors.schema.json (JSON Schema draft-07, Debian's python3-jsonschema),
# every flag used by a test of a file has a structured note in that file (and
# every note is used), and a file with a broken tensor, an unnoted flag or a
# note without bugType does not pass.  Prints a Check-style summary.
src=${MUONREF_SRCDIR:-.}
py=${MUONREF_PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import jsonschema' 2>/dev/null; then
  echo "SKIP: $py has no jsonschema (apt-get install python3-jsonschema)"
  exit 77
fi
"$py" - "$src/spec/vectors.schema.json" "$src"/vectors/*/*.json <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
def note_problems(doc):
    """Every flag a test uses has a note in this file, every note is used,
    and a KNOWN_BUG note links its bug report (spec/vectors.md 2.5)."""
    used = {f for g in doc["testGroups"] for t in g["tests"] for f in t["flags"]}
    out = []
    if used - set(doc["notes"]):
        out.append(f"flags without a note: {sorted(used - set(doc['notes']))}")
    if set(doc["notes"]) - used:
        out.append(f"notes without a flag: {sorted(set(doc['notes']) - used)}")
    for flag, note in doc["notes"].items():
        if isinstance(note, dict) and note.get("bugType") == "KNOWN_BUG" and \
                not any(l.startswith("bug-reports B") for l in note.get("links", [])):
            out.append(f"{flag} is a KNOWN_BUG without a bug-reports link")
    return out
checks = fails = 0
for path in sys.argv[2:]:
    checks += 1
    doc = json.load(open(path))
    errors = list(validator.iter_errors(doc))
    if errors:
        fails += 1
        print(f"vectors-schema:0:F:schema:{path}:0: {errors[0].message} at {list(errors[0].path)}")
    for problem in note_problems(doc):
        checks += 1
        fails += 1
        print(f"vectors-schema:0:F:notes:{path}:0: {problem}")
    checks += 1
    # every tcId unique, numberOfTests right
    ids = [t["tcId"] for g in doc["testGroups"] for t in g["tests"]]
    checks += 1
    if len(ids) != len(set(ids)) or len(ids) != doc["numberOfTests"]:
        fails += 1
        print(f"vectors-schema:0:F:schema:{path}:0: tcIds not unique or numberOfTests wrong")
# the schema must reject a malformed tensor (it is not a test that cannot fail)
bad = json.load(open(sys.argv[2]))
def first_tensor(o):
    if isinstance(o, dict):
        if "hex" in o:
            return o
        for v in o.values():
            r = first_tensor(v)
            if r is not None:
                return r
    if isinstance(o, list):
        for v in o:
            r = first_tensor(v)
            if r is not None:
                return r
    return None
first_tensor(bad)["hex"] = "XYZ"
checks += 1
if validator.is_valid(bad):
    fails += 1
    print("vectors-schema:0:F:schema:broken:0: a tensor with hex 'XYZ' validates")
# the checks above must be able to fail: a flag without a note, a note
# without a bug type
for breakage in ("unnoted flag", "unused note", "bug without link"):
    bad = json.load(open(sys.argv[2]))
    if breakage == "unnoted flag":
        bad["testGroups"][0]["tests"][0]["flags"].append("NoSuchFlag")
    elif breakage == "unused note":
        bad["notes"]["NoSuchFlag"] = {"bugType": "BASIC", "description": "x", "links": ["bug-reports B01"], "faults": []}
    else:
        bad["notes"]["NoSuchFlag"] = {"bugType": "KNOWN_BUG", "description": "x", "links": ["spec/muon.md section 2"],
                                      "faults": []}
        bad["testGroups"][0]["tests"][0]["flags"].append("NoSuchFlag")
    checks += 1
    if not note_problems(bad):
        fails += 1
        print(f"vectors-schema:0:F:notes:broken:0: an {breakage} is not detected")
bad = json.load(open(sys.argv[2]))
next(iter(bad["notes"].values())).pop("bugType")
checks += 1
if validator.is_valid(bad):
    fails += 1
    print("vectors-schema:0:F:notes:broken:0: a note without bugType validates")
# a release that is not YYYY.MM.N (spec/vectors.md 2.9)
bad = json.load(open(sys.argv[2]))
bad["release"] = "1.0"
checks += 1
if validator.is_valid(bad):
    fails += 1
    print("vectors-schema:0:F:release:broken:0: a release '1.0' validates")
print(f"{(checks - fails) * 100 // checks}%: Checks: {checks}, Failures: {fails}, Errors: 0")
sys.exit(1 if fails else 0)
PY
