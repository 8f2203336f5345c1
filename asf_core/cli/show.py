"""``asf show``: a session's tree in file order and the context a model gets at a leaf, or
the conversation at a leaf as a transcript (``--format text|markdown``).

The session is an ASF file, an ASF file on stdin (``-``), or one session of a native store
picked with ``--session`` and converted in memory (:mod:`asf_core.cli.show_input`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from asf_core.cli.output import ExitCode, Fail, err, out, out_json
from asf_core.cli.path_args import path_text
from asf_core.cli.picking import add_selection_options
from asf_core.cli.render import WIDTH, entry_summary, item_summary, settings_summary, short
from asf_core.codec import entry_to_json, header_to_json
from asf_core.context import ContextError, context_at
from asf_core.export import SessionTree
from asf_core.export.transcript import transcript
from asf_core.export.transcript_text import render_markdown, render_text
from asf_core.reader import SessionFile
from asf_core.safe_text import printable

__all__ = ["add_parser", "resolve_leaf", "run_show"]

#: What ``--format`` may name: the entry tree (default) or a transcript.
_FORMATS = ("tree", "text", "markdown")


def resolve_leaf(session: SessionFile, wanted: str | None) -> str | None:
    """The entry id ``--leaf`` names (a unique prefix, with or without ``sha256:``): of the
    session, one its file gave an entry that redacting sealed again (``session.renamed``), or
    one a pre-0.5 file wrote (``session.legacy``), so ``--leaf`` takes the ids ``asf show
    FILE`` shows with or without ``--redact``, and those written in an old draft's file."""
    if wanted is None:
        return session.resume_leaf()
    prefix = wanted.strip()
    bare = prefix.removeprefix("sha256:")
    known = [(e.id, e.id) for e in session.entries if e.id is not None]
    known += session.renamed.items()
    known += session.legacy.items()
    found = {
        new: None
        for ident, new in known
        if ident.startswith(prefix) or ident.removeprefix("sha256:").startswith(bare)
    }
    matches = list(found)
    if not prefix or not matches:
        raise Fail(f"no entry id starts with {wanted!r}")
    if len(matches) > 1:
        raise Fail(f"{wanted!r} is ambiguous: {len(matches)} entry ids start with it")
    return matches[0]


def _marks(session: SessionFile, entry_id: str, resume: str | None) -> str:
    marks: list[str] = []
    children = len(session.children.get(entry_id, ()))
    if children > 1:
        marks.append(f"fork:{children}")
    if children == 0:
        marks.append("leaf")
    if entry_id == resume:
        marks.append("resume")
    return f"  [{' '.join(marks)}]" if marks else ""


def _transcript(session: SessionFile, leaf: str | None, form: str) -> ExitCode:
    if leaf is None:
        raise Fail("the session has no entries, so no conversation to show", ExitCode.NOTHING)
    view = SessionTree(session).view(leaf)
    render = render_markdown if form == "markdown" else render_text
    for chunk in render(transcript(view)):
        sys.stdout.write(printable(chunk, layout=True))
    return ExitCode.OK


