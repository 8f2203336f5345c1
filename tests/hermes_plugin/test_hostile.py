"""One bad cell, session, row or folder costs only itself (issue 12, the Hermes plugin's half).

Each test damages a copy of the 0.19.0 fixture database the way a foreign or broken writer
could, runs ``asf convert`` and ``asf list`` as a user would, and checks that the run succeeds
without a traceback, that every file written verifies, that every row is accounted for, and
that every conversation the damage does not touch is byte for byte what an undamaged
conversion writes.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cpu_clock import cpu_seconds
from fixture_paths import HERMES_FIXTURES
from hermes_damage import Run, affected, asf, check_accounting, copy_database, files_of
from hermes_sql_seeds import untyped

from asf_core.cli.main import ExitCode
from hermes_plugin.convert import database as convert_database
from hermes_plugin.convert.database import convert_store
from hermes_plugin.convert.segments import GroupBuilder
from hermes_plugin.source.database import SqliteStore
from hermes_plugin.source.discovery import find_databases
from hermes_plugin.source.jsontext import MAX_DEPTH

RELEASE = HERMES_FIXTURES / "hermes-0.19.0"
DEEP = 1200
T0 = 1_790_000_000.0


@pytest.fixture(autouse=True)
def _hermes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASF_PLUGINS", "hermes")


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The undamaged database's conversion, each session's bytes by name."""
    root = tmp_path_factory.mktemp("baseline")
    db = copy_database(RELEASE, "state.db", root / "home")
    run = asf("convert", db, "-o", root / "out")
    assert run.code == ExitCode.OK, run.err
    return files_of(run.store)


def _damaged(tmp_path: Path, *sql: str, params: tuple[Any, ...] = ()) -> Path:
    db = copy_database(RELEASE, "state.db", tmp_path / "home")
    conn = sqlite3.connect(db)
    for statement in sql:
        conn.execute(statement, params if "?" in statement else ())
    conn.commit()
    conn.close()
    for side in ("-wal", "-shm"):  # as Hermes leaves a database it closed
        Path(f"{db}{side}").unlink(missing_ok=True)
    return db


def _converted(db: Path, out: Path) -> tuple[Run, dict[str, bytes]]:
    run = asf("convert", db, "-o", out)
    assert "Traceback" not in run.err
    assert run.code == ExitCode.OK, run.err
    verified = asf("verify", run.store["output"])
    assert verified.code == ExitCode.OK, verified.doc.get("findings")
    files = files_of(run.store)
    check_accounting(db, run.store, files)
    return run, files


def _others_unchanged(baseline: dict[str, bytes], files: dict[str, bytes], *units: str) -> set[str]:
    """Every conversation the damaged rows do not touch is written exactly as before; the
    touched ones are returned."""
    touched = affected(baseline, [f"state.db:{u}" for u in units])
    assert touched, units
    for name, data in baseline.items():
        if name not in touched:
            assert files.get(name) == data, name
    return touched


def _warnings(run: Run, unit: str) -> list[str]:
    return [f["message"] for f in run.store["findings"] if f.get("unit") == f"state.db:{unit}"]


def _one_bad_cell(
    tmp_path: Path, baseline: dict[str, bytes], column: str, row: int, text: str
) -> tuple[Run, dict[str, bytes], str]:
    """Convert with one message cell damaged; check it costs only its conversation, and
    return the run, its files and the row's one warning."""
    db = _damaged(tmp_path, f"UPDATE messages SET {column} = ? WHERE id = {row}", params=(text,))
    run, files = _converted(db, tmp_path / "out")
    assert run.store["strays"] == []
    _others_unchanged(baseline, files, f"messages/{row}")
    (warning,) = _warnings(run, f"messages/{row}")
    assert column in warning
    listed = asf("list", db)
    assert "Traceback" not in listed.err
    assert listed.code == ExitCode.OK
    return run, files, warning


# -- numbers JSON can spell but no double holds ----------------------------------------------

HUGE = ["1e400", "-1e999", "1" + "0" * 400]

