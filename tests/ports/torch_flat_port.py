"""A port of profile `keller` whose constructors no built-in adapter fits (the worked example of
vectors/drivers/README.md, "Your own adapter"; tests/scripts/driver-adapter.sh runs it).

Written as training scripts often split Keller Jordan's optimizer: `Muon(params, lr, momentum,
wd)` takes a flat list of the matrices only and calls the weight decay `wd`; the other
parameters go to `AdamW(params, lr, betas, eps, weight_decay)`; the loop steps both.  The
arithmetic is tests/ports/torch_keller_port.py's (spec/profiles/keller.md 4-6), so over keller's
vectors the pair computes exactly what SingleDeviceMuonWithAuxAdam computes.  `AdamW` keeps its
step count in the param group (group["step"]), as kozistr/pytorch_optimizer does, not in each
parameter's state: the driver reads it there.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the keller port beside it
from torch_keller_port import adam_update, muon_update, zeropower_via_newtonschulz5  # noqa: F401


class Muon(torch.optim.Optimizer):
    """Muon over a flat list of matrices (no groups, no AdamW); `wd` the decoupled weight decay."""

    def __init__(self, params, lr=0.02, momentum=0.95, wd=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum, wd=wd))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)  # keller.md 3: a missing gradient is zeros
                state = self.state[p]
                if len(state) == 0:
                    state["momentum_buffer"] = torch.zeros_like(p)
                update = muon_update(p.grad, state["momentum_buffer"], beta=group["momentum"])
                p.mul_(1 - group["lr"] * group["wd"])
                p.add_(update.reshape(p.shape), alpha=-group["lr"])
        return loss


class AdamW(torch.optim.Optimizer):
    """Keller's auxiliary Adam (keller.md 6) with the step count in the param group."""

    def __init__(self, params, lr=3e-4, betas=(0.9, 0.95), eps=1e-10, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            group["step"] = group.get("step", 0) + 1
            for p in group["params"]:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                update = adam_update(p.grad, state["exp_avg"], state["exp_avg_sq"], group["step"], group["betas"],
                                     group["eps"])
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(update, alpha=-group["lr"])
        return loss
