#!/bin/sh
# tests/scripts/results-writer.sh: the framework-neutral results writer
# (vectors/drivers/results_writer.py) against torch_driver.py (make check).
#
# 1. tests/scripts/results_writer_unit.py: the writer's own checks, standard library
#    only (tensor codec, bf16 rounding, skipped cases and their reasons);
# 2. the PyTorch test port and its faulty variants, run once through
#    torch_driver.py and once through results_writer.py with the glue
#    tests/scripts/results_writer_torch_glue.py, over vectors/nemo/: `muonref check
#    --results` must give both the same verdict on every case (the lists of
#    failing cases, with their reasons, are compared), and the port must
#    pass every case.
#
# Exit: 0 pass; 77 skip (no torch for $PYTHON, or no vectors); 1 fail.
# Environment: MUONREF_SRCDIR, MUONREF (default ./muonref), MUONREF_TORCH_PYTHON.

srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
writer=$srcdir/vectors/drivers/results_writer.py
glue=$srcdir/tests/scripts/results_writer_torch_glue.py
vectors=$srcdir/vectors/nemo

status=0
# 1. unit checks (no torch needed)
if ! "$python" "$srcdir/tests/scripts/results_writer_unit.py"; then
  echo "FAIL: tests/scripts/results_writer_unit.py"
  status=1
fi

if ! has_python torch; then
  echo "SKIP: $python cannot import torch: the comparison with torch_driver.py needs it"
  [ $status -eq 0 ] && exit 77
  exit $status
fi
if ! ls "$vectors"/*.json >/dev/null 2>&1; then
  echo "SKIP: no golden vectors in $vectors"
  [ $status -eq 0 ] && exit 77
  exit $status
fi
if [ ! -x "$muonref" ]; then
  echo "FAIL: $muonref is not an executable (run from the build tree)"
  exit 1
fi

work_dir results-writer || exit 1

# failures NAME: muonref check on $work/NAME.json; the failing cases (each
# FILE#TCID line and its comment line, which says why it fails; the first
# line, naming the port and the tool, dropped) in $work/NAME.fail; exit
# status in $rc.  Judged without the diagnosis, which is not compared (the
# fit of the faulty ports' failures was 51 of this test's 64 s, stop 50)
failures() {
  "$muonref" check --no-diagnosis --results "$work/$1.json" --write-failures "$work/$1.failures" "$vectors" \
    >"$work/$1.check" 2>&1
  rc=$?
  sed 1d "$work/$1.failures" 2>/dev/null >"$work/$1.fail"
}

# the driver's three runs in one plan (tests/lib/plan.sh)
. "$srcdir/tests/lib/plan.sh"
ports="torch_nemo_port torch_nemo_port_faulty_ema torch_nemo_port_faulty_decay"
for port in $ports; do
  plan_add "driver-$port" --mode raw --optimizer "$(port_file $port):Muon" --adapter nemo --ns-format bf16 "$vectors"
done
plan_run
for port in $ports; do
  file=$(port_file $port)
  if ! plan_ran "driver-$port"; then
    echo "FAIL: torch_driver.py failed on $port:"; grep -v 'platform:' "$work/plan.err"; status=1; continue
  fi
  if ! MUONREF_GLUE_PORT=$file "$python" "$writer" "$glue" "$work/writer-$port.json" "$vectors" \
       2>"$work/writer-$port.err"; then
    echo "FAIL: results_writer.py failed on $port:"; cat "$work/writer-$port.err"; status=1; continue
  fi
  cat "$work/writer-$port.err"
  failures "driver-$port"; rc_driver=$rc
  failures "writer-$port"; rc_writer=$rc
  if [ "$rc_driver" -gt 1 ] || [ "$rc_writer" -gt 1 ]; then
    echo "FAIL: muonref check exited $rc_driver (driver) and $rc_writer (writer) on $port:"
    tail -n 5 "$work/driver-$port.check" "$work/writer-$port.check"; status=1; continue
  fi
  if ! cmp -s "$work/driver-$port.fail" "$work/writer-$port.fail" || [ "$rc_driver" -ne "$rc_writer" ]; then
    echo "FAIL: $port: the verdicts differ (< torch_driver.py, > results_writer.py):"
    diff "$work/driver-$port.fail" "$work/writer-$port.fail"
    status=1; continue
  fi
  n=$(grep -vc '^#' "$work/writer-$port.fail")
  case $port in
    *faulty*) if [ "$n" -eq 0 ]; then echo "FAIL: $port passes every case"; status=1; continue; fi ;;
    *) if [ "$n" -ne 0 ]; then echo "FAIL: $port fails $n cases:"; cat "$work/writer-$port.fail"; status=1; continue; fi ;;
  esac
  echo "ok: $port: the same verdicts through both ($(tail -n 1 "$work/writer-$port.check"))"
done
exit $status
