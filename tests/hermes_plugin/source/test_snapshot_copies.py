"""Private copies (``hermes_plugin.source.snapshots``) one step at a time: which directories a
run removes, and that a copy is kept only when no file changed while it was made."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_plugin.source import snapshots


def _dead_pid() -> int:
    """The pid of a process that has ended (and been waited for)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_only_directories_named_as_ours_of_ended_processes_are_removed(tmp_path: Path) -> None:
    dead = _dead_pid()
    names = {
        f"asf-hermes-{dead}-abc_1": False,  # ours, its process gone: removed
        "asf-hermes-9999999999-x": False,  # no process has such a pid
        f"asf-hermes-{os.getpid()}-mine": True,  # this process's own
        "asf-hermes-1-init": True,  # pid 1 is running
        f"asf-hermes-{dead}-a.b": True,  # not a name mkdtemp makes
        f"asf-hermes-{dead}-": True,
        f"x-asf-hermes-{dead}-abc": True,
        f"asf-hermes-{dead}-abc-": True,
    }
    for name in names:
        (tmp_path / name).mkdir()
    (tmp_path / f"asf-hermes-{dead}-file").write_text("a file, not a copy")
    assert snapshots.remove_stale(str(tmp_path)) == 2
    assert {name: (tmp_path / name).is_dir() for name in names} == names
    assert (tmp_path / f"asf-hermes-{dead}-file").is_file()


def test_removing_a_copy_twice_is_harmless(tmp_path: Path) -> None:
    copy = tmp_path / "asf-hermes-1-x"
    copy.mkdir()
    snapshots.remove_dir(str(copy))
    snapshots.remove_dir(str(copy))
    snapshots.remove_dir(None)
    assert not copy.exists()


def test_a_file_written_in_place_stamps_anew_even_at_its_old_size_and_time(
    tmp_path: Path,
) -> None:
    """Its change time moves even when its size and modification time are put back."""
    path = tmp_path / "state.db"
    path.write_bytes(b"a" * 10)
    before = snapshots.file_stamp(path)
    st = path.stat()
    path.write_bytes(b"b" * 10)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns
    assert snapshots.file_stamp(path) != before
    assert snapshots.file_stamp(tmp_path / "missing") is None


def _database(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    conn.close()
    return path


def test_a_quiet_copy_is_kept_only_when_nothing_changed_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _database(tmp_path / "state.db")
    into = tmp_path / "copy"
    into.mkdir()
    assert snapshots.copy_quiet(tmp_path / "missing.db", into) is None
    copy = snapshots.copy_quiet(db, into)
    assert copy == into / "state.db"
    assert copy.read_bytes() == db.read_bytes()

    def copy_then_write(source: Path, target: Path) -> bool:
        shutil.copyfile(source, target)
        with db.open("ab") as f:  # a writer comes by while the copy is made
            f.write(b"\x00" * 4096)
        return True

    monkeypatch.setattr(snapshots, "_copy", copy_then_write)
    assert snapshots.copy_quiet(db, into) is None


def _journal(db: Path, nonce: bytes) -> Path:
    """A rollback journal's header: magic, record count, this nonce, page count."""
    journal = Path(f"{db}-journal")
    magic = bytes.fromhex("d9d505f920a163d7")
    journal.write_bytes(magic + (1).to_bytes(4, "big") + nonce + b"\x00\x00\x00\x01" + bytes(996))
    return journal


def test_a_locked_copy_is_kept_only_while_the_writer_stays_in_its_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _database(tmp_path / "state.db")
    journal = _journal(db, b"\x00\x00\x00\x07")
    into = tmp_path / "copy"
    into.mkdir()
    copy = snapshots.copy_locked(db, into)
    assert copy == into / "state.db"
    assert Path(f"{copy}-journal").read_bytes() == journal.read_bytes()

    real = snapshots._copy

    def next_transaction(source: Path, target: Path) -> bool:
        if source == db:  # the writer commits and starts another transaction meanwhile
            _journal(db, b"\x00\x00\x00\x08")
        return real(source, target)

    monkeypatch.setattr(snapshots, "_copy", next_transaction)
    assert snapshots.copy_locked(db, into) is None


def test_a_locked_wal_database_is_copied_with_its_wal(tmp_path: Path) -> None:
    db = _database(tmp_path / "state.db")
    Path(f"{db}-wal").write_bytes(b"wal frames")
    into = tmp_path / "copy"
    into.mkdir()
    copy = snapshots.copy_locked(db, into)
    assert copy == into / "state.db"
    assert Path(f"{copy}-wal").read_bytes() == b"wal frames"


@pytest.mark.parametrize("writer", ["opens a transaction", "writes the database"])
def test_a_locked_copy_without_a_journal_is_kept_only_if_the_writer_did_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str
) -> None:
    """With no journal the writer has changed no page yet: the copy holds only if that is
    still so once it is made (no journal since, the database as it was)."""
    db = _database(tmp_path / "state.db")
    into = tmp_path / "copy"
    into.mkdir()
    real = snapshots._copy

    def meanwhile(source: Path, target: Path) -> bool:
        copied = real(source, target)
        if writer == "opens a transaction":
            _journal(db, b"\x00\x00\x00\x09")
        else:
            with db.open("ab") as f:
                f.write(b"\x00" * 4096)
        return copied

    monkeypatch.setattr(snapshots, "_copy", meanwhile)
    assert snapshots.copy_locked(db, into) is None
