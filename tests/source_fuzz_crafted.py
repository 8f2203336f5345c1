"""Crafted Claude Code transcripts and Codex rollouts for the source fuzzer: shapes no mutation
of a real file reaches, thousands of lines of one structure each, to catch a conversion that
grows faster than its input (quadratic time, or memory).

Each maker returns a home's files (path relative to the home -> bytes) of about ``n`` lines;
:data:`CRAFTED` names them. ``tests/test_source_fuzz.py`` runs each through
:func:`source_fuzz_check.check` under a time bound. Not here: thousands of legacy compactions
(a summary without a replacement history), each of whose compaction entries holds the latest
user turns up to 80 kB, as Codex rebuilds them: the output is that much larger than the input
by design.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["CRAFTED"]

JSON = dict[str, Any]
_SESSION = "11111111-2222-4333-8444-555555555555"
_CC = f".claude/projects/-crafted/{_SESSION}.jsonl"
_THREAD = "0199aaaa-0000-7000-8000-00000000000e"
_CX = f".codex/sessions/2026/03/01/rollout-2026-03-01T10-00-00-{_THREAD}.jsonl"


def _u(i: int) -> str:
    return str(uuid.UUID(int=i + 1))


def _cc(i: int, parent: str | None, **more: Any) -> JSON:
    line: JSON = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": "user",
        "uuid": _u(i),
        "sessionId": _SESSION,
        "timestamp": f"2026-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
        "cwd": "/x",
        "version": "2.1.39",
        "message": {"role": "user", "content": f"m{i}"},
    }
    line.update(more)
    return line


def _call(call: str, name: str = "Bash") -> JSON:
    block = {"type": "tool_use", "id": call, "name": name, "input": {}}
    return {"id": "msg_1", "role": "assistant", "model": "m", "content": [block]}


def _file(rel: str, lines: list[JSON]) -> dict[str, bytes]:
    return {rel: "".join(json.dumps(line) + "\n" for line in lines).encode()}


def chain(n: int) -> dict[str, bytes]:
    return _file(_CC, [_cc(i, _u(i - 1) if i else None) for i in range(n)])


def wide(n: int) -> dict[str, bytes]:
    """Every line a child of the first: n branches."""
    return _file(_CC, [_cc(i, _u(0) if i else None) for i in range(n)])


def reversed_chain(n: int) -> dict[str, bytes]:
    """Each line's parent written after it."""
    return _file(_CC, [_cc(i, _u(i + 1) if i < n - 1 else None) for i in range(n)])


def cycle(n: int) -> dict[str, bytes]:
    return _file(_CC, [_cc(i, _u((i + 1) % n)) for i in range(n)])


def one_response(n: int) -> dict[str, bytes]:
    """One response split over n lines, each the same call id."""
    lines = [_cc(0, None)]
    lines += [_cc(i, _u(i - 1), type="assistant", message=_call("t")) for i in range(1, n)]
    return _file(_CC, lines)


def results(n: int) -> dict[str, bytes]:
    """A Task call answered n times, each naming another sub-agent with no transcript."""
    lines = [_cc(0, None), _cc(1, _u(0), type="assistant", message=_call("t", "Task"))]
    block = {"type": "tool_result", "tool_use_id": "t", "content": "x"}
    for i in range(2, n):
        more = {
            "message": {"role": "user", "content": [block]},
            "toolUseResult": {"agentId": f"a{i}"},
        }
        lines.append(_cc(i, _u(i - 1), **more))
    return _file(_CC, lines)


def _cx(kind: str, payload: JSON) -> JSON:
    return {"timestamp": "2026-03-01T10:00:00.000Z", "type": kind, "payload": payload}


def _user(text: str) -> JSON:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


_META = _cx("session_meta", {"id": _THREAD, "timestamp": "2026-03-01T10:00:00Z", "cwd": "/x"})


def calls(n: int) -> dict[str, bytes]:
    """n calls of one call id, none answered."""
    call = {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"}
    return _file(_CX, [_META] + [_cx("response_item", call)] * n)


def rollbacks(n: int) -> dict[str, bytes]:
    """Turns each rolled back, by one turn or by a billion."""
    lines = [_META]
    for i in range(n // 2):
        lines.append(_cx("response_item", _user(f"u{i}")))
        turns = 10**9 if i % 2 else 1
        lines.append(_cx("event_msg", {"type": "thread_rolled_back", "num_turns": turns}))
    return _file(_CX, lines)


def compactions(n: int) -> dict[str, bytes]:
    """A turn, then a compaction to a replacement history of five items, again and again."""
    lines = [_META]
    history = [_user("h")] * 5
    for i in range(n // 2):
        lines.append(_cx("response_item", _user(f"u{i}")))
        lines.append(_cx("compacted", {"message": "s", "replacement_history": history}))
    return _file(_CX, lines)


CRAFTED: dict[str, tuple[str, Callable[[int], dict[str, bytes]]]] = {
    "chain": ("claude-code", chain),
    "wide": ("claude-code", wide),
    "reversed": ("claude-code", reversed_chain),
    "cycle": ("claude-code", cycle),
    "one-response": ("claude-code", one_response),
    "results": ("claude-code", results),
    "calls": ("codex", calls),
    "rollbacks": ("codex", rollbacks),
    "compactions": ("codex", compactions),
}
