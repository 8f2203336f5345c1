"""Write scenarios the fixture generator does not cover, with a real Hermes ``SessionDB``.

Run under an interpreter that can ``import hermes_state`` (any release; what a release lacks
is skipped and listed in the manifest), like ``make_fixtures.py``, whose helpers it reuses::

    python tests/hermes_scenarios.py --generator shared/hermes/make_fixtures.py --out DIR

Rows are written through public ``SessionDB`` methods; then a few cells are changed with SQL
(listed under ``raw_sql`` in the manifest) for shapes only a damaged or foreign writer leaves;
then the release's own readers record the oracle (``expected-conversation`` ...), so the
output reads like a fixture directory. Scenarios: a long tool-using session; a sub-agent whose
parent row was deleted; a compression chain whose continuation and tip were /branch'ed; a
single-object ``tool_calls``; content of one text part; bare tool-marker assistant turns;
``display_kind`` rows; an unanswered tool result; a row with role ``unknown``; a
``_reset_from`` child; a dangling ``system_prompt_hash``; a clock that stepped back; two
in-place compactions and a rewind; rewind then restore; ``replace_messages``;
``publish_compression_child`` with a sub-agent of the continuation; ``delete_session`` of a
/branch parent; what other front ends write (the gateway's /retry, the ACP adapter's persist,
an API server fork, a TUI branch, ``clear_messages``, a reopened compression parent, a deleted
middle segment, a restore across a compaction, odd compaction sets, ``import_sessions``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any


def load_generator(generator: Path) -> Any:
    """The fixture generator ``make_fixtures.py`` as a module (its helpers are reused)."""
    spec = importlib.util.spec_from_file_location("make_fixtures", generator)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Writer:
    """Sessions and rows through the release's SessionDB (keywords it lacks are dropped)."""

    def __init__(self, mf: Any, db: Any) -> None:
        self.mf = mf
        self.rec = mf.Recorder(db)
        self.intents: dict[str, str] = {}

    def session(self, sid: str, source: str, intent: str, **kw: Any) -> None:
        kw.setdefault("model", "anthropic/claude-sonnet-4")
        kw.setdefault("system_prompt", self.mf.SYSTEM_PROMPT)
        self.rec.call("create_session", sid, source, **kw)
        self.intents[sid] = intent

    def branch(self, sid: str, intent: str, *, parent: str) -> None:
        """A /branch session: Hermes names its parent both by column and by marker."""
        self.session(
            sid, "cli", intent, parent_session_id=parent, model_config={"_branched_from": parent}
        )

    def subagent(self, sid: str, intent: str, *, parent: str) -> None:
        """A delegated sub-agent's session, its parent named by column and by marker."""
        self.session(
            sid,
            "subagent",
            intent,
            parent_session_id=parent,
            model_config={"_delegate_from": parent},
        )

    def msg(self, sid: str, role: str, content: Any = None, **kw: Any) -> Any:
        return self.rec.call("append_message", sid, role, content, **kw)

    def turn(self, sid: str, question: Any, answer: Any) -> Any:
        """A user message and the assistant's final reply; returns the user row's id."""
        asked = self.msg(sid, "user", question)
        self.msg(sid, "assistant", answer, finish_reason="stop")
        return asked

    def call(self, cid: str, name: str, args: dict[str, Any]) -> Any:
        return self.mf.tc(cid, name, args)


def _long(w: Writer, turns: int) -> None:
    w.session("sc-long", "cli", "long tool-using session")
    for i in range(turns):
        w.msg("sc-long", "user", f"step {i}")
        w.msg(
            "sc-long",
            "assistant",
            "",
            finish_reason="tool_calls",
            tool_calls=[w.call(f"call_long{i:06d}", "terminal", {"command": f"echo {i}"})],
        )
        w.msg("sc-long", "tool", f"{i}\n", tool_call_id=f"call_long{i:06d}", tool_name="terminal")
        w.msg("sc-long", "assistant", f"done {i}", finish_reason="stop")
    w.rec.call("end_session", "sc-long", "cli_close")


