"""Which Hermes sessions make one ASF session, and how ASF sessions relate.

A *group* is one conversation: a root session and every compression continuation below it
(each a *segment* of one ASF file). Sub-agent and tool sessions (Hermes' ``delegate`` and
``tool`` relations) are *subsessions* of the group holding their parent; /branch copies and
reset children are groups of their own that name their parent's ASF session. Everything is
decided from the ``sessions`` rows alone, so no messages are read to plan a conversion.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from attrs import field, frozen

from asf_core.ids import name_uuid
from hermes_plugin.convert.background import Background
from hermes_plugin.source.relations import Relation, classify, parent_cycles
from hermes_plugin.source.rows import Message, Session
from hermes_plugin.source.toolcalls import result_aliases

__all__ = ["Lineage", "find_spawns", "group_uuid"]


#: Relations whose child is an ASF subsession of its parent's session.
SUBSESSION = frozenset({Relation.DELEGATE, Relation.TOOL})
_CONTINUATION = frozenset({Relation.CONTINUATION})


def group_uuid(unit: str) -> str:
    """The ASF id of a conversation rooted at a session row: UUIDv5 (nil namespace) over
    ``hermes:<database>:sessions/<id>``; the database is named by its place in the Hermes
    home (``state.db``, ``profiles/<name>/state.db``), never by the path converted."""
    return name_uuid(f"hermes:{unit}")


def _start_key(session: Session) -> tuple[float, str]:
    return (session.started_at if session.started_at is not None else math.inf, session.id)


def _climb(
    start: str,
    step: Callable[[str], str | None],
    memo: dict[str, str],
    done: Callable[[str], bool],
) -> str:
    """Where a session ends up following ``step`` links until ``done`` (or a link leads
    nowhere), remembering the answer for every session passed on the way: each session is
    climbed once, so a chain of n sessions costs n steps, not n squared."""
    path: list[str] = []
    passed: set[str] = set()
    sid = start
    while sid not in memo and not done(sid):
        up = step(sid)
        if up is None or up in passed or up == sid:  # no cycle survives Lineage.of; be sure
            break
        path.append(sid)
        passed.add(sid)
        sid = up
    end = memo.get(sid, sid)
    for on_the_way in path:
        memo[on_the_way] = end
    memo[start] = end
    return end


@frozen(kw_only=True)
class Lineage:
    """The sessions of a store with their relations, as a forest of groups."""

    sessions: dict[str, Session]
    relation: dict[str, Relation]
    #: The parent each session hangs under: None for a root, a dangling parent id, or a
    #: link cut to break a cycle.
    parent: dict[str, str | None]
    children: dict[str, tuple[str, ...]]
    #: Sessions whose parent link was cut because it closes a cycle.
    cut: frozenset[str]
    #: Memos of :meth:`group_root` and :meth:`top` (filled as they are asked).
    _roots: dict[str, str] = field(factory=dict, eq=False, repr=False)
    _tops: dict[str, str] = field(factory=dict, eq=False, repr=False)

    @classmethod
    def of(cls, sessions: Iterable[Session]) -> Lineage:
        by_id: dict[str, Session] = {}
        for s in sessions:
            by_id.setdefault(s.id, s)
        cut = frozenset(min(cycle) for cycle in parent_cycles(by_id.values()))
        relation: dict[str, Relation] = {}
        parent: dict[str, str | None] = {}
        kids: dict[str, list[str]] = {}
        for sid, s in by_id.items():
            up = by_id.get(s.parent_id) if s.parent_id else None
            if sid in cut:
                relation[sid], parent[sid] = Relation.ROOT, None
                continue
            relation[sid] = classify(s, up)[0]
            parent[sid] = up.id if up is not None else None
            if up is not None:
                kids.setdefault(up.id, []).append(sid)
        children = {
            k: tuple(sorted(v, key=lambda c: _start_key(by_id[c]))) for k, v in kids.items()
        }
        return cls(sessions=by_id, relation=relation, parent=parent, children=children, cut=cut)

    def _linked(self, sid: str, kinds: frozenset[Relation]) -> bool:
        return self.parent.get(sid) is not None and self.relation[sid] in kinds

    def continuations(self, sid: str) -> list[str]:
        """A segment's continuation children, the one Hermes resumes into last.

        Hermes' compression tip prefers a child that itself ended in compression, then a
        live one, then the newest; written last, it is the file's leaf.
        """
        kids = [c for c in self.children.get(sid, ()) if self.relation[c] is Relation.CONTINUATION]

        def rank(c: str) -> tuple[int, float, str]:
            s = self.sessions[c]
            tier = 2 if s.end_reason == "compression" else 1 if s.ended_at is None else 0
            return (tier, *_start_key(s))

        return sorted(kids, key=rank)

    def kids(self, sid: str, kinds: frozenset[Relation]) -> list[str]:
        return [c for c in self.children.get(sid, ()) if self.relation[c] in kinds]

    def group_root(self, sid: str) -> str:
        """The first segment of the conversation a session is a segment of."""
        return _climb(sid, self.parent.get, self._roots, self._opens_group)

    def _opens_group(self, sid: str) -> bool:
        return not self._linked(sid, _CONTINUATION)

    def segments(self, root: str) -> list[str]:
        """The group's sessions in the order they are written (depth first)."""
        out: list[str] = []
        stack = [root]
        while stack:
            sid = stack.pop()
            out.append(sid)
            stack.extend(reversed(self.continuations(sid)))
        return out

    def is_subsession(self, sid: str) -> bool:
        return self._linked(sid, SUBSESSION)

    def top(self, sid: str) -> str:
        """The root of the outermost group a session is written under."""
        return _climb(self.group_root(sid), self._outer, self._tops, self._is_top)

    def _outer(self, root: str) -> str | None:
        """The root of the group a subsession's group hangs under (its parent's group)."""
        up = self.parent.get(root)
        return None if up is None else self.group_root(up)

    def _is_top(self, root: str) -> bool:
        return not self.is_subsession(root)

    def tops(self, selected: Iterable[str] | None = None) -> list[str]:
        """The top groups to convert (all, or those holding a selected session), oldest first."""
        ids = self.sessions if selected is None else [s for s in selected if s in self.sessions]
        roots = {self.top(s) for s in ids}
        return sorted(roots, key=lambda r: _start_key(self.sessions[r]))


