"""A Claude Code store converted in units: the same bytes as a conversion through ``convert``,
on one worker or two, and a re-run that reads only the sessions whose files changed since.

Which files a run reads is seen through the first pass over a transcript
(:func:`~claude_code_plugin.source.index.index_file`, as ``read`` and the conversion call it),
counted in the host's process (``-j 1``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from cc_helpers import CLAUDE_HOME, last_uuid, watch_reads
from cc_synth import SESSION, Lines, kitchen_sink, simple
from output_files import output_files

from asf_core.cli.main import main
from asf_core.pipeline.fingerprints import IGNORED
from asf_core.verify.session import verify_path
from claude_code_plugin.convert import units
from claude_code_plugin.source.stamp import store_stamp

KITCHEN = "-home-u-kitchen"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The shared Claude Code home, copied, with the kitchen sink's project beside (a rewind,
    sub-agents, a compaction helper, a line still being written)."""
    to = tmp_path / "home"
    shutil.copytree(CLAUDE_HOME / ".claude", to)
    kitchen_sink(to / "projects" / KITCHEN)
    return to


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the transcripts a run (``-j 1``) reads, in order."""
    seen: list[str] = []
    watch_reads(monkeypatch, lambda path: seen.append(path.name))
    return seen


def _convert(home: Path, out: Path, jobs: int = 1) -> int:
    return main(["convert", str(home), "-o", str(out), "--quiet", "-j", str(jobs)])


def _reports(out: Path) -> dict[str, dict[str, Any]]:
    """Each store's report by its directory, without the output directory it names."""
    found = {}
    for path in sorted(out.rglob("report.json")):
        report = json.loads(path.read_text())
        report.pop("output")
        found[path.parent.name] = report
    return found


def _fresh(home: Path, out: Path) -> dict[str, bytes]:
    """What a conversion into an empty directory writes (how it ran aside)."""
    assert _convert(home, out) == 0
    return output_files(out, ran=False)


