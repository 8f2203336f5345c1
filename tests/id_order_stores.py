"""Toy Hermes stores whose ``messages.id`` is or is not the rowid, for the tests that read a
session's rows by the ids its index holds (previews, a session's rows) against the plain read.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hypothesis import strategies as st

#: How ``messages.id`` is declared: the rowid, the rowid in a descending key, a plain column.
ID_KEYS = st.sampled_from(["INTEGER PRIMARY KEY", "INTEGER PRIMARY KEY DESC", "INTEGER"])


def id_order_store(
    path: Path, rows: list[tuple[int, str, str, str | None]], key: str, null_id: bool
) -> Path:
    """A store at ``path`` with sessions ``a`` and ``b`` and ``rows`` (id, session, role,
    content), timestamps running against the ids; with ``null_id`` (where ``id`` is not the
    rowid) one more row without an id. Returns ``path``."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL)")
        db.execute(
            f"CREATE TABLE messages (id {key}, session_id TEXT, role TEXT, content TEXT,"
            " timestamp REAL)"
        )
        db.execute("CREATE INDEX m_session ON messages(session_id, timestamp)")
        db.executemany("INSERT INTO sessions VALUES (?, 'cli', 1.0)", [("a",), ("b",)])
        for n, (rid, session, role, content) in enumerate(rows):
            db.execute(
                "INSERT INTO messages VALUES (?, ?, ?, ?, ?)", (rid, session, role, content, -n)
            )
        if null_id and key != "INTEGER PRIMARY KEY":
            db.execute("INSERT INTO messages VALUES (NULL, 'a', 'user', 'the null one', 99)")
    return path
