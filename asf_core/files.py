"""Files written whole, and made durable: the one way asf puts a file on disk.

Every file is written to a temporary name beside its target and renamed into place
(:func:`write_atomic`), so an interrupted run leaves either the old file or the new one, never
half of one. A temporary file is named ``.<name>.asf-tmp-<pid>-<16 hex>``. A run killed
outright (SIGKILL, a power cut) cannot remove its own, so the first write into a directory
removes the ones there whose process is gone: only names of that shape, only regular files,
never a file of a process still running (a worker process of a run in progress included).

A conversion writes many files unflushed and hands them to a :class:`Syncer`, which flushes
each file and then their directories: exactly what was written, never the whole machine.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import stat
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final

from asf_core.leftovers import left_by_gone

if TYPE_CHECKING:
    import queue

    from asf_core.flush_process import Flushing, FlushProcess

__all__ = [
    "Syncer",
    "can_write",
    "folder_trouble",
    "open_regular",
    "read_regular",
    "remove_empty",
    "remove_stale_temporaries",
    "temporary_path",
    "writable",
    "write_atomic",
    "write_atomic_stat",
    "write_if_changed",
    "write_if_changed_stat",
]


#: A temporary file of ours: ``.<name>.asf-tmp-<pid>-<16 hex>``.
_TEMPORARY: Final = re.compile(r"\..+\.asf-tmp-([0-9]{1,10})-[0-9a-f]{16}", re.DOTALL)
#: Directories this process has cleaned of stale temporaries (once each is enough).
_cleaned: set[Path] = set()


def temporary_path(path: Path) -> Path:
    """A fresh temporary name beside ``path``, recognisably ours and naming this process.

    The random part comes from ``os.urandom`` as :mod:`secrets` takes it, without loading
    that module (and :mod:`random` with it) into every run."""
    return path.with_name(f".{path.name}.asf-tmp-{os.getpid()}-{os.urandom(8).hex()}")


def remove_stale_temporaries(folder: Path) -> int:
    """Remove the temporary files in ``folder`` left by asf processes that are gone.

    Only regular files named like :func:`temporary_path` names them, and only when the
    process named in them no longer exists; returns how many were removed. A folder that
    cannot be listed is left alone.
    """
    removed = 0
    for item in left_by_gone(folder, _TEMPORARY):
        with contextlib.suppress(OSError):
            if item.is_file(follow_symlinks=False):
                (folder / item.name).unlink()
                removed += 1
    return removed


def can_write(path: Path) -> list[Path]:
    """Whether ``path`` can be written now, as :func:`write_atomic` will: its folder made and
    a temporary file created and removed there (``OSError`` when not), so that a run told
    where to write last finds out first. Returns the folders it made, outermost first."""
    writable(path)
    missing = [*itertools.takewhile(lambda p: not p.exists(), path.parents)][::-1]  # to make
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        probe = temporary_path(path)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        probe.unlink()
    except OSError:
        remove_empty(missing)
        raise
    return missing


def remove_empty(folders: Iterable[Path]) -> None:
    """Remove ``folders`` (outermost first) that are still empty, innermost first."""
    for folder in reversed(list(folders)):
        with contextlib.suppress(OSError):
            folder.rmdir()


def folder_trouble(folder: Path) -> str | None:
    """Why files cannot be written under ``folder`` (made where it is missing), as far as
    can be told without writing anything, naming the folder that stops it (``folder`` or
    the nearest one above it that exists: the one the user can change); None when nothing
    stops it that can be seen."""
    at = folder
    while not os.path.lexists(at):
        if at.parent == at:
            return None
        at = at.parent
    made = "" if at == folder else f"cannot create {folder}: "
    if not at.is_dir():
        return f"{made}{at} is not a directory" if made else None  # -o FILE: said elsewhere
    if os.access(at, os.W_OK | os.X_OK):
        return None
    with contextlib.suppress(OSError):
        if os.statvfs(at).f_flag & os.ST_RDONLY:
            return f"{made}cannot write in {at}: {os.strerror(errno.EROFS)}"
    return f"{made}cannot write in {at}: {os.strerror(errno.EACCES)}"


def writable(path: Path) -> None:
    """Refuse (``OSError``) to replace what is not a regular file: a directory, a device, a
    FIFO, a socket (the rename would put a file in its place, or fail half way)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise OSError(errno.EEXIST, "exists and is not a regular file", str(path))