def test_units_write_what_convert_writes_on_one_worker_or_two(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file and report of a planned conversion, with one worker or two, is the same; its
    session files are those of the conversion through ``convert``, and its reports say the
    same (the findings of what ``read`` saw come first)."""
    assert _convert(home, tmp_path / "one", 1) == 0
    assert _convert(home, tmp_path / "two", 2) == 0
    planned = output_files(tmp_path / "one")
    assert output_files(tmp_path / "two") == planned
    stores = len([p for p in (home / "projects").iterdir() if p.is_dir()])
    assert len(list((tmp_path / "one").rglob("fingerprints.json"))) == stores
    monkeypatch.setattr(units, "plan_units", lambda store, sessions: None)
    assert _convert(home, tmp_path / "whole", 1) == 0
    assert not list((tmp_path / "whole").rglob("fingerprints.json"))
    assert output_files(tmp_path / "whole", reports=False) == output_files(
        tmp_path / "one", reports=False
    )
    whole, ours = _reports(tmp_path / "whole"), _reports(tmp_path / "one")
    assert whole.keys() == ours.keys()
    assert len(whole) == stores
    for name, report in whole.items():
        mine = ours[name]
        assert sorted(map(json.dumps, mine.pop("findings"))) == sorted(
            map(json.dumps, report.pop("findings"))
        )
        assert mine == report
    kitchen = next(r for n, r in _reports(tmp_path / "one").items() if "kitchen" in n)
    assert len(kitchen["strays"]) == 1  # the line still being written, found in the unit's job
    assert [f for f in verify_path(tmp_path / "two") if f.severity == "error"] == []


def test_a_store_nothing_changed_in_is_not_read(
    home: Path, tmp_path: Path, reads: list[str]
) -> None:
    """A re-run reads no transcript: the stores are as stamped (not opened); with a file
    added that is not a transcript, each store is listed again and every session carried
    over, unread; the output is what a fresh conversion writes."""
    out = tmp_path / "out"
    assert _convert(home, out) == 0
    first = len(reads)
    assert sorted(reads) == sorted(p.name for p in home.rglob("*.jsonl"))  # each once
    before = output_files(out, ran=False)
    assert _convert(home, out) == 0
    assert len(reads) == first
    assert output_files(out, ran=False) == before
    for report in _reports(out).values():
        assert report["files_written"] == 0
        assert report["files_unchanged"] > 0
    note = home / "projects" / KITCHEN / "notes.txt"
    note.write_text("not a transcript")
    assert _convert(home, out) == 0
    assert len(reads) == first
    assert output_files(out, ran=False) == _fresh(home, tmp_path / "fresh")
    kitchen = next(r for n, r in _reports(out).items() if "kitchen" in n)
    assert len(kitchen["dropped"]) == 1
    assert kitchen["files_written"] == 0


def _append(path: Path, session: str, parent: str | None, text: str) -> None:
    """A prompt Claude Code appended to a transcript, hanging from ``parent``."""
    lines = Lines(session=session)
    lines.user(parent, text, uuid=f"99999999-0000-4000-8000-{len(text):012d}")
    with path.open("ab") as f:
        f.write(lines.bytes())


def test_a_session_appended_to_is_the_only_one_read_again(
    home: Path, tmp_path: Path, reads: list[str]
) -> None:
    """A prompt appended to one session file: only that session's files are read and
    written again, and the output is a fresh conversion's, byte for byte."""
    out = tmp_path / "out"
    assert _convert(home, out, 2) == 0
    project = home / "projects" / "-home-marco-projects-spotter"
    target = project / "491e126e-1e71-469c-ade2-fcc8af567c74.jsonl"
    _append(target, target.stem, last_uuid(target), "and one more thing")
    reads.clear()
    assert _convert(home, out) == 0
    assert reads == [target.name]
    report = next(r for n, r in _reports(out).items() if "marco" in n)
    assert report["files_written"] == 1
    assert report["files_unchanged"] == 2
    assert output_files(out, ran=False) == _fresh(home, tmp_path / "fresh")


def test_a_sub_agent_changed_converts_its_session_again(
    home: Path, tmp_path: Path, reads: list[str]
) -> None:
    """A sub-agent transcript appended to, then its ``.meta.json`` written, then a sub-agent
    added: each time the session with its sub-agents is converted again (and no other), equal
    to a fresh conversion."""
    out = tmp_path / "out"
    assert _convert(home, out) == 0
    subagents = home / "projects" / KITCHEN / SESSION / "subagents"
    agent = subagents / "agent-kit0001.jsonl"
    changes = [
        lambda: _append(agent, SESSION, last_uuid(agent), "more"),
        lambda: (subagents / "agent-kit0001.meta.json").write_text('{"agentType": "Explore"}'),
        lambda: simple(Lines(agentId="kit0002", isSidechain=True)).write(
            subagents, "agent-kit0002"
        ),
    ]
    for n, change in enumerate(changes):
        change()
        reads.clear()
        assert _convert(home, out) == 0
        assert "agent-kit0001.jsonl" in reads
        assert len(reads) == 3 + (n == 2)
        assert output_files(out, ran=False) == _fresh(home, tmp_path / f"fresh-{n}")
    (kitchen,) = (r for n, r in _reports(out).items() if "kitchen" in n)
    written = out / "claude-code" / next(n for n in _reports(out) if "kitchen" in n)
    agent_file = written / kitchen["files"][f"{SESSION}.agent-kit0001"]
    header = json.loads(agent_file.read_text().split("\n")[0])
    assert header["claude-code"]["meta"] == {"agentType": "Explore"}


def _rewritten_in_place(path: Path) -> None:
    """The file's bytes changed with its size and modification time kept (only its change
    time says so)."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    at = data.index(b"list files")
    data[at : at + 10] = b"LIST FILES"
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert path.stat().st_mtime_ns == st.st_mtime_ns


def test_a_transcript_rewritten_with_its_size_and_time_kept_is_read_again(
    home: Path, tmp_path: Path, reads: list[str]
) -> None:
    """Content changed in place, size and modification time set back: the change time
    tells, the session is converted again, equal to a fresh conversion."""
    out = tmp_path / "out"
    assert _convert(home, out) == 0
    agent = home / "projects" / KITCHEN / SESSION / "subagents" / "agent-kit0001.jsonl"
    _rewritten_in_place(agent)
    reads.clear()
    assert _convert(home, out) == 0
    assert "agent-kit0001.jsonl" in reads
    assert output_files(out, ran=False) == _fresh(home, tmp_path / "fresh")


def test_the_stamp_follows_every_file_of_the_project(home: Path) -> None:
    """Equal while nothing changes; new after an append, a file added deep in a session's
    directory, a change of mode, content rewritten with its size and time kept, a file
    removed; none for one file."""
    project = home / "projects" / KITCHEN
    first = store_stamp(project)
    assert first is not None
    assert store_stamp(project) == first
    seen = {first}
    session = project / "11111111-2222-4333-8444-555555555555.jsonl"
    for change in (
        lambda: session.write_bytes(session.read_bytes() + b'sant"}\n'),
        lambda: (project / session.stem / "tool-results").mkdir(),
        lambda: (project / session.stem / "tool-results" / "r1.txt").write_text("x"),
        lambda: session.chmod(0o600),
        lambda: _rewritten_in_place(project / session.stem / "subagents" / "agent-kit0001.jsonl"),
        lambda: (project / session.stem / "tool-results" / "r1.txt").unlink(),
    ):
        change()
        now = store_stamp(project)
        assert now is not None
        assert now not in seen
        seen.add(now)
    assert store_stamp(session) is None
    assert store_stamp(project / "absent") is None


def test_the_stamp_walks_only_what_the_listing_reads(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session directories are walked (a file added in one changes the stamp); a folder
    that is not a session's, or a link to the root of the file system, is looked at, not
    walked (a file added in it leaves the stamp as it was, as it leaves the conversion)."""
    import claude_code_plugin.source.stamp as stamp_module

    project = home / "projects" / KITCHEN
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "root").symlink_to("/")
    walked: list[str] = []
    files_under = stamp_module.files_under

    def recorded(root: Path) -> Any:
        walked.append(root.name)
        return files_under(root)

    monkeypatch.setattr(stamp_module, "files_under", recorded)
    first = store_stamp(project)
    assert walked == [SESSION]
    (project / "node_modules" / "pkg" / "index.js").write_text("x")
    assert store_stamp(project) == first
    (project / SESSION / "subagents" / "notes.txt").write_text("x")
    assert store_stamp(project) != first


