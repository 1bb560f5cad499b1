#!/bin/sh
# muonref test: the explanation evaluation's own pieces (tests/eval/run.py --self-test), which
# need no fetched code and no driver run: the manifests load and every answer key names fields,
# every mutant and control of a test port in tests/ still applies to it (a test port edited
# without its mutants would silently stop measuring them), and the parser reads both forms of
# explanation (the catalogue's "diagnosis: N failures [FAULT]" and the fitted "explained: FIELD
# OLD -> NEW ... (N of M failures)") and judges them against a key.  The evaluation itself is
# not part of make check: tests/eval/README.md.
# Exit 0 pass, 1 fail, 77 skip (no Python 3.11 with tomllib).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
"$python" -c 'import tomllib' >/dev/null 2>&1 || { echo "SKIP: $python has no tomllib (Python < 3.11)"; exit 77; }
exec "$python" "$srcdir/tests/eval/run.py" --self-test
