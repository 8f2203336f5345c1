"""A Hermes home converted in units: the same bytes on one worker or two, and a re-run that
reads only the conversations Hermes changed since (with Hermes' own ``SessionDB`` writing).

Which conversations a run reads is seen through the two reads of a unit's message rows:
``SqliteStore.message_cells`` in the host's process, ``rowsource.read_rows`` in a worker (each
writes down the sessions it reads in a file, which every process sees).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import RELEASES, ROOT, SHARED
from hermes_clock import HermesClock
from output_files import output_files

from asf_core.cli.main import main
from asf_core.model import Link
from asf_core.reader import read_session
from asf_core.verify.session import verify_path
from hermes_plugin.source import rowsource
from hermes_plugin.source.database import SqliteStore

HOME = SHARED / "hermes" / "fixtures" / "hermes-0.19.0"


def _copy(home: Path, to: Path) -> Path:
    shutil.copytree(home, to, ignore=shutil.ignore_patterns("*.db-wal", "*.db-shm", "expected-*"))
    return to


def _convert(home: Path, out: Path, jobs: int) -> int:
    return main(["convert", str(home), "-o", str(out), "--quiet", "-j", str(jobs)])


def _tree(out: Path, *, reports: bool = True) -> dict[str, bytes]:
    return output_files(out, reports=reports)


class Reads:
    """The session ids whose message rows a run reads, in any process."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def note(self, sessions: object) -> None:
        with self.log.open("a") as f:
            f.writelines(f"{sid}\n" for sid in sessions)  # type: ignore[attr-defined]

    def seen(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def __eq__(self, other: object) -> bool:
        return self.seen() == other

    def __bool__(self) -> bool:
        return bool(self.seen())

    def clear(self) -> None:
        self.log.unlink(missing_ok=True)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Reads:
    """The session ids whose message rows a run reads."""
    seen = Reads(tmp_path / "reads.log")
    cells, rows = SqliteStore.message_cells, rowsource.read_rows

    def host(self: SqliteStore, session_id: str) -> object:
        seen.note([session_id])
        return cells(self, session_id)

    def worker(source: object, sessions: list[str], expected: object) -> object:
        seen.note(sessions)
        return rows(source, sessions, expected)  # type: ignore[arg-type]

    monkeypatch.setattr(SqliteStore, "message_cells", host)
    monkeypatch.setattr(rowsource, "read_rows", worker)
    return seen


@pytest.mark.parametrize(
    "home", [*RELEASES, ROOT / "examples" / "hermes-home"], ids=lambda p: p.name
)
def test_one_worker_and_two_give_the_same_bytes(home: Path, tmp_path: Path) -> None:
    src = _copy(home, tmp_path / "home")
    assert _convert(src, tmp_path / "one", 1) == 0
    assert _convert(src, tmp_path / "two", 2) == 0
    one, two = _tree(tmp_path / "one"), _tree(tmp_path / "two")
    assert one == two
    assert sum(name.endswith(".jsonl") for name in one) > 5


def test_an_unchanged_home_reads_no_conversation(tmp_path: Path, reads: Reads) -> None:
    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    assert _convert(src, out, 1) == 0
    first = _tree(out)
    assert reads
    reads.clear()
    assert _convert(src, out, 1) == 0
    assert reads == []
    assert _tree(out, reports=False) == {k: v for k, v in first.items() if "report" not in k}
    report = json.loads(next(out.rglob("home-state.db-*/report.json")).read_text())
    assert report["files_written"] == 0
    assert report["files_unchanged"] == report["sessions_written"] > 10


def _openings(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The databases the Hermes plugin opens from now on, in order."""
    from hermes_plugin.source import handle

    opened: list[Path] = []
    real = handle.HermesHandle.__init__

    def spy(self: handle.HermesHandle, path: Path) -> None:
        opened.append(path)
        real(self, path)

    monkeypatch.setattr(handle.HermesHandle, "__init__", spy)
    return opened


def test_an_unchanged_home_at_rest_is_not_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No side file beside the database and its file as the last run found it: the store is
    not opened; the report is the one reading it finds. In use (Hermes has it open), it is
    read."""
    from hermes_state import SessionDB

    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    assert _convert(src, out, 2) == 0
    opened = _openings(monkeypatch)
    assert _convert(src, out, 2) == 0
    assert opened == []
    skipped = _tree(out)
    hermes = SessionDB(db_path=src / "state.db")  # Hermes running: read as usual
    try:
        assert _convert(src, out, 2) == 0
    finally:
        hermes.close()
    assert opened == [src / "state.db"]
    read = _tree(out)
    report = next(k for k in read if k.endswith("report.json"))
    # What reading it finds, but how it was read (in place now, a private copy at rest).
    assert json.loads(read[report])["store"].pop("access") == "direct"
    assert {**read, report: b""} == {**skipped, report: b""}
    was, now = json.loads(skipped[report]), json.loads(read[report])
    for store in (was["store"], now["store"]):
        store.pop("access")
        store.pop("snapshot", None)
    assert was == now


def _totals(home: Path, out: Path, key: Callable[[Path], Any]) -> dict[Any, int | None]:
    """Each store's total for the progress line of a run that counts (``convert`` on a
    terminal), by ``key`` of its path: None where the store was not counted."""
    from asf_core.pipeline.conversion import convert_paths
    from asf_core.plugins import make_plugin_manager

    told: dict[Any, int | None] = {}
    _, problems = convert_paths(
        make_plugin_manager(),
        [home],
        out,
        count=True,
        on_store=lambda candidate, total: told.__setitem__(key(candidate.claim.path), total),
    )
    assert problems == []
    return told


def test_counting_for_a_progress_line_opens_no_unchanged_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``asf convert`` on a terminal counts each store's sessions first (its progress line's
    total), except a store its records say the last run left as it is: that one is not
    opened at all, as without a progress line, and its total is not told."""
    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    main_db, work_db = src / "state.db", src / "profiles" / "work" / "state.db"

    def totals() -> dict[Path, int | None]:
        return _totals(src, out, lambda path: path)

    first = totals()
    assert first == {main_db: 24, work_db: 1}  # the fixture's sessions (asf list)
    opened = _openings(monkeypatch)
    assert totals() == {main_db: None, work_db: None}
    assert opened == []
    main_db.touch()  # its stamp changes: counted, opened and converted; the other is not
    assert totals() == {main_db: 24, work_db: None}
    assert opened == [main_db, main_db]


@pytest.mark.parametrize("named", ["from its profiles folder", "through a link"])
def test_a_profile_named_another_way_converts_to_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """A profile's database is named in ids by its place in the home
    (``profiles/<name>/state.db``), never by the path typed: typed as ``work`` from inside
    ``profiles/`` (or through a link to the profile), it was ``state.db``, so its sessions
    got other ids, and a re-run into the same output wrote each conversation a second file."""
    src = _copy(HOME, tmp_path / "home")
    assert _convert(src / "profiles" / "work", tmp_path / "fresh", 1) == 0
    out = tmp_path / "out"
    assert _convert(src / "profiles" / "work", out, 1) == 0
    if named == "through a link":
        (tmp_path / "work").symlink_to(src / "profiles" / "work", target_is_directory=True)
        monkeypatch.chdir(tmp_path)
    else:
        monkeypatch.chdir(src / "profiles")
    assert _convert(Path("work"), out, 1) == 0
    assert _tree(out, reports=False) == _tree(tmp_path / "fresh", reports=False)


def test_a_store_named_another_way_is_counted_as_it_is_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A home named by a relative path, then by its absolute path: the records hold (the
    store's resolved path), but the last report names it the other way, so the store is
    opened and converted. Its progress line had no total: counting took it for not opened."""
    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    monkeypatch.chdir(tmp_path)

    def totals(home: Path) -> dict[str, int | None]:
        return _totals(home, out, lambda path: path.parent.name)

    assert totals(Path("home")) == {"home": 24, "work": 1}
    opened = _openings(monkeypatch)
    assert totals(Path("home")) == {"home": None, "work": None}
    assert opened == []
    told = totals(src)
    assert opened  # named another way: opened and converted, units carried over
    assert told == {"home": 24, "work": 1}


def test_an_unchanged_home_hermes_has_open_is_not_opened_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: Reads
) -> None:
    """Hermes running (its ``SessionDB`` open: ``-wal`` and ``-shm`` beside the database) but
    idle: a re-run opens nothing. Once it commits, the next run opens the store and reads that
    conversation alone, and writes what a fresh conversion writes."""
    from hermes_state import SessionDB

    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    db = src / "state.db"
    hermes = SessionDB(db_path=db)
    try:
        assert Path(f"{db}-wal").exists()
        assert Path(f"{db}-shm").exists()
        assert _convert(src, out, 2) == 0
        opened = _openings(monkeypatch)
        assert _convert(src, out, 2) == 0
        assert opened == []
        hermes.append_message("fx-plain", "user", "one more question")
        reads.clear()
        assert _convert(src, out, 2) == 0
        assert opened == [db]
        assert reads == ["fx-plain"]
        assert _convert(src, out, 1) == 0  # and again: nothing new, nothing opened
        assert opened == [db]
        assert _convert(src, tmp_path / "fresh", 1) == 0
    finally:
        hermes.close()
    assert _tree(out, reports=False) == _tree(tmp_path / "fresh", reports=False)


