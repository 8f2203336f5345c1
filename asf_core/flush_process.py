"""A process of its own that flushes files to disk, for :class:`~asf_core.files.Syncer`.

Flushing from a thread of the converting process costs that process dearly: each flush
leaves and retakes the interpreter's lock three times (open, fsync, close), and every retake
while conversion runs makes the two threads trade the lock (about ten thousand context
switches for the 500 files of a 20k-row store, each one evicting the converter's caches). A
child interpreter has a lock of its own: the converter only writes each path to a pipe,
without waiting.

The child is the same Python, isolated (``-I -S``: no site, no environment, no user code),
with no descriptor of ours (the output's lock, the store's database) and in a session of its
own (a Ctrl-C at the terminal is the parent's to handle; when the parent is gone its pipe
ends and the child flushes what it was given, then exits). It reads NUL-terminated paths and
flushes each as it arrives; an empty path asks how the flushing went since the last one: it
answers ``flushed``, or the first failure (its ``errno`` and path), after which it had
flushed nothing more, as the thread does. One child serves a whole run (:class:`Flushing`):
starting one costs about 10 ms, and a run may convert hundreds of stores; a run that writes a
few files flushes them itself, on a thread. Any other end (it
could not start, was killed, answered nothing) is for the caller to make good by flushing
every file itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import IO, Final

__all__ = ["FlushProcess", "Flushing", "Gone"]

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
        if not path:
            answer.write(b"flushed\0" if failed is None else b"failed\0" + failed + b"\0")
            answer.flush()
            failed = None
        elif failed is None:
            try:
                fd = os.open(path, flags)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as exc:
                failed = b"%d\0" % (exc.errno or 0) + path
"""

#: How long closing waits for the child to exit: at once when it has flushed everything;
#: after an interruption it flushes what it was given on its own, without keeping us.
_EXIT_WAIT = 1.0


class Gone(Exception):
    """The child ended without an answer (or never started): nothing it did can be trusted."""


def _interpreter() -> str | None:
    """This Python's executable, when it is one (an application embedding Python names its
    own program there, which must not be run with Python's options; one that cannot tell
    its executable leaves it empty or None)."""
    exe = sys.executable
    if not isinstance(exe, str) or not exe:
        return None
    name = Path(exe).name.lower()
    return exe if name.startswith(("python", "pypy")) else None


class FlushProcess:
    """One child flushing the paths given to :meth:`add`, in order; :meth:`barrier` waits
    until it has flushed them and says how that went. Adding never waits for the child:
    what its pipe cannot take now waits here and goes with the next path."""

    def __init__(self) -> None:
        """Start the child; :class:`Gone` when it cannot be started (no interpreter to run,
        no process or descriptor left)."""
        exe = _interpreter()
        if exe is None:
            raise Gone("no Python interpreter to run")
        import subprocess  # only a run that writes: an unchanged one never loads it

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
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None  # noqa: S101 - asked for above
        assert stdout is not None  # noqa: S101
        self._stdin: IO[bytes] | None = stdin
        self._stdout = stdout
        try:
            os.set_blocking(stdin.fileno(), False)
        except OSError as exc:  # a platform whose pipes cannot be set so
            self._proc.kill()
            self.close()
            raise Gone(str(exc)) from exc
        self._pending = bytearray()
        self._answers = b""

    def add(self, path: Path) -> None:
        self._pending += os.fsencode(path) + b"\0"
        self._push()

    def _push(self) -> None:
        """Write what the pipe takes now; a child that is gone is found at the barrier."""
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

    def barrier(self) -> OSError | None:
        """Wait until every path given is flushed; the first failure since the last barrier
        (None: every file flushed), or :class:`Gone` when the child did not answer."""
        stdin = self._stdin
        if stdin is None:
            raise Gone("the flushing process is gone")
        try:
            os.set_blocking(stdin.fileno(), True)
            stdin.write(bytes(self._pending) + b"\0")
            stdin.flush()
            os.set_blocking(stdin.fileno(), False)
        except OSError as exc:
            self._close_input()
            raise Gone("the flushing process is gone") from exc
        self._pending.clear()
        return self._answer()

    def _answer(self) -> OSError | None:
        """Read one answer: ``flushed``, or ``failed``, ``errno``, path (NUL-terminated)."""
        while True:
            fields = self._answers.split(b"\0")
            if fields[0] == b"flushed" and len(fields) > 1:
                self._answers = b"\0".join(fields[1:])
                return None
            if fields[0] == b"failed" and len(fields) > 3:
                code, path = fields[1], fields[2]
                self._answers = b"\0".join(fields[3:])
                if not code.isdigit():
                    raise Gone("the flushing process answered nonsense")
                number = int(code)
                strerror = os.strerror(number) if number else "flush failed"
                return OSError(number, strerror, os.fsdecode(path))
            if len(fields) > 1 and fields[0] not in (b"flushed", b"failed"):
                raise Gone("the flushing process answered nonsense")
            chunk = os.read(self._stdout.fileno(), 65536)
            if not chunk:
                raise Gone(f"the flushing process ended ({self._proc.poll()}) without an answer")
            self._answers += chunk

    def close(self) -> None:
        """Let the child go: it exits once nothing of ours can write to it."""
        import subprocess

        self._close_input()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(_EXIT_WAIT)
        with contextlib.suppress(OSError):
            self._stdout.close()


#: How many files of a run its own process flushes (on a thread) before a child is started
#: (a test that watches each flush in this process raises it past the files it writes):
#: starting one costs about 10 ms of CPU and wall time, trading the lock with a thread about
#: 0.8 ms a file while conversion runs. A re-run that rewrites a few sessions starts none.
FIRST_HERE = 16


class Flushing:
    """A run's flushing process, started once the run has written :data:`FIRST_HERE` files
    and shared by the syncers of its stores; :meth:`close` at the run's end.

    ``child`` False: none (a run whose units convert on worker processes: the converting
    process mostly waits for them, and its thread flushes without contention, while a
    third process would take the workers' cores: 3.37 s of CPU and 1.93 s wall against 3.75 s
    and 2.12 s for a fresh ``-j 2`` of the 20k bench home, medians of five)."""

    def __init__(self, *, child: bool = True) -> None:
        self._child: FlushProcess | None = None
        #: No child for this run: none wanted, or none could be had.
        self._off = not child
        self._asked = 0

    def child(self) -> FlushProcess | None:
        """The child to flush the next file (started now if its time has come); None when
        that file is this process's to flush."""
        if self._child is None and not self._off:
            self._asked += 1
            if self._asked <= FIRST_HERE:
                return None
            try:
                self._child = FlushProcess()
            except Gone:
                self._off = True
        return self._child

    def lost(self) -> None:
        """The child failed: let it go and start no other (this process flushes)."""
        if self._child is not None:
            self._child.close()
            self._child = None
        self._off = True

    def close(self) -> None:
        if self._child is not None:
            self._child.close()
            self._child = None
