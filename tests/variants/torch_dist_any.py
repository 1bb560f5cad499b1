"""Any profile's test port distributed over the ranks of the default process group, for
`torch_driver.py --world-size N` on the profile's `sharded` and `sharded_tp` vectors
(spec/vectors.md 2.6; tests/scripts/torch-distributed.sh, the main job).

The port to distribute is named by the environment variable MUONREF_DIST_PORT, `FILE:CLASS` (a
profile record's test port, spec/profiles/NAME.json `test_port`), read when the optimizer is
constructed; its constructor takes whatever the profile's adapter passes, and each class below
takes the same arguments.  tests/variants/torch_dist_ports.py distributes nemo's port by its internals
(Keller's all-gather, ZeRO-1's broadcast, the tensor-parallel all-gather of the Nesterov input);
these classes use nothing but the port's constructor, `step`, `state` and `param_groups`, so that
every profile with a sharded area runs through the same wiring:

* OwnerComputes (ownership schemes, data parallel): every rank holds every parameter and its
  whole gradient (as after a data-parallel all-reduce) and runs the port's step on all of them,
  which keeps whatever the port computes over the whole model (Megatron's global clipping norm)
  what it is unsharded; then each rank puts back the old values of the Muon parameters that
  another rank owns (`muonref_owner`, set by the driver from the case's layout) and takes the
  owner's new values by broadcast, and shows only the state of what it owns or replicates (p.grad
  of what it does not own is put back too).  So a parameter comes out right on a rank only
  through its owner's broadcast.  OtherOwner: the same with rank owner + 1 mod N computing
  (owning differently from the case, as a port may).
* GatherSlices (splits, tensor parallel): each split parameter (Megatron's `partition_dim`) has a
  whole shadow on every rank, built by gathering the slices; the gradient slices are gathered
  into the shadows' gradients, the port steps the shadows (Newton-Schulz and the shape scale on
  the whole matrix), and each rank keeps its slice of every new value and of its state.

And the faults that real distributed ports had, each failing what the test computes from the
vectors (tests/scripts/torch_dist_test.py):

* NoBroadcast: OwnerComputes without the broadcast (a rank holds only its own updates);
* WrongOwner: the broadcast sent by rank (owner + 1) mod N, which did not compute the update;
* PerShard: the port itself on the slices, each orthogonalised and scaled alone (torch.optim.Muon
  under FSDP without a gather, a tensor-parallel port without the all-gather);
* OwnedOnly: each rank's port holds only what the rank owns and what is replicated (a ZeRO-1 port
  whose optimizer sees its partition alone), the owners' updates broadcast: right for every
  profile whose step is per parameter, wrong where the step computes over the whole model
  (Megatron's clip_grad: the norm of the rank's gradients only).

Standard library and torch only.
"""

import importlib.util
import os
import sys
from typing import Any, Callable, Dict, List, Optional

import torch
import torch.distributed as dist

__all__ = ['OwnerComputes', 'OtherOwner', 'GatherSlices', 'NoBroadcast', 'WrongOwner', 'PerShard', 'OwnedOnly']

_TP_MARKS = ('tensor_model_parallel', 'partition_dim', 'partition_bounds', 'full_shape')
_loaded: Dict[str, Any] = {}


def port_class():
    """The class named by MUONREF_DIST_PORT (FILE:CLASS), its module loaded once per file, with the
    file's folder on sys.path (test ports import their siblings).  Raises RuntimeError when the
    variable is unset or malformed, or the class is not in the file."""
    spec = os.environ.get('MUONREF_DIST_PORT', '')
    path, _, name = spec.rpartition(':')
    if not path or not name:
        raise RuntimeError(f"MUONREF_DIST_PORT={spec!r}: expected FILE:CLASS, the port to distribute")
    path = os.path.abspath(path)
    if path not in _loaded:
        sys.path.insert(0, os.path.dirname(path))
        mspec = importlib.util.spec_from_file_location(f'muonref_dist_port_{len(_loaded)}', path)
        module = importlib.util.module_from_spec(mspec)
        mspec.loader.exec_module(module)
        _loaded[path] = module
    cls = getattr(_loaded[path], name, None)
    if cls is None:
        raise RuntimeError(f"MUONREF_DIST_PORT={spec!r}: {path} has no {name}")
    return cls


def _walk(obj, f: Callable[[torch.nn.Parameter], Any]):
    """obj with every Parameter p in it (in lists, tuples and dict values, at any depth) replaced by f(p)."""
    if isinstance(obj, torch.nn.Parameter):
        return f(obj)
    if isinstance(obj, list):
        return [_walk(x, f) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_walk(x, f) for x in obj)
    if isinstance(obj, dict):
        return {k: _walk(v, f) for k, v in obj.items()}
    return obj


def _parameters(args, kwargs) -> List[torch.nn.Parameter]:
    """The Parameters in the constructor's arguments, in order, each once."""
    seen: List[torch.nn.Parameter] = []
    _walk((args, kwargs), lambda p: seen.append(p) if all(p is not q for q in seen) else None)
    return seen


class _PortAttributes(type):
    """Class attributes an adapter reads from the optimizer class (Paddle's MuonParamInfo) come from the port's."""

    def __getattr__(cls, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return getattr(port_class(), name)


class _Wrapped(metaclass=_PortAttributes):
    """Delegates what the driver and the adapters read (param_groups, state_dict, ...) to the port."""

    _inner: Any = None

    def __getattr__(self, name):
        inner = self.__dict__.get('_inner')
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)


