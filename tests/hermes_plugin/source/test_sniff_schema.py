"""Whether a file's schema is Hermes' (``sniff.hermes_schema``): both tables, and ``messages``
with ``session_id`` and ``role``; and that nothing here waits on a pipe."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_plugin.source import sniff


def _sqlite(path: Path, *tables: str) -> Path:
    conn = sqlite3.connect(path)
    for table in tables:
        conn.execute(f"CREATE TABLE {table}")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize(
    ("tables", "hermes"),
    [
        (("sessions (id TEXT)", "messages (id INTEGER, session_id TEXT, role TEXT)"), True),
        (("messages (id INTEGER, session_id TEXT, role TEXT)",), False),
        (("sessions (id TEXT)", "messages (id INTEGER, session_id TEXT)"), False),
        (("sessions (id TEXT)", "messages (id INTEGER, role TEXT)"), False),
        (("sessions (id TEXT)", "notes (id INTEGER, session_id TEXT, role TEXT)"), False),
    ],
)
def test_a_schema_is_hermes_with_both_tables_and_a_messages_session_and_role(
    tmp_path: Path, tables: tuple[str, ...], hermes: bool
) -> None:
    assert sniff.hermes_schema(_sqlite(tmp_path / "state.db", *tables)) is hermes


def _returns_soon(call: Callable[[], Any]) -> Any:
    """The call's answer, failing the test if it blocks (a daemon thread is left behind)."""
    answer: list[Any] = []
    thread = threading.Thread(target=lambda: answer.append(call()), daemon=True)
    thread.start()
    thread.join(timeout=5)
    assert not thread.is_alive(), "blocked"
    return answer[0]


def test_a_pipe_named_state_db_is_never_opened(tmp_path: Path) -> None:
    """Opening a pipe for reading waits for a writer: a pipe is no database to look into."""
    pipe = tmp_path / "state.db"
    os.mkfifo(pipe)
    assert sniff.kind(pipe) == "other"
    assert _returns_soon(lambda: sniff.hermes_schema(pipe)) is None
    assert _returns_soon(lambda: sniff.wal_format(pipe)) is False
    assert _returns_soon(lambda: sniff.is_sqlite(pipe)) is False
    assert _returns_soon(lambda: sniff.problem(pipe)) == "not a regular file"


def test_a_database_whose_path_has_uri_characters_is_read_where_it_is(tmp_path: Path) -> None:
    """``?``, ``#`` and ``%`` in a folder's name are the path's own, not a URI's query,
    fragment or escape: the schema is read from the file there (and from no other)."""
    import hermes_state

    folder = tmp_path / "a?mode=memory#b%41"
    folder.mkdir()
    db = folder / "state.db"
    hermes_state.SessionDB(db_path=db).close()
    assert sniff.hermes_schema(db) is True
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder.name]
