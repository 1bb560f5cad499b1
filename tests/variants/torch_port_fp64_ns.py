"""A variant of tests/ports/torch_nemo_port.py whose Newton-Schulz runs in float64.

The iteration of tests/variants/torch_port_fp32_ns.py (spec/muon.md section 7, every
operation's result a binary64 value), the result rounded once to the
input's dtype (binary32).  More accurate than the spec's `fp32` format, so
it must pass every case judged with `--ns-format fp32`.  Everything else
is the test port's.

Written from spec/muon.md section 7, not copied from any port.
"""

import os
import sys

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402
from torch_port_fp32_ns import ns_float  # noqa: E402


def zeropower_via_newtonschulz5(grad, steps=5):
    return ns_float(grad, steps, torch.float64)


class Muon(_port.Muon):
    def _orthogonalize(self, matrix, steps):
        return zeropower_via_newtonschulz5(matrix, steps=steps)
