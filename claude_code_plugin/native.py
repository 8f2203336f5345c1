"""What ``read`` yields: one native session per session file (with its sub-agents), and
what could not be read.

Each session file is indexed here (the first pass, :mod:`claude_code_plugin.source.index`);
the index rides along in the native session for ``convert``, which reads the lines again by
their offsets. Only one session's index is alive at a time when the host streams. A planned
conversion (:mod:`claude_code_plugin.convert.units`) reads nothing here: each unit's job
indexes its own files, and a unit the host carries over is never read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from attrs import field, frozen

from asf_core.formats import Finding, NativeSession
from asf_core.ids import IdError, migrate_ts
from claude_code_plugin.handle import ClaudeStore, Group
from claude_code_plugin.source.index import FileIndex, index_file
from claude_code_plugin.source.layout import SUBAGENTS, SUFFIX

__all__ = ["Native", "index_findings", "indexed", "native_sessions", "when"]


@frozen
class Native:
    """The plugin's own part of a native session."""

    group: Group
    #: The session file's index; None when there is no session file (or it cannot be read).
    index: FileIndex | None
    #: Sub-agent transcripts indexed already (those of a session whose file is missing, read
    #: to list it), by path: the conversion does not read them again.
    agents: dict[Path, FileIndex] = field(factory=dict)
    #: False when ``read`` left the session file unread (a planned conversion): the
    #: conversion reads it and reports what reading it finds, as ``read`` does otherwise.
    read: bool = True


def when(ts: str | None) -> str | None:
    """A timestamp as ASF spells it, or None."""
    if ts is None:
        return None
    with contextlib.suppress(IdError):
        return migrate_ts(ts)
    return None


def index_findings(index: FileIndex, unit: str, session: str) -> list[Finding]:
    """What the first pass found wrong with a file's lines."""
    found: list[Finding] = []
    for line in index.lines:
        where = f"{unit}:{line.number}"
        if line.unreadable is not None:
            what = "truncated last line" if line.truncated else "unreadable line"
            found.append(
                Finding(
                    kind="stray",
                    message=f"{what}, kept as raw text in a custom entry: {line.unreadable}",
                    unit=where,
                    session=session,
                    data={"truncated": line.truncated, "bytes": line.size},
                )
            )
    for pos in index.repeats:
        line = index.lines[pos]
        found.append(
            Finding(
                kind="warning",
                message=f"uuid {line.uuid} repeats the uuid of line "
                f"{index.lines[index.by_uuid[line.uuid or '']].number}; its children hang from "
                "the first",
                unit=f"{unit}:{line.number}",
                session=session,
            )
        )
    return found


def indexed(store: ClaudeStore, main: Path, session: str) -> tuple[FileIndex | None, list[Finding]]:
    """A session file's index (the first pass) and what it found wrong; no index and a stray
    when the file cannot be read."""
    unit = store.relative(main)
    try:
        index = index_file(main)
    except OSError as exc:
        why = f"session file cannot be read: {exc.strerror or exc}"
        return None, [Finding(kind="stray", message=why, unit=unit, session=session)]
    return index, index_findings(index, unit, session)


def _counts(group: Group, index: FileIndex | None) -> dict[str, int]:
    counts = {"lines": 0, "prompts": 0, "responses": 0}
    if index is not None:
        counts["lines"] = len(index.lines)
        counts["prompts"] = sum(
            1
            for line in index.lines
            if line.role == "user"
            and line.prompt
            and not (line.meta or line.summary or line.sidechain)
        )
        counts["responses"] = len(
            {line.msg for line in index.lines if line.role == "assistant" and not line.sidechain}
        )
    counts["subagents"] = len(group.files.agents) + len(group.legacy)
    return counts


def _model(index: FileIndex | None) -> str | None:
    """The model of the session's first response (its own, not a sub-agent's; not the
    ``<synthetic>`` messages Claude Code writes itself)."""
    if index is None:
        return None
    return next(
        (
            line.model
            for line in index.lines
            if line.role == "assistant"
            and not line.sidechain
            and line.model
            and line.model != "<synthetic>"
        ),
        None,
    )


