"""A test port of Megatron Core's Muon as installed, core_v0.18.0 to core_v0.19.x
(megatron/core/optimizer/emerging_optimizers.py: TensorParallelMuon on the
Emerging-Optimizers v0.2.0 that pyproject.toml pins, the chained Adam for the rest,
clip_grads.py before the step), written from spec/profiles/megatron.md and
spec/profiles/emerging.md (torch and the standard library, and the Emerging-Optimizers
test port beside it for Newton-Schulz and its presets; no upstream code): the profile
`megatron`, single process (tensor-parallel size 1).

    MegatronMuon(params, lr=3e-4, weight_decay=0.01, adam_beta1=0.9, adam_beta2=0.999,
                 adam_eps=1e-8, clip_grad=1.0, muon_momentum=0.95, muon_nesterov=False,
                 muon_scale_mode='spectral', muon_coefficient_type='quintic', muon_num_ns_steps=5,
                 muon_extra_scale_factor=1.0, use_muon=None, decoupled_weight_decay=True)

OptimizerConfig's field names.  lr, weight_decay, muon_momentum and the Adam betas and eps
are group keys (Megatron's _get_param_groups builds groups: weight decay 0 for biases, the
decoupled lr for embeddings); the others are the optimizer's.  A group's use_muon False is
the `is_embedding_or_output_parameter` tag; None (or True) leaves the parameter untagged.

step() (megatron.md 1, 3, 4; emerging.md 3, 4, 5):
1. clip_grad > 0: total_norm = (||all gradients||_2 in float32) ** 2, .item() ** 0.5;
   clip_coeff = clip_grad / (total_norm + 1e-6); when below 1 every gradient is multiplied
   by it (float32 tensor times the Python float).  The port scales copies and leaves p.grad
   as the caller set it (the judge reads p.grad back: grad_after_step keep).
2. a parameter is Muon when untagged and `len(p.shape) == 2`, else Adam
   (_is_nonlinear_or_embedding; 0-D and 3-D+ parameters take Adam too).
3. Muon: p += (-lr wd) p; M.lerp_(G, 1 - beta); U = G.lerp(M, beta) with Nesterov else M;
   O = NS(U) * sqrt(max(rows, cols)) * extra; p += (-lr) O.
4. Adam (torch.optim.AdamW's formula): step += 1; p *= 1 - lr wd; m.lerp_(G, 1 - b1);
   v = b2 v + (1 - b2) G G; p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
   decoupled_weight_decay False (megatron.md 4): torch.optim.Adam's instead, G = G + wd p
   (out of place: p.grad is not written) before the moments and no p *= 1 - lr wd; Muon
   keeps its decoupled decay (_kwargs_from_config finds no config field named
   use_decoupled_weight_decay: TensorParallelMuon's default True).
MegatronMuon017 is core_v0.17.x on Emerging-Optimizers v0.1.0 (the profile megatron@0.17);
MegatronMuon020Dev main at d98e8a64 on Emerging-Optimizers v0.3.0 (megatron@0.20.dev).
Newton-Schulz: Emerging-Optimizers v0.2.0's (emerging.md 4, 11): transposed when tall,
F.normalize in float32 with eps 1e-7 (v0.1.0 to v0.3.x; 1e-15 from v0.4.0), bf16 (matmul
precision "medium"), muon_coefficient_type's preset of v0.2.0 (simple, quintic,
polar_express repeat-last, aol; another raises "Invalid coefficient type: X" at the first
step), A = X X^T, B = addmm(A, A, A, beta=b, alpha=c), X = addmm(X, B, X, beta=a).  Used by
vectors/drivers/torch_driver.py with the adapter `megatron`."""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch_emerging_port as _emerging  # noqa: E402
except ImportError as exc:
    raise ImportError(f"{__file__}: needs tests/ports/torch_emerging_port.py beside it (its Newton-Schulz and presets; "
                      "copy both)") from exc

NS_EPS = 1e-7
COEFFICIENT_TYPES = ('simple', 'quintic', 'polar_express', 'aol')  # muon_utils.NSCoeffT at v0.2.0, less custom
# (custom needs custom_coefficient_sets, which Megatron has no field for: newton_schulz refuses it)


