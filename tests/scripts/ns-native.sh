#!/bin/sh
# muonref test: the native bf16 Newton-Schulz (oneDNN, fast/ns_dnnl.c),
# forced at every size with MUONREF_NS_GEMM=dnnl, passes every golden
# vector in bf16 (the Bf16Exact ones bit for bit: their sums are exact in
# any order), and the mutation tests (tests/unit/check_faults) still catch every
# fault through it in bf16.  Skipped (77) where the path cannot run: a build
# without oneDNN or a CPU without bf16 instructions.  Also: an invalid
# MUONREF_NS_GEMM is refused with a message naming it.
# Prints Check-style summary lines so tests/lib/summary.sh counts it.
set -u
src=${MUONREF_SRCDIR:-.}
bin=${MUONREF:-./muonref}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checks=0; fails=0
fail() { fails=$((fails + 1)); echo "ns-native:0:F:ns-native:$1:0: $2"; }

checks=$((checks + 1))
MUONREF_NS_GEMM=bogus "$bin" check --impl fast-bf16 "$src/vectors/nemo" >"$tmp/bogus" 2>&1
grep -q "MUONREF_NS_GEMM='bogus': expected auto, blas or dnnl" "$tmp/bogus" || fail bogus_env "an invalid MUONREF_NS_GEMM was not refused by name"

MUONREF_NS_GEMM=dnnl "$bin" check --impl fast-bf16 "$src/vectors/nemo" >"$tmp/check" 2>&1
rc=$?
if grep -q "is not available" "$tmp/check"; then
  grep -m1 "is not available" "$tmp/check"
  echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
  [ $fails -eq 0 ] || exit 1
  exit 77
fi
checks=$((checks + 1))
if [ $rc -eq 0 ] && tail -1 "$tmp/check" | grep -q " 0 failed"; then
  echo "native bf16: $(tail -1 "$tmp/check")"
else
  fail vectors "muonref check --impl fast-bf16 with MUONREF_NS_GEMM=dnnl: exit $rc"; grep FAIL "$tmp/check" | head
fi

checks=$((checks + 1))
faults=$(dirname "$bin")/tests/unit/check_faults
# Not its fp32 claims: the fp32 path never calls oneDNN (fast/ns.c
# use_dnnl), and tests/scripts/mutation-faults.sh makes them (Check's tags,
# tests/unit/check_faults.c main()).  In the sanitizer build in one process, as
# tests/scripts/mutation-faults.sh says why.
export CK_EXCLUDE_TAGS=fp32
unset CK_INCLUDE_TAGS CK_RUN_CASE CK_RUN_SUITE
[ "${MUONREF_SANITIZER_BUILD:-0}" = 1 ] && export CK_FORK=no
if MUONREF_NS_GEMM=dnnl "$faults" >"$tmp/faults" 2>&1; then
  echo "native bf16: tests/unit/check_faults: $(grep Checks "$tmp/faults")"
else
  fail faults "tests/unit/check_faults with MUONREF_NS_GEMM=dnnl failed"; tail -20 "$tmp/faults"
fi
echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
[ $fails -eq 0 ]
