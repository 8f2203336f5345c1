"""``plan``: a Codex store converted in units, one per rollout file.

A unit reads its rollout and nothing else, so its fingerprint is this plugin's code, the
file's name and what the file system says of it (device, inode, mode, size, modification and
change times): a thread Codex did not write to since is not read at all, one it appended to
(a resumed thread) is converted again. The job carries the file's name, not its contents: it
reads the file where it runs (a worker, or the host's process), reports what ``read``
reports of it (lines that cannot be read), then converts it as ``convert`` does.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from attrs import frozen

from asf_core.formats import ConvertedSession, Finding, NativeSession, Unit
from asf_core.walk import file_status
from codex_plugin.handle import CodexStore
from codex_plugin.native import Unread
from codex_plugin.version import converter_version

__all__ = ["RolloutJob", "fingerprint", "plan_units"]


@frozen
class RolloutJob:
    """One rollout's conversion: picklable (the store's path and the file's), reading the
    file where it runs."""

    store: Path
    path: Path
    #: The thread its name gives, when an earlier rollout's name gives it too
    #: (:func:`~codex_plugin.source.rollout.claims`): then it is a copy, named by its file.
    earlier: frozenset[str] = frozenset()

    def __call__(self) -> Iterator[ConvertedSession | Finding]:
        from codex_plugin.convert.store import convert_one
        from codex_plugin.convert.stream import RolloutFile
        from codex_plugin.native import native_session

        store = CodexStore(self.store)
        rollout = RolloutFile(self.path, store.relative(self.path))
        # One reading gives the listing's facts and feeds the conversion's first pass.
        lines = rollout.first.tee(rollout.read())
        native = native_session(store, self.path, self.earlier, lines)
        if isinstance(native, Finding):
            yield native
            return
        yield from native.findings
        yield convert_one(native, rollout)


def fingerprint(store: CodexStore, unread: Unread, earlier: frozenset[str]) -> str:
    """A unit's fingerprint: the plugin's code, the rollout's name and its status, and the
    thread ids an earlier rollout's name claims (what its session is named by)."""
    parts: list[object] = [
        converter_version(),
        unread.unit,
        file_status(unread.path),
        sorted(earlier),
    ]
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def plan_units(store: CodexStore, sessions: Iterable[NativeSession]) -> Iterator[Unit]:
    """The ``plan`` hook: a unit per rollout. ``read`` then lists the rollouts without
    reading them (each job reads its own); the converting code is loaded now, before the
    host forks its workers, so they share it."""
    import codex_plugin.convert.store  # noqa: F401 - loaded once, in the host

    store.planned = True
    return _units(store, sessions)


def _units(store: CodexStore, sessions: Iterable[NativeSession]) -> Iterator[Unit]:
    from codex_plugin.source.rollout import claims

    listed = [s.native for s in sessions if isinstance(s.native, Unread)]
    for unread, earlier in zip(listed, claims(u.path.name for u in listed), strict=True):
        yield Unit(
            key=unread.unit,
            fingerprint=fingerprint(store, unread, earlier),
            prepare=functools.partial(RolloutJob, store.path, unread.path, earlier),
        )
