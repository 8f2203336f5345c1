"""Transcripts: what a real session looks like in them, and hostile text rendered inert.

A session whose every string tries to break out (script tags, event handlers, attribute
breakouts, ``</details>``, ``javascript:`` URLs, image URLs that are not images) is rendered
as HTML and checked twice: by parsing the page (no element or attribute the page did not
make) and as people see it, in Debian's Chromium, headless and offline: ``--dump-dom`` shows
no script ran and the hostile text is there as text, and a screenshot shows an inline image.
The test skips only when Chromium is absent and ``ASF_REQUIRE_BROWSER`` is unset (CI sets it).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from asf_core.cli.main import main
from asf_core.export import SessionTree
from asf_core.export.transcript import transcript
from asf_core.export.transcript_html import render_html
from asf_core.export.transcript_text import render_markdown, render_text
from asf_core.model import (
    BranchSummary,
    Compaction,
    Config,
    Header,
    Info,
    Item,
    Link,
    Response,
)
from asf_core.reader import read_session
from asf_core.writer import SessionBuilder, write_session

SCRIPT = "<script>document.body.setAttribute('data-pwned','script')</script>"
HANDLER = "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">"
BREAKOUT = "\"><svg onload=\"document.body.setAttribute('data-pwned','svg')\">"
CLOSERS = "</details></pre></div></section></main><script>alert(1)</script>"
JS_URL = "javascript:document.body.setAttribute('data-pwned','href')"
HOSTILE = (SCRIPT, HANDLER, BREAKOUT, CLOSERS, JS_URL)


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A real PNG of one colour (8-bit RGB), for an image that must show."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def _data_url(data: bytes) -> str:
    import base64

    return "data:image/png;base64," + base64.b64encode(data).decode()


def _text(text: str) -> dict[str, Any]:
    return {"type": "input_text", "text": text}


def _hostile_session(path: Path) -> Path:
    header = Header(
        id="hostile-" + BREAKOUT,
        created_at="2026-01-01T00:00:00Z",
        cwd=CLOSERS,
        harness={"name": SCRIPT, "version": BREAKOUT},
    )
    b = SessionBuilder(header)
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))
    b.append(Config(ts=next(ts), model="gpt-" + HANDLER, instructions=SCRIPT), parent=None)
    b.append(Info(ts=next(ts), name="</title>" + SCRIPT))
    b.append(
        Item(
            ts=next(ts),
            item={
                "type": "message",
                "role": "user",
                "content": [
                    *(_text(t) for t in HOSTILE),
                    {"type": "input_image", "image_url": _data_url(_png(64, 64, (255, 0, 0)))},
                    {"type": "input_image", "image_url": 'data:image/png;base64,AAAA" onerror="x'},
                    {"type": "input_image", "image_url": JS_URL},
                    {"type": "input_image", "image_url": "https://evil.example/x.png"},
                    {"type": "input_image", "image_url": "data:image/svg+xml;base64,PHN2Zz4="},
                ],
            },
        )
    )
    b.append(
        Item(
            ts=next(ts),
            response="resp_1",
            item={"type": "reasoning", "summary": [{"type": "summary_text", "text": CLOSERS}]},
        )
    )
    call = {
        "type": "function_call",
        "call_id": 'call_"><script>alert(2)</script>',
        "name": SCRIPT,
        "arguments": '{"cmd": "' + CLOSERS.replace('"', '\\"') + '"}',
    }
    b.append(Item(ts=next(ts), response="resp_1", item=call))
    error = {"type": "server_error", "message": HANDLER}
    b.append(Response(ts=next(ts), response_id="resp_1", model=BREAKOUT, error=error))
    b.append(Link(ts=next(ts), rel="subsession", session=JS_URL, call_id=call["call_id"]))
    output = {"type": "function_call_output", "call_id": call["call_id"]}
    output["output"] = "```\n# not a heading\n" + CLOSERS
    fork = b.append(Item(ts=next(ts), item=output))
    b.append(
        Item(
            ts=next(ts),
            response="resp_2",
            item={"type": "message", "role": "assistant", "content": [_text(BREAKOUT)]},
        )
    )
    b.append(Response(ts=next(ts), response_id="resp_2", model="m"))
    summary = {"type": "message", "role": "user", "content": [_text(SCRIPT)]}
    branch = BranchSummary(ts=next(ts), from_=b.leaf, summary=summary)
    branch = b.append(branch, parent=fork.id)
    comp = Compaction(ts=next(ts), first_kept=fork.id, summary=summary, config={"model": "m"})
    comp = b.append(comp, parent=branch.id)
    developer = {"type": "message", "role": "developer", "content": JS_URL}
    b.append(Item(ts=next(ts), item=developer), parent=comp.id)
    # A role no renderer knows, a file and a remote image: all shown as text, escaped.
    strange = [
        {"type": "input_file", "filename": SCRIPT},
        {"type": "input_image", "image_url": "https://evil.example/" + SCRIPT},
    ]
    b.append(Item(ts=next(ts), item={"type": "message", "role": HANDLER, "content": strange}))
    write_session(path, b.header, b.entries)
    return path


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


_SAFE_SRC = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]*={0,2}")
_PAGE_ATTRS = {
    "class",
    "id",
    "href",
    "src",
    "alt",
    "lang",
    "charset",
    "name",
    "content",
    "http-equiv",
    "open",
}


def _check_inert(page: str) -> _Tags:
    parsed = _Tags()
    parsed.feed(page)
    parsed.close()
    tags = {t for t, _ in parsed.tags}
    assert "script" not in tags
    assert not tags & {"svg", "iframe", "object", "embed", "form", "input", "base", "link"}
    for tag, attrs in parsed.tags:
        assert set(attrs) <= _PAGE_ATTRS, (tag, attrs)
        if tag == "img":
            assert _SAFE_SRC.fullmatch(attrs["src"] or ""), attrs
        if tag == "a":
            href = attrs["href"] or ""
            assert ":" not in href.split("/", 1)[0], href  # a relative path, no scheme
    return parsed


def _view(path: Path) -> Any:
    session = read_session(path)
    return SessionTree(session).view(str(session.resume_leaf()))


def test_hostile_text_is_escaped_in_the_page(tmp_path: Path) -> None:
    view = _view(_hostile_session(tmp_path / "hostile.jsonl"))
    page = "".join(render_html(transcript(view, href=lambda s, leaf: f"{s}.html")))
    parsed = _check_inert(page)
    text = "".join(parsed.text)
    for hostile in HOSTILE:
        assert hostile in text
    assert sum(1 for t, _ in parsed.tags if t == "img") == 1  # only the real PNG is inlined
    assert "https://evil.example/x.png" in text  # shown, never loaded
    assert sum(1 for t, _ in parsed.tags if t == "details") >= 2  # reasoning, tool output


def test_hostile_text_in_markdown_keeps_its_fences(tmp_path: Path) -> None:
    view = _view(_hostile_session(tmp_path / "hostile.jsonl"))
    md = "".join(render_markdown(transcript(view)))
    # The output holding ``` is fenced with four backticks, so it cannot close its block.
    assert "\n````\n```\n# not a heading\n" in md
    # The title is escaped so that the session name cannot open markup.
    first = md.splitlines()[0]
    assert first.startswith("# ")
    assert "\\<script" in first
    assert re.search(r"(?<!\\)[<>]", first) is None  # every angle bracket escaped
    # So are the heading facts (the directory, the agent) and a role no renderer knows.
    added = [line for line in md.splitlines() if line.startswith(("- **", "### "))]
    assert any("\\<img" in line for line in added)
    for line in added:
        assert re.search(r"(?<!\\)[<>]", line) is None, line
    text = "".join(render_text(transcript(view)))
    assert SCRIPT in text


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        if os.environ.get("ASF_REQUIRE_BROWSER"):
            pytest.fail("ASF_REQUIRE_BROWSER is set but chromium is not installed")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def _browse(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={profile}",
        *args,
        page.as_uri(),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def _pixels(png: bytes) -> Iterator[tuple[int, ...]]:
    """The pixels of an 8-bit RGB(A), non-interlaced PNG (what Chromium writes)."""
    pos, chunks, width, height, channels = 8, [], 0, 0, 3
    while pos < len(png):
        (size,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + size]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", data[:10])
            assert depth == 8
            assert colour in (2, 6)
            channels = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            chunks.append(data)
        pos += 12 + size
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        previous = line
        for x in range(width):
            yield tuple(line[x * channels : x * channels + 3])


def test_hostile_page_in_chromium_runs_nothing(tmp_path: Path) -> None:
    source = _hostile_session(tmp_path / "hostile.jsonl")
    page = tmp_path / "hostile.html"
    assert main(["export", str(source), "--to", "html", "-o", str(page)]) == 0
    dom = _browse(page, tmp_path / "profile", "--dump-dom").stdout
    parsed = _check_inert(dom)  # the DOM after the page ran: nothing was added
    body = next(attrs for tag, attrs in parsed.tags if tag == "body")
    assert "data-pwned" not in body
    text = "".join(parsed.text)
    for hostile in HOSTILE:
        assert hostile in text
    shot = tmp_path / "hostile.png"
    _browse(page, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1000,1600")
    red = sum(1 for px in _pixels(shot.read_bytes()) if px == (255, 0, 0))
    assert red >= 64 * 64 * 0.9  # the inline image shows, no network needed


def test_real_session_in_chromium(converted_homes: list[Path], tmp_path: Path) -> None:
    """A real converted session (tools, reasoning, compaction) as people see it."""
    root = converted_homes[-2]  # hermes-0.19.0
    out = tmp_path / "html"
    assert main(["export", str(root), "--to", "html", "-o", str(out)]) == 0
    pages = sorted(out.rglob("*.html"))
    assert len(pages) == len(list(root.rglob("*.jsonl")))
    # The page with the most folded parts: a session with reasoning and tool calls.
    page = max(pages, key=lambda p: p.read_text().count("<details"))
    dom = _browse(page, tmp_path / "profile", "--dump-dom").stdout
    parsed = _check_inert(dom)
    assert any(t == "details" for t, _ in parsed.tags)
    shot = tmp_path / "real.png"
    _browse(page, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1000,1400")
    colours = set(_pixels(shot.read_bytes()))
    assert len(colours) > 50  # a rendered page, not a blank one


def _with_sidecar_image(tmp_path: Path) -> tuple[Path, bytes, str]:
    """A session file whose one message shows a sidecar PNG (its folder made, the blob not
    yet written): the file, the PNG's bytes and their digest."""
    import hashlib

    png = _png(8, 8, (0, 128, 0))
    digest = hashlib.sha256(png).hexdigest()
    header = Header(id="with-media", created_at="2026-01-01T00:00:00Z", media="sidecar")
    b = SessionBuilder(header)
    image = {"type": "input_image", "image_url": f"sidecar:sha256:{digest}"}
    message = {"type": "message", "role": "user", "content": [_text("look"), image]}
    b.append(Item(ts="2026-01-01T00:00:01Z", item=message), parent=None)
    path = tmp_path / "s.jsonl"
    write_session(path, b.header, b.entries)
    (tmp_path / "with-media").mkdir()
    return path, png, digest


