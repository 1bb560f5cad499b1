#!/bin/sh
# installcheck of the C API: from the installed tree alone, the example
# programs build with `pkg-config --cflags --libs muonref` (examples/step.c)
# and `... muonref-ref` (examples/ref_polar.c) and nothing else on the
# command line, run against the installed shared libraries and print
# examples/*.expected; the installed libraries export exactly the
# MUONREF_API functions of the installed headers and no fault code
# (tests/scripts/api-symbols.sh on the installed folders).
# Usage: tests/scripts/installed-api.sh INCLUDEDIR LIBDIR SRCDIR [CC]
# Exit 0 pass, 1 fail, 77 skip (no pkg-config).
incdir=$1 libdir=$2 src=$3 cc=${4:-cc}
case $src in /*) ;; *) src=$PWD/$src ;; esac
command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: no pkg-config"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/installed-api.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
status=0
fail() { echo "FAIL: $*"; status=1; }
PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
cp "$src/examples/step.c" "$src/examples/ref_polar.c" "$work/" || exit 1
cd "$work" || exit 1
for pair in step:muonref ref_polar:muonref-ref; do
  ex=${pair%%:*} pc=${pair#*:}
  flags=$(pkg-config --cflags --libs "$pc") || { fail "pkg-config $pc: not found under $libdir/pkgconfig"; continue; }
  # shellcheck disable=SC2086
  if $cc "$ex.c" $flags -o "$ex" 2>"$ex.err"; then
    echo "ok: $ex.c builds with pkg-config --cflags --libs $pc ($flags)"
  else
    fail "$ex.c with pkg-config $pc: $(head -n 5 "$ex.err")"
  fi
done
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} MUONREF_SRCDIR=$src \
  sh "$src/tests/scripts/examples.sh" "$work" || status=1
sh "$src/tests/scripts/api-symbols.sh" "$incdir" "$libdir" || status=1
exit $status
