"""The stamp of a whole Hermes database, taken without opening it (the ``stamp`` hook).

A database *at rest* (no program has it open: no ``-wal``, ``-shm`` or ``-journal`` beside
it) changes only when a writer opens it, and any write changes its size, modification time or
change time (the last cannot be set back). Its stamp is those, with its device and inode, and
the plugin's version: the same stamp promises the same rows, so the same conversion.

A WAL database *in use* (Hermes running: ``-wal`` and ``-shm`` beside it) takes its commits in
the ``-wal`` file first: each commit appends frames to it (its size grows), and when SQLite
starts the file over after a checkpoint it rewrites the 32-byte header with new salts, while a
checkpoint writes into the database file itself. So the stamp adds the ``-wal`` file's
identity, size, modification time and header to the database file's: while none of them
moves, no commit came. The stamp is taken before the store is opened, so a commit that lands
while the last run read is seen by the next run as a different stamp (converted again), never
missed.

No stamp, so the store is read as usual, for a rollback-journal database with a ``-journal``
(a writer is at work, or died mid-transaction), a ``-wal`` without its ``-shm`` (a writer that
died, or one in exclusive locking mode), or files that cannot be read.
"""

from __future__ import annotations

import os
from pathlib import Path

from hermes_plugin.version import converter_version

__all__ = ["store_stamp"]

#: The files SQLite keeps beside a database it has open (or was writing when it died).
SIDE_FILES = ("-wal", "-shm", "-journal")
#: The size of a WAL file's header (magic, version, page size, checkpoint sequence, salts,
#: checksum).
_WAL_HEADER = 32


def _file(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _wal_part(path: Path) -> str | None:
    """The ``-wal`` file's stat and header; None when it cannot be read."""
    wal = Path(f"{path}-wal")
    try:
        with wal.open("rb") as f:
            st = os.fstat(f.fileno())
            header = f.read(_WAL_HEADER)
    except OSError:
        return None
    # Not its change time: SQLite running as root gives the file its database's owner
    # whenever it opens it (fchown), which moves the change time with no commit.
    parts = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    return ":".join(map(str, parts)) + ":" + header.hex()


def store_stamp(path: Path) -> str | None:
    """The stamp of the database at ``path``; None when it cannot be told (see above)."""
    try:
        st = path.stat()
    except OSError:
        return None
    side = {suffix for suffix in SIDE_FILES if os.path.lexists(f"{path}{suffix}")}
    parts = f"{converter_version()}:" + ":".join(map(str, _file(st)))
    if not side:
        return parts
    if side != {"-wal", "-shm"}:
        return None
    wal = _wal_part(path)
    return None if wal is None else f"{parts}:wal:{wal}"
