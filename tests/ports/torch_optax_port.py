"""A test port of optax.contrib.muon, written from spec/profiles/optax.md alone
(torch and the standard library only; no upstream code): the profile `optax`,
google-deepmind/optax @2edbcbe2.

optax is a gradient transformation: `tx = muon(...)`, `state = tx.init(params)`,
`updates, state = tx.update(grads, state, params)`, `params = apply_updates(params,
updates)`.  This file transliterates that functional form (`muon` returns a pair of
pure functions over lists of float32 tensors) and wraps it in a torch.optim-like class
`Muon` for vectors/drivers/torch_driver.py (adapter `optax`): the hyperparameters sit
in the one param group (so that a scheduler may change them, as optax's
inject_hyperparams does), the functional state in optimizer.state.

Semantics (optax.md 3-7), all in float32 (the parameter's dtype):
  Muon leaves (every 2-D leaf): mu <- (1 - beta) g + beta mu; t = count + 1;
    nesterov: mu_hat = beta (mu / (1 - beta^(t+1))) + (1 - beta) (g / (1 - beta^t)),
    else mu_hat = mu / (1 - beta^t);
    O = NS(mu_hat): transposed when rows > cols, X / (||X||_F + eps) (preconditioning 'aol',
    'schatten': rescaled inside step 0 instead), a (3,) triple ns_steps times or an (n, 3)
    list once each, a = X X^T, b = c1 a + (c2 a) a, X = c0 X + b X;  adaptive: O <- sum(mu_hat
    O) O;  s = sqrt(max(1, cols / rows)) or consistent_rms c: c sqrt(max(rows, cols));
    update = -lr (s O + wd P).
  Other leaves: optax.adamw(lr, adam_b1, adam_b2, eps, adam_eps_root, adam_weight_decay,
    nesterov): m, v EMAs; nesterov m_hat = b1 (m / (1 - b1^(t+1))) + (1 - b1) (g / (1 - b1^t)),
    else m / (1 - b1^t); v_hat = v / (1 - b2^t);
    update = -lr (m_hat / (sqrt(v_hat + adam_eps_root) + eps) + awd P).
  One count per branch (all leaves step together).
"""
import math

import torch

_F32 = torch.float32
STANDARD = (3.4445, -4.7750, 2.0315)
_NS_COEFFS_PRESET_DICT = {
    'standard': STANDARD,
    'dion': ((4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377), (3.7418, -5.5913, 2.3037),
             (2.8769, -3.1427, 1.2046), (2.8366, -3.0525, 1.2012)),
}


def _shape(c):
    """The shape jnp.asarray(c) would have (a nested list or tuple of numbers)."""
    if isinstance(c, (list, tuple)):
        if c and isinstance(c[0], (list, tuple)):
            return (len(c), len(c[0]))
        return (len(c),)
    return ()


def _pow(beta, t):
    """beta ** count in float32 (a Python float to an int32 counter: float32)."""
    return torch.tensor(beta, dtype=_F32) ** torch.tensor(t, dtype=_F32)


def _bias_correction(x, decay, count):
    """optax.tree_utils.tree_bias_correction: x / (1 - decay ** count), float32."""
    return x / (1 - _pow(decay, count))


_PRECONDITIONINGS = ('frobenius', 'spectral', 'aol', 'schatten')


def _first_step_rescaled(x, c, preconditioning):
    """optax.md 4: 'aol' and 'schatten' rescale inside step 0 (eps of those functions: 1e-8):
    a = x x^T; aol s_i = rsqrt(clip(sum_j |a_ij|, 1e-8)), x = s x, a = s a s^T;
    schatten s = rsqrt(clip(||a||_F, 1e-8)), x = s x, a = s^2 a; then the step on (x, a)."""
    a = x @ x.T
    if preconditioning == 'aol':
        s = torch.rsqrt(torch.clamp(a.abs().sum(dim=-1), min=1e-8)).unsqueeze(-1)
        x, a = x * s, a * s * s.T
    else:
        s = torch.rsqrt(torch.clamp(torch.linalg.norm(a), min=1e-8))
        x, a = x * s, a * s ** 2
    b = c[1] * a + (c[2] * a) @ a
    return c[0] * x + b @ x


