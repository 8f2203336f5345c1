"""The Hermes Agent format plugin: the hook implementations, nothing else.

Registered under the ``asf.formats`` entry point as ``hermes``. The work lives in the
modules each hook imports when it runs (:mod:`hermes_plugin.source` finds and reads databases,
:mod:`hermes_plugin.convert` maps them);
``docs/formats/hermes.md`` is the mapping. A database that cannot be read raises the host's
``StoreError`` (from ``open_store``, or part way through ``read`` or ``convert``), so the user
is told what is wrong with the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from asf_core import hookimpl
from asf_core.formats import (
    Claim,
    ConvertedSession,
    Finding,
    NativeSession,
    Selection,
    StoreHandle,
    Unit,
)

if TYPE_CHECKING:
    from asf_core.model import Entry, Header

FORMAT = "hermes"


@hookimpl
def discover(path: Path | None) -> list[Claim | Finding] | None:
    """Claim each Hermes database at ``path`` (a home, a profile directory, a ``state.db``
    file or a tree of homes), or in the user's own home when ``path`` is None; and, at a low
    confidence, each one meant as Hermes' that cannot be read (see
    :func:`hermes_plugin.source.discovery.claims`). A folder that could not be searched is a
    warning, so the user hears that it was passed over."""
    from asf_core.walk import unsearchable
    from hermes_plugin.source.discovery import Skipped, claims, label_of

    skipped: Skipped = {}
    found: list[Claim | Finding] = [
        Claim(
            format=FORMAT,
            path=c.path,
            confidence=c.confidence,
            detail=c.detail,
            label=label_of(c.path),
        )
        for c in claims(path, skipped)
    ]
    found += [unsearchable(folder, why) for folder, why in skipped.items()]
    return found or None


@hookimpl
def default_locations() -> list[Path] | None:
    """The home ``discover(None)`` looks in: ``$HERMES_HOME``, else ``~/.hermes``."""
    from hermes_plugin.source.discovery import default_home

    home = default_home()
    return None if home is None else [home]


@hookimpl
def personal(header: Header, entries: Sequence[Entry]) -> Mapping[str, Sequence[str]] | None:
    """The identity values a session this plugin converted keeps in its ``hermes`` members
    (what its conversion gave as ``personal``): None for a session of another format."""
    if "hermes" not in header.unknown:
        return None
    from hermes_plugin.convert.personal import personal_in_entries

    return personal_in_entries(entries)


@hookimpl
def stamp(claim: Claim) -> str | None:
    """A database at rest: its file's identity, size and times, and this plugin's version."""
    if claim.format != FORMAT:
        return None
    from hermes_plugin.source.stamp import store_stamp

    return store_stamp(claim.path)


@hookimpl
def open_store(claim: Claim) -> StoreHandle | None:
    """Open a claimed database read-only; one that cannot be read raises ``StoreError``."""
    if claim.format != FORMAT:
        return None
    from hermes_plugin.source.handle import HermesHandle

    return HermesHandle(claim.path)


@hookimpl
def read(
    store: StoreHandle, selection: Selection, previews: bool, counting: bool
) -> Iterator[NativeSession | Finding] | None:
    """Each selected session row as a native session (listing data only; the preview, a
    query per session, only when it is shown), then (selecting all) the stray rows; an
    unselected session's messages are never read, and when the host only counts the
    sessions, no message row is."""
    from hermes_plugin.source.handle import HermesHandle

    if not isinstance(store, HermesHandle):
        return None
    from hermes_plugin.source.native import native_sessions

    return native_sessions(store.store, selection, previews=previews, counting=counting)


@hookimpl
def convert(
    store: StoreHandle, sessions: Iterable[NativeSession], selection: Selection
) -> Iterator[ConvertedSession | Finding] | None:
    """Every conversation holding one of ``sessions`` as ASF sessions, then (selecting all)
    the rows of no session and the report's row accounting."""
    from hermes_plugin.source.handle import HermesHandle

    if not isinstance(store, HermesHandle):
        return None
    from hermes_plugin.convert.database import convert_store

    chosen = [s.id for s in sessions]
    return convert_store(store.store, chosen, whole=selection.everything())


@hookimpl
def plan(store: StoreHandle, sessions: Iterable[NativeSession]) -> Iterator[Unit | Finding] | None:
    """The conversations holding one of ``sessions`` as units (one conversation, or several
    naming each other's sub-agents), each with its fingerprint."""
    from hermes_plugin.source.handle import HermesHandle

    if not isinstance(store, HermesHandle):
        return None
    from hermes_plugin.convert.units import plan_units

    # Listed as the units are iterated, after the host forked its workers (docs/hooks.md).
    return plan_units(store, (s.id for s in sessions))


@hookimpl
def finish(
    store: StoreHandle, counts: Mapping[str, int]
) -> Iterator[ConvertedSession | Finding] | None:
    """After the units: loose delegations, the orphans' session and the row accounting."""
    from hermes_plugin.source.handle import HermesHandle

    if not isinstance(store, HermesHandle) or store.planner is None:
        return None
    from hermes_plugin.convert.database import finish as finish_store

    return finish_store(store.store, store.planner, counts)
