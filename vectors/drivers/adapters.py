"""Adapters of torch_driver.py: from muonref's canonical options to a constructor.

A vector names every option of a parameter group by its spec name
(spec/vectors.md section 3): lr, momentum, nesterov, ns_steps,
weight_decay, scale_mode, adam_betas ([b1, b2]), adam_eps, adam_lr_ratio,
adam_dim_threshold, use_muon.  An adapter turns one group's options into
what a torch optimizer's constructor takes, reads the optimizer's state back
in the layout of the results protocol, and calls a Newton-Schulz function.

ADAPTERS maps a name (the driver's --adapter) to an Adapter instance.  A
port none of them fits gets its own: subclass Adapter (or the adapter of its
profile) in a file of your own, override what differs, and give it to the
driver as --adapter FILE:CLASS (README.md here, "Your own adapter"); or
register it here.

Which adapter each profile's test port runs with, its class, its Newton-Schulz
format and how its constructor takes options is the profile's record's
(spec/profiles/NAME.json, "test_port"; `muonref profile --test-ports` lists
them, `muonref profile NAME` prints the port's option names); each class
below says in its docstring what it maps and reads back.

The profile adapters (every one but nemo's and plain) run a port of another
profile over vectors written in nemo's option names (spec/profiles/).  Their
rule: an option the port can take is mapped exactly; an option at nemo's
default that the port cannot set (its scale rule, its AdamW lr rule, its fixed
Newton-Schulz steps) is left to the port's own fixed behaviour, so that a
cross-profile run shows the difference and the judge's diagnosis names it; a
non-default value the port cannot take raises NotExpressible, which the driver
records as a skipped case with the reason.

Muon step counts: NeMo's optimizer (and the test port) keep no step count
for Muon parameters.  When the state of a Muon parameter has no `step`,
the driver reports the number of steps in which that parameter received a
gradient (the definition of spec/muon.md section 11); when it has one, the
driver reports the optimizer's own.
"""

import functools
import inspect
import math
import os
import sys
from typing import Any, Dict, Optional, Tuple

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


def release_family(profile: str) -> str:
    """The profile a release's record belongs to: "emerging" for "emerging@0.3" (its record's
    base, with the same options); a profile without a release is its own."""
    return profile.split('@', 1)[0]


class NotExpressible(Exception):
    """A vector's options ask for something the adapter's port cannot be set to."""


# ---------------------------------------------------------------- calling a Newton-Schulz function

# The parameter names (lower case) by which a Newton-Schulz function's signature says what it
# takes: the matrix, the number of iterations, the eps added to the norm, the coefficients (a
# triple, a list of triples or a preset name).  Collected from the ports the profiles describe
# (spec/profiles/: G, X, x, grad; steps, ns_steps, num_ns_steps; eps, epsilon; coefficients,
# ns_coefficients, coefficient_type, ns_coeffs) and common spellings elsewhere.
NS_ROLE_NAMES = {
    'matrix': ('g', 'x', 'm', 'a', 'w', 'u', 'y', 'grad', 'gradient', 'matrix', 'mat', 'update', 'input', 'tensor'),
    'steps': ('steps', 'ns_steps', 'num_steps', 'num_ns_steps', 'n_steps', 'nsteps', 'iters', 'iterations', 'num_iters',
              'n_iters', 'niters', 'niter', 'n_iter', 'ns_iters', 'num_iterations', 'max_iter', 'max_iters'),
    'eps': ('eps', 'epsilon', 'ns_eps'),
    'coefficients': ('coefficients', 'coeffs', 'ns_coefficients', 'ns_coeffs', 'coefficient_type', 'coeff_type',
                     'ns_coeff_type', 'abc'),
}


class NsSignatureError(Exception):
    """A Newton-Schulz function whose parameters cannot be matched to what the driver passes
    (ns_binding); the message names the function and its parameters."""


def _ns_role(name: str) -> Optional[str]:
    low = name.lower()
    return next((role for role, names in NS_ROLE_NAMES.items() if low in names), None)


def _ns_describe(fn) -> str:
    name = getattr(fn, '__qualname__', None) or getattr(fn, '__name__', None) or repr(fn)
    try:
        return f"{name}{inspect.signature(fn)}"
    except (TypeError, ValueError):
        return f"{name}(...)"


