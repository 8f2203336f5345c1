"""Converting stores: every session of a store through its plugin into ASF files.

One session at a time: the plugin reads a native session, converts it, the host writes it and
forgets it, so memory stays flat however large the store. A file whose bytes would not change
is left alone, so re-running after the source grew rewrites only the sessions that grew. The
``asf convert`` command and :func:`asf_core.api.convert` are both this module.

A plugin that plans (the ``plan`` hook) splits a store converted whole, unredacted, into units:
each is converted by a worker process (``-j``: every core by default) from what the host read
for it, and one whose fingerprint is the one recorded beside the output
(:mod:`asf_core.pipeline.fingerprints`), with its files as written, is not converted at all
(:mod:`asf_core.pipeline.planned`). Outcomes are applied in plan order, so the files and the
report are the same whatever the number of workers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from asf_core.errors import OutputError, PluginError, unmade
from asf_core.files import Syncer, can_write, folder_trouble, remove_empty
from asf_core.flush_process import Flushing
from asf_core.formats import (
    Finding,
    NativeSession,
    Selection,
    StoreChanged,
    StoreError,
    StoreHandle,
)
from asf_core.layout import store_dir
from asf_core.pipeline import host
from asf_core.pipeline.access import keep_within
from asf_core.pipeline.host import Candidate
from asf_core.pipeline.inputs import Inputs
from asf_core.pipeline.lock import store_lock
from asf_core.pipeline.report import RunReport, StoreReport, write_report
from asf_core.pipeline.stops import CHANGED, DAMAGED, OUTPUT, PLUGIN, Stopped
from asf_core.pipeline.store_run import OnSession, StoreRun, noter
from asf_core.pipeline.stores import find_stores
from asf_core.pipeline.unchanged import holds, named_as, store_name
from asf_core.plugins import AsfPluginManager
from asf_core.selecting import filtered

if TYPE_CHECKING:  # what converting needs loads when a store is converted (see StoreRun)
    from asf_core.pipeline.units import Outcome
    from asf_core.pipeline.workers import Workers
    from asf_core.redaction import SessionRedaction

__all__ = [
    "DAMAGED",
    "OUTPUT",
    "PLUGIN",
    "OnSession",
    "OnStore",
    "OnWait",
    "UnitWorkers",
    "convert_paths",
    "convert_store",
]

#: How many times a store that changes while it is read is converted, at most.
_TRIES = 3

#: Called as each store starts, with how many native sessions it will convert (None: not
#: counted; counting lists the store first).
OnStore = Callable[[Candidate, int | None], None]
#: Called when a store's output directory is locked by another run, before waiting for it.
OnWait = Callable[[Path], None]


class UnitWorkers:
    """A run's worker processes for planned units (none when ``processes`` is 1), made for
    the first store converted: a run that finds every store as the last one left it loads
    none of what they (and converting) need."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self.made: Workers[Outcome] | None = None

    def get(self) -> Workers[Outcome] | None:
        if self.made is None and self.processes > 1:
            from asf_core.pipeline.units import unit_workers

            self.made = unit_workers(self.processes)
        return self.made


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
    note = noter(report, redaction)
    for item in filtered(host.read(pm, plugin, store, selection, previews=False), selection):
        if isinstance(item, NativeSession):
            report.sessions_read += 1
            note(item.findings)
            yield item
        else:
            note([item])


