"""A planning plugin's units, run in plan order: carried over, run here, or on workers.

Slots hold each unit's items until every earlier slot is applied, so the files and the
report are the same whatever the number of workers. With workers, the host reads ahead at
most two units per worker, so memory holds a few units at a time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from attrs import define

from asf_core.errors import PluginError
from asf_core.formats import Finding, Job, Unit
from asf_core.pipeline import fingerprints, host
from asf_core.pipeline.inputs import Inputs
from asf_core.pipeline.stops import Stopped
from asf_core.pipeline.unit_records import UnitRecord
from asf_core.pipeline.units import HOST, PLUGIN, Outcome, Written, record_of, replay, run_job

if TYPE_CHECKING:
    from asf_core.pipeline.workers import Workers

__all__ = ["Stopped", "Units"]


class Sink(Protocol):
    """Where a store's units go: its plugin and output, the last run's records, this run's."""

    plugin: str
    dest: Path
    guard: Inputs | None
    old: dict[str, UnitRecord] | None
    new: dict[str, UnitRecord]
    #: Whether a unit without fingerprint was converted (no record covers its files).
    unrecorded: bool

    def take(self, items: Sequence[Written | Finding]) -> None: ...

    def flushed(self, outcome: Outcome) -> None: ...


@define
class _Slot:
    """One place in plan order: a finding, a carried-over unit's items, or a unit's outcome
    once its job is done (``ticket`` names a job sent to a worker)."""

    key: str = ""
    fingerprint: str = ""
    items: tuple[Written | Finding, ...] | None = None
    outcome: Outcome | None = None
    job: Job | None = None
    ticket: int | None = None

    @property
    def done(self) -> bool:
        return self.items is not None or self.outcome is not None


class Units:
    """The units of one store, run in plan order: carried over, run here, or on workers.

    Slots hold each unit's items until every earlier slot is applied. With workers, the host
    reads ahead at most two units per worker, so memory holds a few units at a time.
    """

    def __init__(self, store: Sink, workers: Workers[Outcome] | None) -> None:
        self.store = store
        self.workers = workers
        self.slots: deque[_Slot] = deque()
        self.keys: set[str] = set()
        self.tickets = 0

    def run(self, units: Iterator[Unit | Finding]) -> None:
        try:
            for item in units:
                if isinstance(item, Finding):
                    self.slots.append(_Slot(items=(item,)))
                else:
                    self._unit(item)
                self._flush()
            while self.workers is not None and self.workers.pending:
                self._collect()
            self._flush()
        except BaseException:
            if self.workers is not None and self.workers.pending:
                self.workers.stop()  # abandon what is in flight: only whole files remain
            raise

    def _unit(self, unit: Unit) -> None:
        store = self.store
        if unit.key in self.keys:
            raise PluginError(store.plugin, "plan", f"two units have the key {unit.key!r}")
        self.keys.add(unit.key)
        old = (store.old or {}).get(unit.key)
        if (
            old is not None
            and unit.fingerprint
            and old.fingerprint == unit.fingerprint
            and fingerprints.trusted(store.dest, old)
        ):
            store.new[unit.key] = old
            self.slots.append(_Slot(key=unit.key, items=replay(old)))
            return
        with host.blame(store.plugin, f"plan (unit {unit.key})"):
            job = unit.prepare()
        slot = _Slot(key=unit.key, fingerprint=unit.fingerprint, job=job)
        self.slots.append(slot)
        workers = self.workers
        message = None
        if workers is not None:
            message = workers.pack(run_job, store.plugin, unit.key, job, store.dest, store.guard)
        if workers is None or message is None:
            self._done(slot, self._here(slot, job))
            return
        self.tickets += 1
        slot.ticket = self.tickets
        workers.submit(self.tickets, message)
        while workers.pending >= 2 * workers.count:
            self._collect()

    def _collect(self) -> None:
        if self.workers is None:  # pragma: no cover - only called with workers
            return
        for ticket, outcome in self.workers.collect():
            for slot in self.slots:
                if slot.ticket == ticket and not slot.done:
                    self._done(slot, outcome)
                    break

    def _here(self, slot: _Slot, job: Job) -> Outcome:
        """Run a slot's job in this process (a job asking for the host again is a bug)."""
        store = self.store
        outcome = run_job(store.plugin, slot.key, job, store.dest, store.guard)
        if outcome.failure == HOST:
            # Named like every plugin failure: the plugin, the hook, what it did.
            hook, what = (
                f"convert (unit {slot.key})",
                f"NeedsHost in the host's process: {outcome.error}",
            )
            why = str(PluginError(store.plugin, hook, what))
            return Outcome(items=outcome.items, error=why, failure=PLUGIN, written=outcome.written)
        return outcome

    def _done(self, slot: _Slot, outcome: Outcome) -> None:
        if outcome.failure == HOST and slot.job is not None:
            # A worker could not give the host's result: run the job here, from the host's
            # store; what the worker wrote is rewritten or found unchanged, and flushed.
            again = self._here(slot, slot.job)
            written = (*outcome.written, *again.written)
            outcome = Outcome(
                items=again.items, error=again.error, failure=again.failure, written=written
            )
        slot.outcome, slot.job = outcome, None

    def _flush(self) -> None:
        """Apply every slot whose turn it is: the first ones that are done."""
        while self.slots and self.slots[0].done:
            slot = self.slots.popleft()
            if slot.outcome is not None:
                result = slot.outcome
                self.store.flushed(result)
                self.store.take(result.items)
                if result.failure is not None:
                    raise Stopped(result.failure, result.error or "failed")
                if slot.fingerprint:
                    self.store.new[slot.key] = record_of(slot.fingerprint, result)
                else:
                    self.store.unrecorded = True
            elif slot.items is not None:
                self.store.take(slot.items)
