#!/bin/sh
# tests/check-verdicts.sh: what `muonref check --results` says about a
# failing implementation (spec/vectors.md section 7), on results files our
# fast path writes (muonref check --impl ... --write-results), so that the
# expected verdicts are known independently of any port:
#
#  1. a fault's results are diagnosed as exactly that fault, case by case;
#  2. more than one failing tensor is listed ("[failing: ...]");
#  3. an area where no case passed shows "-" as its worst deviation;
#  4. --write-failures then --baseline: the same failures are KNOWN, exit 0;
#     a case listed in the baseline that passes is FIXED; a new failure
#     still exits 1; a malformed baseline is a usage error (exit 2);
#  5. fp32 Newton-Schulz outputs judged as bf16 get the --ns-format fp32 hint;
#  6. the correct path's results match the "separate" bf16 order everywhere;
#     results mixing orders across cases get the order warning.
#
# Exit: 0 pass; 1 fail.  Environment: MUONREF_SRCDIR, MUONREF (make check).

srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
muonref=${MUONREF:-./muonref}
python=${PYTHON3:-python3}
vectors=$srcdir/vectors/nemo
work=$(mktemp -d "${TMPDIR:-/tmp}/check-verdicts.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
status=0
check() { # check DESCRIPTION COMMAND...
  d=$1; shift
  if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; status=1; fi
}

# 1. diagnosis of a fault, for every failing case
"$muonref" check --impl fast-bf16 --fault ema_momentum --quiet --write-results "$work/ema.json" "$vectors" >/dev/null
"$muonref" check --results "$work/ema.json" "$vectors" >"$work/ema.txt"
check "fault results exit 1" test $? -eq 1
nfail=$(grep -c '^FAIL' "$work/ema.txt")
ndiag=$(grep -c '^  diagnosis: exactly what fault ema_momentum gives' "$work/ema.txt")
check "every one of the $nfail failures is diagnosed as ema_momentum ($ndiag)" test "$nfail" -gt 0 -a "$nfail" -eq "$ndiag"
check "the summary counts them" grep -q "^diagnosis: $nfail failures \[ema_momentum" "$work/ema.txt"

# 2. every failing tensor named
check "a case with several failing tensors lists them" grep -q '\[failing: params\[0\], ' "$work/ema.txt"

# 3. '-' for an area where nothing passed: drop every scaling result
"$python" - "$work/ema.json" "$work/noscale.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
r['results'] = [e for e in r['results'] if e['file'] != 'nemo_scaling.json']
json.dump(r, open(sys.argv[2], 'w'))
EOF
"$muonref" check --results "$work/noscale.json" --no-diagnosis "$vectors" >"$work/noscale.txt"
check "an area with no passing case shows '-'" grep -Eq '^nemo/scaling +0 +[0-9]+  -$' "$work/noscale.txt"
check "--no-diagnosis prints no diagnosis" sh -c "! grep -q diagnosis '$work/noscale.txt'"

# 4. expected failures
"$muonref" check --results "$work/ema.json" --quiet --write-failures "$work/known.txt" "$vectors" >/dev/null
check "--write-failures lists one line per failure" test "$(grep -vc '^#' "$work/known.txt")" -eq "$nfail"
"$muonref" check --results "$work/ema.json" --baseline "$work/known.txt" "$vectors" >"$work/base.txt"
check "with the baseline the same failures exit 0" test $? -eq 0
check "they are reported KNOWN" test "$(grep -c '^KNOWN' "$work/base.txt")" -eq "$nfail"
head -n 1 "$work/known.txt" >"$work/partial.txt"
grep -v '^#' "$work/known.txt" | tail -n +2 >>"$work/partial.txt"
"$muonref" check --results "$work/ema.json" --quiet --baseline "$work/partial.txt" "$vectors" >/dev/null
check "a failure missing from the baseline still exits 1" test $? -eq 1
"$muonref" check --impl fast-bf16 --quiet --write-results "$work/good.json" "$vectors" >/dev/null
"$muonref" check --results "$work/good.json" --baseline "$work/known.txt" "$vectors" >"$work/fixed.txt"
check "baseline cases that pass now are FIXED" test "$(grep -c '^FIXED' "$work/fixed.txt")" -eq "$nfail"
printf 'not a case line\n' >"$work/bad.txt"
"$muonref" check --results "$work/good.json" --baseline "$work/bad.txt" "$vectors" >/dev/null 2>"$work/bad.err"
check "a malformed baseline exits 2" test $? -eq 2
check "naming the file and line" grep -q "bad.txt:1: expected FILE#TCID" "$work/bad.err"

# 5. fp32 outputs judged as bf16
"$muonref" check --impl fast-fp32 --quiet --write-results "$work/fp32.json" "$vectors" >/dev/null
sed 's/"nsFormat": *"fp32"/"nsFormat": "bf16"/' "$work/fp32.json" >"$work/fp32-as-bf16.json"
"$muonref" check --results "$work/fp32-as-bf16.json" "$vectors" >"$work/fp32.txt"
check "fp32 Newton-Schulz judged as bf16 gets the --ns-format fp32 hint" \
  grep -q 'judge it with --ns-format fp32' "$work/fp32.txt"

# 6. orders
"$muonref" check --results "$work/good.json" "$vectors" >"$work/good.txt"
check "the correct path passes" test $? -eq 0
n=$(sed -n 's/^bf16 evaluation orders matched (of \([0-9]*\) .*separate \([0-9]*\),.*/\1 \2/p' "$work/good.txt")
check "it matches the separate order in every case that has orders ($n)" sh -c "set -- $n; test \$# -eq 2 -a \$1 -gt 0 -a \$1 -eq \$2"
check "and gets no order warning" sh -c "! grep -q 'WARNING: no one bf16' '$work/good.txt'"
# a results file whose ns case 1 carries the keller result and case 2 the fused one, where they differ
"$python" - "$work/good.json" "$vectors/nemo_newton_schulz.json" "$work/mixed.json" <<'EOF'
import json, sys
r, v = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
tests = {t['tcId']: t for g in v['testGroups'] for t in g['tests']}
own = lambda t, o: isinstance(t['expected'].get('bf16Orders', {}).get(o), dict)
k = next(i for i, t in tests.items() if own(t, 'keller'))
f = next(i for i, t in tests.items() if i != k and own(t, 'fused'))
for e in r['results']:
    if e['file'] == 'nemo_newton_schulz.json' and e['tcId'] in (k, f):
        order = 'keller' if e['tcId'] == k else 'fused'
        e['output'] = tests[e['tcId']]['expected']['bf16Orders'][order]
json.dump(r, open(sys.argv[3], 'w'))
EOF
"$muonref" check --results "$work/mixed.json" "$vectors" >"$work/mixed.txt"
check "results in another accepted order pass" test $? -eq 0
check "results mixing orders get the warning" grep -q 'WARNING: no one bf16 evaluation order matches every case' "$work/mixed.txt"
exit $status