def ns_binding(fn, roles: Dict[str, Any]) -> Optional[Tuple[list, list]]:
    """How to call the Newton-Schulz function fn with the matrix and `roles` (role -> value:
    'steps', and 'eps', 'coefficients' where the profile gives them), read from its signature
    (inspect.signature): the matrix goes to the first parameter whose name is a matrix name
    (NS_ROLE_NAMES) or else to the first parameter; every other parameter gets the value of the
    role its name has, by keyword (positionally when it is positional-only), or keeps its
    default.  Returns (positional, keyword): lists of (parameter name, role); None when fn has
    no readable signature (a built-in: it is then called fn(matrix, steps)).
    Raises NsSignatureError, naming fn and its parameters, when the steps cannot be given (no
    parameter has a steps name, while the driver passes a number of steps), when a parameter
    without a default has no role the driver fills, or when no parameter can take the matrix:
    never a silent positional guess (issue 22: f(G, eps) called as f(matrix, steps) got eps = 5)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = [p for p in sig.parameters.values()
              if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]

    def refuse(why):
        names = ', '.join(f"{r} ({', '.join(n)})" for r, n in NS_ROLE_NAMES.items()
                          if r == 'matrix' or r in roles)
        raise NsSignatureError(f"the Newton-Schulz function {_ns_describe(fn)}: {why}; the driver passes, by "
                               f"parameter name: {names} (the matrix: else the first parameter). Wrap the function "
                               "in one whose parameters say what they take, and give it with --ns-function")

    matrix = next((p for p in params if _ns_role(p.name) == 'matrix'), None)
    if matrix is None and params and _ns_role(params[0].name) is None:
        matrix = params[0]
    if matrix is None:
        refuse("no parameter takes the matrix")
    positional, keyword, bound = [], [], set()
    for p in params:
        role = 'matrix' if p is matrix else _ns_role(p.name)
        if role == 'matrix' and p is not matrix:
            role = None
        if role is None or (role != 'matrix' and (role not in roles or role in bound)):
            if p.default is inspect.Parameter.empty:
                refuse(f"its parameter {p.name!r} has no default and is none of what the driver passes")
            if p.kind == inspect.Parameter.POSITIONAL_ONLY:  # a later positional-only parameter needs its place
                positional.append((p.name, ('default', p.default)))
            continue
        bound.add(role)
        (positional if p.kind == inspect.Parameter.POSITIONAL_ONLY else keyword).append((p.name, role))
    while positional and isinstance(positional[-1][1], tuple):
        positional.pop()
    if 'steps' in roles and 'steps' not in bound:
        refuse(f"no parameter takes the number of steps ({roles['steps']} for this case)")
    return positional, keyword


def call_newton_schulz(fn, matrix: torch.Tensor, **roles):
    """fn called with the matrix and roles as ns_binding matches them to its parameters."""
    binding = ns_binding(fn, roles)
    if binding is None:
        return fn(matrix, roles['steps']) if 'steps' in roles else fn(matrix)
    values = dict(roles, matrix=matrix)
    args = [r[1] if isinstance(r, tuple) else values[r] for _, r in binding[0]]
    return fn(*args, **{name: values[r] for name, r in binding[1]})


# spec/muon.md section 1: the nemo defaults, which the profile adapters read as "the port's own".
NEMO_DEFAULTS = {
    'lr': 0.02, 'momentum': 0.95, 'nesterov': True, 'ns_steps': 5, 'weight_decay': 0.0,
    'scale_mode': 'fan_in', 'adam_betas': (0.9, 0.95), 'adam_eps': 1e-08, 'adam_lr_ratio': 0.025,
    'adam_dim_threshold': 8192, 'use_muon': None,
}
KELLER_TRIPLE = (3.4445, -4.775, 2.0315)
# timm's default ns_coefficients "quintic" (timm/optim/muon.py @aa4b5850 _COEFFICIENTS)
TIMM_QUINTIC = ((4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377), (3.7418, -5.5913, 2.3037),
                (2.8769, -3.1427, 1.2046), (2.8366, -3.0525, 1.2012))


def nemo_routes_to_muon(shape, use_muon, threshold) -> bool:
    """spec/muon.md section 2, as a user of a manually routed port would apply it."""
    if use_muon is True:
        return True
    if use_muon is False:
        return False
    return len(shape) == 2 and all(d < threshold for d in shape)


def native(options: Dict[str, Any]) -> Dict[str, Any]:
    """A profile's own options as Python values: "nan"/"inf"/"-inf" as floats, arrays as tuples
    of reals, but an array of JSON integers (row block sizes: dion's split_sizes, Megatron's
    qkv_split_shapes; a real is always written with a point) as a list of ints, as a user
    writes it."""
    out = {}
    for name, v in options.items():
        if isinstance(v, list) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            v = list(v)
        elif isinstance(v, list):
            v = tuple(real_value(x) for x in v)
        elif isinstance(v, str) and v in NONFINITE:
            v = NONFINITE[v]
        out[name] = v
    return out


# How another profile's options read in nemo's names (the adapters' common language): each
# option maps to a nemo option, or must hold the value nemo's port has (else NotExpressible).
TO_NEMO = {
    'torch': {
        'rename': {'lr': 'lr', 'weight_decay': 'weight_decay', 'momentum': 'momentum', 'nesterov': 'nesterov',
                   'ns_steps': 'ns_steps'},
        'fixed': {'ns_coefficients': (3.4445, -4.775, 2.0315), 'eps': 1e-07, 'adjust_lr_fn': None},
        # torch.optim.Muon's own defaults where nemo's differ (a torch case that gives no lr means 1e-3)
        'defaults': {'lr': 1e-3, 'weight_decay': 0.1},
    },
    'timm': {
        'rename': {'lr': 'lr', 'weight_decay': 'weight_decay', 'momentum': 'momentum', 'nesterov': 'nesterov',
                   'ns_steps': 'ns_steps', 'betas': 'adam_betas', 'fallback_lr_scale': 'adam_lr_ratio',
                   'use_muon': 'use_muon'},
        # Keller's triple (nemo's), timm's "original" scale (nemo's fan_in), no safety factor
        'fixed': {'ns_coefficients': ((3.4445, -4.775, 2.0315),), 'safety_factor': 1.0, 'adjust_lr_fn': 'original',
                  # optional keys, written only where a case sets them otherwise: nemo flattens N-D
                  # parameters and has no spatial factor, no scaled eps, no use_fallback
                  'conv_mode': 'flatten', 'normalize_spatial': True, 'scale_eps': False, 'use_fallback': False},
        # timm's defaults where nemo's differ: its Nesterov, its fallback lr scale and eps (shared: 'eps' below)
        'defaults': {'nesterov': False, 'adam_lr_ratio': 1.0, 'adam_eps': 1e-7},
    },
    'moonlight': {
        'rename': {'lr': 'lr', 'wd': 'weight_decay', 'momentum': 'momentum', 'nesterov': 'nesterov',
                   'ns_steps': 'ns_steps', 'adamw_betas': 'adam_betas', 'adamw_eps': 'adam_eps', 'use_muon': 'use_muon'},
        'fixed': {},
        # Moonlight's defaults, and its AdamW lr (the Muon lr: ratio 1)
        'defaults': {'lr': 1e-3, 'weight_decay': 0.1, 'adam_betas': (0.9, 0.95), 'adam_eps': 1e-8, 'adam_lr_ratio': 1.0},
    },
    'keller': {
        'rename': {'lr': 'lr', 'momentum': 'momentum', 'weight_decay': 'weight_decay', 'betas': 'adam_betas',
                   'eps': 'adam_eps', 'use_muon': 'use_muon'},
        'fixed': {},
        # SingleDeviceMuonWithAuxAdam's group defaults; an AdamW group's lr is its own (ratio 1)
        'defaults': {'adam_eps': 1e-10, 'adam_lr_ratio': 1.0},
        'adam_defaults': {'lr': 3e-4},
    },
    'emerging': {
        'rename': {'lr': 'lr', 'momentum': 'momentum', 'weight_decay': 'weight_decay', 'nesterov': 'nesterov',
                   'num_ns_steps': 'ns_steps'},
        # nemo's fan_in is Emerging-Optimizers' shape_scaling, with no extra factor
        # (weight_decay_method: an optional key, written only where a case sets it otherwise)
        'fixed': {'scale_mode': 'shape_scaling', 'extra_scale_factor': 1.0, 'weight_decay_method': 'decoupled'},
        # Emerging-Optimizers' Muon defaults where nemo's differ
        'defaults': {'lr': 3e-4, 'weight_decay': 0.01, 'nesterov': False},
    },
    'optax': {
        # optax's eps (one value: nemo's adam_eps), adam_b1/adam_b2, ns_coeffs, consistent_rms and
        # adam_weight_decay by the special cases of to_nemo; its bias-corrected Nesterov is no option
        'rename': {'learning_rate': 'lr', 'beta': 'momentum', 'weight_decay': 'weight_decay', 'nesterov': 'nesterov',
                   'ns_steps': 'ns_steps'},
        # optional keys, written only where a case sets them otherwise: nemo has neither
        'fixed': {'adaptive': False, 'preconditioning': 'frobenius'},
        # optax's defaults where nemo's differ: its fan-out scale, the Adam betas and lr (ratio 1)
        'defaults': {'scale_mode': 'fan_out', 'adam_betas': (0.9, 0.999), 'adam_lr_ratio': 1.0},
    },
    'megatron': {
        # Megatron's config in nemo's names; adam_beta1 and adam_beta2 become adam_betas (to_nemo)
        'rename': {'lr': 'lr', 'weight_decay': 'weight_decay', 'muon_momentum': 'momentum',
                   'muon_nesterov': 'nesterov', 'muon_num_ns_steps': 'ns_steps', 'adam_eps': 'adam_eps',
                   'use_muon': 'use_muon'},
        # nemo's fan_in is shape_scaling, no extra factor, no clipping
        'fixed': {'muon_scale_mode': 'shape_scaling', 'muon_extra_scale_factor': 1.0, 'clip_grad': 0.0},
        # Megatron's defaults where nemo's differ: AdamW at Muon's lr (ratio 1), betas (0.9, 0.999)
        'defaults': {'lr': 3e-4, 'weight_decay': 0.01, 'nesterov': False, 'adam_betas': (0.9, 0.999),
                     'adam_lr_ratio': 1.0},
    },
    'keras': {
        # keras.optimizers.Muon (spec/profiles/keras.md): adam_beta_1 and adam_beta_2 are nemo's
        # adam_betas (special cases of to_nemo); rms_rate, the name rules, the triple and the AdamW
        # decay coefficient have no nemo option: a port of another profile runs its own rules on
        # keras' cases (and fails them) unless they hold keras' defaults
        'rename': {'learning_rate': 'lr', 'momentum': 'momentum', 'nesterov': 'nesterov', 'ns_steps': 'ns_steps',
                   'weight_decay': 'weight_decay', 'epsilon': 'adam_eps', 'adam_lr_ratio': 'adam_lr_ratio'},
        'fixed': {'rms_rate': 0.2, 'exclude_layers': (), 'exclude_embeddings': True, 'muon_a': 3.4445,
                  'muon_b': -4.775, 'muon_c': 2.0315, 'adam_weight_decay': 0.004},
        # keras' defaults where nemo's differ
        'defaults': {'lr': 1e-3, 'weight_decay': 0.004, 'adam_betas': (0.9, 0.999), 'adam_eps': 1e-7,
                     'adam_lr_ratio': 1.0},
    },
    'dion': {
        # dion's algorithm ("muon"/"adamw") and epsilon (one value; nemo's adam_eps) by the special
        # cases of to_nemo; Polar Express and the factor 1.02 are no options: a port of another
        # profile runs its own Newton-Schulz on dion's cases (and fails them)
        'rename': {'lr': 'lr', 'mu': 'momentum', 'weight_decay': 'weight_decay', 'nesterov': 'nesterov',
                   'betas': 'adam_betas'},
        # nemo flattens an N-D parameter (dion's flatten=True); adjust_lr None is nemo's scale_mode none
        'fixed': {'flatten': True, 'adjust_lr': None},
        # dion's defaults where nemo's differ; an AdamW group's lr is its own (ratio 1)
        'defaults': {'lr': 0.01, 'weight_decay': 0.01, 'nesterov': False, 'adam_lr_ratio': 1.0, 'adam_eps': 1e-8},
    },
    'paddle': {
        # paddle's adam_beta1/adam_beta2 (nemo's adam_betas) and adam_epsilon (one eps: nemo's
        # adam_eps; nemo's Newton-Schulz eps is fixed) by the special cases of to_nemo
        'rename': {'learning_rate': 'lr', 'momentum': 'momentum', 'weight_decay': 'weight_decay',
                   'nesterov': 'nesterov', 'ns_steps': 'ns_steps', 'lr_ratio': 'adam_lr_ratio', 'use_muon': 'use_muon'},
        # Paddle's defaults that no nemo option sets: a port of another profile runs its own
        # coefficients and scale on them (and fails them)
        'fixed': {'ns_coeff_type': 'simple', 'ns_coeffs': None, 'muon_version': 1, 'muon_extra_scale_factor': 0.2,
                  'muon_exclude_patterns': None},
        # paddle.optimizer.Muon's defaults where nemo's differ
        'defaults': {'weight_decay': 0.01, 'adam_lr_ratio': 1.0, 'adam_eps': 1e-9, 'nesterov': True},
    },
    'mlx': {
        # mlx.optimizers.Muon (spec/profiles/mlx.md): its L2 decay, EMA momentum, Newton-Schulz on
        # every N-D parameter and momentum step on the others have no nemo option: a port of
        # another profile runs its own rules on mlx's cases (and fails them)
        'rename': {'learning_rate': 'lr', 'momentum': 'momentum', 'weight_decay': 'weight_decay',
                   'nesterov': 'nesterov', 'ns_steps': 'ns_steps'},
        'fixed': {},
        # mlx's defaults where nemo's differ
        'defaults': {'weight_decay': 0.01},
    },
    'pytorch_optimizer': {
        # use_adjusted_lr (True: nemo's fan_in; False, its default: 0.2 sqrt(max), which nemo has
        # not) by the special case of to_nemo
        'rename': {'lr': 'lr', 'momentum': 'momentum', 'weight_decay': 'weight_decay', 'nesterov': 'nesterov',
                   'ns_steps': 'ns_steps', 'betas': 'adam_betas', 'eps': 'adam_eps', 'use_muon': 'use_muon'},
        'fixed': {'maximize': False},
        # its group defaults; an AdamW group's lr is its own (ratio 1)
        'defaults': {'adam_eps': 1e-10, 'adam_lr_ratio': 1.0},
        'adam_defaults': {'lr': 3e-4},
    },
}


def to_nemo(profile: str, options: Dict[str, Any]) -> Dict[str, Any]:
    """Options of a `profile` vector in nemo's names, for a port of another profile."""
    if profile == 'nemo':
        return options
    if profile not in TO_NEMO:
        raise NotExpressible(f"options of profile {profile!r} have no mapping to nemo's names")
    m = TO_NEMO[profile]
    out = dict(m['defaults'])
    if options.get('use_muon') is False:
        out.update(m.get('adam_defaults', {}))
    for name, v in native(options).items():
        if name in m['rename']:
            out[m['rename'][name]] = v
        elif profile == 'timm' and name == 'eps':
            # one eps: nemo's adam_eps, and its Newton-Schulz eps must be nemo's fixed 1e-7
            if v != 1e-07:
                raise NotExpressible(f"timm option eps={v!r}: nemo's Newton-Schulz eps is fixed at 1e-07")
            out['adam_eps'] = v
        elif profile == 'dion' and name == 'algorithm':
            if v not in ('muon', 'adamw'):
                raise NotExpressible(f"dion option algorithm={v!r} has no nemo equivalent")
            out['use_muon'] = v == 'muon'
        elif profile == 'megatron' and name in ('adam_beta1', 'adam_beta2'):
            betas = list(out.get('adam_betas', m['defaults']['adam_betas']))
            betas[name == 'adam_beta2'] = v
            out['adam_betas'] = tuple(betas)
        elif profile == 'keras' and name in ('adam_beta_1', 'adam_beta_2'):
            betas = list(out['adam_betas'])
            betas[name == 'adam_beta_2'] = v
            out['adam_betas'] = tuple(betas)
        elif profile == 'dion' and name == 'epsilon':
            out['adam_eps'] = v  # one eps: nemo's Newton-Schulz eps (1e-7) is fixed
        elif profile == 'dion' and name == 'adjust_lr':
            if v is not None:
                raise NotExpressible(f"dion option adjust_lr={v!r} has no nemo equivalent "
                                     "(sqrt(rows/cols) without max, or 0.2 sqrt(max))")
            out['scale_mode'] = 'none'
        elif profile == 'optax' and name in ('adam_b1', 'adam_b2'):
            b = list(out.get('adam_betas', m['defaults']['adam_betas']))
            b[name == 'adam_b2'] = real_value(v)
            out['adam_betas'] = tuple(b)
        elif profile == 'optax' and name == 'eps':
            out['adam_eps'] = v  # one eps: nemo's Newton-Schulz eps (1e-7) is fixed
        elif profile == 'optax' and name == 'ns_coeffs':
            if not isinstance(v, (list, tuple)) or tuple(real_value(x) for x in v) != KELLER_TRIPLE:
                raise NotExpressible(f"optax option ns_coeffs={v!r} has no nemo equivalent")
        elif profile == 'optax' and name == 'consistent_rms':
            if v is not None:
                raise NotExpressible(f"optax option consistent_rms={v!r} has no nemo equivalent")
        elif profile == 'optax' and name == 'adam_weight_decay':
            if real_value(v) != 0.0:
                raise NotExpressible(f"optax option adam_weight_decay={v!r} has no nemo equivalent")
        elif profile == 'paddle' and name in ('adam_beta1', 'adam_beta2'):
            b = list(out.get('adam_betas', (0.9, 0.95)))
            b[name == 'adam_beta2'] = v
            out['adam_betas'] = tuple(b)
        elif profile == 'paddle' and name == 'adam_epsilon':
            out['adam_eps'] = v  # one eps: nemo's Newton-Schulz eps (1e-7) is fixed
        elif profile == 'pytorch_optimizer' and name == 'use_adjusted_lr':
            if v is not True:
                raise NotExpressible("pytorch_optimizer option use_adjusted_lr=False (0.2 sqrt(max(rows, cols))) "
                                     "has no nemo equivalent")
            out['scale_mode'] = 'fan_in'
        elif profile == 'timm' and name == 'ns_coefficients':
            if tuple(tuple(real_value(x) for x in t) for t in v) != m['fixed'][name]:
                raise NotExpressible(f"timm option ns_coefficients={v!r} has no nemo equivalent")
        elif name in m['fixed']:
            if v != m['fixed'][name] and not (name == 'adjust_lr_fn' and v == 'original'):
                raise NotExpressible(f"{profile} option {name}={v!r} has no nemo equivalent")
        else:
            raise NotExpressible(f"{profile} option {name!r} has no nemo equivalent")
    return out


