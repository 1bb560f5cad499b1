#!/bin/sh
# The main job (README): regenerate the golden vectors from the reference,
# confirm they equal the committed ones, judge our fast path (bf16 and
# fp32) and the PyTorch test port against them, and print the report.
# Run from the build tree: `make main-job` (or vectors/main-job.sh SRCDIR).
# Exit status: 0 when every judged implementation passed every case, 1 when
# one failed a case, 2 when a step could not run.
src=${1:-.}
muonref=${MUONREF:-./muonref}
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
out=main-job
rm -rf "$out" && mkdir -p "$out" || exit 2
status=0
note() { printf '\n== %s\n' "$*"; }

note "1. regenerate the vectors from the reference (muonref gen)"
"$muonref" gen --out "$out/vectors" || exit 2
if diff -r "$src/vectors/nemo" "$out/vectors/nemo" >/dev/null; then
  echo "the regenerated vectors are byte-identical to the committed vectors/nemo"
else
  echo "WARNING: the regenerated vectors differ from the committed ones (diff -r $src/vectors/nemo $out/vectors/nemo)"
  status=1
fi

step=2
for impl in fast-bf16 fast-fp32; do
  note "$step. muonref check --impl $impl"
  step=3
  "$muonref" check --impl "$impl" "$out/vectors" >"$out/$impl.txt"
  rc=$?
  cat "$out/$impl.txt"
  [ $rc -gt $status ] && status=$rc
done

note "4. the PyTorch test port (tests/torch_nemo_port.py) through vectors/drivers/torch_driver.py"
if "$python" -c 'import torch' >/dev/null 2>&1; then
  "$python" "$src/vectors/drivers/torch_driver.py" --optimizer "$src/tests/torch_nemo_port.py:Muon" --adapter nemo \
    --ns-format bf16 --out "$out/torch-results.json" "$out/vectors" || exit 2
  "$muonref" check --results "$out/torch-results.json" "$out/vectors" >"$out/torch.txt"
  rc=$?
  cat "$out/torch.txt"
  [ $rc -gt $status ] && status=$rc
else
  echo "skipped: $python cannot import torch (apt-get install python3-torch)"
fi

note "report"
for f in fast-bf16 fast-fp32 torch; do
  [ -f "$out/$f.txt" ] && printf '%-10s %s\n' "$f" "$(tail -n 1 "$out/$f.txt")"
done
echo "files: $out/ (vectors, results, reports)"
exit $status