def convert_store(
    pm: AsfPluginManager,
    candidate: Candidate,
    out_dir: Path,
    *,
    on_session: OnSession | None = None,
    selection: Selection | None = None,
    redaction: SessionRedaction | None = None,
    workers: UnitWorkers | None = None,
    inputs: Inputs | None = None,
    on_wait: OnWait | None = None,
    prune: bool = False,
    flushing: Flushing | None = None,
) -> tuple[StoreReport, str | None]:
    """Convert one store into ``out_dir/<format>/<store label>/`` and write its report.

    ``selection`` (default: every session) is what the plugin reads and converts;
    ``redaction`` replaces secrets in every session and finding before they are written.
    A whole store converted without redaction is planned when its plugin plans: ``workers``
    run its units, made when the first store needs them (None, or none made for one
    process: all in this process). Returns the report and why the store stopped
    early, if it did: :data:`DAMAGED` (the plugin raised :class:`StoreError`) or
    :data:`PLUGIN`. Either ends this store (its report says where) but not the run. Ctrl-C
    and an unwritable output (:class:`OutputError`) go up after the report of the store in
    progress is written. No file is written over one of ``inputs`` (default: this store):
    that is an :class:`OutputError`. A store that changed while it was read
    (:class:`StoreChanged`) is converted again from its opening, :data:`_TRIES` times at most.
    Another run converting into ``dest`` is waited for (:mod:`asf_core.pipeline.lock`),
    ``on_wait`` told first. With ``prune``, the ASF session files of earlier runs that a whole
    run without a problem did not write are deleted (:mod:`asf_core.pipeline.left`).
    """
    claim = candidate.claim
    dest = store_dir(out_dir, claim.format, claim.path, redact=redaction is not None)
    inputs = inputs if inputs is not None else Inputs.of([claim.path])
    guard = inputs if inputs.near(dest) else None
    wanted = selection or Selection()
    # One for every try: what an abandoned try wrote is flushed too.
    syncer = Syncer(flushing)
    with store_lock(dest, inputs, on_wait):
        keep_within(dest, claim.path)  # no more open than the store
        for attempt in range(_TRIES):
            report = StoreReport(
                format=claim.format,
                plugin=candidate.plugin,
                path=str(claim.path),
                output=str(dest),
                redacted=redaction is not None,
            )
            run = StoreRun(candidate, dest, report, on_session, redaction, wanted, guard, syncer)
            run.prune = prune
            done = _attempt(pm, run, candidate, workers, last=attempt + 1 == _TRIES)
            if done is not None:
                return done
    raise AssertionError("unreachable: the last try returns")  # pragma: no cover


def _attempt(
    pm: AsfPluginManager,
    run: StoreRun,
    candidate: Candidate,
    workers: UnitWorkers | None,
    *,
    last: bool,
) -> tuple[StoreReport, str | None] | None:
    """One try at converting a store; None when the store changed while it was read and
    another try is allowed (the store is closed, nothing more is written)."""
    report, redaction, wanted = run.report, run.redaction, run.selection
    store: StoreHandle | None = None
    failure: str | None = None
    planned = redaction is None and wanted.everything()
    try:
        if planned:
            stamp = host.stamp(pm, candidate)
            if stamp is not None and run.unchanged(stamp):
                return report, None  # the store is as the last run found it: not opened
        store = host.open_store(pm, candidate)
        report.store = host.store_info(candidate.plugin, store)
        sessions = _native(pm, candidate.plugin, store, report, wanted, redaction)
        units = host.plan(pm, candidate.plugin, store, sessions) if planned else None
        if units is None:
            run.whole(pm, store, sessions)
        else:
            pool = workers.get() if workers is not None else None
            if pool is not None:
                try:  # after the hook loaded its code, before it lists: Workers.start
                    pool.start()
                except OSError:  # the system starts no process: converted in this one
                    pool = None
            run.planned(units, pool)
            run.finish(pm, store)
        report.complete = True
    except StoreChanged as exc:
        if not last:
            _drop(candidate.plugin, store)
            return None
        report.error = host.store_problem(exc)
        failure = DAMAGED
    except StoreError as exc:
        report.error = host.store_problem(exc)
        failure = DAMAGED
    except PluginError as exc:
        report.error = str(exc)
        failure = PLUGIN
    except Stopped as exc:
        if exc.failure == CHANGED and not last:
            _drop(candidate.plugin, store)
            return None
        report.error = str(exc)
        if exc.failure == OUTPUT:
            with contextlib.suppress(OutputError):
                run.close(store)
            raise OutputError(str(exc)) from None
        failure = DAMAGED if exc.failure == CHANGED else exc.failure
    except BaseException as exc:  # Ctrl-C or an unwritable output: keep what we know, go on up
        report.error = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
        with contextlib.suppress(OutputError):  # the error on its way up says more
            run.close(store)
        raise
    run.close(store)
    if report.error and failure is None:  # the store's close raised
        failure = PLUGIN
    return report, failure


def _drop(plugin: str, store: StoreHandle | None) -> None:
    """Close a store being read again (what its close raises does not matter then)."""
    if store is not None:
        with contextlib.suppress(PluginError):
            host.close_store(plugin, store)


