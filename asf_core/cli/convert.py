"""``asf convert``: every store's sessions (or those picked) into ASF files
(:mod:`asf_core.pipeline.conversion`); with ``-o -``, the one picked session's lines to stdout."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from asf_core.cli.humane import flat, plural
from asf_core.cli.jobs import add_jobs_option
from asf_core.cli.output import ExitCode, Fail, Troubles, err, out, out_json, worst
from asf_core.cli.path_args import a_path
from asf_core.cli.picking import add_selection_options, selection_from
from asf_core.cli.progress import Progress, progress_for
from asf_core.cli.redacting import redaction_for
from asf_core.errors import OutputError
from asf_core.layout import REPORT_NAME
from asf_core.pipeline.conversion import convert_paths
from asf_core.pipeline.left import LEFT, PRUNED, SUPERSEDED
from asf_core.pipeline.unchanged import IGNORED

if TYPE_CHECKING:  # what only some runs need loads when they need it (see main's docstring)
    from asf_core.formats import ConvertedSession
    from asf_core.pipeline.host import Candidate
    from asf_core.pipeline.report import RunReport, StoreReport
    from asf_core.pipeline.single import Single
    from asf_core.plugins import AsfPluginManager

__all__ = ["DEFAULT_OUT", "add_parser", "run_convert"]

DEFAULT_OUT = Path("asf-out")
STDOUT = "-"


def _summary(run: RunReport) -> str:
    t = run.totals()
    stores = len(run.stores)
    text = (
        f"Converted {plural(stores, 'store')} into {run.output}: "
        f"{plural(t['sessions_read'], 'native session')} read, "
        f"{plural(t['sessions_written'], 'ASF session')} "
        f"({t['files_written']} written, {t['files_unchanged']} unchanged), "
        f"{t['entries_written']} entries; {plural(t['strays'], 'stray')}, "
        f"{t['dropped']} dropped, {plural(t['warnings'], 'warning')}"
    )
    if any(s.redacted for s in run.stores):
        text += f"; {t['redacted']} secrets and personal values redacted"
    left = sum(1 for s in run.stores for f in s.findings if f.code in (LEFT, SUPERSEDED))
    if left:
        text += f"; {plural(left, 'file')} of earlier runs left in place"
    deleted = sum(1 for s in run.stores for f in s.findings if f.code == PRUNED)
    if deleted:
        text += f"; {plural(deleted, 'file')} of earlier runs deleted"
    failed = sum(1 for s in run.stores if s.error)
    if failed:
        text += f"; {plural(failed, 'store')} stopped early"
    return text + f". Details: {REPORT_NAME} beside each store's files."


class _Progress:
    """``hermes .hermes/work: 12 of 40 sessions, 0:42 left`` on a terminal's stderr."""

    def __init__(self, display: Progress) -> None:
        self.display = display
        self.label = ""
        self.total: int | None = None
        #: Native sessions written, by the ids the sessions hold, and sessions holding none.
        self.named = self.unnamed = 0
        #: The count last shown: the line never counts back.
        self.shown = 0
        self.started = time.monotonic()

    def store(self, candidate: Candidate, total: int | None) -> None:
        self.label = f"{candidate.claim.format} {flat(candidate.label())}"
        self.total, self.named, self.unnamed, self.shown = total, 0, 0, 0
        self.started = time.monotonic()
        self.display.show(f"{self.label}: reading", force=True)

    @property
    def done(self) -> int:
        """Native sessions written: those the sessions name; for a plugin naming none, the
        sessions (a session naming none beside named ones is a sub-agent's: not counted)."""
        return self.named or self.unnamed

    def session(self, report: StoreReport, session: ConvertedSession) -> None:
        self.named += len(session.native_ids)
        self.unnamed += 0 if session.native_ids else 1
        # Sub-agent files written before the session holding them counted as sessions until
        # it came: the line holds their count rather than step back.
        self.shown = max(self.shown, self.done)
        if self.total:
            # Sessions no listed one stands for (sub-agents) are written too: not past the total.
            done = min(self.shown, self.total)
            text = f"{self.label}: {done} of {self.total} sessions"
            elapsed = time.monotonic() - self.started
            if 0 < done < self.total and elapsed > 1:
                left = int(elapsed / done * (self.total - done))
                text += f", {left // 60}:{left % 60:02d} left"
        else:
            text = f"{self.label}: {plural(self.shown, 'session')}"
        written = plural(report.files_written, "file")
        self.display.show(f"{text} ({written} written)")


def _waiting(dest: Path) -> None:
    """Said before waiting for another run writing the same store's files (a nightly run
    overlapping this one, say): else the wait would look like a hang."""
    err(f"waiting for another asf convert writing {dest} to finish")


