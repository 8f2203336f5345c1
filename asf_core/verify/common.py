"""What every part of the verifier shares: the finding, the session view, small item readers.

The rule modules (:mod:`asf_core.verify.calls`, :mod:`asf_core.verify.runs`,
:mod:`asf_core.verify.refs`) only read a session through :class:`SessionView`, the slice of
:class:`asf_core.reader.SessionFile` they need, so each rule can be exercised on a session
built in memory. They return findings without ``line``/``path``;
:mod:`asf_core.verify.session` fills those in from the session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from asf_core.findings import ERROR, INFO, WARNING, Finding
from asf_core.model import Entry, Header, Item

__all__ = [
    "ERROR",
    "INFO",
    "WARNING",
    "Finding",
    "SessionView",
    "call_id_of",
    "function_call",
    "function_output",
    "member",
    "prefix_ids",
]


class SessionView(Protocol):
    """The part of a read session file the rules look at."""

    @property
    def path(self) -> Path | None: ...
    @property
    def header(self) -> Header: ...
    @property
    def entries(self) -> list[Entry]: ...
    @property
    def by_id(self) -> dict[str, Entry]: ...
    @property
    def line_of(self) -> dict[str, int]: ...
    @property
    def base(self) -> str | None: ...
    def path_to(self, entry_id: str) -> list[Entry]: ...
    def up_of(self, entry_id: str) -> str | None: ...
    def above(self, ancestor_id: str, entry_id: str) -> bool: ...
    def leaves(self) -> list[str]: ...


def member(entry: Entry, name: str) -> Any:
    """The member ``name`` as written, typed field first, else from ``unknown`` (mistyped)."""
    value = getattr(entry, name + "_" if name in ("from", "pass") else name, None)
    if value is None:
        return entry.unknown.get(name)
    return value


def _item_of_type(entry: Entry, kind: str) -> dict[str, Any] | None:
    if isinstance(entry, Item) and isinstance(entry.item, dict) and entry.item.get("type") == kind:
        return entry.item
    return None


def function_call(entry: Entry) -> dict[str, Any] | None:
    """The ``function_call`` item an entry carries, or None."""
    return _item_of_type(entry, "function_call")


def function_output(entry: Entry) -> dict[str, Any] | None:
    """The ``function_call_output`` item an entry carries, or None."""
    return _item_of_type(entry, "function_call_output")


def call_id_of(item: dict[str, Any]) -> str:
    """An item's ``call_id``; "" when it is missing or not a string (both unusable)."""
    value = item.get("call_id")
    return value if isinstance(value, str) else ""


def prefix_ids(session: SessionView) -> frozenset[str]:
    """Ids of a fork's prefix (root .. base): another session's record, outside our promise."""
    if session.base is None or session.base not in session.by_id:
        return frozenset()
    return frozenset(e.id for e in session.path_to(session.base) if e.id is not None)
