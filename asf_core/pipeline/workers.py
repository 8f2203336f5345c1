"""Worker processes that run calls on every core: units' jobs for ``convert``, files for
``verify`` and ``export``.

A message is a module-level function and its arguments, pickled (the function by name); the
worker sends back what the call returns. For a conversion, the host keeps the store open and
plans it (one consistent snapshot, one reader beside a live writer); each unit's
:data:`~asf_core.formats.Job` carries where and how to read the unit, not its rows. A worker
runs it, reading the rows itself, converts and writes the unit's files
(:func:`asf_core.pipeline.units.run_job`) and sends back a small
:class:`~asf_core.pipeline.units.Outcome`; a job that finds the unit no longer as planned
(:class:`~asf_core.formats.NeedsHost`) is run again by the host from its own snapshot. For a
directory of files, :func:`over_files` shares them out in chunks of about equal size and puts
each file's result back in the files' order.

A worker holds at most two jobs: the one it runs and the next, waiting in its pipe, so that
it starts the next as soon as it has sent an outcome, without waiting for the host (busy
planning the next unit, or descheduled: on two cores the host and two workers take turns) to
read the outcome and answer; measured, that wait was a sixth of each worker's time. Only a
small job is sent to wait (a quarter of the pipe's buffer at most, :data:`QUEUED_BYTES`): the
buffer holds it whole, so the host never blocks sending it while the worker, still running,
does not read, and the worker never blocks sending an outcome the host, still sending, does
not read.

Stopping: workers ignore Ctrl-C (the terminal sends it to every process of the group; the host
decides) and turn SIGTERM into an interrupt, so a file being written is abandoned whole (its
temporary file removed). Both signals are blocked from just before each fork until the worker
has its own handlers (pending ones then come), so a worker never runs the host's handlers.
:meth:`Workers.stop` sends them SIGTERM and waits; a worker whose host dies gets SIGTERM from
the kernel (Linux) or end-of-file on its pipe, and exits. No worker outlives the run, and only
whole files are left.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar, cast

# multiprocessing, pickle and signal are imported when workers start (or a job is packed),
# not by every run: one that finds its stores unchanged starts none.
if TYPE_CHECKING:
    import multiprocessing.process
    from multiprocessing.connection import Connection

__all__ = ["MIN_BYTES", "QUEUED_BYTES", "Workers", "by_size", "over_files"]

#: What a worker's calls return.
R = TypeVar("R")
#: What a call over files gives for each file.
F = TypeVar("F")

#: Files smaller than this in all are worked on in the ``asf`` process (:func:`over_files`):
#: starting workers (a fork, a converter each) would cost more than they share out.
MIN_BYTES: Final = 2 * 1024 * 1024
#: About how many chunks of files each worker gets: small enough for the last ones to even
#: out the workers' ends, large enough that sending them costs nothing.
CHUNKS_PER_WORKER: Final = 8

#: The largest job message sent to wait behind the job a worker runs (a larger one waits
#: for the worker to be idle), and no more than a quarter of the pipe's send buffer (a
#: socket pair's: 208 KB on Linux by default; where it cannot be read, none waits).
QUEUED_BYTES: Final = 64 * 1024

#: How long :meth:`Workers.stop` waits for a worker to end on SIGTERM before killing it (a
#: plugin's job that catches every exception swallows the interrupt and runs on).
STOP_WAIT: Final = 10.0

#: ``prctl(PR_SET_PDEATHSIG, ...)``: a signal for the worker when its parent dies (Linux).
_PR_SET_PDEATHSIG = 1


def _stopping() -> frozenset[int]:
    """The signals that stop a run, blocked while a worker starts."""
    import signal

    return frozenset({signal.SIGINT, signal.SIGTERM})


def by_size(sizes: Sequence[int], count: int) -> list[list[int]]:
    """Indices into ``sizes`` in chunks of about ``sum(sizes) / count`` each, the largest
    first: work split for workers so that the last chunks to finish are small ones."""
    target = max(sum(sizes) // max(count, 1), 1)
    chunks: list[list[int]] = []
    current: list[int] = []
    held = 0
    for index in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        current.append(index)
        held += sizes[index]
        if held >= target:
            chunks.append(current)
            current, held = [], 0
    if current:
        chunks.append(current)
    return chunks


def over_files(
    call: Callable[..., list[F]],
    files: Sequence[Path],
    jobs: int,
    *args: object,
    lost: Callable[[Path], F],
) -> list[F]:
    """``call(files, *args)``'s result for each file, in the order of ``files``, with the files
    shared out in chunks of about equal size over up to ``jobs`` workers (``call`` is a
    module-level function giving one result per file of its chunk). A file whose worker died
    gets ``lost(file)``. In this process when there is one job or one file, when the files
    weigh less than :data:`MIN_BYTES`, or when the system starts no worker. Ctrl-C or SIGTERM
    stop the workers before the interrupt goes on."""
    if jobs < 2 or len(files) < 2:
        return call(tuple(files), *args)
    sizes = [_size(file) for file in files]
    if sum(sizes) < MIN_BYTES:
        return call(tuple(files), *args)
    from asf_core.codec import converter

    chunks = by_size(sizes, jobs * CHUNKS_PER_WORKER)
    workers: Workers[list[F] | None] = Workers(min(jobs, len(chunks)), died=None, preload=converter)
    try:
        workers.start()
    except OSError:  # the system starts no process: all in this one
        return call(tuple(files), *args)
    found: list[F | None] = [None] * len(files)
    try:
        for ticket, chunk in enumerate(chunks):
            message = workers.pack(call, tuple(files[i] for i in chunk), *args)
            if message is None:  # pragma: no cover - paths and plain arguments pickle
                raise TypeError(f"cannot send {call.__name__}'s arguments to a worker")
            workers.submit(ticket, message)
        while workers.pending:
            for ticket, result in workers.collect():
                for position, i in enumerate(chunks[ticket]):
                    found[i] = lost(files[i]) if result is None else result[position]
    except BaseException:
        workers.stop()
        raise
    workers.close()
    return cast("list[F]", found)  # every ticket was collected: every file has its result


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # worked on all the same: reading it says what is wrong
        return 0


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _die_with_parent(host: int) -> None:
    """Ask the kernel for SIGTERM when the host dies (Linux), and end now if it already has:
    a host killed while this worker started (before the request) sends nothing."""
    if not sys.platform.startswith("linux"):  # pragma: no cover
        return
    import ctypes
    import signal

    # The process's own symbols, libc's among them: ``ctypes.util.find_library`` would run
    # ``ldconfig -p`` in every worker (about 20 ms each).
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != host:
        raise KeyboardInterrupt


def _serve(conn: Connection, inherited: list[Connection], host: int) -> None:
    """A worker's life: run each call it is sent until told to stop (None) or orphaned."""
    import signal

    code = 0
    try:
        for other in inherited:  # the host's ends of the other workers' pipes
            other.close()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, _interrupt)
        _die_with_parent(host)
        if hasattr(signal, "pthread_sigmask"):  # blocked by the host around the fork
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _stopping())
        while True:
            try:
                message = conn.recv()
            except EOFError:
                break
            if message is None:
                break
            function, args = message
            conn.send(function(*args))
    except (KeyboardInterrupt, BrokenPipeError, EOFError):
        code = 1
    except Exception:  # a defect: shown as one process would show it; its jobs fail as died
        import traceback

        sys.stderr.write("asf: a worker process failed:\n" + traceback.format_exc())
        sys.stderr.flush()
        code = 1
    finally:
        # Never run what the host registered to run at exit (it was forked with us).
        os._exit(code)


