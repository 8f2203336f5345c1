"""``read``: each rollout file as a native session, with what a listing shows of it."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from attrs import frozen

from asf_core.formats import Finding, NativeSession
from asf_core.ids import name_uuid
from asf_core.walk import is_file
from codex_plugin.handle import CodexStore
from codex_plugin.source.compressed import COMPRESSED, plain_name
from codex_plugin.source.lines import Line, read_lines
from codex_plugin.source.rollout import Facts, claims, facts_of, named_thread

__all__ = ["Native", "Unread", "native_session", "native_sessions", "session_id", "stray"]


@frozen
class Native:
    """What ``convert`` gets back of a session: its file and the facts of the listing."""

    path: Path
    unit: str
    facts: Facts
    #: The ASF session id (the header's).
    asf_id: str


@frozen
class Unread:
    """A rollout ``read`` listed without reading it."""

    path: Path
    unit: str


def session_id(thread: str | None, unit: str) -> str:
    """The ASF session id of a thread: the thread id itself when it is a UUID (Codex's
    are: v7), else a UUIDv5 over ``codex:<thread or file>``."""
    if thread is not None:
        try:
            return str(uuid.UUID(thread)) if len(thread) == 36 else name_uuid(f"codex:{thread}")
        except ValueError:
            return name_uuid(f"codex:{thread}")
    return name_uuid(f"codex:file:{unit}")


def stray(line: Line, unit: str, session: str) -> Finding:
    """A line that cannot be read, as the report says it."""
    what = "truncated last line (still being written?)" if line.truncated else line.problem
    return Finding(
        kind="stray",
        message=f"line not read: {what}",
        unit=f"{unit}:{line.number}",
        session=session,
        data={"bytes": len(line.raw), "truncated": line.truncated},
    )


def native_session(
    store: CodexStore, path: Path, earlier: frozenset[str], lines: Iterable[Line] | None = None
) -> NativeSession | Finding:
    """A rollout as a native session, named by its thread; a finding when it cannot be
    read. ``lines``: the file's, when the caller reads them (an ``OSError`` while they are
    read makes the finding too).

    A rollout is named by its thread alone when its file's name carries that thread's id
    and no earlier rollout's name does (``earlier``, from :func:`claims`): any other of
    the thread (a copy, a renamed or misnamed file) is named by its file too. Names decide,
    not contents, so a unit's job (reading its own file only) names it as a listing does."""
    unit = store.relative(path)
    try:
        facts = facts_of(read_lines(path) if lines is None else lines, path.name)
    except OSError as exc:
        return Finding(
            kind="stray", message=f"cannot read the file: {exc.strerror or exc}", unit=unit
        )
    name = facts.thread or unit
    asf_id = session_id(facts.thread, unit)
    if facts.thread is not None and (
        named_thread(path.name) != facts.thread or facts.thread in earlier
    ):  # a copy of a thread: told apart by its file
        copy = plain_name(unit).removesuffix(".jsonl").replace("/", ".")
        name, asf_id = f"{name}~{copy}", name_uuid(f"codex:{facts.thread}/{unit}")
    details = {
        k: v
        for k, v in (
            ("version", facts.version),
            ("originator", facts.meta.get("originator")),
            ("file", unit),
        )
        if isinstance(v, str)
    }
    relation, parent = None, None
    if facts.forked_from is not None:
        relation, parent = "fork", facts.forked_from
    elif facts.parent_thread is not None:
        relation, parent = "subagent", facts.parent_thread
    findings = [stray(line, unit, name) for line in facts.unreadable]
    if not facts.lines:
        findings.append(Finding(kind="warning", message="empty rollout", unit=unit, session=name))
    based = _based_on(facts.meta.get("history_base"))
    if based is not None:
        findings.append(Finding(kind="warning", message=based, unit=unit, session=name))
    counts = {"lines": facts.lines, "turns": facts.turns}
    if facts.compactions:
        counts["compactions"] = facts.compactions
    return NativeSession(
        id=name,
        source=facts.source,
        started=facts.started,
        ended=facts.ended,
        relation=relation,
        parent=parent,
        counts=counts,
        findings=tuple(findings),
        native=Native(path=path, unit=unit, facts=facts, asf_id=asf_id),
        cwd=facts.cwd,
        details=details,
        model=facts.model,
        rows=facts.lines,
        preview=facts.preview,
    )


def _based_on(base: Any) -> str | None:
    """What the context lacks of a rollout that continues another's history (a paginated
    fork or sub-agent, CLI 0.154+: its header's ``history_base`` names the thread whose
    rollout holds what it inherited, and the file holds only its own lines), or None."""
    if not isinstance(base, dict) or not isinstance(base.get("thread_id"), str):
        return None
    end = base.get("end_ordinal_exclusive")
    upto = f" before ordinal {end}" if type(end) is int else ""
    return (
        f"inherits the history of thread {base['thread_id']}{upto} (history_base), which is "
        "in that thread's rollout and not joined: the context holds this rollout's own lines"
    )


def _not_read(path: Path) -> str:
    """Why a file named like a rollout is not converted: a compressed copy beside its plain
    rollout (the walk's only regular files among what it does not hand over), or no file."""
    if path.name.endswith(COMPRESSED) and is_file(path):
        return (
            f"a compressed copy of {plain_name(path.name)} beside it, which Codex reads "
            "instead: not converted"
        )
    return "not a regular file (a FIFO, a device, a link to a folder or to nothing): not converted"


def native_sessions(store: CodexStore, *, read_files: bool) -> Iterator[NativeSession | Finding]:
    """Each rollout as a native session (or a finding for one that cannot be read), then
    what is named like a rollout but is no file (never opened: a FIFO would stall the run)
    and the folders that could not be searched; without ``read_files`` (counting), or once
    the store is planned, each rollout listed by its name, unread."""
    from asf_core.walk import unsearchable

    walk = store.files()
    for path, earlier in zip(walk.files, claims(p.name for p in walk.files), strict=True):
        if read_files and not store.planned:
            yield native_session(store, path, earlier)
        else:  # counted, or planned: each unit's job reads its own file
            unit = store.relative(path)
            yield NativeSession(id=unit, native=Unread(path=path, unit=unit))
    for path in walk.others:
        yield Finding(kind="dropped", message=_not_read(path), unit=store.relative(path))
    for folder, why in walk.skipped:
        yield unsearchable(folder, why)
