"""PyTorch 1.13 port of profile `pytorch_optimizer` (spec/profiles/pytorch_optimizer.md), written from the spec page.

kozistr/pytorch_optimizer's `Muon` (pytorch_optimizer/optimizer/muon.py,
optimizer/shampoo_utils.py and base/optimizer.py at 7a076d2f, 2026-02-12,
v3.9.0): `use_muon` required in every group; only the constructor's own
arguments checked; maximize (optimizer-wide) negates p.grad first; decay before
everything else, decoupled P(1 - lr wd) with the group's lr or, with
weight_decouple=False, coupled L2 G + wd P written into p.grad (both
branches); EMA momentum by lerp and the Nesterov input lerp(G, M, beta) written
into p.grad; N-D flattened to (d0, rest); Newton-Schulz in bf16 with the
Frobenius norm clamped at 1e-7 and the fused (addmm) order; the optional
cautious mask; the scale 0.2 sqrt(max(rows, cols)) (use_adjusted_lr False, the
default) or sqrt(max(1, rows/cols)) (True) in the lr; AdamW with eps on the
uncorrected sqrt(v) and t the group's step count (every step() call).

NS_DTYPE: the Newton-Schulz format (a neutral comparison may set torch.float32).
Unlike upstream, Newton-Schulz casts with a copy, so a bf16 parameter's
momentum buffer (nesterov=False) or p.grad (nesterov=True) is never
overwritten by the iteration (the aliasing bug of the page's section 10).
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


def _half_open_unit(x, name):
    if not 0.0 <= x < 1.0:
        raise ValueError(f'{name} must be in the range [0.0, 1.0)')


def _non_negative(x, name):
    if x is not None and x < 0.0:
        raise ValueError(f'{name} must be non-negative')


def zero_power_via_newton_schulz_5(g, num_steps=5, eps=1e-7, weights=NS_WEIGHTS):
    """Section 5: refuse < 2-D; cast to bf16 (a copy); transpose a tall matrix; divide by
    max(||X||_F, eps) with the norm taken on the bf16 tensor; num_steps fused steps
    B = b A + c A A, X = a X + B X (A = X X^T), each one addmm; return bf16."""
    if g.ndim < 2:
        raise ValueError(f'input must be over 2-dimensional. got {g.ndim}D.')
    wa, wb, wc = weights
    # copy=True: for a bf16 input, a plain cast returns the input itself and the in-place
    # division below would write the caller's tensor (the momentum buffer or p.grad);
    # upstream does that (section 10), this port deliberately does not.
    x = g.to(NS_DTYPE, copy=True)
    tall = x.size(-2) > x.size(-1)
    if tall:
        x = x.mT
    x.div_(x.norm(2, dim=(-2, -1), keepdim=True).clamp_min_(eps))
    x = x.contiguous()
    fused = torch.baddbmm if x.ndim > 2 else torch.addmm   # >2-D never comes from Muon (flattened first)
    for _ in range(num_steps):
        gram = x @ x.mT
        poly = fused(gram, gram, gram, beta=wb, alpha=wc)
        x = fused(x, poly, x, beta=wa)
    return x.mT if tall else x


def adjusted_lr(lr, shape, use_adjusted_lr=False):
    """Section 6: rows = shape[0], cols = the product of the rest (the flattened matrix)."""
    rows = shape[0]
    cols = math.prod(shape[1:])
    if use_adjusted_lr:
        ratio = max(1.0, rows / cols) ** 0.5          # Keller's fan-in rule (pow, as upstream)
    else:
        ratio = 0.2 * math.sqrt(max(rows, cols))     # Moonlight's RMS-matching rule (the default)
    return lr * ratio


class Muon(torch.optim.Optimizer):
    def __init__(self, params, lr=2e-2, momentum=0.95, weight_decay=0.0, weight_decouple=True,
                 nesterov=True, ns_steps=5, use_adjusted_lr=False, adamw_lr=3e-4,
                 adamw_betas=(0.9, 0.95), adamw_wd=0.0, adamw_eps=1e-10, maximize=False, **kwargs):
        # section 1.1, in order; only these arguments are checked, never a group's values
        for rate in (lr, adamw_lr):
            if rate is not None and rate < 0.0:
                raise NegativeLRError(rate)
        _non_negative(weight_decay, 'weight_decay')
        _half_open_unit(momentum, 'momentum')
        if ns_steps <= 0:
            raise ValueError('ns_steps must be positive')
        if adamw_betas[0] is not None:
            _half_open_unit(adamw_betas[0], 'beta1')
        _half_open_unit(adamw_betas[1], 'beta2')
        if len(adamw_betas) >= 3 and adamw_betas[2] is not None and not 0.0 <= adamw_betas[2] <= 1.0:
            raise ValueError('beta3 must be in the range [0.0, 1.0]')
        _non_negative(adamw_wd, 'adamw_wd')
        _non_negative(adamw_eps, 'adamw_eps')

        self.maximize = maximize  # optimizer-wide, not a group key

        # section 1.2: defaults written into the caller's dicts; extra keys kept
        for group in params or []:
            if 'use_muon' not in group:
                raise ValueError('`use_muon` must be set.')
            if group['use_muon']:
                own = dict(lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay,
                           ns_steps=ns_steps, use_adjusted_lr=use_adjusted_lr)
            else:
                own = dict(lr=adamw_lr, betas=adamw_betas, eps=adamw_eps, weight_decay=adamw_wd)
            own['weight_decouple'] = weight_decouple
            for key, value in own.items():
                group.setdefault(key, value)
        # unknown keywords (cautious=True) become defaults, so every group gets them
        super().__init__(params, kwargs)

    def __str__(self):
        return 'Muon'

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
                    state['momentum_buffer'] = torch.zeros_like(p)
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
            for p in group['params']:
                if p.grad is None:        # section 3: skipped entirely
                    continue
                grad = p.grad
                if self.maximize:         # section 9: p.grad negated in place
                    grad.neg_()
                wd = group['weight_decay']
                if group['weight_decouple']:
                    p.mul_(1.0 - wd * group['lr'])   # always, also for wd = 0
                elif wd > 0.0:
                    grad.add_(p, alpha=wd)           # coupled L2, in p.grad, both branches
                if group['use_muon']:
                    self._muon_update(p, grad, group)
                else:
                    self._adamw_update(p, grad, group)
        return loss

    def _muon_update(self, p, grad, group):
        """Section 4."""
        beta = group['momentum']
        buf = self.state[p]['momentum_buffer']
        buf.lerp_(grad, 1.0 - beta)                       # M <- beta M + (1 - beta) G
        direction = grad.lerp_(buf, beta) if group['nesterov'] else buf   # U written into p.grad
        if direction.ndim > 2:
            direction = direction.view(direction.size(0), -1)
        ortho = zero_power_via_newton_schulz_5(direction, num_steps=group['ns_steps'])
        if group.get('cautious'):
            # grad is p.grad now: U (nesterov) or G; p's shape, so a >2-D parameter fails to
            # broadcast against the flattened output, as upstream (section 4, step 7)
            agree = (ortho * grad > 0).to(grad.dtype)
            agree.mul_(agree.numel() / (agree.sum() + 1))
            ortho.mul_(agree)
        alpha = adjusted_lr(group['lr'], p.size(), group['use_adjusted_lr'])
        p.add_(ortho.reshape(p.shape), alpha=-alpha)

    def _adamw_update(self, p, grad, group):
        """Section 7."""
        state = self.state[p]
        exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
        beta1, beta2 = group['betas']
        t = group['step']
        bc1 = 1.0 - math.pow(beta1, t)
        sqrt_bc2 = math.sqrt(1.0 - math.pow(beta2, t))
        exp_avg.lerp_(grad, 1.0 - beta1)
        exp_avg_sq.lerp_(grad.square(), 1.0 - beta2)
        denom = exp_avg_sq.sqrt().add_(group['eps']).div_(sqrt_bc2)   # eps before the correction
        p.addcdiv_(exp_avg / bc1, denom, value=-group['lr'])
