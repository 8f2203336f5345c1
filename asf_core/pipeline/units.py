"""Running one unit of a store's conversion, wherever it runs, and what it leaves behind.

:func:`run_job` is what a worker process (or the host itself, with one worker) does with a
plugin's :data:`~asf_core.formats.Job`: pull its sessions and findings, write each session's
file (atomically, untouched when its bytes are the same), flush the files written, and return
an :class:`Outcome`: small, picklable, everything the report and ``fingerprints.json`` need
and nothing of the entries. The host applies outcomes to the store's report in plan order.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from attrs import frozen

from asf_core.errors import OutputError, PluginError, cannot_write
from asf_core.files import write_if_changed_stat
from asf_core.formats import (
    ConvertedSession,
    Finding,
    Job,
    NeedsHost,
    StoreChanged,
    StoreError,
)
from asf_core.layout import session_file_name, session_path
from asf_core.pipeline import host
from asf_core.pipeline.fingerprints import stamp_of
from asf_core.pipeline.inputs import Inputs
from asf_core.pipeline.report import StoreReport
from asf_core.pipeline.stops import CHANGED, DAMAGED, HOST, OUTPUT, PLUGIN
from asf_core.pipeline.unit_records import FileStamp, SessionRecord, UnitItem, UnitRecord

if TYPE_CHECKING:
    from asf_core.pipeline.workers import Workers

__all__ = [
    "CHANGED",
    "DAMAGED",
    "HOST",
    "OUTPUT",
    "PLUGIN",
    "Outcome",
    "Seen",
    "Written",
    "apply",
    "record_of",
    "replay",
    "run_job",
    "unit_workers",
    "write_session",
]


@frozen(kw_only=True)
class Written:
    """One session written (or left as it was, ``size`` None): what the report counts."""

    name: str
    file: str
    id: str
    entries: int
    size: int | None
    stamp: FileStamp
    counts: dict[str, int]
    findings: tuple[Finding, ...]
    #: The plugin's native sessions it holds (what progress counts).
    native_ids: tuple[str, ...] = ()


@frozen(kw_only=True)
class Outcome:
    """What running a unit gave, in order; ``error`` and ``failure`` when it stopped early."""

    items: tuple[Written | Finding, ...] = ()
    error: str | None = None
    failure: str | None = None
    #: The files written (not those left as they were), to be flushed to disk.
    written: tuple[Path, ...] = ()


#: How many entries :class:`_Lines` pulls from the plugin at a time (the writer writes as
#: many lines at once).
_BATCH = 256


class _Lines:
    """A session's lines as the writer pulls them: the plugin's entries are pulled under
    :func:`host.blame` (its failures name it; a ``StoreError`` goes up as the input's), a
    batch at a time (entering the guard once per batch, not once per line), and counted.
    A failure part way loses nothing: the file is written whole or not at all."""

    def __init__(self, plugin: str, session: ConvertedSession) -> None:
        self.plugin = plugin
        self.session = session
        self.count = 0

    def __iter__(self) -> Iterator[bytes]:
        from asf_core.writer import entry_line, header_line  # loaded before workers fork

        hook = f"convert (session {self.session.name})"
        with host.blame(self.plugin, hook):
            header = header_line(self.session.header)
            entries = iter(self.session.entries)
        yield header
        while True:
            with host.blame(self.plugin, hook):  # an entry without id, a value JSON cannot hold
                batch = [entry_line(entry) for entry in itertools.islice(entries, _BATCH)]
            if not batch:
                return
            self.count += len(batch)
            yield from batch


def write_session(
    plugin: str, dest: Path, session: ConvertedSession, guard: Inputs | None = None
) -> Written:
    """Write one session's file under ``dest`` unless it already holds these bytes; never
    over one of the inputs ``guard`` holds (:class:`OutputError`)."""
    if session_file_name(session.name) is None:
        raise PluginError(plugin, "convert", f"session name {session.name!r} is not a file name")
    relative = session_path(session.header)
    path = dest / relative
    if guard is not None:
        guard.check_write(path)
    lines = _Lines(plugin, session)
    try:  # stamped as written: not what another run may have renamed into place since
        size, status = write_if_changed_stat(path, lines)
    except OSError as exc:
        raise OutputError(cannot_write(path, exc)) from exc
    return Written(
        name=session.name,
        file=relative.as_posix(),
        id=session.header.id,
        entries=lines.count,
        size=size,
        stamp=stamp_of(status),
        counts={k: int(v) for k, v in session.counts.items()},
        findings=tuple(session.findings),
        native_ids=tuple(session.native_ids),
    )


def _pull(plugin: str, key: str, job: Job) -> Iterator[ConvertedSession | Finding]:
    hook = f"convert (unit {key})"
    with host.blame(plugin, hook):
        items: Iterable[ConvertedSession | Finding] = job()
    yield from host.checked_items(plugin, hook, items, (ConvertedSession, Finding))


def run_job(plugin: str, key: str, job: Job, dest: Path, guard: Inputs | None = None) -> Outcome:
    """Convert one unit and write its files (checked against ``guard``, as
    :func:`write_session` does); never raises for the plugin's or the output's failures (the
    outcome says what stopped it), so it can report back from a worker. The files are renamed
    into place unflushed: the host flushes them (:class:`~asf_core.files.Syncer`)."""
    items: list[Written | Finding] = []
    written: list[Path] = []

    def stopped(error: str, failure: str) -> Outcome:
        return Outcome(items=tuple(items), error=error, failure=failure, written=tuple(written))

    try:
        for item in _pull(plugin, key, job):
            if isinstance(item, ConvertedSession):
                done = write_session(plugin, dest, item, guard)
                items.append(done)
                if done.size is not None:
                    written.append(dest / done.file)
            else:
                items.append(item)
    except StoreChanged as exc:
        return stopped(str(exc), CHANGED)
    except StoreError as exc:
        return stopped(host.store_problem(exc), DAMAGED)
    except PluginError as exc:
        return stopped(str(exc), PLUGIN)
    except (OutputError, OSError) as exc:
        return stopped(str(exc), OUTPUT)
    except NeedsHost as exc:
        return stopped(str(exc), HOST)
    return Outcome(items=tuple(items), written=tuple(written))


def unit_workers(count: int) -> Workers[Outcome]:
    """Workers for units' jobs (:func:`run_job`); a job whose worker died fails as a plugin
    failure. The writer every job writes with, and the converter it uses, are loaded and
    built once, before the workers are forked, not once per worker."""
    from asf_core.pipeline.workers import Workers

    def preload() -> None:
        import importlib

        from asf_core.codec import converter

        importlib.import_module("asf_core.writer")
        converter()

    return Workers(
        count, died=Outcome(error="a worker process died", failure=PLUGIN), preload=preload
    )


class Seen:
    """The session names and ids a store's units gave so far: each must be unique."""

    def __init__(self, plugin: str) -> None:
        self.plugin = plugin
        self.names: set[str] = set()
        self.ids: set[str] = set()

    def check(self, name: str, ident: str) -> None:
        file_name = session_file_name(name) or name
        if file_name in self.names:
            raise PluginError(self.plugin, "convert", f"two sessions are named {file_name!r}")
        if ident in self.ids:
            raise PluginError(self.plugin, "convert", f"two sessions have the id {ident!r}")
        self.names.add(file_name)
        self.ids.add(ident)


def apply(report: StoreReport, seen: Seen, items: Iterable[Written | Finding]) -> int:
    """Count a unit's sessions and findings into the store's report; return the sessions."""
    sessions = 0
    for item in items:
        if isinstance(item, Finding):
            report.note([item])
            continue
        seen.check(item.name, item.id)
        report.files[item.name] = item.file
        report.sessions_written += 1
        report.entries_written += item.entries
        if item.size is None:
            report.files_unchanged += 1
        else:
            report.files_written += 1
            report.bytes_written += item.size
        report.add_counts(item.counts)
        report.note(item.findings)
        sessions += 1
    return sessions


def record_of(fingerprint: str, outcome: Outcome) -> UnitRecord:
    """What to keep of a unit converted whole, to carry it over next time."""
    items = tuple(
        UnitItem(finding=item)
        if isinstance(item, Finding)
        else UnitItem(
            session=SessionRecord(
                name=item.name,
                file=item.file,
                id=item.id,
                entries=item.entries,
                stamp=item.stamp,
                counts=item.counts,
                findings=item.findings,
                native_ids=item.native_ids,
            )
        )
        for item in outcome.items
    )
    return UnitRecord(fingerprint=fingerprint, items=items)


def replay(record: UnitRecord) -> tuple[Written | Finding, ...]:
    """A carried-over unit's items, as if converted again and found unchanged."""
    out: list[Written | Finding] = []
    for item in record.items:
        if item.finding is not None:
            out.append(item.finding)
        elif item.session is not None:
            s = item.session
            out.append(
                Written(
                    name=s.name,
                    file=s.file,
                    id=s.id,
                    entries=s.entries,
                    size=None,
                    stamp=s.stamp,
                    counts=dict(s.counts),
                    findings=s.findings,
                    native_ids=s.native_ids,
                )
            )
    return tuple(out)