def _append(db: Path, session: str) -> None:
    from hermes_state import SessionDB

    sdb = SessionDB(db_path=db)
    try:
        sdb.append_message(session, "user", "one more question")
        sdb.append_message(session, "assistant", "one more answer", finish_reason="stop")
    finally:
        sdb.close()


def _rewind(db: Path, session: str) -> None:
    from hermes_state import SessionDB

    sdb = SessionDB(db_path=db)
    try:
        (last,) = sdb._conn.execute(
            "SELECT max(id) FROM messages WHERE session_id = ? AND role = 'user'", (session,)
        ).fetchone()
        sdb.rewind_to_message(session, last)
    finally:
        sdb.close()


@pytest.mark.parametrize(("change", "session"), [(_append, "fx-plain"), (_rewind, "fx-tools")])
@pytest.mark.parametrize("jobs", [1, 2])
def test_after_hermes_writes_one_session_only_its_conversation_is_converted(
    tmp_path: Path, reads: Reads, change: object, session: str, jobs: int
) -> None:
    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    assert _convert(src, out, jobs) == 0
    before = _tree(out, reports=False)
    reads.clear()
    change(src / "state.db", session)  # type: ignore[operator]
    assert _convert(src, out, jobs) == 0
    assert reads == [session]
    after = _tree(out, reports=False)
    changed = sorted(k for k in after if after[k] != before.get(k))
    assert len(changed) == 1
    report = json.loads(next(out.rglob("home-state.db-*/report.json")).read_text())
    assert report["files_written"] == 1
    # Byte for byte what a fresh conversion of the changed home writes, report included.
    assert _convert(src, tmp_path / "fresh", 1) == 0
    assert after == _tree(tmp_path / "fresh", reports=False)
    fresh = next((tmp_path / "fresh").rglob("home-state.db-*/report.json"))
    fresh_report = json.loads(fresh.read_text())
    for key in ("files", "counts", "strays", "dropped", "findings", "entries_written"):
        assert report[key] == fresh_report[key], key
    assert list(report["counts"]) == list(fresh_report["counts"])  # in one order too
    (path,) = [out / k for k in changed]
    assert [f for f in verify_path(path) if f.severity == "error"] == []
    assert read_session(path).entries


