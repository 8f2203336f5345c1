"""Sub-agents written into the session file itself, as CLI 1.0 and 2.0 did.

Before a sub-agent had a transcript of its own (``agent-<id>.jsonl``), Claude Code wrote its
lines into the session file: lines with ``isSidechain: true``, the first a user line without
a parent holding the ``prompt`` of the ``Task`` call that spawned it (CLI 2.0.13); neither the
call's result nor the lines name an agent. Such a sidechain is the work of the call whose
prompt it repeats (the first of them, in file order, not answered by a named sub-agent and
not matched already): the entry holding the call's output lists the sidechain's last entry in
``parents``, as it lists a sub-agent transcript's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from claude_code_plugin.source.index import FileIndex, text_of
from claude_code_plugin.source.table import SIDECHAIN

__all__ = ["sidechain_calls"]

JSON = dict[str, Any]


def _prompts(obj: JSON | None, wanted: set[str]) -> list[tuple[str, str]]:
    """The (prompt, call id) of each wanted ``tool_use`` block of an assistant line."""
    message = obj.get("message") if obj is not None else None
    blocks = message.get("content") if isinstance(message, dict) else None
    found: list[tuple[str, str]] = []
    for block in blocks if isinstance(blocks, list) else ():
        call = block.get("id") if isinstance(block, dict) else None
        given = block.get("input") if isinstance(block, dict) else None
        if call in wanted and isinstance(given, dict) and isinstance(given.get("prompt"), str):
            found.append((given["prompt"], call))
    return found


def sidechain_calls(index: FileIndex, read: Callable[[int], JSON | None]) -> dict[int, str]:
    """Position of the first line of each sub-agent written in the file -> the id of the call
    that spawned it. ``read`` gives a line's object by position; only the lines of spawning
    calls and of sidechain roots are read, and none when the file has no sidechain root."""
    lines = index.lines
    if not any(flags & SIDECHAIN for flags in lines.flags):
        return {}
    roots = {
        pos
        for pos, line in enumerate(lines)
        if line.sidechain
        and line.role == "user"
        and (line.parent is None or line.parent not in index.by_uuid)
    }
    if not roots:
        return {}
    named = set(index.spawns.values())
    wanted = {call for call in index.tasks if call not in named}
    waiting: dict[str, list[str]] = {}
    found: dict[int, str] = {}
    for pos, line in enumerate(lines):
        if pos in roots:
            obj = read(pos)
            message = obj.get("message") if obj is not None else None
            prompt = text_of(message.get("content")) if isinstance(message, dict) else None
            calls = waiting.get(prompt or "")
            if calls:
                found[pos] = calls.pop(0)
        elif line.role == "assistant" and not line.sidechain and wanted.intersection(line.calls):
            for prompt, call in _prompts(read(pos), wanted):
                waiting.setdefault(prompt, []).append(call)
    return found
