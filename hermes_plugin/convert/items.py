"""The mapping rule: a message as Hermes' reader returns it, as Open Responses items.

One function, :func:`row_items`, turns one message dict of the shape
``SessionDB.get_messages_as_conversation`` returns into the items the model received for
it. The converter builds that dict from each row with :func:`reader_dict` and writes the
items; the acceptance test applies :func:`conversation_items` to Hermes' own reader output
(the fixtures' oracle) and compares it with the context the converted file rebuilds. The
rule is documented in ``docs/formats/hermes.md`` ("Items").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from attrs import frozen

from hermes_plugin.convert.calls import CallBook, call_item
from hermes_plugin.convert.parts import input_parts, output_parts, tool_output
from hermes_plugin.convert.sanitize import clean_text
from hermes_plugin.schema import CONTENT_PREFIX
from hermes_plugin.source.jsontext import parse
from hermes_plugin.source.rows import Message
from hermes_plugin.source.toolcalls import ToolCall

__all__ = [
    "CONTEXT_ROLES",
    "RowItems",
    "conversation_items",
    "decoded_content",
    "reader_content",
    "reader_dict",
    "row_items",
    "tool_calls_of",
]

JSON = dict[str, Any]

#: Roles whose rows are model context.
CONTEXT_ROLES = frozenset({"user", "assistant", "system", "tool"})


@frozen(kw_only=True)
class RowItems:
    """What one message becomes.

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


def decoded_content(raw: Any) -> Any:
    """A content cell as Hermes decodes it: JSON behind the prefix when it parses, else as
    stored."""
    if isinstance(raw, str) and raw.startswith(CONTENT_PREFIX):
        value, ok = parse(raw[len(CONTENT_PREFIX) :])
        return value if ok else raw
    return raw


def reader_content(message: Message) -> Any:
    """The ``content`` member of :func:`reader_dict` alone (what the harness test reads)."""
    raw = message.cols.get("content")
    content = decoded_content(raw if not isinstance(raw, bytes) else message.content.as_text())
    if message.role in {"user", "assistant"} and isinstance(content, str):
        content = clean_text(content)
    return content


def reader_dict(message: Message) -> JSON:
    """The dict Hermes' conversation reader builds for a row (the members items depend on).

    Content is decoded and, for user and assistant text, cleaned of memory context and
    stripped; ``api_content`` is kept verbatim; reasoning members only on assistant rows.
    """
    out: JSON = {"role": message.role, "content": reader_content(message)}
    if message.api_content:
        out["api_content"] = message.api_content
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    calls = message.cols.get("tool_calls")
    if calls:
        value, ok = parse(calls) if isinstance(calls, str) else (None, False)
        out["tool_calls"] = value if ok else []
    if message.observed:
        out["observed"] = True
    if message.tool_call_uids:
        out["_tool_call_uids"] = message.tool_call_uids
    if message.tool_call_uid:
        out["_tool_call_uid"] = message.tool_call_uid
    if message.role == "assistant":
        if message.reasoning:
            out["reasoning"] = message.reasoning
        if message.reasoning_content is not None:
            out["reasoning_content"] = message.reasoning_content
        for name in ("reasoning_details", "codex_reasoning_items", "codex_message_items"):
            value = getattr(message, name)
            if value:
                out[name] = value
    return out


def tool_calls_of(message: Mapping[str, Any]) -> list[ToolCall]:
    """The calls of a message dict: a list's objects, or a single object as a list of one."""
    calls = message.get("tool_calls")
    if isinstance(calls, dict):
        calls = [calls]
    if not isinstance(calls, list):
        return []
    return [ToolCall.from_json(c) for c in calls if isinstance(c, dict)]


def _objects(value: Any) -> list[JSON] | None:
    """A non-empty JSON array of objects, else None."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return list(value)
    return None


def _reasoning(message: Mapping[str, Any]) -> list[JSON]:
    """The reasoning items of an assistant message.

    The Chat Completions carriers make one item: ``reasoning`` (Hermes' text) as its summary,
    ``reasoning_content`` (the provider's field; empty text kept) as its content, and
    ``reasoning_details`` (provider blocks, signatures included) verbatim as
    ``hermes:reasoning_details``. ``codex_reasoning_items`` follow verbatim.
    """
    items: list[JSON] = []
    text = message.get("reasoning")
    content = message.get("reasoning_content")
    details = message.get("reasoning_details")
    if text or content is not None or details:
        item: JSON = {"type": "reasoning", "summary": []}
        if isinstance(text, str) and text:
            item["summary"] = [{"type": "summary_text", "text": text}]
        if isinstance(content, str):
            item["content"] = [{"type": "reasoning_text", "text": content}]
        if details:
            item["hermes:reasoning_details"] = details
        items.append(item)
    items.extend(_objects(message.get("codex_reasoning_items")) or [])
    return items


def _assistant_message(message: Mapping[str, Any]) -> list[JSON]:
    codex = _objects(message.get("codex_message_items"))
    if codex is not None:
        return codex
    api = message.get("api_content")
    parts = output_parts(api if api else message.get("content"))
    if not parts:
        return []
    return [{"type": "message", "role": "assistant", "content": parts}]


def _call_uids(message: Mapping[str, Any], calls: Sequence[ToolCall]) -> list[str | None]:
    """Each call's schema-31 uid: ``tool_call_uids`` maps a provider id to a uid, or to a list
    of uids, one per occurrence, when one id occurs more than once in the row."""
    table = message.get("_tool_call_uids")
    if not isinstance(table, dict):
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


def row_items(message: Mapping[str, Any], book: CallBook, invent: Callable[[int], str]) -> RowItems:
    """The items one reader message contributes to context, registering its calls in
    ``book`` (``invent(i)`` names the i-th call when its id is empty or already used)."""
    role = message.get("role")
    if role == "session_meta":
        return RowItems(kind="session_meta")
    if message.get("observed"):
        return RowItems(kind="observed")
    if role in {"user", "system"}:
        api = message.get("api_content")
        text = api if (api and role == "user") else message.get("content")
        item = {"type": "message", "role": role, "content": input_parts(text)}
        return RowItems(kind="message", items=(item,))
    if role == "assistant":
        items = _reasoning(message) + _assistant_message(message)
        calls: list[tuple[int, ToolCall]] = []
        stored = tool_calls_of(message)
        uids = _call_uids(message, stored)
        for index, call in enumerate(stored):
            call_id = book.add(call, partial(invent, index), uids[index])
            calls.append((len(items), call))
            items.append(call_item(call, call_id))
        return RowItems(kind="assistant", items=tuple(items), calls=tuple(calls))
    if role == "tool":
        uid = message.get("_tool_call_uid")
        answered = book.answer(message.get("tool_call_id"), uid if isinstance(uid, str) else None)
        if answered is None:
            return RowItems(kind="unpaired")
        output = tool_output(message.get("content"))
        item = {"type": "function_call_output", "call_id": answered, "output": output}
        return RowItems(kind="output", items=(item,), answers=answered)
    return RowItems(kind="role")


def conversation_items(messages: Sequence[Mapping[str, Any]]) -> list[JSON]:
    """The rule applied to a whole reader conversation: the items, in order, with native call
    ids (the converter's invented ids map back to them through the ``hermes`` member)."""
    book = CallBook(keep_native=True)
    out: list[JSON] = []
    for message in messages:
        out.extend(row_items(message, book, lambda index: "").items)
    return out
