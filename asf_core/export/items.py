"""Reading Open Responses items for people and for other formats: text, media, arguments.

ASF keeps items exactly as written, and a damaged or future item may hold any JSON value
anywhere, so every helper here accepts ``Any`` and degrades to "no text" rather than failing:
an export must never stop on content it does not understand (the raw item travels beside
whatever the target could show).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from attrs import frozen

__all__ = [
    "CALL_TYPES",
    "IMAGE_TYPES",
    "OUTPUT_TYPES",
    "Part",
    "call_arguments",
    "call_input",
    "content_parts",
    "image_media_type",
    "is_model_output",
    "item_text",
    "parse_arguments",
    "reasoning_text",
    "role_of",
    "tool_name",
    "type_of",
]

#: Image media types the common consumers (ATIF/Harbor, browsers) all accept.
IMAGE_TYPES: Final = ("image/jpeg", "image/png", "image/gif", "image/webp")

_EXTENSIONS: Final = {
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "png": "image/png",
    "gif": "image/gif",
    "webp": "image/webp",
}

#: Calls of the model's tools, each answered by the output of its kind with its ``call_id``:
#: function calls, and the Responses API's custom tool calls (free-text ``input``, e.g.
#: Codex's ``apply_patch``).
CALL_TYPES: Final = ("function_call", "custom_tool_call")
OUTPUT_TYPES: Final = ("function_call_output", "custom_tool_call_output")

_TEXT_PARTS: Final = frozenset(
    {"input_text", "output_text", "text", "summary_text", "reasoning_text"}
)


@frozen(kw_only=True)
class Part:
    """One piece of content as a reader sees it.

    ``kind`` is ``text`` (``text`` set), ``image`` (``url`` set: a URL, a data URL or a
    ``sidecar:`` reference; ``media_type`` when known), or ``file`` / ``video`` /
    ``refusal`` / ``other`` (``text`` holds what can be said about it).
    """

    kind: str
    text: str = ""
    url: str = ""
    media_type: str = ""


def type_of(item: Any) -> str:
    """The item's ``type`` (``""`` when it has none)."""
    kind = item.get("type") if isinstance(item, Mapping) else None
    return kind if isinstance(kind, str) else ""


def role_of(item: Any) -> str:
    """A message's ``role`` (``""`` when it has none)."""
    role = item.get("role") if isinstance(item, Mapping) else None
    return role if isinstance(role, str) else ""


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def is_model_output(item: Any) -> bool:
    """Items only a model produces: they belong to a model call even without a response id."""
    kind = type_of(item)
    return (
        kind == "reasoning"
        or kind in CALL_TYPES
        or (kind == "message" and role_of(item) == "assistant")
    )


def content_parts(content: Any) -> Iterator[Part]:
    """The parts of a message's ``content`` (or a function output's list) in order.

    A bare string is one text part, as Open Responses decoders read it.
    """
    if isinstance(content, str):
        yield Part(kind="text", text=content)
        return
    if not isinstance(content, list):
        return
    for raw in content:
        yield _part(raw)


def _part(raw: Any) -> Part:
    kind = type_of(raw)
    if kind in _TEXT_PARTS:
        return Part(kind="text", text=_str(raw.get("text")))
    if kind == "refusal":
        return Part(kind="refusal", text=_str(raw.get("refusal")))
    if kind == "input_image":
        url = _str(raw.get("image_url")) or _str(raw.get("file_id"))
        return Part(kind="image", url=url, media_type=image_media_type(_str(raw.get("image_url"))))
    if kind == "input_file":
        name = _str(raw.get("filename")) or _str(raw.get("file_id")) or _str(raw.get("file_url"))
        return Part(kind="file", text=name)
    if kind == "input_video":
        return Part(kind="video", text=_str(raw.get("video_url")))
    return Part(kind="other", text=json.dumps(raw, ensure_ascii=False, separators=(",", ":")))


def _joined(content: Any) -> str:
    return "".join(p.text for p in content_parts(content) if p.kind == "text")


def reasoning_text(item: Any) -> str:
    """A reasoning item's readable text: its content when it has some, else its summary."""
    if not isinstance(item, Mapping):
        return ""
    for member in ("content", "summary"):
        texts = [p.text for p in content_parts(item.get(member)) if p.kind == "text" and p.text]
        if texts:
            return "\n".join(texts)
    return ""


def item_text(item: Any) -> str:
    """The readable text of any item (``""`` when it has none)."""
    kind = type_of(item)
    if kind == "message":
        return _joined(item.get("content"))
    if kind == "reasoning":
        return reasoning_text(item)
    if kind in CALL_TYPES:
        return f"{_str(item.get('name'))}({_str(call_input(item))})"
    if kind in OUTPUT_TYPES:
        return _joined(item.get("output"))
    if kind in ("compaction", "item_reference") or not isinstance(item, Mapping):
        return ""
    text = item.get("text")
    if isinstance(text, str) and text:
        return text
    content = item.get("content")
    return content if isinstance(content, str) else _joined(content)


def tool_name(tool: Any) -> str:
    """A tool definition's name (a non-function tool without one: its type)."""
    if not isinstance(tool, Mapping):
        return ""
    return _str(tool.get("name")) or _str(tool.get("type"))


def call_arguments(call: Any) -> dict[str, Any]:
    """A call's arguments as an object: a function call's parsed, a custom tool call's
    free-text input as ``{"input": text}`` (as Harbor's own Codex converter gives it)."""
    given = call_input(call)
    if type_of(call) == "custom_tool_call" and isinstance(given, str):
        return {"input": given}
    return parse_arguments(given)


def call_input(call: Any) -> Any:
    """What a call was given, as written: a custom tool call's ``input``, a function
    call's ``arguments``."""
    if not isinstance(call, Mapping):
        return None
    return call.get("input" if type_of(call) == "custom_tool_call" else "arguments")


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """A call's arguments as an object; anything that is not a JSON object rides under
    ``_arguments`` (blank arguments are an empty object)."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
    return {"_arguments": arguments}


_DATA_URL: Final = re.compile(r"data:([^;,]*)", re.IGNORECASE)


def image_media_type(url: str) -> str:
    """The media type of an image URL when it is one of :data:`IMAGE_TYPES`, else ``""``.

    Read from a data URL's prefix or the path's extension; a URL whose last path segment has
    no extension is taken as PNG, the common case of image endpoints.
    """
    lower = url.strip().lower()
    if not lower:
        return ""
    match = _DATA_URL.match(lower)
    if match:
        media = match[1]
        media = "image/jpeg" if media == "image/jpg" else media
        return media if media in IMAGE_TYPES else ""
    path = re.split(r"[?#]", lower, maxsplit=1)[0]
    last = path.rsplit("/", 1)[-1]
    if "." not in last:
        return "image/png"
    return _EXTENSIONS.get(last.rsplit(".", 1)[-1], "")
