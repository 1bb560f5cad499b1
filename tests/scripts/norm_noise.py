"""The measurements behind `scaleRel` (spec/vectors.md 5.1): how far the scale of a correct
implementation's Muon update lies from the reference's bf16 run, and whether a 1 % scale error
fails.

    /usr/bin/python3 tests/scripts/norm_noise.py [--muonref ./muonref] [--vectors vectors] [--work DIR]
                                         [--profiles nemo,torch,...] [--scale]

For every profile: the fast bf16 path (`muonref check --impl fast-bf16 --write-results`), the
profile's test port (tests/ports/torch_<profile>_port.py) through vectors/drivers/torch_driver.py in
neutral and raw mode; then over the `Bf16Noise` step cases (those with `muonSv`, the
`NormOverflow` ones left out) the worst |c_k - 1| beyond the rounding allowance over the candidate
orders of vectors/judge/judge.c compare_sv (c_k = <s, s_k> / ||s_k||^2, s the singular values of
got - without as the matrix (d0, numel / d0); candidates: the orders whose residual
||s - c_k s_k|| / ||s_k|| is within 0.001 of the smallest), and how many Muon parameters have a
rounding allowance below 0.006 of ||s_k|| (where a 1 % scale error must fail).  The fp32 profiles' ports (optax, keras) run fp32 and are judged in
fp32: not measured here.  Prints a markdown table.

With --scale: every profile's port with its Muon update 1.01 times its own
(tests/variants/torch_port_variant.py `PROFILE:scale:1.01`), neutral; prints per profile the step cases
whose result the scale changes (those with a nonzero Muon update), how many fail, and those that
pass.  Standard library and torch only;
takes tens of minutes on a busy machine.
"""
import argparse
import glob
import json
import math
import os
import re
import struct
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'variants'))
from port_ns_names import ns_names  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PORTS = {}  # profile -> its test port's (FILE:CLASS, adapter, Newton-Schulz format), from the records


def read_ports(muonref):
    """Every record's test port (`muonref profile --test-ports`: NAME FILE:CLASS ADAPTER MODE NS_FORMAT
    CONSTRUCTOR) into PORTS."""
    p = run([muonref, 'profile', '--test-ports', '--records', os.path.join(SRC, 'spec', 'profiles')])
    if p.returncode:
        sys.exit(f'norm_noise.py: {muonref} profile --test-ports: {p.stderr.strip()}')
    for line in p.stdout.splitlines():
        name, port, adapter, _mode, ns_format = line.split()[:5]
        PORTS[name] = (port, adapter, ns_format)


def dec(t):
    h = bytes.fromhex(t['hex'])
    if t['dtype'] == 'bf16':
        return struct.unpack(f'>{len(h) // 2}f', b''.join(h[i:i + 2] + b'\0\0' for i in range(0, len(h), 2)))
    return struct.unpack(f'>{len(h) // 4}f', h)


def ulp32(x):
    x = abs(x)
    return 2.0 ** -149 if x < 2.0 ** -126 else 2.0 ** (math.frexp(x)[1] - 24)


