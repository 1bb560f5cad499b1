#!/bin/sh
# muonref fuzzing: builds the fuzz targets of fuzz/ with clang's libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer (the project's sources
# compiled directly, not the gcc-built libraries), then runs each target
# for SECONDS seconds from its committed seed corpus fuzz/corpus/TARGET.
#   fuzz/run.sh [SECONDS] [TARGET...]     (default 60 s, every target)
# Environment: FUZZ_BUILD (default fuzz-build/ in the current folder) holds
# the binaries, the grown corpora (FUZZ_BUILD/corpus/TARGET) and any crash
# file (FUZZ_BUILD/crash-TARGET-*); CC_FUZZ the compiler (default clang).  Exit status: 0 no finding, 1 a target
# crashed (its crash file is named), 77 clang or libFuzzer is missing.
# For each target it prints "fuzz TARGET: N executions in S s, no finding".
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-"vectors results tensor coeffs state junit tap record"}
build=${FUZZ_BUILD:-$PWD/fuzz-build}
cc=${CC_FUZZ:-clang}
command -v "$cc" >/dev/null 2>&1 || { echo "fuzz: $cc not found (Debian: clang)"; exit 77; }
mkdir -p "$build/obj" "$build/corpus" || exit 2
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
  -std=gnu11 -DMUONREF_TEST_HOOKS -I$src/include -I$src -I/usr/include/x86_64-linux-gnu -I/usr/include/x86_64-linux-gnu/openblas-pthread"
libs="-ljansson -llapacke -lopenblas -lmpfr -lgmp -lz -lm"
# config.h of the build (the current folder) or of an in-tree build: with
# oneDNN configured (HAVE_DNNL), fast/ns_dnnl.c needs -ldnnl
cfg=$PWD/config.h
[ -f "$cfg" ] || cfg=$src/config.h
flags="$flags -I$(dirname "$cfg")"
grep -q '^#define HAVE_DNNL 1' "$cfg" 2>/dev/null && libs="$libs -ldnnl"
srcs="core/status.c core/fail.c core/pyfmt.c core/options.c core/checks.c core/presets.c core/profile.c core/route.c core/plan.c core/grad.c core/ema.c
  core/output.c core/option_fields.c core/rng.c fast/bf16.c fast/ns.c fast/ns_kernels.c fast/ns_dnnl.c fast/optimizer.c fast/faults.c fast/state.c
  fast/pool.c fast/step_kernels.c
  vectors/format/tensor.c vectors/format/case.c vectors/judge/run_fast.c vectors/judge/judge.c vectors/judge/singular_values.c vectors/format/validate.c vectors/format/escape.c vectors/format/release.c vectors/format/files.c study/set.c
  vectors/judge/report_junit.c vectors/judge/report_tap.c"
# linked into fuzz_record only (it stands in for the generator's area list)
record_srcs="vectors/format/record.c vectors/format/record_write.c"
objs="" record_objs=""
# an object is rebuilt when its source is newer, and every object when any
# header changed (a struct that grew must not meet objects of the old layout)
hsum=$(cat "$src"/include/muonref/*.h "$src"/core/*.h "$src"/fast/*.h "$src"/ref/*.h "$src"/vectors/*/*.h "$cfg" 2>/dev/null | cksum)
if [ "$(cat "$build/obj/headers.sum" 2>/dev/null)" != "$hsum" ]; then
  rm -f "$build"/obj/*.o
  mkdir -p "$build/obj" && echo "$hsum" >"$build/obj/headers.sum"
fi
for f in $srcs $record_srcs; do
  o=$build/obj/$(echo "$f" | tr / _ | sed 's/\.c$/.o/')
  if [ ! -f "$o" ] || [ "$src/$f" -nt "$o" ]; then
    $cc $flags -c "$src/$f" -o "$o" || { echo "fuzz: cannot compile $f"; exit 2; }
  fi
  case " $record_srcs " in *" $f "*) record_objs="$record_objs $o" ;; *) objs="$objs $o" ;; esac
done
status=0
for t in $targets; do
  bin=$build/fuzz_$t
  # the JUnit target validates what it writes with libxml2 against vectors/junit.xsd where libxml2 is installed
  extra=
  if [ "$t" = junit ] && pkg-config --exists libxml-2.0 2>/dev/null; then
    extra="-DFUZZ_LIBXML2 -DJUNIT_XSD=\"$src/vectors/junit.xsd\" $(pkg-config --cflags --libs libxml-2.0)"
  fi
  [ "$t" = record ] && extra=$record_objs
  # shellcheck disable=SC2086
  $cc $flags -fsanitize=fuzzer -DJUDGE_CASES="\"$src/fuzz/judge_cases.json\"" "$src/fuzz/fuzz_$t.c" $objs $libs $extra \
    -o "$bin" || { echo "fuzz: cannot build fuzz_$t"; exit 2; }
  mkdir -p "$build/corpus/$t"
  log=$build/fuzz_$t.log
  # the grown corpus first (new inputs go there), the committed seeds read only
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=20 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$build/crash-$t-" "$build/corpus/$t" "$src/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s += $1} END {print s + 0}')
  if [ $rc -ne 0 ]; then
    echo "fuzz $t: FINDING after $runs executions (exit $rc): $(ls "$build"/crash-$t-* 2>/dev/null | head -1)"
    grep -m 3 -E 'ERROR|runtime error|==ABORT|deadly signal' "$log"
    status=1
  else
    echo "fuzz $t: $runs executions in $secs s, no finding"
  fi
done
exit $status
