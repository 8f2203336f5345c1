"""The command as people see it: ``asf list`` and ``asf show`` in a pseudo-terminal, progress
on a terminal's stderr, one run as a separate process, and the pieces of picking and
redacting on their own."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fixture_paths import ROOT
from terminal_output import read_terminal, screen_columns

from asf_core.cli.humane import clip
from asf_core.formats import NativeSession, Selection
from asf_core.redaction import Redactor
from asf_core.selecting import parse_time, selected

ASF = [sys.executable, "-m", "asf_core.cli.main"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("example") / "hermes-home"
    shutil.copytree(
        ROOT / "examples" / "hermes-home",
        target,
        ignore=shutil.ignore_patterns("*.db-wal", "*.db-shm"),
    )
    return target


def _in_terminal(argv: list[str], columns: int = 72) -> tuple[int, str]:
    """Run ``asf`` with a pseudo-terminal as stdin, stdout and stderr; what it showed."""
    main_fd, child_fd = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "40", "TERM": "xterm"}
    proc = subprocess.Popen(
        [*ASF, *argv], stdin=child_fd, stdout=child_fd, stderr=child_fd, env=env, close_fds=True
    )
    os.close(child_fd)
    shown = read_terminal(main_fd, proc)
    return proc.wait(timeout=30), shown.decode("utf-8", "replace")


def test_list_fits_a_terminal(home: Path) -> None:
    code, screen = _in_terminal(["list", str(home)], columns=120)
    assert code == 0
    lines = [line for line in screen.replace("\r", "").splitlines() if line]
    assert lines[0].split()[:3] == ["ID", "STARTED", "AGE"]
    assert [line for line in lines if len(line) > 120] == []
    assert any(line.startswith("fx-tools ") and "Files and readme" in line for line in lines)
    code, screen = _in_terminal(["list", str(home)], columns=60)  # the date gives way
    lines = [line for line in screen.replace("\r", "").splitlines() if line]
    assert lines[0].split()[:2] == ["ID", "AGE"]
    assert [line for line in lines if len(line) > 60] == []
    assert any(line.rstrip().endswith("…") for line in lines)  # long titles are cut


def test_list_fits_a_terminal_with_wide_titles(home: Path, tmp_path: Path) -> None:
    """A title in Chinese or of emoji takes two columns a character: cut to fit all the same,
    not wrapped onto the next lines."""
    import sqlite3

    copy = tmp_path / "hermes-home"
    shutil.copytree(home, copy)
    with sqlite3.connect(copy / "state.db") as con:
        con.execute("UPDATE sessions SET title = ? WHERE id = 'fx-tools'", ("文件和说明🙂" * 40,))
    con.close()
    code, screen = _in_terminal(["list", str(copy)], columns=80)
    assert code == 0
    lines = [line for line in screen.replace("\r", "").splitlines() if line]
    (wide,) = [line for line in lines if line.startswith("fx-tools ")]
    assert "文件和说明🙂" in wide
    assert wide.endswith("…")
    assert [line for line in lines if screen_columns(line) > 80] == []


def test_a_long_store_label_gives_way_to_the_title_down_to_eight_columns(
    home: Path, tmp_path: Path
) -> None:
    """With several stores the STORE column names each; on a terminal too narrow for the
    whole label it is cut, never below 8 columns, so the title keeps room. On a wide one it
    is whole."""
    copy = tmp_path / "an-unusually-long-hermes-home"
    shutil.copytree(home, copy)

    def table(columns: int) -> list[str]:
        code, screen = _in_terminal(["list", str(copy)], columns=columns)
        assert code == 0
        return [line for line in screen.replace("\r", "").splitlines() if line]

    head, *rows = table(200)
    at = head.index("STORE")
    assert {row[at:].split("  ")[0] for row in rows} == {copy.name, f"{copy.name}/work"}
    # Cut just enough that the title keeps its 12 columns.
    head, *rows = table(90)
    (chat,) = [row for row in rows if row.startswith("fx-profile-chat ")]
    assert chat.endswith("  an-unusually-long-hermes-h…  Work profil…")
    assert screen_columns(chat) == 90
    head, *rows = table(70)
    at, end = head.index("STORE"), head.index("TITLE")
    assert end - at == 8 + 2  # eight columns and the gap
    assert {row[at:end] for row in rows} == {"an-unus…  "}
    assert [row for row in rows if screen_columns(row) > 70] == []


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        ("abcd", 4, "abcd"),  # exactly as wide as the room: whole
        ("abcde", 4, "abc…"),
        ("文件", 4, "文件"),  # two wide characters, four columns
        ("文件", 3, "文…"),
        ("\uff21\uff22", 4, "\uff21\uff22"),  # fullwidth forms take two columns too
        ("\uff21\uff22", 3, "\uff21…"),
        ("café", 4, "café"),  # a narrow letter outside ASCII takes one
        ("cafés", 4, "caf…"),
        ("e\u0301" * 4, 4, "e\u0301" * 4),  # a combining accent takes none
        ("a\u20dd" * 4, 4, "a\u20dd" * 4),  # nor does an enclosing mark
        ("👩\u200d💻", 4, "👩\u200d💻"),  # nor the joiner between two emoji
        # Decomposed (NFD) text takes the columns its composed form takes: a Hangul
        # syllable's vowel and final consonant join its initial's two columns, and a
        # nonspacing mark of combining class 0 (Thai, Devanagari, kana's voicing) takes none.
        (unicodedata.normalize("NFD", "한국어"), 6, unicodedata.normalize("NFD", "한국어")),
        (unicodedata.normalize("NFD", "한국어"), 5, unicodedata.normalize("NFD", "한국…")),
        ("สวัสดี", 4, "สวัสดี"),
        (unicodedata.normalize("NFD", "がぎぐ"), 6, unicodedata.normalize("NFD", "がぎぐ")),
        ("abc", 0, ""),
        ("文件", 0, ""),
    ],
)
def test_clip_counts_the_columns_a_terminal_gives(text: str, width: int, shown: str) -> None:
    """A title is cut to the columns it takes on screen, not to its characters: what fits
    is whole, what does not ends in an ellipsis within the width."""
    assert clip(text, width) == shown


def test_a_text_transcript_underlines_its_title_as_wide_as_it_shows(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``asf show --format text`` (and ``export --to text``) underlines the title with as
    many ``=`` as the columns it takes: ``Ünïcödé 日本 🚀`` is 12 characters in 15 columns
    (two wide CJK characters and a wide emoji), and was underlined with 12."""
    from asf_core.cli.main import main

    argv = ["show", str(home), "--session", "fx-unicode-long", "--format", "text"]
    assert main(argv) == 0
    title, rule, *_ = capsys.readouterr().out.splitlines()
    assert title == "Ünïcödé 日本 🚀"
    assert rule == "=" * screen_columns(title) == "=" * 15


