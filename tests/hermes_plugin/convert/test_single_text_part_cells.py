"""Content stored as a list of one plain text part, written by Hermes' own ``SessionDB``
(``"\\x00json:[{"type": "text", ...}]"``: a client's or a tool's parts that hold text only).
Its item reads as that text, as a text cell's does, so the entry cannot tell the two cells
apart: the prefixed cell stays in ``hermes.columns`` exactly as stored, and the plain text
beside it is carried (``docs/formats/hermes.md`` section 2), while the context is the one
Hermes' reader returns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_reader_messages import as_messages

from asf_core.context import context_at
from asf_core.formats import ConvertedSession
from asf_core.model import Response
from asf_core.reader import read_session
from asf_core.writer import write_session
from hermes_plugin.convert.database import convert_store
from hermes_plugin.convert.items import conversation_items
from hermes_plugin.source.handle import HermesHandle

_CALL = {
    "id": "call_1",
    "call_id": "call_1",
    "type": "function",
    "function": {"name": "read_file", "arguments": "{}"},
}


def _one_part(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def _write(db_path: Path) -> list[dict[str, Any]]:
    """Each role's row twice, as one text part and as text; what Hermes' reader returns."""
    import hermes_state

    db = hermes_state.SessionDB(db_path=db_path)
    try:
        db.create_session("s", "acp", model="m-1")
        db.append_message("s", "user", _one_part("read it"))
        db.append_message("s", "assistant", "", tool_calls=[_CALL], finish_reason="tool_calls")
        db.append_message("s", "tool", _one_part("the file"), tool_call_id="call_1")
        db.append_message("s", "assistant", _one_part("done"), finish_reason="stop")
        db.append_message("s", "user", "read it")
        db.append_message("s", "assistant", "done", finish_reason="stop")
        reader: list[dict[str, Any]] = db.get_messages_as_conversation("s")
    finally:
        db.close()
    return reader


def _stored(db_path: Path) -> dict[int, str]:
    import sqlite3

    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT id, content FROM messages").fetchall())
    finally:
        conn.close()


def test_one_text_part_stays_in_columns_and_its_text_is_carried(tmp_path: Path) -> None:
    reader = _write(tmp_path / "state.db")
    stored = _stored(tmp_path / "state.db")
    handle = HermesHandle(tmp_path / "state.db")
    try:
        (converted,) = [c for c in convert_store(handle.store) if isinstance(c, ConvertedSession)]
    finally:
        handle.close()
    write_session(tmp_path / "s.jsonl", converted.header, converted.entries)
    session = read_session(tmp_path / "s.jsonl")

    principal: dict[int, dict[str, Any]] = {}
    for entry in session.entries:
        member = entry.unknown.get("hermes") or {}
        if "columns" in member and ":messages/" in member["row"]:
            principal[int(member["row"].rsplit("/", 1)[1])] = member
    assert set(principal) == set(stored)
    for row, cell in stored.items():
        member = principal[row]
        if cell.startswith("\x00json:"):
            # Read back from the entry it would be the text: kept as stored instead.
            assert "content" not in member.get("carried", []), row
            assert member["columns"]["content"] == cell, row
        elif cell:
            assert "content" in member["carried"], row
            assert "content" not in member["columns"], row
    assert sum(c.startswith("\x00json:") for c in stored.values()) == 3

    leaf = session.entries[-2]  # the last row's response; the closing entry follows it
    assert isinstance(leaf, Response)
    assert leaf.id is not None
    assert context_at(session, leaf.id).items == conversation_items(as_messages(reader))
