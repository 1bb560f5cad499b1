"""Distributed ports of muonref's profile `nemo`, written from spec/muon.md and
spec/vectors.md 2.6, for `torch_driver.py --world-size N` (tests/scripts/torch-distributed.sh).

Each class is the test port tests/ports/torch_nemo_port.py (whose element-wise
updates and Newton-Schulz pass every case) distributed over the ranks of the
default process group in one of the ways real ports are:

* KellerMuon: Keller Jordan's distributed `Muon` semantics: the Muon
  parameters of each group sorted by shape, largest first, the list padded
  to a multiple of the world size, rank r updating positions r, r + N, ...
  and the updated parameters all-gathered chunk by chunk.  gloo's
  all_gather needs equal sizes, so each chunk is gathered flattened and
  padded to its largest parameter.
* Zero1Muon: ZeRO-1 owner-computes (Moonlight, Paddle's sharding stage 1,
  dion): parameters owned round robin in the group's order; the owner keeps
  the momentum buffer, computes the update and broadcasts the parameter.
* TensorParallelMuon: Muon matrices split by rows or columns (the driver
  gives each rank its slice, Megatron's `partition_dim`): the momentum is
  updated on the slice, the slices of the Nesterov input are all-gathered
  into the whole matrix, Newton-Schulz runs on it, and each rank keeps its
  slice of the result.

And three faulty ones, each a bug real distributed ports had:

* FaultyPerShardNS: the tensor-parallel port that orthogonalises each
  slice alone (no all-gather): right at world size 1 only;
* FaultyStalePad: Keller's port padding the list with the last parameter
  itself instead of a scratch tensor, so the all-gather of the last chunk
  writes a rank's stale copy over the updated parameter;
* FaultyOrder: Keller's port whose ranks order equal shapes differently
  (odd ranks break ties in reverse), so ranks update and gather different
  parameters at the same position.

FaultyNoBroadcast (ZeRO-1 without the broadcast: each rank holds only its
own updates) tests the driver's check that ranks agree; PreAllocZero1 (zero buffers on every rank) its
choice of the state; RaisingMuon (one rank raises) how it reports a rank's error and a broken group.  HangingMuon (a
rank that never returns from step) and DyingMuon (a rank
that exits in step) test how the driver ends a run.  AdamW parameters are replicated: every rank updates them.

Standard library and torch only.
"""

import os
import sys
import time
from typing import Any, Dict

import torch
import torch.distributed as dist

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the test port
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
from torch_nemo_port import Muon as _Port  # noqa: E402
from torch_nemo_port import zeropower_via_newtonschulz5  # noqa: F401  (the driver's ns and transpose cases)
from torch_dist_any import gather_flat, gather_split, split_slice

__all__ = ['KellerMuon', 'Zero1Muon', 'TensorParallelMuon', 'FaultyPerShardNS', 'FaultyStalePad', 'FaultyOrder',
           'FaultyNoBroadcast', 'PreAllocZero1', 'RaisingMuon', 'HangingMuon', 'DyingMuon']


class _Distributed(_Port):
    def _check_all(self) -> None:
        from torch_nemo_port import _check_gradient

        index = 0
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is not None:
                    _check_gradient(index, p.grad)
                index += 1

    def _split(self, group: Dict[str, Any]):
        muon, other = [], []
        for p in group['params']:
            (muon if self.selects_muon(p, use_muon=group['use_muon'], adam_dim_threshold=group['adam_dim_threshold'])
             else other).append(p)
        return muon, other

    def _update_one(self, p, group) -> None:
        if p.grad is not None:
            self._muon_update(p, p.grad, self.state[p], group)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._check_all()
        for group in self.param_groups:
            muon, other = self._split(group)
            for p in other:  # replicated
                if p.grad is not None:
                    self._adamw_update(p, p.grad, self.state[p], group)
            self._muon_group(muon, group)
        return loss


class KellerMuon(_Distributed):
    def _order(self, muon):
        return sorted(muon, key=lambda p: tuple(p.shape), reverse=True)

    def _padding(self, muon, n):
        return [torch.empty_like(muon[-1]) for _ in range(n)]

    def _muon_group(self, muon, group) -> None:
        if not muon:
            return
        ws, rank = dist.get_world_size(), dist.get_rank()
        params = self._order(muon)
        pad = params + self._padding(params, ws - len(params) % ws)
        for base in range(0, len(params), ws):
            if base + rank < len(params):
                self._update_one(params[base + rank], group)
            gather_flat(pad[base:base + ws], pad[base + rank])


class Zero1Muon(_Distributed):
    def _muon_group(self, muon, group) -> None:
        ws, rank = dist.get_world_size(), dist.get_rank()
        for j, p in enumerate(muon):
            owner = j % ws
            if owner == rank:
                self._update_one(p, group)
            dist.broadcast(p.data, src=owner)


