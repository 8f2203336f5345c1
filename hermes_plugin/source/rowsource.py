"""A unit's message rows read in a worker process, exactly as the host's snapshot holds them.

The host reads the plan (sessions, and per session the rows' *marks*) from one snapshot of the
database; a worker converting a unit opens the same file (the database, or the host's private
copy of it) read-only and reads the unit's rows itself, so the host never reads or ships them.
The worker's read is a snapshot of its own, taken later: it is used only when the unit's marks
in it are the host's, i.e. when none of the unit's rows was added, deleted or changed in place
since the host's snapshot (Hermes only appends rows, ids never reused, and changes only
``active``, ``compacted`` and ``api_content`` in place: the marks cover exactly that). Else the
unit goes back to the host (:class:`~asf_core.formats.NeedsHost`), which reads the rows from
its own snapshot. A private copy never changes, so there the marks always agree. A
database read pinned (at rest, in place: :mod:`hermes_plugin.source.opening`) is looked at
after the read: changed since the host pinned it, the unit raises
:class:`~asf_core.formats.StoreChanged` (the conversion starts again).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from attrs import frozen

from asf_core.formats import NeedsHost, StoreChanged, StoreError
from hermes_plugin.source import sniff
from hermes_plugin.source.columns import Cell, fetch_rows, text_cell
from hermes_plugin.source.snapshots import Stamp, file_stamp

__all__ = ["Marks", "RowSource", "marks", "read_rows"]

#: Per session id (its ``repr``): count, highest and summed ids, and the rows in a state
#: other than the plain one with that state.
Marks = dict[str, tuple[object, ...]]
Query = Callable[[str, Sequence[Cell]], list[tuple[Cell, ...]]]

#: The columns Hermes changes in place, and their plain state.
_PLAIN = {"active": '"active" IS 1', "compacted": '"compacted" IS 0', "api_content": ""}


def marks(query: Query, names: Sequence[str], sessions: Sequence[str] | None = None) -> Marks:
    """Per session id: what changes when Hermes adds, deletes or alters a session's rows,
    without reading them: the count, highest and summed ids (from an index where there is
    one), and every row whose state is not the plain one (live, not compacted, no
    ``api_content``) with that state. ``sessions``: only those sessions' (all by default)."""
    if "session_id" not in names or "id" not in names:
        return {}
    where, params = "", list(sessions or ())
    if sessions is not None:
        where = f' WHERE "session_id" IN ({", ".join("?" * len(params))})'
    found: Marks = {}
    rows = query(
        f'SELECT "session_id", count(*), max("id"), total("id") FROM messages{where}'
        ' GROUP BY "session_id"',
        params,
    )
    for key, count, top, total in rows:
        found[repr(key)] = (count, top, total)
    changed = [c for c in _PLAIN if c in names]
    if not changed:
        return found
    odd_where = " AND ".join(_PLAIN[c] or f'"{c}" IS NULL' for c in changed)
    cells = ", ".join(f'"{c}"' for c in changed)
    rows = query(
        f'SELECT "session_id", "id", {cells} FROM messages'
        f'{where or " WHERE 1"} AND NOT ({odd_where}) ORDER BY "id"',
        params,
    )
    odd: dict[str, list[tuple[Cell, ...]]] = {}
    for row in rows:
        odd.setdefault(repr(row[0]), []).append(row[1:])
    return {key: (*mark, tuple(odd.get(key, ()))) for key, mark in found.items()}


@frozen(kw_only=True)
class RowSource:
    """Where and how a worker reads a unit's message rows (picklable)."""

    #: The file the host reads (the database or its private copy), and how to open it.
    path: str
    options: str
    #: The database itself, named in errors.
    source: str
    #: ``messages``' columns, and the statement reading one session's rows in order.
    columns: tuple[str, ...]
    select: str
    #: The database's stamp when the host reads it pinned (None: a snapshot, nothing to check).
    pinned: Stamp = None

    def check(self) -> None:
        """:class:`StoreChanged` when the database is pinned and no longer as it was."""
        if self.pinned is not None and file_stamp(Path(self.source)) != self.pinned:
            raise StoreChanged("the database changed while it was read")


#: This process's connection to the file it last read (jobs of one store come in a row).
_connection: tuple[tuple[str, str], sqlite3.Connection] | None = None


def _connect(source: RowSource) -> sqlite3.Connection:
    global _connection
    key = (source.path, source.options)
    if _connection is not None and _connection[0] == key:
        return _connection[1]
    if _connection is not None:
        _connection[1].close()
        _connection = None
    uri = sniff.database_uri(source.path, source.options)
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.text_factory = text_cell
    _connection = (key, conn)
    return conn


def _error(source: RowSource, exc: BaseException) -> StoreError:
    text = " ".join("".join(c if c.isprintable() else " " for c in str(exc)).split())[:200]
    return StoreError(sniff.problem(Path(source.source)) or f"cannot read the database: {text}")


def read_rows(
    source: RowSource, sessions: Sequence[str], expected: Mapping[str, tuple[object, ...]]
) -> dict[str, list[tuple[Cell, ...]]]:
    """Each session's message rows, read in one snapshot in which the sessions' marks are
    ``expected`` (the host's); :class:`NeedsHost` when they are not."""
    if not source.select:
        return {sid: [] for sid in sessions}
    try:
        conn = _connect(source)

        def query(sql: str, params: Sequence[Cell]) -> list[tuple[Cell, ...]]:
            return fetch_rows(conn, sql, params)

        conn.execute("BEGIN")
        try:
            now = marks(query, source.columns, sessions)
            if any(now.get(repr(sid)) != expected.get(repr(sid)) for sid in sessions):
                source.check()
                raise NeedsHost("the unit's rows changed since the plan was read")
            rows = {sid: query(source.select, (sid,)) for sid in sessions}
        finally:
            conn.execute("COMMIT")
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        source.check()
        raise _error(source, exc) from None
    source.check()
    return rows
