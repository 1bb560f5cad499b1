"""torch.distributed runs of torch_driver.py: `--world-size N`.

The driver starts N rank processes (forked before any case runs, so that
torch is imported once), each of which joins a gloo process group on
127.0.0.1 (a free port), builds the port, and runs every case of the vector
files.  A case with a `sharding` member (spec/vectors.md 2.6) gives each
rank the parameters as its layout for N says:

* `{"owner": r}` or `{"replicated": true}`: the whole parameter and its
  whole gradient, on every rank (as after a data-parallel all-reduce); the
  Parameter carries `muonref_owner` (r, or None when replicated);
* `{"dim": d, "bounds": [b0, ..., bN]}`: rank r gets the slice
  [b_r, b_{r+1}) along d of the initial value and of every gradient; the
  Parameter carries `partition_dim` (d), `partition_bounds`,
  `full_shape` and `tensor_model_parallel = True` (Megatron's names).

A case without `sharding` runs as if every parameter were replicated.
After the last step the driver assembles one result, in the results file's
usual layout (spec/vectors.md section 4), as the one-process driver writes
it (a bf16 parameter stays bf16; `gradAfter` included): a split parameter,
its state and its gradient after the step are the concatenation of the
ranks' slices; a whole parameter is rank 0's (every rank must hold the same
values: the cases where ranks disagree are listed in the results file's
`distributed.ranksDisagree`); the state and the gradient after the step
of an owned parameter are those of the rank that stepped it: its owner
when a step wrote the owner's state (a tensor not all zeros), else the
first rank whose state a step wrote (a port may own differently and
allocate zero buffers everywhere), else the owner or the lowest rank that
holds a state.  A skipped
case names every rank's reason, a rank's own error before the failed
collectives it left the others in.  `ns`, `transpose` and `error` cases:
rank 0's outputs.  After a collective fails (a timeout: gloo's group is then
unusable) a rank runs no later case: each is skipped with that reason, and
the driver exits 3.

A rank that stops with an error, every rank ending (even with status 0)
before the last case, or a run in which no case finishes for
`--case-timeout` seconds (a port that hangs), is ended: every rank
process is terminated, then killed, and the unfinished cases are written
as skipped with the reason (the driver then exits 3).  The driver is the
reaper of its orphaned descendants (Linux prctl PR_SET_CHILD_SUBREAPER), so
a process a port detaches (a double fork, setsid: out of the ranks'
process groups) comes back to it when its parent ends, and is ended with
the ranks.  Once every case has its result, a rank that
fails or waits in the closing barrier (up to 30 s) changes nothing: the
ranks are ended and the results written.  Rank processes also end themselves when the
driver disappears.  Collectives time out after `--dist-timeout` seconds.

Standard library and torch only.
"""

import datetime
import glob
import json
import os
import signal
import socket
import tempfile
import threading
import time
import traceback
from typing import Any, Dict, List, Optional, Tuple

import torch

ALONE = {'replicated': True}


def map_state(state: Optional[Dict[str, Any]], fn) -> Optional[Dict[str, Any]]:
    """A results-protocol state (spec/vectors.md 4) with fn applied to each of its tensors, the
    other members (the step count) kept; None (no state) stays None.  Here because the
    driver (torch_driver.py) and the ranks both map states, and the driver imports this module."""
    return None if state is None else {k: (fn(v) if isinstance(v, torch.Tensor) else v) for k, v in state.items()}


def free_port() -> int:
    """A TCP port of 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def split_bounds(size: int, world_size: int) -> List[int]:
    """torch.tensor_split's bounds: the first (size mod N) slices one longer."""
    q, rem = divmod(size, world_size)
    out = [0]
    for r in range(world_size):
        out.append(out[-1] + q + (1 if r < rem else 0))
    return out


