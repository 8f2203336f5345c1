"""One step of a database's life across Hermes upgrades, written by a real ``SessionDB``.

A user upgrades Hermes and the newer release opens the database the older one wrote: its
``SessionDB`` migrates it on open (columns added at the end, ``schema_version`` raised, data
migrations such as 0.17's ``_delegate_from`` stamps, 0.19's usage rows seeded from the session
totals) and writes on. Run once per release, oldest first, on the same database, each under an
interpreter that can ``import hermes_state``::

    python tests/hermes_migrations.py --generator shared/hermes/make_fixtures.py \\
        --db HOME/state.db --step N --out DIR/hermes-migration-N-<release>

Step 1 writes what every release can (tool calls, a background-review harness turn, a
compression chain, a /branch, a sub-agent, an untitled session with a tool row, a clock that
stepped back); later steps append, and use what their release brought (a rewind from 0.16, an
in-place compaction from 0.18). Each step then records the release's own readers (the oracle,
as ``make_fixtures.py`` does) and a copy of the database in ``--out``, so the fixture tests
read every step as a release directory.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from pathlib import Path
from typing import Any

from hermes_scenarios import Writer, load_generator

#: A background-review harness prompt (what builds before 0.18 wrote into real sessions).
HARNESS = "Review the conversation above and consider saving to memory. Save durable facts."


class Steps(Writer):
    """The writes of each step, through the release's ``SessionDB``."""

    def __init__(self, mf: Any, db: Any, path: Path) -> None:
        super().__init__(mf, db)
        self.path = path

    def tool(self, sid: str, call_id: str, n: int) -> Any:
        self.msg(sid, "user", f"run tool {n}")
        call = self.call(call_id, "terminal", {"command": f"echo {n}"})
        self.msg(sid, "assistant", "", finish_reason="tool_calls", tool_calls=[call])
        done = self.msg(sid, "tool", f"output {n}\n", tool_call_id=call_id, tool_name="terminal")
        self.msg(sid, "assistant", f"ran {n}", finish_reason="stop")
        return done

    def open(self, sid: str, **kw: Any) -> None:
        self.session(sid, "cli", "", **kw)

    def first(self) -> int:
        """Step 1; returns the id of the row whose time is set back."""
        self.open("mg-chat", model_config={"max_iterations": 90})
        self.turn("mg-chat", "hello", "hi")
        self.tool("mg-chat", "call_mg_chat1", 1)
        self.msg("mg-chat", "user", HARNESS)
        self.msg("mg-chat", "assistant", "Nothing to save.", finish_reason="stop")
        self.turn("mg-chat", "after the review", "ok")
        self.msg("mg-chat", "user", "delegate")
        call = self.call("call_mg_deleg1", "delegate_task", {"goal": "g"})
        self.msg("mg-chat", "assistant", "", finish_reason="tool_calls", tool_calls=[call])
        # Before 0.17 a sub-agent kept its parent's source and had no marker.
        self.open("mg-sub", parent_session_id="mg-chat")
        self.tool("mg-sub", "call_mg_sub001", 2)
        self.msg("mg-chat", "tool", "done g", tool_call_id="call_mg_deleg1")
        self.msg("mg-chat", "assistant", "delegated", finish_reason="stop")

        self.open("mg-c1")
        self.turn("mg-c1", "c1", "C1")
        self.tool("mg-c1", "call_mg_c1_001", 3)
        self.rec.call("end_session", "mg-c1", "compression")
        self.open("mg-c2", parent_session_id="mg-c1", system_prompt="continued")
        self.msg("mg-c2", "user", self.mf.SUMMARY_TEXT)
        self.turn("mg-c2", "c2", "C2")

        self.open("mg-bp")
        self.turn("mg-bp", "b", "B")
        self.rec.call("end_session", "mg-bp", "branched")
        self.open("mg-bc", parent_session_id="mg-bp", model_config={"max_iterations": 90})
        self.msg("mg-bc", "user", "b")
        self.msg("mg-bc", "assistant", "B")
        self.turn("mg-bc", "on the branch", "ok")

        self.open("mg-untitled")  # 0.17 stamps it "__orphaned__": untitled, a tool row
        self.tool("mg-untitled", "call_mg_unt001", 4)
        self.open("mg-clock")
        return int(self.tool("mg-clock", "call_mg_clock1", 5))

    def later(self, step: int) -> None:
        """A later step: append, and what the release brought (rewind, compaction)."""
        self.turn("mg-chat", f"step {step}", f"S{step}")
        self.turn("mg-clock", f"step {step}", f"K{step}")
        self.turn("mg-c2", f"step {step}", f"C{step}")
        if self.rec.has("archive_and_compact") and not self.compacted():
            kept = [{"role": "user", "content": f"step {step}"}]
            summary = [{"role": "user", "content": self.mf.SUMMARY_TEXT}]
            self.rec.call("archive_and_compact", "mg-chat", [*summary, *kept])
            self.msg("mg-chat", "user", HARNESS)
            self.msg("mg-chat", "assistant", "Saved nothing.", finish_reason="stop")
        elif self.rec.has("rewind_to_message") and not self.rewound():
            target = self.turn("mg-chat", "taken back", "gone")
            self.rec.call("rewind_to_message", "mg-chat", target)
        self.turn("mg-chat", f"after step {step}", "fine")

    def _count(self, sql: str) -> int:
        with sqlite3.connect(str(self.path)) as conn:
            return int(conn.execute(sql).fetchone()[0])

    def compacted(self) -> bool:
        return self._count("SELECT count(*) FROM messages WHERE compacted = 1") > 0

    def rewound(self) -> bool:
        return self._count("SELECT count(*) FROM messages WHERE active = 0") > 0


