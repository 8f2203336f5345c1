"""The Hermes Agent format plugin: the hook implementations, nothing else.

Registered under the ``asf.formats`` entry point as ``hermes``. The work lives in the
modules each hook imports when it runs (:mod:`hermes_plugin.source` finds and reads databases,
:mod:`hermes_plugin.convert` maps them);
``docs/formats/hermes.md`` is the mapping. A database that cannot be read raises the host's
``StoreError`` (from ``open_store``, or part way through ``read`` or ``convert``), so the user
is told what is wrong with the file.
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
    file or a tree of homes), or in the user's own home when ``path`` is None; and, at a low
    confidence, each one meant as Hermes' that cannot be read (see
    :func:`hermes_plugin.source.discovery.claims`)."""
    from hermes_plugin.source.discovery import claims

    found = [
        Claim(format=FORMAT, path=c.path, confidence=c.confidence, detail=c.detail)
        for c in claims(path)
    ]
    return found or None


@hookimpl
def open_store(claim: Claim) -> StoreHandle | None:
    """Open a claimed database read-only; one that cannot be read raises ``StoreError``."""
    if claim.format != FORMAT:
        return None
    from hermes_plugin.source.handle import HermesHandle

    return HermesHandle(claim.path)


@hookimpl
def read(store: StoreHandle) -> Iterator[NativeSession | Finding] | None:
    """Each session row as a native session (listing data only), then the stray rows."""
    from hermes_plugin.source.handle import HermesHandle

    if not isinstance(store, HermesHandle):
        return None
    from hermes_plugin.source.native import native_sessions

    return native_sessions(store.store)


@hookimpl
def convert(
    store: StoreHandle, sessions: Iterable[NativeSession]
) -> Iterator[ConvertedSession | Finding] | None:
    """Every conversation holding one of ``sessions`` as ASF sessions, then the report's
    row accounting."""
    from hermes_plugin.source.handle import HermesHandle

    if not isinstance(store, HermesHandle):
        return None
    from hermes_plugin.convert.database import convert_store

    return convert_store(store.store, [s.id for s in sessions])
