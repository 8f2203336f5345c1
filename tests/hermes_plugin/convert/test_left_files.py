"""Files an earlier run wrote that a run no longer writes: left in place and named in the
report (docs/cli.md, "Re-running"), with Hermes' own ``SessionDB`` deleting and writing."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_clock import HermesClock
from output_files import output_files
from unprivileged import run_unprivileged

from asf_core.cli.main import main

_LEFT = ("left", "superseded")


@pytest.fixture
def hermes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], Any]:
    """Hermes' ``SessionDB`` on an empty home (``tmp_path / "home"``), on its own clock."""
    import hermes_state

    monkeypatch.setattr(hermes_state, "time", HermesClock())
    (tmp_path / "home").mkdir()
    return lambda: hermes_state.SessionDB(db_path=tmp_path / "home" / "state.db")


def _chat(sdb: Any, sid: str, question: str) -> None:
    sdb.create_session(sid, "cli")
    sdb.append_message(sid, "user", question)
    sdb.append_message(sid, "assistant", f"An answer to: {question}", finish_reason="stop")


def _home(hermes: Callable[[], Any], *sessions: str) -> None:
    sdb = hermes()
    for sid in sessions:
        _chat(sdb, sid, f"What about {sid}?")
    sdb.close()


def _delete(hermes: Callable[[], Any], sid: str) -> None:
    """Hermes deletes a session through its own ``SessionDB``."""
    sdb = hermes()
    assert sdb.delete_session(sid)
    sdb.close()


def _convert(home: Path, out: Path, *more: str) -> int:
    return main(["convert", str(home), "-o", str(out), "-j", "1", *more])


def _report(out: Path) -> dict[str, Any]:
    (path,) = out.glob("hermes/*/report.json")
    report: dict[str, Any] = json.loads(path.read_text())
    return report


def _left(out: Path) -> list[dict[str, Any]]:
    return [f for f in _report(out)["findings"] if f.get("code") in _LEFT]


def _file_of(out: Path, session: str) -> Path:
    """The output file whose header names a Hermes session."""
    (path,) = [
        p
        for p in out.glob("hermes/*/*/*.jsonl")
        if f'/{session}"'.encode() in p.read_bytes().split(b"\n", 1)[0]
    ]
    return path


def _gone_after_a_run(tmp_path: Path, hermes: Callable[[], Any]) -> tuple[Path, Path, Path]:
    """A home of sessions ``kept`` and ``gone`` converted, then ``gone`` deleted by Hermes: the
    home, the output and the file ``gone`` was written to."""
    home, out = tmp_path / "home", tmp_path / "out"
    _home(hermes, "kept", "gone")
    assert _convert(home, out, "--quiet") == 0
    gone = _file_of(out, "gone")
    _delete(hermes, "gone")
    return home, out, gone


def _header_id(path: Path) -> str:
    ident: str = json.loads(path.read_bytes().split(b"\n", 1)[0])["id"]
    return ident


def test_a_deleted_session_keeps_its_file_and_the_report_names_it(
    tmp_path: Path, hermes: Callable[[], Any], capsys: pytest.CaptureFixture[str]
) -> None:
    home, out, gone = _gone_after_a_run(tmp_path, hermes)
    assert _left(out) == []
    before = gone.read_bytes()
    capsys.readouterr()
    assert _convert(home, out) == 0
    summary = capsys.readouterr().out
    assert "1 file of earlier runs left in place" in summary
    assert gone.read_bytes() == before  # nothing deleted
    (finding,) = _left(out)
    assert finding["kind"] == "info"
    assert finding["code"] == "left"
    assert finding["path"] == str(gone)
    assert finding["data"] == {"id": _header_id(gone)}
    assert _report(out)["sessions_written"] == 1
    # Nothing changed: the store is not opened, the finding repeated.
    assert _convert(home, out, "--quiet") == 0
    assert [f["path"] for f in _left(out)] == [str(gone)]
    # The file deleted since: the store is read again, and nothing is left.
    gone.unlink()
    assert _convert(home, out) == 0
    assert _left(out) == []
    assert "left in place" not in capsys.readouterr().out


def test_an_earlier_file_of_a_session_written_elsewhere_now_is_a_warning(
    tmp_path: Path, hermes: Callable[[], Any]
) -> None:
    """A file of the same session under another name (what an earlier asf, or a session
    whose start changed, left): the output holds the session twice, a warning says so."""
    home, out = tmp_path / "home", tmp_path / "out"
    _home(hermes, "one", "two")
    assert _convert(home, out, "--quiet") == 0
    now = _file_of(out, "one")
    earlier = now.with_name("2020-01-01T00-00-00.000Z_" + now.name.split("_", 1)[1])
    shutil.copyfile(now, earlier)
    sdb = hermes()
    sdb.append_message("two", "user", "And then?")  # the store changes: it is read again
    sdb.close()
    assert _convert(home, out, "--quiet") == 0
    (finding,) = _left(out)
    assert finding["kind"] == "warning"
    assert finding["code"] == "superseded"
    assert finding["path"] == str(earlier)
    assert finding["data"] == {"id": _header_id(now), "file": str(now.relative_to(now.parents[1]))}
    assert earlier.exists()


