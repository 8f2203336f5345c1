"""Conversion of stores Hermes never wrote cleanly: damaged cells, odd rows, odd lineage.

Built in memory (``MemoryStore``) from raw rows; every case must convert without raising,
verify, keep every row findable by its identity, and account for every row.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from hermes_columns import columns_of
from hermes_memory_store import MemoryStore
from hypothesis import given, settings
from hypothesis import strategies as st

from asf_core.context import context_at
from asf_core.formats import ConvertedSession, Finding
from asf_core.reader import SessionFile, parse_session
from asf_core.verify.session import verify_session
from asf_core.writer import entry_line, header_line
from hermes_plugin.convert.database import ORPHANS, convert_store, file_name
from hermes_plugin.convert.segments import GroupBuilder
from hermes_plugin.source.columns import RawText
from hermes_plugin.source.native import native_sessions
from hermes_plugin.source.rows import Delegation

T0 = 1_790_000_000.0


def _session(sid: str, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": sid,
        "source": "cli",
        "model": "m-1",
        "system_prompt": f"prompt of {sid}",
        "parent_session_id": None,
        "started_at": T0,
        "ended_at": None,
        "end_reason": None,
        "model_config": None,
    }
    row.update(extra)
    return row


class Rows:
    """Message rows with increasing ids and times."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, sid: str, role: str | None, content: Any = None, **extra: Any) -> int:
        n = len(self.rows) + 1
        row: dict[str, Any] = {
            "id": n,
            "session_id": sid,
            "role": role,
            "content": content,
            "tool_call_id": None,
            "tool_calls": None,
            "timestamp": T0 + n,
            "finish_reason": None,
            "active": 1,
            "compacted": 0,
        }
        row.update(extra)
        self.rows.append(row)
        return n


def _call(cid: str, name: str = "terminal") -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}


def _convert(store: MemoryStore) -> tuple[dict[str, SessionFile], list[Finding]]:
    """Convert as the host does: ``read``'s findings (its strays), then ``convert``'s."""
    files: dict[str, SessionFile] = {}
    findings = [f for f in native_sessions(store) if isinstance(f, Finding)]
    for item in convert_store(store):
        if isinstance(item, ConvertedSession):
            data = header_line(item.header) + b"".join(entry_line(e) for e in item.entries)
            files[item.name] = parse_session(data, path=Path(f"{item.name}.jsonl"))
            findings.extend(item.findings)
        else:
            findings.append(item)
    return files, findings


def _units(files: Iterable[SessionFile]) -> set[str]:
    out = set()
    for session in files:
        for entry in session.entries:
            member = entry.unknown.get("hermes") or {}
            for key in ("row", "session"):
                if isinstance(member.get(key), str):
                    out.add(member[key])
    return out


def _accounting(findings: list[Finding]) -> Mapping[str, Any]:
    (found,) = [f for f in findings if f.message.startswith("row accounting")]
    return found.data


def _check(store: MemoryStore, files: dict[str, SessionFile], findings: list[Finding]) -> None:
    for name, session in files.items():
        errors = [f for f in verify_session(session) if f.severity == "error"]
        assert errors == [], name
    units = _units(files.values())
    for rows in store.messages_of.values():
        for message in rows:
            assert message.unit in units
    for message in store.loose:
        assert message.unit in units
    rewound = {
        m.unit
        for rows in store.messages_of.values()
        for m in rows
        if m.error is None and not m.active and not m.compacted
    }
    for name, session in files.items():
        leaf = session.resume_leaf()
        assert leaf is not None
        on_path = {(e.unknown.get("hermes") or {}).get("row") for e in session.path_to(leaf)}
        assert not on_path & rewound, name  # the live branch holds the leaf
    data = _accounting(findings)
    total = sum(len(v) for v in store.messages_of.values()) + len(store.loose)
    assert data["message_rows_converted"] + data["message_rows_orphaned"] == total


def test_damaged_rows_and_cells() -> None:
    rows = Rows()
    rows.add("a", "user", "hello")
    rows.add("a", "assistant", "", tool_calls=json.dumps([_call("call_1"), _call("call_1")]))
    rows.add("a", "tool", "first", tool_call_id="call_1")
    rows.add("a", "tool", "second", tool_call_id="call_1")
    rows.add("a", "tool", "nobody asked", tool_call_id="call_zzz")
    rows.add("a", None, "role is null")
    rows.add("a", "user", "garbage time", timestamp="yesterday")
    rows.add("a", "user", "far future", timestamp=9e15)
    rows.add("a", "assistant", "\x00json:[1, 2", tool_calls="{not json")
    rows.add("a", "user", "scaffold", display_kind="hidden")
    rows.add("a", "martian", "an unknown role")
    rows.add("ghost", "user", "my session is gone")
    store = MemoryStore.from_rows(
        name="state.db",
        schema=31,
        sessions=[_session("a")],
        messages=rows.rows,
    )
    files, findings = _convert(store)
    _check(store, files, findings)
    assert ORPHANS in files
    session = files["a"]
    leaf = session.resume_leaf()
    assert leaf is not None
    ctx = context_at(session, leaf)
    calls = [i["call_id"] for i in ctx.items if i["type"] == "function_call"]
    outputs = [i["call_id"] for i in ctx.items if i["type"] == "function_call_output"]
    assert len(set(calls)) == 2
    assert outputs == calls  # each result answers its own call, in order
    assert not any(i.get("output") == "nobody asked" for i in ctx.items)
    hidden = [e for e in session.entries if getattr(e, "visible", None) is False]
    assert len(hidden) == 1
    strays = [f for f in findings if f.kind == "stray"]
    assert {f.unit for f in strays} >= {"state.db:messages/6", "state.db:messages/12"}
    # A bad time takes the previous entry's.
    by_row = {(e.unknown.get("hermes") or {}).get("row"): e for e in session.entries}
    assert by_row["state.db:messages/7"].ts == by_row["state.db:messages/6"].ts


