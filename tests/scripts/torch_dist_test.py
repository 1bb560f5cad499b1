#!/usr/bin/python3
"""Helper of tests/scripts/torch-distributed.sh: the distributed ports through
`torch_driver.py --world-size N` and `muonref check --results`.

    torch_dist_test.py MUONREF SRCDIR WORKDIR [--every-profile N]

In one Python process (torch is imported once; the driver forks its rank
processes from it), for each row of RUNS: runs the driver's main() on the
row's port, world size and vector file, then the judge, and checks:

* a correct port: exit 0 from the judge (every case passes), no case skipped;
* a faulty port: the judge exits 1, the cases that fail are those the row
  names (computed from the vectors: see FAULT_CASES), and every FAIL line
  carries the judge's sharding hint;
* FaultyNoBroadcast: also that the results file lists the parameters the
  ranks disagree on and the judge's hints name them;
* the hanging port: the driver exits 3 within the case timeout plus a
  margin, naming the hang, and every case is skipped;
* the port whose last rank exits in step: the driver exits 3 naming the
  rank and its exit status, every case skipped;
* the port whose every rank exits with status 0 in its first step: not a
  run (exit 3), every case skipped with that reason (issue 27);
* the port that starts a daemon (double fork, setsid) from rank 0: the run
  passes, and the daemon is gone when the driver returns (issue 27).

Then, for every profile whose vectors have a sharded area (vectors/*/*_sharded.json and
*_sharded_tp.json: the records' "areas"), the profile's test port (its record's test_port)
distributed by tests/variants/torch_dist_any.py at world size 2: OwnerComputes, OtherOwner (owning
differently from the case: the driver takes state and p.grad from the rank that stepped) resp.
GatherSlices pass every case; NoBroadcast fails exactly the cases with two or more Muon parameters, WrongOwner
and PerShard every case the port steps (not the cases the profile refuses), each FAIL with the
sharding hint.  With --every-profile N only this part runs, at world size N (the main job: 4).

Also (not with --every-profile): what the driver writes of a sharded run is what the one-process
driver writes (p.grad after the step judged: a Keller port keeping it fails; a bf16 parameter kept
bf16), the state of an owned parameter is the one a step wrote (PreAllocZero1), a rank's own error
is named before the failed collectives it caused and the later cases are not run (RaisingMuon:
driver exit 3), and OwnedOnly (each rank's optimizer over its partition) passes nemo and fails
Megatron, whose clip_grad is over every gradient.

Prints one line per run and a Check-style summary.  Exit 0 when every check
passed.
"""

import glob
import json
import os
import re
import subprocess
import sys
import time

SRC = sys.argv[2]
sys.path.insert(0, os.path.join(SRC, 'vectors', 'drivers'))
import torch_driver  # noqa: E402

MUONREF, WORK = sys.argv[1], sys.argv[3]
EVERY_ONLY = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == '--every-profile' else None
PORTS = os.path.join(SRC, 'tests', 'variants', 'torch_dist_ports.py')
DETACHED = os.path.join(WORK, 'detached.pids')  # DetachingMuon's daemon writes its pid here
os.environ['MUONREF_DETACHED_PIDS'] = DETACHED
V = os.path.join(SRC, 'vectors', 'nemo')
OWN, TP = os.path.join(V, 'nemo_sharded.json'), os.path.join(V, 'nemo_sharded_tp.json')


def muon_count(case):
    """Muon parameters of the case: the entries of its order (ownership schemes)."""
    return len(case['sharding'].get('order', []))


def ties(case):
    shapes = [tuple(case['params'][i]['init']['shape']) for i in case['sharding'].get('order', [])]
    return len(shapes) != len(set(shapes))


# which cases a faulty port must fail, by world size, from the vectors
FAULT_CASES = {
    # every split case with more than one rank (a slice alone is not the matrix)
    'FaultyPerShardNS': lambda case, ws: ws > 1,
    # the last parameter keeps a stale copy when the count is not a multiple of the world size
    'FaultyStalePad': lambda case, ws: muon_count(case) % ws != 0,
    # odd ranks order equal shapes differently: cases with equal shapes, at world size > 1
    'FaultyOrder': lambda case, ws: ws > 1 and ties(case),
    # without the broadcast, rank 0 misses the updates of the matrices other ranks own
    'FaultyNoBroadcast': lambda case, ws: ws > 1 and muon_count(case) > 1,
}

