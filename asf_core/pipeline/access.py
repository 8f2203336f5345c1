"""A store's output kept no more open than the store: who may read the sessions does not grow
by converting them.

Hermes keeps its home owner-only (``0700``), so its ``state.db`` is private even where the file
itself says ``0644``; the ASF files asf writes are the same conversations, often with secrets in
tool output, and would otherwise get the umask's ``0755`` directories. So a store's output
directory (``<out>/<format>/<label>``, which holds every file of that store) grants its group
and others at most what the store grants them through every directory above it:
:func:`reach` reads that from the mode bits, :func:`keep_within` creates the directory so, or
takes away from an existing one what the store does not grant (it never adds). Best effort: a
directory that cannot be made or changed here is left to the writes that follow, which say
why they fail. POSIX only; elsewhere nothing is done.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = ["keep_within", "reach"]

#: The bits of a directory that let its group, and others, list and enter it.
_GROUP = stat.S_IRGRP | stat.S_IXGRP
_OTHERS = stat.S_IROTH | stat.S_IXOTH


def reach(source: Path) -> int:
    """The group and other bits (of ``0o055``) a directory may have to be no more open than
    ``source``: the group's when every directory above the source lets its group through and
    the source lets it read (a directory also list), the same for others. Nothing when the
    source cannot be looked at."""
    try:
        path = source.resolve()
        mode = path.stat().st_mode
    except (OSError, RuntimeError):  # RuntimeError: a loop of links
        return 0
    listed = stat.S_ISDIR(mode)
    group = mode & stat.S_IRGRP and (not listed or mode & stat.S_IXGRP)
    others = mode & stat.S_IROTH and (not listed or mode & stat.S_IXOTH)
    for parent in path.parents:
        if not (group or others):
            break
        try:
            above = parent.stat().st_mode
        except OSError:
            return 0
        group = group and above & stat.S_IXGRP
        others = others and above & stat.S_IXOTH
    return (_GROUP if group else 0) | (_OTHERS if others else 0)


def keep_within(dest: Path, source: Path) -> None:
    """Make ``dest`` (its parents as usual) open to no one ``source`` is closed to, or take
    from the existing ``dest`` the group and other bits ``source`` does not grant."""
    if os.name != "posix":
        return
    allowed = stat.S_IRWXU | reach(source)
    with contextlib.suppress(OSError):
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            dest.mkdir(mode=allowed)  # the umask may take more away, never less
            return
        except FileExistsError:
            pass
        mode = dest.lstat().st_mode
        if stat.S_ISDIR(mode) and stat.S_IMODE(mode) & ~allowed & 0o077:
            dest.chmod(stat.S_IMODE(mode) & (allowed | ~0o077))
