#!/usr/bin/python3
"""Unit checks of vectors/drivers/results_writer.py (standard library only; tests/scripts/results-writer.sh).

Exit 0 when every check passes, 1 with the failing checks listed."""
import json
import math
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'vectors', 'drivers'))
import results_writer as rw  # noqa: E402

failures = []


def check(name, cond):
    if not cond:
        failures.append(name)


def f32hex(*xs):
    return ''.join(struct.pack('>f', x).hex() for x in xs)


# tensor codec: bit for bit, NaN payload, -0, infinities
src = {'dtype': 'f32', 'shape': [2, 2], 'hex': '7fc12345' + '80000000' + '7f800000' + '3f800000'}
t = rw.decode_tensor(src, 'src')
check('decode shape', t.shape == (2, 2))
check('decode -0', t.values[1] == 0.0 and math.copysign(1, t.values[1]) < 0)
check('decode inf', t.values[2] == math.inf)
check('encode keeps NaN payload', rw.encode_tensor(t) == src)
check('tolist', t.tolist()[1] == [math.inf, 1.0])
check('transpose', t.transpose().values[1:3] == [math.inf, t.values[1]] and t.transpose().shape == (2, 2))

# values from nested lists and 0-dim values are written as f32
check('nested f32', rw.encode_tensor([[1.0, -2.5]]) == {'dtype': 'f32', 'shape': [1, 2], 'hex': f32hex(1.0, -2.5)})
check('scalar', rw.encode_tensor(0.5) == {'dtype': 'f32', 'shape': [], 'hex': f32hex(0.5)})
check('f64 rounds to f32', rw.encode_tensor([0.1])['hex'] == f32hex(0.1))
check('overflow to inf', rw.encode_tensor([1e39])['hex'] == '7f800000')


class HasToList:
    def tolist(self):
        return [[3.0], [4.0]]


check('tolist object', rw.encode_tensor(HasToList())['shape'] == [2, 1])
try:
    rw.encode_tensor([[1.0], [2.0, 3.0]])
    check('ragged refused', False)
except ValueError:
    pass

# bf16 tensors: round to nearest even, NaN stays NaN, overflow to infinity
bf = rw.Tensor('bf16', (5,), [1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -9, -(1.0 + 2.0 ** -7), math.nan, 3.4e38])
check('bf16 rounding', rw.encode_tensor(bf)['hex'] == '3f80' + '3f81' + 'bf81' + '7fc0' + '7f80')
check('bf16 decode', rw.decode_tensor({'dtype': 'bf16', 'shape': [1], 'hex': '3f81'}, 'x').values == [1.0078125])

# markings
check('c64 marking', rw.decode_tensor({'dtype': 'c64', 'shape': [2]}, 'g').dtype == 'c64')
check('sparse marking', rw.decode_tensor({'dtype': 'f32', 'shape': [1], 'hex': f32hex(1.0), 'layout': 'sparse'},
                                         'g').layout == 'sparse')

# options: the same reading as adapters.canonical
o = rw.canonical_options({'lr': 'nan', 'ns_steps': 5.0, 'adam_betas': [0.9, 1], 'scale_mode': 'rows', 'momentum': True})
check('options', math.isnan(o['lr']) and o['ns_steps'] == 5 and isinstance(o['ns_steps'], int)
      and o['adam_betas'] == (0.9, 1.0) and o['scale_mode'] == 'rows' and o['momentum'] is True)

# a whole run over a small hand-made file with a pure-Python "port": SGD p -= lr g,
# its "Newton-Schulz" doubles the input, it refuses lr < 0
T = lambda *xs: {'dtype': 'f32', 'shape': [len(xs)], 'hex': f32hex(*xs)}
doc = {'testGroups': [
    {'kind': 'step', 'tests': [
        {'tcId': 1, 'groups': [{'options': {'lr': 0.5}, 'params': [0, 1]}],
         'params': [{'name': 'w', 'init': T(1.0, 2.0)}, {'name': 'b', 'init': T(3.0)}],
         'steps': [{'grads': [T(1.0, 1.0), None]}, {'grads': [T(2.0, 0.0), None]}]},
        {'tcId': 2, 'groups': [{'options': {'lr': 0.5}, 'params': [0]}], 'params': [{'name': 'w', 'init': T(1.0)}],
         'steps': [{'grads': [T(1.0)]}, {'grads': [T(1.0)]}], 'roundTripAfter': 1}]},
    {'kind': 'ns', 'tests': [{'tcId': 3, 'input': {'dtype': 'f32', 'shape': [1, 2], 'hex': f32hex(1.0, 2.0)},
                              'nsSteps': 5}]},
    {'kind': 'transpose', 'tests': [{'tcId': 4, 'input': {'dtype': 'f32', 'shape': [1, 2], 'hex': f32hex(1.0, 2.0)},
                                     'nsSteps': 5}]},
    {'kind': 'error', 'tests': [
        {'tcId': 5, 'groups': [{'options': {'lr': -1.0}, 'params': [0]}], 'params': [{'name': 'w', 'init': T(1.0)}],
         'steps': [{'grads': [T(1.0)]}]}]},
]}