CELLS = [
    (
        "tool_calls",
        6,
        '[{{"id": "c1", "type": "function", "function": {{"name": "t", '
        '"arguments": {{"n": {n}}}}}}}]',
    ),
    ("reasoning_details", 23, '[{{"type": "reasoning.text", "text": "x", "n": {n}}}]'),
    ("codex_reasoning_items", 29, '[{{"type": "reasoning", "id": "rs_1", "n": {n}}}]'),
    ("content", 16, '\x00json:[{{"type": "text", "text": "hi", "n": {n}}}]'),
]


@pytest.mark.parametrize("number", HUGE)
@pytest.mark.parametrize(("column", "row", "cell"), CELLS, ids=[c[0] for c in CELLS])
def test_a_number_no_double_holds_costs_only_its_cell(
    tmp_path: Path, baseline: dict[str, bytes], column: str, row: int, cell: str, number: str
) -> None:
    text = cell.format(n=number)
    _, files, warning = _one_bad_cell(tmp_path, baseline, column, row, text)
    assert "double range" in warning
    # The cell is kept as its text, exactly.
    kept = text.replace('"', '\\"').replace("\x00", "\\u0000").encode()
    assert any(kept in data for data in files.values())


def test_a_huge_number_in_session_json_costs_only_its_cell(
    tmp_path: Path, baseline: dict[str, bytes]
) -> None:
    db = _damaged(
        tmp_path,
        """UPDATE sessions SET model_config = '{"reasoning_config": {"effort": 1e400}}'
           WHERE id = 'fx-reasoning'""",
    )
    run, files = _converted(db, tmp_path / "out")
    _others_unchanged(baseline, files, "sessions/fx-reasoning")
    assert any("double range" in w for w in _warnings(run, "sessions/fx-reasoning"))


# -- nesting deeper than the interpreter's recursion limit ----------------------------------


@pytest.mark.parametrize(
    ("column", "row", "prefix"),
    [
        ("codex_reasoning_items", 29, ""),
        ("reasoning_details", 23, ""),
        ("content", 16, "\x00json:"),
    ],
)
def test_json_nested_past_the_recursion_limit_costs_only_its_cell(
    tmp_path: Path, baseline: dict[str, bytes], column: str, row: int, prefix: str
) -> None:
    text = prefix + "[" * DEEP + "]" * DEEP
    warning = _one_bad_cell(tmp_path, baseline, column, row, text)[2]
    assert f"deeper than {MAX_DEPTH}" in warning


def _add_sessions(db: Path, rows: list[tuple[str, str, str | None, float, str | None]]) -> None:
    """Sessions (id, source, parent, start, end reason), each with a user and an assistant
    message."""
    conn = sqlite3.connect(db)
    for sid, source, parent, start, end in rows:
        conn.execute(
            "INSERT INTO sessions (id, source, model, parent_session_id, started_at, ended_at,"
            " end_reason) VALUES (?, ?, 'm', ?, ?, ?, ?)",
            (sid, source, parent, start, start + 5, end),
        )
        for n, role in enumerate(("user", "assistant")):
            conn.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                (sid, role, f"{role} of {sid}", start + 1 + n),
            )
    conn.commit()
    conn.close()


def test_a_sub_agent_lineage_deeper_than_the_recursion_limit(
    tmp_path: Path, baseline: dict[str, bytes]
) -> None:
    db = _damaged(tmp_path)
    chain = [
        (
            f"deep-{i:04}",
            "subagent" if i else "cli",
            f"deep-{i - 1:04}" if i else None,
            T0 + i,
            None,
        )
        for i in range(DEEP)
    ]
    _add_sessions(db, chain)
    run = asf("convert", db, "-o", tmp_path / "out")
    assert "Traceback" not in run.err
    assert run.code == ExitCode.OK, run.err
    files = files_of(run.store)
    check_accounting(db, run.store, files)
    assert len(files) == len(baseline) + DEEP
    assert all(files[name] == data for name, data in baseline.items())
    assert asf("list", db).code == ExitCode.OK


def test_a_parent_cycle_converts_each_session_once(
    tmp_path: Path, baseline: dict[str, bytes]
) -> None:
    db = _damaged(tmp_path)
    _add_sessions(
        db, [(f"ring-{i}", "cli", f"ring-{(i + 1) % 3}", T0 + i, "compression") for i in range(3)]
    )
    run, files = _converted(db, tmp_path / "out")
    assert all(files[name] == data for name, data in baseline.items())
    assert _warnings(run, "sessions/ring-0") == [
        "its parent link closes a cycle; converted as a root"
    ]


