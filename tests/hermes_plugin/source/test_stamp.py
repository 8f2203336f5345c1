"""The stamp of a Hermes database (``store_stamp``), piece by piece: each change a commit can
make moves it, even one that puts the size and modification time back, and a database in a
state the stamp cannot vouch for has none (so it is read as usual)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from fixture_paths import SHARED

from hermes_plugin.source.stamp import store_stamp

DB = SHARED / "hermes" / "fixtures" / "hermes-0.19.0" / "state.db"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    copy = tmp_path / "state.db"
    shutil.copyfile(DB, copy)
    return copy


def _rewrite_in_place(path: Path, offset: int, data: bytes) -> None:
    """Overwrite bytes, then set the modification time back: only the change time tells."""
    st = path.stat()
    with path.open("r+b") as f:
        f.seek(offset)
        f.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert path.stat().st_mtime_ns == st.st_mtime_ns


def test_a_database_at_rest_is_stamped_and_the_stamp_is_stable(db: Path) -> None:
    first = store_stamp(db)
    assert first is not None
    assert store_stamp(db) == first


def test_a_write_that_puts_size_and_mtime_back_still_moves_the_stamp(db: Path) -> None:
    before = store_stamp(db)
    _rewrite_in_place(db, 100, b"\x00")
    assert store_stamp(db) != before


def test_a_wal_commit_or_restart_moves_the_stamp_of_a_database_in_use(db: Path) -> None:
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    wal.write_bytes(b"\x37\x7f\x06\x82" + bytes(28))  # a WAL header, no frames yet
    shm.write_bytes(bytes(32768))
    idle = store_stamp(db)
    assert idle is not None
    assert store_stamp(db) == idle
    # SQLite starting the log over: the same size and time, new salts in the header.
    _rewrite_in_place(wal, 16, b"\x12\x34\x56\x78")
    restarted = store_stamp(db)
    assert restarted not in {None, idle}
    # A commit: frames appended, within the same tick of the file system's clock.
    st = wal.stat()
    with wal.open("ab") as f:
        f.write(bytes(4120))
    os.utime(wal, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert store_stamp(db) not in {None, idle, restarted}


@pytest.mark.parametrize(
    "side",
    [("-journal",), ("-wal",), ("-shm", "-journal"), ("-wal", "-shm", "-journal")],
)
def test_no_stamp_when_side_files_tell_of_a_writer_at_work_or_dead(
    db: Path, side: tuple[str, ...]
) -> None:
    """A rollback journal (a writer at work, or one that died mid-transaction), or a ``-wal``
    without its ``-shm``: the stamp cannot promise the rows, the store is read."""
    for suffix in side:
        Path(f"{db}{suffix}").write_bytes(b"")
    assert store_stamp(db) is None


def test_no_stamp_for_a_missing_database(tmp_path: Path) -> None:
    assert store_stamp(tmp_path / "state.db") is None
