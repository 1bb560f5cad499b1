"""PyTorch port of profile `dion` (spec/profiles/dion.md), written from the spec page.

dion.Muon (microsoft/dion dion/muon.py @0a059a4) with its defaults: manual routing by
each group's `algorithm` ("muon" or "adamw"), sum momentum in the parameter's dtype
(Nesterov G + mu M, off by default), Polar Express in bf16 (the norm times 1.02 plus
epsilon, five fixed triples, `B = b*A + c*(A@A)`, no transpose: X^T X on a tall
matrix), 3-D+ parameters a batch of their last two dimensions (flatten=False), the
decay 1 - lr * weight_decay (cautious_wd: only where P U >= 0), lr * sqrt(rows/cols) multiplied into the bf16
output, and AdamW groups with the group's lr, betas and the one epsilon.

NS_DTYPE is the Newton-Schulz format (torch.bfloat16, the profile's);
tests/scripts/upstream-diff.py may set torch.float32 for a neutral comparison.
"""

import math

import torch

NS_DTYPE = torch.bfloat16
# section 4: dion/polar_express.py's five triples, each once (no ns_steps option)
POLAR_EXPRESS_COEFFS = (
    (8.156554524902461, -22.48329292557795, 15.878769915207462),
    (4.042929935166739, -2.808917465908714, 0.5000178451051316),
    (3.8916678022926607, -2.772484153217685, 0.5060648178503393),
    (3.285753657755655, -2.3681294933425376, 0.46449024233003106),
    (2.3465413258596377, -1.7097828382687081, 0.42323551169305323),
)


def polar_express(G, epsilon=1e-6):
    """Section 4: bf16 cast, X / (||X||_F * 1.02 + epsilon) per matrix (keepdim, so the
    sum stays bf16), then the five steps; tall matrices iterate on X^T X from the right."""
    assert G.ndim >= 2
    X = G.to(NS_DTYPE)
    is_tall = G.size(-2) > G.size(-1)
    X = X / (X.norm(dim=(-2, -1), keepdim=True) * 1.02 + epsilon)
    for a, b, c in POLAR_EXPRESS_COEFFS:
        if is_tall:
            A = X.mT @ X
            B = b * A + c * (A @ A)
            X = a * X + X @ B
        else:
            A = X @ X.mT
            B = b * A + c * (A @ A)
            X = a * X + B @ X
    return X


# section 4: zeropower_via_newtonschulz5's five "quintic" triples, each once (use_polar_express=False)
QUINTIC_COEFFS = (
    (4.0848, -6.8946, 2.9270),
    (3.9505, -6.3029, 2.6377),
    (3.7418, -5.5913, 2.3037),
    (2.8769, -3.1427, 1.2046),
    (2.8366, -3.0525, 1.2012),
)


def zeropower_via_newtonschulz5(G, epsilon=1e-7):
    """Section 4 (use_polar_express=False): bf16 cast, transposed when tall, X / (||X||_F +
    epsilon) per matrix (keepdim: the sum stays bf16), the five quintic triples once each."""
    X = G.to(NS_DTYPE)
    is_tall = G.size(-2) > G.size(-1)
    if is_tall:
        X = X.mT
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + epsilon)
    for a, b, c in QUINTIC_COEFFS:
        A = X @ X.mT
        B = b * A + c * (A @ A)
        X = a * X + B @ X
    return X.mT if is_tall else X


def adjusted_lr(lr, shape, adjust_lr, flatten):
    """Section 5: (fan_out, fan_in) from the last two dims (flatten: d0 and the rest);
    spectral_norm lr * sqrt(fan_out / fan_in) without max, rms_norm lr * 0.2 *
    sqrt(max(fan_out, fan_in)), None lr; Python floats."""
    if flatten:
        fan_out, fan_in = shape[0], math.prod(shape[1:])
    else:
        fan_out, fan_in = shape[-2:]
    if adjust_lr is None:
        return lr
    if adjust_lr == "spectral_norm":
        return lr * math.sqrt(fan_out / fan_in)
    if adjust_lr == "rms_norm":
        return lr * 0.2 * math.sqrt(max(fan_out, fan_in))
    raise ValueError(f"Unknown adjust_lr value: {adjust_lr}")


