"""PyTorch 1.13 port of profile `pytorch_optimizer_adamuon` (spec/profiles/pytorch_optimizer_adamuon.md), written from the spec page.

kozistr/pytorch_optimizer's `AdaMuon` (pytorch_optimizer/optimizer/muon.py,
optimizer/shampoo_utils.py and base/optimizer.py at 7a076d2f, 2026-02-12,
v3.9.0): `use_muon` required in every group; only the constructor's own
arguments checked; per-group defaults (Muon groups lr 0.02, betas (0.9, 0.95),
AdamW groups lr 3e-4, betas (0.9, 0.999); one eps 1e-10 for both kinds);
maximize (optimizer-wide) negates p.grad first; decay before everything else,
decoupled P(1 - lr wd) with the group's lr or, with weight_decouple=False,
coupled L2 G + wd P written into p.grad (both branches); the group's step
counted on every call and both bias corrections taken from it.

Muon branch (page sections 4-6): m <- lerp(m, G, 1 - beta1) (no Nesterov); a
copy of m, N-D flattened to (d0, rest), through Newton-Schulz in bf16 (Frobenius
norm clamped at 1e-7, the fused addmm order; the bf16 result is kept); the
element-wise second moment v (stored flattened) of that bf16 output; the output
divided by sqrt(v / bc2) + eps (rounded to bf16), multiplied by 0.2 sqrt(numel),
divided by its own bf16 norm + eps (so the factor cancels: unit Frobenius
norm); then P <- P - lr s U with s = 0.2 sqrt(max(rows, cols))
(use_adjusted_lr False, the default) or sqrt(max(1, rows/cols)) (True).
AdamW branch (section 7): lerp moments, eps on the uncorrected sqrt(v).

NS_DTYPE: the Newton-Schulz format (a neutral comparison may set torch.float32;
then every post-Newton-Schulz operation of the Muon branch runs in float32,
because the update keeps the Newton-Schulz output's dtype).
Newton-Schulz casts with a copy, so even a bf16 input is never written; upstream
hands it a clone of m (page section 10), so nothing is aliased there either.
"""

import math

import torch

NS_DTYPE = torch.bfloat16
NS_WEIGHTS = (3.4445, -4.7750, 2.0315)


class NegativeLRError(Exception):
    """Section 1.1, checks 1 and 2 (the same message for lr and adamw_lr)."""

    def __init__(self, lr):
        super().__init__(f'learning rate must be positive. ({lr} > 0)')


class NoSparseGradientError(Exception):
    def __init__(self, name):
        super().__init__(f'{name} does not support sparse gradient.')


class NoComplexParameterError(Exception):
    def __init__(self, name):
        super().__init__(f'{name} does not support complex parameter.')


def _in_unit(x, name, closed=False):
    ok = (0.0 <= x <= 1.0) if closed else (0.0 <= x < 1.0)
    if not ok:
        raise ValueError(f'{name} must be in the range [0.0, 1.0{"]" if closed else ")"}')


def _check_betas(betas):
    """Section 1.1, checks 5 and 6: beta1 (skipped when None), beta2 in [0, 1); a third in [0, 1]."""
    if betas[0] is not None:
        _in_unit(betas[0], 'beta1')
    _in_unit(betas[1], 'beta2')
    if len(betas) >= 3 and betas[2] is not None:
        _in_unit(betas[2], 'beta3', closed=True)


def _non_negative(x, name):
    if x is not None and x < 0.0:
        raise ValueError(f'{name} must be non-negative')


def zero_power_via_newton_schulz_5(g, num_steps=5, eps=1e-7, weights=NS_WEIGHTS):
    """Section 5 (= spec/profiles/pytorch_optimizer.md section 5): refuse < 2-D; cast to
    NS_DTYPE with a copy; transpose a tall matrix; divide by max(||X||_F, eps), the norm
    taken on the cast tensor; make contiguous; num_steps fused steps A = X X^T,
    B = b A + c A A, X = a X + B X, each one (b)addmm; return in NS_DTYPE (not cast back).

    The iterates are written into two buffers laid out like the contiguous X (empty_like),
    as upstream's out= ping-pong does: for a column (n, 1) the transposed X is (1, n) with
    strides (1, 1), and PyTorch 1.13 CPU's bf16 addmm rounds differently into a (1, n)
    output of strides (1, 1) than into a fresh (n, 1)-strided one (section 5, measured)."""
    if g.ndim < 2:
        raise ValueError(f'input must be over 2-dimensional. got {g.ndim}D.')
    wa, wb, wc = weights
    x = g.to(NS_DTYPE, copy=True)
    tall = x.size(-2) > x.size(-1)
    if tall:
        x = x.mT
    x.div_(x.norm(2, dim=(-2, -1), keepdim=True).clamp_min_(eps))
    x = x.contiguous()
    fused = torch.baddbmm if x.ndim > 2 else torch.addmm   # >2-D never comes here (flattened first)
    gram = torch.empty((*x.shape[:-1], x.size(-2)), dtype=x.dtype, device=x.device)
    poly = torch.empty_like(gram)
    spare = torch.empty_like(x)
    for _ in range(num_steps):
        fused(gram, x, x.mT, beta=0.0, alpha=1.0, out=gram)        # A = X X^T
        fused(gram, gram, gram, beta=wb, alpha=wc, out=poly)       # B = b A + c A A
        fused(x, poly, x, beta=wa, alpha=1.0, out=spare)           # X' = a X + B X
        x, spare = spare, x
    return x.mT if tall else x


