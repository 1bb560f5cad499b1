"""pytest plugin: every muonref golden vector case as one pytest item.

    pytest -p pytest_muonref --muonref-optimizer my_port.py:Muon [--muonref-profile nemo]
           [--muonref-mode MODE] [--muonref-ns-format bf16|fp32] [--muonref-adapter NAME] [--muonref-ns-function M:F]
           [--muonref-vectors PATH] [--muonref-driver-option OPT ...] [--muonref-bin PATH]
           [--muonref-baseline FILE] [--muonref-enforce-raw] [VECTOR_FILES_OR_DIRS...]
    pytest -p pytest_muonref --muonref-results RESULTS.json [--muonref-baseline FILE] [...] VECTORS...

(`make install` registers the plugin with pytest, so that `-p pytest_muonref`
may be left out; in a source tree, or when the install's plugin folder is not
on Python's path, put the drivers folder on PYTHONPATH: `make install` says
which folder.)

Collection reads the vector files and makes one item per case, with the node id
`PATH/TO/FILE.json::tcN` (N the case's tcId): `-k`, `--lf`, a node id given on
the command line and `--collect-only` work as for any test file, and nothing is
run while collecting.  Every item carries the marker `muonref` (`-m muonref`)
and its case's flags as keywords (`-k Nesterov`).  When the first item runs,
the plugin runs the port once through torch_driver.py (the driver beside this
file) over the files that hold the selected items, and `muonref check
--results RESULTS --junit REPORT` judges them; each item then passes, or fails
with the judge's message (and its diagnosis, when it gives one).  The judging
stays in C: this file only reads muonref's verdicts.  With --muonref-results the
items are judged from a results file made elsewhere (spec/vectors.md 4: the
driver run by hand, results_writer.py for another framework) and no port runs.

The items agree with `muonref check`'s other reports: a case the baseline
(--muonref-baseline, `muonref check --baseline`) lists is xfail with the
baseline's reason ("known failure: REASON (URL)"), and XPASS when it passes
now (FIXED); the driver's default mode runs the port neutral (judged) and
raw, and a case that fails only raw passes (its note is kept in the item's
user_properties and counted in the terminal summary) unless
--muonref-enforce-raw makes it fail, as `muonref check --enforce-raw` does.

Which files: the paths on pytest's command line (files or folders; `*.json`
files that are muonref vector files are collected, any other file is left to
pytest), else --muonref-vectors PATH, else the PROFILE folder of ./vectors when
it exists, else of the vectors installed beside the driver.  The muonref
command: --muonref-bin, else $MUONREF, else `muonref` on the PATH.

A driver or command failure (bad --muonref-optimizer, a results file muonref
refuses) ends the session as a usage error naming the cause (pytest exit status
4); so does an unknown profile or a missing vectors path, at start-up.  Standard
library and pytest only (Debian's python3-pytest, 7.2).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, 'torch_driver.py')
SCHEMAS = ('muonref-vectors-v1', 'muonref-vectors-v2')


def pytest_addoption(parser):
    g = parser.getgroup('muonref', "muonref golden vectors (vectors/drivers/pytest_muonref.py)")
    g.addoption('--muonref-optimizer', metavar='MODULE_OR_FILE:CLASS',
                help="the PyTorch optimizer to judge; turns the plugin on (the driver's --optimizer)")
    g.addoption('--muonref-profile', default=None, metavar='NAME',
                help="the profile whose vectors are run when no vector path is given (default nemo, said in the "
                     "report header), and whose adapter runs the port (default: the vector files' own profile's)")
    g.addoption('--muonref-vectors', metavar='PATH',
                help="vector files or folder (default: the paths given to pytest, else PROFILE under ./vectors, "
                     "else the installed vectors)")
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
    g.addoption('--muonref-baseline', metavar='FILE',
                help="expected failures (muonref check --baseline): a listed failing case is xfail with its reason, a "
                     "listed passing one XPASS")
    g.addoption('--muonref-enforce-raw', action='store_true',
                help="count the raw run's failures too (muonref check --enforce-raw): by default a case that fails "
                     "only in the raw run (this platform's bf16 arithmetic) passes")
    g.addoption('--muonref-results', metavar='RESULTS.json',
                help="judge this results file instead of running a port (turns the plugin on without "
                     "--muonref-optimizer)")


def _default_vectors(config):
    """The vectors to collect when pytest was given no path: --muonref-vectors, else PROFILE's folder."""
    given = config.getoption('muonref_vectors')
    if given:
        if not os.path.exists(given):
            raise pytest.UsageError(f"--muonref-vectors {given!r}: no such file or folder")
        return os.path.abspath(given)
    profile = config.getoption('muonref_profile') or 'nemo'
    parent = os.path.dirname(HERE)  # $(pkgdatadir) installed, vectors/ in a source tree
    roots = ['vectors', parent if os.path.basename(parent) == 'vectors' else os.path.join(parent, 'vectors')]
    for root in roots:
        if os.path.isdir(root):
            path = os.path.join(root, profile)
            if not os.path.isdir(path):
                have = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)) and d != 'drivers')
                raise pytest.UsageError(f"--muonref-profile {profile!r}: no folder {path!r} (profiles there: {have})")
            return os.path.abspath(path)
    raise pytest.UsageError(f"no vectors: give --muonref-vectors or a vector path (looked in {roots})")


