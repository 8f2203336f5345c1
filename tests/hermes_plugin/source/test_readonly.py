"""Reading from a directory the reader cannot write (no room for the ``-shm`` file).

Permissions mean nothing to root, so the reading runs in a subprocess as an
unprivileged user (``nobody``) when the tests run as root.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import ROOT, SHARED

from hermes_plugin.source.database import SqliteStore

FIXTURE_DB = SHARED / "hermes" / "fixtures" / "hermes-0.19.0" / "state.db"
NOBODY = 65534

READER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from hermes_plugin.source.discovery import find_databases
    from hermes_plugin.source.database import SqliteStore
    from asf_core.formats import StoreError

    out = {}
    for path in sys.argv[2:]:
        try:
            with SqliteStore(path) as store:
                sessions, strays = store.sessions()
                rows = sum(len(store.messages(s.id)) for s in sessions)
                out[path] = {"access": store.access, "sessions": len(sessions), "rows": rows,
                             "copy": store.db.tmpdir}
        except StoreError as exc:
            out[path] = {"error": str(exc)}
    out["found"] = [str(p) for p in find_databases(sys.argv[1])]
    print(json.dumps(out))
    """
)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def root() -> Iterator[Path]:
    """A directory every user can enter (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="asf-ro-"))
    path.chmod(0o755)
    yield path
    for sub in path.rglob("*"):
        if sub.is_dir() and not sub.is_symlink():
            sub.chmod(0o755)
    shutil.rmtree(path)


def _interpreter(user: int | None) -> list[str]:
    """A Python 3.11 the user can run (root's pyenv is out of nobody's reach), with our path."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for exe in (sys.executable, f"/usr/bin/python{version}"):
        try:
            probe = subprocess.run(
                [exe, "-c", "import sys; print(sys.version_info[:2])"],
                capture_output=True,
                text=True,
                user=user,
                cwd="/",
                check=False,
            )
        except OSError:
            continue
        if probe.returncode == 0:
            return [exe]
    pytest.skip("no Python interpreter runnable as an unprivileged user")


def _run_reader(root: Path, *paths: Path) -> dict[str, Any]:
    user = NOBODY if os.geteuid() == 0 else None
    path = [str(ROOT), sysconfig.get_paths()["purelib"]]
    result = subprocess.run(
        [*_interpreter(user), "-c", READER, str(root), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=60,
        user=user,
        cwd="/",
        env={"PYTHONPATH": os.pathsep.join(path), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_read_only_directories(root: Path) -> None:
    # 1. a checkpointed database alone: nothing uncommitted, opened immutable
    plain = root / "plain" / "state.db"
    plain.parent.mkdir()
    shutil.copyfile(FIXTURE_DB, plain)

    # 2. committed rows that live only in the -wal file, no -shm: read via a private copy
    walled = root / "walled" / "state.db"
    walled.parent.mkdir()
    work = root / "work.db"
    shutil.copyfile(FIXTURE_DB, work)
    writer = sqlite3.connect(work)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('wal-only', 'cli', 1.5e9)"
    )
    writer.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) "
        "VALUES ('wal-only', 'user', 'in the WAL', 1.5e9)"
    )
    writer.commit()
    shutil.copyfile(work, walled)
    shutil.copyfile(f"{work}-wal", f"{walled}-wal")
    writer.close()

    # 3. an unreadable directory holding a database: passed over by discovery
    hidden = root / "hidden" / "state.db"
    hidden.parent.mkdir()
    shutil.copyfile(FIXTURE_DB, hidden)
    (root / "link").symlink_to(plain.parent)

    digests = {p: _sha(p) for p in (plain, walled, Path(f"{walled}-wal"))}
    for directory in (plain.parent, walled.parent, root):
        directory.chmod(0o555)
    hidden.parent.chmod(0o700 if os.geteuid() == 0 else 0o000)
    try:
        out = _run_reader(root, plain, walled)
    finally:
        for directory in (plain.parent, walled.parent, hidden.parent, root):
            directory.chmod(0o755)

    with sqlite3.connect(f"file:{FIXTURE_DB}?mode=ro&immutable=1", uri=True) as conn:
        fixture_rows = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        fixture_sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    assert out[str(plain)]["access"] == "immutable"
    assert out[str(plain)]["rows"] == fixture_rows
    assert out[str(walled)]["access"] == "copy"
    assert out[str(walled)]["sessions"] == fixture_sessions + 1
    assert out[str(walled)]["rows"] == fixture_rows + 1
    assert not Path(out[str(walled)]["copy"]).exists()  # the private copy is gone
    if os.geteuid() == 0:  # nobody cannot enter hidden/ (root could)
        assert out["found"] == [str(plain), str(walled)]
    for path, digest in digests.items():
        assert _sha(path) == digest
    assert not list(root.rglob("*-shm"))


