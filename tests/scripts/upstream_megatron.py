"""Megatron Core's Muon run from upstream code, for muonref's PyTorch driver: the profile
`megatron` (spec/profiles/megatron.md 9), single process, CPU, Debian's PyTorch 1.13.

Not part of `make check`, and no upstream code is committed: the upstream files are extracted
at run time (`git archive`) from git directories that hold them, once, into a cache:

    MUONREF_MEGATRON_GIT   NVIDIA/Megatron-LM, tag core_v0.19.0
                           (default /work/.mirror/NVIDIA+Megatron-LM/repo)
    MUONREF_EO_GIT         NVIDIA-NeMo/Emerging-Optimizers, tag v0.2.0 (the release that
                           Megatron's pyproject.toml pins; default
                           /work/.mirror/NVIDIA-NeMo+Emerging-Optimizers/repo)
    MUONREF_UPSTREAM_CACHE where they go (default $XDG_CACHE_HOME/muonref-upstream, else
                           ~/.cache/muonref-upstream)
    MUONREF_MEGATRON_REF   another Megatron-LM ref (default core_v0.19.0): main's d98e8a64 is the
                           profile megatron@0.20.dev (spec/profiles/megatron.md 11), with
    MUONREF_EO_REF         another Emerging-Optimizers ref (default v0.2.0): v0.3.0 for main

    MUONREF_MEGATRON_REF=d98e8a64 MUONREF_EO_REF=v0.3.0 ./muonref check --torch \
        tests/scripts/upstream_megatron.py:MegatronUpstreamMuon --adapter megatron@0.20.dev vectors/megatron@0.20.dev

    ./muonref check --torch tests/scripts/upstream_megatron.py:MegatronUpstreamMuon vectors/megatron
    ./muonref check --torch tests/scripts/upstream_megatron.py:MegatronUpstreamAdaptiveMuon vectors/megatron_adaptive

MegatronUpstreamMuon takes the constructor and group keys of tests/ports/torch_megatron_port.py's
MegatronMuon (the adapter `megatron`); MegatronUpstreamAdaptiveMuon (optimizer='adaptive_muon',
TensorParallelAdaptiveMuon) those of its MegatronAdaptiveMuon (the adapter `megatron_adaptive`).

Upstream, unmodified: megatron/core/optimizer/optimizer_config.py (OptimizerConfig, its
defaults) and emerging_optimizers.py (_kwargs_from_config, TensorParallelMuon with its check,
orthogonalize and scaled Newton-Schulz, _is_nonlinear_or_embedding), on Emerging-Optimizers
v0.2.0 (OrthogonalizedOptimizer.step, the weight decay, newton_schulz_tp, the scale).  The Adam
of the other parameters is this PyTorch's torch.optim.AdamW (Adam with decoupled_weight_decay
False): what optimizer/__init__.py @core_v0.19.0 takes without Transformer Engine or apex.

Glue (ours, from spec/profiles/megatron.md 3 and 4 and spec/muon.md 3.1): a group's use_muon
False is the tag `is_embedding_or_output_parameter`; a group's qkv_split_shapes tags its
parameters `is_qkv` with those shapes (megatron.md 3.1: get_megatron_optimizer's tag of a
linear_qkv.weight), muon_split_qkv is the config's; each vector group becomes a Muon group and
an Adam group, whose lr, weight_decay, momentum, betas and eps follow this optimizer's groups
(the driver's schedules write those) before every step; the clipping of clip_grads.py on its
local path (per-tensor float32 norms, the norm of those, squared, `.item() ** 0.5`, the
coefficient clip_grad / (norm + 1e-6) applied below 1, and only for clip_grad > 0), on copies:
p.grad is left as the caller set it (Megatron scales its main_grad in place, spec/muon.md 3.1).

Stand-ins for what the two files import and this machine lacks: typing.override (Python 3.12),
torch.optim.optimizer.ParamsT and torch.compile (newer PyTorch; compile decorates nothing on the
Muon path), absl.logging (as the logging module), emerging_optimizers.triton_kernels (no Triton;
Megatron never sets use_syrk), and the packages megatron, megatron.core (process_groups_config,
utils: one process, group size 1, rank 0) and megatron.core.optimizer (its upstream __init__
imports Megatron's distributed machinery; only the two files above are loaded from it)."""
import logging
import os
import subprocess
import sys
import types
import typing
from typing import Any, Dict, Iterable, Union

