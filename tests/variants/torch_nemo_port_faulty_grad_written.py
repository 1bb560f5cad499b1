"""A deliberately faulty variant of tests/ports/torch_nemo_port.py: step() writes the
Nesterov input into p.grad in place, as Keller's `grad.lerp_(momentum, beta)`
does (spec/profiles/keller.md 8), in a profile whose port leaves p.grad as it
was (spec/muon.md 8.1).  Its parameters and state are exactly the port's, so
only the judge's check of what p.grad holds after a step (the results'
"gradAfter", spec/vectors.md 2.1) can catch it: tests/scripts/grad-after.sh.
"""

import os
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402

zeropower_via_newtonschulz5 = _port.zeropower_via_newtonschulz5


class Muon(_port.Muon):
    def _muon_update(self, param, grad, state, group):
        buf_before = state['momentum_buffer'].double() if 'momentum_buffer' in state else grad.double() * 0
        super()._muon_update(param, grad, state, group)
        if group['nesterov']:  # the Nesterov input G + beta M', written over the caller's gradient
            beta = float(group['momentum'])
            grad.copy_((grad.double() + beta * (beta * buf_before + grad.double())).to(grad.dtype))