@functools.lru_cache(maxsize=None)
def _record_keys(profile: str) -> tuple:
    """A built-in record's key table (its own, else its base's): a tuple of dicts, () for none."""
    import records  # noqa: E402 (beside this file)
    name = profile
    while name:
        path = os.path.join(records.folder(), name + '.json')
        if not os.path.exists(path):
            return ()
        rec = records.read(path)
        if 'keys' in rec:
            return tuple(rec['keys'])
        name = rec.get('base')
    return ()


def group_only_keys(profile: str) -> frozenset:
    """The names of a built-in record's keys of scope group_only (a group dict's key, not the
    constructor's keyword: dion's algorithm and num_heads), or of its base's."""
    return frozenset(k['name'] for k in _record_keys(profile) if k.get('scope') == 'group_only')


def init_keys(profile: str) -> frozenset:
    """The names of a built-in record's keys of scope init (the constructor's keywords:
    pytorch_optimizer's maximize and its AdamW groups' defaults adamw_lr, ...), or of its base's."""
    return frozenset(k['name'] for k in _record_keys(profile) if k.get('scope') == 'init')


@functools.lru_cache(maxsize=None)
def _release_keys(release: str) -> Optional[frozenset]:
    """The keyword names of a release's record (spec/profiles/RELEASE.json "keys", else its base's;
    None where none lists keys), read once per run: Adapter.takes asks for every case."""
    import records  # noqa: E402 (beside this file; only a release's run reads the records)
    name = release
    while name:
        rec = records.read(os.path.join(records.folder(), name + '.json'))
        if 'keys' in rec:
            return frozenset(k['name'] for k in rec['keys'])
        name = rec.get('base')
    return None  # no record of the chain lists keys: every keyword taken


class Adapter:
    """The `nemo` mapping: NeMo's constructor takes every option by its spec name."""

    # the Newton-Schulz format the port runs in (the driver's default --ns-format): bf16, or
    # fp32 for a port that iterates in the parameter's float32 (keras)
    ns_format = 'bf16'
    name = 'nemo'
    ns_function_name = 'zeropower_via_newtonschulz5'
    # whether the port steps a parameter that has no gradient (zero-filled, Keller): the
    # step count of a state without its own counter then counts every optimizer step
    missing_grad_steps = False
    # the profile of a user's record this adapter runs (torch_driver.py --profile-file: a copy of
    # the base's adapter named after the record), or None
    user_profile = None
    # the release this adapter runs (torch_driver.py --adapter keras@3.10: a copy of keras' adapter),
    # or None; a release's port may lack keywords of the newest one (takes)
    release = None

    def takes(self, key: str) -> bool:
        """Whether the port takes the keyword `key`: any of the adapter's own where it runs no
        release; else one of the release's record's "keys" (spec/profiles/RELEASE.json, the base's
        where it lists none)."""
        keys = None if self.release is None else _release_keys(self.release)
        return keys is None or key in keys

    def is_profile(self, profile: str, theirs: str) -> bool:
        """Whether vectors of `profile` are those of the profile `theirs` the adapter's code was
        written for: `theirs` itself, a release of it (`theirs@0.3`, spec/profiles/README.md,
        "Releases": the same options, other values), or the user's record built on it
        (user_profile)."""
        return (release_family(profile) == theirs or
                (self.user_profile is not None and profile == self.user_profile))

    def options_of(self, profile: str, options: Dict[str, Any]) -> Dict[str, Any]:
        """A vector group's options as construct() takes them: a file of the adapter's own
        profile keeps its port's names (construct_native runs them); any other profile's
        options are read in nemo's names (to_nemo), which every adapter maps."""
        own = release_family(profile) == self.name and profile != 'nemo'
        return {'__native__': native(options)} if own else to_nemo(profile, options)

    def build(self, cls, groups):
        """The optimizer over groups, a list of (options_of(...), parameters) pairs: a
        vector of the port's own profile by construct_native, any other by construct."""
        if groups and '__native__' in groups[0][0]:
            return self.construct_native(cls, [(o['__native__'], p) for o, p in groups])
        return self.construct(cls, groups)

    def construct(self, cls, groups):
        """The optimizer over groups, a list of (options in nemo's names, parameters) pairs."""
        param_groups = []
        for options, params in groups:
            entry = dict(self.group_entries(options))
            entry['params'] = params
            param_groups.append(entry)
        return cls(param_groups, **self.constructor_kwargs(groups[0][0]))

    def constructor_kwargs(self, options: Dict[str, Any]) -> Dict[str, Any]:
        """Keyword arguments of the constructor, from the first group's options."""
        return canonical(options)

    def construct_native(self, cls, groups):
        """A vector of the port's own profile: every group's options go into its group dict
        by the port's names, and the first group's also into the constructor (whose checks
        are the ones the catalogue states: PyTorch does not re-check group values)."""
        return cls([dict(o, params=p) for o, p in groups], **groups[0][0])

    def group_entries(self, options: Dict[str, Any]) -> Dict[str, Any]:
        """The entries of a parameter-group dict besides 'params'."""
        return canonical(options)

    # the driver's --state-name: {the port's state key: the protocol's key it holds}
    state_names: Dict[str, str] = {}
    # the key sets of non-empty states read_state could not read (the driver warns once)
    unread_state_keys: set = set()

    def state_of(self, state: Dict[str, Any], steps_with_grad: int) -> Optional[Dict[str, Any]]:
        """read_state of optimizer.state[p] with the port's own keys named by --state-name (a
        copy of the dict: the optimizer's state is not touched).  A non-empty state that gives
        no protocol state, but holds a tensor (a buffer under another name), has its keys noted in
        unread_state_keys; one of flags and counts alone (Moonlight's `use_muon` of a parameter
        that has not stepped) is no state."""
        if state and self.state_names:
            state = dict(state, **{new: state[old] for old, new in self.state_names.items() if old in state})
        out = self.read_state(state, steps_with_grad)
        if out is None and state and any(isinstance(v, torch.Tensor) and v.dim() > 0 for v in state.values()):
            self.unread_state_keys = self.unread_state_keys | {tuple(sorted(str(k) for k in state))}
        return out

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

    def ns_roles(self, profile: str, steps: int) -> Dict[str, Any]:
        """What the Newton-Schulz function gets, besides the matrix, in a case of `profile`
        (its cases give no options: the profile's defaults apply), by role: 'steps', and
        'eps' and 'coefficients' where the port must be told (call_newton_schulz passes each by
        the name the function's signature gives it).  Raises NotExpressible when the port's
        function cannot run the case."""
        return {'steps': steps}

    def newton_schulz_of(self, profile: str, fn, matrix: torch.Tensor, steps: int) -> torch.Tensor:
        """Calls the port's Newton-Schulz function on a float32 matrix for a case of
        `profile` (ns_roles, by the function's parameter names)."""
        return call_newton_schulz(fn, matrix, **self.ns_roles(profile, steps))

    def check_newton_schulz(self, fn, profile: str) -> None:
        """Before any case: raises NsSignatureError when fn's parameters cannot take what
        newton_schulz_of passes in the cases of `profile` (an adapter that calls the
        function its own way overrides both)."""
        try:
            roles = self.ns_roles(profile, 5)
        except NotExpressible:
            return
        ns_binding(fn, roles)
    # The options a scheduler changes (spec/vectors.md 2.8), in nemo's names, and the key each
    # has in this port's param_groups (None: the port has no such option).
    SCHEDULE_KEYS = {'lr': 'lr', 'momentum': 'momentum', 'weight_decay': 'weight_decay', 'adam_betas': 'adam_betas'}

    def set_options(self, opt, params, profile: str, options: Dict[str, Any], changed) -> None:
        """Before a step: sets one vector group's changed options in every entry of
        opt.param_groups that holds one of its parameters (params, by identity), as a
        scheduler does (`group[key] = value`).  options: the vector group's options after the
        change, in the names of `profile` (JSON values); changed: the names in it that changed.
        A file of the adapter's own profile is set by the port's own names; any other through
        nemo's names (to_nemo) and SCHEDULE_KEYS.  Raises NotExpressible for an option the port
        cannot take, ValueError when no param group holds the parameters or a group lacks the
        key (a port that keeps the option elsewhere would silently ignore the change)."""
        own = self.options_of(profile, options)
        if '__native__' in own:
            def entries(group):
                return {k: own['__native__'][k] for k in changed}
        else:
            rename = TO_NEMO[profile]['rename'] if profile != 'nemo' else {k: k for k in changed}
            names = [rename.get(k) for k in changed]
            if None in names:
                raise NotExpressible(f"{profile} options {list(changed)!r} have no nemo equivalent")

            def entries(group):
                return self.schedule_entries(own, names, group)
        targets = [g for g in opt.param_groups if any(p is q for p in g['params'] for q in params)]
        if not targets:
            raise ValueError("no entry of optimizer.param_groups holds the parameters of this vector group")
        for group in targets:
            for key, value in entries(group).items():
                if key not in group:
                    raise ValueError(f"optimizer.param_groups has no key {key!r}: the option cannot be scheduled")
                group[key] = value

    def schedule_entries(self, options: Dict[str, Any], names, group: Dict[str, Any]) -> Dict[str, Any]:
        """The param-group entries that set the options `names` (nemo's) to their values in
        `options` (nemo's names) in param group `group` of this port."""
        o = canonical(options)
        out = {}
        for name in names:
            key = self.SCHEDULE_KEYS.get(name)
            if key is None:
                raise NotExpressible(f"{self.name}: option {name} cannot be scheduled (the port has no such option)")
            out[key] = o[name]
        return out


