#!/bin/sh
# tests/scripts/torch-distributed.sh: distributed ports judged under torch.distributed
# (make check; spec/vectors.md 2.5, vectors/drivers/README.md).
#
# 1. tests/scripts/torch_dist_test.py runs, through `torch_driver.py --world-size N`
#    (gloo on 127.0.0.1), the Keller-style, ZeRO-1 and tensor-parallel ports
#    of tests/variants/torch_dist_ports.py at world sizes 1, 2 and 4 (every case of
#    the sharded resp. sharded_tp area passes), the three faulty ports at 2
#    and 4 (exactly the cases their fault changes fail, each with the
#    judge's sharding hint), and a port that hangs (the driver ends it after
#    its --case-timeout, exit 3, every case skipped), one whose ranks all exit
#    with status 0 early (exit 3, every case skipped with that reason) and one
#    that starts a detached daemon (ended with the ranks); then every
#    profile's test port distributed by tests/variants/torch_dist_any.py at world
#    size 2 over its sharded areas (correct wirings pass, three faulty ones
#    fail exactly the cases computed from the vectors);
# 2. a driver killed with SIGTERM while its ranks run, and one killed with
#    SIGKILL, leave no rank behind and no run folder (the ranks of a killed
#    driver remove it);
# 3. no process started by this test is left: every process whose
#    environment holds this run's tag is gone.
#
# Exit: 0 pass; 77 skip (no torch); 1 fail.
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
if ! "$python" -c 'import torch.distributed as d; assert d.is_available()' >/dev/null 2>&1; then
  echo "SKIP: $python cannot import torch.distributed"
  exit 77
fi
work_dir torch-distributed || exit 1
tag=muonref-dist-$$-$(date +%s%N)
status=0
fail() { fails=$((fails + 1)); echo "torch-distributed:0:F:dist:$1:0: $2"; status=1; }

# the processes that carry this run's tag: the driver and its ranks inherit
# it; this shell and its helpers do not (it is not exported)
tagged() {
  grep -lsz "^MUONREF_DIST_TEST_TAG=$tag\$" /proc/[0-9]*/environ 2>/dev/null | sed 's,^/proc/,,; s,/environ$,,'
}

MUONREF_DIST_TEST_TAG=$tag "$python" "$srcdir/tests/scripts/torch_dist_test.py" "$muonref" "$srcdir" "$work" \
  >"$work/runs.log" 2>"$work/driver.log" || { status=1; grep -v 'platform:' "$work/driver.log"; }
# its checks count in this test's one summary line (tests/lib/summary.sh reads the last)
grep -v '^[0-9]*%: Checks:' "$work/runs.log"
line=$(grep '^[0-9]*%: Checks:' "$work/runs.log" | tail -n 1)
if [ -n "$line" ]; then
  checks=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
  fails=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
else
  checks=1 fails=1
  echo "torch-distributed:0:F:dist:helper:0: tests/scripts/torch_dist_test.py printed no summary"
fi

# 2. the driver killed while its four ranks run a hanging port (its run folder in $work/tmp)
mkdir -p "$work/tmp"
for sig in TERM KILL; do
  checks=$((checks + 1))
  MUONREF_DIST_TEST_TAG=$tag TMPDIR="$work/tmp" "$python" "$srcdir/vectors/drivers/torch_driver.py" --optimizer "$srcdir/tests/variants/torch_dist_ports.py:HangingMuon" \
    --world-size 4 --case-timeout 600 --out "$work/kill.json" "$srcdir/vectors/nemo/nemo_sharded.json" \
    2>"$work/kill.log" &
  driver=$!
  # wait until the four ranks exist (forked after the driver imported torch)
  n=0
  while [ "$n" -lt 600 ] && [ "$(tagged | wc -l)" -lt 5 ]; do sleep 0.1; n=$((n + 1)); done
  sleep 1
  kill -"$sig" "$driver"
  wait "$driver" 2>/dev/null
  n=0
  while [ "$n" -lt 100 ] && [ -n "$(tagged)" ]; do sleep 0.1; n=$((n + 1)); done
  left=$(tagged)
  if [ -n "$left" ]; then
    fail "kill_$sig" "after SIGTERM/SIGKILL of the driver, processes are left: $left"
    for p in $left; do kill -9 "$p" 2>/dev/null; done
  else
    echo "driver killed with SIG$sig: no rank left ($(( n / 10 )) s)"
  fi
  checks=$((checks + 1))
  if ls -d "$work"/tmp/muonref-dist.* >/dev/null 2>&1; then
    fail "folder_$sig" "after SIG$sig of the driver, its run folder is left: $(ls -d "$work"/tmp/muonref-dist.*)"
    rm -rf "$work"/tmp/muonref-dist.*
  else
    echo "driver killed with SIG$sig: no run folder left"
  fi
done

# 3. nothing of this run is left
checks=$((checks + 1))
left=$(tagged)
if [ -n "$left" ]; then
  fail leftover "processes left behind: $left"
  for p in $left; do kill -9 "$p" 2>/dev/null; done
else
  echo "no process of this test is left"
fi
echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
exit $status