class SGD:
    def __init__(self):
        self.p, self.lr, self.count, self.seen = [], [], [], []

    def make_optimizer(self, groups):
        n = sum(len(g['params']) for g in groups)
        self.p, self.lr, self.count = [None] * n, [None] * n, [0] * n
        for g in groups:
            if g['options']['lr'] < 0:
                raise ValueError(f"Invalid learning rate: {g['options']['lr']}")
            for q in g['params']:
                self.p[q['index']] = list(q['init'].values)
                self.lr[q['index']] = g['options']['lr']
                self.seen.append(q['name'])

    def step(self, grads):
        for i, g in enumerate(grads):
            if g is not None:
                self.p[i] = [x - self.lr[i] * y for x, y in zip(self.p[i], g.values)]
                self.count[i] += 1

    def params(self):
        return [list(x) for x in self.p]

    def state(self):  # extra keys are ignored; a missing step is counted by the writer
        return [{'momentum_buffer': [0.0] * len(x), 'use_muon': True} if c else None
                for x, c in zip(self.p, self.count)]

    def newton_schulz(self, x, steps):
        return rw.Tensor.from_nested([[2 * v for v in row] for row in x.tolist()])


port = SGD()
res = {r['tcId']: r for r in rw.run_vectors([('unit.json', doc)], make_optimizer=port.make_optimizer, step=port.step,
                                              params=port.params, state=port.state,
                                              newton_schulz=port.newton_schulz)}
check('step params', res[1]['params'] == [T(-0.5, 1.5), T(3.0)])
check('state: missing step filled, no state is null',
      res[1]['state'] == [{'momentum_buffer': T(0.0, 0.0), 'step': 2}, None])
check('names given', 'w' in port.seen and 'b' in port.seen)
check('round trip skipped without callbacks', 'export_state' in res[2].get('skipped', ''))
check('ns', res[3]['output'] == {'dtype': 'f32', 'shape': [1, 2], 'hex': f32hex(2.0, 4.0)})
check('transpose', res[4]['outputT'] == {'dtype': 'f32', 'shape': [2, 1], 'hex': f32hex(2.0, 4.0)})
check('adamw state, step counted', rw._state_entry({'exp_avg': [1.0], 'exp_avg_sq': [2.0]}, 3)
      == {'step': 3, 'exp_avg': T(1.0), 'exp_avg_sq': T(2.0)})
check('incomplete state is null', rw._state_entry({'exp_avg': [1.0]}, 3) is None)
check('error message', res[5] == {'file': 'unit.json', 'tcId': 5, 'error': 'Invalid learning rate: -1.0'})

# round trip with callbacks: the state travels, params are re-read
saved = []
res = {r['tcId']: r for r in rw.run_vectors([('unit.json', doc)], make_optimizer=port.make_optimizer, step=port.step,
                                              params=port.params, export_state=lambda: saved.append(1) or 'S',
                                              import_state=lambda s: saved.append(s))}
check('round trip run', res[2]['params'] == [T(0.0)] and saved == [1, 'S'])
check('no ns callback: skipped', 'newton_schulz' in res[3].get('skipped', ''))
check('no state callback: no state', 'state' not in res[1])

# steps that set options (format 2): the callback gets the group index and the changed options
sched = [('unit.json', {'testGroups': [{'kind': 'step', 'tests': [
    {'tcId': 6, 'groups': [{'options': {'lr': 0.5}, 'params': [0]}, {'options': {'lr': 0.25}, 'params': [1]}],
     'params': [{'name': 'w', 'init': T(1.0)}, {'name': 'b', 'init': T(1.0)}],
     'steps': [{'grads': [T(1.0), T(1.0)]},
               {'grads': [T(1.0), T(1.0)], 'setOptions': [{}, {'lr': '-inf'}]},
               {'grads': [T(1.0), T(1.0)], 'setOptions': [{'lr': 1}, {}]}]}]}]})]
calls = []


def set_lr(index, options):
    calls.append((index, options))
    for q, g in enumerate((0, 1)):
        if g == index:
            port.lr[q] = options['lr']


res = {r['tcId']: r for r in rw.run_vectors(sched, make_optimizer=port.make_optimizer, step=port.step,
                                              params=port.params, set_options=set_lr)}
check('set_options: called per changed group, options read', calls == [(1, {'lr': -math.inf}), (0, {'lr': 1.0})])
check('set_options: later steps use them', res[6]['params'][0] == T(-1.0))  # 1 - 0.5 - 0.5 - 1
res = {r['tcId']: r for r in rw.run_vectors(sched, make_optimizer=port.make_optimizer, step=port.step,
                                              params=port.params)}
check('set_options missing: skipped with the reason', 'set_options callback' in res[6].get('skipped', ''))

# write_results and the command line refuse what they cannot use
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, 'v.json')
    with open(path, 'w') as f:
        json.dump(doc, f)
    counts = rw.write_results(os.path.join(d, 'r.json'), [d], make_optimizer=port.make_optimizer, step=port.step,
                              params=port.params, implementation='unit', ns_format='fp32')
    out = json.load(open(os.path.join(d, 'r.json')))
    check('write_results', counts == {'run': 2, 'skipped': 3} and out['nsFormat'] == 'fp32'
          and out['implementation'] == 'unit' and len(out['results']) == 5)
    for bad in ([os.path.join(d, 'missing')], [d + '/r.json']):
        try:
            rw.write_results(os.path.join(d, 'x.json'), bad, make_optimizer=port.make_optimizer, step=port.step,
                             params=port.params)
            check(f'refused {bad}', False)
        except rw.UsageError:
            pass
    try:
        rw.write_results(os.path.join(d, 'x.json'), [path], make_optimizer=port.make_optimizer, step=port.step)
        check('params callback required', False)
    except TypeError:
        pass
    check('usage exit 2', rw.main([]) == 2)

for name in failures:
    print(f"FAIL: results_writer: {name}")
print(f"results_writer_unit.py: {len(failures)} failed")
sys.exit(1 if failures else 0)
