"""The reader against real databases written by Hermes 0.13, 0.16, 0.18.2 and 0.19 (+ a profile).

Oracles: each fixture's manifest (schema version, intended relation of every
session) and what Hermes' own readers returned (expected-views).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import DATABASES, HERMES_FIXTURES, database_ids
from hermes_columns import cells, string
from hermes_homes import databases, is_home, store_of
from hermes_memory_store import Database, MemoryStore

from hermes_plugin.source.database import SqliteStore
from hermes_plugin.source.discovery import claims, find_databases
from hermes_plugin.source.listing import list_sessions
from hermes_plugin.source.relations import Relation, classify_all, parent_cycles
from hermes_plugin.source.rows import Message
from hermes_plugin.source.store import session_prompt

FIXTURES = HERMES_FIXTURES
IDS = database_ids()


def _manifest(release: Path, db: str) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((release / "manifest.json").read_text())
    return manifest["profile"] if db.startswith("profiles/") else manifest


def _copy(release: Path, db: str, tmp_path: Path) -> Path:
    """A private copy: opening a WAL database in place creates sidecar files."""
    target = tmp_path / release.name / db
    target.parent.mkdir(parents=True)
    shutil.copyfile(release / db, target)
    return target


def _views(release: Path, db: str, session_id: str) -> dict[str, Any]:
    base = release / Path(db).parent / "expected-views" / f"{session_id}.json"
    views: dict[str, Any] = json.loads(base.read_text())
    return views


def intended(description: str, has_session_key: bool) -> tuple[Relation, bool | None]:
    """The relation a manifest's wording intends, in the reader's terms.

    0.13/0.16 have no session_key column: their "legacy reset child" cannot
    be told from a sub-agent run and reads as one (the seed's legacy rule
    needs the same non-empty key), as 0.19's own listing hides it.
    """
    d = description
    if d.startswith(("compression continuation", "compression tip")):
        return Relation.CONTINUATION, False
    if d.startswith("/branch child"):
        return Relation.BRANCH, "_branched_from marker" in d
    if d.startswith("reset child with _reset_from marker"):
        return Relation.RESET, True
    if d.startswith("legacy reset child"):
        return (Relation.RESET, False) if has_session_key else (Relation.DELEGATE, False)
    if d.startswith("delegate sub-agent, unmarked"):  # the agent loop's, before 0.18
        return Relation.DELEGATE, False
    if d.startswith("delegate sub-agent"):
        return Relation.DELEGATE, True
    if d.startswith("third-party tool session"):
        return Relation.TOOL, True
    return Relation.ROOT, None


def _hermes_content(message: Message) -> Any:
    """Our decoded content in the shape Hermes' ``_decode_content`` returns."""
    c = message.content
    if c.null:
        return None
    return c.value if c.structured else c.text


@pytest.mark.parametrize(("release", "db"), DATABASES, ids=IDS)
def test_every_row_reads(release: Path, db: str, tmp_path: Path) -> None:
    manifest = _manifest(release, db)
    path = _copy(release, db, tmp_path)
    with SqliteStore(path, name="state.db") as store:
        # A rollback-journal database is read from a snapshot copy (one short read lock); a
        # WAL database without its side files (no connection has it open) in place, pinned
        # (immutable: none are created beside it; its file looked at after every query).
        if manifest["journal_mode"] == "wal":
            assert (store.access, store.db.snapshot) == ("immutable", None)
            assert store.db.pinned is not None
        else:
            assert (store.access, store.db.snapshot) == ("copy", "backup")
        assert store.journal_mode == manifest["journal_mode"]
        assert manifest["schema_version_rows"] == [store.version()]
        sessions, strays = store.sessions()
        assert strays == ()
        assert {s.id for s in sessions} == set(manifest["sessions"])
        assert all(s.error is None and s.problems == () for s in sessions)
        assert store.orphans({s.id for s in sessions}) == ()
        counts = store.row_counts()
        has_key = "session_key" in store.columns("sessions")
        relations = classify_all(sessions)
        assert parent_cycles(sessions) == ()
        for session in sessions:
            assert session.unit == f"state.db:sessions/{session.id}"
            want, marked = intended(manifest["sessions"][session.id], has_key)
            got, got_marked = relations[session.id]
            assert got is want, session.id
            if marked is not None:
                assert got_marked is marked, session.id
            assert session.started is not None
            exported = _views(release, db, session.id)["export_session"]["value"]
            assert session_prompt(store, session) == exported["system_prompt"]
            messages = store.messages(session.id)
            assert [m.id for m in messages] == sorted(m.id for m in messages)
            assert all(m.error is None for m in messages)
            assert all(m.unit == f"state.db:messages/{m.id}" for m in messages)
            active = sum(m.active for m in messages)
            assert (counts[session.id].active, counts[session.id].inactive) == (
                active,
                len(messages) - active,
            )
            _compare_with_hermes(release, db, session.id, messages)


