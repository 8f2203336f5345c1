"""Message content and provider names in the shapes of the OpenTelemetry GenAI conventions.

Only used when content is asked for: prompts and outputs become the JSON strings of
``gen_ai.input.messages`` / ``gen_ai.output.messages`` (role + typed parts), one message per
Open Responses item, in order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Final

from asf_core.export.items import (
    CALL_TYPES,
    OUTPUT_TYPES,
    call_arguments,
    content_parts,
    item_text,
    reasoning_text,
    role_of,
    type_of,
)
from asf_core.model import Item, Response

__all__ = ["dumps", "finish_reason", "messages", "output_messages", "provider"]

JSON = dict[str, Any]

#: Model name prefixes (OpenRouter's ``vendor/`` first) -> the conventions' provider names.
_VENDORS: Final = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gcp.gen_ai",
    "mistralai": "mistral_ai",
    "x-ai": "x_ai",
    "deepseek": "deepseek",
    "cohere": "cohere",
    "perplexity": "perplexity",
    "groq": "groq",
}
_FAMILIES: Final = (
    ("gpt-", "openai"),
    ("chatgpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "gcp.gen_ai"),
    ("mistral", "mistral_ai"),
    ("grok", "x_ai"),
    ("deepseek", "deepseek"),
    ("command", "cohere"),
)


def provider(model: str) -> str:
    """The provider a model name points at (``_OTHER`` when the name does not say)."""
    lower = model.lower()
    if "/" in lower:
        vendor = lower.split("/", 1)[0]
        return _VENDORS.get(vendor, vendor)
    return next((p for prefix, p in _FAMILIES if lower.startswith(prefix)), "_OTHER")


def finish_reason(resp: Response, outputs: Sequence[Item]) -> str:
    """Why the call ended: ``error``, the incomplete reason, ``tool_call`` or ``stop``."""
    if resp.error is not None:
        return "error"
    if resp.incomplete is not None:
        reason = resp.incomplete.get("reason")
        return reason if isinstance(reason, str) and reason else "incomplete"
    if any(type_of(e.item) in CALL_TYPES for e in outputs):
        return "tool_call"
    return "stop"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _parts(item: Any) -> list[JSON]:
    kind = type_of(item)
    if kind == "message":
        parts: list[JSON] = []
        for part in content_parts(item.get("content")):
            if part.kind == "image":
                parts.append({"type": "uri", "modality": "image", "uri": part.url})
            else:
                parts.append({"type": "text", "content": part.text})
        return parts
    if kind == "reasoning":
        return [{"type": "reasoning", "content": reasoning_text(item)}]
    if kind in CALL_TYPES:
        return [
            {
                "type": "tool_call",
                "id": item.get("call_id"),
                "name": item.get("name"),
                "arguments": call_arguments(item),
            }
        ]
    if kind in OUTPUT_TYPES:
        return [
            {"type": "tool_call_response", "id": item.get("call_id"), "response": item_text(item)}
        ]
    return [{"type": "text", "content": item_text(item)}]


def _role(item: Any) -> str:
    kind = type_of(item)
    if kind in OUTPUT_TYPES:
        return "tool"
    if kind in (*CALL_TYPES, "reasoning"):
        return "assistant"
    role = role_of(item)
    return "system" if role == "developer" else role or "user"


def messages(items: Iterable[Any]) -> str:
    """``gen_ai.input.messages``: one message per item."""
    return dumps([{"role": _role(i), "parts": _parts(i)} for i in items])


def output_messages(resp: Response, outputs: Sequence[Item]) -> str:
    """``gen_ai.output.messages``: the call's output items as one assistant message."""
    parts = [p for e in outputs for p in _parts(e.item)]
    return dumps(
        [{"role": "assistant", "parts": parts, "finish_reason": finish_reason(resp, outputs)}]
    )
