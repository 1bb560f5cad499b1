"""A deliberately faulty variant of tests/ports/torch_nemo_port.py: clamped gradients.

Before the momentum, the Muon branch clamps every gradient element to fp16's
range [-65504, 65504] (a guard against fp16 overflow some ports add).  The
vectors of the area `overflow` (spec/muon.md 7.3) must catch it: neither the
exact norm's step nor the norm-overflow alternative comes from a clamped
gradient, and on elements near FLT_MAX it stores finite values where no
finite step is defined.  tests/scripts/torch-driver.sh checks both messages.
"""

import os
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402

zeropower_via_newtonschulz5 = _port.zeropower_via_newtonschulz5


class Muon(_port.Muon):
    def _momentum(self, buf64, grad64, beta, nesterov):
        return super()._momentum(buf64, grad64.clamp(-65504.0, 65504.0), beta, nesterov)
