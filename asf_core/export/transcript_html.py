"""Transcripts as one self-contained HTML page (``asf export --to html``).

The page needs nothing else: styles are inline, images are ``data:`` URLs, there is no
script, and a Content-Security-Policy forbids loading anything but inline styles and data
images, so opening a transcript never touches the network. Every piece of session text is
escaped (``&``, ``<``, ``>``, both quotes) before it reaches the page and is shown as text,
never as markup; the only attribute values the page carries are its own (class names, entry
anchors made of hex digits, links it made to other transcript files, and image data URLs
checked to be plain base64), so nothing a session says can open an element, an attribute or
a script, and session text set inline among the page's words is isolated (``<bdi>``), so
no direction mark in it can reorder them. Reasoning and long tool output are folded into
``<details>``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Final

from asf_core.export.items import Part
from asf_core.export.transcript import Block, Transcript, link_target

__all__ = ["render_html"]

_ROLES: Final = {
    "user": "User",
    "assistant": "Assistant",
    "system": "System",
    "developer": "Developer",
}
#: Outputs longer than this many lines start folded.
_FOLD_LINES: Final = 12

_CSP: Final = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
    "base-uri 'none'; form-action 'none'"
)

_STYLE: Final = """
:root{--fg:#1d2127;--muted:#5f6b7a;--line:#d8dee6;--bg:#ffffff;--user:#eef5ff;
--assistant:#f6f8fa;--system:#fff8e6;--tool:#f3f0ff;--code:#f6f8fa;--accent:#3b6fd6;
--warn:#b42318}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ee;--muted:#9aa5b4;--line:#343b46;
--bg:#15181d;--user:#182538;--assistant:#1d2229;--system:#2e2716;--tool:#231e36;
--code:#1d2229;--accent:#7ea6ff;--warn:#ff8a80}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main,header{max-width:920px;margin:0 auto;padding:0 20px}
header{padding-top:28px;padding-bottom:8px;border-bottom:1px solid var(--line)}
h1{font-size:1.5em;margin:0 0 8px;overflow-wrap:anywhere}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0 0 12px;
color:var(--muted);font-size:.88em}
dl.meta dt{font-weight:600}dl.meta dd{margin:0;overflow-wrap:anywhere}
.turn{border:1px solid var(--line);border-radius:8px;margin:14px 0;padding:10px 14px}
.turn.user{background:var(--user)}.turn.assistant{background:var(--assistant)}
.turn.system,.turn.developer{background:var(--system)}.turn.tool{background:var(--tool)}
.who{font-weight:600;font-size:.85em;color:var(--muted);margin-bottom:4px;display:flex;
gap:8px;flex-wrap:wrap}
.who time,.who .call{font-weight:400}
.mark{border:1px solid var(--line);border-radius:10px;padding:0 7px;font-size:.8em;
font-weight:500}
.mark.error,.mark.rejected{color:var(--warn);border-color:var(--warn)}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
pre{background:var(--code);border:1px solid var(--line);border-radius:6px;padding:8px 10px;
margin:6px 0;white-space:pre-wrap;overflow-wrap:anywhere;
font:12.5px/1.45 ui-monospace,"DejaVu Sans Mono",monospace}
details{margin:6px 0}summary{cursor:pointer;color:var(--muted);font-size:.9em}
details.reasoning .text{color:var(--muted);font-style:italic}
.response{color:var(--muted);font-size:.85em;margin:-8px 0 12px 14px}
.note{color:var(--muted);font-size:.85em;margin:10px 0 10px 14px}
.turn .note{margin:4px 0}
.boundary{border-top:2px dashed var(--accent);border-bottom:2px dashed var(--accent);
margin:22px 0;padding:8px 0}
.boundary .label{font-weight:600;color:var(--accent)}
.fork,.link{border-left:4px solid var(--accent);padding:4px 10px;margin:14px 0;font-size:.92em}
img{max-width:100%;height:auto;border-radius:6px;border:1px solid var(--line);display:block;
margin:6px 0}
a{color:var(--accent)}code{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.9em}
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _i(text: str) -> str:
    """Session text inline beside the page's own, escaped and isolated (``<bdi>``): a
    direction override or isolate it holds (U+202E, U+2066) ends with it, so it can reorder
    neither the page's words nor the time beside it. A block (a message, an output) is a
    paragraph of its own, which the same marks cannot leave."""
    return f"<bdi>{_e(text)}</bdi>"


