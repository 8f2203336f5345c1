"""Converting stores: every session of a store through its plugin into ASF files.

One session at a time: the plugin reads a native session, converts it, the host writes it and
forgets it, so memory stays flat however large the store. A file whose bytes would not change
is left alone, so re-running after the source grew rewrites only the sessions that grew. The
``asf convert`` command and :func:`asf_core.api.convert` are both this module.

A plugin that plans (the ``plan`` hook) splits a store converted whole, unredacted, into units:
each is converted by a worker process (``-j``: every core by default) from what the host read
for it, and one whose fingerprint is the one recorded beside the output
(:mod:`asf_core.fingerprints`), with its files as written, is not converted at all
(:mod:`asf_core.planned`). Outcomes are applied in plan order, so the files and the report are
the same whatever the number of workers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from asf_core import fingerprints, host
from asf_core.errors import OutputError, PluginError
from asf_core.fingerprints import UnitRecord
from asf_core.formats import (
    ConvertedSession,
    Finding,
    NativeSession,
    Selection,
    StoreError,
    StoreHandle,
    Unit,
)
from asf_core.host import Candidate
from asf_core.layout import REPORT_NAME, store_dir
from asf_core.model import Header
from asf_core.planned import Stopped, Units
from asf_core.plugins import AsfPluginManager
from asf_core.redaction import SessionRedaction
from asf_core.report import RunReport, StoreReport, write_report
from asf_core.selecting import AMBIGUOUS_SESSION, NO_SESSION, filtered, pick
from asf_core.stores import find_stores
from asf_core.units import DAMAGED, OUTPUT, PLUGIN, Outcome, Seen, Syncer, Written, apply
from asf_core.units import write_session as _write_session

if TYPE_CHECKING:
    from asf_core.workers import Workers

__all__ = ["DAMAGED", "PLUGIN", "OnSession", "OnStore", "convert_paths", "convert_store"]

#: Called after each session is written, with the store's report so far and the session
#: (a session a worker wrote: its header id, name and native ids, without entries).
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


def _stub(written: Written) -> ConvertedSession:
    """What ``on_session`` hears of a session a worker wrote (its entries stayed there)."""
    header = Header(id=written.id, created_at="")
    return ConvertedSession(
        header=header, entries=(), name=written.name, native_ids=written.native_ids
    )


class _Store:
    """One store's conversion in progress: its report, what it wrote, its unit records."""

    def __init__(
        self,
        candidate: Candidate,
        dest: Path,
        report: StoreReport,
        on_session: OnSession | None,
        redaction: SessionRedaction | None,
        selection: Selection,
    ) -> None:
        self.plugin = candidate.plugin
        self.claim = candidate.claim
        self.dest = dest
        self.report = report
        self.on_session = on_session
        self.redaction = redaction
        self.selection = selection
        self.note = _noter(report, redaction)
        self.seen = Seen(self.plugin)
        self.syncer = Syncer()
        #: Unit records read from the last run (None: the store is not planned).
        self.old: dict[str, UnitRecord] | None = None
        self.new: dict[str, UnitRecord] = {}

    def take(self, items: Sequence[Written | Finding]) -> None:
        """Apply a unit's items to the report, in order."""
        for item in items:
            apply(self.report, self.seen, [item])
            if isinstance(item, Written) and self.on_session is not None:
                self.on_session(self.report, _stub(item))

    def flushed(self, outcome: Outcome) -> None:
        """Have the files a unit wrote flushed to disk."""
        self.syncer.add(outcome.written)

    def write(self, session: ConvertedSession) -> None:
        """Write a session the plugin yielded outside any unit (here, in this process),
        redacted first when the run redacts."""
        redaction = self.redaction
        if redaction is not None:
            self.report.add_redactions(STORE_REDACTIONS, redaction.redactor.take_counts())
            session = redaction.session(session)
        done = _write_session(self.plugin, self.dest, session)
        if done.size is not None:
            self.syncer.add([self.dest / done.file])
        apply(self.report, self.seen, [done])
        if redaction is not None:
            self.report.add_redactions(session.name, redaction.redactor.take_counts())
        if self.on_session is not None:
            self.on_session(self.report, session)

    def whole(
        self, pm: AsfPluginManager, store: StoreHandle, sessions: Iterator[NativeSession]
    ) -> None:
        """A store that is not planned: ``convert``, every session written here."""
        selection = self.selection
        for item in host.convert(pm, self.plugin, store, sessions, selection):
            if isinstance(item, Finding):
                self.note([item])
            else:
                self.write(item)

    def planned(self, units: Iterator[Unit | Finding], workers: Workers | None) -> None:
        """Run the plugin's units (carried over, here, or on the workers), in plan order."""
        self.old, warning = fingerprints.load(self.dest, self.claim.format, str(self.claim.path))
        if warning is not None:
            self.report.note([warning])
        Units(self, workers).run(units)

    def finish(self, pm: AsfPluginManager, store: StoreHandle) -> None:
        for item in host.finish(pm, self.plugin, store, dict(self.report.counts)):
            if isinstance(item, Finding):
                self.report.note([item])
            else:
                self.write(item)

    def close(self, store: StoreHandle | None) -> None:
        """Make the files durable, close the store, write the records and the report."""
        report = self.report
        if self.redaction is not None:
            report.add_redactions(STORE_REDACTIONS, self.redaction.redactor.take_counts())
        try:
            self.syncer.finish(self.dest)
        except OSError as exc:
            raise OutputError(f"cannot flush {self.dest}: {exc.strerror or exc}") from exc
        if store is not None:
            try:
                host.close_store(self.plugin, store)
            except PluginError as exc:
                report.error = report.error or str(exc)
        try:
            if self.old is not None:
                kept = self.new if report.complete else {**self.old, **self.new}
                fingerprints.save(self.dest, self.claim.format, str(self.claim.path), kept)
            write_report(self.dest / REPORT_NAME, report)
        except OSError as exc:
            raise OutputError(f"cannot write in {self.dest}: {exc.strerror or exc}") from exc


