"""``api.read`` given a file that is not ASF (docs/library.md "Errors": ``FormatError``) says so
from its first bytes: a Hermes database passed by mistake, or any large file whose first line
is not a JSON object, used to be read whole as one line first (three times its size in memory
for a 300 MB one) only to fail at its first byte."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from fixture_paths import HERMES_FIXTURES, VECTORS

from asf_core import api

DB = HERMES_FIXTURES / "hermes-0.19.0" / "state.db"


def test_a_database_is_refused_from_its_first_bytes(tmp_path: Path) -> None:
    # The real database, its lines joined and repeated: one 32 MiB first line.
    line = DB.read_bytes().replace(b"\n", b"")
    big = tmp_path / "state.jsonl"
    with big.open("wb") as out:
        for _ in range(32 * 2**20 // len(line) + 1):
            out.write(line)
    tracemalloc.start()
    try:
        with pytest.raises(api.FormatError) as raised:
            api.read(big)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20
    assert str(raised.value) == (
        "line 1 is not a session header (not a JSON object: it begins 'SQLite format 3\\x00')"
    )
    with pytest.raises(api.FormatError) as in_memory:  # the same words for the same bytes
        api.read(DB.read_bytes())
    assert str(in_memory.value) == str(raised.value)
    (finding,) = api.verify(big)
    assert finding.code == "unreadable"
    assert "SQLite format 3" in finding.message


@pytest.mark.parametrize("start", [b"", b"\xef\xbb\xbf", b" \t\r"])
def test_a_header_after_a_bom_or_blanks_is_still_read(start: bytes, tmp_path: Path) -> None:
    basic = VECTORS / "sessions" / "basic.jsonl"
    path = tmp_path / "basic.jsonl"
    path.write_bytes(start + basic.read_bytes())
    session = api.read(path)
    assert len(session.entries) == 9
    assert session.header == api.read(basic).header