def muon_lr(lr, shape, use_adjusted_lr=False):
    """Section 6: rows = shape[0], cols = the product of the rest (the flattened matrix);
    the factor in binary64, multiplied into the group's lr."""
    rows = shape[0]
    cols = math.prod(shape[1:])
    if use_adjusted_lr:
        factor = math.pow(max(1.0, rows / cols), 0.5)     # fan-in (Keller), pow as upstream
    else:
        factor = 0.2 * math.sqrt(max(rows, cols))         # RMS matching (Moonlight), the default
    return lr * factor


def _correction(beta, t):
    """1 - beta^t in binary64 (math.pow), t the group's step count."""
    return 1.0 - math.pow(beta, t)


class AdaMuon(torch.optim.Optimizer):
    def __init__(self, params, lr=2e-2, betas=(0.9, 0.95), weight_decay=0.0, weight_decouple=True,
                 ns_steps=5, use_adjusted_lr=False, adamw_lr=3e-4, adamw_betas=(0.9, 0.999),
                 adamw_wd=0.0, eps=1e-10, maximize=False, **kwargs):
        # section 1.1, in order; only these arguments are checked, never a group's values
        for rate in (lr, adamw_lr):
            if rate is not None and rate < 0.0:
                raise NegativeLRError(rate)
        _non_negative(weight_decay, 'weight_decay')
        if ns_steps <= 0:
            raise ValueError('ns_steps must be positive')
        _check_betas(betas)
        _check_betas(adamw_betas)
        _non_negative(adamw_wd, 'adamw_wd')
        _non_negative(eps, 'eps')

        self.maximize = maximize  # optimizer-wide, not a group key

        # section 1.2: defaults written into the caller's dicts; extra keys kept
        for group in params or []:
            if 'use_muon' not in group:
                raise ValueError('`use_muon` must be set.')
            if group['use_muon']:
                own = dict(lr=lr, betas=betas, weight_decay=weight_decay, ns_steps=ns_steps,
                           use_adjusted_lr=use_adjusted_lr)
            else:
                own = dict(lr=adamw_lr, betas=adamw_betas, weight_decay=adamw_wd)
            own['weight_decouple'] = weight_decouple
            own['eps'] = eps                      # one eps for both kinds of group
            for key, value in own.items():
                group.setdefault(key, value)
        # unknown keywords (momentum=..., nesterov=...) become torch defaults, without effect
        super().__init__(params, kwargs)

    def __str__(self):
        return 'AdaMuon'

    def _prepare(self, group):
        """Section 8: the group's step, the per-parameter checks and state (params with a gradient)."""
        group.setdefault('step', 0)
        for p in group['params']:
            if p.grad is None:
                continue
            if p.grad.is_sparse:
                raise NoSparseGradientError(str(self))
            if torch.is_complex(p):
                raise NoComplexParameterError(str(self))
            state = self.state[p]
            if not state:
                if group['use_muon']:
                    state['m'] = torch.zeros_like(p)
                    state['v'] = torch.zeros(p.numel(), dtype=p.dtype, device=p.device)  # flattened
                else:
                    state['exp_avg'] = torch.zeros_like(p)
                    state['exp_avg_sq'] = torch.zeros_like(p)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            self._prepare(group)
            group['step'] += 1            # every group, every call, gradients or not
            beta1, beta2 = group['betas']
            t = group['step']
            bc1, bc2 = _correction(beta1, t), _correction(beta2, t)
            for p in group['params']:
                if p.grad is None:        # section 3: skipped entirely
                    continue
                grad = p.grad
                if self.maximize:         # section 9: p.grad negated in place
                    grad.neg_()
                wd = group['weight_decay']
                if group['weight_decouple']:
                    p.mul_(1.0 - wd * group['lr'])   # always, also for wd = 0; the unadjusted lr
                elif wd > 0.0:
                    grad.add_(p, alpha=wd)           # coupled L2, in p.grad, both branches
                if group['use_muon']:
                    self._muon_update(p, grad, group, beta1, beta2, bc2)
                else:
                    self._adamw_update(p, grad, group, beta1, beta2, bc1, bc2)
        return loss

    def _muon_update(self, p, grad, group, beta1, beta2, bc2):
        """Sections 4 and 6."""
        state = self.state[p]
        m, v = state['m'], state['v']
        eps = group['eps']
        m.lerp_(grad, 1.0 - beta1)                        # m <- beta1 m + (1 - beta1) G; no Nesterov
        mat = m.view(m.size(0), -1) if m.ndim > 2 else m  # N-D: (d0, rest); NS copies, m is not written
        o = zero_power_via_newton_schulz_5(mat, num_steps=group['ns_steps']).reshape(-1)  # NS_DTYPE, p's order
        v.mul_(beta2).addcmul_(o, o, value=1.0 - beta2)   # v's dtype (p's); o promoted exactly
        denom = (v / bc2).sqrt_().add_(eps)               # v's dtype; v itself unchanged
        o = o.div_(denom).reshape(p.shape)                # quotient rounded to NS_DTYPE
        gain = 0.2 * math.sqrt(p.numel())                 # cancels: the norm is taken after it
        o.mul_(gain)
        o.div_(o.norm().add_(eps))                        # NS_DTYPE norm, + eps in NS_DTYPE
        p.add_(o, alpha=-muon_lr(group['lr'], p.size(), group['use_adjusted_lr']))

    def _adamw_update(self, p, grad, group, beta1, beta2, bc1, bc2):
        """Section 7."""
        state = self.state[p]
        exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
        exp_avg.lerp_(grad, 1.0 - beta1)
        exp_avg_sq.lerp_(grad.square(), 1.0 - beta2)
        denom = exp_avg_sq.sqrt().add_(group['eps']).div_(math.sqrt(bc2))   # eps before the correction
        p.addcdiv_(exp_avg / bc1, denom, value=-group['lr'])
