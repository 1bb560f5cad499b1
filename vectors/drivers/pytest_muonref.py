"""pytest plugin: every muonref golden vector case as one pytest item.

    pytest -p pytest_muonref --muonref-optimizer my_port.py:Muon [--muonref-profile nemo]
           [--muonref-mode MODE] [--muonref-ns-format bf16|fp32] [--muonref-adapter NAME] [--muonref-ns-function M:F]
           [--muonref-vectors PATH] [--muonref-driver-option OPT ...] [--muonref-bin PATH]

(`make install` registers the plugin with pytest, so that `-p pytest_muonref`
may be left out; in a source tree put vectors/drivers on PYTHONPATH.)

At collection the plugin runs the port once over the vectors through
torch_driver.py (the driver beside this file), then has `muonref check
--results RESULTS --junit REPORT` judge the results; each <testcase> of that
report becomes an item muonref/PROFILE.AREA::FILE#TCID that passes, or fails
with the judge's message (and its diagnosis, when it gives one).  The judging
stays in C: this file only reads muonref's verdicts.

Vectors: --muonref-vectors PATH, else the PROFILE folder of ./vectors when
it exists, else of the vectors installed beside the driver.  The muonref
command: --muonref-bin, else $MUONREF, else `muonref` on the PATH.

A driver or command failure (bad --muonref-optimizer, no vectors, a results
file muonref refuses) stops the session as a usage error naming the cause
(pytest exit status 4).  Standard library and pytest only (Debian's
python3-pytest).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, 'torch_driver.py')


def pytest_addoption(parser):
    g = parser.getgroup('muonref', "muonref golden vectors (vectors/drivers/pytest_muonref.py)")
    g.addoption('--muonref-optimizer', metavar='MODULE_OR_FILE:CLASS',
                help="the PyTorch optimizer to judge; turns the plugin on (the driver's --optimizer)")
    g.addoption('--muonref-profile', default='nemo', metavar='NAME',
                help="the profile whose vectors are run (default nemo)")
    g.addoption('--muonref-vectors', metavar='PATH',
                help="vector files or folder (default: PROFILE under ./vectors, else the installed vectors)")
    g.addoption('--muonref-mode', metavar='MODE',
                help="passed to the driver as --mode MODE (the driver's platform mode, where it has one)")
    g.addoption('--muonref-ns-format', default='bf16', choices=('bf16', 'fp32'),
                help="the format the port's Newton-Schulz runs in (the driver's --ns-format; default bf16)")
    g.addoption('--muonref-adapter', metavar='NAME',
                help="the driver's option mapping (--adapter; default: the profile's own, e.g. torch)")
    g.addoption('--muonref-ns-function', metavar='MODULE_OR_FILE:FUNC',
                help="the Newton-Schulz function (the driver's --ns-function)")
    g.addoption('--muonref-driver-option', action='append', default=[], metavar='OPT',
                help="one more option for the driver (repeatable), e.g. --muonref-driver-option=--verbose")
    g.addoption('--muonref-bin', metavar='PATH', help="the muonref command (default $MUONREF, else muonref on PATH)")


def _vectors(config):
    given = config.getoption('muonref_vectors')
    if given:
        if not os.path.exists(given):
            raise pytest.UsageError(f"--muonref-vectors {given!r}: no such file or folder")
        return given
    profile = config.getoption('muonref_profile')
    parent = os.path.dirname(HERE)  # $(pkgdatadir) installed, vectors/ in a source tree
    roots = ['vectors', parent if os.path.basename(parent) == 'vectors' else os.path.join(parent, 'vectors')]
    for root in roots:
        if os.path.isdir(root):
            path = os.path.join(root, profile)
            if not os.path.isdir(path):
                have = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)) and d != 'drivers')
                raise pytest.UsageError(f"--muonref-profile {profile!r}: no folder {path!r} (profiles there: {have})")
            return path
    raise pytest.UsageError(f"no vectors: give --muonref-vectors (looked in {roots})")


def _muonref(config):
    cmd = config.getoption('muonref_bin') or os.environ.get('MUONREF') or shutil.which('muonref')
    if not cmd or not os.access(cmd, os.X_OK):
        raise pytest.UsageError(f"cannot find the muonref command ({cmd or 'not on PATH'}): give --muonref-bin")
    return cmd


def _run(what, argv):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def _verdicts(config):
    """Runs the driver and `muonref check`; returns [(classname, name, passed, message)]."""
    vectors = _vectors(config)
    muonref = _muonref(config)
    work = tempfile.mkdtemp(prefix='pytest-muonref-')
    try:
        results = os.path.join(work, 'results.json')
        report = os.path.join(work, 'junit.xml')
        argv = [sys.executable, DRIVER, '--quiet', '--optimizer', config.getoption('muonref_optimizer'),
                '--adapter', config.getoption('muonref_adapter') or config.getoption('muonref_profile'),
                '--ns-format', config.getoption('muonref_ns_format'), '--out', results]
        if config.getoption('muonref_mode'):
            argv += ['--mode=' + config.getoption('muonref_mode')]
        if config.getoption('muonref_ns_function'):
            argv += ['--ns-function', config.getoption('muonref_ns_function')]
        argv += config.getoption('muonref_driver_option') + [vectors]
        rc, out, err = _run('driver', argv)
        if rc != 0:
            raise pytest.UsageError(f"the driver failed (exit {rc}): {err.strip() or out.strip()}")
        rc, out, err = _run('check', [muonref, 'check', '--quiet', '--results', results, '--junit', report, vectors])
        if rc not in (0, 1):
            raise pytest.UsageError(f"muonref check failed (exit {rc}): {err.strip() or out.strip()}")
        cases = []
        for tc in ET.parse(report).getroot().iter('testcase'):
            failure = tc.find('failure')
            # the item's name: FILE#TCID (the testcase name goes on with the case's comment)
            cases.append((tc.get('classname'), tc.get('name').split(' ', 1)[0], failure is None,
                          '' if failure is None else (failure.text or failure.get('message') or '')))
        return cases
    finally:
        shutil.rmtree(work, ignore_errors=True)


class MuonrefFailure(Exception):
    """A case muonref's judge failed; its message is the judge's."""


class MuonrefItem(pytest.Item):
    def __init__(self, *, passed, message, **kw):
        super().__init__(**kw)
        self.passed = passed
        self.message = message

    def runtest(self):
        if not self.passed:
            raise MuonrefFailure(self.message)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, MuonrefFailure):
            return f"muonref check: {self.name}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"muonref {self.name}"


class MuonrefArea(pytest.Collector):
    def __init__(self, *, cases, **kw):
        super().__init__(**kw)
        self.cases = cases

    def collect(self):
        for name, passed, message in self.cases:
            yield MuonrefItem.from_parent(self, name=name, passed=passed, message=message)


def pytest_collection_modifyitems(session, config, items):
    if not config.getoption('muonref_optimizer'):
        return
    areas = {}
    for classname, name, passed, message in _verdicts(config):
        areas.setdefault(classname, []).append((name, passed, message))
    for classname, cases in areas.items():
        area = MuonrefArea.from_parent(session, name=f"muonref/{classname}", nodeid=f"muonref/{classname}",
                                       cases=cases)
        items.extend(area.collect())
