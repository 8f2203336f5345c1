"""What ``read`` yields for a Hermes database: a native session per row, then the strays.

With a narrowing selection only the ``sessions`` rows are read to choose: rows are counted
for the sessions that pass the other tests alone, a preview is read for the chosen ones alone
(one row each), and no message row of another session is ever queried; the strays (rows of no
session, unreadable session rows) are a whole-database account and are left out. Counting
(the host's progress total) reads the ``sessions`` rows alone: no message row at all.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import datetime

import attrs

from asf_core import ids
from asf_core.formats import Finding, NativeSession, Selection
from asf_core.selecting import selected
from hermes_plugin.source.relations import classify_all
from hermes_plugin.source.rows import Session
from hermes_plugin.source.store import RowCounts, Store, Stray

__all__ = ["PREVIEW", "native_sessions", "stray_finding"]

#: How much of the first user message a listing keeps, in characters.
PREVIEW = 200


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else ids.format_ts(moment)


def _start(session: Session) -> tuple[float, str]:
    return (session.started_at if session.started_at is not None else math.inf, session.id)


def native_sessions(
    store: Store,
    selection: Selection | None = None,
    *,
    previews: bool = True,
    counting: bool = False,
) -> Iterator[NativeSession | Finding]:
    """The sessions of a store that ``selection`` picks (default: all; oldest first), each
    with its row counts and (``previews``) preview; then, for the whole store, its stray
    rows. ``counting`` every session: each by its id alone, and no stray (no row counts, no
    relations, no orphaned rows: only how many there are is used)."""
    wanted = selection or Selection()
    everything = wanted.everything()
    sessions, strays = store.sessions()
    if counting and everything:
        yield from (NativeSession(id=s.id) for s in sessions)
        return
    relations = classify_all(sessions)
    chosen: list[NativeSession] = []
    for s in sorted(sessions, key=_start):
        native = NativeSession(
            id=s.id,
            title=s.title,
            source=s.source,
            started=_when(s.started),
            ended=_when(s.ended),
            relation=str(relations[s.id][0]),
            parent=s.parent_id,
            cwd=s.working_dir,
            model=s.model or None,
        )
        if everything or wanted.matches(native, rows=False):
            chosen.append(native)
    counts = store.row_counts(None if everything else [s.id for s in chosen])
    chosen = [_counted(s, counts.get(s.id, RowCounts())) for s in chosen]
    if not everything:
        chosen = selected(chosen, wanted)
    for native in chosen:
        yield (
            attrs.evolve(native, preview=_preview(store.first_prompt(native.id)))
            if previews
            else native
        )
    if not everything:
        return
    known = {s.id for s in sessions}
    for stray in (*strays, *store.orphans(known)):
        yield stray_finding(stray)


def _counted(native: NativeSession, rows: RowCounts) -> NativeSession:
    return attrs.evolve(
        native,
        counts={"active": rows.active, "inactive": rows.inactive},
        rows=rows.active + rows.inactive,
    )


def _preview(text: str | None) -> str | None:
    """The start of a user message as Hermes shows it: recalled-memory blocks removed."""
    if text is None:
        return None
    from hermes_plugin.convert.sanitize import clean_text

    flat = " ".join(clean_text(text)[: PREVIEW * 4].split())
    return flat[:PREVIEW] or None


def stray_finding(stray: Stray) -> Finding:
    """A row that belongs to no readable session, as ``read`` and ``convert`` both report it."""
    return Finding(
        kind="stray",
        message=stray.why,
        unit=stray.unit,
        session=stray.session or "",
        data={"row": stray.kind, "malformed": stray.malformed},
    )
