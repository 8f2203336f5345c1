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

from asf_core import fingerprints, host
from asf_core.errors import PluginError
from asf_core.fingerprints import UnitRecord
from asf_core.formats import Finding, Unit
from asf_core.inputs import Inputs
from asf_core.units import Outcome, Written, record_of, replay, run_job

if TYPE_CHECKING:
    from asf_core.workers import Workers

__all__ = ["Stopped", "Units"]


class Stopped(Exception):
    """A unit stopped its store: why (``damaged``, ``plugin``, ``output``: see
    :mod:`asf_core.units`)."""

    def __init__(self, failure: str, message: str) -> None:
        super().__init__(message)
        self.failure = failure


class Sink(Protocol):
    """Where a store's units go: its plugin and output, the last run's records, this run's."""

    plugin: str
    dest: Path
    guard: Inputs | None
    old: dict[str, UnitRecord] | None
    new: dict[str, UnitRecord]

    def take(self, items: Sequence[Written | Finding]) -> None: ...

    def flushed(self, outcome: Outcome) -> None: ...


class Units:
    """The units of one store, run in plan order: carried over, run here, or on workers.

    Slots hold each unit's items until every earlier slot is applied. With workers, the host
    reads ahead at most two units per worker, so memory holds a few units at a time.
    """

    def __init__(self, store: Sink, workers: Workers | None) -> None:
        self.store = store
        self.workers = workers
        self.slots: deque[list[object]] = deque()  # [ticket, items | None, key, fingerprint]
        self.keys: set[str] = set()
        self.tickets = 0

    def run(self, units: Iterator[Unit | Finding]) -> None:
        try:
            for item in units:
                if isinstance(item, Finding):
                    self.slots.append([None, (item,), "", ""])
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
            self.slots.append([None, replay(old), unit.key, ""])
            return
        with host.blame(store.plugin, f"plan (unit {unit.key})"):
            job = unit.prepare()
        workers = self.workers
        message = (
            None
            if workers is None
            else workers.pack(store.plugin, unit.key, job, store.dest, store.guard)
        )
        self.tickets += 1
        ticket = self.tickets
        slot: list[object] = [ticket, None, unit.key, unit.fingerprint]
        self.slots.append(slot)
        if workers is None or message is None:
            self._done(slot, run_job(store.plugin, unit.key, job, store.dest, store.guard))
            return
        workers.submit(ticket, message)
        while workers.pending >= 2 * workers.count:
            self._collect()

    def _collect(self) -> None:
        if self.workers is None:  # pragma: no cover - only called with workers
            return
        for ticket, outcome in self.workers.collect():
            for slot in self.slots:
                if slot[0] == ticket and slot[1] is None:
                    self._done(slot, outcome)
                    break

    def _done(self, slot: list[object], outcome: Outcome) -> None:
        slot[1] = outcome

    def _flush(self) -> None:
        """Apply every slot whose turn it is: the first ones that are done."""
        while self.slots and self.slots[0][1] is not None:
            _ticket, result, key, fingerprint = self.slots.popleft()
            if isinstance(result, Outcome):
                self.store.flushed(result)
                self.store.take(result.items)
                if result.failure is not None:
                    raise Stopped(result.failure, result.error or "failed")
                if fingerprint:
                    self.store.new[str(key)] = record_of(str(fingerprint), result)
            else:
                self.store.take(result)  # type: ignore[arg-type]
