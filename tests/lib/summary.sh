#!/bin/sh
# Totals the results of every test under tests/ and its folders (written by `make check`)
# and prints "N passed, N failed[, N skipped]".  A Check program counts its
# individual checks (its "N%: Checks: N, Failures: N, Errors: N" line); any
# other test (a shell script) counts as one, from automake's .trs result. A
# test that was skipped (automake's SKIP, exit 77) counts as skipped, never as
# passed, whatever summary line it printed before skipping.
# Exits 1 when anything failed or nothing passed.
# Usage: tests/lib/summary.sh [BUILDDIR]   (default: the current directory)
dir=${1:-.}
passed=0; failed=0; skipped=0
for trs in "$dir"/tests/*.trs "$dir"/tests/*/*.trs; do
  [ -f "$trs" ] || continue
  log=${trs%.trs}.log
  result=$(sed -n 's/^:test-result: //p' "$trs" | head -n 1)
  line=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" 2>/dev/null | tail -n 1)
  if [ "$result" = SKIP ]; then
    skipped=$((skipped + 1)); echo "$(basename "$log" .log): skipped"
  elif [ -n "$line" ]; then
    checks=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
    bad=$(( $(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/') + $(echo "$line" | sed -E 's/.*Errors: ([0-9]+).*/\1/') ))
    passed=$((passed + checks - bad))
    failed=$((failed + bad))
    grep -E ':[FE]:' "$log"
    # a program that crashed after printing its summary still fails
    case $result in FAIL|ERROR) [ "$bad" -eq 0 ] && failed=$((failed + 1)) && echo "$(basename "$log" .log): $result";; esac
  else
    case $result in
      PASS|XFAIL) passed=$((passed + 1)) ;;
      *) failed=$((failed + 1)); echo "$(basename "$log" .log): ${result:-no result}"; tail -n 20 "$log" ;;
    esac
  fi
done
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
