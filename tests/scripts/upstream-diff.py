#!/usr/bin/env python3
"""Differential test: muonref's PyTorch ports against the upstream optimizers they describe.

Not run by `make check` (it needs upstream files, which are never committed):
fetch them yourself and give their paths.

    /usr/bin/python3 tests/scripts/upstream-diff.py [--neutral] [--steps N] \
        --keller     KellerJordan/Muon/muon.py \
        --torch-muon pytorch/torch/optim/_muon.py \
        --moonlight  MoonshotAI/Moonlight/examples/toy_train.py \
        --timm-dir   pytorch-image-models/timm/optim

For each given upstream file the script builds the upstream optimizer and our
port (tests/ports/torch_<profile>_port.py) over identical parameters, feeds both the
same random gradients for N steps (default 5) in several scenarios (option
settings, shapes, a missing gradient), and prints, per scenario, the largest
absolute difference of the parameters, of every state tensor, of the
gradients after step() (Keller and timm write into p.grad), and whether the
state keys and non-tensor state agree. Then it compares the exception type and
message of each port's constructor/step checks.

--neutral runs Newton-Schulz in float32 in both (upstream: Tensor.bfloat16 is
made to return a float32 copy while stepping, and timm's NS `dtype` default is
set to float32; ours: NS_DTYPE), so that bf16 platform effects do not blur the
comparison; without it both run their bf16 iteration as written.

Loading upstream on PyTorch 1.13: Keller's and timm's files run as they are;
torch/optim/_muon.py is copied into a temporary package whose `optimizer.py`
provides the four helpers PyTorch >= 2.9 has and 1.13 lacks (`_to_scalar`,
`_disable_dynamo_if_unsupported`, `_params_doc`, `ParamsT`); Moonlight's
toy_train.py gets stub modules for its training-script imports (loguru,
datasets, transformers, tqdm) and `torch.compile` as the identity (PyTorch
< 2.0 has none), i.e. eager semantics. Exit status 0 when every comparison ran
(the differences are a report, not a verdict), 2 on bad input.
"""

import argparse
import contextlib
import copy
import importlib
import importlib.util
import math
import os
import shutil
import sys
import tempfile
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'ports'))


# ------------------------------------------------------------------ loading

def load_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


TORCH29_SHIM = '''"""Shim (muonref tests/scripts/upstream-diff.py): torch.optim.optimizer helpers of PyTorch >= 2.9."""
from typing import Any, Iterable
import torch
from torch.optim.optimizer import Optimizer
ParamsT = Iterable[Any]
_params_doc = "params (iterable): iterable of parameters or named_parameters to optimize or dicts"
def _to_scalar(x):
    return x.item() if isinstance(x, torch.Tensor) and x.numel() == 1 else x
def _disable_dynamo_if_unsupported(single_tensor_fn=None):
    return lambda fn: fn
'''


def load_torch_muon(path, tmp):
    pkg = os.path.join(tmp, 'torch29optim')
    os.makedirs(pkg, exist_ok=True)
    open(os.path.join(pkg, '__init__.py'), 'w').close()
    with open(os.path.join(pkg, 'optimizer.py'), 'w') as f:
        f.write(TORCH29_SHIM)
    shutil.copy(path, os.path.join(pkg, '_muon.py'))
    sys.path.insert(0, tmp)
    return importlib.import_module('torch29optim._muon')


def load_timm(optim_dir, tmp):
    pkg = os.path.join(tmp, 'timmoptim')
    os.makedirs(pkg, exist_ok=True)
    open(os.path.join(pkg, '__init__.py'), 'w').close()
    for f in ('muon.py', '_helpers.py', 'adamw.py', 'nadamw.py', '_types.py'):
        shutil.copy(os.path.join(optim_dir, f), os.path.join(pkg, f))
    sys.path.insert(0, tmp)
    return importlib.import_module('timmoptim.muon')