def newton_schulz(x, steps, coefficients='quintic', presets=COEFFICIENT_TYPES):
    """x: float32 (rows, cols); the orthogonalised float32 (rows, cols).  coefficients: a
    preset of presets, the pinned Emerging-Optimizers' (v0.2.0's by default; 'quintic',
    Megatron's default; 'simple' also for other profiles' cases)."""
    if coefficients != 'custom' and coefficients not in presets:  # custom: the Emerging port's refusal
        raise ValueError(f"Invalid coefficient type: {coefficients}")
    prec = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision('medium')  # muon_fp32_matmul_prec's default: bf16
    try:
        # float32, as Megatron's Muon only ever sees (config.bf16 keeps float32 main copies: megatron.md 6)
        return _emerging.newton_schulz(x.float(), steps, coefficients, NS_EPS)
    finally:
        torch.set_float32_matmul_precision(prec)


def spectral_scale(rows, cols, mode):
    """get_muon_scale_factor (emerging.md 5)."""
    if mode == 'spectral':
        return max(rows, cols) ** 0.5
    if mode == 'unit_rms_norm':
        return (rows / cols) ** 0.5
    if mode == 'shape_scaling':
        return max(1, rows / cols) ** 0.5
    raise ValueError(f"Invalid mode for Muon update scale factor: {mode}")


