"""A test port of NVIDIA-NeMo/Emerging-Optimizers' `Muon` at the releases v0.3.0 (b309e2f0) and v0.3.1
(1f29ffd2): the profile `emerging@0.3` (spec/profiles/emerging.md 11).  The same class as fd77292's
(tests/ports/torch_emerging_port.py, whose code this reuses) but for two things the releases differ in:

- Newton-Schulz normalises with eps 1e-7 (muon_utils.py:132 at v0.3.0 and v0.3.1; 1e-15 from 7ebd3cf, v0.4.0);
- the preset cubic5 does not exist yet (added in a4c2c26): `Invalid coefficient type: cubic5`.

Standard library and torch only, as every test port, and the fd77292 port beside it (copy both)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch_emerging_port as _fd77292  # noqa: E402
except ImportError as exc:  # a copy made elsewhere: the release's port is the fd77292 port's subclass
    raise ImportError(f"{__file__}: needs tests/ports/torch_emerging_port.py beside it (it subclasses that port's Muon; "
                      "copy both)") from exc

NS_EPS = 1e-7
COEFFICIENT_TYPES = tuple(t for t in _fd77292.COEFFICIENT_SETS if t != 'cubic5')


def newton_schulz(x, steps, coefficient_type='quintic', eps=NS_EPS):
    """muon_utils.newton_schulz at v0.3.x: emerging.md 4 with eps 1e-7 and without cubic5."""
    if coefficient_type != 'custom' and coefficient_type not in COEFFICIENT_TYPES:
        raise ValueError(f"Invalid coefficient type: {coefficient_type}")
    return _fd77292.newton_schulz(x, steps, coefficient_type, eps)


class Muon(_fd77292.Muon):
    NS_EPS = NS_EPS
    COEFFICIENT_TYPES = COEFFICIENT_TYPES
