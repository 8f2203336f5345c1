"""A sub-agent delegated in the background (Hermes 0.19's ``delegate_task`` with
``background``): the call is answered at once with the delegation's id, the sub-agent starts
after that answer, and Hermes records the delegation in ``async_delegations`` (dispatched,
then completed). Written here by Hermes' own ``SessionDB`` and its async-delegation store, in
the order Hermes writes them. The sub-agent's file names the call that spawned it, as the
foreground sub-agent's does; only the foreground call's output, which holds its sub-agent's
result, lists that sub-agent's leaf (docs/formats/hermes.md, section 5)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from asf_core.cli.main import main
from asf_core.reader import SessionFile, read_session


def _call(call_id: str, goal: str, **extra: Any) -> dict[str, Any]:
    arguments = json.dumps({"goal": goal, **extra})
    return {
        "id": call_id,
        "call_id": call_id,
        "type": "function",
        "function": {"name": "delegate_task", "arguments": arguments},
    }


def _child(db: Any, sid: str, parent: str, task: str) -> None:
    time.sleep(0.01)  # the sub-agent's session is made once it runs
    mc = {"max_iterations": 50, "_delegate_from": parent}
    db.create_session(sid, "subagent", model="m-1", model_config=mc, parent_session_id=parent)
    db.append_message(sid, "user", task)
    db.append_message(sid, "assistant", f"{task}: done", finish_reason="stop")
    db.end_session(sid, "agent_close")


def _ask_in_background(db: Any) -> None:
    """Session ``p``: the user asks, the model calls ``delegate_task`` in the background."""
    db.create_session("p", "cli", model="m-1")
    db.append_message("p", "user", "Research it in the background.")
    call = _call("call_bg", "research", background=True)
    db.append_message("p", "assistant", "", tool_calls=[call], finish_reason="tool_calls")


def _write(home: Path, pad: Any = None) -> None:
    import hermes_state
    from tools import async_delegation

    db = hermes_state.SessionDB(db_path=home / "state.db")
    try:
        _ask_in_background(db)
        record = {
            "delegation_id": "deleg_0001",
            "goal": "research",
            "session_key": "p",
            "parent_session_id": "p",
            "dispatched_at": time.time(),
        }
        async_delegation._persist_dispatch(record)
        ack = {"status": "dispatched", "mode": "background", "delegation_id": "deleg_0001"}
        text = json.dumps(ack) if pad is None else json.dumps(ack)[:-1] + f', "pad": {pad}}}'
        db.append_message("p", "tool", text, tool_call_id="call_bg")
        db.append_message("p", "assistant", "It runs in the background.", finish_reason="stop")
        _child(db, "bg-child", "p", "research")
        event = {"delegation_id": "deleg_0001", "status": "completed", "completed_at": time.time()}
        async_delegation._persist_completion(event, {"results": [{"summary": "research: done"}]})
        db.append_message("p", "user", "Now one in the foreground.")
        call = _call("call_fg", "summarise")
        db.append_message("p", "assistant", "", tool_calls=[call], finish_reason="tool_calls")
        _child(db, "fg-child", "p", "summarise")
        db.append_message("p", "tool", "summarise: done", tool_call_id="call_fg")
        db.append_message("p", "assistant", "Both are done.", finish_reason="stop")
    finally:
        db.close()


def _files(out: Path) -> dict[str, SessionFile]:
    files = {}
    for path in out.rglob("*.jsonl"):
        session = read_session(path)
        files[session.header.unknown["hermes"]["session"].rsplit("/", 1)[1]] = session
    return files


def test_a_background_sub_agent_is_spawned_by_its_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    _write(home)
    out = tmp_path / "out"
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    assert main(["verify", str(out)]) == 0
    files = _files(out)
    parent = files["p"]
    links = {e.call_id: e.session for e in parent.entries if e.type == "link"}
    for child, call_id in (("bg-child", "call_bg"), ("fg-child", "call_fg")):
        header = files[child].header
        assert header.parent_session == parent.header.id, child
        assert header.spawned_by == call_id, child
        assert links[call_id] == header.id, child
    outputs = {
        e.item["call_id"]: e
        for e in parent.entries
        if getattr(e, "item", None) and e.item.get("type") == "function_call_output"
    }
    # The answer to the background call came before its sub-agent ran: no leaf of it.
    assert not outputs["call_bg"].parents
    (listed,) = outputs["call_fg"].parents
    assert listed.session == files["fg-child"].header.id


def test_an_answer_nested_past_the_stack_converts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background call's answer, read for the delegation it names, nested 100,000 levels
    deep (a hostile cell: Python's decoder raises ``RecursionError`` on it) names none: the
    sub-agent is placed as one outside every call's window, and the run goes on."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    _write(home, pad="[" * 100_000 + "]" * 100_000)
    out = tmp_path / "out"
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    assert main(["verify", str(out)]) == 0
    files = _files(out)
    assert files["bg-child"].header.parent_session == files["p"].header.id
    assert files["fg-child"].header.spawned_by == "call_fg"


def _hermes_delivery(event: dict[str, Any]) -> str:
    """The message Hermes 0.19 re-injects a finished background delegation with, made by its
    own formatter (``tools/process_registry.py``; the module itself needs Hermes' full
    dependencies, so its two stdlib-only functions are compiled from its source)."""
    import ast

    import tools

    source = Path(tools.__file__).with_name("process_registry.py").read_text(encoding="utf-8")
    wanted = {"_format_age", "_format_async_delegation"}
    body = [n for n in ast.parse(source).body if getattr(n, "name", None) in wanted]
    assert len(body) == len(wanted)
    namespace: dict[str, Any] = {}
    code = compile(ast.Module(body=body, type_ignores=[]), "process_registry.py", "exec")
    exec(code, namespace)  # noqa: S102 - Hermes' own installed source, two pure functions
    text = namespace["_format_async_delegation"](event)
    assert isinstance(text, str)
    return text


def _write_pruned(
    home: Path, monkeypatch: pytest.MonkeyPatch, *, deliver: bool, prune: bool = True
) -> None:
    """A background delegation whose ``async_delegations`` row Hermes pruned (delivered, then
    seven days passed): its result re-entered the session as Hermes formats it (``deliver``),
    or never did; then a sub-agent starts outside every call's window. Without ``prune``,
    the row stays (a home converted within the week)."""
    import hermes_state
    from tools import async_delegation

    db = hermes_state.SessionDB(db_path=home / "state.db")
    try:
        _ask_in_background(db)
        dispatched = time.time()
        record = {"delegation_id": "deleg_0002", "goal": "research", "session_key": "p"}
        record["parent_session_id"] = "p"  # as Hermes' dispatch records it
        async_delegation._persist_dispatch({**record, "dispatched_at": dispatched})
        ack = {"status": "dispatched", "mode": "background", "delegation_id": "deleg_0002"}
        db.append_message("p", "tool", json.dumps(ack), tool_call_id="call_bg")
        db.append_message("p", "assistant", "It runs in the background.", finish_reason="stop")
        _child(db, "bg-child", "p", "research")
        event = {
            **record,
            "type": "async_delegation",
            "status": "completed",
            "summary": "research: done",
            "dispatched_at": dispatched,
            "completed_at": time.time(),
        }
        async_delegation._persist_completion(event, {"summary": "research: done"})
        if deliver:
            db.append_message("p", "user", _hermes_delivery(event))
            db.append_message("p", "assistant", "The research is back.", finish_reason="stop")
        async_delegation.mark_completion_delivered("deleg_0002")
        _child(db, "late-child", "p", "unasked")
        later = time.time() + 8 * 24 * 3600
        if prune:
            monkeypatch.setattr(async_delegation.time, "time", lambda: later)
            async_delegation._prune_durable_records()
            monkeypatch.undo()
    finally:
        db.close()


@pytest.mark.parametrize("deliver", [True, False], ids=["delivered", "never-delivered"])
def test_a_pruned_background_delegation_still_names_its_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deliver: bool
) -> None:
    """Hermes prunes a delivered ``async_delegations`` row after seven days; the dispatch in
    the call's answer still keeps the window open, until the message that brought the result
    back when there is one (a sub-agent started after it was not spawned by the call), else
    for good (the latest call then takes it, as for any open call)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    _write_pruned(home, monkeypatch, deliver=deliver)
    import sqlite3

    with sqlite3.connect(home / "state.db") as db:  # the row is gone, as in an old home
        assert db.execute("SELECT COUNT(*) FROM async_delegations").fetchone() == (0,)
    out = tmp_path / "out"
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    assert main(["verify", str(out)]) == 0
    files = _files(out)
    parent = files["p"]
    assert files["bg-child"].header.spawned_by == "call_bg"
    late = files["late-child"].header
    assert late.parent_session == parent.header.id
    assert late.spawned_by == (None if deliver else "call_bg")
    outputs = [
        e
        for e in parent.entries
        if getattr(e, "item", None) and e.item.get("type") == "function_call_output"
    ]
    assert [o.parents for o in outputs] == [()]  # answered before either sub-agent ran


def test_a_kept_delegation_row_closes_the_window_at_its_completion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While Hermes keeps the ``async_delegations`` row, its ``completed_at`` ends the call's
    window though no message brought the result back: a sub-agent started after it is not
    the call's (read from the row alone, the window would stay open for good)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    _write_pruned(home, monkeypatch, deliver=False, prune=False)
    import sqlite3

    with sqlite3.connect(home / "state.db") as db:
        query = "SELECT COUNT(*) FROM async_delegations WHERE completed_at IS NOT NULL"
        assert db.execute(query).fetchone() == (1,)
    out = tmp_path / "out"
    assert main(["convert", str(home), "-o", str(out), "--quiet"]) == 0
    files = _files(out)
    assert files["bg-child"].header.spawned_by == "call_bg"
    late = files["late-child"].header
    assert late.parent_session == files["p"].header.id
    assert late.spawned_by is None
