#!/bin/sh
# muonref test: a short, bounded fuzzing pass over every fuzz target
# (fuzz/run.sh: libFuzzer with ASan and UBSan, seeds from fuzz/corpus/),
# MUONREF_FUZZ_SECONDS seconds each (default 10; 0 skips), so that a
# regression in a parser is found by `make check`.  Skipped (77) when clang
# or libFuzzer is missing.  `make fuzz FUZZ_SECONDS=600` runs the long pass.
src=${MUONREF_SRCDIR:-.}
secs=${MUONREF_FUZZ_SECONDS:-10}
[ "$secs" = 0 ] && { echo "fuzz-short: MUONREF_FUZZ_SECONDS=0, skipped"; exit 77; }
FUZZ_BUILD=${FUZZ_BUILD:-$PWD/fuzz-build} sh "$src/fuzz/run.sh" "$secs"
