"""When a background delegation (Hermes 0.19's ``delegate_task`` with ``background``) ended.

Such a call is answered at once with ``{"status": "dispatched", "mode": "background",
"delegation_id": ...}``; its sub-agents start after that answer, so the window in which the
call may have spawned one stays open until the delegation ended. Hermes records the
delegation in ``async_delegations`` (``completed_at`` once done), but prunes a delivered row
after seven days; the end is then the row that brought the result back into the parent
session, a message Hermes opens with ``[ASYNC DELEGATION COMPLETE — <id>]`` (``BATCH
COMPLETE`` for a fan-out). A dispatch with neither stays open.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from hermes_plugin.source.jsontext import parse
from hermes_plugin.source.rows import Delegation, Message

__all__ = ["Background", "completions"]

#: The header of the message a finished background delegation re-enters the session with.
_DELIVERED = re.compile(r"\[ASYNC DELEGATION (?:BATCH )?COMPLETE — ([^\]\s]+)\]")


def completions(delegations: Sequence[Delegation]) -> dict[str, float]:
    """The ``async_delegations`` rows a session dispatched: when each completed (its
    ``completed_at``; infinity while it has none)."""
    out: dict[str, float] = {}
    for delegation in delegations:
        done = delegation.cols.get("completed_at")
        at = float(done) if isinstance(done, int | float) and not isinstance(done, bool) else None
        out[delegation.id] = at if at is not None and math.isfinite(at) else math.inf
    return out


class Background:
    """The background delegations of one session: its ``async_delegations`` rows, and its
    message rows (read for delivered results only when a dispatch has no row)."""

    def __init__(self, completed: Mapping[str, float], rows: Sequence[Message]) -> None:
        self._completed = completed
        self._rows = rows
        self._delivered: dict[str, float] | None = None

    def until(self, answer: Message) -> float | None:
        """When the background delegation a tool result dispatched ended (infinity while it
        has not, or when nothing tells); None when the result dispatched none."""
        text = answer.content.value
        if not isinstance(text, str) or '"delegation_id"' not in text:
            return None
        value, _ = parse(text)  # a hostile one (nested past the stack) reads as no value
        if not isinstance(value, dict):
            return None
        name = value.get("delegation_id")
        if not isinstance(name, str):
            return None
        if name in self._completed:
            return self._completed[name]
        if value.get("mode") != "background":
            return None
        return self.delivered().get(name, math.inf)

    def delivered(self) -> dict[str, float]:
        """When each delegation's result re-entered the session: its first such row's time."""
        if self._delivered is None:
            self._delivered = {}
            for row in self._rows:
                text = row.content.value
                if row.timestamp is None or not isinstance(text, str) or "DELEGATION" not in text:
                    continue
                for name in _DELIVERED.findall(text):
                    self._delivered.setdefault(name, row.timestamp)
        return self._delivered
