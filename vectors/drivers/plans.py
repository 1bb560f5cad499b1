"""The driver's many-run form: `torch_driver.py --plan FILE [--jobs N] [-q|-v]`.

Starting Python and importing torch costs seconds; a test that runs eleven
ports over eleven profiles paid it 121 times.  A plan runs many runs in one
process.  FILE ('-': standard input) holds one run per line: the options and
vector paths of the one-run command line, as shell words (shlex, POSIX
rules: quotes and backslashes as in sh; '#' starts a comment; blank lines
are skipped), e.g.

    --mode neutral --optimizer tests/ports/torch_nemo_port.py:Muon --adapter nemo --out work/a.json vectors/nemo
    -q --lifecycle training-loop --optimizer tests/ports/torch_torch_port.py:Muon --adapter torch --out work/b.json vectors/torch

Every line is parsed first: a line the one-run parser refuses, or one that
holds --plan, --jobs or --world-size (whose rank processes must be forked
before any computation: run it alone), stops the plan with exit 2 naming
the line, before anything runs.  Then the runs run in the order of the
lines; each writes its own --out file, byte for byte the file the one-run
form writes, and prints what the one-run form prints (its -q / -v), its
messages prefixed with "plan line N: ".  The platform probe runs once per
process (it measures the platform, not the port).

Isolation.  Before each run the process is put back as it was when the
plan started: torch's random number generator state, default dtype,
intra-op thread count, grad mode, anomaly detection and deterministic
algorithms; sys.path, the working directory, os.environ and the warnings
filters; and every module the previous run imported from outside the
Python installation (the port's file and its siblings, a port module of the
working directory) is removed from sys.modules, so that each run loads the
port afresh as a new module object and a run that patches a module cannot
reach the next.  Modules of the installation (torch, the standard library,
an installed package) are imported once.  A run that raises (an error of
the driver, a port calling sys.exit at import) is reported with its
traceback as exit 3 of that run; the plan goes on.

--jobs N forks N worker processes before any run (torch imported, nothing
computed yet, as distributed.py forks its ranks); each takes the next run
in turn, and the runs' messages are printed in the order of the lines.

Exit status: the largest of the runs' (0 every results file written; 2 a
run's bad input, e.g. a vector path that does not exist; 3 a run that
raised); 2 for an unusable plan.  Unless -q, a closing line counts the runs
by exit status.

Standard library and torch only.
"""

import argparse
import contextlib
import io
import os
import shlex
import site
import sys
import sysconfig
import traceback
import warnings
from typing import Any, List, Tuple

import torch

_PLAN_ONLY = ('plan', 'jobs', 'quiet', 'verbose')  # the command-line options of the form


def _installed_roots() -> Tuple[str, ...]:
    """The folders of the Python installation: the standard library and every site-packages."""
    roots = set()
    for key in ('stdlib', 'platstdlib', 'purelib', 'platlib'):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.realpath(path))
    for path in site.getsitepackages() + [site.getusersitepackages()]:
        roots.add(os.path.realpath(path))
    return tuple(r.rstrip(os.sep) + os.sep for r in roots)


def _installed(module: Any, roots: Tuple[str, ...]) -> bool:
    path = getattr(module, '__file__', None)
    if not isinstance(path, str):
        return True  # built in, or a namespace package: nothing to load afresh
    return os.path.realpath(path).startswith(roots)


class Isolation:
    """The process state a run may change, as it was when taken (see the module)."""

    def __init__(self):
        self.rng = torch.get_rng_state()
        self.dtype = torch.get_default_dtype()
        self.threads = torch.get_num_threads()
        self.grad = torch.is_grad_enabled()
        self.anomaly = torch.is_anomaly_enabled()
        self.deterministic = torch.are_deterministic_algorithms_enabled()
        self.path = list(sys.path)
        self.cwd = os.getcwd()
        self.environ = dict(os.environ)
        self.filters = list(warnings.filters)
        self.modules = set(sys.modules)
        self.roots = _installed_roots()

    def restore(self) -> None:
        for name in [n for n in sys.modules if n not in self.modules]:
            if not _installed(sys.modules[name], self.roots):
                del sys.modules[name]
        sys.path[:] = self.path
        if os.getcwd() != self.cwd:
            os.chdir(self.cwd)
        for key in [k for k in os.environ if k not in self.environ]:
            del os.environ[key]
        os.environ.update(self.environ)
        warnings.filters[:] = self.filters
        warnings._filters_mutated()
        torch.set_rng_state(self.rng)
        torch.set_default_dtype(self.dtype)
        if torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        torch.set_grad_enabled(self.grad)
        torch.set_anomaly_enabled(self.anomaly)
        torch.use_deterministic_algorithms(self.deterministic)


