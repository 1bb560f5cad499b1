# tests/lib/lib.sh: what the test scripts share (sourced; tests/README.md).
#
#   srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
#   . "$srcdir/tests/lib/lib.sh"
#   need_python torch [pytest ...]  # exit 77 (skip) with the Debian package to install, unless $python imports them
#   has_python torch                # whether $python imports them (a part of a script that needs them)
#   work_dir NAME || exit 1         # $work: a fresh temporary folder, removed when the script ends
#   port_file NAME                  # tests/ports/NAME.py or tests/variants/NAME.py, whichever holds it
#
# It sets $muonref (MUONREF, default ./muonref: the build tree's) and $python
# (MUONREF_TORCH_PYTHON, default /usr/bin/python3: Debian's PyTorch) unless
# the script set them first.  The scripts that run test ports source
# tests/lib/ports.sh and tests/lib/plan.sh as well.
muonref=${muonref:-${MUONREF:-./muonref}}
python=${python:-${MUONREF_TORCH_PYTHON:-/usr/bin/python3}}

has_python() {
  _hp_mods=$(echo "$*" | tr ' ' ',')
  "$python" -c "import $_hp_mods" >/dev/null 2>&1
}

need_python() {
  has_python "$@" && return 0
  "$python" -c '' >/dev/null 2>&1 || { echo "SKIP: no Python runs at $python (MUONREF_TORCH_PYTHON names it)"; exit 77; }
  _np_pkgs=
  for _np_m in "$@"; do _np_pkgs="$_np_pkgs python3-$(echo "$_np_m" | sed 's/\..*//')"; done
  echo "SKIP: $python cannot import $(echo "$*" | sed 's/ / and /g') (Debian: apt-get install$_np_pkgs)"
  exit 77
}

work_dir() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || return 1
  trap 'rm -rf "$work"' EXIT INT TERM
}

port_file() {
  if [ -f "$srcdir/tests/ports/$1.py" ]; then echo "$srcdir/tests/ports/$1.py"; else echo "$srcdir/tests/variants/$1.py"; fi
}