def test_sidecar_images_are_inlined_from_the_session_directory(tmp_path: Path) -> None:
    """A ``sidecar:sha256:<hex>`` image is read from the blob beside the file and shown."""
    path, png, digest = _with_sidecar_image(tmp_path)
    (tmp_path / "with-media" / digest).write_bytes(png)
    page = "".join(render_html(transcript(_view(path))))
    assert f'src="{_data_url(png)}"' in page
    (tmp_path / "with-media" / digest).write_bytes(b"<svg onload=alert(1)>")
    page = "".join(render_html(transcript(_view(path))))
    assert "<img" not in page  # not an image we can vouch for: shown as text


def test_a_sidecar_blob_too_large_to_open_is_not_inlined(tmp_path: Path) -> None:
    """A page is meant to be opened: a blob over 16 MiB is named, not inlined, and not read."""
    path, png, digest = _with_sidecar_image(tmp_path)
    blob = tmp_path / "with-media" / digest
    blob.write_bytes(png)
    with blob.open("r+b") as f:
        f.truncate(16 * 1024 * 1024)  # sparse: no disk used
    assert 'src="data:image/png;base64,' in "".join(render_html(transcript(_view(path))))
    with blob.open("r+b") as f:
        f.truncate(16 * 1024 * 1024 + 1)
    page = "".join(render_html(transcript(_view(path))))
    assert "<img" not in page
    assert f"[image not inlined: <bdi>sidecar:sha256:{digest}</bdi>]" in page


