"""Reader rules that depend on the database's schema version, and cells JSON cannot hold.

Found by converting databases written by Hermes releases and forks the shared fixtures do not
cover (0.14.0 ... 0.18.1, schema 25/26 forks) and scenarios the fixture generator does not
write: Hermes 0.17.0 (schema 16) reads rows in ``timestamp, id`` order, schema 25+ readers
blank a bare tool marker on an assistant tool turn, and a BLOB / non-UTF-8 / infinite cell
must come back exactly from the ``hermes`` member.
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hermes_columns import cells, columns_of
from hermes_memory_store import MemoryStore
from hermes_reader_messages import as_message
from hypothesis import example, given
from hypothesis import strategies as st

from asf_core.context import context_at
from asf_core.formats import ConvertedSession
from asf_core.model import Custom
from asf_core.reader import SessionFile, parse_session
from asf_core.writer import entry_line, header_line
from hermes_plugin.convert.database import convert_store
from hermes_plugin.convert.sanitize import (
    clear_stale_marker,
    clears_stale_markers,
    is_stale_marker,
    reader_order,
)
from hermes_plugin.source.columns import RawText
from hermes_plugin.source.rowreader import RowReader

T0 = 1_790_000_000.0
CALL = {"id": "call_m1", "type": "function", "function": {"name": "memory", "arguments": "{}"}}

# -- row order -------------------------------------------------------------------------------

timestamps = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.floats(allow_nan=False),
    st.text(max_size=3),
    st.binary(max_size=3),
    st.binary(max_size=3).map(RawText),
)


@given(st.lists(timestamps, max_size=12))
@example([RawText(b"\xff"), b"\x00"])  # text that is not UTF-8 is text: before any blob
def test_schema16_order_is_sqlites_timestamp_id_order(cells: list[Any]) -> None:
    """Hermes 0.17.0's ``ORDER BY timestamp, id``, checked against SQLite itself."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE m (id INTEGER PRIMARY KEY, timestamp)")
    for i, cell in enumerate(cells, start=1):
        if isinstance(cell, RawText):  # its bytes, stored as TEXT
            conn.execute("INSERT INTO m VALUES (?, CAST(? AS TEXT))", (i, bytes(cell)))
        else:
            conn.execute("INSERT INTO m VALUES (?, ?)", (i, cell))
    want = [i for (i,) in conn.execute("SELECT id FROM m ORDER BY timestamp, id")]
    conn.close()
    reader = RowReader("db")
    rows = [
        reader.message(columns_of({"id": i, "session_id": "s", "role": "user", "timestamp": cell}))
        for i, cell in enumerate(cells, start=1)
    ]
    assert [m.id for m in reader_order(rows, 16)] == want
    for version in (None, 14, 17, 22, 31):
        assert [m.id for m in reader_order(rows, version)] == [m.id for m in rows]


# -- stale tool-call markers -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "calls", "role", "stale"),
    [
        ("[memory]", [CALL], "assistant", True),
        ("  [skill_manage]\n", [CALL], "assistant", True),
        ("[a.b-c_9]", CALL, "assistant", True),  # a single object is a call too
        ("[memory] saved", [CALL], "assistant", False),
        ("[memory]", None, "assistant", False),  # no call: a real answer
        ("[memory]", [], "assistant", False),
        ("[9lives]", [CALL], "assistant", False),  # a tool name starts with a letter or _
        ("[]", [CALL], "assistant", False),
        ("[memory]", [CALL], "user", False),
        (["[memory]"], [CALL], "assistant", False),  # only text content
    ],
)
def test_stale_marker(content: Any, calls: Any, role: str, stale: bool) -> None:
    reader: dict[str, Any] = {"role": role, "content": content}
    if calls is not None:
        reader["tool_calls"] = calls
    message = as_message(reader)
    assert is_stale_marker(message) is stale
    cleared = clear_stale_marker(message)
    assert cleared == (as_message({**reader, "content": ""}) if stale else message)
    assert message.content.value == content  # the input is not changed


def test_marker_rule_starts_at_schema_25() -> None:
    assert [v for v in (None, 16, 22, 24, 25, 26, 31) if clears_stale_markers(v)] == [25, 26, 31]


# -- whole conversions -----------------------------------------------------------------------


def _convert(store: MemoryStore) -> dict[str, SessionFile]:
    files = {}
    for item in convert_store(store):
        if isinstance(item, ConvertedSession):
            data = header_line(item.header) + b"".join(entry_line(e) for e in item.entries)
            files[item.name] = parse_session(data, path=Path(f"{item.name}.jsonl"))
    return files


def _store(schema: int, messages: list[dict[str, Any]], **session: Any) -> MemoryStore:
    row = {"id": "s", "source": "cli", "model": "m", "started_at": T0, **session}
    full = [
        {"session_id": "s", "timestamp": T0 + i, "active": 1, **m}
        for i, m in enumerate(messages, start=1)
    ]
    return MemoryStore.from_rows(name="state.db", schema=schema, sessions=[row], messages=full)


def _live_items(session: SessionFile) -> list[dict[str, Any]]:
    leaf = session.resume_leaf()
    assert leaf is not None
    return context_at(session, leaf).items


def _member(session: SessionFile, unit: str) -> dict[str, Any]:
    for entry in session.entries:
        member = entry.unknown.get("hermes") or {}
        if member.get("row") == unit and "columns" in member:
            return dict(member)
    raise AssertionError(unit)


