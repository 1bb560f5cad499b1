"""PyTorch 1.13 port of profile `torch` (spec/profiles/torch.md), written from the spec page.

torch.optim.Muon semantics (PyTorch 2.9, _muon.py at b5ee4d7a): 2-D parameters
only (error at construction), EMA momentum by lerp, out-of-place Nesterov,
Newton-Schulz in bf16 with the eps clamped and the `fused` (addmm) order, the
lr adjusted by sqrt(max(1, A/B)) or 0.2*sqrt(max(A, B)) of shape[:2], decoupled
decay with the unadjusted lr, state {"momentum_buffer"} only.

NS_DTYPE: the Newton-Schulz format (tests/scripts/upstream-diff.py sets torch.float32).
Unlike upstream, NS casts with a copy, so a bf16 momentum buffer is never
normalised in place (the fault torch_alias_buffer of the spec page).
"""

import math

import torch

NS_DTYPE = torch.bfloat16
EPS = 1e-7
DEFAULT_COEFFS = (3.4445, -4.7750, 2.0315)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """Section 5 (checks in the spec's order)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = grad.to(NS_DTYPE, copy=True)
    tall = grad.size(0) > grad.size(1)
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        gram_update = torch.addmm(gram, gram, gram, beta=b, alpha=c)
        x = torch.addmm(x, gram_update, x, beta=a)
    if tall:
        x = x.T
    return x


def _adjust_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=DEFAULT_COEFFS, eps=EPS, ns_steps=5, adjust_lr_fn=None):
        # section 1.1, in order
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            work = []
            for p in group["params"]:          # section 1.2 rules 1-2, then state
                if p.grad is None:
                    continue
                if torch.is_complex(p):
                    raise RuntimeError("Muon does not support complex parameters")
                if p.grad.is_sparse:
                    raise RuntimeError("Muon does not support sparse gradients")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(p.grad, memory_format=torch.preserve_format)
                work.append(p)
            lr = group["lr"]
            if isinstance(lr, torch.Tensor):
                lr = lr.item()
            beta = group["momentum"]
            for p in work:                     # section 4
                grad = p.grad
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                buf = self.state[p]["momentum_buffer"]
                buf.lerp_(grad, 1 - beta)
                update = grad.lerp(buf, beta) if group["nesterov"] else buf
                o = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
                adjusted = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(o, alpha=-adjusted)
        return loss