def layout(case: Dict[str, Any], world_size: int) -> Optional[List[Dict[str, Any]]]:
    """The per-parameter layout of a case at world_size: the case's own for that
    size, else derived by its scheme's rule (spec/vectors.md 2.6); None for a case
    without a sharding member."""
    sh = case.get('sharding')
    if not isinstance(sh, dict):
        return None
    layouts = sh.get('layouts') or []
    for l in layouts:
        if l.get('worldSize') == world_size:
            return l['params']
    base = layouts[0]['params']
    n = len(case['params'])
    out = [dict(ALONE) for _ in range(n)]
    if sh.get('scheme') in ('rows', 'cols'):
        for i, e in enumerate(base):
            if 'dim' in e:
                size = decode_shape(case['params'][i]['init'])[e['dim']]
                out[i] = {'dim': e['dim'], 'bounds': split_bounds(size, world_size)}
        return out
    group_of = {}
    for gi, g in enumerate(case['groups']):
        for i in g['params']:
            group_of[i] = gi
    pos: Dict[int, int] = {}
    for i in sh.get('order', []):
        gi = group_of.get(i)
        out[i] = {'owner': pos.get(gi, 0) % world_size}
        pos[gi] = pos.get(gi, 0) + 1
    return out


def decode_shape(t: Dict[str, Any]) -> List[int]:
    return list(t['shape'])


# ---------------------------------------------------------------- in a rank


def _piece(t: Optional[torch.Tensor], e: Dict[str, Any], rank: int) -> Optional[torch.Tensor]:
    if t is None or 'dim' not in e:
        return None if t is None else t.clone()
    lo, hi = e['bounds'][rank], e['bounds'][rank + 1]
    return t.narrow(e['dim'], lo, hi - lo).clone().contiguous()


def make_runner(base_cls, as_param=lambda t: t):
    """A Runner (torch_driver.Runner) that runs step cases sharded; results hold
    raw tensors, which the driver assembles over the ranks.  as_param: the
    dtype a parameter is written in (torch_driver.as_param)."""

    class ShardedRunner(base_cls):
        def __init__(self, *a, rank: int, world_size: int, **k):
            super().__init__(*a, **k)
            self.rank, self.world_size = rank, world_size
            self.as_param = as_param

        def lay(self, case, n):
            return layout(case, self.world_size) or [dict(ALONE) for _ in range(n)]

        def step_params(self, case, inits):
            params = []
            for t, e in zip(inits, self.lay(case, len(inits))):
                p = torch.nn.Parameter(_piece(t, e, self.rank))
                self._mark(p, e, t)
                params.append(p)
            self._whole = inits
            return self.named(params, case)

        def step_grads(self, case, steps):
            lay = self.lay(case, len(self._whole))
            return [[_piece(g, e, self.rank) for g, e in zip(grads, lay)] for grads in steps]

        def reloaded_params(self, case, params, cast):
            fresh = super().reloaded_params(case, params, cast)
            for q, e, t in zip(fresh, self.lay(case, len(fresh)), self._whole):
                self._mark(q, e, t)
            return fresh

        def run_step(self, case, inits, steps):
            """The base runner's step case on this rank's pieces (Runner.step_run); the
            tensors stay raw for assemble(): parameters in the dtype the driver writes
            (td.as_param: bf16 stays bf16), state and p.grad after the step as float32."""
            params, states, grad_after = self.step_run(case, inits, steps)
            return {'params': [self.as_param(p.detach()).clone() for p in params],
                    'state': [map_state(s, lambda v: v.detach().float().clone()) for s in states],
                    'gradAfter': [None if g is None else g.float() for g in grad_after]}

        @staticmethod
        def _mark(p, e, whole):
            if 'dim' in e:
                p.tensor_model_parallel = True
                p.partition_dim = e['dim']
                p.partition_bounds = list(e['bounds'])
                p.full_shape = tuple(whole.shape)
            else:
                p.muonref_owner = e.get('owner')

    return ShardedRunner


