"""Listing a store: its native sessions as the plugin reads them, nothing converted.

What ``asf list`` shows. The plugin's own ``native`` objects are dropped as soon as a session
is listed, so a listing holds only what people read.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import attrs
from attrs import field, frozen

from asf_core.formats import NativeSession, Selection
from asf_core.pipeline import host
from asf_core.pipeline.host import Candidate
from asf_core.plugins import AsfPluginManager
from asf_core.selecting import filtered

__all__ = ["StoreListing", "list_store"]


@frozen(kw_only=True)
class StoreListing:
    """One store's sessions and how many findings of each kind its plugin reported."""

    format: str
    plugin: str
    path: str
    #: What people call the store (the claim's label, else its path).
    label: str = ""
    store: dict[str, Any] = field(factory=dict)
    sessions: tuple[NativeSession, ...] = ()
    findings: dict[str, int] = field(factory=dict)


def list_store(
    pm: AsfPluginManager, candidate: Candidate, selection: Selection | None = None
) -> StoreListing:
    """The native sessions of one store that ``selection`` picks (default: all), without
    their ``native`` objects, and finding counts.

    Raises :class:`~asf_core.formats.StoreError` for a damaged store and
    :class:`~asf_core.errors.PluginError` when the plugin fails.
    """
    sessions: list[NativeSession] = []
    kinds: Counter[str] = Counter()
    with host.opened(pm, candidate) as store:
        info = host.store_info(candidate.plugin, store)
        wanted = selection or Selection()
        for item in filtered(host.read(pm, candidate.plugin, store, wanted), wanted):
            if isinstance(item, NativeSession):
                sessions.append(attrs.evolve(item, native=None))
                kinds.update(f.kind for f in item.findings)
            else:
                kinds[item.kind] += 1
    return StoreListing(
        format=candidate.claim.format,
        plugin=candidate.plugin,
        path=str(candidate.claim.path),
        label=candidate.label(),
        store=info,
        sessions=tuple(sessions),
        findings=dict(kinds),
    )
