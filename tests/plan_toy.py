"""A format plugin that plans: each line ``id text`` of a ``*.ptoy`` file is one unit.

Module-level (and importable by name) so that its jobs pickle to worker processes. Its
fingerprint is the line's text; ``PREPARED`` records the units the host asked it to read, in
the host's process, so a test can tell a converted unit from a carried-over one. A line
``id !damaged`` makes its job raise ``StoreError``, ``id !bug`` a ``KeyError``, ``id
!changed`` a ``StoreChanged`` (every time: the store never holds still); a line
``id ~text`` converts as ``text`` but raises ``NeedsHost`` outside the process that prepared
it (``~~text``: everywhere, a bug). A line ``= text`` is no unit: ``finish`` converts it, as
the session ``finished``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from asf_core import hookimpl
from asf_core.formats import (
    Claim,
    ConvertedSession,
    Finding,
    NativeSession,
    NeedsHost,
    StoreChanged,
    StoreError,
    Unit,
)
from asf_core.model import Header, Item
from asf_core.writer import SessionBuilder

FORMAT = "ptoy"
#: Unit keys prepared in this process, in order.
PREPARED: list[str] = []
#: The stores opened in this process.
OPENED: list[Path] = []
#: The stores listed (``read``) in this process: a worker's copy tells whether it was forked
#: before the host listed the store (its jobs say, with ``TELL_LISTED``).
LISTED: list[Path] = []
#: The stores whose ``plan`` hook was called in this process (before the host iterates it).
LOADED: list[Path] = []
TELL_LISTED = False
#: Whether the plugin stamps its stores (a test turns it off to compare with a full read).
STAMPS = True
#: When set, a file each job appends ``<unit> <pid> <monotonic start time>`` to (workers
#: inherit it: they are forked).
STARTS: Path | None = None


class PlanStore:
    def __init__(self, path: Path) -> None:
        OPENED.append(path)
        self.path = path
        self.lines = [line.partition(" ") for line in path.read_text().splitlines()]

    def info(self) -> dict[str, Any]:
        return {"lines": len(self.lines)}

    def close(self) -> None:
        pass


def session_of(ident: str, text: str) -> ConvertedSession:
    """What converting one line gives (also what the tests expect)."""
    builder = SessionBuilder(Header(id=f"ptoy-{ident}", created_at="2026-01-01T00:00:00Z"))
    for n, word in enumerate(text.split()):
        item = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": word}],
        }
        builder.append(Item(ts=f"2026-01-01T00:00:{n % 60:02d}Z", item=item))
    return ConvertedSession(
        header=builder.header,
        entries=builder.entries,
        name=ident,
        counts={"words": len(text.split())},
        findings=[Finding(kind="info", message=f"{ident} has {len(text)} characters")],
    )


def job(ident: str, text: str, host: int = 0) -> Iterator[ConvertedSession | Finding]:
    if STARTS is not None:
        with STARTS.open("a") as log:
            log.write(f"{ident} {os.getpid()} {time.monotonic()}\n")
    if text.startswith("~~") or (text.startswith("~") and os.getpid() != host):
        raise NeedsHost(f"{ident} reads only in the host")
    text = text.lstrip("~")
    if text == "!damaged":
        raise StoreError(f"line {ident} is damaged")
    if text == "!changed":
        raise StoreChanged(f"line {ident} changed while it was read")
    if text == "!bug":
        raise KeyError(ident)
    if text == "!die" and os.getpid() != host:
        os._exit(9)  # a worker killed (out of memory, by a signal) in the middle of a job
    data = {"listed": len(LISTED), "loaded": len(LOADED)} if TELL_LISTED else {}
    yield Finding(kind="warning", message=f"converted {ident}", unit=ident, data=data)
    yield session_of(ident, text)


def _prepare(ident: str, text: str) -> functools.partial[Iterator[ConvertedSession | Finding]]:
    PREPARED.append(ident)
    return functools.partial(job, ident, text, os.getpid())


class PlanToy:
    @hookimpl
    def discover(self, path: Path | None) -> list[Claim] | None:
        if path is None or path.suffix != f".{FORMAT}":
            return None
        return [Claim(format=FORMAT, path=path, confidence=1.0)]

    @hookimpl
    def open_store(self, claim: Claim) -> PlanStore | None:
        return PlanStore(claim.path) if claim.format == FORMAT else None

    @hookimpl
    def stamp(self, claim: Claim) -> str | None:
        """The file's size and times; none for a store whose first line is ``-``."""
        if claim.format != FORMAT or not STAMPS or claim.path.read_text().startswith("-"):
            return None
        st = claim.path.stat()
        return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"

    @hookimpl
    def read(self, store: PlanStore) -> Iterator[NativeSession | Finding] | None:
        if not isinstance(store, PlanStore):
            return None
        LISTED.append(store.path)
        return iter([NativeSession(id=ident) for ident, _, _ in store.lines])

    @hookimpl
    def convert(
        self, store: PlanStore, sessions: Iterable[NativeSession]
    ) -> Iterator[ConvertedSession | Finding] | None:
        raise AssertionError("a planning plugin is converted through its units")

    @hookimpl
    def plan(
        self, store: PlanStore, sessions: Iterable[NativeSession]
    ) -> Iterator[Unit | Finding] | None:
        if not isinstance(store, PlanStore):
            return None
        LOADED.append(store.path)  # what a plugin loads before it returns: workers share it
        return self._plan(store, sessions)

    def _plan(
        self, store: PlanStore, sessions: Iterable[NativeSession]
    ) -> Iterator[Unit | Finding]:
        wanted = [s.id for s in sessions]  # listed as the host iterates the plan
        yield Finding(kind="info", message=f"{len(wanted)} lines")
        for ident, _, text in store.lines:
            if ident in wanted and ident != "=":
                digest = hashlib.sha256(text.encode()).hexdigest()
                yield Unit(
                    key=ident,
                    fingerprint="" if text.startswith("?") else digest,
                    prepare=functools.partial(_prepare, ident, text),
                )

    @hookimpl
    def finish(
        self, store: PlanStore, counts: Mapping[str, int]
    ) -> Iterator[ConvertedSession | Finding] | None:
        if not isinstance(store, PlanStore):
            return None
        found = Finding(kind="info", message="words", data={"words": counts.get("words")})
        tail = [t for ident, _, t in store.lines if ident == "="]
        return iter([*(session_of("finished", t) for t in tail), found])


class WholeToy:
    """The same format without ``plan``: converted through ``convert``, as every plugin was."""

    @hookimpl
    def discover(self, path: Path | None) -> list[Claim] | None:
        return PlanToy().discover(path)

    @hookimpl
    def open_store(self, claim: Claim) -> PlanStore | None:
        return PlanToy().open_store(claim)

    @hookimpl
    def read(self, store: PlanStore) -> Iterator[NativeSession | Finding] | None:
        return PlanToy().read(store)

    @hookimpl
    def convert(
        self, store: PlanStore, sessions: Iterable[NativeSession]
    ) -> Iterator[ConvertedSession | Finding] | None:
        wanted = {s.id for s in sessions}
        return (
            item for ident, _, text in store.lines if ident in wanted for item in job(ident, text)
        )