RUNS = [
    ('KellerMuon', 1, OWN), ('KellerMuon', 2, OWN), ('KellerMuon', 4, OWN),
    ('Zero1Muon', 1, OWN), ('Zero1Muon', 2, OWN), ('Zero1Muon', 4, OWN),
    ('TensorParallelMuon', 1, TP), ('TensorParallelMuon', 2, TP), ('TensorParallelMuon', 4, TP),
    ('FaultyPerShardNS', 2, TP), ('FaultyPerShardNS', 4, TP),
    ('FaultyStalePad', 2, OWN), ('FaultyStalePad', 4, OWN),
    ('FaultyOrder', 2, OWN), ('FaultyOrder', 4, OWN),
    ('FaultyNoBroadcast', 2, OWN),
    ('HangingMuon', 2, OWN), ('DyingMuon', 4, OWN), ('QuittingMuon', 2, OWN), ('DetachingMuon', 2, OWN),
]

checks = fails = 0


def check(ok, what):
    global checks, fails
    checks += 1
    if not ok:
        fails += 1
        print(f"torch-distributed:0:F:dist:{what}:0: failed")
    return ok


def last_line(judge):
    return judge.stdout.strip().splitlines()[-1] if judge.stdout.strip() else judge.stderr.strip()


def judged(judge, what, cases=None, rule=None, hint=False):
    """A correct run (rule None) passes every case; a faulty one fails exactly the cases of `cases` that
    rule(case) names, each FAIL with the sharding hint when hint."""
    if rule is None:
        check(judge.returncode == 0, f'{what}_passes')
        if judge.returncode != 0:
            print(judge.stdout[-3000:])
        return set()
    want = {c['tcId'] for c in cases if rule(c)}
    got = {int(m) for m in re.findall(r'^FAIL \S+ tcId (\d+)', judge.stdout, re.M)}
    check(judge.returncode == 1 and got == want and (not hint or judge.stdout.count('sharded case:') >= len(got) > 0),
          f'{what}_fails_its_cases')
    if got != want:
        print(f"  expected failures {sorted(want)}, got {sorted(got)}")
    return got


