"""The options that pick sessions, the same on ``asf list``, ``asf convert`` and ``asf show``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from asf_core.cli.output import Fail
from asf_core.cli.path_args import path_text
from asf_core.formats import Selection
from asf_core.selecting import parse_time

__all__ = ["add_selection_options", "selection_from"]


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def add_selection_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--session``, ``--since``, ``--until``, ``--source``, ``--title``, ``--cwd``,
    ``--model``, ``--min-rows`` and ``--limit``."""
    group = parser.add_argument_group(
        "picking sessions",
        "Each option narrows; sessions are taken newest first. Times: a date (2026-09-17), a "
        "date and time (2026-09-17T08:30, local unless it says +02:00 or Z) or an age (30m, "
        "12h, 7d, 2w ago).",
    )
    group.add_argument(
        "--session",
        action="append",
        default=[],
        metavar="ID",
        help="a session id, or the start of one (repeatable)",
    )
    group.add_argument("--since", metavar="WHEN", help="started at or after WHEN")
    group.add_argument(
        "--until", metavar="WHEN", help="started before WHEN (a date: up to the end of that day)"
    )
    group.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="NAME",
        help="where the session came from, e.g. cli, telegram, subagent (repeatable)",
    )
    group.add_argument("--title", metavar="TEXT", help="title contains TEXT (any case)")
    group.add_argument(
        "--cwd", type=path_text, metavar="DIR", help="ran in DIR or a directory below it"
    )
    group.add_argument("--model", metavar="TEXT", help="model name contains TEXT (any case)")
    group.add_argument(
        "--min-rows", type=_count, metavar="N", help="holds at least N rows (messages, lines)"
    )
    group.add_argument(
        "-n", "--limit", type=_count, metavar="N", help="at most N sessions, the newest"
    )


def selection_from(args: argparse.Namespace) -> Selection:
    """The :class:`Selection` the options ask for; a time that cannot be read is a usage
    error."""
    for option, when in (("--since", args.since), ("--until", args.until)):
        if when == "":  # "$UNSET": read as no bound, it picked every session
            raise Fail(f"{option} needs a time, not ''")
    try:
        since = parse_time(args.since) if args.since else None
        until = parse_time(args.until, end=True) if args.until else None
    except ValueError as exc:
        raise Fail(str(exc)) from None
    texts = [("--title", args.title), ("--model", args.model)]
    texts += [("--session", s) for s in args.session]
    for option, text in texts:
        if text is not None and not text.strip():  # "$UNSET": every session, or none
            raise Fail(f"{option} needs some text to look for, not {text!r}")
    cwd = None
    if args.cwd:
        try:
            cwd = os.path.normpath(Path(args.cwd).expanduser().absolute())
        except RuntimeError:  # "~" with no home directory to stand for, "~name" no user
            user = args.cwd[1:].split("/", 1)[0]
            why = f"no user {user!r} here" if user else "no home directory for ~ ($HOME is unset)"
            raise Fail(f"--cwd {args.cwd}: {why}") from None
    return Selection(
        ids=tuple(s.strip() for s in args.session),
        since=since,
        until=until,
        sources=tuple(args.source),
        title=args.title,
        cwd=cwd,
        model=args.model,
        min_rows=args.min_rows,
        limit=args.limit,
    )
