"""What Codex puts in the model's history, as its resume rebuilds it (FORMAT-NOTES §8).

The rules the converter needs to place entries so that ASF's context is Codex's history:
which items the model sees, which user messages are turns (not context Codex injected),
where a rollback of N turns cuts, what a legacy compaction (a summary without a replacement
history) leaves, and which calls Codex answers ``aborted`` before sending.

The rules read an item's :class:`Brief` (its type, call id, whether it is a turn or injected
context), not the item: a conversion keeps the briefs of the history's items and reads an
item again from its line only when its content matters.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple, TypeGuard

__all__ = [
    "ABORTED",
    "CALLS",
    "OUTPUTS",
    "VISIBLE",
    "Brief",
    "agent_item",
    "answer",
    "brief",
    "inter_agent",
    "is_summary",
    "is_turn",
    "legacy_history",
    "output_for",
    "rollback_cut",
    "text_of",
    "unanswered",
    "unasked",
    "visible",
]

JSON = dict[str, Any]

#: ``response_item`` kinds Codex keeps in the history (a ``message`` only when not
#: ``system``); ``ghost_snapshot``, ``compaction_trigger`` and unknown kinds never reach the
#: model. Newer CLIs add ``agent_message`` (a message between agents of a multi-agent run: a
#: sub-agent's task, a sub-agent's answer to its parent), ``additional_tools`` and
#: ``context_compaction``, which Codex sends like the others (codex-rs ``is_api_message``).
VISIBLE: Final = frozenset(
    {
        "message",
        "agent_message",
        "additional_tools",
        "context_compaction",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "image_generation_call",
        "tool_search_call",
        "tool_search_output",
        "compaction",
        "compaction_summary",
    }
)
#: Calls answered by an output with their ``call_id``, and the kind of that output (a
#: client-run ``tool_search_call``, CLI 0.140+, by a ``tool_search_output``: codex-rs
#: ``normalize.rs`` pairs them as it pairs function calls).
CALLS: Final = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "function_call_output",
    "tool_search_call": "tool_search_output",
}
OUTPUTS: Final = frozenset(CALLS.values())

#: How user messages Codex writes itself begin (environment, AGENTS.md, instructions, ...):
#: context, not a turn the user typed.
_CONTEXT_PREFIXES: Final = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions for",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<skill>",
    "<subagent_notification>",
    # Newer CLIs' fragments (codex-rs ``contextual_user_message.rs``): a hook's prompt, the
    # plugin list, a client's or Codex's own added context, the sub-agents list, a goal's
    # continuation (``<goal_context>``, before ``<codex_internal_context source="goal">``),
    # a post on the agents' message board; and warnings older CLIs wrote as user messages,
    # which Codex still tells from prompts.
    "<hook_prompt",
    "<recommended_plugins>",
    "<external_",
    "<codex_internal_context",
    "<subagents>",
    "<goal_context>",
    "<agent_message_board_notification>",
    "Warning: apply_patch was requested via ",
    "Warning: The maximum number of unified exec processes you can keep open is",
    "Warning: Your account was flagged for potentially high-risk cyber activity",
)
#: How the summary of a local compaction begins (Codex's fixed prefix).
SUMMARY_PREFIX: Final = "Another language model started to solve this problem"
#: The most a legacy compaction keeps of earlier user messages, in Codex's estimate of
#: tokens (four bytes each).
KEEP_TOKENS: Final = 20_000
#: The text of the output Codex gives a call that has none.
ABORTED: Final = "aborted"


def visible(item: Any) -> TypeGuard[JSON]:
    """Whether Codex sends ``item`` to the model. A function or custom tool call without a
    ``call_id`` (a non-empty string), or an output without one, is no item Codex can load:
    its loader skips the line."""
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    if not isinstance(kind, str) or kind not in VISIBLE:
        return False
    call_id = item.get("call_id")
    if kind in ("function_call", "custom_tool_call") and not (call_id and isinstance(call_id, str)):
        return False
    if kind in OUTPUTS and kind != "tool_search_output" and not isinstance(call_id, str):
        return False
    return kind != "message" or item.get("role") != "system"


def _text_parts(item: JSON) -> list[str]:
    """The text parts of a message, in order."""
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        part["text"]
        for part in content
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]


def text_of(item: JSON) -> str:
    """The text parts of a message, joined."""
    return "".join(_text_parts(item))


def _holds_context(parts: list[str]) -> bool:
    """Whether a part of a message (its text parts) is context Codex writes. Codex judges
    each part (``is_contextual_user_message_content``: any part), and newer CLIs put the
    plugin list before the environment in one message, so the joined text need not begin
    with it."""
    return any(text.lstrip().startswith(_CONTEXT_PREFIXES) for text in parts)


#: How the developer messages start that Codex's rollback takes with a dropped turn (codex-rs
#: ``event_mapping.rs`` ``CONTEXTUAL_DEVELOPER_PREFIXES``, in any case): the settings it
#: writes before a turn. Any other developer message (apps or plugin instructions, a
#: client's developer text) stays.
_DEVELOPER_CONTEXT: Final = (
    "<permissions instructions>",
    "<model_switch>",
    "<collaboration_mode>",
    "<realtime_conversation>",
    "<skills_instructions>",
    "<personality_spec>",
    "<token_budget>",
)


def is_context(item: Any) -> bool:
    """A message Codex injects around turns, which a rollback drops with the turn below it:
    a developer message with a part of its settings, and user messages of its own making."""
    if not isinstance(item, dict) or item.get("type") != "message":
        return False
    role = item.get("role")
    if role == "developer":
        content = item.get("content")
        parts = content if isinstance(content, list) else []
        return any(
            isinstance(part, dict)
            and part.get("type") == "input_text"
            and isinstance(part.get("text"), str)
            and part["text"].lstrip()[:32].lower().startswith(_DEVELOPER_CONTEXT)
            for part in parts
        )
    return role == "user" and _holds_context(_text_parts(item))


def _agent_path(value: Any) -> bool:
    return isinstance(value, str) and (value == "/root" or value.startswith("/root/"))


def inter_agent(item: Any) -> JSON | None:
    """The message between agents an assistant message carries, as multi-agent runs of
    about CLI 0.13x wrote it before ``agent_message`` items: one text part holding the JSON
    of Codex's ``InterAgentCommunication`` (``author``, ``recipient``, ``content``,
    ``trigger_turn``); else None."""
    if (
        not isinstance(item, dict)
        or item.get("type") != "message"
        or item.get("role") != "assistant"
    ):
        return None
    content = item.get("content")
    if not isinstance(content, list) or len(content) != 1 or not isinstance(content[0], dict):
        return None
    part = content[0]
    text = part.get("text")
    if part.get("type") not in ("input_text", "output_text") or not isinstance(text, str):
        return None
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    others = value.get("other_recipients", []) if isinstance(value, dict) else None
    if (
        isinstance(value, dict)
        and _agent_path(value.get("author"))
        and _agent_path(value.get("recipient"))
        and isinstance(value.get("content"), str)
        and isinstance(value.get("trigger_turn"), bool)
        and isinstance(others, list)
        and all(_agent_path(other) for other in others)
    ):
        return value
    return None


def is_summary(text: str) -> bool:
    """Whether a user message's text is a local compaction's summary (Codex's fixed
    prefix): no prompt, and none a compaction keeps, though a rollback counts it a turn."""
    return text.lstrip().startswith(SUMMARY_PREFIX)


def is_turn(item: Any) -> bool:
    """An item that starts a turn, as Codex's rollback counts them
    (``is_user_turn_boundary``): a user message that is not context Codex wrote (a
    compaction's summary is one: Codex tells no summary from a prompt there), or a message
    from another agent (an ``agent_message``, or an assistant message carrying one as
    JSON)."""
    if isinstance(item, dict) and item.get("type") == "agent_message":
        return True
    if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "assistant":
        return inter_agent(item) is not None
    if not isinstance(item, dict) or item.get("type") != "message" or item.get("role") != "user":
        return False
    return not _holds_context(_text_parts(item))


class Brief(NamedTuple):
    """What the rules need of an item."""

    kind: str | None
    call_id: str | None
    turn: bool
    context: bool
    #: An output Codex keeps whether or not its call is there: a ``tool_search_output``
    #: the server ran, or one naming no call.
    kept: bool = False


def brief(item: Any) -> Brief:
    """An item's :class:`Brief`."""
    kind = item.get("type") if isinstance(item, dict) else None
    call_id = _call_id(item)
    return Brief(
        kind if isinstance(kind, str) else None,
        call_id,
        is_turn(item),
        is_context(item),
        kind == "tool_search_output" and (call_id is None or item.get("execution") == "server"),
    )


def rollback_cut(history: Sequence[Brief], turns: int) -> int | None:
    """Where dropping the last ``turns`` user turns cuts ``history`` (everything from the
    index on goes), or None when it drops nothing. The context messages right above the
    first dropped turn go with it, but never those above the first turn: dropping every
    turn keeps what came before it (codex-rs ``trim_pre_turn_context_updates`` stops at the
    first turn)."""
    starts = [i for i, item in enumerate(history) if item.turn]
    if turns < 1 or not starts:
        return None
    cut = starts[max(len(starts) - turns, 0)]
    while cut > starts[0] and history[cut - 1].context:
        cut -= 1
    return cut


def _user_message(text: str) -> JSON:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def legacy_history(turns: Iterable[str], summary: str) -> list[JSON]:
    """What a compaction without a replacement history leaves: the latest user turns' texts
    (``turns``: newest first, read only while they fit in :data:`KEEP_TOKENS`; the one that
    does not fit is cut to what is left, and is the last), in order, then the summary as a
    user message."""
    kept: list[str] = []
    left = KEEP_TOKENS * 4
    for text in turns:
        if left <= 0:
            break
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > left:
            kept.append(data[:left].decode("utf-8", "ignore"))
            break
        kept.append(text)
        left -= len(data)
    out = [_user_message(text) for text in reversed(kept)]
    out.append(_user_message(summary or "(no summary available)"))
    return out


def agent_item(communication: Any) -> JSON | None:
    """The item Codex's resume puts in the history for an ``inter_agent_communication`` line
    (a message between the agents of a multi-agent run, which a legacy-mode rollout writes as
    its own line kind rather than as an ``agent_message`` item: codex-rs
    ``InterAgentCommunication::to_model_input_item``), or None for a payload Codex cannot
    read (it skips the line). Its text is the message's, or for an encrypted one a header
    naming the message's kind, task and sender, then the encrypted content."""
    if not isinstance(communication, dict):
        return None
    author, recipient = communication.get("author"), communication.get("recipient")
    content, encrypted = communication.get("content"), communication.get("encrypted_content")
    others = communication.get("other_recipients", [])
    if not (
        isinstance(author, str)
        and isinstance(recipient, str)
        and isinstance(content, str)
        and isinstance(communication.get("trigger_turn"), bool)
        and (encrypted is None or isinstance(encrypted, str))
        and isinstance(others, list)
        and all(isinstance(other, str) for other in others)
    ):
        return None
    if encrypted is None:
        parts: list[JSON] = [{"type": "input_text", "text": content}]
    else:
        kind = "NEW_TASK" if communication["trigger_turn"] else "MESSAGE"
        head = f"Message Type: {kind}\nTask name: {recipient}\nSender: {author}\nPayload:\n"
        parts = [
            {"type": "input_text", "text": head},
            {"type": "encrypted_content", "encrypted_content": encrypted},
        ]
    item: JSON = {"type": "agent_message"}
    if isinstance(communication.get("id"), str):
        item["id"] = communication["id"]
    item |= {"author": author, "recipient": recipient, "content": parts}
    metadata = communication.get("internal_chat_message_metadata_passthrough")
    if metadata is not None:
        item["internal_chat_message_metadata_passthrough"] = metadata
    return item


def _call_id(item: Any) -> str | None:
    value = item.get("call_id") if isinstance(item, dict) else None
    return value if isinstance(value, str) else None


def unanswered(history: Sequence[Brief]) -> list[int]:
    """Positions of the calls in ``history`` with no output of their kind carrying their
    ``call_id`` (a function call is answered by a ``function_call_output`` alone, as Codex
    matches them)."""
    answered = {(i.kind, i.call_id) for i in history if i.kind in OUTPUTS}
    return [
        n
        for n, item in enumerate(history)
        if item.kind in CALLS
        and item.call_id is not None
        and (CALLS[item.kind], item.call_id) not in answered
    ]


def unasked(history: Sequence[Brief]) -> list[int]:
    """Positions of the outputs in ``history`` whose call is not in it (none of a kind that
    output answers carries its ``call_id``), but those Codex keeps anyway."""
    asked = {(CALLS[i.kind], i.call_id) for i in history if i.kind in CALLS}
    return [
        n
        for n, item in enumerate(history)
        if item.kind in OUTPUTS and not item.kept and (item.kind, item.call_id) not in asked
    ]


def output_for(call: JSON) -> JSON:
    """The output Codex sends for a call that has none."""
    return answer(CALLS[call["type"]], call["call_id"], call.get("id"))


#: What Codex derives the id of an output it makes from: its kind's prefix and the call's id
#: (codex-rs ``normalize.rs`` ``synthetic_output_id``: UUIDv5 in this namespace over
#: ``<prefix>:<call's id>``, so that the output is the same on every resume).
_OUTPUT_IDS: Final = uuid.UUID("90d38d3e-6a5b-4d52-bfe2-2f1e634bfac4")
_ID_PREFIXES: Final = {
    "function_call_output": "fco",
    "custom_tool_call_output": "ctco",
    "tool_search_output": "tso",
}


def answer(kind: str, call_id: str | None, source: Any = None) -> JSON:
    """The output of ``kind`` Codex gives ``call_id`` when its call has none: ``aborted``,
    or for a tool search no tools found (codex-rs ``ensure_call_outputs_present``). A call
    with an item id (``source``, rollouts of CLIs with item ids, mid-2026 on) gives the
    output an id derived from it; one without gives none."""
    out: JSON = {"type": kind, "call_id": call_id}
    if isinstance(source, str) and source and kind in _ID_PREFIXES:
        prefix = _ID_PREFIXES[kind]
        out["id"] = f"{prefix}_{uuid.uuid5(_OUTPUT_IDS, f'{prefix}:{source}')}"
    if kind == "tool_search_output":
        return out | {"status": "completed", "execution": "client", "tools": []}
    return out | {"output": ABORTED}
