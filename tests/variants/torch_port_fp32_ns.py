"""A variant of tests/ports/torch_nemo_port.py whose Newton-Schulz runs in float32.

spec/muon.md section 7, format `fp32`: every operation's result is a
binary32 value.  The iteration runs on the wide orientation (a contiguous
transposed copy when rows > cols, so that NS(G^T) = NS(G)^T bit for bit),
normalises by ||X||_F + eps and applies the quintic steps in the spec's
order with Keller's triple.  Judged with `--ns-format fp32`.  Everything
else is the test port's.

ns_float(grad, steps, dtype) is the same iteration in any floating dtype;
tests/variants/torch_port_fp64_ns.py runs it in float64.

Written from spec/muon.md section 7, not copied from any port.
"""

import os
import sys

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402


def ns_float(grad, steps, dtype):
    """Spec section 7 with every operation's result a value of `dtype`; the result in grad's dtype."""
    if grad.ndim != 2:
        raise ValueError(f"Expected a matrix, got a tensor of shape {tuple(grad.shape)}")
    if _port._bad_int(steps, 1, _port.MAX_NS_STEPS):
        raise ValueError(f"Invalid number of Newton-Schulz steps: {steps!r}")
    a, b, c = (torch.tensor(v, dtype=dtype) for v in _port.NS_COEFFS)
    eps = torch.tensor(_port.NS_EPS, dtype=dtype)
    x = grad.detach().to(dtype)
    transpose = grad.size(0) > grad.size(1)
    if transpose:
        x = x.T.contiguous()
    d = x.norm() + eps
    x = torch.zeros_like(x) if float(d) == 0.0 else x / d
    for _ in range(steps):
        aa = x @ x.T
        bb = b * aa + c * (aa @ aa)
        x = a * x + bb @ x
    if transpose:
        x = x.T
    return x.to(grad.dtype).contiguous()


def zeropower_via_newtonschulz5(grad, steps=5):
    return ns_float(grad, steps, torch.float32)


class Muon(_port.Muon):
    def _orthogonalize(self, matrix, steps):
        return zeropower_via_newtonschulz5(matrix, steps=steps)
