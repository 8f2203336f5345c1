"""The first pass over a session file: a small record per line, and what ``asf list`` shows.

The file is streamed once; no decoded line is kept. What stays per line is what placing it
in the conversation tree needs (uuid, parent, role, message id, tool ids) and where to read
it again, so memory grows with the number of lines, never with their size. The second pass
(:mod:`claude_code_plugin.convert.session`) reads each line again by its offset.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Container, Iterable
from pathlib import Path
from typing import Any, Final

from attrs import define, field

from asf_core.files import open_regular
from claude_code_plugin.source.lines import RawLine, decode_line, raw_lines
from claude_code_plugin.source.table import (
    ASSISTANT,
    BOUNDARY,
    META,
    PROMPT,
    SIDECHAIN,
    SUMMARY,
    TRUNCATED,
    USER,
    Draft,
    LineTable,
)

__all__ = ["FileIndex", "identity", "index_file", "index_lines", "names_elsewhere", "text_of"]

#: How Claude Code writes a slash command and an input of bash mode as a user message.
_COMMAND: Final = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_ARGS: Final = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_BASH: Final = re.compile(r"<bash-input>(.*?)</bash-input>", re.DOTALL)
#: Line types that carry a conversation message.
ROLES: Final = frozenset({"user", "assistant"})
#: Bookkeeping line types that name the session, and the member holding the name; a later
#: type in this order wins over an earlier one (a title the user chose over a generated one).
TITLES: Final = {"summary": "summary", "ai-title": "aiTitle", "custom-title": "customTitle"}
#: How texts Claude Code writes as user messages begin (command and caveat markup, notices
#: of an interruption): not what the user typed, so no title.
_NOT_TYPED: Final = ("<", "[Request interrupted")
#: Of those, the ones Claude Code writes: its tags are lowercase words joined by ``-`` or ``_``
#: (``<command-name>``, ``<local-command-stdout>``, ``<ide_opened_file>``); a prompt that
#: begins with another tag (``<div>``, ``<T>``) was typed.
_MARKUP: Final = re.compile(r"\s*(?:<[a-z]+(?:[-_][a-z]+)+[\s/>]|\[Request interrupted)")
#: How newer CLIs (2.1.278) write pasted text into a prompt: ``<pasted_content id="…">``, the
#: paste on its own lines, ``</pasted_content id="…">`` (with blank lines around). The paste
#: is what the user gave (Claude Code's own ``last-prompt`` line holds it unwrapped and
#: stripped), not the CLI's markup.
_PASTE: Final = re.compile(
    r'<pasted_content id="([^"]*)">\n?(.*?)\n?</pasted_content id="\1">', re.DOTALL
)
#: How a background sub-agent's work comes back: a user line (the CLI's) holding
#: ``<task-notification>`` with the agent's id as ``<task-id>``.
_NOTICE: Final = re.compile(r"<task-notification>\s*<task-id>([^<\s]+)</task-id>")
#: The tools that spawn a sub-agent.
_TASK_TOOLS: Final = ("Task", "Agent")
#: Where a spawning call's input names the sub-agent's type: ``subagent_type``, or
#: ``agentType`` (the ``Agent`` calls of CLI 2.1.212 name it so).
_TASK_TYPE: Final = ("subagent_type", "agentType")


def _intern(value: Any) -> str | None:
    return sys.intern(value) if isinstance(value, str) else None


@define
class FileIndex:
    """One file's lines and the facts a listing shows."""

    lines: LineTable = field(factory=LineTable)
    #: ``uuid`` -> position in ``lines`` of the first line carrying it.
    by_uuid: dict[str, int] = field(factory=dict)
    #: Positions of lines repeating a uuid already seen.
    repeats: list[int] = field(factory=list)
    #: Bytes indexed (the second pass reads no further, whatever was appended since).
    size: int = 0
    first_ts: str | None = None
    last_ts: str | None = None
    #: Distinct values in order of appearance.
    cwds: list[str] = field(factory=list)
    branches: list[str] = field(factory=list)
    versions: list[str] = field(factory=list)
    session_ids: list[str] = field(factory=list)
    agent_ids: list[str] = field(factory=list)
    entrypoint: str | None = None
    slug: str | None = None
    #: The latest explicit title (``custom-title`` over ``ai-title`` over ``summary``).
    title: str | None = None
    title_rank: int = -1
    #: ``summary`` lines (``leafUuid``, None when it names no leaf; title), in file order: one
    #: of a leaf titles this file only if its leaf is here, which is known once the file is
    #: read; the latest that does is the title when no other kind gives one.
    leaf_titles: list[tuple[str | None, str]] = field(factory=list)
    #: The first typed prompt that is not command markup, the first command (or bash-mode
    #: input) as Claude Code names a session by it, and the first prompt that begins with a
    #: tag not of Claude Code's markup (as typed: HTML, ``<T>``).
    first_plain_prompt: str | None = None
    first_command: str | None = None
    first_tagged: str | None = None
    #: Sub-agent id -> the tool use id of the call that spawned it (from the Task result's
    #: ``toolUseResult.agentId``, else from its ``agent_progress`` lines).
    spawns: dict[str, str] = field(factory=dict)
    #: The sub-agents ``spawns`` has from a Task result: the first such result names the
    #: spawning call (a later one, resuming the agent, does not).
    spawned_by_result: set[str] = field(factory=set)
    #: Compact boundary position -> the uuid of the first message its compaction kept as it
    #: was after its summary (``compactMetadata.preservedSegment.headUuid``).
    kept_heads: dict[int, str] = field(factory=dict)
    #: Tool use id -> ``subagent_type`` and ``description`` of a call that spawns a sub-agent.
    tasks: dict[str, dict[str, str]] = field(factory=dict)
    #: The sub-agents ``spawns`` has from a result launching them in the background
    #: (``toolUseResult.isAsync``): their work returns later, in a ``<task-notification>``.
    async_agents: set[str] = field(factory=set)
    #: Sub-agent id -> the positions (and timestamps) of the user lines bringing its
    #: ``<task-notification>`` (``<task-id>`` the agent's id), in file order.
    notices: dict[str, list[tuple[int, str | None]]] = field(factory=dict)
    counts: dict[str, int] = field(factory=dict)

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def display_title(self) -> str | None:
        return self.title or self.first_plain_prompt or self.first_command or self.first_tagged


