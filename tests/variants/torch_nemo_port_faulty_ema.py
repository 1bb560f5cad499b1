"""A deliberately faulty variant of tests/ports/torch_nemo_port.py: EMA momentum.

The buffer is kept in EMA form, M <- beta M + (1 - beta) G, and the Nesterov
input is (1 - beta) G + beta M.  Both are (1 - beta) times the `nemo` values,
so the orthogonalised update is the same up to the normalisation epsilon (and
bf16 rounding when 1 - beta is not a power of two), while the stored momentum
buffer differs.  tests/scripts/torch-driver.sh expects the golden vectors to catch it
only in cases whose expected state holds a momentum buffer.
"""

import os
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402

zeropower_via_newtonschulz5 = _port.zeropower_via_newtonschulz5


class Muon(_port.Muon):
    def _momentum(self, buf64, grad64, beta, nesterov):
        new = beta * buf64 + (1 - beta) * grad64
        update = (1 - beta) * grad64 + beta * new if nesterov else new
        return new, update
