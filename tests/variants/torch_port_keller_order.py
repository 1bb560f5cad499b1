"""A variant of tests/ports/torch_nemo_port.py: B = b A + c A A evaluated as (c A) A.

Keller Jordan's muon.py writes the quintic step as `B = b * A + c * A @ A`,
which Python parses as `(c * A) @ A`: the scalar multiplies A, the product
is rounded to bf16, then multiplied by A.  spec/muon.md section 7 writes
c (A A).  In exact arithmetic the two agree; in bf16 they round at
different places.  Everything else, the normalisation, the other
operations (each rounded once to bf16, scalars entering as binary32) and
the whole optimizer, is the test port's.

Written from spec/muon.md section 7, not copied from any port.
"""

import os
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402


def keller_step(x, a, b, c):
    """A = X X^T, B = b A + (c A) A, X = a X + B X, each operation rounded to bf16."""
    aa = _port._mm(x, x.T)
    bb = _port._add(_port._scal(b, aa), _port._mm(_port._scal(c, aa), aa))
    return _port._add(_port._scal(a, x), _port._mm(bb, x))


def zeropower_via_newtonschulz5(grad, steps=5):
    return _port.ns_bf16(grad, steps, keller_step)


class Muon(_port.Muon):
    def _orthogonalize(self, matrix, steps):
        return zeropower_via_newtonschulz5(matrix, steps=steps)
