"""Reading leaves a database's directory as it was found, and waits for a writer's lock only
so long (issue 12).

* A WAL database no connection has open has no ``-wal``/``-shm`` files; reading it in place
  would create them and a read-only reader could never remove them. It is read from a copy,
  and a real Hermes writer (``hermes_state.SessionDB`` in a second process) starting beside the
  reader still works, and still cleans up after itself when it closes.
* A rollback-journal writer holding its lock is waited for with growing pauses up to
  ``ASF_HERMES_LOCK_WAIT`` seconds; past that the database is read from a copy rolled back to
  its last commit, and the report says which.
* Private copies are removed on every way out, and a later run removes the ones a killed run
  left.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import HERMES_FIXTURES
from hermes_damage import RETRY_COUNTER, Run, asf, check_accounting, copy_database, files_of

from asf_core.cli.main import ExitCode
from asf_core.formats import StoreError
from hermes_plugin.source import snapshots
from hermes_plugin.source.database import SqliteStore

RELEASE = HERMES_FIXTURES / "hermes-0.19.0"


@pytest.fixture(autouse=True)
def _hermes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASF_PLUGINS", "hermes")


def _ours() -> set[str]:
    """This process's private copies in the temporary directory."""
    mine = f"{snapshots.PREFIX}{os.getpid()}-"
    return {p.name for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith(mine)}


def _names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_a_closed_wal_database_is_read_without_creating_side_files(tmp_path: Path) -> None:
    db = copy_database(RELEASE, "state.db", tmp_path / "home")
    before = (db.read_bytes(), _names(db.parent))
    assert before[1] == ["state.db"]
    listed = asf("list", db)
    run = asf("convert", db, "-o", tmp_path / "out")
    assert (listed.code, run.code) == (ExitCode.OK, ExitCode.OK)
    info = run.store["store"]
    assert (info["access"], info.get("snapshot")) == ("immutable", None)  # pinned, in place
    check_accounting(db, run.store, files_of(run.store))
    assert (db.read_bytes(), _names(db.parent)) == before
    assert _ours() == set()


def test_an_empty_wal_left_by_a_closed_writer_is_still_at_rest(tmp_path: Path) -> None:
    """An empty ``-wal`` without its ``-shm`` (a writer that checkpointed, truncated its log and
    died before removing it) holds no commit: the database is read in place, pinned, not
    copied, and the directory is left as it was."""
    db = copy_database(RELEASE, "state.db", tmp_path / "home")
    Path(f"{db}-wal").write_bytes(b"")
    before = (db.read_bytes(), _names(db.parent))
    run = asf("convert", db, "-o", tmp_path / "out")
    assert run.code == ExitCode.OK
    info = run.store["store"]
    assert (info["access"], info.get("snapshot")) == ("immutable", None)
    assert (db.read_bytes(), _names(db.parent)) == before


_HERMES_WRITER = (
    textwrap.dedent(
        """
    import sys, time
    from pathlib import Path
    import hermes_state
    """
    )
    + RETRY_COUNTER
    + textwrap.dedent(
        """
    db = hermes_state.SessionDB(Path(sys.argv[1]))
    db.create_session("live", "cli", model="m", system_prompt="prompt")
    print("open", flush=True)
    for i in range(int(sys.argv[2])):
        db.append_message("live", "user" if i % 2 == 0 else "assistant", f"message {i}")
        time.sleep(0.01)
    db.end_session("live", "cli_close")
    print("written", flush=True)
    sys.stdin.readline()  # the reader is done: Hermes closes, the last connection
    db.close()
    print(f"retries={retries}", flush=True)
    """
    )
)


