"""tests/scripts/verdict-formats.sh: one verdict in every format (issue 29 items 1 and 2).

One results file, made from muonref's fast path on three keller files (no port, no torch):
its judged results are the correct path's, with the momentum file's taken from the fault
sum_momentum (they fail); its "rawResults" are the fault bf16_scalars' where they differ (the
platform's scalar rounding, as the driver's --mode neutral+raw writes a raw run).  A baseline
lists most of the failures (with a reason and an issue URL, a reason only, nothing, and one in a
legacy 0.1.0 file), leaves one out (a new failure) and lists a passing case (FIXED).

The expected verdict of every case is computed here, independently of the reports' code, from
the judge's plain verdicts (muonref check on the judged results alone, and on the raw results
alone: the judge itself is tested elsewhere) and the baseline's lines: counted failures are the
judged run's, plus the raw run's with --enforce-raw; a counted failure the baseline lists is
known (its reason carried), a listed case that passes is fixed, a case failing only raw and not
enforced passes with a note.  Then the text report (-v), the JUnit file, the TAP stream (Perl's
TAP::Parser and prove) and the pytest plugin (--muonref-results) must each give exactly those
sets, with and without the baseline, with and without --enforce-raw; --write-failures writes one
commented line per failure that the baseline reads back.

usage: verdict_formats.py MUONREF SRCDIR WORKDIR; prints a line per check, exits 1 on a failure.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

MUONREF, SRC, WORK = sys.argv[1:4]
VECTORS = [os.path.join(SRC, 'vectors', 'keller', f'keller_{a}.json') for a in ('momentum', 'adamw', 'newton_schulz')]
failures = 0


def check(what, ok, detail=''):
    global failures
    print(f"{'ok' if ok else 'FAIL'}: {what}{'' if ok else ': ' + str(detail)[:600]}")
    failures += not ok


def run(argv, **kw):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    return p.returncode, p.stdout, p.stderr


def path(name):
    return os.path.join(WORK, name)


def fast(name, fault=None):
    argv = [MUONREF, 'check', '--impl', 'fast-bf16', '-q', '--write-results', path(name)]
    run(argv + (['--fault', fault] if fault else []) + VECTORS)
    return json.load(open(path(name)))


def key(e):
    return f"{e['file']}#{e['tcId']}"


def plain_failures(results):
    """The judge's verdict on a results file alone (no other run, no baseline): the FAIL keys."""
    json.dump(results, open(path('plain.json'), 'w'))
    _, out, _ = run([MUONREF, 'check', '--no-diagnosis', '--results', path('plain.json')] + VECTORS)
    return {f"{m.group(1)}#{m.group(2)}" for m in re.finditer(r'^FAIL (\S+) tcId (\d+) ', out, re.M)}


# ---------------------------------------------------------------- the results file
good, summed, scalars = fast('good.json'), fast('sum.json', 'sum_momentum'), fast('scalars.json', 'bf16_scalars')
judged = [s if s['file'] == 'keller_momentum.json' else g for g, s in zip(good['results'], summed['results'])]
raw = [r for r, j in zip(scalars['results'], judged) if r != j and r['file'] != 'keller_momentum.json']
doc = dict(good, mode='neutral', results=judged, rawResults=raw)
json.dump(doc, open(path('results.json'), 'w'))
cases = [key(e) for e in judged]
F = plain_failures(dict(good, results=judged))
R = plain_failures(dict(good, results=[next((r for r in raw if key(r) == key(j)), j) for j in judged]))
check(f"the judged run fails {len(F)} cases, the raw run {len(R)}; some fail only raw", len(F) >= 5 and R - F, (F, R))

# ---------------------------------------------------------------- the baseline
failing = sorted(F, key=lambda k: (k.split('#')[0], int(k.split('#')[1])))
passing = sorted(set(cases) - F - R)
new_failure, listed = failing[-1], failing[:-1]
reasons = {}
lines = ["# a baseline: FILE#TCID [REASON] [URL]", ""]
for i, k in enumerate(listed):
    if i % 3 == 0:
        reasons[k] = ('the sum form, tracked upstream', 'https://example.org/issues/7')
    elif i % 3 == 1:
        reasons[k] = ('only a reason', '')
    else:
        reasons[k] = ('', '')
    lines.append(f"{k} {reasons[k][0]} {reasons[k][1]}".rstrip())
