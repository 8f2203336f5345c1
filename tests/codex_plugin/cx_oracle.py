"""FORMAT-NOTES §8 ("the context the model saw at the last turn"), written from the notes alone.

The oracle the converter is checked against, so it shares no code with it: it reads the
rollout with ``json``, skips what Codex's loader would skip, and rebuilds the history the way
§8 steps 1 to 4 say, over the raw lines, with no tree: the newest replacement history not
inside a rolled-back turn is the base (found scanning backwards, rollbacks adding to the turns
still to pass), the lines after it are replayed (items appended, a legacy compaction
rebuilding the history from the user turns so far and its summary, a rollback dropping the
last turns and the context messages right above them), then every call without an output
gets an ``aborted`` output right after it and outputs without their call go.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

JSON = dict[str, Any]

#: Item kinds the model sees (a ``message`` only when not ``system``); the notes' list, and
#: the kinds newer CLIs write that Codex sends too (codex-rs ``context_manager/history.rs``
#: ``is_api_message``: ``agent_message``, ``additional_tools``, ``context_compaction``).
SEEN = {
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
ANSWERS = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "function_call_output",
    "tool_search_call": "tool_search_output",
}
#: What Codex sends for a call without an output (codex-rs context_manager/normalize.rs
#: ensure_call_outputs_present): ``aborted``, or a client tool search that found nothing.
NO_ANSWER: dict[str, JSON] = {
    "function_call_output": {"output": "aborted"},
    "custom_tool_call_output": {"output": "aborted"},
    "tool_search_output": {"status": "completed", "execution": "client", "tools": []},
}
INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions for",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<skill>",
    "<subagent_notification>",
    # the fragments newer CLIs add, and the warnings older ones wrote as user messages (codex-rs
    # core/src/context/contextual_user_message.rs: CONTEXTUAL_USER_FRAGMENT_MATCHERS)
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
SUMMARY_START = "Another language model started to solve this problem"
BUDGET_BYTES = 20_000 * 4


def parse(path: Path) -> list[JSON]:
    """Step 1: the lines Codex reads (JSON objects); the rest skipped."""
    out = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _from_agent(message: Any) -> JSON | None:
    """What Codex's resume adds for an ``inter_agent_communication`` line (codex-rs
    ``InterAgentCommunication::to_model_input_item``): an ``agent_message`` from its author to
    its recipient holding its text, or, encrypted, a header then the encrypted content; a
    payload that is not the communication Codex reads adds nothing (its line skipped)."""
    if not isinstance(message, dict):
        return None
    fields = ("author", "recipient", "content")
    if not all(isinstance(message.get(f), str) for f in fields):
        return None
    if type(message.get("trigger_turn")) is not bool:
        return None
    secret = message.get("encrypted_content")
    others = message.get("other_recipients", [])
    if secret is not None and not isinstance(secret, str):
        return None
    if not isinstance(others, list) or any(not isinstance(o, str) for o in others):
        return None
    if secret is None:
        content: list[JSON] = [{"type": "input_text", "text": message["content"]}]
    else:
        what = "NEW_TASK" if message["trigger_turn"] else "MESSAGE"
        header = (
            f"Message Type: {what}\nTask name: {message['recipient']}\n"
            f"Sender: {message['author']}\nPayload:\n"
        )
        content = [
            {"type": "input_text", "text": header},
            {"type": "encrypted_content", "encrypted_content": secret},
        ]
    out: JSON = {
        "type": "agent_message",
        "author": message["author"],
        "recipient": message["recipient"],
        "content": content,
    }
    if isinstance(message.get("id"), str):
        out["id"] = message["id"]
    passthrough = message.get("internal_chat_message_metadata_passthrough")
    if passthrough is not None:
        out["internal_chat_message_metadata_passthrough"] = passthrough
    return out


def _item_of(line: JSON) -> JSON | None:
    """The item a line adds, if the model sees it (bare items: the pre-envelope format)."""
    if line.get("type") == "inter_agent_communication":
        return _from_agent(line.get("payload"))
    if line.get("type") == "response_item":
        item = line.get("payload")
    elif "payload" not in line:
        item = line
    else:
        return None
    if not isinstance(item, dict) or item.get("type") not in SEEN:
        return None
    call_id = item.get("call_id")  # a call or output Codex cannot load: its line skipped
    if item["type"] in ("function_call", "custom_tool_call") and not (
        isinstance(call_id, str) and call_id
    ):
        return None
    if item["type"] in ("function_call_output", "custom_tool_call_output") and not isinstance(
        call_id, str
    ):
        return None
    if item.get("type") == "message" and item.get("role") == "system":
        return None
    return item


def _text(item: JSON) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []  # no content, or not a list
    texts = [p.get("text") for p in parts if isinstance(p, dict)]
    return "".join(t for t in texts if isinstance(t, str))


def _part_injected(item: JSON) -> bool:
    """Codex calls a user message context when any one of its parts is
    (``is_contextual_user_message_content``), wherever that part stands."""
    content = item.get("content")
    parts = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    for part in parts:
        text = part.get("text") if isinstance(part, dict) else part
        if isinstance(text, str) and text.lstrip().startswith(INJECTED):
            return True
    return False


def _agent_turn(item: JSON) -> bool:
    """A message from another agent starts a turn a rollback drops (codex-rs
    ``is_user_turn_boundary``), though it is no user message a compaction keeps: an
    ``agent_message``, or an assistant message whose one text part is the JSON of an
    ``InterAgentCommunication`` (``is_inter_agent_instruction_content``)."""
    if item.get("type") == "agent_message":
        return True
    content = item.get("content")
    if item.get("type") != "message" or item.get("role") != "assistant":
        return False
    if not (isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict)):
        return False
    if content[0].get("type") not in ("input_text", "output_text"):
        return False
    try:
        value = json.loads(content[0].get("text"))
    except (TypeError, ValueError, RecursionError):
        return False
    if not isinstance(value, dict) or not isinstance(value.get("other_recipients", []), list):
        return False
    paths = [value.get("author"), value.get("recipient"), *value.get("other_recipients", [])]
    return (
        all(isinstance(p, str) and (p == "/root" or p.startswith("/root/")) for p in paths)
        and isinstance(value.get("content"), str)
        and type(value.get("trigger_turn")) is bool
    )


def _boundary(item: JSON) -> bool:
    """A user message that starts a turn a rollback counts (is_user_turn_boundary): any but
    context Codex wrote; a compaction's summary counts too."""
    return item.get("type") == "message" and item.get("role") == "user" and not _part_injected(item)


