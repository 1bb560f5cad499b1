"""The profile records (spec/profiles/NAME.json) as torch_driver.py reads them: a user's record
(--profile-file) and the test port of the built-in profile it is based on.

A user's record (spec/profiles/README.md, "A user profile") names a built-in `base` and what
differs from it: defaults, and `rename_keys` (the port's own spelling of a key).  Its vectors
(`muonref gen --profile-file`) name the record's profile and give each group's options in the
port's own names, so the driver needs from the record only its name (the vectors it runs in
the port's names) and its base (the adapter of the base's test port: how the port takes its
options, reads back its state and calls its Newton-Schulz function).  The C reader checks a
record completely (`muonref profile --profile-file FILE` names the member and the rule); this
module reads the members it uses and refuses a record without them.

Where the built-in records are (folder()): $MUONREF_RECORDS if set; else the source tree's
spec/profiles (this file is vectors/drivers/records.py); else the installed copy,
$(pkgdatadir)/profiles (this file is $(pkgdatadir)/drivers/records.py).

Standard library only.
"""

import json
import os
from typing import Any, Dict

HERE = os.path.dirname(os.path.abspath(__file__))


class RecordError(Exception):
    """A record that cannot be found or read; the message names the file and the member."""


def folder() -> str:
    """The folder of the built-in records (module docstring).  Raises RecordError when none holds them."""
    env = os.environ.get('MUONREF_RECORDS')
    if env:
        return env
    for d in (os.path.join(HERE, '..', '..', 'spec', 'profiles'), os.path.join(HERE, '..', 'profiles')):
        if os.path.isfile(os.path.join(d, 'profile.schema.json')):
            return os.path.normpath(d)
    raise RecordError(f"no profile records: neither the source tree's spec/profiles nor the installed profiles/ "
                      f"beside {HERE} holds profile.schema.json (set MUONREF_RECORDS to their folder)")


def builtin_names() -> set:
    """The names of the built-in profiles: the records in folder(), by file name.  Raises RecordError
    when the folder cannot be listed or holds no profile.schema.json (MUONREF_RECORDS naming a
    missing or foreign folder)."""
    d = folder()
    try:
        names = os.listdir(d)
    except OSError as exc:
        raise RecordError(f"profile records {d!r}: cannot list: {exc}") from None
    if 'profile.schema.json' not in names:
        raise RecordError(f"profile records {d!r}: no profile.schema.json (not a folder of profile records)")
    return {f[:-5] for f in names if f.endswith('.json') and f != 'profile.schema.json'}


def read(path: str) -> Dict[str, Any]:
    """The record in the JSON file path, with a string "name".  Raises RecordError."""
    try:
        with open(path, encoding='utf-8') as f:
            doc = json.load(f)
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"profile record {path!r}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"profile record {path!r}: not JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get('name'), str) or not doc['name']:
        raise RecordError(f"profile record {path!r}: member \"name\": missing or not a string")
    return doc


def base_adapter(path: str) -> Dict[str, Any]:
    """A user's record (path) for the driver: {"name": its profile, "base": the built-in profile
    it is based on, "adapter": the adapter of the base's test port, "ns_format": the base port's
    Newton-Schulz format}.  Raises RecordError naming the file and the member: no "base" (a
    built-in record is run by its own --adapter), or a base with no record."""
    doc = read(path)
    base = doc.get('base')
    if not isinstance(base, str) or not base:
        raise RecordError(f"profile record {path!r}: member \"base\": missing (the driver takes a user's record, "
                          f"a built-in profile and what differs from it; a built-in profile runs by its --adapter)")
    base_path = os.path.join(folder(), base + '.json')
    if not os.path.isfile(base_path):
        raise RecordError(f"profile record {path!r}: member \"base\": {base!r} is no built-in profile "
                          f"(no {base_path})")
    port = read(base_path).get('test_port') or {}
    if not isinstance(port.get('adapter'), str):
        raise RecordError(f"profile record {base_path!r}: member \"test_port\": no \"adapter\"")
    return {'name': doc['name'], 'base': base, 'adapter': port['adapter'], 'ns_format': port.get('ns_format')}
