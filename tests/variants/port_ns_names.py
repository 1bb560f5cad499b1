"""The Newton-Schulz function each profile's PyTorch test port calls from step(), by profile,
from the records (spec/profiles/NAME.json "test_port": its adapter) and the adapters
(vectors/drivers/adapters.py: the adapter's ns_function_name), so that a new record's port has
its variants (tests/variants/torch_port_variant.py) with no list to edit.

STEP_NS names the ports whose step() calls another function than the one the adapter gives the
Newton-Schulz cases; NS_HOLDER the ports whose step() calls it through a module they imported.
"""

import glob
import json
import os
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path.insert(0, os.path.join(SRC, 'vectors', 'drivers'))

from adapters import ADAPTERS  # noqa: E402

# optax's port: the ns cases call newton_schulz (one matrix); step() calls
# orthogonalize_via_newton_schulz (the batched wrapper, tests/ports/torch_optax_port.py)
STEP_NS = {'optax': 'orthogonalize_via_newton_schulz'}
# normuon's port calls `dion.polar_express` (tests/ports/torch_normuon_port.py); emerging@0.3's step is the
# fd77292 port's, which calls its own module's newton_schulz (tests/ports/torch_emerging_0_3_port.py)
NS_HOLDER = {'normuon': 'dion', 'emerging@0.3': '_fd77292'}


def _ports():
    """(record name, its test_port) for every record with a test port."""
    for path in sorted(glob.glob(os.path.join(SRC, 'spec', 'profiles', '*.json'))):
        rec = json.load(open(path))
        port = rec.get('test_port') if isinstance(rec, dict) else None
        if port and 'name' in rec:
            yield rec['name'], port


def ns_names():
    """{profile: the name of the Newton-Schulz function its test port's step() calls}, for every
    record with a test port."""
    return {name: STEP_NS.get(name, ADAPTERS[port['adapter'].split('@', 1)[0]].ns_function_name)
            for name, port in _ports()}


def port_modules():
    """{profile: the module name of its test port (the file's stem: tests/ports/torch_emerging_0_3_port.py
    for emerging@0.3, whose name is no module name)}."""
    return {name: os.path.splitext(os.path.basename(port['file']))[0] for name, port in _ports()}
