#!/bin/sh
# tests/scripts/driver-plan.sh: the driver's many-run form, torch_driver.py --plan FILE
# [--jobs N] (vectors/drivers/plans.py; make check).  Every driver-based test
# runs its ports through it.
#
# 1. a plan's runs write byte for byte the results files of the one-run form;
#    --jobs 2 the same files again;
# 2. isolation: after tests/variants/torch_plan_meddler.py (which changes the default
#    dtype, grad mode, anomaly detection, deterministic algorithms, the
#    random generator, sys.path, the working directory, an environment
#    variable, the warnings filters, and patches its sibling module
#    torch_nemo_port) the same plan runs tests/variants/torch_plan_observer.py, which
#    refuses to run in a disturbed process: every case must run; and the
#    faulty ema variant, which imports that sibling too, must give its
#    one-run results;
# 3. a run that fails (a missing port: exit 2; a port calling sys.exit: exit 3)
#    does not stop the plan; the plan exits with the largest status, naming
#    the line;
# 4. an unusable plan (an unknown option, --world-size, an unclosed quote, no
#    run, other options beside --plan, --jobs out of range or without --plan)
#    exits 2 naming the line, and runs nothing.
# Exit 0 pass, 1 fail, 77 skip (no torch for $PYTHON).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
driver=$srcdir/vectors/drivers/torch_driver.py
need_python torch
work_dir driver-plan || exit 1
status=0
fail() { echo "FAIL: $*"; status=1; }
v=$srcdir/vectors/nemo/nemo_momentum.json
t=$srcdir/tests

# 1. the same files as the one-run form
"$python" "$driver" -q --optimizer "$t/variants/torch_nemo_port_faulty_ema.py:Muon" --out "$work/ema1.json" "$v" || fail "one-run form"
"$python" "$driver" -q --mode neutral --optimizer "$t/ports/torch_torch_port.py:Muon" --adapter torch \
  --out "$work/torch1.json" "$srcdir/vectors/torch/torch_momentum.json" || fail "one-run form"
cat >"$work/plan" <<PLAN
# the runs of the one-run form, and the meddler and the observer between them
--optimizer '$t/variants/torch_plan_meddler.py:Muon' --out '$work/meddler.json' '$v'
-q --optimizer '$t/variants/torch_plan_observer.py:Observer' --out '$work/observer.json' '$v'
--optimizer '$t/variants/torch_nemo_port_faulty_ema.py:Muon' --out '$work/ema2.json' '$v'  # a comment

  -q --mode neutral --optimizer '$t/ports/torch_torch_port.py:Muon' --adapter torch --out '$work/torch2.json' '$srcdir/vectors/torch/torch_momentum.json'
PLAN
(cd "$work" && MUONREF_PLAN_CWD=$work "$python" "$driver" --plan plan) >"$work/plan.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail "the plan exits $rc"; cat "$work/plan.out"; }
grep -q "plan plan: 4 runs, 4 exit 0" "$work/plan.out" || fail "no closing line: $(tail -n 1 "$work/plan.out")"
for f in ema torch; do
  cmp -s "$work/${f}1.json" "$work/${f}2.json" && echo "ok: the $f run of the plan wrote the one-run form's file, byte for byte" ||
    fail "the $f run of the plan differs from the one-run form's"
done
"$python" - "$work/observer.json" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))['results']
bad = [e['skipped'] for e in r if 'skipped' in e]
if not r or bad:
    print(f"FAIL: the observer after the meddler: {len(bad)} of {len(r)} cases skipped: {bad[:1]}")
    sys.exit(1)
print(f"ok: after the meddler, the observer finds a fresh process in all {len(r)} cases")
PY
mkdir "$work/j2"
sed "s#$work/\([a-z]*[12]*\)\.json#$work/j2/\1.json#" "$work/plan" >"$work/j2/plan"
(cd "$work" && MUONREF_PLAN_CWD=$work "$python" "$driver" -q --plan j2/plan --jobs 2) >"$work/j2.out" 2>&1 || fail "--jobs 2 exits $?"
for f in meddler observer ema2 torch2; do
  cmp -s "$work/$f.json" "$work/j2/$f.json" || fail "--jobs 2 wrote another $f.json"
done
[ $status -eq 0 ] && echo "ok: --jobs 2 wrote the same four files"

# 3. failing runs are contained
cat >"$work/bad-runs" <<PLAN
--optimizer $work/no_such_port.py:Muon --out $work/x1.json $v
--optimizer $t/variants/torch_plan_meddler.py:Quits --out $work/x2.json $v
-q --optimizer $t/ports/torch_nemo_port.py:Muon --out $work/x3.json $v
PLAN
"$python" "$driver" --plan "$work/bad-runs" >"$work/bad-runs.out" 2>&1
rc=$?
if [ $rc -eq 3 ] && [ -f "$work/x3.json" ] && grep -q "plan line 1: --optimizer .*no such file" "$work/bad-runs.out" &&
   grep -q "plan line 2: the run raised SystemExit: the meddler quits" "$work/bad-runs.out" &&
   grep -q "3 runs, 1 exit 0, 1 exit 2, 1 exit 3" "$work/bad-runs.out"; then
  echo "ok: a missing port (exit 2) and a port calling sys.exit (exit 3) do not stop the plan; it exits 3"
else
  fail "failing runs: exit $rc"; cat "$work/bad-runs.out"
fi

# 4. unusable plans: exit 2, the line named, nothing run (one Python process:
#    torch_driver.main on each plan)
"$python" - "$driver" "$work" "$t/ports/torch_nemo_port.py:Muon" "$v" <<'PY' || status=1
import contextlib, io, os, sys
driver_path, work, port, vec = sys.argv[1:5]
sys.path.insert(0, os.path.dirname(driver_path))
import torch_driver
out = os.path.join(work, 'y.json')
ok_line = f"-q --optimizer {port} --out {out} {vec}"
cases = [  # what, plan text, extra command-line options, the message expected
    ("an unknown option", f"{ok_line}\n--no-such-option --optimizer x.py:Muon --out {work}/z.json", [],
     "line 2: unrecognized arguments: --no-such-option"),
    ("--world-size", f"--world-size 2 {ok_line}", [], "line 1: --world-size is not available in a plan"),
    ("no --out", "--optimizer x.py:Muon", [], "line 1: the following arguments are required: --out"),
    ("an unclosed quote", f"{ok_line}\n--optimizer 'x.py:Muon", [], "line 2: No closing quotation"),
    ("no run", "# nothing\n\n", [], "no run (every line is blank or a comment)"),
    ("options beside --plan", ok_line, ['--mode', 'neutral'], "on the command line only --jobs, -q and -v"),
    ("--jobs 0", ok_line, ['--jobs', '0'], "--jobs 0: expected 1 to 64"),
    ("--jobs without --plan", None, ['--jobs', '2', '--optimizer', port, '--out', out, vec], "--jobs goes with --plan"),
]
failed = 0
for what, text, extra, want in cases:
    plan = os.path.join(work, 'bad')
    with open(plan, 'w') as f:
        f.write(text or '')
    argv = (['--plan', plan] if text is not None else []) + extra
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            rc = torch_driver.main(argv)
        except SystemExit as exc:  # argparse's own errors
            rc = exc.code
    if rc == 2 and want in err.getvalue() and not os.path.exists(out):
        print(f"ok: {what}: exit 2, '{want}', nothing run")
    else:
        print(f"FAIL: {what}: exit {rc}, ran: {os.path.exists(out)}: {err.getvalue()}")
        failed += 1
sys.exit(1 if failed else 0)
PY
exit $status