def _lineage(w: Writer, summary: str) -> None:
    w.session("sc-gone-parent", "cli", "parent, deleted below")
    w.msg("sc-gone-parent", "user", "delegate")
    w.msg(
        "sc-gone-parent",
        "assistant",
        "",
        finish_reason="tool_calls",
        tool_calls=[w.call("call_gone000001", "delegate_task", {"goal": "x"})],
    )
    w.subagent("sc-orphan-child", "sub-agent whose parent row was deleted", parent="sc-gone-parent")
    w.turn("sc-orphan-child", "x", "done x")
    w.rec.call("end_session", "sc-orphan-child", "agent_close")
    w.msg("sc-gone-parent", "tool", "ok", tool_call_id="call_gone000001")

    w.session("sc-c1", "cli", "chain root")
    w.turn("sc-c1", "start", "ok")
    w.rec.call("end_session", "sc-c1", "compression")
    w.session("sc-c2", "cli", "continuation", parent_session_id="sc-c1")
    w.msg("sc-c2", "user", summary)
    w.turn("sc-c2", "continue", "continuing")
    w.branch("sc-c2-branch", "/branch of the continuation", parent="sc-c2")
    for role, text in (("user", summary), ("user", "continue"), ("user", "on the branch")):
        w.msg("sc-c2-branch", role, text)
    w.msg("sc-c2-branch", "assistant", "branch reply", finish_reason="stop")
    w.rec.call("end_session", "sc-c2", "compression")
    w.session("sc-c3", "cli", "tip", parent_session_id="sc-c2")
    w.turn("sc-c3", summary, "tip reply")
    w.rec.call("end_session", "sc-c3", "branched")
    w.branch("sc-c3-branch", "/branch of the tip", parent="sc-c3")
    w.turn("sc-c3-branch", summary, "more reply")

    w.session("sc-reset-parent", "telegram", "reset parent", session_key="k:1")
    w.turn("sc-reset-parent", "hi", "hello")
    if w.rec.has("promote_to_session_reset"):
        w.rec.call("promote_to_session_reset", "sc-reset-parent", "session_reset")
    else:
        w.rec.call("end_session", "sc-reset-parent", "session_reset")
    w.session(
        "sc-reset-child",
        "telegram",
        "reset child (_reset_from)",
        session_key="k:1",
        parent_session_id="sc-reset-parent",
        model_config={"_reset_from": "sc-reset-parent"},
    )
    w.turn("sc-reset-child", "again", "fresh")


def _odd_rows(w: Writer) -> int:
    sid = "sc-odd"
    w.session(sid, "cli", "odd rows")
    w.msg(sid, "user", "single-object tool call next")
    single = w.call("call_single00001", "terminal", {"command": "ls"})
    w.msg(sid, "assistant", "", finish_reason="tool_calls", tool_calls=single)
    w.msg(sid, "tool", "a\nb", tool_call_id="call_single00001", tool_name="terminal")
    for n, text in ((1, "[memory]"), (2, "  [skill_manage]  ")):
        call = w.call(f"call_marker0000{n}", "memory", {"action": "add"})
        w.msg(sid, "assistant", text, finish_reason="tool_calls", tool_calls=[call])
        w.msg(sid, "tool", "saved", tool_call_id=f"call_marker0000{n}", tool_name="memory")
    w.msg(sid, "assistant", "[memory]", finish_reason="stop")  # no call: an answer
    w.msg(
        sid,
        "user",
        "Delegation finished.",
        display_kind="async_delegation_complete",
        display_metadata={"delegation_id": "d-1", "state": "completed"},
    )
    w.msg(sid, "user", "hidden scaffolding", display_kind="hidden")
    w.msg(sid, "assistant", "after the async result", finish_reason="stop")
    w.msg(sid, "tool", "nobody asked", tool_call_id="call_nobody00001", tool_name="terminal")
    unknown = w.turn(sid, "placeholder for role unknown", "end")
    w.rec.call("end_session", sid, "cli_close")
    w.session("sc-dangling-hash", "cli", "system_prompt_hash names no system_prompts row")
    w.turn("sc-dangling-hash", "q", "a")
    return int(unknown)


