"""tests/ports/torch_keller_port.py with a zero_grad that clears only the Muon groups' gradients: the
AdamW parameters' gradients are never cleared (issue 22).  With assigned gradients (the driver's
default lifecycle) nothing shows: every step sets p.grad anew.  In a training loop the stale
gradient stays, which the driver's training-loop lifecycle refuses at the second step (the case
is skipped with the reason); `muonref check --torch` runs both lifecycles and fails the port
(tests/scripts/check-torch.sh)."""

import os
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_keller_port  # noqa: E402
from torch_keller_port import zeropower_via_newtonschulz5  # noqa: F401


class SingleDeviceMuonWithAuxAdam(torch_keller_port.SingleDeviceMuonWithAuxAdam):
    def zero_grad(self, set_to_none: bool = False):
        for group in self.param_groups:
            if group["use_muon"]:  # the fault: the AdamW groups are left out
                for p in group["params"]:
                    p.grad = None
