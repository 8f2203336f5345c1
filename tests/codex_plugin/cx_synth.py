"""Synthetic rollouts for the property tests: turns of model steps and tool calls, with
compactions (remote, with a replacement history; legacy, with a summary only), rollbacks,
calls left without an output, forks (a second header and a copied history) and lines Codex
keeps out of the history (events, ghost snapshots, unknown kinds)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

JSON = dict[str, Any]

STEPS = (
    "reason",
    "say",
    "call",
    "call_open",
    "custom",
    "search",
    "ghost",
    "unknown",
    "system",
    "compact",  # a compaction in the middle of a turn (X4:L1788)
)
OPS = ("turn", "turn", "turn", "remote", "legacy", "rollback", "junk")


def _msg(role: str, text: str) -> JSON:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


class Rollout:
    """Lines of a rollout being written, with a clock and counters for unique ids."""

    def __init__(self, thread: str) -> None:
        self.thread = thread
        self.lines: list[JSON] = []
        self.tick = 0
        self.n = 0
        self.said: list[JSON] = []  # messages a compaction may keep

    def ts(self) -> str:
        self.tick += 1
        return (
            f"2026-03-01T10:{self.tick // 60 % 60:02d}:{self.tick % 60:02d}.{self.tick % 1000:03d}Z"
        )

    def next(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def put(self, kind: str, payload: JSON) -> None:
        self.lines.append({"timestamp": self.ts(), "type": kind, "payload": payload})

    def item(self, item: JSON) -> None:
        self.put("response_item", item)

    def event(self, kind: str, **members: Any) -> None:
        self.put("event_msg", {"type": kind, **members})

    def meta(self, thread: str, **extra: Any) -> None:
        payload = {
            "id": thread,
            "timestamp": self.ts(),
            "cwd": "/home/u/proj",
            "originator": "codex_cli_rs",
            "cli_version": "0.104.0",
            "source": "cli",
            "base_instructions": {"text": "You are Codex."},
            **extra,
        }
        self.put("session_meta", payload)

    def turn(self, steps: list[str], context: bool) -> None:
        turn_id = self.next("turn-")
        self.event("task_started", turn_id=turn_id)
        self.put("turn_context", {"turn_id": turn_id, "model": "gpt-5", "effort": "medium"})
        if context:
            self.item(_msg("developer", "<permissions instructions>sandboxed"))
            self.item(_msg("user", "<environment_context>cwd</environment_context>"))
        prompt = _msg("user", self.next("please do task "))
        self.item(prompt)
        self.said.append(prompt)
        self.event("user_message", message=prompt["content"][0]["text"])
        for step in steps:
            self.step(step)
        self.event("task_complete", turn_id=turn_id)

    def step(self, step: str) -> None:
        if step == "reason":
            self.item({"type": "reasoning", "summary": [], "encrypted_content": self.next("e")})
            self.event("agent_reasoning", text="thinking")
        elif step == "say":
            said = _msg("assistant", self.next("done "))
            said["phase"] = "final_answer"
            self.item(said)
            self.said.append(said)
            self.event("agent_message", message="done")
        elif step in ("call", "call_open"):
            call = self.next("call_")
            self.item({"type": "function_call", "name": "exec", "arguments": "{}", "call_id": call})
            if step == "call":
                self.item({"type": "function_call_output", "call_id": call, "output": "ok"})
        elif step == "custom":
            call = self.next("ctc_")
            self.item(
                {
                    "type": "custom_tool_call",
                    "status": "completed",
                    "call_id": call,
                    "name": "apply_patch",
                    "input": "*** Begin Patch",
                }
            )
            self.item({"type": "custom_tool_call_output", "call_id": call, "output": "done"})
        elif step == "search":
            self.item(
                {
                    "type": "web_search_call",
                    "status": "completed",
                    "action": {"type": "search", "query": "q"},
                }
            )
        elif step == "ghost":
            self.item({"type": "ghost_snapshot", "ghost_commit": {"id": self.next("g")}})
        elif step == "unknown":
            self.item({"type": "future_item", "x": self.next("u")})
        elif step == "system":
            self.item(_msg("system", "system note"))
        elif step == "compact":
            self.remote(2, False)
            return
        self.event(
            "token_count",
            info={
                "last_token_usage": {
                    "input_tokens": self.n,
                    "output_tokens": 1,
                    "total_tokens": self.n + 1,
                }
            },
        )

    def remote(self, keep: int, tail_context: bool) -> None:
        kept = self.said[-keep:] if keep else []
        history = [*kept, _msg("developer", "<permissions instructions>again")]
        history.append(_msg("user", "<environment_context>cwd</environment_context>"))
        if not tail_context:
            history.append({"type": "compaction", "encrypted_content": self.next("cmp")})
        self.put("compacted", {"message": "", "replacement_history": history})
        self.event("context_compacted")

    def legacy(self) -> None:
        self.put("compacted", {"message": self.next("summary of the work ")})

    def rollback(self, turns: int) -> None:
        self.event("thread_rolled_back", num_turns=turns)

    def junk(self) -> None:
        self.lines.append({"timestamp": self.ts(), "type": "world_state", "payload": {"a": 1}})


@st.composite
def rollouts(draw: st.DrawFn) -> list[JSON]:
    """A rollout's lines."""
    rollout = Rollout("0199aaaa-0000-7000-8000-000000000001")
    if draw(st.booleans()):  # a fork: its own header, then the source's lines as they were
        rollout.meta(rollout.thread, forked_from_id="0199aaaa-0000-7000-8000-000000000000")
        rollout.meta("0199aaaa-0000-7000-8000-000000000000")
    else:
        rollout.meta(rollout.thread)
    ops = draw(st.lists(st.sampled_from(OPS), min_size=1, max_size=10))
    for op in ops:
        if op == "turn":
            steps = draw(st.lists(st.sampled_from(STEPS), max_size=6))
            rollout.turn(steps, draw(st.booleans()))
        elif op == "remote":
            rollout.remote(draw(st.integers(0, 4)), draw(st.booleans()))
        elif op == "legacy":
            rollout.legacy()
        elif op == "rollback":
            rollout.rollback(draw(st.integers(-1, 4)))
        else:
            rollout.junk()
    if draw(st.booleans()):  # ends mid-turn
        rollout.turn(["reason", "call_open"], False)
        rollout.lines.pop()  # no task_complete
    return rollout.lines