class Combined:
    """Several torch optimizers as one, for an adapter whose port is not one optimizer: a
    Muon that takes only the matrices, paired with an AdamW for the rest (what training
    scripts do: `for opt in optimizers: opt.step()`).  What the driver uses of an optimizer:
    param_groups (every optimizer's, in order: the same dicts, so a scheduled option set
    there reaches the optimizer), state (the union of their per-parameter states),
    step(closure) (the closure called once, under torch.enable_grad(), then every optimizer
    stepped in order; returns the closure's loss), zero_grad(set_to_none), state_dict() and
    load_state_dict() (one state dict per optimizer).  optimizers: torch.optim.Optimizer
    instances (None entries are left out: an adapter may have no AdamW parameters)."""

    def __init__(self, *optimizers):
        self.optimizers = [o for o in optimizers if o is not None]

    @property
    def param_groups(self):
        return [g for o in self.optimizers for g in o.param_groups]

    @property
    def state(self):
        """A new dict, parameter -> its state, of every optimizer's.  (Not a ChainMap: each
        optimizer's state is a defaultdict, which answers any parameter, so a ChainMap would
        hand the first optimizer's empty entry for a parameter of the second.)"""
        merged = {}
        for o in self.optimizers:
            merged.update(o.state)
        return merged

    def zero_grad(self, set_to_none: bool = False):
        for o in self.optimizers:
            o.zero_grad(set_to_none=set_to_none)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for o in self.optimizers:
            o.step()
        return loss

    def state_dict(self):
        return {'optimizers': [o.state_dict() for o in self.optimizers]}

    def load_state_dict(self, state_dict):
        for o, s in zip(self.optimizers, state_dict['optimizers']):
            o.load_state_dict(s)


class PlainAdapter(Adapter):
    """Every option goes into the group dicts by its spec name; the constructor gets lr only."""

    name = 'plain'

    def constructor_kwargs(self, options: Dict[str, Any]) -> Dict[str, Any]:
        return {'lr': canonical(options)['lr']} if 'lr' in options else {}


def _opt(options, name):
    o = canonical(options)
    return o[name] if name in o else NEMO_DEFAULTS[name]


def _one_group(groups, message):
    """A port without parameter groups (optax, keras, mlx): the first group's options, which every
    group must share but for use_muon (else NotExpressible(message)), and every group's parameters."""
    first = groups[0][0]
    for o, _ in groups[1:]:
        if {k: v for k, v in o.items() if k != 'use_muon'} != {k: v for k, v in first.items() if k != 'use_muon'}:
            raise NotExpressible(message)
    return first, [p for _, ps in groups for p in ps]


def _require(options, name, allowed, port):
    """The option's value when the port can take it; NotExpressible otherwise."""
    v = _opt(options, name)
    if v not in allowed:
        raise NotExpressible(f"{port}: {name}={v!r} is not expressible (the port takes only {allowed!r})")
    return v


class KellerAdapter(Adapter):
    """Keller Jordan's SingleDeviceMuonWithAuxAdam (spec/profiles/keller.md): manual groups with exact keys."""

    name = 'keller'
    missing_grad_steps = True  # `p.grad = torch.zeros_like(p)` (spec/profiles/keller.md 3)

    def muon_entries(self, o):
        """A Muon group's entries besides params, lr, weight_decay and use_muon, from nemo's
        options o (canonical); NotExpressible for a value the port cannot take."""
        _require(o, 'nesterov', (True,), 'keller')
        _require(o, 'ns_steps', (5,), 'keller')
        _require(o, 'scale_mode', ('fan_in',), 'keller')
        return dict(momentum=_opt(o, 'momentum'))

    def construct(self, cls, groups):
        """Each group of nemo's options split by nemo's routing into a Muon group
        (muon_entries) and an AdamW group (lr * adam_lr_ratio, betas, eps)."""
        param_groups = []
        for options, params in groups:
            o = canonical(options)
            entries = self.muon_entries(o)
            thr, um = _opt(o, 'adam_dim_threshold'), _opt(o, 'use_muon')
            muon = [p for p in params if nemo_routes_to_muon(tuple(p.shape), um, thr)]
            adam = [p for p in params if not nemo_routes_to_muon(tuple(p.shape), um, thr)]
            lr, wd = _opt(o, 'lr'), _opt(o, 'weight_decay')
            if muon:
                param_groups.append(dict(params=muon, lr=lr, weight_decay=wd, use_muon=True, **entries))
            if adam:
                ratio = _opt(o, 'adam_lr_ratio')
                a_lr = lr * ratio if isinstance(lr, float) and isinstance(ratio, float) else lr
                param_groups.append(dict(params=adam, lr=a_lr, betas=tuple(_opt(o, 'adam_betas')),
                                         eps=_opt(o, 'adam_eps'), weight_decay=wd, use_muon=False))
        return cls(param_groups)

    def construct_native(self, cls, groups):
        """A keller vector: each group's keys are exactly its branch's (the port asserts the key sets)."""
        return cls([dict(o, params=p) for o, p in groups])
    def schedule_entries(self, options, names, group):
        """A Muon dict takes lr, momentum, weight_decay; an Adam dict lr * adam_lr_ratio, betas,
        weight_decay (the split of construct)."""
        o, out, muon = canonical(options), {}, bool(group.get('use_muon'))
        for name in names:
            if name == 'lr':
                out['lr'] = _opt(o, 'lr') if muon else _opt(o, 'lr') * _opt(o, 'adam_lr_ratio')
            elif name == 'weight_decay':
                out['weight_decay'] = _opt(o, 'weight_decay')
            elif name == 'momentum' and muon:
                out['momentum'] = _opt(o, 'momentum')
            elif name == 'adam_betas' and not muon:
                out['betas'] = tuple(_opt(o, 'adam_betas'))
        return out


class PytorchOptimizerAdapter(KellerAdapter):
    """kozistr/pytorch_optimizer's Muon (spec/profiles/pytorch_optimizer.md): manual groups by
    each group's use_muon (required), Muon groups lr, momentum, weight_decay, nesterov, ns_steps,
    use_adjusted_lr; AdamW groups lr, betas, eps, weight_decay (keller's split and schedule);
    the step count is the group's (the driver reads param_groups[i]['step']); a missing
    gradient is skipped."""

    name = 'pytorch_optimizer'
    ns_function_name = 'zero_power_via_newton_schulz_5'
    missing_grad_steps = False

    def construct_native(self, cls, groups):
        """A pytorch_optimizer vector: each group's keys into its dict, but the record's keys of
        scope init, which are the constructor's (maximize: self.maximize; adamw_lr, adamw_betas,
        adamw_wd, adamw_eps: the AdamW groups' defaults, given by the AdamW groups of a case of
        constructor defaults: spec/profiles/pytorch_optimizer.md 1)."""
        init = init_keys(self.name)
        kw = {}
        for o, _ in groups:
            kw.update({k: (tuple(v) if isinstance(v, list) else v) for k, v in o.items() if k in init})
        return cls([dict({k: v for k, v in o.items() if k not in init}, params=p) for o, p in groups], **kw)

    def muon_entries(self, o):
        """nemo's fan_in is use_adjusted_lr True (its other scale modes are not expressible)."""
        _require(o, 'scale_mode', ('fan_in',), 'pytorch_optimizer')
        return dict(momentum=_opt(o, 'momentum'), nesterov=_opt(o, 'nesterov'), ns_steps=_opt(o, 'ns_steps'),
                    use_adjusted_lr=True)


class PytorchOptimizerAdaMuonAdapter(PytorchOptimizerAdapter):
    """kozistr/pytorch_optimizer's AdaMuon (spec/profiles/pytorch_optimizer_adamuon.md): the
    groups of its Muon class, a Muon group's betas (momentum, second-moment beta) and eps (the
    second moment's); its state m (momentum_buffer) and v (moment2, kept flattened: read in
    the parameter's shape, the element order unchanged)."""

    name = 'pytorch_optimizer_adamuon'

    def muon_entries(self, o):
        """nemo's options: no Nesterov (AdaMuon has none), fan_in (use_adjusted_lr True); the
        second moment keeps its defaults (no nemo option sets them)."""
        _require(o, 'scale_mode', ('fan_in',), 'pytorch_optimizer_adamuon')
        _require(o, 'nesterov', (False,), 'pytorch_optimizer_adamuon')
        return dict(betas=(_opt(o, 'momentum'), 0.95), ns_steps=_opt(o, 'ns_steps'), use_adjusted_lr=True)

    def schedule_entries(self, options, names, group):
        """nemo's momentum is a Muon group's betas[0] (its beta2 kept)."""
        out = super().schedule_entries(options, [n for n in names if n != 'momentum'], group)
        if 'momentum' in names and group.get('use_muon'):
            out['betas'] = (_opt(canonical(options), 'momentum'), group['betas'][1])
        return out

    def read_state(self, state, steps_with_grad):
        if state and 'm' in state and 'v' in state:
            step = _count(state['step']) if 'step' in state else steps_with_grad  # the group's (torch_driver)
            return {'step': step, 'momentum_buffer': state['m'], 'moment2': state['v'].view_as(state['m'])}
        return super().read_state(state, steps_with_grad)


class TorchAdapter(Adapter):
    """torch.optim.Muon (spec/profiles/torch.md): 2-D Muon parameters only, no AdamW."""

    name = 'torch'
    ns_function_name = '_zeropower_via_newtonschulz'
    SCHEDULE_KEYS = {'lr': 'lr', 'momentum': 'momentum', 'weight_decay': 'weight_decay', 'adam_betas': None}

    def group_entries(self, options):
        o = canonical(options)
        scale = _require(o, 'scale_mode', ('fan_in',), 'torch')
        return {'lr': _opt(o, 'lr'), 'weight_decay': _opt(o, 'weight_decay'), 'momentum': _opt(o, 'momentum'),
                'nesterov': _opt(o, 'nesterov'), 'ns_steps': _opt(o, 'ns_steps'),
                'adjust_lr_fn': None if scale == 'fan_in' else scale}

    def constructor_kwargs(self, options):
        return self.group_entries(options)

    def construct(self, cls, groups):
        for options, params in groups:
            o = canonical(options)
            for p in params:
                if not nemo_routes_to_muon(tuple(p.shape), _opt(o, 'use_muon'), _opt(o, 'adam_dim_threshold')):
                    raise NotExpressible(f"torch: a parameter of shape {tuple(p.shape)} routed to AdamW "
                                         "(torch.optim.Muon has no AdamW fallback)")
        return super().construct(cls, groups)

    def ns_roles(self, profile, steps):
        return {'coefficients': KELLER_TRIPLE, 'steps': steps, 'eps': 1e-07}