for port, ws, vec in RUNS if EVERY_ONLY is None else []:
    out = os.path.join(WORK, f'{port}-{ws}.json')
    argv = ['--optimizer', f'{PORTS}:{port}', '--world-size', str(ws), '--out', out, vec]
    if port == 'HangingMuon':
        argv[:0] = ['--case-timeout', '8', '--dist-timeout', '600']
    t0 = time.monotonic()
    rc = torch_driver.main(argv)
    wall = time.monotonic() - t0
    doc = json.load(open(out))
    skipped = [r for r in doc['results'] if 'skipped' in r]
    if port == 'DyingMuon':
        print(f"{port} at world size {ws}: driver exit {rc} after {wall:.1f} s, {len(skipped)} cases skipped")
        check(rc == 3 and len(skipped) == len(doc['results']) and 'rank 3 stopped (exit status 7)' in skipped[0]['skipped'],
              f'{port}_{ws}_ended')
        continue
    if port == 'QuittingMuon':  # every rank exits 0 early: not a run (exit 3), every case skipped with the reason
        # (where one rank's exit breaks another's collective first, that rank's error follows the early exit,
        # which is still named as the cause)
        print(f"{port} at world size {ws}: driver exit {rc} after {wall:.1f} s, {len(skipped)} cases skipped")
        why = skipped[0]['skipped'] if skipped else ''
        check(rc == 3 and len(skipped) == len(doc['results']) and
              re.search(r'(every rank|rank \d) exited with status 0 after 0 of \d+ cases: the port ended its rank', why),
              f'{port}_{ws}_not_a_run')
        continue
    if port == 'DetachingMuon':  # the daemon a rank started is gone (ended and reaped) when the driver returns
        pids = [int(x) for x in open(DETACHED).read().split()] if os.path.exists(DETACHED) else []
        alive = [p for p in pids if os.path.exists(f'/proc/{p}')]
        print(f"{port} at world size {ws}: driver exit {rc}, detached processes {pids}, left {alive}")
        check(rc == 0 and not skipped and pids and not alive, f'{port}_{ws}_no_detached_child_left')
        continue
    if port == 'HangingMuon':
        print(f"{port} at world size {ws}: driver exit {rc} after {wall:.1f} s, {len(skipped)} cases skipped")
        check(rc == 3 and len(skipped) == len(doc['results']) and 'hangs' in skipped[0]['skipped'], f'{port}_{ws}_ended')
        check(wall < 8 + 60, f'{port}_{ws}_timely')
        continue
    judge = subprocess.run([MUONREF, 'check', '--results', out, vec], capture_output=True, text=True)
    print(f"{port} at world size {ws} on {os.path.basename(vec)}: {last_line(judge)} (driver {wall:.1f} s, ranks "
          f"{doc['distributed']['seconds']} s)")
    check(rc == 0 and not skipped, f'{port}_{ws}_ran')
    if port not in FAULT_CASES:
        judged(judge, f'{port}_{ws}')
        continue
    got = judged(judge, f'{port}_{ws}', json.load(open(vec))['testGroups'][0]['tests'],
                 lambda c, port=port, ws=ws: FAULT_CASES[port](c, ws))
    hints = judge.stdout.count('sharded case:')
    check(hints >= len(got) > 0, f'{port}_{ws}_hint')
    if port == 'FaultyNoBroadcast':  # the driver saw the ranks disagree, and the judge says so
        check(len(doc['distributed']['ranksDisagree']) >= len(got) and
              judge.stdout.count('ranks hold different values of params') >= len(got), f'{port}_{ws}_disagree')


# ---- what the driver writes of a sharded run (issue 25's break-test): as the one-process driver writes it


def run_judge(optimizer, ws, vec, *extra):
    out = os.path.join(WORK, f"w-{os.path.basename(optimizer).replace(':', '-')}-{ws}.json")
    rc = torch_driver.main(['--optimizer', optimizer, '--world-size', str(ws), '--out', out, *extra, vec])
    judge = subprocess.run([MUONREF, 'check', '--results', out, vec], capture_output=True, text=True)
    return rc, json.load(open(out)), judge


if EVERY_ONLY is None:
    K = os.path.join(SRC, 'vectors', 'keller', 'keller_sharded.json')
    # p.grad after the step is judged: a Keller port that keeps p.grad fails every case (it does unsharded)
    rc, doc, judge = run_judge(os.path.join(SRC, 'tests', 'variants', 'torch_keller_port_grad_kept.py') + ':SingleDeviceMuonWithAuxAdam',
                               2, K, '--adapter', 'keller', '--mode', 'neutral')
    print(f"the Keller port that keeps p.grad at world size 2: {last_line(judge)}")
    check(rc == 0 and judge.stdout.strip().splitlines()[-1].startswith('0 passed,') and
          'p.grad after the step' in judge.stdout, 'grad_after_judged')
    # a bf16 parameter stays bf16: the tensor-parallel port passes nemo's dtypes area
    rc, doc, judge = run_judge(f'{PORTS}:TensorParallelMuon', 1, os.path.join(V, 'nemo_dtypes.json'))
    print(f"TensorParallelMuon at world size 1 on nemo_dtypes.json: {last_line(judge)}")
    check(rc == 0 and judge.returncode == 0, 'bf16_params_kept')
    # zero buffers on every rank: the state is the one a step wrote
    rc, doc, judge = run_judge(f'{PORTS}:PreAllocZero1', 2, OWN)
    print(f"PreAllocZero1 at world size 2: {last_line(judge)}")
    check(rc == 0 and judge.returncode == 0, 'state_of_the_rank_that_stepped')
    # one rank raises: its error first, the later cases not run (the group broke), exit 3
    rc, doc, judge = run_judge(f'{PORTS}:RaisingMuon', 2, OWN, '--dist-timeout', '8', '--case-timeout', '60')
    cases = json.load(open(OWN))['testGroups'][0]['tests']
    five = [i for i, c in enumerate(cases) if muon_count(c) >= 5]
    why = [r.get('skipped', '') for r in doc['results']]
    print(f"RaisingMuon at world size 2: driver exit {rc}; case #{cases[five[0]]['tcId']}: {why[five[0]][:120]}")
    check(rc == 3 and five and why[five[0]].startswith('rank 1: RuntimeError: rank 1 refuses') and
          all('not run: the process group broke' in w for w in why[five[0] + 1:]) and
          not any(why[:five[0]]), 'raising_rank_named_group_broken')

