"""``asf convert``: stream every store's sessions through its plugin into ASF files.

One session at a time: the plugin reads a native session, converts it, the host writes it and
forgets it, so memory stays flat however large the store. A file whose bytes would not change
is left alone, so re-running after the source grew rewrites only the sessions that grew.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from asf_core import plugins
from asf_core.cli.output import ExitCode, Fail, out, out_json, worst
from asf_core.cli.progress import Progress, progress_for
from asf_core.formats import ConvertedSession, Finding, NativeSession, StoreError, StoreHandle
from asf_core.model import Entry, Header
from asf_core.plugins import AsfPluginManager, Candidate, PluginError
from asf_core.report import RunReport, StoreReport, store_json, write_json_atomic
from asf_core.stores import (
    Troubles,
    find_stores,
    session_file_name,
    session_path,
    slug,
    store_label,
)
from asf_core.writer import session_lines, write_atomic

__all__ = ["DEFAULT_OUT", "REPORT_NAME", "convert_store", "run_convert", "write_if_changed"]

DEFAULT_OUT = Path("asf-out")
REPORT_NAME = "report.json"


def _file_digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.digest()


def write_if_changed(path: Path, header: Header, entries: Sequence[Entry]) -> int | None:
    """Write the session unless ``path`` already holds exactly these bytes.

    Returns the bytes written, or None when the file was left as it was. The size is compared
    first, so only a same-size file is hashed.
    """
    data = b"".join(session_lines(header, entries))
    if (
        path.is_file()
        and path.stat().st_size == len(data)
        and _file_digest(path) == hashlib.sha256(data).digest()
    ):
        return None
    # Not flushed file by file: the store's files are synced together once it is done.
    return write_atomic(path, [data], durable=False)


def _native(
    pm: AsfPluginManager, plugin: str, store: StoreHandle, report: StoreReport
) -> Iterator[NativeSession]:
    """The store's native sessions for ``convert``; findings go to the report on the way."""
    for item in plugins.read(pm, plugin, store):
        if isinstance(item, NativeSession):
            report.sessions_read += 1
            report.note(item.findings)
            yield item
        else:
            report.note([item])


def _write(
    plugin: str, dest: Path, session: ConvertedSession, names: set[str], report: StoreReport
) -> None:
    name = session_file_name(session.name)
    if name is None:
        raise PluginError(plugin, "convert", f"session name {session.name!r} is not a file name")
    if name in names:
        raise PluginError(plugin, "convert", f"two sessions are named {name!r}")
    names.add(name)
    relative = session_path(session.header)
    if relative.as_posix() in report.files.values():
        raise PluginError(plugin, "convert", f"two sessions have the id {session.header.id!r}")
    report.files[session.name] = relative.as_posix()
    path = dest / relative
    entries = list(session.entries)
    try:
        size = write_if_changed(path, session.header, entries)
    except OSError as exc:
        raise Fail(f"cannot write {path}: {exc.strerror or exc}") from exc
    except (ValueError, TypeError) as exc:  # an entry without id, a value JSON cannot hold
        raise PluginError.from_exception(plugin, f"convert (session {name})", exc) from exc
    report.sessions_written += 1
    report.entries_written += len(entries)
    if size is None:
        report.files_unchanged += 1
    else:
        report.files_written += 1
        report.bytes_written += size
    report.add_counts(session.counts)
    report.note(session.findings)


def _finish(
    plugin: str,
    store: StoreHandle | None,
    dest: Path,
    report: StoreReport,
    progress: Progress,
    *,
    quiet: bool,
) -> None:
    """Close the store and write its report; ``quiet`` while another error is on its way up."""
    progress.clear()
    os.sync()  # the session files were renamed into place unflushed; make them durable
    if store is not None:
        try:
            plugins.close_store(plugin, store)
        except PluginError as exc:
            report.error = report.error or str(exc)
    try:
        write_json_atomic(dest / REPORT_NAME, store_json(report))
    except OSError as exc:
        if not quiet:
            raise Fail(f"cannot write {dest / REPORT_NAME}: {exc.strerror or exc}") from exc


