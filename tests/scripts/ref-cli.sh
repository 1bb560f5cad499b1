#!/bin/sh
# muonref test: `muonref ref polar|ns|step FILE` on small tensor files.
# The expected values are computed here independently: the polar factor of
# a matrix with orthonormal rows is itself; Newton-Schulz of a scaled
# identity block is phi(s) on the diagonal, with phi evaluated by Horner in
# binary64 (exact to far below binary32's ulp); bad input exits 2 naming
# the file.  Prints a Check-style summary for tests/lib/summary.sh.
muonref=${MUONREF:-./muonref}
py=${MUONREF_PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checks=0; fails=0
check() { # NAME CONDITION-EXIT-STATUS
  checks=$((checks + 1))
  if [ "$2" -ne 0 ]; then fails=$((fails + 1)); echo "ref-cli:0:F:ref_cli:$1:0: failed"; fi
}
printf '{"dtype":"f32","shape":[2,3],"hex":"3f8000000000000000000000000000003f80000000000000"}' >"$tmp/m.json"

"$muonref" ref polar "$tmp/m.json" >"$tmp/polar.json"
check polar_runs $?
"$py" - "$tmp/polar.json" <<'PY'
import json, sys
q = json.load(open(sys.argv[1]))["q"]
sys.exit(0 if q["hex"] == "3f8000000000000000000000000000003f80000000000000" else 1)
PY
check polar_of_orthonormal_rows_is_itself $?

"$muonref" ref ns "$tmp/m.json" >"$tmp/ns.json"
check ns_runs $?
"$py" - "$tmp/ns.json" <<'PY'
import json, math, struct, sys
out = json.load(open(sys.argv[1]))["out"]
vals = [struct.unpack('>f', bytes.fromhex(out["hex"][8*i:8*i+8]))[0] for i in range(6)]
x = 1.0 / (math.sqrt(2.0) + 1e-7)        # X / (||X||_F + eps), spec/muon.md section 7
for _ in range(5):
    x = x * (3.4445 + x * x * (-4.7750 + x * x * 2.0315))
want = struct.unpack('>f', struct.pack('>f', x))[0]
ok = vals[0] == vals[4] and abs(vals[0] - want) <= 2 ** -23 * abs(want) and vals[1:4] == [0.0, 0.0, 0.0] and vals[5] == 0.0
sys.exit(0 if ok else 1)
PY
check ns_is_the_scalar_map_on_the_diagonal $?

printf '{"dtype":"f32","shape":[2,2],"hex":"zz"}' >"$tmp/bad.json"
"$muonref" ref ns "$tmp/bad.json" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'bad.json' "$tmp/err"
check malformed_file_exits_2_naming_it $?
"$muonref" ref ns "$tmp/missing.json" 2>/dev/null
[ $? -eq 2 ]
check missing_file_exits_2 $?
"$muonref" ref frobnicate "$tmp/m.json" 2>/dev/null
[ $? -eq 2 ]
check unknown_operation_exits_2 $?

# resource limits (spec/reference.md, "Cost and limits"): a run estimated
# above --max-cpu is refused before any work, naming the estimate
"$muonref" ref ns "$tmp/m.json" --prec 65536 --max-cpu 0.001 2>"$tmp/err" >/dev/null
[ $? -eq 2 ] && grep -q 'estimated .* s of CPU time, more than the limit of 0.001 s' "$tmp/err"
check over_cpu_limit_refused $?
"$py" -c "
import struct
v = [((i * 7919) % 13) / 13.0 - 0.5 for i in range(64 * 64)]
print('{\"dtype\":\"f32\",\"shape\":[64,64],\"hex\":\"' + ''.join('%08x' % struct.unpack('>I', struct.pack('>f', x))[0] for x in v) + '\"}')
" >"$tmp/m64.json"
"$muonref" ref polar "$tmp/m64.json" --prec 65536 2>"$tmp/err" >/dev/null
[ $? -eq 2 ] && grep -q 'more than the limit of 600 s' "$tmp/err"
check default_limit_refuses_hours_of_work $?
"$muonref" ref ns "$tmp/m.json" --max-cpu -1 2>/dev/null
[ $? -eq 2 ]
check bad_max_cpu_exits_2 $?
long=$(printf 'd%.0s' $(seq 1 4090))
"$muonref" gen --out "$tmp/$long" 2>"$tmp/err" >/dev/null
[ $? -eq 2 ] && grep -q 'PATH_MAX' "$tmp/err" && [ ! -e "$tmp/$long" ]
check gen_out_past_path_max_refused $?

echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
[ $fails -eq 0 ]
