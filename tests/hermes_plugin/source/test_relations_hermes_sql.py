"""A child's relation to its parent, when no marker tells it, checked against Hermes' own SQL
predicates (``_BRANCH_CHILD_SQL``, ``_COMPRESSION_CHILD_SQL``, ``_ephemeral_child_sql``) on
rows Hermes' ``SessionDB`` wrote at chosen times."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from hermes_homes import open_database

from hermes_plugin.source.relations import Relation, classify_all
from hermes_plugin.source.sniff import database_uri


class _SetClock:
    """Stands in for ``hermes_state.time``: reads whatever ``now`` was set to."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        return self.now

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


#: parent's end reason, when it ended, when its child started.
_CHILDREN = {
    "branched-at-epoch": ("branched", 0.0, 0.0),  # the clock at 0: still in Hermes' window
    "branched-as-child-started": ("branched", 300.0, 300.0),
    "branched-after-child-started": ("branched", 400.0, 399.75),
    "ended-without-reason": (None, 500.0, 600.0),  # end_session(id, None)
    "compression": ("compression", 700.0, 700.0),
    "cli-close": ("cli_close", 800.0, 900.0),
}


def _hermes_relations(db: Path) -> dict[str, Relation]:
    """Each child's relation as Hermes' own predicates tell it."""
    import hermes_state

    predicates = {
        Relation.BRANCH: hermes_state._BRANCH_CHILD_SQL.format(a="s"),
        Relation.CONTINUATION: hermes_state._COMPRESSION_CHILD_SQL.format(a="s"),
        Relation.DELEGATE: hermes_state._ephemeral_child_sql("s"),
    }
    conn = sqlite3.connect(database_uri(db, "mode=ro"), uri=True)
    try:
        told: dict[str, Relation] = {}
        for relation, where in predicates.items():
            for (sid,) in conn.execute(f"SELECT id FROM sessions s WHERE {where}"):
                assert sid not in told, sid  # Hermes' predicates are exclusive here
                told[sid] = relation
        return told
    finally:
        conn.close()


def test_a_child_without_markers_relates_as_hermes_sql_tells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hermes_state

    clock = _SetClock()
    monkeypatch.setattr(hermes_state, "time", clock)
    db = tmp_path / "state.db"
    sdb = hermes_state.SessionDB(db_path=db)
    for name, (end_reason, ended_at, child_started_at) in _CHILDREN.items():
        clock.now = min(ended_at, child_started_at)
        sdb.create_session(f"{name}-parent", "cli")
        clock.now = ended_at
        sdb.end_session(f"{name}-parent", end_reason)
        clock.now = child_started_at
        sdb.create_session(name, "cli", parent_session_id=f"{name}-parent")
    sdb.close()

    hermes = _hermes_relations(db)
    with open_database(db) as store:
        sessions, strays = store.sessions()
    assert not strays
    ours = classify_all(sessions)
    assert {name: ours[name] for name in _CHILDREN} == {
        name: (hermes[name], False) for name in _CHILDREN
    }
    assert {name: hermes[name] for name in _CHILDREN} == {
        "branched-at-epoch": Relation.BRANCH,
        "branched-as-child-started": Relation.BRANCH,
        "branched-after-child-started": Relation.DELEGATE,
        "ended-without-reason": Relation.DELEGATE,
        "compression": Relation.CONTINUATION,
        "cli-close": Relation.DELEGATE,
    }
    assert all(ours[f"{name}-parent"] == (Relation.ROOT, False) for name in _CHILDREN)