def pytest_configure(config):
    config.addinivalue_line('markers', 'muonref: a muonref golden vector case (pytest_muonref)')
    if not config.getoption('muonref_optimizer') and not config.getoption('muonref_results'):
        return
    for option in ('muonref_results', 'muonref_baseline'):
        given = config.getoption(option)
        if given and not os.path.isfile(given):
            raise pytest.UsageError(f"--{option.replace('_', '-')} {given!r}: no such file")
    if not config.option.file_or_dir:  # no path on the command line: collect the profile's vectors
        config.args[:] = [_default_vectors(config)]
        config._muonref_default = config.args[0]
    config._muonref_run = Run(config)


def pytest_report_header(config):
    """Which vectors and adapter the run uses, where the plugin chose them (no path given, no
    --muonref-profile: nemo's, which the header says rather than choosing silently)."""
    if not getattr(config, '_muonref_run', None):
        return None
    lines = []
    default = getattr(config, '_muonref_default', None)
    if default:
        given = config.getoption('muonref_vectors') or config.getoption('muonref_profile')
        lines.append(f"muonref: vectors {default} ({'given' if given else 'the default profile nemo: --muonref-profile NAME picks another'})")
    adapter = _adapter(config)
    if not config.getoption('muonref_results'):
        lines.append("muonref: adapter " + (adapter or "the vector files' profile's (the driver's default)"))
    return lines


def _adapter(config):
    """The adapter the driver is given: --muonref-adapter, else --muonref-profile's name, else None (the
    driver then takes the vector files' own profile's)."""
    return config.getoption('muonref_adapter') or config.getoption('muonref_profile')


def _is_vector_file(path) -> bool:
    """A JSON file whose `schema` member names a muonref vector format (read cheaply: its head only)."""
    try:
        with open(path, encoding='utf-8') as f:
            head = f.read(4096)
    except OSError:
        return False
    return any(f'"schema": "{s}"' in head or f'"schema":"{s}"' in head for s in SCHEMAS)


def pytest_collect_file(file_path, parent):
    config = parent.config
    if getattr(config, '_muonref_run', None) and file_path.suffix == '.json' and _is_vector_file(file_path):
        return VectorFile.from_parent(parent, path=file_path)
    return None


class VectorFile(pytest.File):
    """A muonref vector file: one item per test case, named tcN."""

    def collect(self):
        try:
            with open(self.path, encoding='utf-8') as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            raise pytest.UsageError(f"{self.path}: not a readable vector file: {e}")
        for group in doc.get('testGroups', []):
            for case in group.get('tests', []):
                item = MuonrefItem.from_parent(self, name=f"tc{case.get('tcId')}", tc_id=case.get('tcId'),
                                               comment=case.get('comment', ''))
                item.add_marker('muonref')
                item.extra_keyword_matches.update(str(flag) for flag in case.get('flags', []))
                yield item


class MuonrefFailure(Exception):
    """A case muonref's judge failed; its message is the judge's."""


class MuonrefItem(pytest.Item):
    def __init__(self, *, tc_id, comment, **kw):
        super().__init__(**kw)
        self.tc_id = tc_id
        self.comment = comment

    def runtest(self):
        verdict = self.config._muonref_run.verdict(self)
        if verdict.note:
            self.user_properties.append(('muonref_note', verdict.note))
        if verdict.known:  # a failure the baseline lists: xfail with its reason
            pytest.xfail(verdict.known)
        if verdict.fixed:  # listed, passes now: XPASS (a non-strict xfail that passed)
            self.add_marker(pytest.mark.xfail(reason=verdict.fixed, strict=False))
        if not verdict.passed:
            raise MuonrefFailure(verdict.message)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, MuonrefFailure):
            return f"muonref check: {self.path.name}#{self.tc_id}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"muonref {self.path.name}#{self.tc_id}: {self.comment}"


