"""A deliberately faulty variant of tests/ports/torch_nemo_port.py: scaled Muon decay.

The Muon weight decay uses lr * scale instead of lr (spec/muon.md section 4
requires the unscaled learning rate).  It differs from the port only for a
Muon matrix with weight_decay != 0 whose scale factor is not 1 (a non-square
matrix, tall under fan_in or wide under fan_out); tests/scripts/torch-driver.sh
expects the golden vectors to catch it only there.
"""

import os
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402

zeropower_via_newtonschulz5 = _port.zeropower_via_newtonschulz5


class Muon(_port.Muon):
    def _muon_decay(self, lr, weight_decay, scale):
        return 1.0 - lr * scale * weight_decay
