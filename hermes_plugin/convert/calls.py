"""Which call a tool row answers, and the unique ``call_id`` each call gets in ASF.

Hermes pairs a tool row with a call by id spellings (SCHEMA-NOTES section 7): a call is named
by its ``call_id``, ``id`` and ``response_item_id`` and by each half of a ``call|fc`` bridge
id; a result by its ``tool_call_id`` and its halves. A result answers the earliest earlier
call of the same context that is still unanswered and shares a spelling; each call is
answered once. ASF wants every ``call_id`` unique in the file, so a call whose id is empty or
already used gets an invented one (the native id stays in the entry's ``hermes`` member).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any, NamedTuple

from attrs import define, field

from hermes_plugin.source.toolcalls import ToolCall, result_aliases

__all__ = ["CallBook", "OpenCall", "Snapshot", "call_item"]


class OpenCall(NamedTuple):
    """A call in context: its spellings, its ASF id, and whether a result answered it (a named
    tuple: one or two are made per call, and a tuple is made in a third of the time of a
    frozen attrs instance)."""

    aliases: frozenset[str]
    call_id: str
    answered: bool = False
    #: Schema 31's per-occurrence identity of the call (``tool_call_uids``), when recorded.
    uid: str | None = None


class Snapshot(NamedTuple):
    """What :meth:`CallBook.restore` needs to return to a point: the open calls as they were,
    how many answers had been given since the last compaction, and which compaction."""

    open: tuple[OpenCall, ...]
    answers: int
    generation: int


@define
class CallBook:
    """The calls of one file: ids used anywhere in it, and the calls open on the current path.

    ``keep_native`` never invents an id: every call keeps its native id, repeated or empty
    (the rule applied to one conversation alone, where the test compares native ids).

    A result finds its call through an index of the open calls by spelling (and by uid), not
    by walking them: a session of thousands of calls no result answers, then thousands of
    results naming none of them, stays linear (walking made it quadratic: 24,000 such rows
    took 19 s).
    """

    keep_native: bool = False
    used: set[str] = field(factory=set)
    open: list[OpenCall] = field(factory=list)
    #: Spelling (or ``(UID, uid)``) -> the indices in ``open`` of the calls it names, in order.
    _index: dict[object, list[int]] = field(factory=dict, init=False, repr=False, eq=False)
    #: Per key of ``_index``: every call before this position of its list is answered.
    _heads: dict[object, int] = field(factory=dict, init=False, repr=False, eq=False)
    #: The index of each call answered since the last compaction, in order (for restore).
    _answers: list[int] = field(factory=list, init=False, repr=False, eq=False)
    #: How many compactions there have been: a snapshot from before one restores by rebuilding.
    _generation: int = field(default=0, init=False, repr=False, eq=False)

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
        opened = OpenCall(frozenset(call.aliases()), call_id, False, uid)
        self._enter(len(self.open), opened)
        self.open.append(opened)
        return call_id

    def _enter(self, index: int, call: OpenCall) -> None:
        for key in _keys(call):
            self._index.setdefault(key, []).append(index)

    def answer(self, tool_call_id: str | None, uid: str | None = None) -> str | None:
        """The ASF ``call_id`` of the call a result names, marking it answered; None when no
        open call matches (an unpaired result): the earliest unanswered call sharing a
        spelling. A result's ``tool_call_uid`` (schema 31) names the exact occurrence and is
        tried first."""
        if uid:
            index = self._first((_UID, uid))
            if index is not None:
                return self._answered(index)
        earliest: int | None = None
        for name in result_aliases(tool_call_id or ""):
            index = self._first(name)
            if index is not None and (earliest is None or index < earliest):
                earliest = index
        return None if earliest is None else self._answered(earliest)

    def _first(self, key: object) -> int | None:
        """The earliest unanswered call ``key`` names, if any."""
        indices = self._index.get(key)
        if not indices:
            return None
        head, calls = self._heads.get(key, 0), self.open
        while head < len(indices) and calls[indices[head]].answered:
            head += 1
        self._heads[key] = head
        return indices[head] if head < len(indices) else None

    def _answered(self, index: int) -> str:
        call = self.open[index]
        self.open[index] = OpenCall(call.aliases, call.call_id, True, call.uid)
        self._answers.append(index)
        return call.call_id

    def snapshot(self) -> Snapshot:
        """The open calls, to restore when a branch is abandoned."""
        return Snapshot(tuple(self.open), len(self._answers), self._generation)

    def restore(self, snapshot: Snapshot) -> None:
        """Back to ``snapshot``: the calls opened since leave, the answers given since are
        undone."""
        mark = len(snapshot.open)
        if snapshot.generation != self._generation:  # a compaction since: index it all again
            self.open = list(snapshot.open)
            self._index, self._heads, self._answers = {}, {}, []
            for index, call in enumerate(self.open):
                self._enter(index, call)
            return
        for call in self.open[mark:]:  # each call's index is the last of its keys' lists
            for key in _keys(call):
                indices = self._index[key]
                while indices and indices[-1] >= mark:
                    indices.pop()
                if self._heads.get(key, 0) > len(indices):
                    self._heads[key] = len(indices)
        for index in self._answers[snapshot.answers :]:
            if index < mark:  # answered again: no head may stand past it
                for key in _keys(self.open[index]):
                    place = bisect.bisect_left(self._index[key], index)
                    if self._heads.get(key, 0) > place:
                        self._heads[key] = place
        del self._answers[snapshot.answers :]
        self.open = list(snapshot.open)

    def forget(self) -> None:
        """A compaction: earlier calls leave the context (ids stay used)."""
        self.open = []
        self._index, self._heads, self._answers = {}, {}, []
        self._generation += 1


#: The key a call's uid is indexed under (beside its spellings, which are text).
_UID = "uid"


def _keys(call: OpenCall) -> list[object]:
    """The keys a call is indexed under: its spellings, and its uid when it has one."""
    keys: list[object] = list(call.aliases)
    if call.uid:
        keys.append((_UID, call.uid))
    return keys


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
