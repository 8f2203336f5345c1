"""The rules Hermes' conversation reader applies to rows, version by version.

``get_messages_as_conversation`` cleans user and assistant text of injected memory context
before returning it; from 0.18 (schema 17) it drops the background-review harness turns a
forked review agent wrote into the session; from schema 25 it blanks an assistant tool turn
whose whole text is a bare tool marker (``[memory]``); and Hermes 0.17.0 (schema 16) alone
read rows in ``timestamp, id`` order. The converter applies the same rules, keyed on the
database's schema version, so the context it writes is what that Hermes replays
(SCHEMA-NOTES section 8).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hermes_plugin.source.columns import RawText
from hermes_plugin.source.rows import Message

__all__ = [
    "HARNESS_SCHEMA",
    "MARKER_SCHEMA",
    "TIMESTAMP_ORDER_SCHEMA",
    "clean_text",
    "clear_stale_marker",
    "clears_stale_markers",
    "is_review_harness",
    "is_stale_marker",
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


def is_stale_marker(message: dict[str, Any]) -> bool:
    """Whether a reader message is an assistant tool turn whose text is only a bracketed tool
    name such as ``[memory]``: a marker an old tool-call template emitted, which newer Hermes
    does not replay as the model's answer (the calls and their results stay)."""
    content = message.get("content")
    return (
        message.get("role") == "assistant"
        and bool(message.get("tool_calls"))
        and isinstance(content, str)
        and _MARKER.fullmatch(content.strip()) is not None
    )


def clear_stale_marker(message: dict[str, Any]) -> dict[str, Any]:
    """The reader message with a stale marker's text blanked, as newer Hermes returns it."""
    return {**message, "content": ""} if is_stale_marker(message) else message


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
