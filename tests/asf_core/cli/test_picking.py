"""The options picking sessions (docs/cli.md "Picking sessions") on real Claude Code stores,
and how ``asf list``/``asf show`` put times and entries before people."""

from __future__ import annotations

import io
import json
import sys
import unicodedata
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fixture_homes import EXAMPLE
from fixture_paths import CLAUDE_HOME, SHARED

from asf_core.cli.humane import age
from asf_core.cli.main import ExitCode, main
from asf_core.cli.render import WIDTH, clip
from asf_core.formats import NativeSession, Selection

CLAUDE = CLAUDE_HOME / ".claude"
PROJECTS = CLAUDE / "projects"
#: A shared session holding an ``isMeta`` line (Claude Code's own text for the model).
WITH_META = PROJECTS / "-home-marco-projects-spotter" / "491e126e-1e71-469c-ade2-fcc8af567c74.jsonl"
VECTORS = SHARED / "asf" / "vectors" / "testdata" / "sessions"


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def _listed(capsys: pytest.CaptureFixture[str], *options: str) -> list[dict[str, Any]]:
    code, stdout, _ = _run(capsys, "list", CLAUDE, "--json", *options)
    assert code == ExitCode.OK
    return [s for store in json.loads(stdout)["stores"] for s in store["sessions"]]


