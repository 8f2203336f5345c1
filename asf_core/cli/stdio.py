"""The descriptors under the standard streams, as another program may hand them over.

A descriptor's ``O_NONBLOCK`` flag belongs to the open pipe, shared with whoever else holds
it: a parent that set it on its end (some runtimes do) sets it on ours. Python then fails a
write to a full pipe (``BlockingIOError``) or, unbuffered (``PYTHONUNBUFFERED``), silently
drops what did not fit; a read returns what happens to be there, so ``asf show -`` would show
half a file. :func:`patient` puts such a stream on a descriptor wrapper that waits until the
pipe is ready instead. The flag itself is left alone: it is not ours to change.

stdout always goes through that wrapper, so that a write it refuses (a terminal hung up:
``EIO``; a full disk) raises :class:`StdoutError`, which the command reports in one line:
an error of the same number elsewhere (reading a store) is another matter.
"""

from __future__ import annotations

import io
import os

TYPE_CHECKING = False  # as typing's, without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from typing import TextIO

    from _typeshed import ReadableBuffer, WriteableBuffer

__all__ = ["StdoutError", "patient"]


class StdoutError(OSError):
    """stdout refused a write (closed, a terminal hung up, no room): what the command has to
    say cannot be said. Not a broken pipe, which ends the run quietly."""


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
            except BrokenPipeError:
                raise
            except OSError as exc:
                if self._fd != 1:
                    raise
                raise StdoutError(exc.errno, exc.strerror) from None

    def _wait(self) -> None:
        import select  # only for such a descriptor: start-up does not load it

        ready = [self._fd]
        select.select([] if self._writing else ready, ready if self._writing else [], [])


def patient(stream: TextIO, fd: int) -> TextIO:
    """``stream`` on a :class:`_Waiting` descriptor when ``fd`` is non-blocking or stdout;
    as it is otherwise."""
    if not isinstance(stream, io.TextIOWrapper):
        return stream
    try:
        if fd != 1 and os.get_blocking(fd):
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
