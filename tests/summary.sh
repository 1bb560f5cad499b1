#!/bin/sh
# Totals the Check results of every test log under tests/ (written by
# `make check`) and prints "N passed, N failed".  Exits 1 when a test failed
# or a test program produced no Check summary (it crashed or did not run).
# Usage: tests/summary.sh [BUILDDIR]   (default: the current directory)
dir=${1:-.}
passed=0; failed=0; missing=""
for trs in "$dir"/tests/*.trs; do
  [ -f "$trs" ] || continue
  log=${trs%.trs}.log
  line=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    missing="$missing $(basename "$log" .log)"
    failed=$((failed + 1))
    continue
  fi
  checks=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
  fails=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
  errs=$(echo "$line" | sed -E 's/.*Errors: ([0-9]+).*/\1/')
  bad=$((fails + errs))
  passed=$((passed + checks - bad))
  failed=$((failed + bad))
  grep -E ':[FE]:' "$log"
done
[ -n "$missing" ] && echo "test programs without a Check summary (crashed or did not run):$missing"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
