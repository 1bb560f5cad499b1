#!/bin/sh
# muonref test: -q/--quiet and -v/--verbose behave the same in every
# subcommand, and progress shows on a terminal only (muonref check and the
# PyTorch driver).
#  - every command of `muonref --help` refuses -q with -v (exit 2);
#  - -q leaves the result (profile's options, ns's value) unchanged and drops
#    information lines (gen's summary, check's FAIL lines; check keeps its totals);
#  - -v adds a line per case to check;
#  - check and the driver print no progress line into a pipe or file, and do
#    on a terminal (util-linux `script` gives one), except with -q.
# Prints a Check-style summary.  Exit 0 pass, 1 fail.
src=${MUONREF_SRCDIR:-.}
muonref=${MUONREF:-./muonref}
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
. "$src/tests/lib/lib.sh"
work_dir quiet-verbose || exit 1
checks=0 fails=0
ok() { checks=$((checks + 1)); }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "quiet-verbose:0:F:cli:$1:0: $2"; }
vec=$src/vectors/nemo

for c in $("$muonref" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
  "$muonref" "$c" -q -v >/dev/null 2>"$work/err"; rc=$?
  [ $rc -eq 2 ] && grep -q 'exclude each other' "$work/err" && ok || bad "$c-qv" "muonref $c -q -v: exit $rc"
  "$muonref" "$c" --verbose --quiet >/dev/null 2>&1; rc=$?
  [ $rc -eq 2 ] && ok || bad "$c-long" "muonref $c --verbose --quiet: exit $rc"
done

# -q keeps results
[ "$("$muonref" profile nemo)" = "$("$muonref" profile -q nemo)" ] && ok || bad profile "profile -q changes the options printed"
a=$("$muonref" ns --preset simple --steps 5 --sigma 0.5); b=$("$muonref" ns -q --preset simple --steps 5 --sigma 0.5)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad ns "ns -q prints '$b', not '$a'"
# -q drops information lines
"$muonref" gen --area errors --out "$work/gen" >"$work/gen.out" 2>&1
"$muonref" gen -q --area errors --out "$work/genq" >"$work/genq.out" 2>&1
[ -s "$work/gen.out" ] && [ ! -s "$work/genq.out" ] && cmp -s "$work/gen/nemo/nemo_errors.json" "$work/genq/nemo/nemo_errors.json" &&
  ok || bad gen "gen -q printed '$(cat "$work/genq.out")' or wrote another file"
"$muonref" check --impl fast-bf16 --fault ema_momentum "$vec" >"$work/f.out" 2>&1
"$muonref" check -q --impl fast-bf16 --fault ema_momentum "$vec" >"$work/fq.out" 2>&1
grep -q '^FAIL' "$work/f.out" && ! grep -q '^FAIL' "$work/fq.out" && [ "$(tail -n 1 "$work/f.out")" = "$(tail -n 1 "$work/fq.out")" ] &&
  ok || bad check-q "check -q: FAIL lines kept or totals changed"
# a --fault that fails no case (ema_momentum under torch, whose momentum is an EMA already): exit 0 and a
# note on standard error that says so, -q or not
"$muonref" check -q --impl fast-bf16 --fault ema_momentum "$src/vectors/torch/torch_momentum.json" \
  >"$work/noop.out" 2>"$work/noop.err"
rc=$?
[ $rc -eq 0 ] && grep -q '^muonref check: note: --fault ema_momentum fails none of these' "$work/noop.err" && ok ||
  bad fault-noop "exit $rc, stderr '$(cat "$work/noop.err")'"
grep -q 'fails none of these' "$work/f.out" && bad fault-noop-false "a fault that fails cases got the note" || ok
total=$("$muonref" vectors "$vec" | sed -n 's/^[0-9]* files, \([0-9]*\) cases$/\1/p')
n=$("$muonref" check -v --impl fast-bf16 "$vec" | grep -c '^ok ')
[ "$n" = "$total" ] && ok || bad check-v "check -v: $n case lines, expected $total"
"$muonref" vectors -v "$vec" | grep -q 'group 0: kind' && ok || bad vectors-v "vectors -v lists no test group"
[ "$("$muonref" vectors -q "$vec")" = "vectors: $vec" ] && ok || bad vectors-q "vectors -q prints more than the folder"

# progress: never into a pipe or file
"$muonref" check --impl fast-bf16 "$vec" >/dev/null 2>"$work/pipe.err"
! grep -q 'cases judged' "$work/pipe.err" && ok || bad check-pipe "a progress line went into a file"
if command -v script >/dev/null 2>&1; then
  # on a terminal: the progress line, unless -q
  script -qec "'$muonref' check --impl fast-bf16 '$vec'" /dev/null >"$work/tty.out" 2>&1
  grep -q "$total cases judged, 0 failed so far" "$work/tty.out" && ok || bad check-tty "no progress line on a terminal"
  script -qec "'$muonref' check -q --impl fast-bf16 '$vec'" /dev/null >"$work/ttyq.out" 2>&1
  ! grep -q 'cases judged' "$work/ttyq.out" && ok || bad check-tty-q "-q: a progress line on a terminal"
fi
if has_python torch; then
  drv="'$python' '$src/vectors/drivers/torch_driver.py' --optimizer '$src/tests/ports/torch_nemo_port.py:Muon' --out '$work/r.json' '$vec/nemo_errors.json'"
  sh -c "$drv" 2>"$work/drv.err"
  [ "$(wc -l <"$work/drv.err")" -eq 1 ] && grep -q '^torch_driver.py: .* -> ' "$work/drv.err" && ok ||
    bad driver-pipe "the driver wrote more than its closing line into a file: $(head -n 2 "$work/drv.err")"
  sh -c "$drv -q" 2>"$work/drvq.err"
  [ ! -s "$work/drvq.err" ] && ok || bad driver-q "driver -q printed: $(head -n 2 "$work/drvq.err")"
  # a port that casts a complex gradient to real (nemo_errors' complex-gradient case, BugB19):
  # PyTorch's UserWarning is the case's subject, not the run's; -q stays quiet
  cat >"$work/cast_port.py" <<EOF
import sys
sys.path.insert(0, '$src/tests/ports')
import torch
from torch_nemo_port import Muon as _Muon
class Muon(_Muon):
    def step(self, closure=None):
        for g in self.param_groups:
            for p in g['params']:
                if p.grad is not None and p.grad.is_complex():
                    torch.zeros(p.shape).copy_(p.grad)
        return super().step(closure)
EOF
  "$python" "$src/vectors/drivers/torch_driver.py" --optimizer "$work/cast_port.py:Muon" -q --out "$work/rc.json" \
    "$vec/nemo_errors.json" 2>"$work/drvc.err"
  [ ! -s "$work/drvc.err" ] && ok || bad driver-q-cast "driver -q printed a port's warning: $(head -n 2 "$work/drvc.err")"
  if command -v script >/dev/null 2>&1; then
    script -qec "$drv" /dev/null >"$work/drvtty.out" 2>&1
    grep -q 'skipped so far' "$work/drvtty.out" && ok || bad driver-tty "the driver shows no progress on a terminal"
  fi
fi
echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
[ $fails -eq 0 ]
