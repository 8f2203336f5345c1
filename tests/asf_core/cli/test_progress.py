"""The convert progress line, driven directly: what a person watching stderr sees."""

from __future__ import annotations

import argparse
import io
import os
from types import SimpleNamespace
from typing import Any

import pytest

from asf_core import api
from asf_core.cli import progress
from asf_core.cli.convert import _Progress
from asf_core.cli.jobs import jobs as _jobs
from asf_core.cli.progress import Progress


class Clock:
    """A settable ``time.monotonic``."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    tick = Clock()
    monkeypatch.setattr(progress.time, "monotonic", tick)
    return tick


def test_progress_rewrites_at_most_ten_times_a_second(clock: Clock) -> None:
    stream = io.StringIO()
    shown = Progress(stream)
    shown.show("one")
    clock.now += 0.05
    shown.show("two")  # too soon: dropped
    assert stream.getvalue() == "\rone"
    clock.now += 0.06
    shown.show("six")
    assert stream.getvalue() == "\rone\rsix"


def test_progress_line_is_cut_and_pads_over_a_longer_one(clock: Clock) -> None:
    """A line never wraps (150 columns at most, fewer than a terminal's), and a shorter one
    blanks the rest."""
    stream = io.StringIO()
    shown = Progress(stream)
    shown.show("x" * 200, force=True)
    assert stream.getvalue() == "\r" + "x" * 149 + "\u2026"
    shown.show("short", force=True)
    assert stream.getvalue().endswith("\rshort" + " " * 145)


@pytest.mark.parametrize(
    ("columns", "shown"),
    [
        (80, "codex sessions: 3 of 6 sessions (3 files written)"),
        (40, "cod…: 3 of 6 sessions (3 files written)"),
        (20, "c…: 3 of 6 session…"),
        (12, "c…: 3 of 6…"),
    ],
)
def test_the_store_label_gives_way_before_the_count(
    columns: int, shown: str, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a narrow terminal the label is cut first, down to its first character, so the
    count stays in sight; before, a line whose count alone did not fit was cut from its end,
    the label whole and the count gone (``codex sessions: 3 …`` in 20 columns)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    stream = io.StringIO()
    Progress(stream).show("codex sessions: 3 of 6 sessions (3 files written)", force=True)
    assert stream.getvalue() == "\r" + shown


def test_a_shorter_line_blanks_every_column_of_a_wide_one(clock: Clock) -> None:
    """A label in Chinese takes two columns a character: the next, shorter line is padded
    over all the columns the last one took (and ``clear`` blanks them all), not over as many
    as it had characters, which left its tail on screen."""
    stream = io.StringIO()
    shown = Progress(stream)
    shown.show("hermes 工作项目: reading", force=True)  # 20 characters, 24 columns
    shown.show("hermes h: reading", force=True)
    assert stream.getvalue().endswith("\rhermes h: reading" + " " * 7)
    shown.clear()
    assert stream.getvalue().endswith("\r" + " " * 17 + "\r")


def test_a_session_without_native_ids_still_counts_one() -> None:
    """A plugin naming no native session: each session counts one. Once one is named, the
    names count, and a session naming none (a sub-agent's, written before its holder) not."""
    lines: list[str] = []
    display: Any = SimpleNamespace(show=lambda text, force=False: lines.append(text))
    counter = _Progress(display)
    counter.label = "hermes home"
    report: Any = SimpleNamespace(files_written=0)
    counter.session(report, SimpleNamespace(native_ids=()))  # type: ignore[arg-type]
    assert lines == ["hermes home: 1 session (0 files written)"]
    report.files_written = 1
    counter.session(report, SimpleNamespace(native_ids=("a", "b")))  # type: ignore[arg-type]
    assert lines[-1] == "hermes home: 2 sessions (1 file written)"
    counter.session(report, SimpleNamespace(native_ids=()))  # type: ignore[arg-type]
    assert lines[-1] == "hermes home: 2 sessions (1 file written)"


def test_sessions_done_never_pass_the_total() -> None:
    """Sub-agent files (Claude Code's carry no native id) are written beside the one listed
    session that holds them: the line said ``4 of 1 sessions``; it stops at the total."""
    lines: list[str] = []
    display: Any = SimpleNamespace(show=lambda text, force=False: lines.append(text))
    counter = _Progress(display)
    counter.label, counter.total = "claude-code proj", 1
    report: Any = SimpleNamespace(files_written=0)
    for written in range(1, 5):
        report.files_written = written
        counter.session(report, SimpleNamespace(native_ids=()))  # type: ignore[arg-type]
    assert lines[-1] == "claude-code proj: 1 of 1 sessions (4 files written)"


def test_the_time_left_is_told_until_the_last_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions still to write are given a time (at the pace so far); when all are written
    there is none to tell."""
    lines: list[str] = []
    display: Any = SimpleNamespace(show=lambda text, force=False: lines.append(text))
    clock = iter([100.0, 130.0, 160.0])
    monkeypatch.setattr("asf_core.cli.convert.time.monotonic", lambda: next(clock))
    counter = _Progress(display)
    counter.label, counter.total = "hermes home", 2
    report: Any = SimpleNamespace(files_written=1)
    counter.session(report, SimpleNamespace(native_ids=("a",)))  # type: ignore[arg-type]
    assert lines[-1] == "hermes home: 1 of 2 sessions, 0:30 left (1 file written)"
    report.files_written = 2
    counter.session(report, SimpleNamespace(native_ids=("b",)))  # type: ignore[arg-type]
    assert lines[-1] == "hermes home: 2 of 2 sessions (2 files written)"


@pytest.mark.parametrize("text", ["0", "-2", "many"])
def test_jobs_must_be_a_positive_number(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        _jobs(text)


def test_jobs_beyond_four_per_core_are_four_per_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """``-j 100000`` forked until the kernel killed the run; a ``-j 16`` copied from a larger
    machine still runs, on four workers per core."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert [_jobs(text) for text in ("1", "2", "8", "9", "100000")] == [1, 2, 8, 8, 8]


def test_transcript_refuses_an_unknown_format() -> None:
    """Checked before anything is read, so the session is not even looked at."""
    with pytest.raises(ValueError, match="unknown transcript format 'pdf'"):
        api.transcript(None, to="pdf")  # type: ignore[arg-type]


@pytest.mark.parametrize("total", [24, None])
def test_the_count_never_steps_back(total: int | None) -> None:
    """Claude Code writes a session's sub-agent files (no native id) before the session:
    three counted, then the session naming one; the line holds 3 rather than show 1."""
    lines: list[str] = []
    display: Any = SimpleNamespace(show=lambda text, force=False: lines.append(text))
    counter = _Progress(display)
    counter.label, counter.total = "claude-code proj", total
    report: Any = SimpleNamespace(files_written=0)
    counts = []
    for native_ids in [(), (), (), ("a",), ("b",), ("c",), ("d",), ("e",)]:
        counter.session(report, SimpleNamespace(native_ids=native_ids))  # type: ignore[arg-type]
        counts.append(int(lines[-1].split(": ", 1)[1].split()[0]))
    assert counts == [1, 2, 3, 3, 3, 3, 4, 5]
