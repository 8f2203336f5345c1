"""Where Claude Code keeps sessions, and which paths a user names are ours.

Claude Code writes ``<config>/projects/<project>/<sessionId>.jsonl`` (``<config>`` is
``$CLAUDE_CONFIG_DIR`` when set and not empty, else ``~/.claude``), one directory per working
directory. A session's side files live in ``<project>/<sessionId>/``: sub-agent transcripts
under ``subagents/`` (nested workflow agents deeper, as ``agent-*.jsonl``), their
``agent-*.meta.json``, and files that are not transcripts (``tool-results/``, journals).
Before CLI 2.1.2 sub-agent transcripts were ``agent-*.jsonl`` files in the project directory.

Each project directory is one store. Everything here is cheap and never raises: discovery
runs for every path the user names, whatever it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from attrs import frozen

from asf_core.home import home
from asf_core.walk import files_under
from asf_core.walk import is_dir as _is_dir
from asf_core.walk import is_file as _is_file

__all__ = [
    "AGENT_PREFIX",
    "Found",
    "SessionFiles",
    "closed_default",
    "default_projects",
    "first_session_id",
    "is_agent_file",
    "is_folder_link",
    "project_layout",
    "session_files_of",
    "sniff",
    "stores_at",
]

CONFIG_ENV: Final = "CLAUDE_CONFIG_DIR"
CLAUDE_DIR: Final = ".claude"
PROJECTS: Final = "projects"
SUBAGENTS: Final = "subagents"
AGENT_PREFIX: Final = "agent-"
SUFFIX: Final = ".jsonl"
META_SUFFIX: Final = ".meta.json"

#: Line types only Claude Code writes (transcript entries and bookkeeping lines).
_TYPES: Final = frozenset(
    {
        "user",
        "assistant",
        "system",
        "progress",
        "attachment",
        "summary",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "last-prompt",
        "custom-title",
        "ai-title",
        "agent-name",
        "agent-color",
        "agent-setting",
        "mode",
        "permission-mode",
        "pr-link",
    }
)
#: Members that mark a line as Claude Code's (a bare ``type`` is too common to trust).
_MARKERS: Final = frozenset(
    {"sessionId", "uuid", "parentUuid", "leafUuid", "messageId", "isSidechain", "snapshot"}
)
_UUID: Final = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
#: A line :func:`_head` could not parse.
_UNPARSED: Final = object()
#: How much of a file :func:`sniff` reads at most: lines, and bytes of each (a prompt pasted
#: whole, a log or a file, makes a first line of megabytes; one longer than this ends the
#: look, unparsed).
_SNIFF_LINES: Final = 8
_SNIFF_BYTES: Final = 1 << 24


@frozen
class Found:
    """A store found at a path: a project directory, or one session file."""

    path: Path
    confidence: float
    detail: str


@frozen
class SessionFiles:
    """One session's files in a project directory."""

    #: The session id the files are named by (``<stem>.jsonl``, ``<stem>/``).
    stem: str
    #: The session file; None when only its side directory exists.
    main: Path | None
    #: Sub-agent transcripts, sorted by path.
    agents: tuple[Path, ...] = ()
    #: Files under the session's directory that are not transcripts (not converted).
    side: tuple[Path, ...] = ()


def default_projects() -> Path | None:
    """``$CLAUDE_CONFIG_DIR/projects`` when the variable is set and not empty, else
    ``~/.claude/projects`` (None without either: no home directory at all)."""
    config = os.environ.get(CONFIG_ENV)
    if config:
        return Path(config) / PROJECTS
    user = home()
    return None if user is None else user / CLAUDE_DIR / PROJECTS


def closed_default() -> Path | None:
    """The user's own ``projects`` directory when a permission keeps it from being looked
    at or listed (it, or a directory above it, closed to the user); None otherwise."""
    root = default_projects()
    if root is None:
        return None
    try:
        with os.scandir(root):
            return None
    except PermissionError:
        return root
    except OSError:  # not there, or not a directory: nothing to say
        return None


def meta_path(agent: Path) -> Path:
    """The ``agent-<id>.meta.json`` beside a sub-agent transcript (newer CLIs write one)."""
    return agent.with_name(agent.name[: -len(SUFFIX)] + META_SUFFIX)


def is_agent_file(path: Path) -> bool:
    """A sub-agent transcript's name: ``agent-<id>.jsonl``."""
    return _is_agent_name(path.name)


def _is_agent_name(name: str) -> bool:
    return name.startswith(AGENT_PREFIX) and name.endswith(SUFFIX)