def convert_store(
    pm: AsfPluginManager,
    candidate: Candidate,
    out_dir: Path,
    *,
    on_session: OnSession | None = None,
    selection: Selection | None = None,
    redaction: SessionRedaction | None = None,
    workers: Workers | None = None,
) -> tuple[StoreReport, str | None]:
    """Convert one store into ``out_dir/<format>/<store label>/`` and write its report.

    ``selection`` (default: every session) is what the plugin reads and converts;
    ``redaction`` replaces secrets in every session and finding before they are written.
    A whole store converted without redaction is planned when its plugin plans: ``workers``
    run its units (None: all in this process). Returns the report and why the store stopped
    early, if it did: :data:`DAMAGED` (the plugin raised :class:`StoreError`) or
    :data:`PLUGIN`. Either ends this store (its report says where) but not the run. Ctrl-C
    and an unwritable output (:class:`OutputError`) go up after the report of the store in
    progress is written.
    """
    claim = candidate.claim
    dest = store_dir(out_dir, claim.format, claim.path)
    report = StoreReport(
        format=claim.format,
        plugin=candidate.plugin,
        path=str(claim.path),
        output=str(dest),
        redacted=redaction is not None,
    )
    wanted = selection or Selection()
    run = _Store(candidate, dest, report, on_session, redaction, wanted)
    store: StoreHandle | None = None
    failure: str | None = None
    try:
        store = host.open_store(pm, candidate)
        report.store = host.store_info(candidate.plugin, store)
        sessions = _native(pm, candidate.plugin, store, report, wanted, redaction)
        units = None
        if redaction is None and wanted.everything():
            units = host.plan(pm, candidate.plugin, store, sessions)
        if units is None:
            run.whole(pm, store, sessions)
        else:
            run.planned(units, workers)
            run.finish(pm, store)
        report.complete = True
    except StoreError as exc:
        report.error = host.store_problem(exc)
        failure = DAMAGED
    except PluginError as exc:
        report.error = str(exc)
        failure = PLUGIN
    except Stopped as exc:
        report.error = str(exc)
        if exc.failure == OUTPUT:
            with contextlib.suppress(OutputError):
                run.close(store)
            raise OutputError(str(exc)) from None
        failure = exc.failure
    except BaseException as exc:  # Ctrl-C or an unwritable output: keep what we know, go on up
        report.error = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
        with contextlib.suppress(OutputError):  # the error on its way up says more
            run.close(store)
        raise
    run.close(store)
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
    processes: int = 1,
) -> tuple[RunReport, list[Finding]]:
    """Convert every store found under ``paths`` (none: the default locations), or the
    sessions ``selection`` picks among them (each with what it needs: its conversation).
    ``on_store`` hears of each store as it starts, with its number of sessions when
    ``count`` (or a selection) had them listed first; ``on_session`` of each session written.
    ``processes`` is the number of worker processes planned units convert on (1: all in
    this process).

    Returns the run's report and the problems met outside any store's conversion (paths no
    plugin claims, ties, plugin failures in ``discover``); a store that stopped early is in
    both. Ctrl-C ends the run after the store in progress has its report: the returned report
    says ``interrupted`` and the caller decides what to do next.
    """
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{out_dir}: exists and is not a directory")
    found = find_stores(pm, paths, format)
    problems = list(found.problems)
    run = RunReport(output=str(out_dir))
    stores: list[tuple[Candidate, Selection, int | None]] = [
        (c, Selection(), None) for c in found.stores
    ]
    narrowed = selection is not None and not selection.everything()
    if narrowed or count:
        picked, trouble = pick(pm, found.stores, selection or Selection(), unique=True)
        if narrowed:
            problems += trouble
            if any(p.code in (NO_SESSION, AMBIGUOUS_SESSION) for p in trouble):
                picked = []  # a --session that names nothing (or too much): convert nothing
            stores = [(p.candidate, p.selection, len(p.sessions)) for p in picked]
        else:  # counted for progress only; a store that could not be listed says so later
            totals = {id(p.candidate): len(p.sessions) for p in picked}
            stores = [(c, Selection(), totals.get(id(c), 0)) for c in found.stores]
    workers = None
    if processes > 1:
        from asf_core.workers import Workers

        workers = Workers(processes)
    try:
        for candidate, wanted, total in stores:
            if on_store is not None:
                on_store(candidate, total)
            report, failure = convert_store(
                pm,
                candidate,
                out_dir,
                on_session=on_session,
                selection=wanted,
                redaction=redaction,
                workers=workers,
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
    finally:
        if workers is not None:
            if run.interrupted:
                workers.stop()
            else:
                workers.close()
    run.errors = [p.message for p in problems]
    return run, problems
