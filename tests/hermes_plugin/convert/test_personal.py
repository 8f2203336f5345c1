"""The values of a Hermes database that name people, chats or accounts (``personal_values``,
docs/formats/hermes.md, Redaction), row by row: what a redacting run learns to replace."""

from __future__ import annotations

import json
from typing import Any

from hermes_columns import columns_of

from hermes_plugin.convert.personal import personal_values
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Session


def _session(sid: str, **cells: Any) -> Session:
    return RowReader("db").session(columns_of({"id": sid, "source": "telegram", **cells}))


def test_identity_cells_of_any_type_and_origin_members_are_learned() -> None:
    """A gateway may store an id as an integer: it is a value to replace all the same (its
    text), as is each scalar member of ``origin_json`` but those naming a kind of place, in
    document order, lists included; blanks and booleans name nobody."""
    origin = {
        "platform": "telegram",
        "chat_type": "dm",
        "type": "private",
        "user_name": "ada_l_1815",
        "chat": {"id": 99881234, "title": "Analytical Engine Club", "is_forum": False},
        "members": [{"source": "cli", "name": "Babbage"}, "  "],
        "source": ["web", "cli"],  # a list of kinds is kinds too
    }
    session = _session(
        "s1",
        user_id=77821,
        chat_id="chat-99881234",
        thread_id="   ",
        display_name="Ada Lovelace",
        origin_json=json.dumps(origin),
        billing_base_url="https://billing.example-corp.net/v1",
    )
    usage = [columns_of({"billing_base_url": "https://other.example-corp.net/v2"})]
    values = personal_values([session], usage)
    assert values["user_id"] == ("77821",)
    assert values["chat_id"] == ("chat-99881234",)
    assert "thread_id" not in values
    assert values["display_name"] == ("Ada Lovelace",)
    assert values["origin_json"] == (
        json.dumps(origin),
        "ada_l_1815",
        "99881234",
        "Analytical Engine Club",
        "Babbage",
    )
    assert values["billing_base_url"] == (
        "https://billing.example-corp.net/v1",
        "https://other.example-corp.net/v2",
    )


def test_values_repeated_over_sessions_are_learned_once_in_first_seen_order() -> None:
    sessions = [
        _session("a", user_id="u-2"),
        _session("b", user_id="u-1"),
        _session("c", user_id="u-2"),
    ]
    assert personal_values(sessions) == {"user_id": ("u-2", "u-1")}
