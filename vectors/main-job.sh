#!/bin/sh
# The main job (README): regenerate the golden vectors of every profile from
# the reference, confirm they equal the committed ones, judge our fast path
# (bf16 and fp32) and each profile's PyTorch test port against its profile,
# print one table per profile, then the cross matrix of the ports.
# Run from the build tree: `make main-job` (or vectors/main-job.sh SRCDIR).
# Exit status: 0 when every judged implementation passed every case of its
# profile (and the cross matrix is diagonal), 1 when one failed, 2 when a
# step could not run.
src=${1:-.}
muonref=${MUONREF:-./muonref}
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
out=main-job
rm -rf "$out" && mkdir -p "$out" || exit 2
status=0
note() { printf '\n== %s\n' "$*"; }

note "1. regenerate the vectors of every profile from the reference (muonref gen)"
"$muonref" gen --out "$out/vectors" || exit 2
profiles=
for d in "$out/vectors"/*/; do
  p=$(basename "$d")
  profiles="$profiles $p"
  if diff -r "$src/vectors/$p" "$out/vectors/$p" >/dev/null 2>&1; then
    echo "$p: the regenerated vectors are byte-identical to the committed vectors/$p"
  else
    echo "WARNING: $p: the regenerated vectors differ from the committed ones (diff -r $src/vectors/$p $out/vectors/$p)"
    status=1
  fi
done

# profile -> its test port (written from spec/profiles/) and the driver's adapter and mode
port_of() {
  case $1 in
    nemo) echo "$src/tests/torch_nemo_port.py:Muon nemo raw" ;;
    torch) echo "$src/tests/torch_torch_port.py:Muon torch neutral" ;;
    moonlight) echo "$src/tests/torch_moonlight_port.py:Muon moonlight neutral" ;;
    keller) echo "$src/tests/torch_keller_port.py:SingleDeviceMuonWithAuxAdam keller neutral" ;;
    timm) echo "$src/tests/torch_timm_port.py:Muon timm neutral" ;;
    dion) echo "$src/tests/torch_dion_port.py:Muon dion neutral" ;;
    emerging) echo "$src/tests/torch_emerging_port.py:Muon emerging neutral" ;;
    paddle) echo "$src/tests/torch_paddle_port.py:Muon paddle neutral" ;;
    optax) echo "$src/tests/torch_optax_port.py:Muon optax neutral fp32" ;;
    megatron) echo "$src/tests/torch_megatron_port.py:MegatronMuon megatron neutral" ;;
    keras) echo "$src/tests/torch_keras_port.py:Muon keras neutral fp32" ;;
  esac
}
have_torch=0
"$python" -c 'import torch' >/dev/null 2>&1 && have_torch=1

step=2
for p in $profiles; do
  note "$step. profile $p"
  step=$((step + 1))
  for impl in fast-bf16 fast-fp32; do
    echo "-- muonref check --impl $impl $out/vectors/$p"
    "$muonref" check --impl "$impl" "$out/vectors/$p" >"$out/$p-$impl.txt"
    rc=$?
    cat "$out/$p-$impl.txt"
    [ $rc -gt $status ] && status=$rc
  done
  set -- $(port_of "$p")
  if [ $# -ge 3 ] && [ $have_torch -eq 1 ]; then
    echo "-- the PyTorch test port $1 (adapter $2, mode $3, Newton-Schulz ${4:-bf16}) through vectors/drivers/torch_driver.py"
    "$python" "$src/vectors/drivers/torch_driver.py" --optimizer "$1" --adapter "$2" --mode "$3" \
      --ns-format "${4:-bf16}" --out "$out/$p-torch-results.json" "$out/vectors/$p" || exit 2
    "$muonref" check --results "$out/$p-torch-results.json" "$out/vectors/$p" >"$out/$p-torch.txt"
    rc=$?
    cat "$out/$p-torch.txt"
    [ $rc -gt $status ] && status=$rc
  elif [ $# -ge 3 ]; then
    echo "skipped the PyTorch test port: $python cannot import torch (apt-get install python3-torch)"
  fi
done

if [ $have_torch -eq 1 ]; then
  note "$step. the cross matrix: every test port over every profile (tests/cross-matrix.sh)"
  MUONREF="$muonref" MUONREF_SRCDIR="$src" sh "$src/tests/cross-matrix.sh" "$out/vectors" >"$out/cross.txt" 2>&1
  rc=$?
  cat "$out/cross.txt"
  [ $rc -gt $status ] && status=$rc
fi

note "report"
printf '%-10s %-10s %s\n' profile impl result
for p in $profiles; do
  for f in fast-bf16 fast-fp32 torch; do
    [ -f "$out/$p-$f.txt" ] && printf '%-10s %-10s %s\n' "$p" "$f" "$(tail -n 1 "$out/$p-$f.txt")"
  done
done
echo "files: $out/ (vectors, results, reports)"
exit $status
