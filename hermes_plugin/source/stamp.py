"""The stamp of a whole Hermes database, taken without opening it (the ``stamp`` hook).

A database at rest (no program has it open: no ``-wal``, ``-shm`` or ``-journal`` beside it)
changes only when a writer opens it, and any write changes its size, modification time or
change time (the last cannot be set back). Its stamp is those, with its device and inode, and
the plugin's version: the same stamp promises the same rows, so the same conversion. A
database with side files is in use (Hermes is running, or a writer died mid-transaction):
no stamp, it is read as usual.
"""

from __future__ import annotations

import os
from pathlib import Path

from hermes_plugin.version import converter_version

__all__ = ["store_stamp"]

#: The files SQLite keeps beside a database it has open (or was writing when it died).
SIDE_FILES = ("-wal", "-shm", "-journal")


def store_stamp(path: Path) -> str | None:
    """The stamp of the database at ``path``; None when it is in use or cannot be read."""
    try:
        st = path.stat()
    except OSError:
        return None
    for suffix in SIDE_FILES:
        if os.path.lexists(f"{path}{suffix}"):
            return None
    parts = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return f"{converter_version()}:" + ":".join(map(str, parts))
