"""What ``asf show`` shows: an ASF file, an ASF file on stdin, or one session of a native
store converted in memory (nothing is written).

A path is read as ASF unless the options pick sessions or a format plugin claims it: a
directory, a ``state.db``, a Claude Code session file or a Codex rollout (JSONL too, but
no ASF header).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from attrs import frozen

from asf_core.cli.exit_codes import worst
from asf_core.cli.output import ExitCode, Fail, Troubles, exit_code_for
from asf_core.cli.path_args import STDIN, read_stdin
from asf_core.cli.picking import selection_from
from asf_core.cli.redacting import JoinedSessions, joined_ids, redacted_file, redaction_for
from asf_core.reader import FormatError, SessionFile, parse_session, read_session

if TYPE_CHECKING:
    from asf_core.formats import ConvertedSession
    from asf_core.redaction import SessionRedaction

__all__ = ["Shown", "load", "read_asf_file"]


@frozen(kw_only=True)
class Shown:
    """The session to show, and how to name it to the user."""

    session: SessionFile
    name: str


def _parsed(session: ConvertedSession, name: Path) -> SessionFile:
    from asf_core.writer import session_lines

    return parse_session(b"".join(session_lines(session.header, session.entries)), path=name)


def _as_asf(session: SessionFile, redaction: SessionRedaction | None, name: str) -> Shown:
    """An ASF file to show, redacted as ``convert --redact`` would have written it."""
    if redaction is None:
        return Shown(session=session, name=name)
    from asf_core.plugins import make_plugin_manager

    path = session.path or Path(STDIN)
    plugins = make_plugin_manager()
    if session.path is not None and next(joined_ids(session), None) is not None:
        # The sessions it joins (its sub-agents, beside it) redacted first: see JoinedSessions.
        from asf_core.cli.output import err
        from asf_core.export.resolve import DirectoryIndex

        def failed(failure: Fail, near: Path) -> None:
            err(f"{failure}; {near} names its entries by their unredacted ids")

        index = DirectoryIndex(path.parent, recursive=False)
        joined = JoinedSessions(redaction, index.resolver(path), lambda: plugins, failed)
        joined.before(session, path)
    redacted = redacted_file(session, redaction, path, plugins)
    return Shown(session=redacted, name=name)


def read_asf_file(path: Path) -> SessionFile:
    """An ASF session file; a missing or unreadable one is a :class:`Fail` naming it (a file
    that is no ASF session raises ``FormatError``, which each command words its own way)."""
    try:
        return read_session(path)
    except FileNotFoundError as exc:
        raise Fail(f"{path}: no such file") from exc
    except OSError as exc:
        raise Fail(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _reads_as_asf(path: Path) -> bool:
    try:
        read_session(path)
    except (OSError, FormatError):
        return False
    return True


def _stdin() -> SessionFile:
    # No path: lines on stdin have no directory beside them, so no sidecar blobs and no
    # sessions they join are looked for (the current directory is not theirs).
    try:
        return parse_session(read_stdin())
    except FormatError as exc:
        raise Fail(f"stdin: not an ASF session file: {exc}") from exc


def _native(args: argparse.Namespace, path: Path | None) -> Shown:
    """A session of a native store (None: of the stores in the default locations), converted
    in memory (the plugins and the pipeline are loaded here: an ASF file is shown without
    them)."""
    from asf_core.pipeline.single import convert_one
    from asf_core.plugins import make_plugin_manager

    single, problems = convert_one(
        make_plugin_manager(),
        [] if path is None else [path],
        format=args.plugin,
        selection=selection_from(args),
        redaction=redaction_for(args),
    )
    if single is None:  # the last error is why; the others are printed before it
        if not any(p.kind != "warning" for p in problems):
            Troubles().note(problems)
            named = "your stores" if path is None else str(path)
            raise Fail(f"{named}: nothing to show", ExitCode.NOTHING)
        Troubles().note(problems[:-1])
        # The exit code is the most severe problem's, as for every command: a plugin that
        # failed while reading is why no session was found, not the other way round.
        raise Fail(problems[-1].message, worst(*(exit_code_for(p) for p in problems)))
    Troubles().note(problems)
    label = single.store.label()
    store = single.store.claim.path if path is None else path
    return Shown(session=_parsed(single.session, store), name=f"{label} {single.native.id}")


def _picks(args: argparse.Namespace) -> bool:
    return bool(
        args.session
        or args.since
        or args.until
        or args.source
        or args.title
        or args.cwd
        or args.model
        or args.min_rows is not None
        or args.limit is not None
        or args.plugin
    )


def load(args: argparse.Namespace) -> Shown:
    """The session the arguments name; an expected error is a :class:`Fail`."""
    redaction = redaction_for(args)
    if args.path is None:  # the user's own stores, as `asf list` and `asf convert` read them
        if not _picks(args):
            raise Fail(
                "name an ASF FILE, - (stdin) or a store, or pick one session of your own "
                "stores with --session ID (asf list shows them)",
                ExitCode.USAGE,
            )
        return _native(args, None)
    if str(args.path) == STDIN:
        if _picks(args):
            raise Fail("stdin holds one ASF session: options picking sessions do not apply")
        return _as_asf(_stdin(), redaction, "stdin")
    path = Path(args.path)
    if path.is_dir():
        return _native(args, path)
    if _picks(args):
        try:
            return _native(args, path)
        except Fail as native:
            # No store there: an ASF file (one session, say so) is no store to pick from.
            if native.code == ExitCode.NOTHING and _reads_as_asf(path):
                raise Fail(
                    f"{path}: an ASF session file holds one session: options picking "
                    "sessions do not apply (they pick from a store)"
                ) from None
            raise
    try:
        return _as_asf(read_asf_file(path), redaction, str(path))
    except FormatError as exc:
        not_asf = exc
    try:
        return _native(args, path)
    except Fail as native:
        if native.code == ExitCode.NOTHING:  # no plugin knows it either: say what ASF found
            raise Fail(f"{path}: not an ASF session file: {not_asf}") from None
        raise
