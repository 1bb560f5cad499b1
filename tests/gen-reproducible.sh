#!/bin/sh
# muonref test: `muonref gen` reproduces the committed vectors byte for
# byte, at the default precision and at twice it (the published values are
# correctly rounded: a higher working precision cannot change them).
# Prints Check-style summary lines so tests/summary.sh counts it.
set -u
src=${MUONREF_SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checks=0; fails=0
for prec in 256 512; do
  checks=$((checks + 1))
  if ./muonref gen --prec $prec --out "$tmp/$prec" >"$tmp/log" 2>&1 && diff -r "$src/vectors/nemo" "$tmp/$prec/nemo" >"$tmp/diff"; then
    echo "gen --prec $prec: identical to the committed vectors"
  else
    fails=$((fails + 1))
    echo "gen-reproducible:0:F:gen:prec_$prec:0: muonref gen --prec $prec differs from vectors/ or failed"
    cat "$tmp/log"; head -20 "$tmp/diff"
  fi
done
echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
[ $fails -eq 0 ]