def _sql(statement: str, *params: object) -> Callable[[Any], None]:
    """A change no ``SessionDB`` call makes, written through its connection."""

    def run(sdb: Any) -> None:
        sdb._conn.execute(statement, params)
        sdb._conn.commit()

    return run


def _child(sdb: Any) -> None:
    sdb.create_session("fx-plain-child", "subagent", parent_session_id="fx-plain")
    sdb.append_message("fx-plain-child", "user", "look this up")


#: What Hermes does to a session besides writing messages, by name.
_ACTS: dict[str, Callable[[Any], object]] = {
    "title": lambda sdb: sdb.set_session_title("fx-plain", "Capitals, revisited"),
    "tokens": lambda sdb: sdb.update_token_counts("fx-plain", input_tokens=11, output_tokens=7),
    "usage": lambda sdb: sdb.record_auxiliary_usage(
        "fx-plain", "compression", model="m/aux", input_tokens=9
    ),
    "prompt": lambda sdb: sdb.update_system_prompt(
        "fx-plain", "You are terse, and you cite your sources."
    ),
    "child": _child,
    # A branch child marked as a reset child instead (no SessionDB call rewrites a marker): the
    # parent's conversation, not itself changed, tells its children apart.
    "relation": _sql(
        "UPDATE sessions SET model_config = ? WHERE id = 'fx-branch-child'",
        '{"max_iterations": 90, "_reset_from": "fx-branch-parent"}',
    ),
    # A column added to every message row, as Hermes' reconciler adds one on a newer build's
    # writable open, schema_version left behind (that build's FTS setup failed): once unseen.
    "column": _sql(
        "ALTER TABLE messages ADD COLUMN _compressed_summary INTEGER NOT NULL DEFAULT 0"
    ),
    "delegation": _sql(
        "INSERT INTO async_delegations (delegation_id, origin_session, parent_session_id, "
        "state, dispatched_at, updated_at) "
        "VALUES ('d-1', 'fx-plain', 'fx-plain', 'running', 1796014690.5, 1796014690.5)"
    ),
}