import torch
import torch.optim.optimizer

MEGATRON_TAG = os.environ.get('MUONREF_MEGATRON_REF', 'core_v0.19.0')
EO_TAG = os.environ.get('MUONREF_EO_REF', 'v0.2.0')
MEGATRON_FILES = ('megatron/core/optimizer/emerging_optimizers.py', 'megatron/core/optimizer/optimizer_config.py')


def _cache() -> str:
    root = os.environ.get('MUONREF_UPSTREAM_CACHE') or os.path.join(
        os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'muonref-upstream')
    return root


def _extract(git_dir: str, tag: str, paths, dest: str) -> str:
    """The files `paths` of `tag` in the git directory `git_dir`, under dest (made once)."""
    done = os.path.join(dest, '.complete')
    if os.path.exists(done):
        return dest
    if not os.path.isdir(git_dir):
        raise ImportError(f"{__file__}: no git directory {git_dir!r} holding {tag} (fetch the repository and set the "
                          "variable the module docstring names)")
    os.makedirs(dest, exist_ok=True)
    archive = subprocess.run(['git', '-C', git_dir, 'archive', tag, *paths], capture_output=True)
    if archive.returncode:
        raise ImportError(f"{__file__}: git archive {tag} in {git_dir}: {archive.stderr.decode().strip()}")
    subprocess.run(['tar', '-x', '-C', dest], input=archive.stdout, check=True)
    open(done, 'w').close()
    return dest


def _module(name: str, **attrs) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


def _eo_version() -> str:
    """The Emerging-Optimizers release extracted (EO_TAG without its v): what main's
    megatron.core.utils reads from the installed package's metadata."""
    return EO_TAG.lstrip('v')


def _eo_min_version(version: str, check_equality: bool = True) -> bool:
    """megatron.core.utils.is_emerging_optimizers_min_version on _eo_version (release numbers
    only: a '.devN' suffix sorts before its release, as packaging.version orders it)."""
    def key(v):
        base, _, dev = v.partition('.dev')
        return tuple(int(x) for x in base.split('.')) + ((0, int(dev or 0)) if dev else (1, 0))
    have, want = key(_eo_version()), key(version)
    return have >= want if check_equality else have > want


def _stand_ins(megatron_dir: str) -> None:
    """The stand-ins of the module docstring, each only where this Python lacks the real one."""
    if not hasattr(typing, 'override'):
        typing.override = lambda f: f
    optmod = sys.modules['torch.optim.optimizer']
    if not hasattr(optmod, 'ParamsT'):
        optmod.ParamsT = Union[Iterable[torch.Tensor], Iterable[Dict[str, Any]]]
    if not hasattr(torch, 'compile'):
        torch.compile = lambda model=None, **kw: model if model is not None else (lambda f: f)
    try:
        import absl.logging  # noqa: F401
    except ImportError:
        log = logging.getLogger('absl')
        seen: Dict[Any, int] = {}

        def log_first_n(level, msg, n, *args):
            seen[(level, msg)] = seen.get((level, msg), 0) + 1
            if seen[(level, msg)] <= n:
                log.log(level, msg, *args)
        absl = _module('absl', __path__=[])
        absl.logging = _module('absl.logging', DEBUG=logging.DEBUG, INFO=logging.INFO, WARNING=logging.WARNING,
                               ERROR=logging.ERROR, debug=log.debug, info=log.info, warning=log.warning,
                               error=log.error, log=log.log, log_first_n=log_first_n)
    try:
        import triton  # noqa: F401
    except ImportError:
        def no_triton(*args, **kwargs):
            raise RuntimeError('no Triton on this machine (use_syrk is never set by Megatron)')
        _module('emerging_optimizers.triton_kernels', HAS_TRITON_340=False, tsyrk_ex=no_triton,
                tsyrk_ex_small_matrix=no_triton)

    class ProcessGroupCollection:  # only named in an annotation: pg_collection is None here
        pass

    def log_single_rank(logger, *args, rank=0, **kwargs):
        logger.log(*args, **kwargs)
    megatron = _module('megatron', __path__=[])
    megatron.core = _module('megatron.core', __path__=[])
    megatron.core.process_groups_config = _module('megatron.core.process_groups_config',
                                                  ProcessGroupCollection=ProcessGroupCollection)
    # main's emerging_optimizers.py also imports the Emerging-Optimizers version and its comparison
    # a group's size and rank (one process without one; MegatronUpstreamMuonTP passes the default group)
    megatron.core.utils = _module('megatron.core.utils', get_pg_size=lambda group=None: 1 if group is None else group.size(),
                                  get_pg_rank=lambda group=None: 0 if group is None else group.rank(),
                                  log_single_rank=log_single_rank,
                                  is_te_min_version=lambda version, check_equality=True: False,
                                  get_emerging_optimizers_version=_eo_version,
                                  is_emerging_optimizers_min_version=_eo_min_version)
    megatron.core.optimizer = _module('megatron.core.optimizer',
                                      __path__=[os.path.join(megatron_dir, 'megatron', 'core', 'optimizer')])


