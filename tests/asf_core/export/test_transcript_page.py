"""The HTML transcript as a reader finds it, element by element: a tool call's arguments and
output as preformatted text (``(empty)`` when the output holds nothing), a linked session, a
response's line. The page is read with the standard HTML parser, as the browser tests read
Chromium's DOM."""

from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fixture_paths import VECTORS

from asf_core.cli.main import main
from asf_core.export import SessionTree
from asf_core.export.transcript import transcript
from asf_core.export.transcript_html import render_html
from asf_core.model import Config, Header, Item, Response
from asf_core.reader import read_session
from asf_core.writer import SessionBuilder, write_session


class _Elements(HTMLParser):
    """The text of each ``pre`` and of each element with a class, by ``tag.class``."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, list[str]]] = []
        self.found: list[tuple[str, str]] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("meta", "img", "br"):
            return
        cls = dict(attrs).get("class")
        self.open.append((f"{tag}.{cls.split()[0]}" if cls else tag, []))

    def handle_endtag(self, tag: str) -> None:
        name, text = self.open.pop()
        joined = "".join(text)
        self.found.append((name, joined))
        if self.open:
            self.open[-1][1].append(joined)

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1][1].append(data)

    def texts(self, name: str) -> list[str]:
        return [text for tag, text in self.found if tag == name]


def _page(path: Path) -> _Elements:
    session = read_session(path)
    view = SessionTree(session).view(str(session.resume_leaf()))
    return _Elements("".join(render_html(transcript(view))))


def _tool_session(path: Path) -> Path:
    b = SessionBuilder(Header(id="tools", created_at="2026-01-01T00:00:00Z"))
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))
    b.append(Config(ts=next(ts), model="gpt-5"), parent=None)
    b.append(Item(ts=next(ts), item={"type": "message", "role": "user", "content": "list it"}))
    for call_id in ("call_ls", "call_quiet"):
        call = {"type": "function_call", "call_id": call_id, "name": "sh", "arguments": "{}"}
        b.append(Item(ts=next(ts), item=call, response="resp_1"))
    b.append(Response(ts=next(ts), response_id="resp_1", model="gpt-5"))
    for call_id, output in (("call_ls", "a.txt\nb.txt"), ("call_quiet", [])):
        out = {"type": "function_call_output", "call_id": call_id, "output": output}
        b.append(Item(ts=next(ts), item=out))
    write_session(path, b.header, b.entries)
    return path


def _check_tools(page: _Elements) -> None:
    tools = page.texts("section.turn")
    assert len([t for t in tools if t.startswith("Tool call sh")]) == 2
    # Arguments pretty-printed, then each output: its lines kept, or (empty).
    assert page.texts("pre") == ["{}", "a.txt\nb.txt", "{}"]
    assert page.texts("div.note") == ["model: gpt-5", "(empty)"]
    assert [s for s in page.texts("summary") if s.startswith("Output")] == [
        "Output (2 lines)",
        "Output (0 lines)",
    ]


def test_a_tool_call_shows_its_arguments_and_output_as_written(tmp_path: Path) -> None:
    _check_tools(_page(_tool_session(tmp_path / "tools.jsonl")))


def test_a_tool_call_in_chromium(tmp_path: Path) -> None:
    """The same page as Chromium builds its DOM (skipped where Chromium is not installed,
    as the other browser tests are)."""
    browser = shutil.which("chromium")
    if browser is None:
        if os.environ.get("ASF_REQUIRE_BROWSER"):
            pytest.fail("ASF_REQUIRE_BROWSER is set but chromium is not installed")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    page = tmp_path / "tools.html"
    source = _tool_session(tmp_path / "tools.jsonl")
    assert main(["export", str(source), "--to", "html", "-o", str(page)]) == 0
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    offline = ["--disable-background-networking", "--host-resolver-rules=MAP * ~NOTFOUND"]
    profile = f"--user-data-dir={tmp_path / 'profile'}"
    cmd = [browser, *flags, *offline, profile, "--dump-dom", page.as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
    _check_tools(_Elements(dom))


def test_links_responses_and_notes_read_as_what_they_are() -> None:
    """v0.4/extensions.jsonl: a sub-agent link with no call on the path, a model note, a
    response's tokens and a failed response's error, each in its own element."""
    page = _page(VECTORS / "sessions" / "v0.4" / "extensions.jsonl")
    assert page.texts("div.link") == [
        "Linked session (subsession): 01995b2a-0000-7000-8000-0000000000aa"
    ]
    assert page.texts("div.response") == ["gpt-5 · 9 tokens in, 1 out", "error: boom (error)"]
    assert "model: gpt-5" in page.texts("div.note")
