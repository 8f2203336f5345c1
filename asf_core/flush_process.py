"""A process of its own that flushes files to disk, for :class:`~asf_core.files.Syncer`.

Flushing from a thread of the converting process costs that process a third of a
conversion's wall time in CPU: each flush leaves and retakes the interpreter's lock three
times (open, fsync, close), and every retake while conversion runs makes the two threads
trade the lock (about ten thousand context switches for the 500 files of a 20k-row store,
each one evicting the converter's caches). A child interpreter has a lock of its own: the
converter only writes each path to a pipe, without waiting.

The child is the same Python, isolated (``-I -S``: no site, no environment, no user code),
with no descriptor of ours (the output's lock, the store's database) and in a session of its
own (a Ctrl-C at the terminal is the parent's to handle; when the parent is gone its pipe
ends and the child flushes what it was given, then exits). It reads NUL-terminated paths,
flushes each as it arrives, and at the end of its input writes one answer: ``flushed``, or
the first failure (its ``errno`` and path), after which it flushes nothing more, as the
thread does. Any other end (it could not start, was killed, answered nothing) is for the
caller to make good by flushing every file itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import IO, Final

__all__ = ["FlushProcess", "Gone"]

#: What the child runs: standard library only, nothing of asf's.
_CHILD: Final = r"""
import os, sys
source, answer = sys.stdin.buffer, sys.stdout.buffer
# Not blocking: a FIFO put in a file's place cannot stall the flushing (its flush fails).
flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
failed, rest = None, b""
while chunk := source.read1(65536):
    *paths, rest = (rest + chunk).split(b"\0")
    for path in paths:
        if failed is not None:
            continue
        try:
            fd = os.open(path, flags)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            failed = b"%d\0" % (exc.errno or 0) + path
answer.write(b"flushed" if failed is None else b"failed\0" + failed)
answer.flush()
"""


class Gone(Exception):
    """The child ended without an answer (or never started): nothing it did can be trusted."""


def _interpreter() -> str | None:
    """This Python's executable, when it is one (an application embedding Python names its
    own program there, which must not be run with Python's options)."""
    exe = sys.executable
    name = Path(exe).name.lower()
    return exe if exe and name.startswith(("python", "pypy")) else None


class FlushProcess:
    """One child flushing the paths given to :meth:`add`, in order; :meth:`finish` waits for
    it and says how it ended. Adding never waits for the child: what its pipe cannot take
    now waits here and goes with the next path."""

    def __init__(self) -> None:
        """Start the child; :class:`Gone` when it cannot be started (no interpreter to run,
        no process or descriptor left)."""
        exe = _interpreter()
        if exe is None:
            raise Gone("no Python interpreter to run")
        import subprocess

        try:
            self._proc = subprocess.Popen(  # noqa: S603 - this interpreter, our own code
                [exe, "-I", "-S", "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                start_new_session=True,
            )
        except (OSError, ValueError) as exc:
            raise Gone(str(exc)) from exc
        stdin = self._proc.stdin
        assert stdin is not None  # noqa: S101 - asked for above
        self._stdin: IO[bytes] | None = stdin
        os.set_blocking(stdin.fileno(), False)
        self._pending = bytearray()

    def add(self, path: Path) -> None:
        self._pending += os.fsencode(path) + b"\0"
        self._push()

    def _push(self) -> None:
        """Write what the pipe takes now; a child that is gone is found at :meth:`finish`."""
        if self._stdin is None or not self._pending:
            return
        try:
            sent = os.write(self._stdin.fileno(), self._pending)
        except BlockingIOError:
            return
        except OSError:  # BrokenPipeError: the child is gone
            self._close_input()
            return
        del self._pending[:sent]

    def _close_input(self) -> None:
        if self._stdin is not None:
            with contextlib.suppress(OSError):
                self._stdin.close()
            self._stdin = None

    def finish(self) -> OSError | None:
        """Send the rest, wait for the child, and return the first failure it met (None: every
        file flushed); :class:`Gone` when it did not answer."""
        stdin = self._stdin
        if stdin is not None:
            try:
                os.set_blocking(stdin.fileno(), True)
                stdin.write(bytes(self._pending))
            except OSError:
                pass
            self._pending.clear()
            self._close_input()
        stdout = self._proc.stdout
        assert stdout is not None  # noqa: S101 - asked for at the start
        with stdout:
            answer = stdout.read()
        self._proc.wait()
        if answer == b"flushed":
            return None
        kind, _, failure = answer.partition(b"\0")
        code, _, path = failure.partition(b"\0")
        if kind != b"failed" or not code.isdigit() or not path:
            raise Gone(f"the flushing process ended with {self._proc.returncode} and no answer")
        number = int(code)
        return OSError(number, os.strerror(number) if number else "flush failed", os.fsdecode(path))