def load_moonlight(path):
    class _Any:
        def __init__(self, *a, **k):
            pass

        def __call__(self, *a, **k):
            return _Any()

        def __getattr__(self, name):
            return _Any()
    for name, attrs in (('loguru', ('logger',)), ('datasets', ('load_dataset',)),
                        ('tqdm', ('tqdm',)),
                        ('transformers', ('Qwen2Config', 'Qwen2ForCausalLM', 'Qwen2Tokenizer',
                                          'get_cosine_schedule_with_warmup'))):
        if name not in sys.modules:
            m = types.ModuleType(name)
            for a in attrs:
                setattr(m, a, _Any())
            sys.modules[name] = m
    if not hasattr(torch, 'compile'):
        torch.compile = lambda fn=None, **k: fn if fn is not None else (lambda f: f)
    return load_file(path, 'upstream_moonlight')


@contextlib.contextmanager
def neutral_ns(enabled, modules):
    """Upstream NS in float32: Tensor.bfloat16 returns a float32 copy; timm's dtype default float32."""
    if not enabled:
        yield
        return
    saved = torch.Tensor.bfloat16
    torch.Tensor.bfloat16 = lambda self, *a, **k: self.to(torch.float32, copy=True)
    saved_defaults = []
    for mod in modules:
        f = getattr(mod, 'zeropower_via_newtonschulz', None)
        if f is not None and f.__defaults__ is not None:
            saved_defaults.append((f, f.__defaults__))
            f.__defaults__ = tuple(torch.float32 if d is torch.bfloat16 else d for d in f.__defaults__)
    try:
        yield
    finally:
        torch.Tensor.bfloat16 = saved
        for f, d in saved_defaults:
            f.__defaults__ = d


# ------------------------------------------------------------------ running

def max_diff(a, b):
    if a.shape != b.shape:
        return f"shape {tuple(a.shape)} vs {tuple(b.shape)}"
    a = a.detach().double()
    b = b.detach().double()
    if not (torch.isfinite(a).all() and torch.isfinite(b).all()):
        same = torch.equal(a.isnan(), b.isnan()) and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
        return 0.0 if same else math.inf
    return float((a - b).abs().max()) if a.numel() else 0.0


def run(make_opt, shapes, steps, seed, none_at=(), neutral=False, mods=()):
    """Builds parameters and an optimizer with make_opt(params), runs `steps` steps with seeded
    gradients (None for (step, index) in none_at); returns params, state per param, grads after step."""
    g = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(torch.randn(s, generator=g)) for s in shapes]
    opt = make_opt(params)
    grads_after = []
    for k in range(steps):
        for i, p in enumerate(params):
            grad = torch.randn(p.shape, generator=g)
            p.grad = None if (k, i) in none_at else grad
        with neutral_ns(neutral, mods):
            opt.step()
        grads_after.append([None if p.grad is None else p.grad.clone() for p in params])
    states = [opt.state.get(p, {}) for p in params]
    return params, states, grads_after, opt


def compare(name, up, ours):
    (pu, su, gu, _), (po, so, go, _) = up, ours
    # parameters non-finite on one side are counted in the note below, not in the largest difference
    both = [(a, b) for a, b in zip(pu, po) if bool(torch.isfinite(a.detach()).all()) == bool(torch.isfinite(b.detach()).all())]
    worst_p = max([max_diff(a, b) if not isinstance(max_diff(a, b), str) else math.inf for a, b in both] or [0.0])
    worst_s, keys_ok, other_ok = 0.0, True, True
    for a, b in zip(su, so):
        if set(a) != set(b):
            keys_ok = False
            continue
        for k in a:
            if isinstance(a[k], torch.Tensor) and isinstance(b[k], torch.Tensor) and a[k].ndim > 0:
                d = max_diff(a[k], b[k])
                worst_s = max(worst_s, math.inf if isinstance(d, str) else d)
            else:
                va = a[k].item() if isinstance(a[k], torch.Tensor) else a[k]
                vb = b[k].item() if isinstance(b[k], torch.Tensor) else b[k]
                other_ok &= va == vb
    worst_g = 0.0
    for ra, rb in zip(gu, go):
        for a, b in zip(ra, rb):
            if (a is None) != (b is None):
                worst_g = math.inf
            elif a is not None:
                d = max_diff(a, b)
                worst_g = max(worst_g, math.inf if isinstance(d, str) else d)
    nonfinite = [sum(1 for t in ps if not torch.isfinite(t.detach()).all()) for ps in (pu, po)]
    note = f"  NON-FINITE parameters: upstream {nonfinite[0]}, ours {nonfinite[1]}" if any(nonfinite) else ''
    print(f"  {name:<46} params {worst_p:.3g}  state {worst_s:.3g}  grad-after-step {worst_g:.3g}"
          f"  state-keys {'same' if keys_ok else 'DIFFER'}  scalars {'same' if other_ok else 'DIFFER'}{note}")
    return worst_p, worst_s, worst_g, keys_ok and other_ok


