#!/usr/bin/python3
"""Helper of tests/scripts/torch-driver.sh: which failing cases a faulty port may have.

    torch_fault_cases.py --fault ema|decay --check-output FILE VECTOR_FILES_OR_DIRS...

Reads the output of `muonref check --results` (FILE; only lines holding
`tcId N` or `tcId=N` and not starting with `PASS ` are used, with the first `*.json` word of the line as
the vector file), computes from the vector files the cases the fault can
change, and exits 0 when at least one case failed and every failing case is
one of them; 1 otherwise (it prints why); 2 on bad input.

The sets are computed from the vectors, never listed by hand:

* ema (momentum buffer kept as beta M + (1 - beta) G): the cases whose
  expected state (`expected` or `expectedBf16`) holds a momentum buffer,
  and the error cases whose run must store a non-finite value
  (`"run": "nonFinite"`, spec/muon.md 7.3): there the sum form's Nesterov
  input leaves binary32 while the EMA form's, (1 - beta) times smaller,
  stays finite;
* decay (Muon weight decay with lr * scale): the cases with a parameter that
  is routed to Muon (spec/muon.md section 2), receives a gradient, and has
  weight_decay != 0 and a scale factor != 1 (section 5).

Standard library only.
"""

import argparse
import json
import math
import os
import re
import sys

LINE_ID = re.compile(r'tcId\s*[=:]?\s*(\d+)')
LINE_FILE = re.compile(r'([^\s\'"\[\]():]+\.json)')


def vector_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            out.extend(sorted(os.path.join(r, f) for r, _, names in os.walk(p) for f in names if f.endswith('.json')))
        else:
            out.append(p)
    return out


def num(v):
    if isinstance(v, str):
        return float(v)  # "nan", "inf", "-inf"
    return float(v)


def holds_momentum_buffer(case):
    for key in ('expected', 'expectedBf16'):
        exp = case.get(key)
        if isinstance(exp, dict):
            for st in exp.get('state') or []:
                if isinstance(st, dict) and 'momentum_buffer' in st:
                    return True
    return False


def routed_to_muon(shape, options):
    use = options.get('use_muon')
    if use is not None:
        return bool(use)
    threshold = options.get('adam_dim_threshold', 8192)
    return len(shape) == 2 and shape[0] < threshold and shape[1] < threshold


def scale_factor(shape, mode):
    rows = shape[0]
    cols = 1
    for d in shape[1:]:
        cols *= d
    if mode == 'fan_in':
        return math.sqrt(max(1.0, rows / cols))
    if mode == 'fan_out':
        return math.sqrt(max(1.0, cols / rows))
    return 1.0


def scaled_decay_matters(case):
    params, steps = case.get('params') or [], case.get('steps') or []
    for group in case.get('groups') or []:
        options = group.get('options') or {}
        try:
            wd = num(options.get('weight_decay', 0.0))
        except (TypeError, ValueError):
            continue
        if wd == 0 or math.isnan(wd):
            continue
        for i in group.get('params') or []:
            shape = params[i]['init']['shape']
            if not routed_to_muon(shape, options) or len(shape) < 2:
                continue
            if scale_factor(shape, options.get('scale_mode', 'fan_in')) == 1.0:
                continue
            if any(s['grads'][i] is not None for s in steps):
                return True
    return False


def candidates(files, fault):
    out = set()
    for path in files:
        with open(path, encoding='utf-8') as f:
            doc = json.load(f)
        base = os.path.basename(path)
        for group in doc.get('testGroups', []):
            for case in group.get('tests', []):
                if 'groups' not in case:
                    continue
                if fault == 'ema':
                    hit = holds_momentum_buffer(case) or (case.get('expected') or {}).get('run') == 'nonFinite'
                else:
                    hit = scaled_decay_matters(case)
                if hit:
                    out.add((base, int(case['tcId'])))
    return out


def failing_cases(text):
    out = set()
    for line in text.splitlines():
        if line.startswith('PASS '):  # a pass that names its outcome (norm overflowed binary32)
            continue
        m = LINE_ID.search(line)
        if not m:
            continue
        f = LINE_FILE.search(line)
        out.add((os.path.basename(f.group(1)) if f else '?', int(m.group(1))))
    return out


def main():
    ap = argparse.ArgumentParser(prog='torch_fault_cases.py')
    ap.add_argument('--fault', required=True, choices=('ema', 'decay'))
    ap.add_argument('--check-output', required=True, metavar='FILE')
    ap.add_argument('vectors', nargs='+')
    args = ap.parse_args()
    try:
        with open(args.check_output, encoding='utf-8', errors='replace') as f:
            failed = failing_cases(f.read())
        allowed = candidates(vector_files(args.vectors), args.fault)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        sys.stderr.write(f"torch_fault_cases.py: {type(exc).__name__}: {exc}\n")
        return 2
    def show(cases):
        by_file = {}
        for f, i in sorted(cases):
            by_file.setdefault(f, []).append(str(i))
        return '; '.join(f"{f} tcId {' '.join(ids)}" for f, ids in by_file.items()) or 'none'

    print(f"fault {args.fault}: {len(failed)} failing cases: {show(failed)}")
    print(f"fault {args.fault}: {len(allowed)} cases it can change")
    if not failed:
        print(f"FAIL: the vectors do not catch fault {args.fault}")
        return 1
    unexpected = failed - allowed
    if unexpected:
        print(f"FAIL: fault {args.fault} fails cases it cannot change: {show(unexpected)}")
        return 1
    print(f"ok: fault {args.fault} is caught, only where expected")
    return 0


if __name__ == '__main__':
    sys.exit(main())
