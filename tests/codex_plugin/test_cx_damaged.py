"""Damaged rollouts: never a traceback; every line that cannot be read is a stray in the
report and comes back, byte for byte, from its entry; every other line is converted as
usual."""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from asf_fuzz_check import time_bound
from cx_helpers import (
    by_tag,
    convert,
    need_shared,
    rebuilt_lines,
    reports_in,
    sessions_in,
    write_rollout,
)
from hypothesis import given
from hypothesis import strategies as st
from output_tampering import holder, json_places

from asf_core.cli.main import main
from asf_core.formats import Finding, NativeSession
from asf_core.verify.session import verify_path
from asf_core.walk import Walk
from codex_plugin.handle import CodexStore
from codex_plugin.native import native_sessions

NAME = "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"


def _x5() -> list[bytes]:
    need_shared()
    return [raw for raw in by_tag("X5").read_bytes().split(b"\n") if raw]


def _readable(raw: bytes) -> Any:
    """What the line is as JSON, or None when a strict reader refuses it."""
    try:
        value = json.loads(
            raw.decode("utf-8"), object_pairs_hook=_no_repeats, parse_constant=_no_constant
        )
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueError("a member named twice")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _converted(
    tmp: Path, lines: list[bytes], *, last_newline: bool = True, allowed: tuple[str, ...] = ()
) -> Any:
    source = tmp / ".codex" / "sessions" / NAME
    write_rollout(source, list(lines))
    if not last_newline:
        source.write_bytes(source.read_bytes()[:-1])
    out = tmp / "out"
    assert convert([tmp / ".codex"], out) == 0
    found = verify_path(out)
    assert [f for f in found if f.severity != "info" and f.code not in allowed] == []
    (session,) = sessions_in(out).values()
    (report,) = reports_in(out)
    return source, session, report


_DAMAGE = st.one_of(
    st.binary(max_size=40).filter(lambda b: b"\n" not in b and b.strip() != b""),
    st.sampled_from(
        [
            b"[1, 2]",
            b'"text"',
            b"null",
            b'{"a": 1, "a": 2}',
            b'{"x": NaN}',
            b"\xff\xfe{}",
            b"[" * 600 + b"]" * 600,
            b'{"type": "response_item", "payload": [1]}',
            b'{"type": "compacted", "payload": {"replacement_history": "x"}}',
            b'{"type": "compacted", "payload": {"replacement_history": [1, 2]}}',
            b'{"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": -4}}',
            b'{"type": "event_msg", "payload": {"type": "token_count", "info": {"a": 3}}}',
            b'{"type": "event_msg", "payload": {"type": "token_count", "info": 3}}',
            b'{"type": "turn_context", "payload": {"model": 5}}',
            b'{"type": 7, "timestamp": 3}',
            b'{"timestamp": "yesterday", "type": "response_item", "payload": {"type": "message"}}',
        ]
    ),
)