_MEGATRON = _extract(os.environ.get('MUONREF_MEGATRON_GIT', '/work/.mirror/NVIDIA+Megatron-LM/repo'), MEGATRON_TAG,
                     MEGATRON_FILES, os.path.join(_cache(), 'megatron-' + MEGATRON_TAG))
_EO = _extract(os.environ.get('MUONREF_EO_GIT', '/work/.mirror/NVIDIA-NeMo+Emerging-Optimizers/repo'), EO_TAG,
               ['emerging_optimizers'], os.path.join(_cache(), 'emerging-optimizers-' + EO_TAG))
if _EO not in sys.path:
    sys.path.insert(0, _EO)
_stand_ins(_MEGATRON)

from megatron.core.optimizer import emerging_optimizers as _meo  # noqa: E402
from megatron.core.optimizer.optimizer_config import OptimizerConfig  # noqa: E402
from emerging_optimizers import utils as _eo_utils  # noqa: E402
from emerging_optimizers.orthogonalized_optimizers import muon_utils as _muon_utils  # noqa: E402

if not _meo.HAVE_EMERGING_OPTIMIZERS:
    raise ImportError(f"{__file__}: Emerging-Optimizers {EO_TAG} did not import (from {_EO})")
_DEFAULT = OptimizerConfig()


def newton_schulz(x, steps, coefficient_type='quintic'):
    """TensorParallelMuon's Newton-Schulz without its scale: newton_schulz_tp on one process under
    the config's matmul precision ("medium": bf16), as OrthogonalizedOptimizer.step runs it."""
    with _eo_utils.fp32_matmul_precision(_DEFAULT.muon_fp32_matmul_prec):
        return _muon_utils.newton_schulz_tp(x, steps=steps, coefficient_type=coefficient_type, tp_group=None,
                                            partition_dim=None, tp_mode='duplicated')


def _clipped(grads, max_norm):
    """Megatron's clipping on its local path: scaled copies where the coefficient is below 1."""
    if not max_norm > 0.0 or not grads:  # `if clip_grad > 0.0`
        return grads
    norms = torch.tensor([float(torch.norm(g)) for g in grads], dtype=torch.float)
    total = (torch.norm(norms) ** 2.0).item() ** 0.5
    coeff = max_norm / (total + 1.0e-6)
    return [g * coeff for g in grads] if coeff < 1.0 else grads