class MoonlightAdapter(Adapter):
    """Moonlight's Muon (spec/profiles/moonlight.md): one group, muon_params / adamw_params lists."""

    name = 'moonlight'
    SCHEDULE_KEYS = {'lr': 'lr', 'momentum': 'momentum', 'weight_decay': 'wd', 'adam_betas': 'adamw_betas'}

    def construct(self, cls, groups):
        first = canonical(groups[0][0])
        for options, _ in groups[1:]:
            o = canonical(options)
            if {k: v for k, v in o.items() if k != 'use_muon'} != {k: v for k, v in first.items() if k != 'use_muon'}:
                raise NotExpressible("moonlight: groups with different options (Moonlight's Muon has one group)")
        _require(first, 'scale_mode', ('fan_in',), 'moonlight')
        _require(first, 'adam_lr_ratio', (0.025, 1.0), 'moonlight')
        muon, adam = [], []
        for options, params in groups:
            o = canonical(options)
            for p in params:
                (muon if nemo_routes_to_muon(tuple(p.shape), _opt(o, 'use_muon'), _opt(o, 'adam_dim_threshold')) else adam).append(p)
        return cls(lr=_opt(first, 'lr'), wd=_opt(first, 'weight_decay'), muon_params=muon,
                   momentum=_opt(first, 'momentum'), nesterov=_opt(first, 'nesterov'), ns_steps=_opt(first, 'ns_steps'),
                   adamw_params=adam, adamw_betas=tuple(_opt(first, 'adam_betas')), adamw_eps=_opt(first, 'adam_eps'))

    def construct_native(self, cls, groups):
        """A moonlight vector: one group; use_muon says which list a group's parameters join."""
        first = {k: v for k, v in groups[0][0].items() if k != 'use_muon'}
        muon = [p for o, ps in groups if o.get('use_muon') for p in ps]
        adam = [p for o, ps in groups if not o.get('use_muon') for p in ps]
        return cls(muon_params=muon, adamw_params=adam, **first)

    def read_state(self, state, steps_with_grad):
        if 'moment1' in state and 'moment2' in state:
            return {'step': _count(state['step']), 'exp_avg': state['moment1'], 'exp_avg_sq': state['moment2']}
        return super().read_state(state, steps_with_grad)


class TimmAdapter(Adapter):
    """timm's Muon (spec/profiles/timm.md): Keller's triple as preset "original", shared eps."""

    name = 'timm'
    ns_function_name = 'zeropower_via_newtonschulz'
    SCHEDULE_KEYS = {'lr': 'lr', 'momentum': 'momentum', 'weight_decay': 'weight_decay', 'adam_betas': 'betas'}

    def group_entries(self, options):
        o = canonical(options)
        scale = _require(o, 'scale_mode', ('fan_in', 'none'), 'timm')
        um = _opt(o, 'use_muon')
        if um is None and _opt(o, 'adam_dim_threshold') != NEMO_DEFAULTS['adam_dim_threshold']:
            raise NotExpressible("timm: adam_dim_threshold is not expressible (timm routes by its own heuristic)")
        entry = {'lr': _opt(o, 'lr'), 'momentum': _opt(o, 'momentum'), 'nesterov': _opt(o, 'nesterov'),
                 'ns_steps': _opt(o, 'ns_steps'), 'weight_decay': _opt(o, 'weight_decay'),
                 'adjust_lr_fn': 'original' if scale == 'fan_in' else None, 'ns_coefficients': 'original',
                 'betas': tuple(_opt(o, 'adam_betas')), 'eps': _opt(o, 'adam_eps'),
                 'fallback_lr_scale': _opt(o, 'adam_lr_ratio')}
        if um is not None:
            entry['use_muon'] = um
        return entry

    def constructor_kwargs(self, options):
        kw = self.group_entries(options)
        kw.pop('use_muon', None)
        return kw

    def ns_roles(self, profile, steps):
        """timm's own cases: its defaults (the quintic list, eps 1e-7, safety 1.0); any
        other profile's: nemo's (Keller's triple)."""
        coefficients = [tuple(t) for t in TIMM_QUINTIC] if self.is_profile(profile, 'timm') else [KELLER_TRIPLE]
        return {'steps': steps, 'coefficients': coefficients, 'eps': 1e-07}

    def construct_native(self, cls, groups):
        """A timm vector: every group's options by timm's names (ns_coefficients a list of
        triples, betas a pair, use_muon only when given) in its group dict; the first
        group's, but use_muon (a group key only), also into the constructor."""
        def entry(o):
            o = dict(o)
            if 'ns_coefficients' in o and not isinstance(o['ns_coefficients'], str):
                o['ns_coefficients'] = [tuple(real_value(x) for x in t) if isinstance(t, (list, tuple)) else t
                                        for t in o['ns_coefficients']]
            if o.get('use_muon', 0) is None:
                del o['use_muon']
            return o
        kwargs = entry(groups[0][0])
        kwargs.pop('use_muon', None)
        kwargs.pop('use_fallback', None)  # a group key only, as use_muon
        return cls([dict(entry(o), params=p) for o, p in groups], **kwargs)

    def read_state(self, state, steps_with_grad):
        """Muon: momentum_buffer; AdaMuon (algo "adamuon") also its step and exp_avg_sq,
        the second moment (moment2, spec/profiles/timm.md 11)."""
        out = super().read_state(state, steps_with_grad)
        if out and 'momentum_buffer' in out and 'exp_avg_sq' in state:
            out['moment2'] = state['exp_avg_sq']
        return out


class EmergingAdapter(Adapter):
    """NVIDIA-NeMo/Emerging-Optimizers' Muon (spec/profiles/emerging.md): lr, momentum and
    weight_decay per group, the other options the optimizer's (keyword-only); 2-D
    parameters only, no AdamW; newton_schulz(x, steps, coefficient_type) runs bf16 under
    the float32 matmul precision "medium", which the optimizer sets around its call."""

    name = 'emerging'
    ns_function_name = 'newton_schulz'
    SCHEDULE_KEYS = {'lr': 'lr', 'momentum': 'momentum', 'weight_decay': 'weight_decay', 'adam_betas': None}
    OPTIMIZER_KEYS = ('nesterov', 'weight_decay_method', 'num_ns_steps', 'scale_mode', 'extra_scale_factor',
                      'coefficient_type')

    def group_entries(self, options):
        o = canonical(options)
        return {'lr': _opt(o, 'lr'), 'momentum': _opt(o, 'momentum'), 'weight_decay': _opt(o, 'weight_decay')}

    def constructor_kwargs(self, options):
        o = canonical(options)
        scale = _require(o, 'scale_mode', ('fan_in',), 'emerging')
        return {'nesterov': _opt(o, 'nesterov'), 'num_ns_steps': _opt(o, 'ns_steps'),
                'scale_mode': 'shape_scaling' if scale == 'fan_in' else scale, 'extra_scale_factor': 1.0,
                'coefficient_type': 'simple'}

    def construct(self, cls, groups):
        first = canonical(groups[0][0])
        for options, params in groups:
            o = canonical(options)
            for key in ('nesterov', 'ns_steps', 'scale_mode'):
                if _opt(o, key) != _opt(first, key):
                    raise NotExpressible(f"emerging: groups with different {key} (an optimizer option of the port)")
            for p in params:
                if not nemo_routes_to_muon(tuple(p.shape), _opt(o, 'use_muon'), _opt(o, 'adam_dim_threshold')):
                    raise NotExpressible(f"emerging: a parameter of shape {tuple(p.shape)} routed to AdamW "
                                         "(the port has no AdamW fallback)")
        return super().construct(cls, groups)

    def construct_native(self, cls, groups):
        """An emerging vector: lr, momentum, weight_decay in each group dict; nesterov,
        num_ns_steps, scale_mode and extra_scale_factor, the optimizer's own, from the first
        group (they must agree across groups: NotExpressible otherwise)."""
        first = groups[0][0]
        for o, _ in groups[1:]:
            for key in self.OPTIMIZER_KEYS:
                if o.get(key) != first.get(key):
                    raise NotExpressible(f"emerging: groups with different {key} (an optimizer option of the port)")
        kwargs = {k: v for k, v in first.items() if k in self.OPTIMIZER_KEYS}
        entries = [dict({k: v for k, v in o.items() if k not in self.OPTIMIZER_KEYS}, params=p) for o, p in groups]
        return cls(entries, **kwargs)

    def ns_roles(self, profile, steps):
        """emerging's own cases: its defaults (quintic, cycled; eps 1e-15); another profile's:
        Keller's triple is the preset "simple" (eps stays the port's 1e-15, clamped)."""
        return {'steps': steps, 'coefficients': 'quintic' if self.is_profile(profile, 'emerging') else 'simple'}

    def newton_schulz_of(self, profile, fn, matrix, steps):
        """The call, with float32 matmuls in bf16 (torch's 'medium' precision, as the port runs them)."""
        old = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision('medium')
        try:
            return super().newton_schulz_of(profile, fn, matrix, steps)
        finally:
            torch.set_float32_matmul_precision(old)


