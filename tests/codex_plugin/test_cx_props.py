"""Synthetic rollouts (compactions, rollbacks, calls left open, forks): the converted file
verifies, every line is rebuilt from it, and its context is the history the oracle rebuilds
from the raw lines (FORMAT-NOTES §8)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from cx_helpers import (
    context_items,
    convert,
    rebuilt_lines,
    sessions_in,
    source_lines,
    write_rollout,
)
from cx_oracle import rebuild
from cx_synth import rollouts
from hypothesis import given

from asf_core.verify.session import verify_path

ROLLOUT = (
    "sessions/2026/03/01/rollout-2026-03-01T10-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl"
)


def _check(lines: list[Any], *, allowed: tuple[str, ...] = ()) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = write_rollout(root / ".codex" / ROLLOUT, lines)
        out = root / "out"
        assert convert([root / ".codex"], out) == 0
        found = verify_path(out)
        assert [f for f in found if f.severity != "info" and f.code not in allowed] == []
        (session,) = sessions_in(out).values()
        assert context_items(session) == rebuild(source)
        assert rebuilt_lines(session) == source_lines(source)


@given(rollouts())
def test_context_is_the_oracle_history(lines: list[Any]) -> None:
    _check(lines)


def test_kitchen_sink_is_the_oracle_history() -> None:
    from cx_synth import kitchen_sink, legacy_format

    _check(kitchen_sink(), allowed=("output-unbound",))  # its output without a call
    _check(legacy_format())


def test_lines_codex_never_sends_are_kept_out_of_context(tmp_path: Path) -> None:
    """Ghost snapshots, system messages, unknown item and line kinds, the event duplicates of
    items: each a custom entry, none in the context; forks keep the source's header."""
    from cx_synth import kitchen_sink

    from asf_core.model import Custom

    source = write_rollout(tmp_path / ".codex" / ROLLOUT, kitchen_sink())
    assert convert([tmp_path / ".codex"], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    kept = [e.data["object"] for e in session.entries if isinstance(e, Custom)]
    kinds = {(o["type"], (o.get("payload") or {}).get("type")) for o in kept}
    for kind in [
        ("response_item", "ghost_snapshot"),
        ("response_item", "future_item"),
        ("response_item", "message"),  # the system message
        ("world_state", None),
        ("session_meta", None),  # the fork's copy of its source's header
        ("event_msg", "user_message"),
        ("event_msg", "agent_message"),
        ("event_msg", "agent_reasoning"),
        ("event_msg", "thread_rolled_back"),
        ("event_msg", "turn_aborted"),
    ]:
        assert kind in kinds
    items = context_items(session)
    assert not [i for i in items if i["type"] in ("ghost_snapshot", "future_item")]
    assert not [i for i in items if i.get("role") == "system"]
    assert session.header.parent_session == "0199aaaa-0000-7000-8000-000000000000"
    assert source.is_file()


def test_local_shell_calls_are_answered_like_function_calls(tmp_path: Path) -> None:
    """An old model's ``local_shell_call`` (notes §4) is answered by a ``function_call_output``:
    the answer stays in the context, and one left open gets its ``aborted`` output, as the
    oracle says; ``asf verify`` warns ``output-unbound`` for both (ASF binds an output to a
    ``function_call`` only)."""
    from cx_synth import Rollout

    rollout = Rollout("0199aaaa-0000-7000-8000-00000000000c")
    rollout.meta(rollout.thread, model_provider="openai")
    rollout.turn(["say"], True)
    for call, status in (("call_ls1", "completed"), ("call_ls2", "in_progress")):
        action = {"type": "exec", "command": ["ls"], "timeout_ms": None}
        rollout.item(
            {"type": "local_shell_call", "call_id": call, "status": status, "action": action}
        )
    rollout.item({"type": "function_call_output", "call_id": "call_ls1", "output": "a.txt"})
    _check(rollout.lines, allowed=("output-unbound",))
    write_rollout(tmp_path / ".codex" / ROLLOUT, rollout.lines)
    assert convert([tmp_path / ".codex"], tmp_path / "out") == 0
    found = [f.code for f in verify_path(tmp_path / "out") if f.severity != "info"]
    assert found == ["output-unbound", "output-unbound"]
    (session,) = sessions_in(tmp_path / "out").values()
    answers = {i["call_id"]: i["output"] for i in context_items(session) if "output" in i}
    assert answers == {"call_ls1": "a.txt", "call_ls2": "aborted"}
