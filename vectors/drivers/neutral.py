"""The driver's neutral mode: every bf16 tensor operation evaluated as spec/muon.md section 7 says.

spec/muon.md section 7 defines a bf16 operation as: computed with products
accumulated in at least binary32, the scalars entering as binary32 values,
the result rounded once to bf16 (round to nearest even).  PyTorch 1.13 on
the CPU does otherwise in places (platform_probe.py measures where): it
rounds a Python scalar to bf16 before multiplying a bf16 tensor, and its
small bf16 matmuls accumulate in less than binary32.  A port run there
fails cases for the platform's arithmetic, not for its own logic.

`Neutral` is a TorchDispatchMode under which every aten operation that has
a bf16 tensor argument and computes something is evaluated as follows:

1. each bf16 tensor argument is converted to a contiguous float32 tensor
   (exact), whatever its strides;
2. the operation runs on those (Python scalars enter as binary32: PyTorch's
   float32 kernels compute in float32);
3. every floating result whose dtype would have been bf16 (found by running
   the operation on meta tensors of the original dtypes and strides) is
   rounded once to bf16 (`.to(torch.bfloat16)`, nearest even); results of
   other dtypes (a float32 tensor times a bf16 one is float32) are kept;
4. an in-place or `out=` operation writes the rounded result back into its
   bf16 tensor (`copy_`) and returns that tensor;
5. `addmm`, `baddbmm`, `addbmm`, `addmv` with `beta=0` run as a zero input
   with `beta=1` (the same value: PyTorch documents that with beta 0 "input
   will be ignored, and nan and inf in it will not be propagated"): PyTorch
   1.13 CPU's `baddbmm` with `beta=0` propagates them, and intermittently
   returns non-finite values even on a zero input (timm's batched
   Newton-Schulz on `torch.empty` memory, spec/profiles/timm.md 9a).  This
   rule holds in every dtype: float32's kernel has the same defect.

6. an operation whose floating tensor arguments mix bf16 with another dtype first runs as
   written on empty tensors of the same shapes and dtypes (`torch.empty_like`, no values
   read): PyTorch refuses some such mixes on every platform (`lerp_` of a float32 buffer
   toward a bf16 gradient: "expected dtype c10::BFloat16 for `end` but got dtype float"),
   and where it refuses, the mode raises the same error instead of computing in binary32,
   so a port that crashes raw on every platform does not pass in neutral mode
   (tests/scripts/torch-neutral.sh).

Operations that only move, view or create data (views of every kind,
copies and dtype conversions, `*_like` factories, fills, `.item()`,
random fills) run unchanged: they do no arithmetic, and a view must stay a
view.  Operations without a bf16 tensor argument run unchanged (but for
rule 5): float32
and float64 arithmetic is the platform's own (and the same on every
platform up to the order of float32 accumulation).

A port's code runs unchanged otherwise: the mode changes how each bf16
operation is evaluated, not which operations run.  So a port judged in
neutral mode is judged for its logic (its order of operations, its
formats, its coefficients), and a port that fails only in raw mode fails
for the platform's arithmetic.

A norm is one operation.  PyTorch 1.13 decomposes `norm` with a `dim`
argument (`X.norm(dim=(-2, -1), keepdim=True)`, Keller's per-matrix norm)
into bf16 `mul`, `sum` and `sqrt` before a dispatch mode sees it, which
would round the squares and the sum to bf16 one by one; `Neutral` also
enters a TorchFunctionMode (`_NormAsOne`) that evaluates every norm
function on a bf16 tensor in float32 and rounds the norm once, as the
plain `X.norm()` (one aten `norm`) already is.

Standard library and torch only (PyTorch 1.13's
torch.utils._python_dispatch.TorchDispatchMode and
torch.overrides.TorchFunctionMode).
"""

from typing import Any, List, Optional

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

BF16 = torch.bfloat16
F32 = torch.float32

