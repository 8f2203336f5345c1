"""Relations (SCHEMA-NOTES §5, the seed's Classify), parent cycles, and the memory store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import RELEASES, label
from hermes_columns import cells, columns_of
from hermes_memory_store import MemoryStore
from hypothesis import example, given
from hypothesis import strategies as st

from hermes_plugin.source.database import SqliteStore
from hermes_plugin.source.listing import list_sessions
from hermes_plugin.source.relations import Relation, classify, classify_all, parent_cycles
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Session


def session(sid: str, **cells: Any) -> Session:
    row: dict[str, Any] = {"id": sid, "source": "cli", "started_at": 100.0}
    if "config" in cells:
        row["model_config"] = json.dumps(cells.pop("config"))
    row.update(cells)
    return RowReader("db").session(columns_of(row))


P = "parent"


@pytest.mark.parametrize(
    ("child", "parent", "expected"),
    [
        (session("c"), None, (Relation.ROOT, False)),
        (session("c", source="tool"), None, (Relation.TOOL, True)),
        (session("c", source="tool", parent_session_id=P), session(P), (Relation.TOOL, True)),
        (
            session("c", parent_session_id=P, config={"_branched_from": P}),
            session(P, end_reason="compression"),
            (Relation.BRANCH, True),
        ),
        (  # a continuation inherits a marker naming its grandparent
            session("c", parent_session_id=P, config={"_branched_from": "grand"}),
            session(P, end_reason="compression"),
            (Relation.CONTINUATION, False),
        ),
        (
            session("c", parent_session_id=P, config={"_delegate_from": P}),
            session(P),
            (Relation.DELEGATE, True),
        ),
        (
            session("c", parent_session_id=P, config={"_reset_from": P}),
            session(P, end_reason="compression"),
            (Relation.RESET, True),
        ),
        (
            session("c", source="subagent", parent_session_id=P),
            session(P, source="subagent", end_reason="compression"),
            (Relation.CONTINUATION, False),
        ),
        (
            session("c", source="subagent", parent_session_id=P),
            session(P, end_reason="compression"),
            (Relation.DELEGATE, True),
        ),
        (session("c", parent_session_id=P), None, (Relation.DELEGATE, False)),
        (
            session("c", parent_session_id=P, started_at=200.0),
            session(P, end_reason="branched", ended_at=200.0),
            (Relation.BRANCH, False),
        ),
        (
            session("c", parent_session_id=P, started_at=150.0),
            session(P, end_reason="branched", ended_at=200.0),
            (Relation.DELEGATE, False),
        ),
        (
            session("c", parent_session_id=P, session_key="k"),
            session(P, end_reason="idle", session_key="k"),
            (Relation.RESET, False),
        ),
        (
            session("c", parent_session_id=P, session_key="k"),
            session(P, end_reason="idle", session_key="other"),
            (Relation.DELEGATE, False),
        ),
        (
            session("c", parent_session_id=P, session_key=""),
            session(P, end_reason="session_reset", session_key=""),
            (Relation.DELEGATE, False),
        ),
        (
            session("c", parent_session_id=P, session_key="k"),
            session(P, end_reason="cli_close", session_key="k"),
            (Relation.DELEGATE, False),
        ),
        (  # malformed model_config is no marker (and a problem on the row)
            session("c", parent_session_id=P, model_config="{bad"),
            session(P, end_reason="compression"),
            (Relation.CONTINUATION, False),
        ),
    ],
)
def test_classify(child: Session, parent: Session | None, expected: tuple[Relation, bool]) -> None:
    assert classify(child, parent) == expected


def test_relation_names() -> None:
    assert [str(r) for r in Relation] == [
        "root",
        "continuation",
        "branch",
        "reset",
        "delegate",
        "tool",
    ]


def test_cycles() -> None:
    rows = [
        session("a", parent_session_id="b"),
        session("b", parent_session_id="c"),
        session("c", parent_session_id="a"),
        session("d", parent_session_id="a"),
        session("e", parent_session_id="e"),
        session("f", parent_session_id="gone"),
        session("g"),
    ]
    assert parent_cycles(rows) == (("a", "b", "c"), ("e",))
    assert classify_all(rows)["f"] == (Relation.DELEGATE, False)


@given(st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from("abcdefghz") | st.none()))
# A tail entering a cycle at its larger id: the cycle is still told from its smallest.
@example({"a": "c", "b": "c", "c": "b"})
def test_cycles_property(parents: dict[str, str | None]) -> None:
    rows = [session(k, parent_session_id=v) for k, v in parents.items()]
    cycles = parent_cycles(rows)
    in_cycle = [n for c in cycles for n in c]
    assert len(in_cycle) == len(set(in_cycle))
    for cycle in cycles:
        assert cycle[0] == min(cycle)
        for i, node in enumerate(cycle):
            assert parents[node] == cycle[(i + 1) % len(cycle)]
    for node in parents:  # every other node reaches a root or a missing row
        seen: set[str] = set()
        current: str | None = node
        while current in parents and current not in seen:
            seen.add(current)
            current = parents[current]
        assert (current in seen) == bool(seen & set(in_cycle))


@pytest.mark.parametrize("release", RELEASES, ids=[label(r) for r in RELEASES])
def test_memory_store_agrees_with_sqlite(release: Path, tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    shutil.copyfile(release / "state.db", path)
    with SqliteStore(path, name="state.db") as db:
        sessions, _ = db.sessions()
        rows = [m.cols for s in sessions for m in db.messages(s.id)]
        memory = MemoryStore.from_rows(
            name="state.db",
            schema=db.version(),
            sessions=[dict(cells(s.cols)) for s in sessions],
            messages=[dict(cells(m)) for m in rows]
            + [{"id": 10_000, "session_id": "ghost", "role": "user", "timestamp": 1.0}],
        )
        assert memory.sessions() == db.sessions()
        for s in sessions:
            assert memory.messages(s.id) == db.messages(s.id)
        assert memory.row_counts() == {**db.row_counts(), "ghost": memory.row_counts()["ghost"]}
        db_listing = list_sessions(db)
    mem_listing = list_sessions(memory)
    assert mem_listing.sessions == db_listing.sessions
    assert [s.unit for s in mem_listing.strays] == ["state.db:messages/10000"]
