"""``asf list``'s table (asf_core/cli/listing.py) on copies of the example Hermes home: the
RELATION column says nothing for a session of its own, a blank title gives way to the
quoted preview, and "no session matches" answers only a pick that left nothing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fixture_homes import EXAMPLE, copy_home
from terminal_output import screen_columns

from asf_core.cli.main import ExitCode, main


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def _database(tmp_path: Path, *statements: str) -> Path:
    """The example home's own ``state.db`` (not its profiles'), copied, ``statements`` run."""
    db = copy_home(EXAMPLE, tmp_path) / "state.db"
    with sqlite3.connect(db) as con:
        for statement in statements:
            con.execute(statement)
    con.close()
    return db


def _sessions(capsys: pytest.CaptureFixture[str], db: Path) -> list[dict[str, Any]]:
    code, stdout, _ = _run(capsys, "list", db, "--json")
    assert code == ExitCode.OK
    (store,) = json.loads(stdout)["stores"]
    return list(store["sessions"])


def _table(capsys: pytest.CaptureFixture[str], db: Path) -> dict[str, dict[str, str]]:
    """Each line of the table (not a terminal: whole lines) by id, cut into its columns at the
    positions of the heading's words."""
    code, stdout, _ = _run(capsys, "list", db)
    assert code == ExitCode.OK
    head, *lines = stdout.splitlines()
    names = head.split()
    starts = [head.index(name) for name in names]
    ends = [*starts[1:], None]
    rows = [
        {n: line[s:e].strip() for n, s, e in zip(names, starts, ends, strict=True)}
        for line in lines
    ]
    return {row["ID"]: row for row in rows}


def test_a_root_session_shows_no_relation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "root" says nothing beyond "a session of its own": left blank; other relations shown."""
    db = _database(tmp_path)
    relations = {s["id"]: s["relation"] for s in _sessions(capsys, db)}
    assert "root" in relations.values()
    assert set(relations.values()) - {"root"}  # the premise: other relations to show too
    table = _table(capsys, db)
    assert {i: row["RELATION"] for i, row in table.items()} == {
        i: "" if r == "root" else r for i, r in relations.items()
    }


def test_a_blank_title_gives_way_to_the_preview(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A title of whitespace only is no title: the first user message is shown, quoted."""
    db = _database(tmp_path, "UPDATE sessions SET title = ' \t ' WHERE id = 'fx-plain'")
    listed = {s["id"]: s for s in _sessions(capsys, db)}
    assert listed["fx-plain"]["title"] == " \t "
    preview = listed["fx-plain"]["preview"]
    assert preview.strip()
    assert _table(capsys, db)["fx-plain"]["TITLE"] == f'"{preview}"'


def test_no_session_matches_only_after_a_pick(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store without sessions lists nothing, silently; a pick that leaves none says so."""
    db = _database(tmp_path, "DELETE FROM messages", "DELETE FROM sessions")
    assert _sessions(capsys, db) == []
    assert _run(capsys, "list", db) == (ExitCode.OK, "", "")
    code, stdout, stderr = _run(capsys, "list", db, "--min-rows", "1")
    assert (code, stdout) == (ExitCode.OK, "")
    assert stderr == "asf: no session matches --min-rows 1\n"


@pytest.mark.parametrize("columns", [None, "60", "100"])
def test_a_wide_store_label_keeps_the_columns_in_line(
    columns: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A profile named in Chinese (its label ``h/工作项目``, four characters in eight
    columns) is padded to the columns it takes: every title starts in the heading's
    TITLE column, and a line cut to ``$COLUMNS`` fits it. Cells were padded to their
    characters, so the titles after a wide label stood four columns to the right and a cut
    line overflowed by as many."""
    home = copy_home(EXAMPLE, tmp_path).rename(tmp_path / "h")
    (home / "profiles" / "work").rename(home / "profiles" / "工作项目")
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    code, stdout, _ = _run(capsys, "list", home, "-n", "3")
    assert code == ExitCode.OK
    head, *lines = stdout.splitlines()
    assert any("工作" in line for line in lines)
    title_at = screen_columns(head[: head.index("TITLE")])
    for line in lines:
        before, _ = line.rsplit("  ", 1)
        assert screen_columns(before) + 2 == title_at, line
        assert columns is None or screen_columns(line) <= int(columns), line