# aten operations (overload packet names) that do no arithmetic: they run as they are
PASS_THROUGH = frozenset(
    (
        '_to_copy', 'to', 'copy_', 'clone', 'contiguous', '_copy_from', '_copy_from_and_resize',
        'empty_like', 'zeros_like', 'ones_like', 'full_like', 'rand_like', 'randn_like',
        'new_empty', 'new_empty_strided', 'new_zeros', 'new_ones', 'new_full',
        'empty', 'empty_strided', 'zeros', 'ones', 'full', 'scalar_tensor',
        'zero_', 'fill_', 'lift', 'lift_fresh', 'lift_fresh_copy', 'detach_', 'set_', 'resize_', 'resize_as_',
        '_local_scalar_dense', 'item', 'is_nonzero', 'equal', 'is_same_size', '_has_compatible_shallow_copy_type',
        'normal_', 'uniform_', 'bernoulli_', 'random_', 'exponential_', 'geometric_', 'cauchy_', 'log_normal_',
        'to_sparse', 'to_dense', '_to_dense', 'record_stream',
    )
)


# products with an input term beta * input: with beta = 0 the input is ignored ("nan and inf in it
# will not be propagated", torch.addmm/baddbmm docs), which PyTorch 1.13 CPU's baddbmm does not honour
BETA_ZERO_IGNORES_INPUT = frozenset(('addmm', 'baddbmm', 'addbmm', 'addmv'))