def messages(name, build_up, build_ours, cases):
    for label, kw in cases:
        res = []
        for build in (build_up, build_ours):
            try:
                build(dict(kw))
                res.append('no error')
            except Exception as exc:  # noqa: BLE001 - the comparison is the point
                res.append(f"{type(exc).__name__}: {exc}")
        mark = 'same' if res[0] == res[1] else 'DIFFER'
        print(f"  {label:<34} {mark:<6} upstream: {res[0]!r}" + ('' if mark == 'same' else f"  ours: {res[1]!r}"))


def section(title):
    print(f"\n== {title}")


# ------------------------------------------------------------------ per profile

def keller(up, args):
    import torch_keller_port as ours
    section(f"keller: SingleDeviceMuonWithAuxAdam ({args.keller})")
    ours.NS_DTYPE = torch.float32 if args.neutral else torch.bfloat16
    shapes = [(16, 32), (48, 16), (8, 4, 3, 3), (6, 5, 7), (16,), (10, 12)]

    def maker(cls, muon_opts, adam_opts):
        return lambda ps: cls([dict(params=ps[:4], use_muon=True, **muon_opts),
                               dict(params=ps[4:], use_muon=False, **adam_opts)])
    scenarios = [
        ('defaults', {}, {}, ()),
        ('lr 0.05 momentum 0.9 wd 0.1; adam betas (0.8,0.95)', dict(lr=0.05, momentum=0.9, weight_decay=0.1),
         dict(lr=0.01, betas=(0.8, 0.95), eps=1e-8, weight_decay=0.05), ()),
        ('missing gradients (step 2: conv and bias)', {}, {}, ((1, 2), (1, 4))),
    ]
    for label, mo, ao, none_at in scenarios:
        compare(label, run(maker(up.SingleDeviceMuonWithAuxAdam, mo, ao), shapes, args.steps, 1, none_at, args.neutral, [up]),
                run(maker(ours.SingleDeviceMuonWithAuxAdam, mo, ao), shapes, args.steps, 1, none_at, args.neutral, [ours]))
    p = torch.nn.Parameter(torch.ones(3, 4))
    messages('keller', lambda kw: up.SingleDeviceMuonWithAuxAdam([dict(params=[p], **kw)]),
             lambda kw: ours.SingleDeviceMuonWithAuxAdam([dict(params=[p], **kw)]),
             [('no use_muon', {}), ('muon group with nesterov', dict(use_muon=True, nesterov=True)),
              ('adam group with momentum', dict(use_muon=False, momentum=0.9)),
              ('lr -1 (not checked)', dict(use_muon=True, lr=-1.0))])
    # facts of the spec page, measured on upstream
    w = torch.nn.Parameter(torch.zeros(4, 8))
    b = torch.nn.Parameter(torch.zeros(5))
    o = up.SingleDeviceMuonWithAuxAdam([dict(params=[w], use_muon=True), dict(params=[b], use_muon=False)])
    gw = torch.ones(4, 8)
    w.grad = gw.clone()
    o.step()
    print(f"  fact: p.grad after a Muon step = (1-beta)G + beta M: "
          f"{torch.allclose(w.grad, 0.05 * gw + 0.95 * o.state[w]['momentum_buffer'])}; "
          f"missing Adam gradient becomes zeros: {b.grad is not None and not b.grad.any()}; "
          f"Adam step type {type(o.state[b]['step']).__name__}")
    v = torch.nn.Parameter(torch.zeros(6))
    o = up.SingleDeviceMuonWithAuxAdam([dict(params=[v], use_muon=True)])
    v.grad = torch.ones(6)
    try:
        o.step()
        print("  fact: 1-D Muon parameter: no error")
    except AssertionError as exc:
        print(f"  fact: 1-D Muon parameter: AssertionError({str(exc)!r}) after the buffer became "
              f"{o.state[v]['momentum_buffer'][0].item():.3g} and p.grad {v.grad[0].item():.3g}")