class FaultyNoBroadcast(_Distributed):
    def _muon_group(self, muon, group) -> None:
        ws, rank = dist.get_world_size(), dist.get_rank()
        for j, p in enumerate(muon):
            if j % ws == rank:
                self._update_one(p, group)


class TensorParallelMuon(_Distributed):
    def _orthogonalize_slice(self, matrix: torch.Tensor, p, steps: int) -> torch.Tensor:
        """The whole matrix from the ranks' slices, orthogonalised; this rank's slice of it."""
        o = _Port._orthogonalize(self, gather_split(matrix, p), steps)
        return split_slice(o, p).contiguous()

    def _muon_update(self, param, grad, state, group) -> None:
        if not getattr(param, 'tensor_model_parallel', False):
            return _Port._muon_update(self, param, grad, state, group)
        # the port's update with the whole matrix's Newton-Schulz and scale
        lr, beta, wd = float(group['lr']), float(group['momentum']), float(group['weight_decay'])
        if 'momentum_buffer' not in state:
            state['momentum_buffer'] = torch.zeros_like(param)
        buf = state['momentum_buffer']
        new, update = self._momentum(buf.double(), grad.double(), beta, bool(group['nesterov']))
        orthogonal = self._orthogonalize_slice(update.float(), param, group['ns_steps'])
        from torch_nemo_port import update_scale

        scale = update_scale(torch.Size(param.full_shape), group['scale_mode'])
        decay = self._muon_decay(lr, wd, scale) if wd != 0 else 1.0
        result = decay * param.double() - lr * scale * orthogonal.double()
        buf.copy_(new.float())
        param.copy_(result.float())

    def _muon_group(self, muon, group) -> None:
        for p in muon:  # split ones gather inside; whole ones are replicated
            self._update_one(p, group)


class FaultyPerShardNS(_Distributed):
    """Each rank orthogonalises its slice alone (and scales by the slice's shape)."""

    def _muon_group(self, muon, group) -> None:
        for p in muon:
            self._update_one(p, group)


class FaultyStalePad(KellerMuon):
    def _padding(self, muon, n):
        return [muon[-1]] * n  # the last parameter itself, not a scratch tensor


class FaultyOrder(KellerMuon):
    def _order(self, muon):
        keyed = list(enumerate(muon))
        if dist.get_rank() % 2:  # ties broken in reverse on odd ranks
            keyed.reverse()
        return [p for _, p in sorted(keyed, key=lambda ip: tuple(ip[1].shape), reverse=True)]


class PreAllocZero1(Zero1Muon):
    """Correct: ZeRO-1, but every rank allocates a zero momentum buffer for every Muon parameter before its
    first step (only the owner's moves); the driver must take the state from the rank whose buffer a step
    wrote, not from a rank that merely holds one."""

    def _muon_group(self, muon, group) -> None:
        for p in muon:
            self.state[p].setdefault('momentum_buffer', torch.zeros_like(p))
        super()._muon_group(muon, group)


class RaisingMuon(Zero1Muon):
    """Rank 1 raises in the step of a case with five or more Muon parameters, leaving rank 0 in a broadcast
    that times out: the skipped case must name rank 1's error first, and the later cases (gloo's group is
    broken) be skipped as not run, the driver exiting 3."""

    def _muon_group(self, muon, group) -> None:
        if dist.get_rank() == 1 and len(muon) >= 5:
            raise RuntimeError("rank 1 refuses a group of five matrices")
        super()._muon_group(muon, group)


class HangingMuon(KellerMuon):
    def step(self, closure=None):
        if dist.get_rank() == dist.get_world_size() - 1:
            while True:
                time.sleep(1)
        return super().step(closure)


class DyingMuon(KellerMuon):
    def step(self, closure=None):
        if dist.get_rank() == dist.get_world_size() - 1:
            os._exit(7)
        return super().step(closure)


class QuittingMuon(KellerMuon):
    """Every rank ends its process with status 0 at its first step: the driver must not take that for a run."""

    def step(self, closure=None):
        os._exit(0)


class DetachingMuon(KellerMuon):
    """Rank 0 starts a daemon at its first step (a double fork and setsid: out of the rank's process group and
    session) that would sleep for 10 minutes; its pid goes to $MUONREF_DETACHED_PIDS.  The run passes; the driver
    must end the daemon with the ranks."""

    started = False

    def step(self, closure=None):
        if dist.get_rank() == 0 and not DetachingMuon.started and os.environ.get('MUONREF_DETACHED_PIDS'):
            DetachingMuon.started = True
            import subprocess
            import sys

            subprocess.run([sys.executable, '-c', 'import os, sys, time\n'
                            'if os.fork(): os._exit(0)\n'
                            'os.setsid()\n'
                            'open(sys.argv[1], "a").write(f"{os.getpid()}\\n")\n'
                            'time.sleep(600)\n', os.environ['MUONREF_DETACHED_PIDS']], check=True)
        return super().step(closure)