def _subreaper() -> bool:
    """Makes this process the reaper of its orphaned descendants (Linux prctl(PR_SET_CHILD_SUBREAPER, 1)), so that
    a child a port detaches (double fork, setsid) is reparented here, where Ranks.stop() ends it.  False where the
    call is not available (then such a child goes to init and is not ended)."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _children(pid: int) -> List[int]:
    """The processes whose parent is pid (Linux /proc; [] elsewhere)."""
    out = []
    try:
        names = os.listdir('/proc')
    except OSError:
        return out
    for d in names:
        if not d.isdigit():
            continue
        try:
            with open(f'/proc/{d}/stat') as f:
                stat = f.read()
            if int(stat[stat.rindex(')') + 2:].split()[1]) == pid:
                out.append(int(d))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _watch_parent(parent: int, work: str) -> None:
    """Ends this rank when the driver is gone, removing the run's folder, which a killed
    driver cannot (every rank tries; the first removes it)."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            import shutil

            shutil.rmtree(work, ignore_errors=True)
            os._exit(3)


def result_path(work: str, rank: int, idx: int) -> str:
    """Where rank `rank` writes its results of case idx (whole: torch.save to a .tmp, then os.replace)."""
    return os.path.join(work, f'r{rank}.{idx}.pt')


def _rank_main(rank: int, world_size: int, port: int, cfg: Dict[str, Any], work: str, parent: int) -> None:
    threading.Thread(target=_watch_parent, args=(parent, work), daemon=True).start()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    torch.set_num_threads(1)
    import torch.distributed as dist
    import torch_driver as td

    progress = os.path.join(work, f'rank{rank}.progress')
    try:
        dist.init_process_group(
            'gloo',
            init_method=f'tcp://127.0.0.1:{port}',
            rank=rank,
            world_size=world_size,
            timeout=datetime.timedelta(seconds=cfg['dist_timeout']),
        )
        cls, module = td.load_object(cfg['optimizer'], '--optimizer')
        ns_fn = td.load_object(cfg['ns_function'], '--ns-function')[0] if cfg['ns_function'] else getattr(
            module, td.DEFAULT_NS_FUNCTION, None
        )
        places = td.ns_globals(cls, module) if cfg['ns_in_step'] else []
        adapter = td.make_adapter(cfg['adapter'], cfg.get('profile_file'))
        adapter.state_names = cfg.get('state_names') or {}
        runner = make_runner(td.Runner, td.as_param)(cls, ns_fn, adapter, cfg['mode'], rank=rank,
                                                      world_size=world_size)
        broken = None  # after a collective failed, gloo's group is unusable: the later cases are not run
        with td.rebound(places, ns_fn):
            for idx, (path, kind, case, profile) in enumerate(cases_of(cfg['files'], td.load_vectors)):
                runner.profile = profile  # options named as the file's profile names them (as the driver's runner)
                where = f"{os.path.basename(path)}#{case.get('tcId')}"
                with open(progress, 'w') as f:
                    f.write(f"{idx} {where}\n")
                if broken is None:
                    out = runner.run_case(kind, case)
                    if any(m in out.get('skipped', '') for m in _COLLECTIVE):
                        broken = f"the process group broke in {where} (a collective failed: {out['skipped'][:200]})"
                        with open(os.path.join(work, f'rank{rank}.broken'), 'w') as f:
                            f.write(broken)
                else:
                    out = {'skipped': f"not run: {broken}"}
                tmp = result_path(work, rank, idx) + '.tmp'
                torch.save(out, tmp)
                os.replace(tmp, result_path(work, rank, idx))
        with open(os.path.join(work, f'rank{rank}.unread'), 'w') as f:  # state keys the adapter did not read
            json.dump(sorted(list(k) for k in adapter.unread_state_keys), f)
        if broken is None:
            dist.barrier()
            dist.destroy_process_group()
    except BaseException:  # the driver reads why from here
        with open(os.path.join(work, f'rank{rank}.error'), 'w') as f:
            f.write(traceback.format_exc())
        os._exit(1)
    os._exit(0)


