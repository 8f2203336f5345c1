"""Damaged databases: every bad cell is a problem or a stray, a bad file one StoreError.

Never an uncaught exception, and never a change to the file: each test
hashes the bytes before and after reading.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from fixture_paths import SHARED
from hermes_columns import to_json
from hermes_homes import open_database
from hermes_memory_store import MemoryStore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asf_core.formats import StoreError
from hermes_plugin.source.columns import text_cell
from hermes_plugin.source.database import SqliteStore
from hermes_plugin.source.discovery import NOT_HERMES, claims
from hermes_plugin.source.listing import list_sessions
from hermes_plugin.source.relations import Relation, classify_all, parent_cycles
from hermes_plugin.source.rows import Message, Session
from hermes_plugin.source.store import Store, message_stray

FIXTURE_DB = SHARED / "hermes" / "fixtures" / "hermes-0.19.0" / "state.db"

# Loose tables (no NOT NULL, no primary keys) so damage can be written.
SCHEMA = [
    """CREATE TABLE sessions (id, source, model_config, parent_session_id, started_at, ended_at,
        end_reason, session_key, title, archived, origin_json)""",
    """CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id, role, content, tool_calls,
        tool_call_id, timestamp, reasoning_details, codex_reasoning_items, codex_message_items,
        display_metadata, absorbed_message_uids, tool_call_uids, active, reasoning_content)""",
    "CREATE TABLE schema_version (version)",
    "INSERT INTO schema_version VALUES ('thirty')",
]
T = 1_790_000_000.0


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sessions_with_messages(store: Store) -> Iterator[tuple[Session, tuple[Message, ...]]]:
    """Each readable session with its message rows, one session at a time."""
    sessions, _ = store.sessions()
    for session in sessions:
        yield session, store.messages(session.id)


def read_everything(path: Path) -> None:
    """Everything a converter and ``asf list`` read."""
    with SqliteStore(path, name="state.db") as store:
        store.info()
        listing = list_sessions(store)
        for session, messages in sessions_with_messages(store):
            store.model_usage(session.id)
            for message in messages:
                if message.error:
                    message_stray(message)
                to_json(message.cols)
                [c.arguments_text() for c in message.tool_calls]
            to_json(session.cols)
        store.delegations()
        assert listing.database == "state.db"


def _build(
    path: Path, sessions: Sequence[tuple[object, ...]], messages: Sequence[tuple[object, ...]]
) -> None:
    conn = sqlite3.connect(path)
    for sql in SCHEMA:
        conn.execute(sql)
    conn.executemany("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?)", sessions)
    conn.executemany(
        "INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        messages,
    )
    conn.commit()
    conn.close()


def _msg(i: int, session: object, **cells: object) -> tuple[object, ...]:
    row: dict[str, object] = {
        "id": i,
        "session_id": session,
        "role": "user",
        "content": "x",
        "tool_calls": None,
        "tool_call_id": None,
        "timestamp": T + i,
        "reasoning_details": None,
        "codex_reasoning_items": None,
        "codex_message_items": None,
        "display_metadata": None,
        "absorbed_message_uids": None,
        "tool_call_uids": None,
        "active": 1,
        "reasoning_content": None,
    }
    row.update(cells)
    return tuple(row.values())


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    bad_json = "{not json"
    sessions = [
        ("ok", "cli", json.dumps({"a": 1}), None, T, T + 9, "cli_close", None, None, 0, None),
        ("badcfg", "cli", bad_json, None, T, None, None, None, None, "yes", bad_json),
        ("arraycfg", "cli", "[1, 2]", None, "2026-01-01", float("inf"), None, None, None, 0, None),
        ("dangling", "cli", None, "gone", -5.0, 5e9, None, None, None, 0, None),
        ("cyc-a", "cli", None, "cyc-b", T, None, None, None, None, 0, None),
        ("cyc-b", "cli", None, "cyc-a", T, None, None, None, None, 0, None),
        ("self", "cli", None, "self", T, None, None, None, None, 0, None),
        (None, "cli", None, None, T, None, None, None, None, 0, None),
        (42, "cli", None, None, T, None, None, None, None, 0, None),
        ("ok", "cli", None, None, T, None, None, None, None, 0, None),  # duplicate id
        ("nan", None, None, None, float("nan"), None, None, None, None, 0, None),
    ]
    messages = [
        _msg(1, "ok", content="\x00json:{broken"),
        _msg(2, "ok", role="assistant", tool_calls=bad_json),
        _msg(3, "ok", role="assistant", tool_calls='"just text"'),
        _msg(4, "ok", role="assistant", tool_calls='[1, {"id": "c", "function": "f"}]'),
        _msg(5, "ok", role="assistant", tool_calls='{"id": "solo"}'),
        _msg(6, "ok", reasoning_details=bad_json, codex_reasoning_items=bad_json),
        _msg(7, "ok", codex_message_items=bad_json, absorbed_message_uids=bad_json),
        _msg(8, "ok", display_metadata=bad_json, tool_call_uids="[1]"),
        _msg(9, "ok", display_metadata=json.dumps(json.dumps([1]))),
        _msg(10, "ok", timestamp="yesterday"),
        _msg(11, "ok", timestamp=-1.0),
        _msg(12, "ok", timestamp=4.3e9),
        _msg(13, "ok", timestamp=float("inf")),
        _msg(14, "ok", timestamp=None),
        _msg(15, "ok", active="yes"),
        _msg(16, "ok", active=None),
        _msg(17, "ok", role=None),
        _msg(18, "ok", content=b"\xff\xfe blob"),
        _msg(19, "ok", content=7),
        _msg(20, "ghost"),
        _msg(21, None),
        _msg(22, b"\x01"),
        _msg(23, "ok", content="\x00json:[NaN]"),
    ]
    _build(path, sessions, messages)
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO messages (id, session_id, role, content, timestamp, active) "
        "VALUES (24, 'ok', 'user', CAST(x'61ff62' AS TEXT), ?, 1)",
        (T,),
    )
    conn.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES (CAST(x'6fff' AS TEXT), 'cli', ?)",
        (T,),
    )
    conn.execute(
        "INSERT INTO messages (id, session_id, role, content, timestamp) "
        "VALUES (25, CAST(x'6fff' AS TEXT), 'user', 'lost?', ?)",
        (T,),
    )
    conn.commit()
    conn.close()
    return path


def test_damaged_cells_are_problems_and_strays(damaged: Path) -> None:
    digest = _digest(damaged)
    read_everything(damaged)
    with SqliteStore(damaged, name="state.db") as store:
        assert store.version() is None  # 'thirty' is no version
        sessions, strays = store.sessions()
        by_id = {s.id: s for s in sessions}
        assert sorted(by_id) == [
            "arraycfg",
            "badcfg",
            "cyc-a",
            "cyc-b",
            "dangling",
            "nan",
            "ok",
            "self",
        ]
        # the NULL id, the integer id 42, the duplicate 'ok' and the id in bad UTF-8
        assert len(strays) == 4
        assert all(s.kind == "session" and s.malformed for s in strays)
        assert any("duplicate id 'ok'" in s.why for s in strays)

        def cols_of(problems: tuple[str, ...]) -> set[str]:
            return {p.split(":", 1)[0] for p in problems}

        assert cols_of(by_id["badcfg"].problems) == {"model_config", "archived"}
        assert by_id["badcfg"].model_config is None
        assert by_id["badcfg"].archived is False
        assert cols_of(by_id["arraycfg"].problems) == {"model_config", "started_at", "ended_at"}
        assert cols_of(by_id["dangling"].problems) == {"started_at", "ended_at"}
        assert by_id["dangling"].started is None
        assert cols_of(by_id["nan"].problems) == {"source", "started_at"}  # NaN is stored as NULL
        assert by_id["ok"].problems == ()

        relations = classify_all(sessions)
        assert relations["dangling"] == (Relation.DELEGATE, False)
        assert parent_cycles(sessions) == (("cyc-a", "cyc-b"), ("self",))

        messages = {m.id: m for m in store.messages("ok")}
        assert sorted(messages) == [*range(1, 20), 23, 24]
        expect = {
            1: {"content"},
            2: {"tool_calls"},
            3: {"tool_calls"},
            4: {"tool_calls"},
            5: {"tool_calls"},
            6: {"reasoning_details", "codex_reasoning_items"},
            7: {"codex_message_items", "absorbed_message_uids"},
            8: {"display_metadata", "tool_call_uids"},
            9: {"display_metadata"},
            10: {"timestamp"},
            11: {"timestamp"},
            12: {"timestamp"},
            13: {"timestamp"},
            14: {"timestamp"},
            15: {"active"},
            16: set(),
            18: {"content"},
            19: {"content"},
            23: {"content"},
            24: {"content"},
        }
        for i, columns in expect.items():
            assert cols_of(messages[i].problems) == columns, i
            assert messages[i].error is None
        assert messages[1].content.text == "\x00json:{broken"
        assert messages[2].tool_calls == ()
        assert len(messages[4].tool_calls) == 1
        assert messages[4].calls.bad == (1,)
        assert messages[4].tool_calls[0].function is None
        assert messages[4].tool_calls[0].arguments_text() == "{}"
        assert [c.id for c in messages[5].tool_calls] == ["solo"]
        assert messages[10].timestamp is None
        assert messages[15].active
        assert messages[16].active
        assert messages[17].error == "role is null"
        assert message_stray(messages[17]).malformed
        assert messages[24].content.text == "a\ufffdb"
        assert bytes(messages[24].cols.get("content")) == b"a\xffb"  # type: ignore[arg-type]

        orphans = store.orphans(by_id)
        assert sorted(o.unit for o in orphans) == [
            "state.db:messages/20",
            "state.db:messages/21",
            "state.db:messages/22",
            "state.db:messages/25",
        ]
        assert all(o.kind == "message" for o in orphans)
        ghost = next(o for o in orphans if o.unit.endswith("/20"))
        assert ghost.session == "ghost"
        bad_key = next(o for o in orphans if o.unit.endswith("/25"))
        assert bad_key.why == "its session id is not valid UTF-8"
        assert not ghost.malformed
        listing = list_sessions(store)
        assert len(listing.strays) == 8
        assert listing.cycles == (("cyc-a", "cyc-b"), ("self",))
    assert _digest(damaged) == digest


def _expect_store_error(path: Path, *, must_fail: bool = True) -> None:
    digest = _digest(path) if path.is_file() else None
    error: StoreError | None = None
    claims(path)  # discovery never raises either
    try:
        read_everything(path)
    except StoreError as exc:
        error = exc
    if error is None:
        assert not must_fail, "expected a StoreError"
    else:
        # One line saying what is wrong, without the path: the host names the file
        # (``asf: <path>: <why>``, tests/hermes_plugin/test_cli_badinput.py).
        assert str(error)
        assert str(path) not in str(error)
        assert "\n" not in str(error)
    if digest is not None:
        assert _digest(path) == digest


def test_not_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not a database at all, just some text\n" * 50)
    _expect_store_error(path)
    assert [c.confidence for c in claims(path)] == [NOT_HERMES]  # claimed only to say why


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"")
    _expect_store_error(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    _expect_store_error(tmp_path / "nope.db")
    _expect_store_error(tmp_path)
    with pytest.raises(StoreError, match="no Hermes database"):
        open_database(tmp_path)
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    with pytest.raises(StoreError, match="not a regular file"):
        SqliteStore(fifo)  # never blocks reading a pipe


@pytest.mark.parametrize("table", ["sessions", "messages"])
def test_missing_table(tmp_path: Path, table: str) -> None:
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE sessions (id TEXT)"
        if table == "messages"
        else "CREATE TABLE messages (id INTEGER)"
    )
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=f"no {table} table"):
        SqliteStore(path)
    _expect_store_error(path)


@pytest.mark.parametrize("keep", [100, 1024, 4096, 0.5, 0.9, -1])
def test_truncated(tmp_path: Path, keep: float) -> None:
    path = tmp_path / "state.db"
    data = FIXTURE_DB.read_bytes()
    size = int(len(data) * keep) if isinstance(keep, float) else keep % len(data)
    path.write_bytes(data[:size])
    _expect_store_error(path, must_fail=False)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    flips=st.lists(
        st.tuples(st.integers(0, FIXTURE_DB.stat().st_size - 1), st.integers(1, 255)),
        min_size=1,
        max_size=8,
    )
)
def test_corrupted_bytes(tmp_path: Path, flips: list[tuple[int, int]]) -> None:
    """Random damage anywhere in a real database: rows read, or one StoreError."""
    data = bytearray(FIXTURE_DB.read_bytes())
    for offset, mask in flips:
        data[offset] ^= mask
    path = tmp_path / "corrupt.db"
    path.write_bytes(bytes(data[: max(flips)[0] + 1] if flips[0][1] % 4 == 0 else data))
    try:
        _expect_store_error(path, must_fail=False)
    finally:
        for leftover in tmp_path.glob("corrupt.db*"):
            leftover.unlink()


def test_fixture_copy_is_unchanged_by_reading(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    shutil.copyfile(FIXTURE_DB, path)
    digest = _digest(path)
    read_everything(path)
    assert _digest(path) == digest


ids = st.none() | st.sampled_from(["a", "b", "c", ""]) | st.integers(0, 3) | st.just(b"\xff")
any_cells = (
    st.none() | st.integers().filter(lambda i: abs(i) < 2**63) | st.floats() | st.text(max_size=12)
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sessions=st.lists(st.tuples(ids, any_cells, ids | any_cells, any_cells), max_size=5),
    messages=st.lists(st.tuples(ids, any_cells, any_cells, any_cells), max_size=8),
)
def test_every_message_row_is_read_exactly_once(
    tmp_path: Path,
    sessions: list[tuple[object, ...]],
    messages: list[tuple[object, ...]],
) -> None:
    """Each message row belongs to one readable session or is an orphan: never lost or twice."""
    path = tmp_path / "fuzz.db"
    for leftover in tmp_path.glob("fuzz.db*"):
        leftover.unlink()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (id, source, parent_session_id, started_at)")
    conn.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id, role, content, timestamp)"
    )
    conn.executemany("INSERT INTO sessions VALUES (?, ?, ?, ?)", sessions)
    for row in messages:
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)", row
        )
    conn.execute("UPDATE sessions SET id = CAST(id AS TEXT) WHERE typeof(id) = 'blob'")
    conn.execute(  # b"\xff" becomes text that is not valid UTF-8
        "UPDATE messages SET session_id = CAST(session_id AS TEXT) "
        "WHERE typeof(session_id) = 'blob'"
    )
    conn.commit()
    conn.close()
    digest = _digest(path)
    with SqliteStore(path, name="fuzz") as store:
        good, strays = store.sessions()
        assert len(good) + len(strays) == len(sessions)
        owned = [m.unit for s in good for m in store.messages(s.id)]
        units = owned + [o.unit for o in store.orphans({s.id for s in good})]
        assert sorted(units) == sorted(f"fuzz:messages/{i + 1}" for i in range(len(messages)))
        listing = list_sessions(store)
        assert len(listing.sessions) == len(good)
        assert sum(e.active_rows + e.inactive_rows for e in listing.sessions) == len(owned)
        by_session = {s.id: [m.unit for m in store.messages(s.id)] for s in good}
        orphan_units = sorted(o.unit for o in store.orphans(by_session))
    assert _digest(path) == digest

    # The memory store, given the same rows, reads them the same way.
    raw = sqlite3.connect(path)
    raw.text_factory = text_cell
    try:
        tables = {
            t: [dict(zip([d[0] for d in cur.description], r, strict=True)) for r in cur]
            for t in ("sessions", "messages")
            for cur in [raw.execute(f"SELECT * FROM {t} ORDER BY rowid")]
        }
    finally:
        raw.close()
    memory = MemoryStore.from_rows(
        name="fuzz", sessions=tables["sessions"], messages=tables["messages"]
    )
    mem_good, mem_strays = memory.sessions()
    assert {s.id: [m.unit for m in memory.messages(s.id)] for s in mem_good} == by_session
    assert len(mem_strays) == len(strays)
    assert sorted(o.unit for o in memory.orphans(by_session)) == orphan_units


def test_both_stores_agree_on_a_duplicate_session_id(tmp_path: Path) -> None:
    """A repeated id (a table without Hermes' primary key) is a stray named by its position,
    in a file and in memory alike; the first row is the session."""
    rows = [
        {"id": "a", "source": "cli", "started_at": T},
        {"id": "a", "source": "cli", "started_at": T},
        {"id": "b", "source": "cli", "started_at": T},
    ]
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (id, source, started_at)")
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id, role, content)")
    conn.executemany("INSERT INTO sessions VALUES (:id, :source, :started_at)", rows)
    conn.commit()
    conn.close()
    with SqliteStore(path, name="state.db") as store:
        in_file = store.sessions()
    in_memory = MemoryStore.from_rows(name="state.db", sessions=rows).sessions()
    assert in_file == in_memory
    sessions, (stray,) = in_file
    assert [s.id for s in sessions] == ["a", "b"]
    assert (stray.unit, stray.why, stray.session) == (
        "state.db:sessions/#1",
        "duplicate id 'a'",
        "a",
    )
