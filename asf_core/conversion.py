"""Converting stores: every session of a store through its plugin into ASF files.

One session at a time: the plugin reads a native session, converts it, the host writes it and
forgets it, so memory stays flat however large the store. A file whose bytes would not change
is left alone, so re-running after the source grew rewrites only the sessions that grew. The
``asf convert`` command and :func:`asf_core.api.convert` are both this module.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from asf_core import host
from asf_core.errors import OutputError, PluginError
from asf_core.formats import (
    ConvertedSession,
    Finding,
    NativeSession,
    Selection,
    StoreError,
    StoreHandle,
)
from asf_core.host import Candidate
from asf_core.inputs import Inputs
from asf_core.layout import REPORT_NAME, session_path, store_dir
from asf_core.plugins import AsfPluginManager
from asf_core.redaction import SessionRedaction
from asf_core.report import RunReport, StoreReport, write_report
from asf_core.selecting import AMBIGUOUS_SESSION, NO_SESSION, filtered, pick
from asf_core.stores import find_stores
from asf_core.writer import entry_line, header_line, writable, write_if_changed

__all__ = ["DAMAGED", "OUTPUT", "PLUGIN", "OnSession", "OnStore", "convert_paths", "convert_store"]

#: Why a store stopped early: the plugin said its input is damaged ...
DAMAGED = "damaged"
#: ... or the plugin failed.
PLUGIN = "plugin"
#: A problem code: the run's own report could not be written.
OUTPUT = "output"

#: Called after each session is written, with the store's report so far and the session.
OnSession = Callable[[StoreReport, ConvertedSession], None]
#: Called as each store starts, with how many native sessions it will convert (None: not
#: counted; counting lists the store first).
OnStore = Callable[[Candidate, int | None], None]


#: The report's name for redactions made outside any session (findings of the store).
STORE_REDACTIONS = "(store)"


def _noter(report: StoreReport, redaction: SessionRedaction | None) -> Callable[[Any], None]:
    """How findings go into the report: as they are, or redacted."""
    if redaction is None:
        return report.note
    return lambda findings: report.note(redaction.findings(findings))


def _native(
    pm: AsfPluginManager,
    plugin: str,
    store: StoreHandle,
    report: StoreReport,
    selection: Selection,
    redaction: SessionRedaction | None,
) -> Iterator[NativeSession]:
    """The store's (selected) native sessions for ``convert``; findings go to the report on
    the way."""
    note = _noter(report, redaction)
    for item in filtered(host.read(pm, plugin, store, selection), selection):
        if isinstance(item, NativeSession):
            report.sessions_read += 1
            note(item.findings)
            yield item
        else:
            note([item])


class _Lines:
    """A session's lines as the writer pulls them: the plugin's entries are pulled one at a
    time under :func:`host.blame` (its failures name it; a ``StoreError`` goes up as the
    input's), and counted."""

    def __init__(self, plugin: str, session: ConvertedSession) -> None:
        self.plugin = plugin
        self.session = session
        self.count = 0

    def __iter__(self) -> Iterator[bytes]:
        hook = f"convert (session {self.session.name})"
        with host.blame(self.plugin, hook):
            header = header_line(self.session.header)
            entries = iter(self.session.entries)
        yield header
        while True:
            with host.blame(self.plugin, hook):  # an entry without id, a value JSON cannot hold
                entry = next(entries, None)
                if entry is None:
                    return
                line = entry_line(entry)
            self.count += 1
            yield line


def _write(
    plugin: str, dest: Path, session: ConvertedSession, report: StoreReport, guard: Inputs | None
) -> None:
    relative = session_path(session.header)
    report.files[session.name] = relative.as_posix()
    path = dest / relative
    if guard is not None:
        guard.check_write(path)
    lines = _Lines(plugin, session)
    try:
        size = write_if_changed(path, lines)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    report.sessions_written += 1
    report.entries_written += lines.count
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
    redaction: SessionRedaction | None = None,
    guard: Inputs | None = None,
) -> None:
    """Make the files durable, close the store and write its report."""
    if redaction is not None:
        report.add_redactions(STORE_REDACTIONS, redaction.redactor.take_counts())
    os.sync()  # the session files were renamed into place unflushed; make them durable
    if store is not None:
        try:
            host.close_store(plugin, store)
        except PluginError as exc:
            report.error = report.error or str(exc)
    if guard is not None:
        guard.check_write(dest / REPORT_NAME)
    try:
        write_report(dest / REPORT_NAME, report)
    except OSError as exc:
        raise OutputError(f"cannot write {dest / REPORT_NAME}: {exc.strerror or exc}") from exc


