"""Re-runs: a store nothing changed in is not even opened (its stamp is the last run's); a
rollout Codex appended to is converted again, alone, and only its file changes; the units
give the same files on one core or several, and the ones ``convert`` gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cx_helpers import CODEX_HOME, by_tag, convert, need_shared
from output_files import output_files

import codex_plugin.convert.stream as cx_stream
import codex_plugin.native as cx_native
import codex_plugin.source.lines as cx_lines
from codex_plugin.source.stamp import store_stamp


def _watch(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The rollouts this process reads, as they are read."""
    seen: list[Path] = []
    read_lines = cx_native.read_lines

    def counted(path: Path, *digest: Any) -> Any:
        seen.append(path)
        return read_lines(path, *digest)

    for module in (cx_native, cx_lines, cx_stream):
        monkeypatch.setattr(module, "read_lines", counted)
    return seen


def test_unchanged_store_is_not_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    need_shared()
    home = tmp_path / ".codex"
    shutil.copytree(CODEX_HOME / ".codex", home)
    out = tmp_path / "out"
    seen = _watch(monkeypatch)
    assert convert([home], out, "-j", "1") == 0  # units in this process, where ``seen`` sees
    assert len(seen) == 6  # each rollout read once, by its unit
    first = output_files(out, ran=False)
    seen.clear()
    assert convert([home], out, "-j", "1") == 0
    assert seen == []
    assert output_files(out, ran=False) == first

    x5 = home / "sessions" / by_tag("X5").relative_to(by_tag("X5").parents[3])
    line = {
        "timestamp": "2026-02-23T12:30:00.000Z",
        "type": "event_msg",
        "payload": {"type": "task_complete", "turn_id": "t"},
    }
    with x5.open("a") as stream:
        stream.write(json.dumps(line) + "\n")
    assert convert([home], out, "-j", "1") == 0
    assert seen == [x5]
    changed = {k for k, v in output_files(out, ran=False).items() if first.get(k) != v}
    assert {Path(k).name for k in changed if k.endswith(".jsonl")} == {
        f"2026-02-23T12-19-38.535Z_{x5.stem[-36:]}.jsonl"
    }


def test_stamp_follows_every_rollout(tmp_path: Path) -> None:
    need_shared()
    home = tmp_path / "sessions"
    shutil.copytree(CODEX_HOME / ".codex" / "sessions", home)
    before = store_stamp(home)
    assert before is not None
    assert store_stamp(home) == before
    (home / "2026" / "02" / "23" / "rollout-new.jsonl").write_text("{}\n")
    added = store_stamp(home)
    assert added != before
    (home / "notes.txt").write_text("not a rollout")
    assert store_stamp(home) == added
    one = by_tag("X1")
    assert store_stamp(one) is not None


def test_units_give_what_convert_gives(tmp_path: Path) -> None:
    need_shared()
    home = CODEX_HOME / ".codex"
    one, two = tmp_path / "one", tmp_path / "two"
    assert convert([home], one, "-j", "1") == 0
    assert convert([home], two, "-j", "2") == 0
    assert output_files(one, ran=False) == output_files(two, ran=False)
    picked = tmp_path / "picked"  # a selection is converted through ``convert``
    assert convert([home], picked, "--since", "2020-01-01") == 0
    files = {k: v for k, v in output_files(one, ran=False).items() if k.endswith(".jsonl")}
    assert {k: v for k, v in output_files(picked).items() if k.endswith(".jsonl")} == files


def _two_sessions_both_ways(home: Path, tmp_path: Path) -> dict[str, Any]:
    """The report of converting ``home`` through units, once it wrote two sessions, the
    same files as ``convert`` writes."""
    whole, picked = tmp_path / "whole", tmp_path / "picked"
    assert convert([home], whole, "-j", "1") == 0
    assert convert([home], picked, "--since", "2020-01-01") == 0
    files = {k: v for k, v in output_files(whole, ran=False).items() if k.endswith(".jsonl")}
    assert len(files) == 2
    assert {k: v for k, v in output_files(picked).items() if k.endswith(".jsonl")} == files
    (report,) = [json.loads(p.read_text()) for p in whole.rglob("report.json")]
    return report  # type: ignore[no-any-return]


def test_copies_of_a_thread_are_told_apart(tmp_path: Path) -> None:
    """Two rollouts of one thread (a copy in another folder): two sessions, the second named
    by its file, alike through units and through ``convert``."""
    need_shared()
    home = tmp_path / "sessions"
    for folder in ("a", "b"):
        (home / folder).mkdir(parents=True)
        shutil.copy(by_tag("X5"), home / folder)
    report = _two_sessions_both_ways(home, tmp_path)
    thread = "019c8a70-dda7-7f33-98ea-f30553347322"
    assert sorted(report["files"]) == [thread, f"{thread}~b.{by_tag('X5').stem}"]