def test_calls_in_text_that_is_not_utf8_are_the_rows_calls() -> None:
    """A row has one reading: calls in a ``tool_calls`` cell that is not valid UTF-8 (bad
    bytes read as U+FFFD) are its calls for the items as for the row itself, and the result
    that names one answers it."""
    calls = json.dumps([_call("call_1")]).replace("terminal", "term\ufffdinal")
    bad = RawText(calls.encode().replace("\ufffd".encode(), b"\xff"))
    rows = Rows()
    rows.add("a", "user", "list the files")
    rows.add("a", "assistant", "", tool_calls=bad)
    rows.add("a", "tool", "a.txt", tool_call_id="call_1")
    store = MemoryStore.from_rows(
        name="state.db", schema=22, sessions=[_session("a")], messages=rows.rows
    )
    (message,) = [m for m in store.messages("a") if m.role == "assistant"]
    assert [c.name for c in message.tool_calls] == ["term\ufffdinal"]
    assert message.problems == ("tool_calls: invalid UTF-8 (kept as bytes)",)
    files, findings = _convert(store)
    _check(store, files, findings)
    leaf = files["a"].resume_leaf()
    assert leaf is not None
    items = context_at(files["a"], leaf).items
    assert [(i["type"], i.get("name")) for i in items[1:]] == [
        ("function_call", "term\ufffdinal"),
        ("function_call_output", None),
    ]
    assert items[1]["call_id"] == items[2]["call_id"] == "call_1"


def test_odd_lineage() -> None:
    rows = Rows()
    for sid in ("root", "dangling", "c1", "c2", "sub", "ctip"):
        rows.add(sid, "user", f"hi from {sid}")
        rows.add(sid, "assistant", f"bye from {sid}", finish_reason="length")
    sessions = [
        _session("root", end_reason="compression", ended_at=T0 + 5),
        _session("ctip", parent_session_id="root", started_at=T0 + 6),
        _session("dangling", parent_session_id="missing"),
        _session("c1", parent_session_id="c2", end_reason="compression"),
        _session("c2", parent_session_id="c1", end_reason="compression"),
        _session("sub", parent_session_id="root", source="subagent", started_at=T0 + 3),
    ]
    store = MemoryStore.from_rows(name="state.db", schema=22, sessions=sessions, messages=rows.rows)
    store = attrs.evolve(
        store,
        delegated=(
            Delegation(
                id="d1",
                parent_session_id="root",
                origin_session="agent:main",
                origin_session_id=None,
                state="completed",
                cols=columns_of({"delegation_id": "d1", "parent_session_id": "root"}),
            ),
        ),
    )
    files, findings = _convert(store)
    _check(store, files, findings)
    assert "ctip" not in files  # a continuation is a segment of its root's file
    assert {"root", "dangling", "sub"} <= set(files)
    assert files["sub"].header.parent_session == files["root"].header.id
    assert any(f.message.startswith("its parent link closes a cycle") for f in findings)
    assert "state.db:async_delegations/d1" in _units(files.values())
    statuses = {getattr(e, "status", None) for e in files["root"].entries}
    assert "incomplete" in statuses


def test_a_session_id_is_its_file_name_or_a_safe_one_of_its_own() -> None:
    """An id that is a safe file name is the conversation's name; one altered to be safe (or
    cut, or naming the orphans' file) keeps its safe beginning and gets a hash of the id, so
    two ids never share a name."""
    assert file_name("20260917_120000_ab12cd") == "20260917_120000_ab12cd"
    odd = [".hidden", "a/b", "a b", "a_b", "", ORPHANS, "x" * 200, "x" * 250 + "a", "x" * 250 + "b"]
    names = [file_name(sid) for sid in odd]
    assert len(set(names)) == len(odd)
    assert names[3] == "a_b"
    assert names[6] == "x" * 200
    assert names[1].startswith("a_b-")
    assert names[2].startswith("a_b-")
    assert names[7].startswith("x" * 80 + "-")
    assert len(names[7]) == 91
    assert all(0 < len(name) <= 200 and not name.startswith(".") for name in names)


