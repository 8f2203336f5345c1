"""One store's conversion in progress: its report, the files it wrote, its unit records.

:mod:`asf_core.pipeline.conversion` opens the store and decides how it is converted; this module
holds what that conversion accumulates and writes at its end. Sessions come either from ``convert``
(written here, redacted first when the run redacts) or from units (written wherever a unit ran,
applied here in plan order, :mod:`asf_core.pipeline.planned`). Every file written is flushed to
disk by one :class:`~asf_core.files.Syncer`, never by syncing the whole machine.

A store the last run left as it is (:meth:`StoreRun.unchanged`) is neither opened nor
converted, so what only converting needs (the units, the plan, the records' attrs classes in
:mod:`asf_core.pipeline.fingerprints`) is imported where it is used, not with this module: a
nightly run with nothing to do is mostly start-up.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from asf_core.errors import OutputError, PluginError
from asf_core.files import Syncer
from asf_core.formats import (
    ConvertedSession,
    Finding,
    NativeSession,
    Selection,
    StoreHandle,
    Unit,
)
from asf_core.layout import FINGERPRINTS_NAME, REPORT_NAME
from asf_core.pipeline import host
from asf_core.pipeline.host import Candidate
from asf_core.pipeline.inputs import Inputs
from asf_core.pipeline.left import PRUNED, left_files, pruned
from asf_core.pipeline.report import StoreReport, read_report, write_report
from asf_core.pipeline.unchanged import IGNORED, Read, held, read_records, store_name
from asf_core.plugins import AsfPluginManager

if TYPE_CHECKING:  # loaded when a store is converted (see above)
    from asf_core.pipeline.unit_records import FileStamp, Fingerprints, UnitRecord, WholeRecord
    from asf_core.pipeline.units import Outcome, Seen, Written
    from asf_core.pipeline.workers import Workers
    from asf_core.redaction import SessionRedaction

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
    from asf_core.model import Header

    header = Header(id=written.id, created_at="")
    return ConvertedSession(
        header=header, entries=(), name=written.name, native_ids=written.native_ids
    )


def _flush_failure(dest: Path, exc: OSError) -> str:
    """What a failed flush says: the file it failed on and, for one that is gone, the likely
    why (the output moved or deleted while the run wrote it: later files went into a new
    directory of the same name), not a bare "No such file" about a directory that exists."""
    where = exc.filename or dest
    if isinstance(exc, FileNotFoundError):
        return f"cannot flush {where}: gone since it was written (output moved or deleted?)"
    return f"cannot flush {where}: {exc.strerror or exc}"


class StoreRun:
    """One store's conversion in progress: its report, what it wrote, its unit records.

    ``guard``, when a store being read lies inside the output, is checked before every file
    is written here or by a unit (:class:`~asf_core.pipeline.inputs.Inputs`).
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
        syncer: Syncer | None = None,
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
        self._seen: Seen | None = None
        self.syncer = syncer or Syncer()
        #: Unit records read from the last run (None: the store is not planned).
        self.old: dict[str, UnitRecord] | None = None
        self.new: dict[str, UnitRecord] = {}
        #: The plugin's stamp of the whole store, taken before it was opened (None: none).
        self.stamp: str | None = None
        #: ``fingerprints.json`` as :meth:`unchanged` read it, for the records' load.
        self._read: Read | None = None
        #: Whether a unit without fingerprint was converted (then the store is read again).
        self.unrecorded = False
        #: The files besides the units' that the report names, and their stamps: sessions
        #: written outside any unit, files of earlier runs left in place.
        self.outside: dict[str, FileStamp] = {}
        #: Every session file this run wrote or found unchanged, by the session's id.
        self.by_id: dict[str, str] = {}
        #: Whether the ASF files of earlier runs this one did not write are deleted.
        self.prune = False
        #: The store as its records name it.
        self._name = store_name(self.claim.path)

    @property
    def seen(self) -> Seen:
        """The session names and ids the store gave so far (kept from its first session)."""
        if self._seen is None:
            from asf_core.pipeline.units import Seen

            self._seen = Seen(self.plugin)
        return self._seen

    def take(self, items: Sequence[Written | Finding]) -> None:
        """Apply a unit's items to the report, in order."""
        from asf_core.pipeline.units import Written, apply

        for item in items:
            apply(self.report, self.seen, [item])
            if isinstance(item, Written):
                self.by_id[item.id] = item.file
                if self.on_session is not None:
                    self.on_session(self.report, _stub(item))

    def flushed(self, outcome: Outcome) -> None:
        """Have the files a unit wrote flushed to disk."""
        self.syncer.add(outcome.written)

    def write(self, session: ConvertedSession) -> None:
        """Write a session the plugin yielded outside any unit (here, in this process),
        redacted first when the run redacts."""
        from asf_core.pipeline.units import apply, write_session

        redaction = self.redaction
        if redaction is not None:
            self.report.add_redactions(STORE_REDACTIONS, redaction.redactor.take_counts())
            session = redaction.session(session)
        done = write_session(self.plugin, self.dest, session, self.guard)
        self.outside[done.file] = done.stamp
        self.by_id[done.id] = done.file
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

    def _records(self) -> Fingerprints | None:
        from asf_core.pipeline import fingerprints

        read, self._read = self._read, None  # what unchanged read, the store then changed
        records, warning = fingerprints.load(self.dest, self.claim.format, self._name, read)
        if warning is not None:
            self.report.note([warning])
        return records

    def unchanged(self, stamp: str) -> bool:
        """Take the last run's report when the plugin's stamp of the whole store is the one
        recorded then and every file written then is still as written: the store is not
        opened. The report (and ``report.json``, rewritten when that differs) then says what a
        run finding every session unchanged says, naming the output as this run does (a store
        named another way is opened). False (nothing done): convert as usual."""
        self.stamp = stamp
        fmt, store = self.claim.format, self._name
        if self.prune:  # the output is looked at whatever the store: its units carried over
            return False
        self._read = read_records(self.dest)
        kept = held(self.dest, fmt, store, stamp, self._read)
        if kept is None:
            return False
        path = self.dest / REPORT_NAME
        try:
            last = read_report(path)
        except (OSError, ValueError):
            return False
        if not last.complete or last.error:  # a run that wrote this records no stamp
            return False
        if last.path != self.report.path:  # the store named another way: what the plugin
            return False  # says of it (``store``) may name it too, so it is asked again
        # The output as this run names it (the last run may have named it another way: a
        # relative path, from another directory).
        here = self.report.output
        moved = bool(last.files_written or last.bytes_written) or last.output != here
        units: Mapping[str, UnitRecord] = {}
        whole: WholeRecord | None = None
        # Recording the rewritten report needs no structured records when they are as saved.
        quick = moved and self.on_session is None and kept.as_saved()
        if (moved and not quick) or self.on_session is not None:
            from asf_core.pipeline import fingerprints

            records, _ = fingerprints.load(self.dest, fmt, store, self._read)
            if records is None or records.whole is None:
                return False
            units, whole = records.units, records.whole
        last.files_unchanged += last.files_written
        last.files_written = last.bytes_written = 0
        for name in attrs.fields_dict(StoreReport):
            setattr(self.report, name, getattr(last, name))
        self.report.output = here
        try:
            rewritten = write_report(path, self.report, only_if_changed=True) if moved else None
            if quick and rewritten is not None:
                kept.restamp(self.dest, rewritten)
            elif whole is not None and rewritten is not None:
                from asf_core.pipeline.fingerprints import stamp_of

                self._save(units, attrs.evolve(whole, report=stamp_of(rewritten)))
        except OSError as exc:  # a read-only output: said as when the run's end cannot write
            raise OutputError(f"cannot write in {self.dest}: {exc.strerror or exc}") from exc
        if self.on_session is not None:
            from asf_core.pipeline.units import Written, replay

            for unit in units.values():
                for item in replay(unit):
                    if isinstance(item, Written):
                        self.on_session(self.report, _stub(item))
        return True

    def planned(self, units: Iterator[Unit | Finding], workers: Workers[Outcome] | None) -> None:
        """Run the plugin's units (carried over, here, or on the workers), in plan order."""
        from asf_core.pipeline.planned import Units

        records = self._records()
        self.old = dict(records.units) if records is not None else {}
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
        # The report beside the files names the store and describes it as the sessions do:
        # redacted (an account name in a path); the caller's report object keeps them. The
        # output's own folder is named as on disk: its label spells an account USER already
        # (redacting it again would name a folder that is not there, and count a "USER").
        shown: dict[str, Any] = {}
        if self.redaction is not None:
            redactor = self.redaction.redactor
            parent, sep, label = report.output.rpartition(os.sep)
            shown["path"], shown["output"] = (
                redactor.text(report.path),
                redactor.text(parent) + sep + label,
            )
            shown["store"] = redactor.value(report.store)
            report.add_redactions(STORE_REDACTIONS, redactor.take_counts())
        try:
            self.syncer.finish(self.dest)
        except OSError as exc:
            raise OutputError(_flush_failure(self.dest, exc)) from exc
        if store is not None:
            try:
                host.close_store(self.plugin, store)
            except PluginError as exc:
                report.error = report.error or str(exc)
        if report.complete and not report.error and self.selection.everything():
            self._left()
        if self.guard is not None:
            self.guard.check_write(self.dest / REPORT_NAME)
            self.guard.check_write(self.dest / FINGERPRINTS_NAME)
        try:
            written = write_report(
                self.dest / REPORT_NAME, attrs.evolve(report, **shown) if shown else report
            )
            if self.old is not None:
                kept = self.new if report.complete else {**self.old, **self.new}
                self._save(kept, self._whole(written))
        except OSError as exc:
            raise OutputError(f"cannot write in {self.dest}: {exc.strerror or exc}") from exc

    def _left(self) -> None:
        """Name in the report each session file an earlier run wrote and this one did not
        (:mod:`asf_core.pipeline.left`), deleting the ASF ones with ``prune``. A run that
        finds the store unchanged repeats the findings as long as those files are as they
        were (their stamps are recorded)."""
        from asf_core.pipeline.fingerprints import stamp_of

        for name, finding, st in left_files(self.dest, self.by_id):
            if self.prune and finding.data.get("id") is not None:
                if self.guard is not None:
                    self.guard.check_write(self.dest / name)
                finding = pruned(self.dest / name, finding, st)
            if finding.code != PRUNED:
                self.outside[name] = stamp_of(st)
            self.note([finding])

    def _whole(self, written: os.stat_result | None) -> WholeRecord | None:
        """What lets the next run skip the whole store: this run's stamp of it and of the
        report it ``written``, when the run read it whole without a problem (and not past a
        damaged record, whose warning a run that finds everything unchanged would not give
        again), every unit recorded."""
        report = self.report
        if written is None or self.stamp is None or self.unrecorded or not report.complete:
            return None
        # A run that deleted files (``prune``) says so once: the next one reads the store.
        if report.error or any(f.code in (IGNORED, PRUNED) for f in report.findings):
            return None
        from asf_core.pipeline.fingerprints import stamp_of
        from asf_core.pipeline.unit_records import WholeRecord

        report_stamp = stamp_of(written)
        return WholeRecord(stamp=self.stamp, report=report_stamp, files=dict(self.outside))

    def _save(self, units: Mapping[str, UnitRecord], whole: WholeRecord | None) -> None:
        from asf_core.pipeline import fingerprints

        fingerprints.save(self.dest, self.claim.format, self._name, units, whole)
