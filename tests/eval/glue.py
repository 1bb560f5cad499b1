"""Glue of the explanation evaluation (tests/eval/run.py): loads a fetched port on PyTorch 1.13 CPU.

Nothing here changes what a port computes.  It provides
- the shims a port written for a newer PyTorch needs to import (SHIMS: `torch.compile` as the
  identity, `torch.optim.lr_scheduler.LRScheduler` as 1.13's `_LRScheduler`);
- `load_file`, which imports one fetched file as a module, and `upstream()`, the loaders of
  tests/scripts/upstream-diff.py for the upstream ports (torch.optim.Muon with its four-definition shim,
  Moonlight's training script with stub modules, timm's five files as a package);
- `keller_aux`, which pairs a Muon-only optimizer class (most copies of Keller's `Muon`) with
  the keller profile's own AdamW, so that the port runs the keller vectors, whose cases carry
  Keller's `use_muon` groups (spec/profiles/keller.md 1).  The AdamW part is
  tests/ports/torch_keller_port.py's `SingleDeviceMuonWithAuxAdam` over the `use_muon=False` groups
  only, so every failure is the Muon class's.

run.py writes, per port, a module `port.py` that calls these and exports `Port` (what the driver's
--optimizer names) and `ns` (what its --ns-function names).
"""

import importlib.util
import os
import sys
import types

import torch

import adapters  # the driver's (vectors/drivers/adapters.py): Combined, the pair seen as one optimizer

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)


def _compile_identity(fn=None, *args, **kwargs):
    """torch.compile as the identity: `@torch.compile` and `@torch.compile(...)` (PyTorch < 2.0 has none)."""
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


def _shim_torch_compile():
    if not hasattr(torch, 'compile'):
        torch.compile = _compile_identity


def _shim_lr_scheduler():
    import torch.optim.lr_scheduler as s
    if not hasattr(s, 'LRScheduler'):
        s.LRScheduler = s._LRScheduler


class _Any:
    """A stand-in for a module a file imports and the optimizer never uses (plotting, say)."""

    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return _Any()

    def __getattr__(self, name):
        return _Any()


def stub_modules(names):
    """Empty modules for imports the optimizer never uses (a notebook's matplotlib): every
    attribute is a stand-in.  A module that is installed is left alone."""
    import importlib.util as iu
    for name in names:
        top = name.split('.')[0]
        if name in sys.modules:
            continue
        if top in sys.modules:
            if not getattr(sys.modules[top], '_muonref_stub', False):
                continue
        elif iu.find_spec(top) is not None:
            continue
        m = types.ModuleType(name)
        m._muonref_stub = True
        m.__getattr__ = lambda attr: _Any()
        sys.modules[name] = m


SHIMS = {
    'torch_compile': _shim_torch_compile,
    'lr_scheduler': _shim_lr_scheduler,
}


def install(names):
    """Installs the named shims (keys of SHIMS); an unknown name is an error."""
    for n in names:
        if n not in SHIMS:
            raise ValueError(f"unknown shim {n!r} (known: {', '.join(sorted(SHIMS))})")
        SHIMS[n]()


def load_file(path, name, preamble=None):
    """Imports the file at `path` as module `name` (its folder first on sys.path, for its siblings).
    preamble: Python run in the module's namespace first, for a file that is a fragment (uses
    `torch` without importing it)."""
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    if preamble:
        exec(preamble, mod.__dict__)
    spec.loader.exec_module(mod)
    return mod


def load_defs(path, name, names, preamble='import torch'):
    """A module of the top-level definitions `names` (functions, classes, assignments) of the
    file at `path`, run after `preamble`: for an optimizer inside a training script whose module
    level trains a model (a speedrun record's train_gpt.py).  Line numbers stay the file's."""
    import ast
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    keep = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            keep.append(node)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            keep.append(node)
    missing = set(names) - {getattr(n, 'name', None) or n.targets[0].id for n in keep}
    if missing:
        raise ImportError(f"{path}: no top-level definition of {sorted(missing)}")
    mod = types.ModuleType(name)
    mod.__file__ = path
    sys.modules[name] = mod
    exec(preamble, mod.__dict__)
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, 'exec'), mod.__dict__)
    return mod