@pytest.mark.parametrize(
    "session_id", ["../elsewhere", "ABSOLUTE", "a/../../elsewhere", "..", ".", ""]
)
def test_a_session_id_that_is_a_path_reads_no_blob_outside(session_id: str, tmp_path: Path) -> None:
    """The sidecar directory is named by the session id, which comes from the file: an id
    that is not one directory name (a relative or absolute path, or ``.`` and the empty id,
    which name the file's own directory) names no directory, as for the verifier, so a page
    never inlines an image from elsewhere on the disk."""
    import hashlib

    png = _png(8, 8, (0, 0, 255))
    digest = hashlib.sha256(png).hexdigest()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / digest).write_bytes(png)
    (tmp_path / digest).write_bytes(png)  # what ".." would name
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / digest).write_bytes(png)  # what "." and "" would name
    sid = str(elsewhere) if session_id == "ABSOLUTE" else session_id
    b = SessionBuilder(Header(id=sid, created_at="2026-01-01T00:00:00Z", media="sidecar"))
    image = {"type": "input_image", "image_url": f"sidecar:sha256:{digest}"}
    message = {"type": "message", "role": "user", "content": [_text("look"), image]}
    b.append(Item(ts="2026-01-01T00:00:01Z", item=message), parent=None)
    (tmp_path / "in" / "a").mkdir(parents=True)
    path = tmp_path / "in" / "s.jsonl"
    write_session(path, b.header, b.entries)
    page = "".join(render_html(transcript(_view(path))))
    assert "<img" not in page
    assert f"[image not inlined: <bdi>sidecar:sha256:{digest}</bdi>]" in page
    md = "".join(render_markdown(transcript(_view(path))))
    assert "data:image" not in md