def find_spawns(
    rows: Sequence[Message],
    children: Sequence[Session],
    background: Background | None = None,
    detached: set[tuple[int, int]] | None = None,
) -> dict[str, tuple[int, int]]:
    """The call that spawned each sub-agent child: ``child id -> (message id, call index)``.

    A call spawned a child when the child started inside the call's window, from the
    assistant row that made it to the tool row that answered it (open when unanswered).
    A background delegation is answered at once, its sub-agents started after: a result
    dispatching one keeps the window open until it ended (``background``). Among several,
    a call named like ``delegate*`` wins, then the latest.
    Children without a trustworthy start time, or outside every window, are not attributed.
    ``detached`` receives the background calls that spawned one (answered before it ran).
    """
    if not children:  # most sessions: no window is looked at
        return {}
    windows: list[tuple[float, float, bool, int, int, bool]] = []
    open_calls: list[tuple[set[str], int]] = []
    for row in rows:
        if row.role == "assistant" and row.timestamp is not None:
            for index, call in enumerate(row.tool_calls):
                named = "delegate" in call.name
                windows.append((row.timestamp, math.inf, named, row.id, index, False))
                open_calls.append((set(call.aliases()), len(windows) - 1))
        elif row.role == "tool" and row.timestamp is not None:
            names = set(result_aliases(row.tool_call_id or ""))
            for position, (aliases, slot) in enumerate(open_calls):
                if names & aliases:
                    start, _, named, mid, index, _ = windows[slot]
                    until = background.until(row) if background is not None else None
                    end = row.timestamp if until is None else max(until, row.timestamp)
                    windows[slot] = (start, end, named, mid, index, until is not None)
                    del open_calls[position]
                    break
    out: dict[str, tuple[int, int]] = {}
    for child in children:
        at = child.started_at
        if at is None:
            continue
        fits = [w for w in windows if w[0] <= at <= w[1]]
        if fits:
            best = max(fits, key=lambda w: (w[2], w[0], w[3], w[4]))
            out[child.id] = (best[3], best[4])
            if best[5] and detached is not None:
                detached.add((best[3], best[4]))
    return out