def convert_store(
    pm: AsfPluginManager, candidate: Candidate, out_dir: Path, progress: Progress
) -> tuple[StoreReport, ExitCode]:
    """Convert one store into ``out_dir/<format>/<store label>/`` and write its report.

    Returns the report and what the store adds to the exit code: a damaged store (the plugin
    raised :class:`StoreError`) is ``USAGE``, a plugin failure ``PLUGIN``. Either ends this
    store (its report says where) but not the run; Ctrl-C ends the run after the report of the
    store in progress is written.
    """
    claim = candidate.claim
    dest = out_dir / slug(claim.format) / store_label(claim.path)
    report = StoreReport(
        format=claim.format, plugin=candidate.plugin, path=str(claim.path), output=str(dest)
    )
    store: StoreHandle | None = None
    code = ExitCode.OK
    try:
        store = plugins.open_store(pm, candidate)
        report.store = plugins.store_info(candidate.plugin, store)
        names: set[str] = set()
        sessions = _native(pm, candidate.plugin, store, report)
        for item in plugins.convert(pm, candidate.plugin, store, sessions):
            if isinstance(item, Finding):
                report.note([item])
                continue
            _write(candidate.plugin, dest, item, names, report)
            progress.show(
                f"{claim.format} {claim.path.name}: {report.sessions_written} sessions, "
                f"{report.files_written} written"
            )
        report.complete = True
    except StoreError as exc:
        report.error = plugins.store_problem(exc)
        code = ExitCode.USAGE
    except PluginError as exc:
        report.error = str(exc)
        code = ExitCode.PLUGIN
    except BaseException as exc:  # Ctrl-C or an unwritable output: keep what we know, go on up
        report.error = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
        _finish(candidate.plugin, store, dest, report, progress, quiet=True)
        raise
    _finish(candidate.plugin, store, dest, report, progress, quiet=False)
    if report.error and code is ExitCode.OK:  # the store's close raised
        code = ExitCode.PLUGIN
    return report, code


def _summary(run: RunReport) -> str:
    t = run.totals()
    stores = len(run.stores)
    text = (
        f"Converted {stores} store{'s' if stores != 1 else ''} into {run.output}: "
        f"{t['sessions_read']} native sessions read, {t['sessions_written']} ASF sessions "
        f"({t['files_written']} written, {t['files_unchanged']} unchanged), "
        f"{t['entries_written']} entries; {t['strays']} strays, {t['dropped']} dropped"
    )
    failed = sum(1 for s in run.stores if s.error)
    if failed:
        text += f"; {failed} store{'s' if failed != 1 else ''} stopped early"
    return text + f". Details: {REPORT_NAME} beside each store's files."


def run_convert(args: argparse.Namespace, pm: AsfPluginManager) -> ExitCode:
    """The ``asf convert`` command."""
    troubles = Troubles()
    out_dir: Path = args.output
    if out_dir.exists() and not out_dir.is_dir():
        raise Fail(f"{out_dir}: exists and is not a directory")
    run = RunReport(output=str(out_dir))
    progress = progress_for(quiet=args.quiet or args.json)
    try:
        for candidate in find_stores(pm, args.paths, args.format, troubles):
            report, code = convert_store(pm, candidate, out_dir, progress)
            run.stores.append(report)
            if report.error:
                troubles.add(f"{candidate.claim.path}: {report.error}", code)
    except KeyboardInterrupt:
        run.interrupted = True
        troubles.code = worst(troubles.code, ExitCode.INTERRUPTED)
    run.errors = troubles.lines
    if args.report is not None:
        try:
            write_json_atomic(args.report, run.to_json())
        except OSError as exc:
            troubles.add(f"cannot write {args.report}: {exc.strerror or exc}", ExitCode.USAGE)
    if run.interrupted:
        raise KeyboardInterrupt
    if args.json:
        out_json(run.to_json())
    elif not args.quiet and run.stores:
        out(_summary(run))
    return troubles.code


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "convert",
        help="convert session stores into ASF files",
        description="Find each PATH's format, convert every session into one ASF file under "
        "DIR/<format>/<store label>/ and write report.json beside them. With no PATH, every "
        "plugin's default locations.",
    )
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="a store or a directory")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"where to write (default: ./{DEFAULT_OUT})",
    )
    p.add_argument("--format", metavar="NAME", help="use this format plugin; resolves ties")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress and no summary")
    p.add_argument("--report", type=Path, metavar="FILE", help="also write the run's report here")
    p.set_defaults(run=run_convert)