class EmergingAdaptiveAdapter(EmergingAdapter):
    """NVIDIA-NeMo/Emerging-Optimizers' AdaptiveMuon (spec/profiles/emerging_adaptive.md):
    emerging's mapping, with lr, momentum and weight_decay also passed as the three required
    positionals (the first group's; each group dict keeps its own), moment2_method one more
    optimizer keyword (passed where a case gives it, else upstream's default "adamuon"), beta2
    and eps group keys; Newton-Schulz as emerging's (quintic on the profile's own cases).
    Reads back momentum_buffer, and moment2_buffer as the protocol's moment2 (adamuon: the
    parameter's shape; normuon: (rows, 1) when rows >= cols, else (1, cols)); no step in the
    state (the driver counts the steps with a gradient)."""

    name = 'emerging_adaptive'
    SCHEDULE_KEYS = dict(EmergingAdapter.SCHEDULE_KEYS, moment2_beta='beta2')
    OPTIMIZER_KEYS = EmergingAdapter.OPTIMIZER_KEYS + ('moment2_method',)
    # adaptive_muon.py:72-74 gives the three no default: an error case that gives only the option
    # under test gets emerging's defaults (the record's placeholders, which no case relies on)
    POSITIONALS = (('lr', 3e-4), ('momentum', 0.95), ('weight_decay', 0.01))

    def construct_native(self, cls, groups):
        """An emerging_adaptive vector: emerging's construct_native (the optimizer's keys, now with
        moment2_method, from the first group; the rest, beta2 and eps among them, in each group
        dict), the positionals from the first group."""
        first = groups[0][0]
        lr, momentum, weight_decay = (first.get(k, d) for k, d in self.POSITIONALS)
        return super().construct_native(lambda entries, **kw: cls(entries, lr, momentum, weight_decay, **kw), groups)

    def construct(self, cls, groups):
        """Another profile's vector (nemo's names): emerging's, the positionals from the first
        group's entries; moment2_method, beta2 and eps keep upstream's defaults (no nemo option
        sets them)."""
        first = self.group_entries(groups[0][0])
        return super().construct(
            lambda entries, **kw: cls(entries, first['lr'], first['momentum'], first['weight_decay'], **kw), groups)

    def ns_roles(self, profile, steps):
        """The profile's own cases: emerging's defaults (quintic, cycled; eps 1e-15), as on
        emerging's; another profile's: Keller's triple (the preset "simple")."""
        if self.is_profile(profile, 'emerging_adaptive'):
            return {'steps': steps, 'coefficients': 'quintic'}
        return super().ns_roles(profile, steps)

    def read_state(self, state, steps_with_grad):
        out = super().read_state(state, steps_with_grad)
        if out and 'momentum_buffer' in out and 'moment2_buffer' in state:
            out['moment2'] = state['moment2_buffer']
        return out


class DionAdapter(Adapter):
    """dion.Muon (spec/profiles/dion.md): groups by algorithm, beta1/beta2 group keys, one
    epsilon, Polar Express with no step count."""

    name = 'dion'
    ns_function_name = 'polar_express'
    SCHEDULE_KEYS = {'lr': 'lr', 'momentum': 'mu', 'weight_decay': 'weight_decay', 'adam_betas': 'betas'}

    @staticmethod
    def _group(o):
        """A group dict of dion's keys from options by dion's names: betas become the group
        keys beta1 and beta2 (the constructor's defaults dict splits them so)."""
        o = dict(o)
        if 'betas' in o:
            o['beta1'], o['beta2'] = (real_value(x) for x in o.pop('betas'))
        return o

    def construct_native(self, cls, groups):
        """A dion vector: every group's options in its group dict (algorithm and num_heads
        group keys only: the record's scope group_only), the first group's, but those, also into
        the constructor."""
        kwargs = dict(groups[0][0])
        for key in group_only_keys(self.name) | {'algorithm'}:
            kwargs.pop(key, None)
        if 'betas' in kwargs:
            kwargs['betas'] = tuple(real_value(x) for x in kwargs['betas'])
        return cls([dict(self._group(o), params=p) for o, p in groups], **kwargs)

    def construct(self, cls, groups):
        """Options in nemo's names: each group split by nemo's rule into a "muon" and an
        "adamw" group; nemo's fan_in scale and another step count are not expressible."""
        param_groups = []
        for options, params in groups:
            o = canonical(options)
            _require(o, 'ns_steps', (5,), 'dion')
            scale = _require(o, 'scale_mode', ('none',), 'dion')
            thr, um = _opt(o, 'adam_dim_threshold'), _opt(o, 'use_muon')
            muon = [p for p in params if nemo_routes_to_muon(tuple(p.shape), um, thr)]
            adam = [p for p in params if not nemo_routes_to_muon(tuple(p.shape), um, thr)]
            lr, wd = _opt(o, 'lr'), _opt(o, 'weight_decay')
            b1, b2 = _opt(o, 'adam_betas')
            common = dict(weight_decay=wd, epsilon=_opt(o, 'adam_eps'), beta1=b1, beta2=b2, flatten=True,
                          adjust_lr=None if scale == 'none' else scale)
            if muon:
                param_groups.append(dict(common, params=muon, lr=lr, mu=_opt(o, 'momentum'),
                                         nesterov=_opt(o, 'nesterov'), algorithm='muon'))
            if adam:
                ratio = _opt(o, 'adam_lr_ratio')
                a_lr = lr * ratio if isinstance(lr, float) and isinstance(ratio, float) else lr
                param_groups.append(dict(common, params=adam, lr=a_lr, algorithm='adamw'))
        return cls(param_groups)

    def read_state(self, state, steps_with_grad):
        """Muon: state["momentum"], the step counted by the glue; AdamW: momentum, variance
        and the float32 counter step_dev (dion.md 9)."""
        if not state or 'momentum' not in state:
            return None
        if 'variance' in state:
            return {'step': _count(state['step_dev']), 'exp_avg': state['momentum'], 'exp_avg_sq': state['variance']}
        return {'step': steps_with_grad, 'momentum_buffer': state['momentum']}

    def ns_roles(self, profile, steps):
        """dion's own cases: polar_express(G, epsilon) with the optimizer's epsilon 1e-8; it
        takes no step count (its five triples are the loop)."""
        if not self.is_profile(profile, 'dion'):
            raise NotExpressible("dion: polar_express runs its own five Polar Express triples, not nemo's iteration")
        if steps != 5:
            raise NotExpressible(f"dion: polar_express takes no step count ({steps} asked, it runs 5)")
        return {'eps': 1e-8}

    def set_options(self, opt, params, profile, options, changed):
        """dion's own files: mu, lr and weight_decay by name, betas as beta1 and beta2."""
        if not self.is_profile(profile, 'dion'):
            return super().set_options(opt, params, profile, options, changed)
        own = self._group(native({k: options[k] for k in changed}))
        targets = [g for g in opt.param_groups if any(p is q for p in g['params'] for q in params)]
        if not targets:
            raise ValueError("no entry of optimizer.param_groups holds the parameters of this vector group")
        for group in targets:
            for key, value in own.items():
                if key not in group:
                    raise ValueError(f"optimizer.param_groups has no key {key!r}: the option cannot be scheduled")
                group[key] = value

    def schedule_entries(self, options, names, group):
        o, out = canonical(options), {}
        for name in names:
            if name == 'adam_betas':
                out['beta1'], out['beta2'] = _opt(o, 'adam_betas')
            elif name == 'momentum':
                out['mu'] = _opt(o, 'momentum')
            elif name == 'lr':
                out['lr'] = _opt(o, 'lr') if group.get('algorithm') == 'muon' else _opt(o, 'lr') * _opt(o, 'adam_lr_ratio')
            else:
                out[name] = _opt(o, name)
        return out


class OptaxAdapter(Adapter):
    """optax.contrib.muon (spec/profiles/optax.md) through tests/ports/torch_optax_port.py's Muon: one
    transformation over every parameter (one param group), options by optax's names
    (learning_rate, beta, eps, adam_b1, adam_b2, ...); every 2-D parameter takes Muon, the rest
    NAdam(W); Newton-Schulz in float32 (the driver's --ns-format fp32)."""

    name = 'optax'
    ns_format = 'fp32'  # optax.md 4: Newton-Schulz in the parameter's dtype
    ns_function_name = 'newton_schulz'
    SCHEDULE_KEYS = {'lr': 'learning_rate', 'momentum': 'beta', 'weight_decay': 'weight_decay', 'adam_betas': None}

    @staticmethod
    def _one_group(groups, what):
        return _one_group(groups, f"optax: groups with different options ({what}): optax is one transformation")

    def construct_native(self, cls, groups):
        """An optax vector: the (equal) options of its groups as muon's keywords, every
        parameter in one group."""
        first, params = self._one_group(groups, 'optax names')
        return cls(params, **first)

    def construct(self, cls, groups):
        """Options in nemo's names: lr, momentum, nesterov, ns_steps, weight_decay, adam_betas and
        adam_eps (optax's one eps) map; nemo's fan_in scale, its threshold routing and its AdamW lr
        ratio are left to optax's own (fan_out, every 2-D leaf, ratio 1); use_muon given is not
        expressible (optax routes by ndim)."""
        first, params = self._one_group([(canonical(o), p) for o, p in groups], 'nemo names')
        o = first
        if _opt(o, 'use_muon') is not None:
            raise NotExpressible("optax: use_muon given (optax routes every 2-D leaf to Muon, the rest to Adam)")
        b1, b2 = _opt(o, 'adam_betas')
        return cls(params, learning_rate=_opt(o, 'lr'), beta=_opt(o, 'momentum'), nesterov=_opt(o, 'nesterov'),
                   ns_steps=_opt(o, 'ns_steps'), weight_decay=_opt(o, 'weight_decay'), adam_b1=b1, adam_b2=b2,
                   eps=_opt(o, 'adam_eps'))

    def schedule_entries(self, options, names, group):
        o, out = canonical(options), {}
        for name in names:
            if name == 'adam_betas':
                out['adam_b1'], out['adam_b2'] = _opt(o, 'adam_betas')
            elif name in self.SCHEDULE_KEYS:
                out[self.SCHEDULE_KEYS[name]] = _opt(o, name)
            else:
                raise NotExpressible(f"optax: option {name} cannot be scheduled")
        return out