# ---- every profile with a sharded area: its test port through tests/variants/torch_dist_any.py


def record(profile):
    with open(os.path.join(SRC, 'spec', 'profiles', profile + '.json')) as f:
        r = json.load(f)
    if 'test_port' not in r:
        r['test_port'] = record(r['base'])['test_port']
    return r


def steps(case):
    """Whether the port steps the case (not one its profile refuses)."""
    return 'ErrorMessage' not in case.get('flags', [])


ANY_FAULTS = {
    'NoBroadcast': lambda case: steps(case) and muon_count(case) > 1,
    'WrongOwner': steps,
    'PerShard': steps,
}
WS = EVERY_ONLY or 2
ANY = os.path.join(SRC, 'tests', 'variants', 'torch_dist_any.py')
files = sorted(glob.glob(os.path.join(SRC, 'vectors', '*', '*_sharded.json')) +
               glob.glob(os.path.join(SRC, 'vectors', '*', '*_sharded_tp.json')))
check(len(files) > 2, 'every_profile_found')
for vec in files:
    doc = json.load(open(vec))
    tp = record(doc['profile'])['test_port']
    os.environ['MUONREF_DIST_PORT'] = os.path.join(SRC, tp['file']) + ':' + tp['class']
    split = vec.endswith('_sharded_tp.json')
    for port in (['GatherSlices', 'PerShard'] if split else ['OwnerComputes', 'OtherOwner', 'NoBroadcast', 'WrongOwner']):
        out = os.path.join(WORK, f"any-{doc['profile']}-{port}-{WS}-{int(split)}.json")
        argv = ['--optimizer', f'{ANY}:{port}', '--adapter', tp['adapter'], '--mode', tp.get('mode', 'neutral'),
                '--world-size', str(WS), '--out', out, vec]
        rc = torch_driver.main(argv)
        judge = subprocess.run([MUONREF, 'check', '--results', out, vec], capture_output=True, text=True)
        what = f"{doc['profile']}_{port}_{WS}"
        print(f"{tp['class']} of {doc['profile']} as {port} at world size {WS} on {os.path.basename(vec)}: "
              f"{last_line(judge)}")
        skipped = [r for r in json.load(open(out))['results'] if 'skipped' in r]
        check(rc == 0 and not skipped, f'{what}_ran')
        judged(judge, what, [c for g in doc['testGroups'] for c in g['tests']], ANY_FAULTS.get(port), hint=True)

# a step over the whole model keeps its unsharded meaning: a port whose optimizer sees only its
# partition passes nemo (per parameter) and fails Megatron (clip_grad over every gradient)
for profile, must_fail in (('nemo', False), ('megatron', True)) if EVERY_ONLY is None else []:
    vec = os.path.join(SRC, 'vectors', profile, f'{profile}_sharded.json')
    tp = record(profile)['test_port']
    os.environ['MUONREF_DIST_PORT'] = os.path.join(SRC, tp['file']) + ':' + tp['class']
    rc, doc, judge = run_judge(f'{ANY}:OwnedOnly', 2, vec, '--adapter', tp['adapter'], '--mode', 'neutral')
    print(f"OwnedOnly of {profile} at world size 2: {last_line(judge)}")
    check(rc == 0 and judge.returncode == (1 if must_fail else 0) and
          (not must_fail or judge.stdout.count('sharded case:') > 0), f'{profile}_owned_only')

print(f"{(checks - fails) * 100 // max(checks, 1)}%: Checks: {checks}, Failures: {fails}, Errors: 0")
sys.exit(1 if fails else 0)
