"""Transcripts as Markdown and as plain text (``asf export --to markdown``, ``asf show``).

Message text is written as it is: what an agent and its user write is usually Markdown
already (a code fence it leaves open is closed at its end). Everything the transcript adds
around it (headings, labels, the title, names from the session) is escaped, and tool
arguments and outputs go in code fences longer than any run of backticks inside them, so a
tool's output cannot end its fence. A Markdown viewer that renders raw HTML renders it from
the messages too: for a page safe to open anywhere, use the HTML transcript.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Final

from asf_core.export.items import Part
from asf_core.export.transcript import Block, Transcript, link_target
from asf_core.safe_text import cells

__all__ = ["render_markdown", "render_text"]

_ROLES: Final = {
    "user": "User",
    "assistant": "Assistant",
    "system": "System",
    "developer": "Developer",
}
_SPECIAL: Final = re.compile(r"([\\`*_\[\]<>&|~])")


def _escape(text: str) -> str:
    """Inline text that must read as itself in Markdown (one line)."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _code(text: str) -> str:
    """An inline code span holding ``text`` exactly (one line)."""
    flat = " ".join(text.split())
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def _is_json(text: str) -> bool:
    """Whether a call's input is JSON (a function call's arguments), not free text (a custom
    tool call's patch or code)."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _fenced(text: str, lang: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}\n"


#: A line opening or closing a code fence: container marks (quotes, list items) and the
#: indentation, the fence and what follows it. Each blank belongs to one ``[ ]*`` only, so
#: matching takes time linear in the line, whatever it holds.
_FENCE: Final = re.compile(r"((?:[ ]*(?:>|[-+*](?=[ ])|\d{1,9}[.)](?=[ ])))*[ ]*)(`{3,}|~{3,})(.*)")


def _closed(text: str) -> str:
    """Message text whose last code fence is closed: a message cut off inside a code block
    would otherwise hold the rest of the transcript in it."""
    opened: tuple[str, str] | None = None  # the fence left open and where its lines start
    for line in text.splitlines():
        match = _FENCE.fullmatch(line)
        if match is None:
            continue
        lead, fence, rest = match.groups()
        if opened is None and not (fence[0] == "`" and "`" in rest):
            opened = fence, re.sub(r"[^>]", " ", lead)
        elif opened is not None and fence[0] == opened[0][0] and len(fence) >= len(opened[0]):
            opened = opened if rest.strip() else None
    if opened is None:
        return text
    return f"{text}\n{opened[1]}{opened[0]}"


def _marks(block: Block) -> str:
    return "".join(f" *({m})*" for m in block.marks)


def _links(block: Block) -> str:
    out = []
    for label, href in block.links:
        # Angle brackets hold blanks and parentheses in a target (CommonMark).
        target = (
            f"[{_escape(label)}](<{link_target(href, keep=' ()')}>)" if href else _escape(label)
        )
        out.append(target)
    return ", ".join(out)


class _Markdown:
    def __init__(self, t: Transcript) -> None:
        self.t = t

    def parts(self, parts: tuple[Part, ...], *, code: bool = False) -> str:
        out: list[str] = []
        for part in parts:
            if part.kind == "text":
                out.append(_fenced(part.text).rstrip("\n") if code else _closed(part.text))
            elif part.kind == "image":
                src = self.t.image(part)
                out.append(f"![image](<{src}>)" if src else f"*\\[image: {_escape(part.url)}\\]*")
            else:
                out.append(f"*\\[{part.kind}: {_escape(part.text)}\\]*")
        return "\n\n".join(out)

    def block(self, b: Block) -> str:
        stamp = f" · {_escape(b.ts)}" if b.ts else ""
        if b.kind == "message":
            role = _ROLES.get(b.role, _escape(b.role or "Message"))
            return f"### {role}{stamp}{_marks(b)}\n\n{self.parts(b.parts)}\n"
        if b.kind == "reasoning":
            quoted = "\n".join("> " + line for line in b.text.splitlines())
            return f"> **Reasoning**{_marks(b)}\n>\n{quoted}\n"
        if b.kind == "tool":
            head = f"**Tool call** {_code(b.title)}" if b.title else "**Tool output**"
            call_id = f" ({_code(b.call_id)})" if b.call_id else ""  # a web search has none
            out = f"{head}{call_id}{_marks(b)}\n\n"
            if b.text:
                out += _fenced(b.text, "json" if _is_json(b.text) else "") + "\n"
            if b.output is not None:
                shown = self.parts(b.output, code=True) or "*(empty)*"
                out += f"Output:\n\n{shown}\n\n"
            if b.links:
                out += f"→ {_links(b)}\n"
            return out
        if b.kind == "response":
            return f"*{_escape(b.text)}*{_marks(b)}\n"
        if b.kind in ("compaction", "branch_summary"):
            head = "Context compacted" if b.kind == "compaction" else "Branch summary"
            summary = "\n".join("> " + line for line in self.parts(b.parts).splitlines())
            return f"---\n\n**{head}**{stamp} ({_escape(b.text)})\n\n{summary}\n\n---\n"
        if b.kind == "fork":
            return f"**Branch point:** {_escape(b.text)}. Other branches: {_links(b)}\n"
        if b.kind == "link":
            return f"**Linked session** ({_escape(b.title)}): {_links(b)}\n"
        return f"*{_escape(b.text)}*{_marks(b)}\n"

    def render(self) -> Iterator[str]:
        yield f"# {_escape(self.t.title)}\n\n"
        for label, value in self.t.meta:
            yield f"- **{_escape(label)}:** {_escape(value)}\n"
        for b in self.t.blocks():
            yield "\n" + self.block(b)


def render_markdown(t: Transcript) -> Iterator[str]:
    """The transcript as Markdown, in pieces."""
    return _Markdown(t).render()


def _plain_parts(parts: tuple[Part, ...]) -> str:
    return "\n".join(
        p.text if p.kind == "text" else f"[{p.kind}: {p.text or p.url}]" for p in parts
    )


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines()) + "\n"


def render_text(t: Transcript) -> Iterator[str]:
    """The transcript as plain text: a labelled, indented block per turn, no markup."""
    yield f"{t.title}\n{'=' * min(cells(t.title), 78)}\n"  # as wide as it shows
    for label, value in t.meta:
        yield f"{label}: {value}\n"
    for b in t.blocks():
        marks = "".join(f" ({m})" for m in b.marks)
        links = "".join(
            f"\n    -> {label}" + (f" [{href}]" if href else "") for label, href in b.links
        )
        if b.kind == "message":
            yield f"\n[{b.role or 'message'}] {b.ts}{marks}\n{_indent(_plain_parts(b.parts))}"
        elif b.kind == "reasoning":
            yield f"\n[reasoning]{marks}\n{_indent(b.text)}"
        elif b.kind == "tool":
            body = b.text + (
                "\n--- output ---\n" + _plain_parts(b.output) if b.output is not None else ""
            )
            named = " ".join(n for n in ("tool", b.title, b.call_id) if n)
            yield f"\n[{named}]{marks}{links}\n{_indent(body)}"
        elif b.kind in ("compaction", "branch_summary"):
            yield f"\n[{b.kind.replace('_', ' ')}] {b.text}\n{_indent(_plain_parts(b.parts))}"
        else:
            yield f"\n[{b.kind}] {b.title or b.text}{marks}{links}\n"
