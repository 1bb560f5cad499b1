"""A test port of paddle.optimizer.Muon (PaddlePaddle/Paddle python/paddle/optimizer/muon.py
@98af0a0f, "P-98af"), written from spec/profiles/paddle.md alone in PyTorch (torch and the
standard library only; no upstream code): the profile `paddle`, the GPU path
(ns_matmul_dtype bfloat16).

    Muon(learning_rate=0.02, parameters=None, momentum=0.95, adam_beta1=0.9, adam_beta2=0.95,
         weight_decay=0.01, ns_steps=5, ns_coeff_type="simple", ns_coeffs=None, nesterov=True,
         adam_epsilon=1e-9, grad_clip=None, lr_ratio=None, apply_decay_param_fun=None,
         muon_version=1, muon_exclude_patterns=None, muon_extra_scale_factor=0.2,
         muon_param_info_map=None, ns_matmul_dtype=torch.bfloat16, multi_precision=False)

Paddle's interface: one flat list of parameters, each with a name (Paddle's `param.name`;
here `param.muonref_name`, set by the glue: torch's Tensor.name is the named-tensor name); `muon_param_info_map[name].use_muon` routes every parameter with a gradient
(paddle.md 7); `apply_decay_param_fun(name)` and `lr_ratio(param)` are callables.
Per step (paddle.md 3-6): every Muon parameter first, then every AdamW one.
Muon: M <- lerp(M, G, 1 - beta); U = lerp(G, M, beta) (nesterov) else M; O = NS(U) in bf16;
O <- O * scale * extra as two bf16 products by float32 scalars; decay P *= 1 - lr wd (float32,
only when weight_decay > 0 and apply_decay_param_fun allows); P -= O * lr (float32, lr a
float32 0-D tensor).  AdamW: lr_eff = lr * lr_ratio; P *= 1 - lr_eff wd (when allowed);
m, v; P -= lr_eff / (1 - b1pow) * m / (sqrt(v) / sqrt(1 - b2pow) + eps); the pows start at
beta1, beta2.  multi_precision (paddle.md 8): a bf16 or fp16 parameter gets a float32 master
weight (state 'master_weight', Paddle's fp32_master_0) from its values at its first step; the
decay and the update are applied to it and the parameter takes its cast.  Used by vectors/drivers/torch_driver.py with the adapter `paddle`."""
from collections import namedtuple

import torch
import torch.nn.functional as F

NS_COEFFICIENT_SETS = {
    'simple': [(3.4445, -4.7750, 2.0315)],
    'quintic': [(4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377), (3.7418, -5.5913, 2.3037),
                (2.8769, -3.1427, 1.2046), (2.8366, -3.0525, 1.2012)],
    'polar_express': [(8.2051, -22.9019, 16.4607), (4.0664, -2.8612, 0.5184), (3.9096, -2.8234, 0.5250),
                      (3.2856, -2.4153, 0.4853), (2.2779, -1.6198, 0.3985), (1.8726, -1.2307, 0.3585),
                      (1.8564, -1.2132, 0.3568), (1.8750, -1.2500, 0.3750)],
    'aol': [(4.0098, -7.0585, 2.4635), (3.4585, -5.5479, 2.5959), (2.7573, -3.2939, 1.4254),
            (2.7215, -3.0494, 1.3169)],
    'deepseekv4': [(3.4445, -4.7750, 2.0315)] * 8 + [(2.0, -1.5, 0.5)] * 2,
}

MuonParamInfo = namedtuple('MuonParamInfo', ['use_muon', 'split_concat_func'], defaults=[True, None])


class ClipGradBase:
    """paddle.nn.ClipGradBase (python/paddle/nn/clip.py): __call__ maps [(param, grad)] to the
    clipped pairs; every operation in float32 as Paddle's float32 ops (paddle.md 8)."""