def test_a_session_file_put_there_since_an_unchanged_run_is_named(
    tmp_path: Path, hermes: Callable[[], Any]
) -> None:
    """The store as the last run left it, but a copy of a session file put in its output
    since: a run that took the last run's report as it was would not name it."""
    home, out = tmp_path / "home", tmp_path / "out"
    _home(hermes, "one", "two")
    assert _convert(home, out, "--quiet") == 0
    assert _convert(home, out, "--quiet") == 0  # unchanged: the last report taken
    now = _file_of(out, "one")
    copy = now.parent / "copy.jsonl"
    shutil.copyfile(now, copy)
    assert _convert(home, out, "--quiet") == 0
    assert [(f["code"], f["path"]) for f in _left(out)] == [("superseded", str(copy))]
    assert _convert(home, out, "--quiet") == 0  # and again, unchanged since
    assert [(f["code"], f["path"]) for f in _left(out)] == [("superseded", str(copy))]


def test_only_a_whole_run_names_files_left(tmp_path: Path, hermes: Callable[[], Any]) -> None:
    """A picked run writes some sessions: the others' files are not "left"."""
    home, out = tmp_path / "home", tmp_path / "out"
    _home(hermes, "alpha", "beta")
    assert _convert(home, out, "--quiet") == 0
    assert _convert(home, out, "--quiet", "--session", "alpha") == 0
    assert _left(out) == []
    assert _report(out)["sessions_written"] == 1


def test_what_is_not_a_session_file_of_the_layout_is_not_named(
    tmp_path: Path, hermes: Callable[[], Any]
) -> None:
    """Hidden names (a run's temporaries), other suffixes, folders deeper than the layout's
    and links are not a run's session files; a file that is no ASF is ``left`` without id."""
    home, out = tmp_path / "home", tmp_path / "out"
    _home(hermes, "alpha")
    assert _convert(home, out, "--quiet") == 0
    mine = _file_of(out, "alpha")
    project, store = mine.parent, mine.parents[1]
    (project / ".hidden.jsonl").write_text("{}\n")
    (project / "notes.txt").write_text("mine\n")
    (project / "deeper").mkdir()
    (project / "deeper" / "x.jsonl").write_text("{}\n")
    (project / "link.jsonl").symlink_to(mine)
    (store / "top.jsonl").write_text("not json\n")
    (store / "top.txt").write_text("mine\n")
    _home(hermes, "beta")  # the store changes: it is read again
    assert _convert(home, out, "--quiet") == 0
    (finding,) = _left(out)
    assert finding["path"] == str(store / "top.jsonl")
    assert (finding["code"], finding.get("data")) == ("left", None)
    assert sorted(p.name for p in project.iterdir()) == sorted(
        [
            ".hidden.jsonl",
            "notes.txt",
            "deeper",
            "link.jsonl",
            mine.name,
            _file_of(out, "beta").name,
        ]
    )


def test_the_files_written_are_those_of_a_fresh_run(
    tmp_path: Path, hermes: Callable[[], Any]
) -> None:
    """Naming what is left changes no session file: a fresh conversion writes the same ones."""
    home, out = tmp_path / "home", tmp_path / "out"
    _home(hermes, "a", "b", "c")
    assert _convert(home, out, "--quiet") == 0
    _delete(hermes, "b")
    assert _convert(home, out, "--quiet") == 0
    assert _convert(home, tmp_path / "fresh", "--quiet") == 0
    after = output_files(out, reports=False)
    fresh = output_files(tmp_path / "fresh", reports=False)
    (left,) = set(after) - set(fresh)
    assert {k: v for k, v in after.items() if k != left} == fresh
    assert [f["path"] for f in _left(out)] == [str(out / left)]


