"""Nothing from the data reaches a terminal raw: titles, messages, ids and paths are shown with
their control characters escaped (ESC sequences, C0 and C1 controls, bidi overrides).

Checked as people see it, through a real pseudo-terminal running the installed ``asf``, and
in process through ``capsys`` for every command and error line.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixture_paths import ROOT
from plugin_stubs import PathStore, claim_by_suffix, only_these

from asf_core import hookimpl
from asf_core.cli.main import main
from asf_core.formats import Claim, NativeSession
from asf_core.model import Header, Item
from asf_core.safe_text import json_safe, printable
from asf_core.writer import SessionBuilder, write_session

ASF = ROOT / ".venv" / "bin" / "asf"
#: What a hostile title holds: retitle the window, clear the screen, colour, reverse the line,
#: a C1 CSI, a NUL, DEL, a line separator, a hidden (tag) "A".
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\u202eevil\u2066\x9b1m\x00\x7f\u2028end\U000e0041"
SHOWN = (
    "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred\\u202eevil\\u2066\\x9b1m\\x00\\x7f\\u2028end\\U000e0041"
)
#: The same in a file name (which cannot hold NUL).
NAME = HOSTILE.replace("\x00", "")
#: Bytes a terminal would obey: C0 but TAB/LF/CR (a pty turns LF into CR LF), DEL, C1 and bidi
#: controls and line separators in UTF-8; and tag characters, which it shows as nothing.
_OBEYED = re.compile(
    rb"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]"
    rb"|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]|\xd8\x9c|\xf3\xa0[\x80\x81]"
)


def test_printable_escapes_what_a_terminal_obeys_and_nothing_else() -> None:
    assert printable(HOSTILE) == SHOWN
    assert printable("a\n\tb\r\x1b", layout=True) == "a\n\tb\\r\\x1b"
    assert printable("plain text, ünïcödé, 中文, emoji 🙂 with ZWJ 👩\u200d💻") == (
        "plain text, ünïcödé, 中文, emoji 🙂 with ZWJ 👩\u200d💻"
    )
    assert printable("line\nnext\ttab\r") == "line\\nnext\\ttab\\r"
    assert printable("lone \ud800 surrogate") == "lone \\ud800 surrogate"
    document = json.dumps({"t": HOSTILE, "s": "\udc80"}, ensure_ascii=False)
    safe = json_safe(document, terminal=True)
    assert json.loads(safe) == {"t": HOSTILE, "s": "\udc80"}
    assert not _OBEYED.search(safe.encode("utf-8"))
    # Tag characters, an invisible copy of ASCII ("ignore previous" hidden in a message), are
    # shown, in printable text and in JSON (as the surrogate pair JSON spells them with).
    hidden = "see" + "".join(chr(0xE0000 + ord(c)) for c in "ignore previous") + "\U000e007f"
    assert (
        printable(hidden)
        == "see" + "".join(f"\\U{0xE0000 + ord(c):08x}" for c in "ignore previous") + "\\U000e007f"
    )
    document = json.dumps({"t": hidden}, ensure_ascii=False)
    safe = json_safe(document, terminal=True)
    assert json.loads(safe) == {"t": hidden}
    assert safe.isascii()
    assert "\\udb40\\udc69" in safe  # U+E0069, the tag "i"
    assert printable("flag 🏴 and variation 🙂\ufe0f") == "flag 🏴 and variation 🙂\ufe0f"
    # DEL is ASCII: a document of ASCII alone is not taken as safe on a screen for that.
    assert json_safe('{"t": "a\x7fb"}', terminal=True) == '{"t": "a\\u007fb"}'
    assert json_safe('{"t": "a\x7fb"}') == '{"t": "a\x7fb"}'


def _session(tmp_path: Path) -> Path:
    builder = SessionBuilder(
        Header(id=f"s-{HOSTILE}", created_at="2026-01-01T00:00:00Z", cwd=f"/p/{HOSTILE}")
    )
    message = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": HOSTILE}],
    }
    builder.append(Item(ts="2026-01-01T00:00:01Z", item=message))
    path = tmp_path / f"{NAME}.jsonl"
    write_session(path, builder.header, builder.entries)
    return path


def _chatlog(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.chat.jsonl"
    lines = [
        {"session": "s1", "role": "user", "content": HOSTILE, "ts": "2026-10-01T09:00:00Z"},
        {"session": "s1", "role": "assistant", "content": "ok", "ts": "2026-10-01T09:00:01Z"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _in_a_terminal(*argv: str | Path) -> bytes:
    """What ``asf ARGV`` writes to a real pseudo-terminal (stdout and stderr both)."""
    main_fd, sub_fd = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASF_")}
    proc = subprocess.Popen(
        [str(ASF), *map(str, argv)], stdout=sub_fd, stderr=sub_fd, stdin=sub_fd, env=env
    )
    os.close(sub_fd)
    chunks = []
    while True:
        ready, _, _ = select.select([main_fd], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=30)
    os.close(main_fd)
    return b"".join(chunks)


@pytest.mark.parametrize(
    "command", ["show", "verify", "show-json", "show-markdown", "list", "missing"]
)
def test_a_real_terminal_gets_no_control_character(command: str, tmp_path: Path) -> None:
    argv: list[str | Path] = {
        "show": ["show", _session(tmp_path)],
        "verify": ["verify", _session(tmp_path)],
        "show-json": ["show", "--json", _session(tmp_path)],
        "show-markdown": ["show", _session(tmp_path), "--format", "markdown"],
        "list": ["list", _chatlog(tmp_path)],
        "missing": ["show", tmp_path / f"no-{NAME}.jsonl"],
    }[command]
    seen = _in_a_terminal(*argv)
    assert seen
    assert not _OBEYED.search(seen), seen
    if command == "show-json":
        assert b"\\u001b]0;owned\\u0007" in seen
    else:
        assert b"\\x1b]0;owned\\x07\\x1b[2J" in seen


# --- in process ---------------------------------------------------------------------------


def _no_raw(text: str) -> None:
    assert not _OBEYED.search(text.encode("utf-8", "surrogatepass")), text


def test_show_and_verify_escape_what_the_file_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _session(tmp_path)
    for argv in (["show", path], ["show", "--json", path], ["verify", path]):
        assert main([str(a) for a in argv]) == 0
        captured = capsys.readouterr()
        _no_raw(captured.out + captured.err)
    assert main(["show", str(path)]) == 0
    assert f"user: {SHOWN[:-21]}" in capsys.readouterr().out  # a summary folds \u2028 (a space)


class _Titles:
    """Claims ``*.titles`` files: one native session per line, the line its title."""

    @hookimpl
    def discover(self, path: Path | None) -> list[Claim] | None:
        return claim_by_suffix(path, "titles", ".titles")

    @hookimpl
    def open_store(self, claim: Claim) -> PathStore | None:
        return PathStore(claim.path)

    @hookimpl
    def read(self, store: PathStore) -> Iterator[NativeSession]:
        for n, title in enumerate(store.path.read_text().splitlines()):
            yield NativeSession(id=f"id-{title}", title=title, source=title, parent=str(n))


def test_list_and_error_lines_escape_names_titles_and_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    only_these(monkeypatch, _Titles())
    store = tmp_path / "a.titles"
    store.write_text(f"{HOSTILE}\nplain\n")
    assert main(["list", str(store)]) == 0
    captured = capsys.readouterr()
    _no_raw(captured.out + captured.err)
    assert SHOWN[:40] in captured.out
    # An argument quoted back in an error, and a path in an error line.
    assert main(["show", "file", HOSTILE]) == 2
    assert main(["show", str(tmp_path / HOSTILE)]) == 2
    assert main(["verify", str(tmp_path / HOSTILE)]) == 2
    captured = capsys.readouterr()
    _no_raw(captured.out + captured.err)
    assert captured.err.count("\\x1b]0;owned") == 3


def test_plain_text_compiles_no_pattern() -> None:
    """The patterns are compiled for the first text that needs them (compiling them cost a
    run that finds its stores unchanged about 3 ms): plain text needs none."""
    probe = (
        "from asf_core import safe_text\n"
        "safe_text.printable('plain'); safe_text.json_safe('{\"a\": 1}', terminal=True)\n"
        "before = safe_text._compiled.cache_info().currsize\n"
        "safe_text.printable('\\x1b[2J')\n"
        "print(before, safe_text._compiled.cache_info().currsize)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "1"]
