"""tests/lib/plan.sh's cache of driver results (MUONREF_PLAN_CACHE), one process per plan.

    plan_cache.py take  PLAN WORK SRCDIR CACHE   # results known to CACHE written; PLAN keeps the rest
    plan_cache.py store PLAN WORK SRCDIR CACHE   # the results PLAN's runs wrote, into CACHE

A plan line's key is the line without its `--out PATH` (where the results
go is no input of the run), with WORK written as <work> and SRCDIR as
<srcdir> (in that order), hashed (SHA-256); CACHE/KEY.json holds the
results with SRCDIR written as <srcdir> (a results file names the port's
file, and the two builds of .ci/run have two source folders).

take: for each line whose CACHE/KEY.json exists and is not empty, the
results go to the line's --out path (SRCDIR put back) and a line
"plan.sh: NAME from the cache CACHE" to WORK/plan.cached; PLAN is
rewritten with the other lines.  store: each line's --out file that exists
and is not empty goes to CACHE/KEY.json, whole or not at all (a temporary
file renamed: another test may be reading the same key).

Standard library only; the tests call it once per plan_run (it was a sed,
an awk and a cksum per line: seconds for the cross matrix's 306 runs).
Exit status 0, or 2 for a usage error.
"""
import hashlib
import os
import re
import sys
import tempfile


# a line as plan_add writes it: --out, its path in single quotes, a space, the run's options
OUT = re.compile(r"^--out '([^']*)' ")


def parse(line: str):
    """(the --out path or None, the line without it)."""
    m = OUT.match(line)
    return (m.group(1), line[m.end():]) if m else (None, line)


def key(rest: str, work: str, srcdir: str) -> str:
    if work:
        rest = rest.replace(work, '<work>')
    if srcdir:
        rest = rest.replace(srcdir, '<srcdir>')
    return hashlib.sha256(rest.encode('utf-8', 'surrogateescape')).hexdigest()


def read_text(path: str) -> str:
    with open(path, encoding='utf-8', errors='surrogateescape') as f:
        return f.read()


def write_whole(path: str, text: str) -> None:
    """path <- text through a temporary file in the same folder, renamed."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or '.', prefix='.plan-cache.')
    try:
        with os.fdopen(fd, 'w', encoding='utf-8', errors='surrogateescape') as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def take(plan: str, work: str, srcdir: str, cache: str) -> None:
    lines = read_text(plan).splitlines()
    to_run, cached = [], []
    for line in lines:
        out, rest = parse(line)
        k = os.path.join(cache, key(rest, work, srcdir) + '.json')
        if out and os.path.isfile(k) and os.path.getsize(k) > 0:
            try:
                write_whole(out, read_text(k).replace('<srcdir>', srcdir))
                cached.append(f"plan.sh: {os.path.basename(out)} from the cache {cache}\n")
                continue
            except OSError:
                pass
        to_run.append(line + '\n')
    if cached:
        with open(os.path.join(work, 'plan.cached'), 'a', encoding='utf-8') as f:
            f.writelines(cached)
    write_whole(plan, ''.join(to_run))


def store(plan: str, work: str, srcdir: str, cache: str) -> None:
    for line in read_text(plan).splitlines():
        out, rest = parse(line)
        if out and os.path.isfile(out) and os.path.getsize(out) > 0:
            write_whole(os.path.join(cache, key(rest, work, srcdir) + '.json'),
                        read_text(out).replace(srcdir, '<srcdir>') if srcdir else read_text(out))


def main(argv) -> int:
    if len(argv) != 6 or argv[1] not in ('take', 'store'):
        sys.stderr.write("usage: plan_cache.py take|store PLAN WORK SRCDIR CACHE\n")
        return 2
    _, what, plan, work, srcdir, cache = argv
    os.makedirs(cache, exist_ok=True)
    (take if what == 'take' else store)(plan, work, srcdir, cache)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
