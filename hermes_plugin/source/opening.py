"""Opening a Hermes ``state.db`` read-only, while Hermes may be writing it.

Opening rules, so that reading never disturbs Hermes:

* the file is opened with ``mode=ro``: no write, migration, checkpoint or
  exclusive lock, ever. Committed rows still in the ``-wal`` file are seen.
* In WAL mode the connection reads from one snapshot (a read transaction, which
  never blocks a WAL writer), so every query agrees with every other;
  :meth:`ReadOnlyConnection.refresh` moves to the newest commit. In a
  rollback-journal mode (``delete``, ``truncate``, ``persist``: what Hermes
  uses where WAL is unsafe) a read lock held that long would stall the
  writer's commits, and queries run one by one would see rows of sessions
  created after the sessions were read as orphans; so the database is copied
  under one short read lock (SQLite's backup) into a private temporary file,
  and that snapshot is read (``access`` "copy"; :meth:`ReadOnlyConnection.refresh`
  takes a new one).
* A read-only directory cannot hold the ``-shm`` file SQLite needs for a WAL
  database. Then, with no ``-wal`` file (or an empty one), nothing is
  uncommitted and the file is opened ``immutable=1``; with a ``-wal`` file,
  its committed rows live only there, so the database and its WAL are
  copied into a private temporary directory and the copy is read. The copy
  is removed on close.
* A rollback-journal database (``journal_mode=delete``, which Hermes falls back
  to where WAL is unsafe or unsupported) whose writer died mid-transaction
  leaves a *hot* ``-journal``: its file may hold uncommitted pages, and SQLite
  must roll them back before anyone reads, which a read-only open cannot do.
  Then the database and its journal are copied, SQLite rolls the copy back,
  and the copy (the last committed state) is read; the source is untouched.

A file that cannot be read raises the host's :class:`~asf_core.formats.StoreError`, its message
what is wrong in the user's words: the file itself is looked at first
(:func:`hermes_plugin.source.sniff.problem`), because SQLite's words ("file is not a database",
"database disk image is malformed") do not say that a copy was cut short or that a permission
is missing; else SQLite's.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from asf_core.formats import StoreError
from hermes_plugin.source import sniff
from hermes_plugin.source.columns import Cell, text_cell

__all__ = ["Access", "ReadOnlyConnection"]

#: How the file was opened: in place, in place as immutable, or as a private copy.
Access = Literal["direct", "immutable", "copy"]

#: What SQLite raises on a damaged file; its message may itself be undecodable
#: (it quotes the damaged schema), which Python raises as UnicodeDecodeError.
_READ_ERRORS = (sqlite3.Error, UnicodeDecodeError)
#: Errors SQLite gives when it cannot create the ``-shm``/``-wal`` sidecars.
_SIDECAR_ERRORS = frozenset(
    {"SQLITE_READONLY_DIRECTORY", "SQLITE_CANTOPEN", "SQLITE_READONLY_CANTINIT"}
)
#: What SQLite gives a read-only open of a database whose ``-journal`` is hot.
_HOT_JOURNAL = "SQLITE_READONLY_ROLLBACK"


def _one_line(text: str) -> str:
    """An SQLite message on one printable line (it may quote a damaged schema)."""
    printable = "".join(ch if ch.isprintable() else " " for ch in text)
    return " ".join(printable.split())[:200]


def _uri(path: Path, options: str) -> str:
    return f"file:{quote(str(path), safe='/')}?{options}"


class ReadOnlyConnection:
    """One ``state.db`` opened read-only, reading one committed state until refreshed.

    ``access`` says how it was opened, ``journal_mode`` is the database's, ``tmpdir`` the
    private directory a copy is read from (removed on close). Raises
    :class:`~asf_core.formats.StoreError` when the file cannot be opened.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tmpdir: str | None = None
        #: Whether the connection reads a backup snapshot (rollback-journal mode).
        self._backup = False
        #: Whether it reads inside one read transaction (WAL mode).
        self._snapshot = False
        try:
            # Refuse, before SQLite sees it, a file SQLite cannot open at all (and a pipe,
            # which would block the open).
            if not sniff.is_sqlite(path):
                raise self.failure("not a SQLite database")
            self._conn, self.access = self._connect()
            self.journal_mode = str(self.scalar("PRAGMA journal_mode") or "").lower()
            if self.journal_mode != "wal" and self.access == "direct":
                self._take_snapshot()
            self._snapshot = self.journal_mode == "wal" and self.access != "immutable"
            self._begin()
        except OSError as exc:  # e.g. a directory on the way that cannot be searched
            self.close()
            raise self.failure(str(exc)) from None
        except BaseException:
            self.close()
            raise

    def _open(self, path: Path, options: str) -> sqlite3.Connection:
        conn = sqlite3.connect(
            _uri(path.absolute(), options),
            uri=True,
            timeout=5.0,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.text_factory = text_cell
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect(self) -> tuple[sqlite3.Connection, Access]:
        try:
            return self._open(self.path, "mode=ro"), "direct"
        except _READ_ERRORS as exc:
            name = getattr(exc, "sqlite_errorname", "")
            if name not in _SIDECAR_ERRORS and name != _HOT_JOURNAL:
                raise self.error(exc) from None
        # A hot journal, or a directory that cannot hold the -shm file: see the module
        # docstring.
        wal, journal = self._sidecar("-wal"), self._sidecar("-journal")
        try:
            if wal is None and journal is None:
                return self._open(self.path, "mode=ro&immutable=1"), "immutable"
            # Read-write on the private copy only, so SQLite can roll a hot journal back.
            return self._open(self._private_copy(wal, journal), "mode=rw"), "copy"
        except _READ_ERRORS as exc:
            raise self.error(exc) from None
        except OSError as exc:
            raise self.failure(f"cannot read: {exc.strerror or exc}") from None

    def _sidecar(self, suffix: str) -> Path | None:
        """The database's ``-wal`` or ``-journal`` file when it holds anything."""
        path = Path(f"{self.path}{suffix}")
        return path if path.is_file() and path.stat().st_size > 0 else None

    def _private_copy(self, wal: Path | None, journal: Path | None) -> Path:
        self.tmpdir = tempfile.mkdtemp(prefix="asf-hermes-")
        copy = Path(self.tmpdir) / self.path.name
        shutil.copyfile(self.path, copy)
        for sidecar, suffix in ((wal, "-wal"), (journal, "-journal")):
            if sidecar is not None:
                shutil.copyfile(sidecar, Path(f"{copy}{suffix}"))
        return copy

    def _take_snapshot(self) -> None:
        """Replace the connection by one to a private copy of the committed database, made by
        SQLite's backup in one step (one read lock, released when the copy is done)."""
        if self.tmpdir is None:
            self.tmpdir = tempfile.mkdtemp(prefix="asf-hermes-")
        copy = Path(self.tmpdir) / "snapshot.db"
        copy.unlink(missing_ok=True)
        try:
            target = sqlite3.connect(copy)
            try:
                self._conn.backup(target)
            finally:
                target.close()
            self._conn.close()
            self._conn = self._open(copy, "mode=ro&immutable=1")
        except _READ_ERRORS as exc:
            raise self.error(exc) from None
        except OSError as exc:
            raise self.failure(f"cannot copy: {exc.strerror or exc}") from None
        self.access = "copy"
        self._backup = True

    def failure(self, reason: str) -> StoreError:
        """The error for a file that cannot be read: what the file shows, else ``reason``."""
        return StoreError(sniff.problem(self.path) or reason)

    def error(self, exc: BaseException) -> StoreError:
        """The error for what SQLite raised reading the file."""
        if isinstance(exc, UnicodeDecodeError):
            return self.failure("cannot read the database: damaged schema")
        return self.failure(f"cannot read the database: {_one_line(str(exc))}")

    def query(self, sql: str, params: Sequence[Cell] = ()) -> list[tuple[Cell, ...]]:
        """The rows a statement gives; what SQLite raises, as the host's error."""
        try:
            return self._conn.execute(sql, params).fetchall()
        except _READ_ERRORS as exc:
            raise self.error(exc) from None

    def scalar(self, sql: str) -> Cell:
        """The first cell a statement gives; None for no row."""
        rows = self.query(sql)
        return rows[0][0] if rows else None

    def _begin(self) -> None:
        if self._snapshot:
            self.query("BEGIN")
            self.query("SELECT count(*) FROM sqlite_master")

    def refresh(self) -> None:
        """Move to the newest committed state (the store reads from one snapshot)."""
        if self._snapshot:
            self.query("COMMIT")
            self._begin()
        elif self._backup:
            try:
                source = self._open(self.path, "mode=ro")
            except _READ_ERRORS as exc:
                raise self.error(exc) from None
            self._conn.close()
            self._conn = source
            self._take_snapshot()

    def close(self) -> None:
        """Close the connection and remove a private copy; safe to call twice."""
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None  # type: ignore[assignment]
        if self.tmpdir is not None:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None
