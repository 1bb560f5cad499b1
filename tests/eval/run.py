#!/usr/bin/env python3
"""The explanation evaluation of issue 22: how often `muonref check` names the right difference.

Not part of `make check`: it fetches public code and runs the PyTorch driver some sixty times.

    /usr/bin/python3 tests/eval/run.py [--muonref PATH] [--cache DIR] [--work DIR] [--jobs N]
        [--only ID[,ID...]] [--rejudge] [--write-doc FILE] [--list]

The yardstick, written before any verdict was seen (tests/eval/README.md):
- tests/eval/sources.toml: the public files (repository, commit, path, git blob id) and the
  upstream ports the mutants edit (how each is loaded on PyTorch 1.13 CPU);
- tests/eval/wild.toml: in-the-wild PyTorch Muon ports, each with its closest profile and an
  answer key (every deviation from that profile, with line references into the file);
- tests/eval/mutants.toml: one-edit mutants of the upstream ports, each with its answer key;
- tests/eval/controls.toml: correct ports (fp32/fp64 Newton-Schulz, each accepted bf16 order,
  per-operation rewrites, exact copies), whose key is "passes".

For each entry the script fetches its files into the cache (--cache, default
$XDG_CACHE_HOME/muonref-eval: from there, else from a local git mirror of the repository
($MUONREF_EVAL_MIRRORS, default /work/.mirror: DIR/OWNER+NAME/repo), else from
raw.githubusercontent.com with curl), checks each file's git blob id, applies the mutant's edits,
writes a loader module (port.py: the shims and the glue of tests/eval/glue.py), runs
vectors/drivers/torch_driver.py over its profile's vectors (--mode neutral; controls also
--mode raw), judges the results with `muonref check --results`, parses the verdict and the
explanation, and compares them with the answer key.  It parses both forms of explanation:
the catalogue diagnosis ("diagnosis: N failures [FAULT+FAULT]: exactly what fault FAULT
gives ...") and the fitted one ("explained: FIELD OLD -> NEW and ... (N of M failures)").

--rejudge reuses the driver's results in --work and only runs the judge again (to measure another
`muonref` on the same runs).  --write-doc writes the measured tables (docs/explanations.md).
Exit status: 0 when every entry ran (the tallies are a measurement, not a verdict), 2 for bad
input (a manifest, a missing file, a blob that differs, an edit that does not apply), 3 when a
driver or judge run broke.
"""

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYTHON = '/usr/bin/python3' if os.path.exists('/usr/bin/python3') else sys.executable
DRIVER = os.path.join(ROOT, 'vectors', 'drivers', 'torch_driver.py')


class Bad(Exception):
    """Unusable input: exit 2 with the message."""


# ------------------------------------------------------------------ manifests

def load_manifests():
    def load(name):
        path = os.path.join(HERE, name)
        try:
            with open(path, 'rb') as f:
                return tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise Bad(f"{path}: {exc}") from None
    src = load('sources.toml')
    entries = []
    for kind, fname, table in (('wild', 'wild.toml', 'port'), ('mutant', 'mutants.toml', 'mutant'),
                               ('control', 'controls.toml', 'control')):
        for e in load(fname).get(table, []):
            e = dict(e)
            e['kind'] = kind
            if 'id' not in e:
                raise Bad(f"tests/eval/{fname}: an entry without id")
            entries.append(e)
    ids = [e['id'] for e in entries]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise Bad(f"tests/eval: duplicate ids {sorted(dup)}")
    return src, entries


def resolve(src, e):
    """The entry's port description: a wild port's own, or its upstream's (sources.toml) with
    the entry's overrides (a mutant or control may change the mode list, the ns format...)."""
    if 'upstream' in e:
        up = src.get('upstream', {}).get(e['upstream'])
        if up is None:
            raise Bad(f"{e['id']}: no upstream {e['upstream']!r} in tests/eval/sources.toml")
        d = dict(up)
        d.update({k: v for k, v in e.items() if k not in ('key',)})
        return d
    return dict(e)


# ------------------------------------------------------------------ fetching

def blob_id(data: bytes) -> str:
    return hashlib.sha1(b'blob %d\0' % len(data) + data).hexdigest()


def fetch_file(cache, repo, commit, path, blob=None):
    """The bytes of repo@commit:path: from the cache, a local mirror, or GitHub; checked against blob."""
    dest = os.path.join(cache, 'src', repo.replace('/', '+'), commit, path)
    data = None
    if os.path.isfile(dest):
        with open(dest, 'rb') as f:
            data = f.read()
    if data is None:
        mirrors = os.environ.get('MUONREF_EVAL_MIRRORS', '/work/.mirror').split(':')
        for m in mirrors:
            gd = os.path.join(m, repo.replace('/', '+'), 'repo')
            if os.path.isdir(gd):
                r = subprocess.run(['git', '--git-dir', gd, 'cat-file', 'blob', f'{commit}:{path}'],
                                   capture_output=True)
                if r.returncode == 0:
                    data = r.stdout
                    break
    if data is None and shutil.which('curl'):
        r = subprocess.run(['curl', '-fsSL', '--max-time', '60',
                            f'https://raw.githubusercontent.com/{repo}/{commit}/{path}'], capture_output=True)
        if r.returncode == 0:
            data = r.stdout
    if data is None:
        raise Bad(f"{repo}@{commit[:10]}:{path}: not in the cache ({dest}), no mirror holds it, and GitHub "
                  "cannot be reached: fetch it (e.g. git clone) and set MUONREF_EVAL_MIRRORS, or put the "
                  "file at that cache path")
    if blob and blob_id(data) != blob:
        raise Bad(f"{repo}@{commit[:10]}:{path}: git blob {blob_id(data)}, the manifest records {blob}: "
                  "not the file the answer key was written from")
    if not os.path.isfile(dest):
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, 'wb') as f:
            f.write(data)
    return data


def source_files(src, cache, d):
    """{path in the repository: bytes} of the entry's source (sources.toml [source.NAME])."""
    name = d.get('source')
    if name is None and 'path' in d:  # a file of this repository (a test port)
        with open(os.path.join(ROOT, d['path']), 'rb') as f:
            return {d['path']: f.read()}
    if name is None:
        return {}
    s = src.get('source', {}).get(name)
    if s is None:
        raise Bad(f"{d['id']}: no source {name!r} in tests/eval/sources.toml")
    return {p: fetch_file(cache, s['repo'], s['commit'], p, s.get('blobs', {}).get(p)) for p in s['files']}


# ------------------------------------------------------------------ editing

def apply_edits(files, edits, who, main=None):
    """Applies a mutant's edits: each {file, line, old, new} replaces the first `old` on 1-based
    `line` (of the original file; `file` defaults to the port's main file) by `new` (which may
    span lines).  Every edit is checked first."""
    out = {p: data.decode('utf-8').split('\n') for p, data in files.items()}
    per_file = {}
    for ed in edits:
        f = ed.get('file') or main
        if f not in out:
            raise Bad(f"{who}: edit of {f!r}, not a file of the entry's source")
        n = ed['line']
        if not 1 <= n <= len(out[f]) or ed['old'] not in out[f][n - 1]:
            raise Bad(f"{who}: {f} line {n} does not hold {ed['old']!r}: the edit does not apply")
        per_file.setdefault(f, []).append(ed)
    for f, eds in per_file.items():
        for ed in sorted(eds, key=lambda e: -e['line']):
            n = ed['line']
            out[f][n - 1] = out[f][n - 1].replace(ed['old'], ed['new'], 1)
    return {p: '\n'.join(lines).encode('utf-8') for p, lines in out.items()}