def orthogonalize_via_newton_schulz(x, ns_coeffs, ns_steps=5, eps=1e-8, preconditioning='frobenius'):
    """optax.md 4: x a float32 (m, n) matrix; ns_coeffs a (3,) triple or an (n, 3) list;
    returns float32 (m, n)."""
    if x.ndim != 2:
        raise ValueError(f"Input must have shape (m, n) or weight dimension numbers must be provided. "
                         f"Got shape={tuple(x.shape)} and dimension_numbers=None.")
    shape = _shape(ns_coeffs)
    if len(shape) not in (1, 2) or shape[-1] != 3:
        raise ValueError(f"Newton-Schulz coefficients must have shape (3,) or (n, 3), got {shape}")
    if preconditioning not in _PRECONDITIONINGS:
        raise ValueError(f'Unknown preconditioning {preconditioning}')
    if preconditioning == 'spectral':
        raise NotImplementedError("this port leaves out 'spectral' (not expressible in muonref: optax.md 4)")
    transposed = x.shape[0] > x.shape[1]
    x = x.T.contiguous() if transposed else x.contiguous()  # one memory layout: a pair is bitwise transposed
    if preconditioning == 'frobenius':
        x = x / (torch.linalg.norm(x) + eps)
    coeffs = [ns_coeffs] * ns_steps if len(shape) == 1 else list(ns_coeffs)  # fori_loop / scan
    for i, (c0, c1, c2) in enumerate(coeffs):
        if i == 0 and preconditioning in ('aol', 'schatten'):
            x = _first_step_rescaled(x, (c0, c1, c2), preconditioning)
            continue
        a = x @ x.T
        b = c1 * a + (c2 * a) @ a
        x = c0 * x + b @ x
    return x.T.contiguous() if transposed else x


def newton_schulz(x, steps):
    """The driver's Newton-Schulz call: optax's defaults (Keller's triple, eps 1e-8)."""
    return orthogonalize_via_newton_schulz(x.to(_F32), STANDARD, steps, 1e-8)


def _scale(shape, consistent_rms):
    """scale_by_shape with MuonDimensionNumbers(0, 1): fan_in = rows, fan_out = cols."""
    fan_in, fan_out = shape
    if consistent_rms is None:
        return math.sqrt(max(1.0, fan_out / fan_in))
    return math.sqrt(max(fan_in, fan_out)) * consistent_rms


def muon(learning_rate, ns_coeffs=STANDARD, ns_steps=5, beta=0.95, eps=1e-8, weight_decay=0.0, nesterov=True,
         adaptive=False, preconditioning='frobenius', adam_b1=0.9, adam_b2=0.999, adam_weight_decay=0.0,
         consistent_rms=None, adam_eps_root=0.0):
    """optax.contrib.muon: (init, update) over lists of float32 tensors.  The
    hyperparameters are read from `hp` at each update (inject_hyperparams) when given."""
    if isinstance(ns_coeffs, str):
        if ns_coeffs not in _NS_COEFFS_PRESET_DICT:
            raise ValueError(f'Unknown ns_coeff preset string: {ns_coeffs}')
        ns_coeffs = _NS_COEFFS_PRESET_DICT[ns_coeffs]
    defaults = dict(learning_rate=learning_rate, beta=beta, eps=eps, weight_decay=weight_decay, nesterov=nesterov,
                    adam_b1=adam_b1, adam_b2=adam_b2, adam_weight_decay=adam_weight_decay,
                    consistent_rms=consistent_rms, adam_eps_root=adam_eps_root)

    def init(params):
        shape = _shape(ns_coeffs)
        if len(shape) not in (1, 2) or shape[-1] != 3:
            raise ValueError(f'ns_coeffs must have shape (3,) or (n, 3), got {shape}')
        coeffs = ns_coeffs
        if len(shape) == 2:
            if not shape[0] <= ns_steps:
                raise ValueError(f'Not enough coeffs to perform {ns_steps} steps')
            coeffs = tuple(ns_coeffs)[-ns_steps:]
        muon_leaves = [p.ndim == 2 for p in params]
        return {'muon': {'count': 0, 'mu': [torch.zeros_like(p, dtype=_F32) if m else None
                                            for p, m in zip(params, muon_leaves)], 'ns_coeffs': coeffs},
                'adam': {'count': 0, 'mu': [None if m else torch.zeros_like(p, dtype=_F32)
                                            for p, m in zip(params, muon_leaves)],
                         'nu': [None if m else torch.zeros_like(p, dtype=_F32) for p, m in zip(params, muon_leaves)]}}

    def update(grads, state, params, hp=None):
        h = dict(defaults, **(hp or {}))
        lr, b, wd = h['learning_rate'], h['beta'], h['weight_decay']
        ms, ad = state['muon'], state['adam']
        t_m, t_a = ms['count'] + 1, ad['count'] + 1
        updates = []
        for i, (g, p) in enumerate(zip(grads, params)):
            if ms['mu'][i] is not None:  # scale_by_muon, scale_by_shape, add_decayed_weights, lr
                mu = (1 - b) * g + b * ms['mu'][i]
                ms['mu'][i] = mu
                if h['nesterov']:
                    mu_hat = b * _bias_correction(mu, b, t_m + 1) + (1 - b) * _bias_correction(g, b, t_m)
                else:
                    mu_hat = _bias_correction(mu, b, t_m)
                o = orthogonalize_via_newton_schulz(mu_hat, ms['ns_coeffs'], ns_steps, h['eps'], preconditioning)
                if adaptive:  # optax.md 4: the dual norm of mu_hat, sum(mu_hat * O), times O
                    o = torch.sum(mu_hat * o) * o
                u = o * _scale(tuple(p.shape), h['consistent_rms'])
                u = u + wd * p
                updates.append(-lr * u)
            else:  # optax.adamw(..., nesterov=nesterov): scale_by_adam, add_decayed_weights, lr
                b1, b2 = h['adam_b1'], h['adam_b2']
                m = (1 - b1) * g + b1 * ad['mu'][i]
                v = (1 - b2) * (g * g) + b2 * ad['nu'][i]
                ad['mu'][i], ad['nu'][i] = m, v
                if h['nesterov']:
                    m_hat = b1 * _bias_correction(m, b1, t_a + 1) + (1 - b1) * _bias_correction(g, b1, t_a)
                else:
                    m_hat = _bias_correction(m, b1, t_a)
                v_hat = _bias_correction(v, b2, t_a)
                u = m_hat / (torch.sqrt(v_hat + h['adam_eps_root']) + h['eps'])
                u = u + h['adam_weight_decay'] * p
                updates.append(-lr * u)
        if any(m is not None for m in ms['mu']):
            ms['count'] = t_m
        if any(m is not None for m in ad['mu']):
            ad['count'] = t_a
        return updates, state

    return init, update


