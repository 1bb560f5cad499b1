#!/bin/sh
# tests/torch-driver.sh: the PyTorch test port against the golden vectors, and
# two faulty variants of it against the same vectors (make check).
#
# 1. vectors/drivers/torch_driver.py runs tests/torch_nemo_port.py over
#    vectors/nemo/ and `muonref check --results` must pass every case;
#    (and tests/torch_nemo_port_perop.py, rounding after every operation, too);
# 2. the faulty variants tests/torch_nemo_port_faulty_{ema,decay}.py must
#    each fail at least one case, and only cases the fault can change
#    (tests/torch_fault_cases.py computes those from the vectors).
#
# Exit: 0 pass; 77 skip (no torch for $PYTHON, or no vectors yet); 1 fail.
# Environment: MUONREF_SRCDIR (the source tree, exported by make check),
# MUONREF (default ./muonref, in the build tree), MUONREF_TORCH_PYTHON
# (default /usr/bin/python3: Debian's, with python3-torch).

srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
muonref=${MUONREF:-./muonref}
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
driver=$srcdir/vectors/drivers/torch_driver.py

if ! "$python" -c 'import torch' >/dev/null 2>&1; then
  echo "SKIP: $python cannot import torch (Debian: apt-get install python3-torch)"
  exit 77
fi
vectors=$srcdir/vectors/nemo
if ! ls "$vectors"/*.json >/dev/null 2>&1; then
  echo "SKIP: no golden vectors in $vectors (muonref gen writes them)"
  exit 77
fi
if [ ! -x "$muonref" ]; then
  echo "FAIL: $muonref is not an executable (run from the build tree)"
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/torch-driver.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
status=0

# run_port NAME FILE: driver + judge; leaves the judge's exit status in $rc
# and its output in $work/NAME.check.
run_port() {
  name=$1 port=$2
  if ! "$python" "$driver" --optimizer "$port:Muon" --adapter nemo --ns-format bf16 \
       --out "$work/$name.json" "$vectors" 2>"$work/$name.driver"; then
    echo "FAIL: the driver failed on $port:"
    cat "$work/$name.driver"
    rc=99
    return
  fi
  cat "$work/$name.driver"
  "$muonref" check --results "$work/$name.json" "$vectors" >"$work/$name.check" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    echo "FAIL: muonref check --results exited $rc on the results of $port:"
    cat "$work/$name.check"
    rc=99
  fi
}

# 1. the port, and its variant that rounds after every operation as NeMo's
#    code does, pass everything
for variant in port perop; do
  file=$srcdir/tests/torch_nemo_port.py
  [ "$variant" = perop ] && file=$srcdir/tests/torch_nemo_port_perop.py
  run_port "$variant" "$file"
  if [ "$rc" -eq 0 ]; then
    # the per-area table with the worst deviation / allowance: the margins
    cat "$work/$variant.check"
    echo "ok: $(basename "$file") passes every vector"
  elif [ "$rc" -eq 1 ]; then
    echo "FAIL: $(basename "$file") fails vectors:"
    grep 'tcId' "$work/$variant.check"
    tail -n 1 "$work/$variant.check"
    status=1
  else
    status=1
  fi
done

# 2. each faulty variant fails, and only where its fault can show
for fault in ema decay; do
  run_port "$fault" "$srcdir/tests/torch_nemo_port_faulty_$fault.py"
  if [ "$rc" -eq 0 ]; then
    echo "FAIL: the faulty variant '$fault' passes every vector"
    status=1
  elif [ "$rc" -eq 1 ]; then
    "$python" "$srcdir/tests/torch_fault_cases.py" --fault "$fault" \
      --check-output "$work/$fault.check" "$vectors" || {
        grep 'tcId' "$work/$fault.check"
        status=1
      }
  else
    status=1
  fi
done

exit $status
