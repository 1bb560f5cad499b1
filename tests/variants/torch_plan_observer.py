"""The correct test port, refusing to run in a process that tests/variants/torch_plan_meddler.py disturbed
(tests/scripts/driver-plan.sh runs it after the meddler in one plan)."""

import os
import sys
import warnings

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402  (the sibling the meddler patches, were it shared)


class Observer(_port.Muon):
    """The correct port, which refuses to be built in a disturbed process: every case it runs
    is skipped with the list of what differs from a fresh process (MUONREF_PLAN_CWD: the
    working directory the plan started in)."""

    def __init__(self, *args, **kwargs):
        seen = []
        if torch.get_default_dtype() != torch.float32:
            seen.append(f"default dtype {torch.get_default_dtype()}")
        if not torch.is_grad_enabled():
            seen.append("grad mode off")
        if torch.is_anomaly_enabled():
            seen.append("anomaly detection on")
        if torch.are_deterministic_algorithms_enabled():
            seen.append("deterministic algorithms on")
        if 'MUONREF_PLAN_MEDDLER' in os.environ:
            seen.append("environment variable MUONREF_PLAN_MEDDLER set")
        if '/nonexistent/meddler' in sys.path:
            seen.append("sys.path holds /nonexistent/meddler")
        if os.getcwd() != os.environ.get('MUONREF_PLAN_CWD', os.getcwd()):
            seen.append(f"working directory {os.getcwd()}")
        if warnings.filters and warnings.filters[0][0] == 'error' and warnings.filters[0][2] is Warning:
            seen.append("warnings are errors")
        if _port.NS_COEFFS != (3.4445, -4.775, 2.0315):
            seen.append(f"tests/ports/torch_nemo_port.py patched: NS_COEFFS {_port.NS_COEFFS}")
        if seen:
            raise RuntimeError("disturbed process: " + "; ".join(seen))
        super().__init__(*args, **kwargs)
