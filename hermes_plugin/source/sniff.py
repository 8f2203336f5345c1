"""What a file is, for the one question asked of it everywhere: can it be a Hermes database?

The file system and the first bytes say most of it (missing, a directory, closed to us, empty,
not SQLite, cut short) without SQLite, which only says "file is not a database" or "database
disk image is malformed"; the schema says whether an SQLite file is Hermes'. Discovery asks
here whether to claim a path, and the reader asks before it connects and, when SQLite fails,
for the words that tell the user what is wrong. Nothing here raises, blocks on a pipe, or
writes: a file is opened only when it is a regular file, and read only up to its header.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Literal
from urllib.parse import quote

__all__ = [
    "SQLITE_MAGIC",
    "Kind",
    "database_uri",
    "hermes_schema",
    "is_sqlite",
    "kind",
    "problem",
    "wal_format",
]

#: The first 16 bytes of every SQLite 3 database file.
SQLITE_MAGIC = b"SQLite format 3\x00"
#: SQLite's database header: 100 bytes, the page size at 16, the page count at 28 (valid when
#: the change counter at 24 equals the version-valid-for number at 92).
_HEADER_SIZE = 100

#: What is at a path: a regular file, a directory, anything else (a pipe, a socket, a device),
#: nothing, or something behind a directory that cannot be searched.
Kind = Literal["file", "dir", "other", "denied", "missing"]


def kind(path: Path) -> Kind:
    """What is at a path (``denied``: a directory on the way is closed to us)."""
    try:
        mode = path.stat().st_mode
    except PermissionError:
        return "denied"
    except (OSError, ValueError):
        return "missing"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def is_sqlite(path: Path) -> bool:
    """Whether a regular file starts as an SQLite database does."""
    if kind(path) != "file":
        return False
    try:
        with path.open("rb") as f:
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def wal_format(path: Path) -> bool:
    """Whether a database's header says it is in WAL mode (its read and write versions 2)."""
    if kind(path) != "file":
        return False
    try:
        with path.open("rb") as f:
            header = f.read(20)
    except OSError:
        return False
    return header[:16] == SQLITE_MAGIC and header[18:20] == b"\x02\x02"


def problem(path: Path) -> str | None:
    """What is wrong with a database file that can be told without SQLite, in the user's
    words: missing, not a file, not readable, empty, not SQLite, cut short; None when the file
    looks whole (then only SQLite can tell)."""
    try:
        mode = path.stat().st_mode
    except PermissionError:
        return "permission denied"
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()
    if stat.S_ISDIR(mode):
        return "a directory, not a database file"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    try:
        with path.open("rb") as f:
            header = f.read(_HEADER_SIZE)
            size = os.fstat(f.fileno()).st_size  # after the header: a growing file only grows
    except PermissionError:
        return "permission denied"
    except OSError as exc:
        return f"cannot read: {(exc.strerror or str(exc)).lower()}"
    if not header:
        return "empty file (0 bytes): not a Hermes database"
    if not SQLITE_MAGIC.startswith(header[: len(SQLITE_MAGIC)]):
        return "not a SQLite database"
    if len(header) < _HEADER_SIZE:
        return f"truncated: {size} bytes, shorter than an SQLite header"
    return _truncation(header, size)


def _truncation(header: bytes, size: int) -> str | None:
    """Whether a file whose header is whole is shorter than its header says."""
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    if page < 512 or page & (page - 1):
        return f"damaged header (page size {page})"
    pages = int.from_bytes(header[28:32], "big")
    if pages and header[24:28] == header[92:96] and size < pages * page:
        return f"truncated: {size} of {pages * page} bytes"
    if size % page:
        return f"truncated: {size} bytes, not a whole number of {page}-byte pages"
    return None


def database_uri(path: str | os.PathLike[str], options: str) -> str:
    """The SQLite URI of a database file: its path's own bytes, percent-encoded, so a name
    that is not UTF-8 opens as it is."""
    return f"file:{quote(os.fsencode(path), safe='/')}?{options}"


def hermes_schema(path: Path) -> bool | None:
    """True when a file's schema has Hermes' tables (``sessions``, and ``messages`` with
    ``session_id`` and ``role``), False when it does not or the file is no SQLite database,
    None when that cannot be told (not a regular file, not readable, the schema unreadable).
    Reads the schema only, opened immutable: no sidecar files, no locks."""
    if kind(path) != "file":
        return None
    try:
        with path.open("rb") as f:
            if f.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                return False
        conn = sqlite3.connect(database_uri(path.absolute(), "mode=ro&immutable=1"), uri=True)
        try:
            tables = {
                name
                for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if not {"sessions", "messages"} <= tables:
                return False
            columns = {row[1] for row in conn.execute("PRAGMA table_info(messages)")}
            return {"session_id", "role"} <= columns
        finally:
            conn.close()
    except (OSError, sqlite3.Error, ValueError):
        return None
