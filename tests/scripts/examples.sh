#!/bin/sh
# The example programs (examples/step.c, examples/ref_polar.c: the public
# API alone) print exactly examples/*.expected.  make check runs the ones
# built here against the build tree's shared libraries; tests/scripts/installed-api.sh
# passes the folder of the ones it built from the installed tree.
# Usage: tests/scripts/examples.sh [FOLDER-OF-THE-PROGRAMS]   Exit 0 pass, 1 fail.
src=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=${1:-examples}
status=0
for ex in step ref_polar; do
  out=$("$dir/$ex" 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && [ "$out" = "$(cat "$src/examples/$ex.expected")" ]; then
    echo "ok: $ex prints examples/$ex.expected"
  else
    echo "FAIL: $dir/$ex (exit $rc) printed:"
    echo "$out" | diff "$src/examples/$ex.expected" - | sed 's/^/  /'
    status=1
  fi
done
exit $status
