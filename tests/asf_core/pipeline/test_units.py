"""Planned conversions (the ``plan`` hook): units on worker processes, in plan order, and
units carried over from the last run when their fingerprint and files say nothing changed.

The plugin is :mod:`plan_toy` (one unit per line of a ``*.ptoy`` file); ``plan_toy.PREPARED``
lists the units the host read in this process, which is where ``prepare`` always runs.
"""

from __future__ import annotations

import errno
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import attrs
import plan_toy
import pytest
from asf_fuzz_check import time_bound
from flush_watch import watch_fsync
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from output_files import output_files
from output_tampering import holder, json_places

from asf_core import files, flush_process
from asf_core.errors import OutputError
from asf_core.files import Syncer, read_regular
from asf_core.findings import DATA_DEPTH, Finding, nesting
from asf_core.layout import FINGERPRINTS_NAME
from asf_core.pipeline import fingerprints, store_run, unchanged, workers
from asf_core.pipeline.conversion import convert_paths
from asf_core.pipeline.report import RunReport, StoreReport, read_report, write_report
from asf_core.pipeline.workers import Workers
from asf_core.plugins import AsfPluginManager, make_plugin_manager
from asf_core.writer import session_lines

LINES = ["a one two three", "b four", "c five six", "d seven eight nine ten"]


@pytest.fixture
def pm() -> Iterator[AsfPluginManager]:
    plan_toy.PREPARED.clear()
    plan_toy.OPENED.clear()
    plan_toy.STAMPS = True
    yield make_plugin_manager(plugins=[("ptoy", plan_toy.PlanToy())], autoload=False)
    plan_toy.STAMPS = True
    plan_toy.TELL_LISTED = False
    plan_toy.STARTS = None