def apply_updates(params, updates):
    return [p + u for p, u in zip(params, updates)]


class Muon(torch.optim.Optimizer):
    """optax.contrib.muon as a torch optimizer: one param group (optax has one transform
    over the whole pytree), its options by optax's names."""

    def __init__(self, params, learning_rate, ns_coeffs=STANDARD, ns_steps=5, beta=0.95, eps=1e-8,
                 weight_decay=0.0, nesterov=True, adaptive=False, preconditioning='frobenius', adam_b1=0.9,
                 adam_b2=0.999, adam_weight_decay=0.0, consistent_rms=None, adam_eps_root=0.0):
        defaults = dict(learning_rate=learning_rate, beta=beta, eps=eps, weight_decay=weight_decay,
                        nesterov=nesterov, adam_b1=adam_b1, adam_b2=adam_b2, adam_weight_decay=adam_weight_decay,
                        consistent_rms=consistent_rms)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("optax.contrib.muon is one transformation: one parameter group")
        self._tx = muon(learning_rate, ns_coeffs, ns_steps, beta, eps, weight_decay, nesterov, adaptive,
                        preconditioning, adam_b1, adam_b2, adam_weight_decay, consistent_rms, adam_eps_root)
        self._tx[0]([p.detach() for p in self.param_groups[0]['params']])  # tx.init's checks, at once

    def _functional_state(self, params):
        """The optax state from optimizer.state (a state_dict round trip restores it)."""
        st = self._tx[0]([p.detach() for p in params])
        for i, p in enumerate(params):
            s = self.state[p]
            if 'momentum_buffer' in s:
                st['muon']['mu'][i], st['muon']['count'] = s['momentum_buffer'], int(s['step'])
            elif 'exp_avg' in s:
                st['adam']['mu'][i], st['adam']['nu'][i] = s['exp_avg'], s['exp_avg_sq']
                st['adam']['count'] = int(s['step'])
        return st

    @torch.no_grad()
    def step(self, closure=None):
        """One tx.update and apply_updates over every parameter; the closure, when given,
        is called first with gradients enabled and its loss returned (torch.optim's
        protocol: optax has none, its gradients come from jax.grad)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        group = self.param_groups[0]
        params = group['params']
        if any(p.grad is None for p in params):
            raise ValueError("optax: every leaf needs a gradient (JAX has no missing gradient)")
        st = self._functional_state(params)
        hp = {k: v for k, v in group.items() if k != 'params'}
        grads = [p.grad.to(_F32) for p in params]
        updates, st = self._tx[1](grads, st, [p.detach() for p in params], hp)
        for p, new in zip(params, apply_updates([p.detach() for p in params], updates)):
            p.copy_(new)
        for i, p in enumerate(params):
            if st['muon']['mu'][i] is not None:
                self.state[p] = {'step': torch.tensor(float(st['muon']['count'])),
                                 'momentum_buffer': st['muon']['mu'][i]}
            else:
                self.state[p] = {'step': torch.tensor(float(st['adam']['count'])), 'exp_avg': st['adam']['mu'][i],
                                 'exp_avg_sq': st['adam']['nu'][i]}
        return loss
