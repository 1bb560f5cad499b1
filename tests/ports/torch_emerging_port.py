"""A test port of NVIDIA-NeMo/Emerging-Optimizers' Muon, written from
spec/profiles/emerging.md alone (torch and the standard library only; no
upstream code): the profile `emerging`, HEAD @fd77292 (nesterov=False, the
default of every tagged release).

    Muon(params, lr=3e-4, momentum=0.95, weight_decay=0.01, *, nesterov=False,
         weight_decay_method="decoupled", fp32_matmul_prec="medium",
         coefficient_type="quintic", num_ns_steps=5, scale_mode="spectral",
         extra_scale_factor=1.0)

Per parameter with a gradient (emerging.md 3): decay first (P + (-lr wd) P),
M <- lerp(M, G, 1 - beta), U = lerp(G, M, beta) with nesterov else M,
O = NS(U) * scale * extra (float32 tensor products), P <- P + (-lr) O.
Newton-Schulz (emerging.md 4): float32 2-D input, transposed when tall,
F.normalize (max(||x||, eps), eps 1e-15) in float32, then bf16 under the
matmul precision "medium", the coefficient list cycled (repeat-last for
polar_express, cans, deepseekv4), one step A = X X^T, B = addmm(A, A, A,
beta=b, alpha=c), X = addmm(X, B, X, beta=a).  Used by
vectors/drivers/torch_driver.py with the adapter `emerging`."""
import itertools

import torch
import torch.nn.functional as F

COEFFICIENT_SETS = {
    'simple': [(3.4445, -4.7750, 2.0315)],
    'quintic': [(4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377), (3.7418, -5.5913, 2.3037),
                (2.8769, -3.1427, 1.2046), (2.8366, -3.0525, 1.2012)],
    'polar_express': [(8.2051, -22.9019, 16.4607), (4.0664, -2.8612, 0.5184), (3.9096, -2.8234, 0.5250),
                      (3.2856, -2.4153, 0.4853), (2.2779, -1.6198, 0.3985), (1.8726, -1.2307, 0.3585),
                      (1.8564, -1.2132, 0.3568), (1.8750, -1.2500, 0.3750)],
    'cans': [(8.4703, -25.1081, 18.6293), (4.1828, -3.1087, 0.5806), (3.9619, -2.9541, 0.5630),
             (3.2866, -2.4647, 0.5074), (2.2737, -1.6447, 0.4162)],
    'aol': [(4.0098, -7.0585, 2.4635), (3.4585, -5.5479, 2.5959), (2.7573, -3.2939, 1.4254),
            (2.7215, -3.0494, 1.3169)],
    'deepseekv4': [(3.4445, -4.7750, 2.0315)] * 8 + [(2.0, -1.5, 0.5)] * 2,
    'cubic5': [(3.3656576, -3.3420992, 0.0), (2.5744352, -1.4957376, 0.0), (2.5368962, -1.4312570, 0.0),
               (2.4418906, -1.2764040, 0.0), (2.2230472, -0.9630650, 0.0)],
}
REPEAT_LAST = ('polar_express', 'cans', 'deepseekv4')


class _MatmulPrecision:
    """torch.set_float32_matmul_precision(prec) for the duration of a block."""

    def __init__(self, prec):
        self.prec = prec

    def __enter__(self):
        self.old = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision(self.prec)

    def __exit__(self, *exc):
        torch.set_float32_matmul_precision(self.old)


