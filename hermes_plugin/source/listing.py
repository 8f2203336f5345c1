"""What ``asf list`` shows of a Hermes database: one entry per session, and the strays.

Counts come from one grouped query, so listing a large database does not
read its messages.
"""

from __future__ import annotations

import math
from datetime import datetime

from attrs import frozen

from hermes_plugin.source.relations import Relation, classify_all, parent_cycles
from hermes_plugin.source.store import RowCounts, Store, Stray

__all__ = ["Listing", "SessionEntry", "list_sessions"]


@frozen(kw_only=True)
class SessionEntry:
    """One session as listed: its identity, lineage, times and row counts."""

    id: str
    unit: str
    title: str | None
    source: str
    relation: Relation
    #: The relation was told by a marker or the source, not by a heuristic.
    marked: bool
    parent_id: str | None
    started: datetime | None
    ended: datetime | None
    end_reason: str | None
    archived: bool
    active_rows: int
    inactive_rows: int
    #: How many columns of the session row do not hold what Hermes writes.
    problems: int


@frozen(kw_only=True)
class Listing:
    """A database's sessions (oldest first), its strays and its parent-link cycles."""

    database: str
    version: int | None
    sessions: tuple[SessionEntry, ...]
    strays: tuple[Stray, ...]
    cycles: tuple[tuple[str, ...], ...]


def list_sessions(store: Store) -> Listing:
    """List a store's sessions with their relations and row counts.

    Strays are the session rows that cannot be read and the message rows
    whose session is not in the database (orphans).
    """
    sessions, strays = store.sessions()
    relations = classify_all(sessions)
    counts = store.row_counts()
    entries = []
    for s in sorted(sessions, key=lambda s: (s.started_at or math.inf, s.id)):
        relation, marked = relations[s.id]
        rows = counts.get(s.id, RowCounts())
        entries.append(
            SessionEntry(
                id=s.id,
                unit=s.unit,
                title=s.title,
                source=s.source,
                relation=relation,
                marked=marked,
                parent_id=s.parent_id,
                started=s.started,
                ended=s.ended,
                end_reason=s.end_reason,
                archived=s.archived,
                active_rows=rows.active,
                inactive_rows=rows.inactive,
                problems=len(s.problems),
            )
        )
    orphans = store.orphans({s.id for s in sessions})
    return Listing(
        database=store.name,
        version=store.version(),
        sessions=tuple(entries),
        strays=(*strays, *orphans),
        cycles=parent_cycles(sessions),
    )
