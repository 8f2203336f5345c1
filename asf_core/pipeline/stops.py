"""Why a store's conversion stopped early, as its units and the host say it.

Light to import: :mod:`asf_core.pipeline.conversion` names these for every store, while
:mod:`asf_core.pipeline.units` and :mod:`asf_core.pipeline.planned` (with their attrs classes
and the records they keep) load only for a store that is converted.
"""

from __future__ import annotations

__all__ = ["CHANGED", "DAMAGED", "HOST", "OUTPUT", "PLUGIN", "Stopped"]

#: Why a unit (and so its store) stopped: the plugin said its input is damaged, ...
DAMAGED = "damaged"
#: ... the plugin failed, ...
PLUGIN = "plugin"
#: ... or a file of the output could not be written. Not a stop: the job asked to be run in
#: the host's process (:class:`~asf_core.formats.NeedsHost`).
OUTPUT = "output"
HOST = "host"
#: Not a stop either: the store changed while it was read (the conversion starts again).
CHANGED = "changed"


class Stopped(Exception):
    """A unit stopped its store: why (``damaged``, ``plugin``, ``output``, above)."""

    def __init__(self, failure: str, message: str) -> None:
        super().__init__(message)
        self.failure = failure
