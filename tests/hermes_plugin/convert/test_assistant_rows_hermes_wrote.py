"""Assistant rows of shapes the fixtures lack, written by Hermes' own ``SessionDB``: empty
``reasoning`` beside ``reasoning_content``, a call id used again in a later turn, an
``api_content`` that is not the cleaned text and an empty one, a reply cut at its length
limit. The context the
converted file rebuilds is what the rule makes of Hermes' reader output, and each shape is
checked as ``docs/formats/hermes.md`` (sections 3.2 to 3.4) states it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_reader_messages import as_messages

from asf_core.context import Context, context_at
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
    "function": {"name": "terminal", "arguments": "{}"},
}


def _write(db_path: Path) -> list[dict[str, Any]]:
    """One session through Hermes' SessionDB; what Hermes' conversation reader returns."""
    import hermes_state

    db = hermes_state.SessionDB(db_path=db_path)
    try:
        db.create_session("s", "cli", model="m-1")
        db.append_message("s", "user", "list the files")
        db.append_message(
            "s", "assistant", "", reasoning="", reasoning_content="look", tool_calls=[_CALL]
        )
        db.append_message("s", "tool", "a.txt", tool_call_id="call_1")
        # Hermes mints call ids from name and arguments: a later turn may reuse one.
        db.append_message("s", "assistant", "", tool_calls=[_CALL], finish_reason="tool_calls")
        db.append_message("s", "tool", "b.txt", tool_call_id="call_1")
        # An empty api_content is none (Hermes' reader leaves it out): the text is the content.
        db.append_message("s", "user", "and now?", api_content="")
        db.append_message("s", "assistant", "Nothing.", api_content="", finish_reason="stop")
        db.append_message(
            "s", "assistant", "a.txt, b.txt", api_content="  a.txt, b.txt\n", finish_reason="length"
        )
        reader: list[dict[str, Any]] = db.get_messages_as_conversation("s")
    finally:
        db.close()
    return reader


def _context(tmp_path: Path) -> tuple[list[dict[str, Any]], Context, Response]:
    """The converted session's context at its last row's response: its items, each invented
    call id named by the stored id its entry keeps, the context, and the response."""
    handle = HermesHandle(tmp_path / "state.db")
    try:
        (converted,) = [c for c in convert_store(handle.store) if isinstance(c, ConvertedSession)]
    finally:
        handle.close()
    write_session(tmp_path / "s.jsonl", converted.header, converted.entries)
    session = read_session(tmp_path / "s.jsonl")
    leaf = session.entries[-2]  # the last row's response; the closing entry follows it
    assert isinstance(leaf, Response)
    assert leaf.id is not None
    context = context_at(session, leaf.id)
    native = {}
    for entry_id in context.item_entries:
        entry = session.by_id[entry_id]
        if isinstance(entry, Item) and "call_id" in entry.unknown["hermes"]:
            native[entry.item["call_id"]] = entry.unknown["hermes"]["call_id"]
    items = [
        {**i, "call_id": native[i["call_id"]]} if i.get("call_id") in native else i
        for i in context.items
    ]
    return items, context, leaf


def test_assistant_rows_read_as_hermes_reads_them(tmp_path: Path) -> None:
    reader = _write(tmp_path / "state.db")
    items, context, leaf = _context(tmp_path)
    # The rule applied to Hermes' reader output keeps each native id, repeated or not.
    assert items == conversation_items(as_messages(reader))
    calls = [i["call_id"] for i in context.items if i["type"] == "function_call"]
    assert calls == ["call_1", "hermes_4_0"]  # unique in the file, the stored id kept aside
    reasoning, message = context.items[1], context.items[-1]
    asked, told = context.items[-3:-1]
    assert asked["content"] == [{"type": "input_text", "text": "and now?"}]
    assert told["content"] == [{"type": "output_text", "text": "Nothing.", "annotations": []}]
    # Empty reasoning text is no summary; the empty-text check is on reasoning, not content.
    assert reasoning == {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "look"}],
    }
    # An assistant row's api_content is what the model was sent: verbatim, not cleaned.
    assert message["content"] == [
        {"type": "output_text", "text": "  a.txt, b.txt\n", "annotations": []}
    ]
    assert (leaf.status, leaf.incomplete) == ("incomplete", {"reason": "max_output_tokens"})


def test_calls_without_an_id_read_as_hermes_reads_them(tmp_path: Path) -> None:
    """Calls a provider sent without ids (Hermes stores them as given): each gets an id of
    its own in the file, and the rule applied to Hermes' reader output names each by its
    native id, the empty one, as the converted file's entries do."""
    import hermes_state

    call = {"type": "function", "function": {"name": "terminal", "arguments": "{}"}}
    db = hermes_state.SessionDB(db_path=tmp_path / "state.db")
    try:
        db.create_session("s", "cli", model="m-1")
        db.append_message("s", "user", "run it twice")
        db.append_message("s", "assistant", "", tool_calls=[call, call], finish_reason="stop")
        reader: list[dict[str, Any]] = db.get_messages_as_conversation("s")
    finally:
        db.close()
    items, context, _ = _context(tmp_path)
    assert [i["call_id"] for i in context.items[1:]] == ["hermes_2_0", "hermes_2_1"]
    assert items == conversation_items(as_messages(reader))
    assert [i["call_id"] for i in items[1:]] == ["", ""]
