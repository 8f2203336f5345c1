"""FORMAT-NOTES §9 ("the context the model saw at the last turn"), written from the notes alone.

This is the oracle the converter is checked against, so it shares no code with it: it reads
the JSONL with ``json``, walks ``parentUuid`` itself and builds Anthropic messages the way §9
says, step by step. Its output is a list of *atoms*: one ``(role, kind, ...)`` tuple per
content block, in message order; :func:`asf_atoms` turns an ASF context into the same shape,
so the two can be compared whole.

§9 step 5 says to merge *consecutive* assistant entries of one ``message.id`` on the path.
Two shared files show that this misses pieces of a response: F5 (lines 11, 12) and F7 (line
30) hold ``tool_use`` lines of a response that are off the path (the next response hangs
from an earlier call's result), and F5:L21 is a tool result written between two lines of its
own response (tools run while the response streams). The model got the whole response and
all its results (the API refuses a ``tool_use`` without its result), so :func:`rebuild` with
``whole_responses=True`` (the default) completes step 5: a response is every line of its
``message.id`` descending from its first line on the path, in file order, placed where that
first line is. With ``whole_responses=False`` it is §9 to the letter; the tests check that
the letter reproduces the figures the notes give for every file, and that the two differ
exactly on those lines.

§9 step 3 also predates compactions that keep the latest messages as they were (CLI 2.1.226,
``compactMetadata.preservedSegment``): Claude Code puts those messages back after the summary
when it loads the file (:func:`_kept_segment`); the shared files have none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attrs import define, field

JSON = dict[str, Any]
Atom = tuple[Any, ...]


def load(path: Path) -> list[JSON]:
    """Every line of a shared file (they are all whole JSON objects)."""
    return [json.loads(raw) for raw in path.read_bytes().splitlines() if raw.strip()]


def is_message(obj: JSON) -> bool:
    return obj.get("type") in ("user", "assistant") and not obj.get("isSidechain")


def last_message(lines: list[JSON], *, role: str | None = None) -> int:
    """§9 step 1: the last non-sidechain message line (of ``role``) in file order."""
    for n in range(len(lines) - 1, -1, -1):
        if is_message(lines[n]) and (role is None or lines[n]["type"] == role):
            return n
    raise ValueError("no message line")


@define
class Rebuilt:
    """The rebuilt message list and the figures the notes quote."""

    messages: list[tuple[str, list[tuple[int, JSON]]]]
    path_entries: int
    put_back: int
    #: File positions of the lines whose blocks made the messages.
    used: set[int] = field(factory=set)


def _index(lines: list[JSON]) -> dict[str, int]:
    by_uuid: dict[str, int] = {}
    for n, obj in enumerate(lines):
        if isinstance(obj.get("uuid"), str):
            by_uuid.setdefault(obj["uuid"], n)
    return by_uuid


def _walk_up(lines: list[JSON], by_uuid: dict[str, int], leaf: int) -> list[int]:
    """§9 step 2: parentUuid from the leaf to a root (or a parent not in the file)."""
    path: list[int] = []
    seen: set[int] = set()
    node: int | None = leaf
    while node is not None and node not in seen:
        seen.add(node)
        path.append(node)
        parent = lines[node].get("parentUuid")
        node = by_uuid.get(parent) if isinstance(parent, str) else None
    return path[::-1]


def _response(obj: JSON) -> tuple[str, str | None] | None:
    """What ties the lines of one API response (notes §2.2: ``message.id``), with the line's
    ``requestId``: real message ids are unique per response, so the request id changes
    nothing there and only keeps apart the calls of a transcript whose ids were anonymised
    (every ``"id": "REDACTED"``). None for a line without a message id (an API error line)."""
    message = obj.get("message")
    mid = message.get("id") if isinstance(message, dict) else None
    if not isinstance(mid, str):
        return None
    request = obj.get("requestId")
    return mid, request if isinstance(request, str) else None


def _blocks(obj: JSON) -> list[JSON]:
    content = obj["message"]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _descends(lines: list[JSON], by_uuid: dict[str, int], n: int, ancestor: int) -> bool:
    seen = 0
    while n is not None and seen < len(lines):
        if n == ancestor:
            return True
        parent = lines[n].get("parentUuid")
        n = by_uuid.get(parent, -1) if isinstance(parent, str) else -1
        if n < 0:
            return False
        seen += 1
    return False


def _kept_segment(lines: list[JSON], by_uuid: dict[str, int], boundary: JSON) -> list[int]:
    """The anchor and the messages a compaction kept as they were after its summary (CLI
    2.1.226 ``compactMetadata.preservedSegment``, which §9 predates): the walk up
    ``parentUuid`` from ``tailUuid`` to ``headUuid``, root first, after the ``anchorUuid``
    line Claude Code relinks the head below when it loads the file. Empty when the walk does
    not reach the head, or the anchor is the boundary itself (kept before the summary)."""
    metadata = boundary.get("compactMetadata")
    segment = metadata.get("preservedSegment") if isinstance(metadata, dict) else None
    if not isinstance(segment, dict) or segment.get("anchorUuid") == boundary.get("uuid"):
        return []
    head, tail = by_uuid.get(segment.get("headUuid", "")), by_uuid.get(segment.get("tailUuid", ""))
    anchor = by_uuid.get(segment.get("anchorUuid", ""))
    if head is None or tail is None or anchor is None:
        return []
    walk = _walk_up(lines, by_uuid, tail)
    return [anchor, *walk[walk.index(head) :]] if head in walk else []


def rebuild(lines: list[JSON], leaf: int, *, whole_responses: bool = True) -> Rebuilt:
    """§9 at ``leaf`` (a file position): the message list the model got."""
    by_uuid = _index(lines)
    path = _walk_up(lines, by_uuid, leaf)
    moved: dict[int, float] = {}
    path_entries = len(path)
    first = lines[path[0]]
    if first.get("type") == "system" and first.get("subtype") == "compact_boundary":
        path = path[1:]  # step 3: the summary below the boundary opens the context
        kept = _kept_segment(lines, by_uuid, first)
        if kept and kept[0] in path:  # the kept messages follow their anchor (the summary)
            at = path.index(kept[0]) + 1
            path = [*path[:at], *kept[1:], *path[at:]]
            # ... also within a message: they sort as if written right after the anchor
            moved = {n: kept[0] + i / len(kept) for i, n in enumerate(kept[1:], 1)}
    kept = [n for n in path if lines[n].get("type") in ("user", "assistant")]  # step 4
    # Step 5: responses.
    entries: list[tuple[str, list[int]]] = []
    placed: set[str] = set()
    for n in kept:
        obj = lines[n]
        if obj["type"] == "user":
            entries.append(("user", [n]))
            continue
        mid = _response(obj)
        if mid is None:  # no message id: nothing ties it to another line
            entries.append(("assistant", [n]))
            continue
        if not whole_responses:
            if (
                entries
                and entries[-1][0] == "assistant"
                and _response(lines[entries[-1][1][-1]]) == mid
            ):
                entries[-1][1].append(n)
            else:
                entries.append(("assistant", [n]))
            continue
        if mid in placed:
            continue
        placed.add(mid)
        group = [
            m
            for m in range(n, len(lines))
            if lines[m].get("type") == "assistant"
            and _response(lines[m]) == mid
            and _descends(lines, by_uuid, m, n)
        ]
        entries.append(("assistant", group))
    # Step 6: results off the path go in the user message after their response.
    answered = {
        b["tool_use_id"]
        for role, ns in entries
        if role == "user"
        for n in ns
        for b in _blocks(lines[n])
        if b.get("type") == "tool_result"
    }
    result_lines: dict[str, int] = {}
    for n, obj in enumerate(lines):
        if obj.get("type") == "user" and isinstance(obj["message"]["content"], list):
            for b in obj["message"]["content"]:
                if b.get("type") == "tool_result":
                    result_lines.setdefault(b["tool_use_id"], n)
    put_back = 0
    out: list[tuple[str, list[int]]] = []
    for i, (role, ns) in enumerate(entries):
        out.append((role, list(ns)))
        if role != "assistant":
            continue
        calls = [b["id"] for n in ns for b in _blocks(lines[n]) if b.get("type") == "tool_use"]
        missing = sorted(
            {result_lines[c] for c in calls if c not in answered and c in result_lines}
        )
        if not missing:
            continue
        put_back += len(missing)
        answered.update(c for c in calls if c in result_lines)
        if i + 1 < len(entries) and entries[i + 1][0] == "user":
            entries[i + 1] = ("user", [*missing, *entries[i + 1][1]])
        else:
            out.append(("user", missing))
    # Step 7: adjacent entries of one role make one message; a user message's lines in file
    # order (the put-back results were written before the lines that follow them).
    merged: list[tuple[str, list[int]]] = []
    for role, ns in out:
        if merged and merged[-1][0] == role:
            merged[-1][1].extend(ns)
        else:
            merged.append((role, list(ns)))
    messages = []
    used: set[int] = set()
    for role, ns in merged:
        order = sorted(set(ns), key=lambda n: moved.get(n, n)) if role == "user" else ns
        used.update(order)
        messages.append((role, [(n, b) for n in order for b in _blocks(lines[n])]))
    return Rebuilt(messages, path_entries, put_back, used)


def _source(source: JSON) -> JSON:
    return dict(source)


def _result_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    out = []
    for b in content:
        if isinstance(b, dict) and b.get("type") == "text" and set(b) == {"type", "text"}:
            out.append(("text", b["text"]))
        elif isinstance(b, dict) and b.get("type") == "image" and set(b) == {"type", "source"}:
            out.append(("image", _source(b["source"])))
        else:
            out.append(("raw", b))
    return out


def block_atom(role: str, block: JSON) -> Atom:
    """One Anthropic content block as an atom."""
    kind = block.get("type")
    if kind == "text":
        return (role, "text", block["text"])
    if kind == "image":
        return (role, "image", _source(block["source"]))
    if kind == "thinking":
        return (role, "thinking", block["thinking"], block.get("signature"))
    if kind == "redacted_thinking":
        return (role, "redacted_thinking", block["data"])
    if kind == "tool_use":
        return (role, "tool_use", block["id"], block["name"], block["input"])
    if kind == "tool_result":
        return (
            role,
            "tool_result",
            block["tool_use_id"],
            _result_content(block.get("content")),
            block.get("is_error"),
        )
    return (role, "block", block)


def atoms(rebuilt: Rebuilt) -> list[Atom]:
    return [block_atom(role, b) for role, blocks in rebuilt.messages for _, b in blocks]


# --- the ASF side ----------------------------------------------------------------------


def _image_source(part: JSON) -> JSON:
    url = part.get("image_url")
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        media, data = url[len("data:") :].split(";base64,", 1)
        return {"type": "base64", "media_type": media, "data": data}
    if isinstance(url, str):
        return {"type": "url", "url": url}
    return {"type": "file", "file_id": part["file_id"]}


def _output(output: Any) -> Any:
    if isinstance(output, str):
        return output
    out = []
    for p in output:
        if isinstance(p, dict) and p.get("type") == "input_text":
            out.append(("text", p["text"]))
        elif isinstance(p, dict) and p.get("type") == "input_image":
            out.append(("image", _image_source(p)))
        else:
            out.append(("raw", p))
    return out


def item_atoms(item: JSON, member: JSON) -> list[Atom]:
    """An Open Responses item (and its entry's ``claude-code`` member) as atoms."""
    kind = item["type"]
    if kind == "message":
        role = item["role"]
        found: list[Atom] = []
        for part in item["content"]:
            if part["type"] in ("input_text", "output_text"):
                found.append((role, "text", part["text"]))
            elif part["type"] == "input_image":
                found.append((role, "image", _image_source(part)))
            else:
                found.append((role, "raw", part))
        return found
    if kind == "reasoning":
        if member.get("block", {}).get("type") == "redacted_thinking":
            return [("assistant", "redacted_thinking", item["encrypted_content"])]
        return [
            ("assistant", "thinking", item["content"][0]["text"], item.get("encrypted_content"))
        ]
    if kind == "function_call":
        call = member.get("call_id", item["call_id"])
        return [("assistant", "tool_use", call, item["name"], json.loads(item["arguments"]))]
    if kind == "function_call_output":
        call = member.get("call_id", item["call_id"])
        error = item.get("claude-code:is_error")
        return [("user", "tool_result", call, _output(item["output"]), error)]
    if kind == "claude-code:block":
        return [(item["role"], "block", item["block"])]
    raise AssertionError(f"unexpected item type {kind!r}")