def _as_left(pm: AsfPluginManager, candidate: Candidate, out_dir: Path) -> bool:
    """Whether a store's output records say the last run left it as it is now (its stamp):
    it will not be opened, so counting its sessions first would cost more than it shows.
    Its conversion takes the stamp again when it comes to it: stores converted before it
    take time, in which its source may change."""
    try:
        stamp = host.stamp(pm, candidate)
    except PluginError:  # said when the store is converted
        return False
    claim = candidate.claim
    dest = store_dir(out_dir, claim.format, claim.path)
    if stamp is None or not holds(dest, claim.format, store_name(claim.path), stamp):
        return False
    return named_as(dest, str(claim.path))  # else opened, as StoreRun.unchanged says


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
    report_file: Path | None = None,
    on_wait: OnWait | None = None,
    prune: bool = False,
) -> tuple[RunReport, list[Finding]]:
    """Convert every store found under ``paths`` (none: the default locations), or the
    sessions ``selection`` picks among them (each with what it needs: its conversation).
    ``on_store`` hears of each store as it starts, with its number of sessions when
    ``count`` (or a selection) had them listed first; ``on_session`` of each session written.
    ``processes`` is the number of worker processes planned units convert on (1: all in
    this process). ``on_wait`` hears of a store's output another run is writing, before this
    run waits for it. ``prune`` deletes what each store's whole run finds left from earlier runs
    (see :func:`convert_store`).

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
    closed = folder_trouble(out_dir) if found.stores else None
    if closed is not None:  # said of the folder the user can change, before any store
        raise OutputError(closed)
    target, made = _report_target(report_file, inputs) if report_file is not None else (None, [])
    problems = list(found.problems)
    run = RunReport(output=str(out_dir))
    stores: list[tuple[Candidate, Selection, int | None]] = [
        (c, Selection(), None) for c in found.stores
    ]
    workers = UnitWorkers(processes)
    # The run's flushing process, when this process converts (see Flushing).
    flushing = Flushing(child=processes <= 1)
    try:  # from here an interrupt still writes --report: the picking may take a while
        if selection is not None and not selection.everything():
            from asf_core.pipeline.picking import AMBIGUOUS_SESSION, NO_SESSION, pick

            picked, trouble = pick(pm, found.stores, selection, unique=True)
            problems += trouble
            if any(p.code in (NO_SESSION, AMBIGUOUS_SESSION) for p in trouble):
                picked = []  # a --session that names nothing (or too much): convert nothing
            stores = [(p.candidate, p.selection, len(p.sessions)) for p in picked]
        elif count:  # for progress only; a store that could not be listed says so later
            stores = _counted(pm, found.stores, out_dir, redaction is not None or prune)
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
                inputs=inputs,
                on_wait=on_wait,
                prune=prune,
                flushing=flushing,
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
        if workers.made is not None:
            if run.interrupted:
                workers.made.stop()
            else:
                workers.made.close()
        flushing.close()  # after the workers: none holds its pipe any more
    run.errors = [p.message for p in problems if p.kind != "warning"]
    run.warnings = [p.message for p in problems if p.kind == "warning"]
    if target is not None:
        try:
            write_report(target, run)
        except OSError as exc:
            why = f"cannot write {report_file}: {exc.strerror or exc}"
            problems.append(Finding(kind="error", code=OUTPUT, message=why))
            remove_empty(made)  # made to hold it: not left behind empty
    return run, problems


def _counted(
    pm: AsfPluginManager, stores: Sequence[Candidate], out_dir: Path, whole: bool
) -> list[tuple[Candidate, Selection, int | None]]:
    """Each store with its number of sessions, for progress (``whole``: every store is
    listed; else one the last run left as it is now is not: a redacted conversion is not
    planned, and a pruning one does not trust the stamp)."""
    from asf_core.pipeline.picking import pick

    listed = [c for c in stores if whole or not _as_left(pm, c, out_dir)]
    totals: dict[int, int | None] = {id(c): 0 for c in listed}
    picked, _ = pick(pm, listed, Selection(), unique=True, counting=True)
    totals.update((id(p.candidate), len(p.sessions)) for p in picked)
    return [(c, Selection(), totals.get(id(c))) for c in stores]


def _report_target(report: Path, inputs: Inputs) -> tuple[Path, list[Path]]:
    """Where ``--report`` is written: the file it names (links followed), checked, and its
    folder tried, before any store is converted; and the folders made for it."""
    inputs.check_write(report, named=True)
    target = report
    try:
        target = report.resolve()
        made = can_write(target)
    except (OSError, RuntimeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        said = unmade(target, exc) if isinstance(exc, OSError) else None
        raise OutputError(said or f"{report}: {why}") from exc
    return target, made
