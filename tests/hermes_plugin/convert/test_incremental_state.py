"""The incremental promise, as a stateful property: whatever Hermes does to its database and a
user does to the output directory, in any order, a re-run of ``asf convert`` into the same
output writes what a fresh conversion of the same database into an empty directory writes,
byte for byte.

A hypothesis state machine drives Hermes' own ``SessionDB`` (sessions, turns with tool calls,
compression by rotation and in place, /branch, sub-agents, rewinds and their undo,
``api_content``, usage, titles, prompts, deletions ...), writes now and then as other programs
do (``async_delegations`` rows as the delegation tool writes them, a column added the way
Hermes' reconciler adds one, a session row deleted alone), tampers with the output as users do
(a file deleted, truncated, touched, edited, replaced; ``fingerprints.json`` or ``report.json``
deleted or damaged), and converts into one output directory; every conversion is compared with
a fresh one of the same database. One change is outside what the fingerprints cover, by design
(docs/formats/hermes.md: they cover only what Hermes changes in place): a message's content
rewritten in place by another program. :meth:`StateMachine.edit_content_behind_hermes_back`
checks what the documentation promises for it: the next run writes either the old bytes or
the new ones, nothing else, and deleting ``fingerprints.json`` converts everything again.

Hermes stamps its rows with ``time.time()``: the machine gives Hermes a clock of its own, so
an example replays exactly. ``ASF_STATE_EXAMPLES`` (and ``ASF_STATE_STEPS``) run it longer;
``ASF_STATE_NO_SHRINK=1`` reports a failure as found (to try breakages of the fingerprint).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import hermes_state
import pytest
from hermes_clock import HermesClock
from hermes_state import SessionDB
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    rule,
)
from output_files import output_files, store_report, take_left
from output_tampering import TAMPERING, tamper_with_file, tamper_with_record
from state_machines import run_machine

from asf_core.cli.main import main
from asf_core.layout import FINGERPRINTS_NAME, REPORT_NAME
from asf_core.pipeline.fingerprints import IGNORED
from hermes_plugin.source.database import SqliteStore

_PICK = st.integers(0, 1 << 16)
#: What follows a change: nothing (the next change comes first), or a run into the output
#: (compared with a fresh one), or two (the second reads nothing).
_THEN = st.sampled_from(["convert", "", "convert twice"])
#: The routing key of the one chat the gateway's sessions come from.
_CHAT = "agent:main:telegram:dm:1"
_CWDS = (None, "/home/u/alpha", "/home/u/beta")
_END_REASONS = ("cli_close", "agent_close", "session_reset", "new_session")
#: What Hermes does, by the name of the machine's method (``_<name>``) doing it; a new
#: session and a user's turn more often than the rest.
_HERMES_ACTIONS = (
    *("new_session", "user", "assistant", "tools", "usage", "restore") * 2,
    *("parts", "end", "reopen", "reset", "title", "row", "usage", "compress", "compact"),
    *("branch", "delegate", "rewind", "restore", "api_content", "delete", "rewrite", "vacuum"),
    *("reset_child", "start", "quit"),
)
#: Columns newer Hermes builds add to ``messages``.
_COLUMNS = (
    "_compressed_summary INTEGER NOT NULL DEFAULT 0",
    "display_kind TEXT",
    "message_uid TEXT DEFAULT 'u'",
)
_TEXT = st.sampled_from(["hello", "why?", "Ünïcode ✓", "", "line one\nline two", "x" * 300])


class _Reads:
    """How many sessions' message rows the host's process read (``-j 1``: every unit's)."""

    count = 0


def _tool_call(call_id: str, name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {
        "id": call_id,
        "call_id": call_id,
        "response_item_id": f"fc_{call_id}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _store_dir(out: Path) -> Path | None:
    """The one store's output directory (beside it, only the run's lock file)."""
    found = sorted(p for p in out.glob("hermes/*") if p.is_dir())
    assert len(found) <= 1, found
    return found[0] if found else None


def _files(store: Path | None) -> dict[str, bytes]:
    """Every file of a store's output directory but the two records, by relative path."""
    return {} if store is None else output_files(store, reports=False)


class StateMachine(RuleBasedStateMachine):
    clock: HermesClock
    reads: type[_Reads]

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="asf-state-"))
        self.home = self.root / "home"
        self.home.mkdir()
        self.db_path = self.home / "state.db"
        self.out = self.root / "out"
        self.clock.now = 1_790_000_000.0
        self.hermes: SessionDB | None = SessionDB(db_path=self.db_path)
        self.made = 0
        #: Every file a fresh conversion wrote in this example: what a stale file of the
        #: output (of a session deleted or moved since) may be.
        self.ever: set[str] = set()
        #: ``fingerprints.json`` was damaged: the next run warns of it in its report.
        self.damaged_records = False
        self.fresh_runs = 0
        #: ``report.json`` as a run before the last one left it.
        self.old_report = b""

    def teardown(self) -> None:
        try:
            if self.hermes is not None:
                self.hermes.close()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- helpers ----------------------------------------------------------------------------

    @contextmanager
    def _db(self) -> Iterator[SessionDB]:
        """Hermes' ``SessionDB``: the one running, else one opened for this change alone."""
        sdb = self.hermes or SessionDB(db_path=self.db_path)
        try:
            yield sdb
        except sqlite3.IntegrityError:  # a link to a row another program deleted: refused
            pass
        except sqlite3.OperationalError as exc:
            # Hermes' own write failing on a database other programs changed (met after columns
            # were added to messages behind its schema version, then a retry's DELETE): its
            # transaction rolls back, the database is as it was, asf's runs are still compared.
            if "no such table" not in str(exc):
                raise
        finally:
            if sdb is not self.hermes:
                sdb.close()

    def _sql(self, statement: str, *params: object) -> list[tuple[Any, ...]]:
        """A statement through a connection of another program (no ``SessionDB``)."""
        conn = sqlite3.connect(self.db_path, timeout=10)
        try:
            rows = conn.execute(statement, params).fetchall()
            conn.commit()
        finally:
            conn.close()
        return rows

    def _sessions(self) -> list[str]:
        return [r[0] for r in self._sql("SELECT id FROM sessions ORDER BY id")]

    def _pick(self, pick: int) -> str | None:
        ids = self._sessions()
        return ids[pick % len(ids)] if ids else None

    def _new_id(self) -> str:
        self.made += 1
        return f"s{self.made:03d}"

    def _text(self, base: str) -> str:
        self.made += 1
        return f"{base} #{self.made}"

    def _convert(self, out: Path, jobs: int) -> int:
        return main(["convert", str(self.home), "-o", str(out), "--quiet", "-j", str(jobs)])

    def _fresh(self) -> tuple[int, Path]:
        self.fresh_runs += 1
        fresh = self.root / f"fresh-{self.fresh_runs}"
        return self._convert(fresh, 1), fresh

    def _check(self, code: int, fresh_code: int, fresh: Path) -> None:
        """The output is what the fresh conversion wrote: every file it wrote, byte for byte,
        and the same report but for how the run went; any other file is a stale one (a
        session deleted or moved since is not deleted from the output), each named in the
        report."""
        assert code == fresh_code
        ours, theirs = _store_dir(self.out), _store_dir(fresh)
        assert (ours and ours.name) == (theirs and theirs.name)
        mine, new = _files(ours), _files(theirs)
        for name, data in new.items():
            assert mine.get(name) == data, f"{name} differs from a fresh conversion's"
        assert set(mine) - set(new) <= self.ever
        self.ever |= set(new)
        report, fresh_report = store_report(ours), store_report(theirs)
        if self.damaged_records:
            warned = [f for f in report["findings"] if f.get("code") == IGNORED]
            assert len(warned) == 1
            report["findings"].remove(warned[0])
            self.damaged_records = False
        if report:  # the stale files, each named in the report
            assert take_left(report) == {str(ours / name) for name in set(mine) - set(new)}
        assert report == fresh_report
        shutil.rmtree(fresh)

    def _active(self, sid: str, role: str | None = None) -> list[tuple[int, Any]]:
        where = " AND role = ?" if role else ""
        params = (sid, role) if role else (sid,)
        return [
            (r[0], r[1])
            for r in self._sql(
                f"SELECT id, content FROM messages WHERE session_id = ? AND active = 1{where}"
                " ORDER BY id",
                *params,
            )
        ]

    # -- converting -------------------------------------------------------------------------

    @initialize(sessions=st.integers(1, 3), turns=st.integers(0, 3))
    def a_home_converted_once(self, sessions: int, turns: int) -> None:
        """A few sessions Hermes wrote, converted once."""
        for n in range(sessions):
            self._new_session(n, n % 2 == 0)
        for n in range(turns):
            with self._db() as sdb:
                sid = self._sessions()[n % sessions]
                self._tools(sdb, sid, n, "ls", n % 2 == 1)
                self._assistant(sdb, sid, n, "done", n % 2 == 0)
        self.convert(1, again=False)

    def _then(self, then: str) -> None:
        if then:
            self.convert(1, again=then == "convert twice")

    @rule(jobs=st.sampled_from([1, 1, 1, 2]), again=st.booleans())
    def convert(self, jobs: int, again: bool) -> None:
        """Convert into the output, and compare with a fresh conversion; ``again``: a second
        run at once reads no conversation, writes no file, and leaves the output as it is."""
        store = _store_dir(self.out) if self.out.exists() else None
        if store is not None and (store / REPORT_NAME).is_file():
            self.old_report = (store / REPORT_NAME).read_bytes()
        code = self._convert(self.out, jobs)
        fresh_code, fresh = self._fresh()
        self._check(code, fresh_code, fresh)
        if again and code == 0:
            before = _files(_store_dir(self.out))
            reads = self.reads.count
            assert self._convert(self.out, 1) == 0
            assert self.reads.count == reads
            assert _files(_store_dir(self.out)) == before
            store = _store_dir(self.out)
            assert store is not None
            assert json.loads((store / REPORT_NAME).read_text())["files_written"] == 0

    # -- what Hermes does -------------------------------------------------------------------

    @rule(
        action=st.sampled_from(_HERMES_ACTIONS),
        pick=_PICK,
        which=_PICK,
        text=_TEXT,
        flag=st.booleans(),
        then=_THEN,
    )
    def hermes(self, action: str, pick: int, which: int, text: str, flag: bool, then: str) -> None:
        """Hermes does ``action`` to the session ``pick`` chooses (``which``, ``text`` and
        ``flag`` tell the details), through its own ``SessionDB``; or Hermes starts (its
        connection open: ``-wal`` and ``-shm`` beside the database) or quits (the database at
        rest)."""
        if action == "start" and self.hermes is None:
            self.hermes = SessionDB(db_path=self.db_path)
        elif action == "quit" and self.hermes is not None:
            self.hermes.close()
            self.hermes = None
        sid = self._pick(pick)
        if action == "new_session":
            self._new_session(which, flag)
        elif sid is not None and action not in ("start", "quit"):
            with self._db() as sdb:
                getattr(self, f"_{action}")(sdb, sid, which, text, flag)
        self._then(then)

    def _new_session(self, which: int, flag: bool) -> None:
        sid = self._new_id()
        source = ["cli", "cli", "telegram", "tool"][which % 4]
        with self._db() as sdb:
            sdb.create_session(
                sid,
                source,
                model=[None, "m/one", "m/two"][which % 3],
                model_config={"max_iterations": 90},
                system_prompt="You are Hermes." if flag else None,
                user_id="u-1" if source == "telegram" else None,
                session_key=_CHAT if source == "telegram" else None,
            )
            cwd = _CWDS[which % len(_CWDS)]
            if cwd:
                sdb.update_session_cwd(sid, cwd)
            sdb.append_message(sid, "user", self._text("first question"))

    def _user(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        if flag:  # with what was sent in its place (memory injected)
            sdb.append_message(sid, "user", self._text(text), api_content=f"[memory] {text}")
        else:
            sdb.append_message(sid, "user", self._text(text))

    def _parts(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        parts = [
            {"type": "text", "text": self._text(text)},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ]
        sdb.append_message(sid, "user", parts)

    def _assistant(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        thinking = {"reasoning": "thinking it over", "reasoning_content": ""} if flag else {}
        sdb.append_message(sid, "assistant", self._text(text), finish_reason="stop", **thinking)

    def _tools(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        calls = [self._text("call").replace(" #", "_") for _ in range(1 + which % 2)]
        sdb.append_message(
            sid,
            "assistant",
            "" if flag else None,
            tool_calls=[_tool_call(c, "terminal", {"cmd": text}) for c in calls],
            finish_reason="tool_calls",
        )
        for call in calls:
            sdb.append_message(
                sid,
                "tool",
                self._text("output"),
                tool_call_id=call,
                tool_name="terminal",
                effect_disposition="none",
            )

    def _end(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        sdb.end_session(sid, _END_REASONS[which % len(_END_REASONS)])

    def _reopen(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        sdb.reopen_session(sid)

    def _reset(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        sdb.promote_to_session_reset(sid, "idle")

    def _title(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        with suppress(ValueError):  # in use by another session: Hermes refuses it
            sdb.set_session_title(sid, ["Plans", "Pizza", "", "Trip #2"][which % 4])

    def _row(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        """A change to the session's row alone."""
        what = which % 6
        if what == 0:
            sdb.update_system_prompt(sid, self._text("You are Hermes, rebuilt."))
        elif what == 1:
            sdb.update_session_model(sid, self._text("m/switched"))
        elif what == 2:
            sdb.update_session_cwd(sid, _CWDS[which % 3] or "/home/u/gamma", git_branch="main")
        elif what == 3:
            sdb.update_session_meta(sid, json.dumps({"max_iterations": 12}))
        else:
            sdb.set_session_archived(sid, what == 4)

    def _usage(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        if flag:
            sdb.record_auxiliary_usage(sid, "title_generation", model="m/aux", input_tokens=7)
        else:
            sdb.update_token_counts(
                sid,
                input_tokens=which % 5000,
                output_tokens=which % 700,
                model="m/one",
                billing_provider="acme",
                api_call_count=1,
            )

    def _compress(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        """Compression by rotation: the session ends ``compression``, a continuation goes
        on from a summary."""
        child = self._new_id()
        row = sdb.get_session(sid) or {}
        sdb.end_session(sid, "compression")
        sdb.create_session(
            child,
            row.get("source") or "cli",
            model=row.get("model"),
            model_config=json.loads(row.get("model_config") or "{}"),
            system_prompt="You are Hermes.",
            parent_session_id=sid,
        )
        sdb.append_message(child, "user", self._text("[CONTEXT COMPACTION] summary"))
        sdb.append_message(child, "assistant", self._text(text), finish_reason="stop")

    def _compact(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        """Compression in place: the live rows archived, a summary inserted."""
        sdb.archive_and_compact(
            sid,
            [
                {"role": "user", "content": self._text("[CONTEXT COMPACTION] summary")},
                {"role": "assistant", "content": text, "finish_reason": "stop"},
            ],
        )

    def _branch(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        """/branch: the session ends ``branched``; a copy of its live rows goes on (with the
        marker of 0.17 on, or without as before)."""
        child = self._new_id()
        rows = self._sql(
            "SELECT role, content, tool_calls, tool_call_id, tool_name FROM messages"
            " WHERE session_id = ? AND active = 1 ORDER BY id",
            sid,
        )
        key = (sdb.get_session(sid) or {}).get("session_key")
        sdb.end_session(sid, "branched")
        sdb.create_session(
            child,
            "telegram" if key else "cli",
            model_config={"_branched_from": sid} if flag else {"max_iterations": 90},
            parent_session_id=sid,
            session_key=key,
        )
        for role, content, calls, call_id, tool_name in rows:
            sdb.append_message(
                child,
                role,
                SessionDB._decode_content(content),
                tool_calls=json.loads(calls) if calls else None,
                tool_call_id=call_id,
                tool_name=tool_name,
            )
        sdb.append_message(child, "user", self._text(text))

    def _delegate(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        """A sub-agent: the parent's ``delegate_task`` call, the child's run, the result."""
        child = self._new_id()
        call = self._text("call_de").replace(" #", "")
        sdb.append_message(
            sid,
            "assistant",
            "",
            tool_calls=[_tool_call(call, "delegate_task", {"goal": text})],
            finish_reason="tool_calls",
        )
        sdb.create_session(
            child, "subagent", model_config={"_delegate_from": sid}, parent_session_id=sid
        )
        sdb.append_message(child, "user", text)
        sdb.append_message(child, "assistant", self._text("Found it."), finish_reason="stop")
        if flag:
            sdb.end_session(child, "agent_close")
        sdb.append_message(
            sid, "tool", '{"result": "found"}', tool_call_id=call, tool_name="delegate_task"
        )

    def _reset_child(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        """A reset: the session ends at the boundary and a new one goes on, naming it (as
        Hermes' gateway does from schema 23 on)."""
        child = self._new_id()
        sdb.promote_to_session_reset(sid, "session_reset")
        sdb.create_session(
            child,
            "telegram",
            model_config={"_reset_from": sid},
            parent_session_id=sid,
            session_key=_CHAT,
        )
        sdb.append_message(child, "user", self._text(text))

    def _rewind(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        users = self._active(sid, "user")
        if users:
            sdb.rewind_to_message(sid, users[which % len(users)][0])

    def _restore(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        ids = [r[0] for r in self._sql("SELECT id FROM messages WHERE session_id = ?", sid)]
        if ids:
            sdb.restore_rewound(sid, sorted(ids)[which % len(ids)])

    def _api_content(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        """The sidecar backfilled onto the newest live user row."""
        users = self._active(sid, "user")
        if users:
            content = SessionDB._decode_content(users[-1][1])
            sdb.set_latest_user_api_content(sid, content, self._text("[prefetch] sent"))

    def _delete(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        sdb.delete_session(sid)

    def _rewrite(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        """/retry, /undo: every row (or the live ones) replaced, or all cleared."""
        if which % 3 == 0:
            sdb.clear_messages(sid)
        else:
            retry = [{"role": "user", "content": self._text(text)}]
            sdb.replace_messages(sid, retry, active_only=flag)

    def _vacuum(self, sdb: SessionDB, sid: str, which: int, text: str, flag: bool) -> None:
        sdb.vacuum()

    # -- what other programs do -------------------------------------------------------------

    @rule(
        action=st.sampled_from(["delegation", "column", "session_row", "content"]),
        pick=_PICK,
        which=_PICK,
        then=_THEN,
    )
    def another_program(self, action: str, pick: int, which: int, then: str) -> None:
        """Writes through a connection of another program:

        * ``delegation``: the async delegation tool's row for the session, added or moved on;
        * ``column``: a column added to ``messages`` as Hermes' reconciler adds one on a
          newer build's writable open, ``schema_version`` left behind (as when that build's
          FTS setup fails);
        * ``session_row``: a session row deleted alone, its message rows left behind;
        * ``content``: :meth:`_edit_content`.
        """
        sid = self._pick(pick)
        if action == "content":
            self._edit_content(which)
        elif action == "column":
            column = _COLUMNS[which % len(_COLUMNS)]
            if column.split()[0] not in [r[1] for r in self._sql("PRAGMA table_info(messages)")]:
                self._sql(f"ALTER TABLE messages ADD COLUMN {column}")
        elif sid is not None and action == "session_row":
            self._sql("DELETE FROM sessions WHERE id = ?", sid)
        elif sid is not None:
            now = self.clock.time()
            state = ["running", "completed", "error"][which % 3]
            self._sql(
                "INSERT INTO async_delegations (delegation_id, origin_session,"
                " parent_session_id, state, dispatched_at, updated_at)"
                " VALUES (?, 'agent:main:cli', ?, 'running', ?, ?)"
                " ON CONFLICT(delegation_id) DO UPDATE SET state = ?, updated_at = ?",
                f"d-{sid}",
                sid,
                now,
                now,
                state,
                now,
            )
        self._then(then)

    def _edit_content(self, which: int) -> None:
        """A message's content rewritten in place by another program (Hermes never does it).
        The fingerprints do not cover content: the next run writes each file's old bytes or
        the fresh conversion's, nothing else; with ``fingerprints.json`` deleted it converts
        everything again (docs/cli.md: "Delete it to force a full conversion")."""
        ids = [r[0] for r in self._sql("SELECT id FROM messages ORDER BY id")]
        if not ids:
            return
        self.convert(1, again=False)
        before = _files(_store_dir(self.out))
        self._sql(
            "UPDATE messages SET content = ? WHERE id = ?",
            self._text("rewritten elsewhere"),
            ids[which % len(ids)],
        )
        self._convert(self.out, 1)
        code, fresh = self._fresh()
        assert code == 0
        now = _files(_store_dir(self.out))
        for name, data in _files(_store_dir(fresh)).items():
            assert now.get(name) in (data, before.get(name)), name
        shutil.rmtree(fresh)
        store = _store_dir(self.out)
        assert store is not None
        (store / FINGERPRINTS_NAME).unlink()
        self.convert(1, again=False)

    # -- what users do to the output --------------------------------------------------------

    def _output_files(self) -> list[Path]:
        store = _store_dir(self.out) if self.out.exists() else None
        return sorted(store.rglob("*.jsonl")) if store is not None else []

    @rule(how=st.sampled_from(TAMPERING), pick=_PICK, then=_THEN)
    def user_tampers(self, how: str, pick: int, then: str) -> None:
        """A user does ``how`` to a session file ``pick`` chooses, or to a record."""
        store = _store_dir(self.out) if self.out.exists() else None
        files = sorted(store.rglob("*.jsonl")) if store is not None else []
        if store is not None and how.endswith(("_fingerprints", "_report")):
            action, which = how.split("_")
            record = store / (FINGERPRINTS_NAME if which == "fingerprints" else REPORT_NAME)
            if record.exists():
                damaged = tamper_with_record(record, action, self.old_report)
                if damaged is not None:
                    self.damaged_records = damaged
        elif files:
            path, other = files[pick % len(files)], files[(pick + 1) % len(files)]
            tamper_with_file(path, other, how)
        self._then(then)


@pytest.mark.slow
def test_an_incremental_run_writes_what_a_fresh_one_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = HermesClock()
    monkeypatch.setattr(hermes_state, "time", clock)
    cells = SqliteStore.message_cells

    def counted(self: SqliteStore, session_id: str) -> object:
        _Reads.count += 1
        return cells(self, session_id)

    monkeypatch.setattr(SqliteStore, "message_cells", counted)
    monkeypatch.setattr(StateMachine, "clock", clock, raising=False)
    monkeypatch.setattr(StateMachine, "reads", _Reads, raising=False)
    run_machine(StateMachine)
