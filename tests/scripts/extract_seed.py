#!/usr/bin/python3
"""Extracts a file added by a pull request from a seed text of the project's shared seeds.

A seed (e.g. ../shared/seeds/003_*.txt, beside the source tree in CI) is a
pull request as a web page renders it: a line per file,

    nemo/core/optim/muon.pyadded314 + / 0 −

and on the next line the file's diff, ONE line in which every newline of
the diff became nothing and every added line starts with '+':

    @@ -0,0 +1,314 @@+# SPDX-...+# SPDX-License-Identifier: Apache-2.0+#+...

So a '+' either starts a line or is one of the file's own characters.  The
rule used here: a '+' is the file's own character (an operator) when it
follows a space and precedes a space or '=' ("a + b", "x += 1") on a line
that has something besides blanks, or when it is the sign of a float
exponent ("1e+7"); every other '+' starts a new line.  That can go wrong
only for a line ending in a blank followed by a line starting with a
blank or '=', so two self-checks decide whether the result is the file:
the hunk header's line count (+1,N) and the file line's count must equal
the number of lines produced, and a .py file must parse (ast.parse).

Only whole added files (one hunk "@@ -0,0 +1,N @@") are extracted.

    extract_seed.py SEED FILE_PATH OUT      # writes OUT; exit 0
    extract_seed.py --find SEEDS_DIR FILE_PATH   # prints the seed holding FILE_PATH; exit 0, or 1

Exit status: 0 written; 1 the self-checks failed or the file is not in the
seed (a message says which); 2 usage.
Standard library only.
"""

import ast
import os
import re
import sys
from typing import List, Optional, Tuple

HUNK = re.compile(r'^@@ -0,0 \+1,(\d+) @@')


def file_line(path: str) -> re.Pattern:
    """The seed's line announcing an added file: PATH 'added' N ' + / 0 −'."""
    return re.compile(r'^' + re.escape(path) + r'added(\d+) \+ / 0 \S+\s*$')


def find_body(text: str, path: str) -> Tuple[int, str]:
    """(N announced on the file line, the diff line that follows it)."""
    lines = text.split('\n')
    pattern = file_line(path)
    for i, line in enumerate(lines):
        m = pattern.match(line)
        if m:
            if i + 1 >= len(lines):
                raise ValueError(f"{path}: no diff after its file line")
            return int(m.group(1)), lines[i + 1]
    raise LookupError(f"{path}: not an added file of this seed")


def split_added_lines(body: str) -> List[str]:
    """The added lines of a one-line diff body (the hunk header already removed)."""
    if not body.startswith('+'):
        raise ValueError("the diff body does not start with '+'")
    out: List[str] = []
    cur: Optional[str] = None  # None before the first '+'
    n = len(body)
    i = 0
    while i < n:
        ch = body[i]
        if ch == '+' and cur is not None:
            prev = body[i - 1]
            nxt = body[i + 1] if i + 1 < n else ''
            operator = prev == ' ' and nxt in (' ', '=') and cur.strip() != ''
            exponent = prev in 'eE' and nxt.isdigit() and re.search(r'[0-9.][eE]$', cur) is not None
            if operator or exponent:
                cur += ch
            else:
                out.append(cur)
                cur = ''
        elif ch == '+':
            cur = ''
        else:
            cur += ch
        i += 1
    out.append(cur if cur is not None else '')
    return out


def extract(seed: str, path: str) -> str:
    """The text of the added file PATH, self-checked; raises ValueError/LookupError."""
    with open(seed, encoding='utf-8') as f:
        text = f.read()
    announced, line = find_body(text, path)
    m = HUNK.match(line)
    if not m:
        raise ValueError(f"{path}: the diff does not start with a hunk '@@ -0,0 +1,N @@' (not a whole added file)")
    count = int(m.group(1))
    lines = split_added_lines(line[m.end():])
    if count != announced:
        raise ValueError(f"{path}: the file line announces {announced} lines, the hunk header {count}")
    if len(lines) != count:
        raise ValueError(f"{path}: self-check failed: the hunk header says {count} lines, the split gave {len(lines)}")
    source = '\n'.join(lines) + '\n'
    if path.endswith('.py'):
        try:
            ast.parse(source, filename=path)
        except SyntaxError as exc:
            raise ValueError(f"{path}: self-check failed: the result does not parse: line {exc.lineno}: {exc.msg}") from None
    return source


def find_seed(seeds_dir: str, path: str) -> Optional[str]:
    """The first seed (by name) of seeds_dir that adds PATH."""
    pattern = file_line(path)
    for name in sorted(os.listdir(seeds_dir)):
        full = os.path.join(seeds_dir, name)
        if not name.endswith('.txt') or not os.path.isfile(full):
            continue
        with open(full, encoding='utf-8', errors='replace') as f:
            if any(pattern.match(line) for line in f):
                return full
    return None


def main(argv: List[str]) -> int:
    if len(argv) == 3 and argv[0] == '--find':
        found = find_seed(argv[1], argv[2])
        if found is None:
            sys.stderr.write(f"extract_seed.py: no seed in {argv[1]} adds {argv[2]}\n")
            return 1
        print(found)
        return 0
    if len(argv) != 3 or argv[0].startswith('-'):
        sys.stderr.write("usage: extract_seed.py SEED FILE_PATH OUT | extract_seed.py --find SEEDS_DIR FILE_PATH\n")
        return 2
    seed, path, out = argv
    try:
        source = extract(seed, path)
    except (OSError, ValueError, LookupError) as exc:
        sys.stderr.write(f"extract_seed.py: {seed}: {exc}\n")
        return 1
    with open(out, 'w', encoding='utf-8') as f:
        f.write(source)
    sys.stderr.write(f"extract_seed.py: {path}: {source.count(chr(10))} lines, parses; -> {out}\n")
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