class MegatronUpstreamMuon(torch.optim.Optimizer):
    def __init__(self, params, lr=3e-4, weight_decay=0.01, adam_beta1=0.9, adam_beta2=0.999, adam_eps=1e-8,
                 clip_grad=1.0, muon_momentum=0.95, muon_nesterov=False, muon_scale_mode='spectral',
                 muon_num_ns_steps=5, muon_extra_scale_factor=1.0, use_muon=None, decoupled_weight_decay=True,
                 muon_coefficient_type='quintic', muon_split_qkv=True):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, adam_beta1=adam_beta1, adam_beta2=adam_beta2,
                                      adam_eps=adam_eps, muon_momentum=muon_momentum, use_muon=use_muon,
                                      qkv_split_shapes=None))
        self.config = OptimizerConfig(
            optimizer='muon', lr=lr, weight_decay=weight_decay, adam_beta1=adam_beta1, adam_beta2=adam_beta2,
            adam_eps=adam_eps, clip_grad=clip_grad, decoupled_weight_decay=decoupled_weight_decay,
            muon_momentum=muon_momentum, muon_nesterov=muon_nesterov, muon_scale_mode=muon_scale_mode,
            muon_coefficient_type=muon_coefficient_type, muon_num_ns_steps=muon_num_ns_steps,
            muon_extra_scale_factor=muon_extra_scale_factor, muon_split_qkv=muon_split_qkv)
        for g in self.param_groups:
            for p in g['params'] if g['use_muon'] is False else []:
                p.is_embedding_or_output_parameter = True
            for p in g['params'] if g['qkv_split_shapes'] is not None else []:
                # get_megatron_optimizer's tag of a linear_qkv.weight (spec/profiles/megatron.md 3.1)
                p.is_qkv, p.qkv_split_shapes = True, list(g['qkv_split_shapes'])
        muon, adam, links = [], [], []
        for gi, g in enumerate(self.param_groups):
            mp = [p for p in g['params'] if not _meo._is_nonlinear_or_embedding(p)]
            ap = [p for p in g['params'] if _meo._is_nonlinear_or_embedding(p)]
            if mp:
                muon.append({'params': mp, 'lr': g['lr'], 'weight_decay': g['weight_decay'],
                             'momentum': g['muon_momentum']})
                links.append((gi, mp[0], 'muon'))
            if ap:
                adam.append({'params': ap, 'lr': g['lr'], 'weight_decay': g['weight_decay'],
                             'betas': (g['adam_beta1'], g['adam_beta2']), 'eps': g['adam_eps']})
                links.append((gi, ap[0], 'adam'))
        self.inner = []
        if muon:
            self.inner.append(self._muon_optimizer(muon))
        if adam:
            cls = torch.optim.AdamW if self.config.decoupled_weight_decay else torch.optim.Adam
            self.inner.append(cls(adam, lr=lr, weight_decay=weight_decay, betas=(adam_beta1, adam_beta2), eps=adam_eps))
        # (this optimizer's group index, the inner group, its kind): load_state_dict replaces our group dicts
        self._links = [(gi, next(ig for o in self.inner for ig in o.param_groups if ig['params'][0] is first), kind)
                       for gi, first, kind in links]

    def _muon_optimizer(self, groups):
        """_muon_config_to_kwargs, without model chunks or process groups."""
        kwargs = _meo._kwargs_from_config(_meo.TensorParallelMuon, 'muon', self.config)
        kwargs.update(is_qkv_fn=lambda p: getattr(p, 'is_qkv', False), qkv_split_shapes=None, pg_collection=None)
        return _meo.TensorParallelMuon(groups, **kwargs)

    def _sync(self):
        for gi, ig, kind in self._links:
            g = self.param_groups[gi]
            ig['lr'], ig['weight_decay'] = g['lr'], g['weight_decay']
            if kind == 'muon':
                ig['momentum'] = g['muon_momentum']
            else:
                ig['betas'], ig['eps'] = (g['adam_beta1'], g['adam_beta2']), g['adam_eps']
        for o in self.inner:
            o.state = self.state  # one state for all, whatever load_state_dict did

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._sync()
        present = [p for g in self.param_groups for p in g['params'] if p.grad is not None]
        callers = [p.grad for p in present]
        try:
            for p, g in zip(present, _clipped(callers, self.config.clip_grad)):
                p.grad = g
            for o in self.inner:  # ChainedOptimizer: each in turn
                o.step()
        finally:
            for p, g in zip(present, callers):
                p.grad = g
        return loss


