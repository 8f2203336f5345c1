"""A unit's rows read where its job runs: in a worker from the file the host reads, checked
against the host's plan; in the host from the host's own snapshot.

Hermes (its own ``SessionDB``) keeps the database open, so it is read in place, and appends to
a session after the plan was read: a worker's read would see the new rows, so the unit goes
back to the host (``NeedsHost``), whose snapshot has the rows the plan counted.
"""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest
from fixture_paths import SHARED

from asf_core.formats import ConvertedSession, NeedsHost
from asf_core.writer import entry_line
from hermes_plugin.convert import units
from hermes_plugin.source.handle import HermesHandle

FIXTURE = SHARED / "hermes" / "fixtures" / "hermes-0.19.0" / "state.db"


def _lines(items: object) -> list[bytes]:
    return [
        entry_line(e)
        for s in items  # type: ignore[attr-defined]
        if isinstance(s, ConvertedSession)
        for e in s.entries
    ]


def test_a_worker_reads_the_planned_rows_or_sends_the_unit_back(tmp_path: Path) -> None:
    from hermes_state import SessionDB

    db = tmp_path / "state.db"
    shutil.copyfile(FIXTURE, db)
    hermes = SessionDB(db_path=db)  # Hermes is running: its side files exist
    try:
        handle = HermesHandle(db)
        try:
            assert handle.sqlite.access == "direct"
            plan = list(units.plan_units(handle, [s.id for s in handle.store.sessions()[0]]))
            (unit,) = [u for u in plan if u.key == "fx-plain"]
            job = unit.prepare()
            assert job.messages is None
            assert job.source is not None

            def in_worker() -> list[bytes]:
                hosts = dict(units._HOSTS)
                units._HOSTS.clear()
                try:
                    return _lines(pickle.loads(pickle.dumps(job))())  # noqa: S301 (our own)
                finally:
                    units._HOSTS.update(hosts)

            planned = _lines(job())  # in the host: from its snapshot
            assert in_worker() == planned  # nothing changed: the worker reads the same rows
            hermes.append_message("fx-plain", "user", "one more question")
            with pytest.raises(NeedsHost):
                in_worker()
            assert _lines(job()) == planned  # the host still reads its snapshot
        finally:
            handle.close()
    finally:
        hermes.close()