@pytest.mark.parametrize("schema", [22, 25, 26])
def test_marker_turn_converts_as_that_version_reads_it(schema: int) -> None:
    store = _store(
        schema,
        [
            {"id": 1, "role": "user", "content": "remember tea"},
            {"id": 2, "role": "assistant", "content": "[memory]", "tool_calls": json.dumps([CALL])},
            {"id": 3, "role": "tool", "content": "saved", "tool_call_id": "call_m1"},
            {"id": 4, "role": "assistant", "content": "Done."},
        ],
    )
    (session,) = _convert(store).values()
    texts = [
        part["text"]
        for item in _live_items(session)
        if item["type"] == "message" and item["role"] == "assistant"
        for part in item["content"]
    ]
    kinds = [item["type"] for item in _live_items(session)]
    assert kinds.count("function_call") == kinds.count("function_call_output") == 1
    assert texts == (["Done."] if schema >= 25 else ["[memory]", "Done."])
    # Lossless either way: the blanked text stays in the row's columns.
    member = _member(session, "state.db:messages/2")
    assert ("content" in member["columns"]) == (schema >= 25)
    assert ("content" in member.get("carried", [])) == (schema < 25)


@pytest.mark.parametrize("schema", [14, 16, 17])
def test_stepped_back_clock_reads_in_that_versions_order(schema: int) -> None:
    """A tool result stamped before its call: 0.17.0 reads it first, unanswered (kept aside);
    every other release reads insertion order and pairs it."""
    store = _store(
        schema,
        [
            {"id": 1, "role": "user", "content": "date?"},
            {"id": 2, "role": "assistant", "content": "", "tool_calls": json.dumps([CALL])},
            {"id": 3, "role": "tool", "content": "Mon", "tool_call_id": "call_m1"},
            {"id": 4, "role": "assistant", "content": "Monday."},
        ],
    )
    store = _with_cell(store, 3, "timestamp", T0 - 3600)
    (session,) = _convert(store).values()
    kinds = [item["type"] for item in _live_items(session)]
    paired = "function_call_output" in kinds
    assert paired == (schema != 16)
    asides = [
        e.data["reason"]
        for e in session.entries
        if isinstance(e, Custom) and isinstance(e.data, dict) and "reason" in e.data
    ]
    assert asides == ([] if paired else ["unpaired"])


def _with_cell(store: MemoryStore, message_id: int, name: str, value: Any) -> MemoryStore:
    """The store with one message cell replaced (rows rebuilt as stored)."""
    rows = []
    for message in store.messages("s"):
        row = dict(cells(message.cols))
        if message.id == message_id:
            row[name] = value
        rows.append(row)
    sessions = [dict(cells(s.cols)) for s in store.sessions()[0]]
    return MemoryStore.from_rows(
        name=store.name, schema=store.version(), sessions=sessions, messages=rows
    )


def test_cells_json_cannot_hold_come_back_exactly() -> None:
    """A BLOB, TEXT that is not UTF-8 and an infinite REAL are encoded in the member, named in
    ``encoded`` / ``session_encoded``, and decode to the stored cells."""
    blob, bad = b"\x00\xffpng", RawText(b"caf\xe9")
    store = _store(
        22,
        [
            {"id": 1, "role": "user", "content": blob, "token_count": float("inf")},
            {"id": 2, "role": "assistant", "content": "ok", "platform_message_id": bad},
        ],
        title=RawText(b"t\xff"),
    )
    (session,) = _convert(store).values()
    first = _member(session, "state.db:messages/1")
    assert first["encoded"] == {"content": "blob", "token_count": "real"}
    assert base64.b64decode(first["columns"]["content"]) == blob
    assert float(first["columns"]["token_count"]) == float("inf")
    second = _member(session, "state.db:messages/2")
    assert second["encoded"] == {"platform_message_id": "text"}
    assert base64.b64decode(second["columns"]["platform_message_id"]) == bytes(bad)
    (closing,) = [
        e.unknown["hermes"] for e in session.entries if "session_columns" in e.unknown["hermes"]
    ]
    assert closing["session_encoded"] == {"title": "text"}
    assert base64.b64decode(closing["session_columns"]["title"]) == b"t\xff"


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "content", "tool_calls"]),
        st.none()
        | st.integers()
        | st.floats()
        | st.text()
        | st.binary()
        | st.binary().map(RawText),
    )
)
# Each non-finite REAL (no JSON holds one) by its name, whatever hypothesis draws.
@example({"a": float("inf"), "b": float("-inf"), "content": float("nan")})
def test_exact_json_round_trip(row: dict[str, Any]) -> None:
    values, encoded = columns_of(row).to_exact_json()
    json.dumps(values, allow_nan=False)  # plain JSON
    for name, cell in row.items():
        how = encoded.get(name)
        value = values[name]
        if how == "real":
            back: Any = float(value)  # type: ignore[arg-type]
        elif how in {"blob", "text"}:
            back = base64.b64decode(str(value))
        else:
            back = value
        if isinstance(cell, float) and not math.isfinite(cell):
            assert how == "real"
            assert value == ("NaN" if cell != cell else "Infinity" if cell > 0 else "-Infinity")
        else:
            assert back == cell
            assert type(back) is (bytes if isinstance(cell, bytes) else type(cell))
