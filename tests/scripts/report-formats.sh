#!/bin/sh
# muonref test: the machine-readable verdicts of `muonref check`
# (vectors/judge/report.h) against their formats' published structure.
#
#  - JUnit XML (--junit): validated by xmllint against vectors/junit.xsd (our
#    schema of the Jenkins/Surefire JUnit report); one testcase per vector
#    case, classname PROFILE.AREA, the failure message the judge's; the
#    counts agree with the table; the schema rejects a testcase without
#    classname; an unwritable --junit FILE exits 2 and leaves nothing.
#  - TAP 14 (--tap) and 13 (--tap=13, which Debian 12's prove passes): every line matches the TAP 14 grammar
#    (testanything.org/tap-version-14-specification.html), and Perl's
#    TAP::Parser (prove's parser; Debian 12's knows versions up to 13, so the
#    version line is read as 13: the stream uses only what 13 and 14 share)
#    finds a good plan, the right numbers of tests and failures, the
#    descriptions (the escaped "\#" starting no directive) and the YAML blocks with the judge's message;
#    prove fails the faulty run and passes the correct one.
#  - hostile strings in a results file (controls, noncharacters, a forged
#    line, a NUL, a long message): JUnit valid, TAP parsed, the text report
#    and the --write-failures file escaped (vectors/format/escape.h).
# Prints a Check-style summary line.  Exit 0 pass, 1 fail, 77 skip.
src=${MUONREF_SRCDIR:-.}
muonref=${MUONREF:-./muonref}
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
vectors=$src/vectors/nemo
for tool in xmllint perl prove; do
  command -v $tool >/dev/null 2>&1 || { echo "SKIP: no $tool (apt-get install libxml2-utils perl)"; exit 77; }
done
perl -MTAP::Parser -e 1 2>/dev/null || { echo "SKIP: perl has no TAP::Parser"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/report-formats.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
checks=0 fails=0
ok() { checks=$((checks + 1)); }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "report-formats:0:F:formats:$1:0: $2"; }

total=$("$muonref" vectors "$vectors" | sed -n 's/^[0-9]* files, \([0-9]*\) cases$/\1/p')
[ -n "$total" ] && [ "$total" -gt 0 ] && ok || bad vectors "muonref vectors gives no case count"

