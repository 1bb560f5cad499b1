#!/bin/sh
# man/generate.sh MUONREF SRCDIR: writes SRCDIR/man/muonref.1 and one
# SRCDIR/man/muonref-COMMAND.1 per subcommand from their --help output
# (help2man; `make man` runs it).  The extra sections of each page come from
# SRCDIR/man/common.h2m and SRCDIR/man/muonref-COMMAND.h2m when present.
# The pages are committed, so that building needs no help2man;
# tests/scripts/man-pages.sh checks that they still carry every option of --help.
set -eu
muonref=$1 src=$2
command -v help2man >/dev/null || { echo "man/generate.sh: needs help2man (apt-get install help2man)" >&2; exit 2; }
version=$("$muonref" version | sed 's/^muonref //')
inc() { for f in "$src/man/common.h2m" "$src/man/$1.h2m"; do [ -f "$f" ] && printf ' -i %s' "$f"; done; }
# shellcheck disable=SC2046
help2man -N $(inc muonref) --version-string="muonref $version" \
  -n "reference implementation and conformance suite of the Muon optimizer" -o "$src/man/muonref.1" "$muonref"
"$muonref" --help | sed -n 's/^  \([a-z]*\)  *\(.*\)$/\1 \2/p' | while read -r cmd summary; do
  name=$(echo "$summary" | sed 's/ (muonref .*)$//')
  # shellcheck disable=SC2046
  help2man -N $(inc "muonref-$cmd") --help-option="$cmd --help" --version-string="muonref-$cmd $version" \
    -n "$name" -o "$src/man/muonref-$cmd.1" "$muonref"
done
