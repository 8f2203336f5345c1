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
* Reading a WAL database in place creates its ``-wal`` and ``-shm`` files when they are
  missing (no connection has it open), and a read-only connection cannot remove them again.
  So such a database at rest (no ``-wal`` holding anything, no ``-journal``) is opened
  ``immutable=1`` (no side file, no lock: the directory is left as it was found) and
  *pinned*: its file's size, times and inode are taken before it is opened, and every query
  is followed by a look at them. Nothing but a writer changes them, and a writer that comes
  by writes to a new ``-wal`` first, so as long as they hold, every row read is of the state
  at rest; once they do not, the query raises :class:`~asf_core.formats.StoreChanged` (a
  conversion starts again, reading in place beside the writer). A ``-wal`` left without its
  ``-shm`` (a writer that died) holds committed rows: the database and it are copied
  (:func:`~hermes_plugin.source.snapshots.copy_quiet`: the copy is kept only if no file
  changed meanwhile) and the copy is read. With its side files present (Hermes is running)
  the database is read in place.
* A writer may hold its lock longer than a read should wait (a long rollback-journal
  transaction; a WAL database in exclusive locking mode). Opening waits for it with growing
  pauses up to :func:`lock_wait` seconds, then copies the database with the writer's journal
  (:func:`~hermes_plugin.source.snapshots.copy_locked`) and reads the copy rolled back to the
  last commit. ``snapshot`` says how a copy was made and ``waited`` how long was waited.

Private copies live in their own directories (:mod:`hermes_plugin.source.snapshots`), removed
on close; ones a killed run left are removed by the next.

