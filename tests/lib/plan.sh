# tests/lib/plan.sh: how a test script runs PyTorch ports (sourced; tests/README.md).
#
# A test collects its runs in a plan, runs the plan once through the driver's
# many-run form (torch_driver.py --plan: one Python process, torch imported
# once, each run isolated: vectors/drivers/README.md), then judges each
# results file:
#
#   . "$srcdir/tests/lib/plan.sh"                 # needs $work, $python, $srcdir, $muonref
#   plan_add port --optimizer "$srcdir/tests/ports/torch_nemo_port.py:Muon" "$srcdir/vectors/nemo"
#   plan_add ema -q --mode neutral --optimizer ... "$srcdir/vectors/nemo"
#   plan_run                                   # the driver's exit status; its messages in $work/plan.err
#   judge port "$srcdir/vectors/nemo"          # muonref check --results $work/port.json ...: $rc, $work/port.out
#
# plan_add NAME [DRIVER OPTIONS] VECTORS...: one run whose results go to
#   $work/NAME.json (NAME: letters, digits, '-', '_', '.'); the options are
#   the one-run command line's, --out excepted.
# plan_run [OPTIONS]: runs every run added since the last plan_run, with
#   --jobs ${MUONREF_JOBS:-1} (make check runs two tests at once); OPTIONS go
#   to the driver (-q, -v).  A run that failed wrote no results file:
#   plan_ran NAME says whether it did.
# judge NAME [CHECK OPTIONS] VECTORS...: `muonref check [OPTIONS] --results
#   $work/NAME.json VECTORS...` into $work/NAME.out (standard output and
#   error), its exit status in $rc; 99 when the run wrote no results file.
#   Give --no-diagnosis where the test reads no explanation (the verdicts,
#   the totals, the skips): the fit of every failure is most of a judge's
#   time on a failing run (torch-lifecycle.sh: 486 s with it, 16 s without).
#
# MUONREF_PLAN_CACHE=DIR (set by .ci/run for its two builds, fresh each
# time): a run whose plan line (its --out, $work and $srcdir taken out) was
# run before, by this test or another, takes that run's results file from DIR
# instead of running again (torch-lifecycle.sh's assigned-gradient runs are
# the cross matrix's raw diagonal).
# The driver's results do not depend on how muonref was built (the Python
# interpreter is the same, unsanitized): the sanitizer build judges them
# with its own muonref without redoing the Python work (.ci/sanitize).  The
# sources must not change while DIR lives: it knows no file's contents.

# q WORD: prints WORD as one shell word that Python's shlex reads back unchanged
# (each ' as '\''), with the shell's builtins only: the scripts add hundreds of
# runs, and a sed per word cost the cross matrix 35 s
q() {
  _q_s=$1 _q_r=
  while :; do
    case $_q_s in
      *"'"*) _q_r="$_q_r${_q_s%%"'"*}'\\''" _q_s=${_q_s#*"'"} ;;
      *) break ;;
    esac
  done
  printf "'%s'" "$_q_r$_q_s"
}

plan_add() {
  _name=$1
  shift
  {
    printf '%s ' --out
    q "$work/$_name.json"
    for _a in "$@"; do
      printf ' '
      q "$_a"
    done
    printf '\n'
  } >>"$work/plan"
  [ ! -e "$work/$_name.json" ] || rm -f "$work/$_name.json"
}

plan_run() {
  [ -s "$work/plan" ] || return 0
  if [ -n "${MUONREF_PLAN_CACHE:-}" ]; then # the runs made before come from the cache (tests/lib/plan_cache.py)
    "$python" "$srcdir/tests/lib/plan_cache.py" take "$work/plan" "$work" "$srcdir" "$MUONREF_PLAN_CACHE" || return 2
  fi
  _rc=0
  if [ -s "$work/plan" ]; then
    "$python" "$srcdir/vectors/drivers/torch_driver.py" --plan "$work/plan" --jobs "${MUONREF_JOBS:-1}" "$@" \
      2>"$work/plan.err"
    _rc=$?
  else
    : >"$work/plan.err"
  fi
  if [ -n "${MUONREF_PLAN_CACHE:-}" ]; then
    "$python" "$srcdir/tests/lib/plan_cache.py" store "$work/plan" "$work" "$srcdir" "$MUONREF_PLAN_CACHE" \
      2>>"$work/plan.err" # a result not stored is run again where asked for: no failure of this plan
  fi
  cat "$work/plan" >>"$work/plans.done"
  : >"$work/plan"
  return $_rc
}

plan_ran() { [ -s "$work/$1.json" ]; }

judge() {
  _name=$1
  shift
  if ! plan_ran "$_name"; then
    echo "the driver wrote no results for $_name: $(grep -v 'platform:' "$work/plan.err" | tail -n 3)" >"$work/$_name.out"
    rc=99
    return
  fi
  # the options go before --results, the vector paths after it
  _opts=
  while [ $# -gt 0 ]; do
    case $1 in -*) _opts="$_opts $1"; shift ;; *) break ;; esac
  done
  "$muonref" check $_opts --results "$work/$_name.json" "$@" >"$work/$_name.out" 2>&1
  rc=$?
}
