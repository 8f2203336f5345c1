"""The rows of a Hermes ``state.db``, read-only, while Hermes may be writing it.

The file is opened as :mod:`hermes_plugin.source.opening` says (never written, one committed
state at a time). Rows are read by column name (``PRAGMA table_info``), so every schema version
and any future column reads; text that is not valid UTF-8 is kept as
:class:`~hermes_plugin.source.columns.RawText`. A file that cannot be read raises the host's
:class:`~asf_core.formats.StoreError` saying what is wrong in the user's words; so does one that
lacks the ``sessions`` or ``messages`` table.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from asf_core.formats import StoreError
from hermes_plugin.source.columns import Cell, Columns, RawText, Rows, cell_text, index_of
from hermes_plugin.source.decode import Content, decode_content
from hermes_plugin.source.opening import Access, ReadOnlyConnection
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Delegation, Message, Session
from hermes_plugin.source.rowsource import RowSource, marks
from hermes_plugin.source.store import (
    ClosesOnExit,
    RowCounts,
    Stray,
    message_stray,
    read_sessions,
)

__all__ = ["PREVIEW_BY_ID", "SqliteStore"]

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
#: Ids bound in one ``IN (...)`` list (SQLite allows 32766 variables since 3.32).
_BATCH = 500
#: Text cells of ``sessions`` this long or longer are shared by the rows holding equal text.
_SHARED_TEXT = 256


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def content_text(content: Content) -> str:
    """A content's text: the text, or its text parts joined by newlines."""
    if not content.structured:
        return content.text
    texts = [
        p["text"] for p in content.parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]
    return "\n".join(str(t) for t in texts)


#: The rows a session's preview may come from: the user's, with text.
_PREVIEW_ROWS = '"role" = \'user\' AND "content" IS NOT NULL AND "content" != \'\''
#: Those rows of one session (bound twice), found by the ids its index holds, in id order.
PREVIEW_BY_ID = (
    'SELECT "content" FROM messages WHERE "id" IN'
    ' (SELECT "id" FROM messages WHERE "session_id" = ?)'
    f' AND ("session_id" = ?) IS TRUE AND {_PREVIEW_ROWS} ORDER BY "id" LIMIT 5'
)


