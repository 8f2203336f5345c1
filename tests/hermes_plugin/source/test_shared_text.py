"""Session rows are held for a whole run: equal long text cells (Hermes writes the same
system prompt into session after session) are one string in memory, read as they are."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from fixture_paths import SHARED

from hermes_plugin.source.database import SqliteStore

FIXTURE = SHARED / "hermes" / "fixtures" / "hermes-0.19.0" / "state.db"


def test_equal_long_prompts_are_one_string_and_read_as_stored(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    shutil.copyfile(FIXTURE, db)
    prompt = "You are Hermes. " + "Ünïcödé tools, memory and skills. " * 40
    with sqlite3.connect(db) as conn:  # a copy of a real database, written as Hermes would
        ids = [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY id")]
        assert len(ids) >= 3
        conn.execute("UPDATE sessions SET system_prompt = ?", (prompt,))
        conn.execute("UPDATE sessions SET system_prompt = ? WHERE id = ?", ("short", ids[0]))
        conn.execute("UPDATE sessions SET system_prompt = ? WHERE id = ?", (prompt + "!", ids[1]))
    conn.close()
    store = SqliteStore(db)
    try:
        sessions, _ = store.sessions()
    finally:
        store.close()
    cells = {s.id: s.cols.get("system_prompt") for s in sessions}
    assert cells[ids[0]] == "short"
    assert cells[ids[1]] == prompt + "!"
    same = [cells[i] for i in ids[2:]]
    assert all(c == prompt for c in same)
    assert len({id(c) for c in same}) == 1  # one string, not one per session
    assert cells[ids[1]] is not same[0]
    assert [s.system_prompt for s in sessions if s.id in ids[2:]] == same
