"""The store handle: a directory of rollouts (or one rollout file), and the files in it.

Nothing is held open between hooks: each file is opened, read and closed when it is needed,
so a live Codex appending to its rollouts is never disturbed, and nothing is ever written,
locked or moved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from asf_core.formats import readable_store
from asf_core.walk import Walk
from codex_plugin.source.layout import rollouts_under

__all__ = ["CodexStore"]


class CodexStore:
    """A Codex store, read-only: a directory of rollouts, or one rollout file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.is_file = readable_store(path)
        #: The directory files are named from.
        self.root = path.parent if self.is_file else path
        #: Set by the ``plan`` hook: ``read`` then lists rollouts without reading them, and
        #: each unit's job reads its own.
        self.planned = False

    def info(self) -> dict[str, Any]:
        return {"kind": "file" if self.is_file else "directory", "name": self.path.name}

    def close(self) -> None:
        """Nothing is held open."""

    def relative(self, path: Path) -> str:
        """A file's name as units and headers give it: relative to the store's directory."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name

    def files(self) -> Walk:
        """The rollouts, in path order, the folders that could not be searched, and what is
        named like a rollout but is no file."""
        if self.is_file:
            return Walk(files=(self.path,))
        return rollouts_under(self.path)
