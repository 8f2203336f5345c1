"""A database at rest read in place (``immutable=1``) is pinned: SQLite then trusts that no one
writes it, so the connection itself checks, after every query, that the file is still the one
it opened, and does not read in place a file that changed while it was being opened. Hermes'
own ``SessionDB`` does the writing."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from fixture_paths import SHARED
from hermes_homes import WRITTEN_WHILE_READING, hermes_writes

from asf_core.formats import StoreChanged
from hermes_plugin.source.opening import ReadOnlyConnection

DB = SHARED / "hermes" / "fixtures" / "hermes-0.19.0" / "state.db"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    copy = tmp_path / "state.db"
    shutil.copyfile(DB, copy)  # the database alone: at rest, no side file
    return copy


def test_a_query_after_hermes_wrote_says_the_store_changed(db: Path) -> None:
    conn = ReadOnlyConnection(db)
    try:
        assert (conn.access, conn.pinned is not None) == ("immutable", True)
        count = conn.scalar("SELECT count(*) FROM messages")
        assert count == conn.scalar("SELECT count(*) FROM messages")
        hermes_writes(db)
        with pytest.raises(StoreChanged):
            conn.query("SELECT count(*) FROM messages")
    finally:
        conn.close()


def test_a_file_that_changes_while_it_is_opened_is_not_read_in_place(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ReadOnlyConnection._open
    writes: list[str] = []

    def open_while_hermes_writes(
        self: ReadOnlyConnection, path: Path, options: str
    ) -> sqlite3.Connection:
        if "immutable=1" in options and not writes:
            writes.append(options)
            hermes_writes(db)
        return real(self, path, options)

    monkeypatch.setattr(ReadOnlyConnection, "_open", open_while_hermes_writes)
    conn = ReadOnlyConnection(db)
    try:
        assert writes  # the writer came by during the first open: read beside it, unpinned
        assert (conn.access, conn.pinned) == ("direct", None)
        texts = conn.query(
            "SELECT content FROM messages WHERE session_id = 'fx-plain' ORDER BY id DESC LIMIT 1"
        )
        assert texts == [(WRITTEN_WHILE_READING,)]
    finally:
        conn.close()