class Verdict:
    """One case's verdict as muonref check's JUnit report gives it: passed; message (the
    failure's); known (a baseline's failure: its "known failure: ..." text); fixed (listed in
    the baseline, passes now: the same text); note (a second verdict that does not count)."""

    def __init__(self, passed, message='', known='', fixed='', note=''):
        self.passed, self.message, self.known, self.fixed, self.note = passed, message, known, fixed, note


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Counts the cases that passed with a note (failing an other run that is not enforced)."""
    notes = [r for r in terminalreporter.stats.get('passed', []) if any(k == 'muonref_note' for k, _ in
                                                                          getattr(r, 'user_properties', ()))]
    if notes:
        terminalreporter.write_line(f"muonref: {len(notes)} passing cases fail the raw run (this platform's own bf16 "
                                    "arithmetic), a second verdict not enforced (--muonref-enforce-raw counts it)")


def _run(argv):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc.returncode, proc.stdout, proc.stderr


class Run:
    """The port's one run over the selected items' files, made when the first item runs."""

    def __init__(self, config):
        self.config = config
        self.verdicts = None

    def _muonref(self):
        config = self.config
        cmd = config.getoption('muonref_bin') or os.environ.get('MUONREF') or shutil.which('muonref')
        if not cmd or not os.access(cmd, os.X_OK):
            pytest.exit(f"muonref: cannot find the muonref command ({cmd or 'not on PATH'}): give --muonref-bin",
                        returncode=pytest.ExitCode.USAGE_ERROR)
        return cmd

    def verdict(self, item):
        if self.verdicts is None:
            files = sorted({str(i.path) for i in item.session.items if isinstance(i, MuonrefItem)})
            self.verdicts = self._judge(files)
        got = self.verdicts.get((item.path.name, str(item.tc_id)))
        if got is None:
            return Verdict(False, "muonref check reported no verdict for this case")
        return got

    def _judge(self, files):
        """Runs the driver (unless --muonref-results) and `muonref check`; returns
        {(file name, tcId): Verdict}."""
        config = self.config
        muonref = self._muonref()
        work = tempfile.mkdtemp(prefix='pytest-muonref-')
        try:
            results = config.getoption('muonref_results') or os.path.join(work, 'results.json')
            report = os.path.join(work, 'junit.xml')
            if not config.getoption('muonref_results'):
                # no --adapter unless one was given: the driver takes the vector files' own profile's
                adapter = _adapter(config)
                argv = [sys.executable, DRIVER, '--quiet', '--optimizer', config.getoption('muonref_optimizer')]
                argv += ['--adapter', adapter] if adapter else []
                argv += ['--ns-format', config.getoption('muonref_ns_format'), '--out', results]
                if config.getoption('muonref_mode'):
                    argv += ['--mode=' + config.getoption('muonref_mode')]
                if config.getoption('muonref_ns_function'):
                    argv += ['--ns-function', config.getoption('muonref_ns_function')]
                argv += config.getoption('muonref_driver_option') + files
                rc, out, err = _run(argv)
                if rc != 0:
                    pytest.exit(f"muonref: the driver failed (exit {rc}): {err.strip() or out.strip()}",
                                returncode=pytest.ExitCode.USAGE_ERROR)
            judge = [muonref, 'check', '--quiet', '--results', results, '--junit', report]
            if config.getoption('muonref_baseline'):
                judge += ['--baseline', config.getoption('muonref_baseline')]
            if config.getoption('muonref_enforce_raw'):
                judge += ['--enforce-raw']
            rc, out, err = _run(judge + files)
            if rc not in (0, 1):
                pytest.exit(f"muonref: muonref check failed (exit {rc}): {err.strip() or out.strip()}",
                            returncode=pytest.ExitCode.USAGE_ERROR)
            return {key: verdict for key, verdict in map(_verdict, ET.parse(report).getroot().iter('testcase'))}
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _verdict(tc):
    """((file name, tcId), Verdict) of one <testcase> of muonref check's JUnit report
    (vectors/judge/report.h): <failure> a failure, <skipped> a known one, <system-out> "FIXED: ..."
    or a note on a passing one."""
    # the testcase name: FILE#TCID, then the case's comment
    file_name, _, tc_id = tc.get('name').split(' ', 1)[0].partition('#')
    failure, skipped, out = tc.find('failure'), tc.find('skipped'), tc.findtext('system-out') or ''
    if failure is not None:
        return (file_name, tc_id), Verdict(False, failure.text or failure.get('message') or '')
    if skipped is not None:
        return (file_name, tc_id), Verdict(False, skipped.text or '', known=skipped.get('message') or 'known failure')
    fixed = out.split('\n', 1)[0] if out.startswith('FIXED: ') else ''
    note = out.split('\n', 1)[1] if fixed and '\n' in out else ('' if fixed else out)
    return (file_name, tc_id), Verdict(True, fixed=fixed[len('FIXED: '):], note=note)
