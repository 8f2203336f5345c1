"""Finding Hermes homes and databases, and how sure the claims on them are."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from fixture_paths import SHARED
from hermes_homes import databases, is_home, open_database, store_of

from hermes_plugin.source.discovery import (
    claims,
    default_home,
    default_homes,
    find_databases,
    label_of,
)

FIXTURE_DB = SHARED / "hermes" / "fixtures" / "hermes-0.16.0" / "state.db"


def test_default_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    assert default_homes() == [tmp_path]
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "missing"))
    assert default_homes() == []
    monkeypatch.delenv("HERMES_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_homes() == []
    (tmp_path / ".hermes").mkdir()
    assert default_homes() == [tmp_path / ".hermes"]


def test_hermes_home_is_read_as_hermes_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blanks around it stripped, a blank value is unset, a ``~`` left as it is (Hermes'
    ``hermes_constants`` does the same; expanding it would name a home Hermes never uses)."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("HERMES_HOME", f"  {tmp_path}\n")
    assert default_home() == tmp_path
    monkeypatch.setenv("HERMES_HOME", " \t")
    assert default_home() == tmp_path / "user" / ".hermes"
    monkeypatch.setenv("HERMES_HOME", "~/.hermes-work")
    assert default_home() == Path("~/.hermes-work")


def test_a_database_at_the_root_is_labelled_by_its_home() -> None:
    assert label_of(Path("/state.db")) == "/"


def test_home_layout(tmp_path: Path) -> None:
    home = tmp_path / ".hermes"
    for sub in ("", "profiles/zeta", "profiles/alpha", "profiles/empty"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    for sub in ("", "profiles/zeta", "profiles/alpha"):
        shutil.copyfile(FIXTURE_DB, home / sub / "state.db")
    (home / "profiles" / "notes.txt").write_text("not a profile")
    expected = [
        home / "state.db",
        home / "profiles" / "alpha" / "state.db",
        home / "profiles" / "zeta" / "state.db",
    ]
    assert databases(home) == expected
    assert [c.path for c in claims(home)] == expected
    assert find_databases(home) == expected
    assert is_home(home)
    assert not is_home(home / "profiles" / "empty")
    assert databases(home / "profiles" / "empty") == []
    assert store_of(home / "profiles" / "alpha") == expected[1]
    assert store_of(expected[2]) == expected[2]
    assert store_of(tmp_path / "nothing") is None
    assert find_databases(tmp_path / "nothing") == []
    with open_database(home, name="home") as store:
        assert store.name == "home"
        assert store.version() == 14


def test_claim_confidence(tmp_path: Path) -> None:
    renamed = tmp_path / "backup.sqlite"
    shutil.copyfile(FIXTURE_DB, renamed)
    (found,) = claims(renamed)
    assert (found.confidence, found.path) == (0.9, renamed)

    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE sessions (id TEXT)")
    conn.commit()
    conn.close()
    assert claims(other) == []

    damaged = tmp_path / "home" / "state.db"
    damaged.parent.mkdir()
    damaged.write_bytes(FIXTURE_DB.read_bytes()[:100] + b"\xff" * 4000)
    (found,) = claims(damaged)
    assert found.confidence == 0.5
    assert claims(damaged.parent) == [found]
    assert claims(tmp_path / "missing") == []
    empty = tmp_path / "empty"
    empty.mkdir()
    assert claims(empty) == []
