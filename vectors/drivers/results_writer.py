#!/usr/bin/python3
"""Runs any Muon implementation over muonref's golden vectors and writes a results file.

Standard library only: no torch, no numpy.  A port in any framework
(Paddle, JAX/optax, Keras, ...) supplies a few callbacks on plain Python
values and this module does the rest: it reads the vector files
(spec/vectors.md), runs every case of every kind (step, ns, transpose,
error) and writes the results file of spec/vectors.md section 4, which
`muonref check --results RESULTS.json VECTORS...` judges.

    import results_writer as rw

    rw.write_results('results.json', ['vectors/nemo'],
                     make_optimizer=..., step=..., params=..., state=...,
                     newton_schulz=..., export_state=..., import_state=...,
                     implementation='my port 1.2 on JAX 0.4', ns_format='bf16')

The callbacks (only the first three are required):

make_optimizer(groups)
    Build a fresh optimizer.  `groups` is a list of parameter groups, in
    order; each is a dict
        {'options': {spec name: Python value, ...},
         'params': [{'index': i, 'name': str, 'init': Tensor, 'complex': bool}, ...]}
    `options` holds the vector's options by their spec names
    (spec/vectors.md section 3) as Python values: reals are floats
    (float('nan') etc. for "nan", "inf", "-inf"), ns_steps and
    adam_dim_threshold ints, adam_betas a tuple, nesterov a bool, scale_mode a
    str, use_muon None/True/False; a deliberately wrong value in an error case
    is passed on unchanged so that the port can refuse it.  `index` is the
    parameter's position in the case (the position of its gradient in
    `step` and of its value in `params()`), `init` its initial value (an f32
    Tensor with the parameter's shape; a bf16 Tensor for a bf16 parameter,
    spec/vectors.md 2.1, which the port creates in bf16 and whose gradients
    are bf16 Tensors), `complex` True when a later gradient
    of it is complex (a framework that ties a gradient's dtype to its
    parameter's makes such a parameter complex with `init` as real part).
    Raise an exception to refuse the options or shapes (error cases): its
    str() is the error message judged.
step(grads)
    One optimizer step.  grads[i] is parameter i's gradient: an f32 Tensor,
    or None for "no gradient" (PyTorch: p.grad = None).  Error cases also
    use two markings (spec/vectors.md section 2.1): a Tensor with
    `layout == 'sparse'` (the same values, meant as a sparse gradient) and a
    Tensor with `dtype == 'c64'` (a complex gradient: values are zeros).
    Raise to refuse a gradient.
params()
    Every parameter's current value, in index order.
state()            (optional)
    Every parameter's state, in index order: None (no state), or a dict
    {'step': int, 'momentum_buffer': T} (Muon) or
    {'step': int, 'exp_avg': T, 'exp_avg_sq': T} (AdamW); other keys are
    ignored.  A state without 'step' gets the number of steps in which the
    parameter received a gradient (spec/muon.md section 11), as
    torch_driver.py does for Muon states (Paddle and Keras keep no step).
    Without this callback the state is not written and not judged.
newton_schulz(x, steps)   (optional)
    The port's Newton-Schulz function on the f32 matrix Tensor x, with
    `steps` steps.  Without it, ns and transpose cases are written as
    skipped (the judge counts them as failed).
export_state() and import_state(saved)   (optional, both or neither)
    For `roundTripAfter` cases: after step k the writer calls
    saved = export_state(), reads params(), calls make_optimizer(groups) with
    those values as `init`, then import_state(saved), and runs the remaining
    steps.  `saved` is opaque to the writer: whatever export_state returns
    (a state dict, a serialized checkpoint).  Without these callbacks such
    cases are written as skipped, with the reason.  With `roundTripDtype`
    (spec/vectors.md 2.1) the `init` values given to make_optimizer are
    converted to that dtype ('bf16' Tensors: the model loaded in bf16), and
    import_state must convert the state as the port's own loading does.
set_options(index, options)   (optional)
    For steps that set options (format 2, spec/vectors.md 2.8: the
    `schedule` files): before such a step the writer calls it once per
    parameter group that changes, with the group's index (its position in
    make_optimizer's `groups`) and a dict {spec name: Python value} of the
    changed options only (as `options` above), which the port sets as a
    scheduler does (PyTorch: optimizer.param_groups[index].update(options)).
    The change stays for the later steps.  Without this callback such cases
    are written as skipped, with the reason.

Values returned by the callbacks (params, state buffers, NS outputs) may be
a Tensor, a nested list of numbers (row-major, shape inferred), a number
(0-dim) or any object with a tolist() method (numpy, JAX, Paddle, torch
arrays).  An array whose dtype is bfloat16 (its str() ends so) is written
as bf16.  Everything else but a Tensor of dtype 'bf16' or 'f64' is written as
f32: the value is rounded to binary32 by struct (exact for float32 and
bfloat16 values, which is what ports return).

Tensor (defined here): dtype ('f32', 'f64', 'bf16', or 'c64' for the
marking), shape (tuple of ints), values (flat row-major list of Python
floats, exact), layout ('dense' or 'sparse'), bits (the IEEE bit patterns
as read, for a bit-exact copy: NaN payloads).  tolist() gives the nested
lists; transpose() the transposed matrix; Tensor.from_nested(obj) builds one.

Command line: `results_writer.py GLUE.py OUT.json VECTORS...` imports GLUE.py,
which must define make_optimizer, step and params (and may define the
optional callbacks, IMPLEMENTATION and NS_FORMAT), and writes OUT.json.

Exit status of the command: 0 the results were written (whatever the cases
gave); 2 bad command-line input or an unreadable vector file.
"""

