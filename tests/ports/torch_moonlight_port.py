"""PyTorch 1.13 port of profile `moonlight` (spec/profiles/moonlight.md), written from the spec page.

Moonlight's `Muon` (examples/toy_train.py at c2ad5b2), eager semantics: two
parameter lists instead of `params`, one group, routing written into the state
at construction, sum momentum with Nesterov G + beta M, Newton-Schulz in bf16
(eps added, `keller` order), lr adjusted by 0.2*sqrt(max(A, B)), the same lr and
wd for the AdamW branch, AdamW eps on the uncorrected sqrt(v), state keys
use_muon / momentum_buffer / step / moment1 / moment2.

NS_DTYPE: the Newton-Schulz format (tests/scripts/upstream-diff.py sets torch.float32).
"""

import math

import torch

NS_DTYPE = torch.bfloat16


def zeropower_via_newtonschulz5(G, steps):
    """Section 5: 2-D only; cast, transpose if tall, X / (||X||_F + 1e-7), keller-order steps."""
    assert len(G.shape) == 2
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G.to(NS_DTYPE)
    tall = G.size(0) > G.size(1)
    if tall:
        X = X.T
    X = X / (X.norm() + 1e-7)
    for _ in range(steps):
        A = X @ X.T
        B = b * A + (c * A) @ A
        X = a * X + B @ X
    if tall:
        X = X.T
    return X


class Muon(torch.optim.Optimizer):
    def __init__(self, lr=1e-3, wd=0.1, muon_params=None, momentum=0.95, nesterov=True,
                 ns_steps=5, adamw_params=None, adamw_betas=(0.9, 0.95), adamw_eps=1e-8):
        defaults = dict(lr=lr, wd=wd, momentum=momentum, nesterov=nesterov, ns_steps=ns_steps,
                        adamw_betas=adamw_betas, adamw_eps=adamw_eps)
        muon_params = list(muon_params)        # None: TypeError, as upstream
        adamw_params = list(adamw_params) if adamw_params is not None else []
        super().__init__(muon_params + adamw_params, defaults)
        for p in muon_params:
            assert p.ndim == 2, p.ndim
            self.state[p]["use_muon"] = True
        for p in adamw_params:
            self.state[p]["use_muon"] = False

    @staticmethod
    def adjust_lr_for_muon(lr, param_shape):
        A, B = param_shape[:2]
        return lr * (0.2 * math.sqrt(max(A, B)))

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, wd, beta = group["lr"], group["wd"], group["momentum"]
            for p in group["params"]:            # section 4
                if not self.state[p]["use_muon"] or p.grad is None:
                    continue
                g = p.grad
                if g.ndim > 2:
                    g = g.view(g.size(0), -1)
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(g)
                buf = state["momentum_buffer"]
                buf.mul_(beta).add_(g)
                u_in = g.add(buf, alpha=beta) if group["nesterov"] else buf
                u = zeropower_via_newtonschulz5(u_in, steps=group["ns_steps"])
                p.data.mul_(1 - lr * wd)
                p.data.add_(u, alpha=-self.adjust_lr_for_muon(lr, p.shape))
            beta1, beta2 = group["adamw_betas"]
            eps = group["adamw_eps"]
            for p in group["params"]:            # section 6
                if self.state[p]["use_muon"] or p.grad is None:
                    continue
                g = p.grad
                state = self.state[p]
                if "step" not in state:
                    state["step"] = 0
                    state["moment1"] = torch.zeros_like(g)
                    state["moment2"] = torch.zeros_like(g)
                state["step"] += 1
                t = state["step"]
                state["moment1"].lerp_(g, 1 - beta1)
                state["moment2"].lerp_(g.square(), 1 - beta2)
                direction = state["moment1"] / (eps + state["moment2"].sqrt())
                scale = (1 - beta1 ** t) / (1 - beta2 ** t) ** 0.5
                p.data.mul_(1 - lr * wd)
                p.data.add_(direction, alpha=-lr / scale)
        return loss
