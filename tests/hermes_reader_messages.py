"""Hermes' reader output in the row shape the mapping rule reads.

``SessionDB.get_messages_as_conversation`` returns one dict per message (the fixtures'
``expected-conversation``): this makes each a :class:`~hermes_plugin.source.rows.Message`
member for member, its content and calls taken as the reader returned them, so the rule
(:func:`hermes_plugin.convert.items.conversation_items`) applies to Hermes' own output, not to
anything the converter read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hermes_plugin.source.decode import Content
from hermes_plugin.source.rows import Message
from hermes_plugin.source.toolcalls import ToolCalls

__all__ = ["as_message", "as_messages"]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_message(reader: Mapping[str, Any]) -> Message:
    """One message dict of Hermes' reader as a ``Message`` (no row behind it: no columns)."""
    uids = reader.get("_tool_call_uids")
    return Message(
        unit="",
        id=0,
        session_id="",
        role=_text(reader.get("role")) or "",
        content=Content.of(reader.get("content")),
        calls=ToolCalls.of(reader.get("tool_calls")),
        tool_call_id=_text(reader.get("tool_call_id")),
        reasoning=_text(reader.get("reasoning")),
        reasoning_content=_text(reader.get("reasoning_content")),
        reasoning_details=reader.get("reasoning_details"),
        codex_reasoning_items=reader.get("codex_reasoning_items"),
        codex_message_items=reader.get("codex_message_items"),
        api_content=_text(reader.get("api_content")),
        tool_call_uids=uids if isinstance(uids, dict) else None,
        tool_call_uid=_text(reader.get("_tool_call_uid")),
        observed=bool(reader.get("observed")),
    )


def as_messages(reader: Iterable[Mapping[str, Any]]) -> list[Message]:
    """A whole conversation of Hermes' reader as ``Message`` s."""
    return [as_message(m) for m in reader]
