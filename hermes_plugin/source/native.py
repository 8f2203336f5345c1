"""What ``read`` yields for a Hermes database: a native session per row, then the strays."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from asf_core import ids
from asf_core.formats import Finding, NativeSession
from hermes_plugin.source.listing import list_sessions
from hermes_plugin.source.store import Store, Stray

__all__ = ["native_sessions", "stray_finding"]


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else ids.format_ts(moment)


def native_sessions(store: Store) -> Iterator[NativeSession | Finding]:
    """The listing of a store as native sessions (oldest first), then its stray rows."""
    listing = list_sessions(store)
    for entry in listing.sessions:
        yield NativeSession(
            id=entry.id,
            title=entry.title,
            source=entry.source,
            started=_when(entry.started),
            ended=_when(entry.ended),
            relation=str(entry.relation),
            parent=entry.parent_id,
            counts={"active": entry.active_rows, "inactive": entry.inactive_rows},
        )
    for stray in listing.strays:
        yield stray_finding(stray)


def stray_finding(stray: Stray) -> Finding:
    """A row that belongs to no readable session, as ``read`` and ``convert`` both report it."""
    return Finding(
        kind="stray",
        message=stray.why,
        unit=stray.unit,
        session=stray.session or "",
        data={"row": stray.kind, "malformed": stray.malformed},
    )
