"""Deliberately faulty loads of two test ports' state (issue 26 item 4): for the resume-in-another-dtype
cases (area `dtypes`, spec/vectors.md 2.1 "roundTripDtype") and every state round trip.

torch.optim.Optimizer.load_state_dict casts every floating state tensor to its parameter's dtype.
A port that restores its state as it was saved (its own load_state_dict, or an engine that keeps
the optimizer state outside `Optimizer.state`, as DeepSpeed's ZeRO checkpoints did in
deepspeedai/DeepSpeed #7746) meets gradients of the other dtype after a resume in bf16:
`lerp_` raises "expected dtype float for `end` but got dtype c10::BFloat16".

- TorchUncast: tests/ports/torch_torch_port.py's Muon (profile torch);
- KellerUncast: tests/ports/torch_keller_port.py's SingleDeviceMuonWithAuxAdam (profile keller:
  the AdamW moments are restored uncast too).

tests/scripts/fit-variants.sh expects each to fail exactly the dtypes cases with roundTripDtype, each
failure explained as a refused resume in another dtype, and to pass the rest of the area.

- KellerZeroedLoad: the Keller port whose load_state_dict zeroes every restored buffer (momentum,
  exp_avg, exp_avg_sq; the step counts kept), as a fix of the dtype mismatch that zeroes the state
  instead of converting it would: tests/scripts/fit-variants.sh expects exactly the cases with a state round
  trip to fail, explained as fault state_dropped_on_load.
"""

import os
import sys

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_keller_port as _keller  # noqa: E402
import torch_torch_port as _torch  # noqa: E402


class _UncastLoad:
    """load_state_dict that puts back every floating state tensor in its saved dtype."""

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        params = [p for group in self.param_groups for p in group['params']]
        for index, saved in state_dict['state'].items():
            for key, value in saved.items():
                if torch.is_tensor(value) and value.is_floating_point() and value.dim() > 0:
                    self.state[params[index]][key] = value.clone()


class TorchUncast(_UncastLoad, _torch.Muon):
    pass


class KellerUncast(_UncastLoad, _keller.SingleDeviceMuonWithAuxAdam):
    pass


class _ZeroedLoad:
    """load_state_dict that zeroes every restored buffer (floating tensors of one or more dimensions)."""

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        for state in self.state.values():
            for value in state.values():
                if torch.is_tensor(value) and value.is_floating_point() and value.dim() > 0:
                    value.zero_()


class KellerZeroedLoad(_ZeroedLoad, _keller.SingleDeviceMuonWithAuxAdam):
    pass