def newton_schulz(x, steps, coefficient_type='quintic', eps=1e-15):
    """emerging.md 4: x float32, (M, N); returns float32 (M, N)."""
    if x.ndim != 2:
        raise TypeError(f"Input tensor x must be 2d or 3d (batched 2d), got {x.ndim}d")
    if x.dtype != torch.float32:
        raise TypeError(f"Input tensor x must be in float32, got {x.dtype}")
    transpose = x.size(-2) > x.size(-1)
    if transpose:
        x = x.mT
    X = F.normalize(x, p=2, dim=(-2, -1), eps=eps)
    if coefficient_type == 'custom':  # Muon never passes custom_coefficient_sets
        raise ValueError("custom_coefficient_sets must be provided when coefficient_type is 'custom'.")
    if coefficient_type not in COEFFICIENT_SETS:
        raise ValueError(f"Invalid coefficient type: {coefficient_type}")
    if coefficient_type == 'cubic5' and steps != 5:
        raise ValueError(f"cubic5 is a fixed 5-step schedule; got steps={steps}. Use steps=5, or pass explicit "
                         "custom coefficients.")
    sets = COEFFICIENT_SETS[coefficient_type]
    if coefficient_type in REPEAT_LAST:
        coeffs = [sets[min(k, len(sets) - 1)] for k in range(steps)]
    else:
        coeffs = list(itertools.islice(itertools.cycle(sets), steps))
    if torch.get_float32_matmul_precision() == 'medium':
        X = X.to(torch.bfloat16)
    for a, b, c in coeffs:
        A = X @ X.mT
        if c != 0:
            B = torch.addmm(A, A, A, beta=b, alpha=c)
            X = torch.addmm(X, B, X, beta=a, alpha=1.0)
        else:  # cubic5: one rounding of a X + b (A X)
            X = torch.addmm(X, A, X, beta=a, alpha=b)
    X = X.to(torch.float32)
    return X.mT if transpose else X


def scale_factor(size_out, size_in, mode):
    """emerging.md 5."""
    if mode == 'shape_scaling':
        return max(1, size_out / size_in) ** 0.5
    if mode == 'spectral':
        return max(size_out, size_in) ** 0.5
    if mode == 'unit_rms_norm':
        return (size_out / size_in) ** 0.5
    raise ValueError(f"Invalid mode for Muon update scale factor: {mode}")


class Muon(torch.optim.Optimizer):
    # the Newton-Schulz eps and the presets of the release (emerging.md 0): fd77292 / v0.4.0's; an older
    # release's port (tests/ports/torch_emerging_0_3_port.py) sets its own
    NS_EPS = 1e-15
    COEFFICIENT_TYPES = None  # None: every preset of COEFFICIENT_SETS

    def __init__(self, params, lr=3e-4, momentum=0.95, weight_decay=0.01, *, nesterov=False,
                 weight_decay_method='decoupled', fp32_matmul_prec='medium', coefficient_type='quintic',
                 num_ns_steps=5, scale_mode='spectral', extra_scale_factor=1.0, use_syrk=False,
                 weight_update_hook=None):
        if num_ns_steps < 1:
            raise ValueError(f"num_ns_steps must be at least 1, got {num_ns_steps}")
        self.nesterov = nesterov
        self.weight_decay_method = weight_decay_method
        self.fp32_matmul_prec = fp32_matmul_prec
        self.coefficient_type = coefficient_type
        self.num_ns_steps = num_ns_steps
        self.scale_mode = scale_mode
        self.extra_scale_factor = extra_scale_factor
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

    def _decay(self, p, grad, lr, wd):
        if wd == 0.0:
            return
        m = self.weight_decay_method
        if m == 'decoupled':
            p.add_(p, alpha=(-wd * lr))
        elif m == 'independent':
            p.add_(p, alpha=-wd)
        elif m == 'l2':
            grad.add_(p, alpha=wd)
        elif m == 'palm':
            p.add_(p, alpha=(-(wd * lr * lr)))
        else:
            raise ValueError(f"Invalid weight decay method: {m}")

    @torch.no_grad()
    def step(self, closure=None):
        if closure is not None:
            raise ValueError("closure is not supported")
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if 'momentum_buffer' not in state:
                    state['momentum_buffer'] = torch.zeros_like(p)
                self._decay(p, grad, group['lr'], group['weight_decay'])
                buf = state['momentum_buffer']
                buf.lerp_(grad, 1 - group['momentum'])
                u = grad.lerp(buf, group['momentum']) if self.nesterov else buf
                if u.ndim != 2:
                    raise ValueError("Only 2D parameters are supported.")
                if self.COEFFICIENT_TYPES is not None and self.coefficient_type not in self.COEFFICIENT_TYPES + ('custom',):
                    raise ValueError(f"Invalid coefficient type: {self.coefficient_type}")
                with _MatmulPrecision(self.fp32_matmul_prec):
                    o = newton_schulz(u, self.num_ns_steps, self.coefficient_type, self.NS_EPS)
                    s = scale_factor(u.size(-2), u.size(-1), self.scale_mode)
                    o = o * s * self.extra_scale_factor
                p.add_(o, alpha=-group['lr'])
        return None