def run(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def driver(args, profile, out, mode, variant=None):
    env = dict(os.environ)
    port, adapter, ns_format = PORTS[profile]
    port = f'{SRC}/{port}'
    if variant:
        env['MUONREF_PORT_VARIANT'] = variant
        port = f"{SRC}/tests/variants/torch_port_variant.py:{port.rsplit(':', 1)[1]}"
    cmd = ['/usr/bin/python3', f'{SRC}/vectors/drivers/torch_driver.py', '-q', '--mode', mode, '--optimizer', port,
           '--adapter', adapter, '--ns-format', ns_format, '--out', out,
           os.path.join(args.vectors, profile)]
    p = run(cmd, env)
    if p.returncode:
        sys.exit(f'norm_noise.py: the driver failed on {profile}: {p.stderr[-500:]}')


def svals(values, shape):
    m = torch.tensor(values, dtype=torch.float64).reshape(shape[0], -1)
    return torch.linalg.svdvals(m).tolist()


def allowance(t, i):
    """The Frobenius norm of parameter i's elementwise rounding allowances (bf16 tolerance)."""
    tol = t['tolerance']['bf16']
    return math.sqrt(sum((tol['atol'][i] + tol['maxUlp'] * ulp32(x)) ** 2 for x in dec(t['expected']['params'][i])))


def scale_deviation(t, i, s, margin=0.001):
    """min over the candidate orders of |c_k - 1| beyond the rounding allowance (judge.c compare_sv)."""
    fits = []
    for sk in t['muonSv']['bf16'].values():
        sk = sk[i]
        nn = sum(y * y for y in sk)
        c = sum(x * y for x, y in zip(s, sk)) / nn
        fits.append((math.sqrt(sum((x - c * y) ** 2 for x, y in zip(s, sk))) / math.sqrt(nn), c, math.sqrt(nn)))
    best = min(f[0] for f in fits)
    e = allowance(t, i)
    return min(max(0.0, abs(c - 1) - e / n) for r, c, n in fits if r <= best + margin)


def noise_cases(vecdir, profile):
    cases = {}
    for f in glob.glob(os.path.join(vecdir, profile, '*.json')):
        for g in json.load(open(f))['testGroups']:
            for t in g['tests']:
                if 'muonSv' in t and 'NormOverflow' not in t['flags']:
                    cases[(os.path.basename(f), t['tcId'])] = t
    return cases


def case_label(fname, tc):
    """`AREA #TCID` of a case of file PROFILE_AREA.json (a profile's name may hold '_')."""
    prof = max((q for q in PORTS if fname.startswith(q + '_')), key=len, default=fname.split('_', 1)[0])
    return f"{fname[len(prof) + 1:-5]} #{tc}"


def worst(cases, results):
    w, at = 0.0, ''
    for e in json.load(open(results))['results']:
        t = cases.get((e['file'], e['tcId']))
        if not t or 'params' not in e:
            continue
        for i, wt in enumerate(t['muonSv']['without']):
            if not wt:
                continue
            wv, gv = dec(wt), dec(e['params'][i])
            if len(wv) != len(gv):
                continue
            d = scale_deviation(t, i, svals([a - b for a, b in zip(gv, wv)], wt['shape']))
            if d > w:
                w, at = d, case_label(e['file'], e['tcId'])
    return f'{w:.4f} ({at})' if at else '0'


def tight(cases):
    n = k = 0
    for t in cases.values():
        for i, wt in enumerate(t['muonSv']['without']):
            if wt:
                slack = allowance(t, i)
                n += 1
                k += slack < 0.006 * min(math.sqrt(sum(y * y for y in a[i])) for a in t['muonSv']['bf16'].values())
    return k, n


def step_results(path):
    """(file, tcId) -> params of every step result in a results file."""
    return {(e['file'], e['tcId']): e['params'] for e in json.load(open(path))['results'] if 'params' in e}


VARIANT_NS = set(ns_names())  # the profiles tests/variants/torch_port_variant.py can scale


def noise_row(args, p):
    """The first table's row of profile p."""
    w = os.path.join(args.work, p)
    cases = noise_cases(args.vectors, p)
    run([args.muonref, 'check', '-q', '--impl', 'fast-bf16', '--write-results', f'{w}-fast.json',
         os.path.join(args.vectors, p)])
    cols = [worst(cases, f'{w}-fast.json')]
    for mode in ('neutral', 'raw'):
        if PORTS[p][2] == 'fp32':
            cols.append('–')
            continue
        driver(args, p, f'{w}-{mode}.json', mode)
        cols.append(worst(cases, f'{w}-{mode}.json'))
    k, n = tight(cases)
    return f'| {p} | {n} | ' + ' | '.join(cols) + f' | {k} of {n} |'


def scale_row(args, p):
    """(step cases the scale changes, how many fail, the passing ones) of profile p, or None where
    tests/variants/torch_port_variant.py has no hook into the port's Newton-Schulz function."""
    if p not in VARIANT_NS:
        return None
    w = os.path.join(args.work, p)
    driver(args, p, f'{w}-neutral.json', 'neutral')
    driver(args, p, f'{w}-scale.json', 'neutral', f'{p}:scale:1.01')
    chk = run([args.muonref, 'check', '--no-diagnosis', '--results', f'{w}-scale.json', os.path.join(args.vectors, p)])
    failed = {(m.group(1), int(m.group(2))) for m in re.finditer(r'^FAIL (\S+) tcId (\d+)', chk.stdout, re.M)}
    own, scaled = step_results(f'{w}-neutral.json'), step_results(f'{w}-scale.json')
    cases = [k for k in scaled if own.get(k) != scaled[k]]
    passing = sorted((case_label(f, i) for f, i in cases if (f, i) not in failed),
                     key=lambda c: (c.split(' #')[0], int(c.split(' #')[1])))
    return len(cases), len(cases) - len(passing), passing


NOISE_HEAD = ('| profile | Muon parameters | fast bf16 | test port, neutral | test port, raw | allowance < 0.006 N |\n'
              '|---|---|---|---|---|---|')


def rescale_unit(args, p):
    """Whether profile p rescales its Muon update to unit norm (its record's moment2_rescale)."""
    r = run([args.muonref, 'profile', p, '--json'])
    return r.returncode == 0 and json.loads(r.stdout).get('defaults', {}).get('moment2_rescale') == 'unit'


def write_doc(args, profiles, path):
    """docs/scale-noise.md: both tables, with the command and the machine; written whole, then renamed."""
    import datetime
    import platform
    head = subprocess.run(['git', '-C', SRC, 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()
    cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
    flags = open('/proc/cpuinfo').read()
    isa = 'AVX-512 BF16' if 'avx512_bf16' in flags else 'AVX2' if 'avx2' in flags else 'no AVX2'
    out = ['# The scale check, measured (spec/vectors.md 5.1, `scaleRel`)', '',
           f'Written by `/usr/bin/python3 tests/scripts/norm_noise.py --write-doc {path}` on '
           f'{datetime.date.today().isoformat()} at commit {head or "?"} (PyTorch {torch.__version__}, '
           f'Python {platform.python_version()}, {cpu}, {isa}); do not edit by hand.', '',
           '## How far a correct implementation lies from the reference', '',
           'Per profile, over the `Bf16Noise` step cases with `muonSv` (not `NormOverflow`): the worst |c_k - 1|',
           'beyond the rounding allowance (spec/vectors.md 5.1), for the fast bf16 path and the profile\'s test port',
           'neutral and raw (fp32 ports: not measured), and how many Muon parameters have a rounding allowance',
           'below 0.006 of ||s_k||, where a 1 % scale error must fail.', '', NOISE_HEAD]
    out += [noise_row(args, p) for p in profiles]
    out += ['', '## A 1 % scale error', '',
            'Each test port with its Muon update 1.01 times its own (tests/variants/torch_port_variant.py',
            '`PROFILE:scale:1.01`), neutral: the step cases whose result the scale changes at all, how many fail,',
            'and the ones that pass.', '', '| profile | step cases the scale changes | fail | pass |', '|---|---|---|---|']
    for p in profiles:
        r = scale_row(args, p)
        out.append(f'| {p} | not measured: tests/variants/torch_port_variant.py has no hook into its Newton-Schulz function | | |'
                   if r is None else f"| {p} | {r[0]} | {r[1]} | {', '.join(r[2]) or '–'} |")
    unit = [p for p in profiles if rescale_unit(args, p)]
    if unit:
        out += ['', f"{', '.join(unit)}: the update is rescaled to unit Frobenius norm after the second moment",
                '(`moment2_rescale` unit, spec/muon.md 7.4), so a factor on the Newton-Schulz output cancels and',
                'no case can see it: its cases pass by design; a scale error of such a port lies in its lr or',
                'scale rule (the scaling cases).']
    tmp = f'{path}.tmp'
    with open(tmp, 'w') as f:
        f.write('\n'.join(out) + '\n')
    os.replace(tmp, path)
    print(f'{path}: {len(profiles)} profiles')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--muonref', default='./muonref')
    ap.add_argument('--vectors', default=os.path.join(SRC, 'vectors'))
    ap.add_argument('--work', default='/tmp/norm_noise')
    ap.add_argument('--profiles', default=None, help='default: every record with a test port')
    ap.add_argument('--scale', action='store_true')
    ap.add_argument('--write-doc', metavar='FILE', help='both measurements into FILE (docs/scale-noise.md)')
    args = ap.parse_args()
    read_ports(args.muonref)
    args.profiles = args.profiles or ','.join(PORTS)
    os.makedirs(args.work, exist_ok=True)
    profiles = [p for p in args.profiles.split(',') if p]
    if args.write_doc:
        return write_doc(args, profiles, args.write_doc)
    if not args.scale:
        print(NOISE_HEAD)
    for p in profiles:
        if not args.scale:
            print(noise_row(args, p), flush=True)
            continue
        r = scale_row(args, p)
        print(f'{p}: not measured (tests/variants/torch_port_variant.py has no hook into its Newton-Schulz function)' if r is None
              else f"{p}: {r[0]} step cases whose result the scale changes, {r[1]} fail"
              + (f"; pass: {', '.join(r[2])}" if r[2] else ''), flush=True)


if __name__ == '__main__':
    main()