def run_show(args: argparse.Namespace) -> ExitCode:
    """The ``asf show`` command."""
    from asf_core.cli.show_input import load

    shown = load(args)
    session, path = shown.session, shown.name
    leaf = resolve_leaf(session, args.leaf)
    problems = [f"{path}:{p.line}: {p.severity}: {p.code}: {p.message}" for p in session.problems]
    if args.format in ("text", "markdown") and not args.json:
        for line in problems:
            err(line)
        return _transcript(session, leaf, args.format)
    try:
        ctx = context_at(session, leaf) if leaf is not None else None
    except ContextError as exc:
        raise Fail(f"{path}: cannot build the context at {short(leaf)}: {exc}") from exc
    if args.json:
        context: dict[str, Any] | None = None
        if ctx is not None:
            context = {
                "settings": ctx.settings,
                "items": ctx.items,
                "entries": ctx.entries,
                "item_entries": ctx.item_entries,
                "omitted": ctx.omitted,
                "problems": ctx.problems,
            }
        out_json(
            {
                **_NOTHING_SHOWN,
                "header": header_to_json(session.header),
                "entries": [entry_to_json(e) for e in session.entries],
                "resume_leaf": session.resume_leaf(),
                "leaves": session.leaves(),
                "leaf": leaf,
                "context": context,
                "problems": problems,
            },
            plain=True,
        )
        return ExitCode.OK
    for line in problems:
        err(line)
    width = None if args.full else WIDTH
    _print_tree(session, path, width)
    if ctx is None or leaf is None:
        out("(no entries, so no context)")
        return ExitCode.OK
    out()
    out(f"context at {short(leaf)}: {len(ctx.items)} items from {len(ctx.entries)} entries")
    out(f"  settings: {settings_summary(ctx.settings)}")
    for entry_id, item in zip(ctx.item_entries, ctx.items, strict=False):
        out(f"  {short(entry_id)}  {item_summary(item, width)}")
    for omitted in ctx.omitted:
        out(f"  omitted {short(omitted.get('entry'))} ({omitted.get('reason')})")
    for problem in ctx.problems:
        out(f"  problem: {problem}")
    return ExitCode.OK


def _print_tree(session: SessionFile, path: str, width: int | None) -> None:
    header = session.header
    out(
        f"session {header.id}  {header.format}  created {header.created_at}  "
        f"{len(session.entries)} entries  ({path})"
    )
    resume = session.resume_leaf()
    for entry in session.entries:
        entry_id = entry.id or ""
        out(
            f"{short(entry_id)}  <- {short(entry.parent):8}  {entry.type:14} "
            f"{entry_summary(entry, width)}{_marks(session, entry_id, resume)}"
        )


#: The ``--json`` document's members, as a run that shows no session has them.
_NOTHING_SHOWN: dict[str, Any] = {
    "header": None,
    "entries": [],
    "resume_leaf": None,
    "leaves": [],
    "leaf": None,
    "context": None,
    "problems": [],
    "errors": [],
}


def failed(args: argparse.Namespace, message: str) -> dict[str, Any]:
    """The ``--json`` document of a run that found no session to show, and why."""
    return {**_NOTHING_SHOWN, "errors": [message]}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    show = sub.add_parser(
        "show",
        help="read a session: its entries and context, or its conversation as a transcript",
        description="Show one session: an ASF FILE, an ASF file on stdin (-), or one session "
        "of a native store (a Hermes home, a state.db, a Claude Code directory or session "
        "file, a Codex home or rollout file; none given: your own stores, as asf list "
        "finds them) picked with --session ID and converted in memory (nothing is "
        "written). By default: the entries in file order (short id, parent, type, summary; "
        "forks, leaves and the resume leaf marked), then the context rebuilt at the leaf. "
        "--format text or markdown: the conversation at the leaf as a transcript (messages, "
        "reasoning, tool calls with their arguments and outputs, compactions, branches and "
        "sub-agents).",
    )
    show.add_argument(
        "path",
        type=path_text,
        metavar="PATH",
        nargs="?",
        help="an ASF file, '-' for stdin, or a store (none: your own stores, with --session "
        "or another option picking one session)",
    )
    show.add_argument(
        "--leaf", metavar="ID", help="entry id or unique prefix (default: the resume leaf)"
    )
    show.add_argument(
        "--format",
        choices=_FORMATS,
        default="tree",
        help="tree: entries and context (default); text or markdown: a transcript",
    )
    show.add_argument("--full", action="store_true", help="tree: whole texts, not cut")
    show.add_argument(
        "--redact",
        action="store_true",
        help="replace secrets and personal values as asf convert --redact does",
    )
    show.add_argument("--plugin", metavar="NAME", help="read a store with this format plugin")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    add_selection_options(show)
    show.set_defaults(run=run_show, plugins=False, failed=failed)
