#!/bin/sh
# muonref test: malformed vector and results files are unusable input
# (exit 2, a message naming the file, the case and the rule), never a
# port's failure (exit 1) nor a crash, whatever --impl is judged.
# The reproducers of issue 16 (tests/data/repro/) and one mutation of a
# committed vector file per rule of vectors/format/validate.c: each mutant is
# written by tests/scripts/malformed_files.py, judged by `muonref check` with both
# fast paths (and, for results files, --results), and the message checked.
# Issue 27's silent drops: every path read (257), a file with no test, a
# results entry for an unknown tcId refused before any case is judged, one
# for a file not judged reported, two files of one base name, `muonref ref`'s
# duplicate keys and file names, a NaN output in a singular-value band case
# (under valgrind where installed, in the main build: no uninitialised read).
# With --torch a malformed golden file is refused before the driver starts.
# Prints a Check-style summary for tests/lib/summary.sh.
src=${MUONREF_SRCDIR:-.}
muonref=${MUONREF:-./muonref}
py=${PYTHON3:-/usr/bin/python3}
exec "$py" "$src/tests/scripts/malformed_files.py" "$src" "$muonref"
