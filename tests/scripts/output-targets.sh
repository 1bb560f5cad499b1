#!/bin/sh
# muonref test: every file muonref writes goes through one writer
# (core/output.h), which never replaces what is not its own:
#  - a new name and a regular file: written whole (a temporary file renamed
#    into place; a replaced file keeps its mode), nothing left beside it;
#  - /proc/self/fd/1: the report reaches standard output (a pipe here);
#  - a FIFO: written through (a reader gets the report), still a FIFO;
#  - a symbolic link: kept; its regular target rewritten, its device target
#    (a link to /dev/null) written through; a dangling link refused (exit 2,
#    no file created);
#  - a folder: refused (exit 2, named); a regular file the user may not
#    write (mode 444, not root): refused, left as it was;
#  - a character device (mknod, where allowed): written through, still one;
#  - in a private mount namespace (unshare -m, where allowed, as CI's root):
#    ../shared/repro/t5_devices.sh's case, /dev/stdout a link to
#    /proc/self/fd/1 and /dev/null a device: neither replaced.
# for --junit, --write-results and --write-failures (the state file's
# targets: tests/unit/check_state).  Prints a Check-style summary.  Exit 0 pass, 1 fail.
src=${MUONREF_SRCDIR:-.}
muonref=${MUONREF:-./muonref}
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
v=$src/vectors/nemo/nemo_errors.json
case $v in /*) ;; *) v=$PWD/$v ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/output-targets.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
checks=0 fails=0
ok() { checks=$((checks + 1)); }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "output-targets:0:F:output:$1:0: $2"; }
cd "$work" || exit 1
# run OPTION TARGET: muonref check writing one output; the exit status
run() { "$muonref" check --impl fast-bf16 -q --fault nonfinite_accepted "$1" "$2" "$v" >"$work/out" 2>"$work/err"; }
# the fault fails some cases, so that --write-failures has lines
leftovers() { ls -A "$1" | grep -c 'muonref-'; }
# same A B: the same content but for the JUnit report's timings
same() { [ "$(sed 's/time="[^"]*"//g' "$1")" = "$(sed 's/time="[^"]*"//g' "$2")" ]; }

for opt in --junit --write-results --write-failures; do
  mkdir "$work/d" && cd "$work/d" || exit 1
  # a new name, then a regular file replaced (mode kept)
  run $opt new.out; rc=$?
  [ $rc -eq 1 ] && [ -s new.out ] && ok || bad "$opt-new" "exit $rc, new.out: $(ls -l new.out 2>&1)"
  echo old >old.out && chmod 640 old.out
  run $opt old.out
  [ "$(stat -c %a old.out)" = 640 ] && [ "$(head -c 3 old.out)" != old ] && ok ||
    bad "$opt-regular" "old.out: mode $(stat -c %a old.out), starts $(head -c 20 old.out)"
  # standard output by name: the content reaches the pipe (/proc/self/fd/1, never the real /dev/stdout:
  # a writer that renames over its target would replace the machine's /dev/stdout, as root; /dev/stdout
  # itself is tried in the private mount namespace below)
  n=$("$muonref" check --impl fast-bf16 -q --fault nonfinite_accepted $opt /proc/self/fd/1 "$v" 2>/dev/null | wc -c)
  [ "$n" -gt "$(wc -c <"$work/out")" ] && ok || bad "$opt-stdout" "$n bytes on standard output"
  # a FIFO: a reader gets it all; still a FIFO
  mkfifo fifo
  timeout 60 cat fifo >fifo.got & reader=$!
  run $opt fifo; rc=$?
  [ -p fifo ] || kill $reader 2>/dev/null # replaced: the reader waits on the old FIFO
  wait $reader
  [ $rc -eq 1 ] && [ -p fifo ] && same fifo.got new.out && ok ||
    bad "$opt-fifo" "exit $rc, fifo $(ls -l fifo | cut -c1), $(wc -c <fifo.got) bytes read of $(wc -c <new.out)"
  # a symbolic link to a regular file: the link kept, its target rewritten
  echo old >target.out && ln -s target.out link.out
  run $opt link.out
  [ -L link.out ] && same target.out new.out && ok || bad "$opt-link" "link.out $(ls -l link.out)"
  # a link to /dev/null: kept, /dev/null still a character device
  ln -s /dev/null null.out
  run $opt null.out; rc=$?
  [ $rc -eq 1 ] && [ -L null.out ] && [ -c /dev/null ] && ok || bad "$opt-devnull-link" "exit $rc, $(ls -l null.out)"
  # a dangling link: refused, nothing created
  ln -s missing.out dangling.out
  run $opt dangling.out; rc=$?
  [ $rc -eq 2 ] && [ ! -e missing.out ] && [ -L dangling.out ] &&
    grep -q "dangling.out: cannot write: a symbolic link to a missing file" "$work/err" && ok ||
    bad "$opt-dangling" "exit $rc: $(cat "$work/err")"
  # a folder: refused, named
  mkdir folder.out
  run $opt folder.out; rc=$?
  [ $rc -eq 2 ] && grep -q "folder.out: cannot write: a folder" "$work/err" && ok || bad "$opt-folder" "exit $rc: $(cat "$work/err")"
  # a character device of our own (root only): written through, still a device
  if mknod chr.out c 1 3 2>/dev/null; then
    run $opt chr.out; rc=$?
    [ $rc -eq 1 ] && [ -c chr.out ] && ok || bad "$opt-chardev" "exit $rc, $(ls -l chr.out)"
  fi
  [ "$(leftovers .)" = 0 ] && ok || bad "$opt-leftovers" "temporary files left: $(ls -A)"
  cd "$work" && rm -rf "$work/d"
done

# a regular file the user may not write is not replaced (as `>` would refuse it; root may write any):
# tried as this user when not root, as nobody when root and nobody can run muonref
chmod 755 "$work" && mkdir "$work/ro" && chmod 777 "$work/ro" && echo old >"$work/ro/f" && chmod 444 "$work/ro/f"
if [ "$(id -u)" != 0 ]; then
  "$muonref" check --impl fast-bf16 -q --junit "$work/ro/f" "$v" >/dev/null 2>"$work/err"; rc=$?
elif chown nobody "$work/ro/f" 2>/dev/null && su nobody -s /bin/sh -c "'$muonref' version" >/dev/null 2>&1; then
  su nobody -s /bin/sh -c "'$muonref' check --impl fast-bf16 -q --junit '$work/ro/f' '$v'" >/dev/null 2>"$work/err"; rc=$?
else
  rc=skip
fi
if [ "$rc" != skip ]; then
  [ "$rc" = 2 ] && [ "$(cat "$work/ro/f")" = old ] && grep -q "the file is not writable" "$work/err" && ok ||
    bad read-only "exit $rc: $(cat "$work/err"); the file holds $(head -c 40 "$work/ro/f")"
fi

# ../shared/repro/t5_devices.sh in a private mount namespace: /dev a tmpfs
# with /dev/stdout -> /proc/self/fd/1 and a /dev/null device
if unshare -m true 2>/dev/null; then
  unshare -m sh -c "mount -t tmpfs t /dev && ln -s /proc/self/fd/1 /dev/stdout && mknod /dev/null c 1 3 && \
    '$muonref' check --impl fast-bf16 --junit /dev/stdout --write-results /dev/null '$v' >'$work/ns.out' 2>&1; \
    echo rc=\$?; ls -l /dev" >"$work/ns.ls" 2>&1
  grep -q '^rc=0$' "$work/ns.ls" && grep -q '^l.* stdout -> /proc/self/fd/1$' "$work/ns.ls" &&
    grep -q '^c.* null$' "$work/ns.ls" && grep -q '<testsuites' "$work/ns.out" && ok ||
    bad namespace-devices "$(cat "$work/ns.ls")"
else
  echo "output-targets: unshare -m not allowed here: the private /dev case is skipped"
fi

echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
[ $fails -eq 0 ]
