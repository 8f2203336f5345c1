"""The mapping rule: a message as Hermes' reader returns it, as Open Responses items.

One function, :func:`row_items`, turns one message, as Hermes' conversation reader
(``SessionDB.get_messages_as_conversation``) returns it, into the items the model received
for it. A message is a :class:`~hermes_plugin.source.rows.Message` throughout: the converter
reads each row, applies the reader's rules to it
(:func:`hermes_plugin.convert.sanitize.as_read`) and writes the items; the acceptance test
applies :func:`conversation_items` to Hermes' own reader output (the fixtures' oracle), each
message made a ``Message``, and compares it with the context the converted file rebuilds.
The rule is documented in ``docs/formats/hermes.md`` ("Items").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

from hermes_plugin.convert.calls import CallBook, call_item
from hermes_plugin.convert.parts import input_parts, output_parts, tool_output
from hermes_plugin.source.rows import Message
from hermes_plugin.source.toolcalls import ToolCall

__all__ = ["CONTEXT_ROLES", "RowItems", "conversation_items", "row_items"]

JSON = dict[str, Any]

#: Roles whose rows are model context.
CONTEXT_ROLES = frozenset({"user", "assistant", "system", "tool"})


class RowItems(NamedTuple):
    """What one message becomes (a named tuple, not an attrs class: one is made per row, and
    a tuple is made in a third of the time; positionally where the fields are plain, which
    spares ``__new__`` a dict of keywords).

    ``kind`` is ``message`` (user/system), ``assistant``, ``output`` (a paired tool result),
    or, for a row that is not model context, the reason it is kept aside: ``session_meta``,
    ``observed``, ``unpaired`` (a tool result no open call matches), ``role`` (an unknown
    role). ``calls`` lists, per ``function_call`` item, its index in ``items`` and the call
    as stored.
    """

    kind: str
    items: tuple[JSON, ...] = ()
    calls: tuple[tuple[int, ToolCall], ...] = ()
    #: For ``output``: the ASF call id answered.
    answers: str | None = None

    @property
    def in_context(self) -> bool:
        return self.kind in {"message", "assistant", "output"}


def _objects(value: Any) -> list[JSON] | None:
    """A non-empty JSON array of objects, else None."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return list(value)
    return None


def _reasoning(message: Message) -> list[JSON]:
    """The reasoning items of an assistant message.

    The Chat Completions carriers make one item: ``reasoning`` (Hermes' text) as its summary,
    ``reasoning_content`` (the provider's field; empty text kept) as its content, and
    ``reasoning_details`` (provider blocks, signatures included) verbatim as
    ``hermes:reasoning_details``. ``codex_reasoning_items`` follow verbatim.
    """
    items: list[JSON] = []
    text = message.reasoning
    content = message.reasoning_content
    details = message.reasoning_details
    if text or content is not None or details:
        item: JSON = {"type": "reasoning", "summary": []}
        if text:
            item["summary"] = [{"type": "summary_text", "text": text}]
        if content is not None:
            item["content"] = [{"type": "reasoning_text", "text": content}]
        if details:
            item["hermes:reasoning_details"] = details
        items.append(item)
    if message.codex_reasoning_items is not None:  # NULL in most rows
        items.extend(_objects(message.codex_reasoning_items) or [])
    return items


def _assistant_message(message: Message) -> list[JSON]:
    if message.codex_message_items is not None:  # NULL in most rows
        codex = _objects(message.codex_message_items)
        if codex is not None:
            return codex
    api = message.api_content
    parts = output_parts(api if api else message.content.value)
    if not parts:
        return []
    return [{"type": "message", "role": "assistant", "content": parts}]


def _call_uids(message: Message, calls: Sequence[ToolCall]) -> list[str | None]:
    """Each call's schema-31 uid: ``tool_call_uids`` maps a provider id to a uid, or to a list
    of uids, one per occurrence, when one id occurs more than once in the row."""
    table = message.tool_call_uids
    if table is None:
        return [None] * len(calls)
    seen: dict[str, int] = {}
    out: list[str | None] = []
    for call in calls:
        key = next((k for k in (call.id, call.call_id, call.pairing_id()) if k in table), None)
        value = table.get(key) if key is not None else None
        if isinstance(value, list):
            n = seen.get(str(key), 0)
            seen[str(key)] = n + 1
            value = value[n] if n < len(value) else None
        out.append(value if isinstance(value, str) and value else None)
    return out


def row_items(message: Message, book: CallBook, invent: Callable[[int], str]) -> RowItems:
    """The items one message, as Hermes' reader returns it, contributes to context,
    registering its calls in ``book`` (``invent(i)`` names the i-th call when its id is empty
    or already used)."""
    role = message.role
    if role == "session_meta":
        return RowItems(kind="session_meta")
    if message.observed:
        return RowItems(kind="observed")
    if role in {"user", "system"}:
        api = message.api_content
        text = api if (api and role == "user") else message.content.value
        item = {"type": "message", "role": role, "content": input_parts(text)}
        return RowItems("message", (item,))
    if role == "assistant":
        items = _reasoning(message) + _assistant_message(message)
        calls: list[tuple[int, ToolCall]] = []
        stored = message.tool_calls
        uids = _call_uids(message, stored) if stored else []
        for index, call in enumerate(stored):
            call_id = book.add(call, partial(invent, index), uids[index])
            calls.append((len(items), call))
            items.append(call_item(call, call_id))
        return RowItems("assistant", tuple(items), tuple(calls))
    if role == "tool":
        answered = book.answer(message.tool_call_id, message.tool_call_uid)
        if answered is None:
            return RowItems(kind="unpaired")
        output = tool_output(message.content.value)
        item = {"type": "function_call_output", "call_id": answered, "output": output}
        return RowItems("output", (item,), (), answered)
    return RowItems(kind="role")


def conversation_items(messages: Sequence[Message]) -> list[JSON]:
    """The rule applied to a whole conversation as Hermes' reader returns it: the items, in
    order, with native call ids (the converter's invented ids map back to them through the
    ``hermes`` member)."""
    book = CallBook(keep_native=True)
    out: list[JSON] = []
    for message in messages:
        out.extend(row_items(message, book, lambda index: "").items)
    return out
