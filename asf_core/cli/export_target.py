"""Where ``asf export -o`` may write: checked before any document is, so that a refused
target leaves nothing half done and the session read is never written over; and what is
read, with what is wrong in it said."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from asf_core.cli.output import Fail
from asf_core.cli.show_input import read_asf_file
from asf_core.errors import OutputError
from asf_core.files import folder_trouble
from asf_core.pipeline.inputs import Inputs
from asf_core.reader import FormatError
from asf_core.session_file import SessionFile

__all__ = ["check_output", "load_file"]


def check_output(where: Path, source: Path, *, to_dir: bool) -> None:
    """Refuse (:class:`Fail`) a file where a directory is needed, a folder that cannot be
    written (or made), or a document file that ``source`` is (links followed) or that is a
    session file beside it, read for its sub-agents."""
    if to_dir and where.exists() and not where.is_dir():
        raise Fail(f"{where}: exists and is not a directory")
    trouble = folder_trouble(where if to_dir else where.parent)
    if trouble is not None:  # the folder the user can change, not a document deep inside
        raise Fail(trouble)
    if to_dir:
        return
    try:
        Inputs.of([source]).check_write(where)
    except OutputError as exc:
        raise Fail(str(exc)) from exc
    beside = where.name.endswith(".jsonl") and where.is_file()
    if beside and where.resolve().parent == source.resolve().parent:
        why = f"is a session file beside {source}, read for its sub-agents"
        raise Fail(f"{where}: {why}; not written")


def load_file(path: Path, say: Callable[[str], None]) -> SessionFile:
    """The session in ``path``, each problem the reader found in it said as ``asf show``
    says it (a line that does not parse costs its entry, and the documents show the path
    without it: the reader is told why); :class:`Fail` for a file that is not ASF."""
    try:
        session = read_asf_file(path)
    except FormatError as exc:
        raise Fail(f"{path}: not an ASF session file: {exc}") from exc
    for p in session.problems:
        say(f"{path}:{p.line}: {p.severity}: {p.code}: {p.message}")
    return session
