"""Deliberately faulty variants of two test ports for the resume-in-another-dtype cases (area
`dtypes`, spec/vectors.md 2.1 "roundTripDtype"; issue 26 item 4).

torch.optim.Optimizer.load_state_dict casts every floating state tensor to its parameter's dtype.
A port that restores its state as it was saved (its own load_state_dict, or an engine that keeps
the optimizer state outside `Optimizer.state`, as DeepSpeed's ZeRO checkpoints did in
deepspeedai/DeepSpeed #7746) meets gradients of the other dtype after a resume in bf16:
`lerp_` raises "expected dtype float for `end` but got dtype c10::BFloat16".

- TorchUncast: tests/torch_torch_port.py's Muon (profile torch);
- KellerUncast: tests/torch_keller_port.py's SingleDeviceMuonWithAuxAdam (profile keller:
  the AdamW moments are restored uncast too).

tests/fit-variants.sh expects each to fail exactly the dtypes cases with roundTripDtype, each
failure explained as a refused resume in another dtype, and to pass the rest of the area.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