def read_plan(path: str, driver: Any) -> List[Tuple[int, argparse.Namespace]]:
    """(line number, parsed options) of every run of the plan.  Raises driver.UsageError naming the
    line that cannot be read or parsed."""
    try:
        if path == '-':
            text = sys.stdin.read()
        else:
            with open(path, encoding='utf-8') as f:
                text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise driver.UsageError(f"--plan {path!r}: cannot read: {exc}") from None
    runs = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise driver.UsageError(f"--plan {path!r} line {n}: {exc}") from None
        if not words:
            continue
        try:
            args = driver.make_parser(raising=True).parse_args(words)
            if args.plan is not None or args.jobs != 1:
                raise driver.UsageError("--plan and --jobs go on the command line, not in a plan")
            if args.world_size is not None:
                raise driver.UsageError("--world-size is not available in a plan (its rank processes are forked "
                                        "before any computation): run it alone")
            driver.required(args)
        except driver.UsageError as exc:
            raise driver.UsageError(f"--plan {path!r} line {n}: {exc}") from None
        runs.append((n, args))
    if not runs:
        raise driver.UsageError(f"--plan {path!r}: no run (every line is blank or a comment)")
    return runs


def run_isolated(driver: Any, n: int, args: argparse.Namespace, state: Isolation) -> int:
    """Runs plan line n; puts the process back as `state` holds it afterwards; never raises but
    KeyboardInterrupt."""
    try:
        return driver.run(args, label=f"plan line {n}: ")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - a run never stops the plan (SystemExit included)
        sys.stderr.write(f"torch_driver.py: plan line {n}: the run raised {type(exc).__name__}: {exc}\n")
        traceback.print_exc(file=sys.stderr)
        return 3
    finally:
        state.restore()


# what a forked worker reads (set before the fork)
_WORK: dict = {}


def _worker(i: int) -> Tuple[int, str]:
    """One run in a --jobs worker: its exit status and what it printed on standard error."""
    n, args = _WORK['runs'][i]
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        status = run_isolated(_WORK['driver'], n, args, _WORK['state'])
    return status, buf.getvalue()


def run_plan(argv_args: argparse.Namespace, driver: Any) -> int:
    """The many-run form (see the module); argv_args: the command line, parsed."""
    defaults = vars(driver.make_parser().parse_args([]))
    extra = sorted(k for k, v in vars(argv_args).items() if k not in _PLAN_ONLY and v != defaults.get(k))
    try:
        if extra:
            raise driver.UsageError("--plan takes each run's options from its lines; on the command line only "
                                    f"--jobs, -q and -v (got {', '.join(extra)})")
        if not 1 <= argv_args.jobs <= 64:
            raise driver.UsageError(f"--jobs {argv_args.jobs}: expected 1 to 64")
        runs = read_plan(argv_args.plan, driver)
    except driver.UsageError as exc:
        sys.stderr.write(f"torch_driver.py: {exc}\n")
        return 2
    state = Isolation()
    statuses = []
    jobs = min(argv_args.jobs, len(runs))
    if jobs == 1:
        for n, args in runs:
            if argv_args.verbose:
                sys.stderr.write(f"torch_driver.py: plan line {n}: running\n")
            statuses.append(run_isolated(driver, n, args, state))
    else:
        import multiprocessing
        _WORK.update(runs=runs, driver=driver, state=state)
        with multiprocessing.get_context('fork').Pool(jobs) as pool:
            for status, text in pool.imap(_worker, range(len(runs))):
                sys.stderr.write(text)
                statuses.append(status)
    if not argv_args.quiet:
        by = {s: statuses.count(s) for s in sorted(set(statuses))}
        sys.stderr.write(f"torch_driver.py: plan {argv_args.plan}: {len(runs)} runs"
                         f"{f' in {jobs} processes' if jobs > 1 else ''}, "
                         + ', '.join(f"{k} exit {s}" for s, k in by.items()) + "\n")
    return max(statuses)
