"""asf_core: the Agent Session Format library and the plugin host of the ``asf`` command.

Format plugins implement the hooks of :mod:`asf_core.hookspecs` with :data:`hookimpl`.

Importing the package loads nothing else (``hookimpl`` brings in pluggy on first use), so the
``asf`` command can install its signal handlers before any heavy import.
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing's, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

    import pluggy

__all__ = ["DISTRIBUTION", "FORMAT", "PAYLOAD", "hookimpl"]

#: The name asf is installed under (``pip install asf-sessions``; "asf" on the package index
#: is another project). The command stays ``asf``, the packages ``asf_core`` and plugins'.
DISTRIBUTION = "asf-sessions"
#: The ASF draft this library writes.
FORMAT = "agentsession/0.11"
#: The payload profile every file this library writes declares.
PAYLOAD = "openresponses/2026-04-24"

#: Marks a format plugin's hook implementations.
hookimpl: pluggy.HookimplMarker


def __getattr__(name: str) -> Any:
    if name == "hookimpl":
        import pluggy

        marker = pluggy.HookimplMarker("asf")
        globals()["hookimpl"] = marker
        return marker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
