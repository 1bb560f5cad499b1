"""A PyTorch port of muonref's profile `nemo`, written from spec/muon.md.

This is the test port of muonref: it has the constructor signature, the
state layout (`momentum_buffer` for Muon parameters; `step`, `exp_avg`,
`exp_avg_sq` for AdamW parameters) and the error messages of NeMo's
`nemo.core.optim.muon.Muon`, and follows the specification where the two
differ:

* every real option must be finite (NeMo accepts `lr = nan`), `ns_steps`
  is limited to 1..1000, and every parameter group is validated, not only
  the defaults (section 1);
* shapes with a zero dimension or more than eight dimensions are refused
  (section 2);
* gradients are checked before anything is written (section 3);
* the Newton-Schulz scalars enter as binary32 values, as on CUDA: PyTorch
  1.13 on the CPU would round them to bf16 first (section 7);
* the element-wise updates are evaluated in binary64 and rounded once to
  binary32, with the unrounded new momentum feeding the Nesterov input and
  the unrounded new moments feeding the AdamW quotient (sections 6, 9, 10);
  a zero AdamW denominator moves nothing (section 9).

Like NeMo, the port keeps no step count for Muon parameters; the driver
(vectors/drivers/torch_driver.py) counts their steps itself.

Standard library and torch only.
"""

import math
import struct
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Tuple, Union

import torch
from torch.optim.optimizer import Optimizer

__all__ = ['Muon', 'update_scale', 'zeropower_via_newtonschulz5', 'SCALE_MODES']

SCALE_MODES = ('fan_in', 'fan_out', 'none')
NS_COEFFS = (3.4445, -4.775, 2.0315)  # Keller's triple, every step (profile nemo)
NS_EPS = 1e-07  # added to the Frobenius norm
MAX_NS_STEPS = 1000
MAX_DIMS = 8


def _f32(x: float) -> float:
    """The binary32 value nearest to the Python float x (round to nearest even)."""
    return struct.unpack('<f', struct.pack('<f', x))[0]


