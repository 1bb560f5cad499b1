#!/bin/sh
# muonref test: a case's comment does not contradict its expectation about the branch a parameter takes
# (spec/profiles/README.md, "Fitting a case to a profile"; issue 22: "AdamW by shape" on keras@3.10's 3-D
# routing cases, which take Muon there, misled a new user's predictions).  For every valid step case with one
# parameter whose comment, before its profile notes, names exactly one of Muon and AdamW: the branch the
# reference's expectation shows (a momentum_buffer: Muon; exp_avg: AdamW) is that one, or a note of the
# profile says otherwise ("routes NAME (SHAPE) to BRANCH]", or, where it is Muon, "no AdamW fallback" or mlx's
# "steps NAME (SHAPE) on its momentum alone]": its momentum step has a momentum_buffer, Muon's state).
# The expectations come from the reference (muonref gen), the comments from the case tables: the check
# reads both from the published files.  Exit 0 pass, 1 fail.
src=${MUONREF_SRCDIR:-.}
py=${MUONREF_PYTHON:-/usr/bin/python3}
"$py" - "$src/vectors" <<'PY'
import glob, json, re, sys
checked = bad = 0
for f in sorted(glob.glob(sys.argv[1] + '/*/*.json')):
    d = json.load(open(f))
    for g in d.get('testGroups', []):
        for t in g['tests']:
            if t.get('result') != 'valid' or 'steps' not in t or len(t.get('params', [])) != 1:
                continue
            st = (t['expected'].get('state') or [None])[0] or {}
            branch = 'Muon' if 'momentum_buffer' in st else 'AdamW' if 'exp_avg' in st else None
            c = t['comment']
            said = {w for w in ('Muon', 'AdamW') if re.search(r'\b' + w + r'\b', c.split(' [profile')[0])}
            if not branch or len(said) != 1:
                continue
            checked += 1
            noted = re.search(r'routes \S+ \([0-9, ]*\) to ' + branch + r'\]', c) or \
                (branch == 'Muon' and '[profile ' in c and 'no AdamW fallback' in c) or \
                (branch == 'Muon' and re.search(r'steps \S+ \([0-9, ]*\) on its momentum alone\]', c))
            if said != {branch} and not noted:
                bad += 1
                print(f"vector-comments:0:F:{f.split('/')[-1]}:#{t['tcId']}:0: the comment says {said.pop()}, "
                      f"the expectation is {branch}'s, and no profile note says so: {c[:200]}")
print(f"vector-comments: {checked} cases checked, {bad} whose comment contradicts their expectation")
sys.exit(1 if bad or not checked else 0)
PY
