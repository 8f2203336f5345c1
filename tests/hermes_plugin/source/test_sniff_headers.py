"""What the first bytes of a database file tell without SQLite (``sniff.problem``), on files
SQLite wrote and copies of them cut or with their header's page size changed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_plugin.source import sniff


def _database(path: Path, page_size: int) -> bytes:
    """A whole SQLite database of a few pages at this page size, as bytes."""
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA page_size = {page_size}")
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT)")
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT)")
    conn.executemany("INSERT INTO sessions VALUES (?, ?)", [(f"s{i}", "x" * 900) for i in range(9)])
    conn.commit()
    conn.close()
    return path.read_bytes()


def test_a_database_of_64_kib_pages_is_whole_and_cut_is_truncated(tmp_path: Path) -> None:
    """A page size of 65536 is spelt 1 in the header."""
    path = tmp_path / "state.db"
    data = _database(path, 65536)
    assert data[16:18] == b"\x00\x01"
    assert sniff.problem(path) is None
    path.write_bytes(data[:-65536])
    assert sniff.problem(path) == f"truncated: {len(data) - 65536} of {len(data)} bytes"


@pytest.mark.parametrize("page_size", [256, 1000, 0, 3 * 1024])
def test_a_page_size_sqlite_never_writes_is_a_damaged_header(
    tmp_path: Path, page_size: int
) -> None:
    """Page sizes are powers of two from 512: any other (too small, or not a power of two)
    is a damaged header."""
    path = tmp_path / "state.db"
    data = bytearray(_database(path, 4096))
    data[16:18] = page_size.to_bytes(2, "big")
    path.write_bytes(bytes(data))
    assert sniff.problem(path) == f"damaged header (page size {page_size})"


@pytest.mark.parametrize("size", [1, 10, 16, 99])
def test_a_file_cut_inside_the_header_is_truncated(tmp_path: Path, size: int) -> None:
    """Cut inside the magic string too: what is there is SQLite's beginning."""
    path = tmp_path / "state.db"
    data = _database(path, 4096)
    path.write_bytes(data[:size])
    assert sniff.problem(path) == f"truncated: {size} bytes, shorter than an SQLite header"
    path.write_bytes(b"SQLite format 2" + data[15:size])
    if size > 14:
        assert sniff.problem(path) == "not a SQLite database"


def test_the_page_count_of_a_header_a_legacy_writer_left_is_not_trusted(tmp_path: Path) -> None:
    """The header's page count holds only when its change counter equals its
    version-valid-for number (SQLite before 3.7.0 did not keep it): otherwise a larger count
    is no truncation, and a file cut inside a page is told by its size alone."""
    path = tmp_path / "state.db"
    data = bytearray(_database(path, 4096))
    data[28:32] = (len(data) // 4096 + 5).to_bytes(4, "big")
    path.write_bytes(bytes(data))
    assert sniff.problem(path) == f"truncated: {len(data)} of {len(data) + 5 * 4096} bytes"
    data[92:96] = (int.from_bytes(data[24:28], "big") + 1).to_bytes(4, "big")
    path.write_bytes(bytes(data))
    assert sniff.problem(path) is None
    path.write_bytes(bytes(data[:-100]))
    assert sniff.problem(path) == (
        f"truncated: {len(data) - 100} bytes, not a whole number of 4096-byte pages"
    )
