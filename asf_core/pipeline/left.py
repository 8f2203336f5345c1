"""Session files an earlier run wrote into a store's directory that this run did not write.

Each is a session gone from the store (deleted, pruned, or no longer readable), or an earlier
file of a session written now under another name (its start time or working directory, which
its file name spells, changed). asf deletes nothing it was not asked to, since an output
directory is often a backup, but a session the output holds twice, or one its source no longer
has, must not pass unseen: each such file is a finding in the store's report. Only a run that
read the whole store without a problem can tell: a picked run writes some sessions, and a
stopped one has not seen them all.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

from asf_core.files import open_regular
from asf_core.findings import INFO, WARNING, Finding
from asf_core.pipeline.unchanged import session_entries

__all__ = ["LEFT", "PRUNED", "SUPERSEDED", "left_files", "pruned"]

#: The code of a file whose session this run did not write (an ``info`` finding).
LEFT = "left"
#: The code of an earlier file of a session this run wrote to another file (a ``warning``).
SUPERSEDED = "superseded"

#: The code of a file of an earlier run deleted by ``--prune`` (an ``info``).
PRUNED = "pruned"

#: How much of a file is read for its header line, at most.
_HEADER_BYTES = 1 << 20


def session_files(dest: Path) -> Iterator[tuple[str, os.stat_result]]:
    """The session files in a store's directory (:func:`~asf_core.pipeline.unchanged.
    session_entries`: the rule a run finding its store unchanged checks too), relative to
    it, each with its status as listed; one gone or replaced by other than a file since
    the listing is passed over."""
    for name, entry in session_entries(dest):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            yield name, st


def header_id(path: Path) -> str | None:
    """The session id an ASF file's header line holds; None when there is none to read."""
    try:
        with open_regular(path) as stream:
            line = stream.readline(_HEADER_BYTES)
        header = json.loads(line)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(header, dict) or header.get("type") != "session":
        return None
    ident = header.get("id")
    return ident if isinstance(ident, str) else None


def left_files(dest: Path, written: Mapping[str, str]) -> list[tuple[str, Finding, os.stat_result]]:
    """Each session file in ``dest`` that is none of the files this run ``written`` (session
    id -> file, relative to ``dest``): its name relative to ``dest``, a finding, its status."""
    files = set(written.values())
    found: list[tuple[str, Finding, os.stat_result]] = []
    for name, st in session_files(dest):
        if name in files:
            continue
        path = dest / name
        ident = header_id(path)
        now = None if ident is None else written.get(ident)
        if ident is not None and now is not None:
            finding = Finding(
                kind=WARNING,
                code=SUPERSEDED,
                message=f"{path}: an earlier file of session {ident!r}, which this run wrote "
                f"to {now}; left in place (the output holds that session twice)",
                path=str(path),
                data={"id": ident, "file": now},
            )
        else:
            finding = Finding(
                kind=INFO,
                code=LEFT,
                message=f"{path}: written by an earlier run, its session is not in the store "
                "now (gone, or unreadable: see the strays); left in place",
                path=str(path),
                data={} if ident is None else {"id": ident},
            )
        found.append((name, finding, st))
    return found


def pruned(path: Path, left: Finding, listed: os.stat_result) -> Finding:
    """Delete a file :func:`left_files` named (``--prune``: an ASF session file, its header
    read) and say so; the finding ``left`` as it was, and why, when it cannot be deleted. A
    file that is not the one ``listed`` (its status then) is left: the header read may not be
    its own (another file renamed in its place, or written to, since)."""
    try:
        if _changed(os.lstat(path), listed):
            return _kept(left, "it changed since it was read")
        path.unlink()
    except FileNotFoundError:  # deleted meanwhile: what was asked
        pass
    except OSError as exc:
        return _kept(left, f"cannot delete it: {exc.strerror or exc}")
    superseded = left.code == SUPERSEDED
    what = "an earlier file of a session written now" if superseded else "its session is gone"
    return Finding(
        kind=INFO,
        code=PRUNED,
        message=f"{path}: written by an earlier run, deleted ({what})",
        path=left.path,
        data=left.data,
    )


def _changed(now: os.stat_result, then: os.stat_result) -> bool:
    def identity(st: os.stat_result) -> tuple[int, ...]:
        return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    return identity(now) != identity(then)


def _kept(left: Finding, why: str) -> Finding:
    """The finding ``left``, a warning saying why its file is still there."""
    message = f"{left.message}; {why}"
    return Finding(kind=WARNING, code=left.code, message=message, path=left.path, data=left.data)