@pytest.mark.parametrize("renamed", ["rollout-0000-renamed.jsonl", "rollout-zzzz-renamed.jsonl"])
def test_a_renamed_copy_is_told_apart_before_or_after_its_original(
    tmp_path: Path, renamed: str
) -> None:
    """A copy of a rollout under a name that does not carry its thread (listed before the
    original or after it): the original keeps the thread's name, the copy is named by its
    file, alike through units and through ``convert``; the store converts whole."""
    need_shared()
    home = tmp_path / "sessions"
    home.mkdir()
    shutil.copy(by_tag("X5"), home)
    shutil.copy(by_tag("X5"), home / renamed)
    report = _two_sessions_both_ways(home, tmp_path)
    thread = "019c8a70-dda7-7f33-98ea-f30553347322"
    assert sorted(report["files"]) == [thread, f"{thread}~{renamed.removesuffix('.jsonl')}"]


def test_a_copy_listed_before_a_converted_rollout_renames_it_on_the_next_run(
    tmp_path: Path,
) -> None:
    """A copy of a converted rollout put in a folder listed before it takes the thread's
    name: the re-run converts the original again, named by its file now, as a fresh
    conversion names the two."""
    need_shared()
    home = tmp_path / "sessions"
    (home / "b").mkdir(parents=True)
    shutil.copy(by_tag("X5"), home / "b")
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    assert convert([home], out) == 0
    (home / "a").mkdir()
    shutil.copy(by_tag("X5"), home / "a")
    assert convert([home], out) == 0
    assert convert([home], fresh) == 0
    sessions = {k: v for k, v in output_files(out).items() if k.endswith(".jsonl")}
    assert sessions == {k: v for k, v in output_files(fresh).items() if k.endswith(".jsonl")}
    (report,) = [json.loads(p.read_text()) for p in out.rglob("report.json")]
    thread = "019c8a70-dda7-7f33-98ea-f30553347322"
    assert sorted(report["files"]) == [thread, f"{thread}~b.{by_tag('X5').stem}"]


def test_a_store_with_a_folder_passed_over_has_no_stamp(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A folder the walk could not search may hold rollouts that changed: no stamp, so the
    store is converted (and says what it passed over) rather than taken as unchanged."""
    import codex_plugin.source.stamp as cx_stamp
    from asf_core.walk import Walk

    rollout = tmp_path / "sessions" / "rollout-2026-03-01T10-00-00-x.jsonl"
    rollout.parent.mkdir()
    rollout.write_text("{}\n")
    assert store_stamp(tmp_path / "sessions") is not None
    skipped = Walk(files=(rollout,), skipped=((tmp_path / "sessions" / "2026", "denied"),))
    monkeypatch.setattr(cx_stamp, "rollouts_under", lambda _: skipped)
    assert store_stamp(tmp_path / "sessions") is None


def test_a_unit_whose_rollout_is_gone_reports_it(tmp_path: Path) -> None:
    """A unit's job reads its rollout where it runs: gone by then, the job yields the
    listing's finding for it (a stray naming the file), no session and no traceback."""
    from asf_core.formats import ConvertedSession, Finding
    from codex_plugin.convert.units import RolloutJob

    root = tmp_path / "sessions"
    path = root / "rollout-2026-03-01T10-00-00-0199aaaa-0000-7000-8000-000000000009.jsonl"
    path.parent.mkdir()
    path.write_text("{}\n")
    job = RolloutJob(root, path)
    assert [type(out) for out in job()] == [ConvertedSession]
    path.unlink()
    (finding,) = list(job())
    assert isinstance(finding, Finding)
    assert (finding.kind, finding.unit) == ("stray", path.name)
    assert finding.message == "cannot read the file: No such file or directory"


def test_the_stamp_hook_answers_for_codex_claims_only(tmp_path: Path) -> None:
    """The ``stamp`` hook gives the store's stamp for a claim of this format (what lets an
    unchanged store go unopened) and leaves another format's claims to their plugin."""
    import codex_plugin.plugin as plugin
    from asf_core.formats import Claim

    sessions = tmp_path / ".codex" / "sessions"
    rollout = sessions / "rollout-2026-03-01T10-00-00-x.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_text("{}\n")
    (claim,) = plugin.discover(tmp_path / ".codex") or []
    assert isinstance(claim, Claim)
    assert plugin.stamp(claim) == store_stamp(sessions) is not None
    other = Claim(format="claude-code", path=claim.path, confidence=1.0, detail="")
    assert plugin.stamp(other) is None
    assert plugin.open_store(other) is None
