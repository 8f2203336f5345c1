"""Rows kept whole as ``custom`` entries (``hermes_plugin.convert.kept``: the ``_orphans``
file and a conversation that could not be converted), row by row: each non-NULL cell as
stored, the entry's time from the row's own time column when it is a time, the count of
orphan rows."""

from __future__ import annotations

from hermes_columns import columns_of

from asf_core import ids
from hermes_plugin.convert.kept import kept_entry, orphans_session, session_rows
from hermes_plugin.convert.plan import EPOCH_TS, Clock
from hermes_plugin.schema import EPOCH_MAX
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.store import Stray


def test_a_kept_entry_holds_the_non_null_cells_and_the_rows_own_time() -> None:
    clock = Clock()
    assert clock.at(None) == EPOCH_TS
    late = columns_of({"id": 8, "timestamp": 1796014690.5})
    assert kept_entry("u", late, {}, clock, "timestamp").ts == ids.format_ts(1796014690.5)
    row = columns_of({"id": 7, "role": "user", "content": None, "raw": b"\xff", "timestamp": 0})
    entry = kept_entry("db:messages/7", row, {"kind": "message"}, clock, "timestamp")
    member = entry.unknown["hermes"]
    assert set(member["columns"]) == {"id", "role", "raw", "timestamp"}  # NULL left out
    assert set(member["encoded"]) == {"raw"}
    assert entry.ts == ids.format_ts(0.0)  # the epoch is a time like any other
    # Beyond the window no row's time can be: the last good time stands.
    beyond = columns_of({"id": 9, "timestamp": EPOCH_MAX * 2})
    assert kept_entry("u", beyond, {}, clock, "timestamp").ts == ids.format_ts(0.0)


def test_usage_and_delegation_rows_are_timed_by_when_they_began() -> None:
    reader = RowReader("db")
    session = reader.session(columns_of({"id": "s", "source": "cli", "started_at": 100.0}))
    usage = columns_of(
        {"session_id": "s", "model": "m", "first_seen": 1796014600.0, "last_seen": 1796014700.0}
    )
    delegation = reader.delegation(
        columns_of(
            {
                "delegation_id": "d-1",
                "parent_session_id": "s",
                "dispatched_at": 1796014650.0,
                "completed_at": 1796014800.0,
            }
        )
    )
    message = reader.message(columns_of({"id": 4, "session_id": "s", "role": "user"}))
    rows = session_rows(
        [session], {"s": [message]}, {"s": [usage]}, {"s": [delegation]}, "db", "why"
    )
    assert [(data["kind"], column) for _, _, column, data in rows] == [
        ("session", "started_at"),
        ("message", "timestamp"),
        ("model_usage", "first_seen"),
        ("async_delegation", "dispatched_at"),
    ]
    # Each says why it is kept: its conversation was not converted, and the error.
    assert {(data["reason"], data["detail"]) for *_, data in rows} == {("unconverted", "why")}


def test_the_orphans_session_counts_its_rows() -> None:
    strays = [
        Stray(unit=f"db:messages/{n}", kind="message", why="no such session", session="gone")
        for n in (3, 5)
    ]
    made = orphans_session("01995b2a-0000-7000-8000-00000000f0f0", "_orphans", "db", strays)
    assert made.counts["orphan_rows"] == 2
    assert made.counts["entries"] == len(made.entries) == 2
    assert made.header.unknown["hermes"] == {"database": "db", "orphans": True}
