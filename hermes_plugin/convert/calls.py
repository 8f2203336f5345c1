"""Which call a tool row answers, and the unique ``call_id`` each call gets in ASF.

Hermes pairs a tool row with a call by id spellings (SCHEMA-NOTES section 7): a call is named
by its ``call_id``, ``id`` and ``response_item_id`` and by each half of a ``call|fc`` bridge
id; a result by its ``tool_call_id`` and its halves. A result answers the earliest earlier
call of the same context that is still unanswered and shares a spelling; each call is
answered once. ASF wants every ``call_id`` unique in the file, so a call whose id is empty or
already used gets an invented one (the native id stays in the entry's ``hermes`` member).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from attrs import define, field

from hermes_plugin.source.toolcalls import ToolCall, result_aliases

__all__ = ["CallBook", "OpenCall", "call_item"]


class OpenCall(NamedTuple):
    """A call in context: its spellings, its ASF id, and whether a result answered it (a named
    tuple: one or two are made per call, and a tuple is made in a third of the time of a
    frozen attrs instance)."""

    aliases: frozenset[str]
    call_id: str
    answered: bool = False
    #: Schema 31's per-occurrence identity of the call (``tool_call_uids``), when recorded.
    uid: str | None = None


@define
class CallBook:
    """The calls of one file: ids used anywhere in it, and the calls open on the current path.

    ``keep_native`` never invents an id: every call keeps its native id, repeated or empty
    (the rule applied to one conversation alone, where the test compares native ids).
    """

    keep_native: bool = False
    used: set[str] = field(factory=set)
    open: list[OpenCall] = field(factory=list)
    #: Every call before this index of ``open`` is answered: a result's search starts here,
    #: so pairing stays linear in a long session's calls.
    _start: int = field(default=0, init=False, repr=False, eq=False)

    def add(self, call: ToolCall, invent: Callable[[], str], uid: str | None = None) -> str:
        """Register a call in context and return its ASF ``call_id``."""
        native = call.pairing_id()
        if self.keep_native or (native and native not in self.used):
            call_id = native
        else:
            call_id = invent()
            while call_id in self.used:
                call_id += "_"
        self.used.add(call_id)
        self.open.append(OpenCall(frozenset(call.aliases()), call_id, False, uid))
        return call_id

    def answer(self, tool_call_id: str | None, uid: str | None = None) -> str | None:
        """The ASF ``call_id`` of the call a result names, marking it answered; None when no
        open call matches (an unpaired result). A result's ``tool_call_uid`` (schema 31)
        names the exact occurrence and is tried first."""
        names = set(result_aliases(tool_call_id or ""))
        calls = self.open
        start = self._start
        while start < len(calls) and calls[start].answered:
            start += 1
        self._start = start
        for index in range(start, len(calls)):
            call = calls[index]
            if call.answered:
                continue
            if (uid and call.uid == uid) or (not uid and not names.isdisjoint(call.aliases)):
                return self._answered(index)
        if uid:  # a uid no open call carries: fall back to the id spellings
            return self.answer(tool_call_id)
        return None

    def _answered(self, index: int) -> str:
        call = self.open[index]
        self.open[index] = OpenCall(call.aliases, call.call_id, True, call.uid)
        return call.call_id

    def snapshot(self) -> tuple[OpenCall, ...]:
        """The open calls, to restore when a branch is abandoned."""
        return tuple(self.open)

    def restore(self, snapshot: tuple[OpenCall, ...]) -> None:
        self.open = list(snapshot)
        self._start = 0

    def forget(self) -> None:
        """A compaction: earlier calls leave the context (ids stay used)."""
        self.open = []
        self._start = 0


def call_item(call: ToolCall, call_id: str) -> dict[str, Any]:
    """A stored tool call as an Open Responses ``function_call`` item.

    ``id`` is the Responses item id when Hermes kept one: ``response_item_id``, or the part
    after the bar of a ``call|fc`` bridge id.
    """
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": call_id,
        "name": call.name,
        "arguments": call.arguments_text(),
    }
    item_id = call.response_item_id.strip()
    if not item_id:
        for value in (call.call_id, call.id):
            if "|" in value:
                item_id = value.split("|", 1)[1].strip()
                break
    if item_id:
        item["id"] = item_id
    return item