class ClipGradByGlobalNorm(ClipGradBase):
    """Every gradient times c / max(N, c), N the global L2 norm: float32 sums of squares added
    in order, its sqrt, the divide (auto_skip_clip False: also below the bound, where it is 1)."""

    def __init__(self, clip_norm, group_name='default_group', auto_skip_clip=False):
        self.clip_norm = float(clip_norm)

    def __call__(self, params_grads):
        sums = [torch.sum(g.float() * g.float()) for _, g in params_grads if g is not None]
        if not sums:
            return params_grads
        total = sums[0]
        for s in sums[1:]:
            total = total + s
        norm = torch.sqrt(total)
        c = torch.tensor(self.clip_norm, dtype=torch.float32)
        scale = c / torch.maximum(norm, c)
        return [(p, None if g is None else g * scale.to(g.dtype)) for p, g in params_grads]


class ClipGradByNorm(ClipGradBase):
    """Each gradient with an L2 norm above clip_norm times clip_norm / its norm (clip_by_norm)."""

    def __init__(self, clip_norm):
        self.clip_norm = float(clip_norm)

    def __call__(self, params_grads):
        out = []
        for p, g in params_grads:
            if g is not None:
                n = torch.sqrt(torch.sum(g.float() * g.float()))
                if n > self.clip_norm:
                    g = g * (torch.tensor(self.clip_norm, dtype=torch.float32) / n).to(g.dtype)
            out.append((p, g))
        return out


class ClipGradByValue(ClipGradBase):
    """Each element clamped to [min, max], min -max by default."""

    def __init__(self, max, min=None):
        self.max = float(max)
        self.min = -self.max if min is None else float(min)

    def __call__(self, params_grads):
        return [(p, None if g is None else g.clamp(self.min, self.max)) for p, g in params_grads]


def _f32(x):
    return torch.tensor(x, dtype=torch.float32)


def zeropower_via_newtonschulz5(X, steps=5, eps=1e-9, ns_coeffs=None, ns_matmul_dtype=torch.bfloat16):
    """paddle.md 4: X float32, 2-D or 3-D (a batch over dim 0); returns ns_matmul_dtype."""
    if X.ndim not in (2, 3):
        raise ValueError(f"Input tensor X must be 2D or 3D (batched), got {X.ndim}D")
    coeffs = NS_COEFFICIENT_SETS['simple'] if ns_coeffs is None else ns_coeffs
    transpose = X.shape[-2] > X.shape[-1]
    if transpose:
        X = X.transpose(-2, -1)
    shape = X.shape
    X = F.normalize(X.flatten(-2), p=2, dim=-1, eps=eps).reshape(shape)  # float32, before the cast
    X = X.to(ns_matmul_dtype)
    for i in range(steps):
        a, b, c = coeffs[i % len(coeffs)]  # cycle
        A = X @ X.transpose(-2, -1)
        if X.ndim == 2:
            B = torch.addmm(A, A, A, beta=b, alpha=c)
            X = torch.addmm(X, B, X, beta=a, alpha=1.0)
        else:
            B = torch.baddbmm(A, A, A, beta=b, alpha=c)
            X = torch.baddbmm(X, B, X, beta=a, alpha=1.0)
    return X.transpose(-2, -1) if transpose else X


def _scale_product(O, s):
    """A tensor times a Python float in O's dtype: the product in float32 with a float32
    scalar, rounded once to O's dtype (Paddle's scale kernel)."""
    return (O.float() * _f32(s)).to(O.dtype)


def scaling_fn(u, version, extra_scale_factor):
    """paddle.md 5: din, dout = the last two dimensions; two products, each in u's dtype."""
    din, dout = u.shape[-2], u.shape[-1]
    if version == 1:
        scale = max(1, dout / din) ** 0.5
    elif version == 2:
        scale = (dout / din) ** 0.5
    else:
        scale = max(dout, din) ** 0.5
    return _scale_product(_scale_product(u, scale), extra_scale_factor)