def _one_text_part(w: Writer) -> None:
    """Content stored as a list of one text part (a client's or a tool's text-only parts)
    beside the same text stored as text."""
    sid = "sc-text-part"
    w.session(sid, "acp", "content of one text part")
    w.msg(sid, "user", [{"type": "text", "text": "read it"}])
    call = w.call("call_part00000001", "read_file", {"path": "a"})
    w.msg(sid, "assistant", "", finish_reason="tool_calls", tool_calls=[call])
    w.msg(sid, "tool", [{"type": "text", "text": "a"}], tool_call_id="call_part00000001")
    w.msg(sid, "assistant", [{"type": "text", "text": "done"}], finish_reason="stop")
    w.turn(sid, "read it", "done")


def _clock(w: Writer) -> int:
    sid = "sc-clock"
    w.session(sid, "cli", "clock stepped back")
    w.msg(sid, "user", "first")
    call = w.call("call_clock000001", "terminal", {"command": "date"})
    w.msg(sid, "assistant", "", finish_reason="tool_calls", tool_calls=[call])
    late = w.msg(sid, "tool", "Mon", tool_call_id="call_clock000001", tool_name="terminal")
    w.msg(sid, "assistant", "It is Monday.", finish_reason="stop")
    return int(late)


def _history_edits(w: Writer, summary: str) -> None:
    sid = "sc-inplace2"
    w.session(sid, "cli", "two in-place compactions and a rewind")
    for i in range(3):
        w.turn(sid, f"q{i}", f"a{i}")

    def compact(text: str, tail: list[dict[str, Any]]) -> None:
        if w.rec.has("archive_and_compact"):
            w.rec.call("archive_and_compact", sid, [{"role": "user", "content": text}, *tail])

    compact(summary, [{"role": "user", "content": "q2"}, {"role": "assistant", "content": "a2"}])
    w.msg(sid, "user", "q3")
    call = w.call("call_inpl000001", "terminal", {"command": "ls"})
    w.msg(sid, "assistant", "", finish_reason="tool_calls", tool_calls=[call])
    w.msg(sid, "tool", "x", tool_call_id="call_inpl000001", tool_name="terminal")
    w.msg(sid, "assistant", "a3", finish_reason="stop")
    compact(summary + " (2)", [{"role": "user", "content": "q3"}])
    target = w.turn(sid, "q4", "a4")
    if w.rec.has("rewind_to_message"):
        w.rec.call("rewind_to_message", sid, target)
    w.turn(sid, "q4 again", "a4 again")

    sid = "sc-restore"
    w.session(sid, "cli", "rewind then restore")
    w.turn(sid, "one", "1")
    target = w.turn(sid, "two", "2")
    if w.rec.has("rewind_to_message") and w.rec.has("restore_rewound"):
        w.rec.call("rewind_to_message", sid, target)
        w.rec.call("restore_rewound", sid, target)
    w.turn(sid, "three", "3")

    sid = "sc-replace"
    w.session(sid, "cli", "replace_messages")
    w.turn(sid, "old q", "old a")
    call = w.call("call_repl000001", "terminal", {"command": "pwd"})
    rows = [
        {"role": "user", "content": "new q"},
        {"role": "assistant", "content": "new a", "tool_calls": [call]},
        {"role": "tool", "content": "/", "tool_call_id": "call_repl000001"},
    ]
    w.rec.call("replace_messages", sid, rows, archive_dropped=True)
    w.turn(sid, "after replace", "ok")

    if w.rec.has("publish_compression_child"):
        w.session("sc-rot", "cli", "rotation root")
        w.turn("sc-rot", "long work", "progress")
        w.rec.try_call(
            "atomic rotation",
            "publish_compression_child",
            parent_session_id="sc-rot",
            child_session_id="sc-rot-2",
            source="cli",
            messages=[{"role": "user", "content": summary}, {"role": "user", "content": "go"}],
            model="anthropic/claude-sonnet-4",
            system_prompt=w.mf.SYSTEM_PROMPT + " v2",
            require_compression_lease=False,
        )
        w.intents["sc-rot-2"] = "published compression child"
        call = w.call("call_rotd000001", "delegate_task", {"goal": "g"})
        w.msg("sc-rot-2", "assistant", "", finish_reason="tool_calls", tool_calls=[call])
        w.subagent("sc-rot-sub", "sub-agent of the continuation", parent="sc-rot-2")
        w.turn("sc-rot-sub", "g", "done g")
        w.msg("sc-rot-2", "tool", "done g", tool_call_id="call_rotd000001")
        w.msg("sc-rot-2", "assistant", "all done", finish_reason="stop")

    w.session("sc-del-parent", "cli", "deleted by delete_session")
    w.turn("sc-del-parent", "hi", "hello")
    w.rec.call("end_session", "sc-del-parent", "branched")
    w.branch("sc-del-child", "/branch child of a deleted parent", parent="sc-del-parent")
    w.msg("sc-del-child", "user", "on branch")
    w.rec.try_call("delete the parent", "delete_session", "sc-del-parent")


