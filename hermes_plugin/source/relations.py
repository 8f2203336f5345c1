"""How a session relates to the session its ``parent_session_id`` names.

Hermes links compression continuations, /branch copies, reset children and
sub-agent runs with the same column; :func:`classify` tells them apart with
Hermes' own predicates (SCHEMA-NOTES §5), in Hermes' order.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

from hermes_plugin.schema import MARKER_BRANCH, MARKER_DELEGATE, MARKER_RESET, RESET_END_REASONS
from hermes_plugin.source.rows import Session

__all__ = ["Relation", "classify", "classify_all", "parent_cycles"]


class Relation(enum.Enum):
    """A session's relation to its parent; the value is the name documents use."""

    #: No parent.
    ROOT = "root"
    #: A compression continuation: the parent ended "compression".
    CONTINUATION = "continuation"
    #: A /branch copy: ``_branched_from`` names the parent, or (before the
    #: marker) the parent ended "branched" no later than the child started.
    BRANCH = "branch"
    #: A reset child: ``_reset_from`` names the parent, or (before the marker)
    #: the parent ended at a reset boundary on the child's routing key.
    RESET = "reset"
    #: A sub-agent run: ``_delegate_from`` names the parent, its source is
    #: "subagent", or nothing else tells it.
    DELEGATE = "delegate"
    #: A session a third-party tool ran: source "tool".
    TOOL = "tool"

    def __str__(self) -> str:
        return self.value


def classify(session: Session, parent: Session | None) -> tuple[Relation, bool]:
    """Tell a session's relation to its parent, the row ``parent_id`` names.

    ``parent`` is None when the database does not hold that row. The order is
    Hermes': an explicit fork (source "tool", or a marker naming the parent),
    then a compression child, then the legacy branch and reset heuristics, and
    else a sub-agent run, as Hermes takes every other child.

    Two rules are this reader's. A session whose source is "tool" is TOOL even
    without a parent (Hermes hides it from listings either way). A session
    whose source is "subagent" is a sub-agent whatever its parent's end,
    unless its parent is one too, whose compression child it may be.

    The flag is True when a marker or the source told the relation, False
    when the parent's end reason or a heuristic did (or nothing did).
    """
    if session.source == "tool":
        return Relation.TOOL, True
    parent_id = session.parent_id
    if not parent_id:
        return Relation.ROOT, False
    for marker, relation in (
        (MARKER_BRANCH, Relation.BRANCH),
        (MARKER_DELEGATE, Relation.DELEGATE),
        (MARKER_RESET, Relation.RESET),
    ):
        if session.marker(marker) == parent_id:
            return relation, True
    parent_end = parent.end_reason if parent is not None else None
    if session.source == "subagent":
        if parent is not None and parent.source == "subagent" and parent_end == "compression":
            return Relation.CONTINUATION, False
        return Relation.DELEGATE, True
    if parent is None:
        return Relation.DELEGATE, False
    if parent_end == "compression":
        return Relation.CONTINUATION, False
    if (
        parent_end == "branched"
        and session.started_at is not None
        and parent.ended_at is not None
        and session.started_at >= parent.ended_at
    ):
        return Relation.BRANCH, False
    if (
        parent_end in RESET_END_REASONS
        and session.session_key
        and (session.session_key == parent.session_key)
    ):
        return Relation.RESET, False
    return Relation.DELEGATE, False


def classify_all(sessions: Iterable[Session]) -> dict[str, tuple[Relation, bool]]:
    """Classify every session of a store against the rows it holds."""
    by_id = _by_id(sessions)
    return {
        s.id: classify(s, by_id.get(s.parent_id) if s.parent_id else None) for s in by_id.values()
    }


def parent_cycles(sessions: Iterable[Session]) -> tuple[tuple[str, ...], ...]:
    """The cycles in parent links, each as its session ids from its smallest id.

    Hermes refuses to create a cycle on import, but a foreign writer can; a
    converter that walks up to a root must stop at one.
    """
    parent_of: Mapping[str, str | None] = {s.id: s.parent_id for s in _by_id(sessions).values()}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    cycles: list[tuple[str, ...]] = []
    for start in sorted(parent_of):
        path: list[str] = []
        node: str | None = start
        while node is not None and node in parent_of and node not in state:
            state[node] = 1
            path.append(node)
            node = parent_of[node]
        if node is not None and state.get(node) == 1:
            cycle = path[path.index(node) :]
            first = cycle.index(min(cycle))
            cycles.append(tuple(cycle[first:] + cycle[:first]))
        for visited in path:
            state[visited] = 2
    return tuple(sorted(cycles))


def _by_id(sessions: Iterable[Session]) -> dict[str, Session]:
    """Sessions by id; the first row wins (ids are a primary key in Hermes)."""
    out: dict[str, Session] = {}
    for s in sessions:
        if s.id and s.error is None:
            out.setdefault(s.id, s)
    return out
