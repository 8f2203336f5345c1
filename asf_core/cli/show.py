"""``asf show``: a session file's tree in file order and the context a model gets at a leaf."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from asf_core.cli.output import ExitCode, Fail, err, out, out_json
from asf_core.cli.render import entry_summary, item_summary, settings_summary, short
from asf_core.codec import entry_to_json, header_to_json
from asf_core.context import ContextError, context_at
from asf_core.reader import FormatError, SessionFile, read_session

__all__ = ["add_parser", "resolve_leaf", "run_show"]


def _load(path: Path) -> SessionFile:
    if path.is_dir():
        raise Fail(f"{path}: is a directory; asf show takes one session file")
    try:
        return read_session(path)
    except FileNotFoundError as exc:
        raise Fail(f"{path}: no such file") from exc
    except OSError as exc:
        raise Fail(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except FormatError as exc:
        raise Fail(f"{path}: not an ASF session file: {exc}") from exc


def resolve_leaf(session: SessionFile, wanted: str | None) -> str | None:
    """The entry id ``--leaf`` names (a unique prefix, with or without ``sha256:``)."""
    if wanted is None:
        return session.resume_leaf()
    prefix = wanted.strip()
    bare = prefix.removeprefix("sha256:")
    matches = [
        e.id
        for e in session.entries
        if e.id is not None
        and (e.id.startswith(prefix) or e.id.removeprefix("sha256:").startswith(bare))
    ]
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


def run_show(args: argparse.Namespace) -> ExitCode:
    """The ``asf show`` command."""
    path: Path = args.file
    session = _load(path)
    leaf = resolve_leaf(session, args.leaf)
    try:
        ctx = context_at(session, leaf) if leaf is not None else None
    except ContextError as exc:
        raise Fail(f"{path}: cannot build the context at {short(leaf)}: {exc}") from exc
    problems = [f"{path}:{p.line}: {p.severity}: {p.code}: {p.message}" for p in session.problems]
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
                "header": header_to_json(session.header),
                "entries": [entry_to_json(e) for e in session.entries],
                "resume_leaf": session.resume_leaf(),
                "leaves": session.leaves(),
                "leaf": leaf,
                "context": context,
                "problems": problems,
            }
        )
        return ExitCode.OK
    for line in problems:
        err(line)
    _print_tree(session, path)
    if ctx is None or leaf is None:
        out("(no entries, so no context)")
        return ExitCode.OK
    out()
    out(f"context at {short(leaf)}: {len(ctx.items)} items from {len(ctx.entries)} entries")
    out(f"  settings: {settings_summary(ctx.settings)}")
    for entry_id, item in zip(ctx.item_entries, ctx.items, strict=False):
        out(f"  {short(entry_id)}  {item_summary(item)}")
    for omitted in ctx.omitted:
        out(f"  omitted {short(omitted.get('entry'))} ({omitted.get('reason')})")
    for problem in ctx.problems:
        out(f"  problem: {problem}")
    return ExitCode.OK


def _print_tree(session: SessionFile, path: Path) -> None:
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
            f"{entry_summary(entry)}{_marks(session, entry_id, resume)}"
        )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    show = sub.add_parser(
        "show",
        help="print a session file's entries and the context at a leaf",
        description="Entries in file order (short id, parent, type, summary; forks, leaves and "
        "the resume leaf marked), then the context rebuilt at the leaf.",
    )
    show.add_argument("file", type=Path, metavar="FILE")
    show.add_argument(
        "--leaf", metavar="ID", help="entry id or unique prefix (default: resume leaf)"
    )
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(run=run_show, plugins=False)
