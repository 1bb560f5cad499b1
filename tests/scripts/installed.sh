#!/bin/sh
# muonref installcheck (run by `make installcheck` and so by `make distcheck`):
# from the installed tree alone, in an empty folder (no source checkout on
# any path but the user's own port, tests/ports/torch_nemo_port.py), a user
#  1. finds the installed vectors (`muonref vectors`);
#  2. judges muonref's fast path with one command and gets a JUnit file that
#     validates against the installed schema;
#  3. judges a PyTorch port with the installed driver (no vector path given)
#     and `muonref check --results`, and with the one command `muonref check --torch`;
#  4. judges it with pytest through the registered plugin (no -p, no
#     PYTHONPATH beyond the plugin folder configure chose);
#  5. reads `man muonref-check` and muonref-vectors(5) from the installed pages.
# Usage: tests/scripts/installed.sh BINDIR PKGDATADIR MANDIR PYTEST_PLUGIN_DIR SRCDIR
# Exit 0 pass, 1 fail; the parts needing torch, pytest, xmllint or man are
# skipped (with a line saying so) where those are missing.
bindir=$1 pkgdatadir=$2 mandir=$3 plugindir=$4 src=$5
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
case $src in /*) ;; *) src=$PWD/$src ;; esac
. "$src/tests/lib/lib.sh"
work_dir installed || exit 1
cd "$work" || exit 1
status=0
fail() { echo "FAIL: $*"; status=1; }
muonref=$bindir/muonref
port=$src/tests/ports/torch_nemo_port.py

# 1. the installed vectors
"$muonref" vectors >vectors.out 2>&1 || fail "muonref vectors: $(cat vectors.out)"
head -n 1 vectors.out | grep -qx "vectors: $pkgdatadir/vectors" && grep -q '^[0-9]* files, [1-9][0-9]* cases$' vectors.out &&
  echo "ok: $(head -n 1 vectors.out), $(tail -n 1 vectors.out)" || fail "muonref vectors: $(head -n 1 vectors.out)"

# 2. the fast path, with a JUnit report
"$muonref" check --impl fast-bf16 --quiet --junit report.xml >check.out 2>&1 &&
  echo "ok: muonref check --impl fast-bf16: $(tail -n 1 check.out)" || fail "muonref check: $(tail -n 3 check.out)"
if command -v xmllint >/dev/null 2>&1; then
  xmllint --noout --schema "$pkgdatadir/junit.xsd" report.xml 2>xmllint.err &&
    echo "ok: the JUnit report validates against $pkgdatadir/junit.xsd" || fail "JUnit: $(cat xmllint.err)"
else echo "skipped: no xmllint"; fi

# 3. a PyTorch port through the installed driver
if has_python torch; then
  "$python" "$pkgdatadir/drivers/torch_driver.py" -q --optimizer "$port:Muon" --out results.json 2>driver.err ||
    fail "the installed driver: $(cat driver.err)"
  "$muonref" check --quiet --profile nemo --results results.json >port.out 2>&1 &&
    echo "ok: the port through the installed driver: $(tail -n 1 port.out)" || fail "port: $(tail -n 3 port.out)"
else echo "skipped: $python has no torch"; fi

# 3b. the same in one command
if has_python torch; then
  PATH=$bindir:$PATH muonref check --quiet --profile nemo --torch "$port:Muon" >one.out 2>&1 &&
    echo "ok: muonref check --torch (one command): $(tail -n 1 one.out)" || fail "check --torch: $(tail -n 3 one.out)"
fi

# 4. the same through pytest and the registered plugin
if [ "$plugindir" != no ] && has_python torch pytest; then
  PYTHONPATH=$plugindir PATH=$bindir:$PATH "$python" -m pytest -p no:cacheprovider -q \
    --muonref-optimizer="$port:Muon" --muonref-profile nemo >pytest.out 2>&1 &&
    echo "ok: pytest --muonref-optimizer: $(tail -n 1 pytest.out)" || fail "pytest: $(tail -n 5 pytest.out)"
else echo "skipped: no pytest plugin folder, or no torch and pytest for $python"; fi

# 5. the man pages
if command -v man >/dev/null 2>&1; then
  for page in muonref-check muonref-vectors.5 muonref; do
    case $page in *.5) args="5 muonref-vectors";; *) args=$page;; esac
    # shellcheck disable=SC2086
    MANPATH=$mandir MANWIDTH=80 man --warnings $args >man.out 2>man.err && [ ! -s man.err ] && [ -s man.out ] &&
      echo "ok: man $args" || fail "man $args: $(head -n 3 man.err)"
  done
  grep -q -- '--junit' man.out 2>/dev/null || MANPATH=$mandir man muonref-check 2>/dev/null | grep -q -- '--junit' ||
    fail "man muonref-check does not document --junit"
else echo "skipped: no man"; fi
exit $status
