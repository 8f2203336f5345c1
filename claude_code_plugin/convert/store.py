"""``convert``: each native session (a session file and its sub-agents) as ASF sessions.

A session's family converts children first (see :mod:`claude_code_plugin.convert.family`);
each file is one ASF session whose entries are produced lazily as the host writes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from asf_core.canonical import MAX_DEPTH, JsonError
from asf_core.files import open_regular
from asf_core.formats import ConvertedSession, Finding, NativeSession
from asf_core.model import Header
from asf_core.strict_json import parse, unwritable
from claude_code_plugin import NS
from claude_code_plugin.convert.family import Member, agent_id, arrange
from claude_code_plugin.convert.session import EPOCH, Child, FileJob
from claude_code_plugin.handle import ClaudeStore
from claude_code_plugin.native import Native, index_findings, indexed, when
from claude_code_plugin.source.index import FileIndex, index_file
from claude_code_plugin.source.layout import SUBAGENTS, SUFFIX, meta_path
from claude_code_plugin.source.tree import Links, Plan, plan_file

__all__ = ["convert_sessions", "family"]

JSON = dict[str, Any]


#: The most of a sub-agent's ``.meta.json`` read into its header: real ones hold a few
#: members (its type, a description); a larger one is hostile or damaged, and dropped.
META_BYTES = 1 << 20
#: How deep a ``.meta.json`` may nest: the header holds it two levels down (``claude-code``,
#: ``meta``), and an ASF line nests at most :data:`~asf_core.canonical.MAX_DEPTH` levels.
META_DEPTH = MAX_DEPTH - 2


def _meta(path: Path) -> tuple[Any, str | None]:
    """A sub-agent's ``agent-<id>.meta.json`` (newer CLIs) and None; or None and why the one
    there cannot be kept (not a regular file: a FIFO in its place would stall the conversion,
    a device never end; larger than :data:`META_BYTES`; not JSON; JSON no header can hold).
    None, None: there is none."""
    try:
        with open_regular(meta_path(path)) as stream:
            data = stream.read(META_BYTES + 1)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"
    if len(data) > META_BYTES:
        return None, f"larger than {META_BYTES} bytes"
    try:
        meta = parse(data)
    except JsonError as exc:
        return None, f"not JSON: {exc}"
    why = unwritable(meta, data, room=META_DEPTH)  # the header would be refused: the session lost
    return (None, why) if why is not None else (meta, None)


def _meta_call(member: Member) -> str | None:
    """The spawning call a sub-agent's ``.meta.json`` names (``toolUseId``, CLI 2.1.167 and
    later), if it can be read."""
    meta, _ = _meta(member.path)
    call = meta.get("toolUseId") if isinstance(meta, dict) else None
    return call if isinstance(call, str) and call else None


def _header(store: ClaudeStore, member: Member, stem: str, found: list[Finding]) -> Header:
    """A member's header; what cannot be kept of its sub-agent's ``.meta.json`` is said in
    ``found`` (the session's findings)."""
    index = member.index
    about: JSON = {"session": stem, "project": store.project_name}
    about["file"] = store.relative(member.path)
    if index.branches:
        about["git_branch"] = index.branches[0]
    if index.versions:
        about["versions"] = list(index.versions)
    if index.session_ids != [stem]:
        about["session_ids"] = list(index.session_ids)
    if index.slug is not None:
        about["slug"] = index.slug
    if member.agent is not None:
        about["agent"] = member.agent
        if member.holder is not None and member.call is not None:
            about.update(member.holder.index.tasks.get(member.call, {}))
        meta, why = _meta(member.path)
        if meta is not None:
            about["meta"] = meta
        elif why is not None:
            where = store.relative(meta_path(member.path))
            message = f"sub-agent's {meta_path(member.path).name} {why}: not kept in its header"
            found.append(Finding(kind="dropped", message=message, unit=where, session=stem))
    harness: JSON = {"name": "claude-code"}
    if index.versions:
        harness["version"] = index.versions[0]
    return Header(
        id=member.id,
        created_at=when(index.first_ts) or EPOCH,
        harness=harness,
        cwd=index.cwds[0] if index.cwds else None,
        parent_session=member.holder.id if member.holder is not None else None,
        spawned_by=member.call,
        unknown={NS: about},
    )


def _plan_findings(member: Member, plan: Plan, unit: str, stem: str) -> list[Finding]:
    """What placing the lines in the tree found worth reporting."""
    index = member.index
    outside = member.holder.index.by_uuid if member.holder is not None else {}
    found: list[Finding] = []
    for pos in plan.missing:
        line = index.lines[pos]
        if line.parent in outside:
            continue  # a sub-agent's line hanging from its session's: expected
        found.append(
            Finding(
                kind="warning",
                message=f"parent {line.parent} is not in the file: converted as a root "
                "(the parent is kept in the entry)",
                unit=f"{unit}:{line.number}",
                session=stem,
            )
        )
    for kind, message, positions in (
        (
            "warning",
            "parent written after the line (a loop in the tree): converted as a root",
            plan.forward,
        ),
        ("info", "a branch starts here (the conversation was rewound)", plan.branches),
    ):
        found.extend(
            Finding(
                kind=kind,
                message=message,
                unit=f"{unit}:{index.lines[pos].number}",
                session=stem,
            )
            for pos in positions
        )
    return found


def _counts(index: FileIndex, plan: Plan) -> dict[str, int]:
    lines = index.lines
    return {
        "lines": len(lines),
        "transcript_lines": sum(1 for line in lines if line.transcript),
        "bookkeeping_lines": sum(
            1 for line in lines if not line.transcript and line.unreadable is None
        ),
        "unreadable_lines": sum(1 for line in lines if line.unreadable is not None),
        "responses": len(plan.groups),
        "branches": len(plan.branches),
    }


def _links(children: list[Child], members: list[Member]) -> Links:
    links = Links()
    for n, member in enumerate(members):
        if member.call is not None:
            links.calls.setdefault(member.call, []).append(n)
        elif member.boundary is not None:
            links.boundaries.setdefault(member.boundary, []).append(n)
        else:
            links.tail.append(n)
    return links


def _agent_member(
    store: ClaudeStore,
    stem: str,
    path: Path,
    index: FileIndex | None,
    taken: set[str],
) -> Member | Finding:
    """A sub-agent transcript as a member of its family (``index``: read already). A name
    in ``taken`` (an older CLI's ``agent-<id>.jsonl`` beside the same agent's file under
    ``subagents/``, a copy) gets the first free ``~<n>``, its id's key too; the name is
    then taken."""
    unit = store.relative(path)
    try:
        index = index if index is not None else index_file(path)
    except OSError as exc:
        return Finding(
            kind="stray",
            message=f"sub-agent transcript cannot be read: {exc.strerror or exc}",
            unit=unit,
            session=stem,
        )
    under = f"{stem}/{SUBAGENTS}/"
    inside = unit.removeprefix(under) if unit.startswith(under) else path.name
    name = f"{stem}.{inside[: -len(SUFFIX)].replace('/', '.')}"
    key = f"{stem}/{inside}"
    first_name, first_key, n = name, key, 1
    while name in taken:
        n += 1
        name, key = f"{first_name}~{n}", f"{first_key}~{n}"
    taken.add(name)
    return Member(path, name, key, index, agent=agent_id(path))


def _missing_agents(members: list[Member], stem: str, store: ClaudeStore) -> list[Finding]:
    """Calls that spawned a sub-agent whose transcript is not here."""
    known = {m.agent for m in members if m.agent is not None}
    found = []
    for member in members:
        for agent, call in sorted(member.index.spawns.items()):
            if agent not in known:
                found.append(
                    Finding(
                        kind="warning",
                        message=f"sub-agent {agent} (call {call}) has no transcript here: "
                        "its result is converted, its own conversation cannot be",
                        unit=store.relative(member.path),
                        session=stem,
                        data={"agent": agent, "call": call},
                    )
                )
    return found


def _main_index(store: ClaudeStore, native: Native) -> tuple[FileIndex | None, list[Finding]]:
    """The session file's index: ``read``'s, or, when ``read`` left the file unread, read
    here, with what reading it found (which ``read`` reports otherwise)."""
    main = native.group.files.main
    if native.read or main is None:
        return native.index, []
    return indexed(store, main, native.group.files.stem)


def family(store: ClaudeStore, native: Native) -> Iterator[ConvertedSession | Finding]:
    """One native session's ASF sessions (its file's, then its sub-agents'), with what
    converting them found."""
    files = native.group.files
    stem = files.stem
    index, found = _main_index(store, native)
    yield from found
    main: Member | None = None
    if files.main is not None and index is not None:
        if index.lines:
            main = Member(files.main, stem, stem, index)
        else:
            yield Finding(
                kind="warning",
                message="empty session file: nothing to convert",
                unit=store.relative(files.main),
                session=stem,
            )
    agents: list[Member] = []
    taken = {stem}
    # The current layout's files first: an older CLI's copy of one of them is the one renamed.
    for path in (*sorted(files.agents), *sorted(native.group.legacy)):
        made = _agent_member(store, stem, path, native.agents.get(path), taken)
        if isinstance(made, Finding):
            yield made
        elif not made.index.lines:
            yield Finding(
                kind="warning",
                message="empty sub-agent transcript: nothing to convert",
                unit=store.relative(path),
                session=stem,
            )
        else:
            agents.append(made)
    family = [m for m in (main, *agents) if m is not None]
    yield from _missing_agents(family, stem, store)
    jobs: dict[int, FileJob] = {}
    members = arrange(main, agents, _meta_call)
    # The file standing for the native session (what ``asf show --session`` shows, what the
    # progress line counts): its own, else the last of its sub-agents'.
    holder = main if main is not None else (members[-1] if members else None)
    for member in members:
        unit = store.relative(member.path)
        children = [
            Child(
                id=c.id, agent=c.agent or "", call_id=c.call, job=jobs[id(c)], boundary=c.boundary
            )
            for c in member.children
        ]
        plan = plan_file(member.index, _links(children, member.children))
        cwds, branches = member.index.cwds, member.index.branches
        env = (cwds[0] if cwds else None, branches[0] if branches else None)
        job = FileJob(member.path, member.index, plan, links=children, env=env)
        jobs[id(member)] = job
        findings = _plan_findings(member, plan, unit, stem)
        if member is not main:
            findings[:0] = index_findings(member.index, unit, stem)
        yield ConvertedSession(
            header=_header(store, member, stem, findings),
            entries=job,
            name=member.name,
            sources=[unit],
            counts=_counts(member.index, plan),
            findings=findings,
            native_ids=(stem,) if member is holder else (),
        )


def convert_sessions(
    store: ClaudeStore, sessions: Iterable[NativeSession]
) -> Iterator[ConvertedSession | Finding]:
    """Every native session ``read`` gave, with its sub-agents, one at a time."""
    for session in sessions:
        native = session.native
        if isinstance(native, Native):
            yield from family(store, native)