def resolve_num_heads(group):
    """megabatch_base.py _resolve_num_heads: None and 1 are no-ops; flatten refuses heads."""
    num_heads = group.get("num_heads")
    if num_heads is None:
        return None
    if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads < 1:
        raise ValueError(f"num_heads must be a positive integer if set, got {num_heads!r}.")
    if num_heads == 1:
        return None
    if group.get("flatten"):
        raise ValueError(
            "num_heads > 1 is incompatible with flatten=True: flattening "
            "the per-head 3D view collapses heads back into a single 2D "
            "matrix, defeating per-head Newton-Schulz.")
    return num_heads


def resolve_split_sizes(group):
    """megabatch_base.py _resolve_split_sizes: None, or a tuple of at least two positive ints."""
    split_sizes = group.get("split_sizes")
    if split_sizes is None:
        return None
    if not isinstance(split_sizes, (tuple, list)) or len(split_sizes) < 2:
        raise ValueError(f"split_sizes must be a tuple or list of at least 2 block sizes, got {split_sizes!r}.")
    if any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in split_sizes):
        raise ValueError(f"split_sizes entries must be positive integers, got {split_sizes!r}.")
    if resolve_num_heads(group) is not None:
        raise ValueError(
            "split_sizes is incompatible with num_heads > 1: use num_heads "
            "for uniform per-head splits or split_sizes for uneven row "
            "blocks, not both.")
    if group.get("flatten"):
        raise ValueError(
            "split_sizes is incompatible with flatten=True: split_sizes "
            "applies to 2D parameters only.")
    return tuple(split_sizes)


def split_scales(split_sizes, shape, adjust_lr):
    """compute_split_lr_scales: adjust(block) / adjust(matrix) per block (None without adjust_lr)."""
    if adjust_lr is None:
        return None
    full = adjusted_lr(1.0, shape, adjust_lr, False)
    return tuple(adjusted_lr(1.0, (rows, shape[-1]), adjust_lr, False) / full for rows in split_sizes)


def row_blocks_ns(newton_schulz, U, split_sizes, scales, epsilon):
    """_newton_schulz_row_blocks: each row block orthogonalized on its own, times its scale (bf16)."""
    if len(U.shape) != 2:
        raise ValueError(f"split_sizes is only supported for 2D parameters, got shape {tuple(U.shape)}.")
    if sum(split_sizes) != U.shape[0]:
        raise ValueError(f"split_sizes {split_sizes} must sum to dim 0 of the parameter (got shape {tuple(U.shape)}).")
    out = []
    for i, block in enumerate(U.split(list(split_sizes), dim=-2)):
        o = newton_schulz(block, epsilon)
        out.append(o * scales[i] if scales is not None else o)
    return torch.cat(out, dim=-2)


