"""``asf convert`` and ``asf list`` on damaged Hermes input: one line naming the file and what
is wrong, exit 2 (not "nobody recognises it", not a plugin failure), and the other databases of
the run still converted."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fixture_paths import HERMES_FIXTURES
from unprivileged import run_unprivileged

from asf_core.cli.main import ExitCode, main
from hermes_plugin import plugin
from hermes_plugin.source import sniff
from hermes_plugin.source.discovery import DAMAGED_SQLITE, NOT_HERMES, UNREADABLE, claims

RELEASE = HERMES_FIXTURES / "hermes-0.19.0"
DB = RELEASE / "state.db"
CUT = 20 * 1024


@pytest.fixture(autouse=True)
def _hermes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASF_PLUGINS", "hermes")


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def _home(root: Path) -> Path:
    """A copy of the 0.19.0 fixture home (a state.db and profiles/work/state.db)."""
    home = root / "home"
    (home / "profiles" / "work").mkdir(parents=True)
    shutil.copyfile(DB, home / "state.db")
    shutil.copyfile(RELEASE / "profiles/work/state.db", home / "profiles/work/state.db")
    return home


def _sqlite(path: Path, *tables: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    for table in tables:
        conn.execute(f"CREATE TABLE {table} (id TEXT)")
    conn.commit()
    conn.close()
    return path


def _random_bytes(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(random.Random(7).randbytes(64 * 1024))
    return path


def _cut(path: Path, size: int = CUT) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(DB.read_bytes()[:size])
    return path


def _empty(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def _directory(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _pipe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


#: name -> (make the bad input under a root and return the PATH to name, extra arguments,
#: the store the error names relative to the root, what is wrong).
CASES: dict[str, tuple[Callable[[Path], Path], tuple[str, ...], str, str]] = {
    "random bytes in a home": (
        lambda root: _random_bytes(root / "h" / "state.db").parent,
        (),
        "h/state.db",
        "not a SQLite database",
    ),
    "truncated copy with --format": (
        lambda root: _cut(root / "trunc.db"),
        ("--format", "hermes"),
        "trunc.db",
        f"truncated: {CUT} of {DB.stat().st_size} bytes",
    ),
    "truncated copy": (
        lambda root: _cut(root / "trunc.db"),
        (),
        "trunc.db",
        f"truncated: {CUT} of {DB.stat().st_size} bytes",
    ),
    "truncated state.db": (
        lambda root: _cut(root / "h" / "state.db"),
        (),
        "h/state.db",
        f"truncated: {CUT} of {DB.stat().st_size} bytes",
    ),
    "cut inside the header": (
        lambda root: _cut(root / "h" / "state.db", 40),
        (),
        "h/state.db",
        "truncated: 40 bytes, shorter than an SQLite header",
    ),
    "zero bytes": (
        lambda root: _empty(root / "h" / "state.db"),
        (),
        "h/state.db",
        "empty file (0 bytes): not a Hermes database",
    ),
    "state.db is a directory (named)": (
        lambda root: _directory(root / "h" / "state.db"),
        (),
        "h/state.db",
        "a directory, not a database file",
    ),
    "state.db is a directory (its home named)": (
        lambda root: _directory(root / "h" / "state.db").parent,
        (),
        "h/state.db",
        "a directory, not a database file",
    ),
    "a pipe named state.db (never opened)": (
        lambda root: _pipe(root / "h" / "state.db").parent,
        (),
        "h/state.db",
        "not a regular file",
    ),
    "not Hermes": (
        lambda root: _sqlite(root / "h" / "state.db", "notes").parent,
        (),
        "h/state.db",
        "no sessions or messages table: not a Hermes database",
    ),
    "no messages table": (
        lambda root: _sqlite(root / "state.db", "sessions"),
        (),
        "state.db",
        "no messages table: not a Hermes database",
    ),
}


@pytest.mark.parametrize("command", ["convert", "list"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_and_exit_2(
    case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make, extra, store, why = CASES[case]
    root = tmp_path / "in"
    root.mkdir()
    path = make(root)
    args: list[str | Path] = [command, path, *extra]
    if command == "convert":
        args += ["-o", tmp_path / "out", "--quiet"]
    code, stdout, stderr = _run(capsys, *args)
    assert (code, stderr) == (ExitCode.USAGE, f"asf: {root / store}: {why}\n")
    if command == "convert":
        (report,) = (json.loads(p.read_text()) for p in (tmp_path / "out").rglob("report.json"))
        assert (report["complete"], report["error"], report["format"]) == (False, why, "hermes")
    else:
        assert stdout == ""


def test_a_damaged_profile_does_not_stop_the_home(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _home(tmp_path)
    profile = _random_bytes(home / "profiles" / "work" / "state.db")
    out = tmp_path / "out"
    code, stdout, stderr = _run(capsys, "convert", home, "-o", out, "--json")
    assert (code, stderr) == (ExitCode.USAGE, f"asf: {profile}: not a SQLite database\n")
    run = json.loads(stdout)
    assert [(Path(s["path"]), s["complete"]) for s in run["stores"]] == [
        (home / "profiles/work/state.db", False),
        (home / "state.db", True),
    ]
    assert run["stores"][1]["sessions_written"] > 0
    code, stdout, stderr = _run(capsys, "list", home, "--json")
    assert (code, stderr) == (ExitCode.USAGE, f"asf: {profile}: not a SQLite database\n")
    listed = json.loads(stdout)
    assert [Path(s["path"]) for s in listed["stores"]] == [home / "state.db"]
    assert len(listed["stores"][0]["sessions"]) == run["stores"][1]["sessions_read"]


def _break_table(path: Path, table: str) -> None:
    """Overwrite the root page of a table: the schema still reads, the table does not."""
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with path.open("r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(b"\xa5" * page_size)


def test_damage_found_part_way_is_the_files_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _home(tmp_path)
    _break_table(home / "state.db", "sessions")
    assert sniff.problem(home / "state.db") is None  # whole: only SQLite can tell
    for command in (["list"], ["convert", "-o", str(tmp_path / "o")]):
        code, _, stderr = _run(capsys, *command, home / "state.db")
        assert code == ExitCode.USAGE
        assert stderr.startswith(f"asf: {home / 'state.db'}: cannot read the database: ")
        assert stderr.count("\n") == 1
        assert "plugin" not in stderr


def test_permission_denied(tmp_path: Path) -> None:
    """Run as a user the file is closed to: root without the capabilities that bypass file
    permissions (tests run as root), else the user the tests run as."""
    home = _home(tmp_path)
    database = home / "profiles" / "work" / "state.db"
    database.chmod(0)
    argv = [sys.executable, "-m", "asf_core.cli.main", "list", str(home)]
    done = run_unprivileged(argv, {**os.environ, "ASF_PLUGINS": "hermes"})
    assert (done.returncode, done.stderr) == (
        ExitCode.USAGE,
        f"asf: {database}: permission denied\n",
    )
    assert "profiles/work" not in done.stdout
    assert len(done.stdout.splitlines()) > 1


def test_claims_are_low_for_what_cannot_be_read(tmp_path: Path) -> None:
    home = _home(tmp_path)
    assert [(c.path, c.confidence) for c in claims(home)] == [
        (home / "state.db", 1.0),
        (home / "profiles/work/state.db", 1.0),
    ]
    cut = _cut(tmp_path / "h" / "state.db")
    assert [c.confidence for c in claims(cut)] == [UNREADABLE]
    assert [c.confidence for c in claims(_cut(tmp_path / "copy.db"))] == [DAMAGED_SQLITE]
    assert [c.confidence for c in claims(_empty(tmp_path / "e" / "state.db"))] == [NOT_HERMES]
    assert [c.confidence for c in claims(_directory(tmp_path / "d" / "state.db"))] == [NOT_HERMES]
    other = _sqlite(tmp_path / "o" / "state.db", "notes")
    assert [c.confidence for c in claims(other)] == [NOT_HERMES]
    # Under other names, only a damaged SQLite file is claimed.
    assert claims(_sqlite(tmp_path / "notes.db", "notes")) == []
    assert claims(_random_bytes(tmp_path / "noise.db")) == []
    assert plugin.discover(_empty(tmp_path / "empty.db")) is None


def test_a_tree_claims_its_homes_databases_and_damaged_ones_only(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    home = _home(tree)
    broken = _random_bytes(home / "profiles" / "zz" / "state.db")  # in a Hermes home
    cut = _cut(tree / "elsewhere" / "state.db")  # SQLite, unreadable: likely Hermes'
    _sqlite(tree / "app" / "state.db", "notes")  # another program's, readable
    _random_bytes(tree / "cache" / "state.db")  # not SQLite, in no Hermes home
    found = {c.path: c.confidence for c in claims(tree)}
    assert found == {
        home / "state.db": 1.0,
        home / "profiles/work/state.db": 1.0,
        broken: NOT_HERMES,
        cut: UNREADABLE,
    }
    # The home's database above the named directory is not claimed with it.
    assert {c.path for c in claims(home / "profiles")} == {home / "profiles/work/state.db", broken}


def test_format_hermes_on_a_file_it_cannot_claim_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    noise = _random_bytes(tmp_path / "noise.bin")  # not SQLite, not named state.db
    code, _, stderr = _run(capsys, "list", noise, "--format", "hermes")
    assert (code, stderr) == (ExitCode.NOTHING, f"asf: {noise}: not recognised as hermes\n")
    code, _, stderr = _run(capsys, "list", noise)
    assert (code, stderr) == (ExitCode.NOTHING, f"asf: {noise}: no format plugin recognises it\n")
