"""Finding the other sessions a session names (sub-agents) among the files of a directory.

A ``subsession`` link names its child by session id only; the child is another file,
usually beside its parent (``asf convert`` writes a store's sessions under one directory).
:class:`DirectoryIndex` reads the header line of every ``*.jsonl`` file once, when a child is
first looked for, so a child can be found by id, and reads a child only when it is asked for:
an export keeps one session in memory at a time, whatever the size of the directory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from asf_core.reader import FormatError, read_session
from asf_core.session_file import SessionFile
from asf_core.walk import files_under

__all__ = ["DirectoryIndex", "session_files"]


def session_files(root: Path, *, recursive: bool = True) -> list[Path]:
    """The ``*.jsonl`` files under ``root`` (or beside it, not below), in path order."""
    if recursive:  # without recursion: a tree of any depth
        return list(files_under(root, lambda name: name.endswith(".jsonl")).files)
    return sorted(p for p in root.glob("*.jsonl") if p.is_file())


def _header_id(path: Path) -> str | None:
    try:
        with path.open("rb") as stream:
            first = stream.readline()
        header = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    ident = header.get("id") if isinstance(header, dict) else None
    return ident if isinstance(ident, str) and ident else None


class DirectoryIndex:
    """Session id -> file, for every session file under a directory, read when first asked
    (or :meth:`made`): exporting a session that names no other reads no other file's header,
    however many the directory holds."""

    def __init__(self, root: Path, *, recursive: bool = True) -> None:
        self._root = root
        self._recursive = recursive
        self._paths: dict[str, list[Path]] | None = None

    @property
    def paths(self) -> dict[str, list[Path]]:
        """Each session id's files."""
        if self._paths is None:
            paths: dict[str, list[Path]] = {}
            for path in session_files(self._root, recursive=self._recursive):
                ident = _header_id(path)
                if ident is not None:
                    paths.setdefault(ident, []).append(path)
            self._paths = paths
        return self._paths

    def made(self) -> DirectoryIndex:
        """The index, read now (before workers are forked, so each inherits it)."""
        _ = self.paths
        return self

    def path_of(self, session_id: str, near: Path | None = None) -> Path | None:
        """The file holding the session; of several, the one sharing most of ``near``'s
        directories (ids are meant to be unique, but copies of one store are not)."""
        found = self.paths.get(session_id)
        if not found:
            return None
        if near is None or len(found) == 1:
            return found[0]
        home = near.parent.parts
        return max(found, key=lambda p: _shared(p.parent.parts, home))

    def find(self, session_id: str, near: Path | None = None) -> SessionFile | None:
        """The session, read from its file; None when it is not there or cannot be read."""
        path = self.path_of(session_id, near)
        if path is None:
            return None
        try:
            return read_session(path)
        except (FormatError, OSError):
            return None

    def resolver(self, near: Path | None) -> Callable[[str], SessionFile | None]:
        """:meth:`find` for the sessions a file links to."""
        return lambda session_id: self.find(session_id, near)


def _shared(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
