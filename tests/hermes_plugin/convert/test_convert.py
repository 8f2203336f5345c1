"""Acceptance: every fixture session, converted, rebuilds the context Hermes' reader returned.

For each release's fixture database the whole store is converted; for every session with an
oracle (``expected-conversation/<id>.json``, what ``get_messages_as_conversation`` returned),
the context our reader rebuilds at the entry of the session's last active row must equal the
oracle mapped by the documented rule (:func:`hermes_plugin.convert.items.conversation_items`,
applied to the oracle's messages as they are, ``tests/hermes_reader_messages.py``), with the
system prompt as the instructions.
"""

from __future__ import annotations

import itertools
import json
import shutil
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import DATABASES, HERMES_FIXTURES, database_ids
from hermes_reader_messages import as_messages

from asf_core.context import context_at
from asf_core.formats import ConvertedSession, Finding
from asf_core.model import Compaction, Custom
from asf_core.reader import SessionFile, read_session
from asf_core.verify.session import verify_path
from asf_core.writer import write_session
from hermes_plugin.convert.database import convert_store
from hermes_plugin.convert.items import conversation_items
from hermes_plugin.source.handle import HermesHandle

FIXTURES = HERMES_FIXTURES


class Converted:
    """One fixture database converted into a temporary directory."""

    def __init__(self, release: Path, rel: str, tmp: Path) -> None:
        source = release / rel
        self.name = rel
        self.fixture_dir = source.parent
        self.db = tmp / "home" / rel
        self.db.parent.mkdir(parents=True)
        shutil.copyfile(source, self.db)
        self.out = tmp / "out"
        self.sessions: dict[str, ConvertedSession] = {}
        self.findings: list[Finding] = []
        handle = HermesHandle(self.db)
        try:
            for item in convert_store(handle.store):
                if isinstance(item, ConvertedSession):
                    write_session(self.out / f"{item.name}.jsonl", item.header, item.entries)
                    self.sessions[item.name] = item
                else:
                    self.findings.append(item)
        finally:
            handle.close()
        self.files = {name: read_session(self.out / f"{name}.jsonl") for name in self.sessions}

    def rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            return conn.execute(sql, args).fetchall()
        finally:
            conn.close()

    def view(self, session_id: str, name: str) -> Any:
        """What one of Hermes' own readers returned for the session (``expected-views``)."""
        path = self.fixture_dir / "expected-views" / f"{session_id}.json"
        return json.loads(path.read_text())[name]["value"]

    def listing(self) -> dict[str, Any]:
        """Hermes' own session pickers and lineage helpers (``expected-listing.json``)."""
        listing: dict[str, Any] = json.loads(
            (self.fixture_dir / "expected-listing.json").read_text()
        )
        return listing

    def entries_of(self, unit: str) -> Iterator[tuple[SessionFile, str]]:
        """Every (file, entry id) whose identity member names the unit."""
        for session in self.files.values():
            for entry in session.entries:
                member = entry.unknown.get("hermes") or {}
                if member.get("row") == unit or member.get("session") == unit:
                    assert entry.id is not None
                    yield session, entry.id