def test_counting_for_a_progress_line_reads_no_transcript(
    home: Path, tmp_path: Path, reads: list[str]
) -> None:
    """``asf convert`` on a terminal counts each store's sessions first (its progress line's
    total): that reads no transcript, so a fresh run reads each once; a re-run that finds
    nothing changed neither counts nor reads."""
    from asf_core.pipeline.conversion import convert_paths
    from asf_core.plugins import make_plugin_manager

    def run() -> dict[str, int | None]:
        told: dict[str, int | None] = {}

        def on_store(candidate: Any, total: int | None) -> None:
            told[str(candidate.claim.path)] = total

        report, problems = convert_paths(
            make_plugin_manager(), [home], tmp_path / "out", count=True, on_store=on_store
        )
        assert problems == []
        assert told.keys() == {s.path for s in report.stores}
        assert all(told[s.path] in (None, s.sessions_read) for s in report.stores)
        return told

    assert None not in run().values()
    assert sorted(reads) == sorted(p.name for p in home.rglob("*.jsonl"))
    reads.clear()
    assert set(run().values()) == {None}
    assert reads == []


def test_a_store_left_as_it_was_reports_where_this_run_wrote(
    home: Path, tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The output named by a relative path, then by its absolute path: the stores are not
    opened, and each ``report.json`` names the output as this run does (it kept the last
    run's relative ``output``, wrong from any other directory)."""
    monkeypatch.chdir(tmp_path)
    assert _convert(home, Path("out")) == 0
    first = len(reads)
    out = tmp_path / "out"
    assert _convert(home, out) == 0
    assert len(reads) == first
    for path in sorted(out.rglob("report.json")):
        report = json.loads(path.read_text())
        assert report["output"] == str(path.parent)
        assert report["files_written"] == 0


def test_a_store_named_another_way_keeps_its_records(
    home: Path, tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same home named by a relative path, then by its absolute path (a run from another
    directory, or ``asf convert`` with no path): the same output directory, so the last
    run's records hold. They were ignored as another store's, with a warning and every
    transcript read again."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert _convert(Path("home"), out) == 0
    first = len(reads)
    assert _convert(home, out) == 0
    assert len(reads) == first
    for report in _reports(out).values():
        assert [f for f in report["findings"] if f.get("code") == IGNORED] == []
        assert report["files_written"] == 0
    assert output_files(out, ran=False) == _fresh(home, tmp_path / "fresh")


@pytest.mark.parametrize("named", [".", "a link", "a session file"])
def test_a_project_named_another_way_writes_the_same_files(
    home: Path, tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """Headers (and fingerprints) give the project directory's name: typed as ``.`` from
    inside it, or a session file by its name alone, it was ``""``; through a link, the link's
    name. Every file was converted again into the same output, with other bytes."""

    def sessions(out: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in out.rglob("*.jsonl")}

    project = home / "projects" / KITCHEN
    assert _convert(project, tmp_path / "fresh") == 0
    out = tmp_path / "out"
    assert _convert(project, out) == 0
    if named == "a link":
        (tmp_path / "mine").symlink_to(project, target_is_directory=True)
        monkeypatch.chdir(tmp_path)
        typed = Path("mine")
    else:
        monkeypatch.chdir(project)
        typed = Path() if named == "." else Path(f"{SESSION}.jsonl")
    assert _convert(typed, tmp_path / "typed") == 0
    fresh = sessions(tmp_path / "fresh")
    assert sessions(tmp_path / "typed").items() <= fresh.items()
    if named != "a session file":  # a file is a store of its own
        reads.clear()
        assert _convert(typed, out) == 0
        assert reads == []  # the records hold: nothing is read again
        assert sessions(out) == fresh


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_progress_line_counts_sessions_not_sub_agent_files(tmp_path: Path, jobs: int) -> None:
    """A session with sub-agents is one of the store's total, written as several files: the
    line counted each file a session, so it said ``2 of 2 sessions`` while the kitchen sink
    was still being written (on a large store, the total was reached a quarter of the way,
    with no time left to tell). Its own file names it; its sub-agents' files name none."""
    from asf_core.cli.convert import _Progress
    from asf_core.pipeline.conversion import convert_paths
    from asf_core.plugins import make_plugin_manager

    project = tmp_path / "projects" / KITCHEN
    kitchen_sink(project)  # two sub-agents
    simple(Lines(session="00000000-0000-4000-8000-00000000000b")).write(project)
    lines: list[str] = []
    counter = _Progress(SimpleNamespace(show=lambda text, force=False: lines.append(text)))
    written: list[int] = []

    def on_session(report: Any, session: Any) -> None:
        counter.session(report, session)
        written.append(report.files_written)

    _, problems = convert_paths(
        make_plugin_manager(),
        [project],
        tmp_path / "out",
        count=True,
        on_store=counter.store,
        on_session=on_session,
        processes=jobs,
    )
    assert [p for p in problems if p.kind != "warning"] == []
    assert written == [1, 2, 3, 4]  # the other session, the kitchen sink's agents, itself
    assert [line.split(": ")[1].split(" (")[0] for line in lines] == [
        "reading",
        "1 of 2 sessions",
        "1 of 2 sessions",
        "1 of 2 sessions",
        "2 of 2 sessions",
    ]


def test_a_session_whose_file_name_changed_names_its_earlier_file(tmp_path: Path) -> None:
    """A line appended with an earlier time moves the session's start, which its file name
    spells: the new file is written, the earlier one left in place, and the report warns
    that the output holds the session twice (docs/cli.md, "Re-running")."""
    lines = simple()
    transcript = lines.write(tmp_path / "home" / "projects" / "-home-u-proj")
    out = tmp_path / "out"
    assert _convert(tmp_path / "home", out) == 0
    (earlier,) = out.rglob("*.jsonl")
    first = lines.objects[-1]
    lines.raw(
        {**first, "uuid": "9" * 8 + first["uuid"][8:], "timestamp": "2026-01-01T00:00:00.000Z"}
    )
    transcript.write_bytes(lines.bytes())
    assert _convert(tmp_path / "home", out) == 0
    now = next(p for p in out.rglob("*.jsonl") if p != earlier)
    (report_path,) = out.rglob("report.json")
    report = json.loads(report_path.read_text())
    (finding,) = [f for f in report["findings"] if f.get("code") in ("left", "superseded")]
    assert finding["code"] == "superseded"
    assert finding["path"] == str(earlier)
    assert finding["data"]["file"] == now.relative_to(report_path.parent).as_posix()
    assert earlier.exists()