def cases_of(files: List[str], load) -> List[Tuple[str, str, Dict[str, Any], str]]:
    """(file, group kind, case, the file's profile) of every case of files, in order."""
    out = []
    for path in files:
        doc = load(path)
        profile = doc.get('profile', 'nemo') if isinstance(doc, dict) else 'nemo'
        for group in doc['testGroups']:
            kind = group.get('kind') if isinstance(group, dict) else None
            for case in group.get('tests', []) if isinstance(group, dict) else []:
                out.append((path, kind, case, profile))
    return out


# ---------------------------------------------------------------- in the driver


class Ranks:
    """The rank processes of one run: started by start(), always ended by stop()."""

    def __init__(self, world_size: int, cfg: Dict[str, Any]):
        self.world_size, self.cfg = world_size, cfg
        self.work = tempfile.mkdtemp(prefix='muonref-dist.')
        self.port = free_port()
        self.pids: List[int] = []
        self.started = time.monotonic()

    def start(self) -> None:
        import multiprocessing as mp

        ctx = mp.get_context('fork')  # torch is imported once, before any thread pool exists
        self.others = set(_children(os.getpid()))  # the driver's own children, not the run's
        _subreaper()
        self.procs = []
        for r in range(self.world_size):
            p = ctx.Process(
                target=_rank_main, args=(r, self.world_size, self.port, self.cfg, self.work, os.getpid()), daemon=True
            )
            p.start()
            self.procs.append(p)
            self.pids.append(p.pid)

    def stop(self) -> None:
        for p in self.procs:
            if p.is_alive():
                p.terminate()
        end = time.monotonic() + 5
        for p in self.procs:
            p.join(max(0.1, end - time.monotonic()))
        for p in self.procs:
            if p.is_alive():
                p.kill()
                p.join()
        self.end_descendants()

    def end_descendants(self) -> None:
        """Ends what the ranks left behind: their descendants, reparented to this driver (a subreaper) when
        their parents end, SIGTERM then SIGKILL, each reaped; again for those reparented in turn."""
        sig, deadline = signal.SIGTERM, time.monotonic() + 10
        while time.monotonic() < deadline:
            left = [p for p in _children(os.getpid()) if p not in self.others]
            if not left:
                return
            for p in left:
                try:
                    os.kill(p, sig)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
            for p in left:
                try:
                    os.waitpid(p, os.WNOHANG)
                except ChildProcessError:
                    pass
            sig = signal.SIGKILL

    def result_path(self, r: int, idx: int) -> str:
        """Where rank r writes its results of case idx (rank_main's os.replace)."""
        return os.path.join(self.work, f'r{r}.{idx}.pt')

    def rank_cases(self, r: int, n_cases: int) -> int:
        """How many cases rank r wrote its results of, counted from the first."""
        k = 0
        while k < n_cases and os.path.exists(self.result_path(r, k)):
            k += 1
        return k

    def done(self, idx: int) -> bool:
        return all(os.path.exists(self.result_path(r, idx)) for r in range(self.world_size))

    def running(self) -> str:
        out = []
        for r in range(self.world_size):
            try:
                with open(os.path.join(self.work, f'rank{r}.progress')) as f:
                    out.append(f"rank {r} in {f.read().split()[1]}")
            except (OSError, IndexError):
                out.append(f"rank {r} starting")
        return ', '.join(out)

    def wait(self, n_cases: int, case_timeout: float) -> Tuple[int, Optional[str]]:
        """Waits until every rank finished or one failed or hung; returns (cases done, why not all)."""
        finished, last = 0, time.monotonic()
        while True:
            while finished < n_cases and self.done(finished):
                finished += 1
                last = time.monotonic()
            codes = [p.exitcode for p in self.procs]
            if all(c == 0 for c in codes):
                while finished < n_cases and self.done(finished):  # written just before the last exit
                    finished += 1
                if finished == n_cases:
                    return finished, None
                return finished, (
                    f"every rank exited with status 0 after {finished} of {n_cases} cases: the port ended its rank "
                    f"processes (os._exit, a signal handler) before the run was done"
                )
            if finished == n_cases:
                # every result is written: a rank that fails or waits in the closing
                # barrier changes none of them (stop() ends it)
                if all(c is not None for c in codes) or time.monotonic() - last > min(case_timeout, 30.0):
                    return finished, None
                time.sleep(0.05)
                continue
            for r, c in enumerate(codes):
                if c not in (None, 0):
                    why = f"rank {r} stopped (exit status {c})"
                    try:
                        with open(os.path.join(self.work, f'rank{r}.error')) as f:
                            why += ': ' + f.read().strip().splitlines()[-1]
                    except (OSError, IndexError):
                        pass
                    # a rank that ended with status 0 before writing all its results came first: the
                    # others' errors (a peer gone from a collective: "Connection reset by peer") follow
                    # from it, so it is named as the cause (a port calling os._exit(0) in every rank
                    # raced the others' collectives and was reported as their failure)
                    early = [(q, k) for q, d in enumerate(codes) if d == 0
                             for k in [self.rank_cases(q, n_cases)] if k < n_cases]
                    if early:
                        q, k = early[0]
                        why = (f"rank {q} exited with status 0 after {k} of {n_cases} cases: "
                               f"the port ended its rank processes (os._exit, a signal handler) before the run was "
                               f"done; then {why}")
                    return finished, why
            if time.monotonic() - last > case_timeout:
                return finished, (
                    f"no case finished for {case_timeout:g} s ({self.running()}): the port hangs or a rank waits "
                    f"in a collective the others never reach; every rank process was ended"
                )
            time.sleep(0.05)

    def outputs(self, idx: int) -> List[Dict[str, Any]]:
        return [torch.load(self.result_path(r, idx)) for r in range(self.world_size)]

    def cleanup(self) -> None:
        import shutil

        shutil.rmtree(self.work, ignore_errors=True)