@pytest.fixture(scope="module", params=DATABASES, ids=database_ids())
def converted(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Converted:
    release, rel = request.param
    return Converted(release, rel, tmp_path_factory.mktemp(release.name))


def _native_call_ids(session: SessionFile, entry_ids: list[str]) -> dict[str, str]:
    """ASF call id -> native id, for calls whose id the converter invented."""
    out: dict[str, str] = {}
    for entry_id in entry_ids:
        entry = session.by_id[entry_id]
        member = entry.unknown.get("hermes") or {}
        if "call_id" in member:
            item = getattr(entry, "item", None) or {}
            out[item["call_id"]] = member["call_id"]
    return out


def _renamed(items: list[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        if item.get("call_id") in names:
            item = {**item, "call_id": names[item["call_id"]]}
        out.append(item)
    return out


def test_context_matches_hermes_reader(converted: Converted) -> None:
    oracles = sorted((converted.fixture_dir / "expected-conversation").glob("*.json"))
    assert oracles
    db_name = converted.name
    checked = 0
    for oracle_path in oracles:
        sid = oracle_path.stem
        oracle = json.loads(oracle_path.read_text())
        last = _last_active(converted, sid)
        if last is None:
            assert conversation_items(as_messages(oracle)) == []
            checked += 1
            continue
        found = list(converted.entries_of(f"{db_name}:messages/{last}"))
        assert found, f"{sid}: row {last} not in the output"
        session, leaf = found[-1]
        ctx = context_at(session, leaf)
        names = _native_call_ids(session, ctx.item_entries)
        assert _renamed(ctx.items, names) == conversation_items(as_messages(oracle)), sid
        prompt = converted.view(sid, "export_session")["system_prompt"]  # as Hermes resolves it
        assert ctx.settings.get("instructions", "") == (prompt or ""), sid
        checked += 1
    assert checked == len(oracles)


def test_every_model_usage_row_is_one_entry_of_its_session(converted: Converted) -> None:
    """Each ``session_model_usage`` row (0.19+: the main loop's and each auxiliary task's
    calls) is one ``model_usage`` entry in the file of its session, naming its model and task."""
    tables = {r[0] for r in converted.rows("SELECT name FROM sqlite_master WHERE type='table'")}
    rows = (
        converted.rows("SELECT session_id, model, task FROM session_model_usage")
        if "session_model_usage" in tables
        else []
    )
    got = []
    for session in converted.files.values():
        for entry in session.entries:
            data = getattr(entry, "data", None)
            if isinstance(data, dict) and data.get("kind") == "model_usage":
                unit = entry.unknown["hermes"]["row"]  # <db>:session_model_usage/<sid>/<key>
                sid = unit.split(":session_model_usage/", 1)[1].split("/", 1)[0]
                got.append((sid, data["model"], data["task"]))
    assert sorted(got) == sorted((sid, model, task or "") for sid, model, task in rows)


def _closing_entries_on_the_live_path(converted: Converted) -> set[str]:
    """The closing parts met (continued_in links, model usage, titles), each asserted to be on
    the path of its file's last line."""
    met = set()
    for name, session in converted.files.items():
        on_path = {e.id for e in session.path_to(str(session.entries[-1].id))}
        for entry in session.entries:
            part = (entry.unknown.get("hermes") or {}).get("part")
            data = getattr(entry, "data", None)
            if isinstance(data, dict) and data.get("kind") == "model_usage":
                part = "model_usage"
            if part in {"reset", "title", "model_usage"}:
                met.add(part)
                assert entry.id in on_path, (name, part)
    return met


def test_a_segments_closing_entries_are_on_the_live_path(converted: Converted) -> None:
    """What closes a segment (its continued_in links, model usage, title) is chained at its
    live leaf, so a file's last line sees them all on its path, never on a side branch (in
    every database, whichever of them it holds)."""
    _closing_entries_on_the_live_path(converted)


def test_the_live_path_rule_meets_titles_and_model_usage(tmp_path: Path) -> None:
    """The rule above held on real closing entries: the 0.19.0 fixture's titles and model
    usage rows (a database without any proves nothing by itself)."""
    met = _closing_entries_on_the_live_path(_edited_release(tmp_path))
    assert {"title", "model_usage"} <= met


def _edited_release(tmp_path: Path, *edits: tuple[str, tuple[str, ...]]) -> Converted:
    """The 0.19.0 fixture database with ``edits`` (statement, parameters) applied, converted."""
    release = tmp_path / "release"
    release.mkdir()
    shutil.copyfile(FIXTURES / "hermes-0.19.0" / "state.db", release / "state.db")
    conn = sqlite3.connect(release / "state.db")
    with conn:
        for statement, parameters in edits:
            conn.execute(statement, parameters)
    conn.close()
    return Converted(release, "state.db", tmp_path / "converted")


def test_a_reset_childs_link_is_on_its_parents_live_path(tmp_path: Path) -> None:
    """A ``/reset`` child (``_reset_from``) is linked from its parent's live leaf by a
    continued_in link that later closing entries follow, not beside them."""
    converted = _edited_release(
        tmp_path,
        (
            "UPDATE sessions SET model_config = ? WHERE id = 'fx-branch-child'",
            ('{"max_iterations": 90, "_reset_from": "fx-branch-parent"}',),
        ),
    )
    assert "reset" in _closing_entries_on_the_live_path(converted)


def test_a_call_id_used_again_is_invented_and_the_stored_one_kept(tmp_path: Path) -> None:
    """A later call reusing an earlier call's id (a foreign writer's) gets an invented ASF id,
    and its entry keeps the stored id, so the row is written back as it was."""
    converted = _edited_release(
        tmp_path,
        (
            "UPDATE messages SET tool_calls = replace(tool_calls, 'call_v1s10n000001', ?)"
            " WHERE id = 13",
            ("call_a1b2c3d4e5f6",),
        ),
        ("UPDATE messages SET tool_call_id = ? WHERE id = 14", ("call_a1b2c3d4e5f6",)),
    )
    calls: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for session in converted.files.values():
        for entry in session.entries:
            item = getattr(entry, "item", None)
            if isinstance(item, dict) and item.get("type") == "function_call":
                member = entry.unknown["hermes"]
                calls.setdefault(member["row"], []).append((item["call_id"], member))
    (first, first_member), _ = calls["state.db:messages/6"]
    ((again, again_member),) = calls["state.db:messages/13"]
    assert first == "call_a1b2c3d4e5f6"
    assert "call_id" not in first_member
    assert again not in {first, ""}
    assert again_member["call_id"] == "call_a1b2c3d4e5f6"


_HARNESS = "Review the conversation above and consider saving to memory anything useful."


@pytest.mark.parametrize(
    ("change", "cells", "fold"),
    [
        ("content = ?", (_HARNESS,), 36),  # a harness prompt: it and its reply (35) unread
        ("active = ?", (0,), 35),  # rewound (soft-deleted, not compacted): unread
    ],
)
def test_a_continuation_folds_at_the_first_row_hermes_reads(
    tmp_path: Path, change: str, cells: tuple[Any, ...], fold: int
) -> None:
    """A compression continuation is summarised from the first row Hermes' reader returns:
    one opening with a background-review harness turn (0.18+) or a rewound row folds after
    it, never at it."""
    release = tmp_path / "release"
    release.mkdir()
    shutil.copyfile(FIXTURES / "hermes-0.19.0" / "state.db", release / "state.db")
    conn = sqlite3.connect(release / "state.db")
    with conn:  # row 34 opens fx-comp-2, a continuation of fx-comp-1
        conn.execute(f"UPDATE messages SET {change} WHERE id = 34", cells)
    conn.close()
    converted = Converted(release, "state.db", tmp_path / "converted")
    folds = [
        entry.unknown["hermes"]["row"]
        for session in converted.files.values()
        for entry in session.entries
        if entry.type == "compaction"
    ]
    assert f"state.db:messages/{fold}" in folds
    assert "state.db:messages/34" not in folds


def test_a_continuation_opening_with_a_system_row_folds_at_it(tmp_path: Path) -> None:
    """A system row (a gateway's note) is context Hermes' reader returns: a continuation whose
    first row is one is summarised from it."""
    converted = _edited_release(tmp_path, ("UPDATE messages SET role = 'system' WHERE id = 34", ()))
    (summary,) = [
        entry.summary
        for session in converted.files.values()
        for entry in session.entries
        if isinstance(entry, Compaction) and entry.unknown["hermes"]["row"].endswith("/34")
    ]
    assert summary is not None
    assert (summary["type"], summary["role"]) == ("message", "system")


def test_rows_kept_aside_are_counted_by_their_reason(converted: Converted) -> None:
    """A session's ``aside_<reason>`` counts are its rows kept aside as ``custom`` entries,
    by the reason each entry gives, and they add up to ``aside_rows``."""
    for name, item in converted.sessions.items():
        reasons = Counter(
            entry.data["reason"]
            for entry in converted.files[name].entries
            if isinstance(entry, Custom) and (entry.data or {}).get("kind") == "message"
        )
        counts = {
            key.removeprefix("aside_"): n
            for key, n in item.counts.items()
            if key.startswith("aside_") and key != "aside_rows"
        }
        assert counts == dict(reasons), name
        assert item.counts["aside_rows"] == sum(reasons.values()), name


def _columns(converted: Converted) -> set[str]:
    return {r[1] for r in converted.rows("PRAGMA table_info(messages)")}


def _last_active(converted: Converted, sid: str) -> int | None:
    """The session's last live row in its Hermes reader's order (SCHEMA-NOTES 8.1: id order,
    but ``timestamp, id`` in Hermes 0.17.0, schema 16)."""
    active = "active = 1" if "active" in _columns(converted) else "1"
    (version,) = converted.rows("SELECT version FROM schema_version")[0]
    order = "timestamp DESC, id DESC" if version == 16 else "id DESC"
    found = converted.rows(
        f"SELECT id FROM messages WHERE session_id = ? AND {active} ORDER BY {order} LIMIT 1", sid
    )
    return found[0][0] if found else None


def test_every_row_is_found_by_identity(converted: Converted) -> None:
    name = converted.name
    found: set[str] = set()
    for session in converted.files.values():
        for entry in session.entries:
            member = entry.unknown.get("hermes") or {}
            for key in ("row", "session"):
                if isinstance(member.get(key), str):
                    found.add(member[key])
    rows = converted.rows("SELECT id FROM messages")
    assert rows
    assert {f"{name}:messages/{i}" for (i,) in rows} <= found
    sessions = converted.rows("SELECT id FROM sessions")
    assert {f"{name}:sessions/{i}" for (i,) in sessions} <= found


def test_every_file_verifies(converted: Converted) -> None:
    errors = [f for f in verify_path(converted.out) if f.severity == "error"]
    assert errors == []


def test_rows_in_equal_rows_accounted_for(converted: Converted) -> None:
    (accounting,) = [f for f in converted.findings if f.message.startswith("row accounting")]
    data = accounting.data
    (total,) = converted.rows("SELECT count(*) FROM messages")[0]
    assert data["message_rows_in_database"] == total
    assert data["message_rows_converted"] + data["message_rows_orphaned"] == total
    summed = sum(s.counts.get("message_rows", 0) for s in converted.sessions.values())
    assert summed == data["message_rows_converted"]
    (sessions,) = converted.rows("SELECT count(*) FROM sessions")[0]
    assert sum(s.counts.get("session_rows", 0) for s in converted.sessions.values()) == sessions


def test_converting_twice_gives_identical_bytes(converted: Converted, tmp_path: Path) -> None:
    handle = HermesHandle(converted.db)
    try:
        for item in convert_store(handle.store):
            if isinstance(item, ConvertedSession):
                again = tmp_path / f"{item.name}.jsonl"
                write_session(again, item.header, item.entries)
                first = converted.out / f"{item.name}.jsonl"
                assert again.read_bytes() == first.read_bytes(), item.name
    finally:
        handle.close()


def test_live_leaf_is_the_last_active_row(converted: Converted) -> None:
    """The resume leaf of each file is on the path through its root's live rows only."""
    columns = _columns(converted)
    if "compacted" in columns:
        rewound = "active = 0 AND compacted = 0"
    elif "active" in columns:
        rewound = "active = 0"
    else:
        rewound = "0"
    for name, session in converted.files.items():
        root = (session.header.unknown.get("hermes") or {}).get("session")
        if not isinstance(root, str):
            continue  # the orphans file
        leaf = session.resume_leaf()
        assert leaf is not None
        on_path = {(e.unknown.get("hermes") or {}).get("row") for e in session.path_to(leaf)}
        sid = root.rsplit("/", 1)[1]
        for (i,) in converted.rows(
            f"SELECT id FROM messages WHERE session_id = ? AND {rewound}", sid
        ):
            assert f"{converted.name}:messages/{i}" not in on_path, name
        last = _last_active(converted, sid)
        if last is not None and len(converted.sessions[name].sources) == 1:
            assert f"{converted.name}:messages/{last}" in on_path, name


def test_compactions_where_hermes_compacted(converted: Converted) -> None:
    """One compaction per continuation and per in-place compaction, none elsewhere: the rows
    an in-place compaction archived stay on the path before it."""
    columns = _columns(converted)
    for name, session in converted.files.items():
        folds = [e for e in session.entries if e.type == "compaction"]
        continuations = len(converted.sessions[name].sources) - 1
        in_place = 0
        for unit in converted.sessions[name].sources:
            sid = unit.rsplit("/", 1)[1]
            if "compacted" in columns:
                flags = converted.rows(
                    "SELECT active, compacted FROM messages WHERE session_id = ? ORDER BY id", sid
                )
                in_place += sum(
                    1
                    for before, after in itertools.pairwise(flags)
                    if before == (0, 1) and after[0] == 1
                )
        assert len(folds) == continuations + in_place, name
        for fold in folds:
            path = session.path_to(str(fold.id))
            assert path[-2].id == getattr(fold, "first_kept", None)
            assert path[-2].type == "custom"


def test_files_follow_hermes_lineage(converted: Converted) -> None:
    """A file holds the compression lineage Hermes resolves from its root, and resumes into
    the tip Hermes resumes into (``get_compression_lineage`` / ``get_compression_tip``)."""
    listing = converted.listing()
    tips = listing.get("get_compression_tip", {})
    lineages = listing.get("get_compression_lineage", {})
    for name, item in converted.sessions.items():
        session = converted.files[name]
        root = (session.header.unknown.get("hermes") or {}).get("session")
        if not isinstance(root, str):
            continue  # the orphans file
        sid = root.rsplit("/", 1)[1]
        segments = [unit.rsplit("/", 1)[1] for unit in item.sources]
        if sid in lineages:
            assert set(lineages[sid]["value"]) <= set(segments), name
        if sid in tips:
            leaf = session.resume_leaf()
            assert leaf is not None
            opened = [(e.unknown.get("hermes") or {}).get("session") for e in session.path_to(leaf)]
            tip = [u for u in opened if isinstance(u, str) and "sessions/" in u][-1]
            assert tip.rsplit("/", 1)[1] == tips[sid]["value"], name