def test_a_live_hermes_writer_works_beside_the_reader(tmp_path: Path) -> None:
    """Hermes starts writing a database while asf reads it, over and over: every read
    succeeds, Hermes never waits for a lock, and when Hermes closes after the reads it
    removes its side files as usual (asf left nothing open, created nothing), so the
    directory ends as it began."""
    pytest.importorskip("hermes_state")
    db = copy_database(RELEASE, "state.db", tmp_path / "home")
    rows = 200
    script = tmp_path / "writer.py"
    script.write_text(_HERMES_WRITER)
    writer = subprocess.Popen(
        [sys.executable, str(script), str(db), str(rows)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    reads = 0
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "open"
        written = threading.Thread(target=writer.stdout.readline)  # "written"
        written.start()
        while written.is_alive() and writer.poll() is None:
            run = asf("convert", db, "-o", tmp_path / "out")
            assert run.code == ExitCode.OK, run.err
            reads += 1
        out, err = writer.communicate("\n", timeout=60)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.communicate()
    assert writer.returncode == 0, err
    assert out.strip() == "retries=0"
    assert reads >= 2, "the reader never overlapped the writer"
    assert _names(db.parent) == ["state.db"]
    final = asf("convert", db, "-o", tmp_path / "out")
    assert final.store["counts"]["message_rows"] >= rows
    assert _ours() == set()


_LOCKER = textwrap.dedent(
    """
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA cache_size=1")  # spill the transaction's pages into the file
    conn.execute("BEGIN EXCLUSIVE")
    conn.execute("UPDATE messages SET content = 'UNCOMMITTED'")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) "
                 "SELECT session_id, role, 'UNCOMMITTED', timestamp FROM messages")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    conn.execute("COMMIT" if sys.argv[3] == "commit" else "ROLLBACK")
    print("released", flush=True)
    """
)


@pytest.fixture
def rollback_db(tmp_path: Path) -> Path:
    """The fixture database in rollback-journal mode (what Hermes falls back to)."""
    db = copy_database(RELEASE, "state.db", tmp_path / "home")
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=delete")
    conn.close()
    return db


@pytest.fixture
def locker() -> Iterator[list[subprocess.Popen[str]]]:
    held: list[subprocess.Popen[str]] = []
    yield held
    for process in held:
        if process.poll() is None:
            process.kill()
        process.communicate()


def _lock(db: Path, seconds: float, end: str, held: list[subprocess.Popen[str]]) -> None:
    script = db.parent.parent / "locker.py"
    script.write_text(_LOCKER)
    process = subprocess.Popen(
        [sys.executable, str(script), str(db), str(seconds), end],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    held.append(process)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "locked"


def _convert_locked(
    db: Path, held: list[subprocess.Popen[str]], hold: float, end: str, wait: float
) -> tuple[Run, dict[str, Any], int]:
    """Convert while a writer holds the database locked for ``hold`` seconds, then ends its
    transaction; asf waits ``wait`` seconds. The run, its store info and the committed rows
    before."""
    rows = sqlite3.connect(db).execute("SELECT count(*) FROM messages").fetchone()[0]
    _lock(db, hold, end, held)
    os.environ["ASF_HERMES_LOCK_WAIT"] = str(wait)
    try:
        run = asf("convert", db, "-o", db.parent.parent / "out")
    finally:
        del os.environ["ASF_HERMES_LOCK_WAIT"]
    assert run.code == ExitCode.OK, run.err
    return run, run.store["store"], int(rows)


def test_a_writer_holding_its_lock_too_long_is_read_from_a_rolled_back_copy(
    rollback_db: Path, locker: list[subprocess.Popen[str]]
) -> None:
    started = time.monotonic()
    run, info, rows = _convert_locked(rollback_db, locker, 60, "rollback", 1)
    assert time.monotonic() - started < 30
    assert (info["access"], info["snapshot"]) == ("copy", "locked")
    assert info["lock_wait_seconds"] >= 0.5
    assert run.store["counts"]["message_rows"] == rows  # the last commit, not the writer's
    assert not any(b"UNCOMMITTED" in data for data in files_of(run.store).values())
    assert locker[0].poll() is None  # the writer still holds its lock, undisturbed
    assert _names(rollback_db.parent) == ["state.db", "state.db-journal"]
    assert _ours() == set()


def test_a_writer_holding_its_lock_briefly_is_waited_for(
    rollback_db: Path, locker: list[subprocess.Popen[str]]
) -> None:
    run, info, rows = _convert_locked(rollback_db, locker, 2, "commit", 30)
    assert info["access"] == "copy"
    assert "snapshot" not in info  # SQLite's backup, once the writer committed
    assert info["lock_wait_seconds"] >= 0.5
    assert run.store["counts"]["message_rows"] == 2 * rows  # the writer's commit
    assert _ours() == set()


def _rollback_journal(db: Path) -> Path:
    """The database in rollback-journal mode: read from a private copy (one short read lock)."""
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    return db


def test_private_copies_are_removed_on_every_way_out(tmp_path: Path) -> None:
    db = _rollback_journal(copy_database(RELEASE, "state.db", tmp_path / "home"))
    store = SqliteStore(db)
    copy = store.db.tmpdir
    assert copy is not None
    assert Path(copy).is_dir()
    with pytest.raises(RuntimeError), store:
        raise RuntimeError("a failure while converting")
    assert not Path(copy).exists()


def test_a_later_run_removes_copies_a_killed_run_left(tmp_path: Path) -> None:
    """A run killed outright leaves its private copy; the next run removes it (and never one
    of a process still running)."""
    db = _rollback_journal(copy_database(RELEASE, "state.db", tmp_path / "home"))
    script = (
        "import os, sys\n"
        "from hermes_plugin.source.database import SqliteStore\n"
        "store = SqliteStore(sys.argv[1])\n"
        "print(store.db.tmpdir, flush=True)\n"
        "os._exit(0)\n"
    )
    killed = subprocess.run(
        [sys.executable, "-c", script, str(db)], capture_output=True, text=True, check=True
    )
    left = Path(killed.stdout.strip())
    assert left.is_dir()
    alive = Path(tempfile.mkdtemp(prefix=f"{snapshots.PREFIX}1-"))  # pid 1 is running
    try:
        run = asf("list", db)
        assert run.code == ExitCode.OK
        assert not left.exists()
        assert alive.is_dir()
    finally:
        alive.rmdir()


def test_a_copy_that_does_not_fit_says_where_there_is_no_room(
    rollback_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full temporary directory is not a damaged database, nor a full disk under it: the
    error names the directory the copy was going to (``TMPDIR`` moves it), and no copy stays."""
    connect = sqlite3.connect

    def tiny_copies(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(database, *args, **kwargs)
        if str(database).endswith("snapshot.db"):  # the copy SQLite's backup writes
            conn.execute("PRAGMA max_page_count=1")
        return conn

    monkeypatch.setattr(sqlite3, "connect", tiny_copies)
    with pytest.raises(StoreError) as caught:
        SqliteStore(rollback_db)
    room = f"no space left in {tempfile.gettempdir()} (TMPDIR)"
    assert str(caught.value) == f"cannot copy it to read: {room}"
    assert _ours() == set()
    monkeypatch.undo()
    with SqliteStore(rollback_db) as store:
        full = OSError(errno.ENOSPC, "No space left on device")
        assert str(store.db.copy_failure(full)) == f"cannot copy it to read: {room}"
