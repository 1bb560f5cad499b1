#!/bin/sh
# tests/scripts/check-verdicts.sh: what `muonref check --results` says about a
# failing implementation (spec/vectors.md section 7), on results files our
# fast path writes (muonref check --impl ... --write-results), so that the
# expected verdicts are known independently of any port:
#
#  1. a fault's results are diagnosed as exactly that fault, case by case;
#  2. more than one failing tensor is listed ("[failing: ...]"), p.grad
#     after the step among them where the parameters fail too;
#  3. an area where no case passed shows "-" as its worst deviation;
#  4. --write-failures then --baseline: the same failures are KNOWN, exit 0;
#     a case listed in the baseline that passes is FIXED; a new failure
#     still exits 1; a malformed baseline is a usage error (exit 2);
#  5. fp32 Newton-Schulz outputs judged as bf16 get the --ns-format fp32 hint;
#  6. the correct path's results match the "separate" bf16 order everywhere;
#     results mixing orders across cases get the order warning;
#  7. overflow (spec/muon.md 7.3): the fast path passes the area in bf16 and
#     fp32 and matches no norm-overflow alternative; results carrying the
#     alternative (a zero Newton-Schulz output) pass, named per case and
#     counted; NaN in their place fails naming the alternative; a finite run
#     of the bf16-infinity case fails, a non-finite one passes.
#  8. state of a parameter without gradient (spec/vectors.md 2.1): in a
#     MissingGradientCounted case, null where the expected state is all
#     zero buffers passes (kozistr/pytorch_optimizer creates none); null for
#     a parameter that had gradients fails, and so does the same null in the
#     case without the flag; where no state is expected, a state of step 0
#     and zero buffers passes (dion's eager state), step 1 or a nonzero
#     buffer fails.
#  9. an AdaMuon state: moment2 compared in the expected shape; a state
#     without momentum_buffer refused, naming it;
# 10. a port in another accepted bf16 order than the profile's: its
#     fault explains every failure (the fit's scale check, spec/vectors.md 7).
#
# Exit: 0 pass; 1 fail.  Environment: MUONREF_SRCDIR, MUONREF (make check).

srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
python=${PYTHON3:-python3}
vectors=$srcdir/vectors/nemo
work_dir check-verdicts || exit 1
status=0
check() { # check DESCRIPTION COMMAND...
  d=$1; shift
  if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; status=1; fi
}

# 1. diagnosis of a fault, for every failing case
"$muonref" check --impl fast-bf16 --fault ema_momentum --quiet --write-results "$work/ema.json" "$vectors" >/dev/null
"$muonref" check --results "$work/ema.json" "$vectors" >"$work/ema.txt"
check "fault results exit 1" test $? -eq 1
# (error cases carry no diagnosis: the EMA form's finite run of the
# bf16-infinity case of nemo_overflow.json fails there undiagnosed)
nall=$(grep -c '^FAIL' "$work/ema.txt")
nfail=$(grep '^FAIL' "$work/ema.txt" | grep -vc '\[ErrorMessage')
ndiag=$(grep -cE "^  diagnosis: (exactly|within this case's tolerance,) what fault ema_momentum gives" "$work/ema.txt")
check "every one of the $nfail failures is diagnosed as ema_momentum ($ndiag)" test "$nfail" -gt 0 -a "$nfail" -eq "$ndiag"
check "the summary counts them" grep -q "^diagnosis: $nfail failures \[ema_momentum" "$work/ema.txt"

# 2. every failing tensor named
check "a case with several failing tensors lists them" grep -q '\[failing: params\[0\], ' "$work/ema.txt"
# a keller case's expected results with params[0] and its p.grad changed:
# both are listed, though the judge checks p.grad after the parameters
"$python" - "$srcdir/vectors/keller/keller_momentum.json" "$work/grad-too.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))['testGroups'][0]['tests'][0]
e = t['expected']
def changed(x):  # the first element's bits replaced
    return dict(x, hex=('c0000000' if x['hex'][:8] != 'c0000000' else '40000000') + x['hex'][8:])
