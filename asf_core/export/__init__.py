"""Exports of ASF sessions to other formats: ATIF trajectories, OpenTelemetry traces and
readable transcripts.

Every target shows one path of a session (root to a chosen entry) and is built from a
:class:`~asf_core.export.paths.PathView`; ``SessionTree(session).view(leaf)`` makes one.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from asf_core.export.atif_assembly import (
        SubsessionResolver,
        atif_document,
        atif_documents,
    )
    from asf_core.export.otel import otel_request
    from asf_core.export.paths import PathView, SessionTree

__all__ = [
    "PathView",
    "SessionTree",
    "SubsessionResolver",
    "atif_document",
    "atif_documents",
    "otel_request",
]

#: Where each name lives: a command imports the exporter it runs, not every one (``asf show``
#: of a transcript loaded the OpenTelemetry and ATIF code, about 40 ms, before this).
_HOMES = {
    "PathView": "paths",
    "SessionTree": "paths",
    "SubsessionResolver": "atif_assembly",
    "atif_document": "atif_assembly",
    "atif_documents": "atif_assembly",
    "otel_request": "otel",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The names as if they were loaded (``dir()`` and ``help()`` list them)."""
    return sorted({*globals(), *__all__})
