"""A session path as people read it: turns, reasoning, tool calls with their outputs, folds,
branches and sub-agents, independent of how it is rendered (Markdown, HTML, plain text).

A transcript shows the whole path from its root, not only what the model saw at the end: a
compaction is shown where it happened, followed by what the model continued with. Record
entries stay out of the way: a call's decisions and sub-agent are shown with the call, the
rest (runs, dispatches, queued inputs, custom state) is left to the lossless exports.

Blocks are produced one at a time while the renderer writes, so a long session is never held
twice in memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

from attrs import frozen

from asf_core.export.items import (
    CALL_TYPES,
    OUTPUT_TYPES,
    Part,
    call_input,
    content_parts,
    item_text,
    reasoning_text,
    role_of,
    type_of,
)
from asf_core.export.media import inline_image
from asf_core.export.paths import PathView
from asf_core.model import (
    BranchSummary,
    Compaction,
    Config,
    Decision,
    Entry,
    Item,
    Link,
    Outcome,
    Response,
)

__all__ = ["Block", "Href", "Transcript", "link_target", "transcript"]

#: Where another session's (or another path's) transcript is: ``(session id, leaf or None)``
#: -> a relative link, or None when it is not part of the export.
Href = Callable[[str, str | None], str | None]


def link_target(href: str, *, keep: str = "") -> str:
    """A link :data:`Href` gave, percent-encoded so it can only be that relative path: made
    from file names, which may hold anything but a slash (a ``#`` would start a fragment, a
    ``:`` a scheme). ``keep``: characters a renderer's own syntax already holds in the link."""
    return quote(href, safe="/._-~" + keep)


@frozen(kw_only=True)
class Block:
    """One thing to show, at the entry it comes from.

    ``kind`` is one of ``message`` (``role``, ``parts``), ``reasoning`` (``text``), ``tool``
    (``title`` = tool name, ``call_id``, ``text`` = arguments, ``output`` = the output's
    parts or None when the path holds no output), ``response`` (``text`` = model, usage,
    status), ``compaction`` / ``branch_summary`` (``parts`` = the summary, ``text`` = what
    was kept or where the branch came from), ``fork`` (``links`` = the other branches),
    ``link`` (``title`` = the relation, ``links``) and ``note`` (``text``).
    """

    kind: str
    entry: str
    ts: str
    role: str = ""
    parts: tuple[Part, ...] = ()
    title: str = ""
    text: str = ""
    call_id: str = ""
    output: tuple[Part, ...] | None = None
    #: Short flags a renderer shows beside the block: hidden, queued, rejected, error, ...
    marks: tuple[str, ...] = ()
    #: (label, href or None) pairs: sub-agent sessions, other branches, linked sessions.
    links: tuple[tuple[str, str | None], ...] = ()


@frozen(kw_only=True)
class Transcript:
    """The heading facts of a path and its blocks (a fresh iterator on every call)."""

    view: PathView
    title: str
    #: (label, value) pairs shown under the title.
    meta: tuple[tuple[str, str], ...]
    href: Href | None = None

    def blocks(self) -> Iterator[Block]:
        return _Blocks(self.view, self.href).run()

    def image(self, part: Part) -> str | None:
        """A data URL to show an image part inline, or None (see :mod:`.media`)."""
        session = self.view.session
        return inline_image(part.url, session.path, session.header.id)


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def transcript(view: PathView, *, href: Href | None = None) -> Transcript:
    """The transcript of one path; ``href`` links sub-agents and other branches."""
    header = view.session.header
    harness = header.harness or {}
    name = view.tree.session_name
    meta: list[tuple[str, str]] = [("session", header.id)]
    agent = " ".join(str(harness[k]) for k in ("name", "version") if harness.get(k))
    for label, value in (
        ("agent", agent),
        ("created", header.created_at),
        ("directory", header.cwd or ""),
        ("format", header.format),
        ("path ends at", f"{view.name(view.leaf)} ({_entries(len(view.path))})"),
        ("parent session", header.parent_session or ""),
        ("abandoned at", view.name(view.abandoned_at) if view.abandoned_at else ""),
    ):
        if value:
            meta.append((label, value))
    return Transcript(view=view, title=name or f"Session {header.id}", meta=tuple(meta), href=href)


def _parts(content: Any) -> tuple[Part, ...]:
    return tuple(content_parts(content))


def _builtin_call(item: Any) -> bool:
    """A call of a tool the model's provider or harness runs (``web_search_call``,
    ``local_shell_call``, ``computer_call``): what it did is its ``action``."""
    return type_of(item).endswith("_call") and isinstance(item.get("action"), dict)


