#!/bin/sh
# tests/scripts/torch-neutral.sh: unit tests of the driver's neutral mode and platform
# probe (tests/scripts/torch_neutral_test.py; make check).  Prints the platform probe's
# findings first, for the log.
#
# Exit: 0 pass; 77 skip (no torch for $PYTHON); 1 fail.
# Environment: MUONREF_SRCDIR (the source tree, exported by make check),
# MUONREF_TORCH_PYTHON (default /usr/bin/python3: Debian's, with python3-torch).

srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"

need_python torch
"$python" "$srcdir/vectors/drivers/platform_probe.py" || exit 1
"$python" "$srcdir/tests/scripts/torch_neutral_test.py" -v 2>&1 || exit 1
