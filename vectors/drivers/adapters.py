"""Adapters of torch_driver.py: from muonref's canonical options to a constructor.

A vector names every option of a parameter group by its spec name
(spec/vectors.md section 3): lr, momentum, nesterov, ns_steps,
weight_decay, scale_mode, adam_betas ([b1, b2]), adam_eps, adam_lr_ratio,
adam_dim_threshold, use_muon.  An adapter turns one group's options into
what a torch optimizer's constructor takes, reads the optimizer's state back
in the layout of the results protocol, and calls a Newton-Schulz function.

ADAPTERS maps a name (the driver's --adapter) to an Adapter instance.  To
add a port, subclass Adapter, override what differs and register it here.

Table of the adapters:

| name   | constructor keywords          | group entries      | state read back |
|--------|-------------------------------|--------------------|-----------------|
| nemo   | the first group's options, spec names, `adam_betas` as a tuple | every group's options, same mapping | `momentum_buffer`; `step`, `exp_avg`, `exp_avg_sq` |
| plain  | none but `lr` of the first group | every option, spec names, `adam_betas` as a tuple | same as `nemo` |

Muon step counts: NeMo's optimizer (and the test port) keep no step count
for Muon parameters.  When the state of a Muon parameter has no `step`,
the driver reports the number of steps in which that parameter received a
gradient (the definition of spec/muon.md section 11); when it has one, the
driver reports the optimizer's own.
"""

import math
from typing import Any, Dict, Optional

import torch

# The spec's option names, in the order of spec/muon.md section 1.
OPTION_NAMES = (
    'lr',
    'momentum',
    'nesterov',
    'ns_steps',
    'weight_decay',
    'scale_mode',
    'adam_betas',
    'adam_eps',
    'adam_lr_ratio',
    'adam_dim_threshold',
    'use_muon',
)
REAL_OPTIONS = ('lr', 'momentum', 'weight_decay', 'adam_eps', 'adam_lr_ratio')
INT_OPTIONS = ('ns_steps', 'adam_dim_threshold')
NONFINITE = {'nan': math.nan, 'inf': math.inf, '-inf': -math.inf}


def real_value(v: Any) -> Any:
    """A JSON option value read as a real: numbers become floats, "nan"/"inf"/"-inf" the
    non-finite floats; anything else (a deliberate wrong type) is passed through."""
    if isinstance(v, str) and v in NONFINITE:
        return NONFINITE[v]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return v


def int_value(v: Any) -> Any:
    """A JSON option value read as an integer: integral numbers become ints."""
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return int(v)
    return v


def canonical(options: Dict[str, Any]) -> Dict[str, Any]:
    """The options of a vector as Python values (floats, ints, a betas tuple)."""
    out = {}
    for name, v in options.items():
        if name in REAL_OPTIONS:
            v = real_value(v)
        elif name in INT_OPTIONS:
            v = int_value(v)
        elif name == 'adam_betas' and isinstance(v, (list, tuple)):
            v = tuple(real_value(b) for b in v)
        out[name] = v
    return out


def _count(v: Any) -> int:
    return int(v.item()) if isinstance(v, torch.Tensor) else int(v)


class Adapter:
    """The `nemo` mapping: NeMo's constructor takes every option by its spec name."""

    name = 'nemo'

    def constructor_kwargs(self, options: Dict[str, Any]) -> Dict[str, Any]:
        """Keyword arguments of the constructor, from the first group's options."""
        return canonical(options)

    def group_entries(self, options: Dict[str, Any]) -> Dict[str, Any]:
        """The entries of a parameter-group dict besides 'params'."""
        return canonical(options)

    def read_state(self, state: Dict[str, Any], steps_with_grad: int) -> Optional[Dict[str, Any]]:
        """The results-protocol state of one parameter, from optimizer.state[p]:
        {"step", "momentum_buffer"} or {"step", "exp_avg", "exp_avg_sq"} (tensors), or None."""
        if not state:
            return None
        if 'momentum_buffer' in state:
            step = _count(state['step']) if 'step' in state else steps_with_grad
            return {'step': step, 'momentum_buffer': state['momentum_buffer']}
        if 'exp_avg' in state and 'exp_avg_sq' in state:
            return {'step': _count(state['step']), 'exp_avg': state['exp_avg'], 'exp_avg_sq': state['exp_avg_sq']}
        return None

    def newton_schulz(self, fn, matrix: torch.Tensor, steps: int) -> torch.Tensor:
        """Calls the port's Newton-Schulz function on a float32 matrix."""
        return fn(matrix, steps)


class PlainAdapter(Adapter):
    """Every option goes into the group dicts by its spec name; the constructor gets lr only."""

    name = 'plain'

    def constructor_kwargs(self, options: Dict[str, Any]) -> Dict[str, Any]:
        return {'lr': canonical(options)['lr']} if 'lr' in options else {}


ADAPTERS = {a.name: a for a in (Adapter(), PlainAdapter())}