def _hermes(db: Path, act: str) -> None:
    """Hermes' own ``SessionDB`` opens the database, does ``act`` and closes."""
    from hermes_state import SessionDB

    sdb = SessionDB(db_path=db)
    try:
        _ACTS[act](sdb)
    finally:
        sdb.close()


@pytest.mark.parametrize("act", list(_ACTS))
def test_a_change_to_what_surrounds_the_messages_is_converted_again(
    tmp_path: Path, act: str
) -> None:
    """The fingerprint covers more than the message rows: a re-run after Hermes changed a
    session's row, its usage, its system prompt, its children or how they relate to it, its
    delegations, or the columns of the messages table writes what a fresh conversion of the
    changed home writes."""
    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    assert _convert(src, out, 1) == 0
    before = _tree(out, reports=False)
    _hermes(src / "state.db", act)
    assert _convert(src, out, 1) == 0
    assert _convert(src, tmp_path / "fresh", 1) == 0
    after = _tree(out, reports=False)
    assert after == _tree(tmp_path / "fresh", reports=False)
    assert after != before


def test_a_deleted_output_file_is_written_again(tmp_path: Path, reads: Reads) -> None:
    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    assert _convert(src, out, 2) == 0
    before = _tree(out, reports=False)
    victim = next(p for p in sorted(out.rglob("*.jsonl")) if "fx-reasoning" in p.read_text())
    victim.unlink()
    reads.clear()
    assert _convert(src, out, 2) == 0
    assert reads == ["fx-reasoning"]
    assert _tree(out, reports=False) == before


def test_a_cwd_named_like_the_fingerprints_cannot_take_their_place(
    tmp_path: Path, reads: Reads
) -> None:
    """A session that ran in ``/fingerprints.json`` once made a project directory of that
    name, and every run that wrote the record then stopped with exit 2."""
    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    with sqlite3.connect(src / "state.db") as db:
        db.execute("UPDATE sessions SET cwd = '/fingerprints.json' WHERE id = 'fx-reasoning'")
    db.close()
    assert _convert(src, out, 1) == 0
    (folder,) = out.rglob("_fingerprints.json")
    assert (folder.parent / "fingerprints.json").is_file()
    assert "fx-reasoning" in next(folder.glob("*.jsonl")).read_text()
    reads.clear()
    assert _convert(src, out, 1) == 0
    assert reads == []