def open_regular(path: Path) -> BinaryIO:
    """A regular file opened to read; ``OSError`` for anything else. Opened without blocking,
    so a FIFO put in a file's place cannot stall the run, and checked before reading, so
    neither can a device (``/dev/zero`` reads forever)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    stream = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        stream.close()
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return stream


def read_regular(path: Path) -> bytes:
    """The bytes of a regular file; ``OSError`` for anything else (see :func:`open_regular`)."""
    with open_regular(path) as stream:
        return stream.read()


#: The write buffer of a file being written: lines are small and many, and each
#: ``write`` the default buffer (8 KiB) makes is a system call.
_BUFFER = 256 * 1024


def write_atomic(
    path: Path, chunks: Iterable[bytes], *, durable: bool = True, mode: int = 0o666
) -> int:
    """Write ``chunks`` to ``path`` whole or not at all; return the number of bytes written.

    The bytes go to a temporary name in the same directory, then are renamed over ``path``,
    so a reader (or an interrupted run) never sees half a file. With ``durable`` the file is
    flushed to disk before the rename; a caller writing many files may pass False and sync
    once at the end instead (one flush instead of one per file). Creates missing parent
    directories; the first write into a directory removes stale temporaries there. Raises
    ``OSError`` when ``path`` exists and is not a regular file. The file is made with ``mode``
    (the umask takes its part away).
    """
    return write_atomic_stat(path, chunks, durable=durable, mode=mode).st_size


def write_atomic_stat(
    path: Path, chunks: Iterable[bytes], *, durable: bool = True, mode: int = 0o666
) -> os.stat_result:
    """:func:`write_atomic`, returning the status of the file written, taken from the file
    itself before its rename: another process renaming its own file over ``path`` right
    after is never taken for ours (``path.stat()`` afterwards would be)."""
    writable(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent not in _cleaned:
        _cleaned.add(path.parent)
        remove_stale_temporaries(path.parent)
    # The name is chosen before the file exists, so an interrupt at any point (even inside
    # the call that creates it) leaves a name the cleanup below knows.
    tmp = temporary_path(path)
    try:
        # Made with ``mode`` by the opener (``Path.open`` takes none): never readable by more
        # than ``mode`` lets, not even for an instant. ``open`` owns the descriptor as soon
        # as the opener returns it, so an interrupt never closes it twice (``os.fdopen``, in
        # Python, could be interrupted after taking it: a later file's descriptor was closed).
        def made(name: str, flags: int) -> int:
            return os.open(name, flags, mode)

        with open(tmp, "xb", buffering=_BUFFER, opener=made) as out:
            batch: list[bytes] = []
            for chunk in chunks:
                batch.append(chunk)
                if len(batch) >= 256:
                    out.writelines(batch)
                    batch.clear()
            out.writelines(batch)
            out.flush()
            if durable:
                os.fsync(out.fileno())
            status = os.fstat(out.fileno())
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return status


def _prefix_then(old: BinaryIO, size: int, chunk: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    """The first ``size`` bytes of ``old``, then ``chunk``, then ``rest``."""
    old.seek(0)
    left = size
    while left:
        block = old.read(min(left, 1 << 20))
        if not block:  # the old file shrank under us: what we matched is what we read
            raise OSError(f"{old.name}: changed while being compared")
        left -= len(block)
        yield block
    yield chunk
    yield from rest


def write_if_changed(path: Path, chunks: Iterable[bytes]) -> int | None:
    """Write ``chunks`` to ``path`` atomically unless the file already holds exactly these
    bytes; then return None and leave it alone (times and inode too), so a re-run touches only
    sessions that changed. Else return the bytes written.

    The chunks are compared with the old file as they come; only when they differ is a
    temporary file written (the matching prefix copied from the old file). Memory holds one
    chunk at a time, however large the file. Not flushed to disk: the caller syncs a store's
    files together once it is done.
    """
    return write_if_changed_stat(path, chunks)[0]


def write_if_changed_stat(path: Path, chunks: Iterable[bytes]) -> tuple[int | None, os.stat_result]:
    """:func:`write_if_changed`, with the status of the file written or found equal, taken
    from that file (see :func:`write_atomic_stat`): a record made of it names the bytes
    compared, never a file another process renamed into place meanwhile."""

    def written(new: Iterable[bytes]) -> tuple[int, os.stat_result]:
        status = write_atomic_stat(path, new, durable=False)
        return status.st_size, status

    stream = iter(chunks)
    try:
        old = path.open("rb") if path.is_file() else None
    except OSError:
        old = None
    if old is None:
        return written(stream)
    with old:
        matched = 0
        for chunk in stream:
            if old.read(len(chunk)) != chunk:
                return written(_prefix_then(old, matched, chunk, stream))
            matched += len(chunk)
        if old.read(1) == b"":
            return None, os.fstat(old.fileno())
        return written(_prefix_then(old, matched, b"", iter(())))


class Syncer:
    """Flushes the files written to disk while conversion goes on, then (:meth:`finish`)
    every directory from theirs up to the output's: exactly what was written, never the
    whole machine. Flushing file by file costs a disk commit each, time the conversion's
    work now hides.

    Past a run's first few files (:data:`~asf_core.flush_process.FIRST_HERE`) they are
    flushed by a process of its own (:mod:`asf_core.flush_process`; the run's, ``flushing``,
    else one of this syncer's), so that their waits cost the converting process nothing;
    before that, or where no child can be started, by a thread of this process; where no
    thread can be had either (a process limit reached, as ``ulimit -u`` or a container's
    sets), each file as it is added. What a child that ends without an answer was given is
    flushed here.
    """

    def __init__(self, flushing: Flushing | None = None) -> None:
        self._queue: queue.SimpleQueue[Path | None] | None = None
        self._thread: threading.Thread | None = None
        self._flushing = flushing
        self._own = flushing is None
        self._child: FlushProcess | None = None
        #: The files given to the child, for flushing here should it fail.
        self._given: list[Path] = []
        self._dirs: set[Path] = set()
        self._error: OSError | None = None
        self._inline = False

    def _paths(self) -> queue.SimpleQueue[Path | None]:
        """The files for the thread to flush (made on the first: a run that writes nothing
        does not import ``queue``)."""
        if self._queue is None:
            import queue

            self._queue = queue.SimpleQueue()
        return self._queue

    def _child_for_next(self) -> FlushProcess | None:
        """The flushing process, once the run's has started (:class:`Flushing` says when)."""
        if self._flushing is None:
            from asf_core.flush_process import Flushing

            self._flushing = Flushing()
        self._child = self._flushing.child()
        return self._child

    def _here(self, path: Path) -> None:
        """Flush a file from this process: on the thread (started on the first), or at once
        where no thread can be had."""
        if self._thread is None and not self._inline:
            thread = threading.Thread(
                target=self._run, args=(self._paths(),), name="asf-sync", daemon=True
            )
            try:
                thread.start()
            except RuntimeError:  # "can't start new thread"
                self._inline = True
            else:
                self._thread = thread  # only a started thread: finish joins it
        if self._inline:
            self._flush(path)
        else:
            self._paths().put(path)

    def add(self, files: Iterable[Path]) -> None:
        for path in files:
            self._dirs.add(path.parent)
            child = self._child or self._child_for_next()
            if child is not None:
                self._given.append(path)
                child.add(path)
            else:
                self._here(path)

    def _run(self, paths: queue.SimpleQueue[Path | None]) -> None:
        while (path := paths.get()) is not None:
            self._flush(path)

    def _flush(self, path: Path) -> None:
        if self._error is None:
            try:
                _fsync(path, os.O_RDONLY)
            except OSError as exc:
                self._error = exc

    def _finish_files(self) -> None:
        """Wait until every file given is flushed (or one failed)."""
        if self._child is not None:
            from asf_core.flush_process import Gone

            child, given, flushing = self._child, self._given, self._flushing
            self._child, self._given = None, []
            try:
                self._error = self._error or child.barrier()
            except Gone:
                if flushing is not None:
                    flushing.lost()
                for path in given:
                    self._flush(path)
        if self._thread is not None:
            self._paths().put(None)
            self._thread.join()
            self._thread = None
        if self._own and self._flushing is not None:
            self._flushing.close()
            self._flushing = None

    def finish(self, top: Path) -> None:
        """Wait for the files, then flush their directories up to ``top``'s parent;
        ``OSError`` if a flush failed."""
        self._finish_files()
        if self._error is not None:
            raise self._error
        dirs: set[Path] = set()
        for parent in self._dirs:
            while parent not in dirs:
                dirs.add(parent)
                if parent == top.parent or parent == parent.parent:
                    break
                parent = parent.parent
        self._dirs.clear()
        for directory in sorted(dirs, reverse=True):
            _fsync(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))


def _fsync(path: Path, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