def _is_bf16(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.dtype == BF16


def _any_bf16(x: Any) -> bool:
    """Whether x holds a bf16 tensor: x itself, or at any depth inside its lists, tuples and dicts
    (the containers torch.utils._pytree flattens; one walk, no flattened copy: this runs for every
    operation under the mode)."""
    if isinstance(x, torch.Tensor):
        return x.dtype == BF16
    if isinstance(x, dict):
        x = x.values()
    elif not isinstance(x, (list, tuple)):
        return False
    for y in x:
        if isinstance(y, torch.Tensor):
            if y.dtype == BF16:
                return True
        elif isinstance(y, (list, tuple, dict)) and _any_bf16(y):
            return True
    return False


def _map(fn, x: Any) -> Any:
    """tree_map(fn, x) for the containers of aten arguments: plain tuples, lists and dicts walked
    here (the same result without pytree's per-leaf bookkeeping, most of the mode's own time),
    any other container (a namedtuple, an OrderedDict) by tree_map itself."""
    t = type(x)
    if t is tuple:
        return tuple([_map(fn, y) for y in x])
    if t is list:
        return [_map(fn, y) for y in x]
    if t is dict:
        return {k: _map(fn, v) for k, v in x.items()}
    if isinstance(x, (tuple, list, dict)):
        return tree_map(fn, x)
    return fn(x)


def _leaves(x: Any, out: List[Any]) -> List[Any]:
    """The leaves of x in tree_flatten's order (plain tuples, lists and dicts walked here, any
    other container by tree_flatten), appended to out."""
    t = type(x)
    if t is tuple or t is list:
        for y in x:
            _leaves(y, out)
    elif t is dict:
        for v in x.values():
            _leaves(v, out)
    elif isinstance(x, (tuple, list, dict)):
        out.extend(tree_flatten(x)[0])
    else:
        out.append(x)
    return out


def _is_view(func) -> bool:
    """An operation whose result aliases an input without writing it (t, view, select, ...)."""
    return any(r.alias_info is not None and not r.alias_info.is_write for r in func._schema.returns)


def _write_slots(func) -> List[Any]:
    """(position or None, name) of each argument the operation writes, in schema order (position
    None: keyword-only)."""
    slots = []
    pos = 0
    for a in func._schema.arguments:
        slot = (None, a.name) if a.kwarg_only else (pos, a.name)
        if not a.kwarg_only:
            pos += 1
        if a.alias_info is not None and a.alias_info.is_write:
            slots.append(slot)
    return slots


class _OpFacts:
    """What the schema says of an operation, read once per operation (OpOverload): whether it
    runs unchanged (no arithmetic, or a view), which arguments it writes, and whether it has an
    input term beta * input (rule 5)."""

    __slots__ = ('unchanged', 'slots', 'beta_input')

    def __init__(self, func):
        self.unchanged = func.overloadpacket.__name__ in PASS_THROUGH or _is_view(func)
        self.slots = _write_slots(func)
        self.beta_input = func.overloadpacket.__name__ in BETA_ZERO_IGNORES_INPUT


_FACTS = {}


def _facts(func) -> _OpFacts:
    facts = _FACTS.get(func)
    if facts is None:
        facts = _FACTS[func] = _OpFacts(func)
    return facts


def _written(func, args, kwargs) -> List[Any]:
    """The argument values the operation writes (self of an in-place op, out= tensors), in schema order."""
    out = []
    for pos, name in _facts(func).slots:
        if pos is not None and pos < len(args):
            out.append(args[pos])
        elif name in kwargs:
            out.append(kwargs[name])
    return out


def _upcast(x: Any) -> Any:
    """A bf16 tensor as a contiguous float32 tensor (exact); anything else unchanged."""
    if _is_bf16(x):
        return x.to(F32, memory_format=torch.contiguous_format)
    return x


def _meta(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return torch.empty_strided(tuple(x.shape), tuple(x.stride()), dtype=x.dtype, device='meta')
    return x


def _signature(x: Any) -> Any:
    """What the run on meta tensors sees of x: each tensor's dtype, shape, strides and layout, every
    other leaf itself, in x's structure; raises TypeError where a leaf is not hashable (and
    RuntimeError for a tensor without strides)."""
    if isinstance(x, torch.Tensor):
        return (x.dtype, tuple(x.shape), x.stride(), x.layout)
    t = type(x)
    if t is tuple or t is list:
        return (t, tuple([_signature(y) for y in x]))
    if t is dict:
        return (t, tuple((k, _signature(v)) for k, v in x.items()))
    hash(x)
    return (t, x)


# (operation, signature of its arguments) -> its result dtypes: the run on meta tensors is a
# function of exactly that signature, and the same operations recur on the same shapes (every
# Newton-Schulz step, every optimizer step)
_DTYPES: dict = {}


def _result_dtypes(func, args, kwargs) -> Optional[List[Optional[torch.dtype]]]:
    """The dtypes of the operation's results as PyTorch would give them, from a run on meta
    tensors (None where a result is not a tensor); None when the operation has no meta kernel."""
    try:
        key = (func, _signature(args), _signature(kwargs))
    except Exception:  # an unhashable leaf; a tensor without strides (sparse): run on meta as always
        key = None
    if key is not None:
        hit = _DTYPES.get(key)
        if hit is not None:
            return hit
    try:
        out = func(*_map(_meta, args), **_map(_meta, kwargs))
    except Exception:
        return None
    dtypes = [t.dtype if isinstance(t, torch.Tensor) else None for t in _leaves(out, [])]
    if key is not None:
        _DTYPES[key] = dtypes
    return dtypes


def _fallback_dtype(args, kwargs) -> torch.dtype:
    """Without a meta kernel: bf16 unless a float32/float64 tensor of at least one dimension
    takes part (type promotion lets 0-dim tensors and Python scalars not widen the result)."""
    flat, _ = tree_flatten((args, kwargs))
    wide = [t for t in flat if isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != BF16 and t.dim() > 0]
    return max((t.dtype for t in wide), key=lambda d: torch.finfo(d).bits) if wide else BF16


# the norm functions that PyTorch 1.13 may decompose before dispatch
NORM_FUNCTIONS = frozenset(
    f for f in (torch.Tensor.norm, torch.norm, torch.functional.norm, torch.linalg.norm,
                torch.linalg.vector_norm, torch.linalg.matrix_norm) if f is not None
)


class _NormAsOne(TorchFunctionMode):
    """A norm of a bf16 tensor computed in float32 and rounded once to bf16 (see the module)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        # every torch function of the port comes here: the cheap test first
        if func in NORM_FUNCTIONS and _any_bf16((args, kwargs)) and kwargs.get('dtype') is None \
                and kwargs.get('out') is None:
            out = func(*tree_map(_upcast, args), **tree_map(_upcast, kwargs))
            return out.to(BF16) if isinstance(out, torch.Tensor) and out.dtype == F32 else out
        return func(*args, **kwargs)


def _mixed_bf16(args, kwargs) -> bool:
    """Whether the floating tensor arguments mix bf16 with another dtype (rule 6)."""
    flat = _leaves(kwargs, _leaves(args, []))
    dtypes = {t.dtype for t in flat if isinstance(t, torch.Tensor) and t.is_floating_point()}
    return BF16 in dtypes and len(dtypes) > 1


def _dtype_check(func, args, kwargs) -> None:
    """Rule 6: the operation as written, on empty tensors of the arguments' shapes and dtypes;
    raises the RuntimeError PyTorch raises for the dtypes (a message naming a dtype or scalar
    type), ignores any other outcome (the values are not the arguments')."""
    def blank(x):
        return torch.empty_like(x) if isinstance(x, torch.Tensor) and x.layout == torch.strided else x
    try:
        func(*tree_map(blank, args), **tree_map(blank, kwargs))
    except RuntimeError as exc:
        text = str(exc)
        if 'dtype' in text or 'scalar type' in text:
            raise
    except Exception:
        pass


def _beta_zero_as_zero_input(func, args, kwargs):
    """Rule 5: an `addmm`-like operation with beta = 0 as a zero input with beta = 1 (0 + alpha P,
    the same value, and a kernel path without 1.13 CPU's defect, spec/profiles/timm.md 9a); any
    other call as it is."""
    if kwargs.get('beta', 1) == 0 and args and isinstance(args[0], torch.Tensor) and _facts(func).beta_input:
        return (torch.zeros_like(args[0]),) + tuple(args[1:]), dict(kwargs, beta=1)
    return args, kwargs


class Neutral(TorchDispatchMode):
    """Under `with Neutral():` every bf16 operation computes in binary32 and rounds once (see the module)."""

    def __init__(self):
        super().__init__()
        self.ops = 0  # how many operations were re-evaluated (a test's check that the mode did work)
        self._norms = _NormAsOne()

    def __enter__(self):
        self._norms.__enter__()
        try:
            return super().__enter__()
        except BaseException:
            self._norms.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb):
        try:
            return super().__exit__(exc_type, exc, tb)
        finally:
            self._norms.__exit__(exc_type, exc, tb)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not _any_bf16(args) and not _any_bf16(kwargs):
            # rule 5 in every dtype: 1.13 CPU's float32 baddbmm has the defect too (timm's batched
            # Newton-Schulz in float32 read NaN from torch.empty memory, 4 of 13 timm_conv cases in
            # one run of 2026-12-03)
            args, kwargs = _beta_zero_as_zero_input(func, args, kwargs)
            return func(*args, **kwargs)
        if _facts(func).unchanged:
            return func(*args, **kwargs)
        self.ops += 1
        if _mixed_bf16(args, kwargs):
            _dtype_check(func, args, kwargs)  # rule 6
        dtypes = _result_dtypes(func, args, kwargs)
        written = _written(func, args, kwargs)
        up_args = _map(_upcast, args)
        up_kwargs = _map(_upcast, kwargs)
        up_args, up_kwargs = _beta_zero_as_zero_input(func, up_args, up_kwargs)  # rule 5
        out = func(*up_args, **up_kwargs)
        if written:
            # the float32 stand-ins of the written bf16 tensors hold the result: round it into them
            up_written = _written(func, up_args, up_kwargs)
            if len(written) == 1 and isinstance(written[0], torch.Tensor) and out is up_written[0]:
                # the usual in-place operation (x.mul_(...)): it returns the tensor it wrote
                if written[0] is not out:
                    written[0].copy_(out)
                return written[0]
            for orig, up in zip(written, up_written):
                if isinstance(orig, (list, tuple)):
                    for o, u in zip(orig, up):
                        if o is not u:
                            o.copy_(u)
                elif orig is not up:
                    orig.copy_(up)
            # an in-place or out= operation returns the tensors it wrote
            outs, spec = tree_flatten(out)
            ups, _ = tree_flatten(up_written)
            origs, _ = tree_flatten(written)
            mapped = []
            for t in outs:
                hit = [o for o, u in zip(origs, ups) if u is t]
                mapped.append(hit[0] if hit else t)
            return tree_unflatten(mapped, spec)
        if isinstance(out, torch.Tensor) and dtypes is not None and len(dtypes) == 1:
            # one result: the general case below, without flattening
            want = dtypes[0]
            if out.is_floating_point() and want is not None and want != out.dtype:
                out = out.to(want)  # float32 -> bf16: round to nearest even, once
            return out
        outs, spec = tree_flatten(out)
        fallback = _fallback_dtype(args, kwargs) if dtypes is None else None
        rounded = []
        for i, t in enumerate(outs):
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                want = dtypes[i] if dtypes is not None and i < len(dtypes) and dtypes[i] is not None else fallback
                if want is not None and want != t.dtype:
                    t = t.to(want)  # float32 -> bf16: round to nearest even, once
            rounded.append(t)
        return tree_unflatten(rounded, spec)
