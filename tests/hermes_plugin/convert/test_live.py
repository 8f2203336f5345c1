"""Converting while real Hermes (``hermes_state.SessionDB`` 0.19.0) writes, and interrupting.

A conversion reads one snapshot of the database, so every run accounts for every row it saw,
never changes the source, and an interrupted ``asf convert`` leaves only whole files.
"""

from __future__ import annotations

import hashlib
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixture_paths import SHARED
from survivors import survivors_after

from asf_core.formats import ConvertedSession, Finding, StoreChanged
from asf_core.reader import read_session
from asf_core.verify.session import verify_path
from asf_core.writer import write_session
from hermes_plugin.convert.database import convert_store
from hermes_plugin.source.handle import HermesHandle

FIXTURE = SHARED / "hermes" / "fixtures" / "hermes-0.19.0" / "state.db"

_WRITER = """
import sys, time
from pathlib import Path
from hermes_state import SessionDB
db = SessionDB(db_path=Path(sys.argv[1]))
seconds, per_session, rows = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
end = time.time() + seconds
n = 0
slowest = 0.0
while (n < rows) if rows else (n == 0 or time.time() < end):
    sid = f"live_{n // per_session:05d}"
    started = time.perf_counter()
    if n % per_session == 0:
        db.create_session(sid, "cli", model="anthropic/claude-sonnet-4", system_prompt="Be brief.")
    db.append_message(sid, "user" if n % 2 == 0 else "assistant", f"row {n} " + "x" * 200)
    slowest = max(slowest, time.perf_counter() - started)
    n += 1
db.close()
print(n, slowest, flush=True)
"""