def _chain_seconds(tmp_path: Path, segments: int) -> float:
    db = _damaged(tmp_path / str(segments))
    chain = [
        (f"seg-{i:05}", "cli", f"seg-{i - 1:05}" if i else None, T0 + 10 * i, "compression")
        for i in range(segments)
    ]
    _add_sessions(db, chain)
    best = float("inf")
    for _ in range(2):  # the best of two
        with SqliteStore(db, name="state.db") as store:
            seconds, units = cpu_seconds(lambda: list(convert_store(store)))
        best = min(best, seconds)
    assert segments in [u.counts.get("session_rows") for u in units if hasattr(u, "counts")]
    return best


def test_a_continuation_chain_converts_in_linear_time(tmp_path: Path) -> None:
    """4x the segments take about 4x the time (it was quadratic: 16x)."""
    small, large = _chain_seconds(tmp_path, 500), _chain_seconds(tmp_path, 2000)
    assert large < 8 * small, (small, large)


def _deep_tree(root: Path, depth: int) -> list[Path]:
    """A folder ``depth`` levels deep (made without recursion); every level, deepest first."""
    levels = [root]
    for _ in range(depth):
        levels.append(levels[-1] / "d")
        levels[-1].mkdir(parents=True)
    return levels[::-1]


def test_a_folder_tree_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    """``discover`` walks folders without recursion: a healthy home beside a tree 1000 levels
    deep is still found and converted."""
    levels = _deep_tree(tmp_path / "tree" / "deep", 1000)
    try:
        (levels[0] / "state.db").write_bytes(b"")  # at the bottom, not Hermes'
        db = copy_database(RELEASE, "state.db", tmp_path / "tree" / "home")
        assert find_databases(tmp_path / "tree") == [levels[0] / "state.db", db]
        run = asf("convert", tmp_path / "tree", "-o", tmp_path / "out")
        assert "Traceback" not in run.err
        assert [s["path"] for s in run.doc["stores"] if s["complete"]] == [str(db)]
    finally:
        (levels[0] / "state.db").unlink(missing_ok=True)
        for level in levels[:-1]:
            level.rmdir()


def _unsearchable(root: Path) -> Path:
    """A folder whose path is too long for the system to name (made through directory
    descriptors, as nothing else can): listing it fails even for root."""
    import os

    name = "n" * 200
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    depth = 0
    try:
        while len(str(root)) + depth * (len(name) + 1) < 4200:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd, depth = inner, depth + 1
    finally:
        os.close(fd)
    return root.joinpath(*[name] * depth)


def test_a_folder_that_cannot_be_searched_is_one_line_and_the_rest_converts(
    tmp_path: Path,
) -> None:
    (tmp_path / "tree" / "long").mkdir(parents=True)
    _unsearchable(tmp_path / "tree" / "long")
    db = copy_database(RELEASE, "state.db", tmp_path / "tree" / "home")
    run = asf("convert", tmp_path / "tree", "-o", tmp_path / "out")
    assert run.code == ExitCode.OK, run.err
    warning = [line for line in run.err.splitlines() if "cannot search" in line]
    assert len(warning) == 1, run.err
    assert run.err.splitlines() == warning, run.err
    assert warning[0].startswith(f"asf: {tmp_path / 'tree' / 'long'}/nnn")
    assert warning[0].endswith(": cannot search this folder: file name too long; skipped")
    assert [s["path"] for s in run.doc["stores"] if s["complete"]] == [str(db)]
    assert run.doc["warnings"] == [warning[0].removeprefix("asf: ")]
    assert run.doc["errors"] == []
    listed = asf("list", tmp_path / "tree")
    assert listed.code == ExitCode.OK
    assert listed.err == run.err


# -- a conversation that cannot be converted ------------------------------------------------


def _failing(unit: str) -> Callable[..., Any]:
    render = GroupBuilder._render

    def failing(self: GroupBuilder, message: Any, *args: Any) -> Any:
        if message.unit == unit:
            raise RuntimeError("a bug met on this row")
        return render(self, message, *args)

    return failing


