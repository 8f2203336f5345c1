"""``asf export DIR -o DIR -j N``: a directory's files exported on worker processes.

Each worker exports whole files as one process would (its own index of the directory's
sessions, for the links between documents) and keeps what it would have said on stderr; the
host says it in the files' order, so the run prints what a one-process run prints. A worker
that is lost (killed, out of memory) fails its files as unreadable ones fail, and the rest are
exported. The files are shared out by :func:`~asf_core.pipeline.workers.over_files`
(a small directory: in the ``asf`` process).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from asf_core.cli.export import Exporter
from asf_core.cli.output import ExitCode, Fail

__all__ = ["export_chunk", "export_files"]

#: A file's outcome: the lines it said, its exit code, and the message of the failure that
#: stopped the run there (None: it went on).
Done = tuple[list[str], ExitCode, str | None]

#: The export this process runs its files with during a run: the host's own, set for the run
#: (forked workers inherit it with its index of the directory, made once, not once a worker);
#: made from the arguments where none was set (a worker started afresh).
_here: Exporter | None = None


def export_chunk(files: tuple[Path, ...], args: argparse.Namespace) -> list[Done]:
    """A worker's call (or this process's, for all the files): each file exported, its
    outcome in the order given."""
    global _here
    if _here is None:
        _here = Exporter(args)
    export = _here
    kept = export.say, export.code  # the host's, when it runs the files itself
    done: list[Done] = []
    try:
        for path in files:
            said: list[str] = []
            export.say = said.append
            try:
                code = export.export_one(path, to_dir=True)
            except Fail as exc:
                done.append((said, exc.code, str(exc)))
                continue
            done.append((said, code, None))
    finally:
        export.say, export.code = kept
    return done


def _lost(file: Path) -> Done:
    return [f"{file}: not exported: a worker process died"], ExitCode.USAGE, None


def export_files(export: Exporter, files: list[Path]) -> list[Done]:
    """Each file's outcome, in the order of ``files``, from up to ``args.jobs`` workers (or
    ``export`` itself: a small directory)."""
    from asf_core.pipeline.workers import over_files

    global _here
    _here = export
    try:
        return over_files(export_chunk, files, export.args.jobs, export.args, lost=_lost)
    finally:
        _here = None
