"""The ``convert`` hook streams a rollout: four times the turns, about the same peak of
traced memory (a conversion holding the file's lines or entries needs four times as much).
Its last pass reads the file again: what Codex appended meanwhile waits for the next run, and
a file rewritten meanwhile (shorter, or byte for byte in place) stops the rollout."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from cx_helpers import write_rollout

import codex_plugin.plugin as plugin
from asf_core.formats import ConvertedSession, StoreError
from asf_core.model import Custom
from codex_plugin.handle import CodexStore
from codex_plugin.native import native_sessions

JSON = dict[str, Any]
THREAD = "0199aaaa-0000-7000-8000-000000000002"
ROLLOUT = f"sessions/2026/03/01/rollout-2026-03-01T10-00-00-{THREAD}.jsonl"
#: Each tool output's size: the lines, not their number, must make a held file show.
OUTPUT = 20_000


def _line(n: int, kind: str, payload: JSON) -> JSON:
    return {"timestamp": f"2026-03-01T10:00:00.{n % 1000:03d}Z", "type": kind, "payload": payload}


def _rollout(turns: int) -> list[JSON]:
    """A thread of ``turns`` turns, each a tool call and its long output, with a compaction
    and a rollback halfway, and a call left open at the end (answered ``aborted``)."""
    lines = [_line(0, "session_meta", {"id": THREAD, "timestamp": "2026-03-01T10:00:00Z"})]
    for n in range(turns):
        text = [{"type": "input_text", "text": f"turn {n}"}]
        user = {"type": "message", "role": "user", "content": text}
        lines.append(_line(n, "turn_context", {"model": "gpt-5", "effort": "high"}))
        lines.append(_line(n, "response_item", user))
        call = {"type": "function_call", "call_id": f"c{n}", "name": "shell", "arguments": "{}"}
        lines.append(_line(n, "response_item", call))
        output = {"type": "function_call_output", "call_id": f"c{n}", "output": "x" * OUTPUT}
        lines.append(_line(n, "response_item", output))
        if n == turns // 2:
            lines.append(_line(n, "compacted", {"message": "", "replacement_history": [user]}))
        if n == turns // 2 + 1:
            lines.append(_line(n, "event_msg", {"type": "thread_rolled_back", "num_turns": 1}))
    open_call = {"type": "function_call", "call_id": "open", "name": "shell", "arguments": "{}"}
    lines.append(_line(turns, "response_item", open_call))
    return lines


def _compacted_turns(turns: int) -> list[JSON]:
    """A thread of ``turns`` turns, each a tool call and its long output, each turn then
    compacted to a replacement history holding that output again (and an open call)."""
    lines = [_line(0, "session_meta", {"id": THREAD, "timestamp": "2026-03-01T10:00:00Z"})]
    for n in range(turns):
        user = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "go"}],
        }
        call = {"type": "function_call", "call_id": f"c{n}", "name": "shell", "arguments": "{}"}
        output = {"type": "function_call_output", "call_id": f"c{n}", "output": "y" * OUTPUT}
        lines += [_line(n, "response_item", item) for item in (user, call, output)]
        history = [user, call, output]
        lines.append(_line(n, "compacted", {"message": "", "replacement_history": history}))
    open_call = {"type": "function_call", "call_id": "open", "name": "shell", "arguments": "{}"}
    lines.append(_line(turns, "response_item", open_call))
    return lines


def _peak(root: Path, turns: int, shape: Any = _rollout) -> tuple[int, int]:
    """The peak of traced memory while the hook converts a rollout of ``turns`` turns and
    its entries are consumed one by one; and how many there were."""
    write_rollout(root / ".codex" / ROLLOUT, list(shape(turns)))
    store = CodexStore(root / ".codex" / "sessions")
    sessions = list(native_sessions(store, read_files=True))
    entries = 0
    tracemalloc.start()
    try:
        converted = plugin.convert(store=store, sessions=sessions)
        assert converted is not None
        for item in converted:
            if isinstance(item, ConvertedSession):
                assert item.counts["aborted_calls"] == 1
                for _ in item.entries:
                    entries += 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, entries


def test_memory_does_not_follow_the_rollout(tmp_path: Path) -> None:
    _peak(tmp_path / "warm", 4)  # the modules the hook imports, loaded before measuring
    small, small_entries = _peak(tmp_path / "small", 40)
    big, big_entries = _peak(tmp_path / "big", 160)
    assert big_entries > 3.5 * small_entries
    # 40 turns hold 0.8 MB of tool outputs, 160 turns 3.2 MB: held, they would show (the
    # whole-file conversion peaked at 3.5 MB and 12.4 MB). What may grow is a few small facts
    # a line (its entry's id, an item's brief and place), not a tenth of the outputs added.
    assert big < small * 1.5, (small, big)
    assert big - small < 120 * OUTPUT / 10, (small, big)


def test_replacement_histories_are_not_held(tmp_path: Path) -> None:
    """A compaction's replacement history is read again from its line when a rule needs it;
    the settings the path keeps for the next checkpoint hold none of its items (each of these
    holds a 20 kB output: 120 more held would be 2.4 MB; what grows is the compaction
    entries' own settings, about 2 kB each)."""
    _peak(tmp_path / "warm", 4, _compacted_turns)
    small, small_entries = _peak(tmp_path / "small", 40, _compacted_turns)
    big, big_entries = _peak(tmp_path / "big", 160, _compacted_turns)
    assert big_entries > 3.5 * small_entries
    assert big - small < 120 * OUTPUT / 4, (small, big)


def test_nothing_stays_after_a_conversion(tmp_path: Path) -> None:
    """What a conversion keeps of its calls (their briefs, each call id given) goes with it:
    converting a rollout of 2,000 calls leaves no more memory in use than before."""

    def calls(root: Path, prefix: str, count: int) -> None:
        lines = [_line(0, "session_meta", {"id": THREAD, "timestamp": "2026-03-01T10:00:00Z"})]
        for n in range(count):
            call = {"type": "function_call", "call_id": f"{prefix}{n}", "name": "s"}
            lines.append(_line(n, "response_item", {**call, "arguments": "{}"}))
            lines.append(_line(n, "response_item", {**call, "type": "function_call_output"}))
        write_rollout(root / ".codex" / ROLLOUT, lines)

    calls(tmp_path / "warm", "w", 50)  # converted whole first: every module and cache loaded
    calls(tmp_path / "many", "k", 2000)
    assert len(list(_session(tmp_path / "warm").entries)) == 101
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        assert len(list(_session(tmp_path / "many").entries)) == 4001
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 100_000, (before, after)


def _session(root: Path) -> ConvertedSession:
    """The rollout under ``root`` converted, its entries not pulled yet."""
    store = CodexStore(root / ".codex" / "sessions")
    converted = plugin.convert(store=store, sessions=list(native_sessions(store, read_files=True)))
    assert converted is not None
    (session,) = [item for item in converted if isinstance(item, ConvertedSession)]
    return session


def test_lines_appended_meanwhile_wait(tmp_path: Path) -> None:
    path = write_rollout(tmp_path / "a" / ".codex" / ROLLOUT, _rollout(6))
    expected = list(_session(tmp_path / "a").entries)
    session = _session(tmp_path / "a")
    with path.open("a") as stream:  # Codex writes on after the first pass
        stream.write(json.dumps(_line(9, "event_msg", {"type": "task_complete"})) + "\n")
    assert list(session.entries) == expected
    assert session.counts["entries"] == len(expected)


def test_a_line_finished_meanwhile_waits(tmp_path: Path) -> None:
    """Codex was writing the last line when the first pass read it (no newline yet, not
    JSON yet): the last pass reads up to where the first stopped, so the session is the
    first reading's, its last line kept raw as truncated, and the rest waits."""
    whole = json.dumps(_line(9, "event_msg", {"type": "task_complete"})).encode() + b"\n"
    path = write_rollout(tmp_path / ".codex" / ROLLOUT, _rollout(6))
    with path.open("ab") as stream:
        stream.write(whole[:20])
    session = _session(tmp_path)
    with path.open("ab") as stream:
        stream.write(whole[20:])
    entries = list(session.entries)
    assert len(entries) == session.counts["entries"]
    last = entries[-1]
    assert isinstance(last, Custom)
    assert last.data == {
        "unreadable": last.data["unreadable"],
        "text": whole[:20].decode(),
        "truncated": True,
    }


def test_a_line_rewritten_before_it_is_read_again_stops(tmp_path: Path) -> None:
    """A legacy compaction reads the user turns before it again from their lines: one
    rewritten in place (no longer JSON) after the last pass passed it stops the rollout as
    changed, never a traceback. (A long answer between the turns makes the reading go back
    to the file, not to what it read before.)"""

    def said(role: str, text: str) -> JSON:
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    lines = [
        _line(0, "session_meta", {"id": THREAD, "timestamp": "2026-03-01T10:00:00Z"}),
        _line(1, "response_item", said("user", "a")),
        _line(2, "response_item", said("assistant", "x" * OUTPUT)),
        _line(3, "response_item", said("user", "b")),
        _line(4, "compacted", {"message": "summary"}),
    ]
    path = write_rollout(tmp_path / ".codex" / ROLLOUT, lines)
    entries = iter(_session(tmp_path).entries)
    assert [next(entries).type for _ in range(4)] == ["config", "item", "item", "item"]
    data = path.read_bytes()
    second = data.index(b"\n") + 1
    path.write_bytes(data[:second] + b"#" + data[second + 1 :])
    with pytest.raises(StoreError, match="changed while being converted"):
        list(entries)


def test_a_rollout_removed_meanwhile_stops(tmp_path: Path) -> None:
    """Gone between the passes (Codex archived the thread): the rollout stops with the
    system's reason."""
    path = write_rollout(tmp_path / ".codex" / ROLLOUT, _rollout(3))
    session = _session(tmp_path)
    path.unlink()
    with pytest.raises(StoreError, match=r"cannot be read: No such file or directory$"):
        list(session.entries)


def test_a_rollout_rewritten_meanwhile_stops(tmp_path: Path) -> None:
    path = write_rollout(tmp_path / ".codex" / ROLLOUT, _rollout(6))
    session = _session(tmp_path)
    write_rollout(path, _rollout(3))
    with pytest.raises(StoreError, match="changed while being converted"):
        list(session.entries)


def test_a_rewrite_keeping_every_line_and_entry_stops_too(tmp_path: Path) -> None:
    """One character of a prompt changed in place between the passes: the same lines, the
    same entries, other bytes. The session is refused whole, never written from the first
    reading's counts and the second reading's contents."""
    lines = _rollout(6)
    path = write_rollout(tmp_path / ".codex" / ROLLOUT, lines)
    session = _session(tmp_path)
    data = path.read_bytes()
    assert data.count(b'"turn 1"') == 1
    path.write_bytes(data.replace(b'"turn 1"', b'"turn X"'))
    with pytest.raises(StoreError, match="changed while being converted"):
        list(session.entries)