def _clipped_tp(params, grads, max_norm):
    """_clipped over the ranks of a tensor-parallel run (clip_grads.py get_grad_norm_fp32 and
    param_is_not_tensor_parallel_duplicate): the squares of the gradients of split parameters on
    every rank, of the others on rank 0 only, summed over the group (all_reduce), then the same
    coefficient on every rank."""
    import torch.distributed as dist

    if not max_norm > 0.0 or not grads:
        return grads
    mine = [g for p, g in zip(params, grads) if getattr(p, 'tensor_model_parallel', False) or dist.get_rank() == 0]
    total = torch.tensor([sum(float(torch.norm(g)) ** 2 for g in mine)], dtype=torch.float)
    dist.all_reduce(total)
    coeff = max_norm / (float(total[0]) ** 0.5 + 1.0e-6)
    return [g * coeff for g in grads] if coeff < 1.0 else grads


class MegatronUpstreamMuonTP(MegatronUpstreamMuon):
    """MegatronUpstreamMuon under `torch_driver.py --world-size N` on the area sharded_tp
    (megatron@0.20.dev: main's muon_tp_mode duplicated): its pg_collection's tensor-parallel
    group is the default process group, the driver's split parameters carry Megatron's
    partition_dim, and the clipping norm is summed over the ranks (_clipped_tp).

        MUONREF_MEGATRON_REF=d98e8a64 MUONREF_EO_REF=v0.3.0 /usr/bin/python3 vectors/drivers/torch_driver.py \
            --optimizer tests/scripts/upstream_megatron.py:MegatronUpstreamMuonTP --adapter megatron@0.20.dev \
            --mode neutral --world-size 2 --out r.json vectors/megatron@0.20.dev/megatron@0.20.dev_sharded_tp.json"""

    def _muon_optimizer(self, groups):
        import torch.distributed as dist

        tp = dist.group.WORLD if dist.is_initialized() else None
        kwargs = _meo._kwargs_from_config(_meo.TensorParallelMuon, 'muon', self.config)
        kwargs.update(is_qkv_fn=lambda p: getattr(p, 'is_qkv', False), qkv_split_shapes=None,
                      pg_collection=types.SimpleNamespace(tp=tp, expt_tp=tp, gtp_remat=None, expt_gtp_remat=None))
        return _meo.TensorParallelMuon(groups, **kwargs)

    @torch.no_grad()
    def step(self, closure=None):
        self._sync()
        present = [p for g in self.param_groups for p in g['params'] if p.grad is not None]
        callers = [p.grad for p in present]
        try:
            for p, g in zip(present, _clipped_tp(present, callers, self.config.clip_grad)):
                p.grad = g
            for o in self.inner:
                o.step()
        finally:
            for p, g in zip(present, callers):
                p.grad = g


class MegatronUpstreamAdaptiveMuon(MegatronUpstreamMuon):
    """optimizer='adaptive_muon' (the profile `megatron_adaptive`, spec/profiles/megatron.md 8):
    upstream TensorParallelAdaptiveMuon with the kwargs of _adaptive_muon_config_to_kwargs
    (TensorParallelMuon's, then those _kwargs_from_config finds for the class under the prefix
    adaptive_muon), on Emerging-Optimizers v0.2.0's AdaptiveMuon.step.  The keys of
    tests/ports/torch_megatron_port.py's MegatronAdaptiveMuon (the adapter `megatron_adaptive`)."""

    def __init__(self, params, adaptive_muon_moment2_method='adamuon', adaptive_muon_beta2=0.95,
                 adaptive_muon_eps=1e-8, **kwargs):
        self._adaptive = dict(adaptive_muon_moment2_method=adaptive_muon_moment2_method,
                              adaptive_muon_beta2=adaptive_muon_beta2, adaptive_muon_eps=adaptive_muon_eps)
        super().__init__(params, **kwargs)

    def _muon_optimizer(self, groups):
        for k, v in self._adaptive.items():
            setattr(self.config, k, v)
        self.config.optimizer = 'adaptive_muon'
        kwargs = _meo._kwargs_from_config(_meo.TensorParallelMuon, 'muon', self.config)
        kwargs.update(is_qkv_fn=lambda p: getattr(p, 'is_qkv', False), qkv_split_shapes=None, pg_collection=None)
        kwargs.update(_meo._kwargs_from_config(_meo.TensorParallelAdaptiveMuon, 'adaptive_muon', self.config))
        return _meo.TensorParallelAdaptiveMuon(groups, **kwargs)