def head_view(num_heads, t):
    """megabatch_base.py _prepare_head_split: a 2-D (H d, n) as (H, d, n), a view."""
    if t.ndim != 2:
        raise ValueError(f"num_heads is only supported for 2D parameters, got shape {tuple(t.shape)}.")
    if t.shape[0] % num_heads != 0:
        raise ValueError(
            f"num_heads ({num_heads}) must divide dim 0 of the parameter (got shape {tuple(t.shape)}).")
    return t.view(num_heads, t.shape[0] // num_heads, *t.shape[1:])


def cautious_decay_(p, U, coeff):
    """Section 6, cautious_wd: P <- P - coeff * P where P * U >= 0 (sign(P U) + 1, clipped at 1)."""
    mask = torch.minimum(torch.sign(p * U) + 1, torch.ones((), dtype=p.dtype))
    p.sub_(p * mask * coeff)


class Muon(torch.optim.Optimizer):
    """Section 1's constructor and checks (section 2, in order); group keys are the
    defaults dict's: lr, mu, beta1, beta2, weight_decay, cautious_wd, algorithm, step,
    epsilon, nesterov, flatten, adjust_lr.  use_polar_express is the optimizer's (its
    Newton-Schulz function, as megabatch_base.py picks it), not a group key."""

    def __init__(self, params, lr=0.01, mu=0.95, betas=(0.9, 0.95), weight_decay=0.01, cautious_wd=False,
                 epsilon=1e-8, nesterov=False, adjust_lr="spectral_norm", flatten=False, use_polar_express=True):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if mu < 0.0:
            raise ValueError(f"Invalid momentum factor (mu): {mu}")
        if len(betas) != 2 or betas[0] < 0.0 or betas[1] < 0.0:
            raise ValueError(f"Invalid betas: {betas}")
        if adjust_lr not in ("spectral_norm", "rms_norm", None):
            raise ValueError(
                f"Invalid adjust_lr value: {adjust_lr}. Must be 'spectral_norm', 'rms_norm', or None.")
        defaults = dict(lr=lr, mu=mu, beta1=betas[0], beta2=betas[1], weight_decay=weight_decay,
                        cautious_wd=cautious_wd, algorithm="muon", step=0, epsilon=epsilon,
                        nesterov=nesterov, flatten=flatten, adjust_lr=adjust_lr)
        super().__init__(params, defaults)
        self.newton_schulz = polar_express if use_polar_express else zeropower_via_newtonschulz5

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            group["step"] += 1
            algo = group["algorithm"]
            if algo == "muon":
                self._muon_group(group)
            elif algo == "adamw":
                self._adamw_group(group)
            else:
                raise ValueError(f"Unknown algorithm: {algo}")
        return loss

    def _muon_group(self, group):
        """Sections 3, 4, 6, 7."""
        assert all(p.ndim >= 2 for p in group["params"]), "Muon optimizer only supports matrix parameters."
        mu = torch.tensor(group["mu"])
        wd = torch.tensor(group["weight_decay"])
        num_heads = resolve_num_heads(group)
        split_sizes = resolve_split_sizes(group)
        for p in group["params"]:
            if p.grad is None:
                continue  # section 7: skipped
            state = self.state[p]
            if "momentum" not in state:
                state["momentum"] = torch.zeros_like(p)
            M = state["momentum"]
            G = p.grad.to(M.dtype)
            if num_heads is not None:  # per head: (H, d, n) views of p, G and M (spec/muon.md 7.5)
                p, G, M = (head_view(num_heads, t) for t in (p, G, M))
            M.mul_(mu)
            M.add_(G)
            U = M * mu + G if group["nesterov"] else M
            U = U.to(torch.bfloat16)
            shape = p.shape
            if group["flatten"] and U.ndim >= 3:
                U = U.flatten(start_dim=1)
            elif U.ndim > 3:
                U = U.flatten(end_dim=-3)
            if split_sizes is not None:  # row blocks (spec/muon.md 7.6)
                O = row_blocks_ns(self.newton_schulz, U, split_sizes,
                                  split_scales(split_sizes, shape, group["adjust_lr"]), torch.tensor(group["epsilon"]))
            else:
                O = self.newton_schulz(U, torch.tensor(group["epsilon"])).reshape(shape)
            upd = O * adjusted_lr(group["lr"], shape, group["adjust_lr"], group["flatten"])  # bf16
            if group["cautious_wd"]:
                cautious_decay_(p, upd, group["lr"] * wd)
            else:
                p.mul_(1 - group["lr"] * wd)
            p.sub_(upd)

    def _adamw_group(self, group):
        """Section 8: eps after the bias correction, float32 device counter step_dev."""
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
            if group["cautious_wd"]:  # scalar_opts.adamw_update: the mask on m / denom
                cautious_decay_(p, M / denom, lr * group["weight_decay"])
            else:
                p.mul_(1 - lr * group["weight_decay"])
            p.addcdiv_(M, denom, value=-(lr / (1 - beta1 ** t)))
