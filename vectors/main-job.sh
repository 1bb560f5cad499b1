#!/bin/sh
# The main job (README, docs/guide.md): regenerate the golden vectors of every profile from
# the reference, confirm they equal the committed ones, judge our fast path
# (bf16 and fp32) against every profile, run every profile's PyTorch test
# port over every profile (the cross matrix, which holds each port over its
# own profile: the per-profile table), run every distributed profile's test
# port over 4 ranks on its sharded areas, and report.
# Run from the build tree: `make main-job` (or vectors/main-job.sh SRCDIR).
# Five stages, each announced by a progress line and timed; the closing
# table gives each profile's verdicts and each stage's time.  Both cores
# are used: the fast path's two formats run side by side, the driver's plan
# runs in MUONREF_JOBS (default 2) worker processes.
# Exit status: 0 when every judged implementation passed every case of its
# profile (and the cross matrix is diagonal, and every distributed run held), 1 when one failed, 2 when a
# step could not run.
src=${1:-.}
muonref=${MUONREF:-./muonref}
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
jobs=${MUONREF_JOBS:-2}
out=main-job
rm -rf "$out" && mkdir -p "$out" || exit 2
status=0
now() { date +%s.%N; }
# seconds from $1 to $2 (default: now)
since() { awk -v a="$1" -v b="${2:-$(now)}" 'BEGIN { printf "%.1f", b - a }'; }
start=$(now)
n_stages=5
stage_no=0 stage_start= stage_title=
# stage TITLE: closes the running stage (its time into $out/stages) and announces the next
stage() {
  t=$(now)
  [ -n "$stage_start" ] && printf '%s\t%s\n' "$stage_title" "$(since "$stage_start" "$t")" >>"$out/stages"
  [ $# -eq 0 ] && return
  stage_no=$((stage_no + 1)) stage_title=$1 stage_start=$t
  printf '\n== [%d/%d, at %s s] %s\n' "$stage_no" "$n_stages" "$(since "$start" "$t")" "$1"
}

stage "regenerate the vectors of every profile from the reference (muonref gen)"
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

stage "our fast path over every profile (muonref check --impl fast-bf16, fast-fp32)"
for p in $profiles; do
  "$muonref" check --impl fast-bf16 "$out/vectors/$p" >"$out/$p-fast-bf16.txt" 2>&1 &
  bg=$!
  "$muonref" check --impl fast-fp32 "$out/vectors/$p" >"$out/$p-fast-fp32.txt" 2>&1
  rc2=$?
  wait $bg
  rc1=$?
  for rc in $rc1 $rc2; do [ $rc -gt $status ] && status=$rc; done
  for impl in fast-bf16 fast-fp32; do
    echo "-- muonref check --impl $impl $out/vectors/$p"
    cat "$out/$p-$impl.txt"
  done
done

have_torch=0
"$python" -c 'import torch' >/dev/null 2>&1 && have_torch=1
stage "the PyTorch test ports: each over every profile, in $jobs processes (tests/scripts/cross-matrix.sh)"
if [ $have_torch -eq 1 ]; then
  MUONREF="$muonref" MUONREF_SRCDIR="$src" MUONREF_JOBS=$jobs MUONREF_CROSS_RESULTS="$PWD/$out/ports" \
    sh "$src/tests/scripts/cross-matrix.sh" "$out/vectors" >"$out/cross.txt" 2>&1
  rc=$?
  cat "$out/cross.txt"
  [ $rc -gt $status ] && status=$rc
else
  echo "skipped: $python cannot import torch (apt-get install python3-torch)"
fi

stage "each profile's PyTorch test port over its own profile"
# the port's mode in this table is its record's (test_port.mode, tests/lib/ports.sh):
# nemo's port raw (it emulates bf16 itself), every other one neutral (spec/vectors.md
# 5.3); the runs are the cross matrix's
srcdir=$src
. "$src/tests/lib/ports.sh"
ports_read || status=2
for p in $profiles; do
  r=$out/ports/$p-$p
  [ "$(port_mode "$p")" = raw ] && r=$out/ports/raw-$p
  if [ -f "$r.out" ]; then
    echo "-- the PyTorch test port of $p through vectors/drivers/torch_driver.py ($(sed -n 's/^mode: \([a-z]*\).*/\1/p' "$r.out"))"
    cp "$r.out" "$out/$p-torch.txt"
    cat "$out/$p-torch.txt"
    rc=$(cat "$r.rc")
    [ "$rc" -gt $status ] && status=$rc
  elif [ $have_torch -eq 1 ]; then
    echo "ERROR: no results of the $p port (see $out/cross.txt)"
    status=2
  fi
done

stage "each distributed profile's test port over 4 ranks on its sharded areas (tests/scripts/torch_dist_test.py --every-profile 4)"
if [ $have_torch -eq 1 ]; then
  mkdir -p "$out/dist"
  "$python" "$src/tests/scripts/torch_dist_test.py" "$muonref" "$src" "$PWD/$out/dist" --every-profile 4 >"$out/dist.txt" 2>"$out/dist.err"
  rc=$?
  grep -v '^[0-9]*%: Checks:' "$out/dist.txt"
  tail -n 1 "$out/dist.txt"
  [ $rc -ne 0 ] && status=1 && cat "$out/dist.err"
else
  echo "skipped: $python cannot import torch"
fi
stage

printf '\n== report (%s s in all)\n' "$(since "$start")"
printf '%-10s %-10s %s\n' profile impl result
for p in $profiles; do
  for f in fast-bf16 fast-fp32 torch; do
    [ -f "$out/$p-$f.txt" ] && printf '%-10s %-10s %s\n' "$p" "$f" "$(tail -n 1 "$out/$p-$f.txt")"
  done
done
printf '\n%-94s %s\n' stage seconds
i=0
while IFS="$(printf '\t')" read -r title secs; do
  i=$((i + 1))
  printf '%d. %-91s %7.1f\n' "$i" "$title" "$secs"
done <"$out/stages"
echo "files: $out/ (vectors, results, reports)"
exit $status
