"""Reading a state.db while a real Hermes 0.19.0 process keeps writing it.

The writer is a second process using ``hermes_state.SessionDB``; it counts
its lock retries (Hermes retries "database is locked" silently, with a random
jitter: every call of ``random.uniform`` in ``hermes_state`` is one retry).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hermes_damage import RETRY_COUNTER

from asf_core.formats import StoreError
from hermes_plugin.source.database import SqliteStore

pytest.importorskip("hermes_state")

SESSIONS = 3
MESSAGES = 40

WRITER = (
    textwrap.dedent(
        """
    import logging, sys, time
    from pathlib import Path
    import hermes_state

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    """
    )
    + RETRY_COUNTER
    + textwrap.dedent(
        """
    path, sessions, messages = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    reads = path.parent / "reads"

    def read_count():
        try:
            return int(reads.read_text() or 0)
        except (OSError, ValueError):
            return 0

    db = hermes_state.SessionDB(path)
    for s in range(sessions):
        sid = f"live-{s}"
        db.create_session(sid, "cli", model="m", system_prompt="prompt")
        for i in range(messages):
            db.append_message(sid, "user" if i % 2 == 0 else "assistant", f"{sid} message {i}")
            time.sleep(0.001)
        db.end_session(sid, "cli_close")
        # However slow the reader, it reads between sessions: overlap by design, not by luck.
        wanted, deadline = read_count() + 1, time.monotonic() + 20
        while read_count() < wanted and time.monotonic() < deadline:
            time.sleep(0.005)
    (path.parent / "written").write_text("")
    sys.stdin.readline()  # the reader checks the rows while they sit in the WAL
    db.close()
    print(f"retries={retries}", flush=True)
    """
    )
)


def _check_consistent(store: SqliteStore) -> int:
    """One snapshot: sessions, messages, orphans and counts agree. Returns the row count."""
    sessions, strays = store.sessions()
    assert strays == ()
    assert store.orphans({s.id for s in sessions}) == ()
    counts = store.row_counts()
    total = 0
    for session in sessions:
        messages = store.messages(session.id)
        assert all(m.error is None and m.problems == () for m in messages)
        assert [m.content.text for m in messages] == [
            f"{session.id} message {i}" for i in range(len(messages))
        ]
        assert counts.get(session.id, None) is None or counts[session.id].active == len(messages)
        total += len(messages)
    return total


def test_reader_beside_a_live_hermes_writer(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    writer = subprocess.Popen(
        [sys.executable, str(script), str(db), str(SESSIONS), str(MESSAGES)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    held: SqliteStore | None = None
    try:
        deadline = time.monotonic() + 30
        seen = [0]
        while not (tmp_path / "written").exists():
            assert time.monotonic() < deadline, "writer too slow"
            assert writer.poll() is None, writer.communicate()
            try:
                store = SqliteStore(db)
            except StoreError:  # not created yet
                time.sleep(0.01)
                continue
            with store:
                seen.append(_check_consistent(store))
            (tmp_path / "reads.tmp").write_text(str(len(seen)))
            (tmp_path / "reads.tmp").replace(tmp_path / "reads")
            if held is None:
                held = SqliteStore(db)
                seen_by_held = _check_consistent(held)
            assert seen[-1] >= seen[-2]
        assert len(seen) > 3, "the reader never overlapped the writer"

        # Every committed row is visible while the writer still holds the WAL open.
        assert Path(f"{db}-wal").stat().st_size > 0
        with SqliteStore(db) as store:
            assert _check_consistent(store) == SESSIONS * MESSAGES
        assert held is not None
        assert _check_consistent(held) == seen_by_held  # a snapshot does not move ...
        held.refresh()
        assert _check_consistent(held) == SESSIONS * MESSAGES  # ... until refreshed

        out, err = writer.communicate("\n", timeout=30)  # closes while `held` is open
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.communicate()
        if held is not None:
            held.close()
    assert writer.returncode == 0, err
    assert out.strip() == "retries=0"
    assert "locked" not in err.lower()
    assert "Traceback" not in err
    with SqliteStore(db) as store:
        assert _check_consistent(store) == SESSIONS * MESSAGES
        sessions, _ = store.sessions()
        assert all(s.end_reason == "cli_close" for s in sessions)
