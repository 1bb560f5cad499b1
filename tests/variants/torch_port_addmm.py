"""A variant of tests/ports/torch_nemo_port.py: the quintic step in two fused addmm operations.

torch.optim.Muon (PyTorch 2.9) evaluates the step as

    B = torch.addmm(A, A, A, beta=b, alpha=c)    # b A + c (A A)
    X = torch.addmm(X, B, X, beta=a)             # a X + B X

so each fused operation rounds once to bf16 where spec/muon.md section 7
rounds b A, c (A A), A A and their sum (and a X, B X and their sum)
separately.  Here each addmm is evaluated as the spec evaluates one bf16
operation: in binary32 from bf16 operands, scalars as binary32, products
accumulated in binary32, rounded once to bf16.  Everything else is the
test port's.

Written from spec/muon.md section 7, not copied from any port.
"""

import os
import sys

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402


def _addmm(c, x, y, beta, alpha=1.0):
    """bf16(beta C + alpha (X Y)) computed in binary32 and rounded once."""
    return _port._bf16(torch.addmm(c.float(), x.float(), y.float(), beta=_port._f32(beta), alpha=_port._f32(alpha)))


def addmm_step(x, a, b, c):
    """A = X X^T; B = addmm(A, A, A, beta=b, alpha=c); X = addmm(X, B, X, beta=a)."""
    aa = _port._mm(x, x.T)
    bb = _addmm(aa, aa, aa, beta=b, alpha=c)
    return _addmm(x, bb, x, beta=a)


def zeropower_via_newtonschulz5(grad, steps=5):
    return _port.ns_bf16(grad, steps, addmm_step)


class Muon(_port.Muon):
    def _orthogonalize(self, matrix, steps):
        return zeropower_via_newtonschulz5(matrix, steps=steps)
