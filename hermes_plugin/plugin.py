"""The Hermes Agent format plugin: the hook implementations, nothing else.

Registered under the ``asf.formats`` entry point as ``hermes``. The work lives in the
modules each hook imports when it runs (discovery, the reader, :mod:`hermes_plugin.convert`);
``docs/formats/hermes.md`` is the mapping.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from asf_core import hookimpl
from asf_core.formats import Claim, ConvertedSession, Finding, NativeSession, StoreHandle

FORMAT = "hermes"


@hookimpl
def discover(path: Path | None) -> list[Claim] | None:
    """Claim each Hermes database at ``path`` (a home, a profile directory, a ``state.db``
    file or a tree of homes), or in the user's own home when ``path`` is None."""
    from hermes_plugin.discovery import databases, default_homes, probe

    if path is None:
        found = [db for home in default_homes() for db in databases(home)]
    else:
        hit = probe(path)
        found = list(hit.databases) if hit is not None else []
    claims = []
    for db in found:
        one = probe(db)
        if one is not None:
            claims.append(
                Claim(format=FORMAT, path=db, confidence=one.confidence, detail=one.detail)
            )
    return claims or None


@hookimpl
def open_store(claim: Claim) -> StoreHandle | None:
    """Open a claimed database read-only; a damaged one raises a one-line error."""
    if claim.format != FORMAT:
        return None
    from hermes_plugin.handle import HermesHandle

    return HermesHandle(claim.path)


@hookimpl
def read(store: StoreHandle) -> Iterator[NativeSession | Finding] | None:
    """Each session row as a native session (listing data only), then the stray rows."""
    from hermes_plugin.handle import HermesHandle

    if not isinstance(store, HermesHandle):
        return None
    from hermes_plugin.native import native_sessions

    return native_sessions(store.store)


@hookimpl
def convert(
    store: StoreHandle, sessions: Iterable[NativeSession]
) -> Iterator[ConvertedSession | Finding] | None:
    """Every conversation holding one of ``sessions`` as ASF sessions, then the report's
    row accounting."""
    from hermes_plugin.handle import HermesHandle

    if not isinstance(store, HermesHandle):
        return None
    from hermes_plugin.convert import convert_store

    return convert_store(store.store, [s.id for s in sessions])
