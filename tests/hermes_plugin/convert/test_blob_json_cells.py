"""JSON columns stored as BLOBs (Hermes writes text; another writer may bind bytes).

Hermes' conversation reader parses ``tool_calls`` and an assistant's reasoning columns with
``json.loads``, which reads bytes as well as text: the calls and reasoning a BLOB spells are
context, and the converted file rebuilds the same context, the BLOB itself kept exactly in the
row's columns. Bytes that spell no text make Hermes' reader raise; asf reads no calls there,
notes it and keeps the cell.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

from hermes_reader_messages import as_messages

from asf_core.context import context_at
from asf_core.formats import ConvertedSession
from asf_core.model import Item, Response
from asf_core.reader import read_session
from asf_core.writer import write_session
from hermes_plugin.convert.database import convert_store
from hermes_plugin.convert.items import conversation_items
from hermes_plugin.source.handle import HermesHandle

_CALL = {
    "id": "call_1",
    "call_id": "call_1",
    "type": "function",
    "function": {"name": "terminal", "arguments": '{"cmd": "ls"}'},
}
_DETAILS = [{"type": "reasoning.text", "text": "list first", "signature": "s1"}]


def _write(db_path: Path) -> None:
    import hermes_state

    db = hermes_state.SessionDB(db_path=db_path)
    try:
        db.create_session("s", "cli", model="m-1")
        db.append_message("s", "user", "list the files")
        db.append_message(
            "s", "assistant", "", tool_calls=[_CALL], reasoning_details=_DETAILS, reasoning="r"
        )
        db.append_message("s", "tool", "a.txt", tool_call_id="call_1", tool_name="terminal")
        db.append_message("s", "assistant", "a.txt", finish_reason="stop")
    finally:
        db.close()


def _blobs(db_path: Path, sql: str, *params: Any) -> None:
    """What another writer did to the rows (a test's own database, not a source)."""
    conn = sqlite3.connect(db_path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


def _reader(db_path: Path) -> list[dict[str, Any]]:
    import hermes_state

    db = hermes_state.SessionDB(db_path=db_path)
    try:
        reader: list[dict[str, Any]] = db.get_messages_as_conversation("s")
    finally:
        db.close()
    return reader


def _converted(db_path: Path) -> ConvertedSession:
    handle = HermesHandle(db_path)
    try:
        (converted,) = [c for c in convert_store(handle.store) if isinstance(c, ConvertedSession)]
    finally:
        handle.close()
    return converted


def _assistant_row(converted: ConvertedSession) -> dict[str, Any]:
    """The ``hermes`` member of the entry holding the first assistant row's columns."""
    for entry in converted.entries:
        member = entry.unknown.get("hermes") if hasattr(entry, "unknown") else None
        if isinstance(member, dict) and "columns" in member and member["row"].endswith("/2"):
            return member
    raise AssertionError("no entry holds row 2's columns")


def test_blob_calls_and_reasoning_are_context_as_hermes_reads_them(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _write(db)
    _blobs(
        db,
        "UPDATE messages SET tool_calls = CAST(tool_calls AS BLOB),"
        " reasoning_details = CAST(reasoning_details AS BLOB) WHERE role = 'assistant'"
        " AND tool_calls IS NOT NULL",
    )
    reader = _reader(db)
    assert reader[1]["tool_calls"] == [_CALL]  # Hermes' json.loads reads the bytes
    assert reader[1]["reasoning_details"] == _DETAILS
    converted = _converted(db)
    write_session(tmp_path / "s.jsonl", converted.header, converted.entries)
    session = read_session(tmp_path / "s.jsonl")
    leaf = [e for e in session.entries if isinstance(e, Response)][-1]
    assert leaf.id is not None
    context = context_at(session, leaf.id)
    assert context.items == conversation_items(as_messages(reader))
    calls = [i for i in context.items if i["type"] == "function_call"]
    assert [(c["call_id"], c["name"], c["arguments"]) for c in calls] == [
        ("call_1", "terminal", '{"cmd": "ls"}')
    ]
    # The BLOBs are kept exactly: the row's columns hold their bytes, encoded as base64.
    row = _assistant_row(converted)
    assert row["encoded"] == {"reasoning_details": "blob", "tool_calls": "blob"}
    stored = {k: base64.b64decode(row["columns"][k]) for k in row["encoded"]}
    assert json.loads(stored["tool_calls"]) == [_CALL]
    assert json.loads(stored["reasoning_details"]) == _DETAILS
    assert any(isinstance(e, Item) and e.item.get("type") == "reasoning" for e in converted.entries)


def test_a_blob_that_spells_no_text_is_no_calls_noted_and_kept(tmp_path: Path) -> None:
    """Bytes ``json.loads`` cannot decode (Hermes' reader raises on them): no calls, said in
    the converted session's findings, and the cell kept byte for byte."""
    db = tmp_path / "state.db"
    _write(db)
    bad = b"[\xff\xfe\x00"
    _blobs(db, "UPDATE messages SET tool_calls = ? WHERE tool_calls IS NOT NULL", bad)
    converted = _converted(db)
    row = _assistant_row(converted)
    assert base64.b64decode(row["columns"]["tool_calls"]) == bad
    assert row["encoded"]["tool_calls"] == "blob"
    items = [e.item for e in converted.entries if isinstance(e, Item)]
    assert not [i for i in items if i["type"] == "function_call"]
    said = [f.message for f in converted.findings if "tool_calls" in f.message]
    assert said
    assert all("a BLOB that spells no text; read as no calls" in m for m in said)
