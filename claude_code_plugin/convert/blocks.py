"""Anthropic content blocks to Open Responses items, one item per block, losslessly.

Each mapping takes the members an item can hold and leaves the rest of the block, its
``type`` always included, as the *residue* the entry keeps (``block`` in the ``claude-code``
member), so block = residue + what the item holds. Only blocks of the usual shape are mapped
(a ``text`` with a string ``text``, a ``tool_use`` with a string ``id`` and ``name`` ...); any
other block, of a type we do not know or of a known type in an odd shape, is carried whole in
an extension item ``{"type": "claude-code:block", "role": ..., "block": {...}}``, still in
context, since the model saw it. Inside a tool result's content, parts have no room for a
residue, so only exactly-shaped ``text`` and ``image`` blocks become ``input_text`` and
``input_image`` parts (an image whose kind of source the part would not tell excepted); any
other part is kept as the block itself.
"""

from __future__ import annotations

import json
from typing import Any, Final

from attrs import frozen

from claude_code_plugin import NS

__all__ = [
    "BLOCK_ITEM",
    "Mapped",
    "arguments_text",
    "assistant_item",
    "image_url",
    "string_message",
    "user_item",
]

JSON = dict[str, Any]

#: The extension item type carrying a block we do not map.
BLOCK_ITEM: Final = f"{NS}:block"
#: The item member keeping a tool result's ``is_error`` (the model saw it; Open Responses has
#: no such member).
IS_ERROR: Final = f"{NS}:is_error"


@frozen
class Mapped:
    """One item made from one block, and the block's residue (None for an unmapped block)."""

    item: JSON
    residue: JSON | None
    #: For a ``tool_use``: the native call id (the item's ``call_id`` may be renamed later).
    call: str | None = None
    #: For a ``tool_result``: the call id it answers.
    answers: str | None = None


def _residue(block: JSON, *taken: str) -> JSON:
    return {k: v for k, v in block.items() if k not in taken}


def _unmapped(block: Any, role: str) -> Mapped:
    return Mapped({"type": BLOCK_ITEM, "role": role, "block": block}, None)


def string_message(role: str, text: str) -> JSON:
    """A message item holding one text part (a string content)."""
    part = (
        {"type": "input_text", "text": text}
        if role != "assistant"
        else {"type": "output_text", "text": text, "annotations": []}
    )
    return {"type": "message", "role": role, "content": [part]}


def image_url(source: Any) -> tuple[JSON, JSON] | None:
    """An image source as ``input_image`` members, and the source's residue; None if odd.

    ``base64`` becomes a data URL, ``url`` its URL, ``file`` a ``file_id``.
    """
    if not isinstance(source, dict):
        return None
    kind = source.get("type")
    if kind == "base64":
        media, data = source.get("media_type"), source.get("data")
        if isinstance(media, str) and isinstance(data, str) and ";base64," not in media:
            return {"image_url": f"data:{media};base64,{data}"}, _residue(
                source, "media_type", "data"
            )
    elif kind == "url" and isinstance(source.get("url"), str):
        return {"image_url": source["url"]}, _residue(source, "url")
    elif kind == "file" and isinstance(source.get("file_id"), str):
        return {"file_id": source["file_id"]}, _residue(source, "file_id")
    return None


def _output_part(block: Any) -> Any:
    """A part of a tool result's content: exact ``text``/``image`` blocks mapped, else kept."""
    if not isinstance(block, dict):
        return block
    text = block.get("text")
    if block.keys() == {"type", "text"} and block["type"] == "text" and isinstance(text, str):
        return {"type": "input_text", "text": text}
    if block.keys() == {"type", "source"} and block["type"] == "image":
        mapped = image_url(block["source"])
        if mapped is not None and mapped[1] == {"type": _kind_read_back(mapped[0])}:
            return {"type": "input_image", **mapped[0]}
    return block


def _kind_read_back(members: JSON) -> str:
    """The kind of source an ``input_image`` part reads back as (a part has no residue to say
    it): a ``file_id`` a ``file``, a data URL ``base64``, any other URL ``url``. A part is
    made only when that is the source's own kind (a ``url`` holding a data URL is not)."""
    if "file_id" in members:
        return "file"
    return "base64" if members["image_url"].startswith("data:") else "url"


def arguments_text(value: Any) -> str:
    """A tool's input as the JSON text ``function_call.arguments`` holds (members in the
    order the model wrote them)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def user_item(block: Any) -> Mapped:
    """One block of a user message."""
    if not isinstance(block, dict):
        return _unmapped(block, "user")
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return Mapped(string_message("user", block["text"]), _residue(block, "text"))
    if kind == "image":
        mapped = image_url(block.get("source"))
        if mapped is not None:
            members, source_residue = mapped
            part = {"type": "input_image", **members}
            residue = {**_residue(block, "source"), "source": source_residue}
            return Mapped({"type": "message", "role": "user", "content": [part]}, residue)
    if kind == "tool_result":
        call, content, error = block.get("tool_use_id"), block.get("content"), block.get("is_error")
        if (
            isinstance(call, str)
            and call
            and isinstance(content, str | list)
            and isinstance(error, bool | None)
        ):
            output: Any = (
                content if isinstance(content, str) else [_output_part(b) for b in content]
            )
            item: JSON = {"type": "function_call_output", "call_id": call, "output": output}
            if "is_error" in block:
                item[IS_ERROR] = error
            residue = _residue(block, "tool_use_id", "content", "is_error")
            return Mapped(item, residue, answers=call)
    return _unmapped(block, "user")


def assistant_item(block: Any) -> Mapped:
    """One block of an assistant message."""
    if not isinstance(block, dict):
        return _unmapped(block, "assistant")
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return Mapped(string_message("assistant", block["text"]), _residue(block, "text"))
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        item: JSON = {
            "type": "reasoning",
            "summary": [],
            "content": [{"type": "reasoning_text", "text": block["thinking"]}],
        }
        taken = ["thinking"]
        if isinstance(block.get("signature"), str):
            item["encrypted_content"] = block["signature"]
            taken.append("signature")
        return Mapped(item, _residue(block, *taken))
    if kind == "redacted_thinking" and isinstance(block.get("data"), str):
        item = {"type": "reasoning", "summary": [], "encrypted_content": block["data"]}
        return Mapped(item, _residue(block, "data"))
    if kind == "tool_use":
        call, name = block.get("id"), block.get("name")
        if isinstance(call, str) and call and isinstance(name, str) and "input" in block:
            item = {
                "type": "function_call",
                "call_id": call,
                "name": name,
                "arguments": arguments_text(block["input"]),
            }
            return Mapped(item, _residue(block, "id", "name", "input"), call=call)
    return _unmapped(block, "assistant")