fixed_case = passing[0]
reasons[fixed_case] = ('it failed once', '')
lines.append(f"{fixed_case}\tit failed once")
open(path('baseline.txt'), 'w').write('\n'.join(lines) + '\n')
B = set(reasons)
# a second baseline that lists every failure: every format passes
open(path('full.txt'), 'w').write('\n'.join(lines + [f"{new_failure} a new one, listed too"]) + '\n')
reasons[new_failure] = ('a new one, listed too', '')
BASELINES = {'': set(), path('baseline.txt'): B, path('full.txt'): B | {new_failure}}


def why(k):
    reason, url = reasons[k]
    return f"known failure: {reason or 'no reason given'}" + (f" ({url})" if url else '')


def expected(baseline, enforce):
    """{case: (outcome, text)}: outcome pass, fail, known (text its why), fixed (its why), note."""
    out = {}
    for k in cases:
        counted = k in F or (enforce and k in R)
        listed_here = k in BASELINES[baseline]
        if counted:
            out[k] = ('known', why(k)) if listed_here else ('fail', '')
        elif listed_here:
            out[k] = ('fixed', why(k))
        elif k in R:
            out[k] = ('note', '')
        else:
            out[k] = ('pass', '')
    return out


# ---------------------------------------------------------------- the four formats
def text(argv):
    rc, out, err = run([MUONREF, 'check', '-v', '--no-diagnosis'] + argv + VECTORS)
    got = {}
    for line in out.splitlines():
        m = re.match(r'^(ok  |FAIL|KNOWN|FIXED|NOTE) (\S+) tcId (\d+)', line)
        if not m:
            continue
        k, tag = f"{m.group(2)}#{m.group(3)}", m.group(1).strip()
        if tag == 'ok':
            got.setdefault(k, ('pass', ''))
        elif tag == 'FIXED':
            got[k] = ('fixed', re.search(r'\((known failure: .*)\), passes now', line).group(1))
        elif tag == 'NOTE':
            got[k] = ('note', '')
        else:
            got[k] = ('fail' if tag == 'FAIL' else 'known', '')
    # a KNOWN line is followed by "  known failure: ..."
    for m in re.finditer(r'^KNOWN (\S+) tcId (\d+) .*\n  (known failure: .*)$', out, re.M):
        got[f"{m.group(1)}#{m.group(2)}"] = ('known', m.group(3))
    return rc, got


def junit(argv):
    rc, _, err = run([MUONREF, 'check', '-q', '--junit', path('j.xml')] + argv + VECTORS)
    valid = run(['xmllint', '--noout', '--schema', os.path.join(SRC, 'vectors', 'junit.xsd'), path('j.xml')])[0] == 0
    got = {}
    root = ET.parse(path('j.xml')).getroot()
    for tc in root.iter('testcase'):
        k = tc.get('name').split(' ', 1)[0]
        out = tc.findtext('system-out') or ''
        if tc.find('failure') is not None:
            got[k] = ('fail', '')
        elif tc.find('skipped') is not None:
            got[k] = ('known', tc.find('skipped').get('message'))
        elif out.startswith('FIXED: '):
            got[k] = ('fixed', re.match(r'FIXED: (.*), passes now', out).group(1))
        elif out:
            got[k] = ('note', '')
        else:
            got[k] = ('pass', '')
    counts = (int(root.get('failures')), int(root.get('skipped')))
    return rc, got, valid, counts


TAP_PARSE = r'''
use TAP::Parser;
my $p = TAP::Parser->new({ exec => ["cat", $ARGV[0]] });
while (my $r = $p->next) {
  next unless $r->is_test || $r->is_yaml;
  if ($r->is_yaml) { print "yaml note\n" if defined $r->data->{note}; next }
  my ($k) = $r->description =~ /(keller_\w+\.json)\\#(\d+)/ ? ("$1#$2") : ("?");
  printf "%s %s %s %s\n", ($r->is_ok ? "ok" : "not_ok"), ($r->is_actual_ok ? "actual_ok" : "actual_not_ok"), $k,
         ($r->has_todo ? "TODO " . $r->explanation : "-");
}
print "parse_errors\n" if $p->parse_errors;
print "plan_bad\n" unless $p->is_good_plan;
'''