class MegatronMuon(torch.optim.Optimizer):
    PRESETS = COEFFICIENT_TYPES  # the pinned Emerging-Optimizers' coefficient types

    def __init__(self, params, lr=3e-4, weight_decay=0.01, adam_beta1=0.9, adam_beta2=0.999, adam_eps=1e-8,
                 clip_grad=1.0, muon_momentum=0.95, muon_nesterov=False, muon_scale_mode='spectral',
                 muon_num_ns_steps=5, muon_extra_scale_factor=1.0, use_muon=None, decoupled_weight_decay=True,
                 muon_coefficient_type='quintic', muon_split_qkv=True):
        if muon_num_ns_steps < 1:  # TensorParallelMuon.__init__
            raise ValueError(f"num_ns_steps must be at least 1, got {muon_num_ns_steps}")
        self.clip_grad = clip_grad
        self.nesterov = muon_nesterov
        self.scale_mode = muon_scale_mode
        self.num_ns_steps = muon_num_ns_steps
        self.coefficient_type = muon_coefficient_type
        self.extra_scale_factor = muon_extra_scale_factor
        self.decoupled_weight_decay = decoupled_weight_decay
        self.split_qkv = muon_split_qkv
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, adam_beta1=adam_beta1, adam_beta2=adam_beta2,
                                      adam_eps=adam_eps, muon_momentum=muon_momentum, use_muon=use_muon,
                                      qkv_split_shapes=None))

    @staticmethod
    def is_muon(group, p):
        """_is_nonlinear_or_embedding: untagged and 2-D."""
        return group['use_muon'] is not False and len(p.shape) == 2

    def _clipped(self, grads):
        """clip_grad_norm_fp32: the gradients, scaled by clip_coeff when it is below 1."""
        if self.clip_grad <= 0 or not grads:  # Megatron: `if clip_grad > 0.0`, else no clipping
            return grads
        norm = torch.linalg.vector_norm(torch.cat([g.reshape(-1) for g in grads]).to(torch.float32))
        total_norm = (norm ** 2).item() ** 0.5
        clip_coeff = self.clip_grad / (total_norm + 1.0e-6)
        if clip_coeff < 1.0:
            return [g * clip_coeff for g in grads]
        return grads

    def _muon(self, group, p, grad):
        lr, wd, beta = group['lr'], group['weight_decay'], group['muon_momentum']
        state = self.state[p]
        if 'momentum_buffer' not in state:
            state['momentum_buffer'] = torch.zeros_like(p)
        if wd != 0.0:
            p.add_(p, alpha=-wd * lr)
        buf = state['momentum_buffer']
        buf.lerp_(grad, 1 - beta)
        u = grad.lerp(buf, beta) if self.nesterov else buf
        shapes = group['qkv_split_shapes']
        if self.split_qkv and shapes is not None:  # is_qkv (spec/muon.md 7.6)
            o = self._orthogonalize_qkv(u, shapes)
        else:
            o = self._scaled_orthogonalize(u)
        p.add_(self._update(state, p, o), alpha=-lr)

    def _scaled_orthogonalize(self, u):
        o = newton_schulz(u, self.num_ns_steps, self.coefficient_type, presets=self.PRESETS)
        return o * spectral_scale(u.size(0), u.size(1), self.scale_mode) * self.extra_scale_factor

    def _orthogonalize_qkv(self, grad, qkv_split_shapes):
        """TensorParallelMuon.orthogonalize's QKV split (core_v0.19): Q, K and V of every query group
        gathered, each orthogonalized and scaled by its own shape, put back."""
        grad_shape = grad.shape
        qkv_split_dim = sum(qkv_split_shapes)
        if grad_shape[0] % qkv_split_dim != 0:
            raise RuntimeError(f"Muon QKV split shape mismatch: grad_shape={tuple(grad_shape)}, "
                               f"split_shapes={qkv_split_shapes}")
        num_query_groups = grad_shape[0] // qkv_split_dim
        qkv_grads = torch.split(grad.view(num_query_groups, qkv_split_dim, -1), qkv_split_shapes, dim=1)
        qkv_grads = [g.reshape(-1, grad_shape[-1]) for g in qkv_grads]
        qkv_grads = [self._scaled_orthogonalize(g).view(num_query_groups, -1, grad_shape[-1]) for g in qkv_grads]
        return torch.cat(qkv_grads, dim=1).view(grad_shape)

    def _update(self, state, p, o):
        """The step's direction from the scaled Newton-Schulz output o: o itself."""
        return o

    def _adam(self, group, state, p, grad):
        lr, wd = group['lr'], group['weight_decay']
        b1, b2, eps = group['adam_beta1'], group['adam_beta2'], group['adam_eps']
        if 'step' not in state:
            state['step'] = torch.zeros(())
            state['exp_avg'] = torch.zeros_like(p)
            state['exp_avg_sq'] = torch.zeros_like(p)
        state['step'] += 1
        t = state['step'].item()
        if self.decoupled_weight_decay:
            p.mul_(1 - lr * wd)
        elif wd != 0:  # torch.optim.Adam: the decay through the gradient, out of place
            grad = grad.add(p, alpha=wd)
        state['exp_avg'].lerp_(grad, 1 - b1)
        state['exp_avg_sq'].mul_(b2).addcmul_(grad, grad, value=1 - b2)
        step_size = lr / (1 - b1 ** t)
        denom = (state['exp_avg_sq'].sqrt() / math.sqrt(1 - b2 ** t)).add_(eps)
        p.addcdiv_(state['exp_avg'], denom, value=-step_size)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        todo = [(g, p) for g in self.param_groups for p in g['params'] if p.grad is not None]
        for g, p in todo:
            if p.grad.is_sparse or p.grad.is_complex():
                raise RuntimeError("MegatronMuon supports dense real gradients only")
        grads = self._clipped([p.grad for _, p in todo])
        for (g, p), grad in zip(todo, grads):
            if self.is_muon(g, p):
                self._muon(g, p, grad)
            else:
                self._adam(g, self.state[p], p, grad)
        return loss


class MegatronMuon017(MegatronMuon):
    """core_v0.17.x (megatron.md 10; the profile `megatron@0.17`): megatron/core/optimizer/muon.py's
    TensorParallelMuon on the Emerging-Optimizers v0.1.0 that pyproject.toml pins.  MegatronMuon
    with three differences: the Nesterov key is muon_use_nesterov; the constructor, after the
    num_ns_steps check, refuses every coefficient type but quintic (validate_coefficient_type
    without v0.2's NSCoeffT); v0.1.0's newton_schulz refuses, at the first Muon step, a step
    count that is not a multiple of the preset's triples (quintic: five), where v0.2.0 cycles."""

    SUPPORTED = ('quintic',)
    TRIPLES = {'quintic': 5}

    def __init__(self, params, muon_use_nesterov=False, **kwargs):
        if 'muon_nesterov' in kwargs:  # OptimizerConfig at core_v0.17 has no such field
            raise TypeError("__init__() got an unexpected keyword argument 'muon_nesterov'")
        super().__init__(params, muon_nesterov=muon_use_nesterov, **kwargs)
        if self.coefficient_type not in self.SUPPORTED:
            raise ValueError(f"Unsupported muon coefficient type '{self.coefficient_type}'. "
                             f"Supported types: {self.SUPPORTED}")

    def _muon(self, group, p, grad):
        n = self.TRIPLES[self.coefficient_type]
        if self.num_ns_steps % n != 0:  # muon_utils.newton_schulz @v0.1.0
            raise ValueError(f"steps ({self.num_ns_steps}) must be multiple of len(coefficient_sets) ({n}).")
        super()._muon(group, p, grad)