class MegatronAdapter(Adapter):
    """Megatron-LM's Muon (spec/profiles/megatron.md) as tests/ports/torch_megatron_port.py's
    MegatronMuon: OptimizerConfig's names; lr, weight_decay, muon_momentum, adam_beta1,
    adam_beta2, adam_eps and use_muon (False: the embedding/output tag) per group, the
    others (clip_grad, muon_nesterov or at core_v0.17 muon_use_nesterov, muon_scale_mode,
    muon_num_ns_steps, muon_extra_scale_factor, decoupled_weight_decay) one value for the optimizer.  Another profile's options in
    nemo's names: adam_lr_ratio and adam_dim_threshold at nemo's defaults are left to the
    port's own rule (AdamW at Muon's lr; routing by the tag and ndim == 2), adam_lr_ratio 1
    is the port's, other values raise NotExpressible, as use_muon True on a parameter that is not 2-D does;
    clipping is the
    port's own default (clip_grad 1.0: nemo has none)."""

    name = 'megatron'
    ns_function_name = 'newton_schulz'
    SCHEDULE_KEYS = {'lr': 'lr', 'momentum': 'muon_momentum', 'weight_decay': 'weight_decay',
                     'adam_betas': 'adam_betas'}
    # muon_use_nesterov: core_v0.17's name of muon_nesterov (megatron@0.17's vectors)
    OPTIMIZER_KEYS = ('clip_grad', 'muon_nesterov', 'muon_use_nesterov', 'muon_scale_mode', 'muon_coefficient_type',
                      'muon_num_ns_steps', 'muon_extra_scale_factor', 'decoupled_weight_decay', 'muon_split_qkv')

    def nesterov_key(self):
        """The Nesterov keyword of the release the adapter runs: muon_use_nesterov up to core_v0.17
        (megatron@0.17's record), muon_nesterov since."""
        return 'muon_use_nesterov' if self.release is not None and self.takes('muon_use_nesterov') else 'muon_nesterov'

    def construct_native(self, cls, groups):
        """A megatron vector: the optimizer's keys from the first group (every group must
        agree: NotExpressible otherwise), the rest into each group dict."""
        first, keys = groups[0][0], self.OPTIMIZER_KEYS
        for o, _ in groups[1:]:
            for key in keys:
                if o.get(key) != first.get(key):
                    raise NotExpressible(f"megatron: groups with different {key} (one value for the optimizer)")
        kwargs = {k: v for k, v in first.items() if k in keys}
        entries = [dict({k: v for k, v in o.items() if k not in keys}, params=p) for o, p in groups]
        return cls(entries, **kwargs)

    def construct(self, cls, groups):
        first = canonical(groups[0][0])
        entries = []
        for options, params in groups:
            o = canonical(options)
            for key in ('nesterov', 'ns_steps', 'scale_mode'):
                if _opt(o, key) != _opt(first, key):
                    raise NotExpressible(f"megatron: groups with different {key} (one value for the optimizer)")
            for key in ('adam_lr_ratio', 'adam_dim_threshold'):
                if _opt(o, key) != NEMO_DEFAULTS[key] and not (key == 'adam_lr_ratio' and _opt(o, key) == 1.0):
                    raise NotExpressible(f"megatron: {key}={_opt(o, key)!r} (the port has no such option)")
            um = _opt(o, 'use_muon')
            if um is True and any(len(p.shape) != 2 for p in params):
                raise NotExpressible("megatron: use_muon=True on a parameter that is not 2-D (Megatron Core sends it "
                                     "to Adam)")
            b1, b2 = _opt(o, 'adam_betas')
            entries.append({'params': params, 'lr': _opt(o, 'lr'), 'weight_decay': _opt(o, 'weight_decay'),
                            'muon_momentum': _opt(o, 'momentum'), 'adam_beta1': b1, 'adam_beta2': b2,
                            'adam_eps': _opt(o, 'adam_eps'), 'use_muon': False if um is False else None})
        scale = _require(first, 'scale_mode', ('fan_in',), 'megatron')
        return cls(entries, **{self.nesterov_key(): _opt(first, 'nesterov')}, muon_num_ns_steps=_opt(first, 'ns_steps'),
                   muon_scale_mode='shape_scaling' if scale == 'fan_in' else scale, muon_extra_scale_factor=1.0)

    def schedule_entries(self, options, names, group):
        o, out = canonical(options), {}
        for name in names:
            if name == 'adam_betas':
                out['adam_beta1'], out['adam_beta2'] = _opt(o, 'adam_betas')
            else:
                out[self.SCHEDULE_KEYS[name]] = _opt(o, name)
        return out

    def ns_roles(self, profile, steps):
        """megatron's own cases: its default, quintic cycled; another profile's: Keller's
        triple (the port's 'simple')."""
        return {'steps': steps, 'coefficients': 'quintic' if self.is_profile(profile, 'megatron') else 'simple'}


class MegatronAdaptiveAdapter(MegatronAdapter):
    """Megatron Core's optimizer='adaptive_muon' (spec/profiles/megatron.md 8) as
    tests/ports/torch_megatron_port.py's MegatronAdaptiveMuon: megatron's keys and the three of
    adaptive_muon, one value for the optimizer; the state's moment2_buffer is the second
    moment.  Another profile's options: megatron's mapping (its second moment keeps the
    port's defaults: no nemo option sets one)."""

    name = 'megatron_adaptive'
    OPTIMIZER_KEYS = MegatronAdapter.OPTIMIZER_KEYS + ('adaptive_muon_moment2_method', 'adaptive_muon_beta2',
                                                      'adaptive_muon_eps')

    def read_state(self, state, steps_with_grad):
        out = super().read_state(state, steps_with_grad)
        if out and 'momentum_buffer' in out and 'moment2_buffer' in state:
            out['moment2'] = state['moment2_buffer']
        return out

    def ns_roles(self, profile, steps):
        """its own cases: quintic, as megatron's."""
        return {'steps': steps, 'coefficients': 'quintic' if self.is_profile(profile, 'megatron_adaptive') or
                self.is_profile(profile, 'megatron') else 'simple'}


def split_concat_func(spec):
    """A vector's split_concat_func (spec/muon.md 7.6: null, or {"axis": A, "sizes": [...]}) as the
    callable Paddle's MuonParamInfo takes: the Newton-Schulz input split along A into the sizes,
    ortho_fn on each part, the parts concatenated back; None for null."""
    if spec is None:
        return None
    axis, sizes = int(spec['axis']), [int(s) for s in spec['sizes']]

    def split_concat(u, ortho_fn):
        return torch.cat([ortho_fn(part) for part in torch.split(u, sizes, dim=axis)], dim=axis)
    return split_concat


class PaddleAdapter(Adapter):
    """paddle.optimizer.Muon (spec/profiles/paddle.md): one flat list of parameters; the
    vector's groups become its per-parameter callables and map, by parameter name
    (`param.muonref_name`, set by the driver from the vector's params[i].name; a repeated name gets
    "@k" appended, which no exclude pattern matches):
    - use_muon true/false -> muon_param_info_map[name] = MuonParamInfo(use_muon); null -> the
      default rule `cls._default_should_use_muon(name, shape, muon_exclude_patterns or [])`;
    - weight_decay: one value w for the optimizer; a group with weight_decay 0 is
      apply_decay_param_fun(name) False (groups with two different nonzero values:
      NotExpressible);
    - lr_ratio -> lr_ratio(param) (a callable returning the group's value);
    - split_concat_func {"axis", "sizes"} -> MuonParamInfo(..., split_concat_func=the split it names);
    - every other option is the optimizer's and must agree across groups (else NotExpressible).
    Schedules set learning_rate, momentum, weight_decay, adam_beta1/2 in the one param group."""

    name = 'paddle'
    ns_function_name = 'zeropower_via_newtonschulz5'
    SCHEDULE_KEYS = {'lr': 'lr', 'momentum': 'momentum', 'weight_decay': 'weight_decay', 'adam_betas': None}
    PER_PARAM = ('use_muon', 'weight_decay', 'lr_ratio', 'split_concat_func', '__route')
    REAL = ('learning_rate', 'momentum', 'adam_beta1', 'adam_beta2', 'weight_decay', 'adam_epsilon', 'lr_ratio',
            'muon_extra_scale_factor')

    def options_of(self, profile, options):
        if self.is_profile(profile, 'paddle'):
            return {'__native__': {k: (real_value(v) if k in self.REAL else v) for k, v in options.items()}}
        return to_nemo(profile, options)

    @staticmethod
    def _unique_names(params):
        seen = {}
        for p in params:
            base = getattr(p, 'muonref_name', None) or 'p'
            k = seen.get(base, 0)
            seen[base] = k + 1
            p.muonref_name = base if k == 0 else f"{base}@{k}"

    def _paddle(self, cls, groups, default_rule):
        """groups: (options by Paddle's names, params); default_rule(name, shape, options) for
        use_muon null."""
        first = groups[0][0]
        self._unique_names([p for _, ps in groups for p in ps])
        for o, _ in groups[1:]:
            for key in set(first) | set(o):
                if key not in self.PER_PARAM and o.get(key) != first.get(key):
                    raise NotExpressible(f"paddle: groups with different {key} (one flat list: an optimizer option)")
        wds = {o.get('weight_decay', 0.01) for o, _ in groups} - {0.0}
        if len(wds) > 1:
            raise NotExpressible(f"paddle: groups with weight decays {sorted(wds)!r} (one weight_decay, and "
                                 "apply_decay_param_fun can only turn it off)")
        info, no_decay, ratio = {}, set(), {}
        for o, params in groups:
            for p in params:
                um = o.get('use_muon')
                info[p.muonref_name] = cls.MuonParamInfo(
                    use_muon=default_rule(p.muonref_name, tuple(p.shape), o) if um is None else um,
                    split_concat_func=split_concat_func(o.get('split_concat_func')))
                ratio[p.muonref_name] = o.get('lr_ratio', 1.0)
                if o.get('weight_decay', 0.01) == 0.0:
                    no_decay.add(p.muonref_name)
        kwargs = {k: v for k, v in first.items() if k not in self.PER_PARAM}
        if 'learning_rate' in kwargs:
            kwargs['learning_rate'] = float(kwargs['learning_rate'])
        if isinstance(kwargs.get('grad_clip'), dict):
            kwargs['grad_clip'] = self._grad_clip(cls, kwargs['grad_clip'])
        return cls(parameters=[p for _, ps in groups for p in ps], weight_decay=wds.pop() if wds else 0.0,
                   lr_ratio=lambda p: ratio[p.muonref_name], apply_decay_param_fun=lambda name: name not in no_decay,
                   muon_param_info_map=info, **kwargs)

    @staticmethod
    def _grad_clip(cls, spec):
        """A grad_clip object {"class": NAME, "clip_norm": c} or {"class": "ClipGradByValue", "max": v}
        (spec/profiles/paddle.md 8) made with the class of that name beside the port's optimizer (its
        module's, as the test port has them), else paddle.nn's."""
        name = spec['class']
        make = getattr(sys.modules.get(cls.__module__), name, None)
        if make is None:
            try:
                import paddle  # noqa: F401 (PaddlePaddle's own classes, where Paddle runs)
                make = getattr(paddle.nn, name)
            except (ImportError, AttributeError):
                raise NotExpressible(f"paddle: grad_clip {name}: neither the port's module nor paddle.nn has it")
        if name == 'ClipGradByValue':
            return make(max=real_value(spec['max']))
        return make(clip_norm=real_value(spec['clip_norm']))

    def construct_native(self, cls, groups):
        def rule(name, shape, o):
            return cls._default_should_use_muon(name, shape, o.get('muon_exclude_patterns') or [])
        return self._paddle(cls, groups, rule)

    def construct(self, cls, groups):
        """Options in nemo's names: nemo's routing rule decides each parameter's map entry;
        nemo's fan_in scale, eps 1e-7 and AdamW ratio 0.025 are left to the port's own
        (muon_version 1, 0.2, eps = adam_epsilon): it fails nemo's cases."""
        out = []
        for options, params in groups:
            o = canonical(options)
            b1, b2 = _opt(o, 'adam_betas')
            out.append(({'learning_rate': _opt(o, 'lr'), 'momentum': _opt(o, 'momentum'), 'adam_beta1': b1,
                         'adam_beta2': b2, 'weight_decay': _opt(o, 'weight_decay'), 'ns_steps': _opt(o, 'ns_steps'),
                         'nesterov': _opt(o, 'nesterov'), 'adam_epsilon': _opt(o, 'adam_eps'),
                         'lr_ratio': _opt(o, 'adam_lr_ratio'), 'use_muon': None,
                         '__route': (_opt(o, 'use_muon'), _opt(o, 'adam_dim_threshold'))}, params))

        def rule(name, shape, o):
            return nemo_routes_to_muon(shape, *o['__route'])
        return self._paddle(cls, out, rule)

    def read_state(self, state, steps_with_grad):
        """moment1 is the Muon buffer or AdamW's m; moment2 AdamW's v; master_weight the float32
        master of a bf16 parameter under multi_precision (Paddle's fp32_master_0; paddle.md 9); the
        step counted by the glue for both branches."""
        if not state or 'moment1' not in state:
            return None
        if 'moment2' in state:
            out = {'step': steps_with_grad, 'exp_avg': state['moment1'], 'exp_avg_sq': state['moment2']}
        else:
            out = {'step': steps_with_grad, 'momentum_buffer': state['moment1']}
        if 'master_weight' in state:
            out['master'] = state['master_weight']
        return out

    def ns_roles(self, profile, steps):
        """Keller's triple is the preset "simple" (ns_coeffs None); the port's eps (1e-9,
        clamped, in float32 before the bf16 cast) stays."""
        return {'steps': steps, 'eps': 1e-9, 'coefficients': None}

    def schedule_entries(self, options, names, group):
        o, out = canonical(options), {}
        for name in names:
            if name == 'adam_betas':
                out['adam_beta1'], out['adam_beta2'] = _opt(o, 'adam_betas')
            else:
                out[name] = _opt(o, name)
        return out

    def set_options(self, opt, params, profile, options, changed):
        """paddle's own files: learning_rate is the param group's lr; momentum, weight_decay,
        adam_beta1/2 by name (one param group)."""
        if not self.is_profile(profile, 'paddle'):
            return super().set_options(opt, params, profile, options, changed)
        own = self.options_of(profile, {k: options[k] for k in changed})['__native__']
        for key, value in own.items():
            key = 'lr' if key == 'learning_rate' else key
            if key not in opt.param_groups[0]:
                raise ValueError(f"optimizer.param_groups has no key {key!r}: the option cannot be scheduled")
            opt.param_groups[0][key] = value


