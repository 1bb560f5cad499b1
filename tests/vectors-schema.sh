#!/bin/sh
# muonref test: every committed vector file validates against
# spec/vectors.schema.json (JSON Schema draft-07, Debian's python3-jsonschema),
# and a file with a broken tensor does not.  Prints a Check-style summary.
src=${MUONREF_SRCDIR:-.}
py=${MUONREF_PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import jsonschema' 2>/dev/null; then
  echo "SKIP: $py has no jsonschema (apt-get install python3-jsonschema)"
  exit 77
fi
"$py" - "$src/spec/vectors.schema.json" "$src"/vectors/nemo/*.json <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
checks = fails = 0
for path in sys.argv[2:]:
    checks += 1
    doc = json.load(open(path))
    errors = list(validator.iter_errors(doc))
    if errors:
        fails += 1
        print(f"vectors-schema:0:F:schema:{path}:0: {errors[0].message} at {list(errors[0].path)}")
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
print(f"{(checks - fails) * 100 // checks}%: Checks: {checks}, Failures: {fails}, Errors: 0")
sys.exit(1 if fails else 0)
PY