@given(st.data())
def test_damaged_lines_are_strays_and_kept(data: st.DataObject) -> None:
    lines = _x5()
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.integers(0, len(lines) - 1))
        lines[where] = data.draw(_DAMAGE)
    with tempfile.TemporaryDirectory() as tmp:
        source, session, report = _converted(Path(tmp), lines)
        rebuilt = rebuilt_lines(session)
        numbered = dict(enumerate(source.read_bytes().split(b"\n"), 1))
        expected = {n: raw for n, raw in numbered.items() if raw.strip()}
        assert sorted(rebuilt) == sorted(expected)
        unreadable = {n for n, raw in expected.items() if _readable(raw) is None}
        for n, raw in expected.items():
            assert rebuilt[n] == (raw if n in unreadable else _readable(raw))
        strays = {int(s["unit"].rsplit(":", 1)[1]) for s in report["strays"]}
        assert strays == unreadable
        assert report["counts"]["unreadable_lines"] == len(unreadable)
        assert report["counts"]["lines"] == len(expected)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b'{"type": "event_msg", "n": -' + b"9" * 400 + b"}", "/n: integer beyond the double"),
        (b'{"type": "event_msg", "\\ud800": 1, "\\udfff": 2}', "names collide once made valid"),
        (b'{"type": "event_msg", "n": ' + b"[" * 510 + b"]" * 510 + b"}", "deeper than 510"),
    ],
)
def test_a_line_no_entry_could_hold_is_a_stray_and_kept(
    tmp_path: Path, line: bytes, why: str
) -> None:
    """Found by the source fuzzer (cases 1018, 1084): a line the strict parse reads but the
    ASF writer cannot write, even normalised (an integer no double holds, names colliding
    once their lone surrogates are replaced, nesting past 510 levels, which the entry's two
    levels take past 512), failed the plugin: the store stopped, exit 3."""
    lines = _x5()
    lines.insert(3, line)
    _, session, report = _converted(tmp_path, lines)
    (stray,) = report["strays"]
    assert stray["unit"].endswith(":4")
    assert why in stray["message"]
    assert rebuilt_lines(session)[4] == line


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_blank_lines_ending_a_rollout_are_no_change(tmp_path: Path, jobs: str) -> None:
    """Found by the source fuzzer (case 2507): the first reading's digest took the blank
    lines after the last line, the last pass stopped at that line's end, and the rollout was
    refused as changed while being converted (exit 2), however it ended: one blank line,
    several, or nothing but blank lines."""
    need_shared()
    source = tmp_path / ".codex" / "sessions" / NAME
    write_rollout(source, [*_x5(), b"", b" \t"])
    blank = "rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-00000000000e.jsonl"
    write_rollout(tmp_path / ".codex" / "sessions" / blank, [b"", b""])
    out = tmp_path / "out"
    assert convert([tmp_path / ".codex"], out, "-j", jobs) == 0
    (report,) = reports_in(out)
    assert report["complete"] is True
    assert report["strays"] == []
    assert len(report["files"]) == 2


def test_a_thread_id_with_a_lone_surrogate_is_a_session_of_its_own(tmp_path: Path) -> None:
    """Found by the source fuzzer (case 3417): a header's ``id`` escaping a lone surrogate
    made its ASF id (UUIDv5 over the thread) raise, in ``list`` and ``convert`` alike."""
    lines = _x5()
    lines[0] = (
        lines[0].replace(b'"id": "', b'"id": "x\\udc00', 1).replace(b'"id":"', b'"id":"x\\udc00', 1)
    )
    assert b"x\\udc00" in lines[0]
    _, session, report = _converted(tmp_path, lines)
    assert report["strays"] == []
    assert uuid.UUID(session.header.id).version == 5  # named by the thread and the file
    assert main(["list", str(tmp_path / ".codex"), "--json"]) == 0


def test_a_call_id_repeated_thousands_of_times_converts_in_linear_time(tmp_path: Path) -> None:
    """Found by the source fuzzer's crafted files: each repeat of a call id looked for its
    ``<id>-<n>`` from n = 1, so 12,000 unanswered calls of one id took about 30 s (20,000:
    80 s); now each starts where the last stopped."""
    need_shared()
    call = {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"}
    line = json.dumps(
        {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": call}
    )
    source = tmp_path / ".codex" / "sessions" / NAME
    write_rollout(source, [_x5()[0], *[line.encode()] * 12_000])
    with time_bound(6):
        assert convert([tmp_path / ".codex"], tmp_path / "out", "-j", "1") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    calls = [e.item["call_id"] for e in session.entries if e.type == "item"]
    assert calls[:4] == ["c", "c", "c-2", "c-2"]  # each call, then its aborted output
    assert len(set(calls)) == 12_000


def test_thousands_of_compactions_convert_in_linear_time(tmp_path: Path) -> None:
    """Found by the source fuzzer's crafted files: each compaction rebuilt the history from
    the path's first step and replayed every settings entry since its start, so 5,000
    compactions took 15 s (10,000: 60 s); now each starts from the last fold."""
    need_shared()

    def line(kind: str, payload: dict[str, Any]) -> bytes:
        return json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload})

    def user(text: str) -> dict[str, Any]:
        return {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        }

    lines = [_x5()[0]]
    for n in range(5_000):
        lines.append(line("response_item", user(f"u{n}")).encode())
        history = {"message": "s", "replacement_history": [user("h")]}
        lines.append(line("compacted", history).encode())
    write_rollout(tmp_path / ".codex" / "sessions" / NAME, lines)
    with time_bound(6):
        assert convert([tmp_path / ".codex"], tmp_path / "out", "-j", "1") == 0
    (report,) = reports_in(tmp_path / "out")
    assert report["counts"]["compactions"] == 5_000


