"""Unit test of adapters.ns_binding / call_newton_schulz (vectors/drivers/adapters.py): how the
driver calls a Newton-Schulz function by the names its signature gives (issue 22).  Every
Newton-Schulz function of the test ports is bound as its adapter calls it, checked against the
binding written here from each signature; the functions the driver must refuse are refused with
a message naming the function and its parameters.  Run by tests/scripts/driver-adapter.sh; prints one
line per check, exits 1 on a failure."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, '..', '..', 'vectors', 'drivers'), os.path.join(HERE, '..', 'ports'),
                os.path.join(HERE, '..', 'variants')]

import torch  # noqa: E402

import adapters  # noqa: E402
from adapters import ADAPTERS, NsSignatureError, call_newton_schulz, ns_binding  # noqa: E402

failures = 0


def check(what, ok, detail=''):
    global failures
    print(f"{'ok' if ok else 'FAIL'}: {what}{'' if ok else ': ' + detail}")
    failures += not ok


def port_fn(module, name):
    return getattr(__import__(module), name)


# (port module, function, adapter, profile) -> the binding written from the signature:
# (positional (name, role) pairs, keyword (name, role) pairs)
EXPECTED = [
    ('torch_nemo_port', 'zeropower_via_newtonschulz5', 'nemo', 'nemo', [], [('grad', 'matrix'), ('steps', 'steps')]),
    ('torch_keller_port', 'zeropower_via_newtonschulz5', 'keller', 'keller', [], [('G', 'matrix'), ('steps', 'steps')]),
    ('torch_torch_port', '_zeropower_via_newtonschulz', 'torch', 'torch', [],
     [('grad', 'matrix'), ('ns_coefficients', 'coefficients'), ('ns_steps', 'steps'), ('eps', 'eps')]),
    ('torch_timm_port', 'zeropower_via_newtonschulz', 'timm', 'timm', [],
     [('G', 'matrix'), ('steps', 'steps'), ('coefficients', 'coefficients'), ('eps', 'eps')]),
    ('torch_megatron_port', 'newton_schulz', 'megatron', 'megatron', [],
     [('x', 'matrix'), ('steps', 'steps'), ('coefficients', 'coefficients')]),
    ('torch_emerging_port', 'newton_schulz', 'emerging', 'emerging', [],
     [('x', 'matrix'), ('steps', 'steps'), ('coefficient_type', 'coefficients')]),
    ('torch_paddle_port', 'zeropower_via_newtonschulz5', 'paddle', 'paddle', [],
     [('X', 'matrix'), ('steps', 'steps'), ('eps', 'eps'), ('ns_coeffs', 'coefficients')]),
    ('torch_dion_port', 'polar_express', 'dion', 'dion', [], [('G', 'matrix'), ('epsilon', 'eps')]),
    ('torch_keras_port', 'zeropower_via_newtonschulz5', 'keras', 'keras', [], [('x', 'matrix'), ('steps', 'steps')]),
    ('torch_optax_port', 'newton_schulz', 'optax', 'optax', [], [('x', 'matrix'), ('steps', 'steps')]),
    ('torch_ns_signatures', 'keller_eps_first', 'keller', 'keller', [], [('X', 'matrix'), ('steps', 'steps')]),
]
for module, name, adapter, profile, pos, kw in EXPECTED:
    got = ns_binding(port_fn(module, name), ADAPTERS[adapter].ns_roles(profile, 5))
    check(f"{module}.{name} ({adapter}): {got}", got == (pos, kw), f"expected {(pos, kw)}")


def positional_only(G, steps, /, eps=1e-7):
    return (G, steps, eps)


def star(G, *rest, steps=5, **kw):
    return (G, steps)


def first_unnamed(u_t, iters=5):
    return (u_t, iters)


check("positional-only parameters are passed by position",
      call_newton_schulz(positional_only, 'M', steps=3) == ('M', 3, 1e-7))
check("*args/**kwargs are left alone, steps by keyword", call_newton_schulz(star, 'M', steps=4) == ('M', 4))
check("an unnamed first parameter takes the matrix; iters takes the steps",
      call_newton_schulz(first_unnamed, 'M', steps=6) == ('M', 6))
ns_sig = __import__('torch_ns_signatures')
x = torch.randn(4, 8)
check("f(X, eps=1e-7, steps=5) is called by keyword: equal to the keyword call",
      torch.equal(call_newton_schulz(ns_sig.keller_eps_first, x, steps=3),
                         ns_sig.keller_eps_first(x, steps=3)))
check("... and not to the positional call f(matrix, steps)",
      not torch.equal(call_newton_schulz(ns_sig.keller_eps_first, x, steps=3),
                             ns_sig.keller_eps_first(x, 3)))

REFUSED = [
    (ns_sig.fixed_steps, {'steps': 5}, "no parameter takes the number of steps"),
    (lambda G, eps, mystery: G, {'steps': 5}, "'eps' has no default"),
    (lambda steps, eps=1e-7: steps, {'steps': 5}, "no parameter takes the matrix"),
]
for fn, roles, why in REFUSED:
    try:
        ns_binding(fn, roles)
        check(f"refused: {why}", False, "it was accepted")
    except NsSignatureError as exc:
        msg = str(exc)
        check(f"refused, naming the function and its parameters: {msg[:120]}...",
              why in msg and '(' in msg and ('G' in msg or 'steps' in msg))
check("a built-in without a readable signature is called as f(matrix, steps)", ns_binding(max, {'steps': 5}) is None)
check("the module has no leftover positional call", not hasattr(adapters.Adapter, 'newton_schulz'))
sys.exit(1 if failures else 0)
