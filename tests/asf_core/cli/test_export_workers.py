"""``asf export DIR -o DIR -j N``: the files written and the lines said are those of one
process, on real files (every converted fixture home, with sub-agents linked across files, and
the reference vectors, some of which cannot be exported); a lost worker fails its files only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mixed_tree import mixed_tree

from asf_core.cli import export_workers
from asf_core.cli.main import main
from asf_core.pipeline import workers


@pytest.fixture
def tree(tmp_path: Path, converted_homes: list[Path]) -> Path:
    return mixed_tree(tmp_path / "tree", converted_homes, {"garbage.jsonl": b"not json at all\n"})


@pytest.fixture(autouse=True)
def _always_spread(monkeypatch: pytest.MonkeyPatch) -> None:
    """However small the directory, its files go to the workers."""
    monkeypatch.setattr(workers, "MIN_BYTES", 0)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _export(
    capsys: pytest.CaptureFixture[str], tree: Path, out: Path, target: str, jobs: str
) -> tuple[int, str, dict[str, bytes]]:
    code = main(["export", str(tree), "--to", target, "-o", str(out), "-j", jobs])
    return code, capsys.readouterr().err, _files(out)


@pytest.mark.parametrize("target", ["atif", "otel", "html", "markdown"])
def test_workers_write_and_say_what_one_process_does(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    alone = _export(capsys, tree, tmp_path / "one", target, "1")
    spread = _export(capsys, tree, tmp_path / "two", target, "2")
    assert spread == alone
    code, said, files = alone
    assert code == 2  # the vectors hold files that are not ASF: said, skipped, exit 2
    assert "garbage.jsonl: not an ASF session file" in said
    assert len(files) > 40


def test_a_directory_to_stdout_is_one_process_whatever_jobs_says(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Documents written to stdout come one after the other from this process: ``-j 2``
    prints what ``-j 1`` does (workers write files only)."""
    printed = []
    for jobs in ("1", "2"):
        code = main(["export", str(tree), "--to", "atif", "-j", jobs])
        printed.append((code, *capsys.readouterr()))
    assert printed[0] == printed[1]
    code, out, _ = printed[0]
    assert code == 2
    assert len(out.splitlines()) > 40  # one document a line


_EXPORT_CHUNK = export_workers.export_chunk


def _dies_on_garbage(files: tuple[Path, ...], args: Any) -> Any:
    if any(path.name == "garbage.jsonl" for path in files):
        os._exit(9)
    return _EXPORT_CHUNK(files, args)


def test_a_lost_worker_fails_only_its_files(
    tree: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, _, alone = _export(capsys, tree, tmp_path / "one", "atif", "1")
    monkeypatch.setattr(export_workers, "export_chunk", _dies_on_garbage)
    code, said, files = _export(capsys, tree, tmp_path / "two", "atif", "2")
    assert code == 2
    lost = [line for line in said.splitlines() if "a worker process died" in line]
    assert any("garbage.jsonl" in line for line in lost)
    assert files
    assert all(alone[name] == data for name, data in files.items())
    assert len(files) + len(lost) >= len(alone)


def test_an_output_that_cannot_be_written_stops_the_run_as_with_one_process(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "home0").write_bytes(b"a file where a folder must go\n")
    results = []
    for jobs in ("1", "2"):
        code = main(["export", str(tree), "--to", "atif", "-o", str(out), "-j", jobs])
        results.append((code, capsys.readouterr().err.splitlines()[-1]))
    assert results[0] == results[1]
    assert results[0][0] == 2
    assert "cannot write" in results[0][1]


def test_when_no_worker_can_be_started_this_process_exports(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from asf_core.pipeline.workers import Workers

    alone = _export(capsys, tree, tmp_path / "one", "atif", "1")
    monkeypatch.setattr(Workers, "_fork", lambda self, ctx: False)  # no fd, no process left
    assert _export(capsys, tree, tmp_path / "two", "atif", "2") == alone


def test_one_process_exporting_twice_exports_what_it_is_asked_each_time(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small directory is exported in the asf process: a second run there (a program calling
    main twice) is exported with its own arguments, not the first run's."""
    monkeypatch.setattr(workers, "MIN_BYTES", 2**62)
    _, _, atif = _export(capsys, tree, tmp_path / "a", "atif", "2")
    _, _, markdown = _export(capsys, tree, tmp_path / "m", "markdown", "2")
    assert all(name.endswith(".atif.json") for name in atif)
    assert all(name.endswith(".md") for name in markdown)
