"""The Hermes plugin's hooks and ``asf convert`` on Hermes homes, profiles and files."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from fixture_paths import SHARED

from asf_core.cli.main import main
from asf_core.formats import Claim, ConvertedSession, Finding, NativeSession, Selection
from asf_core.verify.session import verify_path
from hermes_plugin import plugin
from hermes_plugin.source.handle import HermesHandle

RELEASE = SHARED / "hermes" / "fixtures" / "hermes-0.19.0"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A copy of the 0.19.0 fixture home: its state.db and profiles/work/state.db."""
    home = tmp_path / "hermes-home"
    (home / "profiles" / "work").mkdir(parents=True)
    shutil.copyfile(RELEASE / "state.db", home / "state.db")
    shutil.copyfile(RELEASE / "profiles/work/state.db", home / "profiles/work/state.db")
    return home


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_hook_discover_home_profile_file_and_default(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claims = plugin.discover(home)
    assert claims is not None
    assert [c.path for c in claims] == [home / "state.db", home / "profiles/work/state.db"]
    assert {c.format for c in claims} == {"hermes"}
    assert all(c.confidence == 1.0 for c in claims)
    (one,) = plugin.discover(home / "profiles" / "work") or []
    assert one.path == home / "profiles/work/state.db"
    (file,) = plugin.discover(home / "state.db") or []
    assert file.path == home / "state.db"
    monkeypatch.setenv("HERMES_HOME", str(home))
    assert [c.path for c in plugin.discover(None) or []] == [c.path for c in claims]


def test_hook_discover_refuses_other_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.txt").write_text("not a database")
    assert plugin.discover(tmp_path) is None
    assert plugin.discover(tmp_path / "notes.txt") is None
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "missing"))
    assert plugin.discover(None) is None


def test_hook_open_store(home: Path) -> None:
    claim = Claim(format="hermes", path=home / "profiles/work/state.db", confidence=1.0)
    assert plugin.open_store(Claim(format="other", path=claim.path, confidence=1.0)) is None
    store = plugin.open_store(claim)
    assert isinstance(store, HermesHandle)
    try:
        info = store.info()
        assert info["name"] == "profiles/work/state.db"
        assert info["schema_version"] == 22
        assert "api_content" in info["columns"]["messages"]
    finally:
        store.close()


def test_hook_read(home: Path) -> None:
    store = plugin.open_store(Claim(format="hermes", path=home / "state.db", confidence=1.0))
    assert store is not None
    try:
        items = list(plugin.read(store, Selection(), True, False) or [])
        counted = list(plugin.read(store, Selection(), False, True) or [])
    finally:
        store.close()
    natives = [i for i in items if isinstance(i, NativeSession)]
    manifest = json.loads((RELEASE / "manifest.json").read_text())
    assert sorted(n.id for n in natives) == sorted(manifest["sessions"])
    by_id = {n.id: n for n in natives}
    assert by_id["fx-comp-2"].relation == "continuation"
    assert by_id["fx-comp-2"].parent == "fx-comp-1"
    assert by_id["fx-rewind"].counts == {"active": 4, "inactive": 2}
    # Counting (a progress line's total): the same sessions, by id alone, and no finding.
    assert sorted(n.id for n in counted if isinstance(n, NativeSession)) == sorted(by_id)
    assert len(counted) == len(natives)
    assert plugin.read(object(), Selection(), True, False) is None  # type: ignore[arg-type]


def test_hook_convert(home: Path) -> None:
    store = plugin.open_store(Claim(format="hermes", path=home / "state.db", confidence=1.0))
    assert store is not None
    try:
        natives = [
            i
            for i in plugin.read(store, Selection(), False, False) or []
            if isinstance(i, NativeSession)
        ]
        out = list(plugin.convert(store, natives, Selection()) or [])
    finally:
        store.close()
    sessions = [o for o in out if isinstance(o, ConvertedSession)]
    names = [s.name for s in sessions]
    # One file per conversation: the compression chain is one; the sub-agent comes first.
    assert "fx-comp-2" not in names
    assert names.index("fx-delegate-child") < names.index("fx-delegate-parent")
    assert isinstance(out[-1], Finding)
    assert plugin.convert(object(), [], Selection()) is None  # type: ignore[arg-type]


def test_asf_convert_home(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {p: _digest(p) for p in home.rglob("state.db")}
    out = tmp_path / "out"
    code = main(["convert", str(home), "-o", str(out), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    stores = report["stores"]
    assert len(stores) == 2
    for store in stores:
        assert store["complete"]
        on_disk = json.loads((Path(store["output"]) / "report.json").read_text())
        assert on_disk["entries_written"] == store["entries_written"]
        (accounting,) = [f for f in store["findings"] if f["message"].startswith("row accounting")]
        data = accounting["data"]
        assert data["message_rows_in_database"] == (
            data["message_rows_converted"] + data["message_rows_orphaned"]
        )
        assert store["counts"]["message_rows"] == data["message_rows_converted"]
        assert store["store"]["schema_version"] == 22
    assert [f for f in verify_path(out) if f.severity == "error"] == []
    assert {p: _digest(p) for p in home.rglob("state.db")} == before
    # A second run rewrites nothing.
    assert main(["convert", str(home), "-o", str(out), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert all(s["files_written"] == 0 for s in again["stores"])


def test_asf_convert_damaged_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "state.db"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    code = main(["convert", str(bad), "-o", str(tmp_path / "out"), "--format", "hermes"])
    captured = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in captured.err
