"""The text rules Hermes' conversation reader applies to rows, version by version.

``get_messages_as_conversation`` cleans user and assistant text of injected memory context
before returning it, and from 0.18 (schema 17) drops the background-review harness turns a
forked review agent wrote into the session. The converter applies the same rules so the
context it writes is what Hermes replays (SCHEMA-NOTES section 8.1).
"""

from __future__ import annotations

import re

__all__ = [
    "HARNESS_SCHEMA",
    "clean_text",
    "is_review_harness",
    "strips_harness",
]

#: First schema version whose reader drops background-review harness turns (Hermes 0.18.0).
HARNESS_SCHEMA = 17

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
