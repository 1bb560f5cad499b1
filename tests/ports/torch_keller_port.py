"""PyTorch port of profile `keller` (spec/profiles/keller.md), written from the spec page.

Keller Jordan's `SingleDeviceMuonWithAuxAdam` semantics: manual routing by
each group's `use_muon`, exact group key sets (bare asserts), EMA momentum by
lerp, Nesterov written into p.grad, Newton-Schulz in bf16 with the `keller`
evaluation order, the scale sqrt(max(1, G.size(-2)/G.size(-1))) applied to the
bf16 update in place (4-D conv: kh/kw), missing gradients as zeros, and an
auxiliary Adam with eps after bias correction.

NS_DTYPE is the Newton-Schulz format (torch.bfloat16, the profile's);
tests/scripts/upstream-diff.py sets torch.float32 for its neutral comparison.
"""

import torch

NS_DTYPE = torch.bfloat16
NS_COEFFS = (3.4445, -4.7750, 2.0315)
NS_EPS = 1e-7
MUON_KEYS = {"params", "lr", "momentum", "weight_decay", "use_muon"}
ADAM_KEYS = {"params", "lr", "betas", "eps", "weight_decay", "use_muon"}


def zeropower_via_newtonschulz5(G, steps=5):
    """Section 5: cast first, tall matrices transposed (last two dims), Frobenius norm per
    matrix plus 1e-7, steps of B = b*A + (c*A)@A, X = a*X + B@X; result in NS_DTYPE."""
    assert G.ndim >= 2
    a, b, c = NS_COEFFS
    X = G.to(NS_DTYPE)
    if G.size(-2) > G.size(-1):
        X = X.mT
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + NS_EPS)
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + (c * A) @ A
        X = a * X + B @ X
    if G.size(-2) > G.size(-1):
        X = X.mT
    return X


def muon_update(grad, momentum, beta=0.95, ns_steps=5, nesterov=True):
    """Section 4 steps 1-5; returns the scaled update in NS_DTYPE (grad is written in place)."""
    momentum.lerp_(grad, 1 - beta)
    update = grad.lerp_(momentum, beta) if nesterov else momentum
    if update.ndim == 4:
        update = update.view(update.size(0), -1)
    update = zeropower_via_newtonschulz5(update, steps=ns_steps)
    update *= max(1, grad.size(-2) / grad.size(-1)) ** 0.5
    return update


def adam_update(grad, exp_avg, exp_avg_sq, step, betas, eps):
    """Section 6: moments by lerp, m_hat / (sqrt(v_hat) + eps)."""
    exp_avg.lerp_(grad, 1 - betas[0])
    exp_avg_sq.lerp_(grad.square(), 1 - betas[1])
    m_hat = exp_avg / (1 - betas[0] ** step)
    v_hat = exp_avg_sq / (1 - betas[1] ** step)
    return m_hat / (v_hat.sqrt() + eps)


class SingleDeviceMuonWithAuxAdam(torch.optim.Optimizer):
    """Constructor of section 1: a list of group dicts; defaults written into each dict."""

    def __init__(self, param_groups):
        for group in param_groups:
            assert "use_muon" in group
            if group["use_muon"]:
                group.setdefault("lr", 0.02)
                group.setdefault("momentum", 0.95)
                group.setdefault("weight_decay", 0)
                assert set(group.keys()) == MUON_KEYS
            else:
                group.setdefault("lr", 3e-4)
                group.setdefault("betas", (0.9, 0.95))
                group.setdefault("eps", 1e-10)
                group.setdefault("weight_decay", 0)
                assert set(group.keys()) == ADAM_KEYS
        super().__init__(param_groups, dict())

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)  # section 3: missing gradient = zeros
                state = self.state[p]
                if group["use_muon"]:
                    if len(state) == 0:
                        state["momentum_buffer"] = torch.zeros_like(p)
                    update = muon_update(p.grad, state["momentum_buffer"], beta=group["momentum"])
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                    p.add_(update.reshape(p.shape), alpha=-group["lr"])
                else:
                    if len(state) == 0:
                        state["exp_avg"] = torch.zeros_like(p)
                        state["exp_avg_sq"] = torch.zeros_like(p)
                        state["step"] = 0
                    state["step"] += 1
                    update = adam_update(p.grad, state["exp_avg"], state["exp_avg_sq"],
                                         state["step"], group["betas"], group["eps"])
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                    p.add_(update, alpha=-group["lr"])
        return loss