def tap(argv):
    rc, out, _ = run([MUONREF, 'check', '--tap'] + argv + VECTORS)
    open(path('t.tap'), 'w').write(out.replace('TAP version 14', 'TAP version 13', 1))
    _, parsed, perr = run(['perl', '-e', TAP_PARSE, path('t.tap')])
    got, last, bad = {}, None, perr
    for line in parsed.splitlines():
        if line in ('parse_errors', 'plan_bad'):
            bad += line
            continue
        if line == 'yaml note':
            if last and got[last][0] == 'pass':
                got[last] = ('note', '')
            continue
        ok, actual, k, todo = line.split(' ', 3)
        last = k
        if todo.startswith('TODO '):
            got[k] = ('known' if actual == 'actual_not_ok' else 'fixed', todo[5:])
        else:
            got[k] = ('pass' if actual == 'actual_ok' else 'fail', '')
    prove = run(['prove', '-e', 'cat', path('t.tap')])[0]
    return rc, got, bad, prove


def pytest(baseline, enforce):
    d = path('pytest')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    plugin = ['--muonref-results', path('results.json'), '--muonref-bin', MUONREF]
    plugin += (['--muonref-baseline', baseline] if baseline else []) + \
        (['--muonref-enforce-raw'] if enforce else [])
    env = dict(os.environ, PYTHONPATH=os.path.join(SRC, 'vectors', 'drivers'))
    rc, out, err = run([sys.executable, '-m', 'pytest', '-p', 'no:muonref', '-p', 'pytest_muonref', '-p',
                        'no:cacheprovider', '-q', '-rA', '-o', 'junit_family=xunit1',
                        f'--junit-xml={path("pytest.xml")}'] + plugin + VECTORS, cwd=d, env=env)
    got = {}
    for m in re.finditer(r'^(PASSED|FAILED|XFAIL|XPASS) \S+/(keller_\w+\.json)::tc(\d+)(?: - reason: | - | )?(.*)$',
                         out, re.M):
        tag, k, rest = m.group(1), f"{m.group(2)}#{m.group(3)}", m.group(4)
        got[k] = {'PASSED': ('pass', ''), 'FAILED': ('fail', ''), 'XFAIL': ('known', rest),
                  'XPASS': ('fixed', rest.replace(', passes now: take it out of the baseline', ''))}[tag]
    noted = set()
    if not os.path.exists(path('pytest.xml')):
        return rc, got, out + err
    for tc in ET.parse(path('pytest.xml')).getroot().iter('testcase'):
        if any(p.get('name') == 'muonref_note' for p in tc.iter('property')):
            noted.add(f"{tc.get('classname').rsplit('.', 2)[-2]}.json#{tc.get('name')[2:]}")
    for k in noted:
        if got.get(k, ('',))[0] == 'pass':
            got[k] = ('note', '')
    return rc, got, out + err


def same(fmt, got, want):
    diff = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    check(f"{fmt}: every case's verdict as computed ({len(want)} cases: "
          f"{sum(v[0] == 'fail' for v in want.values())} failed, {sum(v[0] == 'known' for v in want.values())} known, "
          f"{sum(v[0] == 'fixed' for v in want.values())} fixed, {sum(v[0] == 'note' for v in want.values())} noted)",
          not diff and len(got) == len(want), dict(list(diff.items())[:4]) or f"{len(got)} verdicts")


