"""Private copies of a Hermes database, made without touching it or what lies beside it.

A copy lives in a directory of its own in the system temporary directory, named
``asf-hermes-<pid>-<random>``; the reader removes it when it closes, and every new copy first
removes the ones whose process is gone (a run killed outright cannot clean up after itself).

Two ways to copy the files themselves, each checked so the copy is one committed state:

* :func:`copy_quiet`, for a database no connection has open: the files are copied as bytes
  and the copy is kept only if none of them changed meanwhile.
* :func:`copy_locked`, for a database a writer holds locked: the database and its rollback
  journal (or WAL) are copied so that every page the writer changed is restorable from the
  copied journal: the journal's header (a nonce per transaction) must be the same before
  and after, and the database itself unchanged when there is no journal. SQLite then rolls
  the copy back (or recovers its WAL) to the last commit.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Final

from asf_core.leftovers import left_by_gone

__all__ = [
    "PREFIX",
    "Stamp",
    "copy_locked",
    "copy_quiet",
    "file_stamp",
    "make_dir",
    "remove_dir",
    "remove_stale",
]

#: The name every private directory starts with.
PREFIX: Final = "asf-hermes-"
_OURS: Final = re.compile(rf"{PREFIX}([0-9]{{1,10}})-[A-Za-z0-9_]+")
#: The side files a database may have, in the order they are copied.
SIDE_FILES: Final = ("-wal", "-journal")
#: A rollback journal's header holds the magic, the record count, the nonce, the page count.
_JOURNAL_HEADER: Final = 28

#: What changes when a file is written: size, times, inode; None when it is missing.
Stamp = tuple[int, int, int, int] | None


def remove_stale(parent: str | None = None) -> int:
    """Remove the private directories left by processes that are gone; how many."""
    parent = parent or tempfile.gettempdir()
    removed = 0
    for entry in left_by_gone(parent, _OURS):
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
                removed += 1
    return removed


def make_dir() -> str:
    """A fresh private directory for one copy (stale ones removed first)."""
    remove_stale()
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")


def remove_dir(path: str | None) -> None:
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


def file_stamp(path: Path) -> Stamp:
    """A file's :data:`Stamp` as it is now."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _side(path: Path, suffix: str) -> Path:
    return Path(f"{path}{suffix}")


def _copy(source: Path, target: Path) -> bool:
    """Copy a file if it exists; False when it does not (or vanished)."""
    try:
        shutil.copyfile(source, target)
    except FileNotFoundError:
        return False
    return True


def copy_quiet(db: Path, into: Path) -> Path | None:
    """Copy the database and its side files into ``into``; None if any of them changed while
    it was copied (a writer came by: the caller tries again, or reads in place)."""
    target = into / db.name
    pairs = [(db, target), *((_side(db, s), _side(target, s)) for s in SIDE_FILES)]
    before = [file_stamp(source) for source, _ in pairs]
    for (source, copy), stamp in zip(pairs, before, strict=True):
        if stamp is not None and not _copy(source, copy):
            return None
    after = [file_stamp(source) for source, _ in pairs]
    return target if before == after and before[0] is not None else None


def _journal_id(path: Path) -> bytes:
    """What names a rollback journal's transaction: its magic and nonce (empty: no journal)."""
    try:
        with path.open("rb") as f:
            head = f.read(_JOURNAL_HEADER)
    except OSError:
        return b""
    return head[:8] + head[12:16] if len(head) == _JOURNAL_HEADER and any(head) else b""


def copy_locked(db: Path, into: Path) -> Path | None:
    """Copy a database a writer holds locked so that rolling the copy back gives its last
    commit; None when the writer moved to another transaction meanwhile (try again)."""
    journal, wal = _side(db, "-journal"), _side(db, "-wal")
    transaction = _journal_id(journal)
    before = file_stamp(db)
    target = into / db.name
    if not _copy(db, target):
        return None
    if transaction:  # every page changed so far is restorable from the journal, copied after
        if not _copy(journal, _side(target, "-journal")):
            return None
        return target if _journal_id(_side(target, "-journal")) == transaction else None
    if wal.exists() and not _copy(wal, _side(target, "-wal")):
        return None
    # No journal: the writer has changed no page yet; nor checkpointed into a WAL database.
    return target if file_stamp(db) == before and not _journal_id(journal) else None
