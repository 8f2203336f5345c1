"""Where ``asf export -o`` may write: checked before any document is, so that a refused
target leaves nothing half done and the session read is never written over."""

from __future__ import annotations

from pathlib import Path

from asf_core.cli.output import Fail
from asf_core.errors import OutputError
from asf_core.files import folder_trouble
from asf_core.pipeline.inputs import Inputs

__all__ = ["check_output"]


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