def test_truncated_last_line_is_said(tmp_path: Path) -> None:
    lines = _x5()
    lines[-1] = lines[-1][: len(lines[-1]) // 2]
    _, session, report = _converted(tmp_path, lines, last_newline=False)
    (stray,) = report["strays"]
    assert stray["data"]["truncated"] is True
    assert stray["unit"].endswith(f":{len(lines)}")
    last = session.entries[-1]
    assert last.type == "custom"
    assert last.data["truncated"] is True


def test_empty_and_unreadable_files_are_findings(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    empty = root / "rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-00000000000e.jsonl"
    write_rollout(empty, [])
    store = CodexStore(root)
    (listed,) = native_sessions(store, read_files=True)
    assert isinstance(listed, NativeSession)
    assert [f.message for f in listed.findings] == ["empty rollout"]
    gone = root / "rollout-gone.jsonl"
    store.files = lambda: Walk(files=(gone,))  # type: ignore[method-assign]
    (finding,) = native_sessions(store, read_files=True)
    assert isinstance(finding, Finding)
    assert finding.kind == "stray"
    assert finding.message == "cannot read the file: No such file or directory"  # no errno
    assert finding.unit == "rollout-gone.jsonl"


def test_a_file_that_vanishes_before_converting_stops_its_store(tmp_path: Path) -> None:
    from codex_plugin.convert.store import convert_sessions

    need_shared()
    root = tmp_path / "sessions"
    source = write_rollout(root / NAME, [json.loads(raw) for raw in _x5()])
    store = CodexStore(root)
    sessions = [s for s in native_sessions(store, read_files=True) if not isinstance(s, Finding)]
    source.unlink()
    from asf_core.formats import StoreError

    with pytest.raises(StoreError, match=r"cannot be read: No such file or directory$"):
        list(convert_sessions(store, sessions))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(st.data())
def test_odd_shapes_in_sound_lines_are_kept(data: st.DataObject) -> None:
    """Real lines with a member (anywhere) given another value: never a traceback, the
    output verifies, and every line comes back as it was written."""
    need_shared()
    lines = [json.loads(raw) for raw in by_tag("X6").read_bytes().splitlines()]
    for _ in range(data.draw(st.integers(1, 3))):
        line = lines[data.draw(st.integers(0, len(lines) - 1))]
        where = data.draw(st.sampled_from(json_places(line)[1:]))
        holder(line, where)[where[-1]] = data.draw(_JSON)
    raw = [json.dumps(line).encode() for line in lines]
    with tempfile.TemporaryDirectory() as tmp:
        # a call made something else leaves its output without a call: a warning
        _, session, report = _converted(Path(tmp), raw, allowed=("output-unbound",))
        assert report["strays"] == []
        assert rebuilt_lines(session) == dict(enumerate(lines, 1))


def test_repeated_and_missing_call_ids(tmp_path: Path) -> None:
    """A call id used twice is made unique (``<id>-2``, the native one kept beside the item)
    and its output follows it; a call without a call id is no call Codex can load: kept, out
    of the context."""

    def line(item: dict[str, Any]) -> bytes:
        return json.dumps(
            {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": item}
        ).encode()

    call = {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"}
    answer = {"type": "function_call_output", "call_id": "c", "output": "ok"}
    lines = [line(call), line(answer), line(call), line(answer), line({**call, "call_id": ""})]
    _, session, _ = _converted(tmp_path, lines)
    items = [e.item for e in session.entries if e.type == "item"]
    assert [i["call_id"] for i in items] == ["c", "c", "c-2", "c-2"]
    assert session.entries[2].unknown["codex"]["call_id"] == "c"
    assert session.entries[-1].type == "custom"
    assert rebuilt_lines(session) == {n: json.loads(raw) for n, raw in enumerate(lines, 1)}
