"""A deliberately faulty variant of tests/ports/torch_nemo_port.py: NaN on norm overflow.

Where its binary32 Frobenius norm overflows, this Newton-Schulz returns NaN
(as a port that divides by the norm after squaring the input, or that maps
a non-finite norm to NaN, would) instead of the zero output that X / (Inf +
eps) gives.  Neither outcome of spec/muon.md 7.3 is NaN: the vectors with
gradients near 1e20 must fail it, naming the norm-overflow alternative.
"""

import os
import sys

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402


def zeropower_via_newtonschulz5(grad, steps=5):
    x = _port.zeropower_via_newtonschulz5(grad, steps=steps)
    if not torch.isfinite(grad.detach().float().norm()):
        return torch.full_like(x, float('nan'))
    return x


class Muon(_port.Muon):
    def _orthogonalize(self, matrix, steps):
        return zeropower_via_newtonschulz5(matrix, steps=steps)