res = {'file': 'keller_momentum.json', 'tcId': t['tcId'], 'state': e['state'],
       'params': [changed(e['params'][0])] + e['params'][1:], 'gradAfter': [changed(e['gradAfter'][0])] + e['gradAfter'][1:]}
json.dump({'implementation': 'changed', 'nsFormat': 'fp32', 'results': [res]}, open(sys.argv[2], 'w'))
EOF
"$muonref" check --results "$work/grad-too.json" --no-diagnosis "$srcdir/vectors/keller/keller_momentum.json" >"$work/grad-too.txt"
check "p.grad is listed with the parameters that fail beside it" \
  grep -q '\[failing: params\[0\], params\[0\]\.grad\]$' "$work/grad-too.txt"

# a keller_adamw case's p.grad: the first None, the second changed: the
# detail is the None's, with no explanation of the other appended to it
"$python" - "$srcdir/vectors/keller/keller_adamw.json" "$work/grad-none.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))['testGroups'][0]['tests'][0]
e = t['expected']
g = e['gradAfter']
changed = dict(g[1], hex=('c0000000' if g[1]['hex'][:8] != 'c0000000' else '40000000') + g[1]['hex'][8:])
res = {'file': 'keller_adamw.json', 'tcId': t['tcId'], 'state': e['state'], 'params': e['params'],
       'gradAfter': [None, changed]}
json.dump({'implementation': 'changed', 'nsFormat': 'fp32', 'results': [res]}, open(sys.argv[2], 'w'))
EOF
"$muonref" check --results "$work/grad-none.json" --no-diagnosis "$srcdir/vectors/keller/keller_adamw.json" >"$work/grad-none.txt"
check "a None p.grad is the detail, both p.grad listed" \
  grep -q ': params\[0\]\.grad after the step: None, expected the tensor .* \[failing: params\[0\]\.grad, params\[1\]\.grad\]$' "$work/grad-none.txt"
check "no explanation of the second p.grad appended to the first's detail" \
  sh -c "! grep -q 'None, expected the tensor.*(p.grad after the step: ' '$work/grad-none.txt'"

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
"$muonref" check --results "$work/ema.json" --quiet --no-diagnosis --write-failures "$work/known.txt" "$vectors" >/dev/null
check "--write-failures lists one line per failure" test "$(grep -vc '^#' "$work/known.txt")" -eq "$nall"
"$muonref" check --results "$work/ema.json" --baseline "$work/known.txt" "$vectors" >"$work/base.txt"
check "with the baseline the same failures exit 0" test $? -eq 0
check "they are reported KNOWN" test "$(grep -c '^KNOWN' "$work/base.txt")" -eq "$nall"
head -n 1 "$work/known.txt" >"$work/partial.txt"
grep -v '^#' "$work/known.txt" | tail -n +2 >>"$work/partial.txt"
"$muonref" check --results "$work/ema.json" --quiet --baseline "$work/partial.txt" "$vectors" >/dev/null
check "a failure missing from the baseline still exits 1" test $? -eq 1
"$muonref" check --impl fast-bf16 --quiet --write-results "$work/good.json" "$vectors" >/dev/null
"$muonref" check --results "$work/good.json" --baseline "$work/known.txt" "$vectors" >"$work/fixed.txt"
check "baseline cases that pass now are FIXED" test "$(grep -c '^FIXED' "$work/fixed.txt")" -eq "$nall"
printf 'not a case line\n' >"$work/bad.txt"
"$muonref" check --results "$work/good.json" --baseline "$work/bad.txt" "$vectors" >/dev/null 2>"$work/bad.err"
check "a malformed baseline exits 2" test $? -eq 2
check "naming the file and line" grep -q "bad.txt:1: expected FILE#TCID" "$work/bad.err"