def _compact(w: Writer, sid: str, rows: list[dict[str, Any]]) -> None:
    """An in-place compaction keeping ``rows`` live (a release without one: nothing)."""
    if w.rec.has("archive_and_compact"):
        w.rec.call("archive_and_compact", sid, rows)


def _rewind(w: Writer, sid: str, target: Any) -> None:
    if w.rec.has("rewind_to_message"):
        w.rec.call("rewind_to_message", sid, target)


def _front_ends(w: Writer, summary: str) -> None:
    """What Hermes' other front ends and session commands do to stored transcripts: the
    gateway's /retry, the ACP adapter's persist, an API server fork, a TUI branch, clearing a
    session, reopening a compression-ended parent, deleting a chain's middle segment, restoring
    rows across a compaction, odd compaction sets, and an export imported again."""
    rec = w.rec
    tail = [{"role": "user", "content": summary}, {"role": "user", "content": "first"}]

    # Gateway /retry: the transcript as the gateway loads it, cut before the last user
    # message, written back whole (the compacted rows go with it), then the turn again.
    sid = "sc-gw-retry"
    w.session(sid, "telegram", "gateway /retry rewrite", session_key="k:retry")
    w.msg(sid, "session_meta")
    w.msg(sid, "user", "[Bob] hi", observed=True, platform_message_id="1")
    w.turn(sid, "first", "one")
    _compact(w, sid, [*tail, {"role": "assistant", "content": "one"}])
    w.msg(sid, "user", "run it")
    call = w.call("call_retry000001", "terminal", {"command": "ls"})
    w.msg(sid, "assistant", "", finish_reason="tool_calls", tool_calls=[call], reasoning="look")
    w.msg(sid, "tool", "a", tool_call_id="call_retry000001", tool_name="terminal")
    w.turn(sid, "again", "first try")
    try:  # what the gateway loads (0.19's repair needs optional packages: else as stored)
        history = rec.call("get_messages_as_conversation", sid, repair_alternation=True)
    except Exception:
        history = rec.db.get_messages_as_conversation(sid)
    last = max(i for i, m in enumerate(history) if m.get("role") == "user")
    rec.call("replace_messages", sid, history[:last])
    w.turn(sid, "again", "second try")

    # ACP persist: the live rows replaced beside rewound and compacted ones.
    sid = "sc-acp"
    w.session(sid, "acp", "ACP persist of the live rows", model_config={"cwd": "/w"})
    w.turn(sid, "first", "A")
    _rewind(w, sid, w.turn(sid, "b", "B"))
    w.turn(sid, "b2", "B2")
    _compact(w, sid, tail)
    live = rec.db.get_messages_as_conversation(sid)
    archived = rec.has("has_archived_messages") and rec.call("has_archived_messages", sid)
    more = [{"role": "user", "content": "d"}, {"role": "assistant", "content": "D"}]
    rec.call("replace_messages", sid, [*live, *more], active_only=archived)

    # /clear-like: every row deleted, then a new start.
    w.session("sc-cleared", "cli", "clear_messages then new rows")
    w.turn("sc-cleared", "old", "gone")
    rec.call("clear_messages", "sc-cleared")
    w.turn("sc-cleared", "new", "start")

    # A compression-ended parent reopened (resumed) while its continuation exists.
    w.session("sc-reopened", "telegram", "compression parent reopened", session_key="k:ro")
    w.turn("sc-reopened", "p1", "P1")
    rec.call("end_session", "sc-reopened", "compression")
    w.session("sc-reopened-2", "telegram", "continuation", parent_session_id="sc-reopened")
    w.turn("sc-reopened-2", summary, "C1")
    rec.call("reopen_session", "sc-reopened")
    w.turn("sc-reopened", "p2", "P2")

    # The middle segment of a chain deleted: the tip loses its parent.
    for n in (1, 2, 3):
        parent = {"parent_session_id": f"sc-mid{n - 1}"} if n > 1 else {}
        w.session(f"sc-mid{n}", "cli", f"chain segment {n}", **parent)
        w.turn(f"sc-mid{n}", summary if n > 1 else "m1", f"M{n}")
        if n < 3:
            rec.call("end_session", f"sc-mid{n}", "compression")
    rec.try_call("delete the middle", "delete_session", "sc-mid2")

    # API server fork: the source's rows as get_messages returns them, written back by
    # replace_messages (its JSON columns come back as JSON strings of the JSON text).
    w.session("sc-fork-src", "api_server", "API fork source")
    w.msg("sc-fork-src", "user", "q")
    w.msg(
        "sc-fork-src",
        "assistant",
        "a",
        finish_reason="stop",
        reasoning_details=[{"type": "reasoning.text", "text": "r"}],
        codex_reasoning_items=[{"type": "reasoning", "id": "rs_1", "summary": []}],
    )
    rec.call("end_session", "sc-fork-src", "branched")
    w.session("sc-fork", "api_server", "API fork", parent_session_id="sc-fork-src")
    rec.call("replace_messages", "sc-fork", rec.db.get_messages("sc-fork-src"))
    w.turn("sc-fork", "forked", "yes")

    # TUI /branch: role and content copied only, the parent left live.
    w.session("sc-tui", "tui", "TUI branch parent")
    w.msg("sc-tui", "user", "look")
    call = w.call("call_tui00000001", "terminal", {"command": "ls"})
    w.msg("sc-tui", "assistant", "", finish_reason="tool_calls", tool_calls=[call])
    w.msg("sc-tui", "tool", "x", tool_call_id="call_tui00000001", tool_name="terminal")
    w.msg("sc-tui", "assistant", "seen", finish_reason="stop")
    w.branch("sc-tui-branch", "TUI branch", parent="sc-tui")
    for m in rec.db.get_messages_as_conversation("sc-tui"):
        w.msg("sc-tui-branch", m["role"], m.get("content"))
    w.turn("sc-tui-branch", "on branch", "ok")
    w.turn("sc-tui", "on parent", "ok")

    # restore_rewound across an in-place compaction: compacted rows live again.
    sid = "sc-restore-cross"
    w.session(sid, "cli", "restore across a compaction")
    w.turn(sid, "first", "A")
    target = w.turn(sid, "b", "B")
    _rewind(w, sid, target)
    w.turn(sid, "b2", "B2")
    _compact(w, sid, tail)
    if rec.has("restore_rewound") and rec.has("rewind_to_message"):
        rec.call("restore_rewound", sid, target)
    w.msg(sid, "assistant", "after", finish_reason="stop")

    # Compaction sets of odd shapes: an assistant summary, a tool-call head, none, a system one.
    sid = "sc-odd-compact"
    w.session(sid, "cli", "odd compaction sets")
    w.turn(sid, "first", "A")
    _compact(w, sid, [{"role": "assistant", "content": summary}, tail[1]])
    call = w.call("call_oddc00000001", "terminal", {"command": "ls"})
    w.msg(sid, "assistant", "", finish_reason="tool_calls", tool_calls=[call])
    result = {"role": "tool", "content": "x", "tool_call_id": "call_oddc00000001"}
    w.msg(sid, "tool", "x", tool_call_id="call_oddc00000001")
    _compact(w, sid, [{"role": "assistant", "content": "", "tool_calls": [call]}, result])
    w.msg(sid, "assistant", "listed", finish_reason="stop")
    _compact(w, sid, [])
    w.turn(sid, "after none", "ok")
    _compact(w, sid, [{"role": "system", "content": "summary"}, {"role": "user", "content": "x"}])
    w.msg(sid, "assistant", "ok", finish_reason="stop")

    # An export imported again under other ids (0.19): a chain, and a child without parent.
    if rec.has("import_sessions"):
        w.session("sc-exp", "cli", "exported root")
        w.turn("sc-exp", "e", "E")
        rec.call("end_session", "sc-exp", "compression")
        w.session("sc-exp-2", "cli", "exported continuation", parent_session_id="sc-exp")
        w.turn("sc-exp-2", summary, "E2")
        exported = [rec.call("export_session", s) for s in ("sc-exp", "sc-exp-2")]
        for e in exported:
            e["id"] = e["id"].replace("sc-exp", "sc-imp")
            if e.get("parent_session_id"):
                e["parent_session_id"] = e["parent_session_id"].replace("sc-exp", "sc-imp")
        lone = {**exported[1], "id": "sc-imp-lone", "parent_session_id": "sc-nowhere"}
        rec.call("import_sessions", [*exported, lone])
        for e in (*exported, lone):
            w.intents[e["id"]] = "imported"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generator", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--turns", type=int, default=300, help="tool turns of the long session")
    args = parser.parse_args()
    mf = load_generator(args.generator.resolve())
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    home = Path(tempfile.mkdtemp(prefix="hermes-scenarios-"))
    os.environ["HERMES_HOME"] = str(home)
    import hermes_state

    path = home / "state.db"
    db = hermes_state.SessionDB(db_path=path)
    w = Writer(mf, db)
    try:
        _long(w, args.turns)
        _lineage(w, mf.SUMMARY_TEXT)
        unknown = _odd_rows(w)
        _one_text_part(w)
        late = _clock(w)
        _history_edits(w, mf.SUMMARY_TEXT)
        _front_ends(w, mf.SUMMARY_TEXT)
    finally:
        db.close()
    raw: list[list[Any]] = []
    conn = sqlite3.connect(str(path))
    try:

        def sql(statement: str, *params: Any) -> None:
            conn.execute(statement, params)
            raw.append([statement, list(params)])

        sql("PRAGMA foreign_keys = OFF")
        sql("DELETE FROM messages WHERE session_id = ?", "sc-gone-parent")
        sql("DELETE FROM sessions WHERE id = ?", "sc-gone-parent")
        sql("UPDATE messages SET role = 'unknown' WHERE id = ?", unknown)
        sql("UPDATE messages SET timestamp = timestamp - 3600 WHERE id = ?", late)
        if "system_prompt_hash" in {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}:
            sql(
                "UPDATE sessions SET system_prompt = NULL, system_prompt_hash = ? WHERE id = ?",
                "0" * 64,
                "sc-dangling-hash",
            )
        conn.commit()
        kept = {r[0] for r in conn.execute("SELECT id FROM sessions")}
    finally:
        conn.close()
    intents = {k: v for k, v in w.intents.items() if k in kept}
    mf.record_oracle(hermes_state.SessionDB, path, out, list(intents))
    mf.finish_db(path, out / "state.db")
    with sqlite3.connect(str(out / "state.db")) as check:
        stamped = [r[0] for r in check.execute("SELECT version FROM schema_version")]
    mf.jdump(
        out / "manifest.json",
        {
            "generator": "tests/hermes_scenarios.py",
            "schema_version_rows": stamped,
            "sessions": intents,
            "raw_sql": raw,
            "dropped_kwargs": {k: sorted(v) for k, v in w.rec.dropped.items()},
            "skipped_methods": sorted(set(w.rec.skipped)),
            "failed_writes": w.rec.failed,
        },
    )
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