import importlib.util
import json
import math
import os
import struct
import sys
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence

__all__ = ['Tensor', 'UsageError', 'write_results', 'run_vectors', 'read_vector_files', 'main']

REAL_OPTIONS = ('lr', 'momentum', 'weight_decay', 'adam_eps', 'adam_lr_ratio')
INT_OPTIONS = ('ns_steps', 'adam_dim_threshold')
NONFINITE = {'nan': math.nan, 'inf': math.inf, '-inf': -math.inf}

# dtype -> (struct code of the bit pattern, hex digits)
_BITS = {'f32': ('I', 8), 'f64': ('Q', 16), 'bf16': ('H', 4)}


class UsageError(Exception):
    """Bad input: an unreadable vector file, a bad command line (exit 2)."""


# ---------------------------------------------------------------- tensors


def _f32_bits(x: float) -> int:
    return struct.unpack('>I', struct.pack('>f', x))[0]


def _bits_to_value(dtype: str, b: int) -> float:
    if dtype == 'f32':
        return struct.unpack('>f', struct.pack('>I', b))[0]
    if dtype == 'f64':
        return struct.unpack('>d', struct.pack('>Q', b))[0]
    return struct.unpack('>f', struct.pack('>I', b << 16))[0]  # bf16: the upper half of an f32


def _value_to_bits(dtype: str, x: float) -> int:
    if dtype == 'f64':
        return struct.unpack('>Q', struct.pack('>d', x))[0]
    try:
        b = _f32_bits(x)
    except OverflowError:  # finite beyond binary32: rounds to infinity
        b = _f32_bits(math.copysign(math.inf, x))
    if dtype == 'f32':
        return b
    if (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF):  # NaN stays NaN
        return (b >> 16) | 0x40
    return (b + 0x7FFF + ((b >> 16) & 1)) >> 16  # round to nearest even


def _converted(t: 'Tensor', dtype: str) -> 'Tensor':
    """t converted to dtype 'bf16' (each value rounded to nearest even) or 'f32' (exact from bf16):
    a model loaded in another dtype at a state round trip (`roundTripDtype`)."""
    return Tensor(dtype, t.shape, [_bits_to_value(dtype, _value_to_bits(dtype, x)) for x in t.values])