def names_elsewhere(obj: dict[str, Any], uuids: Container[str]) -> bool:
    """Whether ``obj`` is a ``summary`` of a leaf that is not among ``uuids`` (a file's).

    Claude Code 1.0 wrote, at the top of a new session's file, one ``summary`` line for each
    earlier conversation of the project, its ``leafUuid`` naming that conversation's last
    message in another file: such a line titles that conversation, not this file's.
    """
    return obj.get("type") == "summary" and _elsewhere(obj.get("leafUuid"), uuids)


def _elsewhere(leaf: object, uuids: Container[str]) -> bool:
    """Whether a ``summary``'s ``leafUuid`` names a message that is not among ``uuids``: a
    string that is not one of them (one that is no string names nothing)."""
    return isinstance(leaf, str) and leaf not in uuids


def _command_title(text: str) -> str | None:
    """A command's name and arguments (``/review parser``), ``! <command>`` for an input of
    bash mode, as Claude Code's session list shows them; None for other markup (a command's
    output, a caveat, a notice)."""
    command = _COMMAND.search(text)
    if command is not None:
        args = _ARGS.search(text)
        given = args.group(1).strip() if args is not None else ""
        return f"{command.group(1)} {given}" if given else command.group(1)
    bash = _BASH.search(text)
    return f"! {bash.group(1).strip()}" if bash is not None else None


def _remember(values: list[str], value: str | None) -> None:
    if value is not None and (not values or values[-1] != value) and value not in values:
        values.append(value)


def _texts(content: Any) -> list[str] | None:
    """A message content's texts: a string is one text, a list gives those of its text blocks; None
    for content of another type."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    return None


def text_of(content: Any) -> str | None:
    """The text of a message's content: a string, or its text blocks joined."""
    texts = _texts(content)
    return "\n".join(texts) if texts else None


def _prompt_text(content: Any) -> str | None:
    """The text a prompt names its session by: its text blocks (a string content is one),
    pasted text unwrapped, joined; a block that is the CLI's markup is left out when another
    is not. IDEs send what the editor shows (``<ide_opened_file>``, ``<ide_selection>``) as
    blocks of their own before the typed text, which alone says what the user asked."""
    texts = _texts(content)
    if texts is None:
        return None
    texts = [_PASTE.sub(r"\2", t).strip() if "<pasted_content" in t else t for t in texts]
    typed = [t for t in texts if _MARKUP.match(t) is None]
    return "\n".join(typed or texts) if texts else None


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]] | str | None:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return [b if isinstance(b, dict) else {} for b in content]
    return None


