"""What a row's problem says of a damaged cell, word for word, on a database Hermes' SessionDB
wrote (lineage markers that are no text) and another writer then damaged: a BLOB where Hermes
writes text, content behind the ``\\x00json:`` prefix that is no JSON (or none I-JSON holds),
text that is not UTF-8."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_homes import open_database


def test_a_damaged_cell_is_named_with_what_it_holds_and_how_it_reads(tmp_path: Path) -> None:
    import hermes_state

    db = tmp_path / "state.db"
    sdb = hermes_state.SessionDB(db_path=db)
    sdb.create_session("s", "cli")
    sdb.set_session_title("s", "a title")
    sdb.create_session(
        "odd",
        "cli",
        parent_session_id="s",
        model_config={"_branched_from": 7, "_reset_from": ["s"]},
    )
    for text in ("tool name", "broken", "huge", "bad bytes", "fine"):
        sdb.append_message("s", "tool", text, tool_call_id="c", tool_name="terminal")
    sdb.close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE sessions SET title = x'00ff' WHERE id = 's'")
    for content, sql in [
        ("tool name", "tool_name = x'746f6f'"),
        ("broken", "content = char(0) || 'json:{broken'"),
        ("huge", "content = char(0) || 'json:[1e400]'"),
        ("bad bytes", "content = CAST(x'006a736f6e3a7bff' AS TEXT)"),
    ]:
        conn.execute(f"UPDATE messages SET {sql} WHERE content = ?", (content,))
    conn.commit()
    conn.close()

    with open_database(db) as store:
        sessions, _ = store.sessions()
        messages = store.messages("s")
    session, odd = sorted(sessions, key=lambda s: s.id == "odd")
    assert session.title is None
    assert session.problems == ("title: blob (2 bytes), not text",)
    # A marker that is no text names no session: noted, and no marker.
    assert odd.problems == (
        "model_config: _branched_from is not text",
        "model_config: _reset_from is not text",
    )
    assert odd.marker("_branched_from") is odd.marker("_reset_from") is None
    assert [m.problems for m in messages] == [
        ("tool_name: blob (3 bytes), not text",),
        ("content: '\\x00json:' prefix without valid JSON; kept as text",),
        (
            "content: '\\x00json:' prefix with JSON holding a number beyond the double range"
            " (1e400); kept as text",
        ),
        (
            "content: invalid UTF-8 (kept as bytes)",
            "content: '\\x00json:' prefix without valid JSON; kept as text",
        ),
        (),
    ]
    assert messages[0].tool_name is None
    assert [m.content.value for m in messages[1:4]] == [
        "\x00json:{broken",
        "\x00json:[1e400]",
        "\x00json:{\ufffd",
    ]
