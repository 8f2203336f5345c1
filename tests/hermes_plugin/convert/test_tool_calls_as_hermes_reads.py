"""A ``tool_calls`` cell as Hermes 0.19 reads it, on rows its ``SessionDB`` wrote: the value
its reader returns, the results its alternation repair keeps (SCHEMA-NOTES section 7), the name
its agent gives a call."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from hermes_homes import open_database

from asf_core.formats import ConvertedSession
from asf_core.model import Custom
from hermes_plugin.convert.database import convert_store

#: What the agent handed ``append_message`` as ``tool_calls``, by the row's content.
_WRITTEN: dict[str, Any] = {
    "a list": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    "one object": {"id": "c2", "type": "function", "function": {"name": "g"}},
    "a number": 5,
    "a string": "call",
    "true": True,
}


def test_the_value_of_a_tool_calls_cell_is_what_hermes_reader_returns(tmp_path: Path) -> None:
    """Whatever JSON the cell holds (an array, an object, a scalar) is the row's ``calls.value``
    exactly as Hermes' reader returns it; an empty cell (another writer's, set here) is no
    calls, unnoted, as Hermes' reader skips it."""
    import hermes_state

    db = tmp_path / "state.db"
    sdb = hermes_state.SessionDB(db_path=db)
    sdb.create_session("s", "cli")
    for name, calls in _WRITTEN.items():
        sdb.append_message("s", "assistant", name, tool_calls=calls)
    sdb.append_message("s", "assistant", "empty", tool_calls=[{"id": "c3"}])
    sdb.close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE messages SET tool_calls = '' WHERE content = 'empty'")
    conn.commit()
    conn.close()
    sdb = hermes_state.SessionDB(db_path=db)
    hermes = {m["content"]: m.get("tool_calls") for m in sdb.get_messages_as_conversation("s")}
    sdb.close()
    assert hermes == {**_WRITTEN, "empty": None}

    with open_database(db) as store:
        messages = store.messages("s")
    assert {m.content.value: m.calls.value for m in messages} == hermes
    assert {m.content.value: m.calls.error for m in messages} == {
        "a list": None,
        "one object": None,
        "a number": "not a JSON array",
        "a string": "not a JSON array",
        "true": "not a JSON array",
        "empty": None,
    }
    problems = {m.content.value: m.problems for m in messages if m.problems}
    assert problems == {
        "a number": ("tool_calls: not a JSON array; read as no calls",),
        "a string": ("tool_calls: not a JSON array; read as no calls",),
        "true": ("tool_calls: not a JSON array; read as no calls",),
        "one object": ("tool_calls: a single object, not an array; read as a list of one",),
    }
    assert [m.calls.calls for m in messages if m.content.value == "empty"] == [()]


def test_a_call_id_that_is_no_text_names_no_call(tmp_path: Path) -> None:
    """A call whose ``id`` is a JSON number pairs with no result, not even one naming its
    digits: Hermes' repair keeps a result whose ``tool_call_id`` equals a call's ``id`` or
    ``call_id``, and the reader hands on the number, which no text equals; the result is kept
    aside as unpaired. A call with no ``function`` object is
    named ``''``, as Hermes' agent names it."""
    import hermes_state

    numbered = {"id": 5, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    bare = {"id": "call_bare", "type": "function"}
    db = tmp_path / "state.db"
    sdb = hermes_state.SessionDB(db_path=db)
    sdb.create_session("s", "cli")
    sdb.append_message("s", "user", "go")
    sdb.append_message("s", "assistant", "", tool_calls=[numbered, bare])
    sdb.append_message("s", "tool", "five", tool_call_id="5")
    sdb.append_message("s", "tool", "bare", tool_call_id="call_bare")
    sdb.append_message("s", "assistant", "done")
    hermes = sdb.get_messages_as_conversation("s")
    sdb.close()
    assert [c["id"] for c in hermes[1]["tool_calls"]] == [5, "call_bare"]
    assert [m.get("tool_call_id") for m in hermes[2:4]] == ["5", "call_bare"]

    with open_database(db, name="state.db") as store:
        (session,) = [c for c in convert_store(store) if isinstance(c, ConvertedSession)]
    items = [e.item for e in session.entries if getattr(e, "item", None) is not None]
    calls = [i for i in items if i["type"] == "function_call"]
    outputs = [i for i in items if i["type"] == "function_call_output"]
    assert [c["name"] for c in calls] == ["f", ""]
    assert [c["arguments"] for c in calls] == ["{}", "{}"]
    assert [o["output"] for o in outputs] == ["bare"]
    assert outputs[0]["call_id"] == calls[1]["call_id"] == "call_bare"
    asides = [
        (e.data["reason"], e.unknown["hermes"]["columns"]["content"])
        for e in session.entries
        if isinstance(e, Custom) and isinstance(e.data, dict) and "reason" in e.data
    ]
    assert asides == [("unpaired", "five")]