def _writer(db: Path, seconds: float, per_session: int, rows: int = 0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(db), str(seconds), str(per_session), str(rows)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _digests(db: Path) -> dict[str, str]:
    """The database file's and its WAL's digests (a missing WAL and an empty one, which
    SQLite creates when a reader opens a WAL database, hold the same: nothing)."""
    out = {}
    for suffix in ("", "-wal"):
        path = Path(f"{db}{suffix}")
        if path.exists() and path.stat().st_size:
            out[suffix] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _convert(db: Path, out: Path) -> dict[str, int]:
    """Convert into ``out``; return the row accounting finding's data. A database found at
    rest is read pinned: when Hermes checkpoints into it meanwhile the plugin says so
    (:class:`StoreChanged`) and the conversion starts again, as the host's does."""
    for _ in range(3):
        try:
            return _convert_once(db, out)
        except StoreChanged:
            shutil.rmtree(out, ignore_errors=True)
    return _convert_once(db, out)


def _convert_once(db: Path, out: Path) -> dict[str, int]:
    handle = HermesHandle(db)
    accounting: dict[str, int] = {}
    try:
        for item in convert_store(handle.store):
            if isinstance(item, ConvertedSession):
                write_session(out / f"{item.name}.jsonl", item.header, item.entries)
            elif isinstance(item, Finding) and item.message.startswith("row accounting"):
                accounting = dict(item.data)
    finally:
        handle.close()
    return accounting


def test_convert_while_hermes_appends(tmp_path: Path) -> None:
    db = tmp_path / "home" / "state.db"
    db.parent.mkdir()
    shutil.copyfile(FIXTURE, db)
    writer = _writer(db, seconds=3.0, per_session=25)
    try:
        runs: list[int] = []
        deadline = time.time() + 2.5
        while time.time() < deadline or len(runs) < 2:
            out = tmp_path / f"out-{len(runs)}"
            data = _convert(db, out)
            assert (
                data["message_rows_converted"] + data["message_rows_orphaned"]
                == (data["message_rows_in_database"])
            )
            assert [f for f in verify_path(out) if f.severity == "error"] == []
            runs.append(data["message_rows_in_database"])
    finally:
        stdout, stderr = writer.communicate(timeout=60)
    assert writer.returncode == 0, stderr
    assert int(stdout.split()[0]) > 0
    assert runs[0] >= 104  # the fixture's rows, and whatever Hermes had added
    # With Hermes stopped: converting reads the database without changing it.
    before = _digests(db)
    final = _convert(db, tmp_path / "final")
    assert _digests(db) == before
    assert final["message_rows_in_database"] == 104 + int(stdout.split()[0])


def _asf(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "asf_core.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def many_sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture plus 3000 two-row sessions written by Hermes: thousands of files, so a
    conversion is still running when a test signals it."""
    db = tmp_path_factory.mktemp("many") / "state.db"
    shutil.copyfile(FIXTURE, db)
    fill = _writer(db, seconds=0, per_session=2, rows=6000)
    _, err = fill.communicate(timeout=120)
    assert fill.returncode == 0, err
    return db


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_convert_leaves_whole_files(
    tmp_path: Path, many_sessions: Path, sig: signal.Signals
) -> None:
    """On two workers: the signal stops the run, no worker outlives it, every file is whole."""
    home = tmp_path / "home"
    home.mkdir()
    for suffix in ("", "-wal"):
        if Path(f"{many_sessions}{suffix}").exists():
            shutil.copyfile(f"{many_sessions}{suffix}", home / f"state.db{suffix}")
    out = tmp_path / "out"
    proc = _asf("convert", str(home), "-o", str(out), "--quiet", "-j", "2")
    deadline = time.time() + 60
    while time.time() < deadline and not list(out.rglob("*.jsonl")):
        time.sleep(0.01)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert "Traceback" not in stderr
    assert survivors_after(out) == []
    written = list(out.rglob("*.jsonl"))
    assert written
    assert not [p for p in out.rglob("*") if ".asf-tmp-" in p.name]
    for path in written:
        assert read_session(path).problems == [], path
    expected = {signal.SIGINT: 130, signal.SIGTERM: 143}[sig]  # docs/cli.md's exit codes
    assert proc.returncode == expected, "the conversion finished before the signal"
    assert len(written) < 6000 // 2 + 22
    assert [f for f in verify_path(out) if f.severity == "error"] == []


@pytest.mark.slow
def test_asf_convert_on_two_workers_beside_a_live_hermes_writer(tmp_path: Path) -> None:
    """Hermes appends with its own SessionDB while ``asf convert -j 2`` runs again and again:
    the writer is never blocked, each run exits 0 and its output verifies."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(FIXTURE, home / "state.db")
    writer = _writer(home / "state.db", seconds=4.0, per_session=40)
    runs = 0
    try:
        deadline = time.time() + 3.5
        while time.time() < deadline or runs < 2:
            out = tmp_path / f"out-{runs % 2}"  # the second run over the same output reuses it
            proc = _asf("convert", str(home), "-o", str(out), "--quiet", "-j", "2")
            _, stderr = proc.communicate(timeout=120)
            assert proc.returncode == 0, stderr
            assert [f for f in verify_path(out) if f.severity == "error"] == []
            runs += 1
    finally:
        stdout, stderr = writer.communicate(timeout=60)
    assert writer.returncode == 0, stderr
    rows, slowest = stdout.split()
    assert int(rows) > 0
    assert float(slowest) < 2.0, "an append waited on the converter"
    assert runs >= 2


@pytest.mark.parametrize("suffix", ["", "-wal"])
def test_static_database_is_not_modified(tmp_path: Path, suffix: str) -> None:
    db = tmp_path / "state.db"
    shutil.copyfile(FIXTURE, db)
    writer = _writer(db, seconds=0, per_session=5, rows=20)
    writer.communicate(timeout=60)
    before = _digests(db)
    _convert(db, tmp_path / "out")
    after = _digests(db)
    assert after.get(suffix) == before.get(suffix)


_APPEND = """
import sys
from pathlib import Path
from hermes_state import SessionDB
db = SessionDB(db_path=Path(sys.argv[1]))
db.append_message("fx-plain", "user", "And of Spain?")
db.append_message("fx-plain", "assistant", "Madrid.", finish_reason="stop")
db.close()
"""


def test_rerun_after_hermes_appends_changes_only_that_session(tmp_path: Path) -> None:
    db = tmp_path / "home" / "state.db"
    db.parent.mkdir()
    shutil.copyfile(FIXTURE, db)
    _convert(db, tmp_path / "one")
    subprocess.run([sys.executable, "-c", _APPEND, str(db)], check=True, timeout=60)
    _convert(db, tmp_path / "two")
    one = {p.name: p.read_bytes() for p in (tmp_path / "one").glob("*.jsonl")}
    two = {p.name: p.read_bytes() for p in (tmp_path / "two").glob("*.jsonl")}
    assert sorted(one) == sorted(two)
    changed = sorted(name for name in one if one[name] != two[name])
    assert changed == ["fx-plain.jsonl"]
    # The conversation grew at its end: every entry of the old file but the closing ones
    # (the session row, whose counters changed, and the title) keeps its id.
    before = read_session(tmp_path / "one" / "fx-plain.jsonl")
    after = read_session(tmp_path / "two" / "fx-plain.jsonl")
    kept = [e.id for e in before.entries if e.type in {"config", "item", "response"}]
    assert len(kept) == 7  # config, two user items, two assistant items and responses
    assert set(kept) <= set(after.by_id)
    assert len(after.entries) == len(before.entries) + 3