def _send_buffer(conn: Connection) -> int:
    """The send buffer of a pipe's end, in bytes; 0 when it cannot be told."""
    import socket

    try:
        with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            size = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    except OSError:
        return 0
    return size if isinstance(size, int) else 0


class Workers(Generic[R]):
    """A fixed number of worker processes, started on first use; jobs go out in the order
    submitted and come back tagged with the ticket they were submitted with.

    ``died`` is what a job gives when its worker dies (killed, out of memory) before
    answering; ``preload`` runs once in this process just before the workers are forked, to
    load what every job needs once for all of them.
    """

    def __init__(self, count: int, *, died: R, preload: Callable[[], object] | None = None) -> None:
        self.count = count
        self._died = died
        self._preload = preload
        self._conns: list[Connection] = []
        self._procs: list[multiprocessing.process.BaseProcess] = []
        self._idle: list[Connection] = []
        #: Per busy worker, the tickets of the jobs sent to it, in the order sent.
        self._busy: dict[Connection, deque[int]] = {}
        self._queue: deque[tuple[int, bytes]] = deque()
        #: The largest job sent to wait in a busy worker's pipe (set when they start).
        self._queued = 0

    def start(self) -> None:
        """Start the workers now (once). They are forked from this process: the host starts
        them when the plugin's ``plan`` hook has returned its units, before it iterates them.
        What the hook loaded before returning (its converting code, code it generated) is in
        every worker, loaded once; what its units' iteration reads (the sessions, the plan),
        which grows with the store, is in none: a worker's size depends on the units it runs,
        not on the store. Fewer start when the system refuses more; none: ``OSError``."""
        if not self._procs:
            self._start()

    def _start(self) -> None:
        import multiprocessing
        import signal

        if self._preload is not None:
            self._preload()
        method = "fork" if sys.platform.startswith("linux") else "spawn"
        ctx: Any = multiprocessing.get_context(method)
        sys.stdout.flush()
        sys.stderr.flush()
        masked = hasattr(signal, "pthread_sigmask")
        if masked:  # until a worker has its own handlers (see the module)
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, _stopping())
        try:
            for _ in range(self.count):
                if not self._fork(ctx):
                    break
        finally:
            if masked:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if not self._procs:
            raise OSError("no worker process could be started")
        self.count = len(self._procs)
        self._queued = min(QUEUED_BYTES, _send_buffer(self._conns[0]) // 4)

    def _fork(self, ctx: Any) -> bool:
        """Start one more worker; False when the system refuses (no file descriptor or
        process left): the ones started do the work."""
        try:
            ours, theirs = ctx.Pipe()
        except OSError:
            return False
        proc = ctx.Process(
            target=_serve, args=(theirs, [*self._conns, ours], os.getpid()), daemon=True
        )
        try:
            proc.start()
        except OSError:
            ours.close()
            return False
        finally:
            theirs.close()
        self._conns.append(ours)
        self._procs.append(proc)
        self._idle.append(ours)
        return True

    def pack(self, function: Callable[..., R], *args: object) -> bytes | None:
        """A call of a module-level ``function`` as the message a worker receives; None when
        it cannot be sent (the caller runs it in this process instead). A plugin's job may
        refuse in any way (its own ``__reduce__``, a value nested too deep), not only as
        ``pickle`` refuses: each is a job for this process, never the run's end."""
        import pickle

        try:
            return pickle.dumps((function, args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # see above
            return None

    def submit(self, ticket: int, message: bytes) -> None:
        self.start()
        self._queue.append((ticket, message))
        self._dispatch()

    @property
    def pending(self) -> int:
        """Jobs submitted whose outcome has not been collected."""
        return len(self._queue) + sum(map(len, self._busy.values()))

    def _dispatch(self) -> None:
        queue = self._queue
        while self._idle and queue:
            if self._send(self._idle.pop(), *queue[0]):
                queue.popleft()
        # Behind the job each busy worker runs, its next one (when small: see the module).
        for conn, tickets in self._busy.items():  # sending adds no worker to it
            if not queue or len(queue[0][1]) > self._queued:
                break
            if len(tickets) == 1 and self._send(conn, *queue[0]):
                queue.popleft()

    def _send(self, conn: Connection, ticket: int, message: bytes) -> bool:
        """Send a job; False when the worker is gone (the job stays queued for another;
        the jobs it held fail when :meth:`collect` finds its pipe closed)."""
        try:
            conn.send_bytes(message)
        except OSError:  # BrokenPipeError, ConnectionResetError: the worker died
            self._lose(conn)
            return False
        self._busy.setdefault(conn, deque()).append(ticket)
        return True

    def _lose(self, conn: Connection) -> None:
        if conn in self._conns:
            self._conns.remove(conn)

    def collect(self) -> Iterator[tuple[int, R]]:
        """Wait until at least one job is done; its ticket and outcome (and any others done).
        A worker that died fails every job it held, and once none is left, every job
        still queued."""
        from multiprocessing.connection import wait

        self._dispatch()
        if not self._busy:  # no worker left to wait for: what is queued can only fail
            while self._queue:
                yield self._queue.popleft()[0], self._died
            return
        for ready in wait(list(self._busy)):
            conn = next(c for c in self._busy if c is ready)
            tickets = self._busy[conn]
            try:
                outcome = conn.recv()
            except (EOFError, OSError):  # the worker died (killed, out of memory)
                del self._busy[conn]
                self._lose(conn)
                for ticket in tickets:
                    yield ticket, self._died
                continue
            ticket = tickets.popleft()
            if not tickets:
                del self._busy[conn]
                self._idle.append(conn)
            self._dispatch()
            yield ticket, outcome
        self._dispatch()

    def close(self) -> None:
        """Let every worker finish and exit."""
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.send(None)
        self._join(timeout=None)

    def stop(self) -> None:
        """Interrupt every worker (a file being written is abandoned whole) and wait for them."""
        for proc in self._procs:
            if proc.is_alive():
                with contextlib.suppress(OSError):
                    proc.terminate()
        self._join(timeout=STOP_WAIT)

    def _join(self, timeout: float | None) -> None:
        for proc in self._procs:
            proc.join(timeout)
            if proc.is_alive():  # not ended on SIGTERM in time: see STOP_WAIT
                proc.kill()
                proc.join()
        for conn in self._conns:
            conn.close()
        self._procs, self._conns, self._idle, self._busy = [], [], [], {}
        self._queue.clear()
