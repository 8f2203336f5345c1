"""Hermes message content as Open Responses content parts, and back.

Hermes stores content in Chat Completions shape: a string, or (behind the ``\\x00json:``
prefix) a list of parts such as ``{"type": "text"}`` and ``{"type": "image_url"}``, or a
single dict. Open Responses names the same parts ``input_text``/``input_image`` on input and
``output_text`` on model output. Only parts whose shape is exactly known are renamed; any
other part is kept as written (ASF keeps unknown part types verbatim), so :func:`hermes_parts`
can rebuild the stored value and the converter knows when the raw column is redundant.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "hermes_parts",
    "input_parts",
    "output_parts",
    "tool_output",
]

JSON = dict[str, Any]


def _image_in(part: JSON) -> JSON | None:
    """``{"type": "image_url", "image_url": {"url": U[, "detail": D]}}`` as ``input_image``."""
    if set(part) != {"type", "image_url"}:
        return None
    image = part["image_url"]
    if isinstance(image, str):
        return {"type": "input_image", "image_url": image, "hermes:url_form": "string"}
    if not isinstance(image, dict) or not isinstance(image.get("url"), str):
        return None
    if not set(image) <= {"url", "detail"}:
        return None
    out: JSON = {"type": "input_image", "image_url": image["url"]}
    if "detail" in image:
        out["detail"] = image["detail"]
    return out


def _input_part(part: Any) -> JSON:
    if isinstance(part, str):
        return {"type": "input_text", "text": part, "hermes:form": "string"}
    if not isinstance(part, dict):
        return {"type": "hermes:value", "value": part}
    if part.get("type") == "text" and set(part) == {"type", "text"}:
        text = part["text"]
        if isinstance(text, str):
            return {"type": "input_text", "text": text}
    if part.get("type") == "image_url":
        image = _image_in(part)
        if image is not None:
            return image
    if isinstance(part.get("type"), str):
        return part
    return {"type": "hermes:value", "value": part}


def _output_part(part: Any) -> JSON:
    if isinstance(part, str):
        return {"type": "output_text", "text": part, "annotations": [], "hermes:form": "string"}
    if isinstance(part, dict) and part.get("type") == "text" and set(part) == {"type", "text"}:
        text = part["text"]
        if isinstance(text, str):
            return {"type": "output_text", "text": text, "annotations": []}
    if isinstance(part, dict) and isinstance(part.get("type"), str):
        return part
    return {"type": "hermes:value", "value": part}


def input_parts(content: Any) -> list[JSON]:
    """User or system content as input parts: text is one ``input_text``, null is none."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    if isinstance(content, list):
        return [_input_part(p) for p in content]
    return [_input_part(content)]


def output_parts(content: Any) -> list[JSON]:
    """Assistant content as output parts: text is one ``output_text``, empty text is none."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "output_text", "text": content, "annotations": []}]
    if isinstance(content, list):
        return [_output_part(p) for p in content]
    return [_output_part(content)]


def tool_output(content: Any) -> str | list[JSON]:
    """A tool row's content as a ``function_call_output`` output: text as it is (null as
    empty text), structured content as input parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return input_parts(content)


def _hermes_part(part: JSON) -> Any:
    kind = part.get("type")
    if kind == "hermes:value":
        return part.get("value")
    if part.get("hermes:form") == "string":
        return part.get("text")
    if kind in {"input_text", "output_text"} and set(part) <= {"type", "text", "annotations"}:
        return {"type": "text", "text": part.get("text")}
    if kind == "input_image" and set(part) <= {"type", "image_url", "detail", "hermes:url_form"}:
        if part.get("hermes:url_form") == "string":
            return {"type": "image_url", "image_url": part.get("image_url")}
        image: JSON = {"url": part.get("image_url")}
        if "detail" in part:
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    return part


def hermes_parts(parts: list[JSON]) -> list[Any]:
    """The Chat Completions parts a list of converted parts came from (the inverse)."""
    return [_hermes_part(p) for p in parts]
