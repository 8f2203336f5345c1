"""The rules Hermes' conversation reader applies to rows, version by version.

``get_messages_as_conversation`` cleans user and assistant text of injected memory context
before returning it; from 0.18 (schema 17) it drops the background-review harness turns a
forked review agent wrote into the session; from schema 25 it blanks an assistant tool turn
whose whole text is a bare tool marker (``[memory]``); and Hermes 0.17.0 (schema 16) alone
read rows in ``timestamp, id`` order. The converter applies the same rules, keyed on the
database's schema version, so the context it writes is what that Hermes replays
(SCHEMA-NOTES section 8). :func:`as_read` is a row as that reader returns it, what the mapping
rule (:func:`hermes_plugin.convert.items.row_items`) reads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import attrs

from hermes_plugin.source.columns import RawText
from hermes_plugin.source.decode import Content
from hermes_plugin.source.jsontext import JsonValue
from hermes_plugin.source.rows import Message

__all__ = [
    "HARNESS_SCHEMA",
    "MARKER_SCHEMA",
    "TIMESTAMP_ORDER_SCHEMA",
    "as_read",
    "clean_text",
    "clear_stale_marker",
    "clears_stale_markers",
    "is_review_harness",
    "is_stale_marker",
    "read_content",
    "reader_order",
    "strips_harness",
]

#: First schema version whose reader drops background-review harness turns (Hermes 0.18.0).
HARNESS_SCHEMA = 17
#: First schema version whose reader blanks bare tool-marker text on assistant tool turns
#: (present in every schema 25/26 reader seen; absent from 0.19.0, schema 22).
MARKER_SCHEMA = 25
#: The one schema version whose reader ordered rows by ``timestamp, id`` (Hermes 0.17.0);
#: every other release reads in ``id`` (insertion) order.
TIMESTAMP_ORDER_SCHEMA = 16

_MARKER = re.compile(r"\[[A-Za-z_][A-Za-z0-9_.-]*\]")

_BLOCK = re.compile(r"<\s*memory-context\s*>[\s\S]*?</\s*memory-context\s*>", re.IGNORECASE)
_NOTE = re.compile(
    r"\[System note:\s*The following is recalled memory context,\s*NOT new user input\.\s*"
    r"Treat as (?:informational background data|authoritative reference data[^\]]*)\.\]\s*",
    re.IGNORECASE,
)
_TAG = re.compile(r"</?\s*memory-context\s*>", re.IGNORECASE)

_HARNESS_OPENINGS = (
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
)


def clean_text(text: str) -> str:
    """User or assistant text as Hermes' reader returns it: memory-context blocks, the
    recalled-memory system note and stray fence tags removed, surrounding whitespace
    stripped (Python's notion of whitespace, as Hermes uses ``str.strip``)."""
    if "<" not in text and "[" not in text:
        return text.strip()  # every pattern needs one of them (no case variant)
    text = _BLOCK.sub("", text)
    text = _NOTE.sub("", text)
    text = _TAG.sub("", text)
    return text.strip()


def is_review_harness(role: str, content: object) -> bool:
    """Whether a row is a background-review harness prompt: a user or system row whose text,
    leading whitespace aside, opens with one of the two review prompts (case-sensitive)."""
    if role not in {"user", "system"} or not isinstance(content, str):
        return False
    head = content.lstrip()
    return any(head.startswith(opening) for opening in _HARNESS_OPENINGS)


def strips_harness(version: int | None) -> bool:
    """Whether the reader of a database at this schema version drops harness turns."""
    return version is not None and version >= HARNESS_SCHEMA


def clears_stale_markers(version: int | None) -> bool:
    """Whether the reader of a database at this schema version blanks bare tool markers."""
    return version is not None and version >= MARKER_SCHEMA


def is_stale_marker(message: Message) -> bool:
    """Whether a message is an assistant tool turn whose text is only a bracketed tool name
    such as ``[memory]``: a marker an old tool-call template emitted, which newer Hermes does
    not replay as the model's answer (the calls and their results stay)."""
    content = message.content.value
    return (
        message.role == "assistant"
        and isinstance(content, str)
        and _MARKER.fullmatch(content.strip()) is not None
        and bool(message.calls.value)
    )


def clear_stale_marker(message: Message) -> Message:
    """The message with a stale marker's text blanked, as newer Hermes returns it."""
    return attrs.evolve(message, content=_BLANK) if is_stale_marker(message) else message


_BLANK = Content.of("")
#: The roles whose text the reader cleans of memory context.
_CLEANED = frozenset({"user", "assistant"})


def read_content(message: Message) -> JsonValue:
    """A row's content as the conversation reader returns it: user and assistant text cleaned
    (:func:`clean_text`)."""
    content = message.content.value
    if message.role in _CLEANED and isinstance(content, str):
        return clean_text(content)
    return content


def as_read(message: Message, version: int | None = None) -> Message:
    """A row as the conversation reader of a database at schema ``version`` returns it: its
    content as :func:`read_content` reads it and, from schema 25, a stale tool marker blanked
    (without ``version``, no marker is). The row itself when neither changes it."""
    content = read_content(message)
    if content is not message.content.value and content != message.content.value:
        message = attrs.evolve(message, content=Content.of(content))
    if clears_stale_markers(version):
        message = clear_stale_marker(message)
    return message


def reader_order(rows: Sequence[Message], version: int | None) -> list[Message]:
    """A session's rows (read in id order) in the order that version's reader returns them:
    ``timestamp, id`` for schema 16, with SQLite's ordering of mixed cells (NULL, then
    numbers, then text by its bytes, then blobs), else as read."""
    if version != TIMESTAMP_ORDER_SCHEMA:
        return list(rows)
    return sorted(rows, key=lambda m: (_sqlite_key(m.cols.get("timestamp")), m.id))


def _sqlite_key(cell: object) -> tuple[int, Any]:
    if cell is None:
        return (0, 0)
    if isinstance(cell, int | float) and not isinstance(cell, bool):
        return (1, cell)
    if isinstance(cell, RawText):
        return (2, bytes(cell))
    if isinstance(cell, str):
        return (2, cell.encode("utf-8", "surrogatepass"))
    if isinstance(cell, bytes):
        return (3, cell)
    return (0, 0)
