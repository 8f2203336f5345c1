"""The Claude Code format plugin: the hook implementations, nothing else.

Registered under the ``asf.formats`` entry point as ``claude-code``. The work lives in the
modules each hook imports when it runs (:mod:`claude_code_plugin.source.layout` finds stores,
:mod:`claude_code_plugin.native` reads them, :mod:`claude_code_plugin.convert.store` converts);
``docs/formats/claude-code.md`` is the mapping.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from asf_core import hookimpl
from asf_core.formats import Claim, ConvertedSession, Finding, NativeSession, StoreHandle, Unit

FORMAT = "claude-code"


@hookimpl
def discover(path: Path | None) -> list[Claim | Finding] | None:
    """Claim each Claude Code project directory at ``path`` (a ``.claude`` directory, a
    ``projects`` directory, a project directory, a home holding ``.claude``), or one session
    file; with ``path`` None, the user's own (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``), and a
    warning when that one is behind a directory closed to the user."""
    from claude_code_plugin.source.layout import closed_default, stores_at

    found: list[Claim | Finding] = [
        Claim(format=FORMAT, path=f.path, confidence=f.confidence, detail=f.detail)
        for f in stores_at(path)
    ]
    closed = closed_default() if path is None and not found else None
    if closed is not None:  # saying nothing would claim it holds no session
        from asf_core.walk import unsearchable

        found.append(unsearchable(closed, "permission denied"))
    return found or None


@hookimpl
def default_locations() -> list[Path] | None:
    """Where ``discover(None)`` looks: ``$CLAUDE_CONFIG_DIR/projects`` or
    ``~/.claude/projects``."""
    from claude_code_plugin.source.layout import default_projects

    projects = default_projects()
    return None if projects is None else [projects]


@hookimpl
def stamp(claim: Claim) -> str | None:
    """A project directory: its entries and every file under its sessions' directories
    (name, identity, size and times), and this plugin's version."""
    if claim.format != FORMAT:
        return None
    from claude_code_plugin.source.stamp import store_stamp

    return store_stamp(claim.path)


@hookimpl
def open_store(claim: Claim) -> StoreHandle | None:
    """A handle on a claimed project directory or file; raises ``StoreError`` if it cannot
    be read."""
    if claim.format != FORMAT:
        return None
    from claude_code_plugin.handle import ClaudeStore

    return ClaudeStore(claim.path)


@hookimpl
def read(store: StoreHandle, counting: bool) -> Iterator[NativeSession | Finding] | None:
    """Each session file (with its sub-agents) as a native session, then what is not
    converted; when the host only counts them, no transcript is read."""
    from claude_code_plugin.handle import ClaudeStore

    if not isinstance(store, ClaudeStore):
        return None
    from claude_code_plugin.native import native_sessions

    return native_sessions(store, read_files=not counting)


@hookimpl
def convert(
    store: StoreHandle, sessions: Iterable[NativeSession]
) -> Iterator[ConvertedSession | Finding] | None:
    """Each session and its sub-agents as ASF sessions, sub-agents first."""
    from claude_code_plugin.handle import ClaudeStore

    if not isinstance(store, ClaudeStore):
        return None
    from claude_code_plugin.convert.store import convert_sessions

    return convert_sessions(store, sessions)


@hookimpl
def plan(store: StoreHandle, sessions: Iterable[NativeSession]) -> Iterator[Unit] | None:
    """Each session with its sub-agents as a unit, fingerprinted by its files' status: the
    units convert on every core, and a session whose files did not change is not read."""
    from claude_code_plugin.handle import ClaudeStore

    if not isinstance(store, ClaudeStore):
        return None
    from claude_code_plugin.convert.units import plan_units

    return plan_units(store, sessions)
