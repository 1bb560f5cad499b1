#!/bin/sh
# muonref test: docs/ci.md's workflows are valid YAML of the expected shape
# (GitHub Actions: jobs.*.steps with run/uses; GitLab: a job with script and
# artifacts.reports.junit), and every command in them is documented:
#  - the build commands (.ci/install-deps, autoreconf -fi, ./configure,
#    make -j2, make install) appear in README.md;
#  - `muonref SUB ...`: SUB is in `muonref --help` and in the README's command
#    table, and each option is in `muonref SUB --help`;
#  - the driver: its installed path matches Makefile.am's layout and each
#    option is in `torch_driver.py --help`;
#  - pytest: each option is in `pytest --help` with the plugin loaded;
#  - the JUnit file the judge writes is the one the workflows publish.
# A made-up option is caught (the check can fail).  Prints a Check-style
# summary.  Exit 0 pass, 1 fail, 77 skip (no python3-yaml or pytest).
src=${MUONREF_SRCDIR:-.}
muonref=${MUONREF:-./muonref}
python=${MUONREF_TORCH_PYTHON:-/usr/bin/python3}
"$python" -c 'import yaml, pytest' 2>/dev/null || { echo "SKIP: $python lacks yaml or pytest"; exit 77; }
case $muonref in /*) ;; *) muonref=$PWD/$muonref ;; esac
PYTHONPATH="$src/vectors/drivers" exec "$python" - "$src" "$muonref" <<'PY'
import re, shlex, subprocess, sys, yaml
src, muonref = sys.argv[1], sys.argv[2]
doc = open(f"{src}/docs/ci.md", encoding="utf-8").read()
readme = open(f"{src}/README.md", encoding="utf-8").read()
makefile = open(f"{src}/Makefile.am", encoding="utf-8").read()
checks = fails = 0
quiet = False  # the self-check at the end counts its own failure silently

def check(ok, what, msg):
    global checks, fails
    checks += 1
    if not ok:
        fails += 1
        if not quiet:
            print(f"ci-doc:0:F:ci:{what}:0: {msg}")

def out(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.stdout

top = out([muonref, "--help"])
subcommands = re.findall(r"^  ([a-z]+)\s", top, re.M)
driver = f"{src}/vectors/drivers/torch_driver.py"
helps = {"driver": out([sys.executable, driver, "--help"]),
         "pytest": out([sys.executable, "-m", "pytest", "-p", "no:muonref", "-p", "pytest_muonref", "--help"])}

def options_of(tokens):
    return [t.split("=", 1)[0] for t in tokens if t.startswith("-")]

def check_command(cmd, where):
    """One simple command of the doc."""
    try:
        tokens = shlex.split(cmd)
    except ValueError as e:
        check(False, where, f"cannot split {cmd!r}: {e}")
        return
    if not tokens:
        return
    word = tokens[0]
    if word == "muonref":
        sub = tokens[1] if len(tokens) > 1 else ""
        check(sub in subcommands, where, f"muonref {sub}: not a command of muonref --help")
        check(f"muonref {sub}" in readme, where, f"muonref {sub}: not in README.md")
        h = out([muonref, sub, "--help"])
        for o in options_of(tokens[2:]):
            check(re.search(rf"(^|[\s\[(|]){re.escape(o)}\b", h) is not None, where, f"muonref {sub} {o}: not in its --help")
    elif word.endswith("python3") and len(tokens) > 1 and tokens[1].endswith("torch_driver.py"):
        check(tokens[1] == "/usr/local/share/muonref/drivers/torch_driver.py"
              and "torchdriverdir = $(pkgdatadir)/drivers" in makefile, where,
              f"{tokens[1]}: not where make install puts the driver")
        for o in options_of(tokens[2:]):
            check(re.search(rf"(^|[\s\[(|]){re.escape(o)}\b", helps["driver"]) is not None, where,
                  f"torch_driver.py {o}: not in its --help")
    elif word == "pytest":
        for o in options_of(tokens[1:]):
            check(re.search(rf"(^|[\s\[(|,]){re.escape(o)}\b", helps["pytest"]) is not None, where,
                  f"pytest {o}: not in pytest --help with the plugin")
    elif word in (".ci/install-deps", "autoreconf", "./configure", "make"):
        check(cmd.strip() in readme, where, f"{cmd.strip()!r}: not a command of README.md")
    else:
        check(word in ("apt-get", "git", "cd", "ldconfig", "prove"), where, f"{word}: a command the test does not know")

def check_script(text, where):
    for line in text.splitlines():
        for part in re.split(r"&&|\|\||;|\|", line.split(" #")[0]):
            check_command(part.split(">")[0], where)

blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
check(len(blocks) == 2, "blocks", f"{len(blocks)} yaml blocks, expected 2 (GitHub Actions, GitLab CI)")
gha, gitlab = (yaml.safe_load(b) for b in blocks[:2])
steps = gha["jobs"]["muonref"]["steps"]
check(all(("run" in s) != ("uses" in s) for s in steps), "gha", "a step needs exactly one of run and uses")
check(gha["jobs"]["muonref"]["container"] == "debian:12", "gha", "the job does not run in debian:12")
for s in steps:
    if "run" in s:
        check_script(s["run"], f"gha:{s.get('name')}")
published = [s["with"]["report_paths"] for s in steps if "junit-report" in s.get("uses", "")]
job = gitlab["muonref"]
check(job["image"] == "debian:12", "gitlab", "the job does not run in debian:12")
for key in ("before_script", "script"):
    for line in job[key]:
        check_script(line, f"gitlab:{key}")
published.append(job["artifacts"]["reports"]["junit"])
check(job["artifacts"]["when"] == "always", "gitlab", "the report is not kept when the job fails")
written = re.findall(r"--junit (\S+)", doc)
check(written and all(p == written[0] for p in published) and len(published) == 2, "junit",
      f"the workflows publish {published}, the judge writes {written[:1]}")
for inline in re.findall(r"`((?:muonref|pytest) [^`]*)`", doc):
    check_script(inline, "inline")
# the test can fail: a made-up option is caught
before, before_checks, quiet = fails, checks, True
check_command("muonref check --results r.json --no-such-option", "self-check")
caught = fails > before
fails, checks, quiet = before, before_checks, False
check(caught, "self-check", "a made-up option passes")
print(f"{(checks - fails) * 100 // checks}%: Checks: {checks}, Failures: {fails}, Errors: 0")
sys.exit(1 if fails else 0)
PY
