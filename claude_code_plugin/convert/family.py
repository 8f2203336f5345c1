"""A session and its sub-agents: who spawned whom, the ASF ids, the order to convert them.

A sub-agent transcript is linked to the call that spawned it: the ``Task`` (or ``Agent``)
result's ``toolUseResult.agentId`` names it, or failing that the ``agent_progress`` lines the
call produced; the call may be in the session file or in another sub-agent's (nesting). The
compaction helper's transcript (``agent-acompact-*``) is spawned by no call: its lines hang
from the session's pre-compaction lines, and it is linked from the compaction it wrote the
summary for. A transcript nothing links is still a child of its session (a ``link`` at the
session's end), and one whose session file is missing converts on its own.

Children are converted before their parents, so that the entry holding a sub-agent's result
can name the sub-agent's last entry in ``parents``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from attrs import define, field

from asf_core.ids import name_uuid, subsession_id
from claude_code_plugin.source.index import FileIndex
from claude_code_plugin.source.layout import AGENT_PREFIX, SUFFIX

__all__ = ["Member", "agent_id", "arrange", "session_id"]

#: Sub-agent ids of the compaction helper start so (``agent-acompact-70d8e7.jsonl``).
HELPER_PREFIX: Final = "acompact"


def session_id(key: str) -> str:
    """A session's ASF id: UUIDv5 (nil namespace) over ``claude-code:<key>``, the key being
    the session id (``<session>/<file>`` for a transcript no call spawned)."""
    return name_uuid(f"claude-code:{key}")


def agent_id(path: Path) -> str:
    """A sub-agent's id as its file names it: ``agent-<id>.jsonl``."""
    name = path.name
    return name[len(AGENT_PREFIX) : -len(SUFFIX)]


@define(eq=False)
class Member:
    """One file of the family, and where it hangs."""

    path: Path
    #: Its name within the store's output (``<session>`` or ``<session>.<agent file>``).
    name: str
    #: What its ASF id is derived from when no call spawned it: the session id, or
    #: ``<session>/<path of the transcript under the session's directory>``.
    key: str
    index: FileIndex
    #: The sub-agent id; None for the session file.
    agent: str | None = None
    #: The file holding the spawning call (or the compaction), and the call's id / the
    #: boundary's position in it.
    holder: Member | None = None
    call: str | None = None
    boundary: int | None = None
    #: Linked from the session file's end (no call or boundary found).
    tail: bool = False
    id: str = ""
    children: list[Member] = field(factory=list)

    @property
    def helper(self) -> bool:
        return self.agent is not None and self.agent.startswith(HELPER_PREFIX)


def _boundary_for(helper: FileIndex, main: FileIndex) -> int | None:
    """The compact boundary of ``main`` the helper transcript summarised for: the boundary
    whose ``logicalParentUuid`` is the line the helper's request hangs from, else the first
    boundary after the latest such line."""
    anchors = [
        main.by_uuid[line.parent]
        for line in helper.lines
        if line.parent is not None and line.parent in main.by_uuid
    ]
    if not anchors:
        return None
    anchor = max(anchors)
    uid = main.lines[anchor].uuid
    for pos, line in enumerate(main.lines):
        if line.boundary and line.logical == uid:
            return pos
    return next((p for p in range(anchor + 1, len(main.lines)) if main.lines[p].boundary), None)


def _spawner(member: Member, holders: Sequence[Member]) -> tuple[Member, str] | None:
    for holder in holders:
        if holder is not member and member.agent in holder.index.spawns:
            return holder, holder.index.spawns[member.agent]
    return None


class _Calls:
    """Which files of a family hold each call, and which calls a result names a sub-agent
    for, indexed once on first use (most families never ask): a family of many sub-agents
    that no result names would otherwise read every file's lines for each."""

    def __init__(self, holders: Sequence[Member]) -> None:
        self.holders = holders
        self._where: dict[str, list[Member]] | None = None
        self._spawning: dict[int, set[str]] = {}

    def holding(self, call: str) -> list[Member]:
        if self._where is None:
            self._where = {}
            for holder in self.holders:
                for line in holder.index.lines:
                    for named in line.calls:
                        at = self._where.setdefault(named, [])
                        if not at or at[-1] is not holder:
                            at.append(holder)
        return self._where.get(call, [])

    def spawning(self, holder: Member) -> set[str]:
        found = self._spawning.get(id(holder))
        if found is None:
            found = self._spawning[id(holder)] = set(holder.index.spawns.values())
        return found


def _named_call(
    member: Member, calls: _Calls, meta_call: Callable[[Member], str | None]
) -> tuple[Member, str] | None:
    """The call a sub-agent's ``.meta.json`` names (``toolUseId``), when a file of the family
    holds it and no result names another sub-agent for it: the link when neither the call's
    result nor progress lines name the agent (a call interrupted before its result could)."""
    call = meta_call(member)
    if call is None:
        return None
    for holder in calls.holding(call):
        if holder is not member and call not in calls.spawning(holder):
            return holder, call
    return None


def _cyclic(member: Member) -> bool:
    seen: set[int] = set()
    node: Member | None = member
    while node is not None:
        if id(node) in seen:
            return True
        seen.add(id(node))
        node = node.holder
    return False


def arrange(
    main: Member | None,
    agents: Sequence[Member],
    meta_call: Callable[[Member], str | None] = lambda member: None,
) -> list[Member]:
    """Link every sub-agent, give every file its ASF id, and return the files children first.
    ``meta_call`` gives the call a sub-agent's ``.meta.json`` names, for one no result names.

    With no session file, each transcript is a session of its own. A second transcript of
    one agent (an older CLI's copy beside the file under ``subagents/``) hangs from the
    session file's end: the call or compaction is the first one's, and so would its id be.
    """
    holders = [m for m in (main, *agents) if m is not None]
    calls = _Calls(holders)
    met: set[str | None] = set()
    for agent in agents:
        if main is None:
            continue
        if agent.agent in met:
            agent.holder, agent.tail = main, True
            continue
        met.add(agent.agent)
        found = None if agent.helper else _spawner(agent, holders)
        if found is None and not agent.helper:
            found = _named_call(agent, calls, meta_call)
        if found is not None:
            agent.holder, agent.call = found
        elif agent.helper and (boundary := _boundary_for(agent.index, main.index)) is not None:
            agent.holder, agent.boundary = main, boundary
        else:
            agent.holder, agent.tail = main, True
    for agent in agents:  # a spawn loop (damaged files): hang the loop's files from the end
        if agent.holder is not None and _cyclic(agent):
            agent.holder, agent.call, agent.tail = main, None, True
    order: list[Member] = []

    def visit(member: Member) -> None:
        for child in member.children:
            visit(child)
        order.append(member)

    for agent in agents:
        if agent.holder is not None:
            agent.holder.children.append(agent)
    roots = [main] if main is not None else list(agents)
    for root in roots:
        _assign_ids(root, None)
        visit(root)
    return order


def _assign_ids(member: Member, parent: Member | None) -> None:
    if parent is None or member.call is None:
        member.id = session_id(member.key)
    else:
        member.id = subsession_id(parent.id, member.call)
    for child in member.children:
        _assign_ids(child, member)
