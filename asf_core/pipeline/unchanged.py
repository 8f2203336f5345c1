"""Whether a store is as the last run left it, read from its ``fingerprints.json`` as it is.

A nightly run with nothing to do is mostly start-up, so this asks :func:`holds` of the parsed
JSON without cattrs and without the record classes (:mod:`asf_core.pipeline.unit_records`)
(each attrs class costs its creation at import): a run that finds its stores unchanged loads
neither, nor what converting needs; nor does the first such run after a conversion, which
records the report it rewrites with :meth:`Held.restamp`. The records themselves (written,
read back whole, trusted unit by unit) are :mod:`asf_core.pipeline.fingerprints`'.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from asf_core.code_digest import source_digest
from asf_core.files import read_regular, write_atomic
from asf_core.layout import FINGERPRINTS_NAME, REPORT_NAME, RESERVED

__all__ = [
    "IGNORED",
    "VERSION",
    "Held",
    "held",
    "holds",
    "host_version",
    "inside",
    "named_as",
    "read_records",
    "records_bytes",
    "session_entries",
    "store_name",
]

#: The version of ``fingerprints.json`` this asf writes.
VERSION = 1
#: The code of the warning that a record file was ignored.
IGNORED = "fingerprints-ignored"


@cache
def host_version() -> str:
    """A digest of this library's own code (the writer, the canonical form, the model, the
    host): records written by another version are not trusted, whatever the plugin says, so
    an upgraded (or edited) asf writes its own bytes. The plugin's version is its fingerprint's
    business."""
    root = Path(__file__).resolve().parent.parent  # asf_core: the library and this pipeline
    return source_digest(root, ("", "pipeline"), recursive=False)


def store_name(path: Path) -> str:
    """How the records name a store: its resolved path, as its output directory is named
    (:func:`asf_core.layout.store_label`), so the same store named another way (a relative
    path, through a link) keeps its records."""
    return str(path.resolve())


def inside(name: object) -> bool:
    """Whether a recorded file name can be one this asf wrote: relative, inside the store's
    directory, a name a file can have (read from the text: it is checked for every file of
    a run that finds its store unchanged)."""
    if not isinstance(name, str) or not name or "\0" in name:
        return False
    return not name.startswith("/") and ".." not in name.split("/")


def _same(recorded: Any, path: str) -> bool:
    """Whether a stamp as the JSON holds it is the file's as it is now. The path is a string:
    a run that finds its store unchanged stats every file written, and a ``Path`` for each
    cost as much as the stat."""
    try:
        st = os.stat(path)  # noqa: PTH116 - see above
    except OSError:
        return False
    return bool(recorded == {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino})


def records_bytes(value: Any) -> bytes:
    """``fingerprints.json`` as written for its JSON value: ASCII (a store or file name that
    is not UTF-8, a lone surrogate here, is escaped too), compact, members by name."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), sort_keys=True)
    return text.encode() + b"\n"


class Held(NamedTuple):
    """The records of a store found as the last run left it: as parsed, and as read."""

    records: dict[str, Any]
    data: bytes

    def as_saved(self) -> bool:
        """Whether the file is byte for byte what :func:`records_bytes` writes for what it
        holds, as :func:`asf_core.pipeline.fingerprints.save` leaves it."""
        return records_bytes(self.records) == self.data

    def restamp(self, dest: Path, report: os.stat_result) -> None:
        """Record in ``dest`` that ``report.json`` was rewritten (its status ``report``), the
        records otherwise as they are, without cattrs (``OSError`` if that fails). For records
        :meth:`as_saved`: the result is then what loading, changing and saving them gives."""
        stamp = {"size": report.st_size, "mtime_ns": report.st_mtime_ns, "inode": report.st_ino}
        records = {**self.records, "whole": {**self.records["whole"], "report": stamp}}
        write_atomic(dest / FINGERPRINTS_NAME, [records_bytes(records)], durable=False)