# messages of a rank whose collective failed because another rank did not take part: the other
# rank's own error, where it has one, is the cause and comes first
_COLLECTIVE = ('Timed out waiting', 'pair closure', 'Connection closed by peer', 'Connection reset by peer',
               'the process group broke')


def _skip_reason(outs: List[Dict[str, Any]]) -> Optional[str]:
    """Why a case was skipped, from every rank that skipped it: the ranks whose own error is
    not a failed collective first (a rank that raises leaves the others waiting in theirs)."""
    ranks: Dict[str, List[int]] = {}  # each reason with the ranks that gave it, in rank order
    for r, o in enumerate(outs):
        if 'skipped' in o:
            ranks.setdefault(o['skipped'], []).append(r)
    if not ranks:
        return None
    whys = sorted(ranks, key=lambda why: any(m in why for m in _COLLECTIVE))
    return '; '.join(f"rank{'s' if len(ranks[w]) > 1 else ''} {', '.join(map(str, ranks[w]))}: {w}" for w in whys)


def _bits(t: torch.Tensor) -> torch.Tensor:
    """t's bit patterns (NaN and -0 compared exactly)."""
    return t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def _moved(st: Optional[Dict[str, Any]]) -> bool:
    """Whether a state holds a tensor that is not all zeros (a buffer a step wrote)."""
    return st is not None and any(isinstance(v, torch.Tensor) and bool(v.ne(0).any()) for v in st.values())


def _stepper(outs: List[Dict[str, Any]], i: int, owner: int) -> int:
    """The rank whose state and p.grad after the step stand for owned parameter i: the owner
    when a step wrote its state; else the first rank whose state a step wrote (a port may own
    differently, and allocate zero buffers on every rank: spec/vectors.md 2.6); else the owner
    when it holds a state, else the lowest rank that holds one, else the owner."""
    sts = [o['state'][i] for o in outs]
    owner = owner if owner < len(sts) else 0
    if _moved(sts[owner]):
        return owner
    moved = next((r for r, st in enumerate(sts) if _moved(st)), None)
    if moved is not None:
        return moved
    if sts[owner] is not None:
        return owner
    return next((r for r, st in enumerate(sts) if st is not None), owner)