def test_a_conversation_that_fails_is_kept_whole_and_accounted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Converted store by store (``convert_store``), a conversation whose conversion raises
    is one stray and a file of its rows as stored, its header saying so; the others
    convert, and every row is accounted for."""
    rows = Rows()
    for sid in ("good", "bad"):
        rows.add(sid, "user", f"hi from {sid}")
        rows.add(sid, "assistant", f"bye from {sid}", finish_reason="stop")
    sessions = [_session("good"), _session("bad", started_at=T0 + 9)]
    store = MemoryStore.from_rows(name="state.db", schema=22, sessions=sessions, messages=rows.rows)
    render = GroupBuilder._render

    def failing(self: GroupBuilder, message: Any, *args: Any) -> Any:
        if message.session_id == "bad":
            raise RuntimeError("a bug met on this row")
        return render(self, message, *args)

    monkeypatch.setattr(GroupBuilder, "_render", failing)
    files, findings = _convert(store)
    _check(store, files, findings)
    (stray,) = [f for f in findings if f.kind == "stray"]
    assert stray.session == "bad"
    assert "RuntimeError: a bug met on this row" in stray.message
    member = files["bad"].header.unknown["hermes"]
    assert member == {
        "database": "state.db",
        "schema_version": 22,
        "session": "state.db:sessions/bad",
        "kept": True,
    }
    assert "kept" not in files["good"].header.unknown["hermes"]


def test_empty_store() -> None:
    store = MemoryStore.from_rows(name="state.db", schema=11)
    files, findings = _convert(store)
    assert files == {}
    assert _accounting(findings)["message_rows_in_database"] == 0


_ROW = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "tool", "system", "session_meta", None]),
        "content": st.one_of(
            st.none(),
            st.text(max_size=6),
            st.just('\x00json:[{"type": "text", "text": "x"}]'),
            st.just("Review the conversation above and update the skill library"),
        ),
        "call": st.sampled_from([None, "c1", "c2", "c1|fc_1", ""]),
        "flags": st.sampled_from([(1, 0), (1, 0), (1, 0), (0, 0), (0, 1), (None, 0)]),
        "session": st.sampled_from(["a", "a", "a", "b", "ghost"]),
        "timestamp": st.one_of(st.just(None), st.floats(allow_nan=False), st.text(max_size=3)),
    }
)


@settings(max_examples=40, deadline=None)
@given(st.lists(_ROW, max_size=14), st.sampled_from(["compression", "branched", None]))
def test_any_rows_convert_verify_and_account(rows: list[dict[str, Any]], end: str | None) -> None:
    built = Rows()
    for row in rows:
        extra: dict[str, Any] = {"active": row["flags"][0], "compacted": row["flags"][1]}
        if row["timestamp"] is not None:
            extra["timestamp"] = row["timestamp"]
        if row["role"] == "assistant" and row["call"] is not None:
            extra["tool_calls"] = json.dumps([_call(row["call"])])
        if row["role"] == "tool":
            extra["tool_call_id"] = row["call"]
        built.add(row["session"], row["role"], row["content"], **extra)
    sessions = [
        _session("a", end_reason=end, ended_at=T0 + 1),
        _session("b", parent_session_id="a", started_at=T0 + 2),
    ]
    store = MemoryStore.from_rows(
        name="state.db", schema=19, sessions=sessions, messages=built.rows
    )
    files, findings = _convert(store)
    _check(store, files, findings)


def test_schema31_rows() -> None:
    """Newer-Hermes columns: the summary flag folds, hidden rows are context not shown, and
    uids pair results with the exact call occurrence."""
    rows = Rows()
    rows.add("a", "user", "old question", active=0, compacted=1)
    rows.add("a", "assistant", "old answer", active=0, compacted=1)
    rows.add("a", "user", "[CONTEXT COMPACTION — REFERENCE ONLY] gist", _compressed_summary=1)
    rows.add("a", "user", "hidden scaffolding", display_kind="hidden")
    twice = [_call("call_1"), _call("call_1")]
    rows.add(
        "a",
        "assistant",
        "",
        tool_calls=json.dumps(twice),
        tool_call_uids=json.dumps({"call_1": ["u1", "u2"]}),
    )
    rows.add("a", "tool", "for the second", tool_call_id="call_1", tool_call_uid="u2")
    rows.add("a", "tool", "for the first", tool_call_id="call_1", tool_call_uid="u1")
    store = MemoryStore.from_rows(
        name="state.db", schema=31, sessions=[_session("a")], messages=rows.rows
    )
    files, findings = _convert(store)
    _check(store, files, findings)
    session = files["a"]
    assert [e.type for e in session.entries].count("compaction") == 1
    leaf = session.resume_leaf()
    assert leaf is not None
    ctx = context_at(session, leaf)
    texts = [i["content"][0]["text"] for i in ctx.items if i["type"] == "message"]
    assert texts == ["[CONTEXT COMPACTION — REFERENCE ONLY] gist", "hidden scaffolding"]
    calls = [i["call_id"] for i in ctx.items if i["type"] == "function_call"]
    outputs = {i["output"]: i["call_id"] for i in ctx.items if i["type"] == "function_call_output"}
    assert outputs == {"for the first": calls[0], "for the second": calls[1]}
