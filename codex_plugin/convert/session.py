"""One rollout as one ASF session: every line an entry (or two), placed so that ASF's
context at the leaf is the history Codex's resume rebuilds.

Entries go on one live path. A rollback (``thread_rolled_back``) continues the path from the
entry above the first dropped item, so the dropped turns stay in the file as a side branch;
a compaction is a ``compaction`` entry whose summary and pins are the replacement history
(see ``docs/formats/codex.md`` §4).

A rollout is read in passes, line by line, and never held. A first pass places the entries
without sealing them (:class:`FirstPass`): it counts them, and learns which calls the file
leaves unanswered, whose ``aborted`` output Codex puts right after them before sending (when
there are some, a second such pass counts with those outputs in place). The last pass
(:func:`entries_of`) places them again, sealing each one and handing it on as its line is
read: the session's counts are known before its first entry is written, as the host needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final

from attrs import frozen

from asf_core.formats import StoreError
from asf_core.ids import NumberedNames
from asf_core.model import Compaction, Config, Custom, Entry, Header, Item, Response
from codex_plugin import NS
from codex_plugin.convert.history import (
    CALLS,
    Brief,
    agent_item,
    legacy_history,
    output_for,
    unanswered,
    unasked,
    visible,
)
from codex_plugin.convert.path import LivePath, Step
from codex_plugin.source.lines import Line, raw_form
from codex_plugin.source.rollout import when

__all__ = ["FirstPass", "Survey", "entries_of", "item_of"]

JSON = dict[str, Any]
#: Reads an item again by its line's key (its offset).
Fetch = Callable[[int], JSON]
EPOCH: Final = "1970-01-01T00:00:00Z"


@frozen
class Survey:
    """What the first pass learns of a rollout: all the last pass needs besides its lines."""

    #: The counts for the report (but ``entries``), and the entries the last pass writes.
    counts: dict[str, int]
    entries: int
    #: Lines of the calls answered ``aborted``.
    aborted: frozenset[int]
    #: The lines read (the last pass reads no further than the first reading: its file).
    lines: int


def item_of(obj: JSON | None) -> JSON | None:
    """The item a readable line holds: its payload, or the line itself in the pre-envelope
    format (no ``payload``); for an ``inter_agent_communication`` line, the item Codex makes
    of it."""
    if obj is None:
        return None
    if obj.get("type") == "inter_agent_communication":
        return agent_item(obj.get("payload"))
    item = obj.get("payload") if "payload" in obj else obj
    return item if isinstance(item, dict) else None


def _usage(info: Any) -> JSON | None:
    """A ``token_count`` event's last request usage in Open Responses' shape."""
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    if not isinstance(last, dict):
        return None

    def count(name: str) -> int | None:
        value = last.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    usage: JSON = {
        name: count(name)
        for name in ("input_tokens", "output_tokens", "total_tokens")
        if count(name) is not None
    }
    if count("cached_input_tokens") is not None:
        usage["input_tokens_details"] = {"cached_tokens": count("cached_input_tokens")}
    if count("reasoning_output_tokens") is not None:
        usage["output_tokens_details"] = {"reasoning_tokens": count("reasoning_output_tokens")}
    return usage or None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class _Conversion:
    """The state of one pass over a rollout's lines."""

    def __init__(
        self, header: Header | None, aborted: frozenset[int], fetch: Fetch, *, dry: bool
    ) -> None:
        self.live = LivePath(fetch, dry=dry)
        self.aborted = aborted
        self.ts = EPOCH if header is None else header.created_at
        self.model: str | None = None
        self.meta_seen = False
        #: Call ids given so far, and the one each native call id stands for now.
        self.call_ids = NumberedNames()
        self.renamed: dict[str, str] = {}
        #: The native call id each given one stands for, where they differ.
        self.native: dict[str, str] = {}
        self.counts: dict[str, int] = {
            "lines": 0,
            "items": 0,
            "unreadable_lines": 0,
            "compactions": 0,
            "rollbacks": 0,
        }

    def custom(self, line: Line, data: JSON) -> str:
        entry = Custom(ts=self.ts, ns=NS, data=data, unknown={NS: {"line": line.number}})
        return self.live.add(entry)

    def item(self, line: Line, item: JSON, member: JSON) -> None:
        self.counts["items"] += 1
        item, member = self.bound(item, member)
        entry = Item(ts=self.ts, item=item, unknown={NS: member})
        self.live.add_item(entry, item, line.number, line.offset)
        if line.number in self.aborted and item.get("type") in CALLS:
            answer = output_for(item)
            derived = {"line": line.number, "derived": "aborted"}
            entry = Item(ts=self.ts, item=answer, unknown={NS: derived})
            self.live.add_item(entry, answer, line.number, -1)

    def bound(self, item: JSON, member: JSON) -> tuple[JSON, JSON]:
        """``item`` with the ``call_id`` ASF gives it: a call repeating an earlier call's id
        gets ``<id>-<n>``, and outputs after it with that id follow it (the native id kept in
        ``codex.call_id``)."""
        native = item.get("call_id")
        if not isinstance(native, str):
            return item, member
        if item.get("type") in CALLS:
            ours = self.call_ids.give(native)
            self.renamed[native] = ours
            if ours != native:
                self.native[ours] = native
        else:
            ours = self.renamed.get(native, native)
        if ours == native:
            return item, member
        return {**item, "call_id": ours}, {**member, "call_id": native}

    def fold(self, pieces: Sequence[Step | JSON], before: str, member: JSON, **how: Any) -> None:
        """A compaction leaving ``pieces`` (items, or steps of the path standing for theirs),
        right after ``before`` (the entry of its line, which holds no item: the first kept,
        so nothing above the fold stays in context)."""
        items = [self.live.item(piece) for piece in pieces]
        entry = Compaction(
            ts=self.ts,
            first_kept=before,
            summary=items[0],
            pinned=tuple(items[1:]) or None,
            config=self.live.settings() or None,
            unknown={NS: member},
        )
        self.live.add_fold(entry, pieces, member["line"], **how)

    def line(self, line: Line) -> None:
        self.counts["lines"] += 1
        obj = line.obj
        if obj is None:
            self.counts["unreadable_lines"] += 1
            self.custom(line, raw_form(line))
            return
        dry = self.live.dry  # a pass that only counts: no time, no members
        if not dry:
            self.ts = when(obj.get("timestamp")) or self.ts
        kind = obj.get("type")
        payload = obj.get("payload")
        if "payload" not in obj and visible(obj):  # the pre-envelope format: a bare item
            self.item(line, obj, {"line": line.number, "form": "bare"})
        elif kind == "response_item" and visible(payload):
            self.item(line, payload, {"line": line.number, **({} if dry else _fields(obj))})
        elif kind == "session_meta" and isinstance(payload, dict) and not self.meta_seen:
            self.meta_seen = True
            self.session_meta(line, obj, payload)
        elif kind == "turn_context" and isinstance(payload, dict):
            self.turn_context(line, obj, payload)
        elif kind == "compacted" and isinstance(payload, dict):
            self.compacted(line, obj, payload)
        elif kind == "event_msg" and isinstance(payload, dict):
            self.event(line, obj, payload)
        elif kind == "inter_agent_communication" and (agent := agent_item(payload)) is not None:
            self.custom(line, {"object": obj})
            entry = Item(
                ts=self.ts, item=agent, unknown={NS: {"line": line.number, "derived": "agent"}}
            )
            self.live.add_item(entry, agent, line.number, line.offset)
        else:
            self.custom(line, {"object": obj})

    def session_meta(self, line: Line, obj: JSON, payload: JSON) -> None:
        base = payload.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else None
        member: JSON = {"line": line.number}
        if isinstance(base, dict) and isinstance(text, str):
            rest = {k: v for k, v in base.items() if k != "text"}
            member["object"] = {**obj, "payload": {**payload, "base_instructions": rest}}
            member["moved"] = "payload.base_instructions.text"
        else:
            member["object"] = obj
        self.live.add(Config(ts=self.ts, instructions=_str(text), unknown={NS: member}))

    def turn_context(self, line: Line, obj: JSON, payload: JSON) -> None:
        model = _str(payload.get("model"))
        reasoning: JSON = {}
        for name in ("effort", "summary"):
            if isinstance(payload.get(name), str):
                reasoning[name] = payload[name]
        self.model = model or self.model
        self.live.add(
            Config(
                ts=self.ts,
                model=model,
                reasoning=reasoning or None,
                unknown={NS: {"line": line.number, "object": obj}},
            )
        )

    def compacted(self, line: Line, obj: JSON, payload: JSON) -> None:
        history = payload.get("replacement_history")
        if "replacement_history" not in payload or history is None:  # legacy: a summary only
            message = _str(payload.get("message")) or ""
            items = legacy_history(self.live.turn_texts(self.live.history()), message)
            before = self.custom(line, {"object": obj})
            self.counts["compactions"] += 1
            self.fold(items, before, {"line": line.number, "derived": "legacy"}, legacy=message)
            return
        if not isinstance(history, list) or not all(isinstance(i, dict) for i in history):
            self.custom(line, {"object": obj})  # Codex cannot read it either: no effect
            return
        self.counts["compactions"] += 1
        if not history:  # nothing left: the conversation starts again, from a new root
            self.live.reroot(line.number, base=True)
            self.custom(line, {"object": obj})
            return
        rest = {k: v for k, v in payload.items() if k != "replacement_history"}
        data = {"object": {**obj, "payload": rest}, "moved": "payload.replacement_history"}
        before = self.custom(line, data)
        self.fold(history, before, {"line": line.number}, base=True, key=line.offset)

    def event(self, line: Line, obj: JSON, payload: JSON) -> None:
        kind = payload.get("type")
        if kind == "token_count" and not self.live.dry:  # dry: one entry either way
            usage = _usage(payload.get("info"))
            if usage is not None:
                member = {"line": line.number, "object": obj}
                self.live.add(
                    Response(ts=self.ts, model=self.model, usage=usage, unknown={NS: member})
                )
                return
        turns = payload.get("num_turns")
        if kind == "thread_rolled_back" and type(turns) is int and turns >= 1:
            self.rollback(line, obj, turns)
            return
        self.custom(line, {"object": obj})

    def rollback(self, line: Line, obj: JSON, turns: int) -> None:
        cut = self.live.rollback(turns)
        if cut is None:
            self.custom(line, {"object": obj})
            return
        self.counts["rollbacks"] += 1
        if cut.empty:
            self.live.reroot(line.number, turns=turns)
            self.custom(line, {"object": obj})
        elif cut.fold is None:
            self.live.restart(cut.parent)
            self.custom(line, {"object": obj})
        else:  # into a fold: a new fold of what is left of it
            before = self.custom(line, {"object": obj})
            member = {"line": line.number, "derived": "rollback"}
            self.fold(cut.fold, before, member, turns=turns)

    def finish(self) -> list[int]:
        """Leave outputs whose call is not in the history out of the context (an ``omit``
        at the end of the path: those of its entries after the last fold); the lines of the
        calls left without an output (a fold's too)."""
        history = self.live.history()
        briefs = self.codex_briefs(history)
        after = self.live.folded_at()
        orphans = [
            self.live.entry(p)
            for n in unasked(briefs)
            if isinstance(p := history[n], Step) and p.at > after
        ]
        if orphans:
            member = {"derived": "omit", "line": self.live.steps[-1].line}
            self.live.add(Config(ts=self.ts, omit={"items": orphans}, unknown={NS: member}))
        return [p.line for n in unanswered(briefs) if isinstance(p := history[n], Step)]

    def codex_briefs(self, history: list[Step | JSON]) -> list[Brief]:
        """The briefs of ``history`` with the call ids Codex matches calls and outputs by: a
        call repeating an earlier call's id, renamed, is still answered by any output of its
        native id, as an output is still asked by any call of it (a fold's items keep theirs)."""
        briefs = self.live.briefs(history)
        if not self.native:
            return briefs
        return [
            b._replace(call_id=self.native[b.call_id])
            if isinstance(p, Step) and b.call_id in self.native
            else b
            for p, b in zip(history, briefs, strict=True)
        ]


