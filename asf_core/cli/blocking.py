"""Standard streams whose descriptor another program left non-blocking.

A descriptor's ``O_NONBLOCK`` flag belongs to the open pipe, shared with whoever else holds
it: a parent that set it on its end (some runtimes do) sets it on ours. Python then fails a
write to a full pipe (``BlockingIOError``) or, unbuffered (``PYTHONUNBUFFERED``), silently
drops what did not fit; a read returns what happens to be there, so ``asf show -`` would show
half a file. :func:`patient` puts such a stream on a descriptor wrapper that waits until the
pipe is ready instead. The flag itself is left alone: it is not ours to change.
"""

from __future__ import annotations

import io
import os

TYPE_CHECKING = False  # as typing's, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from typing import TextIO

    from _typeshed import ReadableBuffer, WriteableBuffer

__all__ = ["patient"]


class _Waiting(io.RawIOBase):
    """A descriptor read or written whole, waiting (``select``) while the pipe is not ready."""

    def __init__(self, fd: int, *, writing: bool) -> None:
        self._fd = fd
        self._writing = writing

    def readable(self) -> bool:
        return not self._writing

    def writable(self) -> bool:
        return self._writing

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def readinto(self, buffer: WriteableBuffer) -> int:
        while True:
            try:
                return os.readv(self._fd, [buffer])
            except BlockingIOError:
                self._wait()

    def write(self, data: ReadableBuffer) -> int:
        while True:
            try:
                return os.write(self._fd, data)
            except BlockingIOError:
                self._wait()

    def _wait(self) -> None:
        import select  # only for such a descriptor: start-up does not load it

        ready = [self._fd]
        select.select([] if self._writing else ready, ready if self._writing else [], [])


def patient(stream: TextIO, fd: int) -> TextIO:
    """``stream``, or the same stream waiting for the pipe when ``fd`` is non-blocking."""
    try:
        if os.get_blocking(fd) or not isinstance(stream, io.TextIOWrapper):
            return stream
    except OSError:
        return stream
    writing = fd != 0
    raw = _Waiting(fd, writing=writing)
    binary = io.BufferedWriter(raw) if writing else io.BufferedReader(raw)
    return io.TextIOWrapper(
        binary,
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering or fd == 2,
        write_through=stream.write_through,
    )