def _started(session: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(session["started"].replace("Z", "+00:00"))


def test_zero_is_a_count(capsys: pytest.CaptureFixture[str]) -> None:
    """``--min-rows 0`` picks every session, ``--limit 0`` none: both are whole numbers."""
    every = _listed(capsys)
    assert len(_listed(capsys, "--min-rows", "0")) == len(every)
    assert _listed(capsys, "--limit", "0") == []
    code, _, err = _run(capsys, "list", CLAUDE, "--limit", "-1")
    assert code == ExitCode.USAGE
    assert "negative" in err


def test_until_a_date_includes_that_whole_day(capsys: pytest.CaptureFixture[str]) -> None:
    every = _listed(capsys)
    session = every[0]
    day = _started(session).astimezone().date().isoformat()
    picked = {s["id"] for s in _listed(capsys, "--since", day, "--until", day)}
    assert session["id"] in picked
    assert picked == {s["id"] for s in every if _started(s).astimezone().date().isoformat() == day}


def test_a_session_id_is_read_without_surrounding_blanks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An id pasted with a space around it still names its session (a blank one is refused:
    see below)."""
    wanted = _listed(capsys)[-1]["id"]
    picked = _listed(capsys, "--session", f" {wanted} ")
    assert [s["id"] for s in picked] == [wanted]


def test_cwd_is_compared_as_a_normalised_path(capsys: pytest.CaptureFixture[str]) -> None:
    """``DIR/sub/..`` is DIR: the sessions that ran in DIR or below it."""
    every = _listed(capsys)
    cwd = every[0]["cwd"]
    picked = _listed(capsys, "--cwd", f"{cwd}/sub/..")
    assert picked
    assert {s["id"] for s in picked} == {
        s["id"] for s in every if s["cwd"] == cwd or s["cwd"].startswith(cwd + "/")
    }


def test_title_and_model_match_however_accents_are_encoded(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A title typed composed (NFC) finds one stored decomposed (NFD) and the other way
    round; before, ``--title`` compared code points and found nothing."""
    code, stdout, _ = _run(capsys, "list", EXAMPLE, "--json", "--title", "ÜNÏCÖDÉ")
    assert code == ExitCode.OK
    (found,) = [s for store in json.loads(stdout)["stores"] for s in store["sessions"]]
    title = found["title"]
    assert unicodedata.is_normalized("NFC", title)
    for form in ("NFC", "NFD"):
        typed = unicodedata.normalize(form, "ünïcödé")
        code, stdout, _ = _run(capsys, "list", EXAMPLE, "--json", "--title", typed)
        assert [s["id"] for st in json.loads(stdout)["stores"] for s in st["sessions"]] == [
            found["id"]
        ]
    stored = Selection(title=unicodedata.normalize("NFC", "Café"), model="ÉTÉ")
    as_nfd = {"title": unicodedata.normalize("NFD", "café noir"), "model": "été-1"}
    assert stored.matches(NativeSession(id="s", native=None, **as_nfd))


@pytest.mark.parametrize("option", ["--since", "--until"])
@pytest.mark.parametrize("when", ["99999999999999d", "9999999w", "3000000d", "0001-01-01"])
def test_a_time_beyond_the_calendar_is_one_line(
    option: str, when: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An age older than year 1 (``--since 99999999999999d``) raised OverflowError, a
    traceback, from ``list``, ``convert`` and ``show``; a date whose local time falls
    before it said only ``year 0 is out of range``. Each is a usage error naming the time
    (found trying picking options by hand)."""
    for command in ("list", "convert", "show"):
        argv = [command, EXAMPLE, option, when, *(["-o", "-"] if command == "convert" else [])]
        code, stdout, err = _run(capsys, *argv)
        assert (code, stdout) == (ExitCode.USAGE, "")
        assert err == f"asf: {when!r} is beyond the calendar (years 1 to 9999)\n"


@pytest.mark.parametrize("option", ["--since", "--until"])
def test_an_empty_time_is_a_usage_error(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--since "$UNSET"`` was read as no bound: ``list`` listed and ``convert`` converted
    every session. It is refused, as an empty ``--title`` is (a blank one is no time
    either; found trying picking options by hand)."""
    for command in ("list", "convert", "show"):
        argv = [command, EXAMPLE, option, "", *(["-o", "-"] if command == "convert" else [])]
        code, stdout, err = _run(capsys, *argv)
        assert (code, stdout) == (ExitCode.USAGE, "")
        assert err == f"asf: {option} needs a time, not ''\n"


def test_a_cwd_under_a_user_who_is_not_here_names_the_user(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--cwd ~nosuchuser/x`` said ``no home directory for ~ ($HOME is unset)`` with
    ``$HOME`` set (found trying picking options by hand): it names the user."""
    code, stdout, err = _run(capsys, "list", EXAMPLE, "--cwd", "~asf-no-such-user/x")
    assert (code, stdout) == (ExitCode.USAGE, "")
    assert err == "asf: --cwd ~asf-no-such-user/x: no user 'asf-no-such-user' here\n"


@pytest.mark.parametrize("option", ["--title", "--model", "--session"])
@pytest.mark.parametrize("text", ["", "  "])
def test_an_empty_title_model_or_session_is_a_usage_error(
    option: str, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--title "$UNSET"`` picked every session (a title contains ''), even those without
    one: ``convert`` converted them all; ``--session "$UNSET"`` was dropped as blank, so it
    picked every session too. Each is refused, as an empty path is."""
    for command in ("list", "convert", "show"):
        argv = [command, EXAMPLE, option, text, *(["-o", "-"] if command == "convert" else [])]
        code, stdout, err = _run(capsys, *argv)
        assert (code, stdout) == (ExitCode.USAGE, "")
        assert err == f"asf: {option} needs some text to look for, not {text!r}\n"


def test_limit_converts_the_newest_session_of_all_stores(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--limit`` keeps the most recently started sessions across the stores, whichever
    store is found first."""
    newest = max(_listed(capsys), key=_started)["id"]
    code, _, _ = _run(capsys, "convert", CLAUDE, "--limit", "1", "-o", tmp_path, "--quiet")
    assert code == ExitCode.OK
    reports = [json.loads(p.read_text()) for p in tmp_path.rglob("report.json")]
    assert [name for r in reports for name in r["files"] if "." not in name] == [newest]


def test_a_whole_id_wins_over_the_ids_it_starts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Sessions ``s1`` and ``s1x``: ``--session s1`` names the first, ``--session s`` both."""
    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    source = next(p for p in PROJECTS.glob("*/*.jsonl") if p.stat().st_size < 20_000)
    for name in ("s1", "s1x"):
        (project / f"{name}.jsonl").write_bytes(source.read_bytes())
    code, stdout, _ = _run(capsys, "show", project, "--session", "s1", "--json")
    assert code == ExitCode.OK
    assert json.loads(stdout)["header"]["claude-code"]["file"] == "s1.jsonl"
    code, _, err = _run(capsys, "show", project, "--session", "s")
    assert code == ExitCode.USAGE
    assert "names 2 sessions" in err


def test_show_marks_hidden_items(capsys: pytest.CaptureFixture[str]) -> None:
    """An item not shown to the user (``visible: false``) is marked in the tree."""
    code, stdout, _ = _run(capsys, "show", WITH_META, "--json")
    assert code == ExitCode.OK
    hidden = [e for e in json.loads(stdout)["entries"] if e.get("visible") is False]
    assert hidden
    code, stdout, _ = _run(capsys, "show", WITH_META)
    assert code == ExitCode.OK
    assert stdout.count("(hidden) ") == len(hidden)


def test_show_leaf_blank_names_no_entry(capsys: pytest.CaptureFixture[str]) -> None:
    """A blank ``--leaf`` is no prefix of every id: it names nothing."""
    path = next(p for p in sorted(VECTORS.glob("*.jsonl")) if "invalid" not in p.name)
    code, _, err = _run(capsys, "show", path, "--leaf", " ")
    assert code == ExitCode.USAGE
    assert "no entry id starts with" in err


#: Each option that picks sessions (docs/cli.md "Picking sessions"), with a value.
_EVERY_PICK = [
    ["--session", "491e"],
    ["--since", "2026-01-01"],
    ["--until", "2026-01-01"],
    ["--source", "cli"],
    ["--title", "x"],
    ["--cwd", "/home/u/proj"],
    ["--model", "gpt-5"],
    ["--min-rows", "0"],
    ["--limit", "0"],
]


def test_stdin_refuses_every_picking_option(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--min-rows 0`` and ``--limit 0`` pick too, though they are zero."""
    for option in _EVERY_PICK:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
        code, _, err = _run(capsys, "show", "-", *option)
        assert code == ExitCode.USAGE
        assert "options picking sessions do not apply" in err


def test_an_asf_file_refuses_every_picking_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ASF file named with a picking option (``asf show FILE --session ID``, as a store
    is shown) is said to be one, as stdin is, not 'no format plugin recognises it' (exit 4);
    a file that is neither ASF nor a store is still that."""
    out = tmp_path / "out"
    assert main(["convert", str(WITH_META), "-o", str(out), "--quiet"]) == ExitCode.OK
    (written,) = out.rglob("*.jsonl")
    for option in [*_EVERY_PICK, ["--plugin", "claude-code"]]:
        code, stdout, err = _run(capsys, "show", written, *option)
        assert (code, stdout) == (ExitCode.USAGE, "")
        assert err == (
            f"asf: {written}: an ASF session file holds one session: options picking "
            "sessions do not apply (they pick from a store)\n"
        )
    assert _run(capsys, "show", written)[0] == ExitCode.OK
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    code, _, err = _run(capsys, "show", other, "--session", "x")
    assert code == ExitCode.NOTHING
    assert "no format plugin recognises it" in err


def test_age_boundaries() -> None:
    """A minute is ``1m``; a clock a little ahead is not the future; weeks, months and years
    are shown from two of them on (``10d`` rather than ``1w``)."""
    now = datetime(2026, 5, 1, 12, 0, tzinfo=datetime.now().astimezone().tzinfo)
    assert age(now - timedelta(seconds=59), now) == "59s"
    assert age(now - timedelta(seconds=60), now) == "1m"
    assert age(now + timedelta(seconds=30), now) == "0s"
    assert age(now + timedelta(seconds=60), now) == "0s"  # a minute ahead is still a skew
    assert age(now + timedelta(seconds=61), now) == "future"
    assert age(now - timedelta(days=10), now) == "10d"
    assert age(now - timedelta(days=14), now) == "2w"
    assert age(now - timedelta(days=60), now) == "2mo"  # exactly two of each
    assert age(now - timedelta(days=730), now) == "2y"
    assert age(now - timedelta(days=1), now) == "1d"
    assert age(now - timedelta(hours=1), now) == "1h"


def test_clip_keeps_a_text_of_exactly_the_width() -> None:
    assert clip("x" * WIDTH) == "x" * WIDTH
    assert clip("x" * (WIDTH + 1)) == "x" * (WIDTH - 1) + "…"
