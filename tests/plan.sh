# tests/plan.sh: how a test script runs PyTorch ports (sourced; tests/README.md).
#
# A test collects its runs in a plan, runs the plan once through the driver's
# many-run form (torch_driver.py --plan: one Python process, torch imported
# once, each run isolated: vectors/drivers/README.md), then judges each
# results file:
#
#   . "$srcdir/tests/plan.sh"                 # needs $work, $python, $srcdir, $muonref
#   plan_add port --optimizer "$srcdir/tests/torch_nemo_port.py:Muon" "$srcdir/vectors/nemo"
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

# q WORD: WORD as one shell word that Python's shlex reads back unchanged
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

plan_add() {
  _name=$1
  shift
  printf '%s %s' --out "$(q "$work/$_name.json")" >>"$work/plan"
  for _a in "$@"; do printf ' %s' "$(q "$_a")" >>"$work/plan"; done
  printf '\n' >>"$work/plan"
  rm -f "$work/$_name.json"
}

# _key LINE: the cache key of a plan line (MUONREF_PLAN_CACHE): the line without
# its --out (where the results go is no input of the run), $work and $srcdir
_key() {
  printf '%s' "$1" | sed "s/^--out '[^']*' //" | awk -v w="$work" -v s="$srcdir" '{
    while ((i = index($0, w)) > 0) $0 = substr($0, 1, i - 1) "<work>" substr($0, i + length(w))
    while ((i = index($0, s)) > 0) $0 = substr($0, 1, i - 1) "<srcdir>" substr($0, i + length(s))
    print }' | cksum | tr ' ' '-'
}

# _paths FROM TO: standard input to output with every FROM replaced by TO.  A
# results file names the port's file ("implementation": $srcdir/tests/...),
# and the two builds have two source folders (.ci/sanitize copies the tree
# to build-asan/src): the cache keeps "<srcdir>" in its place, so that a
# result taken from it names this build's file, as a run here would.
_paths() {
  awk -v f="$1" -v t="$2" '{
    o = ""
    while (f != "" && (i = index($0, f)) > 0) { o = o substr($0, 1, i - 1) t; $0 = substr($0, i + length(f)) }
    print o $0 }'
}

plan_run() {
  [ -s "$work/plan" ] || return 0
  if [ -n "${MUONREF_PLAN_CACHE:-}" ]; then  # the runs made before come from the cache
    mkdir -p "$MUONREF_PLAN_CACHE" || return 2
    : >"$work/plan.todo"
    while IFS= read -r _line; do
      _out=$(printf '%s\n' "$_line" | sed -n "s/^--out '\([^']*\)' .*/\1/p")
      _k=$MUONREF_PLAN_CACHE/$(_key "$_line").json
      if [ -s "$_k" ] && [ -n "$_out" ] && _paths "<srcdir>" "$srcdir" <"$_k" >"$_out"; then
        echo "plan.sh: $(basename "$_out") from the cache $MUONREF_PLAN_CACHE" >>"$work/plan.cached"
      else
        printf '%s\n' "$_line" >>"$work/plan.todo"
      fi
    done <"$work/plan"
    mv "$work/plan.todo" "$work/plan"
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
    while IFS= read -r _line; do
      _out=$(printf '%s\n' "$_line" | sed -n "s/^--out '\([^']*\)' .*/\1/p")
      _k=$MUONREF_PLAN_CACHE/$(_key "$_line").json
      # whole or not at all: another test may be reading the same key
      [ -s "$_out" ] && _paths "$srcdir" "<srcdir>" <"$_out" >"$_k.$$" && mv "$_k.$$" "$_k"
    done <"$work/plan"
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
