"""A deliberately faulty variant of tests/ports/torch_keller_port.py: the Nesterov
input is computed out of place (`grad.lerp(momentum, beta)`), so p.grad keeps
the caller's gradient, where Keller's muon_update writes it in place
(spec/profiles/keller.md 8, fault keller_grad_kept).  Its parameters and
state are exactly the port's, so only the judge's check of what p.grad holds
after a step (the results' "gradAfter", spec/vectors.md 2.1) can catch it:
tests/scripts/grad-after.sh.
"""

import os
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_keller_port as _port  # noqa: E402

zeropower_via_newtonschulz5 = _port.zeropower_via_newtonschulz5


def muon_update(grad, momentum, beta=0.95, ns_steps=5, nesterov=True):
    momentum.lerp_(grad, 1 - beta)
    update = grad.lerp(momentum, beta) if nesterov else momentum
    if update.ndim == 4:
        update = update.view(update.size(0), -1)
    update = zeropower_via_newtonschulz5(update, steps=ns_steps)
    update *= max(1, grad.size(-2) / grad.size(-1)) ** 0.5
    return update


# the port's step calls the module's muon_update: replace it (the driver loads one port per process)
_port.muon_update = muon_update
SingleDeviceMuonWithAuxAdam = _port.SingleDeviceMuonWithAuxAdam
