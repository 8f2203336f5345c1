"""One-line human summaries of entries, items and settings, for ``asf show``.

A summary is for recognising an entry at a glance, so long text is cut and whitespace folded;
the full content is one ``--json`` away.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asf_core.cli.humane import flat
from asf_core.model import (
    BranchSummary,
    Compaction,
    Config,
    Custom,
    Decision,
    Dispatch,
    Entry,
    Env,
    Info,
    Item,
    Label,
    Link,
    Outcome,
    Queued,
    Response,
    Run,
)

__all__ = ["clip", "entry_summary", "item_summary", "settings_summary", "short"]

WIDTH = 72
_WIDTH = WIDTH


def short(entry_id: str | None) -> str:
    """An entry id as people read it: the first 8 hex digits of its hash (``-`` for none)."""
    if not entry_id:
        return "-"
    return entry_id.removeprefix("sha256:")[:8]


def clip(text: str, width: int | None = _WIDTH) -> str:
    """``text`` on one line (:func:`~asf_core.cli.humane.flat`), cut to ``width`` characters
    with an ellipsis (None: whole)."""
    folded = flat(text)
    return folded if width is None or len(folded) <= width else folded[: width - 1] + "…"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, Mapping):
                text = part.get("text", part.get("refusal"))
                if isinstance(text, str):
                    parts.append(text)
                elif isinstance(part.get("type"), str):
                    parts.append(f"[{part['type']}]")
        return " ".join(parts)
    return ""


def item_summary(item: Any, width: int | None = _WIDTH) -> str:
    """An Open Responses item in a few words: kind, who, and the start of its text."""
    if not isinstance(item, Mapping):
        return "(no item)"
    kind = str(item.get("type", "?"))
    if kind == "message":
        return clip(f"{item.get('role', '?')}: {_text_of(item.get('content'))}", width)
    if kind in ("function_call", "custom_tool_call"):  # a custom call's input: free text
        args = item.get("arguments" if kind == "function_call" else "input")
        return clip(
            f"call {item.get('name', '?')}({args if isinstance(args, str) else ''}) "
            f"[{item.get('call_id', '?')}]",
            width,
        )
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        text = output if isinstance(output, str) else _text_of(output)
        return clip(f"output [{item.get('call_id', '?')}]: {text}", width)
    if kind == "reasoning":
        # The summary is the reasoning written to be shown; a model that writes none
        # (Anthropic's thinking) has only the raw text, which is better than a blank line.
        said = _text_of(item.get("summary")) or _text_of(item.get("content"))
        return clip(f"reasoning: {said}", width)
    action = item.get("action")
    if isinstance(action, Mapping):  # a built-in tool's call: a web search, a shell command
        bits = [action.get("type"), *(v for k, v in action.items() if k != "type")]
        words = " ".join(str(v) for v in bits if isinstance(v, str | int | float))
        return clip(f"{kind}: {words}", width)
    # Another kind holding content parts as a message does (Codex's ``agent_message``, one
    # agent's message to another): the kind, then the start of its text.
    said = _text_of(item.get("content"))
    return clip(f"{kind}: {said}" if said else kind, width)


def _response(e: Response) -> str:
    bits = [e.model or "", e.status or ""]
    if isinstance(e.usage, Mapping):
        bits.append(
            f"in {e.usage.get('input_tokens', '?')} out {e.usage.get('output_tokens', '?')}"
        )
    if e.error is not None:
        bits.append("error")
    return " ".join(b for b in bits if b)


def _config(e: Config, width: int | None) -> str:
    bits: list[str] = []
    if e.replace:
        bits.append("replace")
    if e.model is not None:
        bits.append(f"model={e.model}")
    if e.instructions is not None:
        bits.append(f"instructions {len(e.instructions)} chars")
    if e.instructions_parts is not None:
        bits.append(f"instructions {len(e.instructions_parts)} parts")
    if e.tools_added:
        bits.append("+tools " + ",".join(str(t.get("name", "?")) for t in e.tools_added))
    if e.tools_removed:
        bits.append("-tools " + ",".join(e.tools_removed))
    if e.reasoning is not None:
        bits.append("reasoning")
    if e.extra:
        bits.append("extra " + ",".join(sorted(e.extra)))
    # Nothing the format defines: the members it carries (a plugin's own, e.g. ``codex``), as
    # a custom entry shows its namespace; never a blank summary.
    return clip(" ".join(bits or sorted(e.unknown) or ["(nothing set)"]), width)


def entry_summary(entry: Entry, width: int | None = _WIDTH) -> str:
    """What the entry says, in one line (its type and ids are shown beside it); ``width``
    None keeps whole texts."""
    match entry:
        case Item():
            text = item_summary(entry.item, width)
            return text if entry.visible is not False else f"(hidden) {text}"
        case Response():
            return _response(entry)
        case Config():
            return _config(entry, width)
        case Compaction():
            summary = item_summary(entry.summary, width)
            return clip(f"first kept {short(entry.first_kept)}; {summary}", width)
        case BranchSummary():
            return clip(f"from {short(entry.from_)}; {item_summary(entry.summary, width)}", width)
        case Run():
            return clip(
                " ".join(str(b) for b in (entry.phase, entry.run_id, entry.reason) if b), width
            )
        case Dispatch():
            target = entry.target or ""
            return (
                f"[{entry.call_id}] -> {short(target) if target.startswith('sha256:') else target}"
            )
        case Decision():
            return clip(
                f"{entry.verdict} [{entry.call_id}]" + (f" by {entry.by}" if entry.by else ""),
                width,
            )
        case Queued():
            return clip(f"{entry.mode}: {item_summary(entry.item, width)}", width)
        case Label():
            return f"{short(entry.target)} = {entry.label!r}"
        case Info():
            return clip(f"name {entry.name!r}", width)
        case Env():
            return clip(f"cwd {entry.cwd}" if entry.cwd else "environment", width)
        case Outcome():
            verdict = "" if entry.pass_ is None else (" pass" if entry.pass_ else " fail")
            score = "" if entry.score is None else f" score {entry.score}"
            return f"{entry.kind} of {short(entry.target)}{verdict}{score}"
        case Link():
            return clip(f"{entry.rel} {entry.session}", width)
        case Custom():
            return clip(f"{entry.ns}", width)
        case _:  # an extension's entry type: the members it holds
            return clip(" ".join(sorted(entry.unknown) or ["(nothing set)"]), width)


def settings_summary(settings: Mapping[str, Any]) -> str:
    """The settings in force, in one line: model, instructions size, tools, other members."""
    bits: list[str] = []
    if "model" in settings:
        bits.append(f"model={settings['model']}")
    instructions = settings.get("instructions")
    if isinstance(instructions, str):
        bits.append(f"instructions {len(instructions)} chars")
    tools = settings.get("tools")
    if isinstance(tools, list | tuple) and tools:
        names = [str(t.get("name", "?")) if isinstance(t, Mapping) else "?" for t in tools]
        bits.append("tools " + ",".join(names))
    others = sorted(k for k in settings if k not in {"model", "instructions", "tools"})
    bits.extend(others)
    return clip(" ".join(bits), 200) if bits else "(none)"