def _native(store: ClaudeStore, group: Group, read: bool) -> NativeSession:
    files = group.files
    findings: list[Finding] = []
    index: FileIndex | None = None
    if files.main is not None:
        if read:
            index, found = indexed(store, files.main, files.stem)
            findings += found
    elif files.agents or group.legacy:
        findings.append(_without_session(store, files.stem))
    # Side files only when they are links to folders.
    linked = (store.project / files.stem, store.project / files.stem / SUBAGENTS)
    findings.extend(
        Finding(
            kind="dropped",
            message="a link to a folder, not followed: not converted"
            if side in linked
            else "not a transcript: not converted",
            unit=store.relative(side),
            session=files.stem,
        )
        for side in files.side
    )
    # Where the session file is missing, its sub-agents' transcripts still tell when and
    # where the session ran (not its title: their prompts are the agents' tasks).
    agents = _agent_indexes(group) if files.main is None and read else {}
    shown = index if index is not None else _merged(agents.values())
    details: dict[str, str] = {}
    if shown is not None and shown.branches:
        details["git_branch"] = shown.branches[0]
    if shown is not None and shown.versions:
        details["version"] = shown.versions[0]
    return NativeSession(
        id=files.stem,
        title=index.display_title() if index is not None else None,
        source=index.entrypoint if index is not None else None,
        started=when(shown.first_ts) if shown is not None else None,
        ended=when(shown.last_ts) if shown is not None else None,
        counts=_counts(group, index),
        rows=len(index.lines) if index is not None else None,
        cwd=shown.cwds[0] if shown is not None and shown.cwds else None,
        model=_model(index),
        details=details,
        findings=findings,
        native=Native(group=group, index=index, agents=agents, read=read),
    )


def _without_session(store: ClaudeStore, stem: str) -> Finding:
    """Why sub-agent transcripts convert as sessions of their own: their session file is
    missing, or (a sub-agent's file named alone) it is there but was not named."""
    found = _session_file_of(store.path, stem) if store.is_file else None
    if found is not None:
        return Finding(
            kind="warning",
            message="a sub-agent's transcript named on its own: converted as a session of "
            f"its own, not as a sub-agent of {found} (name that file or its project "
            "directory to convert them together)",
            unit=store.relative(store.path),
            session=stem,
        )
    return Finding(
        kind="stray",
        message="sub-agent transcripts whose session file is missing: each is "
        "converted as a session of its own",
        unit=store.relative(store.project / stem),
        session=stem,
    )


def _session_file_of(agent: Path, stem: str) -> Path | None:
    """The session file a sub-agent's transcript belongs to, where it is: ``<stem>.jsonl``
    beside it (an older CLI's project-level ``agent-*.jsonl``) or beside its session's folder
    (``<stem>/subagents/...``)."""
    places = [agent.parent, *(d.parent for d in agent.parents if d.name == stem)]
    return next((f for p in places if (f := p / f"{stem}{SUFFIX}").is_file()), None)


def _agent_indexes(group: Group) -> dict[Path, FileIndex]:
    """The readable sub-agent transcripts of a session, indexed (an unreadable one is
    reported by the conversion, which tries it again)."""
    found: dict[Path, FileIndex] = {}
    for path in (*group.files.agents, *group.legacy):
        with contextlib.suppress(OSError):
            found[path] = index_file(path)
    return found


def _merged(indexes: Iterable[FileIndex]) -> FileIndex | None:
    """The times, working directories, branches and versions of several transcripts as one
    index: the earliest start and the latest end, the rest in the order they started; None
    without any."""
    found = sorted(indexes, key=lambda index: (index.first_ts is None, index.first_ts or ""))
    if not found:
        return None
    merged = FileIndex()
    starts = [i.first_ts for i in found if i.first_ts is not None]
    ends = [i.last_ts for i in found if i.last_ts is not None]
    merged.first_ts = min(starts) if starts else None
    merged.last_ts = max(ends) if ends else None
    for index in found:
        for mine, theirs in (
            (merged.cwds, index.cwds),
            (merged.branches, index.branches),
            (merged.versions, index.versions),
        ):
            mine.extend(v for v in theirs if v not in mine)
    return merged


def native_sessions(
    store: ClaudeStore, *, read_files: bool = True
) -> Iterator[NativeSession | Finding]:
    """Each session of the store, in id order, then the files that are not converted.
    Without ``read_files`` (counting), or once the store is planned, no transcript is read:
    the sessions have their id and files alone."""
    read = read_files and not store.planned  # planned: each unit's job reads its own
    groups, other = store.layout()
    for group in groups:
        yield _native(store, group, read)
    for path in other:
        yield Finding(
            kind="dropped",
            message=f"{_what(Path(path))}: not converted",
            unit=store.relative(Path(path)),
        )


def _what(path: Path) -> str:
    """What a path of a project directory that is not converted is, for its finding."""
    try:
        if path.is_dir():
            return "not a session directory"
        return "not a session file" if path.is_file() else "not a regular file or folder"
    except OSError:
        return "not a regular file or folder"