def _response_key(message_id: Any, request_id: Any) -> str | None:
    """What ties the lines of one API response together: its ``message.id`` and, when the
    line has one, its ``requestId``.

    Anthropic gives every response its own message id, but a transcript whose ids were
    anonymised (``"id": "REDACTED"`` on every message, as published copies have) would
    otherwise merge distinct calls into one response and bind their results to the wrong calls.
    """
    if not isinstance(message_id, str):
        return None
    return f"{message_id} {request_id}" if isinstance(request_id, str) else message_id


def _task(block: dict[str, Any]) -> dict[str, str]:
    """What a ``tool_use`` spawning a sub-agent says of it: its ``subagent_type`` and
    ``description``; empty for a call of another tool (one naming no type and not a ``Task``
    or ``Agent`` call)."""
    task = block.get("input")
    if not isinstance(task, dict):
        return {}
    kind = next((task[k] for k in _TASK_TYPE if isinstance(task.get(k), str)), None)
    if kind is None and block.get("name") not in _TASK_TOOLS:
        return {}
    about = {"subagent_type": kind} if kind is not None else {}
    if isinstance(task.get("description"), str):
        about["description"] = task["description"]
    return about


def _notices(texts: Iterable[str], obj: dict[str, Any], index: FileIndex) -> None:
    """Note the sub-agents whose ``<task-notification>`` the line being read brings."""
    for task in sorted({m.group(1) for t in texts for m in _NOTICE.finditer(t)}):
        stamp = obj.get("timestamp")
        at = (len(index.lines), stamp if isinstance(stamp, str) else None)
        index.notices.setdefault(sys.intern(task), []).append(at)


def _fill_message(line: Draft, obj: dict[str, Any], index: FileIndex) -> None:
    """Role, message id, tool ids and prompt text of a user or assistant line."""
    message = obj.get("message")
    blocks = _blocks(message) if isinstance(message, dict) else None
    if message is None or blocks is None:
        return  # no usable message: kept whole, outside the conversation
    line.set(ASSISTANT if obj["type"] == "assistant" else USER, True)
    if obj["type"] == "assistant":
        line.msg = _intern(_response_key(message.get("id"), obj.get("requestId")))
        line.model = _intern(message.get("model"))
        if isinstance(blocks, list):
            line.calls = tuple(
                b["id"]
                for b in blocks
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str)
            )
            for block in blocks:
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    about = _task(block)
                    if about:
                        index.tasks[block["id"]] = about
        return
    line.set(SUMMARY, obj.get("isCompactSummary") is True)
    if isinstance(blocks, str):
        line.set(PROMPT, True)
    else:
        line.results = tuple(
            b["tool_use_id"]
            for b in blocks
            if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)
        )
        line.set(PROMPT, any(b.get("type") != "tool_result" for b in blocks) or not blocks)
        result = obj.get("toolUseResult")
        if isinstance(result, dict) and isinstance(result.get("agentId"), str):
            line.agent = result["agentId"]
            if line.results and line.agent not in index.spawned_by_result:
                index.spawns[line.agent] = line.results[0]
                index.spawned_by_result.add(line.agent)
                if result.get("isAsync") is True or result.get("status") == "async_launched":
                    index.async_agents.add(line.agent)
    if line.prompt and not line.sidechain:
        _notices(_texts(message.get("content")) or (), obj, index)
    if line.prompt and not line.meta and not line.summary and not line.sidechain:
        text = _prompt_text(message.get("content"))
        if text and text.strip():
            if not text.lstrip().startswith(_NOT_TYPED):
                if index.first_plain_prompt is None:
                    index.first_plain_prompt = text
            elif _MARKUP.match(text) is None:
                if index.first_tagged is None:
                    index.first_tagged = text
            elif index.first_command is None:
                index.first_command = _command_title(text)


def identity(obj: dict[str, Any]) -> tuple[str | None, str | None]:
    """A line's ``type`` and ``uuid`` as the index keeps them: each a string (a uuid not
    empty), else None. The second pass compares a line read again by these, not by the raw
    members, so a member of another type is not taken for a file that changed."""
    kind, uuid = obj.get("type"), obj.get("uuid")
    return (
        kind if isinstance(kind, str) else None,
        uuid if isinstance(uuid, str) and uuid else None,
    )