class _Blocks:
    def __init__(self, view: PathView, href: Href | None) -> None:
        self.view = view
        self.href = href
        self.name = view.name
        self.session_id = view.session.header.id
        # What the calls on this path came to: found first, shown with the call. A repeated
        # call id binds what follows to the latest call with that id (draft 0.11).
        self.outputs: dict[str, Item] = {}
        self.verdicts: dict[str, list[str]] = {}
        self.subagents: dict[str, Link] = {}
        latest: dict[str, str] = {}
        for entry in view.path:
            if isinstance(entry, Item) and type_of(entry.item) in CALL_TYPES:
                latest[_call_id(entry)] = str(entry.id)
                continue
            if isinstance(entry, Item) and _builtin_call(entry.item) and _call_id(entry):
                latest[_call_id(entry)] = str(entry.id)  # a local shell's output names it
                continue
            call = latest.get(_call_id(entry) if isinstance(entry, Item) else "")
            if isinstance(entry, Item) and type_of(entry.item) in OUTPUT_TYPES:
                if call is not None:
                    self.outputs.setdefault(call, entry)
            elif isinstance(entry, Decision) and entry.call_id in latest:
                self.verdicts.setdefault(latest[entry.call_id], []).append(str(entry.verdict))
            elif isinstance(entry, Link) and entry.rel == "subsession" and entry.call_id in latest:
                self.subagents[latest[entry.call_id]] = entry
        #: Output entries already shown with their call.
        self.calls_shown: set[str] = set()
        self.model: str | None = None

    def _block(self, kind: str, entry: Entry, **members: Any) -> Block:
        return Block(kind=kind, entry=self.name(entry.id), ts=entry.ts, **members)

    def run(self) -> Iterator[Block]:
        path = self.view.path
        for pos, entry in enumerate(path):
            yield from self._entry(entry)
            if pos < len(path) - 1:
                fork = self._fork(entry, path[pos + 1])
                if fork is not None:
                    yield fork

    def _entry(self, entry: Entry) -> Iterator[Block]:
        if isinstance(entry, Item):
            yield from self._item(entry)
        elif isinstance(entry, Response):
            yield self._response(entry)
        elif isinstance(entry, Compaction):
            kept = f"kept from {self.name(entry.first_kept)}" if entry.first_kept else ""
            pinned = f"{len(entry.pinned)} pinned item(s)" if entry.pinned else ""
            text = ", ".join(t for t in (kept, pinned) if t)
            yield self._block("compaction", entry, parts=_parts_of(entry.summary), text=text)
        elif isinstance(entry, BranchSummary):
            text = f"summary of the branch ending at {self.name(entry.from_)}"
            yield self._block("branch_summary", entry, parts=_parts_of(entry.summary), text=text)
        elif isinstance(entry, Config):
            if entry.model and entry.model != self.model:
                self.model = entry.model
                yield self._block("note", entry, text=f"model: {entry.model}")
        elif isinstance(entry, Link) and not self._shown_with_call(entry):
            session = entry.session or ""
            links = ((session, self._href(session, None)),)
            yield self._block("link", entry, title=str(entry.rel), links=links)
        elif isinstance(entry, Outcome):
            facts = [str(entry.kind), entry.label or "", *_score(entry)]
            yield self._block("note", entry, text="outcome: " + " ".join(f for f in facts if f))

    def _shown_with_call(self, link: Link) -> bool:
        return link.rel == "subsession" and link in self.subagents.values()

    def _item(self, entry: Item) -> Iterator[Block]:
        item = entry.item
        kind = type_of(item)
        marks = tuple(
            m
            for m, on in (("hidden", entry.visible is False), ("queued", bool(entry.queued_from)))
            if on
        )
        if kind == "message":
            parts = _parts(item.get("content") if item else None)
            yield self._block("message", entry, role=role_of(item), parts=parts, marks=marks)
        elif kind == "reasoning":
            text = reasoning_text(item)
            if text:
                yield self._block("reasoning", entry, text=text, marks=marks)
        elif kind in CALL_TYPES or _builtin_call(item):
            yield self._tool(entry, marks)
        elif kind in OUTPUT_TYPES:
            if str(entry.id) not in self.calls_shown:
                output = _parts(item.get("output") if item else None)
                yield self._block(
                    "tool", entry, call_id=_call_id(entry), output=output, marks=marks
                )
        else:
            text = f"[{kind or 'item'}] {item_text(item)}".strip()
            yield self._block("note", entry, text=text, marks=marks)

    def _tool(self, entry: Item, marks: tuple[str, ...]) -> Block:
        item = entry.item or {}
        call_id = _call_id(entry)
        output = self.outputs.get(str(entry.id))
        if output is not None:
            self.calls_shown.add(str(output.id))
        shown = output.item.get("output") if output is not None and output.item else None
        verdicts = self.verdicts.get(str(entry.id), [])
        if "reject" in verdicts:
            marks += ("rejected",)
        elif verdicts and verdicts[-1] == "hold" and output is None:
            marks += ("held",)
        links: tuple[tuple[str, str | None], ...] = ()
        link = self.subagents.get(str(entry.id))
        if link is not None and link.session:
            leaf = next(
                (p.entry for p in (output.parents if output else ()) if p.session == link.session),
                None,
            )
            links = ((f"sub-agent session {link.session}", self._href(link.session, leaf)),)
        name = item.get("name")
        if not isinstance(name, str):  # a built-in tool is named by its call's type
            name = "" if type_of(item) in CALL_TYPES else type_of(item).removesuffix("_call")
        return self._block(
            "tool",
            entry,
            title=name,
            call_id=call_id,
            text=_input(item),
            output=None if output is None else _parts(shown),
            marks=marks,
            links=links,
        )

    def _response(self, entry: Response) -> Block:
        facts = [entry.model or ""]
        usage = entry.usage or {}
        tokens = [usage.get("input_tokens"), usage.get("output_tokens")]
        if all(isinstance(t, int) for t in tokens):
            facts.append(f"{tokens[0]} tokens in, {tokens[1]} out")
        if isinstance(entry.latency_ms, int | float):
            facts.append(f"{_number(entry.latency_ms)} ms")
        marks: tuple[str, ...] = ()
        if entry.error is not None:
            message = entry.error.get("message")
            facts.append(f"error: {message if isinstance(message, str) else entry.error}")
            marks = ("error",)
        elif entry.status and entry.status != "completed":
            facts.append(entry.status)
        return self._block("response", entry, text=" · ".join(f for f in facts if f), marks=marks)

    def _fork(self, entry: Entry, following: Entry) -> Block | None:
        kids = self.view.tree.children(str(entry.id))
        if len(kids) < 2:
            return None
        links = tuple(
            (f"branch ending at {_short(self.name(leaf))}", self._href(self.session_id, leaf))
            for kid in kids
            if kid != following.id
            for leaf in self.view.tree.leaves_under(kid)
        )
        text = f"{len(kids)} branches start here; this path takes one"
        return self._block("fork", entry, text=text, links=links)

    def _href(self, session: str, leaf: str | None) -> str | None:
        return self.href(session, leaf) if self.href is not None else None


