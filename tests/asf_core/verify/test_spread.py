"""``asf verify -j N``: a directory verified on worker processes gives exactly the findings one
process gives, on real files (the reference vectors with their problems, every converted
fixture home with its sub-agent sessions in other files), and a lost worker or an interrupt
never loses the rest."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from mixed_tree import mixed_tree

from asf_core.cli.main import main
from asf_core.pipeline import workers
from asf_core.pipeline.workers import Workers
from asf_core.verify import spread
from asf_core.verify.common import Finding
from asf_core.verify.session import check_path


@pytest.fixture
def tree(tmp_path: Path, converted_homes: list[Path]) -> Path:
    """Real files with every kind of finding, a few unreadable ones, and subsessions whose
    parent is in another folder than the child."""
    extra = {"garbage.jsonl": b"not json at all\n", "empty.jsonl": b""}
    return mixed_tree(tmp_path / "tree", converted_homes, extra)


@pytest.fixture
def submitted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every directory is spread, however small; the tickets submitted are counted."""
    monkeypatch.setattr(workers, "MIN_BYTES", 0)
    tickets: list[int] = []
    submit = Workers.submit

    def counted(self: Workers[Any], ticket: int, message: bytes) -> None:
        tickets.append(ticket)
        submit(self, ticket, message)

    monkeypatch.setattr(Workers, "submit", counted)
    return tickets


def _by_file(findings: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for finding in findings:
        out.setdefault(finding.path, []).append(finding)
    return out


def test_workers_find_what_one_process_finds(tree: Path, submitted: list[int]) -> None:
    alone = check_path(tree, jobs=1)
    assert not submitted
    spread_out = check_path(tree, jobs=2)
    assert len(submitted) > 2  # the files went out in several chunks
    assert spread_out == alone
    codes = {f.code for f in alone.findings}
    # The vectors' own problems, the unreadable files and converted sub-agents all counted.
    assert {"unreadable", "bad-parents", "missing-id"} <= codes
    assert alone.files > 40


def test_small_directories_are_verified_in_this_process(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sum(p.stat().st_size for p in tree.rglob("*.jsonl")) < workers.MIN_BYTES

    def refuse(self: Workers[Any]) -> None:
        raise AssertionError("workers started for a small directory")

    monkeypatch.setattr(Workers, "_start", refuse)
    assert check_path(tree, jobs=4).findings == check_path(tree, jobs=1).findings


_VERIFY_CHUNK = spread.verify_chunk


def _dies_on_garbage(files: tuple[Path, ...], *rest: Any) -> Any:
    if any(file.name == "garbage.jsonl" for file in files):
        os._exit(9)  # the worker is lost (killed, out of memory) mid-chunk
    return _VERIFY_CHUNK(files, *rest)


def test_a_lost_worker_fails_only_the_files_it_held(
    tree: Path, submitted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = _by_file(check_path(tree, jobs=1).findings)
    monkeypatch.setattr(spread, "verify_chunk", _dies_on_garbage)
    checked = check_path(tree, jobs=2)
    found = _by_file(checked.findings)
    lost = {path for path, items in found.items() if any(f.code == "verify-failed" for f in items)}
    assert str(tree / "garbage.jsonl") in lost
    for path in lost:
        assert [f.message for f in found[path]] == ["verification stopped: a worker process died"]
    kept = {str(path) for path in tree.rglob("*.jsonl")} - lost
    assert len(kept) > len(lost)
    assert all(found.get(path, []) == alone.get(path, []) for path in kept)
    assert not multiprocessing.active_children()


def test_an_interrupt_stops_every_worker(
    tree: Path, submitted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(self: Workers[Any]) -> Any:
        raise KeyboardInterrupt
        yield  # a generator, as collect is

    monkeypatch.setattr(Workers, "collect", interrupted)
    with pytest.raises(KeyboardInterrupt):
        check_path(tree, jobs=2)
    assert submitted
    assert not multiprocessing.active_children()


def test_the_command_prints_the_same_with_any_number_of_workers(
    tree: Path, submitted: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    printed = []
    for jobs in ("1", "2", "3"):
        assert main(["verify", str(tree), "--json", "-j", jobs]) == 1  # the vectors' errors
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1] == printed[2]
    assert json.loads(printed[0])["files"] > 40
    assert main(["verify", str(tree), "-j", "0"]) == 2
    assert "not a number of workers" in capsys.readouterr().err


def test_when_no_worker_can_be_started_this_process_verifies(
    tree: Path, submitted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = check_path(tree, jobs=1)
    monkeypatch.setattr(Workers, "_fork", lambda self, ctx: False)  # no fd, no process left
    assert check_path(tree, jobs=2) == alone
    assert not submitted
