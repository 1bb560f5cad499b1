#!/usr/bin/python3
"""Writes tests/data/dev_vectors.json: a tiny hand-derived vector file (format v1).

For development of vectors/drivers/torch_driver.py only, before `muonref gen`
publishes the real vectors.  tcIds are unique in the file.  Every expected value is derived here by hand,
independently of any port:

* AdamW cases: betas (0.5, 0.5), lr * adam_lr_ratio = 0.5, eps 0, so the
  first step moves each element by exactly 0.5 against the sign of its
  gradient; the second step's closed form is 0.5 -+ 1/(2 sqrt 3).
* Newton-Schulz on X = x H with H a +-1 matrix of orthogonal rows of length
  n: X X^T = n x^2 I, so the whole bf16 iteration is a scalar recursion on x
  (spec/muon.md section 7 with bf16 rounding by bit manipulation below);
  every partial sum of the matrix products is exact, so the order of
  accumulation does not matter.
* The Muon step's update is -lr * NS(U) with U = G + beta G for a zero
  buffer; the zero-gradient step only decays: p * (1 - lr wd), exact here.

Standard library only.  Run: /usr/bin/python3 tests/data/make_dev_vectors.py
"""

import json
import math
import os
import struct


def f32(x):
    return struct.unpack('>f', struct.pack('>f', x))[0]


def bf16(x):
    """Round a binary32 value to bfloat16, nearest, ties to even (finite inputs)."""
    bits = struct.unpack('>I', struct.pack('>f', f32(x)))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack('>f', struct.pack('>I', bits))[0]


def ns_scalar(x_entry, n, steps, norm2):
    """The bf16 iteration on X = x H (rows of H: n entries +-1, orthogonal); returns x after `steps`."""
    a, b, c = f32(3.4445), f32(-4.775), f32(2.0315)
    x0 = bf16(x_entry)
    norm = bf16(f32(math.sqrt(norm2 * x0 * x0)))  # ||X||_F, X's m*n entries all +-x0
    d = bf16(f32(norm + f32(1e-7)))
    x = bf16(f32(x0 / d))
    for _ in range(steps):
        A = bf16(n * x * x)  # diagonal of X X^T; products and sums exact
        AA = bf16(A * A)
        B = bf16(bf16(f32(b * A)) + bf16(f32(c * AA)))
        BX = bf16(B * x)
        x = bf16(bf16(f32(a * x)) + BX)
    return x


def hexf32(values):
    return ''.join('%08x' % struct.unpack('>I', struct.pack('>f', v))[0] for v in values)


def t32(shape, values):
    return {'dtype': 'f32', 'shape': shape, 'hex': hexf32(values)}


def tbf16(shape, values):
    return {'dtype': 'bf16', 'shape': shape,
            'hex': ''.join('%04x' % (struct.unpack('>I', struct.pack('>f', v))[0] >> 16) for v in values)}


def options(**kw):
    o = {'lr': 1.0, 'momentum': 0.5, 'nesterov': True, 'ns_steps': 5, 'weight_decay': 0.0,
         'scale_mode': 'fan_in', 'adam_betas': [0.5, 0.5], 'adam_eps': 0.0, 'adam_lr_ratio': 0.5,
         'adam_dim_threshold': 8192, 'use_muon': None}
    o.update(kw)
    return o


BITWISE = {'kind': 'bitwise'}
ULP8 = {'kind': 'elementwise', 'maxUlp': 8, 'atol': [0.0]}

H24 = [1, 1, 1, 1, 1, -1, 1, -1]  # (2, 4), orthogonal rows of length 4
H2 = [1, 1, 1, -1]                 # (2, 2)


