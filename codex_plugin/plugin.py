"""The Codex format plugin: the hook implementations, nothing else.

Registered under the ``asf.formats`` entry point as ``codex``. The work lives in the modules
each hook imports when it runs (:mod:`codex_plugin.source.layout` finds stores,
:mod:`codex_plugin.native` reads them, :mod:`codex_plugin.convert.store` converts);
``docs/formats/codex.md`` is the mapping.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from asf_core import hookimpl
from asf_core.formats import (
    Claim,
    ConvertedSession,
    Finding,
    NativeSession,
    StoreHandle,
    Unit,
)

FORMAT = "codex"


@hookimpl
def discover(path: Path | None) -> list[Claim | Finding] | None:
    """Claim the directories of rollouts at ``path`` (a Codex home or a home holding
    ``.codex``: its ``sessions`` and ``archived_sessions``; either directory or a date
    directory below it), or one rollout file; with ``path`` None, the user's own (in
    ``$CODEX_HOME`` or ``~/.codex``)."""
    from codex_plugin.source.layout import stores_at

    found: list[Claim | Finding] = [
        Claim(format=FORMAT, path=f.path, confidence=f.confidence, detail=f.detail)
        for f in stores_at(path)
    ]
    return found or None


@hookimpl
def default_locations() -> list[Path] | None:
    """Where ``discover(None)`` looks: ``sessions`` and ``archived_sessions`` in
    ``$CODEX_HOME`` or ``~/.codex``."""
    from codex_plugin.source.layout import default_stores

    return default_stores() or None


@hookimpl
def stamp(claim: Claim) -> str | None:
    """A store: every rollout's name and status (size, times, inode), and this plugin's
    version."""
    if claim.format != FORMAT:
        return None
    from codex_plugin.source.stamp import store_stamp

    return store_stamp(claim.path)


@hookimpl
def open_store(claim: Claim) -> StoreHandle | None:
    """A handle on a claimed directory or file; raises ``StoreError`` if it cannot be read."""
    if claim.format != FORMAT:
        return None
    from codex_plugin.handle import CodexStore

    return CodexStore(claim.path)


@hookimpl
def read(store: StoreHandle, counting: bool) -> Iterator[NativeSession | Finding] | None:
    """Each rollout file as a native session, its unreadable lines as strays; when the host
    only counts them, no rollout is read."""
    from codex_plugin.handle import CodexStore

    if not isinstance(store, CodexStore):
        return None
    from codex_plugin.native import native_sessions

    return native_sessions(store, read_files=not counting)


@hookimpl
def convert(
    store: StoreHandle, sessions: Iterable[NativeSession]
) -> Iterator[ConvertedSession | Finding] | None:
    """Each rollout as one ASF session."""
    from codex_plugin.handle import CodexStore

    if not isinstance(store, CodexStore):
        return None
    from codex_plugin.convert.store import convert_sessions

    return convert_sessions(store, sessions)


@hookimpl
def plan(store: StoreHandle, sessions: Iterable[NativeSession]) -> Iterator[Unit] | None:
    """Each rollout as a unit, fingerprinted by its file's status: the units convert on
    every core, and a rollout that did not change is not read."""
    from codex_plugin.handle import CodexStore

    if not isinstance(store, CodexStore):
        return None
    from codex_plugin.convert.units import plan_units

    return plan_units(store, sessions)