def _compare_with_hermes(
    release: Path, db: str, session_id: str, messages: tuple[Message, ...]
) -> None:
    views = _views(release, db, session_id)
    if "get_messages_include_inactive" in views:
        expected = views["get_messages_include_inactive"]["value"]
    else:  # 0.13: no active column, so Hermes' export holds every row
        expected = views["export_session"]["value"]["messages"]
    assert len(messages) == len(expected)
    for ours, theirs in zip(messages, expected, strict=True):
        assert ours.id == theirs["id"]
        assert ours.role == theirs["role"]
        assert _hermes_content(ours) == theirs["content"]
        assert [c.raw for c in ours.tool_calls] == (theirs["tool_calls"] or [])
        assert ours.tool_call_id == theirs["tool_call_id"]
        assert ours.timestamp == theirs["timestamp"]
        assert ours.reasoning_content == theirs["reasoning_content"]
        assert ours.active == bool(theirs.get("active", 1))
        assert ours.compacted == bool(theirs.get("compacted", 0))
        assert ours.observed == bool(theirs.get("observed", 0))
        assert ours.api_content == theirs.get("api_content")
        bad_prefix = isinstance(theirs["content"], str) and theirs["content"].startswith(
            "\x00json:"
        )
        assert any(p.startswith("content:") for p in ours.problems) == bad_prefix


@pytest.mark.parametrize(("release", "db"), DATABASES, ids=IDS)
def test_session_columns_match_hermes_export(release: Path, db: str, tmp_path: Path) -> None:
    """Every column of every session row reads as Hermes exports it."""
    with SqliteStore(_copy(release, db, tmp_path)) as store:
        sessions, _ = store.sessions()
        for session in sessions:
            exported = dict(_views(release, db, session.id)["export_session"]["value"])
            exported.pop("messages")
            # Hermes exports the prompt it resolves (system_prompts by hash from schema 25 on,
            # when the inline column is left NULL), not the inline cell.
            assert exported.pop("system_prompt") == session_prompt(store, session)
            ours = dict(cells(session.cols))
            ours.pop("system_prompt")
            assert ours == exported


@pytest.mark.parametrize(("release", "db"), DATABASES, ids=IDS)
def test_listing(release: Path, db: str, tmp_path: Path) -> None:
    manifest = _manifest(release, db)
    with SqliteStore(_copy(release, db, tmp_path), name="state.db") as store:
        listing = list_sessions(store)
        sessions, _ = store.sessions()
        rows = sum(len(store.messages(s.id)) for s in sessions)
    assert listing.database == "state.db"
    assert listing.version == manifest["schema_version_rows"][0]
    assert {e.id for e in listing.sessions} == set(manifest["sessions"])
    assert sum(e.active_rows + e.inactive_rows for e in listing.sessions) == rows
    assert listing.strays == ()
    starts = [e.started for e in listing.sessions]
    assert starts == sorted(starts)  # type: ignore[type-var]
    archived = {e.id for e in listing.sessions if e.archived}
    assert archived == ({"fx-archived"} & set(manifest["sessions"]))


