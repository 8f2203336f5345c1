"""One conversion at a time into a store's output directory: an advisory lock beside it.

Two runs converting one store into one output at once (a nightly job overlapping a manual
run) each leave only whole files, but not one state of the store: the run that read it first
may write its files after the other's, over them, and its report last, so the output holds
sessions of two readings until the next run. So ``convert`` takes an exclusive ``flock`` on
``<out>/<format>/.<store label>.lock`` for each store it writes, and a second run waits for
the first to finish that store, then converts it as it is then. Only ``convert`` takes it:
readers (``verify``, ``export``, ``show``) never see half a file anyway.

The lock file is created empty beside the store's directory (never inside it, never one of
the inputs) and left there: removing it would let a waiting run lock a file no longer in
place. The kernel drops the lock when the process ends, however it ends. Where the file cannot
be made (a read-only output: the writes to come say so) or the file system does not lock, the
run goes on unlocked: files are whole without the lock, which only orders runs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from asf_core.errors import OutputError
from asf_core.pipeline.inputs import Inputs

try:
    import fcntl
except ImportError:  # pragma: no cover - no flock on this system (Windows): runs go unlocked
    fcntl = None  # type: ignore[assignment]

__all__ = ["lock_path", "store_lock"]


def lock_path(dest: Path) -> Path:
    """The lock of a store's output directory: beside it, hidden (a store label never starts
    with a dot, so no store's directory has this name)."""
    return dest.with_name(f".{dest.name}.lock")


def _open(path: Path, inputs: Inputs | None) -> int | None:
    """A descriptor of the lock file, created if missing; None when there can be none."""
    try:
        if inputs is not None:
            inputs.check_write(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDONLY | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except (OSError, OutputError):
        return None
    return fd


def _take(fd: int, *, wait: bool) -> bool:
    """Lock ``fd``; False when another process holds the lock and ``wait`` is false. A file
    system that cannot lock counts as locked: the run goes on without."""
    if fcntl is None:  # pragma: no cover
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    except OSError:  # ENOLCK, EOPNOTSUPP, ...: no lock to be had here
        pass
    return True


@contextlib.contextmanager
def store_lock(
    dest: Path, inputs: Inputs | None = None, on_wait: Callable[[Path], None] | None = None
) -> Iterator[None]:
    """Hold the lock of ``dest`` (a store's output directory) inside the ``with`` block;
    when another process holds it, call ``on_wait(dest)`` once and wait for it. A signal
    ends the wait as it ends the run (its exception goes up)."""
    fd = _open(lock_path(dest), inputs)
    if fd is None:
        yield
        return
    try:
        if not _take(fd, wait=False):
            if on_wait is not None:
                on_wait(dest)
            _take(fd, wait=True)
        yield
    finally:
        # Unlocked before closing: a worker forked meanwhile shares the descriptor's lock.
        if fcntl is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
