"""PyTorch port of profile `normuon` (spec/profiles/normuon.md), written from the spec page.

dion.NorMuon (microsoft/dion dion/normuon.py @0a059a4) with its defaults: dion's Muon
(tests/ports/torch_dion_port.py: manual routing by each group's `algorithm`, here "normuon" or
"adamw"; sum momentum, Nesterov G + mu M off by default; Polar Express in bf16 on 3-D+
parameters batched over their last two dimensions), then, on the Newton-Schulz output O
cast to float32 (the parameter's dtype), the NorMuon normalisation of section 4:
  v <- lerp(v, mean(O * O, dim=-1), 1 - muon_beta2)        (per row; state variance_neuron)
  N <- O / (sqrt(v) + 1e-8)
  N <- N * (||O||_F / max(||N||_F, 1e-8))                   (per matrix)
the decay of section 5 (1 - lr * weight_decay, or with cautious_wd only where the
parameter and N agree in sign, P N >= 0), and P <- P - N * lr * sqrt(rows / cols) in
float32.  AdamW groups as dion's, with the same cautious mask on m / denom.
"""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the dion port beside it
import torch_dion_port as dion  # noqa: E402
from torch_dion_port import polar_express  # the driver's Newton-Schulz cases (dion's, section 3)

NS_DTYPE = torch.bfloat16


def normuon_normalization(U, V, muon_beta2):
    """Section 4, for U (the float32 Newton-Schulz output, [..., rows, cols]) and V
    ([..., rows, 1]); returns (N, V')."""
    norm_U = U.norm(p=2, dim=(-2, -1), keepdim=True)
    neuron_norms = (U * U).mean(dim=-1, keepdim=True)
    V = torch.lerp(V, neuron_norms, 1 - muon_beta2)
    N = U / (V.sqrt() + 1e-8)
    norm_N = N.norm(p=2, dim=(-2, -1), keepdim=True).clamp(min=1e-8)  # dion PR #24: no 0/0
    return N * (norm_U / norm_N), V


def cautious_decay_(p, U, coeff):
    """Section 5: P <- P - coeff * P where P * U >= 0 (sign(P U) + 1, clipped at 1)."""
    mask = torch.minimum(torch.sign(p * U) + 1, torch.ones((), dtype=p.dtype))
    p.sub_(p * mask * coeff)


class NorMuon(torch.optim.Optimizer):
    """Section 1's constructor and its checks (section 2, in order); use_polar_express picks the
    Newton-Schulz function, as dion's (dion.md 4)."""

    def __init__(self, params, lr=0.01, mu=0.95, muon_beta2=0.95, betas=(0.9, 0.95), weight_decay=0.01,
                 cautious_wd=False, epsilon=1e-8, nesterov=False, adjust_lr="spectral_norm", flatten=False,
                 use_polar_express=True):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if mu < 0.0:
            raise ValueError(f"Invalid momentum factor (mu): {mu}")
        if muon_beta2 < 0.0:
            raise ValueError(f"Invalid muon_beta2: {muon_beta2}")
        if len(betas) != 2 or betas[0] < 0.0 or betas[1] < 0.0:
            raise ValueError(f"Invalid betas: {betas}")
        if adjust_lr not in ("spectral_norm", "rms_norm", None):
            raise ValueError(
                f"Invalid adjust_lr value: {adjust_lr}. Must be 'spectral_norm', 'rms_norm', or None.")
        defaults = dict(lr=lr, mu=mu, muon_beta2=muon_beta2, beta1=betas[0], beta2=betas[1],
                        weight_decay=weight_decay, cautious_wd=cautious_wd, algorithm="normuon", step=0,
                        epsilon=epsilon, nesterov=nesterov, flatten=flatten, adjust_lr=adjust_lr)
        super().__init__(params, defaults)
        self.use_polar_express = use_polar_express

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            group["step"] += 1
            algo = group["algorithm"]
            if algo == "normuon":
                self._normuon_group(group)
            elif algo == "adamw":
                self._adamw_group(group)
            else:
                raise ValueError(f"Unknown algorithm: {algo}")
        return loss

    def _normuon_group(self, group):
        """Sections 3 to 6."""
        assert all(p.ndim >= 2 for p in group["params"]), "NorMuon optimizer only supports matrix parameters."
        mu = torch.tensor(group["mu"])
        beta2 = torch.tensor(group["muon_beta2"])
        wd = torch.tensor(group["weight_decay"])
        num_heads = dion.resolve_num_heads(group)
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if "momentum" not in state:
                state["momentum"] = torch.zeros_like(p)
                state["variance_neuron"] = torch.zeros_like(p[..., 0:1])
            M = state["momentum"]
            G = p.grad.to(M.dtype)
            V = state["variance_neuron"]
            if num_heads is not None:  # per head: (H, d, n) views (dion's _prepare_head_split, V too)
                p, G, M, V = (dion.head_view(num_heads, t) for t in (p, G, M, V))
            M.mul_(mu)
            M.add_(G)
            U = M * mu + G if group["nesterov"] else M
            U = U.to(torch.bfloat16)
            shape = p.shape
            if U.ndim > 3:
                U = U.flatten(end_dim=-3)
            dion.NS_DTYPE = NS_DTYPE
            ns = dion.polar_express if self.use_polar_express else dion.zeropower_via_newtonschulz5
            O = ns(U, torch.tensor(group["epsilon"])).reshape(shape).to(p.dtype)
            N, V_new = normuon_normalization(O, V, beta2)
            V.copy_(V_new)
            if group["cautious_wd"]:
                cautious_decay_(p, N, group["lr"] * wd)
            else:
                p.mul_(1 - group["lr"] * wd)
            p.sub_(N * dion.adjusted_lr(group["lr"], shape, group["adjust_lr"], False))

    def _adamw_group(self, group):
        """dion's AdamW (section 7), the cautious mask on m / denom."""
        beta1, beta2 = group["beta1"], group["beta2"]
        lr, eps = group["lr"], group["epsilon"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if "momentum" not in state:
                state["momentum"] = torch.zeros_like(p)
                state["variance"] = torch.zeros_like(p)
                state["step_dev"] = torch.zeros((), dtype=torch.float32)
            M, V = state["momentum"], state["variance"]
            G = p.grad.to(M.dtype)
            state["step_dev"] += 1
            t = float(state["step_dev"])
            M.lerp_(G, 1 - beta1)
            V.mul_(beta2).addcmul_(G, G, value=1 - beta2)
            denom = V.sqrt().div_(math.sqrt(1 - beta2 ** t)).add_(eps)
            if group["cautious_wd"]:
                cautious_decay_(p, M / denom, lr * group["weight_decay"])
            else:
                p.mul_(1 - lr * group["weight_decay"])
            p.addcdiv_(M, denom, value=-(lr / (1 - beta1 ** t)))