def test_wal_of_a_crashed_writer_is_read_and_left_alone(tmp_path: Path) -> None:
    """A -wal left behind (no -shm): its committed rows are read, nothing is checkpointed, no
    -shm is created beside it (a copy is read)."""
    work = tmp_path / "work.db"
    shutil.copyfile(FIXTURE_DB, work)
    writer = sqlite3.connect(work)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO sessions (id, source, started_at) VALUES ('late', 'cli', 1.5e9)")
    writer.commit()
    crashed = tmp_path / "odd #1? dir%20" / "state.db"  # a path that needs URI quoting
    crashed.parent.mkdir()
    shutil.copyfile(work, crashed)
    shutil.copyfile(f"{work}-wal", f"{crashed}-wal")
    writer.close()
    wal = Path(f"{crashed}-wal")
    before = (_sha(crashed), _sha(wal))
    with SqliteStore(crashed) as store:
        assert (store.access, store.db.snapshot) == ("copy", "files")
        assert "late" in {s.id for s in store.sessions()[0]}
    assert (_sha(crashed), _sha(wal)) == before
    assert sorted(p.name for p in crashed.parent.iterdir()) == ["state.db", "state.db-wal"]


_CRASH_MID_TRANSACTION = textwrap.dedent(
    """
    import os, sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA cache_size=1")  # spill uncommitted pages into the database file
    conn.execute("BEGIN")
    conn.execute("UPDATE messages SET content = 'UNCOMMITTED'")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) "
                 "SELECT session_id, role, content, timestamp FROM messages")
    os._exit(0)  # the writer dies: its journal is left hot
    """
)


def test_hot_journal_of_a_crashed_writer_is_rolled_back_in_a_copy(root: Path) -> None:
    """A rollback-journal database (what Hermes uses where WAL is unsafe) whose writer died
    mid-transaction: the last committed state is read from a rolled-back private copy, in a
    writable and in a read-only directory, and the source and its hot journal stay as they
    were."""
    db = root / "hot" / "state.db"
    db.parent.mkdir()
    shutil.copyfile(FIXTURE_DB, db)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=delete")
        committed = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    conn.close()
    subprocess.run([sys.executable, "-c", _CRASH_MID_TRANSACTION, str(db)], check=True)
    journal = Path(f"{db}-journal")
    assert journal.stat().st_size > 0
    before = (_sha(db), _sha(journal))
    with pytest.raises(sqlite3.OperationalError):  # a read-only open cannot roll it back
        sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute("SELECT * FROM sessions")

    with SqliteStore(db) as store:
        assert store.access == "copy"
        found = store.sessions()[0]
        rows = [m for s in found for m in store.messages(s.id)]
        copy = store.db.tmpdir
    assert len(found) == sessions
    assert len(rows) == committed
    assert all(m.content.text != "UNCOMMITTED" for m in rows)
    assert copy is not None
    assert not Path(copy).exists()

    db.parent.chmod(0o555)
    try:
        out = _run_reader(root, db)
    finally:
        db.parent.chmod(0o755)
    assert out[str(db)]["access"] == "copy"
    assert (out[str(db)]["sessions"], out[str(db)]["rows"]) == (sessions, committed)
    assert (_sha(db), _sha(journal)) == before


def test_rollback_journal_database_is_read_from_one_snapshot(tmp_path: Path) -> None:
    """In ``journal_mode=delete`` (Hermes' fallback where WAL is unsafe) rows committed after
    the store opened are not seen, so no message is taken for an orphan of a session created
    meanwhile; :meth:`refresh` takes a new snapshot. The writer is never blocked."""
    db = tmp_path / "state.db"
    shutil.copyfile(FIXTURE_DB, db)
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA journal_mode=delete")
    with SqliteStore(db, name="state.db") as store:
        assert (store.access, store.journal_mode) == ("copy", "delete")
        sessions, _ = store.sessions()
        known = {s.id for s in sessions}
        writer.execute("BEGIN IMMEDIATE")  # the store holds no lock: the writer commits at once
        writer.execute("INSERT INTO sessions (id, source, started_at) VALUES ('new', 'cli', 1.5e9)")
        writer.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) "
            "VALUES ('new', 'user', 'hello', 1.5e9)"
        )
        writer.execute("COMMIT")
        assert store.orphans(known) == ()
        assert store.messages("new") == ()
        assert "new" not in store.row_counts()
        store.refresh()
        assert "new" in {s.id for s in store.sessions()[0]}
        assert [m.content.text for m in store.messages("new")] == ["hello"]
    writer.close()
    assert not list(tmp_path.glob("*-journal"))