# 5. fp32 outputs judged as bf16
"$muonref" check --impl fast-fp32 --quiet --write-results "$work/fp32.json" "$vectors" >/dev/null
sed 's/"nsFormat": *"fp32"/"nsFormat": "bf16"/' "$work/fp32.json" >"$work/fp32-as-bf16.json"
# (judged over the Newton-Schulz file alone: over every nemo file the fit of
# the other failures cost 14 s for the same hint)
"$muonref" check --results "$work/fp32-as-bf16.json" "$vectors/nemo_newton_schulz.json" >"$work/fp32.txt"
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

# 7. overflow: both outcomes of a binary32 norm, and the bf16-infinity rule
ov=$vectors/nemo_overflow.json
for f in bf16 fp32; do
  "$muonref" check --impl fast-$f --write-results "$work/ov-$f.json" "$ov" >"$work/ov-$f.txt"
  check "the fast path ($f) passes the overflow area" test $? -eq 0
  check "and matches no norm-overflow alternative ($f: its norm is binary64)" sh -c "! grep -q 'norm overflowed' '$work/ov-$f.txt'"
done
"$python" - "$work/ov-bf16.json" "$ov" "$work" <<'EOF'
import json, sys
r, v, out = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
tests = {t['tcId']: t for g in v['testGroups'] for t in g['tests']}
step = next(i for i, t in tests.items() if 'expectedNormOverflow' in t)
ns = next(i for i, t in tests.items() if 'normOverflow' in t.get('expected', {}))
inf = next(i for i, t in tests.items() if t.get('expected', {}).get('run') == 'nonFinite')
def write(name, edit):
    rr = json.loads(json.dumps(r))
    for e in rr['results']:
        edit(e)
    json.dump(rr, open(f"{out}/{name}.json", 'w'))
def alt(e):
    if e['tcId'] == step:
        e['params'] = tests[step]['expectedNormOverflow']['params']
        e['state'] = tests[step]['expectedNormOverflow']['state']
    if e['tcId'] == ns:
        e['output'] = tests[ns]['expected']['normOverflow']