def _fill(line: Draft, obj: dict[str, Any], index: FileIndex) -> None:
    kind, uuid = identity(obj)
    line.type = _intern(kind)
    index.count(f"type:{line.type or '(none)'}")
    ts = obj.get("timestamp")
    if isinstance(ts, str):
        if index.first_ts is None or ts < index.first_ts:
            index.first_ts = ts
        if index.last_ts is None or ts > index.last_ts:
            index.last_ts = ts
    sid = obj.get("sessionId")
    if isinstance(sid, str):
        _remember(index.session_ids, sid)
    if isinstance(kind, str) and kind in TITLES:
        rank = list(TITLES).index(kind)
        title = obj.get(TITLES[kind])
        leaf = obj.get("leafUuid")
        if isinstance(title, str) and kind == "summary":
            index.leaf_titles.append((sys.intern(leaf) if isinstance(leaf, str) else None, title))
        elif isinstance(title, str) and rank >= index.title_rank:
            index.title, index.title_rank = title, rank
    if uuid is None:
        return  # a bookkeeping line: no place in the tree of its own
    line.uuid = uuid
    parent = obj.get("parentUuid")
    if isinstance(parent, str) and parent:
        line.parent = parent
        line.parent_at = index.by_uuid.get(parent, -1)
    line.set(SIDECHAIN, obj.get("isSidechain") is True)
    line.set(META, obj.get("isMeta") is True)
    line.env = (_intern(obj.get("cwd")), _intern(obj.get("gitBranch")), _intern(obj.get("version")))
    _remember(index.cwds, line.cwd)
    _remember(index.branches, line.branch)
    _remember(index.versions, line.version)
    agent = obj.get("agentId")
    if isinstance(agent, str):
        _remember(index.agent_ids, agent)
    if index.entrypoint is None and isinstance(obj.get("entrypoint"), str):
        index.entrypoint = obj["entrypoint"]
    if isinstance(obj.get("slug"), str):
        index.slug = obj["slug"]
    if kind in ROLES:
        _fill_message(line, obj, index)
    elif kind == "system" and obj.get("subtype") == "compact_boundary":
        line.set(BOUNDARY, True)
        logical = obj.get("logicalParentUuid")
        line.logical = logical if isinstance(logical, str) and logical else None
        metadata = obj.get("compactMetadata")
        segment = metadata.get("preservedSegment") if isinstance(metadata, dict) else None
        head = segment.get("headUuid") if isinstance(segment, dict) else None
        # Kept after the summary; kept before it (the anchor is the boundary) is not mapped.
        after = isinstance(segment, dict) and segment.get("anchorUuid") != obj.get("uuid")
        if isinstance(head, str) and head and after:
            index.kept_heads[len(index.lines)] = sys.intern(head)
    elif kind == "attachment" and not line.sidechain:
        # A notification that arrives while a turn runs is queued and given to the model as
        # an attachment (CLI 2.1.212: ``queued_command``, ``commandMode: task-notification``).
        queued = obj.get("attachment")
        if isinstance(queued, dict) and isinstance(queued.get("prompt"), str):
            _notices((queued["prompt"],), obj, index)
    elif kind == "progress":
        data = obj.get("data")
        if isinstance(data, dict) and data.get("type") == "agent_progress":
            line.agent = _intern(data.get("agentId"))
            call = obj.get("parentToolUseID")
            if line.agent is not None and isinstance(call, str):
                index.spawns.setdefault(line.agent, call)


def index_lines(raws: Iterable[RawLine]) -> FileIndex:
    """Index lines as :func:`raw_lines` gives them."""
    index = FileIndex()
    for raw in raws:
        line = Draft(raw)
        index.size = raw.offset + raw.size
        decoded = decode_line(raw.data)
        if decoded.obj is None:
            line.unreadable = decoded.problem or "cannot be read"
            line.set(TRUNCATED, not raw.complete)
            index.count("truncated_lines" if line.truncated else "unreadable_lines")
        else:
            if decoded.problem is not None:
                index.count("repaired_lines")
            _fill(line, decoded.obj, index)
        if line.uuid is not None:
            if line.uuid in index.by_uuid:
                index.repeats.append(len(index.lines))
            else:
                index.by_uuid[line.uuid] = len(index.lines)
        index.lines.append(line)
    index.count("lines", len(index.lines))
    if index.title_rank < 0:
        here = [t for leaf, t in index.leaf_titles if not _elsewhere(leaf, index.by_uuid)]
        if here:
            index.title, index.title_rank = here[-1], 0
    return index


def index_file(path: Path) -> FileIndex:
    """Index a whole file, streamed. Raises ``OSError`` if it cannot be read or is not a
    regular file (a FIFO put in its place since it was listed would stall the run)."""
    with open_regular(path) as f:
        return index_lines(raw_lines(f))