class Tensor:
    """A small dense array: dtype, shape, flat row-major values (Python floats)."""

    __slots__ = ('dtype', 'shape', 'values', 'layout', 'bits')

    def __init__(self, dtype: str, shape: Sequence[int], values: List[float], layout: str = 'dense',
                 bits: Optional[List[int]] = None):
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)
        self.values = list(values)
        self.layout = layout
        self.bits = bits
        if len(self.values) != self.numel:
            raise ValueError(f"a tensor of shape {self.shape} needs {self.numel} values, got {len(self.values)}")

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Tensor({self.dtype!r}, {self.shape}, layout={self.layout!r})"

    def tolist(self) -> Any:
        """Nested lists (a float for a 0-dim tensor)."""
        if not self.shape:
            return self.values[0]

        def build(offset: int, dims: Sequence[int]) -> Any:
            if len(dims) == 1:
                return self.values[offset:offset + dims[0]]
            step = 1
            for d in dims[1:]:
                step *= d
            return [build(offset + i * step, dims[1:]) for i in range(dims[0])]

        return build(0, self.shape)

    def transpose(self) -> 'Tensor':
        """The transpose of a matrix."""
        if self.ndim != 2:
            raise ValueError(f"transpose needs a matrix, got shape {self.shape}")
        r, c = self.shape
        vals = [self.values[i * c + j] for j in range(c) for i in range(r)]
        bits = None if self.bits is None else [self.bits[i * c + j] for j in range(c) for i in range(r)]
        return Tensor(self.dtype, (c, r), vals, self.layout, bits)

    def copy(self) -> 'Tensor':
        return Tensor(self.dtype, self.shape, self.values, self.layout, None if self.bits is None else list(self.bits))

    @staticmethod
    def from_nested(obj: Any, dtype: str = 'f32') -> 'Tensor':
        """A Tensor from a Tensor, nested lists, a number or anything with tolist()."""
        if isinstance(obj, Tensor):
            return obj
        if hasattr(obj, 'tolist') and not isinstance(obj, (list, tuple)):
            # a framework array whose dtype is bfloat16 (torch.bfloat16, jnp.bfloat16, paddle.bfloat16)
            # stays bf16: its values are exact as floats, and a bf16 parameter must come back bf16
            if str(getattr(obj, 'dtype', '')).endswith('bfloat16'):
                dtype = 'bf16'
            obj = obj.tolist()
        shape: List[int] = []
        probe = obj
        while isinstance(probe, (list, tuple)):
            shape.append(len(probe))
            if not probe:
                break
            probe = probe[0]
        flat: List[float] = []

        def walk(x: Any, depth: int) -> None:
            if depth == len(shape):
                if isinstance(x, (list, tuple)) or isinstance(x, bool) or not isinstance(x, (int, float)):
                    raise TypeError(f"expected a number at depth {depth}, got {type(x).__name__}")
                flat.append(float(x))
                return
            if not isinstance(x, (list, tuple)) or len(x) != shape[depth]:
                raise ValueError(f"ragged nested list: expected {shape[depth]} entries at depth {depth}")
            for y in x:
                walk(y, depth + 1)

        walk(obj, 0)
        return Tensor(dtype, shape, flat)