def _user_turn(item: JSON) -> bool:
    """A user message a legacy compaction keeps: a boundary that is no summary
    (collect_user_messages drops those)."""
    return _boundary(item) and not _text(item).lstrip().startswith(SUMMARY_START)


#: The developer messages a rollback takes with the turn below them: those with a part that
#: opens, in any case, as Codex's settings do (codex-rs event_mapping.rs
#: CONTEXTUAL_DEVELOPER_PREFIXES); any other developer message stays.
SETTINGS = (
    "<permissions instructions>",
    "<model_switch>",
    "<collaboration_mode>",
    "<realtime_conversation>",
    "<skills_instructions>",
    "<personality_spec>",
    "<token_budget>",
)


def _injected(item: JSON) -> bool:
    if item.get("type") != "message":
        return False
    if item.get("role") == "developer":
        content = item.get("content")
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict) or part.get("type") != "input_text":
                continue
            text = part.get("text")
            if not isinstance(text, str):
                continue
            if any(text.lstrip().lower().startswith(tag) for tag in SETTINGS):
                return True
        return False
    return item.get("role") == "user" and _part_injected(item)


def _rollback_turns(line: JSON) -> int | None:
    payload = line.get("payload")
    if line.get("type") != "event_msg" or not isinstance(payload, dict):
        return None
    turns = payload.get("num_turns")
    if payload.get("type") != "thread_rolled_back" or type(turns) is not int:
        return None
    return turns


def _replacement(line: JSON) -> list[JSON] | None:
    """A ``compacted`` line's replacement history (None: none, or one Codex cannot read)."""
    payload = line.get("payload")
    if line.get("type") != "compacted" or not isinstance(payload, dict):
        return None
    history = payload.get("replacement_history")
    if isinstance(history, list) and history and all(isinstance(i, dict) for i in history):
        return history
    return None


def _base(lines: list[JSON]) -> int:
    """Step 2: the newest replacement history not inside a rolled-back turn (-1: none)."""
    to_pass = 0
    for n in range(len(lines) - 1, -1, -1):
        line = lines[n]
        turns = _rollback_turns(line)
        item = _item_of(line)
        if turns is not None:
            to_pass += max(turns, 0)
        elif item is not None and (_boundary(item) or _agent_turn(item)):
            to_pass = max(to_pass - 1, 0)
        elif to_pass == 0 and (_replacement(line) is not None or _empty_replacement(line)):
            return n
    return -1


