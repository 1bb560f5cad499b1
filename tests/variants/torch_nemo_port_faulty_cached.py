"""A deliberately faulty variant of tests/ports/torch_nemo_port.py: options cached at construction.

The port copies every parameter group's options when it is built and steps
with that copy, so the changes a learning-rate scheduler makes in
`optimizer.param_groups` between steps (lr, momentum, weight_decay, betas)
never reach the update.  It differs from the port only in cases whose steps
set options (format 2, spec/vectors.md 2.8: the `schedule` area);
tests/scripts/torch-schedule.sh expects it to fail there, every failure diagnosed as
the fast path's fault cached_group_options, and to pass a format-1 file.
"""

import os
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402

zeropower_via_newtonschulz5 = _port.zeropower_via_newtonschulz5


class Muon(_port.Muon):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._at_construction = [{k: v for k, v in g.items() if k != 'params'} for g in self.param_groups]

    def _cached(self, group):
        i = next(i for i, g in enumerate(self.param_groups) if g is group)
        return dict(self._at_construction[i], params=group['params'])

    def _muon_update(self, param, grad, state, group):
        super()._muon_update(param, grad, state, self._cached(group))

    def _adamw_update(self, param, grad, state, group):
        super()._adamw_update(param, grad, state, self._cached(group))
