"""The store handle the Hermes plugin gives the host: one open ``state.db``, read-only.

The database is named in every unit by its place in the Hermes home (``state.db``,
``profiles/<name>/state.db``), not by the path the user typed, so the ids and identities
in the output do not depend on where the database was converted from.

A database that cannot be read raises the host's :class:`asf_core.formats.StoreError` with
what is wrong in the user's terms (:func:`problem`), so ``asf`` reports a damaged file, not a
crashed plugin.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from asf_core import formats
from hermes_plugin.schema import DATABASE_NAME, DIR_PROFILES
from hermes_plugin.source.database import SQLITE_MAGIC, SqliteStore
from hermes_plugin.source.store import Store, StoreError

__all__ = ["HermesHandle", "database_name", "file_problem", "problem"]

#: The reader's words for a database lacking a table Hermes always has.
#: SQLite's database header: 100 bytes, the page size at 16, the page count at 28 (valid when
#: the change counter at 24 equals the version-valid-for number at 92).
_HEADER_SIZE = 100


def database_name(path: Path) -> str:
    """How units name a database: ``profiles/<name>/<file>`` inside a profile, else its file
    name."""
    if path.parent.parent.name == DIR_PROFILES:
        return f"{DIR_PROFILES}/{path.parent.name}/{path.name}"
    return path.name or DATABASE_NAME


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


def file_problem(path: Path) -> str | None:
    """What is wrong with a database file that can be told without SQLite: missing, not a
    file, not readable, empty, not SQLite, cut short; None when the file looks whole."""
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
    magic = header[: len(SQLITE_MAGIC)]
    if not SQLITE_MAGIC.startswith(magic):
        return "not a SQLite database"
    if len(header) < _HEADER_SIZE:
        return f"truncated: {size} bytes, shorter than an SQLite header"
    return _truncation(header, size)


def problem(path: Path, error: StoreError) -> str:
    """What is wrong with a database the reader could not read, in the user's terms.

    The file itself is looked at first, because SQLite's words ("file is not a database",
    "database disk image is malformed") do not say that a copy was cut short or that a
    permission is missing; else the reader's message, without the path it starts with.
    """
    found = file_problem(path)
    if found is not None:
        return found
    return error.reason


class HermesHandle:
    """An open database: the reader's :class:`~hermes_plugin.source.store.Store` plus ``info``.

    Raises :class:`asf_core.formats.StoreError` when the file cannot be read.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.sqlite = SqliteStore(path, name=database_name(path))
        except StoreError as exc:
            raise self.unreadable(exc) from None
        except OSError as exc:  # a directory on the way that cannot be searched
            raise formats.StoreError(file_problem(path) or str(exc)) from None

    def unreadable(self, error: StoreError) -> formats.StoreError:
        """The host's error for a reader's error on this database."""
        return formats.StoreError(problem(self.path, error))

    @property
    def store(self) -> Store:
        return self.sqlite

    def info(self) -> dict[str, Any]:
        """Name, path, schema version, journal mode, access, and the column lists of the two
        tables rows are read from (a column missing from a ``columns`` member is NULL, held
        by a core member, or absent from the table)."""
        info: dict[str, Any] = dict(self.sqlite.info())
        info["columns"] = {t: list(self.sqlite.columns(t)) for t in ("sessions", "messages")}
        return info

    def close(self) -> None:
        self.sqlite.close()
