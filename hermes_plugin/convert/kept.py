"""Rows kept whole, when they cannot be converted: one ``custom`` entry per row.

Two kinds of session are built this way. The ``_orphans`` file holds the message rows whose
session is not in the database. And a conversation whose conversion failed (a bug met on data
nobody foresaw) is written as a *kept* file: every row of its sessions as it is stored, so one
bad conversation costs only itself: its rows are still in the output and the report says why,
and every other conversation converts as usual. A kept entry holds nothing but the row's
cells, each exactly as stored (``encoded`` names the ones JSON cannot hold), so it can always
be written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from asf_core.formats import ConvertedSession
from asf_core.model import Custom, Entry, Header
from hermes_plugin.convert.plan import Clock, Plan
from hermes_plugin.convert.session_entries import delegation_unit, usage_unit
from hermes_plugin.schema import EPOCH_MAX
from hermes_plugin.source.columns import Columns
from hermes_plugin.source.rows import Delegation, Message, Session
from hermes_plugin.source.store import Stray

__all__ = ["KeptRow", "kept_entry", "kept_session", "orphans_session", "session_rows"]

JSON = dict[str, Any]

#: A row to keep: its identity, its cells, its time column's name, and the entry's ``data``.
KeptRow = tuple[str, Columns, str, JSON]


def kept_entry(unit: str, cols: Columns, data: JSON, clock: Clock, time_column: str) -> Custom:
    """One row as a ``custom`` entry holding every non-NULL cell exactly as stored."""
    values, encoded = cols.to_exact_json()
    stamp = cols.get(time_column)
    seconds = float(stamp) if isinstance(stamp, float | int) else None
    if seconds is not None and not 0 <= seconds <= EPOCH_MAX:
        seconds = None
    ts = clock.at(seconds)
    member: JSON = {"row": unit, "columns": {k: v for k, v in values.items() if v is not None}}
    encoded = {k: how for k, how in encoded.items() if k in member["columns"]}
    if encoded:
        member["encoded"] = encoded
    return Custom(ts=ts, ns="hermes", data=data, unknown={"hermes": member})


def session_rows(
    sessions: Sequence[Session],
    messages: Mapping[str, Sequence[Message]],
    usage: Mapping[str, Sequence[Columns]],
    delegations: Mapping[str, Sequence[Delegation]],
    database: str,
    why: str,
) -> list[KeptRow]:
    """Every row of a conversation's sessions, in the order a kept file holds them: each
    session row, then its message rows, ``session_model_usage`` and ``async_delegations``
    rows."""
    rows: list[KeptRow] = []
    for session in sessions:
        data = {"kind": "session", "reason": "unconverted", "detail": why}
        rows.append((session.unit, session.cols, "started_at", data))
        for message in messages.get(session.id, ()):
            data = {"kind": "message", "reason": "unconverted", "detail": why}
            rows.append((message.unit, message.cols, "timestamp", data))
        for cols in usage.get(session.id, ()):
            data = {"kind": "model_usage", "reason": "unconverted", "detail": why}
            rows.append((usage_unit(session, cols), cols, "first_seen", data))
        for delegation in delegations.get(session.id, ()):
            data = {"kind": "async_delegation", "reason": "unconverted", "detail": why}
            unit = delegation_unit(database, delegation)
            rows.append((unit, delegation.cols, "dispatched_at", data))
    return rows


def kept_session(
    header: Callable[[str], Header], name: str, rows: Iterable[KeptRow], counts: Mapping[str, int]
) -> ConvertedSession:
    """A session of kept rows, one ``custom`` entry each, in the order given, each the child
    of the one before; ``header`` makes the header from the first entry's ``ts``."""
    plan, clock = Plan(), Clock()
    cursor: int | None = None
    units: list[str] = []
    for unit, cols, time_column, data in rows:
        cursor = plan.add(kept_entry(unit, cols, data, clock, time_column), cursor)
        units.append(unit)
    first = plan.entries[0].ts if plan.entries else clock.last
    made = header(first)
    entries: list[Entry] = plan.realize(made)
    return ConvertedSession(
        header=made,
        entries=entries,
        name=name,
        sources=tuple(units),
        counts={**counts, "entries": len(entries)},
    )


def orphans_session(
    asf_id: str, name: str, database: str, strays: Sequence[Stray]
) -> ConvertedSession:
    """The session of the message rows whose session is not in the database."""
    rows = [
        (
            stray.unit,
            stray.cols if stray.cols is not None else Columns(),
            "timestamp",
            {"kind": "message", "reason": "orphan", "detail": stray.why},
        )
        for stray in strays
    ]

    def header(first: str) -> Header:
        return Header(
            id=asf_id,
            created_at=first,
            harness={"name": "hermes-agent"},
            unknown={"hermes": {"database": database, "orphans": True}},
        )

    return kept_session(header, name, rows, {"orphan_rows": len(strays)})
