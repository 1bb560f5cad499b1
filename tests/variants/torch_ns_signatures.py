"""Newton-Schulz functions whose signatures are not (matrix, steps), for the driver's call by
parameter name (adapters.ns_binding; tests/scripts/driver-adapter.sh and tests/scripts/ns_binding_test.py).

keller_eps_first(X, eps=1e-7, steps=5): Keller's iteration (tests/ports/torch_keller_port.py) with the
eps before the steps: called positionally as f(matrix, steps) it would take the steps as its eps
(issue 22: 26 false failures); called by name it passes keller's ns cases.
fixed_steps(G, eps=1e-7): five fixed steps, no parameter for the number: the driver refuses it.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports'))  # the keller test port
from torch_keller_port import NS_COEFFS, NS_DTYPE  # noqa: E402


def keller_eps_first(X, eps=1e-7, steps=5):
    a, b, c = NS_COEFFS
    Y = X.to(NS_DTYPE)
    tall = X.size(-2) > X.size(-1)
    if tall:
        Y = Y.mT
    Y = Y / (Y.norm(dim=(-2, -1), keepdim=True) + eps)
    for _ in range(steps):
        A = Y @ Y.mT
        B = b * A + (c * A) @ A
        Y = a * Y + B @ Y
    return Y.mT if tall else Y


def fixed_steps(G, eps=1e-7):
    return keller_eps_first(G, eps=eps, steps=5)
