"""What a child process shows on a pseudo-terminal, read until it closes it."""

from __future__ import annotations

import os
import select
import subprocess
import time
import unicodedata

__all__ = ["read_terminal", "screen_columns"]


def read_terminal(main_fd: int, proc: subprocess.Popen[bytes], seconds: float = 60) -> bytes:
    """Everything written to the terminal whose main side is ``main_fd`` until ``proc``
    closes it or ends (at most ``seconds``); ``main_fd`` is closed after."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main_fd], [], [], 0.5)
        if ready:
            try:
                data = os.read(main_fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(main_fd)
    return b"".join(chunks)


def screen_columns(line: str) -> int:
    """How many columns a terminal gives ``line``: wide and fullwidth characters take two
    (the tests' own count, not the one asf lays lines out with)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