A file that cannot be read raises the host's :class:`~asf_core.formats.StoreError`, its message
what is wrong in the user's words: the file itself is looked at first
(:func:`hermes_plugin.source.sniff.problem`), because SQLite's words ("file is not a database",
"database disk image is malformed") do not say that a copy was cut short or that a permission
is missing; else SQLite's. A private copy that does not fit says where it was going (the
temporary directory's disk is full, not the database's; ``TMPDIR`` moves it), not SQLite's
"database or disk is full".
"""

from __future__ import annotations

import errno
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, TypeVar

from asf_core.formats import StoreChanged, StoreError
from hermes_plugin.source import snapshots, sniff
from hermes_plugin.source.columns import Cell, Rows, fetch_rows, text_cell

__all__ = ["Access", "ReadOnlyConnection", "Snapshot", "lock_wait"]

#: How the file was opened: in place, in place as immutable, or as a private copy.
Access = Literal["direct", "immutable", "copy"]
#: How a private copy was made: SQLite's backup under one read lock; the files copied as
#: they are (a WAL database without side files); with a hot journal, rolled back; with the
#: journal of a writer holding its lock, rolled back.
Snapshot = Literal["backup", "files", "rolled back", "locked"]

_T = TypeVar("_T")

#: What SQLite raises on a damaged file; its message may itself be undecodable
#: (it quotes the damaged schema), which Python raises as UnicodeDecodeError.
_READ_ERRORS = (sqlite3.Error, UnicodeDecodeError)
#: Errors SQLite gives when it cannot create the ``-shm``/``-wal`` sidecars.
_SIDECAR_ERRORS = frozenset(
    {"SQLITE_READONLY_DIRECTORY", "SQLITE_CANTOPEN", "SQLITE_READONLY_CANTINIT"}
)
#: What SQLite gives a read-only open of a database whose ``-journal`` is hot.
_HOT_JOURNAL = "SQLITE_READONLY_ROLLBACK"
#: What SQLite gives when a file it writes cannot grow: only ever a private copy here.
_FULL = "SQLITE_FULL"
#: How long SQLite itself waits for a lock on each try; the pauses between tries grow.
_BUSY_TIMEOUT = 0.5
#: How many times a copy is tried before giving up on it.
_COPY_TRIES = 5


def lock_wait() -> float:
    """How long to wait for a writer's lock before reading a copy: ``ASF_HERMES_LOCK_WAIT``
    seconds, 10 by default."""
    try:
        return max(0.0, float(os.environ.get("ASF_HERMES_LOCK_WAIT", "10")))
    except ValueError:
        return 10.0


class _Locked(Exception):
    """A writer held its lock past :func:`lock_wait`."""


def _busy(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "")
    return isinstance(exc, sqlite3.Error) and (
        name.startswith("SQLITE_BUSY") or name == "SQLITE_LOCKED"
    )


def _one_line(text: str) -> str:
    """An SQLite message on one printable line (it may quote a damaged schema)."""
    printable = "".join(ch if ch.isprintable() else " " for ch in text)
    return " ".join(printable.split())[:200]


class ReadOnlyConnection:
    """One ``state.db`` opened read-only, reading one committed state until refreshed.

    ``access`` says how it was opened, ``snapshot`` how a copy was made (None in place),
    ``waited`` the seconds spent waiting for a writer's lock, ``journal_mode`` is the
    database's, ``tmpdir`` the private directory a copy is read from (removed on close).
    Raises :class:`~asf_core.formats.StoreError` when the file cannot be opened.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tmpdir: str | None = None
        self.snapshot: Snapshot | None = None
        self.waited = 0.0
        #: The stamp of a database read pinned (at rest, in place): see the module docstring.
        self.pinned: snapshots.Stamp = None
        #: The file the connection reads (the database or its private copy) and the URI
        #: options it was opened with.
        self.opened: tuple[Path, str] = (path, "mode=ro")
        #: Whether it reads inside one read transaction (WAL mode).
        self._snapshot = False
        try:
            # Refuse, before SQLite sees it, a file SQLite cannot open at all (and a pipe,
            # which would block the open).
            if not sniff.is_sqlite(path):
                raise self.failure("not a SQLite database")
            self._settle()
        except OSError as exc:  # e.g. a directory on the way that cannot be searched
            self.close()
            raise self.failure(str(exc)) from None
        except BaseException:
            self.close()
            raise

    def _settle(self) -> None:
        """Open the database (or a copy) and start reading one committed state."""
        self._conn, self.access = self._connect()
        self.journal_mode = str(self.scalar("PRAGMA journal_mode") or "").lower()
        if self.pinned is not None:  # immutable=1 reports no WAL; the file's header says it
            self.journal_mode = "wal"
        if self.journal_mode != "wal" and self.access == "direct":
            self._take_snapshot()
        self._snapshot = self.journal_mode == "wal" and self.access != "immutable"
        self._begin()

    def _open(self, path: Path, options: str) -> sqlite3.Connection:
        self.opened = (path.absolute(), options)
        conn = sqlite3.connect(
            sniff.database_uri(path.absolute(), options),
            uri=True,
            timeout=_BUSY_TIMEOUT,
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

    def _patiently(self, attempt: Callable[[], _T]) -> _T:
        """``attempt()``, tried again while a writer holds the database locked, with growing
        pauses, until :func:`lock_wait` seconds have passed: then :class:`_Locked`."""
        deadline = time.monotonic() + lock_wait()
        pause = 0.05
        while True:
            started = time.monotonic()
            try:
                return attempt()
            except _READ_ERRORS as exc:
                self.waited += time.monotonic() - started
                if not _busy(exc):
                    raise
                if time.monotonic() + pause > deadline:
                    raise _Locked from None
            time.sleep(pause)
            self.waited += pause
            pause = min(pause * 2, 2.0)

    def _connect(self) -> tuple[sqlite3.Connection, Access]:
        at_rest = self._sidecar("-wal") is None and not Path(f"{self.path}-journal").exists()
        if self._quiet_wal() and not at_rest:  # committed rows in a -wal no one has open
            copy = self._copy(snapshots.copy_quiet, tries=3)
            if copy is not None:
                self.snapshot = "files"
                return self._open_copy(copy), "copy"
        elif self._quiet_wal():
            pinned = snapshots.file_stamp(self.path)
            try:
                conn = self._open(self.path, "mode=ro&immutable=1")
            except _READ_ERRORS as exc:
                raise self.error(exc) from None
            if pinned is not None and snapshots.file_stamp(self.path) == pinned:
                self.pinned = pinned
                return conn, "immutable"
            conn.close()  # a writer came by while it was opened: read beside it
        try:
            return self._patiently(lambda: self._open(self.path, "mode=ro")), "direct"
        except _Locked:
            return self._open_copy(self._locked_copy()), "copy"
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
            copy = self._copy(snapshots.copy_quiet, tries=_COPY_TRIES)
            if copy is None:
                raise self.failure("cannot read: the database kept changing while it was copied")
            self.snapshot = "rolled back" if journal is not None else "files"
            return self._open_copy(copy), "copy"
        except _READ_ERRORS as exc:
            raise self.error(exc) from None

    def _quiet_wal(self) -> bool:
        """Whether reading in place would create side files no connection is using: a WAL
        database without its ``-wal`` or ``-shm``, in a directory we may write."""
        if not sniff.wal_format(self.path) or not os.access(self.path.parent, os.W_OK):
            return False
        return not all(Path(f"{self.path}{s}").exists() for s in ("-wal", "-shm"))

    def _sidecar(self, suffix: str) -> Path | None:
        """The database's ``-wal`` or ``-journal`` file when it holds anything."""
        path = Path(f"{self.path}{suffix}")
        return path if path.is_file() and path.stat().st_size > 0 else None

    def _copy(self, how: Callable[[Path, Path], Path | None], *, tries: int) -> Path | None:
        """A private copy made ``how``, tried a few times; None when none held."""
        for attempt in range(tries):
            self._drop_copy()
            self.tmpdir = snapshots.make_dir()
            try:
                copy = how(self.path, Path(self.tmpdir))
            except OSError as exc:
                raise self.copy_failure(exc) from None
            if copy is not None:
                return copy
            time.sleep(0.05 * (attempt + 1))
        self._drop_copy()
        return None

    def _locked_copy(self) -> Path:
        """A copy of a database a writer holds locked, rolled back to its last commit."""
        copy = self._copy(snapshots.copy_locked, tries=_COPY_TRIES)
        if copy is None:
            raise self.failure(
                f"database is locked: a writer held it for more than {lock_wait():g} s"
                " and kept changing it while it was copied"
            )
        self.snapshot = "locked"
        return copy

    def _open_copy(self, copy: Path) -> sqlite3.Connection:
        """Open a private copy read-write, so SQLite can roll back a journal or recover a WAL
        there (never in the source's directory)."""
        try:
            return self._open(copy, "mode=rw")
        except _READ_ERRORS as exc:
            raise self.copy_failure(exc) from None

    def _take_snapshot(self) -> None:
        """Replace the connection by one to a private copy of the committed database, made by
        SQLite's backup in one step under one read lock (released when the copy is done); a
        writer holding its lock past the wait gets a rolled-back copy instead."""
        try:
            self._patiently(self._read_lock)
        except _Locked:
            self._conn.close()
            self._conn = self._open_copy(self._locked_copy())
            self.access = "copy"
            return
        self._drop_copy()
        self.tmpdir = snapshots.make_dir()
        copy = Path(self.tmpdir) / "snapshot.db"
        try:
            target = sqlite3.connect(copy)
            try:
                self._conn.backup(target)
            finally:
                target.close()
            self._conn.close()
            self._conn = self._open(copy, "mode=ro&immutable=1")
        except (*_READ_ERRORS, OSError) as exc:
            raise self.copy_failure(exc) from None
        self.access = "copy"
        self.snapshot = "backup"

    def _read_lock(self) -> None:
        """Take the read lock the backup copies under (it would wait for it forever)."""
        try:
            self._conn.execute("BEGIN")
            self._conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise

    def failure(self, reason: str) -> StoreError:
        """The error for a file that cannot be read: what the file shows, else ``reason``."""
        return StoreError(sniff.problem(self.path) or reason)

    def copy_failure(self, exc: BaseException) -> StoreError:
        """The error for a private copy that failed: one that did not fit says where (the
        temporary directory's disk is full, not the database's: ``TMPDIR`` moves it)."""
        full = getattr(exc, "sqlite_errorname", "") == _FULL
        if full or getattr(exc, "errno", None) == errno.ENOSPC:
            where = Path(self.tmpdir).parent if self.tmpdir else tempfile.gettempdir()
            return self.failure(f"cannot copy it to read: no space left in {where} (TMPDIR)")
        if isinstance(exc, OSError):
            return self.failure(f"cannot copy: {exc.strerror or exc}")
        return self.error(exc)

    def error(self, exc: BaseException) -> StoreError:
        """The error for what SQLite raised reading the file."""
        if isinstance(exc, UnicodeDecodeError):
            return self.failure("cannot read the database: damaged schema")
        return self.failure(f"cannot read the database: {_one_line(str(exc))}")

    def query(
        self, sql: str, params: Sequence[Cell] = (), each: Callable[[Rows], Rows] | None = None
    ) -> Rows:
        """The rows a statement gives (``each``: see :func:`fetch_rows`); what SQLite raises,
        as the host's error; and, for a pinned database that changed meanwhile,
        :class:`StoreChanged`."""
        try:
            rows = fetch_rows(self._conn, sql, params, each)
        except _READ_ERRORS as exc:
            self.check()
            raise self.error(exc) from None
        self.check()
        return rows

    def check(self) -> None:
        """:class:`StoreChanged` if the database is pinned and is no longer as it was."""
        if self.pinned is not None and snapshots.file_stamp(self.path) != self.pinned:
            raise StoreChanged("the database changed while it was read")

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
        if self.pinned is not None:  # open it again, as it is now
            self._close_connection()
            self.pinned = None
            self._settle()
        elif self.access == "direct" and self._snapshot:
            self.query("COMMIT")
            self._begin()
        elif self.access == "copy":  # a new copy, made as the first was
            self._close_connection()
            self._drop_copy()
            self.snapshot, self._snapshot = None, False
            try:
                self._settle()
            except OSError as exc:
                raise self.failure(str(exc)) from None

    def _close_connection(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None  # type: ignore[assignment]

    def _drop_copy(self) -> None:
        snapshots.remove_dir(self.tmpdir)
        self.tmpdir = None

    def close(self) -> None:
        """Close the connection and remove a private copy; safe to call twice."""
        self._close_connection()
        self._drop_copy()