def _cat_states(sts: List[Optional[Dict[str, Any]]], dim: int) -> Optional[Dict[str, Any]]:
    """A split parameter's state: each tensor the concatenation of the ranks' slices."""
    if any(st is None for st in sts):
        return None if all(st is None for st in sts) else sts[0]
    return {k: (torch.cat([st[k] for st in sts], dim=dim) if isinstance(v, torch.Tensor) else v)
            for k, v in sts[0].items()}


def assemble(case: Dict[str, Any], kind: str, outs: List[Dict[str, Any]], world_size: int, encode, where: str,
             disagree: List[str]) -> Dict[str, Any]:
    """One result from the ranks' outputs of a case (module docstring)."""
    why = _skip_reason(outs)
    if why is not None:
        return {'skipped': why}
    first = outs[0]
    if 'params' not in first or not isinstance(first['params'], list) or not first['params'] or not isinstance(
        first['params'][0], torch.Tensor
    ):
        return first  # ns, transpose, error: already encoded
    lay = layout(case, world_size) or [dict(ALONE) for _ in first['params']]
    params, state, grads = [], [], []
    for i, e in enumerate(lay):
        if 'dim' in e:
            params.append(torch.cat([o['params'][i] for o in outs], dim=e['dim']))
            state.append(_cat_states([o['state'][i] for o in outs], e['dim']))
            gs = [o['gradAfter'][i] for o in outs]
            grads.append(None if any(g is None for g in gs) else torch.cat(gs, dim=e['dim']))
            continue
        params.append(first['params'][i])
        if any(o['params'][i].dtype != first['params'][i].dtype or
               not torch.equal(_bits(o['params'][i]), _bits(first['params'][i])) for o in outs[1:]):
            disagree.append(f"{where}: params[{i}]")
        r = _stepper(outs, i, e.get('owner') or 0)
        state.append(outs[r]['state'][i])
        grads.append(outs[r]['gradAfter'][i])
    return {'params': [encode(p) for p in params], 'state': [map_state(st, encode) for st in state],
            'gradAfter': [None if g is None else encode(g) for g in grads]}


def run(world_size: int, cfg: Dict[str, Any], files: List[str], load, encode, case_timeout: float,
        before=None, adapter=None) -> Tuple[List[Dict[str, Any]], Dict[str, Any], Optional[str]]:
    """Runs every case of files over world_size ranks.  before() runs in the driver
    while the ranks start; the state keys no rank's adapter could read are added to
    adapter.unread_state_keys (the driver warns of them).  Returns (results, the
    results file's `distributed` member, why the run ended early or None)."""
    cases = cases_of(files, load)
    ranks = Ranks(world_size, cfg)
    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}

    def end(signum, frame):
        raise SystemExit(128 + signum)

    for s in old:
        signal.signal(s, end)
    try:
        ranks.start()
        if before is not None:
            before()
        finished, why = ranks.wait(len(cases), case_timeout)
        wall = time.monotonic() - ranks.started
        if why is None:  # every case has its results, but a rank's process group broke on the way
            why = next((open(p).read() for p in sorted(glob.glob(os.path.join(ranks.work, 'rank*.broken')))), None)
        for p in glob.glob(os.path.join(ranks.work, 'rank*.unread')) if adapter is not None else []:
            try:
                adapter.unread_state_keys = adapter.unread_state_keys | {tuple(k) for k in json.load(open(p))}
            except (OSError, ValueError):
                pass
        results, disagree = [], []
        for idx, (path, kind, case, _) in enumerate(cases):
            base = os.path.basename(path)
            entry = {'file': base, 'tcId': case.get('tcId')}
            if idx < finished:
                entry.update(assemble(case, kind, ranks.outputs(idx), world_size, encode, f"{base}#{case.get('tcId')}",
                                      disagree))
            else:
                entry['skipped'] = f"not finished at world size {world_size}: {why}"
            results.append(entry)
        info = {'worldSize': world_size, 'backend': 'gloo', 'seconds': round(wall, 2), 'ranksDisagree': disagree}
        return results, info, why
    finally:
        ranks.stop()
        ranks.cleanup()
        for s, h in old.items():
            signal.signal(s, h)
