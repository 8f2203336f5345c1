"""What this process flushes to disk, seen through ``os.fsync``: for the tests of the Syncer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def watch_fsync(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the descriptors ``os.fsync`` flushes from now on, in order (from
    ``/proc``), each really flushed too."""
    flushed: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        flushed.append(str(Path(f"/proc/self/fd/{fd}").readlink()))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return flushed
