#!/bin/sh
# muonref test: one verdict in every format (issue 29 items 1 and 2): on one
# results file with a raw second run and baselines with reasons, the text
# report, JUnit, TAP (TAP::Parser, prove) and the pytest plugin give every
# case the verdict computed from the judge's plain verdicts and the
# baseline's lines (tests/scripts/verdict_formats.py says how).  No port runs (the
# results come from muonref's fast path), so no torch is needed.
# Exit 0 pass, 1 fail, 77 skip (no xmllint, perl's TAP::Parser, prove, or
# pytest for $PYTHON).
srcdir=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$srcdir/tests/lib/lib.sh"
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
for tool in xmllint perl prove; do
  command -v $tool >/dev/null 2>&1 || { echo "SKIP: no $tool (apt-get install libxml2-utils perl)"; exit 77; }
done
perl -MTAP::Parser -e 1 2>/dev/null || { echo "SKIP: perl has no TAP::Parser"; exit 77; }
"$python" -c 'import pytest' >/dev/null 2>&1 || { echo "SKIP: $python cannot import pytest (python3-pytest)"; exit 77; }
work_dir verdict-formats || exit 1
"$python" "$srcdir/tests/scripts/verdict_formats.py" "$muonref" "$srcdir" "$work"
