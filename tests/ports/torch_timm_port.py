"""PyTorch 1.13 port of profile `timm` (spec/profiles/timm.md), written from the spec page.

timm's `Muon` (timm/optim/muon.py at aa4b585), algo "muon" and "adamuon": validation of
lr / weight_decay / momentum / eps / conv_mode / algo with timm's messages,
routing by use_fallback / use_muon / the shape heuristic (min dim 4, aspect
ratio 128) cached in state["use_muon"], decay first, EMA momentum by lerp,
Nesterov written into p.grad, Newton-Schulz in bf16 with coefficient presets
(repeat_last), safety factor and clamped eps, `fused` (addmm) order, scale
functions of the flattened update, conv_mode flatten|batched, and an AdamW
(NAdamW when nesterov) fallback with lr * fallback_lr_scale and the shared eps.
AdaMuon (section 11): the element-wise second moment exp_avg_sq of the
Newton-Schulz output in the parameter's shape, the bias correction or the
RMS alignment as adjust_lr_fn says, the scale of the parameter's last two
dimensions.

NS_DTYPE: the Newton-Schulz format (tests/scripts/upstream-diff.py sets torch.float32).
"""

import numbers
import warnings

import torch

NS_DTYPE = torch.bfloat16

PRESETS = {
    "original": [(3.4445, -4.7750, 2.0315)],
    "quintic": [(4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377), (3.7418, -5.5913, 2.3037),
                (2.8769, -3.1427, 1.2046), (2.8366, -3.0525, 1.2012)],
    "polar_express": [
        (8.237312490495555, -23.157747414558198, 16.680568411445915),
        (4.082441999064835, -2.893047735332586, 0.5252849256975648),
        (3.9263479922546582, -2.8547468034765298, 0.5318022422894988),
        (3.2982187133085143, -2.424541981026706, 0.48632008358844075),
        (2.2970369434552573, -1.63662558125903, 0.4002628455953627),
        (1.8763805351440397, -1.2347896577722228, 0.35891887501668385),
        (1.8564423485617974, -1.2132449880935525, 0.3568003487825883),
        (1.8749994008682747, -1.2499988017229169, 0.3749994008546422)],
    "polar_express_safer": [
        (8.156554524902461, -22.48329292557795, 15.878769915207462),
        (4.0429299351667245, -2.808917465908704, 0.5000178451051299),
        (3.8916678022926563, -2.7724841532176825, 0.5060648178503389),
        (3.285753657755658, -2.3681294933425394, 0.46449024233003117),
        (2.3005307116270983, -1.6111665557258408, 0.3833374427545273),
        (1.8631210546382593, -1.2042160621002727, 0.3421879560523383),
        (1.8382572152247512, -1.1779263289537742, 0.3396513038637379),
        (1.8749999923301852, -1.2499999836060613, 0.374999991275876)],
}


