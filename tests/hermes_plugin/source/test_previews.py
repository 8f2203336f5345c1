"""A session's preview (the start of its first user message, a query per session) is read
for a listing, which shows it, and not for a conversion, which does not: there it would be a
query per session before the first unit could start."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from fixture_homes import HOMES, home_ids
from fixture_paths import SHARED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from id_order_stores import ID_KEYS, id_order_store

from asf_core.cli.main import main
from asf_core.formats import NativeSession
from hermes_plugin.source.database import PREVIEW_BY_ID, SqliteStore
from hermes_plugin.source.native import native_sessions

HOME = SHARED / "hermes" / "fixtures" / "hermes-0.19.0"


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(HOME, home, ignore=shutil.ignore_patterns("*.db-wal", "*.db-shm", "expected-*"))
    return home


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    real = SqliteStore.first_prompt

    def first_prompt(self: SqliteStore, session_id: str) -> str | None:
        asked.append(session_id)
        return real(self, session_id)

    monkeypatch.setattr(SqliteStore, "first_prompt", first_prompt)
    return asked


def test_a_listing_reads_previews_and_a_conversion_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _home(tmp_path)
    asked = _counting(monkeypatch)
    assert main(["list", str(home)]) == 0
    listed = len(asked)
    assert listed > 0
    capsys.readouterr()
    for jobs in ("1", "2"):
        out = tmp_path / f"out-{jobs}"
        assert main(["convert", str(home), "-o", str(out), "--quiet", "-j", jobs]) == 0
    assert len(asked) == listed  # no preview read while converting


def test_without_previews_the_sessions_are_the_same_but_the_preview(tmp_path: Path) -> None:
    with SqliteStore(_home(tmp_path) / "state.db") as store:
        shown = [s for s in native_sessions(store) if isinstance(s, NativeSession)]
        bare = [s for s in native_sessions(store, previews=False) if isinstance(s, NativeSession)]
    assert any(s.preview for s in shown)
    assert all(s.preview is None for s in bare)
    assert [s.id for s in bare] == [s.id for s in shown]
    assert [s.counts for s in bare] == [s.counts for s in shown]


def test_counting_the_sessions_reads_no_message_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counting a store's sessions (``asf convert``'s progress total) gives a session per
    listed one, by its id, and reads no message row: no row counts, no orphaned rows."""
    asked: list[str] = []
    for name in ("row_counts", "orphans", "first_prompt"):
        real = getattr(SqliteStore, name)

        def spy(self: SqliteStore, *args: object, name: str = name, real: Any = real) -> Any:
            asked.append(name)
            return real(self, *args)

        monkeypatch.setattr(SqliteStore, name, spy)
    with SqliteStore(_home(tmp_path) / "state.db") as store:
        listed = [s.id for s in native_sessions(store) if isinstance(s, NativeSession)]
        asked.clear()
        counted = list(native_sessions(store, counting=True))
    assert asked == []
    assert sorted(s.id for s in counted if isinstance(s, NativeSession)) == sorted(listed)
    assert len(counted) == len(listed)  # and no finding


def test_picking_a_session_to_convert_or_show_reads_no_preview(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--session`` lists every store to pick from, then converts: neither shows a preview."""
    home = _home(tmp_path)
    with SqliteStore(home / "state.db") as store:
        first = next(s.id for s in native_sessions(store) if isinstance(s, NativeSession))
    asked = _counting(monkeypatch)
    out = tmp_path / "out"
    assert main(["convert", str(home), "--session", first, "-o", str(out), "--quiet"]) == 0
    assert main(["show", str(home), "--session", first]) == 0
    capsys.readouterr()
    assert asked == []


def _plain(store: SqliteStore, session_id: str) -> str | None:
    """The preview read the plain way (every row of the session, sorted by id)."""
    store._id_key = False
    try:
        return store.first_prompt(session_id)
    finally:
        store._id_key = None


@pytest.mark.parametrize("home", HOMES, ids=home_ids())
def test_a_preview_read_by_id_is_the_plain_one(home: Path, tmp_path: Path) -> None:
    """Every session of every release's database: the rows found through the ids of the
    session's index give the preview that sorting all its rows gives."""
    shutil.copyfile(home / "state.db", tmp_path / "state.db")
    with SqliteStore(tmp_path / "state.db") as store:
        ids = [s.id for s in native_sessions(store, previews=False) if isinstance(s, NativeSession)]
        assert store._ids_are_keys()
        assert ids
        assert [store.first_prompt(i) for i in ids] == [_plain(store, i) for i in ids]


def test_a_preview_reads_a_few_rows_not_the_whole_session(tmp_path: Path) -> None:
    """SQLite's plan: the session's ids from its index, then rows by key in id order, no sort
    of the session's rows (which read them all: 24 s to list an 80k-row home from disk)."""
    with SqliteStore(_home(tmp_path) / "state.db") as store:
        store.first_prompt("x")
        plan = store.db.query(f"EXPLAIN QUERY PLAN {PREVIEW_BY_ID}", ("x", "x"))
    details = [str(row[-1]) for row in plan]
    assert any("INTEGER PRIMARY KEY (rowid=?)" in d for d in details), details
    assert any("COVERING INDEX" in d for d in details), details
    assert not any("TEMP B-TREE" in d for d in details), details


_ROW = st.tuples(
    st.sampled_from(["a", "b"]),
    st.sampled_from(["user", "assistant", "tool", "USER"]),
    st.sampled_from([None, "", " ", "hi", "  there ", '[{"type": "text", "text": "x"}]']),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(st.tuples(st.integers(1, 10**6), _ROW), unique_by=lambda r: r[0], max_size=14),
    key=ID_KEYS,
    null_id=st.booleans(),
)
def test_any_session_previews_as_the_plain_read(
    tmp_path: Path, rows: list[tuple[int, tuple[str, str, str | None]]], key: str, null_id: bool
) -> None:
    """Ids out of time order, rows that do not count (other roles, empty, blank text), and
    tables whose ``id`` is not the rowid (then the plain read, which also finds NULL ids)."""
    given = [(rid, session, role, content) for rid, (session, role, content) in rows]
    path = id_order_store(
        tmp_path / f"{abs(hash((tuple(rows), key, null_id)))}.db", given, key, null_id
    )
    with SqliteStore(path) as store:
        assert store._ids_are_keys() == (key == "INTEGER PRIMARY KEY")
        for session in ("a", "b"):
            assert store.first_prompt(session) == _plain(store, session)
    path.unlink()
