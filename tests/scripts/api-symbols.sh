#!/bin/sh
# The shared libraries export exactly their documented API: the dynamic
# symbols of libmuonref.so and libmuonref_ref.so (nm -D --defined-only) are
# the functions declared with MUONREF_API in the installed headers (those of
# ref.h, mpmat.h and ns_rounded.h for libmuonref_ref, the others for
# libmuonref), and the installed libmuonref holds no fault code
# (fast/faults.h: the test hooks are in the noinst libmuonref_hooks only).
# Usage: tests/scripts/api-symbols.sh [INCLUDEDIR LIBDIR]  (default: the source
# tree's include/ and the build tree's .libs/, as make check runs it;
# tests/scripts/installed-api.sh passes the installed folders).
# Exit 0 pass, 1 fail, 77 skip (no nm).
src=${MUONREF_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
inc=${1:-$src/include}
libdir=${2:-.libs}
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/api-symbols.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
status=0
fail() { echo "FAIL: $*"; status=1; }

# declared: the names after MUONREF_API in the given headers
declared() {
  sed -n 's/^MUONREF_API .*[ *]\(muonref_[a-z0-9_]*\)(.*/\1/p' "$@" | sort -u
}
ref_headers="$inc/muonref/ref.h $inc/muonref/mpmat.h $inc/muonref/ns_rounded.h"
main_headers=$(ls "$inc"/muonref/*.h | grep -v '/ref\.h$\|/mpmat\.h$\|/ns_rounded\.h$')
# shellcheck disable=SC2086
declared $main_headers >"$work/muonref.api"
# shellcheck disable=SC2086
declared $ref_headers >"$work/muonref_ref.api"
[ -s "$work/muonref.api" ] && [ -s "$work/muonref_ref.api" ] || fail "no MUONREF_API declaration found under $inc"

for lib in muonref muonref_ref; do
  so=$libdir/lib$lib.so
  [ -f "$so" ] || { fail "$so not found"; continue; }
  nm -D --defined-only "$so" | awk '{print $NF}' | sort -u >"$work/$lib.syms"
  if cmp -s "$work/$lib.api" "$work/$lib.syms"; then
    echo "ok: lib$lib.so exports exactly its $(wc -l <"$work/$lib.api") documented functions"
  else
    fail "lib$lib.so: exported (>) versus declared MUONREF_API (<):"
    diff "$work/$lib.api" "$work/$lib.syms" | grep '^[<>]'
  fi
done

# no fault code at all in the installed fast path (symbols, local ones too, and strings)
so=$libdir/libmuonref.so
if [ -f "$so" ]; then
  if nm "$so" 2>/dev/null | awk '{print $NF}' | grep -q '^muonref_fault\|create_fault' ||
     grep -q -e nonfinite_accepted -e route_all_matrices -e state_step_reset "$so"; then
    fail "libmuonref.so contains fault code: $(nm "$so" | grep -i 'muonref_fault\|create_fault' | head -3)"
  else
    echo "ok: libmuonref.so holds no fault code"
  fi
fi
exit $status
