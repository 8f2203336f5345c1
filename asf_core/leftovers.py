"""What runs killed outright left behind: names that carry the process id of their maker.

A run that is killed (SIGKILL, a power cut) cannot remove its temporary files or private
copies, so each names them with its process id, and a later run removes those whose process
is gone. Never those of a process still running (another run, its workers): a process id is
alive when the kernel says so, another user's included.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["alive", "left_by_gone"]


def alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, OSError):  # no process can have that number
        return False
    return True


def left_by_gone(folder: str | Path, pattern: re.Pattern[str]) -> list[os.DirEntry[str]]:
    """The entries of ``folder`` whose whole name ``pattern`` matches with a process id as its
    first group, of a process that is neither this one nor alive; none when the folder
    cannot be listed. The caller checks the kind of each before removing it."""
    try:
        listing = list(os.scandir(folder))
    except OSError:
        return []
    gone = []
    for entry in listing:
        found = pattern.fullmatch(entry.name)
        if found is not None and int(found[1]) != os.getpid() and not alive(int(found[1])):
            gone.append(entry)
    return gone
