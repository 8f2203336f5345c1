"""What users do to a conversion's output between runs, for the state machines that check a
re-run writes what a fresh conversion writes whatever was done."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from asf_core.layout import FINGERPRINTS_NAME

#: What may be done to a session file (the first nine) or to a store's records.
TAMPERING = (
    *("delete", "truncate", "touch", "edit", "keep_time", "replace", "swap", "empty"),
    "directory",
    *(
        f"{how}_{record}"
        for how in ("delete", "damage", "touch", "restore")
        for record in ("fingerprints", "report")
    ),
)


def tamper_with_file(path: Path, other: Path, how: str) -> None:
    """Do ``how`` to the session file ``path`` (``other``: another one of the output)."""
    data = path.read_bytes()
    later = path.stat().st_mtime_ns + 1_000_000_000
    if how == "delete":
        path.unlink()
    elif how == "truncate":
        with path.open("r+b") as f:
            f.truncate(len(data) // 2)
    elif how == "touch":
        os.utime(path, ns=(later, later))
    elif how == "edit":  # one byte changed in place, as an editor saves, a second later
        with path.open("r+b") as f:
            f.seek(len(data) // 2)
            f.write(b"#")
        os.utime(path, ns=(later, later))
    elif how == "replace":  # another file's bytes, saved beside and renamed over it
        tmp = path.with_name(".replacing")
        tmp.write_bytes(other.read_bytes() if other != path else b"{}\n")
        tmp.replace(path)
    elif how == "swap" and other != path:  # two files' names exchanged
        tmp = path.with_name(".swapping")
        path.replace(tmp)
        other.replace(path)
        tmp.replace(other)
    elif how == "keep_time":  # one byte changed in a copy renamed over it, time kept
        tmp = path.with_name(".keeping")
        tmp.write_bytes(data[: len(data) // 2] + b"#" + data[len(data) // 2 + 1 :])
        st = path.stat()
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        _hold(path)
        tmp.replace(path)
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "directory":
        shutil.rmtree(path.parent)


#: The folder where the files replaced by ``keep_time`` stay linked (their inodes never
#: freed), then each file held.
_HELD: list[Path] = []


def _hold(path: Path) -> None:
    """Keep the file being replaced linked elsewhere: a copy with its size and time, renamed
    over it, is seen by its other inode, and a file system reuses a freed inode at once. Two
    such copies in a row could otherwise bring back the inode recorded, a limit asf documents
    (docs/hooks.md), not what this harness tests."""
    if not _HELD:
        _HELD.append(Path(tempfile.mkdtemp(prefix="asf-held-")))
    with contextlib.suppress(OSError):  # another file system: nothing to hold it with
        os.link(path, _HELD[0] / f"{len(_HELD)}")
        _HELD.append(path)


def tamper_with_record(path: Path, how: str, old_report: bytes) -> bool | None:
    """Do ``how`` (``delete``, ``damage``, ``touch``, ``restore``) to ``report.json`` or
    ``fingerprints.json`` (``restore``: the report back to ``old_report``, as a backup had
    it). Whether the next run finds the records damaged (it warns of them): True, False, or
    None when this does not change it."""
    fingerprints = path.name == FINGERPRINTS_NAME
    if how == "restore":
        if not fingerprints and old_report:
            path.write_bytes(old_report)
    elif how == "delete":
        path.unlink()
        return False if fingerprints else None
    elif how == "damage":
        path.write_text('{"not": "what asf wrote"}\n')
        return True if fingerprints else None
    else:
        later = path.stat().st_mtime_ns + 1_000_000_000
        os.utime(path, ns=(later, later))
    return None


def json_places(value: object, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in parsed JSON (a record, a line), as the keys and indexes leading to it: the
    value itself (``()``), then each member and item, nested."""
    found = [at]
    if isinstance(value, dict):
        for key, member in value.items():
            found += json_places(member, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += json_places(item, (*at, index))
    return found


def holder(value: Any, at: tuple[Any, ...]) -> Any:
    """The object or array holding the place ``at`` (not ``()``) of ``value``."""
    for step in at[:-1]:
        value = value[step]
    return value
