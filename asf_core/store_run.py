"""One store's conversion in progress: its report, the files it wrote, its unit records.

:mod:`asf_core.conversion` opens the store and decides how it is converted; this module holds
what that conversion accumulates and writes at its end. Sessions come either from ``convert``
(written here, redacted first when the run redacts) or from units (written wherever a unit ran,
applied here in plan order, :mod:`asf_core.planned`). Every file written is flushed to disk by
one :class:`~asf_core.files.Syncer`, never by syncing the whole machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from asf_core import fingerprints, host
from asf_core.errors import OutputError, PluginError
from asf_core.files import Syncer
from asf_core.fingerprints import UnitRecord
from asf_core.formats import (
    ConvertedSession,
    Finding,
    NativeSession,
    Selection,
    StoreHandle,
    Unit,
)
from asf_core.host import Candidate
from asf_core.inputs import Inputs
from asf_core.layout import REPORT_NAME
from asf_core.model import Header
from asf_core.planned import Units
from asf_core.plugins import AsfPluginManager
from asf_core.redaction import SessionRedaction
from asf_core.report import StoreReport, write_report
from asf_core.units import Outcome, Seen, Written, apply, write_session

if TYPE_CHECKING:
    from asf_core.workers import Workers

__all__ = ["STORE_REDACTIONS", "OnSession", "StoreRun", "noter"]

#: Called after each session is written, with the store's report so far and the session
#: (a session a worker wrote: its header id, name and native ids, without entries).
OnSession = Callable[[StoreReport, ConvertedSession], None]

#: The report's name for redactions made outside any session (findings of the store).
STORE_REDACTIONS = "(store)"


def noter(report: StoreReport, redaction: SessionRedaction | None) -> Callable[[Any], None]:
    """How findings go into the report: as they are, or redacted."""
    if redaction is None:
        return report.note
    return lambda findings: report.note(redaction.findings(findings))


def _stub(written: Written) -> ConvertedSession:
    """What ``on_session`` hears of a session a worker wrote (its entries stayed there)."""
    header = Header(id=written.id, created_at="")
    return ConvertedSession(
        header=header, entries=(), name=written.name, native_ids=written.native_ids
    )


class StoreRun:
    """One store's conversion in progress: its report, what it wrote, its unit records.

    ``guard``, when a store being read lies inside the output, is checked before every file
    is written here or by a unit (:class:`~asf_core.inputs.Inputs`).
    """

    def __init__(
        self,
        candidate: Candidate,
        dest: Path,
        report: StoreReport,
        on_session: OnSession | None,
        redaction: SessionRedaction | None,
        selection: Selection,
        guard: Inputs | None,
    ) -> None:
        self.plugin = candidate.plugin
        self.claim = candidate.claim
        self.dest = dest
        self.report = report
        self.on_session = on_session
        self.redaction = redaction
        self.selection = selection
        self.guard = guard
        self.note = noter(report, redaction)
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
        done = write_session(self.plugin, self.dest, session, self.guard)
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
        if self.guard is not None:
            self.guard.check_write(self.dest / REPORT_NAME)
            self.guard.check_write(self.dest / fingerprints.FILE_NAME)
        try:
            if self.old is not None:
                kept = self.new if report.complete else {**self.old, **self.new}
                fingerprints.save(self.dest, self.claim.format, str(self.claim.path), kept)
            write_report(self.dest / REPORT_NAME, report)
        except OSError as exc:
            raise OutputError(f"cannot write in {self.dest}: {exc.strerror or exc}") from exc
