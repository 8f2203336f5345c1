"""Synthetic Claude Code lines, shaped as the shared 2.1.x files are, for the shapes the
shared files do not hold (rewinds, damage, images, redacted thinking, titles ...)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

JSON = dict[str, Any]
SESSION = "11111111-2222-4333-8444-555555555555"
CWD = "/home/u/proj"


class Lines:
    """A session file under construction: each helper appends one line and returns its uuid."""

    def __init__(self, session: str = SESSION, **common: Any) -> None:
        self.session = session
        self.objects: list[JSON] = []
        self.n = 0
        self.common = {"cwd": CWD, "gitBranch": "main", "version": "2.1.39", **common}

    def _ts(self) -> str:
        self.n += 1
        return f"2026-03-01T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z"

    def _entry(self, kind: str, parent: str | None, **members: Any) -> str:
        uid = members.pop("uuid", None) or f"00000000-0000-4000-8000-{len(self.objects):012d}"
        obj = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            **self.common,
            "sessionId": self.session,
            "type": kind,
            "uuid": uid,
            "timestamp": self._ts(),
            **members,
        }
        self.objects.append(obj)
        return uid

    def user(self, parent: str | None, content: Any, **more: Any) -> str:
        return self._entry("user", parent, message={"role": "user", "content": content}, **more)

    def result(self, parent: str, call: str, text: str = "ok", **more: Any) -> str:
        block = {"tool_use_id": call, "type": "tool_result", "content": text}
        return self.user(parent, [block], **more)

    def assistant(
        self,
        parent: str | None,
        msg: str,
        block: JSON,
        *,
        model: str = "claude-opus-4-6",
        **more: Any,
    ) -> str:
        message = {
            "model": model,
            "id": msg,
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": 7},
        }
        return self._entry("assistant", parent, message=message, requestId=f"req_{msg}", **more)

    def text(self, parent: str | None, msg: str, text: str = "hi", **more: Any) -> str:
        return self.assistant(parent, msg, {"type": "text", "text": text}, **more)

    def call(self, parent: str | None, msg: str, call: str, name: str = "Bash") -> str:
        block = {"type": "tool_use", "id": call, "name": name, "input": {"command": "ls"}}
        return self.assistant(parent, msg, block)

    def progress(self, parent: str | None, **more: Any) -> str:
        data = {
            "type": "hook_progress",
            "hookEvent": "PostToolUse",
            "hookName": "h",
            "command": "c",
        }
        more.setdefault("data", data)
        more.setdefault("toolUseID", "t")
        more.setdefault("parentToolUseID", "t")
        return self._entry("progress", parent, **more)

    def system(self, parent: str | None, subtype: str, **more: Any) -> str:
        return self._entry("system", parent, subtype=subtype, content="", level="info", **more)

    def raw(self, obj: JSON) -> None:
        self.objects.append(obj)

    def bytes(self) -> bytes:
        return b"".join(json.dumps(o).encode() + b"\n" for o in self.objects)

    def write(self, project: Path, name: str | None = None) -> Path:
        project.mkdir(parents=True, exist_ok=True)
        path = project / f"{name or self.session}.jsonl"
        path.write_bytes(self.bytes())
        return path


def simple(lines: Lines | None = None) -> Lines:
    """A prompt, a response calling two tools in parallel, both results, a final answer."""
    s = lines or Lines()
    u = s.user(None, "list files")
    a1 = s.text(u, "msg_1", "Looking.")
    c1 = s.call(a1, "msg_1", "toolu_a")
    c2 = s.call(c1, "msg_1", "toolu_b")
    s.result(c1, "toolu_a", "one")
    r2 = s.result(c2, "toolu_b", "two")
    s.text(r2, "msg_2", "Done.")
    return s


def kitchen_sink(project: Path) -> Path:
    """One small session holding what the shared files do not: a rewind, an image, redacted
    thinking, a meta message, a title, an unknown line and block, a sub-agent spawned by a
    Task call, a compaction and its helper transcript, a model change; and, last, a line
    still being written."""
    s = Lines()
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    u1 = s.user(None, [{"type": "text", "text": "what is in the picture?"}, image])
    m = s.user(u1, "<system-reminder>be brief</system-reminder>", isMeta=True)
    t = s.assistant(m, "msg_1", {"type": "redacted_thinking", "data": "b3BhcXVl"})
    a1 = s.text(t, "msg_1", "A cat.")
    s.raw(
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {"trackedFileBackups": {}}}
    )
    u2 = s.user(a1, "find more cats")
    c = s.call(u2, "msg_2", "toolu_task", name="Task")
    s.progress(c, data={"type": "agent_progress", "agentId": "kit0001"})
    r = s.result(
        c,
        "toolu_task",
        "Three more cats.",
        toolUseResult={"agentId": "kit0001", "status": "completed"},
    )
    s.text(r, "msg_3", "Found three.")
    u3 = s.user(a1, "no, dogs")  # rewound to the first answer
    a3 = s.assistant(
        u3, "msg_4", {"type": "fallback", "reason": "new block"}, model="claude-haiku-4-5"
    )
    s._entry("telemetry-blip", a3, payload={"n": 1})
    b = s.system(
        None,
        "compact_boundary",
        logicalParentUuid=a3,
        compactMetadata={"trigger": "auto", "preTokens": 999},
    )
    summary = s.user(
        b,
        "This session is being continued: dogs.",
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    u4 = s.user(summary, "and now?")
    s.text(u4, "msg_5", "Now dogs.")
    s.raw({"type": "custom-title", "customTitle": "Cats and dogs", "sessionId": s.session})
    path = s.write(project)
    path.write_bytes(path.read_bytes() + b'{"parentUuid": "' + u4.encode() + b'", "type": "assi')
    agent = simple(Lines(agentId="kit0001", isSidechain=True))
    agent.write(project / s.session / "subagents", "agent-kit0001")
    helper = Lines(agentId="acompact-1", isSidechain=True)
    req = helper.user(a3, "Summarise the conversation.")
    helper.text(req, "msg_h", "This session is being continued: dogs.")
    helper.write(project / s.session / "subagents", "agent-acompact-1")
    return path
