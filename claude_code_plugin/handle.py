"""The store handle: a project directory (or one session file), and the sessions in it.

Nothing is held open between hooks: each file is opened, streamed and closed when it is
read, so a live Claude Code appending to its files is never disturbed, and nothing is ever
written, locked or moved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attrs import frozen

from asf_core.formats import StoreError, readable_store
from claude_code_plugin.source.layout import (
    SUBAGENTS,
    SessionFiles,
    first_session_id,
    is_agent_file,
    project_layout,
    session_files_of,
)

__all__ = ["ClaudeStore", "Group"]


@frozen
class Group:
    """One native session: a session's files, and what else the listing found about it."""

    files: SessionFiles
    #: Project-level sub-agent transcripts naming this session (the layout before 2.1.2).
    legacy: tuple[Path, ...] = ()


def _project_of(file: Path) -> Path:
    """The project directory of a transcript named alone: its folder, or for a sub-agent's
    under ``<session>/subagents/`` (workflow agents nest deeper) the folder holding the
    session's, as listing the project places it (its headers and names then agree)."""
    if is_agent_file(file):
        for folder in file.absolute().parents:
            if folder.name == SUBAGENTS and folder.parent != folder.parent.parent:
                return folder.parent.parent
    return file.parent


class ClaudeStore:
    """A Claude Code store, read-only: a project directory, or one transcript file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.is_file = readable_store(path)
        #: The project directory the session files are in (named after a working directory).
        self.project = _project_of(path) if self.is_file else path
        #: Its name, as headers give it: the folder's own, however the path was typed (``.``,
        #: a file's name alone, a link of another name).
        self.project_name = self.project.resolve().name
        #: Set by the ``plan`` hook: ``read`` then lists each session's files without reading
        #: them, and each unit's job reads its own (where it runs) and reports what it finds.
        self.planned = False

    def info(self) -> dict[str, Any]:
        return {"kind": "file" if self.is_file else "project", "project": self.project_name}

    def close(self) -> None:
        """Nothing is held open."""

    def relative(self, path: Path) -> str:
        """A file's name as units and headers give it: relative to the project directory
        (compared absolute: a transcript named alone may have a project found above it)."""
        try:
            return path.absolute().relative_to(self.project.absolute()).as_posix()
        except ValueError:
            return path.name

    def layout(self) -> tuple[list[Group], list[Path]]:
        """The store's sessions (sorted by id) and the files that are not converted.

        Project-level ``agent-*.jsonl`` files join the session whose id their lines carry; a
        session directory or agent file whose session file is missing is a group of its own.
        """
        if self.is_file:
            if is_agent_file(self.path):
                stem = first_session_id(self.path) or self.path.stem
                return [Group(SessionFiles(stem=stem, main=None, agents=(self.path,)))], []
            return [Group(session_files_of(self.path))], []
        try:
            sessions, legacy, other = project_layout(self.path)
        except OSError as exc:
            raise StoreError(f"cannot read the directory: {exc.strerror or exc}") from exc
        by_stem = {s.stem: s for s in sessions}
        extra: dict[str, list[Path]] = {}
        for agent in legacy:
            stem = first_session_id(agent) or agent.stem
            extra.setdefault(stem, []).append(agent)
        for stem in extra:
            by_stem.setdefault(stem, SessionFiles(stem=stem, main=None))
        groups = [Group(by_stem[s], tuple(extra.get(s, ()))) for s in sorted(by_stem)]
        return groups, other