def upstream():
    """tests/scripts/upstream-diff.py as a module (its loaders: load_torch_muon, load_moonlight, load_timm)."""
    name = 'muonref_upstream_diff'
    if name not in sys.modules:
        load_file(os.path.join(TESTS, 'scripts', 'upstream-diff.py'), name)
    return sys.modules[name]


def keller_aux(muon_cls, construct='groups', kwargs=None):
    """A constructor taking Keller's param groups (dicts with `use_muon`): the `use_muon=True`
    groups go to `muon_cls`, the others to the keller test port's AdamW.

    construct 'groups': one muon_cls(list of the Muon groups' dicts without `use_muon`): the
    class reads lr, momentum, weight_decay per group if it does, and its own defaults fill
    what a group leaves out.  construct 'kwargs': one muon_cls(params, **kw) per Muon group,
    kw the group's keys renamed by `kwargs` ({group key: constructor keyword}); a key the
    class does not take is not passed (the class then does without it: that is its behaviour)."""
    sys.path.insert(0, os.path.join(TESTS, 'ports'))
    import torch_keller_port as kp  # noqa: E402

    def build(param_groups):
        muon = [g for g in param_groups if g.get('use_muon')]
        adam = [g for g in param_groups if not g.get('use_muon')]
        parts = []
        if muon and construct == 'groups':
            parts.append(muon_cls([{k: v for k, v in g.items() if k != 'use_muon'} for g in muon]))
        elif muon:
            for g in muon:
                if not list(g['params']):
                    continue  # an empty Muon group (a case of AdamW parameters only): a Muon-only class refuses []
                kw = {kwargs[k]: v for k, v in g.items() if k in (kwargs or {})}
                parts.append(muon_cls(g['params'], **kw))
        if adam:
            parts.append(kp.SingleDeviceMuonWithAuxAdam(adam))
        return adapters.Combined(*parts)

    build.__name__ = build.__qualname__ = f"keller_aux({getattr(muon_cls, '__name__', muon_cls)})"
    return build


def _pick(kw, names):
    """{new name: kw[old]} for the (old, new) pairs of `names` whose old name kw holds."""
    return {new: kw[old] for old, new in names.items() if old in kw}


def moonlight_aux(muon_cls, construct='kwargs', kwargs=None):
    """A constructor taking Moonlight's keywords (muon_params, adamw_params, lr, wd, momentum,
    nesterov, ns_steps, adamw_betas, adamw_eps; spec/profiles/moonlight.md): the Muon-only class
    gets muon_params and the keywords renamed by `kwargs` ({Moonlight keyword: its keyword}; the
    others it does without), the AdamW parameters the moonlight test port
    (tests/ports/torch_moonlight_port.py) over adamw_params alone."""
    sys.path.insert(0, os.path.join(TESTS, 'ports'))
    import torch_moonlight_port as mp  # noqa: E402

    def build(muon_params=None, adamw_params=None, **kw):
        parts = []
        muon_params, adamw_params = list(muon_params or []), list(adamw_params or [])
        if muon_params:
            parts.append(muon_cls(muon_params, **_pick(kw, kwargs or {})))
        if adamw_params:
            parts.append(mp.Muon(muon_params=[], adamw_params=adamw_params, **kw))
        return adapters.Combined(*parts)

    build.__name__ = build.__qualname__ = f"moonlight_aux({getattr(muon_cls, '__name__', muon_cls)})"
    return build


def moonlight_groups(cls, muon=None, adam=None, flag='use_muon'):
    """A constructor taking Moonlight's keywords for a class that takes param groups flagged
    `flag` (True: Muon): one Muon group (muon_params, the keywords renamed by `muon`) and one
    AdamW group (adamw_params, renamed by `adam`); a keyword the vector leaves out is left out,
    so the class's own defaults apply."""
    def build(muon_params=None, adamw_params=None, **kw):
        groups = []
        if muon_params:
            groups.append(dict(params=list(muon_params), **{flag: True}, **_pick(kw, muon or {})))
        if adamw_params:
            groups.append(dict(params=list(adamw_params), **{flag: False}, **_pick(kw, adam or {})))
        return cls(groups)

    build.__name__ = build.__qualname__ = f"moonlight_groups({getattr(cls, '__name__', cls)})"
    return build
