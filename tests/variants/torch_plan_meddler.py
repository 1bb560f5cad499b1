"""A port that disturbs the process it runs in (tests/scripts/driver-plan.sh): what the driver's
many-run form (vectors/drivers/plans.py) must undo before the next run.

Loading it and each step change process state a later run would see if the
driver did not put it back: the default dtype (float64), torch's thread count
(1), grad mode (off), anomaly detection and deterministic algorithms (on), the
random generator (reseeded), sys.path, the working directory, an environment
variable, the warnings filters, and -- the worst -- its sibling module
tests/ports/torch_nemo_port.py, whose Newton-Schulz function and coefficients it
replaces, and whose Muon class it patches, so that a later run of that port
in the same process, were the module object shared, would fail every case.
`Quits` calls sys.exit() when built: a run that stops the interpreter must
not stop the plan.  Its own results are of no interest;
tests/variants/torch_plan_observer.py, run after it, says what it left behind.
"""

import os
import sys
import warnings

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402


def _disturb():
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    torch.set_anomaly_enabled(True)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(12345)
    sys.path.insert(0, '/nonexistent/meddler')
    os.environ['MUONREF_PLAN_MEDDLER'] = 'set'
    warnings.simplefilter('error')
    os.chdir(os.path.dirname(os.path.abspath(__file__)) + '/../..')


# the sibling module, patched for whoever shares it
_port.NS_COEFFS = (2.0, -1.0, 0.5)
_port.zeropower_via_newtonschulz5 = lambda grad, steps=5: torch.zeros_like(grad)
_port.Muon._momentum = lambda self, buf64, grad64, beta, nesterov: (grad64, grad64 * 3)
_disturb()

zeropower_via_newtonschulz5 = _port.zeropower_via_newtonschulz5


class Muon(_port.Muon):
    def step(self, closure=None):
        _disturb()
        return super().step(closure)


class Quits(_port.Muon):
    def __init__(self, *args, **kwargs):
        sys.exit('the meddler quits')