#: What converting needs and a run that finds the store unchanged must not load: the model,
#: the codec (and cattrs), the writer, redaction, the plugin's conversion code, the host's
#: units, plan, workers and records (their attrs classes), picking sessions.
_CONVERTING = (
    "cattrs",
    "asf_core.model",
    "asf_core.codec",
    "asf_core.writer",
    "orjson",
    "asf_core.pipeline.fingerprints",
    "asf_core.pipeline.units",
    "asf_core.pipeline.planned",
    "asf_core.pipeline.workers",
    "asf_core.pipeline.picking",
)
_CONVERTING_PREFIXES = ("asf_core.redaction", "hermes_plugin.convert")
#: Nor what only writing or workers need: pickling and signals (workers), a queue (the thread
#: flushing files), ``shutil`` (argparse asks it the terminal's width, for help only), uuids.
_UNUSED = ("pickle", "signal", "queue", "shutil", "uuid", "multiprocessing")


def _loaded_by_run(src: Path, out: Path) -> list[str]:
    """The modules a fresh ``asf convert`` process loads, as the command runs it."""
    script = (
        "import json, sys\n"
        "from asf_core.cli.main import main\n"
        f"code = main(['convert', {str(src)!r}, '-o', {str(out)!r}, '--quiet', '-j', '2'])\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    code, modules = json.loads(done.stdout)
    assert code == 0, done.stderr
    unused = (*_CONVERTING, *_UNUSED)
    return [m for m in modules if m in unused or m.startswith(_CONVERTING_PREFIXES)]


def test_a_run_that_finds_the_store_unchanged_loads_nothing_of_converting(
    tmp_path: Path,
) -> None:
    """A nightly run with nothing to do is mostly start-up: it must not load what converting
    needs. The run after one that wrote files updates the report (its counts move to
    unchanged); the run after that leaves every file alone."""
    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    assert {"cattrs", "asf_core.writer"} <= set(_loaded_by_run(src, out))  # converted
    shift = _loaded_by_run(src, out)  # the report's counts move: the records are restamped
    assert set(shift) <= {"orjson", "uuid"}  # orjson writes the report (and loads uuid)
    settled = _tree(out)
    assert _loaded_by_run(src, out) == []
    assert _tree(out) == settled
    _append(src / "state.db", "fx-plain")
    assert "hermes_plugin.convert.units" in _loaded_by_run(src, out)  # changed: converted


def test_an_unchanged_run_tells_of_every_session_it_carries_over(tmp_path: Path) -> None:
    """Progress (``on_session``) hears of each session of an unchanged store, as it does
    when the store is converted."""
    from asf_core.pipeline.conversion import convert_paths
    from asf_core.plugins import make_plugin_manager

    src, out = _copy(HOME, tmp_path / "home"), tmp_path / "out"
    heard: list[list[str]] = []
    for _ in range(3):
        names: list[str] = []
        run, _problems = convert_paths(
            make_plugin_manager(),
            [src],
            out,
            on_session=lambda _report, session, names=names: names.append(session.name),
            processes=2,
        )
        assert sum(s.sessions_written for s in run.stores) == len(names)
        heard.append(sorted(names))
    assert heard[0] == heard[1] == heard[2]
    assert len(heard[0]) > 10


# -- what a unit's conversion names outside itself ---------------------------------------------
#
# Each chain below changes, between two runs, one thing a unit's conversion reads from outside
# its own session rows: how its first session relates to its parent, the ASF id of a session
# it names, the children that name it. A home of its own, written by Hermes' ``SessionDB`` on a
# clock of its own (a quarter second a reading), keeps every run of a chain the same.

#: The routing key of the one chat the gateway's sessions come from.
_CHAT = "agent:main:telegram:dm:7"


@pytest.fixture
def hermes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], Any]:
    """Hermes' ``SessionDB`` on an empty home (``tmp_path / "home"``), on its own clock."""
    import hermes_state

    monkeypatch.setattr(hermes_state, "time", HermesClock())
    (tmp_path / "home").mkdir()
    return lambda: hermes_state.SessionDB(db_path=tmp_path / "home" / "state.db")


def _chat(sdb: Any, sid: str, question: str, **session: Any) -> None:
    """A session Hermes creates, and one exchange in it."""
    sdb.create_session(sid, session.pop("source", "telegram"), **session)
    sdb.append_message(sid, "user", question)
    sdb.append_message(sid, "assistant", f"An answer to: {question}", finish_reason="stop")