def kitchen_sink() -> list[JSON]:
    """A fork holding every kind of line the converter maps differently: its source's
    header, turns with every step, a remote and a legacy compaction, a rollback past the
    remote one, an output without its call, a call left open mid-turn, a token count without
    usage, unknown kinds."""
    rollout = Rollout("0199aaaa-0000-7000-8000-00000000000a")
    rollout.meta(rollout.thread, forked_from_id="0199aaaa-0000-7000-8000-000000000000")
    rollout.meta("0199aaaa-0000-7000-8000-000000000000")
    rollout.turn(["reason", "say", "call", "custom", "search"], True)
    rollout.event("token_count", info=None)
    rollout.turn(["ghost", "unknown", "system", "call"], False)
    rollout.remote(2, False)
    rollout.turn(["say"], False)
    rollout.rollback(2)
    rollout.turn(["reason", "call_open", "say"], False)
    rollout.event("turn_aborted", reason="interrupted")
    rollout.legacy()
    rollout.item({"type": "function_call_output", "call_id": "call_nowhere", "output": "late"})
    rollout.junk()
    rollout.turn(["reason", "call_open"], False)
    rollout.lines.pop()  # ends mid-turn
    return rollout.lines


def legacy_format() -> list[JSON]:
    """The pre-envelope format of 2025: a bare header, state records, bare items."""
    return [
        {
            "id": "0199aaaa-0000-7000-8000-00000000000b",
            "timestamp": "2025-04-01T10:00:00.000Z",
            "instructions": "Be brief.",
        },
        {"record_type": "state"},
        {
            "type": "message",
            "id": None,
            "role": "user",
            "content": [{"type": "input_text", "text": "list the files"}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "name": "shell",
            "arguments": '{"command":["ls"]}',
            "call_id": "call_1",
        },
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": '{"output":"a\\nb\\n","metadata":{"exit_code":0}}',
        },
        {"record_type": "state"},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "a and b"}],
        },
    ]