def intents(path: Path) -> dict[str, str]:
    """Each session's intent in the fixture generator's words (what the relation tests read):
    the sub-agent is unmarked until 0.17's migration stamps its parent on it."""
    with sqlite3.connect(str(path)) as conn:
        rows = conn.execute("SELECT id, model_config FROM sessions ORDER BY id").fetchall()
    words = {"mg-c2": "compression continuation", "mg-bc": "/branch child, no marker"}
    out = {}
    for sid, config in rows:
        if sid == "mg-sub":
            marked = "_delegate_from" in (config or "")
            out[sid] = "delegate sub-agent" + ("" if marked else ", unmarked")
        else:
            out[sid] = words.get(sid, "root conversation written across Hermes upgrades")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generator", required=True, type=Path)
    parser.add_argument("--db", required=True, type=Path)
    parser.add_argument("--step", required=True, type=int)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    mf = load_generator(args.generator.resolve())
    os.environ["HERMES_HOME"] = str(args.db.parent)
    import hermes_state

    db = hermes_state.SessionDB(db_path=args.db)
    steps = Steps(mf, db, args.db)
    try:
        late = steps.first() if args.step == 1 else None
        if args.step > 1:
            steps.later(args.step)
    finally:
        db.close()
    if late is not None:  # the clock stepped back: a result stamped before its call
        with sqlite3.connect(str(args.db)) as conn:
            conn.execute("UPDATE messages SET timestamp = timestamp - 3600 WHERE id = ?", (late,))
    with sqlite3.connect(str(args.db)) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY id")]
        stamped = [r[0] for r in conn.execute("SELECT version FROM schema_version")]
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    mf.record_oracle(hermes_state.SessionDB, args.db, out, ids)
    mf.finish_db(args.db, out / "state.db")
    mf.jdump(
        out / "manifest.json",
        {
            "generator": "tests/hermes_migrations.py",
            "step": args.step,
            "schema_version_rows": stamped,
            "journal_mode": journal,
            "sessions": intents(out / "state.db"),
            "skipped_methods": sorted(set(steps.rec.skipped)),
            "failed_writes": steps.rec.failed,
        },
    )


if __name__ == "__main__":
    main()