#: Direction marks that reorder what follows them on the same line, up to the end of their
#: element's paragraph (U+202E right-to-left override, U+2066 left-to-right isolate).
_BIDI = ("\u202e", "\u2066")
#: Where session text holding them may sit: isolated inline (``bdi``) or a block of its own.
#: (Not ``div.note``: a note sets session text among the page's words, "[refusal: ...]".)
_ISOLATED = {"bdi", "pre", "title", "h1", "dd", "dt", "div.text"}


class _Stack(HTMLParser):
    """Each text node with the element it sits in (``tag`` or ``tag.class``)."""

    _VOID = frozenset({"meta", "img", "br"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.nodes: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self._VOID:
            cls = dict(attrs).get("class")
            self.open.append(f"{tag}.{cls.split()[0]}" if cls else tag)

    def handle_endtag(self, tag: str) -> None:
        while self.open and self.open.pop().split(".")[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        self.nodes.append((self.open[-1] if self.open else "", data))


def test_direction_marks_in_session_text_cannot_reorder_the_page(tmp_path: Path) -> None:
    """A role, a tool's name, a call id, a link's label: session text set inline beside the
    page's own words and the time. An override in it would run on over them (a hostile role
    made the time read backwards); each such piece is a ``bdi`` now, blocks stay blocks."""
    rlo, lri = _BIDI
    header = Header(id="bidi", created_at="2026-01-01T00:00:00Z", cwd=rlo + "/home/x")
    b = SessionBuilder(header)
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))
    b.append(Config(ts=next(ts), model=rlo + "model"), parent=None)
    b.append(Info(ts=next(ts), name=lri + "title"))
    refused = {"type": "refusal", "refusal": rlo + "no"}
    said = {"type": "message", "role": rlo + "role", "content": [_text(rlo + "said"), refused]}
    b.append(Item(ts=next(ts), item=said))
    call = {"type": "function_call", "call_id": "c" + rlo, "name": rlo + "t", "arguments": "{}"}
    b.append(Item(ts=next(ts), response="r", item=call))
    b.append(Response(ts=next(ts), response_id="r", model=rlo + "m"))
    b.append(Link(ts=next(ts), rel="subsession", session=rlo + "kid", call_id=call["call_id"]))
    b.append(Link(ts=next(ts), rel=rlo + "rel", session="other"))
    output = {"type": "function_call_output", "call_id": call["call_id"], "output": lri + "out"}
    b.append(Item(ts=next(ts), item=output))
    image = {"type": "input_image", "image_url": "https://x.example/" + rlo}
    b.append(Item(ts=next(ts), item={"type": "message", "role": "user", "content": [image]}))
    path = tmp_path / "bidi.jsonl"
    write_session(path, b.header, b.entries)
    unlinked = "".join(render_html(transcript(_view(path))))  # labels without a page to link
    page = "".join(render_html(transcript(_view(path), href=lambda s, leaf: f"{s}.html")))
    for html in (unlinked, page):
        parsed = _Stack()
        parsed.feed(html)
        marked = [(where, text) for where, text in parsed.nodes if any(c in text for c in _BIDI)]
        assert len(marked) >= 11, marked  # every piece above, and all of it in the page
        for where, text in marked:
            assert where in _ISOLATED, (where, text)
    assert "<span><bdi>\u202erole</bdi></span><time><bdi>2026-01-01T00:00:02Z</bdi>" in page
