"""Verifying a directory's files on several cores, with the findings a single process gives.

Files are verified independently but for subsessions, which each worker looks up itself: its
own :class:`~asf_core.verify.session.SessionIndex` over the same candidate files (first lines
only, read when a link first asks). The files go out in chunks of about equal size, largest
files first, so that the last chunk to finish is a small one. The findings come back per file
and are put in the files' order before anything is sorted, so the result is the serial one
whatever finished first. Below :data:`MIN_BYTES` in all, starting workers costs more than it
saves (a fork and a converter per worker): the files are verified in this process.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from asf_core.verify.common import Finding
from asf_core.verify.session import SessionIndex, verify_failed, verify_file

__all__ = ["CHUNKS_PER_WORKER", "MIN_BYTES", "spread", "verify_chunk"]

#: Files smaller than this in all are verified in this process.
MIN_BYTES: Final = 2 * 1024 * 1024
#: About how many chunks each worker gets: small enough for the last ones to even out the
#: workers' ends, large enough that sending them costs nothing.
CHUNKS_PER_WORKER: Final = 8


def verify_chunk(files: tuple[Path, ...], candidates: tuple[Path, ...]) -> list[list[Finding]]:
    """A worker's call: each file's findings, in the order given."""
    index = SessionIndex(candidates)
    return [verify_file(file, index) for file in files]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # verified all the same: the reader says why it cannot be read
        return 0


def spread(files: Sequence[Path], candidates: Sequence[Path], jobs: int) -> list[list[Finding]]:
    """Each file's findings, in the order of ``files``, from up to ``jobs`` worker processes.

    Ctrl-C or SIGTERM stop the workers before the interrupt goes on; a worker that dies
    leaves a ``verify-failed`` finding on each file it held, and the others are verified.
    """
    sizes = [_size(file) for file in files]
    if jobs < 2 or len(files) < 2 or sum(sizes) < MIN_BYTES:
        return verify_chunk(tuple(files), tuple(candidates))
    from asf_core.codec import converter
    from asf_core.pipeline.workers import Workers, by_size

    chunks = by_size(sizes, jobs * CHUNKS_PER_WORKER)
    found: list[list[Finding]] = [[] for _ in files]
    lost: list[list[Finding]] | None = None
    workers: Workers[list[list[Finding]] | None] = Workers(
        min(jobs, len(chunks)), died=lost, preload=converter
    )
    try:
        workers.start()
    except OSError:  # the system starts no process: verified in this one
        return verify_chunk(tuple(files), tuple(candidates))
    names = tuple(candidates)
    try:
        for ticket, chunk in enumerate(chunks):
            message = workers.pack(verify_chunk, tuple(files[i] for i in chunk), names)
            if message is None:  # pragma: no cover - paths always pickle
                for i in chunk:
                    found[i] = verify_file(files[i], SessionIndex(candidates))
                continue
            workers.submit(ticket, message)
        while workers.pending:
            for ticket, result in workers.collect():
                chunk = chunks[ticket]
                for position, i in enumerate(chunk):
                    if result is None:
                        found[i] = [verify_failed(files[i], "a worker process died")]
                    else:
                        found[i] = result[position]
    except BaseException:
        workers.stop()
        raise
    workers.close()
    return found
