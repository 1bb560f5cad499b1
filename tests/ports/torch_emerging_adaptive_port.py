"""A test port of NVIDIA-NeMo/Emerging-Optimizers' AdaptiveMuon, written from
spec/profiles/emerging_adaptive.md alone (torch and the standard library only;
no upstream code): the profile `emerging_adaptive`, HEAD @fd77292
(adaptive_muon.py as in v0.3.1 and v0.4.0).

    AdaptiveMuon(params, lr, momentum, weight_decay, *, nesterov=False,
                 weight_decay_method="decoupled", fp32_matmul_prec="medium",
                 coefficient_type="quintic", num_ns_steps=5, scale_mode="spectral",
                 extra_scale_factor=1.0, moment2_method="adamuon", beta2=0.95, eps=1e-8)

lr, momentum and weight_decay have no default.  Constructor checks
(emerging_adaptive.md 2): namo with l2, then num_ns_steps >= 1, then torch's
own; beta2 and eps are written into the groups that exist at construction
(setdefault), so a group added later has neither (KeyError at the step).

Step (emerging_adaptive.md 3), per group: the lazy state of every parameter
with a gradient (momentum_buffer like p; moment2_buffer like p for adamuon,
(rows, 1) or (1, cols) for normuon (mean over the shorter side), (1,) for
namo; normuon refuses a non-2-D parameter here, an unknown method is a
TypeError here), then per parameter: a non-2-D parameter is refused (with or
without a gradient); a gradless one skipped; decay first (emerging's four
methods; l2 writes p.grad); M <- lerp(M, G, 1 - beta); U = lerp(G, M, beta)
with nesterov else M; O = NS(U), float32 out (emerging.md 4: float32 2-D
input, transposed when tall, F.normalize eps 1e-15, bf16 under the matmul
precision "medium", fused addmm); the second moment of O
(emerging_adaptive.md 5):

    adamuon  v <- lerp(v, O^2, 1 - beta2);  N = O / (sqrt(v) + eps)
    normuon  v <- lerp(v, mean(O^2 over the shorter side), 1 - beta2);
             N = O * rsqrt(max(v, eps));  N <- N * (||O||_F / max(||N||_F, eps))
    namo     v <- lerp(v, ||G||_F^2, 1 - beta2) (G: the gradient after decay, before momentum);
             N = O * (||U||_F / (sqrt(v) + eps))

then the Muon scale (sqrt(max(rows, cols)) for "spectral") and
extra_scale_factor as two float32 products, P <- P + (-lr) N.  No bias
correction, no step count.  Used by vectors/drivers/torch_driver.py with the
adapter `emerging_adaptive`."""
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
MOMENT2_METHODS = ('adamuon', 'normuon', 'namo')


class _MatmulPrecision:
    """torch.set_float32_matmul_precision(prec) for the duration of a block (an unknown value:
    torch warns and keeps the current one)."""

    def __init__(self, prec):
        self.prec = prec

    def __enter__(self):
        self.old = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision(self.prec)

    def __exit__(self, *exc):
        torch.set_float32_matmul_precision(self.old)


def newton_schulz(x, steps, coefficient_type='quintic', eps=1e-15):
    """emerging.md 4 (the function AdaptiveMuon calls, use_syrk False): x float32 (M, N)."""
    if x.ndim < 2 or x.ndim > 3:
        raise TypeError(f"Input tensor x must be 2d or 3d (batched 2d), got {x.ndim}d")
    if x.dtype != torch.float32:
        raise TypeError(f"Input tensor x must be in float32, got {x.dtype}")
    transpose = x.size(-2) > x.size(-1)
    if transpose:
        x = x.mT
    X = F.normalize(x, p=2, dim=(-2, -1), eps=eps)
    if coefficient_type == 'custom':  # AdaptiveMuon never passes custom_coefficient_sets
        raise ValueError("custom_coefficient_sets must be provided when coefficient_type is 'custom'.")
    if coefficient_type not in COEFFICIENT_SETS:
        raise ValueError(f"Invalid coefficient type: {coefficient_type}")
    sets = COEFFICIENT_SETS[coefficient_type]
    if coefficient_type == 'cubic5' and steps != len(sets):
        raise ValueError(f"cubic5 is a fixed {len(sets)}-step schedule; got steps={steps}. Use steps=5, or pass "
                         "explicit custom coefficients.")
    if coefficient_type in REPEAT_LAST:
        coeffs = [sets[min(k, len(sets) - 1)] for k in range(steps)]
    else:
        coeffs = [sets[k % len(sets)] for k in range(steps)]
    if torch.get_float32_matmul_precision() == 'medium':
        X = X.to(torch.bfloat16)
    for a, b, c in coeffs:
        A = X @ X.mT
        if c != 0.0:
            B = torch.addmm(A, A, A, alpha=c, beta=b)
            X = torch.addmm(X, B, X, alpha=1.0, beta=a)
        else:  # cubic5: one rounding of a X + b (A X)
            X = torch.addmm(X, A, X, alpha=b, beta=a)
    X = X.to(torch.float32)
    return X.mT if transpose else X