def _store(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "src" / "s.ptoy"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(pm: AsfPluginManager, src: Path, out: Path, jobs: int = 1) -> StoreReport:
    plan_toy.PREPARED.clear()
    plan_toy.OPENED.clear()
    plan_toy.LISTED.clear()
    run, _ = convert_paths(pm, [src], out, processes=jobs)
    assert isinstance(run, RunReport)
    (report,) = run.stores
    return report


def _files(out: Path) -> dict[str, bytes]:
    return output_files(out)


def _sessions(out: Path) -> dict[str, bytes]:
    return {k: v for k, v in _files(out).items() if k.endswith(".jsonl")}


def _expected(ident: str, text: str) -> bytes:
    session = plan_toy.session_of(ident, text)
    return b"".join(session_lines(session.header, session.entries))


@pytest.mark.parametrize("jobs", [1, 2])
def test_units_convert_in_plan_order_whatever_the_workers(
    pm: AsfPluginManager, tmp_path: Path, jobs: int
) -> None:
    src = _store(tmp_path, LINES)
    report = _run(pm, src, tmp_path / "out", jobs)
    assert report.complete
    assert report.error is None
    assert list(report.files) == ["a", "b", "c", "d"]
    assert report.files_written == 4
    assert report.counts == {"words": 10}
    assert [f.message for f in report.findings] == [
        "4 lines",
        "converted a",
        "a has 13 characters",
        "converted b",
        "b has 4 characters",
        "converted c",
        "c has 8 characters",
        "converted d",
        "d has 20 characters",
        "words",
    ]
    assert report.findings[-1].data == {"words": 10}
    for line in LINES:
        ident, _, text = line.partition(" ")
        path = Path(report.output) / report.files[ident]
        assert path.read_bytes() == _expected(ident, text)
    assert plan_toy.PREPARED == ["a", "b", "c", "d"]


def test_one_worker_and_two_write_the_same_bytes(pm: AsfPluginManager, tmp_path: Path) -> None:
    src = _store(tmp_path, LINES)
    _run(pm, src, tmp_path / "one", 1)
    _run(pm, src, tmp_path / "two", 2)
    assert _files(tmp_path / "one") == _files(tmp_path / "two")


def test_when_no_worker_can_be_started_the_host_converts(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file descriptor or process left for a worker: the run goes on in the asf process."""
    src = _store(tmp_path, LINES)
    _run(pm, src, tmp_path / "one", 1)
    monkeypatch.setattr(Workers, "_fork", lambda self, ctx: False)
    report = _run(pm, src, tmp_path / "two", 2)
    assert report.complete
    assert _files(tmp_path / "one") == _files(tmp_path / "two")


@pytest.mark.parametrize(("jobs", "listed"), [(1, 1), (2, 0)])
def test_a_worker_holds_nothing_the_host_read_of_the_store(
    pm: AsfPluginManager, tmp_path: Path, jobs: int, listed: int
) -> None:
    """Workers are forked once ``plan`` has returned, before the host iterates its units:
    what the hook loaded is in every worker (loaded once), and what grows with the store in
    the host (its sessions, the plan) is never in a worker's memory: a job run by a worker
    sees no listing; one run by the host sees the host's."""
    plan_toy.TELL_LISTED = True
    plan_toy.LOADED.clear()
    report = _run(pm, _store(tmp_path, LINES), tmp_path / "out", jobs)
    converted = [f.data for f in report.findings if f.message.startswith("converted")]
    assert converted == [{"listed": listed, "loaded": 1}] * len(LINES)


def test_a_job_a_worker_sends_back_runs_in_the_host(pm: AsfPluginManager, tmp_path: Path) -> None:
    """A job that cannot give its result in a worker (``NeedsHost``) is run again in the
    host's process: the same files, report and order as on one worker."""
    lines = ["a one two three", "b ~four five", "c five six"]
    src = _store(tmp_path, lines)
    one = _run(pm, src, tmp_path / "one", 1)
    two = _run(pm, src, tmp_path / "two", 2)
    assert one.error is two.error is None
    assert _files(tmp_path / "one") == _files(tmp_path / "two")
    path = Path(two.output) / two.files["b"]
    assert path.read_bytes() == _expected("b", "four five")


def test_a_job_asking_for_the_host_in_the_host_is_a_plugin_failure(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    src = _store(tmp_path, ["a one", "b ~~two"])
    report = _run(pm, src, tmp_path / "out", 2)
    assert report.error is not None
    assert report.error.startswith(
        "plugin 'ptoy' failed in convert (unit b): NeedsHost in the host's process: "
    )
    assert "b reads only in the host" in report.error


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_unchanged_store_is_carried_over_without_reading_a_unit(
    pm: AsfPluginManager, tmp_path: Path, jobs: int
) -> None:
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out, jobs)
    before = _files(out)
    again = _run(pm, src, out, jobs)
    assert plan_toy.PREPARED == []
    assert (again.files_written, again.files_unchanged) == (0, 4)
    assert again.files == first.files
    assert again.counts == first.counts
    assert again.findings == first.findings
    assert _sessions(out) == {k: v for k, v in before.items() if k.endswith(".jsonl")}


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_unchanged_store_is_not_opened(pm: AsfPluginManager, tmp_path: Path, jobs: int) -> None:
    """The plugin's stamp of the store is the one recorded and every file is as written: the
    store is not opened, and the report is what reading it would give."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    _run(pm, src, out, jobs)
    again = _run(pm, src, out, jobs)
    assert plan_toy.OPENED == plan_toy.PREPARED == []
    assert (again.files_written, again.files_unchanged, again.bytes_written) == (0, 4, 0)
    assert again.complete
    skipped = _files(out)
    report = Path(again.output) / "report.json"
    written = report.stat().st_mtime_ns
    assert _run(pm, src, out, jobs) == again
    assert report.stat().st_mtime_ns == written  # nothing to write a third time
    plan_toy.STAMPS = False  # read as usual: every unit carried over
    full = _run(pm, src, out, jobs)
    assert [src] == plan_toy.OPENED
    assert plan_toy.PREPARED == []
    assert full == again
    assert _files(out) == skipped


def test_a_link_or_folder_named_like_a_session_does_not_keep_a_store_from_being_unchanged(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """Only regular files are session files a run must name: a link (to a session file) and
    a folder named ``*.jsonl`` put in the output leave the store as the last run left it."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out)
    dest = Path(first.output)
    written = dest / first.files["a"]
    (written.parent / "link.jsonl").symlink_to(written)
    (written.parent / "folder.jsonl").mkdir()
    (dest / "top.jsonl").symlink_to(written)
    again = _run(pm, src, out)
    assert plan_toy.OPENED == []
    assert (again.files_written, again.files_unchanged) == (0, 4)


def test_prune_reads_a_header_line_of_up_to_a_mebibyte(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """An earlier run's file of a session gone, its header line long (a large title, a
    plugin's meta): read whole up to 1 MiB, it is known for an ASF session and pruned;
    longer, it is not read (the file is only named)."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    dest = Path(_run(pm, src, out).output)
    for name, size in [("long", 900_000), ("longer", 1_100_000)]:
        header = {"type": "session", "id": f"ptoy-{name}", "meta": "x" * size}
        (dest / "default" / f"{name}.jsonl").write_text(json.dumps(header) + "\n")
    run, _ = convert_paths(pm, [src], out, prune=True)
    (report,) = run.stores
    said = {Path(f.path).name: f.code for f in report.findings if f.path}
    assert said == {"long.jsonl": "pruned", "longer.jsonl": "left"}
    assert not (dest / "default" / "long.jsonl").exists()
    assert (dest / "default" / "longer.jsonl").exists()


def test_a_store_its_plugin_does_not_stamp_is_carried_over_unit_by_unit(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """Without the plugin's stamp of the whole store, nothing records it whole: each run opens
    it and carries every unchanged unit over, from records it trusts (no warning)."""
    plan_toy.STAMPS = False
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out)
    assert json.loads((Path(first.output) / FINGERPRINTS_NAME).read_bytes())["whole"] is None
    for _ in range(2):
        again = _run(pm, src, out)
        assert [src] == plan_toy.OPENED
        assert plan_toy.PREPARED == []
        assert again.findings == first.findings
        assert (again.files_written, again.files_unchanged) == (0, 4)


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text.replace('"complete": true', '"complete": false'),
        lambda text: "[" * 100_000 + "]" * 100_000,  # deeper than Python's parser goes
    ],
    ids=["edited", "nested-too-deep"],
)
def test_a_store_whose_report_changed_is_read(
    pm: AsfPluginManager, tmp_path: Path, damage: Callable[[str], str]
) -> None:
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out)
    report = Path(first.output) / "report.json"
    report.write_text(damage(report.read_text()))
    again = _run(pm, src, out)
    assert [src] == plan_toy.OPENED
    assert plan_toy.PREPARED == []
    assert json.loads(report.read_text())["complete"] is True
    assert again.complete


def test_a_file_written_outside_the_units_is_checked_too(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    src, out = _store(tmp_path, [*LINES, "= last words"]), tmp_path / "out"
    first = _run(pm, src, out)
    finished = Path(first.output) / first.files["finished"]
    finished.unlink()
    again = _run(pm, src, out)
    assert [src] == plan_toy.OPENED
    assert finished.read_bytes() == _expected("finished", "last words")
    assert (again.files_written, again.files_unchanged) == (1, 4)


def test_a_changed_unit_alone_is_converted_and_equals_a_fresh_conversion(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    _run(pm, src, out, 2)
    changed = [*LINES[:2], "c five six and more", LINES[3]]
    _store(tmp_path, changed)
    report = _run(pm, src, out, 2)
    assert plan_toy.PREPARED == ["c"]
    assert (report.files_written, report.files_unchanged) == (1, 3)
    fresh = tmp_path / "fresh"
    _run(pm, src, fresh, 1)
    assert _sessions(out) == _sessions(fresh)


def test_a_deleted_or_edited_output_file_is_written_again(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    report = _run(pm, src, out, 1)
    dest = Path(report.output)
    (dest / report.files["b"]).unlink()
    edited = dest / report.files["d"]
    edited.write_bytes(edited.read_bytes().replace(b"seven", b"SEVEN"))
    again = _run(pm, src, out, 1)
    assert plan_toy.PREPARED == ["b", "d"]
    assert (again.files_written, again.files_unchanged) == (2, 2)
    assert edited.read_bytes() == _expected("d", "seven eight nine ten")


def _rename_over(path: Path, data: bytes) -> None:
    """What another run does to ``path``: its own whole file renamed into place."""
    theirs = path.with_name("theirs")
    theirs.write_bytes(data)
    os.replace(theirs, path)  # noqa: PTH105 - a test patches Path.replace


def _renamed_over_after_ours(monkeypatch: pytest.MonkeyPatch, path: Path, data: bytes) -> None:
    """Another run renames its file over ``path`` right after ours was renamed there."""
    real_replace = Path.replace

    def replace(self: Path, to: Path) -> Path:
        done = real_replace(self, to)
        if Path(to) == path:
            _rename_over(path, data)
        return done

    monkeypatch.setattr(Path, "replace", replace)


class _ThenRenamed:
    """The old file as ``write_if_changed`` compares it; once it has read the end, another
    run renames its own file over the path."""

    def __init__(self, handle: Any, path: Path, data: bytes) -> None:
        self.handle, self.path, self.data = handle, path, data

    def read(self, n: int = -1) -> bytes:
        chunk: bytes = self.handle.read(n)
        if not chunk and self.data:
            _rename_over(self.path, self.data)
            self.data = b""
        return chunk

    def __getattr__(self, name: str) -> Any:
        return getattr(self.handle, name)

    def __enter__(self) -> _ThenRenamed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()


@pytest.mark.parametrize("kept", [True, False], ids=["found-equal", "written"])
def test_a_file_another_run_renames_into_place_is_not_recorded_as_ours(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: bool
) -> None:
    """Two runs into one output: the other, reading the store as it was, renames its older
    file over ours just after we compared or wrote it. The record names the file we compared
    or wrote, not what the path holds a moment later, so the next run writes the stale file
    again instead of trusting it."""
    changed = [*LINES[:2], "c five six and more", LINES[3]]
    src, out = _store(tmp_path, changed if kept else LINES), tmp_path / "out"
    first = _run(pm, src, out)
    target = Path(first.output) / first.files["c"]
    stale = _expected("c", "five six")
    if kept:  # every unit converted again, compared with its file
        (Path(first.output) / FINGERPRINTS_NAME).unlink()
        real_open = Path.open
        monkeypatch.setattr(
            Path,
            "open",
            lambda self, *a, **k: (
                _ThenRenamed(real_open(self, *a, **k), self, stale)
                if self == target and a[:1] == ("rb",)
                else real_open(self, *a, **k)
            ),
        )
    else:  # the unit changed: its file is written
        _store(tmp_path, changed)
        _renamed_over_after_ours(monkeypatch, target, stale)
    _run(pm, src, out)
    monkeypatch.undo()
    assert target.read_bytes() == stale
    _run(pm, src, out)
    assert plan_toy.PREPARED == ["c"]
    assert target.read_bytes() == _expected("c", "five six and more")


def test_a_report_another_run_renames_into_place_is_not_recorded_as_ours(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record that lets the next run skip the store names the report this run wrote, not
    the older one another run renamed over it right after: the next run reads the store."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    report = Path(_run(pm, src, out).output) / "report.json"
    older = report.read_bytes()
    _store(tmp_path, [*LINES[:2], "c five six and more", LINES[3]])
    _renamed_over_after_ours(monkeypatch, report, older)
    _run(pm, src, out)
    monkeypatch.undo()
    _run(pm, src, out)
    assert [src] == plan_toy.OPENED
    assert report.read_bytes() != older


def test_a_unit_without_fingerprint_is_always_converted(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    src, out = _store(tmp_path, ["a ?always", *LINES[1:]]), tmp_path / "out"
    _run(pm, src, out, 1)
    again = _run(pm, src, out, 1)
    assert plan_toy.PREPARED == ["a"]
    assert (again.files_written, again.files_unchanged) == (0, 4)


@pytest.mark.parametrize(
    "damage",
    [
        b"not json",
        b'{"version": 1, "host": "h", "format": "ptoy", "store": "x", "units": {}, "extra": 1}',
        b'{"version": "1", "host": "h", "format": "ptoy", "store": "x", "units": {}}',
        b"[" * 100_000 + b"]" * 100_000,  # deeper than Python's parser goes
        b"[]",
        b"null",
        b'"x"',
    ],
)
def test_a_damaged_record_is_ignored_with_a_warning(
    pm: AsfPluginManager, tmp_path: Path, damage: bytes
) -> None:
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    report = _run(pm, src, out, 1)
    before = _files(out)
    (Path(report.output) / FINGERPRINTS_NAME).write_bytes(damage)
    again = _run(pm, src, out, 1)
    assert plan_toy.PREPARED == ["a", "b", "c", "d"]
    (warning,) = [f for f in again.findings if f.code == fingerprints.IGNORED]
    assert warning.kind == "warning"
    assert "ignored, every unit is converted again" in warning.message
    if damage.startswith(b"{"):  # cattrs says what and where
        assert "fingerprints" in warning.message
    assert _files(out).keys() == before.keys()
    third = _run(pm, src, out, 1)  # the record is sound again
    assert plan_toy.PREPARED == []
    assert third.files_unchanged == 4


def test_a_store_whose_path_is_not_utf8_keeps_its_records(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """A store's name (a path of bytes that are not UTF-8) goes in ``fingerprints.json``
    escaped, as any name there: the file is ASCII, and the next run carries the store over."""
    folder = tmp_path / os.fsdecode(b"caf\xe9")
    folder.mkdir()
    src = folder / "s.ptoy"
    src.write_text("\n".join(LINES) + "\n")
    out = tmp_path / "out"
    first = _run(pm, src, out)
    record = (Path(first.output) / FINGERPRINTS_NAME).read_bytes()
    assert record.isascii()
    assert json.loads(record)["store"] == str(src)
    again = _run(pm, src, out)
    assert plan_toy.PREPARED == []
    assert again.files_unchanged == 4


def test_a_record_that_says_unchanged_but_holds_more_is_damage(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """A member asf does not write, the rest saying the store is as the last run left it:
    the quick look passes it over, loading the records refuses it, and the store is read
    and converted again with the warning."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out)
    path, record = _record(first)
    record["extra"] = 0
    path.write_text(json.dumps(record, indent=1))
    again = _run(pm, src, out)
    assert [src] == plan_toy.OPENED
    assert plan_toy.PREPARED == ["a", "b", "c", "d"]
    (warning,) = [f for f in again.findings if f.code == fingerprints.IGNORED]
    assert "extra" in warning.message


def test_a_record_written_by_another_asf_is_not_trusted_nor_a_warning(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    report = _run(pm, src, out, 1)
    record = Path(report.output) / FINGERPRINTS_NAME
    data = json.loads(record.read_text())
    assert data["host"] == fingerprints.host_version()
    # The format's version, as earlier asf releases wrote it: their records are only not
    # trusted (another host), never a warning about damage or another format.
    assert data["version"] == 1
    data["host"] = "0" * 16
    record.write_text(json.dumps(data))
    again = _run(pm, src, out, 1)
    assert plan_toy.PREPARED == ["a", "b", "c", "d"]
    assert [f for f in again.findings if f.code == fingerprints.IGNORED] == []
    assert again.files_unchanged == 4  # the bytes are the same: the files are left alone


def test_a_record_of_another_store_is_not_trusted(pm: AsfPluginManager, tmp_path: Path) -> None:
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    report = _run(pm, src, out, 1)
    record = Path(report.output) / FINGERPRINTS_NAME
    data = json.loads(record.read_text())
    data["store"] = "/elsewhere/s.ptoy"
    record.write_text(json.dumps(data))
    again = _run(pm, src, out, 1)
    assert plan_toy.PREPARED == ["a", "b", "c", "d"]
    (warning,) = [f for f in again.findings if f.code == fingerprints.IGNORED]
    assert warning.message.endswith("written by another version of asf or for another store")


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize(("text", "failure"), [("!damaged", "damaged"), ("!bug", "plugin")])
def test_a_failing_unit_stops_its_store(
    pm: AsfPluginManager, tmp_path: Path, jobs: int, text: str, failure: str
) -> None:
    src = _store(tmp_path, [LINES[0], f"b {text}", *LINES[2:]])
    run, problems = convert_paths(pm, [src], tmp_path / "out", processes=jobs)
    (report,) = run.stores
    assert not report.complete
    assert list(report.files) == ["a"]
    (problem,) = problems
    assert problem.code == failure
    if failure == "damaged":
        assert report.error == "line b is damaged"
    else:
        assert report.error == "plugin 'ptoy' failed in convert (unit b): KeyError: 'b'"
    # The units before it are recorded: a re-run of the repaired store converts the rest.
    _store(tmp_path, LINES)
    again = _run(pm, src, tmp_path / "out", jobs)
    assert plan_toy.PREPARED == ["b", "c", "d"]
    assert again.complete


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_unit_whose_store_keeps_changing_is_tried_three_times_then_stops_the_store(
    pm: AsfPluginManager, tmp_path: Path, jobs: int
) -> None:
    """A unit that finds its store changed while it was read: the store is converted again
    from its opening, and after the third try it stops, said as a damaged store."""
    src = _store(tmp_path, [LINES[0], "b !changed", *LINES[2:]])
    run, problems = convert_paths(pm, [src], tmp_path / "out", processes=jobs)
    (report,) = run.stores
    assert [src, src, src] == plan_toy.OPENED
    assert not report.complete
    assert list(report.files) == ["a"]
    (problem,) = problems
    assert problem.code == "damaged"
    assert report.error == "line b changed while it was read"


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_unit_s_session_named_as_no_file_can_be_stops_the_store(
    pm: AsfPluginManager, tmp_path: Path, jobs: int
) -> None:
    """A unit's session whose name cannot be a file name (a slash in it) is the plugin's
    bug, as it is from ``convert``: its file is not written, the store stops there."""
    src = _store(tmp_path, [LINES[0], "b/c five six", *LINES[2:]])
    run, problems = convert_paths(pm, [src], tmp_path / "out", processes=jobs)
    (report,) = run.stores
    assert not report.complete
    assert list(report.files) == ["a"]
    (problem,) = problems
    assert problem.code == "plugin"
    assert report.error == (
        "plugin 'ptoy' failed in convert: session name 'b/c' is not a file name"
    )
    assert not [p for p in _sessions(tmp_path / "out") if "ptoy-b" in Path(p).name]


def test_two_units_of_one_key_stop_the_store_as_the_plan_s_failure(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """A key names one unit's record: a plan giving it twice is the plugin's bug, said as
    one in ``plan`` (not as the two sessions of one name that would follow), and the store
    stops there."""
    src = _store(tmp_path, [LINES[0], "a again", *LINES[1:]])
    run, problems = convert_paths(pm, [src], tmp_path / "out")
    (report,) = run.stores
    assert not report.complete
    assert list(report.files) == ["a"]
    (problem,) = problems
    assert problem.code == "plugin"
    assert report.error == "plugin 'ptoy' failed in plan: two units have the key 'a'"
    assert plan_toy.PREPARED == ["a"]


def test_a_worker_that_dies_stops_its_store_and_says_so(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """Not run again in the host (what killed the worker, memory above all, would kill the
    host next): the store stops as for a plugin's failure, with what came before it kept."""
    src = _store(tmp_path, [LINES[0], "b !die", *LINES[2:]])
    run, problems = convert_paths(pm, [src], tmp_path / "out", processes=2)
    (report,) = run.stores
    assert not report.complete
    assert report.error == "a worker process died"
    assert [p.code for p in problems] == ["plugin"]
    # The job waiting behind b in the dead worker's pipe fails with it; nothing after b counts.
    assert list(report.files) == ["a"]


def test_the_jobs_of_a_stopped_store_never_run_for_the_next(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store stopped by a failing unit abandons the jobs still waiting for a worker: none
    runs once the next store starts workers (it would write into the stopped store's
    output, and its outcome come back under a ticket of the next store's)."""
    monkeypatch.setattr(workers, "_send_buffer", lambda conn: 0)  # jobs wait in the host
    src = tmp_path / "src"
    src.mkdir()
    # a fails at once while b runs on; c goes to a's worker, d waits for the host's next.
    (src / "first.ptoy").write_text("a !damaged\nb " + "word " * 20000 + "\nc x\nd y\n")
    (src / "second.ptoy").write_text("\n".join(LINES) + "\n")
    stores = [src / "first.ptoy", src / "second.ptoy"]
    run, _ = convert_paths(pm, stores, tmp_path / "out", processes=2)
    first, second = run.stores
    assert first.error == "line a is damaged"
    assert not list(Path(first.output).rglob("*ptoy-d.jsonl"))
    alone = _run(pm, src / "second.ptoy", tmp_path / "alone", 2)
    assert second.complete
    assert list(second.files) == list(alone.files) == ["a", "b", "c", "d"]
    assert _sessions(Path(second.output)) == _sessions(Path(alone.output))


@pytest.mark.parametrize(("asked", "started"), [(2, 2), (3, 1)])
def test_the_host_reads_ahead_two_units_a_worker_at_most(
    pm: AsfPluginManager,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    asked: int,
    started: int,
) -> None:
    """So that memory holds a few units at a time however large the store: two a worker
    started, when the system starts fewer than ``-j`` asks."""
    seen: list[int] = []
    submit = Workers.submit
    fork = Workers._fork
    monkeypatch.setattr(
        Workers, "_fork", lambda self, ctx: len(self._procs) < started and fork(self, ctx)
    )

    def counting(self: Workers, ticket: int, message: bytes) -> None:
        submit(self, ticket, message)
        seen.append(self.pending)

    monkeypatch.setattr(Workers, "submit", counting)
    lines = [f"u{n} word{n} and more" for n in range(14)]
    report = _run(pm, _store(tmp_path, lines), tmp_path / "out", asked)
    assert report.complete
    assert len(seen) == len(lines)
    assert max(seen) == 2 * started


@pytest.mark.parametrize("room", [True, False])
def test_a_worker_starts_its_next_job_without_waiting_for_the_host(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, room: bool
) -> None:
    """The host is slow to read outcomes (planning, or descheduled); a worker's next job
    waits in its pipe and starts as soon as the last one is done. Where the pipe has no room
    for it (its buffer unknown), the next job goes out only once the host has read."""
    pause = 1.0
    collect = Workers.collect

    def slow(self: Workers) -> Iterator[tuple[int, Any]]:
        time.sleep(pause)
        return collect(self)

    monkeypatch.setattr(Workers, "collect", slow)
    if not room:
        monkeypatch.setattr(workers, "_send_buffer", lambda conn: 0)
    plan_toy.STARTS = tmp_path / "starts.log"
    report = _run(pm, _store(tmp_path, LINES), tmp_path / "out", 2)
    assert report.complete
    by_worker: dict[str, list[float]] = {}
    for line in plan_toy.STARTS.read_text().splitlines():
        _, pid, start = line.split()
        by_worker.setdefault(pid, []).append(float(start))
    assert sorted(map(len, by_worker.values())) == [2, 2]
    waits = [b - a for a, b in by_worker.values()]
    if room:
        assert max(waits) < pause * 0.6
    else:
        assert min(waits) > pause * 0.6


def test_a_pipe_buffer_is_read_where_there_is_one(tmp_path: Path) -> None:
    import multiprocessing

    ours, theirs = multiprocessing.Pipe()
    with ours, theirs:
        assert workers._send_buffer(ours) >= 4 * 1024
    with (tmp_path / "file").open("wb") as plain:
        assert workers._send_buffer(plain) == 0  # type: ignore[arg-type]


def test_a_plugin_that_does_not_plan_converts_with_workers_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-j`` is for planned units; a store of a plugin without ``plan`` converts as before,
    in the ``asf`` process: no worker is started for it."""
    whole = make_plugin_manager(plugins=[("ptoy", plan_toy.WholeToy())], autoload=False)
    src = _store(tmp_path, LINES)
    planned = make_plugin_manager(plugins=[("ptoy", plan_toy.PlanToy())], autoload=False)
    _run(planned, src, tmp_path / "planned", 2)
    started: list[int] = []
    real_start = Workers._start

    def start(self: Workers) -> None:
        started.append(self.count)
        real_start(self)

    monkeypatch.setattr(Workers, "_start", start)
    run, problems = convert_paths(whole, [src], tmp_path / "out", processes=2)
    assert started == []
    (report,) = run.stores
    assert problems == []
    assert list(report.files) == ["a", "b", "c", "d"]
    assert not (Path(report.output) / FINGERPRINTS_NAME).exists()
    assert _sessions(tmp_path / "out") == _sessions(tmp_path / "planned")


def test_the_syncer_flushes_every_file_and_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed = watch_fsync(monkeypatch)
    monkeypatch.setattr(flush_process, "FIRST_HERE", 10**6)  # watched here: the thread flushes
    top = tmp_path / "out" / "store"
    files = [top / "p" / "a.jsonl", top / "p" / "b.jsonl", top / "q" / "c.jsonl"]
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    syncer = Syncer()
    syncer.add(files)
    syncer.finish(top)
    expected_dirs = {top / "p", top / "q", top, tmp_path / "out"}
    assert sorted(flushed[:3]) == sorted(map(str, files))
    assert set(flushed[3:]) == set(map(str, expected_dirs))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_whether_a_record_holds_is_a_yes_or_a_no_whatever_the_file_holds(
    pm: AsfPluginManager, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """The check an unchanged run makes first reads the record as parsed JSON: a value of
    any type anywhere in it (or one missing) is a no, never an exception."""
    tmp = tmp_path_factory.mktemp("holds")
    src, out = _store(tmp, LINES), tmp / "out"
    report = _run(pm, src, out)
    dest = Path(report.output)
    record = dest / FINGERPRINTS_NAME
    stamp = json.loads(record.read_bytes())["whole"]["stamp"]
    assert fingerprints.holds(dest, "ptoy", str(src), stamp)
    parsed = json.loads(record.read_bytes())
    at = data.draw(st.sampled_from(json_places(parsed)[1:]))
    parent = holder(parsed, at)
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[at[-1]]
    else:
        parent[at[-1]] = data.draw(_JSON)
    record.write_text(json.dumps(parsed))
    assert fingerprints.holds(dest, "ptoy", str(src), stamp) in (True, False)


def test_a_record_holds_only_while_everything_it_names_is_as_written(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    src, out = _store(tmp_path, [*LINES, "= last words"]), tmp_path / "out"
    report = _run(pm, src, out)
    dest = Path(report.output)
    stamp = json.loads((dest / FINGERPRINTS_NAME).read_bytes())["whole"]["stamp"]
    assert fingerprints.holds(dest, "ptoy", str(src), stamp)
    assert not fingerprints.holds(dest, "ptoy", str(src), stamp + "x")
    assert not fingerprints.holds(dest, "ptoy", "/elsewhere/s.ptoy", stamp)
    assert not fingerprints.holds(dest, "other", str(src), stamp)
    for name in [report.files["b"], report.files["finished"], "report.json"]:
        path = dest / name
        st_ = path.stat()
        os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns + 1))
        assert not fingerprints.holds(dest, "ptoy", str(src), stamp), name
        os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))
        assert fingerprints.holds(dest, "ptoy", str(src), stamp)
    record = dest / FINGERPRINTS_NAME
    parsed = json.loads(record.read_bytes())
    parsed["whole"]["files"] = {"a\0b": parsed["whole"]["report"]}  # no file has that name
    record.write_text(json.dumps(parsed))
    assert not fingerprints.holds(dest, "ptoy", str(src), stamp)
    record.unlink()
    assert not fingerprints.holds(dest, "ptoy", str(src), stamp)


def _records_as_found(dest: Path) -> dict[str, Any]:
    """A store's records with each file stamp checked against the file and left out: what two
    runs that wrote the same files (at other times, in other inodes) must agree on."""
    records = json.loads((dest / FINGERPRINTS_NAME).read_bytes())

    def checked(stamp: object, name: str) -> str:
        assert stamp == attrs.asdict(fingerprints.stamp(dest / name))
        return "as written"

    whole = records["whole"]
    whole["report"] = checked(whole["report"], "report.json")
    whole["files"] = {name: checked(stamp, name) for name, stamp in whole["files"].items()}
    for unit in records["units"].values():
        for item in unit["items"]:
            session = item["session"]
            if session is not None:
                session["stamp"] = checked(session["stamp"], session["file"])
    return records


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_run_after_a_conversion_records_its_report_as_the_records_would(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """The first unchanged run after a conversion rewrites ``report.json`` (its counts move to
    unchanged) and records its new stamp in the records as parsed, without cattrs: the same
    records and report as loading, changing and saving them structured."""
    src = _store(tmp_path, [*LINES, "= last words"])
    quick, structured = tmp_path / "quick", tmp_path / "structured"
    for out in (quick, structured):
        _run(pm, src, out, jobs)
    quick_report = _run(pm, src, quick, jobs)
    with monkeypatch.context() as patch:
        patch.setattr(unchanged.Held, "as_saved", lambda self: False)
        structured_report = _run(pm, src, structured, jobs)
    assert plan_toy.OPENED == []
    assert quick_report.files_written == structured_report.files_written == 0
    dests = [Path(quick_report.output), Path(structured_report.output)]
    assert _records_as_found(dests[0]) == _records_as_found(dests[1])
    reports = [(d / "report.json").read_text().replace(str(d), "OUT") for d in dests]
    assert reports[0] == reports[1]
    for dest in dests:  # as saved, and trusted by the run after
        records, warning = fingerprints.load(dest, "ptoy", str(src))
        assert warning is None
        assert records is not None
        data = (dest / FINGERPRINTS_NAME).read_bytes()
        assert unchanged.records_bytes(fingerprints._converter().unstructure(records)) == data
    written = (dests[0] / "report.json").stat().st_mtime_ns
    assert _run(pm, src, quick, jobs) == quick_report
    assert plan_toy.OPENED == []
    assert (dests[0] / "report.json").stat().st_mtime_ns == written


def test_records_not_as_saved_are_restamped_structured(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """Records written another way (here indented: the same JSON) are not restamped as
    parsed but loaded and saved: the run is still unchanged and leaves them as saved."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    dest = Path(_run(pm, src, out).output)
    record = dest / FINGERPRINTS_NAME
    record.write_text(json.dumps(json.loads(record.read_bytes()), indent=1))
    again = _run(pm, src, out)
    assert plan_toy.OPENED == []
    assert (again.files_written, again.files_unchanged) == (0, 4)
    parsed = json.loads(record.read_bytes())
    assert unchanged.records_bytes(parsed) == record.read_bytes()
    assert _run(pm, src, out) == again
    assert plan_toy.OPENED == []


def test_a_report_reads_back_as_written(tmp_path: Path) -> None:
    report = StoreReport(format="f", plugin="p", path="/s", output="/o", sessions_read=3)
    report.note(
        [
            Finding(kind="stray", message="a row", unit="db:messages/4", data={"n": [1, 2]}),
            Finding(kind="dropped", message="a column", code="c"),
            Finding(kind="warning", message="odd", line=3, path="x.jsonl", entry="e1"),
        ]
    )
    report.files, report.counts = {"s": "p/s.jsonl"}, {"rows": 7}
    report.redactions, report.store = {"s": {"email": 1}}, {"name": "db", "nested": {"a": []}}
    path = tmp_path / "report.json"
    write_report(path, report)
    assert read_report(path) == report
    value = json.loads(path.read_text())
    for damaged in [[], {**value, "extra": 1}, {**value, "strays": [["not", "an object"]]}]:
        path.write_text(json.dumps(damaged))
        with pytest.raises(ValueError, match="not a store report"):
            read_report(path)
    path.write_text("[" * 100_000 + "]" * 100_000)  # deeper than Python's parser goes
    with pytest.raises(ValueError, match="not a store report"):
        read_report(path)
    del value["format"]
    path.write_text(json.dumps(value))
    with pytest.raises(ValueError, match="not a store report"):
        read_report(path)


def _record(report: StoreReport) -> tuple[Path, dict[str, Any]]:
    path = Path(report.output) / FINGERPRINTS_NAME
    return path, json.loads(path.read_bytes())


@pytest.mark.parametrize("name", ["a\0b", "/etc/hostname", "../../../src/s.ptoy", ""])
def test_a_recorded_file_outside_the_store_is_never_trusted(
    pm: AsfPluginManager, tmp_path: Path, name: str
) -> None:
    """A record naming a file that is not the store's own (absolute, climbing out, a name no
    file has) even with that file's real stamp: the unit is converted again and its own file
    written back, whether the whole store or the unit alone is checked."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out)
    own = Path(first.output) / first.files["b"]
    path, record = _record(first)
    session = next(i["session"] for i in record["units"]["b"]["items"] if i.get("session"))
    if name.startswith(("/", "..")):
        st = (Path(first.output) / name).stat()
        session["stamp"] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}
    session["file"] = name
    path.write_text(json.dumps(record))
    own.unlink()
    again = _run(pm, src, out)
    assert plan_toy.PREPARED == ["b"]
    assert own.read_bytes() == _expected("b", "four")
    assert (again.files_written, again.files_unchanged) == (1, 3)


def test_finding_data_nested_too_deep_in_the_record_is_damage(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """Data nested far past what asf writes would make writing the record again recurse
    without end: the record is ignored with a warning, as any damage."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out)
    path, record = _record(first)
    deep: Any = []
    for _ in range(400):
        deep = [deep]
    item = next(i["session"] for i in record["units"]["b"]["items"] if i.get("session"))
    item["findings"] = [{"kind": "info", "message": "m", "data": {"x": deep}}]
    path.write_text(json.dumps(record))
    (Path(first.output) / first.files["b"]).unlink()
    again = _run(pm, src, out)
    (warning,) = [f for f in again.findings if f.code == fingerprints.IGNORED]
    assert warning.message.endswith(".findings[0].data")  # cattrs names the member
    assert plan_toy.PREPARED == ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    ("member", "value", "expected"),
    [("entries", "1", "expected int @"), ("id", 7, "expected str @")],
)
def test_a_recorded_value_of_another_type_is_damage_not_coerced(
    pm: AsfPluginManager, tmp_path: Path, member: str, value: object, expected: str
) -> None:
    """A number written as text (or text as a number) in a record cattrs reads (its sessions
    carry findings) is not taken for the value it spells: the record is ignored, saying which
    member, and every unit is converted again."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out)
    path, record = _record(first)
    item = next(i["session"] for i in record["units"]["b"]["items"] if i.get("session"))
    assert item["findings"]  # the record is cattrs' to read
    item[member] = value
    path.write_text(json.dumps(record))
    again = _run(pm, src, out)
    (warning,) = [f for f in again.findings if f.code == fingerprints.IGNORED]
    assert expected in warning.message
    assert re.search(
        rf"@ fingerprints\.units\['b'\]\.items\[\d\]\.session\.{member}$", warning.message
    )
    assert plan_toy.PREPARED == ["a", "b", "c", "d"]


def test_finding_data_nested_as_deep_as_a_plugin_may_give_is_carried_over(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """A finding's data may nest :data:`~asf_core.findings.DATA_DEPTH` deep (the plugin's
    limit): its record is read back as written and the unit carried over; one level more is
    damage, as above."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out)
    path, record = _record(first)
    data: Any = {}
    for _ in range(DATA_DEPTH - 1):
        data = {"x": data}
    assert nesting(data) == DATA_DEPTH
    item = next(i["session"] for i in record["units"]["c"]["items"] if i.get("session"))
    item["findings"] = [{"kind": "info", "message": "m", "data": data}]
    path.write_text(json.dumps(record))
    (Path(first.output) / first.files["b"]).unlink()  # the store is read: its records too
    again = _run(pm, src, out)
    assert [f for f in again.findings if f.code == fingerprints.IGNORED] == []
    assert plan_toy.PREPARED == ["b"]
    assert Finding(kind="info", message="m", data=data) in again.findings


def test_a_record_that_is_not_a_regular_file_is_not_waited_on(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """A FIFO in the record's place: read without blocking, refused, and the run stops with
    the output error that replacing it calls for."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out)
    path, _ = _record(first)
    path.unlink()
    os.mkfifo(path)
    with time_bound(30):  # a regression blocks on the FIFO: fail, do not hang the suite
        with pytest.raises(OSError, match="not a regular file"):
            read_regular(path)
        stamp = "whatever"
        assert not fingerprints.holds(Path(first.output), "ptoy", str(src), stamp)
        records, warning = fingerprints.load(Path(first.output), "ptoy", str(src))
        assert records is None
        assert warning is not None
        assert "not a regular file" in warning.message
        with pytest.raises(OutputError, match="not a regular file"):
            _run(pm, src, out)


def _edit_in_place(path: Path, old: str, new: str) -> None:
    """Change a file's bytes keeping its size, times and inode: its stamp says nothing."""
    st = path.stat()
    data = path.read_bytes()
    changed = data.replace(old.encode(), new.encode(), 1)
    assert changed != data
    assert len(changed) == len(data)
    with path.open("r+b") as f:
        f.write(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"sessions_read": 4', '"sessions_read":[]'),
        ('"files_written": 0', '"files_written":""'),
        ('"error": null', '"error": 1234'),
        ('"error": null', '"error": "xy"'),
        ('"complete": true', '"complete": 1   '),
        ('"complete": true', '"complete":false'),
        ('"redacted": false', '"redactex": false'),
    ],
)
def test_a_report_edited_in_place_is_not_taken_as_the_last_run(
    pm: AsfPluginManager, tmp_path: Path, old: str, new: str
) -> None:
    """``report.json`` changed without its stamp changing (same size, times and inode): what
    it holds is checked before an unchanged run takes it as its own; odd, or saying that run
    did not finish, it is not taken: the store is read, and its report written again."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    first = _run(pm, src, out)
    _run(pm, src, out)  # the counts settle: an unchanged run would not write the report
    report = Path(first.output) / "report.json"
    _edit_in_place(report, old, new)
    again = _run(pm, src, out)
    assert [src] == plan_toy.OPENED
    assert again.complete
    assert again.error is None
    assert json.loads(report.read_text())["complete"] is True


def test_an_unchanged_run_that_cannot_write_its_report_says_so(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run after a conversion moves the report's counts to unchanged: an output that has
    become read-only is the output error every other write gives, not a traceback."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    _run(pm, src, out)

    def read_only(*_: object, **__: object) -> bool:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(store_run, "write_report", read_only)
    with pytest.raises(OutputError, match=r"cannot write in .*Permission denied"):
        _run(pm, src, out)


def test_an_output_moved_while_written_is_named_in_one_line(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The output is moved away part way (the run writes on into a new directory of the same
    name): the file written before it cannot be flushed, and the error says which one is gone
    and the likely why, not "No such file" about a directory that is there. Flushing waits
    for the move, as a slow disk would."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    moved = threading.Event()
    real_fsync = files._fsync

    def fsync_after_the_move(path: Path, flags: int) -> None:
        moved.wait(10)
        real_fsync(path, flags)

    def move(*_: object) -> None:
        if not moved.is_set():
            out.rename(tmp_path / "moved")
            moved.set()

    monkeypatch.setattr(files, "_fsync", fsync_after_the_move)
    monkeypatch.setattr(flush_process, "FIRST_HERE", 10**6)  # the slow disk is this process's
    with pytest.raises(OutputError) as caught:
        convert_paths(pm, [src], out, on_session=move)
    first = Path(str(caught.value).split(": ")[0].removeprefix("cannot flush "))
    assert first.is_relative_to(out)
    assert first.name.endswith("_ptoy-a.jsonl")  # the first written, moved away with out
    assert str(caught.value) == (
        f"cannot flush {first}: gone since it was written (output moved or deleted?)"
    )


def test_a_flush_the_disk_fails_is_named_with_the_system_s_words(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk that fails to flush the store's folder (an I/O error): the run stops with one
    line naming the folder and the system's reason, nothing more."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    real_fsync = files._fsync

    def failing_disk(path: Path, flags: int) -> None:
        if path.name.startswith("src-s.ptoy-"):
            raise OSError(errno.EIO, os.strerror(errno.EIO), str(path))
        real_fsync(path, flags)

    monkeypatch.setattr(files, "_fsync", failing_disk)
    with pytest.raises(OutputError) as caught:
        convert_paths(pm, [src], out)
    (dest,) = (out / "ptoy").glob("src-s.ptoy-*")
    assert str(caught.value) == f"cannot flush {dest}: Input/output error"


@given(st.text(alphabet="/.a\0", max_size=12))
def test_a_recorded_name_is_read_as_a_path_would_be(name: str) -> None:
    """The record's file names are judged on their text (quick enough to check every file of
    an unchanged store); the rule is the path's: relative, never climbing out."""
    path = PurePosixPath(name)
    as_path = bool(name) and "\0" not in name and not path.is_absolute() and ".." not in path.parts
    assert unchanged.inside(name) == as_path


class _Unpicklable:
    """A job that refuses to be pickled otherwise than ``pickle`` itself refuses."""

    def __init__(self, job: Callable[[], Any], error: BaseException) -> None:
        self.job, self.error = job, error

    def __call__(self) -> Any:
        return self.job()

    def __reduce__(self) -> str:
        raise self.error


@pytest.mark.parametrize(
    "error", [ValueError("no"), RecursionError("deep"), OSError(5, "gone")], ids=repr
)
def test_a_job_that_cannot_be_pickled_in_any_way_runs_in_the_host(
    pm: AsfPluginManager,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    error: BaseException,
) -> None:
    """However a plugin's job fails to pickle, it is the host's to run: the same files."""
    src = _store(tmp_path, LINES)
    _run(pm, src, tmp_path / "one", jobs=1)
    real = plan_toy._prepare

    def prepare(ident: str, text: str) -> Any:
        job = real(ident, text)
        return _Unpicklable(job, error) if ident == "b" else job

    monkeypatch.setattr(plan_toy, "_prepare", prepare)
    report = _run(pm, src, tmp_path / "two", jobs=2)
    assert report.complete
    assert report.error is None
    assert _sessions(tmp_path / "two") == _sessions(tmp_path / "one")