def _anchor(entry: str) -> str:
    """An element id from an entry id: hex digits (and a prefix), nothing else."""
    return "e-" + re.sub(r"[^0-9A-Za-z_-]", "", entry.removeprefix("sha256:"))[:16]


class _Page:
    def __init__(self, t: Transcript) -> None:
        self.t = t

    def parts(self, parts: tuple[Part, ...], *, code: bool = False) -> str:
        out: list[str] = []
        for part in parts:
            if part.kind == "text" and code:
                out.append(f"<pre>{_e(part.text)}</pre>")
            elif part.kind == "text":
                out.append(f'<div class="text">{_e(part.text)}</div>')
            elif part.kind == "image":
                src = self.t.image(part)
                if src is not None:
                    out.append(f'<img alt="[image that cannot be displayed]" src="{_e(src)}">')
                else:
                    out.append(f'<div class="note">[image not inlined: {_i(part.url[:200])}]</div>')
            else:
                out.append(f'<div class="note">[{_i(part.kind)}: {_i(part.text)}]</div>')
        return "".join(out)

    def head(self, b: Block, label: str) -> str:
        marks = "".join(f'<span class="mark {_e(m)}">{_i(m)}</span>' for m in b.marks)
        stamp = f"<time>{_i(b.ts)}</time>" if b.ts else ""
        return f'<div class="who"><span>{label}</span>{stamp}{marks}</div>'

    def links(self, b: Block) -> str:
        items = [
            f'<a href="{_e(link_target(href))}">{_i(label)}</a>' if href else _i(label)
            for label, href in b.links
        ]
        return ", ".join(items)

    def block(self, b: Block) -> str:
        anchor = _anchor(b.entry)
        if b.kind == "message":
            role = b.role if b.role in _ROLES else "system"
            label = _ROLES.get(b.role, _i(b.role or "Message"))
            return (
                f'<section class="turn {role}" id="{anchor}">{self.head(b, label)}'
                f"{self.parts(b.parts)}</section>"
            )
        if b.kind == "reasoning":
            return (
                f'<details class="reasoning" id="{anchor}"><summary>Reasoning</summary>'
                f'<div class="text">{_e(b.text)}</div></details>'
            )
        if b.kind == "tool":
            return self.tool(b, anchor)
        if b.kind in ("compaction", "branch_summary"):
            label = "Context compacted here" if b.kind == "compaction" else "Branch summary"
            return (
                f'<section class="boundary" id="{anchor}"><div class="label">{label}</div>'
                f'<div class="note">{_e(b.text)}</div>{self.parts(b.parts)}</section>'
            )
        if b.kind == "fork":
            others = self.links(b) or "none"
            said = f"Branch point: {_i(b.text)}. Other branches: {others}"
            return f'<div class="fork" id="{anchor}">{said}</div>'
        if b.kind == "link":
            title = _i(b.title)
            return (
                f'<div class="link" id="{anchor}">Linked session ({title}): {self.links(b)}</div>'
            )
        marks = "".join(f" ({_i(m)})" for m in b.marks)
        return f'<div class="{_e(b.kind)}" id="{anchor}">{_i(b.text)}{marks}</div>'

    def tool(self, b: Block, anchor: str) -> str:
        label = f"Tool call <code>{_i(b.title)}</code>" if b.title else "Tool output"
        body = self.head(b, f'{label} <span class="call">{_i(b.call_id)}</span>')
        if b.text:
            body += f"<pre>{_e(b.text)}</pre>"
        if b.output is not None:
            shown = self.parts(b.output, code=True) or '<div class="note">(empty)</div>'
            lines = sum(p.text.count("\n") + 1 for p in b.output if p.kind == "text")
            opened = " open" if lines <= _FOLD_LINES else ""
            count = f"{lines} line{'s' if lines != 1 else ''}"
            body += f"<details{opened}><summary>Output ({count})</summary>{shown}</details>"
        if b.links:
            body += f'<div class="note">→ {self.links(b)}</div>'
        return f'<section class="turn tool" id="{anchor}">{body}</section>'

    def render(self) -> Iterator[str]:
        yield (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer">'
            f"<title>{_e(self.t.title)}</title><style>{_STYLE}</style></head><body>\n"
        )
        meta = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in self.t.meta)
        yield f'<header><h1>{_e(self.t.title)}</h1><dl class="meta">{meta}</dl></header>\n<main>\n'
        for b in self.t.blocks():
            yield self.block(b) + "\n"
        yield "</main></body></html>\n"


def render_html(t: Transcript) -> Iterator[str]:
    """The transcript as one HTML page, in pieces."""
    return _Page(t).render()