def decode_tensor(obj: Any, where: str) -> Tensor:
    """A tensor of spec/vectors.md section 1, bit for bit (also the c64 and sparse markings)."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a tensor object, got {type(obj).__name__}")
    dtype = obj.get('dtype')
    shape = obj.get('shape')
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise ValueError(f"{where}: shape must be a list of non-negative integers, got {shape!r}")
    layout = obj.get('layout', 'dense')
    if layout == 'strided':
        layout = 'dense'
    if layout not in ('dense', 'sparse'):
        raise ValueError(f"{where}: unknown layout {layout!r}, expected 'sparse' or none")
    numel = 1
    for d in shape:
        numel *= d
    if dtype == 'c64':  # a complex gradient: its values are not stored
        return Tensor('c64', shape, [0.0] * numel, layout)
    if dtype not in _BITS:
        raise ValueError(f"{where}: unknown dtype {dtype!r}, expected one of {tuple(_BITS)}")
    code, digits = _BITS[dtype]
    text = obj.get('hex')
    if not isinstance(text, str):
        raise ValueError(f"{where}: hex must be a string")
    if len(text) != numel * digits:
        raise ValueError(f"{where}: hex has {len(text)} digits, shape {shape} of {dtype} needs {numel * digits}")
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"{where}: hex holds a character that is not a hex digit") from None
    bits = list(struct.unpack(f'>{numel}{code}', raw))
    return Tensor(dtype, shape, [_bits_to_value(dtype, b) for b in bits], layout, bits)


def encode_tensor(obj: Any) -> Dict[str, Any]:
    """The results-file form of a value returned by a callback."""
    t = Tensor.from_nested(obj)
    dtype = t.dtype if t.dtype in _BITS else 'f32'
    if t.bits is not None and t.dtype == dtype:
        bits = t.bits
    else:
        bits = [_value_to_bits(dtype, v) for v in t.values]
    code, digits = _BITS[dtype]
    return {'dtype': dtype, 'shape': list(t.shape), 'hex': struct.pack(f'>{len(bits)}{code}', *bits).hex()}


# ---------------------------------------------------------------- options


def canonical_options(options: Dict[str, Any]) -> Dict[str, Any]:
    """The options of a vector as Python values (the same reading as adapters.canonical)."""
    out = {}
    for name, v in options.items():
        if name in REAL_OPTIONS:
            if isinstance(v, str) and v in NONFINITE:
                v = NONFINITE[v]
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                v = float(v)
        elif name in INT_OPTIONS:
            if isinstance(v, float) and math.isfinite(v) and v == int(v):
                v = int(v)
        elif name == 'adam_betas' and isinstance(v, (list, tuple)):
            v = tuple(NONFINITE[b] if isinstance(b, str) and b in NONFINITE
                      else float(b) if isinstance(b, (int, float)) and not isinstance(b, bool) else b for b in v)
        out[name] = v
    return out


# ---------------------------------------------------------------- vectors


def read_vector_files(paths: Sequence[str]) -> List[tuple]:
    """[(path, document)] for vector files and every *.json under folders, at any depth."""
    files: List[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(os.path.join(root, f) for root, _, names in os.walk(p) for f in names if f.endswith('.json'))
            if not found:
                raise UsageError(f"vector directory {p!r} holds no *.json file")
            files.extend(found)
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise UsageError(f"vector path {p!r}: no such file or directory")
    docs = []
    for f in files:
        try:
            with open(f, encoding='utf-8') as fh:
                doc = json.load(fh)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"vector file {f!r}: cannot read: {exc}") from None
        except json.JSONDecodeError as exc:
            raise UsageError(f"vector file {f!r}: not JSON: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get('testGroups'), list):
            raise UsageError(f"vector file {f!r}: no testGroups list (not a muonref vector file)")
        docs.append((f, doc))
    return docs


# ---------------------------------------------------------------- running cases


def _state_entry(st: Any, steps_with_grad: int) -> Optional[Dict[str, Any]]:
    """One parameter's state in the results layout, from what state() returned: the
    buffers of its branch and `step` (the count of steps with a gradient when the port
    keeps none); other keys (e.g. a cached routing flag) are ignored."""
    if not st:
        return None
    keys = ('momentum_buffer',) if 'momentum_buffer' in st else ('exp_avg', 'exp_avg_sq')
    if not all(k in st for k in keys):
        return None
    step = st.get('step')
    out: Dict[str, Any] = {'step': steps_with_grad if step is None else int(step)}
    if 'momentum_buffer' in st and st.get('moment2') is not None:
        keys = keys + ('moment2',)  # the second moment of the Newton-Schulz output (NorMuon, AdaMuon)
    for k in keys:
        out[k] = encode_tensor(st[k])
    return out


class _Skip(Exception):
    """A case this implementation cannot run (recorded as skipped with the reason)."""


class _Runner:
    def __init__(self, cb: Dict[str, Optional[Callable]]):
        self.cb = cb

    def groups(self, case: Dict[str, Any], values: List[Tensor], complex_flags: List[bool]):
        groups = case.get('groups')
        if not isinstance(groups, list) or not groups:
            raise ValueError("groups: expected a non-empty list")
        names = [p.get('name', f'param{i}') for i, p in enumerate(case['params'])]
        out = []
        for g in groups:
            out.append({
                'options': canonical_options(g.get('options', {})),
                'params': [{'index': i, 'name': names[i], 'init': values[i].copy(), 'complex': complex_flags[i]}
                           for i in g['params']],
            })
        return out

    def decode_step_inputs(self, case: Dict[str, Any]):
        inits = [decode_tensor(p['init'], f"params[{i}].init") for i, p in enumerate(case['params'])]
        steps = []
        for k, s in enumerate(case.get('steps', [])):
            steps.append([None if g is None else decode_tensor(g, f"steps[{k}].grads[{i}]")
                          for i, g in enumerate(s['grads'])])
        complex_flags = [any(i < len(gs) and gs[i] is not None and gs[i].dtype == 'c64' for gs in steps)
                         for i in range(len(inits))]
        return inits, steps, complex_flags

    def run_step(self, case: Dict[str, Any], inits, steps, complex_flags) -> Dict[str, Any]:
        round_trip = case.get('roundTripAfter')
        if round_trip is not None and (self.cb['export_state'] is None or self.cb['import_state'] is None):
            raise _Skip("roundTripAfter needs the export_state and import_state callbacks")
        sets = [s.get('setOptions') for s in case.get('steps', [])]
        if any(sets) and self.cb['set_options'] is None:
            raise _Skip("steps that set options (setOptions) need the set_options callback")
        self.cb['make_optimizer'](self.groups(case, inits, complex_flags))
        counts = [0] * len(inits)
        for k, grads in enumerate(steps):
            if k < len(sets) and sets[k]:
                if not isinstance(sets[k], list) or len(sets[k]) != len(case['groups']):
                    raise ValueError(f"steps[{k}].setOptions: expected a list of {len(case['groups'])} objects")
                for gi, change in enumerate(sets[k]):
                    if not isinstance(change, dict):
                        raise ValueError(f"steps[{k}].setOptions[{gi}]: expected an object of option values")
                    if change:
                        self.cb['set_options'](gi, canonical_options(change))
            self.cb['step']([None if g is None else g.copy() for g in grads])
            for i, g in enumerate(grads):
                if g is not None:
                    counts[i] += 1
            if round_trip is not None and k + 1 == round_trip:
                saved = self.cb['export_state']()
                # the model rebuilt in its dtype: the case's roundTripDtype (converted, spec/vectors.md
                # 2.1), else each parameter's own (its init's: a glue's params() may return float32)
                current = [_converted(Tensor.from_nested(v), case.get('roundTripDtype') or inits[i].dtype)
                           for i, v in enumerate(self.cb['params']())]
                self.cb['make_optimizer'](self.groups(case, current, complex_flags))
                self.cb['import_state'](saved)
        out: Dict[str, Any] = {'params': [encode_tensor(v) for v in self.cb['params']()]}
        if self.cb['state'] is not None:
            states = []
            for st, n in zip(self.cb['state'](), counts):
                states.append(_state_entry(st, n))
            out['state'] = states
        return out

    def ns(self, x: Tensor, steps: int) -> Any:
        if self.cb['newton_schulz'] is None:
            raise _Skip("no newton_schulz callback")
        return self.cb['newton_schulz'](x.copy(), steps)

    def run_case(self, kind: str, case: Dict[str, Any]) -> Dict[str, Any]:
        try:
            if kind in ('ns', 'transpose') or (kind == 'error' and 'input' in case):
                x = decode_tensor(case['input'], 'input')
                if kind == 'transpose':
                    return {'output': encode_tensor(self.ns(x, case['nsSteps'])),
                            'outputT': encode_tensor(self.ns(x.transpose(), case['nsSteps']))}
                if kind == 'ns':
                    return {'output': encode_tensor(self.ns(x, case['nsSteps']))}
                if self.cb['newton_schulz'] is None:
                    raise _Skip("no newton_schulz callback")
                try:
                    return {'output': encode_tensor(self.ns(x, case['nsSteps']))}
                except Exception as exc:  # the refusal judged
                    return {'error': str(exc)}
            if kind == 'step':
                return self.run_step(case, *self.decode_step_inputs(case))
            if kind == 'error':
                inputs = self.decode_step_inputs(case)
                try:
                    return self.run_step(case, *inputs)
                except _Skip:
                    raise
                except Exception as exc:  # the refusal judged
                    return {'error': str(exc)}
            return {'skipped': f"unknown case kind {kind!r}"}
        except _Skip as exc:
            return {'skipped': str(exc)}
        except Exception as exc:
            if os.environ.get('RESULTS_WRITER_TRACEBACK'):
                traceback.print_exc()
            return {'skipped': f"{type(exc).__name__}: {exc}"}


def run_vectors(docs, **callbacks) -> List[Dict[str, Any]]:
    """The results entries for every case of the (path, document) pairs."""
    names = ('make_optimizer', 'step', 'params', 'state', 'newton_schulz', 'export_state', 'import_state',
             'set_options')
    unknown = set(callbacks) - set(names)
    if unknown:
        raise TypeError(f"unknown callbacks {sorted(unknown)}, expected some of {names}")
    cb = {n: callbacks.get(n) for n in names}
    for n in names[:3]:
        if not callable(cb[n]):
            raise TypeError(f"the callback {n} is required")
    runner = _Runner(cb)
    results = []
    for path, doc in docs:
        base = os.path.basename(path)
        for group in doc['testGroups']:
            kind = group.get('kind') if isinstance(group, dict) else None
            for case in group.get('tests', []) if isinstance(group, dict) else []:
                entry = {'file': base, 'tcId': case.get('tcId')}
                entry.update(runner.run_case(kind, case))
                results.append(entry)
    return results


def write_results(out: str, vectors: Sequence[str], *, implementation: str = 'unnamed implementation',
                  ns_format: str = 'bf16', **callbacks) -> Dict[str, int]:
    """Runs every case of the vector files or folders and writes the results file `out`.
    Returns the counts {'run': n, 'skipped': n}.  Raises UsageError for bad input."""
    if ns_format not in ('bf16', 'fp32'):
        raise UsageError(f"ns_format {ns_format!r}: expected 'bf16' or 'fp32'")
    docs = read_vector_files(vectors)
    results = run_vectors(docs, **callbacks)
    doc = {'implementation': implementation, 'nsFormat': ns_format, 'results': results}
    try:
        with open(out, 'w', encoding='utf-8') as f:
            json.dump(doc, f, indent=1)
            f.write('\n')
    except OSError as exc:
        raise UsageError(f"{out!r}: cannot write: {exc}") from None
    skipped = sum('skipped' in r for r in results)
    return {'run': len(results) - skipped, 'skipped': skipped}


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 3 or argv[0] in ('-h', '--help'):
        sys.stderr.write("usage: results_writer.py GLUE.py OUT.json VECTOR_FILES_OR_DIRS...\n")
        return 2
    glue_path, out, vectors = argv[0], argv[1], argv[2:]
    try:
        if not os.path.isfile(glue_path):
            raise UsageError(f"glue {glue_path!r}: no such file")
        sys.path.insert(0, os.path.dirname(os.path.abspath(glue_path)))
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(glue_path))[0], glue_path)
        glue = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(glue)
        except Exception as exc:
            raise UsageError(f"glue {glue_path!r}: loading failed: {type(exc).__name__}: {exc}") from None
        names = ('make_optimizer', 'step', 'params', 'state', 'newton_schulz', 'export_state', 'import_state',
                 'set_options')
        callbacks = {n: getattr(glue, n) for n in names if callable(getattr(glue, n, None))}
        counts = write_results(out, vectors, implementation=getattr(glue, 'IMPLEMENTATION', glue_path),
                               ns_format=getattr(glue, 'NS_FORMAT', 'bf16'), **callbacks)
    except (UsageError, TypeError) as exc:
        sys.stderr.write(f"results_writer.py: {exc}\n")
        return 2
    sys.stderr.write(f"results_writer.py: {counts['run']} run, {counts['skipped']} skipped -> {out}\n")
    return 0


if __name__ == '__main__':
    sys.exit(main())
