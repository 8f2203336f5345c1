"""``asf export DIR -o DIR -j N``: a directory's files exported on worker processes.

Each worker exports whole files as one process would (its own index of the directory's
sessions, for the links between documents) and keeps what it would have said on stderr; the
host says it in the files' order, so the run prints what a one-process run prints. A worker
that is lost (killed, out of memory) fails its files as unreadable ones fail, and the rest are
exported. Below :data:`MIN_BYTES` in all, the files are exported in the ``asf`` process.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from asf_core.cli.export import Exporter
from asf_core.cli.output import ExitCode, Fail

__all__ = ["MIN_BYTES", "export_files"]

#: Files smaller than this in all are exported in this process.
MIN_BYTES: Final = 2 * 1024 * 1024
#: About how many chunks each worker gets (see :mod:`asf_core.verify.spread`).
CHUNKS_PER_WORKER: Final = 8

#: A file's outcome: the lines it said, its exit code, and the message of the failure that
#: stopped the run there (None: it went on).
Done = tuple[list[str], ExitCode, str | None]

#: The export a worker process runs its files with, kept from one chunk to the next.
_here: Exporter | None = None


def export_chunk(args: argparse.Namespace, files: tuple[Path, ...]) -> list[Done]:
    """A worker's call: each file exported, its outcome in the order given."""
    global _here
    if _here is None or _here.args != args:
        _here = Exporter(args)
    export = _here
    done: list[Done] = []
    for path in files:
        said: list[str] = []
        export.say, export.code = said.append, ExitCode.OK
        try:
            export.export_file(path, to_dir=True)
        except Fail as exc:
            done.append((said, exc.code, str(exc)))
            continue
        done.append((said, export.code, None))
    return done


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # exported all the same: reading it says what is wrong
        return 0


def export_files(args: argparse.Namespace, files: list[Path]) -> Iterator[Done]:
    """Each file's outcome, in the order of ``files``, from up to ``args.jobs`` workers (or
    this process, for a small directory)."""
    sizes = [_size(path) for path in files]
    if len(files) < 2 or sum(sizes) < MIN_BYTES:
        yield from export_chunk(args, tuple(files))
        return
    from asf_core.codec import converter
    from asf_core.pipeline.workers import Workers, by_size

    chunks = by_size(sizes, args.jobs * CHUNKS_PER_WORKER)
    found: list[Done | None] = [None] * len(files)
    workers: Workers[list[Done] | None] = Workers(
        min(args.jobs, len(chunks)), died=None, preload=converter
    )
    try:
        workers.start()
    except OSError:  # the system starts no process: exported in this one
        yield from export_chunk(args, tuple(files))
        return
    try:
        for ticket, chunk in enumerate(chunks):
            message = workers.pack(export_chunk, args, tuple(files[i] for i in chunk))
            if message is None:  # pragma: no cover - the arguments always pickle
                raise Fail("cannot hand the files to worker processes: use -j 1")
            workers.submit(ticket, message)
        while workers.pending:
            for ticket, result in workers.collect():
                for position, i in enumerate(chunks[ticket]):
                    found[i] = (
                        ([f"{files[i]}: not exported: a worker process died"], ExitCode.USAGE, None)
                        if result is None
                        else result[position]
                    )
    except BaseException:
        workers.stop()
        raise
    workers.close()
    for outcome in found:
        if outcome is not None:
            yield outcome