def _is_claude_line(value: object) -> bool | None:
    """True for a Claude Code line, False for an ASF header, None for anything else."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "session" and str(value.get("format", "")).startswith("agentsession/"):
        return False
    if isinstance(kind, str) and kind in _TYPES and any(marker in value for marker in _MARKERS):
        return True
    return None


def _head(path: Path) -> Iterator[tuple[bytes, Any]]:
    """The first few lines of ``path`` (raw, and parsed or ``_UNPARSED``); raises ``OSError``."""
    # The JSON reader loads with the first candidate file, not with every run's discovery.
    from asf_core.canonical import JsonError
    from asf_core.strict_json import parse

    with path.open("rb") as f:
        for _ in range(_SNIFF_LINES):
            raw = f.readline(_SNIFF_BYTES)
            if not raw:
                return
            if len(raw) == _SNIFF_BYTES and not raw.endswith(b"\n"):
                yield raw, _UNPARSED  # what follows is the rest of this line, not lines
                return
            try:
                yield raw, parse(raw)
            except JsonError:
                yield raw, _UNPARSED


def sniff(path: Path) -> bool | None:
    """Whether ``path`` holds Claude Code lines, judged from its first few lines.

    True: a Claude Code line came before anything else recognisable; False: an ASF file, or
    a file that cannot be read or is not text; None: nothing recognisable (empty, other JSON).
    """
    try:
        for raw, value in _head(path):
            if b"\x00" in raw:
                return False
            verdict = _is_claude_line(value)
            if verdict is not None:
                return verdict
    except OSError:
        return False
    return None


def _children(directory: Path) -> list[Path]:
    try:
        return sorted(directory.iterdir())
    except OSError:
        return []


def is_folder_link(path: Path) -> bool:
    """A link to a folder: where a session's directory or its ``subagents/`` should be,
    never followed (Claude Code makes none; one to ``/usr`` would be walked whole)."""
    try:
        return path.is_symlink() and path.is_dir()
    except OSError:
        return False


def _transcripts(project: Path) -> Iterator[Path]:
    """The ``*.jsonl`` files of a project directory and its sessions' sub-agent directories."""
    for child in _children(project):
        if child.suffix == SUFFIX and _is_file(child):
            yield child
        elif _is_dir(agents := child / SUBAGENTS) and not (
            is_folder_link(child) or is_folder_link(agents)
        ):
            yield from files_under(agents, _is_agent_name).files


def _project_claim(project: Path, *, trusted: bool) -> Found | None:
    """A claim on a project directory. In Claude Code's own projects root it is enough that
    the directory holds transcripts; elsewhere the first of them that can be judged must look
    like Claude Code's."""
    for transcript in _transcripts(project):
        if trusted:
            return Found(project, 1.0, "Claude Code project directory")
        verdict = sniff(transcript)
        if verdict is not None:
            return Found(project, 0.9, "Claude Code project directory") if verdict else None
    return None


def _projects_root(root: Path, *, trusted: bool) -> list[Found]:
    found = []
    for project in _children(root):
        if _is_dir(project):
            claim = _project_claim(project, trusted=trusted)
            if claim is not None:
                found.append(claim)
    return found


def _file_claim(path: Path) -> Found | None:
    if path.suffix != SUFFIX:
        return None
    verdict = sniff(path)
    if verdict is True:
        sure = 1.0 if _UUID.fullmatch(path.stem) or is_agent_file(path) else 0.9
        return Found(path, sure, "Claude Code session file")
    if verdict is None and _UUID.fullmatch(path.stem):
        # Named as Claude Code names sessions but nothing to read (empty, only blank or
        # damaged lines): claimed low, so the user hears what is wrong with it.
        return Found(path, 0.2, "named like a Claude Code session file")
    return None


def _session_above(path: Path) -> Path | None:
    """The session file whose side directory holds ``path``, a folder at or below its
    ``subagents/`` (a workflow's run folder ``subagents/workflows/<run>/``, say): it, not a
    project, is what the folder belongs to (its ``journal.jsonl`` is no session). None when
    ``path`` is in no ``subagents/`` folder, or its session's file is not there."""
    folders = [path, *path.parents]
    if not path.is_absolute():  # named from inside it (``.``): its place is the cwd's
        folders += path.absolute().parents
    for folder in folders:
        if folder.name == SUBAGENTS:
            side = folder.parent
            session = side.parent / f"{side.name}{SUFFIX}"
            return session if side.name and _is_file(session) else None
    return None