def _branch(sdb: Any, parent: str, question: str, **session: Any) -> None:
    """Hermes' /branch: the parent ends "branched", and its copy ``copy`` begins under it,
    with the marker naming it."""
    sdb.end_session(parent, "branched")
    marker = {"_branched_from": parent}
    _chat(sdb, "copy", question, parent_session_id=parent, model_config=marker, **session)


def _file_of(out: Path, session: str) -> str:
    """The output file (by relative path) whose header names a Hermes session."""
    (name,) = [
        k
        for k, v in _tree(out, reports=False).items()
        if k.endswith(".jsonl") and f'/{session}"'.encode() in v.split(b"\n", 1)[0]
    ]
    return name


def _rerun_is_fresh(
    src: Path, out: Path, fresh: Path, vanished: frozenset[str] = frozenset()
) -> dict[str, bytes]:
    """Convert again into ``out`` and afresh into ``fresh``: the same files, byte for byte,
    and beside them only the ``vanished`` ones (of a conversation deleted since, which a run
    leaves in place, docs/cli.md)."""
    assert _convert(src, out, 1) == 0
    assert _convert(src, fresh, 1) == 0
    after, new = _tree(out, reports=False), _tree(fresh, reports=False)
    assert sorted(set(after) - vanished) == sorted(new)
    assert {k: v for k, v in after.items() if k not in vanished} == new
    return after


def test_a_branch_its_parent_reset_since_is_converted_again(
    tmp_path: Path, hermes: Callable[[], Any]
) -> None:
    """A /branch copy of a gateway chat from before the marker (its parent ended "branched"
    before it began) is, once the parent is reopened and reset, the parent's reset child:
    of the copy's unit only its relation changes (its row, its parent and the id it names
    stay), and its file changes."""
    src, out = tmp_path / "home", tmp_path / "out"
    sdb = hermes()
    _chat(sdb, "chat", "Where do we meet?", session_key=_CHAT)
    sdb.end_session("chat", "branched")
    _chat(sdb, "copy", "And when?", session_key=_CHAT, parent_session_id="chat")
    sdb.close()
    assert _convert(src, out, 1) == 0
    copy = _file_of(out, "copy")
    before = _tree(out, reports=False)
    assert b'"rel":"fork_of"' in before[copy]
    sdb = hermes()
    sdb.reopen_session("chat")
    assert sdb.promote_to_session_reset("chat", "idle")
    sdb.close()
    after = _rerun_is_fresh(src, out, tmp_path / "fresh")
    assert b'"relation":"reset"' in after[copy]
    assert b'"rel":"fork_of"' not in after[copy]


def test_a_branch_of_a_continuation_whose_root_is_deleted_is_converted_again(
    tmp_path: Path, hermes: Callable[[], Any]
) -> None:
    """A /branch copy of a compression continuation names the continuation's conversation,
    the file of its root. The root deleted, Hermes orphans the continuation, a conversation
    of its own now: of the copy's unit only the id it names changes (its row, relation and
    parent stay), and its file changes."""
    src, out = tmp_path / "home", tmp_path / "out"
    sdb = hermes()
    _chat(sdb, "root", "Plan the trip.", source="cli")
    sdb.end_session("root", "compression")
    _chat(sdb, "rest", "[CONTEXT COMPACTION] a trip", source="cli", parent_session_id="root")
    _branch(sdb, "rest", "By train instead?", source="cli")
    sdb.close()
    assert _convert(src, out, 1) == 0
    copy, root = _file_of(out, "copy"), _file_of(out, "root")
    before = _tree(out, reports=False)
    sdb = hermes()
    assert sdb.delete_session("root")
    sdb.close()
    after = _rerun_is_fresh(src, out, tmp_path / "fresh", frozenset({root}))
    assert after[copy] != before[copy]


