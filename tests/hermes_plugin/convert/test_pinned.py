"""A database at rest is read in place, pinned: when Hermes comes by and its last connection
checkpoints into the database part way through a conversion, the conversion starts again and
gives what a conversion of the new state gives, whether the host or a worker saw the change.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fixture_paths import SHARED
from hermes_homes import WRITTEN_WHILE_READING, hermes_writes
from output_files import output_files

from asf_core.cli.main import main
from hermes_plugin.convert import units
from hermes_plugin.source import rowsource

HOME = SHARED / "hermes" / "fixtures" / "hermes-0.19.0"


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(HOME, home, ignore=shutil.ignore_patterns("*.db-wal", "*.db-shm", "expected-*"))
    return home


def _convert(home: Path, out: Path, jobs: int) -> int:
    return main(["convert", str(home), "-o", str(out), "--quiet", "-j", str(jobs)])


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_change_seen_by_the_host_starts_the_conversion_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    home = _home(tmp_path)
    db = home / "state.db"
    planned = units.Planner.read_marks
    tries: list[int] = []

    def writes_once(self: units.Planner) -> None:
        tries.append(1)
        if len(tries) == 1:
            hermes_writes(db)
        planned(self)

    monkeypatch.setattr(units.Planner, "read_marks", writes_once)
    assert _convert(home, tmp_path / "out", jobs) == 0
    assert len(tries) == 2
    monkeypatch.setattr(units.Planner, "read_marks", planned)
    assert _convert(home, tmp_path / "fresh", 1) == 0
    assert output_files(tmp_path / "out") == output_files(tmp_path / "fresh")
    assert WRITTEN_WHILE_READING.encode() in b"".join(output_files(tmp_path / "out").values())


def test_a_change_seen_by_a_worker_starts_the_conversion_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _home(tmp_path)
    db = home / "state.db"
    done = tmp_path / "written"
    real = rowsource.read_rows

    def writes_once(source: rowsource.RowSource, sessions: object, expected: object) -> object:
        if not done.exists():  # the first read, in whichever worker comes first
            done.touch()
            hermes_writes(db)
        return real(source, sessions, expected)  # type: ignore[arg-type]

    monkeypatch.setattr(rowsource, "read_rows", writes_once)
    assert _convert(home, tmp_path / "out", 2) == 0
    assert done.exists()
    monkeypatch.setattr(rowsource, "read_rows", real)
    assert _convert(home, tmp_path / "fresh", 1) == 0
    assert output_files(tmp_path / "out") == output_files(tmp_path / "fresh")