def _is_real(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _bad_nonneg(x: Any) -> bool:
    """True unless x is a finite real >= 0."""
    return not (_is_real(x) and math.isfinite(x) and x >= 0.0)


def _bad_unit(x: Any) -> bool:
    """True unless x is a real in [0, 1)."""
    return not (_is_real(x) and 0.0 <= x < 1.0)


def _bad_int(x: Any, lo: int, hi: Optional[int]) -> bool:
    if isinstance(x, bool) or not isinstance(x, int):
        return True
    return x < lo or (hi is not None and x > hi)


def check_options(
    *,
    lr: Any,
    momentum: Any,
    nesterov: Any,
    ns_steps: Any,
    weight_decay: Any,
    scale_mode: Any,
    adam_betas: Any,
    adam_eps: Any,
    adam_lr_ratio: Any,
    adam_dim_threshold: Any,
    use_muon: Any,
) -> None:
    """Raises ValueError for the first invalid option, in the order of spec/muon.md section 1."""
    if _bad_nonneg(lr):
        raise ValueError(f"Invalid learning rate: {lr!r}")
    if _bad_unit(momentum):
        raise ValueError(f"Invalid momentum: {momentum!r}")
    if _bad_int(ns_steps, 1, MAX_NS_STEPS):
        raise ValueError(f"Invalid number of Newton-Schulz steps: {ns_steps!r}")
    if _bad_nonneg(weight_decay):
        raise ValueError(f"Invalid weight decay: {weight_decay!r}")
    try:
        betas = tuple(adam_betas)
    except TypeError:
        betas = adam_betas
    if not (isinstance(betas, tuple) and len(betas) == 2 and not _bad_unit(betas[0]) and not _bad_unit(betas[1])):
        raise ValueError(f"Invalid AdamW betas: {betas!r}")
    if _bad_nonneg(adam_eps):
        raise ValueError(f"Invalid AdamW epsilon: {adam_eps!r}")
    if _bad_nonneg(adam_lr_ratio):
        raise ValueError(f"Invalid AdamW learning rate ratio: {adam_lr_ratio!r}")
    if _bad_int(adam_dim_threshold, 1, None):
        raise ValueError(f"Invalid AdamW dimension threshold: {adam_dim_threshold!r}")
    if not isinstance(scale_mode, str) or scale_mode not in SCALE_MODES:
        raise ValueError(f"Unknown scale_mode {scale_mode!r}, expected one of {SCALE_MODES}")
    if not any(nesterov is v for v in (True, False)) and not (type(nesterov) is int and nesterov in (0, 1)):
        raise ValueError(f"Invalid nesterov: {nesterov!r} (expected 0 or 1)")
    if not any(use_muon is v for v in (None, True, False)):
        raise ValueError(f"Invalid use_muon: {use_muon!r} (expected None, False or True)")


def _check_shape(param: torch.Tensor, use_muon: Optional[bool]) -> None:
    shape = tuple(param.shape)
    if len(shape) > MAX_DIMS:
        raise ValueError(f"Invalid parameter shape: {len(shape)} dimensions, at most {MAX_DIMS} are supported")
    if any(d == 0 for d in shape):
        raise ValueError(f"Invalid parameter shape {shape}: every dimension must be at least 1")
    if use_muon is True and len(shape) < 2:
        raise ValueError(f"use_muon=True needs at least two dimensions, got shape {shape}")


def _check_gradient(index: int, grad: torch.Tensor) -> None:
    """Spec section 3: sparse, complex, then the first non-finite element."""
    if grad.is_sparse or grad.layout != torch.strided:
        raise ValueError("Muon does not support sparse gradients")
    if grad.is_complex():
        raise ValueError("Muon does not support complex gradients")
    flat = grad.detach().reshape(-1)
    bad = torch.nonzero(~torch.isfinite(flat))
    if bad.numel():
        i = int(bad[0, 0])
        raise ValueError(f"Non-finite gradient for parameter {index}: element {i} is {float(flat[i])!r}")


class Muon(Optimizer):
    """Muon for matrices with an AdamW fallback, profile `nemo` of spec/muon.md.

    The signature and the state layout are NeMo's; see the module docstring
    for where the port follows the specification instead.
    """

    def __init__(
        self,
        params: Union[Iterable[torch.Tensor], Iterable[Dict[str, Any]]],
        lr: float = 2e-2,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_steps: int = 5,
        weight_decay: float = 0.0,
        scale_mode: str = 'fan_in',
        adam_betas: Tuple[float, float] = (0.9, 0.95),
        adam_eps: float = 1e-8,
        adam_lr_ratio: float = 0.025,
        adam_dim_threshold: int = 8192,
        use_muon: Optional[bool] = None,
    ) -> None:
        defaults = dict(
            lr=lr,
            momentum=momentum,
            nesterov=nesterov,
            ns_steps=ns_steps,
            weight_decay=weight_decay,
            scale_mode=scale_mode,
            adam_betas=adam_betas,
            adam_eps=adam_eps,
            adam_lr_ratio=adam_lr_ratio,
            adam_dim_threshold=adam_dim_threshold,
            use_muon=use_muon,
        )
        check_options(**defaults)
        defaults['adam_betas'] = tuple(adam_betas)
        super().__init__(params, defaults)
        # every group is validated (spec section 1), then every parameter routed (section 2)
        for group in self.param_groups:
            check_options(**{k: group[k] for k in defaults})
            group['adam_betas'] = tuple(group['adam_betas'])
        for group in self.param_groups:
            for param in group['params']:
                _check_shape(param, group['use_muon'])

    @staticmethod
    def selects_muon(param: torch.Tensor, *, use_muon: Optional[bool], adam_dim_threshold: int) -> bool:
        """Spec section 2: forced by use_muon, else a matrix with both dimensions below the threshold."""
        if use_muon is not None:
            return bool(use_muon)
        return param.ndim == 2 and max(param.shape) < adam_dim_threshold

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], float]] = None) -> Optional[float]:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        # spec section 3: every gradient is checked before anything is written
        index = 0
        for group in self.param_groups:
            for param in group['params']:
                if param.grad is not None:
                    _check_gradient(index, param.grad)
                index += 1
        for group in self.param_groups:
            for param in group['params']:
                if param.grad is None:
                    continue
                state = self.state[param]
                if self.selects_muon(param, use_muon=group['use_muon'], adam_dim_threshold=group['adam_dim_threshold']):
                    self._muon_update(param, param.grad, state, group)
                else:
                    self._adamw_update(param, param.grad, state, group)
        return loss

    # ---- the two branches; the faulty variants of tests/ override pieces of them ----

    def _momentum(self, buf64: torch.Tensor, grad64: torch.Tensor, beta: float, nesterov: bool):
        """Spec section 6 (sum form): returns (new M, update U), both binary64, unrounded."""
        new = beta * buf64 + grad64
        update = grad64 + beta * new if nesterov else new
        return new, update

    def _muon_decay(self, lr: float, weight_decay: float, scale: float) -> float:
        """Spec section 4: decoupled decay with the unscaled learning rate."""
        return 1.0 - lr * weight_decay

    def _orthogonalize(self, matrix: torch.Tensor, steps: int) -> torch.Tensor:
        """Spec section 7: the module's Newton-Schulz function, looked up by its global name at
        every call (the driver's --ns-in-step rebinds it; the NS variants of tests/ override this)."""
        return zeropower_via_newtonschulz5(matrix, steps=steps)

    def _muon_update(self, param: torch.Tensor, grad: torch.Tensor, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        lr, beta, wd = float(group['lr']), float(group['momentum']), float(group['weight_decay'])
        if 'momentum_buffer' not in state:
            state['momentum_buffer'] = torch.zeros_like(param, memory_format=torch.preserve_format)
        buf = state['momentum_buffer']
        new, update = self._momentum(buf.double(), grad.double(), beta, bool(group['nesterov']))
        rows = param.shape[0]
        matrix = update.float().reshape(rows, -1)  # U is a binary32 matrix (rows, d1*d2*...)
        orthogonal = self._orthogonalize(matrix, group['ns_steps'])
        scale = update_scale(matrix.shape, group['scale_mode'])
        decay = self._muon_decay(lr, wd, scale) if wd != 0 else 1.0
        alpha = lr * scale
        result = decay * param.double() - alpha * orthogonal.double().reshape(param.shape)
        buf.copy_(new.float())
        param.copy_(result.float())

    def _adamw_update(self, param: torch.Tensor, grad: torch.Tensor, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        lr_a = float(group['lr']) * float(group['adam_lr_ratio'])
        beta1, beta2 = (float(b) for b in group['adam_betas'])
        eps, wd = float(group['adam_eps']), float(group['weight_decay'])
        if 'exp_avg' not in state:
            state['step'] = 0
            state['exp_avg'] = torch.zeros_like(param, memory_format=torch.preserve_format)
            state['exp_avg_sq'] = torch.zeros_like(param, memory_format=torch.preserve_format)
        state['step'] = int(state['step']) + 1
        t = state['step']
        bias_correction1 = 1 - beta1**t
        bias_correction2 = 1 - beta2**t
        sqrt_bc2 = math.sqrt(bias_correction2)
        step_size = lr_a / bias_correction1
        decay = 1 - lr_a * wd if wd != 0 else 1.0
        g = grad.double()
        m = beta1 * state['exp_avg'].double() + (1 - beta1) * g
        v = beta2 * state['exp_avg_sq'].double() + (1 - beta2) * g * g
        denom = v.sqrt() / sqrt_bc2 + eps
        quotient = torch.where(denom == 0, torch.zeros_like(m), m / denom)
        result = decay * param.double() - step_size * quotient
        state['exp_avg'].copy_(m.float())
        state['exp_avg_sq'].copy_(v.float())
        param.copy_(result.float())


def _bf16(x: torch.Tensor) -> torch.Tensor:
    """Round a float32 tensor to bf16 (nearest, ties to even)."""
    return x.to(torch.bfloat16)


def _scal(s: float, x: torch.Tensor) -> torch.Tensor:
    """bf16(s * x) with s entering as binary32 (opmath), not rounded to bf16 first."""
    return _bf16(x.float() * _f32(s))


def _add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return _bf16(x.float() + y.float())


def _mm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """bf16(x @ y): products of bf16 values are exact in binary32, accumulated in binary32."""
    return _bf16(x.float() @ y.float())


def ns_step(x: torch.Tensor, a: float, b: float, c: float) -> torch.Tensor:
    """One quintic step in bf16, in the order of spec/muon.md section 7:
    A = X X^T, B = b A + c (A A), X = a X + B X, each operation rounded to bf16."""
    aa = _mm(x, x.T)
    bb = _add(_scal(b, aa), _scal(c, _mm(aa, aa)))
    return _add(_scal(a, x), _mm(bb, x))


def zeropower_via_newtonschulz5(grad: torch.Tensor, steps: int = 5) -> torch.Tensor:
    """Spec section 7 in bf16: the approximate orthogonal factor of a matrix (see ns_bf16)."""
    return ns_bf16(grad, steps, ns_step)


def ns_bf16(grad: torch.Tensor, steps: int, step: Callable[..., torch.Tensor]) -> torch.Tensor:
    """Spec section 7 in bf16: the approximate orthogonal factor of a matrix.

    Runs on the wide orientation (transposes when rows > cols), normalises by
    bf16(bf16(||X||_F) + eps), and applies `steps` quintic steps with Keller's
    triple, each `step(x, a, b, c)` (ns_step: the spec's order; the variants
    of tests/ pass other orders); every operation's result is rounded to
    bf16, the scalars enter as binary32.  Returns the result in the dtype of
    `grad`.
    """
    if grad.ndim != 2:
        raise ValueError(f"Expected a matrix, got a tensor of shape {tuple(grad.shape)}")
    if _bad_int(steps, 1, MAX_NS_STEPS):
        raise ValueError(f"Invalid number of Newton-Schulz steps: {steps!r}")
    a, b, c = NS_COEFFS
    x = _bf16(grad.detach().float())
    transpose = grad.size(0) > grad.size(1)
    if transpose:
        # a contiguous copy: the iteration then sees the same memory layout for G and G^T,
        # so NS(G^T) = NS(G)^T bit for bit (a strided view can change the kernels'
        # order of accumulation; PyTorch 1.13's bf16 matmul does differ on some shapes)
        x = x.T.contiguous()
    norm = _bf16(x.float().norm())
    d = _bf16(norm.float() + _f32(NS_EPS))
    if float(d) == 0.0:
        x = torch.zeros_like(x)
    else:
        x = _bf16(x.float() / d.float())
    for _ in range(steps):
        x = step(x, a, b, c)
    if transpose:
        x = x.T
    return x.to(grad.dtype).contiguous()


def update_scale(shape: Sequence[int], scale_mode: str) -> float:
    """Spec section 5: the factor on the orthogonalised update of a (rows, cols) matrix."""
    rows, cols = shape
    if scale_mode == 'fan_in':
        return math.sqrt(max(1.0, rows / cols))
    if scale_mode == 'fan_out':
        return math.sqrt(max(1.0, cols / rows))
    if scale_mode == 'none':
        return 1.0
    raise ValueError(f"Unknown scale_mode {scale_mode!r}, expected one of {SCALE_MODES}")