def test_prune_deletes_the_asf_files_left_and_keeps_the_rest(
    tmp_path: Path, hermes: Callable[[], Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--prune``: the ASF files of a gone session and of a session's earlier name are
    deleted and named once (the next run reads the store and finds nothing left); a file
    that is no ASF session (its first line no session header, whatever it holds) is only
    named. The output is then a fresh conversion's."""
    home, out = tmp_path / "home", tmp_path / "out"
    _home(hermes, "kept", "gone")
    assert _convert(home, out, "--quiet") == 0
    gone, kept = _file_of(out, "gone"), _file_of(out, "kept")
    earlier = kept.with_name("2020-01-01T00-00-00.000Z_" + kept.name.split("_", 1)[1])
    shutil.copyfile(kept, earlier)
    foreign = kept.parent / "mine.jsonl"
    foreign.write_text('{"type": "note", "id": "mine"}\n')
    listed = kept.parent / "list.jsonl"
    listed.write_text('["mine"]\n')
    _delete(hermes, "gone")
    # Left once without --prune: then a run that finds the store unchanged still deletes.
    assert _convert(home, out, "--quiet") == 0
    assert len(_left(out)) == 4
    capsys.readouterr()
    assert _convert(home, out, "--prune") == 0
    assert "2 files of earlier runs deleted" in capsys.readouterr().out
    assert not gone.exists()
    assert not earlier.exists()
    assert foreign.exists()
    assert listed.exists()
    findings = [f for f in _report(out)["findings"] if f.get("code") in (*_LEFT, "pruned")]
    assert sorted((f["code"], f["path"]) for f in findings) == sorted(
        [
            ("pruned", str(gone)),
            ("pruned", str(earlier)),
            ("left", str(foreign)),
            ("left", str(listed)),
        ]
    )
    assert [f.get("data") for f in findings if f["code"] == "left"] == [None, None]
    said = {f["path"]: f["message"] for f in findings if f["code"] == "pruned"}
    assert said == {
        str(gone): f"{gone}: written by an earlier run, deleted (its session is gone)",
        str(earlier): f"{earlier}: written by an earlier run, deleted "
        "(an earlier file of a session written now)",
    }
    assert _convert(home, out, "--quiet") == 0
    assert sorted(f["path"] for f in _left(out)) == sorted([str(foreign), str(listed)])
    assert not [f for f in _report(out)["findings"] if f.get("code") == "pruned"]
    foreign.unlink()
    listed.unlink()
    assert _convert(home, tmp_path / "fresh", "--quiet") == 0
    assert output_files(out, reports=False) == output_files(tmp_path / "fresh", reports=False)


def test_prune_keeps_a_file_that_changed_after_its_header_was_read(
    tmp_path: Path, hermes: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every header is read before any file is deleted: one replaced by another file in the
    meantime (the user's own, no ASF session) is not the file whose header said it was ASF."""
    from asf_core.pipeline import left

    home, out, gone = _gone_after_a_run(tmp_path, hermes)
    read = left.header_id

    def then_replaced(path: Path) -> str | None:
        ident = read(path)
        mine = path.with_name("mine.tmp")
        mine.write_text("my own notes\n")
        mine.replace(path)
        return ident

    monkeypatch.setattr(left, "header_id", then_replaced)
    assert _convert(home, out, "--quiet", "--prune") == 0
    assert gone.read_text() == "my own notes\n"
    (finding,) = _left(out)
    assert finding["kind"] == "warning"
    assert finding["message"].endswith("left in place; it changed since it was read")


@pytest.mark.parametrize(
    ("more", "why"),
    [
        (["--session", "alpha"], "--prune needs a whole run"),
        (["-o", "-"], "--prune deletes files of earlier runs in DIR"),
    ],
)
def test_prune_refuses_a_run_that_does_not_write_every_session(
    tmp_path: Path,
    hermes: Callable[[], Any],
    capsys: pytest.CaptureFixture[str],
    more: list[str],
    why: str,
) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    _home(hermes, "alpha", "beta")
    assert _convert(home, out, "--quiet") == 0
    before = output_files(out)
    capsys.readouterr()
    assert _convert(home, out, "--prune", *more) == 2
    assert capsys.readouterr().err.startswith(f"asf: {why}")
    assert output_files(out) == before


def test_prune_keeps_a_file_it_cannot_delete_and_says_why(
    tmp_path: Path, hermes: Callable[[], Any]
) -> None:
    """A gone session's file in a folder closed to writing: the run goes on, the file stays,
    and the report's warning says why in the system's words."""
    home, out, gone = _gone_after_a_run(tmp_path, hermes)
    folder = gone.parent
    folder.chmod(0o555)
    try:
        argv = ["convert", str(home), "-o", str(out), "-j", "1", "--quiet", "--prune"]
        done = run_unprivileged(
            [sys.executable, "-m", "asf_core.cli.main", *argv],
            {**os.environ, "ASF_PLUGINS": "hermes"},
        )
    finally:
        folder.chmod(0o755)
    assert (done.returncode, done.stderr) == (0, "")
    assert gone.exists()
    (finding,) = _left(out)
    assert finding["kind"] == "warning"
    assert finding["message"].endswith("left in place; cannot delete it: Permission denied")
