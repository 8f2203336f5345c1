"""Rebuilding Claude Code lines from ASF entries, as docs/formats/claude-code.md says.

The inverse of the converter's mapping, written from the document: if every source line comes
back equal from the output, nothing was lost.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from asf_core.model import Entry
from asf_core.reader import SessionFile

NS = "claude-code"
IS_ERROR = f"{NS}:is_error"
JSON = dict[str, Any]


def _source(part: JSON, residue: JSON) -> JSON:
    url = part.get("image_url")
    kind = residue.get("type")
    if kind == "base64":
        media, data = url[len("data:") :].split(";base64,", 1)
        return {**residue, "media_type": media, "data": data}
    if kind == "url":
        return {**residue, "url": url}
    return {**residue, "file_id": part["file_id"]}


def _content_part(part: Any) -> Any:
    if isinstance(part, dict) and part.get("type") == "input_text":
        return {"type": "text", "text": part["text"]}
    if isinstance(part, dict) and part.get("type") == "input_image":
        kind = "base64" if "image_url" in part and part["image_url"].startswith("data:") else None
        kind = kind or ("url" if "image_url" in part else "file")
        return {"type": "image", "source": _source(part, {"type": kind})}
    return part


def block_of(item: JSON, residue: JSON | None, call_id: str | None = None) -> Any:
    """The content block an item (and its entry's residue) was made from."""
    kind = item["type"]
    if kind == f"{NS}:block":
        return item["block"]
    assert residue is not None
    if kind == "message":
        (part,) = item["content"]
        if part["type"] in ("input_text", "output_text"):
            return {**residue, "text": part["text"]}
        return {**residue, "source": _source(part, residue["source"])}
    if kind == "reasoning":
        if residue["type"] == "redacted_thinking":
            return {**residue, "data": item["encrypted_content"]}
        block = {**residue, "thinking": item["content"][0]["text"]}
        if "encrypted_content" in item:
            block["signature"] = item["encrypted_content"]
        return block
    if kind == "function_call":
        return {
            **residue,
            "id": call_id or item["call_id"],
            "name": item["name"],
            "input": json.loads(item["arguments"]),
        }
    if kind == "function_call_output":
        output = item["output"]
        block = {
            **residue,
            "tool_use_id": call_id or item["call_id"],
            "content": output if isinstance(output, str) else [_content_part(p) for p in output],
        }
        if IS_ERROR in item:
            block["is_error"] = item[IS_ERROR]
        return block
    raise AssertionError(f"unexpected item {kind}")


def _message_line(entries: list[Entry]) -> JSON:
    member = entries[0].unknown[NS]
    line: JSON = dict(member["fields"])
    line["uuid"] = member["uuid"]
    message = dict(line["message"])
    if entries[0].type == "compaction" and member["form"] == "text_blocks":
        parts = entries[0].summary["content"]
        message["content"] = [{"type": "text", "text": p["text"]} for p in parts]
    elif entries[0].type == "compaction":
        message["content"] = entries[0].summary["content"][0]["text"]
    elif member.get("form") == "string":
        (entry,) = entries
        message["content"] = entry.item["content"][0]["text"]
    else:
        blocks = sorted(
            (
                e.unknown[NS]["index"],
                block_of(e.item, e.unknown[NS].get("block"), e.unknown[NS].get("call_id")),
            )
            for e in entries
        )
        message["content"] = [b for _, b in blocks]
    line["message"] = message
    return line


def rebuild_line(entries: list[Entry]) -> Any:
    """One source line from its entries: the parsed object, or the raw bytes of a line that
    could not be read."""
    first = entries[0]
    member = first.unknown[NS]
    if first.type == "custom":
        data = first.data
        if "object" in data:
            return data["object"]
        if "text" in data:
            return data["text"].encode()
        return base64.b64decode(data["base64"])
    if first.type == "info":
        return {**member["fields"], member["name_from"]: first.name}
    return _message_line(entries)


def rebuild(session: SessionFile) -> dict[int, Any]:
    """Every source line of a converted file, by line number."""
    by_line: dict[int, list[Entry]] = {}
    for entry in session.entries:
        member = entry.unknown.get(NS, {})
        if "derived" not in member:
            by_line.setdefault(member["line"], []).append(entry)
    return {n: rebuild_line(es) for n, es in sorted(by_line.items())}