def test_inplace_and_rewind_rows(tmp_path: Path) -> None:
    """0.19 in-place compaction: compacted rows are inactive and flagged; rewind rows are not."""
    with SqliteStore(_copy(FIXTURES / "hermes-0.19.0", "state.db", tmp_path)) as store:
        inplace = store.messages("fx-inplace")
        rewind = store.messages("fx-rewind")
        reasoning = store.messages("fx-reasoning")
    assert [(m.active, m.compacted) for m in inplace].count((False, True)) == 4
    assert [m.active for m in rewind].count(False) == 2
    assert not any(m.compacted for m in rewind)
    contents = [m.reasoning_content for m in reasoning if m.role == "assistant"]
    assert "" in contents
    assert None in contents


def test_tool_call_shapes(tmp_path: Path) -> None:
    with SqliteStore(_copy(FIXTURES / "hermes-0.19.0", "state.db", tmp_path)) as store:
        rows = store.messages("fx-tools")
    calls = [c for m in rows for c in m.tool_calls]
    results = [m.tool_call_id for m in rows if m.role == "tool"]
    bridge = next(c for c in calls if "|" in c.id)
    assert bridge.pairing_id() == "call_Br1dge000001"
    assert "call_Br1dge000001" in bridge.aliases()
    assert "fc_Br1dge000001" in bridge.aliases()
    for result in results:
        assert result is not None
        assert any(result in c.aliases() for c in calls)
    assert all(c.arguments_text().startswith("{") for c in calls)


def test_discovery_of_a_home_with_a_profile(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "hermes-0.19.0", home)
    beside_before = sorted(home.glob("**/*.db-*"))  # the fixture may ship -wal/-shm files
    (tmp_path / "link").symlink_to(home)
    assert is_home(home)
    assert databases(home) == [home / "state.db", home / "profiles" / "work" / "state.db"]
    assert find_databases(tmp_path) == databases(home)
    assert find_databases(home / "state.db") == [home / "state.db"]
    assert store_of(home) == home / "state.db"
    assert store_of(tmp_path) is None
    found = claims(home)
    assert [(c.path, c.confidence) for c in found] == [(p, 1.0) for p in databases(home)]
    tree = claims(tmp_path)  # a directory of homes: each database, not the link to one
    assert tree == found
    assert sorted(home.glob("**/*.db-*")) == beside_before  # claiming opened nothing in place
    for database in databases(home):
        with SqliteStore(database) as store:
            assert store.sessions()[0]


def test_model_usage_and_delegations(tmp_path: Path) -> None:
    with SqliteStore(_copy(FIXTURES / "hermes-0.19.0", "state.db", tmp_path)) as store:
        usage = store.model_usage("fx-plain")
        assert [(string(u, "model"), string(u, "task")) for u in usage] == [
            ("anthropic/claude-sonnet-4", ""),
            ("google/gemini-flash", "title_generation"),
        ]
        assert all(u.int("input_tokens") for u in usage)
        assert store.model_usage("fx-tools") == ()
        assert store.delegations() == ()
    with SqliteStore(_copy(FIXTURES / "hermes-0.13.0", "state.db", tmp_path)) as old:
        assert old.model_usage("fx-plain") == ()  # no such table before 0.19
        assert old.delegations() == ()
        assert old.system_prompt("0" * 64) is None


def test_both_stores_are_databases(tmp_path: Path) -> None:
    """Statically (mypy) and at run time, both stores offer the Database interface."""

    def names(database: Database) -> tuple[str, ...]:
        with database:
            return tuple(sorted(database.info()))

    memory = MemoryStore.from_rows(sessions=[{"id": "a", "source": "cli", "started_at": 1.0}])
    assert names(memory) == ("access", "name", "schema_version")
    assert names(SqliteStore(_copy(FIXTURES / "hermes-0.16.0", "state.db", tmp_path))) == (
        "access",
        "journal_mode",
        "name",
        "path",
        "schema_version",  # a WAL database at rest is read in place: no snapshot
    )
