"""Verifying a directory's files, on several cores when it is worth it, with the findings a
single process gives.

Files are verified independently but for subsessions, which a process looks up itself: its own
:class:`~asf_core.verify.session.SessionIndex` over the same candidate files (first lines only,
read when a link first asks), one per run and process, however many chunks of files it gets.
The files are shared out by :func:`~asf_core.pipeline.workers.over_files`, and their findings
put back in the files' order before anything is sorted, so the result is the serial one
whatever finished first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from asf_core.verify.common import Finding
from asf_core.verify.session import SessionIndex, verify_failed, verify_file

__all__ = ["spread", "verify_chunk"]

#: The index this process looks subsessions up in during a run: the host's, set for the run
#: (forked workers inherit it, still unread); made from the arguments where none was set (a
#: worker started afresh).
_index: SessionIndex | None = None


def verify_chunk(files: tuple[Path, ...], candidates: tuple[Path, ...]) -> list[list[Finding]]:
    """A worker's call (or this process's, for all the files): each file's findings, in the
    order given."""
    global _index
    if _index is None:
        _index = SessionIndex(candidates)
    return [verify_file(file, _index) for file in files]


def _lost(file: Path) -> list[Finding]:
    return [verify_failed(file, "a worker process died")]


def spread(files: Sequence[Path], candidates: Sequence[Path], jobs: int) -> list[list[Finding]]:
    """Each file's findings, in the order of ``files``, from up to ``jobs`` worker processes
    (or this one: one job, or a small directory). A worker that dies leaves a
    ``verify-failed`` finding on each file it held, and the others are verified."""
    from asf_core.pipeline.workers import over_files

    global _index
    _index = SessionIndex(candidates)  # this run's, never a later one's (the files change)
    try:
        return over_files(verify_chunk, files, jobs, tuple(candidates), lost=_lost)
    finally:
        _index = None
