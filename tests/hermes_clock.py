"""Hermes' ``time`` module on a clock of its own, so that a chain of ``SessionDB`` calls writes
the same rows, and asf the same files, on every run (Hermes stamps rows with ``time.time()``)."""

from __future__ import annotations

import time
from typing import Any


class HermesClock:
    """Stands in for ``hermes_state.time``: each reading a quarter second on from the last,
    the rest of the module as it is."""

    def __init__(self) -> None:
        self.now = 1_790_000_000.0

    def time(self) -> float:
        self.now += 0.25
        return self.now

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)