def _empty_replacement(line: JSON) -> bool:
    payload = line.get("payload")
    return (
        line.get("type") == "compacted"
        and isinstance(payload, dict)
        and payload.get("replacement_history") == []
    )


def _legacy(history: list[JSON], summary: str) -> list[JSON]:
    kept: list[str] = []
    room = BUDGET_BYTES
    for item in history[::-1]:
        if room <= 0:
            break
        if not _user_turn(item):
            continue
        text = _text(item)
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > room:
            kept.append(text.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore"))
            break
        kept.append(text)
        room -= size
    texts = [*kept[::-1], summary or "(no summary available)"]
    return [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]}
        for t in texts
    ]


def _drop_turns(history: list[JSON], turns: int) -> list[JSON]:
    starts = [n for n, item in enumerate(history) if _boundary(item) or _agent_turn(item)]
    if turns < 1 or not starts:
        return history
    cut = starts[-turns] if turns <= len(starts) else starts[0]
    # the context messages above the first dropped turn go too, but never those before the
    # first turn (codex-rs trim_pre_turn_context_updates stops at it)
    while cut > starts[0] and _injected(history[cut - 1]):
        cut -= 1
    return history[:cut]


def _kept_anyway(item: JSON) -> bool:
    """A tool search output Codex never drops: the server ran the search, or it names no
    call (remove_orphan_outputs)."""
    return item.get("type") == "tool_search_output" and (
        item.get("execution") == "server" or not isinstance(item.get("call_id"), str)
    )


def _normalized(history: list[JSON]) -> list[JSON]:
    """Step 4: an ``aborted`` output right after each call without an output of its kind;
    outputs without a call of a kind they answer removed."""
    calls = {(ANSWERS[k], i.get("call_id")) for i in history if (k := i.get("type")) in ANSWERS}
    answered = {(i.get("type"), i.get("call_id")) for i in history}
    out = []
    for item in history:
        kind = item.get("type")
        pair = (kind, item.get("call_id"))
        if kind in ANSWERS.values() and pair not in calls and not _kept_anyway(item):
            continue
        out.append(item)
        call_id = item.get("call_id")
        if (
            kind in ANSWERS
            and isinstance(call_id, str)
            and (ANSWERS[kind], call_id) not in answered
        ):
            made = {"type": ANSWERS[kind], "call_id": call_id, **NO_ANSWER[ANSWERS[kind]]}
            out.append(made | _made_id(ANSWERS[kind], item.get("id")))
    return out


def _made_id(kind: str, call_item_id: Any) -> JSON:
    """The id Codex gives an output it makes for a call with an item id (codex-rs
    normalize.rs synthetic_output_id: UUIDv5 over ``<prefix>:<call's id>``); none else."""
    prefix = {
        "function_call_output": "fco",
        "custom_tool_call_output": "ctco",
        "tool_search_output": "tso",
    }[kind]
    if not isinstance(call_item_id, str) or not call_item_id:
        return {}
    space = uuid.UUID(int=0x90D38D3E_6A5B_4D52_BFE2_2F1E634BFAC4)
    return {"id": prefix + "_" + str(uuid.uuid5(space, prefix + ":" + call_item_id))}


def rebuild_lines(lines: list[JSON]) -> list[JSON]:
    """Steps 2 to 4 over parsed lines: the history after the last line, as sent."""
    base = _base(lines)
    history: list[JSON] = list(_replacement(lines[base]) or []) if base >= 0 else []
    for line in lines[base + 1 :]:
        item = _item_of(line)
        turns = _rollback_turns(line)
        payload = line.get("payload")
        if item is not None:
            history.append(item)
        elif turns is not None:
            history = _drop_turns(history, turns)
        elif (
            line.get("type") == "compacted"
            and isinstance(payload, dict)
            and payload.get("replacement_history") is None
        ):
            message = payload.get("message")
            history = _legacy(history, message if isinstance(message, str) else "")
    return _normalized(history)


def rebuild(path: Path) -> list[JSON]:
    """The history a resumed Codex would send after the last line of ``path``."""
    return rebuild_lines(parse(path))


def raw_history(path: Path) -> list[JSON]:
    """Steps 1 to 3 only (no normalisation): the figures the notes' table gives."""
    lines = parse(path)
    base = _base(lines)
    history: list[JSON] = list(_replacement(lines[base]) or []) if base >= 0 else []
    history.extend(i for line in lines[base + 1 :] if (i := _item_of(line)) is not None)
    return history
