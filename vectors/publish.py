#!/usr/bin/env python3
"""Published results (issue 29 items 4 and 5): per-port verdicts and explanations as JSON and a page.

    vectors/publish.py --out PREFIX [--muonref PATH] [--vectors DIR]
        [--main-job DIR] [--eval DIR] [--submissions DIR] [--results NAME RESULTS PROFILE]...
    vectors/publish.py --render PREFIX.json            (the page of a JSON file, on standard output)

Judges every results file it is given with `muonref check --results` (text report and JUnit) and
writes PREFIX.json (every entry: the port, its source and upstream commit where known, platform,
mode, vector release, counts per area, the port-level explanation, and every failing case with the
judge's message and diagnosis) and PREFIX.md (the page: rendered from the JSON alone, so that
`--render PREFIX.json` gives it back byte for byte).  The entries:

- --main-job DIR: the main job's folder (`make main-job`, vectors/main-job.sh): each profile's test
  port (the list is the records', `muonref profile --test-ports`) over its own profile, neutral
  (DIR/ports/P-P.json) and raw (DIR/ports/raw-P.json), judged against DIR/vectors/P;
- --eval DIR: the explanation evaluation's runs (tests/eval/run.py --work DIR): every entry of
  DIR/summary.json, each mode it ran, judged against --vectors; the upstream repository and commit
  from tests/eval/sources.toml, the answer key from the entry;
- --submissions DIR: each folder DIR/NAME holding results.json and environment.json (a submission,
  submissions/README.md), judged with `muonref check --environment` on the files of the profile
  the statement names (under --vectors) that the results name: a statement that the run
  contradicts refuses the whole publication (exit 2, nothing written), so that no unverified
  result is listed; one judged on an older vector release is not listed, the page names it;
- --results NAME RESULTS PROFILE: one more results file (a port of your own), judged likewise.

Both files are written whole or not at all (a temporary file renamed).  Exit status: 0 written;
2 bad input (a missing file, a refused submission, a results file `muonref check` finds unusable);
3 a judge that broke.  Needs no PyTorch: it judges results files.
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class Bad(Exception):
    """Unusable input: exit 2 with the message."""


# ------------------------------------------------------------------ judging one results file

def judge(muonref, results, vectors, environment=None):
    """`muonref check --results RESULTS --junit ... VECTORS...`: (exit status, text report, JUnit root)."""
    with tempfile.TemporaryDirectory(prefix='muonref-publish.') as tmp:
        junit = os.path.join(tmp, 'junit.xml')
        cmd = [muonref, 'check', '--results', results, '--junit', junit]
        if environment:
            cmd += ['--environment', environment]
        p = subprocess.run(cmd + list(vectors), capture_output=True, text=True)
        if p.returncode == 2:
            raise Bad(f"muonref check refused {results}: {p.stderr.strip()}")
        if p.returncode not in (0, 1):
            raise RuntimeError(f"muonref check broke on {results} (exit {p.returncode}): {p.stderr.strip()[-400:]}")
        return p.returncode, p.stdout, ET.parse(junit).getroot()


def line_value(text, prefix):
    for line in text.splitlines():
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    return None


def entry_of(muonref, name, kind, profile, results, vectors, environment=None, extra=None):
    """One published entry: the judge's verdict on `results` over the vector paths `vectors` (a
    list), with what the results file says of its run."""
    if not os.path.isfile(results):
        raise Bad(f"{name}: no results file {results}")
    with open(results) as f:
        doc = json.load(f)
    rc, text, root = judge(muonref, results, vectors, environment)
    areas, failures = {}, []
    for suite in root.iter('testsuite'):
        area = suite.get('name')
        a = areas.setdefault(area, {'passed': 0, 'failed': 0, 'known': 0})
        for case in suite.iter('testcase'):
            fail = case.find('failure')
            if fail is None:
                a['known' if case.find('skipped') is not None else 'passed'] += 1
                continue
            a['failed'] += 1
            body = (fail.text or '').splitlines()
            diagnosis = next((b[len('diagnosis: '):] for b in body if b.startswith('diagnosis: ')), '')
            case_id = case.get('name').split(' ', 1)[0]
            failures.append({'case': case_id, 'area': area, 'message': fail.get('message', ''),
                             'diagnosis': diagnosis})
    totals = re.match(r'(\d+) passed, (\d+) failed', text.strip().splitlines()[-1])
    e = {
        'name': name, 'kind': kind, 'profile': profile,
        'implementation': doc.get('implementation', ''),
        'framework': f"torch {doc['torch']}" if 'torch' in doc else None,
        'cpu': doc.get('cpu'),
        'mode': doc.get('mode', 'raw'), 'lifecycle': doc.get('lifecycle', 'assign'),
        'nsFormat': doc.get('nsFormat'),
        'vectors': line_value(text, 'vectors release:'),
        'verdict': 'pass' if rc == 0 else 'fail',
        'passed': int(totals.group(1)), 'failed': int(totals.group(2)),
        'areas': dict(sorted(areas.items())),
        'explanation': [l[len('explained: '):] for l in text.splitlines() if l.startswith('explained: ')],
        'diagnoses': [l[len('diagnosis: '):] for l in text.splitlines() if l.startswith('diagnosis: ')],
        # the second verdicts (the raw run of a neutral+raw file, a training loop): reported, not counted
        'second': [l for l in text.splitlines() if l.startswith(('raw mode', 'training-loop lifecycle'))],
        'failures': failures,
    }
    if environment:
        with open(environment) as f:
            e['environment'] = json.load(f)
    e.update(extra or {})
    return e


# ------------------------------------------------------------------ where the results come from

def test_ports(muonref):
    p = subprocess.run([muonref, 'profile', '--test-ports'], capture_output=True, text=True)
    if p.returncode:
        raise Bad(f"muonref profile --test-ports: {p.stderr.strip()}")
    return [l.split()[:2] for l in p.stdout.splitlines() if l.strip()]


def main_job_entries(muonref, d):
    out = []
    for profile, port in test_ports(muonref):
        vec = os.path.join(d, 'vectors', profile)
        src = port.split(':')[0]
        for run, mode in ((f'{profile}-{profile}', 'neutral'), (f'raw-{profile}', 'raw')):
            res = os.path.join(d, 'ports', run + '.json')
            if os.path.isfile(res):
                out.append(entry_of(muonref, f'{profile} test port ({mode})', 'test port', profile, res, [vec],
                                    extra={'source': f'{src} (written from spec/profiles/{profile}.md)'}))
    return out


def eval_sources():
    with open(os.path.join(ROOT, 'tests', 'eval', 'sources.toml'), 'rb') as f:
        return tomllib.load(f)


def eval_entries(muonref, d, vectors):
    with open(os.path.join(d, 'summary.json')) as f:
        rows = json.load(f)['rows']
    src = eval_sources()
    out = []
    for r in rows:
        up = src.get('upstream', {}).get(r.get('upstream') or '', {})
        s = src.get('source', {}).get(r.get('source') or up.get('source') or '', {})
        source = f"{s['repo']}@{s['commit'][:12]}" if s else 'tests/ (a port of this repository)'
        for mode in r.get('modes', {}):
            res = os.path.join(d, r['id'], mode + '.json')
            if not os.path.isfile(res):
                continue
            key = r.get('key') or {}
            out.append(entry_of(muonref, f"{r['id']} ({mode})", f"evaluation: {r['kind']}", r['profile'], res,
                                [os.path.join(vectors, r['profile'])],
                                extra={'source': source, 'key': key.get('deviations', key)}))
    return out


def named_files(results, folder):
    """The vector files of `folder` that the results file names: a submission is judged on the
    areas it ran (every case of each), not on the areas it left out."""
    try:
        with open(results) as f:
            names = sorted({r.get('file', '') for r in json.load(f).get('results', [])})
    except (OSError, json.JSONDecodeError, AttributeError) as exc:
        raise Bad(f"{results}: not a results file: {exc}") from None
    paths = [os.path.join(folder, n) for n in names if n and os.path.basename(n) == n]
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing or not paths:
        raise Bad(f"{results}: names no vector file of {folder}" if not paths else
                  f"{results}: names {os.path.basename(missing[0])}, not a file of {folder}")
    return paths


def release_of(folder):
    """The release of a profile's vector files (the first file's \"release\"; the judge checks
    that they agree)."""
    for name in sorted(os.listdir(folder)):
        if name.endswith('.json'):
            with open(os.path.join(folder, name)) as f:
                return json.load(f).get('release')
    return None


def submission_entries(muonref, d, vectors, stale):
    """The verified submissions under d; one judged on another vector release than the current
    one is not listed but named in `stale` (it must be run again)."""
    out = []
    for name in sorted(os.listdir(d)):
        sub = os.path.join(d, name)
        env = os.path.join(sub, 'environment.json')
        if not os.path.isdir(sub):
            continue
        if not os.path.isfile(env):
            raise Bad(f"{sub}: no environment.json (submissions/README.md)")
        with open(env) as f:
            stated = json.load(f)
        profile = stated.get('profile', '')
        if not re.fullmatch(r'[a-z][a-z0-9_]*', profile):
            raise Bad(f"{env}: member \"profile\" must name a profile")
        res = os.path.join(sub, 'results.json')
        folder = os.path.join(vectors, profile)
        current = release_of(folder) if os.path.isdir(folder) else None
        if current and stated.get('vectors') != current:
            stale.append({'name': name, 'vectors': stated.get('vectors'), 'current': current})
            continue
        try:
            files = named_files(res, os.path.join(vectors, profile))
        except Bad as exc:
            raise Bad(f"{env}: member \"profile\" is \"{profile}\": {exc}") from None
        out.append(entry_of(muonref, f"{name} (submitted)", 'submission', profile, res, files, env,
                            extra={'source': stated.get('source')}))
    return out


# ------------------------------------------------------------------ the page

def cell(s):
    return str(s).replace('|', '\\|').replace('\n', ' ')


def render(doc):
    """The page, from the JSON alone."""
    out = ['# Published results', '',
           f"Written by `{doc['command']}` ({doc['written']}, {doc['muonref']}). Each entry is one",
           'results file judged by `muonref check --results`: a test port, a run of the explanation',
           'evaluation (tests/eval: upstream ports, mutants of them, ports from the wild, correct controls),',
           'or a submission (submissions/README.md) whose environment statement `muonref check',
           '--environment` verified. The JSON beside this page (results.json) holds every failing case.', '',
           '| port | kind | profile | mode | vectors | passed | failed | explanation |',
           '|---|---|---|---|---|---|---|---|']
    for e in doc['entries']:
        why = '; '.join(e['explanation']) or ('' if not e['failed'] else
                                               ('(no fit) ' + e['diagnoses'][0] if e['diagnoses'] else
                                                '(none)'))
        out.append(f"| {cell(e['name'])} | {cell(e['kind'])} | {e['profile']} | {e['mode']} | "
                   f"{cell(e['vectors'])} | {e['passed']} | {e['failed']} | {cell(why)} |")
    for x in doc.get('stale', []):
        out.append(f"\nNot listed: submission {x['name']}, judged on vector release {x['vectors']}; the vectors are "
                   f"release {x['current']} (NEWS): it must be run again.")
    for e in doc['entries']:
        out += ['', f"## {e['name']}", '',
                f"- implementation: {e['implementation']}",
                f"- source: {e.get('source') or 'not given'}",
                f"- platform: {e['framework'] or 'not given'}; cpu {', '.join(e['cpu'] or []) or 'not given'}; "
                f"Newton-Schulz {e['nsFormat']}; mode {e['mode']}; lifecycle {e['lifecycle']}",
                f"- verdict: {e['verdict']}, {e['passed']} passed, {e['failed']} failed (vectors {e['vectors']})"]
        if e.get('environment'):
            env = e['environment']
            out.append(f"- environment statement (verified): {env.get('framework')} on {env.get('device')}, "
                       f"port {env.get('port')}")
        if e.get('key'):
            out.append(f"- answer key (tests/eval, written before the verdict): {json.dumps(e['key'])}")
        for x in e['second']:
            out.append(f"- second verdict: {x}")
        for x in e['explanation']:
            out.append(f"- explained: {x}")
        for x in e['diagnoses']:
            out.append(f"- diagnosis: {x}")
        failing = [(a, c) for a, c in e['areas'].items() if c['failed']]
        if failing:
            out += ['', '| area | passed | failed |', '|---|---|---|']
            out += [f"| {a} | {c['passed']} | {c['failed']} |" for a, c in failing]
            groups = {}
            for f in e['failures']:
                groups.setdefault(f['diagnosis'] or '(no diagnosis)', []).append(f['case'])
            out += ['', 'Failing cases by diagnosis:', '']
            for why, cases in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0])):
                out.append(f"- {len(cases)}: {why} ({', '.join(cases)})")
    return '\n'.join(out) + '\n'


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix='.publish.', dir=d)
    try:
        with os.fdopen(fd, 'w') as f:
            f.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as an open() would have made it, not mkstemp's 0600
        return tmp
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', help='PREFIX: writes PREFIX.json and PREFIX.md')
    ap.add_argument('--render', metavar='JSON', help='print the page of a results JSON written before')
    ap.add_argument('--muonref', default=os.environ.get('MUONREF', './muonref'))
    ap.add_argument('--vectors', default=os.path.join(ROOT, 'vectors'))
    ap.add_argument('--main-job')
    ap.add_argument('--eval')
    ap.add_argument('--submissions')
    ap.add_argument('--results', nargs=3, action='append', default=[], metavar=('NAME', 'RESULTS', 'PROFILE'),
                    help="one more results file, judged on the files of --vectors/PROFILE it names")
    a = ap.parse_args(argv)
    try:
        if a.render:
            with open(a.render) as f:
                sys.stdout.write(render(json.load(f)))
            return 0
        if not a.out:
            raise Bad('give --out PREFIX (or --render JSON)')
        entries = []
        if a.main_job:
            entries += main_job_entries(a.muonref, a.main_job)
        if a.eval:
            entries += eval_entries(a.muonref, a.eval, a.vectors)
        stale = []
        if a.submissions:
            entries += submission_entries(a.muonref, a.submissions, a.vectors, stale)
        for name, res, prof in a.results:
            entries.append(entry_of(a.muonref, name, 'results file', prof, res,
                                    named_files(res, os.path.join(a.vectors, prof))))
        if not entries:
            raise Bad('nothing to publish: give --main-job, --eval, --submissions or --results')
        version = subprocess.run([a.muonref, 'version'], capture_output=True, text=True).stdout.strip()
        head = subprocess.run(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True)
        if head.returncode == 0:  # the sources the judge was built from, where they are a git checkout
            version += f" at commit {head.stdout.strip()}"

        doc = {'command': 'vectors/publish.py ' + ' '.join(argv if argv is not None else sys.argv[1:]),
               'written': datetime.date.today().isoformat(), 'muonref': version, 'entries': entries,
               'stale': stale}
        tmps = [write_atomic(a.out + '.json', json.dumps(doc, indent=1) + '\n'),
                write_atomic(a.out + '.md', render(doc))]
        os.replace(tmps[0], a.out + '.json')
        os.replace(tmps[1], a.out + '.md')
        print(f"{a.out}.json, {a.out}.md: {len(entries)} entries "
              f"({sum(e['verdict'] == 'pass' for e in entries)} passing)")
        return 0
    except (Bad, OSError, json.JSONDecodeError, ET.ParseError) as exc:
        print(f"publish.py: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        print(f"publish.py: {exc}", file=sys.stderr)
        return 3


if __name__ == '__main__':
    sys.exit(main())