def main():
    tests = []
    # ---- step cases
    tests_step = []
    tests_step.append({
        'tcId': 1, 'comment': 'AdamW on a bias: the first step moves each element by 0.5', 'flags': [],
        'result': 'valid', 'groups': [{'options': options(), 'params': [0]}],
        'params': [{'name': 'bias', 'init': t32([2], [1.0, -2.0])}],
        'steps': [{'grads': [t32([2], [2.0, -4.0])]}],
        'expected': {'params': [t32([2], [0.5, -1.5])],
                     'state': [{'step': 1, 'exp_avg': t32([2], [1.0, -2.0]), 'exp_avg_sq': t32([2], [2.0, 8.0])}]},
        'tolerance': {'fp32': ULP8, 'bf16': ULP8}})
    s = 1 / (2 * math.sqrt(3))
    tests_step.append({
        'tcId': 2, 'comment': 'AdamW, two steps with a state round trip after the first', 'flags': ['RoundTrip'],
        'result': 'valid', 'groups': [{'options': options(), 'params': [0]}],
        'params': [{'name': 'bias', 'init': t32([2], [1.0, -2.0])}],
        'steps': [{'grads': [t32([2], [2.0, -4.0])]}, {'grads': [t32([2], [0.0, 0.0])]}],
        'roundTripAfter': 1,
        'expected': {'params': [t32([2], [0.5 - s, -1.5 + s])],
                     'state': [{'step': 2, 'exp_avg': t32([2], [0.5, -1.0]), 'exp_avg_sq': t32([2], [1.0, 4.0])}]},
        'tolerance': {'fp32': ULP8, 'bf16': ULP8}})
    tests_step.append({
        'tcId': 3, 'comment': 'Muon, zero gradient: only the decay 1 - lr wd = 0.75 acts', 'flags': ['WeightDecay'],
        'result': 'valid', 'groups': [{'options': options(lr=0.5, weight_decay=0.5), 'params': [0]}],
        'params': [{'name': 'hidden', 'init': t32([2, 2], [1.0, 2.0, 3.0, 4.0])}],
        'steps': [{'grads': [t32([2, 2], [0.0] * 4)]}],
        'expected': {'params': [t32([2, 2], [0.75, 1.5, 2.25, 3.0])],
                     'state': [{'step': 1, 'momentum_buffer': t32([2, 2], [0.0] * 4)}]},
        'tolerance': {'fp32': BITWISE, 'bf16': BITWISE}})
    tests_step.append({
        'tcId': 12, 'comment': 'Muon, tall 4x2 matrix (fan_in scale sqrt 2), zero gradient: decay 1 - lr wd, unscaled',
        'flags': ['WeightDecay'],
        'result': 'valid', 'groups': [{'options': options(lr=0.5, weight_decay=0.5), 'params': [0]}],
        'params': [{'name': 'tall', 'init': t32([4, 2], [1.0, 2.0, 3.0, 4.0, -1.0, -2.0, -3.0, -4.0])}],
        'steps': [{'grads': [t32([4, 2], [0.0] * 8)]}],
        'expected': {'params': [t32([4, 2], [0.75, 1.5, 2.25, 3.0, -0.75, -1.5, -2.25, -3.0])],
                     'state': [{'step': 1, 'momentum_buffer': t32([4, 2], [0.0] * 8)}]},
        'tolerance': {'fp32': BITWISE, 'bf16': BITWISE}})
    x = ns_scalar(1.5, 2, 5, 4)  # U = 1.5 H2: entries 1.5, ||U||^2 = 4 * 1.5^2
    tests_step.append({
        'tcId': 4, 'comment': 'Muon, G = H2, beta 0.5, Nesterov: U = 1.5 G, p = -lr NS(U)', 'flags': ['Nesterov'],
        'result': 'valid', 'groups': [{'options': options(lr=0.5), 'params': [0, 1]}],
        'params': [{'name': 'hidden', 'init': t32([2, 2], [0.0] * 4)},
                   {'name': 'unused', 'init': t32([3], [1.0, 2.0, 3.0])}],
        'steps': [{'grads': [t32([2, 2], H2), None]}],
        'expected': {'params': [t32([2, 2], [-0.5 * x * h for h in H2]), t32([3], [1.0, 2.0, 3.0])],
                     'state': [{'step': 1, 'momentum_buffer': t32([2, 2], H2)}, None]},
        'expectedBf16': {'params': [t32([2, 2], [-0.5 * x * h for h in H2]), t32([3], [1.0, 2.0, 3.0])],
                         'state': [{'step': 1, 'momentum_buffer': t32([2, 2], H2)}, None]},
        'tolerance': {'fp32': ULP8, 'bf16': ULP8}})
    # ---- ns and transpose
    y = ns_scalar(1.0, 4, 5, 8)
    ns_case = {'tcId': 5, 'comment': 'X = H (2x4, orthogonal rows): a scalar recursion', 'flags': [],
               'result': 'valid', 'input': t32([2, 4], H24), 'nsSteps': 5,
               'expected': {'bf16': tbf16([2, 4], [y * h for h in H24])},
               'tolerance': {'fp32': {'kind': 'relative', 'max': 0.1}, 'bf16': BITWISE}}
    HT = [H24[r * 4 + c] for c in range(4) for r in range(2)]
    tr_case = {'tcId': 6, 'comment': 'H^T (4x2) and its transpose', 'flags': [], 'result': 'valid',
               'input': t32([4, 2], HT), 'nsSteps': 5,
               'expected': {'bf16': tbf16([4, 2], [y * h for h in HT])},
               'tolerance': {'fp32': {'kind': 'relative', 'max': 0.1}, 'bf16': BITWISE}}
    # ---- errors
    def err(tc, comment, opts, params, steps, message, status, result='invalid'):
        return {'tcId': tc, 'comment': comment, 'flags': [], 'result': result,
                'groups': [{'options': opts, 'params': list(range(len(params)))}],
                'params': params, 'steps': steps,
                'expected': {'error': {'status': status, 'message': message}}}
    m22 = {'name': 'hidden', 'init': t32([2, 2], [1.0] * 4)}
    errors = [
        err(7, 'negative lr', options(lr=-1), [m22], [], 'Invalid learning rate: -1.0', 'EOPTION'),
        err(8, 'NaN gradient element', options(), [m22], [{'grads': [t32([2, 2], [0.0, math.nan, 0.0, 0.0])]}],
            'Non-finite gradient for parameter 0: element 1 is nan', 'ENONFINITE'),
        err(9, 'use_muon=True on a vector', options(use_muon=True), [{'name': 'b', 'init': t32([3], [0.0] * 3)}],
            [], 'use_muon=True needs at least two dimensions, got shape (3,)', 'ESHAPE'),
        err(10, 'lr = nan: NeMo accepts, muonref refuses', options(lr='nan'), [m22], [],
            'Invalid learning rate: nan', 'EOPTION', result='acceptable'),
        err(11, 'unknown scale_mode', options(scale_mode='rows'), [m22], [],
            "Unknown scale_mode 'rows', expected one of ('fan_in', 'fan_out', 'none')", 'EOPTION'),
    ]
    doc = {'schema': 'muonref-vectors-v1', 'formatVersion': 1,
           'generator': {'name': 'tests/data/make_dev_vectors.py', 'version': '0',
                         'reference': 'derived by hand (see the script), for driver development only', 'seed': 0},
           'profile': 'nemo', 'area': 'dev',
           'numberOfTests': len(tests_step) + 2 + len(errors),
           'header': ['Hand-derived cases for developing tests/scripts/torch-driver.sh; not golden vectors.'],
           'notes': {'RoundTrip': 'state exported and imported after a step', 'Nesterov': 'Nesterov form',
                     'WeightDecay': 'decoupled weight decay'},
           'testGroups': [{'kind': 'step', 'tests': tests_step}, {'kind': 'ns', 'tests': [ns_case]},
                          {'kind': 'transpose', 'tests': [tr_case]}, {'kind': 'error', 'tests': errors}]}
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'dev_vectors.json')
    with open(out, 'w') as f:
        json.dump(doc, f, indent=1)
        f.write('\n')
    print(out, 'x(step case) =', x, 'y(ns case) =', y)


if __name__ == '__main__':
    main()