class KerasAdapter(Adapter):
    """keras.optimizers.Muon (spec/profiles/keras.md): no parameter groups, every option the
    optimizer's (its keyword names), routing by shape and by each parameter's `path` (the
    driver sets it to the vector's name); the state's step is the optimizer's `iterations`."""

    name = 'keras'
    ns_function_name = 'zeropower_via_newtonschulz5'
    ns_format = 'fp32'  # keras.md 4: Newton-Schulz in the variable's dtype
    SCHEDULE_KEYS = {'lr': 'learning_rate', 'momentum': 'momentum', 'weight_decay': 'weight_decay',
                     'adam_betas': None}

    @staticmethod
    def _one_group(groups):
        return _one_group(groups, "keras: groups with different options (keras.optimizers.Muon has no groups)")

    def construct_native(self, cls, groups):
        """A keras vector: one group, its options by keras' keywords."""
        first, params = self._one_group(groups)
        kwargs = dict(first)
        if kwargs.get('exclude_layers') is not None:
            kwargs['exclude_layers'] = list(kwargs['exclude_layers'])
        return cls(params, **kwargs)

    def construct(self, cls, groups):
        """Options in nemo's names: lr, momentum, nesterov, ns_steps, the betas, eps and lr
        ratio map; weight_decay is both of keras' decay coefficients; nemo's fan_in (its
        default) leaves keras' own scale, none is rms_rate None; routing by use_muon or another
        threshold, and fan_out, are not expressible."""
        first, params = self._one_group([(canonical(o), p) for o, p in groups])
        scale = _require(first, 'scale_mode', ('fan_in', 'none'), 'keras')
        if _opt(first, 'use_muon') is not None:
            raise NotExpressible("keras: use_muon (keras routes by shape and name)")
        if _opt(first, 'adam_dim_threshold') != NEMO_DEFAULTS['adam_dim_threshold']:
            raise NotExpressible("keras: adam_dim_threshold (keras routes every 2-D parameter to Muon)")
        b1, b2 = _opt(first, 'adam_betas')
        wd = _opt(first, 'weight_decay')
        kwargs = dict(learning_rate=_opt(first, 'lr'), momentum=_opt(first, 'momentum'),
                      nesterov=_opt(first, 'nesterov'), ns_steps=_opt(first, 'ns_steps'), weight_decay=wd,
                      adam_weight_decay=wd, adam_beta_1=b1, adam_beta_2=b2, epsilon=_opt(first, 'adam_eps'),
                      adam_lr_ratio=_opt(first, 'adam_lr_ratio'))
        if not self.takes('adam_weight_decay'):  # keras@3.10: weight_decay decays every variable
            del kwargs['adam_weight_decay']
        if scale == 'none' and not self.takes('rms_rate'):
            raise NotExpressible(f"{self.release}: scale_mode='none' (the release has no rms_rate)")
        if scale == 'none':
            kwargs['rms_rate'] = None
        return cls(params, **kwargs)

    def schedule_entries(self, options, names, group):
        o, out = canonical(options), {}
        for name in names:
            if name == 'adam_betas':
                out['adam_beta_1'], out['adam_beta_2'] = _opt(o, 'adam_betas')
            elif name == 'weight_decay':
                out['weight_decay'] = _opt(o, 'weight_decay')
                if self.takes('adam_weight_decay'):
                    out['adam_weight_decay'] = out['weight_decay']
            else:
                out[self.SCHEDULE_KEYS[name]] = _opt(o, name)
        return out

    def read_state(self, state, steps_with_grad):
        """Muon: momentum; AdamW: momentum and velocity; step: the optimizer's iterations."""
        if not state or 'momentum' not in state:
            return None
        out = ({'step': _count(state['step']), 'exp_avg': state['momentum'], 'exp_avg_sq': state['velocity']}
               if 'velocity' in state else {'step': _count(state['step']), 'momentum_buffer': state['momentum']})
        # gradient_accumulation_steps, use_ema (spec/muon.md 3.3, 8.2): keras' own variable names
        if 'gradient_accumulator' in state:
            out['grad_accum'] = state['gradient_accumulator']
        if 'average' in state:
            out['ema_average'] = state['average']
        return out


class MlxAdapter(Adapter):
    """mlx.optimizers.Muon (spec/profiles/mlx.md): no parameter groups, every option the
    optimizer's (its keyword names); no AdamW: every parameter takes its Muon update; the state
    `v` of every parameter is the momentum buffer (MLX counts only the optimizer's steps: the
    protocol's step is the parameter's steps with a gradient)."""

    name = 'mlx'
    ns_function_name = 'zeropower_via_newtonschulz5'

    @staticmethod
    def _one_group(groups):
        return _one_group(groups, "mlx: groups with different options (mlx.optimizers.Muon has no groups)")

    ns_format = 'fp32'  # mlx.md 5: Newton-Schulz in the parameter's dtype
    SCHEDULE_KEYS = {'lr': 'learning_rate', 'momentum': 'momentum', 'weight_decay': 'weight_decay',
                     'adam_betas': None}

    def construct_native(self, cls, groups):
        """An mlx vector: one group, its options by mlx's keywords."""
        first, params = self._one_group(groups)
        return cls(params, **first)

    def construct(self, cls, groups):
        """Options in nemo's names: lr, momentum, nesterov, ns_steps and weight_decay map (mlx
        couples the decay into the gradient: nemo's decoupled decay is not the same step, and its
        cases fail); routing by use_muon or a threshold, another scale rule and the AdamW options
        are not expressible."""
        first, params = self._one_group([(canonical(o), p) for o, p in groups])
        _require(first, 'scale_mode', ('fan_in',), 'mlx')
        if _opt(first, 'use_muon') is not None:
            raise NotExpressible("mlx: use_muon (mlx routes by the number of dimensions)")
        if _opt(first, 'adam_dim_threshold') != NEMO_DEFAULTS['adam_dim_threshold']:
            raise NotExpressible("mlx: adam_dim_threshold (mlx has no AdamW)")
        return cls(params, learning_rate=_opt(first, 'lr'), momentum=_opt(first, 'momentum'),
                   weight_decay=_opt(first, 'weight_decay'), nesterov=_opt(first, 'nesterov'),
                   ns_steps=_opt(first, 'ns_steps'))

    def read_state(self, state, steps_with_grad):
        """Every parameter: v, the momentum buffer (or momentum_buffer itself: a port's own key renamed
        by --state-name); step: the parameter's steps with a gradient."""
        buf = state.get('v', state.get('momentum_buffer')) if state else None
        return None if buf is None else {'step': steps_with_grad, 'momentum_buffer': buf}


class NorMuonAdapter(DionAdapter):
    """dion.NorMuon (spec/profiles/normuon.md): dion's adapter with the Muon algorithm
    "normuon", the key muon_beta2, the second moment variance_neuron in the state."""

    name = 'normuon'
    SCHEDULE_KEYS = dict(DionAdapter.SCHEDULE_KEYS, moment2_beta='muon_beta2')

    def construct_native(self, cls, groups):
        return super().construct_native(cls, groups)

    def construct(self, cls, groups):
        """nemo's options: dion's groups with algorithm "normuon" (the second moment keeps
        its default beta: no nemo option sets it)."""
        opt = super().construct(cls, groups)
        for g in opt.param_groups:
            if g.get('algorithm') == 'muon':
                g['algorithm'] = 'normuon'
        return opt

    def read_state(self, state, steps_with_grad):
        """Muon: momentum and variance_neuron (moment2), the step counted by the glue."""
        out = super().read_state(state, steps_with_grad)
        if out and 'momentum_buffer' in out and 'variance_neuron' in state:
            out['moment2'] = state['variance_neuron']
        return out

    def newton_schulz_of(self, profile, fn, matrix, steps):
        return super().newton_schulz_of('dion' if profile == 'normuon' else profile, fn, matrix, steps)

    def set_options(self, opt, params, profile, options, changed):
        return super().set_options(opt, params, 'dion' if profile == 'normuon' else profile, options, changed)


ADAPTERS = {a.name: a for a in (Adapter(), PlainAdapter(), KellerAdapter(), TorchAdapter(), MoonlightAdapter(), TimmAdapter(),
                                DionAdapter(), EmergingAdapter(), PaddleAdapter(), OptaxAdapter(), MegatronAdapter(), MegatronAdaptiveAdapter(),
                                KerasAdapter(), NorMuonAdapter(), MlxAdapter(), PytorchOptimizerAdapter(),
                                PytorchOptimizerAdaMuonAdapter(), EmergingAdaptiveAdapter())}