def convert_store(
    pm: AsfPluginManager,
    candidate: Candidate,
    out_dir: Path,
    *,
    on_session: OnSession | None = None,
    selection: Selection | None = None,
    redaction: SessionRedaction | None = None,
    inputs: Inputs | None = None,
) -> tuple[StoreReport, str | None]:
    """Convert one store into ``out_dir/<format>/<store label>/`` and write its report.

    ``selection`` (default: every session) is what the plugin reads and converts;
    ``redaction`` replaces secrets in every session and finding before they are written.
    Returns the report and why the store stopped early, if it did: :data:`DAMAGED` (the
    plugin raised :class:`StoreError`) or :data:`PLUGIN`. Either ends this store (its report
    says where) but not the run. Ctrl-C and an unwritable output (:class:`OutputError`) go up
    after the report of the store in progress is written. No file is written over one of
    ``inputs`` (default: this store): that is an :class:`OutputError`.
    """
    claim = candidate.claim
    dest = store_dir(out_dir, claim.format, claim.path)
    inputs = inputs if inputs is not None else Inputs.of([claim.path])
    guard = inputs if inputs.near(dest) else None
    report = StoreReport(
        format=claim.format,
        plugin=candidate.plugin,
        path=str(claim.path),
        output=str(dest),
        redacted=redaction is not None,
    )
    note = _noter(report, redaction)
    store: StoreHandle | None = None
    failure: str | None = None
    wanted = selection or Selection()
    try:
        store = host.open_store(pm, candidate)
        report.store = host.store_info(candidate.plugin, store)
        sessions = _native(pm, candidate.plugin, store, report, wanted, redaction)
        for item in host.convert(pm, candidate.plugin, store, sessions, wanted):
            if isinstance(item, Finding):
                note([item])
                continue
            if redaction is not None:
                report.add_redactions(STORE_REDACTIONS, redaction.redactor.take_counts())
                item = redaction.session(item)
            _write(candidate.plugin, dest, item, report, guard)
            if redaction is not None:
                report.add_redactions(item.name, redaction.redactor.take_counts())
            if on_session is not None:
                on_session(report, item)
        report.complete = True
    except StoreError as exc:
        report.error = host.store_problem(exc)
        failure = DAMAGED
    except PluginError as exc:
        report.error = str(exc)
        failure = PLUGIN
    except BaseException as exc:  # Ctrl-C or an unwritable output: keep what we know, go on up
        report.error = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
        with contextlib.suppress(OutputError):  # the error on its way up says more
            _finish(candidate.plugin, store, dest, report, redaction, guard)
        raise
    _finish(candidate.plugin, store, dest, report, redaction, guard)
    if report.error and failure is None:  # the store's close raised
        failure = PLUGIN
    return report, failure


def convert_paths(
    pm: AsfPluginManager,
    paths: Sequence[Path],
    out_dir: Path,
    *,
    format: str | None = None,
    on_session: OnSession | None = None,
    on_store: OnStore | None = None,
    count: bool = False,
    selection: Selection | None = None,
    redaction: SessionRedaction | None = None,
    report_file: Path | None = None,
) -> tuple[RunReport, list[Finding]]:
    """Convert every store found under ``paths`` (none: the default locations), or the
    sessions ``selection`` picks among them (each with what it needs: its conversation).
    ``on_store`` hears of each store as it starts, with its number of sessions when
    ``count`` (or a selection) had them listed first; ``on_session`` of each session written.

    Returns the run's report and the problems met outside any store's conversion (paths no
    plugin claims, ties, plugin failures in ``discover``); a store that stopped early is in
    both. Ctrl-C ends the run after the store in progress has its report: the returned report
    says ``interrupted`` and the caller decides what to do next.

    ``report_file`` also gets the run's report (through a link, to the file it names). An
    output directory inside a store being converted, or a ``report_file`` that is one of the
    stores or ``paths`` or is not a regular file, raises :class:`OutputError` before anything
    is written.
    """
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{out_dir}: exists and is not a directory")
    found = find_stores(pm, paths, format)
    inputs = Inputs.of([c.claim.path for c in found.stores], paths)
    inputs.check_output_dir(out_dir)
    target = _report_target(report_file, inputs) if report_file is not None else None
    problems = list(found.problems)
    run = RunReport(output=str(out_dir))
    jobs: list[tuple[Candidate, Selection, int | None]] = [
        (c, Selection(), None) for c in found.stores
    ]
    narrowed = selection is not None and not selection.everything()
    if narrowed or count:
        picked, trouble = pick(pm, found.stores, selection or Selection(), unique=True)
        if narrowed:
            problems += trouble
            if any(p.code in (NO_SESSION, AMBIGUOUS_SESSION) for p in trouble):
                picked = []  # a --session that names nothing (or too much): convert nothing
            jobs = [(p.candidate, p.selection, len(p.sessions)) for p in picked]
        else:  # counted for progress only; a store that could not be listed says so later
            totals = {id(p.candidate): len(p.sessions) for p in picked}
            jobs = [(c, Selection(), totals.get(id(c), 0)) for c in found.stores]
    try:
        for candidate, wanted, total in jobs:
            if on_store is not None:
                on_store(candidate, total)
            report, failure = convert_store(
                pm,
                candidate,
                out_dir,
                on_session=on_session,
                selection=wanted,
                redaction=redaction,
                inputs=inputs,
            )
            run.stores.append(report)
            if report.error:
                problems.append(
                    Finding(
                        kind="error",
                        code=failure or PLUGIN,
                        message=f"{candidate.claim.path}: {report.error}",
                    )
                )
    except KeyboardInterrupt:
        run.interrupted = True
    run.errors = [p.message for p in problems]
    if target is not None:
        try:
            write_report(target, run)
        except OSError as exc:
            why = f"cannot write {report_file}: {exc.strerror or exc}"
            problems.append(Finding(kind="error", code=OUTPUT, message=why))
    return run, problems


def _report_target(report: Path, inputs: Inputs) -> Path:
    """Where ``--report`` is written: the file it names (links followed), checked."""
    inputs.check_write(report, named=True)
    try:
        target = report.resolve()
        writable(target)
    except (OSError, RuntimeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise OutputError(f"{report}: {why}") from exc
    return target
