#!/usr/bin/python3
"""muonref drift watcher: what changed upstream in the parts a profile describes.

    vectors/drift.py [--records DIR | --profile-file FILE] [--pinned REV]
                     [--run FILE:CLASS [--vectors PATH ...] [--python PY]] [--muonref PATH]
                     PROFILE REPO REF

PROFILE is a record (spec/profiles/PROFILE.json, or --profile-file); REPO a
local git clone or snapshot (a bare git directory, e.g. one `fetch` made) of
the record's source.repository; REF the commit, tag or branch to compare with
the record's pin (source.commit or source.release; --pinned REV overrides it,
e.g. when the record pins a blob or a commit the clone lacks).

For each file of source.paths it reads the file at the pin and at REF and
reports, for Python files (ast, the standard library): every function or
class defined, added or removed; each function's parameters and each
class's fields (a dataclass's, e.g. Megatron's OptimizerConfig) and their
defaults (added, removed, default changed); function bodies changed
(docstrings and positions ignored); module constants (UPPER_CASE names)
changed; the strings of `raise` and `assert` statements (the messages)
added and removed. Other files: the number of lines added and removed.
Then, of the profile itself: each of its keys (its port's option names,
`keys[].name`, the base's when the record gives none) that was a parameter
at the pin and is none at REF, and, with a muonref program (--muonref, default
./muonref when present), each message of its catalogue (`muonref profile
--json NAME`, "checks") whose literal text was in the files at the pin and
is not at REF.

--run FILE:CLASS also runs the upstream's optimizer class at REF (FILE is a
path in the repository; the tree at REF is exported with `git archive`, its
root put on PYTHONPATH for the upstream's own package imports)
through vectors/drivers/torch_driver.py with the record's test_port adapter
and ns_format, over --vectors (default the profile's folder vectors/PROFILE/
next to this script), and judges the results with `muonref check
--results`: its verdicts and diagnoses are printed.

Exit status: 0 nothing changed in the parts described and the run (if any)
passed; 1 drift (something changed, or the run failed a case); 2 usage or
unusable input (an unknown profile, a repository or revision that is not
there, a file that does not parse, an upstream the driver cannot load, e.g.
for a module PyTorch 1.13 or this Python lacks: the report is printed
first), each named; 3 internal error.
"""

import argparse
import ast
import difflib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.dirname(HERE)


class Unusable(Exception):
    """Bad input: the message names the input and the rule (exit 2)."""


# ---- the record ----

