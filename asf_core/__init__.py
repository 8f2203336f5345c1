"""asf_core: the Agent Session Format library and the plugin host of the ``asf`` command.

Format plugins implement the hooks of :mod:`asf_core.hookspecs` with :data:`hookimpl`.
"""

from __future__ import annotations

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
hookimpl = pluggy.HookimplMarker("asf")
