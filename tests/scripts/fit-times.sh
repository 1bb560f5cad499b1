#!/bin/sh
# tests/scripts/fit-times.sh [VECTORS]: the table of docs/fit.md.  For every
# profile folder under VECTORS (default: the source tree's vectors/) and
# each of a few catalogued faults, the fast path with that fault writes a
# results file (muonref check --impl fast-bf16 --fault F --write-results);
# `muonref check --results` then judges and diagnoses it, and the row gives
# the cases, the failures, the fit's best explanation and the CPU seconds
# of that check (user + system, /usr/bin/time).  Not part of make check: it
# measures (about five CPU minutes for the eleven profiles).
# Exit 0, or 1 when a fault's best explanation does not name it.
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
vectors=${1:-$srcdir/vectors}
work_dir fit-times || exit 1
status=0
echo "| profile | fault | cases | failures | best explanation | CPU s |"
echo "|---|---|---|---|---|---|"
for d in "$vectors"/*/; do
  p=$(basename "$d")
  ls "$d"*.json >/dev/null 2>&1 || continue
  for fault in four_steps ema_momentum sum_momentum fan_swapped decay_after_update; do
    "$muonref" check -q --impl fast-bf16 --fault "$fault" --write-results "$work/r.json" "$d" >"$work/w.out" 2>&1
    [ $? -eq 1 ] || continue # the fault changes nothing in this profile
    /usr/bin/time -f '%U %S' -o "$work/t" "$muonref" check --results "$work/r.json" "$d" >"$work/c.out" 2>&1
    cases=$(tail -n 1 "$work/c.out" | awk '{print $1 + $3}')
    failed=$(tail -n 1 "$work/c.out" | awk '{print $3}')
    best=$(grep -m 1 '^explained: ' "$work/c.out" | sed 's/^explained: //; s/|/\\|/g')
    secs=$(tail -n 1 "$work/t" | awk '{printf "%.1f", $1 + $2}')
    echo "| $p | $fault | $cases | $failed | ${best:-none} | $secs |"
    case $best in *"$fault"*) ;; *) status=1 ;; esac
  done
done
echo
echo "Command: \`tests/scripts/fit-times.sh\` ($(uname -m), $(nproc) cores, load average $(cut -d ' ' -f 1 /proc/loadavg) at the end)."
exit $status
