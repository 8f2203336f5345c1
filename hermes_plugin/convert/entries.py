"""One ``messages`` row as ASF entries, with its identity and leftover columns.

A context row becomes item entries (an assistant row also a ``response`` entry after its
items); a row that is not model context becomes one ``custom`` entry (namespace ``hermes``).
Every entry carries the ``hermes`` member: ``row`` names the source row, and the row's
*principal* entry (the ``response`` of an assistant row, else the row's first entry) holds
``columns``, every column no core member reproduces, and ``carried``, the columns left out of
``columns`` because an entry holds them verbatim. See ``docs/formats/hermes.md``.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Sequence
from typing import Any, NamedTuple

from asf_core.entry_builders import item_entry, response_entry
from asf_core.model import Compaction, Custom, Entry
from hermes_plugin.convert.items import RowItems
from hermes_plugin.convert.parts import hermes_parts
from hermes_plugin.schema import CONTENT_PREFIX
from hermes_plugin.source.columns import Columns
from hermes_plugin.source.jsontext import parse
from hermes_plugin.source.rows import Message
from hermes_plugin.source.toolcalls import ToolCall

__all__ = [
    "Rendered",
    "render_custom",
    "render_row",
    "response_status",
    "row_columns",
    "with_columns",
]

JSON = dict[str, Any]

#: finish_reason -> (status, incomplete) of the response entry.
_FINISH: dict[str, tuple[str, JSON | None]] = {
    "stop": ("completed", None),
    "end_turn": ("completed", None),
    "tool_calls": ("completed", None),
    "function_call": ("completed", None),
    "tool_use": ("completed", None),
    "length": ("incomplete", {"reason": "max_output_tokens"}),
    "max_tokens": ("incomplete", {"reason": "max_output_tokens"}),
    "content_filter": ("incomplete", {"reason": "content_filter"}),
}


def response_status(finish_reason: str | None) -> tuple[str | None, JSON | None]:
    """The response ``status`` and ``incomplete`` a finish reason stands for; (None, None)
    when Hermes recorded none or one this mapping does not know (it stays in ``columns``)."""
    if not finish_reason:
        return None, None
    return _FINISH.get(finish_reason, (None, None))


class Rendered(NamedTuple):
    """A row's entries in order (each the child of the previous), and where its parts are (a
    named tuple, as :class:`~hermes_plugin.convert.items.RowItems`)."""

    entries: tuple[Entry, ...]
    #: Per function_call entry: its index in ``entries``, its ASF call id, the stored call.
    calls: tuple[tuple[int, str, ToolCall], ...] = ()
    #: For a paired tool result: the ASF call id it answers.
    answers: str | None = None
    #: Why the row is a custom entry rather than context; None for context rows.
    aside: str | None = None


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


#: The C encoder ``json.dumps`` builds on every call with its defaults (ASCII, ``", "`` and
#: ``": "``, NaN allowed), built once; without the check for circular values, which parsed
#: JSON never has.
_ENCODER = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, _not_json, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True
)


def _dumps(value: Any) -> str:
    """JSON text the way Hermes writes its JSON columns (``json.dumps`` defaults)."""
    return "".join(_ENCODER(value, 0))


#: The members of a plain text part.
_TEXT_PART = frozenset({"type", "text", "annotations"})


def _stores(cell: str, carried: Any) -> bool:
    """Whether a text cell is the form an item's content or output is read back as: the
    text itself, a single plain text part's text, or the prefixed JSON of any other parts.

    One plain text part reads back as its text (a text cell and the prefixed JSON of that one
    part give the same part), so a prefixed cell holding one is not carried: it stays in
    ``columns``. Tested form by form, cheapest first, so a row's parts are written as JSON only
    when the cell is prefixed JSON.
    """
    if isinstance(carried, str):
        return cell == carried
    if not isinstance(carried, list):
        return False
    if len(carried) == 1 and isinstance(carried[0], dict):
        part = carried[0]
        if part.get("type") in {"input_text", "output_text"} and part.keys() <= _TEXT_PART:
            text = part.get("text")
            if isinstance(text, str) and part.get("annotations", []) == []:
                return cell == text
    return cell.startswith(CONTENT_PREFIX) and cell == CONTENT_PREFIX + _dumps(
        hermes_parts(carried)
    )


def _carried(message: Message, rendered: RowItems, cells: Columns) -> set[str]:
    """Columns whose stored text an entry of the row reproduces exactly (``cells``: the
    row's, looked up one by one: a row needs a few of them)."""
    out: set[str] = set()
    items = rendered.items
    kind = rendered.kind
    cell = cells.get
    # The content or output an entry carries, when the row's text could be stored as it.
    carried: Any = None
    codex_used = kind == "assistant" and _codex_used(message, cells, items)
    if kind == "message":
        carried = items[0].get("content")
    elif kind == "output":
        carried = items[0].get("output")
    elif kind == "assistant":
        built = [i for i in items if i.get("type") == "message"]
        if built and not codex_used:
            carried = built[0].get("content")
    content, api = cell("content"), cell("api_content")
    if api and isinstance(api, str):
        if _stores(api, carried):
            out.add("api_content")
        elif isinstance(content, str) and _stores(content, carried):
            out.add("content")
    elif isinstance(content, str) and _stores(content, carried):
        out.add("content")
    if kind != "assistant":
        return out
    raws = [call.raw for _, call in rendered.calls]
    if raws:
        calls = cell("tool_calls")
        if isinstance(calls, str) and calls == _dumps(raws):
            out.add("tool_calls")
    # A carrier read as no JSON value (NULL, most rows) holds no run of the items.
    if message.codex_reasoning_items is not None:
        codex = cell("codex_reasoning_items")
        if isinstance(codex, str) and _in_items(codex, items):
            out.add("codex_reasoning_items")
    if codex_used:
        out.add("codex_message_items")
    has_chat = bool(message.reasoning) or message.reasoning_content is not None
    has_chat = has_chat or bool(message.reasoning_details)
    if has_chat and items and items[0].get("type") == "reasoning":
        chat = items[0]
        summary = chat.get("summary") or []
        if message.reasoning and summary and summary[0].get("text") == cell("reasoning"):
            out.add("reasoning")
        if "content" in chat and cell("reasoning_content") == message.reasoning_content:
            out.add("reasoning_content")
        shown = chat.get("hermes:reasoning_details")
        if shown is not None:
            details = cell("reasoning_details")
            if isinstance(details, str) and details == _dumps(shown):
                out.add("reasoning_details")
    return out


def _codex_used(message: Message, cols: Columns, items: Sequence[JSON]) -> bool:
    """Whether the row's ``codex_message_items`` are a run of its items (never when the
    carrier reads as no JSON value: NULL, most rows)."""
    if message.codex_message_items is None:
        return False
    cell = cols.get("codex_message_items")
    return isinstance(cell, str) and _in_items(cell, items)


def _in_items(cell: str, items: Sequence[JSON]) -> bool:
    """Whether a JSON array column's objects are, in order, a run of the items."""
    value, ok = parse(cell)
    if not ok or not isinstance(value, list) or not value or _dumps(value) != cell:
        return False
    n = len(value)
    return any(list(items[i : i + n]) == value for i in range(len(items) - n + 1))


def row_columns(message: Message, carried: set[str], *, full: bool) -> tuple[JSON, dict[str, str]]:
    """The row's columns for the ``hermes`` member: every non-null column except the
    identity (``id``, ``session_id``), ``role`` (unless ``full``) and the carried ones; and
    the ``encoded`` ones among them (a BLOB, TEXT that is not UTF-8, a non-finite REAL).
    JSON columns stay the text Hermes stored, so the row can be rebuilt byte for byte."""
    drop = {"id", "session_id", *carried}
    if not full:
        drop.add("role")
    return message.cols.exact_json_kept(drop)


def with_columns(member: JSON, columns: JSON, encoded: dict[str, str]) -> JSON:
    """The ``hermes`` member with the row's ``columns`` (and ``encoded``, when any)."""
    member["columns"] = columns
    if encoded:
        member["encoded"] = encoded
    return member


def render_custom(message: Message, ts: str, why: str, detail: str | None = None) -> Rendered:
    """A row kept aside: one ``custom`` entry holding the whole row."""
    data: JSON = {"kind": "message", "reason": why}
    if detail:
        data["detail"] = detail
    hermes = with_columns({"row": message.unit}, *row_columns(message, set(), full=True))
    entry = Custom(ts=ts, ns="hermes", data=data, unknown={"hermes": hermes})
    return Rendered(entries=(entry,), aside=why)


def render_row(
    message: Message,
    rendered: RowItems,
    ts: str,
    *,
    model: str | None,
    summary_config: JSON | None = None,
    native_ids: dict[int, str] | None = None,
) -> Rendered:
    """A context row's entries.

    ``summary_config``, when given, makes the row's first item the ``summary`` of a
    ``compaction`` entry with that settings checkpoint (a compression continuation's first
    row, or the summary row of an in-place compaction). ``native_ids`` maps a call's
    item index to the stored id when the ASF ``call_id`` differs.
    """
    carried = _carried(message, rendered, message.cols)
    columns, encoded = row_columns(message, carried, full=False)
    unit = message.unit
    visible = False if message.display_kind == "hidden" else None
    assistant = rendered.kind == "assistant"
    response_id = f"hermes:messages/{message.id}" if assistant else None
    # Most rows have no call: no table of them to build.
    call_at = dict(rendered.calls) if rendered.calls else None
    entries: list[Entry] = []
    calls: list[tuple[int, str, ToolCall]] = []
    for index, item in enumerate(rendered.items):
        # An item whose type is not text (a damaged item) is an "item" part.
        kind = item.get("type")
        part = _PARTS.get(kind, "item") if type(kind) is str else "item"
        member: JSON = {"row": unit, "part": part}
        if index == 0 and not assistant:
            # The row's principal entry: its first, unless a response entry follows.
            _principal(member, columns, encoded, carried)
        call = None if call_at is None else call_at.get(index)
        if call is not None:
            if "tool_calls" in carried:
                member["call"] = call.raw
            native = (native_ids or {}).get(index)
            if native is not None:
                member["call_id"] = native
            calls.append((len(entries), str(item["call_id"]), call))
        if not entries and summary_config is not None:
            member["part"] = "summary"
            entry: Entry = Compaction(
                ts=ts, summary=item, config=summary_config, unknown={"hermes": member}
            )
        else:
            entry = item_entry(ts, item, response_id, visible, {"hermes": member})
        entries.append(entry)
    if assistant:
        status, incomplete = response_status(message.finish_reason)
        member = _principal({"row": unit, "part": "response"}, columns, encoded, carried)
        entries.append(
            response_entry(ts, response_id, model, status, incomplete, {"hermes": member})
        )
    return Rendered(tuple(entries), tuple(calls), rendered.answers)


def _principal(member: JSON, columns: JSON, encoded: dict[str, str], carried: set[str]) -> JSON:
    """The principal entry's ``hermes`` member: ``columns``, ``encoded`` and ``carried``."""
    with_columns(member, columns, encoded)
    if carried:
        member["carried"] = sorted(carried)
    return member


#: An item's ``type`` -> the ``part`` its entry's ``hermes`` member names.
_PARTS: dict[str, str] = {
    "function_call": "call",
    "function_call_output": "output",
    "reasoning": "reasoning",
    "message": "message",
}