def _to_stdout(args: argparse.Namespace, pm: AsfPluginManager) -> ExitCode:
    """``-o -``: the one picked session's lines on stdout, nothing written to disk."""
    for option, given in (("--json", args.json), ("--report", args.report is not None)):
        if given:  # a run writing no report cannot honour either: said, never ignored
            raise Fail(
                f"-o - writes the session itself to stdout: it cannot be combined with {option}"
            )
    from asf_core.pipeline.single import convert_one
    from asf_core.writer import session_lines

    troubles = Troubles()
    single, problems = convert_one(
        pm,
        args.paths,
        format=args.format,
        selection=selection_from(args),
        redaction=redaction_for(args),
    )
    troubles.note(problems)
    if single is None:  # a warning alone does not say why
        failed = any(p.kind != "warning" for p in problems)
        return troubles.code if failed else worst(troubles.code, ExitCode.USAGE)
    stream = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
    for line in session_lines(single.session.header, single.session.entries):
        if stream is not None:
            stream.write(line)
        else:
            sys.stdout.write(line.decode())
    if single.others and not args.quiet:
        names = ", ".join(s.header.id for s in single.others)
        n, below = len(single.others), _below(single)
        what = (
            plural(n, "sub-agent session")
            if below
            else f"{plural(n, 'other session')} converted with it"
        )
        err(f"{what} not written ({names}): -o DIR writes them too")
    return troubles.code


def _below(single: Single) -> bool:
    """Whether every other session converted with the picked one hangs below it (its
    sub-agents); picking a sub-agent converts the conversation that started it too."""
    up = {s.header.id: s.header.parent_session for s in single.others}
    for start in up:
        seen: set[str] = set()
        at = up[start]
        while at in up and at not in seen:
            seen.add(at)
            at = up[at]
        if at != single.session.header.id:
            return False
    return True


def run_convert(args: argparse.Namespace, pm: AsfPluginManager) -> ExitCode:
    """The ``asf convert`` command."""
    if args.prune and str(args.output) == STDOUT:
        raise Fail("--prune deletes files of earlier runs in DIR: it needs -o DIR, not -o -")
    if str(args.output) == STDOUT:
        return _to_stdout(args, pm)
    troubles = Troubles()
    selection = selection_from(args)
    if args.prune and not selection.everything():
        raise Fail(
            "--prune needs a whole run (no --session, --since ...): "
            "a picked run does not write every session"
        )
    redaction = redaction_for(args)
    display = progress_for(quiet=args.quiet or args.json)
    progress = _Progress(display)
    try:
        run, problems = convert_paths(
            pm,
            args.paths,
            args.output,
            format=args.format,
            on_session=progress.session if display.enabled else None,
            on_store=progress.store if display.enabled else None,
            count=display.enabled,
            selection=selection,
            redaction=redaction,
            processes=args.jobs,
            report_file=args.report,
            on_wait=None if args.quiet else _waiting,
            prune=args.prune,
        )
    except OutputError as exc:
        raise Fail(str(exc)) from exc
    finally:
        display.clear()
    troubles.note(problems)
    for store in run.stores:  # a damaged record of the last run: everything was converted
        for finding in store.findings:
            if finding.code == IGNORED:
                err(f"warning: {finding.message}")
    if run.interrupted:
        raise KeyboardInterrupt
    if args.json:
        out_json(run.to_json())
    elif not args.quiet and run.stores:
        out(_summary(run))
    return troubles.code


def failed(args: argparse.Namespace, message: str) -> dict[str, Any] | None:
    """The ``--json`` document of a run refused before converting anything, and why; none
    for ``-o -``, whose stdout is for a session's lines (and which refuses ``--json``)."""
    if str(args.output) == STDOUT:
        return None
    from asf_core.pipeline.report import RunReport

    return RunReport(output=str(args.output), errors=[message]).to_json()


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "convert",
        help="convert session stores into ASF files",
        description="Find the format of each PATH (none given: your own stores, in each "
        "format's default place, e.g. ~/.hermes) and convert every session, or the ones "
        "picked, into one ASF file each under DIR/<format>/<store>/<project>/, with a "
        "report.json per store saying what was read, written, skipped and why. A picked "
        "session is converted with what it needs (its whole conversation and sub-agents). "
        "Files that would not change are left alone. Exit codes: 0 done (strays and "
        "warnings included), 2 bad arguments or a damaged store, 3 a plugin failed, "
        "4 nothing found, 130 interrupted.",
    )
    p.add_argument(
        "paths", nargs="*", type=a_path, metavar="PATH", help="a store, or a directory holding some"
    )
    p.add_argument(
        "-o",
        "--output",
        type=a_path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"where to write (default: ./{DEFAULT_OUT}); '-': the one picked session's "
        "lines to stdout, nothing else written",
    )
    p.add_argument("--format", metavar="NAME", help="use this format plugin; resolves ties")
    p.add_argument(
        "--redact",
        action="store_true",
        help="replace API keys, tokens, private keys, passwords in URLs, e-mail addresses, "
        "phone numbers and the ids that name people or chats with [REDACTED:<kind>:<n>] "
        "(the same value, the same placeholder); the report counts them by kind",
    )
    p.add_argument(
        "--prune",
        action="store_true",
        help="delete the ASF session files of earlier runs that this run did not write "
        "(sessions gone from the store, earlier files of sessions now written under another "
        "name); without it they are kept and named in the report. Only in a whole run",
    )
    p.add_argument("--json", action="store_true", help="print the run's report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress and no summary")
    p.add_argument("--report", type=a_path, metavar="FILE", help="also write the run's report here")
    add_selection_options(p)
    add_jobs_option(p, "convert")
    p.set_defaults(run=run_convert, failed=failed)