def _short(entry_id: str) -> str:
    """An entry id as people read it: the first 8 hex digits of its hash."""
    return entry_id.removeprefix("sha256:")[:8]


def _parts_of(item: Any) -> tuple[Part, ...]:
    if type_of(item) == "message":
        return _parts(item.get("content"))
    text = item_text(item)
    return (Part(kind="text", text=text or f"[{type_of(item) or 'item'}]"),)


def _call_id(entry: Item) -> str:
    call_id = entry.item.get("call_id") if entry.item else None
    return call_id if isinstance(call_id, str) else ""


def _input(call: Any) -> str:
    """What a call was given: a function call's arguments, a custom tool call's free text,
    a built-in tool's action (a web search's query, a local shell's command)."""
    if type_of(call) not in CALL_TYPES:
        return _arguments(call.get("action"))
    given = call_input(call)
    return (
        given
        if isinstance(given, str) and type_of(call) == "custom_tool_call"
        else _arguments(given)
    )


def _arguments(arguments: Any) -> str:
    """A call's arguments, pretty-printed when they are JSON."""
    if isinstance(arguments, str):
        try:
            return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
        except (ValueError, RecursionError):
            return arguments
    return json.dumps(arguments, indent=2, ensure_ascii=False)


def _number(value: float) -> str:
    """A number from the data as people read it (``1.5e+06``); an integer no double holds
    (a damaged file's, read all the same) in full."""
    try:
        return f"{value:g}"
    except OverflowError:
        return str(value)


def _score(entry: Outcome) -> list[str]:
    out = []
    if entry.score is not None:
        out.append(f"score {_number(entry.score)}")
    if entry.pass_ is not None:
        out.append("pass" if entry.pass_ else "fail")
    return out
