"""Open Responses items and ASF entries in ATIF's shapes: messages, tool calls, metrics.

ATIF carries a message as a string when it is text only and as a list of parts otherwise
(text and images; images of the four types Harbor accepts). What it cannot hold (files,
video, other image types, refusals) becomes a text placeholder in the part list; the raw item
beside the step keeps the original.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from attrs import frozen

from asf_core.codec import entry_to_json
from asf_core.export.items import (
    CALL_TYPES,
    Part,
    call_arguments,
    content_parts,
    item_text,
    reasoning_text,
    type_of,
)
from asf_core.model import Entry, Item, Response

__all__ = [
    "Turn",
    "agent_turn",
    "entry_json",
    "item_text",
    "message",
    "metrics",
    "output",
    "response_body",
    "tool_definitions",
]

JSON = dict[str, Any]
Content = str | list[JSON]
Namer = Callable[[str | None], str]


def _describe(url: str) -> str:
    """A data URL shortened to its media type, for a text placeholder."""
    if url.lower().startswith("data:"):
        return "data URL " + url[5:].split(";", 1)[0].split(",", 1)[0]
    return url


def _atif(parts: Iterable[Part]) -> Content:
    out: list[JSON] = []
    text_only = True
    for part in parts:
        if part.kind == "text":
            text = part.text
        elif part.kind == "refusal":
            text = "[refusal] " + part.text
        elif part.kind == "image" and part.media_type:
            text_only = False
            source = {"media_type": part.media_type, "path": part.url}
            out.append({"type": "image", "source": source})
            continue
        elif part.kind == "image":
            text = f"[image: {_describe(part.url)}]"
        elif part.kind in ("file", "video"):
            text = f"[{part.kind}: {part.text}]"
        else:
            text = part.text
        out.append({"type": "text", "text": text})
    if text_only:
        return "".join(p["text"] for p in out)
    return out


def message(item: Any) -> Content:
    """A message item's content for a step's ``message`` (other items: their text)."""
    if type_of(item) != "message":
        return item_text(item)
    return _atif(content_parts(item.get("content")))


def output(value: Any) -> Content:
    """A function call output's ``output`` for an observation result."""
    return _atif(content_parts(value))


@frozen(kw_only=True)
class Turn:
    """What one model call's output items say, in ATIF's terms."""

    message: Content
    reasoning: str
    tool_calls: list[JSON]
    phases: list[str]


def agent_turn(entries: Iterable[Item]) -> Turn:
    """Text, reasoning, tool calls and phases of a model call's output items, in order.

    Text-only messages are joined by a newline; once any message carries an image, every
    message becomes parts.
    """
    texts: list[str] = []
    parts: list[JSON] = []
    mixed = False
    reasoning: list[str] = []
    calls: list[JSON] = []
    phases: list[str] = []
    for entry in entries:
        item = entry.item
        kind = type_of(item)
        if kind == "message" and item is not None:
            said = message(item)
            if isinstance(said, list):
                mixed = True
                parts.extend(said)
            else:
                texts.append(said)
                parts.append({"type": "text", "text": said})
            phase = item.get("phase")
            if isinstance(phase, str) and phase:
                phases.append(phase)
        elif kind == "reasoning":
            text = reasoning_text(item)
            if text:
                reasoning.append(text)
        elif kind in CALL_TYPES and item is not None:
            call_id, name = item.get("call_id"), item.get("name")
            calls.append(
                {
                    "tool_call_id": call_id if isinstance(call_id, str) else "",
                    "function_name": name if isinstance(name, str) else "",
                    "arguments": call_arguments(item),
                }
            )
    return Turn(
        message=parts if mixed else "\n".join(texts),
        reasoning="\n".join(reasoning),
        tool_calls=calls,
        phases=phases,
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def metrics(usage: Mapping[str, Any]) -> JSON:
    """A response's usage as step metrics (reasoning tokens in ``extra`` when any)."""
    inputs = usage.get("input_tokens_details")
    outputs = usage.get("output_tokens_details")
    cached = inputs.get("cached_tokens") if isinstance(inputs, Mapping) else 0
    out: JSON = {
        "prompt_tokens": _count(usage.get("input_tokens")),
        "completion_tokens": _count(usage.get("output_tokens")),
        "cached_tokens": _count(cached),
    }
    reasoning = _count(outputs.get("reasoning_tokens")) if isinstance(outputs, Mapping) else 0
    if reasoning > 0:
        out["extra"] = {"reasoning_tokens": reasoning}
    return out


def _named(obj: JSON, name: Namer, legacy: bool) -> JSON:
    """An entry's JSON with entry references spelled as the file spells them."""
    if not legacy:
        return obj
    obj.pop("legacy_id", None)
    refs = obj.get("parents")
    if isinstance(refs, list):
        obj["parents"] = [
            {**r, "entry": name(r["entry"])} if isinstance(r, dict) and "entry" in r else r
            for r in refs
        ]
    return obj


def response_body(resp: Response, name: Namer, *, legacy: bool = False) -> JSON:
    """The response entry without its envelope's type, id and parent, plus ``entry_id``."""
    body = entry_to_json(resp)
    for member in ("type", "id", "parent"):
        body.pop(member, None)
    return {"entry_id": name(resp.id), **_named(body, name, legacy)}


def entry_json(entry: Entry, name: Namer, *, legacy: bool = False) -> JSON:
    """A whole entry as written (for extension entries, which no step can hold)."""
    obj = entry_to_json(entry)
    if legacy:
        obj["id"] = name(entry.id)
        if entry.parent is not None:
            obj["parent"] = name(entry.parent)
    return _named(obj, name, legacy)


def tool_definitions(tools: Iterable[Any]) -> list[Any]:
    """Tools in the function-calling shape ATIF expects; other tool types as they are."""
    out: list[Any] = []
    for tool in tools:
        if type_of(tool) != "function":
            out.append(tool)
            continue
        name, description = tool.get("name"), tool.get("description")
        fn: JSON = {
            "name": name if isinstance(name, str) else "",
            "description": description if isinstance(description, str) else "",
        }
        if "parameters" in tool:
            fn["parameters"] = tool["parameters"]
        if isinstance(tool.get("strict"), bool):
            fn["strict"] = tool["strict"]
        out.append({"type": "function", "function": fn})
    return out
