#!/bin/sh
# muonref test: malformed vector and results files are unusable input
# (exit 2, a message naming the file, the case and the rule), never a
# port's failure (exit 1) nor a crash, whatever --impl is judged.
# The reproducers of issue 16 (tests/data/repro/) and one mutation of a
# committed vector file per rule of vectors/validate.c: each mutant is
# written by tests/malformed_files.py, judged by `muonref check` with both
# fast paths (and, for results files, --results), and the message checked.
# Prints a Check-style summary for tests/summary.sh.
src=${MUONREF_SRCDIR:-.}
muonref=${MUONREF:-./muonref}
py=${PYTHON3:-/usr/bin/python3}
exec "$py" "$src/tests/malformed_files.py" "$src" "$muonref"
