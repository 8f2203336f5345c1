"""The errors the host raises, and the one way an exception becomes a line for people.

A plugin's own error (:class:`~asf_core.formats.StoreError`: the input is damaged) lives in
:mod:`asf_core.formats` beside the other values plugins use; these are the host's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from asf_core.pipeline.host import Candidate

__all__ = ["AmbiguousFormat", "OutputError", "PluginError", "cannot_write", "one_line", "unmade"]


def one_line(exc: BaseException, *, with_type: bool = True) -> str:
    """An exception as one line: its message's lines joined, after its type by default."""
    text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    if not with_type:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def unmade(path: Path, exc: OSError) -> str | None:
    """``cannot create FOLDER: why`` when ``exc`` is the failure to make a folder above
    ``path`` and that folder is the top one missing (its own folder is there): making the
    folders is a write's first step, and that folder is the one to name (``-o /proc/x``
    cannot be made; no file deep inside it is to blame); else None."""
    failed = exc.filename
    if not isinstance(failed, str) or not failed or os.path.lexists(failed):
        return None
    made = Path(failed)
    if made not in path.parents or not made.parent.is_dir():
        return None
    return f"cannot create {failed}: {exc.strerror or exc}"


def cannot_write(path: Path, exc: OSError) -> str:
    """Why ``path`` was not written, as one line naming the folder that could not be made
    (:func:`unmade`) or else the file."""
    return unmade(path, exc) or f"cannot write {path}: {exc.strerror or exc}"


class PluginError(Exception):
    """A plugin raised or broke the hook contract; names the plugin and the hook."""

    def __init__(self, plugin: str, hook: str, problem: str) -> None:
        super().__init__(f"plugin {plugin!r} failed in {hook}: {problem}")
        self.plugin = plugin
        self.hook = hook
        self.problem = problem

    @classmethod
    def from_exception(cls, plugin: str, hook: str, exc: BaseException) -> PluginError:
        error = cls(plugin, hook, one_line(exc))
        error.__cause__ = exc
        return error


class AmbiguousFormat(Exception):
    """Several formats claim one path with the same, highest confidence."""

    def __init__(self, path: Path, candidates: Sequence[Candidate]) -> None:
        names = ", ".join(c.describe() for c in candidates)
        super().__init__(
            f"{path}: claimed with equal confidence by {names}; choose one with --format"
        )
        self.path = path
        self.candidates = tuple(candidates)


class OutputError(Exception):
    """A file of the output cannot be written (the message names it and says why)."""