class OwnerComputes(_Wrapped):
    def __init__(self, *args, **kwargs):
        self._params = _parameters(args, kwargs)
        self._inner = port_class()(*args, **kwargs)

    def _owner(self, p) -> Optional[int]:
        """The rank that computes p's update (None: every rank, a replicated parameter)."""
        return getattr(p, 'muonref_owner', None)

    def _sender(self, p) -> int:
        return self._owner(p)

    def _broadcast(self, p) -> None:
        dist.broadcast(p.data, src=self._sender(p))

    @property
    def state(self):
        rank = dist.get_rank()
        return {p: s for p, s in self._inner.state.items() if self._owner(p) in (None, rank)}

    def step(self, closure=None):
        rank = dist.get_rank()
        elsewhere = [p for p in self._params if self._owner(p) not in (None, rank)]
        old = [(p.detach().clone(), None if p.grad is None else p.grad.clone()) for p in elsewhere]
        loss = self._inner.step(closure)
        with torch.no_grad():
            for p, (v, g) in zip(elsewhere, old):  # as if this rank had not stepped p: value and p.grad
                p.copy_(v)
                p.grad = g
            for p in self._params:
                if self._owner(p) is not None:
                    self._broadcast(p)
        return loss


class OtherOwner(OwnerComputes):
    """Correct: owns differently from the case's layout (rank owner + 1 mod N computes and broadcasts), as
    spec/vectors.md 2.6 allows: the driver must take the state and p.grad after the step from that rank."""

    def _owner(self, p) -> Optional[int]:
        o = getattr(p, 'muonref_owner', None)
        return None if o is None else (o + 1) % dist.get_world_size()


class NoBroadcast(OwnerComputes):
    def _broadcast(self, p) -> None:
        pass


class WrongOwner(OwnerComputes):
    def _sender(self, p) -> int:
        return (self._owner(p) + 1) % dist.get_world_size()


def split_slice(t: torch.Tensor, p) -> torch.Tensor:
    """This rank's slice of the whole t of the split parameter p."""
    lo, hi = p.partition_bounds[dist.get_rank()], p.partition_bounds[dist.get_rank() + 1]
    return t.narrow(p.partition_dim, lo, hi - lo)


def gather_flat(outs: List[torch.Tensor], mine: torch.Tensor) -> None:
    """all_gather into outs of tensors of different sizes (gloo's needs equal ones): each
    flattened and padded to the largest."""
    width = max(1, max(t.numel() for t in outs))
    buf = torch.zeros(width, dtype=mine.dtype)
    buf[: mine.numel()] = mine.reshape(-1)
    got = [torch.empty(width, dtype=mine.dtype) for _ in outs]
    dist.all_gather(got, buf)
    for t, g in zip(outs, got):
        t.copy_(g[: t.numel()].reshape(t.shape))


def gather_split(t: torch.Tensor, p) -> torch.Tensor:
    """The whole tensor from every rank's slice t of the split parameter p."""
    d, bounds, pieces = p.partition_dim, p.partition_bounds, []
    for r in range(dist.get_world_size()):
        shape = list(p.full_shape)
        shape[d] = bounds[r + 1] - bounds[r]
        pieces.append(torch.empty(shape, dtype=t.dtype))
    gather_flat(pieces, t.contiguous())
    return torch.cat(pieces, dim=d)


class GatherSlices(_Wrapped):
    def __init__(self, *args, **kwargs):
        self._split: List[tuple] = []  # (the rank's slice, its whole shadow)

        def shadow(p):
            if not getattr(p, 'tensor_model_parallel', False):
                return p
            for q, w in self._split:
                if q is p:
                    return w
            w = torch.nn.Parameter(gather_split(p.detach(), p))
            for k, v in vars(p).items():  # the driver's name and any tag a port reads, not the split
                if k not in _TP_MARKS and not k.startswith('_'):
                    setattr(w, k, v)
            self._split.append((p, w))
            return w

        args, kwargs = _walk((args, kwargs), shadow)
        self._inner = port_class()(*args, **kwargs)

    @property
    def state(self):
        out = dict(self._inner.state)
        for p, w in self._split:
            st = out.pop(w, None)
            if st is not None:
                out[p] = {k: (split_slice(v, p) if isinstance(v, torch.Tensor) and v.shape == w.shape else v)
                          for k, v in st.items()}
        return out

    def step(self, closure=None):
        for p, w in self._split:
            w.grad = None if p.grad is None else gather_split(p.grad, p)
        loss = self._inner.step(closure)
        with torch.no_grad():
            for p, w in self._split:
                p.copy_(split_slice(w.detach(), p))
        return loss


def _mine(obj, rank: int):
    """obj with the Parameters another rank owns left out of every list (at any depth)."""
    if isinstance(obj, list):
        return [_mine(x, rank) for x in obj
                if not (isinstance(x, torch.nn.Parameter) and getattr(x, 'muonref_owner', None) not in (None, rank))]
    if isinstance(obj, tuple):
        return tuple(_mine(x, rank) for x in obj)
    if isinstance(obj, dict):
        return {k: _mine(v, rank) for k, v in obj.items()}
    return obj


class OwnedOnly(_Wrapped):
    def __init__(self, *args, **kwargs):
        self._params = _parameters(args, kwargs)
        args, kwargs = _mine((args, kwargs), dist.get_rank())
        self._inner = port_class()(*args, **kwargs) if _parameters(args, kwargs) else None

    @property
    def state(self):
        return {} if self._inner is None else self._inner.state

    def step(self, closure=None):
        loss = self._inner.step(closure) if self._inner is not None else None
        with torch.no_grad():
            for p in self._params:
                if getattr(p, 'muonref_owner', None) is not None:
                    dist.broadcast(p.data, src=p.muonref_owner)
        return loss


class PerShard(metaclass=_PortAttributes):
    """The port itself, constructed on the slices the driver gives this rank."""

    def __new__(cls, *args, **kwargs):
        return port_class()(*args, **kwargs)
