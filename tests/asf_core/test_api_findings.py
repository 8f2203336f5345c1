"""``Store.converted`` of the Python API: every finding on the way comes once, where ``asf
convert`` reports it once (docs/library.md), on a real Hermes database with rows of no session."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from fixture_paths import SHARED

from asf_core import api
from asf_core.cli.main import main
from asf_core.findings import Finding

DB = SHARED / "hermes" / "fixtures" / "hermes-0.19.0" / "state.db"


def test_each_finding_comes_once_as_the_report_has_it(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    shutil.copyfile(DB, db)
    with sqlite3.connect(db) as con:  # two rows of a session the database does not hold
        for text in ("left behind", "and again"):
            con.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) "
                "VALUES ('gone', 'user', ?, 1796014690.5)",
                (text,),
            )
    con.close()
    stores, problems = api.find_stores(db)
    assert problems == []
    (store,) = stores
    found = [i for i in store.converted() if isinstance(i, Finding)]
    strays = [f for f in found if f.kind == "stray"]
    assert len(strays) == 2
    assert len({(f.unit, f.message) for f in found}) == len(found)
    assert main(["convert", str(db), "-o", str(tmp_path / "out"), "--quiet"]) == 0
    (report,) = (tmp_path / "out").rglob("report.json")
    assert sorted(s["unit"] for s in json.loads(report.read_text())["strays"]) == sorted(
        f.unit for f in strays
    )


def test_a_sessions_entries_read_twice_are_the_same(tmp_path: Path) -> None:
    """A converted session's entries are checked as they are pulled; a plugin's entries that
    can be read again (the Claude Code plugin's, read from the file each time) still can:
    counting them first left ``api.lines`` a file of its header alone."""
    stores, problems = api.find_stores(SHARED / "claude-code" / "home" / ".claude")
    assert problems == []
    for store in stores:
        for session in store.sessions():
            first = list(session.entries)
            assert first
            assert list(session.entries) == first
            assert len(list(api.lines(session))) == len(first) + 1