def nan(e):
    if e['tcId'] == step:
        p = tests[step]['expectedNormOverflow']['params'][0]
        e['params'][0] = dict(p, hex='7fc00000' * (len(p['hex']) // 8))
def finite(e):
    if e['tcId'] == inf:
        del e['error']
        e['params'] = [p['init'] for p in tests[inf]['params']]
def nonfinite(e):
    if e['tcId'] == inf:
        finite(e)
        p = e['params'][0]
        e['params'][0] = dict(p, hex='7fc00000' + p['hex'][8:])
write('ov-alt', alt), write('ov-nan', nan), write('ov-finite', finite), write('ov-nonfinite', nonfinite)
print(f"{step} {ns} {inf}", file=open(f"{out}/ov-ids", 'w'))
EOF
read -r st ns inf <"$work/ov-ids"
"$muonref" check --results "$work/ov-alt.json" "$ov" >"$work/ov-alt.txt"
check "results with the norm-overflow alternative pass" test $? -eq 0
check "the verdict names it for tcId $st and $ns" sh -c "grep -q '^PASS nemo_overflow.json tcId $st: norm overflowed binary32' '$work/ov-alt.txt' &&
  grep -q '^PASS nemo_overflow.json tcId $ns: norm overflowed binary32' '$work/ov-alt.txt'"
check "the report counts 2 such cases" grep -q '^norm overflowed binary32: 2 cases matched' "$work/ov-alt.txt"
"$muonref" check --results "$work/ov-nan.json" "$ov" >"$work/ov-nan.txt"
check "NaN where the norm overflowed fails" test $? -eq 1
check "naming the alternative it does not match" grep -q "^FAIL nemo_overflow.json tcId $st .*nor the norm-overflow alternative" "$work/ov-nan.txt"
"$muonref" check --results "$work/ov-finite.json" "$ov" >"$work/ov-finite.txt"
check "a finite run on bf16-infinite gradients fails" grep -q "^FAIL nemo_overflow.json tcId $inf .*ran and stored only finite values" "$work/ov-finite.txt"
"$muonref" check --results "$work/ov-nonfinite.json" "$ov" >"$work/ov-nonfinite.txt"
check "a run storing a non-finite value there passes (NeMo's NaN)" test $? -eq 0

# 8. an absent state where no gradient came (MissingGradientCounted)
po=$srcdir/vectors/pytorch_optimizer/pytorch_optimizer_gradients.json
"$muonref" check --impl fast-bf16 --quiet --write-results "$work/po.json" "$po" >/dev/null
"$python" - "$work" "$po" <<'EOF'
import json, os, sys
out, po = sys.argv[1], sys.argv[2]
res, vec = json.load(open(f"{out}/po.json")), json.load(open(po))
def zero_state(s):
    return s and set(s) - {'step'} and all(set(v['hex']) == {'0'} for k, v in s.items() if k != 'step')
case = next(t for g in vec['testGroups'] for t in g['tests']
            if 'MissingGradientCounted' in t['flags'] and any(zero_state(s) for s in t['expected']['state']))
zero = [i for i, s in enumerate(case['expected']['state']) if zero_state(s)]
moved = [i for i, s in enumerate(case['expected']['state']) if s and not zero_state(s)]
def write(name, idx, unflag=False):
    r = json.loads(json.dumps(res))
    for e in r['results']:
        if e['tcId'] == case['tcId']:
            for i in idx:
                e['state'][i] = None
    json.dump(r, open(f"{out}/{name}.json", 'w'))
    v = json.loads(json.dumps(vec))
    for g in v['testGroups']:
        for t in g['tests']:
            if unflag and t['tcId'] == case['tcId']:
                t['flags'].remove('MissingGradientCounted')
    os.makedirs(f"{out}/{name}", exist_ok=True)  # the results name the file by its base name
    json.dump(v, open(f"{out}/{name}/{os.path.basename(po)}", 'w'))
write('absent', zero), write('absent-moved', zero + moved[:1]), write('absent-unflagged', zero, unflag=True)
# no state at all (an empty list) on a Bf16Exact case, with the parameters of the fused order (not
# the primary one): the reported failure is the state list, not the primary order's parameters
exact = next(t for g in vec['testGroups'] for t in g['tests'] if 'Bf16Exact' in t['flags'] and
             isinstance(t.get('expectedBf16Orders', {}).get('fused'), dict) and
             t['expectedBf16Orders']['fused']['params'] != t['expectedBf16']['params'])
r = json.loads(json.dumps(res))
for e in r['results']:
    if e['tcId'] == exact['tcId']:
        e['params'], e['state'] = exact['expectedBf16Orders']['fused']['params'], []
json.dump(r, open(f"{out}/state-empty.json", 'w'))
# a state that holds only its step: neither kind of buffer is named, not one of the AdamW pair
r = json.loads(json.dumps(res))
e = next(e for e in r['results'] if any(s and 'momentum_buffer' in s for s in e['state']))
i = next(i for i, s in enumerate(e['state']) if s and 'momentum_buffer' in s)
e['state'][i] = {'step': e['state'][i]['step']}
json.dump(r, open(f"{out}/state-bufferless.json", 'w'))
print(i, file=open(f"{out}/state-bufferless-id", 'w'))
print(exact['tcId'], file=open(f"{out}/state-empty-id", 'w'))
print(case['tcId'], len(zero), len(moved), file=open(f"{out}/absent-ids", 'w'))
EOF
read -r tc nz nm <"$work/absent-ids"
check "pytorch_optimizer_gradients #$tc has $nz gradless and $nm stepped parameters" test "$nz" -ge 1 -a "$nm" -ge 1
"$muonref" check --results "$work/absent.json" "$po" >"$work/absent.txt"
check "null for the $nz zero states of a MissingGradientCounted case passes" test $? -eq 0
"$muonref" check --results "$work/absent-moved.json" "$po" >"$work/absent-moved.txt"
check "null for a parameter that had gradients fails" \
  grep -q "^FAIL pytorch_optimizer_gradients.json tcId $tc .*no state, expected a state" "$work/absent-moved.txt"
"$muonref" check --results "$work/absent-unflagged.json" "$work/absent-unflagged" >"$work/absent-unflagged.txt"
check "null for them without the flag fails" grep -q "tcId $tc .*no state, expected a state" "$work/absent-unflagged.txt"
read -r ex <"$work/state-empty-id"
"$muonref" check --results "$work/state-empty.json" "$po" >"$work/state-empty.txt"
check "an empty state list on Bf16Exact #$ex is told so, not as another order's parameters" \
  grep -q "^FAIL pytorch_optimizer_gradients.json tcId $ex .*: state: 0 entries, expected one per parameter" "$work/state-empty.txt"
# 8b. where no state is expected, a state of step 0 and zero buffers passes (dion creates every state at
# construction, spec/vectors.md 2.1); step 1, or a nonzero buffer, still fails
dg=$srcdir/vectors/dion/dion_gradients.json
"$muonref" check --impl fast-fp32 --quiet --write-results "$work/dg.json" "$dg" >/dev/null
"$python" - "$work" "$dg" <<'EOF'
import json, struct, sys
out, dg = sys.argv[1], sys.argv[2]
res, vec = json.load(open(f"{out}/dg.json")), json.load(open(dg))
case = next(t for g in vec['testGroups'] for t in g['tests'] if None in t['expected']['state'])
none = [i for i, s in enumerate(case['expected']['state']) if s is None]
def zeros(shape, x=0.0):
    n = 1
    for d in shape:
        n *= d
    return {'dtype': 'f32', 'shape': shape, 'hex': struct.pack('>f', x).hex() + '00000000' * (n - 1)}
def write(name, step, x):
    r = json.loads(json.dumps(res))
    for e in r['results']:
        if e['tcId'] == case['tcId']:
            for i in none:
                shape = case['params'][i]['init']['shape']
                e['state'][i] = {'step': step, 'exp_avg': zeros(shape, x), 'exp_avg_sq': zeros(shape)} \
                    if len(shape) < 2 else {'step': step, 'momentum_buffer': zeros(shape, x)}
    json.dump(r, open(f"{out}/{name}.json", 'w'))
write('eager', 0, 0.0), write('eager-step', 1, 0.0), write('eager-moved', 0, 0.5)
print(case['tcId'], len(none), file=open(f"{out}/eager-ids", 'w'))
EOF
read -r etc en <"$work/eager-ids"
check "dion_gradients #$etc: $en parameters without gradient, expected without state" test "$en" -ge 1
"$muonref" check --results "$work/eager.json" "$dg" >"$work/eager.txt"
check "a state of step 0 and zero buffers for them passes" test $? -eq 0
"$muonref" check --results "$work/eager-step.json" "$dg" >"$work/eager-step.txt"
check "... of step 1 fails" grep -q "^FAIL dion_gradients.json tcId $etc .*a state, expected none" "$work/eager-step.txt"
"$muonref" check --results "$work/eager-moved.json" "$dg" >"$work/eager-moved.txt"
check "... with a nonzero buffer fails" grep -q "^FAIL dion_gradients.json tcId $etc .*a state, expected none" "$work/eager-moved.txt"
# 9. an AdaMuon state (element-wise second moment): a moment2 given flattened, as upstream stores v, is compared
# in the expected shape; a state with moment2 and without momentum_buffer names momentum_buffer
am=$srcdir/vectors/pytorch_optimizer_adamuon/pytorch_optimizer_adamuon_state.json
"$muonref" check --impl fast-bf16 --quiet --write-results "$work/am.json" "$am" >/dev/null
"$python" - "$work" <<'EOF2'
import json, sys
out = sys.argv[1]
res = json.load(open(f"{out}/am.json"))
def first_muon(r):
    for e in r['results']:
        for i, st in enumerate(e.get('state') or []):
            if st and 'moment2' in st:
                return e, i
e, i = first_muon(res)
n = 1
for d in e['state'][i]['moment2']['shape']:
    n *= d
e['state'][i]['moment2']['shape'] = [n]
json.dump(res, open(f"{out}/am-flat.json", 'w'))
res = json.load(open(f"{out}/am.json"))
e, i = first_muon(res)
del e['state'][i]['momentum_buffer']
json.dump(res, open(f"{out}/am-nobuf.json", 'w'))
print(i, file=open(f"{out}/am-id", 'w'))
EOF2
read -r ai <"$work/am-id"
"$muonref" check --results "$work/am-flat.json" "$am" >"$work/am-flat.txt" 2>&1
check "an AdaMuon moment2 given flattened passes (compared in the expected shape)" test $? -eq 0
"$muonref" check --results "$work/am-nobuf.json" "$am" >"$work/am-nobuf.txt" 2>&1
check "a state with moment2 and without momentum_buffer is refused (exit 2)" test $? -eq 2
check "... naming momentum_buffer, not moment2" grep -q "state\[$ai\].momentum_buffer: missing (a Muon parameter's state" \
  "$work/am-nobuf.txt"
read -r bi <"$work/state-bufferless-id"
"$muonref" check --results "$work/state-bufferless.json" "$po" >"$work/state-bufferless.txt" 2>&1
check "a state with its step alone is refused (exit 2) as holding neither buffer" test $? -eq 2
check "... and the message names both kinds of state" \
  grep -q "state\[$bi\]: holds neither momentum_buffer (a Muon parameter's state) nor exp_avg and exp_avg_sq" \
  "$work/state-bufferless.txt"
# 10. a port in another accepted bf16 order (spec/muon.md 7.2): the fast
# path (order separate) with one fault on a profile's vectors; every
# failure is the fault's.  fault_explained PROFILE FAULT LABEL: the first
# "explained:" line is LABEL and covers all N failures (its results and
# report in $work/PROFILE-FAULT.json, .txt).
fault_explained() {
  "$muonref" check --impl fast-bf16 --fault "$2" --quiet --write-results "$work/$1-$2.json" "$srcdir/vectors/$1" \
    >/dev/null
  "$muonref" check --results "$work/$1-$2.json" "$srcdir/vectors/$1" >"$work/$1-$2.txt"
  n=$(grep -c '^FAIL' "$work/$1-$2.txt")
  check "$2 in order separate on $1's vectors: all $n failures explained by the fault" \
    grep -q "^explained: $3 ($n of $n failures; 0 of" "$work/$1-$2.txt"
}
# keller (order keller): the fit ran a Bf16Noise case in the profile's
# order alone, and the orders differ in scale by up to 0.9 %
# (keller_defaults #1), above the scale check's 0.4 %: 55 of 69 failures
fault_explained keller fan_swapped 'fan_swapped = scale_mode fan_in -> fan_out'
grep -A1 '^FAIL keller_defaults.json tcId 1 .*Bf16Noise' "$work/keller-fan_swapped.txt" >"$work/fan-1.txt"
check "... a three-step Bf16Noise case among them (keller_defaults #1)" \
  grep -Eq "^  diagnosis: (exactly|within this case's tolerance,) what fault fan_swapped gives" "$work/fan-1.txt"
# torch (order fused): the orders' scale spread alone left 5 of 84; a
# Bf16Noise case runs in the order the port's passing Bf16Exact cases matched
fault_explained torch sum_momentum 'sum_momentum = momentum_form ema -> sum'
# megatron (order fused): four_steps fails every Muon case, so no passing
# case tells the port's order; the orders that explain a failing Bf16Exact
# case bit for bit tell it, and a Bf16Noise case before any has told runs
# in every order (81 of 127 in the profile's order)
fault_explained megatron four_steps 'four_steps'
# dion: its ns outputs judged by the singular-value band got no match even
# where the fault's run was the port's output bit for bit (131 of 133)
fault_explained dion four_steps 'four_steps = ns_steps 5 -> 4'

exit $status
