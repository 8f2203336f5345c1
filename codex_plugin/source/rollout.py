"""What a rollout says about itself: its thread, times, place and size, read in one pass.

``read`` lists sessions from these facts and ``convert`` builds headers from them. The first
``session_meta`` line identifies the thread (a forked rollout copies its source's after its
own); the pre-envelope format's bare first line ``{id, timestamp, instructions}`` does too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

from attrs import define, field

from asf_core.formats import absolute_anywhere
from codex_plugin.source.lines import Line

__all__ = ["Facts", "claims", "facts_of", "named_thread", "when"]

JSON = dict[str, Any]

_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_PREVIEW_CHARS: Final = 200


def when(ts: Any) -> str | None:
    """A line's ``timestamp`` in ASF's spelling; None when it is not RFC 3339."""
    if not isinstance(ts, str):
        return None
    from asf_core.ids import IdError, migrate_ts

    try:
        return migrate_ts(ts)
    except (IdError, ValueError, OverflowError):
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@define
class Facts:
    """One rollout's facts."""

    #: The thread id (the first header's ``id``, else the id in the file name).
    thread: str | None = None
    #: The first ``session_meta`` payload (or the legacy bare header), as written.
    meta: JSON = field(factory=dict)
    started: str | None = None
    ended: str | None = None
    #: The first ``turn_context`` model.
    model: str | None = None
    preview: str | None = None
    lines: int = 0
    unreadable: list[Line] = field(factory=list)
    turns: int = 0
    compactions: int = 0
    forks: int = 0

    @property
    def cwd(self) -> str | None:
        """The header's ``cwd`` when it is absolute: a POSIX path, or a Windows one (Codex
        runs there too), as the host takes a session's directory."""
        cwd = self.meta.get("cwd")
        return cwd if isinstance(cwd, str) and absolute_anywhere(cwd) else None

    @property
    def version(self) -> str | None:
        return _text(self.meta.get("cli_version"))

    @property
    def source(self) -> str | None:
        """``source`` as a word: ``cli``, ``vscode``, ..., the tag of an object
        (``subagent``, ``custom``)."""
        source = self.meta.get("source")
        if isinstance(source, dict) and len(source) == 1:
            return str(next(iter(source)))
        return _text(source)

    @property
    def forked_from(self) -> str | None:
        return _text(self.meta.get("forked_from_id"))

    @property
    def parent_thread(self) -> str | None:
        """The thread that spawned this one (a sub-agent's): the header's own
        ``parent_thread_id`` (newer CLIs), else the one in ``source.subagent.thread_spawn``."""
        flat = _text(self.meta.get("parent_thread_id"))
        if flat is not None:
            return flat
        source = self.meta.get("source")
        sub = source.get("subagent") if isinstance(source, dict) else None
        spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
        return _text(spawn.get("parent_thread_id")) if isinstance(spawn, dict) else None


def _is_legacy_header(obj: JSON) -> bool:
    return "type" not in obj and "id" in obj and "timestamp" in obj


def facts_of(lines: Iterable[Line], file_name: str) -> Facts:
    """The facts of a rollout's lines (``file_name`` gives the thread when no line does).

    The preview is the first ``user_message`` event with text; a rollout with none (newer
    CLIs record a prompt as its ``response_item`` and an ``item_completed`` event only, and the
    pre-envelope format has no events) previews its first user message that is a prompt; one
    with neither (a multi-agent sub-agent, given its task by its parent) its first message
    from another agent, past the header Codex writes before the payload (or the content of
    the JSON an older run wrote as an assistant message).
    The turns are the ``task_started`` events; older CLIs write none (0.77 and before), and
    their turns are their prompts: the ``user_message`` events, else the prompt items."""
    from codex_plugin.convert.history import (
        agent_item,
        inter_agent,
        is_summary,
        is_turn,
        text_of,
    )

    facts = Facts()
    first = True
    typed: str | None = None  # the first prompt among the items
    told: str | None = None  # the first message from another agent
    prompts = items = 0  # user_message events; user messages that are prompts
    for line in lines:
        facts.lines += 1
        obj = line.obj
        if obj is None:
            facts.unreadable.append(line)
            continue
        ts = when(obj.get("timestamp"))
        if ts is not None:
            facts.started = facts.started or ts
            facts.ended = ts
        kind = obj.get("type")
        payload = obj.get("payload")
        if kind == "session_meta" and isinstance(payload, dict):
            if not facts.meta:
                facts.meta = payload
                facts.started = when(payload.get("timestamp")) or facts.started
            else:
                facts.forks += 1
        elif first and _is_legacy_header(obj):
            facts.meta = obj
        elif kind == "turn_context" and isinstance(payload, dict) and facts.model is None:
            facts.model = _text(payload.get("model"))
        elif kind == "compacted":
            facts.compactions += 1
        elif kind == "response_item" or "payload" not in obj:
            item = payload if kind == "response_item" else obj
            if (
                isinstance(item, dict)
                and item.get("role") == "user"
                and is_turn(item)
                and not is_summary(text_of(item))
            ):
                items += 1
                typed = typed or text_of(item).strip()[:_PREVIEW_CHARS] or None
            elif isinstance(item, dict) and item.get("type") == "agent_message":
                told = told or _told(item)
            elif (sent := inter_agent(item)) is not None:
                told = told or sent["content"].strip()[:_PREVIEW_CHARS] or None
        elif kind == "inter_agent_communication":
            told = told or _told(agent_item(payload))
        elif kind == "event_msg" and isinstance(payload, dict):
            event = payload.get("type")
            if event in ("task_started", "turn_started"):
                facts.turns += 1
            elif event == "user_message":
                prompts += 1
                if facts.preview is None:
                    text = (_text(payload.get("message")) or "").strip()
                    facts.preview = text[:_PREVIEW_CHARS] or None  # blank: the next prompt
        first = False
    facts.preview = facts.preview or typed or told
    facts.turns = facts.turns or prompts or items
    thread = facts.meta.get("id")
    facts.thread = thread if isinstance(thread, str) and thread else named_thread(file_name)
    return facts


def _told(item: JSON | None) -> str | None:
    """The preview of a message from another agent: its text, past the header Codex writes
    before the payload (``Message Type: …`` lines ending ``Payload:``), when it has one."""
    from codex_plugin.convert.history import text_of

    if item is None:
        return None
    text = text_of(item)
    head, mark, rest = text.partition("\nPayload:\n")
    if mark and head.startswith("Message Type:"):
        text = rest
    return text.strip()[:_PREVIEW_CHARS] or None


def named_thread(file_name: str) -> str | None:
    """The thread a rollout's name gives (Codex names it by the thread id, last)."""
    found = _UUID.findall(file_name)
    return found[-1] if found else None


def claims(file_names: Iterable[str]) -> Iterator[frozenset[str]]:
    """For each rollout's name, in order: the thread id it gives when an earlier one gives
    it too (the rollout is then a copy, named by its file), else nothing."""
    named: set[str] = set()
    for file_name in file_names:
        thread = named_thread(file_name)
        yield frozenset({thread} & named) if thread is not None else frozenset()
        if thread is not None:
            named.add(thread)
