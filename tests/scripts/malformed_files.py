"""Malformed vector and results files: each must exit 2 with a message that
names the file, the case and the rule (see tests/scripts/malformed-files.sh).

Usage: malformed_files.py SRCDIR MUONREF.  Standard library only."""
import copy
import json
import os
import re
import shutil
import subprocess
import struct
import sys
import tempfile

src, muonref = sys.argv[1], sys.argv[2]
repro = os.path.join(src, 'tests', 'data', 'repro')
vec = os.path.join(src, 'vectors', 'nemo')
checks = fails = 0


def check(name, ok, detail=''):
    global checks, fails
    checks += 1
    if not ok:
        fails += 1
        print(f"malformed-files:0:F:malformed:{name}:0: {detail}")


def run(args):
    p = subprocess.run([muonref, 'check', '--quiet'] + args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stderr


def expect2(name, args, *fragments):
    """muonref check ARGS exits 2 and its message holds every fragment."""
    rc, err = run(args)
    missing = [f for f in fragments if f not in err]
    check(name, rc == 2 and not missing, f"exit {rc}, message {err.strip()!r}, missing {missing}")


# ---- the reproducers of issue 16, as they were reported (their unknown profile
# was 'keller', which is a profile now: the copies in tests/data/repro name
# 'no_such_port' instead)
for impl in ('fast-fp32', 'fast-bf16'):
    expect2(f'repro_ns_f64_input_{impl}', ['--impl', impl, f'{repro}/ns_f64_input.json'],
            'ns_f64_input.json', 'tcId 3', 'input: dtype "f64" is not allowed')
    expect2(f'repro_ns_unknown_profile_{impl}', ['--impl', impl, f'{repro}/ns_unknown_profile.json'],
            'ns_unknown_profile.json', "Unknown profile 'no_such_port'")
    expect2(f'repro_step_unknown_profile_{impl}', ['--impl', impl, f'{repro}/step_unknown_profile.json'],
            'step_unknown_profile.json', "Unknown profile 'no_such_port'")
    expect2(f'repro_err_no_expected_error_{impl}', ['--impl', impl, f'{repro}/err_no_expected_error.json'],
            'err_no_expected_error.json', 'tcId 1', 'expected.error must be an object')
# an f64 Newton-Schulz result is a port's own precision (a port iterating in
# float64), not malformed input: the reproducer's case is judged by its values
# (tests/eval: moonlight-fp64-ns made the whole file exit 2)
rc, err = run(['--results', f'{repro}/res_transpose_f64.json', f'{vec}/nemo_transpose.json'])
check('repro_res_transpose_f64_judged', rc in (0, 1) and 'not allowed' not in err, f'exit {rc}, message {err.strip()!r}')


def load(name):
    with open(os.path.join(vec, name)) as f:
        return json.load(f)


def first(doc, kind):
    for g in doc['testGroups']:
        if g['kind'] == kind:
            return g['tests'][0]
    raise KeyError(kind)


tmp = tempfile.mkdtemp()


def mutant(name, base, mutate, *fragments, raw=None):
    """Writes a mutated copy of vector file `base`, expects exit 2 with the fragments."""
    doc = copy.deepcopy(load(base))
    path = os.path.join(tmp, base)
    if raw is None:
        mutate(doc)
        text = json.dumps(doc)
    else:
        text = raw(json.dumps(doc))
    with open(path, 'w') as f:
        f.write(text)
    for impl in ('fast-fp32', 'fast-bf16'):
        expect2(f'{name}_{impl}', ['--impl', impl, path], base, *fragments)
    os.remove(path)


def setp(path_fn, value):
    def m(doc):
        path_fn(doc, value)
    return m


step_file, ns_file, err_file, tr_file = 'nemo_momentum.json', 'nemo_newton_schulz.json', 'nemo_errors.json', \
    'nemo_transpose.json'
muon_step = None
for g in load(step_file)['testGroups']:
    for i, t in enumerate(g['tests']):
        if t['expected']['state'][0] and 'momentum_buffer' in t['expected']['state'][0] and 'expectedBf16' in t:
            muon_step = i
            break
    break
assert muon_step is not None


def st(doc):
    return doc['testGroups'][0]['tests'][muon_step]


tc = f"tcId {load(step_file)['testGroups'][0]['tests'][muon_step]['tcId']}"

# duplicate JSON keys, anywhere
mutant('duplicate_key_top', step_file, None, 'duplicate', raw=lambda s: s.replace('"area":', '"area": "x", "area":', 1))
mutant('duplicate_key_in_tensor', step_file, None, 'duplicate',
       raw=lambda s: s.replace('"dtype": "f32"', '"dtype": "f32", "dtype": "f32"', 1))
# header
mutant('unknown_profile', step_file, lambda d: d.update(profile='no_such_port'), "Unknown profile 'no_such_port'")
mutant('number_of_tests', step_file, lambda d: d.update(numberOfTests=d['numberOfTests'] + 1), 'numberOfTests')
mutant('unknown_top_member', step_file, lambda d: d.update(extra=1), 'unknown member "extra"')
mutant('format_version_real', step_file, lambda d: d.update(formatVersion=1.0), 'formatVersion')
mutant('unknown_kind', step_file, lambda d: d['testGroups'][0].update(kind='steps'), 'testGroups[0]', '"kind"')
# tcId
mutant('tcid_over_int', step_file, lambda d: st(d).update(tcId=2 ** 40), 'tcId', 'from 1 to 2147483647')
mutant('tcid_negative', step_file, lambda d: st(d).update(tcId=-3), 'tcId', 'from 1 to 2147483647')
mutant('result_wrong', step_file, lambda d: st(d).update(result='invalid'), tc, '"result"')
# parameters and groups
mutant('param_index_out_of_range', step_file, lambda d: st(d)['groups'][0]['params'].append(7), tc,
       'parameter index')
mutant('param_index_twice', step_file, lambda d: st(d)['groups'][0]['params'].__setitem__(0, 0) or
       st(d)['groups'][0]['params'].append(0), tc, 'listed twice')
mutant('param_index_negative', step_file, lambda d: st(d)['groups'][0]['params'].__setitem__(0, -1), tc,
       'parameter index')
mutant('option_wrong_type', step_file, lambda d: st(d)['groups'][0]['options'].update(nesterov=1), tc,
       'option "nesterov" must be true or false')
mutant('option_out_of_range', step_file, lambda d: st(d)['groups'][0]['options'].update(momentum=1.5), tc,
       'valid options', 'Invalid momentum: 1.5')
mutant('ns_steps_over_int', step_file, lambda d: st(d)['groups'][0]['options'].update(ns_steps=2 ** 40), tc,
       'option "ns_steps" must be an integer that fits a C int')
mutant('unknown_option', step_file, lambda d: st(d)['groups'][0]['options'].update(foo=1), tc,
       'unknown option "foo"')
mutant('grads_count', step_file, lambda d: st(d)['steps'][0]['grads'].append(None), tc, 'steps[0].grads',
       'one per parameter')
mutant('grad_shape', step_file, lambda d: st(d)['steps'][0]['grads'][0].update(
    shape=list(reversed(st(d)['steps'][0]['grads'][0]['shape']))) if len(set(st(d)['steps'][0]['grads'][0]['shape'])) > 1
    else st(d)['steps'][0]['grads'][0].update(shape=[1] + st(d)['steps'][0]['grads'][0]['shape']), tc,
    'steps[0].grads[0]')
mutant('grad_f64', step_file, lambda d: st(d)['steps'][0]['grads'][0].update(
    dtype='f64', hex=st(d)['steps'][0]['grads'][0]['hex'] * 2), tc, 'dtype "f64" is not allowed')
mutant('round_trip_range', step_file, lambda d: st(d).update(roundTripAfter=len(st(d)['steps'])), tc,
       'roundTripAfter')
# every tensor of every tier
mutant('expected_missing', step_file, lambda d: st(d).pop('expected'), tc, '"expected"')
mutant('expected_params_count', step_file, lambda d: st(d)['expected']['params'].pop(), tc, 'expected.params')
mutant('expected_bf16_bad_hex', step_file, lambda d: st(d)['expectedBf16']['params'][0].update(
    hex='zz' + st(d)['expectedBf16']['params'][0]['hex'][2:]), tc, 'expectedBf16.params[0]', "'z'")
mutant('expected_bf16_state_shape', step_file, lambda d: st(d)['expectedBf16']['state'][0]['momentum_buffer'].update(
    shape=[1]), tc, 'expectedBf16.state[0].momentum_buffer')
mutant('state_step_zero', step_file, lambda d: st(d)['expected']['state'][0].update(step=0), tc,
       'expected.state[0].step')
mutant('state_mixed_buffers', step_file, lambda d: st(d)['expected']['state'][0].update(
    exp_avg=st(d)['expected']['state'][0]['momentum_buffer']), tc, 'unknown member "exp_avg"')
mutant('tolerance_missing_bf16', step_file, lambda d: st(d)['tolerance'].pop('bf16'), tc, 'tolerance.bf16')
mutant('tolerance_atol_count', step_file, lambda d: st(d)['tolerance']['fp32']['atol'].append(0.0), tc,
       'tolerance.fp32.atol')
mutant('tolerance_negative_ulp', step_file, lambda d: st(d)['tolerance']['fp32'].update(maxUlp=-1), tc,
       'tolerance.fp32.maxUlp')
mutant('tolerance_unknown_kind', step_file, lambda d: st(d)['tolerance']['fp32'].update(kind='ulp'), tc,
       'tolerance.fp32.kind')
# ns and transpose tests
mutant('ns_input_f64', ns_file, lambda d: first(d, 'ns').update(
    input=dict(first(d, 'ns')['input'], dtype='f64', hex=first(d, 'ns')['input']['hex'] * 2)), 'tcId 1',
    'input: dtype "f64"')
mutant('ns_exact_missing', ns_file, lambda d: first(d, 'ns')['expected'].pop('exact'), 'tcId 1', 'expected.exact')
mutant('ns_polar_shape', ns_file, lambda d: first(d, 'ns')['expected']['polar'].update(shape=[1, 1], hex='00000000'),
       'tcId 1', 'expected.polar', 'the shape of input')
mutant('ns_steps_zero', ns_file, lambda d: first(d, 'ns').update(nsSteps=0), 'tcId 1', 'nsSteps')
mutant('ns_svband_inverted', ns_file, lambda d: first(d, 'ns')['tolerance'].update(
    bf16={'kind': 'svBand', 'lo': 2.0, 'hi': 1.0}), 'tcId 1', 'tolerance.bf16.hi')
mutant('ns_tolerance_foreign_member', ns_file, lambda d: first(d, 'ns')['tolerance'].update(
    fp32={'kind': 'relative', 'max': 1e-5, 'maxUlp': 3}), 'tcId 1', 'does not belong to kind')
mutant('transpose_square', tr_file, lambda d: first(d, 'transpose').update(
    input={'dtype': 'f32', 'shape': [1, 1], 'hex': '3f800000'}), 'tcId 1', 'non-square')
# error tests
mutant('error_status_unknown', err_file, lambda d: first(d, 'error')['expected']['error'].update(status='EWHAT'),
       'tcId 1', 'expected.error.status')
mutant('error_message_empty', err_file, lambda d: first(d, 'error')['expected']['error'].update(message=''),
       'tcId 1', 'expected.error.message')
mutant('error_result_valid', err_file, lambda d: first(d, 'error').update(result='valid'), 'tcId 1', '"result"')

# bf16 parameters (area dtypes, spec/vectors.md 2.1): a gradient has its parameter's dtype (a malformed
# file, exit 2); a parameter created bf16 that comes back f32 is the port's failure (exit 1, its case named)
dt_path = os.path.join(src, 'vectors', 'torch', 'torch_dtypes.json')


def dt_doc():
    with open(dt_path) as f:
        return json.load(f)


def f32_grad(doc):
    g = doc['testGroups'][0]['tests'][0]['steps'][0]['grads'][0]
    g.update(dtype='f32', hex=''.join(g['hex'][k:k + 4] + '0000' for k in range(0, len(g['hex']), 4)))


_d = dt_doc()
f32_grad(_d)
with open(os.path.join(tmp, 'torch_dtypes.json'), 'w') as f:
    json.dump(_d, f)
for impl in ('fast-fp32', 'fast-bf16'):
    expect2(f'bf16_param_f32_grad_{impl}', ['--impl', impl, os.path.join(tmp, 'torch_dtypes.json')],
            'torch_dtypes.json', 'tcId 1', 'steps[0].grads[0]', 'expected "bf16" (the dtype of params[0].init)')
os.remove(os.path.join(tmp, 'torch_dtypes.json'))
_t = dt_doc()['testGroups'][0]['tests'][0]
_e = _t['expected']
_p32 = [dict(q, dtype='f32', hex=''.join(q['hex'][k:k + 8] for k in range(0, len(q['hex']), 8))) for q in _e['params']]
_res = {'implementation': 'test', 'nsFormat': 'bf16', 'results': [
    {'file': 'torch_dtypes.json', 'tcId': _t['tcId'], 'params': _p32, 'state': _e['state']}]}
with open(os.path.join(tmp, 'dt_results.json'), 'w') as f:
    json.dump(_res, f)
_p = subprocess.run([muonref, 'check', '--results', os.path.join(tmp, 'dt_results.json'), dt_path],
                    capture_output=True, text=True, timeout=300)
check('bf16_param_returned_f32_fails_its_case', _p.returncode == 1 and
      'params[0]: dtype f32, expected bf16' in _p.stdout, f'exit {_p.returncode}: {_p.stdout[-400:]} {_p.stderr[-300:]}')

# a checkpoint resumed in another dtype ("roundTripDtype", spec/vectors.md 2.1; torch_dtypes #4 f32 -> bf16,
# #5 bf16 -> f32): a bad value, one without roundTripAfter, one that changes nothing and a later gradient of the
# old dtype are malformed files (exit 2); a result in the old dtype is the port's failure (exit 1)
_rt = {t['tcId']: t for g in dt_doc()['testGroups'] for t in g['tests'] if 'roundTripDtype' in t}
_to_bf16 = next(i for i, t in _rt.items() if t['roundTripDtype'] == 'bf16')
_to_f32 = next(i for i, t in _rt.items() if t['roundTripDtype'] == 'f32')


def dt_case(doc, tc):
    return next(t for g in doc['testGroups'] for t in g['tests'] if t['tcId'] == tc)


def expect_edited(name, doc, fname, fragments):
    """Writes the edited vector file doc as tmp/fname and expects exit 2 with the fragments (fast-bf16)."""
    path = os.path.join(tmp, fname)
    with open(path, 'w') as f:
        json.dump(doc, f)
    expect2(name, ['--impl', 'fast-bf16', path], fname, *fragments)
    os.remove(path)


def bf16_grad_as_f32(g):
    g.update(dtype='f32', hex=''.join(g['hex'][k:k + 4] + '0000' for k in range(0, len(g['hex']), 4)))


for name, edit, fragments in [
        ('round_trip_dtype_fp16', lambda d: dt_case(d, _to_bf16).update(roundTripDtype='fp16'),
         ['"roundTripDtype" must be "bf16" or "f32"']),
        ('round_trip_dtype_without_round_trip', lambda d: dt_case(d, _to_bf16).pop('roundTripAfter'),
         ['"roundTripDtype" needs "roundTripAfter"']),
        ('round_trip_dtype_after_out_of_range', lambda d: dt_case(d, _to_bf16).update(roundTripAfter=0),
         ['"roundTripAfter" must be an integer from 1 to 2']),
        ('round_trip_dtype_unchanged', lambda d: dt_case(d, _to_f32).update(roundTripDtype='bf16'),
         ['params[0] is created bf16 already']),
        ('round_trip_dtype_old_grad', lambda d: bf16_grad_as_f32(dt_case(d, _to_bf16)['steps'][1]['grads'][0]),
         ['steps[1].grads[0]', 'expected "bf16" (the dtype of "roundTripDtype")'])]:
    _d = dt_doc()
    edit(_d)
    expect_edited(name, _d, 'torch_dtypes.json', fragments)

# master weights (spec/muon.md 10, paddle_dtypes' MasterWeights case): a "master" where the case has none, none
# where it has one, master_weights with a change of dtype: malformed files (exit 2)
pd_path = os.path.join(src, 'vectors', 'paddle', 'paddle_dtypes.json')


def pd_doc():
    with open(pd_path) as f:
        return json.load(f)


_mw = next(t['tcId'] for g in pd_doc()['testGroups'] for t in g['tests'] if 'MasterWeights' in t['flags'])
_f32 = next(t['tcId'] for g in pd_doc()['testGroups'] for t in g['tests']
            if t['params'][0]['init']['dtype'] == 'f32' and t['expected']['state'][0])  # resumed in bf16


def _add_master(t):
    t['expected']['state'][0]['master'] = copy.deepcopy(t['expected']['params'][0])


for name, edit, fragments in [
        ('master_on_f32_param', lambda d: _add_master(dt_case(d, _f32)),
         ['expected.state[0] has a "master": only a bf16 parameter under master_weights has one']),
        ('master_missing', lambda d: dt_case(d, _mw)['expected']['state'][0].pop('master'),
         ['expected.state[0] has no "master": params[0] is bf16 under master_weights']),
        ('master_without_master_weights',
         lambda d: dt_case(d, _mw)['groups'][0]['options'].update(multi_precision=False),
         ['expected.state[0] has a "master"']),
        ('master_weights_round_trip_dtype',
         lambda d: next(t for g in d['testGroups'] for t in g['tests'] if 'roundTripDtype' in t)['groups'][0][
             'options'].update(multi_precision=True),
         ['master_weights with "roundTripDtype"'])]:
    _d = pd_doc()
    edit(_d)
    expect_edited(name, _d, 'paddle_dtypes.json', fragments)

# Paddle's grad_clip (spec/muon.md 3.2): a bound that is 0 or infinite in float32 is not expressible (Paddle zeroes
# every gradient with 0, where muonref's 0 is no clipping), nor an unknown class: malformed files (exit 2)
pg_path = os.path.join(src, 'vectors', 'paddle', 'paddle_gradients.json')
with open(pg_path) as f:
    _pg = json.load(f)
_clip = next(t['tcId'] for g in _pg['testGroups'] for t in g['tests'] if 'PaddleClip' in t['flags'])
for name, value, fragments in [
        ('grad_clip_zero_norm', {'class': 'ClipGradByGlobalNorm', 'clip_norm': 0.0}, ['positive and finite in float32']),
        ('grad_clip_huge_norm', {'class': 'ClipGradByNorm', 'clip_norm': 1e300}, ['positive and finite in float32']),
        ('grad_clip_zero_value', {'class': 'ClipGradByValue', 'max': 0.0}, ['positive and finite in float32']),
        ('grad_clip_unknown_class', {'class': 'ClipGradByMagic', 'clip_norm': 1.0}, ['option "grad_clip" must be'])]:
    _d = copy.deepcopy(_pg)
    next(t for g in _d['testGroups'] for t in g['tests'] if t['tcId'] == _clip)['groups'][0]['options'][
        'grad_clip'] = value
    expect_edited(name, _d, 'paddle_gradients.json', fragments)


def as_dtype(q, dtype):
    """The expected f32 tensor q as a result of dtype 'f32' (itself) or 'bf16' (its values truncated)."""
    if dtype == 'f32':
        return q
    return dict(q, dtype='bf16', hex=''.join(q['hex'][k:k + 4] for k in range(0, len(q['hex']), 8)))


for rt_tc, got, want in [(_to_bf16, 'f32', 'bf16'), (_to_f32, 'bf16', 'f32')]:
    _t = dt_case(dt_doc(), rt_tc)
    _res = {'implementation': 'test', 'nsFormat': 'bf16', 'results': [
        {"file": "torch_dtypes.json", "tcId": rt_tc, "params": [as_dtype(q, got) for q in _t['expected']['params']],
         'state': _t['expected']['state']}]}
    with open(os.path.join(tmp, 'rt_results.json'), 'w') as f:
        json.dump(_res, f)
    _p = subprocess.run([muonref, 'check', '--results', os.path.join(tmp, 'rt_results.json'), dt_path],
                        capture_output=True, text=True, timeout=300)
    check(f'round_trip_dtype_result_{got}_fails_its_case', _p.returncode == 1 and
          f'params[0]: dtype {got}, expected {want} (the parameter was loaded at the state round trip as {want}'
          in _p.stdout and f'diagnosis: dtype: the port returned params[0] as {got}, where the case\'s model holds it in '
          f'{"bf16" if want == "bf16" else "float32"} after the round trip' in _p.stdout,
          f'exit {_p.returncode}: {_p.stdout[-600:]} {_p.stderr[-300:]}')

# overflow (spec/vectors.md 2.7): the norm-overflow alternative and "run"
ov_file = 'nemo_overflow.json'
_ov = {t['tcId']: t for g in load(ov_file)['testGroups'] for t in g['tests']}
ov_step = next(i for i, t in _ov.items() if 'expectedNormOverflow' in t)
ov_ns = next(i for i, t in _ov.items() if 'normOverflow' in t.get('expected', {}))
ov_err = next(i for i, t in _ov.items() if t.get('expected', {}).get('run'))


def ov(doc, tcid):
    return next(t for g in doc['testGroups'] for t in g['tests'] if t['tcId'] == tcid)


def _other_state(d):
    mb = ov(d, ov_step)['expectedNormOverflow']['state'][0]['momentum_buffer']
    mb['hex'] = '00000000' + mb['hex'][8:]


mutant('norm_overflow_state_differs', ov_file, _other_state, f'tcId {ov_step}',
       'expectedNormOverflow.state must equal expected.state')
mutant('norm_overflow_params_count', ov_file, lambda d: ov(d, ov_step)['expectedNormOverflow']['params'].pop(),
       f'tcId {ov_step}', 'expectedNormOverflow.params')
mutant('norm_overflow_ns_nonzero', ov_file, lambda d: ov(d, ov_ns)['expected']['normOverflow'].update(
    hex='3f800000' + ov(d, ov_ns)['expected']['normOverflow']['hex'][8:]), f'tcId {ov_ns}',
    'expected.normOverflow must be the zero matrix')
mutant('norm_overflow_ns_shape', ov_file, lambda d: ov(d, ov_ns)['expected']['normOverflow'].update(
    shape=[1, 1], hex='00000000'), f'tcId {ov_ns}', 'expected.normOverflow', 'the shape of input')
mutant('run_unknown_value', ov_file, lambda d: ov(d, ov_err)['expected'].update(run='finite'), f'tcId {ov_err}',
       'expected.run must be "nonFinite"')
mutant('run_on_invalid_case', ov_file, lambda d: ov(d, ov_err).update(result='invalid'), f'tcId {ov_err}',
       'expected.run belongs to an "acceptable"')


# format 2 (spec/vectors.md 2.8): steps that set options, and what they may set
sc_file = 'nemo_schedule.json'


def sc(doc):
    return doc['testGroups'][0]['tests'][0]


sc_tc = f"tcId {sc(load(sc_file))['tcId']}"
mutant('set_options_in_format_1', step_file, lambda d: st(d)['steps'][0].update(setOptions=[{'lr': 0.01}]), tc,
       'unknown member "setOptions"')
mutant('format_2_schema_v1', sc_file, lambda d: d.update(schema='muonref-vectors-v1'),
       'member "schema" must be "muonref-vectors-v2" (formatVersion 2)')
mutant('format_version_3', sc_file, lambda d: d.update(formatVersion=3), 'formatVersion" must be 1 or 2')
mutant('set_options_not_schedulable', sc_file, lambda d: sc(d)['steps'][0]['setOptions'][0].update(nesterov=False),
       sc_tc, 'steps[0].setOptions[0]', 'option "nesterov" cannot be changed between steps')
mutant('set_options_unknown_name', sc_file, lambda d: sc(d)['steps'][0]['setOptions'][0].update(wd=0.1),
       sc_tc, 'steps[0].setOptions[0]', 'unknown option "wd" (profile nemo)')
mutant('set_options_wrong_type', sc_file, lambda d: sc(d)['steps'][1]['setOptions'][0].update(lr='fast'),
       sc_tc, 'steps[1].setOptions[0]', 'option "lr" must be a number')
mutant('set_options_invalid_value', sc_file, lambda d: sc(d)['steps'][2]['setOptions'][0].update(momentum=1.5),
       sc_tc, 'steps[2].setOptions[0]', 'a "valid" test must run every step with valid options')
mutant('set_options_count', sc_file, lambda d: sc(d)['steps'][0]['setOptions'].append({}),
       sc_tc, 'steps[0].setOptions must be an array of 1 objects, one per group')
mutant('set_options_entry_null', sc_file, lambda d: sc(d)['steps'][0]['setOptions'].__setitem__(0, None),
       sc_tc, 'steps[0].setOptions[0] must be an object')
mutant('set_options_with_round_trip', sc_file, lambda d: sc(d).update(roundTripAfter=2),
       sc_tc, 'a test with "setOptions" has no "roundTripAfter"')

# ---- results files: validated completely before judging
def results(name, entries, *fragments, top=None):
    doc = {'implementation': 'test', 'nsFormat': 'fp32', 'results': entries}
    if top:
        doc.update(top)
    path = os.path.join(tmp, 'results.json')
    with open(path, 'w') as f:
        json.dump(doc, f)
    expect2(name, ['--results', path, f'{vec}/nemo_transpose.json'], 'results.json', *fragments)


out = first(load(tr_file), 'transpose')['expected']['exact']
outT = {'dtype': 'f32', 'shape': list(reversed(out['shape'])), 'hex': out['hex']}
results('results_ns_format', [], 'nsFormat', top={'nsFormat': 'fp16'})
results('results_unknown_member', [], 'unknown member "extra"', top={'extra': 1})
results('results_tcid_over_int', [{'file': 'nemo_transpose.json', 'tcId': 2 ** 40, 'output': out}], 'tcId')
results('results_two_outcomes', [{'file': 'nemo_transpose.json', 'tcId': 1, 'output': out, 'error': 'x'}],
        'nemo_transpose.json tcId 1', 'exactly one outcome')


def f64_pair(t, scale=1.0):
    """The f32 tensor t as an f64 output and its transpose as the f64 outputT, each value times scale."""
    r, c = t['shape']
    v = [struct.unpack('>f', bytes.fromhex(t['hex'][8 * k:8 * k + 8]))[0] * scale for k in range(r * c)]
    hexd = lambda xs: ''.join(struct.pack('>d', x).hex() for x in xs)
    return ({'dtype': 'f64', 'shape': [r, c], 'hex': hexd(v)},
            {'dtype': 'f64', 'shape': [c, r], 'hex': hexd(v[i * c + j] for j in range(c) for i in range(r))})


# an f64 output/outputT pair is judged by its values (fp32 tolerance): the exact
# result passes its case, twice it fails the case; neither is exit 2
for scale, want_fail in ((1.0, False), (2.0, True)):
    o64, oT64 = f64_pair(out, scale)
    path = os.path.join(tmp, 'f64.json')
    with open(path, 'w') as f:
        json.dump({'implementation': 'test', 'nsFormat': 'fp32',
                   'results': [{'file': 'nemo_transpose.json', 'tcId': 1, 'output': o64, 'outputT': oT64}]}, f)
    p = subprocess.run([muonref, 'check', '--results', path, f'{vec}/nemo_transpose.json'], capture_output=True,
                       text=True)
    failed = re.search(r'^FAIL nemo_transpose\.json tcId 1 ', p.stdout, re.M) is not None
    check(f'results_f64_judged_x{scale:g}', p.returncode == 1 and failed == want_fail,
          f'exit {p.returncode}, tcId 1 failed {failed}: {p.stderr.strip()!r} {p.stdout[:300]!r}')
results('results_bad_hex', [{'file': 'nemo_transpose.json', 'tcId': 1, 'output': dict(out, hex=out['hex'][:-1])}],
        'nemo_transpose.json tcId 1', 'output', 'digits')
results('results_file_path', [{'file': '../nemo_transpose.json', 'tcId': 1, 'output': out}], '"file"')
results('results_error_not_string', [{'file': 'nemo_transpose.json', 'tcId': 1, 'error': 3}], '"error"')
path = os.path.join(tmp, 'dup.json')
with open(path, 'w') as f:
    f.write('{"nsFormat": "fp32", "nsFormat": "bf16", "results": []}')
expect2('results_duplicate_key', ['--results', path, f'{vec}/nemo_transpose.json'], 'dup.json', 'duplicate')

# ---- issue 27: nothing is dropped without a word, and validation comes before judging
# every path is read: 256 copies of a good file, then a malformed one (../shared/repro/not_json.json)
expect2('path_257_read', ['--impl', 'fast-fp32'] + [f'{vec}/nemo_errors.json'] * 256 + [f'{repro}/not_json.json'],
        'not_json.json')
# a vector file with no test would pass anything with "0 passed, 0 failed"
# the sharding member (spec/vectors.md 2.6): what the validator refuses (issue 25's break-test)
own_file, tp_file = 'nemo_sharded.json', 'nemo_sharded_tp.json'


def sh(doc, k=0):
    return doc['testGroups'][0]['tests'][k]['sharding']


mutant('sharding_order_repeats', own_file, lambda d: sh(d).update(order=[0, 0, 0]),
       'sharding.order[1]: parameter 0 is already at sharding.order[0]')
mutant('sharding_world_size_twice', own_file,
       lambda d: sh(d)['layouts'].append(copy.deepcopy(sh(d)['layouts'][1])), 'world size 2 already has')
mutant('sharding_bounds_not_tensor_split', tp_file,
       lambda d: sh(d)['layouts'][1]['params'][0].update(bounds=[0, 1, 16]),
       'bounds[1] is 1, expected 8: bounds follow torch.tensor_split')
mutant('sharding_empty_slice', tp_file, lambda d: sh(d)['layouts'][1]['params'][0].update(bounds=[0, 0, 16]),
       'bounds[1] is 0, expected 8')
mutant('sharding_owner_under_split', tp_file, lambda d: sh(d)['layouts'][1]['params'].__setitem__(0, {'owner': 0}),
       'an owner under the split scheme "rows"')
mutant('sharding_split_under_ownership', own_file,
       lambda d: sh(d)['layouts'][1]['params'].__setitem__(0, {'dim': 0, 'bounds': [0, 4, 8]}),
       'a split along dim 0 under the scheme "sorted"')
mutant('sharding_order_under_split', tp_file, lambda d: sh(d).update(order=[0]),
       'sharding.order is for the ownership schemes')
mutant('no_test', tr_file, lambda d: (d.update(testGroups=[], numberOfTests=0)), 'the file holds no test')
# a results entry for an unknown tcId of a judged file: refused before the first case is judged (no FAIL line)
bad_id = [{'file': 'nemo_transpose.json', 'tcId': 1, 'skipped': 'x'}, {'file': 'nemo_transpose.json', 'tcId': 999,
                                                                         'skipped': 'x'}]
path = os.path.join(tmp, 'unknown_id.json')
with open(path, 'w') as f:
    json.dump({'implementation': 'test', 'nsFormat': 'fp32', 'results': bad_id}, f)
p = subprocess.run([muonref, 'check', '--results', path, f'{vec}/nemo_transpose.json'], capture_output=True, text=True)
check('results_unknown_tcid_before_judging', p.returncode == 2 and 'tcId 999, which is no case of that file' in p.stderr
      and 'FAIL' not in p.stdout, f'exit {p.returncode}: {p.stderr.strip()!r}, stdout {p.stdout[:200]!r}')
# an entry for a file that no judged vector file matches is counted in the report, not ignored
with open(path, 'w') as f:
    json.dump({'implementation': 'test', 'nsFormat': 'fp32',
               'results': [{'file': 'nemo_transpose.json', 'tcId': 1, 'skipped': 'x'},
                           {'file': 'nemo_transpos.json', 'tcId': 1, 'skipped': 'x'}]}, f)
p = subprocess.run([muonref, 'check', '--results', path, f'{vec}/nemo_transpose.json'], capture_output=True, text=True)
check('results_unknown_file_reported', p.returncode == 1 and
      'not judged: 1 results entry for files not given in this run (nemo_transpos.json)' in p.stdout,
      f'exit {p.returncode}: {p.stdout[-300:]!r}')
# a results file none of whose entries names a judged file (run on another profile's vectors): refused, not
# judged as every case "not run"
with open(path, 'w') as f:
    json.dump({'implementation': 'test', 'nsFormat': 'fp32',
               'results': [{'file': 'keller_momentum.json', 'tcId': 1, 'skipped': 'x'}]}, f)
expect2('results_name_no_judged_file', ['--results', path, f'{vec}/nemo_transpose.json'],
        'none of its 1 results names a judged vector file', 'keller_momentum.json')
# two vector files of one base name: a results file could not tell them apart
other = os.path.join(tmp, 'copy')
os.makedirs(other, exist_ok=True)
shutil.copy(os.path.join(vec, 'nemo_errors.json'), other)
expect2('same_base_name', ['--impl', 'fast-fp32', f'{vec}/nemo_errors.json', f'{other}/nemo_errors.json'],
        'a second vector file named nemo_errors.json')
# muonref ref: a duplicate key is refused, and the message names the file
path = os.path.join(tmp, 'ref_dup.json')
with open(path, 'w') as f:
    f.write('{"dtype": "f32", "shape": [2, 2], "hex": "3f8000003f8000003f8000003f800000", "dtype": "f32"}')
p = subprocess.run([muonref, 'ref', 'polar', path], capture_output=True, text=True)
check('ref_duplicate_key', p.returncode == 2 and 'ref_dup.json:1:' in p.stderr and 'duplicate' in p.stderr,
      f'exit {p.returncode}: {p.stderr.strip()!r}')
with open(path, 'w') as f:
    f.write('{"dtype": "f32", "shape": [2, 2], "hex": "00000000000000000000000000000000"}')
p = subprocess.run([muonref, 'ref', 'polar', path], capture_output=True, text=True)
check('ref_error_names_file', p.returncode != 0 and f'muonref ref: {path}: ' in p.stderr,
      f'exit {p.returncode}: {p.stderr.strip()!r}')
# a NaN in a Newton-Schulz output judged by the singular-value band: LAPACK refuses it, and the judge says so
# without reading the singular values it did not compute (valgrind: no uninitialised read)
ns_file = 'nemo_newton_schulz.json'
wr = os.path.join(tmp, 'ns_results.json')
run(['--impl', 'fast-bf16', '--write-results', wr, f'{vec}/{ns_file}'])
with open(wr) as f:
    doc = json.load(f)
band = [t['tcId'] for g in load(ns_file)['testGroups'] for t in g['tests'] if 'svBand' in json.dumps(t)]
for r in doc['results']:
    if band and r['tcId'] == band[0]:
        r['output']['hex'] = '7fc00000' + r['output']['hex'][8:]
with open(wr, 'w') as f:
    json.dump(doc, f)
cmd = [muonref, 'check', '--results', wr, f'{vec}/{ns_file}']
# (not in the sanitizer build: valgrind cannot run an ASan binary, whose runtime must come first)
if shutil.which('valgrind') and os.environ.get('MUONREF_SANITIZER_BUILD', '0') != '1':
    cmd = ['valgrind', '-q', '--error-exitcode=99'] + cmd
p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
check('svband_nan_output', bool(band) and p.returncode == 1 and 'singular values not computable' in p.stdout,
      f'exit {p.returncode}: {p.stderr[-400:]!r}')
# ---- a result tensor of another shape than the expected one is that case's
# failure, naming both shapes (spec/vectors.md 8): exit 1, the other cases
# judged as usual
def transposed(t):
    return dict(t, shape=list(reversed(t['shape'])))


tr_doc, mo_doc = load(tr_file), load('nemo_momentum.json')
tr = {t['tcId']: t for g in tr_doc['testGroups'] for t in g['tests']}
mo = next(t for g in mo_doc['testGroups'] for t in g['tests'] if len(t['params'][0]['init']['shape']) == 2
          and len(set(t['params'][0]['init']['shape'])) == 2)


def pair(t):
    """output and outputT of a correct fp32 port: the exact iterate and its transpose."""
    e = t['expected']['exact']
    rows, cols = e['shape']
    h = [e['hex'][8 * k:8 * k + 8] for k in range(rows * cols)]
    ht = ''.join(h[i * cols + j] for j in range(cols) for i in range(rows))
    return e, {'dtype': 'f32', 'shape': [cols, rows], 'hex': ht}


o1, t1 = pair(tr[1])
o2, t2 = pair(tr[2])
o3, t3 = pair(tr[3])
entries = [{'file': tr_file, 'tcId': 1, 'output': transposed(o1), 'outputT': t1},   # a tall output as (cols, rows)
           {'file': tr_file, 'tcId': 2, 'output': o2, 'outputT': o2},               # outputT not transposed
           {'file': tr_file, 'tcId': 3, 'output': o3, 'outputT': t3},               # correct
           {'file': 'nemo_momentum.json', 'tcId': mo['tcId'],
            'params': [transposed(mo['expected']['params'][0])] + mo['expected']['params'][1:],
            'state': mo['expected']['state']}]
path = os.path.join(tmp, 'shapes.json')
with open(path, 'w') as f:
    json.dump({'implementation': 'test', 'nsFormat': 'fp32', 'results': entries}, f)
p = subprocess.run([muonref, 'check', '--no-diagnosis', '--results', path, os.path.join(vec, tr_file),
                    os.path.join(vec, 'nemo_momentum.json')], capture_output=True, text=True, timeout=300)
fail_lines = {}
for line in (p.stdout + p.stderr).splitlines():
    if line.startswith('FAIL '):
        w = line.split()
        fail_lines[(w[1], int(w[3].rstrip(":")))] = line


def shape(t):
    return '(' + ', '.join(str(d) for d in t['shape']) + (',)' if len(t['shape']) == 1 else ')')


check('wrong_shape_exit_1', p.returncode == 1, f'exit {p.returncode}: {p.stderr.strip()[-300:]}')
check('wrong_output_shape_fails_its_case',
      f"output: shape {shape(transposed(o1))}, expected {shape(o1)}" in fail_lines.get((tr_file, 1), ''),
      fail_lines.get((tr_file, 1), 'no FAIL line'))
check('wrong_outputT_shape_fails_its_case',
      f"outputT: shape {shape(o2)}, expected {shape(t2)}" in fail_lines.get((tr_file, 2), ''),
      fail_lines.get((tr_file, 2), 'no FAIL line'))
check('right_shapes_pass', (tr_file, 3) not in fail_lines, fail_lines.get((tr_file, 3), ''))
mp = mo['expected']['params'][0]
check('wrong_param_shape_fails_its_case',
      f"params[0]: shape {shape(transposed(mp))}, expected {shape(mp)}" in fail_lines.get(('nemo_momentum.json', mo['tcId']), ''),
      fail_lines.get(('nemo_momentum.json', mo['tcId']), 'no FAIL line'))

# ---- keys of the optimizer's own (scope init) given two values by a case's groups: no port can run the
# case, so the file is malformed (exit 2), never the implementation's failure; and a value muonref has no
# field for ("namo") is refused as such, not run
ea = os.path.join(src, 'vectors', 'emerging_adaptive')
for name, change, fragment in (
        ('init_key_differs', lambda t: (t['groups'][0]['options'].update(moment2_method='adamuon'),
                                        t['groups'][1]['options'].update(moment2_method='normuon')),
         '"moment2_method" is the optimizer\'s own keyword'),
        ('moment2_method_namo', lambda t: [g['options'].update(moment2_method='namo') for g in t['groups']],
         '"namo" has no muonref field')):
    with open(os.path.join(ea, 'emerging_adaptive_schedule.json')) as f:
        doc = json.load(f)
    t = next(t for g in doc['testGroups'] for t in g['tests'] if len(t.get('groups', [])) > 1)
    change(t)
    path = os.path.join(tmp, 'emerging_adaptive_schedule.json')
    with open(path, 'w') as f:
        json.dump(doc, f)
    for impl in ('fast-fp32', 'fast-bf16'):
        expect2(f'{name}_{impl}', ['--impl', impl, path], 'emerging_adaptive_schedule.json', f"tcId {t['tcId']}",
                fragment)
    os.remove(path)

# ---- a branch default (pytorch_optimizer's adamw_lr: scope init, the AdamW groups' only) given two values by
# two AdamW groups of its BranchDefaults case: malformed as above, the groups compared being that branch's (the
# Muon group, groups[0], gives none)
po = os.path.join(src, 'vectors', 'pytorch_optimizer')
with open(os.path.join(po, 'pytorch_optimizer_adamw.json')) as f:
    doc = json.load(f)
t = next(t for g in doc['testGroups'] for t in g['tests'] if 'BranchDefaults' in t['flags'])
extra = json.loads(json.dumps(t['groups'][1]))
extra['options']['adamw_lr'], extra['params'] = 0.002, []
t['groups'].append(extra)
path = os.path.join(tmp, 'pytorch_optimizer_adamw.json')
with open(path, 'w') as f:
    json.dump(doc, f)
for impl in ('fast-fp32', 'fast-bf16'):
    expect2(f'branch_default_differs_{impl}', ['--impl', impl, path], 'pytorch_optimizer_adamw.json', f"tcId {t['tcId']}",
            '"adamw_lr" is the optimizer\'s own keyword (scope init in the profile \'pytorch_optimizer\'), one value '
            'for every group of its branch, but differs from groups[1]\'s')
os.remove(path)

# ---- --torch: a malformed golden file is refused before any port runs (the driver is a stand-in that
# records its start), and the same file valid runs it
ran = os.path.join(tmp, 'driver-ran')
stand_in = os.path.join(tmp, 'driver.py')
with open(stand_in, 'w') as f:
    f.write(f"open({ran!r}, 'w').close()\nraise SystemExit(3)\n")
bad = os.path.join(tmp, 'nemo_momentum.json')
with open(os.path.join(vec, 'nemo_momentum.json')) as f:
    doc = json.load(f)
doc['testGroups'][0]['tests'][0]['tcId'] = 'one'
with open(bad, 'w') as f:
    json.dump(doc, f)
p = subprocess.run([muonref, 'check', '--quiet', '--torch', 'no_port:Muon', bad], capture_output=True, text=True,
                   timeout=300, env=dict(os.environ, MUONREF_DRIVER=stand_in))
check('torch_malformed_refused_before_the_port', p.returncode == 2 and 'nemo_momentum.json' in p.stderr
      and '"tcId" must be an integer' in p.stderr and not os.path.exists(ran),
      f"exit {p.returncode}, driver ran: {os.path.exists(ran)}, message {p.stderr.strip()!r}")
p = subprocess.run([muonref, 'check', '--quiet', '--torch', 'no_port:Muon', os.path.join(vec, 'nemo_momentum.json')],
                   capture_output=True, text=True, timeout=300, env=dict(os.environ, MUONREF_DRIVER=stand_in))
check('torch_valid_file_runs_the_driver', os.path.exists(ran), f"exit {p.returncode}, message {p.stderr.strip()!r}")
os.remove(bad)
os.remove(ran)
# ... and the rules that span files: two files of one base name (a results file names files by base name), and no
# *.json under the paths, refused as --impl refuses them, before the driver starts
twin = os.path.join(tmp, 'twin')
os.makedirs(twin)
shutil.copy(os.path.join(vec, 'nemo_momentum.json'), twin)
for name, paths, fragment in (
        ('torch_two_files_one_base_name', [os.path.join(vec, 'nemo_momentum.json'), twin],
         'a second vector file named nemo_momentum.json in this run'),
        ('torch_no_vector_file', [os.path.join(tmp, 'empty')], 'no vector files (*.json) under the given paths')):
    os.makedirs(os.path.join(tmp, 'empty'), exist_ok=True)
    p = subprocess.run([muonref, 'check', '--quiet', '--torch', 'no_port:Muon'] + paths, capture_output=True,
                       text=True, timeout=300, env=dict(os.environ, MUONREF_DRIVER=stand_in))
    check(name, p.returncode == 2 and fragment in p.stderr and not os.path.exists(ran),
          f"exit {p.returncode}, driver ran: {os.path.exists(ran)}, message {p.stderr.strip()!r}")
shutil.rmtree(twin)

# ---- and the committed vectors stay valid
for impl in ('fast-fp32', 'fast-bf16'):
    rc, err = run(['--impl', impl, vec])
    check(f'committed_vectors_valid_{impl}', rc == 0, f'exit {rc}: {err.strip()}')

shutil.rmtree(tmp)
print(f"{(checks - fails) * 100 // checks}%: Checks: {checks}, Failures: {fails}, Errors: 0")
sys.exit(1 if fails else 0)
