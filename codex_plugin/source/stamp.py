"""The ``stamp`` hook: what a whole Codex store's conversion depends on, read without reading
a rollout.

A store's conversion reads its rollout files and nothing else: the stamp is this plugin's
version, the store's path, and each rollout's name and status (device, inode, mode, size,
modification and change times). Codex only appends to a rollout (a resumed thread too), and
an append changes the size; a new thread adds a file. A folder that cannot be searched gives
no stamp (the store is converted as usual, and says what it passed over).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from asf_core.walk import file_status
from codex_plugin.source.layout import rollouts_under
from codex_plugin.version import converter_version

__all__ = ["store_stamp"]


def store_stamp(path: Path) -> str | None:
    """The stamp of a claimed directory or rollout file; None when a folder in it cannot be
    searched."""
    try:
        if path.is_dir():
            walk = rollouts_under(path)
            if walk.skipped:
                return None
            files = list(walk.files)
        else:
            files = [path]
    except OSError:
        return None
    parts: list[object] = [converter_version(), str(path)]
    parts += [(f.as_posix(), file_status(f)) for f in files]
    return hashlib.sha256(repr(parts).encode()).hexdigest()
