"""One line of a session file as ASF entries (ids not yet computed).

Every entry made from a line carries the member ``claude-code`` with the line's number
(``line``) and, for a transcript line, its ``uuid``. A message line becomes one ``item``
entry per content block (the first also holds ``fields``: every member of the line but its
``uuid`` and ``message.content``; each holds its block's ``index`` and residue ``block``); a
line holding no mappable message becomes one ``custom`` entry whose ``data.object`` is the line
itself; a title line an ``info`` entry; an unreadable line a ``custom`` entry holding its raw
text. So every line can be rebuilt from its entries (``docs/formats/claude-code.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any, Final

from attrs import frozen

from asf_core.model import Compaction, Custom, Entry, Info, Item
from claude_code_plugin import NS
from claude_code_plugin.convert.blocks import (
    Mapped,
    assistant_item,
    string_message,
    user_item,
)
from claude_code_plugin.convert.derived import message_id
from claude_code_plugin.source.index import TITLES, names_elsewhere
from claude_code_plugin.source.lines import raw_text
from claude_code_plugin.source.table import Line

__all__ = [
    "LineEntries",
    "Place",
    "custom_entry",
    "line_entries",
    "pre_tokens",
    "unreadable_entry",
]

JSON = dict[str, Any]

#: ``compactMetadata`` member holding the context size before a compaction.
_PRE_TOKENS: Final = "preTokens"


@frozen
class Place:
    """What an entry's content depends on beyond its own line (given by the writer)."""

    ts: str
    #: The ASF call id of a tool use of this line whose native id an earlier line of the
    #: file already used; None keeps the native id.
    rename: Callable[[str], str | None]
    #: The ASF call id a result for a native call id answers on this path (None: unbound).
    bind: Callable[[str], str | None]
    #: For a compact summary: the boundary's entry id, the checkpoint settings, the entries
    #: of the helper transcript that wrote it.
    first_kept: str | None = None
    checkpoint: JSON | None = None
    pre_tokens: int | None = None
    parents: tuple[Any, ...] = ()
    #: For a result line: the ``parents`` of each answered call's output (sub-agent leaves).
    output_parents: Callable[[str], tuple[Any, ...]] | None = None
    #: The uuids of the file (a ``summary`` of a leaf not among them names another session).
    uuids: Container[str] | None = None


@frozen
class LineEntries:
    """The entries of one line, and the tool calls it made (native id -> ASF id)."""

    entries: list[Entry]
    calls: dict[str, str]


def _member(line: Line, **more: Any) -> JSON:
    member: JSON = {"line": line.number}
    if line.uuid is not None:
        member["uuid"] = line.uuid
    member.update(more)
    return member


def _fields(obj: JSON) -> JSON:
    """The line without its ``uuid`` and its message's ``content`` (the items hold those)."""
    fields = {k: v for k, v in obj.items() if k != "uuid"}
    message = obj.get("message")
    if isinstance(message, dict):
        fields["message"] = {k: v for k, v in message.items() if k != "content"}
    return fields


def custom_entry(obj: JSON, line: Line, ts: str) -> Custom:
    """A line outside the conversation, kept whole."""
    return Custom(ts=ts, ns=NS, data={"object": obj}, unknown={NS: _member(line)})


def unreadable_entry(data: bytes, line: Line, ts: str) -> Custom:
    """A line that cannot be read, kept as its raw text (or bytes, in base64)."""
    body: JSON = {"unreadable": line.unreadable or "cannot be read", **raw_text(data)}
    if line.truncated:
        body["truncated"] = True
    return Custom(ts=ts, ns=NS, data=body, unknown={NS: _member(line)})


def _title_entry(obj: JSON, line: Line, place: Place) -> Info | None:
    key = TITLES.get(str(obj.get("type")))
    if key is None or not isinstance(obj.get(key), str):
        return None
    if place.uuids is not None and names_elsewhere(obj, place.uuids):
        return None
    fields = {k: v for k, v in obj.items() if k != key}
    return Info(
        ts=place.ts, name=obj[key], unknown={NS: _member(line, fields=fields, name_from=key)}
    )


def _message_items(
    obj: JSON, line: Line, place: Place
) -> tuple[list[tuple[Mapped, JSON]], dict[str, str]] | None:
    """Each block's item and its entry member; None when the line holds no message."""
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    role = line.role
    if role is None or not isinstance(content, str | list) or content == []:
        return None
    if isinstance(content, str):
        mapped = Mapped(string_message(role, content), None)
        return [(mapped, _member(line, fields=_fields(obj), form="string"))], {}
    out: list[tuple[Mapped, JSON]] = []
    calls: dict[str, str] = {}
    mapper = assistant_item if role == "assistant" else user_item
    for index, block in enumerate(content):
        mapped = mapper(block)
        extra: JSON = {"index": index}
        if mapped.residue is not None:
            extra["block"] = mapped.residue
        if mapped.call is not None:
            renamed = place.rename(mapped.call)
            if renamed is not None:
                mapped.item["call_id"] = renamed
                extra["call_id"] = mapped.call
            calls[mapped.call] = mapped.item["call_id"]
        if mapped.answers is not None:
            bound = place.bind(mapped.answers)
            if bound is not None and bound != mapped.answers:
                mapped.item["call_id"] = bound
                extra["call_id"] = mapped.answers
        if not out:
            extra = {"fields": _fields(obj), **extra}
        out.append((mapped, _member(line, **extra)))
    return out, calls


def _compaction(obj: JSON, line: Line, place: Place) -> Compaction | None:
    """A compact summary as the compaction entry that cuts the context at its boundary."""
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if place.first_kept is None:
        return None
    if isinstance(content, str):
        summary, form = string_message("user", content), "string"
    elif isinstance(content, list) and content and all(_plain_text(b) for b in content):
        parts = [{"type": "input_text", "text": b["text"]} for b in content]
        summary, form = {"type": "message", "role": "user", "content": parts}, "text_blocks"
    else:
        return None  # another shape: its blocks become items, as any user line's
    return Compaction(
        ts=place.ts,
        first_kept=place.first_kept,
        summary=summary,
        config=place.checkpoint or None,
        tokens_before=place.pre_tokens,
        parents=place.parents,
        unknown={NS: _member(line, fields=_fields(obj), form=form)},
    )


def _plain_text(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.keys() == {"type", "text"}
        and block["type"] == "text"
        and isinstance(block["text"], str)
    )


def line_entries(obj: JSON, line: Line, place: Place) -> LineEntries:
    """The entries of a readable line, in the order they are written."""
    if line.summary:
        compaction = _compaction(obj, line, place)
        if compaction is not None:
            return LineEntries([compaction], {})
    mapped = _message_items(obj, line, place)
    if mapped is None:
        title = None if line.transcript else _title_entry(obj, line, place)
        return LineEntries([title or custom_entry(obj, line, place.ts)], {})
    items, calls = mapped
    entries: list[Entry] = []
    response = message_id(obj) if line.role == "assistant" else None
    for m, member in items:
        parents = ()
        if m.answers is not None and place.output_parents is not None:
            parents = place.output_parents(m.answers)
        entries.append(
            Item(
                ts=place.ts,
                item=m.item,
                response=response,
                visible=False if line.meta else None,
                parents=parents,
                unknown={NS: member},
            )
        )
    return LineEntries(entries, calls)


def pre_tokens(obj: JSON) -> int | None:
    """A compact boundary's context size before compaction, when recorded."""
    meta = obj.get("compactMetadata")
    value = meta.get(_PRE_TOKENS) if isinstance(meta, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