#: ``fingerprints.json`` as read and as parsed.
Read = tuple[bytes, Any]


def read_records(dest: Path) -> Read | None:
    """``fingerprints.json`` in ``dest`` as read and parsed; None when it cannot be read or
    is no JSON (:func:`asf_core.pipeline.fingerprints.load` says why). A run whose store
    changed reads the records once: to find it changed, then to load them."""
    try:
        data = read_regular(dest / FINGERPRINTS_NAME)
        return data, json.loads(data)
    except (OSError, ValueError, RecursionError):
        return None


def holds(dest: Path, format: str, store: str, stamp: str) -> bool:
    """Whether the records in ``dest`` say this store is as the last run found it
    (:func:`held`)."""
    return held(dest, format, store, stamp) is not None


def held(dest: Path, format: str, store: str, stamp: str, read: Read | None = None) -> Held | None:
    """The records in ``dest`` when they say this store is as the last run found it: written
    by this asf for this store, its whole ``stamp`` the one given, and ``report.json``, every
    unit's files and the files written outside units still as written; else None.

    Read from the parsed JSON as it is: any surprise in it (a member missing or of another
    type) is a no, and the run that follows (:func:`asf_core.pipeline.fingerprints.load`)
    says what is wrong. ``read``: the file as :func:`read_records` gives it (None: read here).
    """
    got = read_records(dest) if read is None else read
    if got is None:
        return None
    data, records = got
    try:
        whole = records["whole"]
        if (records["version"], records["format"], records["store"]) != (VERSION, format, store):
            return None
        if records["host"] != host_version() or whole["stamp"] != stamp:
            return None
        files = list(whole["files"].items())
        for unit in records["units"].values():
            sessions = [item["session"] for item in unit["items"] if item.get("session")]
            files += [(session["file"], session["stamp"]) for session in sessions]
        files.append((REPORT_NAME, whole["report"]))
    except (OSError, ValueError, RecursionError, KeyError, TypeError, AttributeError):
        return None
    root = f"{dest}/"
    if not all(inside(name) and _same(s, root + name) for name, s in files):
        return None
    # A session file put there since (a copy of one, another run's) is one this run must name.
    known = {name for name, _ in files}
    if not all(name in known for name, _ in session_entries(dest)):
        return None
    return Held(records, data)


def session_entries(dest: Path) -> list[tuple[str, os.DirEntry[str]]]:
    """The session files a store's directory holds, by name relative to it, in name order:
    ``.jsonl`` files there and one folder down (where the layout puts them), not hidden (a
    run's temporaries) nor asf's own, not through a link. Told from the folders' listings
    alone, no file looked at; :mod:`asf_core.pipeline.left` names and stats the same ones."""
    found: list[tuple[str, os.DirEntry[str]]] = []
    for entry in _listing(os.fspath(dest)):
        if entry.is_dir(follow_symlinks=False):
            found += [(f"{entry.name}/{e.name}", e) for e in _listing(entry.path) if _is_session(e)]
        elif _is_session(entry):
            found.append((entry.name, entry))
    return found


def _listing(folder: str) -> list[os.DirEntry[str]]:
    """A folder's entries not hidden nor asf's own, by name; none when it cannot be listed."""
    try:
        with os.scandir(folder) as entries:
            kept = [e for e in entries if not e.name.startswith(".") and e.name not in RESERVED]
    except OSError:
        return []
    return sorted(kept, key=lambda e: e.name)


def _is_session(entry: os.DirEntry[str]) -> bool:
    return entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False)


def named_as(dest: Path, path: str) -> bool:
    """Whether the last run's ``report.json`` in ``dest`` names the store ``path``, as this
    run does: a store named another way is opened even when :func:`holds` (its report may
    name it too: :meth:`~asf_core.pipeline.store_run.StoreRun.unchanged`)."""
    try:
        return bool(json.loads(read_regular(dest / REPORT_NAME)).get("path") == path)
    except (OSError, ValueError, RecursionError, AttributeError):
        return False