# ------------------------------------------------------------------ loading

def write_port(d, files, wdir):
    """Writes the fetched (edited) files and port.py, the loader the driver imports."""
    srcdir = os.path.join(wdir, 'src')
    if os.path.isdir(srcdir):
        shutil.rmtree(srcdir)
    for p, data in files.items():
        dest = os.path.join(srcdir, p)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, 'wb') as f:
            f.write(data)
    loader = d.get('loader', 'file')
    main = os.path.join(srcdir, d['file'] if 'file' in d else d['path']) if ('file' in d or 'path' in d) else None
    lines = ['"""Loader written by tests/eval/run.py: shims, the port\'s module, Port and ns."""',
             'import sys', f'sys.path.insert(0, {HERE!r})', 'import glue',
             f'glue.install({list(d.get("shims", []))!r})', f'glue.stub_modules({list(d.get("stubs", []))!r})']
    modname = 'wild_' + re.sub(r'\W', '_', d['id'])
    if loader == 'file':
        lines.append(f'mod = glue.load_file({main!r}, {modname!r}, {d.get("preamble")!r})')
    elif loader == 'defs':  # the optimizer's definitions out of a training script
        lines.append(f'mod = glue.load_defs({main!r}, {modname!r}, {list(d["defs"])!r})')
    elif loader == 'path':  # a file of this repository (a test port or variant), edited: its siblings from
        # its own folder of tests/ (a variant imports another: torch_port_fp64_ns.py takes torch_port_fp32_ns),
        # then tests/ports (the ports the variants change)
        for folder in dict.fromkeys([os.path.dirname(d['path']), os.path.join('tests', 'ports')]):
            lines.append(f'sys.path.append({os.path.join(ROOT, folder)!r})')
        lines.append(f'mod = glue.load_file({main!r}, {modname!r})')
    elif loader == 'moonlight':
        lines.append(f'mod = glue.upstream().load_moonlight({main!r})')
    elif loader == 'torch29':
        lines.append(f'mod = glue.upstream().load_torch_muon({main!r}, {wdir!r})')
    elif loader == 'timm':
        lines.append(f'mod = glue.upstream().load_timm({os.path.dirname(main)!r}, {wdir!r})')
    else:
        raise Bad(f"{d['id']}: unknown loader {loader!r}")
    cls = d['class']
    glue_kind = d.get('glue')
    if glue_kind is None:
        lines.append(f'Port = mod.{cls}')
    elif glue_kind == 'keller_aux':
        lines.append(f'Port = glue.keller_aux(mod.{cls}, construct={d.get("construct", "groups")!r}, '
                     f'kwargs={dict(d.get("kwargs", {}))!r})')
    elif glue_kind == 'moonlight_aux':
        lines.append(f'Port = glue.moonlight_aux(mod.{cls}, kwargs={dict(d.get("kwargs", {}))!r})')
    elif glue_kind == 'moonlight_groups':
        lines.append(f'Port = glue.moonlight_groups(mod.{cls}, muon={dict(d.get("muon_keys", {}))!r}, '
                     f'adam={dict(d.get("adam_keys", {}))!r})')
    else:
        raise Bad(f"{d['id']}: unknown glue {glue_kind!r}")
    ns = d.get('ns')
    if ns is None:
        lines.append('ns = None')
    elif ns.startswith('lambda'):
        # the driver binds a Newton-Schulz function by its parameters' names
        # (vectors/drivers/README.md): the manifest's lambda is wrapped in one
        # whose names say what it takes
        lines.append(f'fn = mod.{d["ns_function"]}')
        lines.append(f'_ns = {ns}')
        lines.append('def ns(matrix, steps):')
        lines.append('    return _ns(matrix, steps)')
    else:
        lines.append(f'ns = mod.{ns}')
    with open(os.path.join(wdir, 'port.py'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


# ------------------------------------------------------------------ running

def run_mode(d, wdir, mode, muonref, rejudge, rescore=False):
    """Driver (unless --rejudge and its results exist) and judge (unless --rescore and its output
    exists) for one mode; returns the judge's text."""
    res = os.path.join(wdir, f'{mode}.json')
    saved = os.path.join(wdir, f'{mode}.check.txt')
    if rescore and os.path.isfile(res) and os.path.isfile(saved) and os.path.getmtime(saved) >= os.path.getmtime(res):
        with open(saved) as f:
            text = f.read()
        if not any(COUNT_RE.match(line) for line in text.splitlines()):
            return None, f"muonref check (saved): {(text.strip().splitlines() or [''])[-1]}"
        return text, None
    vec = os.path.join(ROOT, 'vectors', d['profile'])
    port = os.path.join(wdir, 'port.py')
    if not (rejudge and os.path.isfile(res)):
        cmd = [PYTHON, DRIVER, '--optimizer', f'{port}:Port', '--adapter', d['adapter'], '--mode', mode, '-q',
               '--out', res]
        if d.get('ns') is not None:
            cmd += ['--ns-function', f'{port}:ns']
        if d.get('ns_format'):
            cmd += ['--ns-format', d['ns_format']]
        for old_key, key in (d.get('state_name') or {}).items():  # the port's buffer under its own key
            cmd += ['--state-name', f'{old_key}={key}']
        cmd.append(vec)
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=wdir)
        with open(os.path.join(wdir, f'{mode}.driver.log'), 'w') as f:
            f.write(' '.join(cmd) + '\n' + r.stdout + r.stderr)
        if r.returncode != 0:
            return None, f"driver exit {r.returncode}: {(r.stderr.strip().splitlines() or [''])[-1]}"
    # a control's raw run is scored by its PlatformRobust failures alone: no diagnosis (the fit
    # of its many platform failures takes minutes and explains nothing about a correct port)
    quiet = ['--no-diagnosis'] if d['kind'] == 'control' and mode == 'raw' else []
    r = subprocess.run([muonref, 'check'] + quiet + ['--results', res, vec], capture_output=True, text=True)
    with open(os.path.join(wdir, f'{mode}.check.txt'), 'w') as f:
        f.write(r.stdout + r.stderr)
    if r.returncode not in (0, 1):
        return None, f"muonref check exit {r.returncode}: {(r.stderr.strip().splitlines() or [''])[-1]}"
    return r.stdout + r.stderr, None


# ------------------------------------------------------------------ parsing

FAIL_RE = re.compile(r'^FAIL (\S+) tcId (\d+) \[([^\]]*)\]')
CASE_DIAG_RE = re.compile(r'^\s+diagnosis: (.*)$')
SUMMARY_DIAG_RE = re.compile(r'^diagnosis: (\d+) failures? \[([^\]]+)\]: (.*)$')
EXPLAINED_RE = re.compile(r'explained: (.+?)\s*\((\d+) of (\d+) failures?[^()]*\)\s*$')
COUNT_RE = re.compile(r'^(\d+) passed, (\d+) failed')
LONE_RE = re.compile(r'^  its cases that no single change explains: (.*)$')
FIRMER_RE = re.compile(r'^  its cases that single changes match only within the bf16 noise allowance: (.*)$')
FAULT_RE = re.compile(r"(?:exactly|within this case's tolerance,) what fault (\S+) gives")


def split_top(s, sep):
    """Splits s on the regex sep outside parentheses and brackets."""
    parts, depth, last, i = [], 0, 0, 0
    while i < len(s):
        c = s[i]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
        elif depth == 0:
            m = re.match(sep, s[i:])
            if m and m.end() > 0:
                parts.append(s[last:i])
                i += m.end()
                last = i
                continue
        i += 1
    parts.append(s[last:])
    return [p.strip() for p in parts if p.strip()]


# one concept, several spellings: the profiles' option names and the spec's field names
FIELD_SYNONYMS = {'coefficients': 'coeffs', 'coeffs[0]': 'coeffs', 'ns_coefficients': 'coeffs', 'wd': 'weight_decay',
                  'adjust_lr_fn': 'scale_mode', 'adamw_betas': 'adam_betas', 'betas': 'adam_betas',
                  'use_adjusted_lr': 'scale_mode'}


# a profile's own option values for a field's values (spec/profiles/torch.md: adjust_lr_fn
# "original" is scale_mode fan_in, "match_rms_adamw" is rms_adamw)
VALUE_SYNONYMS = {'match_rms_adamw': 'rms_adamw', 'original': 'fan_in'}


# a profile's boolean key for an enum field's values (spec/profiles/pytorch_optimizer.md 6:
# use_adjusted_lr false is scale_mode rms_adamw, true is fan_in)
FIELD_VALUE_SYNONYMS = {'use_adjusted_lr': {'false': 'rms_adamw', 'true': 'fan_in'}}


def canon_field(name):
    return FIELD_SYNONYMS.get(name, name)


def parse_change(part):
    """One item: {"field", "old", "new"} for `[default [(BRANCH)]] FIELD OLD -> NEW` ("default":
    true when so prefixed), {"trait"} for a refusal trait (`WORDS accepted`, `WORDS refused`),
    {"fault"} for a catalogued fault's name (`fault NAME` or a bare name); None for none."""
    item = {}
    m = re.fullmatch(r"\S+'s options? ([\w.]+) not taken", part.strip())
    if m:  # the summary of refusals whose messages name options (vectors/judge/fit.c report_refusals)
        return {'fault': m.group(1)}
    m = re.fullmatch(r'(?:[\w-]+\s+)+(?:accepted|refused)', part.strip())
    if m and ' ' in part.strip():
        # a refusal trait the port shows (vectors/judge/refusal.c muonref_trait_item: "Muon parameter of
        # fewer than 2 dimensions accepted", "missing gradient refused")
        return {'trait': part.strip()}
    if '->' in part:
        lhs, _, new = part.partition('->')
        lhs = lhs.strip().rstrip(':')
        m = re.match(r'default(\s*\([^)]*\))?\s+', lhs)
        if m:
            item['default'] = True
            lhs = lhs[m.end():]
        field, _, old = lhs.partition(' ')
        item.update({'field': field.strip().rstrip(':'), 'old': old.strip(), 'new': new.strip()})
    else:
        m = re.match(r'(?:fault\s+)?([A-Za-z_][\w.+-]*)', part)
        if m:
            item['fault'] = m.group(1)
    return item or None


def parse_items(text):
    """An explanation as its alternatives, each a list of items (parse_change): the fit joins
    explanations that give the same results on every failure by ` = ` ("eps_clamp = eps_mode add
    -> clamp", "A and B = C and D"), and the items of one by ` and ` (or `;`, or a comma before
    the next `FIELD OLD -> NEW`)."""
    alts = []
    for alt in split_top(text, r'\s+=\s+'):
        items = [i for i in (parse_change(part) for part in
                             split_top(alt, r'\s+and\s+|;\s*|,\s+(?=[A-Za-z_][\w.\[\]]*\s+\S.*->)')) if i]
        if items:
            alts.append(items)
    return alts


def parse_check(text):
    """The judge's output: counts, failing cases (tags, per-case diagnosis), the explanations."""
    out = {'passed': None, 'failed': None, 'cases': [], 'catalogue': [], 'explained': []}
    cur = None
    for line in text.splitlines():
        m = FAIL_RE.match(line)
        if m:
            cur = {'file': m.group(1), 'tcId': int(m.group(2)), 'tags': m.group(3).split(','), 'diagnosis': None}
            out['cases'].append(cur)
            continue
        m = CASE_DIAG_RE.match(line)
        if m and cur is not None:
            if cur['diagnosis'] is None:
                cur['diagnosis'] = m.group(1)
            continue
        if not line.startswith(' '):
            cur = None if not line.startswith('FAIL') else cur
        m = SUMMARY_DIAG_RE.match(line)
        if m:
            out['catalogue'].append({'count': int(m.group(1)), 'key': m.group(2), 'text': m.group(3)})
        m = EXPLAINED_RE.search(line)
        if m and not line.startswith(' '):
            out['explained'].append({'text': m.group(1), 'explains': int(m.group(2)), 'of': int(m.group(3)),
                                     'items': parse_items(m.group(1))})
        m = LONE_RE.match(line)
        if m and out['explained']:
            out['explained'][-1]['lone'] = parse_lone(m.group(1))
        m = FIRMER_RE.match(line)
        if m and out['explained']:
            out['explained'][-1]['firmer'] = parse_lone(m.group(1))
        m = COUNT_RE.match(line)
        if m:
            out['passed'], out['failed'] = int(m.group(1)), int(m.group(2))
    return out


def parse_lone(text):
    """The cases of an "its cases that ...:" line under a pair (vectors/judge/fit.c print_firmer_cases):
    "f.json #1-3, 8; g.json #2" as {(file, tcId)}."""
    cases = set()
    for part in text.split(';'):
        file, _, ids = part.strip().partition(' #')
        for r in ids.split(','):
            a, _, b = r.strip().partition('-')
            if a.isdigit():
                cases.update((file, i) for i in range(int(a), int(b or a) + 1))
    return cases


def explanation(parsed):
    """The port's explanation as items, and its text: the first `explained:` line (the fit's best),
    else the catalogued fault(s) diagnosing the most failures (platform effects and the
    not-bf16 hint are no explanation of a port's logic)."""
    if parsed['explained']:
        e = parsed['explained'][0]
        return e['items'], f"explained: {e['text']} ({e['explains']} of {e['of']})"
    faults = [d for d in parsed['catalogue'] if not d['key'].startswith(('platform', 'not-bf16'))]
    if not faults:
        return [], None
    best = max(faults, key=lambda d: d['count'])
    return ([[{'fault': f}] for f in best['key'].split('+')],  # faults that give the same: alternatives
            f"[{best['key']}] on {best['count']} of {parsed['failed']} failures")


# ------------------------------------------------------------------ comparing with the key

def norm_value(v):
    s = str(v).strip().strip('\'"`').lower()
    try:
        return repr(float(s))
    except ValueError:
        s = s.replace(' ', '')
        return VALUE_SYNONYMS.get(s, s)


def key_faults(k, reviewed=True):
    """The catalogued faults that deviation k is: `faults`, written with the key, and (reviewed)
    `faults_added`, added after a run showed the key had missed one (each with its reason)."""
    return list(k.get('faults', [])) + (list(k.get('faults_added', [])) if reviewed else [])


def key_forms(k, reviewed=True):
    """Key deviation k, and (reviewed) the same deviation in a field muonref added after the key was
    written (`renamed`: a behaviour the key named with a field of its own, `weight_decay_lr lr -> 1`,
    that a later field expresses exactly, `decay_method decoupled -> independent`; with its review)."""
    if not reviewed and k.get('added'):  # a deviation the key as first written missed (its `review` says why)
        return []
    forms = [k]
    if reviewed and k.get('renamed'):
        forms.append(dict(k['renamed'], faults=k.get('faults', []), faults_added=k.get('faults_added', [])))
    return forms


# a field that is one member of a pair an option sets whole (Moonlight's adamw_betas)
PAIR_MEMBER = {'adam_beta1': 0, 'adam_beta2': 1}


def pair_value(item, k):
    """The new value of key deviation k's member of a pair item (`adamw_betas [0.9, 0.95] ->
    [0.95, 0.95]` for adam_beta1: "0.95"), when the item changes that member alone; else None."""
    at = PAIR_MEMBER.get(k.get('field'))
    try:
        old, new = json.loads(item.get('old', '')), json.loads(item.get('new', ''))
    except ValueError:
        return None
    if at is None or not (isinstance(old, list) and isinstance(new, list) and len(old) == len(new) == 2):
        return None
    if any(old[i] != new[i] for i in range(2) if i != at):
        return None
    return str(new[at])


def item_matches(item, k, reviewed=True):
    """Whether an explanation item names key deviation k: its field (the value too, when the
    explanation gives one), one of the catalogued faults that k is, or (reviewed) one of the
    refusal traits that k shows (`traits_added`)."""
    if 'trait' in item:
        return reviewed and item['trait'] in k.get('traits_added', [])
    if 'fault' in item and (item['fault'] in key_faults(k, reviewed) or item['fault'] == k.get('field')):
        return True
    if 'field' not in item or canon_field(item['field']) not in [canon_field(f) for f in
                                                                 [k.get('field')] + list(k.get('aliases', []))]:
        return False
    if 'new' not in k:
        return True
    member = pair_value(item, k)
    new = norm_value(member if member is not None else item['new'])
    return FIELD_VALUE_SYNONYMS.get(item['field'], {}).get(new, new) == norm_value(k['new'])


def field_matches(item, k, reviewed=True):
    if 'trait' in item:
        return item_matches(item, k, reviewed)
    if 'fault' in item and item['fault'] in key_faults(k, reviewed):
        return True
    return 'field' in item and canon_field(item['field']) in [canon_field(f) for f in
                                                              [k.get('field')] + list(k.get('aliases', []))]


VERDICTS = ['right', 'field', 'partial', 'wrong', 'none']


def judge_explanation(alts, key, reviewed=True):
    """right: every item names a deviation of the key (field and value); field: every item names a
    deviating field, a value wrong; partial: some do; wrong: none does; none: no explanation.
    Of alternatives (parse_items: explanations the fit found to give the same results), the best.
    reviewed=False: by the key as first written (without `faults_added`, `renamed`, `traits_added`, and without
    the deviations marked `added`)."""
    if alts and isinstance(alts[0], dict):
        alts = [alts]
    return min((judge_items(items, key, reviewed) for items in alts if items), key=VERDICTS.index,
               default='none')


def judge_items(items, key, reviewed=True):
    """judge_explanation of one alternative."""
    devs = [f for k in key.get('deviations', []) for f in key_forms(k, reviewed)]
    if not items:
        return 'none'
    exact = [any(item_matches(i, k, reviewed) for k in devs) for i in items]
    fields = [any(field_matches(i, k, reviewed) for k in devs) for i in items]
    if all(exact):
        return 'right'
    if all(fields):
        return 'field'
    if any(fields):
        return 'partial'
    return 'wrong'


# a per-case diagnosis that names what gives the case's result (vectors/judge/diagnose.c, fit.c): a fault or an
# option change, then the others that give the same result on that case
CASE_NAMES_RE = re.compile(r"^(?:exactly|within this case's tolerance,) what (?:fault (\S+)|the option change (.+?)) "
                           r"gives\b(.*)$")


# a refused case's traits that an option change expresses (vectors/judge/fit.c muonref_fit_refusal): "the case has: a
# parameter without gradient (the option change missing_grad zeros -> error refuses it)"
REFUSED_CHANGE_RE = re.compile(r'\(the option change (.+?) refuses it\)')
# a refused case whose message quotes options of the profile (vectors/judge/fit.c quoted_keys): "its message names
# keller's option weight_decay: the port does not take it as keller does"
REFUSED_KEYS_RE = re.compile(r"its message names \S+'s options? (.+?): the port does not take")


def case_items(diagnosis):
    """A per-case diagnosis as explanation alternatives (parse_items' form): the fault or option change it
    names, and each of its "(the same here: A, B, ...)" alternatives; for a refused case, the option change
    each of its traits names (one of them refused it); [] where it names none."""
    if (diagnosis or '').startswith('refused: '):
        keys = REFUSED_KEYS_RE.search(diagnosis)
        if keys:  # each option named: an item that matches a key deviation of that field (item_matches)
            return [[{'fault': name}] for name in re.split(r',\s*', keys.group(1))]
        return [items for change in REFUSED_CHANGE_RE.findall(diagnosis) for items in parse_items(change)]
    m = CASE_NAMES_RE.match(diagnosis or '')
    if not m:
        return []
    alts = [[{'fault': m.group(1)}]] if m.group(1) else parse_items(m.group(2))
    same = re.search(r'\(the same here: (.*)\)\s*$', m.group(3))
    if same:
        for alt in split_top(re.sub(r' and \d+ more$', '', same.group(1)), r',\s+'):
            alts.extend(parse_items(alt))
    return alts


def case_accuracy(parsed, key):
    """Of the failing cases: how many carry a per-case diagnosis naming a catalogued fault, how many of those
    name a key deviation's fault (the measure issue 22 started from), and how many are told a key deviation
    in any form (a fault, an option change or one of the alternatives that give the same), by their own
    diagnosis or, where that is "none" or a weak match (within the bf16 noise allowance) that a pair
    matches at the case's tolerance, by the first pair line that lists them."""
    faults = {f for k in key.get('deviations', []) for f in key_faults(k)}
    named = right = any_right = 0
    for c in parsed['cases']:
        m = FAULT_RE.search(c['diagnosis'] or '')
        if m:
            named += 1
            right += m.group(1) in faults
        alts = next((e['items'] for e in parsed.get('explained', [])
                     if (c['file'], c['tcId']) in e.get('firmer', ())), None) or case_items(c['diagnosis'])
        if not alts:  # "none": the first pair line that lists the case names what explains it
            alts = next((e['items'] for e in parsed.get('explained', [])
                         if (c['file'], c['tcId']) in e.get('lone', ())), [])
        any_right += bool(alts) and judge_explanation(alts, key) == 'right'
    return named, right, any_right


def evaluate(d, key, modes_out):
    """One row of the table from the parsed judge outputs per mode."""
    row = {'id': d['id'], 'kind': d['kind'], 'profile': d['profile'], 'modes': {}}
    expect_pass = d['kind'] == 'control' or key.get('equal')
    for mode, parsed in modes_out.items():
        if parsed is None:
            continue
        robust_fail = [c for c in parsed['cases'] if 'PlatformRobust' in c['tags']]
        items, text = explanation(parsed)
        m = {'passed': parsed['passed'], 'failed': parsed['failed'], 'robust_failed': len(robust_fail),
             'explanation': text, 'items': items}
        if not expect_pass:
            m['caught'] = bool(parsed['failed'])
            m['verdict'] = judge_explanation(items, key) if parsed['failed'] else 'missed'
            if parsed['failed'] and judge_explanation(items, key, reviewed=False) != m['verdict']:
                m['verdict_as_written'] = judge_explanation(items, key, reviewed=False)
            m['cases_named'], m['cases_right'], m['cases_right_any'] = case_accuracy(parsed, key)
        else:
            # a control passes neutral whole; raw, every PlatformRobust case (spec/vectors.md 5.3)
            m['ok'] = parsed['failed'] == 0 if mode == 'neutral' else not robust_fail
        row['modes'][mode] = m
    return row


# ------------------------------------------------------------------ one entry

def run_entry(src, e, args):
    d = resolve(src, e)
    wdir = os.path.join(args.work, d['id'])
    os.makedirs(wdir, exist_ok=True)
    files = source_files(src, args.cache, d)
    if e.get('edits'):
        files = apply_edits(files, e['edits'], d['id'], d.get('file') or d.get('path'))
    write_port(d, files, wdir)
    modes = d.get('modes', ['neutral', 'raw'] if d['kind'] == 'control' else ['neutral'])
    out, errors = {}, []
    for mode in modes:
        text, err = run_mode(d, wdir, mode, args.muonref, args.rejudge or args.rescore, args.rescore)
        if err:
            errors.append(f"{mode}: {err}")
            out[mode] = None
        else:
            out[mode] = parse_check(text)
    row = evaluate(d, e.get('key', {}), out)
    row['errors'] = errors
    row['key'] = e.get('key', {})
    row['source'] = d.get('source')
    row['upstream'] = e.get('upstream')
    return row


# ------------------------------------------------------------------ report

def tally(rows):
    t = {}
    mut = [r for r in rows if r['kind'] == 'mutant' and 'neutral' in r['modes']]
    caught = [r for r in mut if r['modes']['neutral'].get('caught')]
    t['mutants'] = len(mut)
    t['mutants_caught'] = len(caught)
    t['mutants_right'] = sum(r['modes']['neutral']['verdict'] == 'right' for r in caught)
    t['mutants_field'] = sum(r['modes']['neutral']['verdict'] in ('right', 'field') for r in caught)
    t['mutants_right_as_written'] = sum(r['modes']['neutral'].get('verdict_as_written', r['modes']['neutral']['verdict'])
                                        == 'right' for r in caught)
    wild = [r for r in rows if r['kind'] == 'wild' and 'neutral' in r['modes']]
    dev = [r for r in wild if not r['key'].get('equal')]
    eq = [r for r in wild if r['key'].get('equal')]
    t['wild'] = len(wild)
    t['wild_equal'] = len(eq)
    t['wild_equal_pass'] = sum(r['modes']['neutral'].get('ok', False) for r in eq)
    t['wild_deviating'] = len(dev)
    t['wild_caught'] = sum(bool(r['modes']['neutral'].get('caught')) for r in dev)
    t['wild_right'] = sum(r['modes']['neutral'].get('verdict') == 'right' for r in dev)
    t['wild_field'] = sum(r['modes']['neutral'].get('verdict') in ('right', 'field') for r in dev)
    t['wild_right_as_written'] = sum(r['modes']['neutral'].get('verdict_as_written', r['modes']['neutral'].get('verdict'))
                                     == 'right' for r in dev)
    # how many failures the first explanation covers ("(N of M)"): a verdict is scored on what that line
    # names, which may explain few of the port's failures (a wild port with many deviations)
    t['mutants_covered'], t['mutants_failures'] = coverage(caught)
    t['wild_covered'], t['wild_failures'] = coverage([r for r in dev if r['modes']['neutral'].get('caught')])
    # failing cases whose own diagnosis line names a key deviation (case_accuracy)
    for name, rs in (('mutants', caught), ('wild', [r for r in dev if r['modes']['neutral'].get('caught')])):
        t[f'{name}_cases_named_right'] = sum(r['modes']['neutral'].get('cases_right_any', 0) for r in rs)
        t[f'{name}_cases_failed'] = sum(r['modes']['neutral']['failed'] for r in rs)
    ctl = [r for r in rows if r['kind'] == 'control']
    t['controls'] = len(ctl)
    t['controls_neutral'] = sum(r['modes'].get('neutral', {}).get('ok', False) for r in ctl)
    t['controls_raw'] = sum(r['modes'].get('raw', {}).get('ok', False) for r in ctl if 'raw' in r['modes'])
    t['controls_raw_run'] = sum('raw' in r['modes'] for r in ctl)
    per_up = {}
    for r in mut:
        per_up[r['upstream']] = per_up.get(r['upstream'], 0) + 1
    t['mutants_per_source'] = per_up
    return t


COVER_RE = re.compile(r'\((\d+) of (\d+)')


def coverage(rows):
    """(failures explained, failures) summed over rows, from the neutral explanation's "(N of M)";
    a row whose explanation gives no count (a catalogued fault's summary) counts none of its M."""
    covered = failures = 0
    for r in rows:
        n = r['modes']['neutral']
        m = COVER_RE.search(n.get('explanation') or '')
        if m:
            covered += int(m.group(1))
            failures += int(m.group(2))
    return covered, failures


def pct(a, b):
    return f"{a}/{b} ({100.0 * a / b:.0f} %)" if b else f"{a}/{b}"


def md_escape(s):
    return (s or '').replace('|', '\\|').replace('\n', ' ')


def key_text(key):
    if key.get('equal'):
        return f"equal to {key['equal']}"
    parts = []
    for k in key.get('deviations', []):
        s = k.get('field', '?')
        if 'old' in k or 'new' in k:
            s += f" {k.get('old', '?')} -> {k.get('new', '?')}"
        if k.get('faults') or k.get('faults_added'):
            s += f" ({', '.join(k.get('faults', []) + [f + ' [added]' for f in k.get('faults_added', [])])})"
        for t in k.get('traits_added', []):
            s += f" [= {t}, added]"
        r = k.get('renamed')
        if r:
            s += f" [= {r.get('field', '?')} {r.get('old', '?')} -> {r.get('new', '?')}, added]"
        parts.append(s)
    return '; '.join(parts)


BEFORE = os.path.join(HERE, 'before.json')
FINDINGS = os.path.join(HERE, 'findings.md')


def load_before():
    """The baseline measured on the catalogue diagnosis (tests/eval/before.json: the totals by
    their labels, per entry its verdict), kept in the page as "before"; {} when absent."""
    try:
        with open(BEFORE) as f:
            return json.load(f)
    except OSError:
        return {}


def write_doc(path, rows, t, args, muonref_desc):
    now = datetime.date.today().isoformat()
    before = load_before()
    btot, brows = before.get('totals', {}), before.get('rows', {})
    cpu, flags = '', set()
    try:
        with open('/proc/cpuinfo') as f:
            lines = f.read().splitlines()
        cpu = next((l.split(':', 1)[1].strip() for l in lines if l.startswith('model name')), '')
        flags = set(next((l.split(':', 1)[1].split() for l in lines if l.startswith('flags')), []))
    except OSError:
        pass
    # read from /proc/cpuinfo: the figures differ between these machines
    isa = ('AVX-512 BF16' if 'avx512_bf16' in flags else 'AVX-512, no BF16' if 'avx512f' in flags
           else 'AVX2, no AVX-512' if 'avx2' in flags else 'no AVX2')
    L = []
    L.append('# Explanations measured: does `muonref check` name what is wrong with a port?')
    L.append('')
    L.append('Written by `tests/eval/run.py` (issue 22, "Done when"); do not edit by hand. Reproduce with')
    L.append('')
    L.append('    nice -n 10 /usr/bin/python3 tests/eval/run.py --jobs 2 --write-doc docs/explanations.md')
    L.append('')
    L.append(f'"After": measured {now} with `{muonref_desc}` on PyTorch 1.13 CPU (Python {platform.python_version()}, '
             f'{cpu}, {isa}), written by `{" ".join(["tests/eval/run.py"] + (args.argv or []))}`.')
    if before:
        L.append(f'"Before": {before.get("source", "")}; its figures are kept from tests/eval/before.json.')
    L.append('The ports, answer keys, mutants and controls are in tests/eval/*.toml (tests/eval/README.md says how')
    L.append('they were written: every key from the port\'s code, before any verdict). "Explained right": the')
    L.append('explanation (the first `explained:` line, else the catalogued fault diagnosing the most failures)')
    L.append('names only deviations of the key, field and value; "field": the right fields, a value wrong;')
    L.append('"partial": some right; "wrong": none; "none": no explanation. Neutral mode (`--mode neutral`)')
    L.append('unless said; controls also raw, where they must pass every `PlatformRobust` case.')
    L.append('')
    L.append('## Totals')
    L.append('')
    totals = [
        ('mutants caught (fail at least one case)', pct(t['mutants_caught'], t['mutants'])),
        ('caught mutants explained right', pct(t['mutants_right'], t['mutants_caught'])),
        ('caught mutants explained right by the keys as first written (without `faults_added`, `renamed` or `traits_added`)',
         pct(t['mutants_right_as_written'], t['mutants_caught'])),
        ('caught mutants whose explanation names the right field or fault', pct(t['mutants_field'], t['mutants_caught'])),
        ('wild ports equal to a profile that pass', pct(t['wild_equal_pass'], t['wild_equal'])),
        ('deviating wild ports caught', pct(t['wild_caught'], t['wild_deviating'])),
        ('deviating wild ports explained right', pct(t['wild_right'], t['wild_deviating'])),
        ('deviating wild ports explained right by the keys as first written',
         pct(t['wild_right_as_written'], t['wild_deviating'])),
        ('deviating wild ports, right field or fault', pct(t['wild_field'], t['wild_deviating'])),
        ('failures covered by the first explanation: caught mutants', pct(t['mutants_covered'], t['mutants_failures'])),
        ('failures covered by the first explanation: deviating wild ports',
         pct(t['wild_covered'], t['wild_failures'])),
        ('failures told a key deviation by their own line (or the pair line listing them): caught mutants',
         pct(t['mutants_cases_named_right'], t['mutants_cases_failed'])),
        ('failures told a key deviation by their own line (or the pair line listing them): deviating wild ports',
         pct(t['wild_cases_named_right'], t['wild_cases_failed'])),
        ('controls passing neutral', pct(t['controls_neutral'], t['controls'])),
        ('controls passing raw (every PlatformRobust case)', pct(t['controls_raw'], t['controls_raw_run'])),
        ('mutants per upstream', ', '.join(f'{k} {v}' for k, v in sorted(t['mutants_per_source'].items()))),
    ]
    L.append('| what | before | after |')
    L.append('|---|---|---|')
    for label, value in totals:
        L.append(f"| {label} | {btot.get(label, '–')} | {value} |")
    L.append('')
    for kind, title in (('wild', 'In-the-wild ports'), ('mutant', 'Mutants of upstream ports'),
                        ('control', 'Correct controls')):
        L.append(f'## {title}')
        L.append('')
        if kind == 'control':
            L.append('| id | profile | before: neutral; raw | neutral | raw (PlatformRobust failures) | explanation (neutral) |')
            L.append('|---|---|---|---|---|---|')
        else:
            L.append('| id | profile | answer key | before: passed/failed, verdict | failed | verdict | explanation | '
                     'failures told a key deviation (a fault or an option change, on their own line or the pair line '
                     'that lists them) | '
                     'failures whose case line names a key fault (named: any fault) |')
            L.append('|---|---|---|---|---|---|---|---|---|')
        for r in rows:
            if r['kind'] != kind:
                continue
            n = r['modes'].get('neutral')
            b = brows.get(r['id'])
            btxt = (('–' if b is None else f"{b['neutral']}; {b['raw']}") if kind == 'control' else
                    '–' if b is None else f"{b['failed']} {b['verdict']}")
            if kind == 'control':
                raw = r['modes'].get('raw')
                rawtxt = (f"{raw['passed']}/{raw['failed']} ({raw['robust_failed']}) {'ok' if raw['ok'] else 'FAIL'}"
                          if raw else '–')
                ntxt = f"{n['passed']}/{n['failed']} {'ok' if n['ok'] else 'FAIL'}" if n else 'error'
                L.append(f"| {r['id']} | {r['profile']} | {md_escape(btxt)} | {ntxt} | {rawtxt} | "
                         f"{md_escape(n['explanation'] if n else '; '.join(r['errors']))} |")
                continue
            if n is None:
                L.append(f"| {r['id']} | {r['profile']} | {md_escape(key_text(r['key']))} | {md_escape(btxt)} | error | "
                         f"– | {md_escape('; '.join(r['errors']))} | | |")
                continue
            verdict = ('pass' if n['failed'] == 0 else 'FAIL') if r['key'].get('equal') else n['verdict']
            if n.get('verdict_as_written'):
                verdict += f" (key as first written: {n['verdict_as_written']})"
            L.append(f"| {r['id']} | {r['profile']} | {md_escape(key_text(r['key']))} | {md_escape(btxt)} | "
                     f"{n['passed']}/{n['failed']} | "
                     f"{verdict} | {md_escape(n['explanation'] or '–')} | "
                     f"{n.get('cases_right_any', '–')} of {n['failed']} | "
                     f"{n.get('cases_right', '–')} of {n['failed']} (named: {n.get('cases_named', '–')}) |")
        L.append('')
    try:  # what was found on the failures (written by hand: the port, the platform, the vectors or ours)
        with open(FINDINGS) as f:
            L.append(f.read().rstrip('\n'))
            L.append('')
    except OSError:
        pass
    with open(path, 'w') as f:
        f.write('\n'.join(L))


# ------------------------------------------------------------------ self-test (make check)

SAMPLE_CATALOGUE = """FAIL keller_gradients.json tcId 8 [GradientScale,BugB21,Bf16Exact] gradient scaled by 2^0: state[0].momentum_buffer[0]: got 0.75
  diagnosis: exactly what fault sum_momentum gives: momentum buffer in sum form beta M + G where the profile keeps an EMA
FAIL keller_conv.json tcId 1 [NdMuon,ConvScale,Bf16Noise,PlatformRobust] a 1x1 conv: params[0]: the update deviates
  diagnosis: none: no catalogued fault or measured platform effect gives this result
diagnosis: 14 failures [sum_momentum]: exactly what fault sum_momentum gives: momentum buffer in sum form
diagnosis: 20 failures [platform?:scalars]: possibly platform: no catalogued fault gives this result
diagnosis: 56 failures that no catalogued fault or measured platform effect explains
115 passed, 70 failed
"""
SAMPLE_FITTED = """FAIL keller_scaling.json tcId 3 [Scaling,Bf16Exact] a tall matrix: params[0][1]: got 1, expected 2
explained: ns_eps 1e-7 -> 1e-8 and scale_mode fan_in -> rms_adamw (71 of 72 failures)
explained: coeffs[0] (3.4445, -4.775, 2.0315) -> (3.4445, -4.775, 2.0351) (3 of 72 failures; 2 of 20 passing cases sampled broken)
explained: fan_in_as_rms = scale_mode fan_in -> rms_adamw and default (Muon groups) momentum 0.95 -> 0.9 (2 of 72 failures)
explained: no single change of the option space, nor a pair, gives the port's results (72 failures)
12 passed, 72 failed
"""


def self_test():
    """Checks what needs no fetched code and no driver run: the manifests (ids, keys, each
    entry's profile and adapter), the edits of every entry whose file is in this repository (a
    test port that changes moves its mutants' lines), and the parser on both forms of explanation.
    Returns the list of problems."""
    problems = []
    src, entries = load_manifests()
    for e in entries:
        d = resolve(src, e)
        for k in ('profile', 'adapter', 'class'):
            if k not in d:
                problems.append(f"{e['id']}: no {k}")
        if not os.path.isdir(os.path.join(ROOT, 'vectors', d.get('profile', '?'))):
            problems.append(f"{e['id']}: no vectors/{d.get('profile')}")
        key = e.get('key', {})
        if e['kind'] != 'control' and not key.get('equal') and not key.get('deviations'):
            problems.append(f"{e['id']}: an answer key with neither equal nor deviations")
        for k in key.get('deviations', []):
            if 'field' not in k:
                problems.append(f"{e['id']}: a deviation without field")
            if k.get('added') and not k.get('review'):
                problems.append(f"{e['id']}: a deviation `added` after the key was written, without its review")
        if e.get('edits') and d.get('loader') == 'path':
            try:
                apply_edits(source_files(src, None, d), e['edits'], d['id'], d.get('path'))
            except Bad as exc:
                problems.append(str(exc))
    a = parse_check(SAMPLE_CATALOGUE)
    items, _ = explanation(a)
    if (a['passed'], a['failed'], len(a['cases'])) != (115, 70, 2) or items != [[{'fault': 'sum_momentum'}]]:
        problems.append(f"catalogue sample parsed as {a['passed']}/{a['failed']}, {len(a['cases'])} cases, {items}")
    if sum('PlatformRobust' in c['tags'] for c in a['cases']) != 1 or a['cases'][0]['diagnosis'] is None:
        problems.append("catalogue sample: tags or per-case diagnosis lost")
    key = {'deviations': [{'field': 'momentum_form', 'old': 'ema', 'new': 'sum', 'faults': ['sum_momentum']}]}
    if judge_explanation(items, key) != 'right' or case_accuracy(a, key) != (1, 1, 1):
        problems.append("catalogue sample: sum_momentum not judged right against its key")
    # per-case lines (case_items), each against a key deviation it names and one it does not: an option change
    # with its alternatives, and a refused case's trait with the option change it is (vectors/judge/fit.c
    # muonref_fit_refusal)
    lines = {
        'a per-case option change line': (
            "within this case's tolerance, what the option change grad_after_step nesterov_input -> keep gives "
            "(the same here: nesterov_ignored, nesterov true -> false)",
            {'field': 'nesterov', 'old': 'true', 'new': 'false'}, {'field': 'scale_mode', 'old': 'fan_in', 'new': 'none'}),
        "a refused case's line": (
            "refused: the port raised on a case that keller runs (TypeError: no gradient); the case has: a parameter "
            "without gradient (the option change missing_grad zeros -> error refuses it); a state round trip between "
            "steps",
            {'field': 'missing_grad', 'old': 'zeros', 'new': 'error'}, {'field': 'conv_mode', 'old': 'keller', 'new': 'error'}),
        "a refused case's line naming options": (
            "refused: the port raised on a case that keller runs (ValueError: optimizer.param_groups has no key "
            "'weight_decay'); its message names keller's option weight_decay: the port does not take it as keller does",
            {'field': 'weight_decay', 'old': '?', 'new': '0'}, {'field': 'missing_grad', 'old': 'zeros', 'new': 'error'}),
        "a change in Muon groups only": (
            "within this case's tolerance, what the option change weight_decay in Muon groups (any) -> 0 gives",
            {'field': 'weight_decay', 'old': '?', 'new': '0'}, {'field': 'weight_decay', 'old': '?', 'new': '0.01'})}
    for what, (line, named, other) in lines.items():
        for dev, want in ((named, 1), (other, 0)):
            got = case_accuracy({'cases': [{'diagnosis': line}]}, {'deviations': [dev]})[2]
            if got != want:
                problems.append(f"{what} against {dev}: {got} case named right, expected {want}")
    # a "none" case listed under a pair's line is told that pair
    sample = parse_check("FAIL k_m.json tcId 3 [Bf16Noise] c: x\n  diagnosis: none: no catalogued fault\n"
                         "explained: nesterov_ema_blend and sum_momentum (1 of 1 failures)\n"
                         "  its cases that no single change explains: k_m.json #2-4\n0 passed, 1 failed\n")
    key = {'deviations': [{'field': 'momentum_form', 'old': 'ema', 'new': 'sum',
                           'faults': ['sum_momentum', 'nesterov_ema_blend']}]}
    if case_accuracy(sample, key)[2] != 1:
        problems.append(f"a case listed under a pair line: not told the pair ({sample['explained']})")
    # a weak single match listed under a pair's line is told the pair, not its own line's change
    sample = parse_check("FAIL k_w.json tcId 3 [Bf16Exact] c: x\n  diagnosis: within the bf16 noise allowance, what "
                         "the option change scale_mode fan_in -> none gives\n"
                         "explained: decay_after_update and fan_in_as_rms (1 of 1 failures)\n"
                         "  its cases that single changes match only within the bf16 noise allowance: k_w.json #3\n"
                         "0 passed, 1 failed\n")
    key = {'deviations': [{'field': 'scale_mode', 'old': 'fan_in', 'new': 'rms_adamw', 'faults': ['fan_in_as_rms']},
                          {'field': 'decay_order', 'faults': ['decay_after_update']}]}
    if case_accuracy(sample, key)[2] != 1:
        problems.append(f"a weak case listed under a pair line: not told the pair ({sample['explained']})")
    b = parse_check(SAMPLE_FITTED)
    items, _ = explanation(b)
    want = [{'field': 'ns_eps', 'old': '1e-7', 'new': '1e-8'}, {'field': 'scale_mode', 'old': 'fan_in', 'new': 'rms_adamw'}]
    third = [[{'fault': 'fan_in_as_rms'}],
             [{'field': 'scale_mode', 'old': 'fan_in', 'new': 'rms_adamw'},
              {'default': True, 'field': 'momentum', 'old': '0.95', 'new': '0.9'}]]
    if (items != [want] or len(b['explained']) != 3 or b['explained'][1]['items'][0][0]['field'] != 'coeffs[0]'
            or b['explained'][2]['items'] != third):
        problems.append(f"fitted sample parsed as {[e['items'] for e in b['explained']]}")
    if (judge_explanation(third, {'deviations': [{'field': 'scale_mode', 'new': 'rms_adamw'},
                                                 {'field': 'momentum', 'new': '0.9', 'default': True}]}) != 'right'
            or judge_explanation(third[:1], {'deviations': [{'field': 'x', 'faults': ['fan_in_as_rms']}]}) != 'right'):
        problems.append("fitted sample: a fault named with its change not judged right by its fault or field")
    key = {'deviations': [{'field': 'ns_eps', 'new': '1e-08'}, {'field': 'scale_mode', 'new': 'rms_adamw'}]}
    if judge_explanation(items, key) != 'right':
        problems.append("fitted sample: not judged right against its key")
    if judge_explanation([items[0][:1]], {'deviations': [{'field': 'ns_eps', 'new': '1e-6'}]}) != 'field':
        problems.append("fitted sample: a wrong value judged other than 'field'")
    renamed = {'deviations': [{'field': 'weight_decay_lr', 'old': 'lr', 'new': '1', 'behaviour': True,
                               'renamed': {'field': 'decay_method', 'old': 'decoupled', 'new': 'independent'}}]}
    said = parse_items('decay_method decoupled -> independent')
    if judge_explanation(said, renamed) != 'right' or judge_explanation(said, renamed, reviewed=False) != 'wrong':
        problems.append("a key's `renamed` deviation: not right when reviewed, or right as first written")
    trait = 'Muon parameter of fewer than 2 dimensions accepted'
    shown = {'deviations': [{'field': 'muon_1d_accepted', 'behaviour': True, 'traits_added': [trait]}]}
    if (parse_items(trait) != [[{'trait': trait}]] or judge_explanation(parse_items(trait), shown) != 'right'
            or judge_explanation(parse_items(trait), shown, reviewed=False) != 'wrong'
            or judge_explanation(parse_items(trait.replace('fewer than 2', '3')), shown) != 'wrong'):
        problems.append("a key's `traits_added`: the trait not parsed, or not right only when reviewed")
    torch_rms = parse_items('default adjust_lr_fn null -> "match_rms_adamw"')
    if judge_explanation(torch_rms, {'deviations': [{'field': 'scale_mode', 'old': 'fan_in', 'new': 'rms_adamw'}]}) != 'right':
        problems.append("torch's adjust_lr_fn \"match_rms_adamw\" not read as scale_mode rms_adamw")
    if judge_explanation(items, {'deviations': [{'field': 'momentum_form'}]}) != 'wrong':
        problems.append("fitted sample: a wrong field judged other than 'wrong'")
    typos = parse_items('default coefficients (3.4445, -4.775, 2.0315) -> (3.4445, -4.772, 2.0315) = default '
                        'coefficients (3.4445, -4.775, 2.0315) -> (3.4445, -4.775, 2.0351)')
    digit = {'deviations': [{'field': 'coeffs', 'new': '(3.4445, -4.775, 2.0351)'}]}
    if len(typos) != 2 or judge_explanation(typos, digit) != 'right' or judge_explanation(typos[:1], digit) != 'field':
        problems.append(f"alternatives joined by ' = ' not judged by the best: {typos}")
    pair = parse_items('nesterov_ignored and sum_momentum = nesterov_ignored and momentum_form ema -> sum')
    if [len(a) for a in pair] != [2, 2] or pair[1][1].get('field') != 'momentum_form':
        problems.append(f"two pairs joined by ' = ' parsed as {pair}")
    betas = parse_items('default adamw_betas [0.9, 0.95] -> [0.95, 0.95]')
    beta1 = {'deviations': [{'field': 'adam_beta1', 'new': '0.95', 'aliases': ['adamw_betas']}]}
    if (judge_explanation(betas, beta1) != 'right'
            or judge_explanation(parse_items('adamw_betas [0.9, 0.95] -> [0.95, 0.99]'), beta1) != 'field'):
        problems.append("a betas pair changing only beta1 not judged by its member")
    if judge_explanation(parse_items('weight_decay (any) -> 0'), {'deviations': [{'field': 'weight_decay', 'old': '?',
                                                                                  'new': '0'}]}) != 'right':
        problems.append("an ignored option (`FIELD (any) -> VALUE`) not judged by its value")
    adjusted = parse_items('default (Muon groups) use_adjusted_lr false -> true')
    fan_in = {'deviations': [{'field': 'scale_mode', 'old': 'rms_adamw', 'new': 'fan_in', 'default': True}]}
    if (judge_explanation(adjusted, fan_in) != 'right'
            or judge_explanation(parse_items('use_adjusted_lr true -> false'), fan_in) != 'field'):
        problems.append("pytorch_optimizer's use_adjusted_lr not read as scale_mode (true: fan_in, false: rms_adamw)")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(prog='tests/eval/run.py', description=__doc__.split('\n')[0])
    ap.add_argument('--muonref', default=os.path.join(ROOT, 'muonref'), help='the muonref binary that judges')
    ap.add_argument('--cache', default=os.path.join(os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'),
                                                    'muonref-eval'))
    ap.add_argument('--work', default='/tmp/muonref-eval', help='where the runs are written (default /tmp/muonref-eval)')
    ap.add_argument('--jobs', type=int, default=1)
    ap.add_argument('--only', help='comma-separated ids (or kinds: wild, mutant, control)')
    ap.add_argument('--rejudge', action='store_true', help="reuse the driver's results in --work; judge again")
    ap.add_argument('--rescore', action='store_true',
                    help="reuse the driver's results and the judge's output in --work where both exist; score again")
    ap.add_argument('--write-doc', metavar='FILE')
    ap.add_argument('--list', action='store_true', help='list the entries and exit')
    ap.add_argument('--self-test', action='store_true', help='check the manifests, the local edits and the parser (no run)')
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if args.self_test:
            problems = self_test()
            for p in problems:
                print(f"FAIL: {p}")
            print(f"tests/eval/run.py --self-test: {'ok' if not problems else f'{len(problems)} problems'}")
            return 1 if problems else 0
        src, entries = load_manifests()
        if args.only:
            want = set(args.only.split(','))
            entries = [e for e in entries if e['id'] in want or e['kind'] in want]
            if not entries:
                raise Bad(f"--only {args.only}: no such entry")
        if args.list:
            for e in entries:
                d = resolve(src, e)
                print(f"{e['kind']:8} {e['id']:32} {d['profile']:10} {key_text(e.get('key', {}))}")
            return 0
        if not os.access(args.muonref, os.X_OK):
            raise Bad(f"--muonref {args.muonref}: not an executable (build muonref first)")
        os.makedirs(args.work, exist_ok=True)
        rows = [None] * len(entries)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
            futs = {ex.submit(run_entry, src, e, args): i for i, e in enumerate(entries)}
            for f in concurrent.futures.as_completed(futs):
                i = futs[f]
                rows[i] = f.result()
                r = rows[i]
                n = r['modes'].get('neutral') or {}
                print(f"{r['kind']:8} {r['id']:32} neutral {n.get('passed')}/{n.get('failed')} "
                      f"{n.get('verdict', 'ok' if n.get('ok') else '')} {n.get('explanation') or ''}"
                      + (f" ERRORS: {r['errors']}" if r['errors'] else ''), flush=True)
    except Bad as exc:
        print(f"tests/eval/run.py: {exc}", file=sys.stderr)
        return 2
    t = tally(rows)
    with open(os.path.join(args.work, 'summary.json'), 'w') as f:
        json.dump({'totals': t, 'rows': rows}, f, indent=1)
    desc = subprocess.run([args.muonref, 'version'], capture_output=True, text=True).stdout.strip()
    rev = subprocess.run(['git', '-C', os.path.dirname(os.path.abspath(args.muonref)), 'rev-parse', '--short', 'HEAD'],
                         capture_output=True, text=True).stdout.strip()
    desc = f"{desc} @ {rev}" if rev else desc
    if args.write_doc:
        write_doc(args.write_doc, rows, t, args, desc)
    print(json.dumps(t))
    return 3 if any(r['errors'] for r in rows) else 0


if __name__ == '__main__':
    sys.exit(main())