@pytest.mark.parametrize(
    ("row", "root"), [("messages/6", "fx-tools"), ("messages/68", "fx-delegate-parent")]
)
def test_a_conversation_that_fails_costs_only_itself(
    tmp_path: Path,
    baseline: dict[str, bytes],
    monkeypatch: pytest.MonkeyPatch,
    row: str,
    root: str,
) -> None:
    """An unexpected error converting one conversation: its rows are kept as stored in its
    file, one stray says why, every other conversation is written as before."""
    db = _damaged(tmp_path)
    monkeypatch.setattr(GroupBuilder, "_render", _failing(f"state.db:{row}"))
    run, files = _converted(db, tmp_path / "out")
    (stray,) = [s for s in run.store["strays"] if s["unit"] == f"state.db:sessions/{root}"]
    assert "RuntimeError: a bug met on this row" in stray["message"]
    assert len(run.store["strays"]) == 1
    kept = files[root]
    assert b'"reason":"unconverted"' in kept
    assert b'"kept":true' in kept
    assert _others_unchanged(baseline, files, row) >= {root}


def test_a_conversation_whose_ids_cannot_be_computed_costs_only_itself(
    tmp_path: Path, baseline: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    realize = convert_database._Run._realize

    def failing(self: Any, frame: Any, builder: Any) -> Any:
        if frame.root == "fx-comp-1":
            raise ValueError  # no message: the stray names the error's type alone
        return realize(self, frame, builder)

    monkeypatch.setattr(convert_database._Run, "_realize", failing)
    db = _damaged(tmp_path)
    run, files = _converted(db, tmp_path / "out")
    (stray,) = run.store["strays"]
    assert stray["unit"] == "state.db:sessions/fx-comp-1"
    assert stray["message"].startswith("conversation not converted (ValueError); ")
    assert files["fx-comp-1"].count(b'"kind":"session","reason":"unconverted"') == 3
    sql = (
        "SELECT count(*) FROM messages WHERE session_id IN ('fx-comp-1', 'fx-comp-2', 'fx-comp-3')"
    )
    (rows,) = sqlite3.connect(db).execute(sql).fetchone()
    assert run.store["counts"]["aside_unconverted"] == rows > 0
    assert all(files[n] == d for n, d in baseline.items() if n != "fx-comp-1")


def test_the_error_a_conversation_failed_on_is_reported_as_one_short_line() -> None:
    failure = convert_database._failure
    assert failure(ValueError("no ids\n  for   this")) == "ValueError: no ids for this"
    assert failure(ValueError()) == "ValueError"
    long = failure(RuntimeError("x" * 500))
    assert long == f"RuntimeError: {'x' * 183}..."
    assert len(long) == 200


# -- accounting: one stray per row, in convert and in list ----------------------------------


def test_an_unreadable_session_row_and_its_orphans_are_one_stray_each(
    tmp_path: Path, baseline: dict[str, bytes]
) -> None:
    db = _damaged(
        tmp_path,
        "PRAGMA ignore_check_constraints = 1",
        "UPDATE sessions SET id = x'00ff' WHERE id = 'fx-plain'",
    )
    orphans = (
        sqlite3.connect(db)
        .execute("SELECT count(*) FROM messages WHERE session_id = 'fx-plain'")
        .fetchone()[0]
    )
    run, files = _converted(db, tmp_path / "out")
    listed = asf("list", db)
    assert listed.code == ExitCode.OK
    converted_strays = run.store["strays"]
    assert len(converted_strays) == 1 + orphans
    assert len({s["unit"] for s in converted_strays}) == len(converted_strays)
    assert sum(listed.store["findings"].values()) >= 1
    assert listed.store["findings"].get("stray") == len(converted_strays)
    assert all(files[n] == d for n, d in baseline.items() if n != "fx-plain")


# -- found by the SQL damage fuzzer (tests/hermes_sql_fuzz.py) ------------------------------


@pytest.mark.parametrize(
    ("column", "row", "cell"),
    [
        ("reasoning_details", 23, '{"\\ud800": 1, "\\ufffd": 2}'),
        ("codex_message_items", 29, '[{"\\ud800": 1, "\\ufffd": 2}]'),
        ("content", 16, '\x00json:[{"type": "text", "text": {"\\ud800": 1, "\\ufffd": 2}}]'),
    ],
)
def test_member_names_that_collide_once_made_valid_cost_only_their_cell(
    tmp_path: Path, baseline: dict[str, bytes], column: str, row: int, cell: str
) -> None:
    """Fuzz cases 50, 54, 335: ``"\\ud800"`` and ``"\\ufffd"`` as names of one object are one
    name once the lone surrogate is replaced; the writer refused the entry and the whole
    conversation was kept raw. Such a cell is now kept as its text."""
    assert "lone surrogate" in _one_bad_cell(tmp_path, baseline, column, row, cell)[2]


def test_a_message_naming_the_empty_session_is_one_orphan(
    tmp_path: Path, baseline: dict[str, bytes]
) -> None:
    """Fuzz case 457: a row whose ``session_id`` is ``''`` was counted twice in the row
    accounting (in row_counts' groups and as naming no session)."""
    db = _damaged(tmp_path, "UPDATE messages SET session_id = '' WHERE id = 4")
    run, files = _converted(db, tmp_path / "out")
    assert [s["unit"] for s in run.store["strays"]] == ["state.db:messages/4"]
    _others_unchanged(baseline, files, "messages/4")


def test_message_rows_without_ids_in_two_sessions_are_named_apart(tmp_path: Path) -> None:
    """Fuzz case 5: in a schema where ``messages.id`` may be NULL, a row without an id was named
    by its place in its session alone (``messages/#0``), so two sessions' rows shared a name."""
    db = _damaged(tmp_path)
    untyped(db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE messages SET id = NULL WHERE id IN (1, 6)")  # fx-plain, fx-tools
    conn.commit()
    conn.close()
    run, _ = _converted(db, tmp_path / "out")
    units = sorted(s["unit"] for s in run.store["strays"])
    assert units == ["state.db:messages/#0@fx-plain", "state.db:messages/#0@fx-tools"]


def test_gateway_origin_nested_past_the_recursion_limit_costs_nothing(
    tmp_path: Path, baseline: dict[str, bytes]
) -> None:
    """Long-run case 192: ``origin_json`` (read for the values a redacting host replaces)
    nested 1200 deep raised RecursionError for the whole store (exit 3)."""
    deep = "[" * DEEP + "]" * DEEP
    db = _damaged(
        tmp_path, "UPDATE sessions SET origin_json = ? WHERE id = 'fx-gateway'", params=(deep,)
    )
    run, files = _converted(db, tmp_path / "out")
    assert run.store["strays"] == []
    _others_unchanged(baseline, files, "sessions/fx-gateway")


def test_an_infinite_number_as_content_costs_only_its_cell(
    tmp_path: Path, baseline: dict[str, bytes]
) -> None:
    """Long-run case 1763: a REAL content cell holding -infinity was carried into the item as
    a number no JSON holds, and the conversation was kept raw; it now reads as its text. (In
    Hermes' schema the column's text affinity turns the number into text.)"""
    db = _damaged(tmp_path)
    untyped(db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE messages SET content = -1e999 WHERE id = 16")
    conn.commit()
    conn.close()
    run, files = _converted(db, tmp_path / "out")
    assert run.store["strays"] == []
    _others_unchanged(baseline, files, "messages/16")
    assert _warnings(run, "messages/16") == ["content: float -inf, not text"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_home_under_a_name_that_is_not_utf8(
    tmp_path: Path, baseline: dict[str, bytes], jobs: str
) -> None:
    """A folder name whose bytes are not UTF-8 (Python holds them as lone surrogates): the
    database is opened by its own bytes, listed, converted as anywhere else, and found
    unchanged the next time."""
    home = tmp_path / os.fsdecode(b"h\xff")
    db = copy_database(RELEASE, "state.db", home)
    listed = asf("list", home)
    assert listed.code == ExitCode.OK, listed.err
    plain = asf("list", copy_database(RELEASE, "state.db", tmp_path / "plain").parent)
    assert [s["id"] for s in listed.store["sessions"]] == [s["id"] for s in plain.store["sessions"]]
    out = tmp_path / "out"
    run = asf("convert", db, "-o", out, "-j", jobs)
    assert run.code == ExitCode.OK, run.err
    assert files_of(run.store) == baseline
    again = asf("convert", db, "-o", out, "-j", jobs)
    assert again.code == ExitCode.OK, again.err
    assert (again.store["files_written"], again.store["files_unchanged"]) == (0, len(baseline))
