"""The clock of the tests that check how a cost grows with its input.

Such a test compares two short timings; on a shared, busy machine wall time is decided by
other processes and a full collection by when it happens to fall. CPU time with the
collector off measures the code alone, so a bar set between linear and quadratic holds.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def cpu_seconds(work: Callable[[], T]) -> tuple[float, T]:
    """Run ``work`` once and return the CPU seconds it took, with what it returned."""
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        result = work()
        return time.process_time() - started, result
    finally:
        gc.enable()