class Muon(torch.optim.Optimizer):
    MuonParamInfo = MuonParamInfo

    def __init__(self, learning_rate=0.02, parameters=None, momentum=0.95, adam_beta1=0.9, adam_beta2=0.95,
                 weight_decay=0.01, ns_steps=5, ns_coeff_type='simple', ns_coeffs=None, nesterov=True,
                 adam_epsilon=1e-9, grad_clip=None, lr_ratio=None, apply_decay_param_fun=None, muon_version=1,
                 muon_exclude_patterns=None, muon_extra_scale_factor=0.2, muon_param_info_map=None,
                 ns_matmul_dtype=torch.bfloat16, multi_precision=False, **kwargs):
        if parameters is None:
            raise ValueError("parameters argument given to the Optimizer should not be None.")
        if not isinstance(parameters, list):
            raise TypeError("parameters must be a list.")
        if parameters and isinstance(parameters[0], dict):
            raise TypeError("Muon optimizer only supports a flat list of parameters, not a list of parameter groups.")
        if grad_clip is not None and not isinstance(grad_clip, ClipGradBase):
            raise TypeError("'grad_clip' should be an instance of GradientClipBase's derived class")
        self.grad_clip = grad_clip
        if not isinstance(learning_rate, float):
            raise TypeError(f"learning rate should be float or LRScheduler, got {type(learning_rate)} here")
        if ns_coeff_type == 'custom':
            assert ns_coeffs is not None, "ns_coeffs must be provided when ns_coeff_type is 'custom'."
        else:
            assert ns_coeff_type in NS_COEFFICIENT_SETS, f"Invalid ns_coeff_type: {ns_coeff_type}"
            ns_coeffs = NS_COEFFICIENT_SETS[ns_coeff_type]
        self.ns_coeffs = [tuple(t) for t in ns_coeffs]
        self.ns_steps = ns_steps
        self.nesterov = nesterov
        self.epsilon = adam_epsilon
        self.beta1, self.beta2 = adam_beta1, adam_beta2
        self.weight_decay = weight_decay
        self.lr_ratio = lr_ratio
        self.apply_decay_param_fun = apply_decay_param_fun
        self.muon_version = muon_version
        self.exclude_patterns = muon_exclude_patterns
        self.extra_scale_factor = muon_extra_scale_factor
        self.muon_param_info_map = muon_param_info_map or {}
        self.ns_matmul_dtype = ns_matmul_dtype
        self.multi_precision = multi_precision
        # one group: the lr a scheduler changes, and the momentum (a scheduler of the glue)
        super().__init__(parameters, dict(lr=learning_rate, momentum=momentum, weight_decay=weight_decay,
                                          adam_beta1=adam_beta1, adam_beta2=adam_beta2))

    @staticmethod
    def _default_should_use_muon(name, shape, exclude_patterns):
        """paddle.md 7: 2-D or 3-D and no pattern a case-insensitive substring of the name."""
        if exclude_patterns is None:
            raise ValueError("muon_exclude_patterns must be set in yaml config. Example: muon_exclude_patterns: "
                             "['embed', 'bias', 'lm_head', 'mlp.gate']")
        if len(shape) not in (2, 3):
            return False
        if any(p.lower() in name.lower() for p in exclude_patterns):
            return False
        return True

    def _with_decay(self, p):
        return self.apply_decay_param_fun is None or self.apply_decay_param_fun(p.muonref_name)

    def _master(self, p):
        """The tensor a step decays and updates: p itself, or under multi_precision the float32
        master weight of a bf16/fp16 p (created from p's values); _store puts it back."""
        if not self.multi_precision or p.dtype not in (torch.bfloat16, torch.float16):
            return p
        state = self.state[p]
        if 'master_weight' not in state:
            state['master_weight'] = p.detach().to(torch.float32, copy=True)
        return state['master_weight']

    @staticmethod
    def _store(p, w):
        if w is not p:
            p.copy_(w.to(p.dtype))

    def _muon_update(self, p, group, grad):
        state = self.state[p]
        if 'moment1' not in state:
            state['moment1'] = torch.zeros_like(p, dtype=torch.float32)
        beta = group['momentum']
        g = grad.float()
        M = state['moment1']
        M.lerp_(g, 1 - beta)
        U = g.lerp(M, beta) if self.nesterov else M
        def ortho_fn(x):  # paddle.md 8: Newton-Schulz and the scale of the part it is given
            o = zeropower_via_newtonschulz5(x, self.ns_steps, self.epsilon, self.ns_coeffs, self.ns_matmul_dtype)
            return scaling_fn(o, self.muon_version, self.extra_scale_factor)
        info = self.muon_param_info_map.get(getattr(p, 'muonref_name', None))
        split = info.split_concat_func if info is not None else None
        O = split(U, ortho_fn) if split is not None else ortho_fn(U)
        lr = _f32(group['lr'])
        wd = group['weight_decay']
        w = self._master(p)
        if self._with_decay(p) and wd > 0:
            w.mul_(1 - lr * wd)
        w.sub_(O.float() * lr)
        self._store(p, w)

    def load_state_dict(self, state_dict):
        """paddle.md 6: every state tensor is float32 whatever the parameter's dtype; torch's
        Optimizer.load_state_dict casts floating state to the parameter's dtype (bf16 for a bf16
        parameter), so the saved float32 tensors are put back as they were."""
        saved = state_dict['state']
        super().load_state_dict(state_dict)
        params = [q for g in self.param_groups for q in g['params']]
        for i, q in enumerate(params):
            for k, v in saved.get(i, {}).items():
                if torch.is_tensor(v) and v.is_floating_point():
                    self.state[q][k] = v.to(torch.float32, copy=True)

    def _adamw_update(self, p, group, grad):
        state = self.state[p]
        b1, b2 = group['adam_beta1'], group['adam_beta2']
        if 'moment1' not in state:
            state['moment1'] = torch.zeros_like(p, dtype=torch.float32)
            state['moment2'] = torch.zeros_like(p, dtype=torch.float32)
            state['beta1_pow_acc'] = torch.full([1], b1, dtype=torch.float32)
            state['beta2_pow_acc'] = torch.full([1], b2, dtype=torch.float32)
        g = grad.float()
        ratio = 1.0 if self.lr_ratio is None else self.lr_ratio(p)
        lr_eff = group['lr'] * ratio
        coeff = group['weight_decay'] if self._with_decay(p) else 0.0
        m, v = state['moment1'], state['moment2']
        b1p, b2p = float(state['beta1_pow_acc']), float(state['beta2_pow_acc'])
        w = self._master(p)
        w.mul_(1 - lr_eff * coeff)
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        denom = v.sqrt() / (1 - b2p) ** 0.5 + self.epsilon
        w.sub_(lr_eff / (1 - b1p) * m / denom)
        self._store(p, w)
        state['beta1_pow_acc'].mul_(b1)
        state['beta2_pow_acc'].mul_(b2)

    @torch.no_grad()
    def step(self, closure=None):
        """Paddle's step() takes no closure; as a torch optimizer this port calls one, with
        gradients enabled, before the update and returns its loss (the driver's training loop)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        group = self.param_groups[0]
        params_grads = [(p, p.grad) for p in group['params'] if p.grad is not None]
        if self.grad_clip is not None:  # paddle.md 8: new gradients, every parameter's, before routing; p.grad kept
            params_grads = self.grad_clip(params_grads)
        muon, adamw = [], []
        for p, g in params_grads:
            assert p.muonref_name in self.muon_param_info_map, f"muon_param_info_map does not have {p.muonref_name}"
            (muon if self.muon_param_info_map[p.muonref_name].use_muon else adamw).append((p, g))
        for p, g in muon:
            self._muon_update(p, group, g)
        for p, g in adamw:
            self._adamw_update(p, group, g)
        return loss