def torch_muon(up, args):
    import torch_torch_port as ours
    section(f"torch: torch.optim.Muon ({args.torch_muon}, run through the 2.9 shim)")
    ours.NS_DTYPE = torch.float32 if args.neutral else torch.bfloat16
    shapes = [(16, 32), (48, 16), (24, 24)]
    for label, kw, none_at in [('defaults', {}, ()),
                               ('nesterov False wd 0', dict(nesterov=False, weight_decay=0.0), ()),
                               ('match_rms_adamw lr 0.02', dict(adjust_lr_fn='match_rms_adamw', lr=0.02), ()),
                               ('ns_steps 7 coeffs (3.4,-4.7,2.0) eps 1e-3', dict(ns_steps=7, ns_coefficients=(3.4, -4.7, 2.0), eps=1e-3), ()),
                               ('missing gradient', {}, ((2, 1),))]:
        compare(label, run(lambda ps: up.Muon(ps, **kw), shapes, args.steps, 2, none_at, args.neutral, [up]),
                run(lambda ps: ours.Muon(ps, **kw), shapes, args.steps, 2, none_at, args.neutral, [ours]))
    p2 = torch.nn.Parameter(torch.ones(3, 4))
    p1 = torch.nn.Parameter(torch.ones(3))
    messages('torch', lambda kw: up.Muon(kw.pop('params', [p2]), **kw), lambda kw: ours.Muon(kw.pop('params', [p2]), **kw),
             [('lr -1.0', dict(lr=-1.0)), ('lr nan', dict(lr=float('nan'))), ('momentum -0.5', dict(momentum=-0.5)),
              ('momentum 1.5 (no upper bound)', dict(momentum=1.5)), ('weight_decay -0.1', dict(weight_decay=-0.1)),
              ('adjust_lr_fn arbitrary', dict(adjust_lr_fn='arbitrary')), ('tensor lr of 2', dict(lr=torch.ones(2))),
              ('1-D parameter', dict(params=[p1]))])

    def step_err(kw):
        def go(cls):
            q = torch.nn.Parameter(torch.ones(4, 6))
            o = cls([q], **kw)
            q.grad = torch.ones(4, 6)
            o.step()
        return go
    for label, kw in [('ns_steps 100', dict(ns_steps=100)), ('coefficients of 2', dict(ns_coefficients=(1.0, 2.0)))]:
        messages('torch', lambda _k, kw=kw: step_err(kw)(up.Muon), lambda _k, kw=kw: step_err(kw)(ours.Muon), [(label, {})])
    q = torch.nn.Parameter(torch.ones(4, 6))
    o = up.Muon([q], nesterov=False, lr=0.0, weight_decay=0.0)
    q.grad = torch.ones(4, 6)
    o.step()
    buf32 = o.state[q]['momentum_buffer'].clone()
    qb = torch.nn.Parameter(torch.ones(4, 6, dtype=torch.bfloat16))
    o = up.Muon([qb], nesterov=False, lr=0.0, weight_decay=0.0)
    qb.grad = torch.ones(4, 6, dtype=torch.bfloat16)
    o.step()
    print(f"  fact (aliasing): nesterov=False, one step of ones: float32 buffer {buf32[0, 0].item():.4g} (= 1-beta); "
          f"bf16 buffer {o.state[qb]['momentum_buffer'][0, 0].float().item():.4g} (normalised in place if != 0.05)")