def load_record(path):
    """The record at `path` as a dict; Unusable when absent or not JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise Unusable(f"{path}: cannot read the profile record: {e.strerror}")
    except ValueError as e:
        raise Unusable(f"{path}: not a JSON profile record: {e}")


def record_chain(args):
    """The record and its bases, nearest first (a record's `base` is a record of --records)."""
    if args.profile_file:
        rec = load_record(args.profile_file)
    else:
        path = os.path.join(args.records, args.profile + ".json")
        if not os.path.exists(path):
            raise Unusable(f"profile '{args.profile}': no record {path}")
        rec = load_record(path)
    chain = [rec]
    while chain[-1].get("base") and len(chain) < 16:
        chain.append(load_record(os.path.join(args.records, chain[-1]["base"] + ".json")))
    return chain


def inherited(chain, member):
    """`member` of the nearest record in the chain that gives it (None if none does)."""
    for r in chain:
        if member in r:
            return r[member]
    return None


# ---- git ----

def git(repo, *argv, check=True):
    """The finished `git -C repo argv` (stdout as bytes); Unusable naming the command when it fails and check is set."""
    p = subprocess.run(["git", "-C", repo, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and p.returncode:
        raise Unusable(f"{repo}: git {' '.join(argv)}: {p.stderr.decode(errors='replace').strip()}")
    return p


def resolve(repo, rev, what):
    """The commit `rev` names in repo; Unusable when it is not a commit there."""
    p = git(repo, "cat-file", "-t", rev, check=False)
    kind = p.stdout.decode().strip()
    hint = " (pass --pinned REV)" if what == "the pin" else ""
    if p.returncode:
        raise Unusable(f"{repo}: {what} '{rev}' is not in the repository (fetch it{', or pass --pinned REV' if hint else ''})")
    if kind not in ("commit", "tag"):
        raise Unusable(f"{repo}: {what} '{rev}' is a {kind}, not a commit{hint}")
    return git(repo, "rev-parse", rev + "^{commit}").stdout.decode().strip()


def file_at(repo, commit, path):
    """The text of `path` at `commit`, or None when the file is not there."""
    p = git(repo, "show", f"{commit}:{path}", check=False)
    return p.stdout.decode("utf-8", errors="replace") if p.returncode == 0 else None


# ---- what a Python file describes ----

def _strings(node):
    """The strings of an expression (a message): f-strings with {} for each value, as a catalogue writes them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)]
    return [s for child in ast.iter_child_nodes(node) for s in _strings(child)]


def _body_dump(fn):
    """fn's body without its docstring and positions: equal dumps, equal code."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return "\n".join(ast.dump(s) for s in body)


def _params(fn):
    """{name: default source or None} of fn's parameters, in order."""
    a = fn.args
    pos = a.posonlyargs + a.args
    out = {}
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    for arg, d in zip(pos, defaults):
        out[arg.arg] = ast.unparse(d) if d is not None else None
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out[arg.arg] = ast.unparse(d) if d is not None else None
    return out


def _fields(cls):
    """{name: default source or None} of a class's own annotated or assigned names (a dataclass's fields)."""
    out = {}
    for st in cls.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            out[st.target.id] = ast.unparse(st.value) if st.value is not None else None
        elif isinstance(st, ast.Assign):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = ast.unparse(st.value)
    return out


def describe_python(text, label):
    """{'defs': {qualname: (parameters or class fields, body or bases)}, 'consts': {name: src}, 'messages': set,
    'classes': the qualnames that are classes}; Unusable if it does not parse."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise Unusable(f"{label}: does not parse as Python: line {e.lineno}: {e.msg}")
    defs, consts, messages, classes = {}, {}, set(), set()

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = prefix + child.name
                defs[q] = (_params(child), _body_dump(child))
                walk(child, q + ".")
            elif isinstance(child, ast.ClassDef):
                q = prefix + child.name
                classes.add(q)
                defs[q] = (_fields(child), "\n".join(ast.dump(b) for b in child.bases))
                walk(child, q + ".")
            else:
                if isinstance(child, ast.Raise) and child.exc is not None:
                    messages.update(_strings(child.exc))
                elif isinstance(child, ast.Assert) and child.msg is not None:
                    messages.update(_strings(child.msg))
                elif not prefix and isinstance(child, ast.Assign):
                    for t in child.targets:
                        if isinstance(t, ast.Name) and t.id.isupper():
                            consts[t.id] = ast.unparse(child.value)
                walk(child, prefix)

    walk(tree, "")
    return {"defs": defs, "consts": consts, "messages": messages, "classes": classes}


def _dict_entries(src):
    """{key source: value source} of a dict literal's source, or None when src is not one."""
    try:
        node = ast.parse(src, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Dict) or None in node.keys:
        return None
    return {ast.unparse(k): ast.unparse(v) for k, v in zip(node.keys, node.values)}


def compare_constant(old, new):
    """The changes of one module constant (sources, None when absent): a dict literal entry by entry."""
    if old == new:
        return []
    if old is None or new is None:
        return [" added" if old is None else " removed"]
    da, db = _dict_entries(old), _dict_entries(new)
    if da is None or db is None:
        return [f" {old} -> {new}" if len(old) + len(new) < 160 else " changed"]
    return [f"[{k}] {da.get(k, '(none)')} -> {db.get(k, '(none)')}" if k in da and k in db
            else f"[{k}] {'added' if k in db else 'removed'}" for k in sorted(da.keys() | db.keys()) if da.get(k) != db.get(k)]


def compare_python(path, old, new):
    """Report lines for one Python file between the pin (old) and REF (new)."""
    a = describe_python(old, f"{path} at the pin")
    b = describe_python(new, f"{path} at REF")
    out = []
    for q in sorted(a["defs"].keys() - b["defs"].keys()):
        out.append(f"{path}: {q}: removed")
    for q in sorted(b["defs"].keys() - a["defs"].keys()):
        out.append(f"{path}: {q}: added")
    for q in sorted(a["defs"].keys() & b["defs"].keys()):
        (pa, ba), (pb, bb) = a["defs"][q], b["defs"][q]
        is_class = q in a["classes"]
        what = "field" if is_class else "parameter"
        for n in pa:
            if n not in pb:
                out.append(f"{path}: {q}: {what} {n} removed")
            elif pa[n] != pb[n]:
                out.append(f"{path}: {q}: default {n} {pa[n]} -> {pb[n]}")
        for n in pb:
            if n not in pa:
                out.append(f"{path}: {q}: {what} {n} added (default {pb[n]})")
        if ba != bb:
            out.append(f"{path}: {q}: {'bases' if is_class else 'body'} changed")
    for n in sorted(a["consts"].keys() | b["consts"].keys()):
        out += [f"{path}: constant {n}{d}" for d in compare_constant(a["consts"].get(n), b["consts"].get(n))]
    for m in sorted(a["messages"] - b["messages"]):
        out.append(f"{path}: message removed: {m!r}")
    for m in sorted(b["messages"] - a["messages"]):
        out.append(f"{path}: message added: {m!r}")
    return out, a, b


def compare_text(path, old, new):
    """Report lines for a file that is not Python: lines added and removed."""
    plus = minus = 0
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            plus += 1
        elif line.startswith("-") and not line.startswith("---"):
            minus += 1
    return [f"{path}: text changed: {plus} lines added, {minus} removed"] if plus or minus else []


# ---- the profile's own parts: keys and catalogue messages ----

def catalogue_messages(muonref, name):
    """The literal fragments of the profile's catalogue messages (`muonref profile --json`), or [] without muonref."""
    if not muonref:
        return []
    p = subprocess.run([muonref, "profile", "--json", name], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode:
        return []  # a user profile muonref does not know: no catalogue to compare
    checks = json.loads(p.stdout).get("checks") or []
    out = []
    for c in checks:
        msg = c.get("message") if isinstance(c, dict) else None
        if msg:
            out.append((msg, max(msg.split("{}"), key=len)))
    return out


def compare_profile(chain, muonref, old_parts, new_parts, old_text, new_text):
    """Report lines for the record's keys and catalogue messages that the pin had and REF lost."""
    out = []
    params_old = set().union(*[set(p or ()) for d in old_parts for (p, _) in d["defs"].values()])
    params_new = set().union(*[set(p or ()) for d in new_parts for (p, _) in d["defs"].values()])
    for k in inherited(chain, "keys") or []:
        n = k.get("name")
        if n in params_old and n not in params_new:
            out.append(f"key {n}: a parameter or field at the pin, none in the files at REF")
    for msg, frag in catalogue_messages(muonref, chain[0].get("name", "")):
        if frag and frag in old_text and frag not in new_text:
            out.append(f"catalogue message {msg!r}: in the files at the pin, not at REF")
    return out


# ---- running the upstream at REF through the driver ----

def run_upstream(args, chain, repo, commit):
    """Exit status of `muonref check` on the driver's results of FILE:CLASS at REF; prints both outputs."""
    port = inherited(chain, "test_port") or {}
    name = chain[0].get("name", args.profile)
    vectors = args.vectors or [os.path.join(HERE, name)]
    with tempfile.TemporaryDirectory(prefix="muonref-drift.") as tmp:
        tree = os.path.join(tmp, "tree")
        os.mkdir(tree)
        archive = git(repo, "archive", "--format=tar", commit).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        file, _, cls = args.run.rpartition(":")
        if not file or not os.path.isfile(os.path.join(tree, file)):
            raise Unusable(f"--run {args.run}: no file {file or '(none)'} in {repo} at {args.ref} (FILE:CLASS)")
        results = os.path.join(tmp, "results.json")
        drv = [args.python, os.path.join(HERE, "drivers", "torch_driver.py"), "-q",
               "--optimizer", f"{os.path.join(tree, file)}:{cls}",
               "--adapter", port.get("adapter", name), "--ns-format", port.get("ns_format", "bf16"),
               "--out", results, *vectors]
        env = dict(os.environ)  # the tree's root on the path: the upstream's own package imports
        env["PYTHONPATH"] = tree + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        p = subprocess.run(drv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        if p.returncode or not os.path.exists(results):
            print(p.stdout.decode(errors="replace"), end="")
            print(f"run: the driver failed on {file}:{cls} at {args.ref} (exit {p.returncode})")
            return 2 if p.returncode == 2 else 1  # 2: it could not load or drive the upstream (its message above)
        c = subprocess.run([args.muonref, "check", "--results", results, *vectors],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        print(c.stdout.decode(errors="replace"), end="")
        print(f"run: {file}:{cls} at {args.ref} against {' '.join(vectors)}: muonref check exit {c.returncode}")
        if c.returncode not in (0, 1):
            raise Unusable(f"muonref check --results could not judge the run (exit {c.returncode})")
        return c.returncode


# ---- main ----

def parse_args(argv):
    ap = argparse.ArgumentParser(description="Report what changed upstream in the parts a muonref profile describes.")
    ap.add_argument("profile", metavar="PROFILE", help="a record's name (spec/profiles/PROFILE.json)")
    ap.add_argument("repo", metavar="REPO", help="a local git clone or bare snapshot of the record's repository")
    ap.add_argument("ref", metavar="REF", help="the commit, tag or branch to compare with the pin")
    ap.add_argument("--records", default=os.path.join(SRCDIR, "spec", "profiles"), help="the records' folder")
    ap.add_argument("--profile-file", help="a record outside --records (its base is looked up in --records)")
    ap.add_argument("--pinned", help="the revision to compare from (default the record's source.commit or release)")
    ap.add_argument("--run", metavar="FILE:CLASS", help="run this optimizer class of the tree at REF through the driver")
    ap.add_argument("--vectors", nargs="+", help="vector files or folders for --run (default vectors/PROFILE/)")
    ap.add_argument("--python", default=os.environ.get("MUONREF_TORCH_PYTHON", sys.executable),
                    help="the Python with PyTorch for --run (default $MUONREF_TORCH_PYTHON, else this one)")
    default_muonref = "./muonref" if os.access("./muonref", os.X_OK) else None
    ap.add_argument("--muonref", default=default_muonref, help="the muonref program (catalogue messages, --run)")
    args = ap.parse_args(argv)
    if args.run and not args.muonref:
        ap.error("--run needs a muonref program (--muonref PATH)")
    return args


def main(argv):
    args = parse_args(argv)
    chain = record_chain(args)
    source = inherited(chain, "source") or {}
    pin = args.pinned or source.get("commit") or source.get("release")
    if not pin:
        raise Unusable(f"profile '{args.profile}': its record has no source.commit or release (pass --pinned REV)")
    if not os.path.isdir(args.repo):
        raise Unusable(f"{args.repo}: not a directory (a git clone or snapshot of {source.get('repository')})")
    old_c, new_c = resolve(args.repo, pin, "the pin"), resolve(args.repo, args.ref, "REF")
    print(f"{args.profile}: {source.get('repository', '?')} {pin} ({old_c[:12]}) -> {args.ref} ({new_c[:12]})")
    report, old_parts, new_parts, old_all, new_all = [], [], [], "", ""
    for path in source.get("paths") or []:
        old, new = file_at(args.repo, old_c, path), file_at(args.repo, new_c, path)
        if old is None:
            raise Unusable(f"{args.repo}: the record's file {path} is not at the pin {pin}")
        if new is None:
            report.append(f"{path}: not at {args.ref} (removed or moved)")
            continue
        old_all, new_all = old_all + old, new_all + new
        if path.endswith(".py"):
            lines, a, b = compare_python(path, old, new)
            old_parts.append(a), new_parts.append(b)
            report += lines
        else:
            report += compare_text(path, old, new)
    report += compare_profile(chain, args.muonref, old_parts, new_parts, old_all, new_all)
    for line in report:
        print(line)
    print(f"{len(report)} change(s) in the parts the profile describes")
    status = 1 if report else 0
    if args.run:
        status = max(status, run_upstream(args, chain, args.repo, new_c))
    return status


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Unusable as e:
        print(f"drift.py: {e}", file=sys.stderr)
        sys.exit(2)
    except Exception as e:  # an internal error: say so, exit 3
        print(f"drift.py: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(3)
