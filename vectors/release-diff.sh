#!/bin/sh
# vectors/release-diff.sh [--repo DIR] OLD NEW: the cases two vector releases differ in, where OLD and NEW are
# each a folder of vectors or a git ref (a tag, branch or commit of the repository DIR, default the current
# one) whose vectors/ folder is taken.  Prints what `muonref vectors --diff` prints (spec/vectors.md 2.9): one
# line per added, changed or removed case by file and tcId; NEWS says why.
# MUONREF names the command (default: muonref on the PATH).
# Exit: that of muonref vectors --diff (0 listed; 2 a folder or ref that is not there, or a file that is not
# a vector file); 2 also for a usage error.
repo=.
[ "$1" = --repo ] && [ $# -ge 2 ] && { repo=$2; shift 2; }
[ $# -eq 2 ] || { echo "usage: vectors/release-diff.sh [--repo DIR] OLD NEW (folders or git refs)" >&2; exit 2; }
muonref=${MUONREF:-muonref}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/release-diff.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
# side NAME ARG: the folder of ARG on standard output (ARG itself, or ARG's vectors/ extracted under $tmp/NAME)
side() {
  if [ -d "$2" ]; then printf '%s\n' "$2"; return 0; fi
  git -C "$repo" rev-parse --verify --quiet "$2^{commit}" >/dev/null ||
    { echo "vectors/release-diff.sh: $2: neither a folder nor a git ref of $repo" >&2; return 2; }
  mkdir -p "$tmp/$1" && git -C "$repo" archive "$2" vectors | tar -x -C "$tmp/$1" ||
    { echo "vectors/release-diff.sh: $2: no vectors/ folder in that commit" >&2; return 2; }
  printf '%s\n' "$tmp/$1/vectors"
}
old=$(side old "$1") || exit 2
new=$(side new "$2") || exit 2
"$muonref" vectors --diff "$old" "$new"
