"""``plan``: a Claude Code store converted in units, one per session with its sub-agents.

A unit's files are all it reads (the session file, its sub-agents' transcripts and their
``.meta.json``), so its fingerprint is what the file system says of each (device, inode,
mode, size, modification and change times; a change time cannot be set back) with the project's
name, the files' names and this plugin's code: an unchanged session is not read at all, one
Claude Code appended to is converted again. The job carries the files' names, not their
contents: it reads them where it runs (a worker, or the host's process), as ``convert`` does.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from attrs import frozen

from asf_core.formats import ConvertedSession, Finding, NativeSession, Unit
from claude_code_plugin.handle import ClaudeStore, Group
from claude_code_plugin.native import Native
from claude_code_plugin.source.layout import meta_path
from claude_code_plugin.source.stamp import file_status
from claude_code_plugin.version import converter_version

__all__ = ["FamilyJob", "fingerprint", "plan_units"]


@frozen
class FamilyJob:
    """One session's conversion with its sub-agents: picklable (the store's path and the
    session's files), reading the files where it runs."""

    store: Path
    group: Group

    def __call__(self) -> Iterator[ConvertedSession | Finding]:
        from claude_code_plugin.convert.store import family

        return family(ClaudeStore(self.store), Native(group=self.group, index=None, read=False))


def _files(group: Group) -> list[Path]:
    """Every file a session's conversion reads: its own, its sub-agents' transcripts and the
    ``.meta.json`` beside each (read when there is one)."""
    agents = sorted((*group.files.agents, *group.legacy))
    main = [group.files.main] if group.files.main is not None else []
    return [*main, *agents, *map(meta_path, agents)]


def fingerprint(store: ClaudeStore, group: Group) -> str:
    """A unit's fingerprint: the plugin's code, the project's name (headers carry it), the
    session's id, and each file's name and status."""
    parts: list[object] = [converter_version(), store.project_name, group.files.stem]
    parts += [(store.relative(path), file_status(path)) for path in _files(group)]
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def plan_units(store: ClaudeStore, sessions: Iterable[NativeSession]) -> Iterator[Unit]:
    """The ``plan`` hook: a unit per native session. ``read`` then lists the sessions without
    reading their files (each job reads its own); the converting code is loaded now, before
    the host forks its workers, so they share it."""
    import claude_code_plugin.convert.store  # noqa: F401 - loaded once, in the host

    store.planned = True
    return _units(store, sessions)


def _units(store: ClaudeStore, sessions: Iterable[NativeSession]) -> Iterator[Unit]:
    # The whole listing first: what ``read`` reports (files not converted, sessions without
    # their file) then comes before every unit's results, whatever the number of workers.
    natives = [s.native for s in sessions if isinstance(s.native, Native)]
    for native in natives:
        group = native.group
        yield Unit(
            key=group.files.stem,
            fingerprint=fingerprint(store, group),
            prepare=functools.partial(FamilyJob, store.path, group),
        )