def test_a_reset_child_of_a_chat_reset_before_the_last_run_is_linked(
    tmp_path: Path, hermes: Callable[[], Any]
) -> None:
    """A gateway chat reset (its row ended at the boundary) and converted; only then does
    its successor begin, naming it: the chat's row and messages are as the last run read
    them, its children are not (nor the ids its file names: a reset child's is one), and its
    file gains the ``continued_in`` link."""
    src, out = tmp_path / "home", tmp_path / "out"
    sdb = hermes()
    _chat(sdb, "chat", "Remind me at noon.", session_key=_CHAT)
    assert sdb.promote_to_session_reset("chat", "session_reset")
    sdb.close()
    assert _convert(src, out, 1) == 0
    chat = _file_of(out, "chat")
    assert b"continued_in" not in _tree(out, reports=False)[chat]
    sdb = hermes()
    _chat(
        sdb,
        "next",
        "What was I to be reminded of?",
        session_key=_CHAT,
        parent_session_id="chat",
        model_config={"_reset_from": "chat"},
    )
    sdb.close()
    after = _rerun_is_fresh(src, out, tmp_path / "fresh")
    assert b'"rel":"continued_in"' in after[chat]


def test_a_branch_whose_parent_row_another_program_deleted_is_converted_again(
    tmp_path: Path, hermes: Callable[[], Any]
) -> None:
    """A /branch copy (with the marker) whose parent's row another program deleted alone
    (Hermes would orphan the copy, changing its row): the copy's row and relation stay, its
    parent is gone, and with it the id it named and its ``fork_of`` link."""
    src, out = tmp_path / "home", tmp_path / "out"
    sdb = hermes()
    _chat(sdb, "chat", "Which colour?", source="cli")
    _branch(sdb, "chat", "Blue, then?", source="cli")
    sdb.close()
    assert _convert(src, out, 1) == 0
    copy, chat = _file_of(out, "copy"), _file_of(out, "chat")
    with sqlite3.connect(src / "state.db") as db:
        db.execute("DELETE FROM sessions WHERE id = 'chat'")
    db.close()
    after = _rerun_is_fresh(src, out, tmp_path / "fresh", frozenset({chat}))
    assert b'"relation":"branch"' in after[copy]
    assert b'"rel":"fork_of"' not in after[copy]


# -- conversations converted together ----------------------------------------------------------
#
# A conversation naming a sub-agent of another converts in the other's unit, after it (and is
# never converted without it).


def test_a_branch_of_a_sub_agent_names_the_sub_agents_file(
    tmp_path: Path, hermes: Callable[[], Any]
) -> None:
    """A /branch copy of a sub-agent's session is a conversation of its own that names the
    sub-agent's file, whose id is known only once the conversation that spawned it is
    converted (it derives from the spawning call): the two convert together, as one unit, and
    the copy's header and ``fork_of`` link name that file."""
    src, out = tmp_path / "home", tmp_path / "out"
    sdb = hermes()
    _chat(sdb, "root", "Find the timetable.", source="cli")
    function = {"name": "delegate_task", "arguments": json.dumps({"goal": "the timetable"})}
    call = {"id": "call_1", "type": "function", "function": function}
    sdb.append_message("root", "assistant", "", tool_calls=[call], finish_reason="tool_calls")
    marker = {"_delegate_from": "root"}
    _chat(
        sdb,
        "sub",
        "The timetable.",
        source="subagent",
        parent_session_id="root",
        model_config=marker,
    )
    _branch(sdb, "sub", "Only the morning trains?", source="cli")
    sdb.append_message("root", "tool", '{"result": "found"}', tool_call_id="call_1")
    sdb.close()
    assert _convert(src, out, 1) == 0
    sub = read_session(out / _file_of(out, "sub"))
    copy = read_session(out / _file_of(out, "copy"))
    assert sub.header.spawned_by is not None  # its id derives from the spawning call
    assert copy.header.parent_session == sub.header.id
    (fork,) = [e for e in copy.entries if isinstance(e, Link) and e.rel == "fork_of"]
    assert fork.session == sub.header.id
    # Picked alone, the copy converts with what it needs: the conversation that spawned the
    # sub-agent too, so that it names the same file.
    picked = tmp_path / "picked"
    assert main(["convert", str(src), "-o", str(picked), "--quiet", "--session", "copy"]) == 0
    name = _file_of(out, "copy")
    assert (picked / name).read_bytes() == (out / name).read_bytes()
