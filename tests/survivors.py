"""Processes that outlived the run that started them: a test's check that no worker is left."""

from __future__ import annotations

import time
from pathlib import Path


def survivors(marker: Path) -> list[int]:
    """Processes still running whose command line names ``marker`` (an asf worker, forked
    with its run's command line, outliving the run would)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().split(") ", 1)[1][0]
        except OSError:
            continue
        if str(marker).encode() in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


def survivors_after(marker: Path, grace: float = 10.0) -> list[int]:
    """:func:`survivors`, once any still exiting have had ``grace`` seconds to."""
    deadline = time.time() + grace
    while survivors(marker) and time.time() < deadline:
        time.sleep(0.05)
    return survivors(marker)