have_pytest = run([sys.executable, '-c', 'import pytest'])[0] == 0
for baseline, enforce in (('', False), ('', True), (path('baseline.txt'), False), (path('baseline.txt'), True),
                          (path('full.txt'), False)):
    argv = ['--results', path('results.json')] + (['--baseline', baseline] if baseline else []) + \
        (['--enforce-raw'] if enforce else [])
    want = expected(baseline, enforce)
    label = f"{os.path.basename(baseline) or 'no baseline'}, {'--enforce-raw' if enforce else 'raw not enforced'}"
    failed = any(v[0] == 'fail' for v in want.values())
    rc, got = text(argv)
    same(f"text ({label})", got, want)
    check(f"text ({label}): exit {1 if failed else 0}", rc == (1 if failed else 0), rc)
    rc, got, valid, counts = junit(argv)
    same(f"JUnit ({label})", got, want)
    check(f"JUnit ({label}): valid, failures and skipped counted", valid and counts == (
        sum(v[0] == 'fail' for v in want.values()), sum(v[0] == 'known' for v in want.values())), counts)
    rc, got, bad, prove = tap(argv)
    same(f"TAP ({label})", got, want)
    check(f"TAP ({label}): parses, prove {'fails' if failed else 'passes'}", not bad and prove == (1 if failed else 0),
          (bad, prove))
    if have_pytest:
        rc, got, out = pytest(baseline, enforce)
        same(f"pytest ({label})", got, want)
        check(f"pytest ({label}): exit {1 if failed else 0}", rc == (1 if failed else 0), out[-400:])

# --write-failures: a comment and a line per failure, read back as a baseline
rc, _, _ = run([MUONREF, 'check', '-q', '--results', path('results.json'), '--write-failures', path('w.txt')] + VECTORS)
written = open(path('w.txt')).read().splitlines()
entries = [line for line in written if line and not line.startswith('#')]
check("--write-failures: one line per failure, each under a comment saying how it fails",
      sorted(entries) == sorted(F) and all(written[written.index(e) - 1].startswith(f"# {e}: ") and ' -- fails: ' in
                                           written[written.index(e) - 1] for e in entries), entries)
rc, out, _ = run([MUONREF, 'check', '--results', path('results.json'), '--baseline', path('w.txt')] + VECTORS)
check("read back as a baseline: exit 0, every failure KNOWN, no reason given yet",
      rc == 0 and len(re.findall(r'^KNOWN ', out, re.M)) == len(F) and
      out.count('  known failure: no reason given') == len(F), rc)
# a 0.1.0 file: its text after the key was the case's comment, not a reason
legacy = path('legacy.txt')
open(legacy, 'w').write("# muonref check expected failures of x: one FILE#TCID per line (--baseline reads it)\n" +
                        ''.join(f"{k}  the case's comment\n" for k in sorted(F)))
rc, out, _ = run([MUONREF, 'check', '--results', path('results.json'), '--baseline', legacy] + VECTORS)
check("a 0.1.0 baseline still reads: its comments are not taken as reasons",
      rc == 0 and "the case's comment" not in out and out.count('  known failure: no reason given') == len(F), rc)
for bad_line, why_bad in (('keller_momentum.json', 'expected FILE#TCID'), (f"{failing[0]}\n{failing[0]}", 'listed twice')):
    open(path('bad.txt'), 'w').write(bad_line + '\n')
    rc, _, err = run([MUONREF, 'check', '--results', path('results.json'), '--baseline', path('bad.txt')] + VECTORS)
    check(f"a baseline with a bad line ({why_bad}): exit 2 naming the file and line",
          rc == 2 and 'bad.txt:' in err and why_bad in err, err)
# --enforce-raw on a results file without a raw run: exit 2, not a silent pass
json.dump(dict(good, mode='neutral'), open(path('noraw.json'), 'w'))
rc, _, err = run([MUONREF, 'check', '--results', path('noraw.json'), '--enforce-raw'] + VECTORS)
check("--enforce-raw without a raw run: exit 2 saying so", rc == 2 and 'no raw run' in err, err)
# rawResults is validated (spec/vectors.md 8): only in a neutral file, every entry a case of "results"
bad_raw = {'in a raw file': dict(doc, mode='raw'),
           'naming a case "results" lacks': dict(doc, results=[e for e in judged if key(e) != key(raw[0])]),
           'malformed': dict(doc, rawResults=[dict(raw[0], params='x')])}
for what, bad in bad_raw.items():
    json.dump(bad, open(path('badraw.json'), 'w'))
    rc, _, err = run([MUONREF, 'check', '--results', path('badraw.json')] + VECTORS)
    check(f"rawResults {what}: exit 2 naming the file", rc == 2 and 'badraw.json' in err, (rc, err))
sys.exit(1 if failures else 0)
