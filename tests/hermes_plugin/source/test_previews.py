"""A session's preview (the start of its first user message, a query per session) is read
for a listing, which shows it, and not for a conversion, which does not: there it would be a
query per session before the first unit could start."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fixture_paths import SHARED

from asf_core.cli.main import main
from asf_core.formats import NativeSession
from hermes_plugin.source.database import SqliteStore
from hermes_plugin.source.native import native_sessions

HOME = SHARED / "hermes" / "fixtures" / "hermes-0.19.0"


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(HOME, home, ignore=shutil.ignore_patterns("*.db-wal", "*.db-shm", "expected-*"))
    return home


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    real = SqliteStore.first_prompt

    def first_prompt(self: SqliteStore, session_id: str) -> str | None:
        asked.append(session_id)
        return real(self, session_id)

    monkeypatch.setattr(SqliteStore, "first_prompt", first_prompt)
    return asked


def test_a_listing_reads_previews_and_a_conversion_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _home(tmp_path)
    asked = _counting(monkeypatch)
    assert main(["list", str(home)]) == 0
    listed = len(asked)
    assert listed > 0
    capsys.readouterr()
    for jobs in ("1", "2"):
        out = tmp_path / f"out-{jobs}"
        assert main(["convert", str(home), "-o", str(out), "--quiet", "-j", jobs]) == 0
    assert len(asked) == listed  # no preview read while converting


def test_without_previews_the_sessions_are_the_same_but_the_preview(tmp_path: Path) -> None:
    with SqliteStore(_home(tmp_path) / "state.db") as store:
        shown = [s for s in native_sessions(store) if isinstance(s, NativeSession)]
        bare = [s for s in native_sessions(store, previews=False) if isinstance(s, NativeSession)]
    assert any(s.preview for s in shown)
    assert all(s.preview is None for s in bare)
    assert [s.id for s in bare] == [s.id for s in shown]
    assert [s.counts for s in bare] == [s.counts for s in shown]


def test_picking_a_session_to_convert_or_show_reads_no_preview(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--session`` lists every store to pick from, then converts: neither shows a preview."""
    home = _home(tmp_path)
    with SqliteStore(home / "state.db") as store:
        first = next(s.id for s in native_sessions(store) if isinstance(s, NativeSession))
    asked = _counting(monkeypatch)
    out = tmp_path / "out"
    assert main(["convert", str(home), "--session", first, "-o", str(out), "--quiet"]) == 0
    assert main(["show", str(home), "--session", first]) == 0
    capsys.readouterr()
    assert asked == []