# a faulty run (fails some cases) and a correct one (fails none)
for run in faulty correct; do
  opt=
  [ $run = faulty ] && opt="--fault ema_momentum"
  # shellcheck disable=SC2086
  "$muonref" check --impl fast-bf16 $opt --junit "$work/$run.xml" --tap "$vectors" >"$work/$run.tap" 2>"$work/$run.err"
  rc=$?
  want=1; [ $run = correct ] && want=0
  [ $rc -eq $want ] && ok || bad "$run-exit" "muonref check exited $rc, expected $want"
  failed=$(sed -n 's/^[0-9]* passed, \([0-9]*\) failed$/\1/p' "$work/$run.err")
  [ -n "$failed" ] && ok || bad "$run-table" "the table (on standard error with --tap) has no totals line"
  { [ $run = faulty ] && [ "${failed:-0}" -gt 0 ]; } || { [ $run = correct ] && [ "$failed" = 0 ]; } && ok ||
    bad "$run-count" "$failed failed cases"

  # JUnit
  if xmllint --noout --schema "$src/vectors/junit.xsd" "$work/$run.xml" 2>"$work/xmllint.err"; then ok; else
    bad "$run-junit-schema" "$(tail -n 3 "$work/xmllint.err")"; fi
  n=$(xmllint --xpath 'count(//testcase)' "$work/$run.xml")
  [ "$n" = "$total" ] && ok || bad "$run-junit-cases" "$n testcases, expected $total"
  nf=$(xmllint --xpath 'count(//testcase/failure)' "$work/$run.xml")
  [ "$nf" = "$failed" ] && ok || bad "$run-junit-failures" "$nf failures, the table says $failed"
  top=$(xmllint --xpath 'string(/testsuites/@failures)' "$work/$run.xml")
  [ "$top" = "$failed" ] && ok || bad "$run-junit-total" "testsuites failures=$top, expected $failed"
  badcls=$(xmllint --xpath 'count(//testcase[not(starts-with(@classname, "nemo."))])' "$work/$run.xml")
  [ "$badcls" = 0 ] && ok || bad "$run-junit-classname" "$badcls testcases whose classname is not nemo.AREA"
  suites=$(xmllint --xpath 'count(/testsuites/testsuite)' "$work/$run.xml")
  nfiles=$(ls "$vectors"/*.json | wc -l)
  [ "$suites" = "$nfiles" ] && ok || bad "$run-junit-suites" "$suites testsuites, expected one per area ($nfiles)"

  # TAP: the grammar of TAP 14, line by line
  perl -ne '
    BEGIN { $n = 0; $yaml = 0; $bad = 0 }
    chomp;
    if ($yaml) { $yaml = 0 if /^  \.\.\.$/; next if /^  /; print "not YAML-indented: $_\n"; $bad++; next }
    if ($. == 1) { next if $_ eq "TAP version 14"; print "first line: $_\n"; $bad++; next }
    if (/^(not )?ok (\d+)(?: - (?:[^\\#]|\\[\\#])*)?$/) { $n++; print "test $2 out of order\n", $bad++ if $2 != $n; next }
    if (/^  ---$/) { $yaml = 1; next }
    if (/^1\.\.(\d+)$/) { print "plan $1 for $n tests\n", $bad++ if $1 != $n; $plan++; next }
    next if /^#/;
    print "not TAP 14: $_\n"; $bad++;
    END { $bad++, print "no plan\n" unless $plan == 1; exit($bad ? 1 : 0) }
  ' "$work/$run.tap" >"$work/grammar.out" && ok || bad "$run-tap-grammar" "$(head -n 3 "$work/grammar.out")"

  # TAP: Perl's TAP::Parser
  sed '1s/^TAP version 14$/TAP version 13/' "$work/$run.tap" >"$work/$run.tap13"
  perl -MTAP::Parser -e '
    my ($file, $total, $failed, $faillines) = @ARGV;
    my $p = TAP::Parser->new({ exec => ["cat", $file] });
    my ($bad, $msgs) = (0, 0);
    my %fail; open my $fh, "<", $faillines; while (<$fh>) { $fail{$1} = 1 if /: ([^:]+: got .*)$/ } close $fh;
    while (my $r = $p->next) {
      # the escaped "\\#" stays in the description and starts no directive
      if ($r->is_test && ($r->description !~ /^- nemo\.\w+ nemo_\w+\.json\\#\d+/ || $r->directive ne "")) {
        print "description: ", $r->description, " directive: ", $r->directive, "\n"; $bad++ }
      if ($r->is_yaml) { my $m = $r->data->{message}; $msgs++ if defined $m && $fail{$m} }
      if ($r->is_unknown) { print "unknown: ", $r->as_string, "\n"; $bad++ }
    }
    print "parse errors: ", join("; ", $p->parse_errors), "\n", $bad++ if $p->parse_errors;
    print "plan\n", $bad++ unless $p->is_good_plan;
    print "run ", $p->tests_run, " of $total\n", $bad++ if $p->tests_run != $total;
    print "failed ", scalar($p->failed), " not $failed\n", $bad++ if scalar($p->failed) != $failed;
    print "YAML messages matching the FAIL lines: $msgs of $failed\n", $bad++ if $failed > 0 && $msgs < 1;
    exit($bad ? 1 : 0);
  ' "$work/$run.tap13" "$total" "${failed:-0}" "$work/$run.err" >"$work/parser.out" 2>&1 && ok ||
    bad "$run-tap-parser" "$(head -n 3 "$work/parser.out")"
  if prove -e cat "$work/$run.tap13" >"$work/prove.out" 2>&1; then prc=0; else prc=1; fi
  [ $prc -eq $want ] && ok || bad "$run-prove" "prove exited $prc, expected $want: $(tail -n 2 "$work/prove.out")"
done

# the schema is no test that cannot fail: a testcase without classname is rejected
sed '0,/<testcase classname="[^"]*"/s//<testcase/' "$work/faulty.xml" >"$work/broken.xml"
if xmllint --noout --schema "$src/vectors/junit.xsd" "$work/broken.xml" 2>/dev/null; then
  bad schema-rejects "a testcase without classname validates"; else ok; fi
# nor is the grammar check: a line that is no TAP fails it
printf 'TAP version 14\nok 1 - a\nokay 2\n1..1\n' >"$work/broken.tap"
perl -ne 'exit 1 if !/^(TAP version 14|(not )?ok \d+( - .*)?|1\.\.\d+)$/' "$work/broken.tap" && bad tap-rejects "'okay 2' passes" || ok

# a release-keyed profile's dots: classname emerging@0_3.errors (a dot would split it into package and class)
rel="$src/vectors/emerging@0.3/emerging@0.3_errors.json"
"$muonref" check --impl fast-bf16 --junit "$work/rel.xml" "$rel" >/dev/null 2>&1
cls=$(xmllint --xpath 'string(//testcase[1]/@classname)' "$work/rel.xml")
[ "$cls" = "emerging@0_3.errors" ] && ok || bad rel-junit-classname "classname '$cls', expected emerging@0_3.errors"

# an unwritable --junit place: exit 2, a message naming it, nothing left behind
mkdir "$work/ro"
"$muonref" check --impl fast-bf16 --junit "$work/ro/missing/out.xml" "$vectors/nemo_errors.json" >/dev/null 2>"$work/ro.err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--junit $work/ro/missing/out.xml" "$work/ro.err" && ok ||
  bad junit-unwritable "exit $rc: $(cat "$work/ro.err")"
[ -z "$(ls -A "$work/ro")" ] && ok || bad junit-leftover "files left behind: $(ls -A "$work/ro")"

# --quiet and --verbose exclude each other (exit 2)
"$muonref" check --impl fast-bf16 --quiet --verbose "$vectors" >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad quiet-verbose "--quiet --verbose accepted"
# --verbose: one line per case
nv=$("$muonref" check --impl fast-bf16 --verbose "$vectors" | grep -c '^ok ')
[ "$nv" = "$total" ] && ok || bad verbose "--verbose printed $nv 'ok' lines, expected $total"

# free text with markup, '#', '\', a line break and a control character in a
# case's comment: the JUnit file stays valid and says it back (the control
# character as U+FFFD), the TAP line stays one test point with no directive
odd='odd & <chars> "quoted" it'"'"'s # hash \ back
line'
"${MUONREF_PYTHON:-python3}" - "$vectors/nemo_errors.json" "$work/odd.json" "$odd" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["testGroups"][0]["tests"][0]["comment"] = sys.argv[3] + "\x01end"
json.dump(doc, open(sys.argv[2], "w"))
PY
"$muonref" check --impl fast-bf16 --junit "$work/odd.xml" --tap "$work/odd.json" >"$work/odd.tap" 2>/dev/null
xmllint --noout --schema "$src/vectors/junit.xsd" "$work/odd.xml" 2>/dev/null && ok || bad odd-junit "not valid: $(head -c 300 "$work/odd.xml")"
got=$(xmllint --xpath 'string(//testcase[1]/@name)' "$work/odd.xml")
want="odd.json#1 $odd$(printf '\357\277\275')end"
[ "$got" = "$want" ] && ok || bad odd-name "testcase name '$got', expected '$want'"
sed '1s/^TAP version 14$/TAP version 13/' "$work/odd.tap" >"$work/odd.tap13"
perl -MTAP::Parser -e '
  my $p = TAP::Parser->new({ exec => ["cat", $ARGV[0]] });
  my ($first, $bad) = (undef, 0);
  while (my $r = $p->next) { $first //= $r if $r->is_test; $bad++ if $r->is_unknown }
  exit(($bad || !$first || $first->directive ne "" || $first->description !~ /\\# hash \\\\ back line\x{fffd}end|\\# hash \\\\ back line\xef\xbf\xbdend/
        || $p->parse_errors || !$p->is_good_plan) ? 1 : 0);
' "$work/odd.tap13" && ok || bad odd-tap "the odd comment broke the TAP stream: $(sed -n 3p "$work/odd.tap")"

# TAP 13 (--tap=13): the same stream with version line 13, which Debian 12's prove reads (it fails
# an all-pass TAP 14 stream: "we don't know about versions later than 13")
"$muonref" check --impl fast-bf16 --tap=13 "$vectors/nemo_errors.json" >"$work/v13.tap" 2>/dev/null
[ "$(head -n 1 "$work/v13.tap")" = "TAP version 13" ] && prove -e cat "$work/v13.tap" >/dev/null 2>&1 && ok ||
  bad tap13-pass "--tap=13: $(head -n 1 "$work/v13.tap"), prove: $(prove -e cat "$work/v13.tap" 2>&1 | tail -n 1)"
"$muonref" check --impl fast-bf16 --fault nonfinite_accepted --tap=13 "$vectors/nemo_errors.json" >"$work/v13f.tap" 2>/dev/null
prove -e cat "$work/v13f.tap" >/dev/null 2>&1 && bad tap13-fail "prove passes a failing --tap=13 run" || ok
"$muonref" check --impl fast-bf16 --tap=12 "$vectors/nemo_errors.json" >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad tap-version "--tap=12 accepted"

# hostile strings from a port (a results file): noncharacters, C1 and C0 controls, a forged line,
# terminal escapes, bidirectional overrides, a NUL, a 1201-byte message whose cut falls inside a
# character; in the implementation name, messages and skip reasons.  The JUnit file validates
# against the schema, the TAP stream parses with one test point per case, the text report holds
# no control byte and no forged line, the NUL fails its case (exit 1, not 2), and the long
# message is cut between characters (no U+FFFD where é was cut)
"${MUONREF_PYTHON:-python3}" - "$vectors/nemo_errors.json" "$work/hostile.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ids = [t["tcId"] for g in doc["testGroups"] for t in g["tests"]]
bad = ["x\ufffey\uffffz\ufdd0", "\u009b31m C1 CSI", "ok\r\n9999 passed, 0 failed\n\u001b[2J\u001b[31mred\u0007",
       "bidi \u202egnp.exe\u202c \u2028line", "nul\u0000after", "\u00e9" * 600 + "z"]
res = []
for k, i in enumerate(ids):
    e = {"file": "nemo_errors.json", "tcId": i}
    if k < len(bad):
        e["error"] = bad[k]
    elif k == len(bad):
        e["skipped"] = "skip \u001b]0;title\u0007 \ufffe"
    else:
        continue
    res.append(e)
json.dump({"implementation": "evil\n9999 passed, 0 failed\u001b[2J\uffff", "nsFormat": "bf16", "results": res},
          open(sys.argv[2], "w"))
PY
"$muonref" check --results "$work/hostile.json" --junit "$work/hostile.xml" --write-failures "$work/hostile.known" \
  "$vectors/nemo_errors.json" >"$work/hostile.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && ok || bad hostile-exit "exit $rc (a NUL in a message fails its case, not the file): $(tail -n 2 "$work/hostile.txt")"
xmllint --noout --schema "$src/vectors/junit.xsd" "$work/hostile.xml" 2>"$work/xmllint.err" && ok ||
  bad hostile-junit "$(tail -n 3 "$work/xmllint.err")"
LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$work/hostile.txt" "$work/hostile.known" &&
  bad hostile-text "a control byte reached the text report: $(LC_ALL=C grep -n "$(printf '[\001-\010\013-\037\177]')" "$work/hostile.txt" | cat -v | head -n 2)" || ok
grep -q '^9999 passed' "$work/hostile.txt" "$work/hostile.known" && bad hostile-forged "a forged line: $(grep -n '^9999' "$work/hostile.txt")" || ok
grep -q 'implementation: evil\\n9999 passed, 0 failed\\x1b\[2J\\uffff; ' "$work/hostile.txt" && ok ||
  bad hostile-impl "the implementation's name is not escaped: $(grep '^implementation' "$work/hostile.txt" | cat -v)"
grep -q 'NUL byte (U+0000) at byte 3.*"nul\\x00after"' "$work/hostile.txt" && ok || bad hostile-nul "no NUL verdict"
long=$(xmllint --xpath 'string(//testcase[6]/failure/@message)' "$work/hostile.xml")
case $long in *"$(printf '\303\251')"*) ;; *) long= ;; esac
[ -n "$long" ] && ! printf '%s' "$long" | grep -q "$(printf '\357\277\275')" && ok ||
  bad hostile-cut "the long message is cut inside a character: $(printf '%s' "$long" | tail -c 40 | od -c | head -n 2)"
"$muonref" check --results "$work/hostile.json" --tap=13 "$vectors/nemo_errors.json" >"$work/hostile.tap" 2>/dev/null
perl -MTAP::Parser -e '
  my $p = TAP::Parser->new({ exec => ["cat", $ARGV[0]] });
  my $bad = 0;
  while (my $r = $p->next) { $bad++ if $r->is_unknown || ($r->is_test && $r->directive ne "") }
  exit(($bad || $p->parse_errors || !$p->is_good_plan || $p->tests_run != $ARGV[1]) ? 1 : 0);
' "$work/hostile.tap" "$(grep -c '"tcId"' "$vectors/nemo_errors.json")" && ok ||
  bad hostile-tap "the TAP stream does not parse: $(sed -n 3,5p "$work/hostile.tap" | cat -v)"

# no vector path, no ./vectors: the installed set, or (not installed) exit 2 naming where it looked
mkdir "$work/empty"
inst=$(cd "$work/empty" && "$muonref" vectors -q 2>"$work/dflt.err"); rc=$?
if [ $rc -eq 0 ]; then
  case $inst in "vectors: /"*/vectors) ok ;; *) bad default-vectors "muonref vectors -q in an empty folder: '$inst'" ;; esac
else
  [ $rc -eq 2 ] && grep -q 'neither ./vectors nor the installed set /.*/vectors is a folder' "$work/dflt.err" && ok ||
    bad default-vectors "exit $rc: $(cat "$work/dflt.err")"
  (cd "$work/empty" && "$muonref" check --impl fast-bf16 >/dev/null 2>"$work/dflt2.err"); rc=$?
  [ $rc -eq 2 ] && grep -q 'installed set' "$work/dflt2.err" && ok || bad default-check "check: exit $rc"
fi

echo "$(( (checks - fails) * 100 / checks ))%: Checks: $checks, Failures: $fails, Errors: 0"
[ $fails -eq 0 ]
