"""Exports of ASF sessions to other formats: ATIF trajectories, OpenTelemetry traces and
readable transcripts.

Every target shows one path of a session (root to a chosen entry) and is built from a
:class:`~asf_core.export.paths.PathView`; ``SessionTree(session).view(leaf)`` makes one.
"""

from __future__ import annotations

from asf_core.export.atif_document import (
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