def moonlight(up, args):
    import torch_moonlight_port as ours
    section(f"moonlight: Muon ({args.moonlight}, eager, stub imports)")
    ours.NS_DTYPE = torch.float32 if args.neutral else torch.bfloat16
    shapes = [(16, 32), (48, 16), (16,), (10, 12)]
    for label, kw, none_at in [('defaults', {}, ()),
                               ('nesterov False momentum 0.9 lr 0.02 wd 0.01', dict(nesterov=False, momentum=0.9, lr=0.02, wd=0.01), ()),
                               ('adamw betas (0.95,0.95) eps 1e-6 ns_steps 6', dict(adamw_betas=(0.95, 0.95), adamw_eps=1e-6, ns_steps=6), ()),
                               ('missing gradients', {}, ((1, 0), (2, 3)))]:
        compare(label, run(lambda ps: up.Muon(muon_params=ps[:2], adamw_params=ps[2:], **kw), shapes, args.steps, 3, none_at, args.neutral, [up]),
                run(lambda ps: ours.Muon(muon_params=ps[:2], adamw_params=ps[2:], **kw), shapes, args.steps, 3, none_at, args.neutral, [ours]))
    c4 = torch.nn.Parameter(torch.ones(2, 3, 3, 3))
    w = torch.nn.Parameter(torch.ones(3, 4))
    messages('moonlight', lambda kw: up.Muon(**kw), lambda kw: ours.Muon(**kw),
             [('no muon_params', dict()), ('4-D Muon parameter', dict(muon_params=[c4])),
              ('lr -1 (not checked)', dict(muon_params=[w], lr=-1.0))])