def _fields(obj: JSON) -> JSON:
    """What an item entry keeps of its line besides the payload: members other than
    ``type`` and a ``timestamp`` the entry's ``ts`` spells the same (``untimed``: the line
    had none, and its entry took the ``ts`` before it)."""
    rest: JSON = {k: v for k, v in obj.items() if k not in ("type", "payload")}
    if "timestamp" not in rest:
        return {"fields": rest, "untimed": True}
    if isinstance(rest["timestamp"], str) and when(rest["timestamp"]) == rest["timestamp"]:
        del rest["timestamp"]
    return {"fields": rest} if rest else {}


class FirstPass:
    """The first pass: fed a rollout's lines one by one, then :meth:`survey`."""

    def __init__(self, fetch: Fetch) -> None:
        self.fetch = fetch
        self.conversion = _Conversion(None, frozenset(), fetch, dry=True)
        self.end = 0

    def feed(self, line: Line) -> None:
        self.conversion.line(line)
        self.end = line.offset + line.size

    def tee(self, lines: Iterable[Line]) -> Iterator[Line]:
        """``lines``, each fed to this pass as it goes by (to read a rollout's facts and
        survey it in one reading)."""
        for line in lines:
            self.feed(line)
            yield line

    def survey(self, again: Callable[[int], Iterable[Line]]) -> Survey:
        """What the lines fed say; ``again(end)`` reads them again, up to byte ``end``, when
        calls are left unanswered. The pass's own state is let go: the last pass keeps
        its own."""
        first, self.conversion = (
            self.conversion,
            _Conversion(None, frozenset(), self.fetch, dry=True),
        )
        left = first.finish()
        counted = first
        if left:
            counted = _Conversion(None, frozenset(left), self.fetch, dry=True)
            for line in again(self.end):
                counted.line(line)
            counted.finish()
            counted.counts["aborted_calls"] = len(left)
        return Survey(
            counts=counted.counts,
            entries=counted.live.added,
            aborted=frozenset(left),
            lines=first.counts["lines"],
        )


def entries_of(
    header: Header, lines: Iterable[Line], fetch: Fetch, survey: Survey, unit: str
) -> Iterator[Entry]:
    """The last pass: the entries of a rollout's ``lines``, sealed, each handed on as its line
    is read; ``StoreError`` when they are not the lines ``survey`` read (the file changed)."""
    conversion = _Conversion(header, survey.aborted, fetch, dry=False)
    live = conversion.live
    for line in lines:
        conversion.line(line)
        yield from live.take()
    conversion.finish()
    yield from live.take()
    if conversion.counts["lines"] != survey.lines or live.added != survey.entries:
        raise StoreError(f"{unit}: changed while being converted; run again")
