"""The chat log format: one JSON object per line, sessions as runs of lines.

A line is ``{"role": "system"|"user"|"assistant", "content": "...", "ts": ...}`` with an
optional ``"session"`` name (default ``"default"``) and, on assistant lines, an optional
``"model"``. ``ts`` is an RFC 3339 string or epoch seconds. Consecutive lines with the same
session name form one session; a name that comes back later starts a continuation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from attrs import frozen

SUFFIX = ".chat.jsonl"
ROLES = frozenset({"system", "user", "assistant"})
#: Members the format defines; any other member is reported as dropped.
MEMBERS = frozenset({"session", "role", "content", "ts", "model"})
DEFAULT_SESSION = "default"


class BadLine(ValueError):
    """A line that is not a chat log message; the message says why."""


@frozen(kw_only=True)
class Line:
    """One message of the log, its ``ts`` already in the ASF spelling."""

    number: int
    session: str
    role: str
    content: str
    ts: str
    model: str | None = None
    #: Names of members the format does not define (not carried into ASF).
    extra: tuple[str, ...] = ()


def _ts(value: Any) -> str:
    from asf_core import ids  # loaded when a log is read, not with the plugin

    if isinstance(value, str):
        return ids.migrate_ts(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return ids.format_ts(value)
    raise BadLine("no usable ts (an RFC 3339 string or epoch seconds)")


def parse_line(number: int, raw: bytes) -> Line:
    """Parse one line, or raise :class:`BadLine` saying what is wrong with it."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # invalid UTF-8; nested too deep
        raise BadLine(f"not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise BadLine("not a JSON object")
    role, content = obj.get("role"), obj.get("content")
    if role not in ROLES:
        raise BadLine(f"role {role!r} is not one of {', '.join(sorted(ROLES))}")
    if not isinstance(content, str):
        raise BadLine("content is not a string")
    session = obj.get("session", DEFAULT_SESSION)
    if not isinstance(session, str) or not session:
        raise BadLine("session is not a non-empty string")
    model = obj.get("model")
    try:
        ts = _ts(obj.get("ts"))
    except ValueError as exc:
        raise BadLine(str(exc)) from None
    return Line(
        number=number,
        session=session,
        role=str(role),
        content=content,
        ts=ts,
        model=model if isinstance(model, str) else None,
        extra=tuple(sorted(set(obj) - MEMBERS)),
    )


def lines(stream: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """Non-blank lines with their 1-based numbers, read as they come."""
    for number, raw in enumerate(stream, 1):
        if raw.strip():
            yield number, raw


def confidence(path: Path) -> float | None:
    """How sure we are that ``path`` is a chat log: the first line decides, the name helps."""
    named = path.name.endswith(SUFFIX)
    try:
        with path.open("rb") as f:
            first = f.readline(65536)
        obj = json.loads(first)
    except (OSError, ValueError, RecursionError):  # json.loads: nested too deep
        return 0.3 if named else None
    looks = isinstance(obj, dict) and "role" in obj and "content" in obj and "type" not in obj
    if looks:
        return 0.9 if named else 0.6
    return 0.3 if named else None