def scale_factor(size_out, size_in, mode):
    """emerging.md 5 (muon.get_muon_scale_factor)."""
    if mode == 'shape_scaling':
        return max(1, size_out / size_in) ** 0.5
    if mode == 'spectral':
        return max(size_out, size_in) ** 0.5
    if mode == 'unit_rms_norm':
        return (size_out / size_in) ** 0.5
    raise ValueError(f"Invalid mode for Muon update scale factor: {mode}")


class AdaptiveMuon(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum, weight_decay, *, nesterov=False, weight_decay_method='decoupled',
                 fp32_matmul_prec='medium', coefficient_type='quintic', num_ns_steps=5, scale_mode='spectral',
                 extra_scale_factor=1.0, moment2_method='adamuon', beta2=0.95, eps=1e-8):
        if moment2_method == 'namo' and weight_decay_method == 'l2':
            raise ValueError('moment2_method="namo" is incompatible with weight_decay_method="l2"')
        if num_ns_steps < 1:
            raise ValueError(f"num_ns_steps must be at least 1, got {num_ns_steps}")
        self.scale_mode = scale_mode
        self.extra_scale_factor = extra_scale_factor
        self.fp32_matmul_prec = fp32_matmul_prec
        self.nesterov = nesterov
        self.weight_decay_method = weight_decay_method
        self._num_ns_steps = num_ns_steps
        self._coefficient_type = coefficient_type
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))
        self.moment2_method = moment2_method
        for group in self.param_groups:
            group.setdefault('beta2', beta2)
            group.setdefault('eps', eps)

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

    def _init_group(self, group):
        name = type(self).__name__
        for p in group['params']:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state['momentum_buffer'] = torch.zeros_like(p.data)
                if self.moment2_method == 'adamuon':
                    state['moment2_buffer'] = torch.zeros_like(p.data)
                elif self.moment2_method == 'normuon':
                    if p.data.ndim != 2:
                        raise ValueError(f"{name} only supports 2D parameters, got shape {tuple(p.data.shape)}")
                    shape = list(p.data.shape)
                    shape[-1 if shape[-2] >= shape[-1] else -2] = 1
                    state['moment2_buffer'] = torch.zeros(shape, dtype=p.data.dtype, device=p.data.device)
                elif self.moment2_method == 'namo':
                    state['moment2_buffer'] = torch.zeros(1, dtype=p.data.dtype, device=p.data.device)
                else:
                    raise TypeError(f"Invalid second moment method: {self.moment2_method}")

    def _moment2(self, o, v, beta2, eps, raw_grad, u):
        m = self.moment2_method
        if m == 'adamuon':
            v.lerp_(o.square(), 1 - beta2)
            return o / (v.sqrt() + eps)
        if m == 'normuon':
            dim = -1 if o.shape[-2] >= o.shape[-1] else -2
            v.lerp_(o.square().mean(dim=dim, keepdim=True), 1 - beta2)
            n = o * v.clamp_min(eps).rsqrt_()
            return n * (torch.linalg.vector_norm(o) / torch.linalg.vector_norm(n).clamp_min(eps))
        if m == 'namo':
            v.lerp_(torch.linalg.vector_norm(raw_grad).square(), 1 - beta2)
            return o * (torch.linalg.vector_norm(u) / (v.sqrt() + eps))
        raise TypeError(f"Invalid second moment method: {m}")

    @torch.no_grad()
    def step(self, closure=None):
        if closure is not None:
            raise ValueError("closure is not supported")
        for group in self.param_groups:
            self._init_group(group)
            for p in group['params']:
                if p.dim() != 2:
                    raise ValueError(f"{type(self).__name__} only supports 2D parameters")
                grad = p.grad
                if grad is None:
                    continue
                state = self.state[p]
                buf = state['momentum_buffer']
                self._decay(p, grad, group['lr'], group['weight_decay'])
                raw_grad = grad if self.moment2_method == 'namo' else None
                buf.lerp_(grad, 1 - group['momentum'])
                u = grad.lerp(buf, group['momentum']) if self.nesterov else buf
                with _MatmulPrecision(self.fp32_matmul_prec):
                    o = newton_schulz(u, self._num_ns_steps, self._coefficient_type)
                n = self._moment2(o, state['moment2_buffer'], group['beta2'], group['eps'], raw_grad, u)
                n = n * scale_factor(n.size(-2), n.size(-1), self.scale_mode) * self.extra_scale_factor
                p.add_(n, alpha=-group['lr'])
        return None
