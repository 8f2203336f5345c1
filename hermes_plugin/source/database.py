"""Reads a Hermes ``state.db`` file, read-only, while Hermes may be writing it.

Opening rules, so that reading never disturbs Hermes:

* the file is opened with ``mode=ro``: no write, migration, checkpoint or
  exclusive lock, ever. Committed rows still in the ``-wal`` file are seen.
* In WAL mode the store reads from one snapshot (a read transaction, which
  never blocks a WAL writer), so sessions, messages and orphans agree with
  each other; :meth:`SqliteStore.refresh` moves to the newest commit. In a
  rollback-journal mode (``delete``, ``truncate``, ``persist``: what Hermes
  uses where WAL is unsafe) a read lock held that long would stall the
  writer's commits, and queries run one by one would see rows of sessions
  created after the sessions were read as orphans; so the database is copied
  under one short read lock (SQLite's backup) into a private temporary file,
  and that snapshot is read (``access`` "copy"; :meth:`SqliteStore.refresh`
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

Rows are read by column name (``PRAGMA table_info``), so every schema version
and any future column reads; text that is not valid UTF-8 is kept as
:class:`~hermes_plugin.source.columns.RawText`. A file that cannot be read raises the host's
:class:`~asf_core.formats.StoreError`, its message what is wrong in the user's words: the file
itself is looked at first (:func:`hermes_plugin.source.sniff.problem`), because SQLite's words
("file is not a database", "database disk image is malformed") do not say that a copy was cut
short or that a permission is missing; else SQLite's, or what the schema lacks.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from asf_core.formats import StoreError
from hermes_plugin.source import sniff
from hermes_plugin.source.columns import Cell, Columns, RawText, cell_text, index_of, text_cell
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Delegation, Message, Session
from hermes_plugin.source.store import (
    ClosesOnExit,
    RowCounts,
    Stray,
    message_stray,
    read_sessions,
)

__all__ = ["Access", "SqliteStore", "open_store"]

#: How the file was opened: in place, in place as immutable, or as a private copy.
Access = Literal["direct", "immutable", "copy"]

_REQUIRED_TABLES = ("sessions", "messages")
#: The tables a converter reads (others, such as FTS indexes, are never touched).
_READ_TABLES = (
    "sessions",
    "messages",
    "schema_version",
    "system_prompts",
    "session_model_usage",
    "async_delegations",
)
#: session_model_usage's primary key, its natural order.
_USAGE_KEY = ("model", "billing_provider", "billing_base_url", "billing_mode", "task")
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


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _uri(path: Path, options: str) -> str:
    return f"file:{quote(str(path), safe='/')}?{options}"


def open_store(path: str | os.PathLike[str], *, name: str | None = None) -> SqliteStore:
    """Open a database file read-only; see :class:`SqliteStore`."""
    return SqliteStore(path, name=name)


class SqliteStore(ClosesOnExit):
    """The rows of one ``state.db``, read-only; a :class:`~hermes_plugin.source.store.Database`.

    ``name`` names the store in findings (default: the path as given). Raises
    :class:`~asf_core.formats.StoreError` when the file is no SQLite database, is damaged, or
    lacks the ``sessions`` or ``messages`` table.
    """

    def __init__(self, path: str | os.PathLike[str], *, name: str | None = None) -> None:
        self.path = Path(path)
        self._name = name if name is not None else str(path)
        self._rows = RowReader(self._name)
        self._tmpdir: str | None = None
        #: Whether the connection reads a backup snapshot (rollback-journal mode).
        self._backup = False
        try:
            self._check_file()
            self._conn, self.access = self._connect()
            self.journal_mode = str(self._scalar("PRAGMA journal_mode") or "").lower()
            if self.journal_mode != "wal" and self.access == "direct":
                self._take_snapshot()
            self._tables = self._read_tables()
            missing = [t for t in _REQUIRED_TABLES if t not in self._tables]
            if missing:
                tables = " or ".join(missing)
                raise self._failure(f"no {tables} table: not a Hermes database")
            self._columns = {t: self._table_columns(t) for t in _READ_TABLES if t in self._tables}
            self._indexes = {t: index_of(names) for t, names in self._columns.items()}
            self._snapshot = self.journal_mode == "wal" and self.access != "immutable"
            self._begin()
            self._versions = self._read_versions()
        except OSError as exc:  # e.g. a directory on the way that cannot be searched
            self.close()
            raise self._failure(str(exc)) from None
        except BaseException:
            self.close()
            raise

    # -- opening ---------------------------------------------------------------------------

    def _check_file(self) -> None:
        """Refuse, before SQLite sees it, a file SQLite cannot open at all (and a pipe, which
        would block the open)."""
        if not sniff.is_sqlite(self.path):
            raise self._failure("not a SQLite database")

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
                raise self._error(exc) from None
        # A hot journal, or a directory that cannot hold the -shm file: see the module
        # docstring.
        wal, journal = self._sidecar("-wal"), self._sidecar("-journal")
        try:
            if wal is None and journal is None:
                return self._open(self.path, "mode=ro&immutable=1"), "immutable"
            # Read-write on the private copy only, so SQLite can roll a hot journal back.
            return self._open(self._private_copy(wal, journal), "mode=rw"), "copy"
        except _READ_ERRORS as exc:
            raise self._error(exc) from None
        except OSError as exc:
            raise self._failure(f"cannot read: {exc.strerror or exc}") from None

    def _sidecar(self, suffix: str) -> Path | None:
        """The database's ``-wal`` or ``-journal`` file when it holds anything."""
        path = Path(f"{self.path}{suffix}")
        return path if path.is_file() and path.stat().st_size > 0 else None

    def _private_copy(self, wal: Path | None, journal: Path | None) -> Path:
        self._tmpdir = tempfile.mkdtemp(prefix="asf-hermes-")
        copy = Path(self._tmpdir) / self.path.name
        shutil.copyfile(self.path, copy)
        for sidecar, suffix in ((wal, "-wal"), (journal, "-journal")):
            if sidecar is not None:
                shutil.copyfile(sidecar, Path(f"{copy}{suffix}"))
        return copy

    def _take_snapshot(self) -> None:
        """Replace the connection by one to a private copy of the committed database, made by
        SQLite's backup in one step (one read lock, released when the copy is done)."""
        if self._tmpdir is None:
            self._tmpdir = tempfile.mkdtemp(prefix="asf-hermes-")
        copy = Path(self._tmpdir) / "snapshot.db"
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
            raise self._error(exc) from None
        except OSError as exc:
            raise self._failure(f"cannot copy: {exc.strerror or exc}") from None
        self.access = "copy"
        self._backup = True

    def _failure(self, reason: str) -> StoreError:
        """The error for a file that cannot be read: what the file shows, else ``reason``."""
        return StoreError(sniff.problem(self.path) or reason)

    def _error(self, exc: BaseException) -> StoreError:
        """The error for what SQLite raised reading the file."""
        if isinstance(exc, UnicodeDecodeError):
            return self._failure("cannot read the database: damaged schema")
        return self._failure(f"cannot read the database: {_one_line(str(exc))}")

    # -- low-level reads -------------------------------------------------------------------

    def _query(self, sql: str, params: Sequence[Cell] = ()) -> list[tuple[Cell, ...]]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except _READ_ERRORS as exc:
            raise self._error(exc) from None

    def _scalar(self, sql: str) -> Cell:
        rows = self._query(sql)
        return rows[0][0] if rows else None

    def _read_tables(self) -> frozenset[str]:
        rows = self._query("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        return frozenset(name for (name,) in rows if isinstance(name, str))

    def _table_columns(self, table: str) -> tuple[str, ...]:
        # table_xinfo also lists generated columns (hidden 2 and 3); 1 is a virtual table's hidden.
        rows = self._query(f"PRAGMA table_xinfo({_quote_ident(table)})")
        return tuple(str(row[1]) for row in rows if row[-1] in (0, 2, 3))

    def _begin(self) -> None:
        if self._snapshot:
            self._query("BEGIN")
            self._query("SELECT count(*) FROM sqlite_master")

    def _select(
        self, table: str, where: str = "", params: Sequence[Cell] = (), order: str = ""
    ) -> list[Columns]:
        names = self._columns.get(table, ())
        if not names:
            return []
        sql = f"SELECT {', '.join(map(_quote_ident, names))} FROM {_quote_ident(table)}"
        if where:
            sql += f" WHERE {where}"
        if order:
            sql += f" ORDER BY {order}"
        index = self._indexes[table]
        return [Columns.from_values(names, row, index) for row in self._query(sql, params)]

    def _read_versions(self) -> tuple[int, ...]:
        if "version" not in self._columns.get("schema_version", ()):
            return ()
        rows = self._query("SELECT version FROM schema_version ORDER BY rowid")
        return tuple(v for (v,) in rows if isinstance(v, int))

    def _order(self, table: str, *columns: str) -> str:
        """ORDER BY the columns the table has (``id`` by default), else its first column.

        Never ``rowid``: a table may be WITHOUT ROWID, and VACUUM renumbers rowids.
        """
        present = [c for c in columns or ("id",) if c in self._columns.get(table, ())]
        return ", ".join(map(_quote_ident, present)) if present else "1"

    # -- Store -----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    def version(self) -> int | None:
        """The first row of ``schema_version``, as Hermes reads it."""
        return self._versions[0] if self._versions else None

    def schema_versions(self) -> tuple[int, ...]:
        """Every integer row of ``schema_version`` (Hermes keeps one)."""
        return self._versions

    def info(self) -> dict[str, str | int | None]:
        """Facts about the store for a report: file, schema version, journal mode, access."""
        return {
            "name": self._name,
            "path": str(self.path),
            "schema_version": self.version(),
            "journal_mode": self.journal_mode,
            "access": self.access,
        }

    def tables(self) -> frozenset[str]:
        """The tables and views the database has."""
        return self._tables

    def columns(self, table: str) -> tuple[str, ...]:
        """A table's columns in order; empty when there is no such table (or it cannot be read)."""
        if table not in self._columns and table in self._tables:
            try:
                self._columns[table] = self._table_columns(table)
            except StoreError:  # e.g. an FTS table whose module this SQLite lacks
                self._columns[table] = ()
        return self._columns.get(table, ())

    def sessions(self) -> tuple[tuple[Session, ...], tuple[Stray, ...]]:
        return read_sessions(self._rows, self._select("sessions", order=self._order("sessions")))

    def messages(self, session_id: str) -> tuple[Message, ...]:
        if "session_id" not in self._columns["messages"]:
            return ()
        rows = self._select(
            "messages", '"session_id" = ?', (session_id,), order=self._order("messages")
        )
        return tuple(self._rows.message(cols, i) for i, cols in enumerate(rows))

    def system_prompt(self, prompt_hash: str) -> str | None:
        if not {"hash", "prompt"} <= set(self._columns.get("system_prompts", ())):
            return None
        rows = self._query('SELECT "prompt" FROM system_prompts WHERE "hash" = ?', (prompt_hash,))
        return cell_text(rows[0][0]) if rows else None

    def model_usage(self, session_id: str) -> tuple[Columns, ...]:
        if "session_id" not in self._columns.get("session_model_usage", ()):
            return ()
        return tuple(
            self._select(
                "session_model_usage",
                '"session_id" = ?',
                (session_id,),
                order=self._order("session_model_usage", *_USAGE_KEY),
            )
        )

    def delegations(self) -> tuple[Delegation, ...]:
        order = self._order("async_delegations", "dispatched_at", "delegation_id")
        return tuple(map(self._rows.delegation, self._select("async_delegations", order=order)))

    def orphans(self, known_ids: Collection[str]) -> tuple[Stray, ...]:
        if "session_id" not in self._columns["messages"]:
            rows = self._select("messages", order=self._order("messages"))
            return tuple(
                message_stray(self._rows.message(c, i), "no session") for i, c in enumerate(rows)
            )
        known = set(known_ids)
        keys = [k for (k,) in self._query('SELECT DISTINCT "session_id" FROM messages')]
        strays: list[Stray] = []
        for key in keys:
            if isinstance(key, str) and not isinstance(key, RawText) and key in known:
                continue
            where = '"session_id" IS ?'
            if isinstance(key, RawText):  # bound as a blob: compare the text's bytes
                where = 'typeof("session_id") = \'text\' AND CAST("session_id" AS BLOB) = ?'
            rows = self._select("messages", where, (key,), order=self._order("messages"))
            for i, cols in enumerate(rows):
                message = self._rows.message(cols, i)
                if isinstance(key, RawText):
                    why = "its session id is not valid UTF-8"
                elif isinstance(key, str):
                    why = f"its session {key!r} is not in sessions"
                else:
                    why = "it names no session"
                strays.append(message_stray(message, None if message.error else why))
        strays.sort(key=lambda s: s.unit)
        return tuple(strays)

    def row_counts(self) -> Mapping[str, RowCounts]:
        names = self._columns["messages"]
        if "session_id" not in names:
            return {}
        active = (
            "CASE WHEN typeof(active) IN ('integer', 'real') AND active = 0 THEN 0 ELSE 1 END"
            if "active" in names
            else "1"
        )
        rows = self._query(
            f'SELECT "session_id", sum({active}), count(*) FROM messages GROUP BY "session_id"'
        )
        out: dict[str, RowCounts] = {}
        for key, live, total in rows:
            text = cell_text(key)
            if text is not None and isinstance(live, int) and isinstance(total, int):
                out[text] = RowCounts(active=live, inactive=total - live)
        return out

    # -- lifetime --------------------------------------------------------------------------

    def refresh(self) -> None:
        """Move to the newest committed state (the store reads from one snapshot)."""
        if self._snapshot:
            self._query("COMMIT")
            self._begin()
        elif self._backup:
            try:
                source = self._open(self.path, "mode=ro")
            except _READ_ERRORS as exc:
                raise self._error(exc) from None
            self._conn.close()
            self._conn = source
            self._take_snapshot()

    def close(self) -> None:
        """Close the connection and remove a private copy; safe to call twice."""
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None  # type: ignore[assignment]
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r}, access={self.access!r})"