class SqliteStore(ClosesOnExit):
    """The rows of one ``state.db``, read-only: a :class:`~hermes_plugin.source.store.Store`,
    and a context manager that closes it.

    ``name`` names the store in findings (default: the path as given). Raises
    :class:`~asf_core.formats.StoreError` when the file is no SQLite database, is damaged, or
    lacks the ``sessions`` or ``messages`` table.
    """

    def __init__(self, path: str | os.PathLike[str], *, name: str | None = None) -> None:
        self.path = Path(path)
        self._name = name if name is not None else str(path)
        self._rows = RowReader(self._name)
        self._sessions: tuple[tuple[Session, ...], tuple[Stray, ...]] | None = None
        self._id_key: bool | None = None
        #: Read once per snapshot: ``read`` lists the strays and the run's end counts the rows.
        self._keys: list[Cell] | None = None
        self._counts: list[tuple[Cell, ...]] | None = None
        self.db = ReadOnlyConnection(self.path)
        try:
            self._tables = self._read_tables()
            missing = [t for t in _REQUIRED_TABLES if t not in self._tables]
            if missing:
                tables = " or ".join(missing)
                raise self.db.failure(f"no {tables} table: not a Hermes database")
            self._columns = {t: self._table_columns(t) for t in _READ_TABLES if t in self._tables}
            self._indexes = {t: index_of(names) for t, names in self._columns.items()}
            self._versions = self._read_versions()
        except BaseException:
            self.close()
            raise

    @property
    def access(self) -> Access:
        """How the file was opened (see :mod:`hermes_plugin.source.opening`)."""
        return self.db.access

    @property
    def journal_mode(self) -> str:
        return self.db.journal_mode

    # -- low-level reads -------------------------------------------------------------------

    def _read_tables(self) -> frozenset[str]:
        rows = self.db.query("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        return frozenset(name for (name,) in rows if isinstance(name, str))

    def _table_columns(self, table: str) -> tuple[str, ...]:
        # table_xinfo also lists generated columns (hidden 2 and 3); 1 is a virtual table's hidden.
        rows = self.db.query(f"PRAGMA table_xinfo({_quote_ident(table)})")
        return tuple(str(row[1]) for row in rows if row[-1] in (0, 2, 3))

    def _select(
        self,
        table: str,
        where: str = "",
        params: Sequence[Cell] = (),
        order: str = "",
        *,
        share_text: bool = False,
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
        rows = self.db.query(sql, params, _TextSharing() if share_text else None)
        return [Columns(names, row, index) for row in rows]

    def _read_versions(self) -> tuple[int, ...]:
        if "version" not in self._columns.get("schema_version", ()):
            return ()
        rows = self.db.query("SELECT version FROM schema_version ORDER BY rowid")
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

    def info(self) -> dict[str, str | int | float | None]:
        """Facts about the store for a report: file, schema version, journal mode, access;
        how a copy was made when it was not SQLite's backup (``snapshot``), and how long a
        writer's lock was waited for, when it was (``lock_wait_seconds``)."""
        info: dict[str, str | int | float | None] = {
            "name": self._name,
            "path": str(self.path),
            "schema_version": self.version(),
            "journal_mode": self.journal_mode,
            "access": self.access,
        }
        if self.db.snapshot not in (None, "backup"):
            info["snapshot"] = self.db.snapshot
        if self.db.waited >= 0.05:
            info["lock_wait_seconds"] = round(self.db.waited, 1)
        return info

    def columns(self, table: str) -> tuple[str, ...]:
        """A table's columns in order; empty when there is no such table (or it cannot be read)."""
        if table not in self._columns and table in self._tables:
            try:
                self._columns[table] = self._table_columns(table)
            except StoreError:  # e.g. an FTS table whose module this SQLite lacks
                self._columns[table] = ()
        return self._columns.get(table, ())

    def sessions(self) -> tuple[tuple[Session, ...], tuple[Stray, ...]]:
        """Every row of ``sessions``, read once per snapshot (``read`` lists them, the plan
        reads them again)."""
        if self._sessions is None:
            rows = self._select("sessions", order=self._order("sessions"), share_text=True)
            self._sessions = read_sessions(self._rows, rows)
        return self._sessions

    def messages(self, session_id: str) -> tuple[Message, ...]:
        cells = self.message_cells(session_id)
        return tuple(self._rows.message(c, f"{i}@{session_id}") for i, c in enumerate(cells))

    def message_cells(self, session_id: str) -> list[Columns]:
        """A session's rows of ``messages`` as read, in id order, not yet decoded (a worker
        decodes them: :meth:`RowReader.message` with each row's place, ``<n>@<session>``)."""
        sql = self._session_rows()
        if not sql:
            return []
        names, index = self._columns["messages"], self._indexes["messages"]
        return [Columns(names, row, index) for row in self.db.query(sql, (session_id,))]

    def _session_rows(self) -> str:
        """The statement reading one session's rows of ``messages`` in id order, its one
        parameter (``?1``) the session's id; "" for a table without ``session_id``.

        Where ``id`` is the rowid, the session's ids are taken from its index and its rows read
        by id in that order, as :data:`PREVIEW_BY_ID` does: ordering the rows themselves copies
        each whole row into a temporary b-tree to sort it, a fifth of SQLite's work here.
        ``IS TRUE`` keeps SQLite off the session's index, as ``+"session_id"`` would, but
        keeps the column's affinity (a numeric column holds ``'42'`` as 42)."""
        names = self._columns["messages"]
        if "session_id" not in names:
            return ""
        select = f"SELECT {', '.join(map(_quote_ident, names))} FROM messages"
        if self._ids_are_keys():
            return (
                f'{select} WHERE "id" IN (SELECT "id" FROM messages WHERE "session_id" = ?1)'
                ' AND ("session_id" = ?1) IS TRUE ORDER BY "id"'
            )
        return f'{select} WHERE "session_id" = ?1 ORDER BY {self._order("messages")}'

    def message_marks(self) -> dict[str, tuple[object, ...]]:
        """Per session id (``repr``), what changes when Hermes adds, deletes or alters a
        session's rows, without reading them (:func:`~hermes_plugin.source.rowsource.marks`)."""
        return marks(self.db.query, self._columns["messages"])

    def row_source(self) -> RowSource:
        """How another process reads this store's message rows as this one does: the file
        this connection reads (the database, or its private copy), opened read-only, and the
        statement :meth:`message_cells` runs."""
        path, options = self.db.opened
        names = self._columns["messages"]
        sql = self._session_rows()
        return RowSource(
            path=str(path),
            options=options.replace("mode=rw", "mode=ro"),
            source=str(self.path),
            columns=names,
            select=sql,
            pinned=self.db.pinned,
        )

    def usage_by_session(self) -> dict[str, list[Columns]]:
        """Every row of ``session_model_usage`` by session id, in each session's order."""
        if "session_id" not in self._columns.get("session_model_usage", ()):
            return {}
        order = self._order("session_model_usage", "session_id", *_USAGE_KEY)
        out: dict[str, list[Columns]] = {}
        for cols in self._select("session_model_usage", order=order):
            out.setdefault(repr(cols.get("session_id")), []).append(cols)
        return out

    def system_prompt(self, prompt_hash: str) -> str | None:
        if not {"hash", "prompt"} <= set(self._columns.get("system_prompts", ())):
            return None
        rows = self.db.query('SELECT "prompt" FROM system_prompts WHERE "hash" = ?', (prompt_hash,))
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
        if self._keys is None:
            self._keys = [k for (k,) in self.db.query('SELECT DISTINCT "session_id" FROM messages')]
        keys = self._keys
        strays: list[Stray] = []
        for group, key in enumerate(keys):
            if isinstance(key, str) and not isinstance(key, RawText) and key in known:
                continue
            where = '"session_id" IS ?'
            if isinstance(key, RawText):  # bound as a blob: compare the text's bytes
                where = 'typeof("session_id") = \'text\' AND CAST("session_id" AS BLOB) = ?'
            rows = self._select("messages", where, (key,), order=self._order("messages"))
            for i, cols in enumerate(rows):
                # A row without a usable id is named by its place: in its session, or in the
                # group of rows naming no known session it was read with.
                place = f"{i}@{key}" if type(key) is str else f"{i}?{group}"
                message = self._rows.message(cols, place)
                if isinstance(key, RawText):
                    why = "its session id is not valid UTF-8"
                elif isinstance(key, str):
                    why = f"its session {key!r} is not in sessions"
                else:
                    why = "it names no session"
                strays.append(message_stray(message, None if message.error else why))
        strays.sort(key=lambda s: s.unit)
        return tuple(strays)

    def row_counts(self, ids: Collection[str] | None = None) -> Mapping[str, RowCounts]:
        names = self._columns["messages"]
        if "session_id" not in names:
            return {}
        active = (
            "CASE WHEN typeof(active) IN ('integer', 'real') AND active = 0 THEN 0 ELSE 1 END"
            if "active" in names
            else "1"
        )
        sql = f'SELECT "session_id", sum({active}), count(*) FROM messages'
        rows: list[tuple[Cell, ...]] = []
        if ids is None:
            if self._counts is None:
                self._counts = self.db.query(f'{sql} GROUP BY "session_id"')
            rows = self._counts
        else:
            wanted = sorted(set(ids))
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start : start + _BATCH]
                marks = ", ".join("?" * len(batch))
                rows += self.db.query(f'{sql} WHERE "session_id" IN ({marks}) GROUP BY 1', batch)
        out: dict[str, RowCounts] = {}
        for key, live, total in rows:
            text = cell_text(key)
            if text is not None and isinstance(live, int) and isinstance(total, int):
                out[text] = RowCounts(active=live, inactive=total - live)
        return out

    def first_prompt(self, session_id: str) -> str | None:
        # Rewound and compacted rows count: the first message is the one the user wrote first.
        names = self._columns["messages"]
        if not {"session_id", "role", "content"} <= set(names):
            return None
        if self._ids_are_keys():
            # The session's ids from its index alone, then its rows by id in that order, so
            # only the first few are read: sorting the session's rows by id read every one
            # (24 s to list an 80k-row home whose file was not in the page cache).
            rows = self.db.query(PREVIEW_BY_ID, (session_id, session_id))
        else:
            order = self._order("messages")
            sql = f'SELECT "content" FROM messages WHERE "session_id" = ? AND {_PREVIEW_ROWS}'
            rows = self.db.query(f"{sql} ORDER BY {order} LIMIT 5", (session_id,))
        for (cell,) in rows:
            text = content_text(decode_content(cell)[0]).strip()
            if text:
                return text
        return None

    def _ids_are_keys(self) -> bool:
        """Whether ``messages.id`` is the table's rowid (an ``INTEGER PRIMARY KEY``): never
        NULL, and a row is found by it at once. SQLite's own plan says so; a view, another
        key or ``INTEGER PRIMARY KEY DESC`` (which may hold NULL) are read the plain way."""
        if self._id_key is None:
            plan = self.db.query('EXPLAIN QUERY PLAN SELECT 1 FROM messages WHERE "id" = 0')
            self._id_key = any("INTEGER PRIMARY KEY (rowid=?)" in str(row[-1]) for row in plan)
        return self._id_key

    # -- lifetime --------------------------------------------------------------------------

    def refresh(self) -> None:
        """Move to the newest committed state (the store reads from one snapshot)."""
        self.db.refresh()
        self._sessions = self._keys = self._counts = None

    def close(self) -> None:
        """Close the database and remove a private copy; safe to call twice."""
        db = getattr(self, "db", None)
        if db is not None:
            db.close()

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r}, access={self.access!r})"


class _TextSharing:
    """Passes batches of rows through with each long text cell that equals one of an
    earlier row replaced by the very same string. Hermes writes the same system prompt (and
    model settings) into session after session, and the session rows are held for the whole
    run: each copy would cost its size (twice that for most prompts, stored two bytes a
    character), and its size again in UTF-8 once pickled for a worker (Python keeps that
    encoding with the string). Given the rows a batch at a time, the copies are let go
    before the next batch is read."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, rows: Rows) -> Rows:
        seen = self.seen
        return [
            tuple(
                seen.setdefault(c, c) if type(c) is str and len(c) >= _SHARED_TEXT else c
                for c in row
            )
            for row in rows
        ]
