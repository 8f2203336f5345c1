"""A session's message rows are read in id order without SQLite sorting the rows themselves
where ``id`` is the rowid (found by the ids the session's index holds), by the host and by a
worker alike: the very rows, in the very order, of the plain read."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from fixture_paths import SHARED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from id_order_stores import ID_KEYS, id_order_store

from hermes_plugin.source.database import SqliteStore
from hermes_plugin.source.rowsource import read_rows

HOME = SHARED / "hermes" / "fixtures" / "hermes-0.19.0"


def test_a_session_s_rows_are_read_without_sorting_them(tmp_path: Path) -> None:
    shutil.copyfile(HOME / "state.db", tmp_path / "state.db")
    with SqliteStore(tmp_path / "state.db") as store:
        plan = store.db.query(f"EXPLAIN QUERY PLAN {store._session_rows()}", ("x",))
    details = [str(row[-1]) for row in plan]
    assert any("INTEGER PRIMARY KEY (rowid=?)" in d for d in details), details
    assert not any("TEMP B-TREE" in d for d in details), details


def _plain(path: Path, session: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        rows = db.execute('SELECT * FROM messages WHERE "session_id" = ? ORDER BY "id"', (session,))
        return rows.fetchall()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.tuples(st.integers(1, 10**6), st.sampled_from(["a", "b"]), st.text(max_size=3)),
        unique_by=lambda r: r[0],
        max_size=14,
    ),
    key=ID_KEYS,
    null_id=st.booleans(),
)
def test_a_session_s_rows_are_the_plain_read(
    tmp_path: Path, rows: list[tuple[int, str, str]], key: str, null_id: bool
) -> None:
    """Ids out of time order, and tables whose ``id`` is not the rowid (then read the plain
    way, which also finds NULL ids)."""
    given = [(rid, session, "user", content) for rid, session, content in rows]
    path = id_order_store(
        tmp_path / f"{abs(hash((tuple(rows), key, null_id)))}.db", given, key, null_id
    )
    with SqliteStore(path) as store:
        plain = {s: _plain(path, s) for s in ("a", "b")}
        assert {s: [c.values() for c in store.message_cells(s)] for s in plain} == plain
        assert read_rows(store.row_source(), ("a", "b"), store.message_marks()) == plain
    path.unlink()


def test_a_numeric_session_column_finds_the_rows_the_plain_read_does(tmp_path: Path) -> None:
    """A ``session_id`` column of numeric affinity stores ``'42'`` as the integer 42, which
    ``"session_id" = '42'`` still finds (the column's affinity applies to the text): the
    rows are read (and said to be damaged), never silently dropped."""
    path = tmp_path / "state.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL)")
        db.execute(
            "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id INTEGER, role TEXT,"
            " content TEXT, timestamp REAL)"
        )
        db.execute("CREATE INDEX m_session ON messages(session_id, timestamp)")
        db.execute("INSERT INTO sessions VALUES ('42', 'cli', 1.0)")
        db.executemany(
            "INSERT INTO messages VALUES (?, '42', 'user', ?, 1.0)", [(2, "b"), (1, "a")]
        )
    with SqliteStore(path) as store:
        plain = {"42": _plain(path, "42")}
        assert [row[0] for row in plain["42"]] == [1, 2]
        assert {s: [c.values() for c in store.message_cells(s)] for s in plain} == plain
        assert read_rows(store.row_source(), ("42",), store.message_marks()) == plain

    with SqliteStore(path) as store:  # and its preview, found by id the same way
        assert store.first_prompt("42") == "a"