def stores_at(path: Path | None) -> list[Found]:
    """The Claude Code stores at ``path``: a ``.claude`` (or ``$CLAUDE_CONFIG_DIR``-like)
    directory, a ``projects`` directory, a project directory, a session's side directory,
    one session file, or a home holding ``.claude``; None means the user's own."""
    try:
        if path is None:
            root = default_projects()
            return _projects_root(root, trusted=True) if root and _is_dir(root) else []
        if _is_file(path):
            claim = _file_claim(path)
            return [claim] if claim is not None else []
        if not _is_dir(path):
            return []
        for root in (path / PROJECTS, path / CLAUDE_DIR / PROJECTS):
            if _is_dir(root):
                found = _projects_root(root, trusted=root.parent.name == CLAUDE_DIR)
                if found:
                    return found
        trusted = path.name == PROJECTS and path.parent.name == CLAUDE_DIR
        if trusted or path.name == PROJECTS:
            return _projects_root(path, trusted=trusted)
        session = _session_above(path)
        if session is not None:  # a folder inside a session's side directory
            claim = _file_claim(session)
            return [claim] if claim is not None else []
        claim = _project_claim(path, trusted=path.parent.name == PROJECTS)
        if claim is not None:
            return [claim]
        session = path.parent / f"{path.name}{SUFFIX}"
        if _is_dir(path / SUBAGENTS) and _is_file(session):  # a session's side directory
            claim = _file_claim(session)
            return [claim] if claim is not None else []
        return _projects_root(path, trusted=False)
    except OSError:  # a race with the file system: nothing found is the honest answer
        return []


def _side_files(directory: Path) -> tuple[list[Path], list[Path]]:
    """Sub-agent transcripts and other files under a session's side directory; a link to a
    folder in its place (or in its ``subagents/``'s) is not walked but is itself a side file
    (reported, not converted)."""
    agents: list[Path] = []
    side: list[Path] = []
    if is_folder_link(directory):
        return agents, [directory]
    if is_folder_link(directory / SUBAGENTS):  # the walk below passes over it unsaid
        side.append(directory / SUBAGENTS)
    for file in files_under(directory).files:
        inside = file.relative_to(directory).parts
        if inside[0] == SUBAGENTS and is_agent_file(file):
            agents.append(file)
        elif not (inside[0] == SUBAGENTS and file.name.endswith(META_SUFFIX)):
            side.append(file)
    return agents, side


def session_files_of(main: Path) -> SessionFiles:
    """A session file with the side files beside it (``<stem>/``)."""
    agents, side = _side_files(main.parent / main.stem)
    return SessionFiles(stem=main.stem, main=main, agents=tuple(agents), side=tuple(side))


def is_session_dir(directory: Path) -> bool:
    """A session's side directory: named by a session id, or holding ``subagents/``."""
    return bool(_UUID.fullmatch(directory.name)) or _is_dir(directory / SUBAGENTS)


def project_layout(project: Path) -> tuple[list[SessionFiles], list[Path], list[Path]]:
    """A project directory's sessions (sorted by id), its project-level sub-agent
    transcripts (the layout before CLI 2.1.2) and its other files and directories (not
    converted)."""
    mains: dict[str, Path | None] = {}
    legacy: list[Path] = []
    other: list[Path] = []
    for child in _children(project):
        if _is_file(child):
            if is_agent_file(child):
                legacy.append(child)
            elif child.suffix == SUFFIX:
                mains[child.stem] = child
            else:
                other.append(child)
        elif _is_dir(child):
            if child.name in mains or is_session_dir(child):
                mains.setdefault(child.name, None)
            elif not any(m.stem == child.name for m in project.glob(f"*{SUFFIX}")):
                other.append(child)
        else:  # a FIFO, a socket, a device, a dangling link: reported, never opened
            other.append(child)
    metas = {meta_path(agent) for agent in legacy}  # read into their agents' headers
    other = [path for path in other if path not in metas]
    out = []
    for stem in sorted(mains):
        agents, side = _side_files(project / stem)
        main = mains[stem]
        if main is None and not agents and not side:
            continue
        out.append(SessionFiles(stem=stem, main=main, agents=tuple(agents), side=tuple(side)))
    return out, legacy, other


def first_session_id(path: Path) -> str | None:
    """The ``sessionId`` of the first line of ``path`` that has one (sub-agent transcripts
    carry their parent's)."""
    try:
        for _, value in _head(path):
            sid = value.get("sessionId") if isinstance(value, dict) else None
            if isinstance(sid, str):
                return sid
    except OSError:
        return None
    return None