class MegatronMuon020Dev(MegatronMuon):
    """main at d98e8a64 (megatron.md 11; the profile `megatron@0.20.dev`, package_info 0.20.0,
    unreleased): emerging_optimizers.py's TensorParallelMuon as at core_v0.19, on the
    Emerging-Optimizers v0.3.0 that main's pyproject.toml pins, whose NSCoeffT adds cans and
    deepseekv4 (both repeat their last triple; the Emerging port's REPEAT_LAST); Newton-Schulz
    eps 1e-7 as at v0.2.0."""

    PRESETS = ('simple', 'quintic', 'polar_express', 'cans', 'aol', 'deepseekv4')  # NSCoeffT at v0.3.0, less custom


class MegatronAdaptiveMuon(MegatronMuon):
    """optimizer='adaptive_muon' (megatron.md 8; the profile `megatron_adaptive`): Megatron's
    TensorParallelAdaptiveMuon on Emerging-Optimizers v0.2.0.  MegatronMuon's keys and three
    more, adaptive_muon_moment2_method ('adamuon' or 'normuon'), adaptive_muon_beta2 and
    adaptive_muon_eps.  The Muon step (AdaptiveMuon.step of v0.2.0): the decay, the momentum
    and Nesterov input as MegatronMuon's; O' = NS(U) * scale * extra (TensorParallelMuon's
    scaled Newton-Schulz, before the second moment); adamuon v.lerp_(O'^2, 1 - beta2),
    N = O' / (sqrt(v) + eps); normuon v (per row where rows >= cols, else per column: the mean
    of O'^2 over the other side) lerped the same way, N = O' * rsqrt(max(v, eps)), the norm not
    restored; p += (-lr) N.  The state's moment2_buffer is v (zeros at the first step)."""

    def __init__(self, params, adaptive_muon_moment2_method='adamuon', adaptive_muon_beta2=0.95,
                 adaptive_muon_eps=1e-8, **kwargs):
        if adaptive_muon_moment2_method not in ('adamuon', 'normuon'):  # AdaptiveMuon._init_group, at the step
            raise TypeError(f"Invalid second moment method: {adaptive_muon_moment2_method}")
        self.moment2_method = adaptive_muon_moment2_method
        self.beta2 = adaptive_muon_beta2
        self.eps = adaptive_muon_eps
        super().__init__(params, **kwargs)

    def _update(self, state, p, o):
        """The second moment of the scaled output o (made at the first step, beside the momentum)."""
        tall = p.shape[-2] >= p.shape[-1]
        if 'moment2_buffer' not in state:
            # float32, as Megatron's main parameters are (megatron.md 6): a bf16 model never reaches it
            if self.moment2_method == 'adamuon':
                state['moment2_buffer'] = torch.zeros_like(p, dtype=torch.float32)
            else:
                state['moment2_buffer'] = torch.zeros((p.shape[0], 1) if tall else (1, p.shape[1]), dtype=torch.float32)
        v = state['moment2_buffer']
        if v.dtype != torch.float32:  # a state loaded into a bf16 model (load_state_dict casts it): float32 again
            v = state['moment2_buffer'] = v.float()
        if self.moment2_method == 'adamuon':
            v.lerp_(o.square(), 1 - self.beta2)
            return o / (v.sqrt() + self.eps)
        v.lerp_(o.square().mean(dim=-1 if tall else -2, keepdim=True), 1 - self.beta2)
        return o * v.clamp_min(self.eps).rsqrt()