def _is_real(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _is_seq(x):
    return isinstance(x, (list, tuple))


def resolve_coefficients(value):
    """Section 1.2 rule 2: a preset name, one triple, or a list of triples."""
    def triple(x):
        if not _is_seq(x) or len(x) != 3 or not all(_is_real(v) for v in x):
            raise ValueError(f"Coefficient must be length-3 of real numbers, got: {x!r}")
        return tuple(float(v) for v in x)
    if isinstance(value, str):
        if value not in PRESETS:
            raise ValueError(f"Unknown coefficients preset '{value}'. Valid options: "
                             + ", ".join(sorted(PRESETS)))
        return [triple(t) for t in PRESETS[value]]
    if not _is_seq(value):
        raise TypeError("Coefficients must be a preset name (str), a 3-sequence (a,b,c), "
                        "or a sequence of 3-sequences.")
    if len(value) == 3 and all(_is_real(v) for v in value):
        return [triple(value)]
    out = []
    for i, item in enumerate(value):
        if not _is_seq(item):
            raise TypeError(f"Item {i} is not a sequence: {item!r}")
        out.append(triple(item))
    if not out:
        raise ValueError("Coefficient list cannot be empty")
    return out


def zeropower_via_newtonschulz(G, steps, coefficients, eps=1e-7, safety_factor=1.0, scale_eps=False):
    """Section 5: repeat_last sequence, copy-cast, transpose if tall, clamp (or add) eps, fused steps."""
    assert G.ndim in (2, 3), f"Input must be 2D or 3D, got {G.ndim}D. Flatten batch dims first."
    n = len(coefficients)
    seq = coefficients[:steps] if steps <= n else coefficients + [coefficients[-1]] * (steps - n)
    if scale_eps:
        eps = eps * (G.shape[-1] / G.shape[-2]) ** 0.5
    X = G.to(dtype=NS_DTYPE, copy=True)
    tall = X.size(-2) > X.size(-1)
    if tall:
        X = X.mT
    norm = X.norm(2, dim=(-2, -1), keepdim=True).mul(safety_factor)
    X.div_(norm.add_(eps) if scale_eps else norm.clamp_(min=eps))
    X = X.contiguous()
    mm = torch.baddbmm if X.ndim > 2 else torch.addmm
    for a, b, c in seq:
        # A = X X^T by a plain (batched) matmul: upstream's baddbmm(empty, X, X^T, beta=0, out=)
        # returns non-finite values on PyTorch 1.13 CPU in bf16 (spec/profiles/timm.md 9a)
        A = X @ X.mT
        B = mm(A, A, A, beta=b, alpha=c)
        X = mm(X, B, X, beta=a, alpha=1.0)
    if tall:
        X = X.mT
    return X


def lr_scale(shape, fn):
    out_ch, in_ch = (shape[-2], shape[-1]) if len(shape) > 1 else (1.0, 1.0)
    if fn == "original":
        return max(1, out_ch / in_ch) ** 0.5
    if fn == "match_rms_adamw":
        return 0.2 * max(out_ch, in_ch) ** 0.5
    if fn == "rms_to_rms":
        return (out_ch / in_ch) ** 0.5
    assert False, f'Invalid scaling function "{fn}" for Muon'


def adamuon_lr_scale(shape, fn):
    """Section 11: (scale, whether the update is normalised to unit norm)."""
    out_ch, in_ch = (shape[-2], shape[-1]) if len(shape) > 1 else (1.0, 1.0)
    if fn == "match_rms_adamw":
        return 0.2 * (out_ch * in_ch) ** 0.5, True
    if fn == "rms_to_rms":
        return (out_ch / in_ch) ** 0.5, False
    if fn == "rsqrt_in":
        return in_ch ** -0.5, False
    assert False, f'Invalid scaling function "{fn}" for AdaMuon'


def suitable_for_muon(p, min_dim=4, max_aspect=128.0):
    """Section 2 rule 3."""
    s = p.shape
    if p.ndim < 2 or sum(1 for d in s if d > 1) < 2:
        return False
    if s[0] == 1 or s[1] == 1:
        return False
    if p.ndim >= 3:
        rest = 1
        for d in s[1:]:
            rest *= d
        dims = (s[0], rest)
    else:
        dims = tuple(s)
    lo, hi = min(dims), max(dims)
    return lo >= min_dim and hi / lo <= max_aspect


def _validate(name, value, max_value=None):
    if torch.is_tensor(value):
        if value.numel() != 1:
            raise ValueError(f"{name} must be a scalar or scalar tensor.")
        v = float(value.detach().cpu())
    else:
        v = float(value)
    if v < 0.0 or (max_value is not None and v >= max_value):
        raise ValueError(f"Invalid {name}: {value}")


class Muon(torch.optim.Optimizer):
    def __init__(self, params, lr=0.02, weight_decay=0, momentum=0.95, nesterov=False, ns_steps=5,
                 ns_coefficients="quintic", eps=1e-7, safety_factor=1.0, adjust_lr_fn="match_rms_adamw",
                 conv_mode="flatten", normalize_spatial=True, adamw_lr=None, fallback_lr_scale=1.0,
                 betas=(0.9, 0.95), algo="muon", scale_eps=False, capturable=False, verbose=False):
        _validate("learning rate", lr)
        _validate("weight_decay", weight_decay)
        _validate("momentum", momentum, max_value=1.0)
        _validate("epsilon", eps)
        if conv_mode not in ("flatten", "batched"):
            raise ValueError(f"Invalid conv_mode: {conv_mode}")
        if algo not in ("muon", "adamuon"):
            raise ValueError(f"Invalid algo: {algo}. Must be 'muon' or 'adamuon'")
        if adamw_lr is not None:
            warnings.warn("adamw_lr is deprecated, use fallback_lr_scale=adamw_lr/lr instead. "
                          "adamw_lr will be removed in a future release.", FutureWarning, stacklevel=2)
            if torch.is_tensor(lr):
                raise ValueError("adamw_lr is not supported with tensor lr; use fallback_lr_scale instead.")
            if lr == 0:
                raise ValueError("Cannot compute fallback_lr_scale from adamw_lr when lr=0")
            fallback_lr_scale = adamw_lr / lr
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_steps=ns_steps, ns_coefficients=ns_coefficients, eps=eps,
                        safety_factor=safety_factor, adjust_lr_fn=adjust_lr_fn, conv_mode=conv_mode,
                        normalize_spatial=normalize_spatial, fallback_lr_scale=fallback_lr_scale,
                        betas=betas, algo=algo, scale_eps=scale_eps, capturable=capturable,
                        verbose=verbose)
        super().__init__(params, defaults)

    def _muon(self, group, p):
        lr, wd, beta = group["lr"], group["weight_decay"], group["momentum"]
        grad = p.grad
        buf = self.state[p]["momentum_buffer"]
        p.mul_(1 - lr * wd)
        buf.lerp_(grad, 1.0 - beta)
        update = grad.lerp_(buf, beta) if group["nesterov"] else buf.clone()
        shape = update.shape
        batched = False
        if update.ndim >= 3:
            if group["conv_mode"] == "flatten":
                update = update.reshape(shape[0], -1)
            else:
                update = update.reshape(shape[0], shape[1], -1).permute(2, 0, 1)
                batched = True
        o = zeropower_via_newtonschulz(update, group["ns_steps"], resolve_coefficients(group["ns_coefficients"]),
                                       eps=group["eps"], safety_factor=group["safety_factor"],
                                       scale_eps=group["scale_eps"])
        if group["algo"] == "adamuon":
            self._adamuon(group, p, o, shape, batched)
            return
        scale = lr_scale(o.shape, group["adjust_lr_fn"]) if group["adjust_lr_fn"] else 1.0
        if batched:
            if group["normalize_spatial"]:
                scale *= o.shape[0] ** -0.5
            o = o.permute(1, 2, 0)
        p.add_(o.reshape(shape), alpha=-lr * scale)

    def _adamuon(self, group, p, o, shape, batched):
        """Section 11, after Newton-Schulz: back to the parameter's shape, the second moment,
        the division, the bias correction or the RMS alignment, the scale."""
        st = self.state[p]
        beta2, eps, lr = group["betas"][1], group["eps"], group["lr"]
        if batched:
            o = o.permute(1, 2, 0)
        o = o.reshape(shape)
        st["exp_avg_sq"].mul_(beta2).addcmul_(o, o, value=1.0 - beta2)
        fn = group["adjust_lr_fn"]
        scale, unit = adamuon_lr_scale(o.shape, fn) if fn else (1.0, False)
        if unit:
            denom = st["exp_avg_sq"].sqrt().add_(eps)
        else:
            denom = (st["exp_avg_sq"] / (1.0 - beta2 ** st["step"].item())).sqrt().add_(eps)
        u = o / denom
        if unit:
            u = u / u.norm().add_(eps)
        if batched and group["normalize_spatial"]:
            spatial = 1
            for d in shape[2:]:
                spatial *= d
            scale *= spatial ** -0.5
        p.add_(u, alpha=-lr * scale)

    def _adamw(self, group, p):
        beta1, beta2 = group["betas"]
        lr = group["lr"] * group["fallback_lr_scale"]
        wd, eps = group["weight_decay"], group["eps"]
        st = self.state[p]
        g = p.grad
        st["step"] += 1
        t = st["step"].item()
        p.mul_(1 - lr * wd)
        st["exp_avg"].mul_(beta1).add_(g, alpha=1 - beta1)
        st["exp_avg_sq"].mul_(beta2).addcmul_(g, g, value=1 - beta2)
        numer = st["exp_avg"].mul(beta1).add_(g, alpha=1 - beta1) if group["nesterov"] else st["exp_avg"]
        neg_step_size = (lr / (1 - beta1 ** t)) * -1
        # section 6's evaluation order (multi-tensor path): ((sqrt(v) / sqrt(bc2)) + eps) / -step_size
        denom = st["exp_avg_sq"].sqrt().div_((1 - beta2 ** t) ** 0.5).add_(eps).div_(neg_step_size)
        p.addcdiv_(numer, denom)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            muon_ps, adam_ps = [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise RuntimeError("Muon does not support sparse gradients")
                st = self.state[p]
                if "use_muon" not in st:
                    if group.get("use_fallback", False):
                        st["use_muon"] = False
                    elif "use_muon" in group:
                        st["use_muon"] = group["use_muon"]
                    else:
                        st["use_muon"] = suitable_for_muon(p)
                if st["use_muon"]:
                    if "momentum_buffer" not in st:
                        st["momentum_buffer"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                        if group["algo"] == "adamuon":
                            st["step"] = torch.zeros((), dtype=torch.float32)
                            st["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    if group["algo"] == "adamuon":
                        st["step"] += 1
                    muon_ps.append(p)
                else:
                    if "step" not in st:
                        st["step"] = torch.zeros((), dtype=torch.float32)
                        st["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                        st["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    adam_ps.append(p)
            if muon_ps:
                resolve_coefficients(group["ns_coefficients"])
            for p in muon_ps:
                self._muon(group, p)
            for p in adam_ps:
                self._adamw(group, p)
        return loss