@pytest.mark.parametrize("title", ["한국어 세션 제목", "สวัสดีครับ", "Ünïcödé がぎ"])
def test_a_decomposed_title_is_underlined_as_wide_as_it_shows(
    title: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A title stored decomposed (NFD) is underlined as its composed form is: a Hangul
    title's rule counted each syllable's vowel and final consonant as a column more, a Thai
    one its vowel signs above the line."""
    from asf_core.cli.main import main
    from asf_core.model import Header, Info, Item
    from asf_core.writer import SessionBuilder, session_lines

    decomposed = unicodedata.normalize("NFD", title)
    builder = SessionBuilder(Header(id="s", created_at="2026-01-01T00:00:00Z"))
    builder.append(Info(ts="2026-01-01T00:00:00Z", name=decomposed))
    text = {"type": "input_text", "text": "hi"}
    message = {"type": "message", "role": "user", "content": [text]}
    builder.append(Item(ts="2026-01-01T00:00:01Z", item=message))
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(session_lines(builder.header, builder.entries)))
    assert main(["show", str(path), "--format", "text"]) == 0
    shown, rule, *_ = capsys.readouterr().out.splitlines()
    assert shown == decomposed
    composed = unicodedata.normalize("NFC", title)
    assert unicodedata.normalize("NFC", shown) == composed
    wide = sum(2 if unicodedata.east_asian_width(c) == "W" else 1 for c in composed)
    thai_marks = sum(1 for c in composed if unicodedata.category(c) == "Mn")
    assert rule == "=" * (wide - thai_marks)


def test_show_markdown_in_a_terminal(home: Path) -> None:
    argv = ["show", str(home), "--session", "fx-tools", "--format", "markdown"]
    code, screen = _in_terminal(argv)
    assert code == 0
    assert "# Files and readme" in screen
    assert "**Tool call** `terminal`" in screen
    assert "\x1b" not in screen  # no escape sequences from the session's text


def test_convert_shows_progress_only_on_a_terminal(home: Path, tmp_path: Path) -> None:
    code, screen = _in_terminal(["convert", str(home), "-o", str(tmp_path / "o")], columns=100)
    assert code == 0
    assert "of 24 sessions" in screen or "of 1 sessions" in screen or "sessions" in screen
    assert "hermes hermes-home" in screen  # the store's label, not state.db
    piped = subprocess.run(
        [*ASF, "convert", str(home), "-o", str(tmp_path / "p")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert piped.returncode == 0
    assert piped.stderr == ""  # no progress in a pipe
    assert "0 strays, 0 dropped, 1 warning" in piped.stdout


def test_smoke_as_a_separate_process(home: Path, tmp_path: Path) -> None:
    """The installed command as a user types it: list, show, convert, verify."""
    asf = shutil.which("asf", path=str(Path(sys.executable).parent)) or "asf"

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([asf, *argv], capture_output=True, text=True, check=False)

    listed = run("list", str(home), "--source", "cli", "--limit", "3")
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 4
    shown = run("show", str(home), "--session", "fx-plain", "--format", "text")
    assert shown.returncode == 0, shown.stderr
    assert "Capitals" in shown.stdout
    converted = run("convert", str(home), "--session", "fx-plain", "-o", str(tmp_path / "o"))
    assert converted.returncode == 0, converted.stderr
    assert run("verify", str(tmp_path / "o")).returncode == 0
    bad = run("list", "--bogus")
    assert bad.returncode == 2
    assert bad.stderr.startswith("usage: asf list")


def test_times_people_write() -> None:
    now = datetime(2026, 9, 17, 12, 0, tzinfo=UTC)
    assert parse_time("7d", now=now) == now - timedelta(days=7)
    assert parse_time("12h", now=now) == now - timedelta(hours=12)
    assert parse_time("30m", now=now) == now - timedelta(minutes=30)
    assert parse_time("2w", now=now) == now - timedelta(weeks=2)
    assert parse_time("2026-09-17T08:30Z") == datetime(2026, 9, 17, 8, 30, tzinfo=UTC)
    day = parse_time("2026-09-17")
    assert parse_time("2026-09-17", end=True) - day == timedelta(days=1)
    with pytest.raises(ValueError, match="not a time"):
        parse_time("last tuesday")


def test_selection_limit_keeps_the_newest_in_order() -> None:
    sessions = [
        NativeSession(id=f"s{n}", started=f"2026-01-0{n}T00:00:00Z", source="cli")
        for n in range(1, 6)
    ] + [NativeSession(id="undated")]
    picked = selected(sessions, Selection(limit=2))
    assert [s.id for s in picked] == ["s4", "s5"]
    assert [s.id for s in selected(sessions, Selection(ids=("s",), exact=True))] == []
    assert Selection().everything()
    assert not Selection(ids=("s1",)).matches(NativeSession(id="s2"))
    assert Selection(cwd="/a").matches(NativeSession(id="x", cwd="/a/b"))
    assert not Selection(cwd="/a").matches(NativeSession(id="x", cwd="/ab"))


@pytest.mark.parametrize(
    "text",
    [
        "sha256:" + "ab" * 32,
        "0d5c9a32-4a7b-5f2e-9c1d-7e6f5a4b3c2d",
        "2026-11-30T04:58:04.399119Z",
        "build 20260917_120000_abc123 took 1796014684.00172 s",
        "call_a1b2c3d4e5f6 fc_a1b2c3d4e5f6 toolu_01XyZAbCdEf",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
        "version 2.1.39, port 5432, pid 12345678",
        "https://example.com/docs/page?id=42",
    ],
)
def test_redaction_leaves_ids_hashes_and_times_alone(text: str) -> None:
    assert Redactor().text(text) == text