def timm(up, args):
    import torch_timm_port as ours
    section(f"timm: Muon ({args.timm_dir})")
    ours.NS_DTYPE = torch.float32 if args.neutral else torch.bfloat16
    shapes = [(16, 32), (48, 16), (8, 4, 3, 3), (16,), (4, 600), (3, 16)]
    for label, kw, none_at in [('defaults', {}, ()),
                               ('nesterov (NAdamW fallback) wd 0.05', dict(nesterov=True, weight_decay=0.05), ()),
                               ('original scale, Keller triple, 6 steps', dict(adjust_lr_fn='original', ns_coefficients='original', ns_steps=6), ()),
                               ('batched conv, polar_express, safety 1.01', dict(conv_mode='batched', ns_coefficients='polar_express', safety_factor=1.01), ()),
                               ('rms_to_rms, fallback_lr_scale 0.2, eps 1e-5', dict(adjust_lr_fn='rms_to_rms', fallback_lr_scale=0.2, eps=1e-5), ()),
                               ('missing gradients', dict(nesterov=True), ((0, 1), (2, 3)))]:
        compare(label, run(lambda ps: up.Muon(ps, **kw), shapes, args.steps, 4, none_at, args.neutral, [up]),
                run(lambda ps: ours.Muon(ps, **kw), shapes, args.steps, 4, none_at, args.neutral, [ours]))
    # measured: the batched (3-D) Newton-Schulz preallocates A with torch.empty and calls
    # baddbmm(A, X, X^T, beta=0, out=A); PyTorch 1.13 CPU then propagates NaN/Inf from the garbage
    real_empty, real_empty_like = torch.empty, torch.empty_like
    torch.empty = lambda *a, **k: real_empty(*a, **k).fill_(float('nan'))
    torch.empty_like = lambda *a, **k: real_empty_like(*a, **k).fill_(float('nan'))
    try:
        out3 = up.zeropower_via_newtonschulz(torch.randn(9, 8, 4), 5, up._COEFFICIENTS['quintic'])
        out2 = up.zeropower_via_newtonschulz(torch.randn(8, 4), 5, up._COEFFICIENTS['quintic'])
    finally:
        torch.empty, torch.empty_like = real_empty, real_empty_like
    print(f"  fact: upstream NS with torch.empty memory holding NaN: 3-D (baddbmm, beta=0, out=input) output "
          f"finite {bool(torch.isfinite(out3).all())}; 2-D (addmm) finite {bool(torch.isfinite(out2).all())}")
    Xb = torch.randn(9, 4, 8, generator=torch.Generator().manual_seed(5))
    rate = {}
    for dt in (torch.float32, torch.bfloat16):
        X = Xb.to(dt)
        rate[dt] = sum(not bool(torch.isfinite(torch.baddbmm(torch.zeros(9, 4, 4, dtype=dt), X, X.mT, beta=0.0)).all())
                       for _ in range(300))
    print(f"  fact: torch.baddbmm(zeros, X, X^T, beta=0) on one (9, 4, 8) input, 300 calls: non-finite "
          f"{rate[torch.float32]} times in float32, {rate[torch.bfloat16]} in bfloat16")
    w = torch.nn.Parameter(torch.ones(3, 4))
    messages('timm', lambda kw: up.Muon([w], **kw), lambda kw: ours.Muon([w], **kw),
             [('lr -1.0', dict(lr=-1.0)), ('lr nan (accepted)', dict(lr=float('nan'))), ('weight_decay -0.1', dict(weight_decay=-0.1)),
              ('momentum 1.0', dict(momentum=1.0)), ('eps -1e-7', dict(eps=-1e-7)), ('conv_mode spatial', dict(conv_mode='spatial')),
              ('algo lion', dict(algo='lion')), ('tensor lr of 2', dict(lr=torch.ones(2))), ('adamw_lr with lr 0', dict(adamw_lr=0.1, lr=0.0))])

    def step_with(kw, grad_sparse=False, shape=(8, 8)):
        def go(cls):
            q = torch.nn.Parameter(torch.ones(shape))
            o = cls([q], **kw)
            g = torch.ones(shape)
            q.grad = g.to_sparse() if grad_sparse else g
            o.step()
        return go
    for label, kw, sp, shape in [('sparse gradient', {}, True, (8, 8)), ('preset foo', dict(ns_coefficients='foo'), False, (8, 8)),
                                 ('coefficients [(1,2)]', dict(ns_coefficients=[(1.0, 2.0)]), False, (8, 8)),
                                 ('adjust_lr_fn foo', dict(adjust_lr_fn='foo'), False, (8, 8)),
                                 ('1-D forced to Muon', {}, False, (8,))]:
        def mk(cls, kw=kw, sp=sp, shape=shape):
            if shape == (8,):
                q = torch.nn.Parameter(torch.ones(8))
                o = cls([dict(params=[q], use_muon=True)])
                q.grad = torch.ones(8)
                o.step()
            else:
                step_with(kw, sp, shape)(cls)
        messages('timm', lambda _k, mk=mk: mk(up.Muon), lambda _k, mk=mk: mk(ours.Muon), [(label, {})])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--keller')
    ap.add_argument('--torch-muon')
    ap.add_argument('--moonlight')
    ap.add_argument('--timm-dir')
    ap.add_argument('--neutral', action='store_true', help='Newton-Schulz in float32 in both')
    ap.add_argument('--steps', type=int, default=5)
    args = ap.parse_args()
    if not any((args.keller, args.torch_muon, args.moonlight, args.timm_dir)):
        ap.error('give at least one upstream file')
    for path in (args.keller, args.torch_muon, args.moonlight):
        if path and not os.path.isfile(path):
            ap.error(f'{path}: no such file')
    if args.timm_dir and not os.path.isfile(os.path.join(args.timm_dir, 'muon.py')):
        ap.error(f'{args.timm_dir}: no muon.py there')
    print(f"upstream-diff: torch {torch.__version__}, NS in {'float32 (--neutral)' if args.neutral else 'bfloat16'}, "
          f"{args.steps} steps per scenario; columns: largest |upstream - ours|")
    tmp = tempfile.mkdtemp(prefix='upstream-diff.')
    try:
        if args.keller:
            keller(load_file(args.keller, 'upstream_keller'), args)
        if args.torch_muon:
            torch_muon(load_torch_muon(args.torch_muon, tmp), args)
        if args.moonlight:
            moonlight(load_moonlight(args.moonlight), args)
        if args.timm_dir:
            timm(load_timm(args.timm_dir, tmp), args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
