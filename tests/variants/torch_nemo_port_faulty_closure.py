"""Deliberately faulty variants of tests/ports/torch_nemo_port.py for the training-loop lifecycle
(torch_driver.py --lifecycle training-loop, spec/vectors.md 4.2).

- IgnoresClosure: step(closure) never calls the closure, so the gradients a training loop
  computes inside it never reach the optimizer (and the loss is not returned);
- DropsLoss: step(closure) calls the closure but returns None instead of its loss (an
  LR-finder or a line search reading the return value gets nothing).

Both behave exactly as the port when the driver assigns .grad and calls step() (the default
lifecycle): tests/scripts/torch-lifecycle.sh expects them to pass there and to fail, with the
driver's message, in the training-loop lifecycle.
"""

import os
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402

zeropower_via_newtonschulz5 = _port.zeropower_via_newtonschulz5


class IgnoresClosure(_port.Muon):
    def step(self, closure=None):
        return super().step()


class DropsLoss(_port.Muon):
    def step(self, closure=None):
        super().step(closure)
        return None
