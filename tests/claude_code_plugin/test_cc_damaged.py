"""Damaged input: strays or clear one-line errors, never a traceback, never a lost store."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
from pathlib import Path
from types import FrameType

import pytest
from asf_fuzz_check import time_bound
from cc_helpers import NS, PROJECTS, context_texts, read_project, reports_in, run, sessions_in
from cc_rebuild import rebuild
from cc_synth import SESSION, Lines, kitchen_sink, simple

from asf_core.cli.main import ExitCode
from asf_core.formats import StoreError
from asf_core.pipeline import host
from asf_core.verify.session import verify_path
from claude_code_plugin.convert import units
from claude_code_plugin.handle import ClaudeStore, Group

PROJECT = "-home-u-proj"


def _convert(
    capsys: pytest.CaptureFixture[str], path: Path, out: Path
) -> tuple[int, list[dict[str, object]]]:
    code, _, _ = run(capsys, "convert", path, "-o", out, "--quiet")
    assert [f for f in verify_path(out) if f.severity != "info"] == []
    return code, reports_in(out)


def test_truncated_last_line_of_a_live_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Claude Code is writing the last line: it is kept raw and reported; once whole, the
    next run converts it, and every entry before it keeps its id."""
    s = simple()
    path = s.write(tmp_path / PROJECT)
    whole = path.read_bytes()
    cut = whole[: len(whole) - 40]  # the last line, half written
    path.write_bytes(cut)
    code, (report,) = _convert(capsys, tmp_path / PROJECT, tmp_path / "o1")
    assert code == ExitCode.OK
    (stray,) = report["strays"]
    assert stray["unit"] == f"{SESSION}.jsonl:{len(s.objects)}"
    assert stray["data"]["truncated"] is True
    assert stray["message"].startswith("truncated last line, kept as raw text in a custom entry")
    first = sessions_in(tmp_path / "o1")[SESSION]
    tail = first.entries[-1]
    assert tail.type == "custom"
    assert tail.data["truncated"] is True  # type: ignore[attr-defined]
    assert tail.data["text"].encode() == cut.splitlines()[-1]  # type: ignore[attr-defined]
    path.write_bytes(whole)
    code, (report,) = _convert(capsys, tmp_path / PROJECT, tmp_path / "o2")
    assert report["strays"] == []
    second = sessions_in(tmp_path / "o2")[SESSION]
    kept = [e.id for e in first.entries[:-1]]
    assert [e.id for e in second.entries[: len(kept)]] == kept  # appending changes no old entry
    assert context_texts(second)[-1] == "assistant:Done."


def test_corrupt_middle_line_is_kept_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = simple()
    path = s.write(tmp_path / PROJECT)
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(3, b'{"type": "user", "uuid": \xff broken\n')
    path.write_bytes(b"".join(lines))
    code, (report,) = _convert(capsys, tmp_path / PROJECT, tmp_path / "o")
    assert code == ExitCode.OK
    (stray,) = report["strays"]
    assert stray["unit"] == f"{SESSION}.jsonl:4"
    assert stray["data"]["truncated"] is False
    session = sessions_in(tmp_path / "o")[SESSION]
    (bad,) = [e for e in session.entries if e.unknown[NS].get("line") == 4]
    assert bad.type == "custom"
    assert "base64" in bad.data  # type: ignore[attr-defined]
    assert context_texts(session)[-1] == "assistant:Done."  # the rest is still one conversation
    assert len(session.leaves()) == 1


def test_unknown_line_types_and_members_are_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = Lines()
    u = s.user(None, "hi", brandNewMember={"nested": [1, 2]})
    s._entry("telemetry-blip", u, payload={"x": 1})  # an unknown transcript line type
    s.raw({"type": "mode", "mode": "plan", "sessionId": SESSION})  # unknown bookkeeping
    s.raw({"no": "type at all"})
    a = s.text(u, "msg_1", "hello")
    s.assistant(a, "msg_1", {"type": "server_tool_use", "id": "srv_1", "name": "web_search"})
    path = s.write(tmp_path / PROJECT)
    code, _ = _convert(capsys, tmp_path / PROJECT, tmp_path / "o")
    assert code == ExitCode.OK
    session = sessions_in(tmp_path / "o")[SESSION]
    originals = [json.loads(raw) for raw in path.read_bytes().splitlines()]
    assert rebuild(session) == dict(enumerate(originals, 1))
    assert context_texts(session) == ["user:hi", "assistant:hello", "claude-code:block"]


@pytest.mark.parametrize(
    ("member", "value"), [("uuid", 7), ("uuid", ""), ("type", 5), ("type", None), ("type", {})]
)
def test_a_uuid_or_type_of_another_type_is_not_a_file_that_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], member: str, value: object
) -> None:
    """Found by the source fuzzer (cases 28, 1015): the second pass compared a line's raw
    ``uuid`` and ``type`` with the index's (None for a number or an empty uuid) and stopped
    the store as changed while being converted; a type that is an object failed the plugin
    (unhashable, looked up in a set)."""
    s = simple()
    s.objects[3][member] = value
    path = s.write(tmp_path / PROJECT)
    code, _, _ = run(capsys, "convert", tmp_path / PROJECT, "-o", tmp_path / "o", "--quiet")
    assert code == ExitCode.OK
    assert [f for f in verify_path(tmp_path / "o") if f.severity == "error"] == []
    (report,) = reports_in(tmp_path / "o")
    assert report["complete"] is True
    session = sessions_in(tmp_path / "o")[SESSION]
    originals = [json.loads(raw) for raw in path.read_bytes().splitlines()]
    assert rebuild(session) == dict(enumerate(originals, 1))


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b'{"type": "mode", "n": -' + b"9" * 400 + b"}", "/n: integer beyond the double"),
        (b'{"type": "mode", "\\ud800": 1, "\\udfff": 2}', "names collide once made valid"),
        (b'{"type": "mode", "\xff": 1, "\xfe": 2}', "names collide once made valid"),
        (b'{"type": "mode", "n": ' + b"[" * 510 + b"]" * 510 + b"}", "deeper than 510"),
    ],
)
def test_a_line_no_entry_could_hold_is_a_stray_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: bytes, why: str
) -> None:
    """Found by the source fuzzer (cases 1015, 1027): a line the strict parse reads but the
    ASF writer cannot write, even normalised (an integer no double holds, names colliding
    once their lone surrogates or bad bytes are replaced, nesting past 510 levels, which the
    entry's two levels take past 512), failed the plugin: the store stopped, exit 3."""
    path = simple().write(tmp_path / PROJECT)
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(3, line + b"\n")
    path.write_bytes(b"".join(lines))
    code, (report,) = _convert(capsys, tmp_path / PROJECT, tmp_path / "o")
    assert code == ExitCode.OK
    (stray,) = report["strays"]
    assert stray["unit"] == f"{SESSION}.jsonl:4"
    assert why in stray["message"]
    session = sessions_in(tmp_path / "o")[SESSION]
    (kept,) = [e for e in session.entries if e.unknown[NS].get("line") == 4]
    data = kept.data  # type: ignore[attr-defined]
    raw = base64.b64decode(data["base64"]) if "base64" in data else data["text"].encode()
    assert raw == line


def test_a_spawning_call_id_with_a_lone_surrogate_links_its_sub_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found with the source fuzzer's case 3417 (the same flaw in Codex): the sub-agent's
    ASF id is a UUIDv5 over its holder's id and the call's, and a call id escaping a lone
    surrogate made it raise: the plugin failed and the project stopped."""
    path = kitchen_sink(tmp_path / PROJECT)
    path.write_bytes(path.read_bytes().replace(b'"toolu_task"', b'"toolu_\\ud800task"'))
    code, _, _ = run(capsys, "convert", tmp_path / PROJECT, "-o", tmp_path / "o", "--quiet")
    assert code == ExitCode.OK
    assert [f for f in verify_path(tmp_path / "o") if f.severity == "error"] == []
    child = sessions_in(tmp_path / "o")[f"{SESSION}.agent-kit0001"]
    assert child.header.spawned_by == "toolu_\ufffdtask"  # as the writer made it valid text


def test_a_call_id_repeated_thousands_of_times_converts_in_linear_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by the source fuzzer's crafted files: each repeat of a ``tool_use`` id looked for
    its ``<id>-<n>`` from n = 2, so 12,000 repeats took about 10 s (20,000: 26 s); now each
    starts where the last stopped."""
    s = Lines()
    parent = s.user(None, "go")
    for _ in range(12_000):
        parent = s.call(parent, "msg_1", "toolu_same")
    s.write(tmp_path / PROJECT)
    with time_bound(6):
        code, _, _ = run(capsys, "convert", tmp_path / PROJECT, "-o", tmp_path / "o", "-j", "1")
    assert code == ExitCode.OK
    session = sessions_in(tmp_path / "o")[SESSION]
    items = [e.item for e in session.entries if e.type == "item"]  # type: ignore[attr-defined]
    calls = [i["call_id"] for i in items if i["type"] == "function_call"]
    assert calls[:3] == ["toolu_same", "toolu_same-2", "toolu_same-3"]
    assert len(set(calls)) == 12_000


@pytest.mark.parametrize("alone", [False, True])
def test_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], alone: bool) -> None:
    empty = tmp_path / PROJECT / "22222222-2222-4222-8222-222222222222.jsonl"
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")
    if not alone:
        simple().write(tmp_path / PROJECT)
    code, (report,) = _convert(capsys, empty if alone else tmp_path / PROJECT, tmp_path / "o")
    assert code == ExitCode.OK
    assert any(f["message"] == "empty session file: nothing to convert" for f in report["findings"])
    assert sorted(report["files"]) == ([] if alone else [SESSION])


def test_an_empty_session_picked_alone_is_nothing_to_show_not_a_plugin_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real project with an empty session file beside its sessions: a whole run reports
    it as a warning (exit 0); picked alone (``asf show --session``, ``convert -o -``) it is
    nothing to show, said with the plugin's own reason (exit 4). It was 'plugin
    'claude-code' failed in convert: converted nothing for session ...', exit 3, as if the
    plugin had broken the hook contract, and the reason was lost."""
    project = tmp_path / "-home-marco-projects-spotter"
    shutil.copytree(PROJECTS / project.name, project)
    (project / "empty.jsonl").write_bytes(b"")
    expected = f"asf: {project}: empty: empty session file: nothing to convert\n"
    for argv in (["show", project], ["convert", project, "-o", "-"]):
        code, out, err = run(capsys, *argv, "--session", "empty")
        assert (code, out, err) == (ExitCode.NOTHING, "", expected)
    code, (report,) = _convert(capsys, project, tmp_path / "o")
    assert code == ExitCode.OK
    assert {"message": "empty session file: nothing to convert"}.items() <= next(
        f for f in report["findings"] if f.get("session") == "empty"
    ).items()


def test_subagent_without_its_session_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = simple(Lines(agentId="abc1234", isSidechain=True))
    agent.write(tmp_path / PROJECT / SESSION / "subagents", "agent-abc1234")
    code, (report,) = _convert(capsys, tmp_path / PROJECT, tmp_path / "o")
    assert code == ExitCode.OK
    assert any("session file is missing" in f["message"] for f in report["strays"])
    (name,) = report["files"]
    session = sessions_in(tmp_path / "o")[name]
    assert session.header.parent_session is None
    assert session.header.unknown[NS]["agent"] == "abc1234"
    assert context_texts(session)[-1] == "assistant:Done."
    # Given on its own, the sub-agent file converts the same way.
    alone = tmp_path / PROJECT / SESSION / "subagents" / "agent-abc1234.jsonl"
    code, (report,) = _convert(capsys, alone, tmp_path / "o2")
    assert code == ExitCode.OK
    assert list(report["files"]) == [name]


@pytest.mark.parametrize("layout", ["subagents", "legacy"])
def test_a_subagent_file_named_alone_beside_its_session_file_says_so(
    layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its session file is there, only not named: the report said it was missing (a stray);
    it names the session file and what to do instead (a warning: nothing is lost)."""
    project = tmp_path / PROJECT
    main = simple().write(project)
    folder = project / SESSION / "subagents" if layout == "subagents" else project
    alone = simple(Lines(agentId="abc1234", isSidechain=True)).write(folder, "agent-abc1234")
    code, (report,) = _convert(capsys, alone, tmp_path / "o")
    assert code == ExitCode.OK
    assert report["strays"] == []
    (finding,) = report["findings"]
    assert finding["kind"] == "warning"
    assert finding["message"] == (
        "a sub-agent's transcript named on its own: converted as a session of its own, not "
        f"as a sub-agent of {main} (name that file or its project directory to convert them "
        "together)"
    )
    assert "missing" not in json.dumps(report)


def test_legacy_project_level_subagent_is_linked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before CLI 2.1.2 sub-agent transcripts sat in the project directory."""
    s = Lines()
    u = s.user(None, "delegate")
    c = s.call(u, "msg_1", "toolu_task", name="Task")
    s.result(
        c, "toolu_task", "found it", toolUseResult={"agentId": "legacy1", "status": "completed"}
    )
    s.write(tmp_path / PROJECT)
    agent = simple(Lines(agentId="legacy1", isSidechain=True))
    agent.write(tmp_path / PROJECT, "agent-legacy1")
    code, _ = _convert(capsys, tmp_path / PROJECT, tmp_path / "o")
    assert code == ExitCode.OK
    sessions = sessions_in(tmp_path / "o")
    child = sessions[f"{SESSION}.agent-legacy1"]
    assert child.header.parent_session == sessions[SESSION].header.id
    assert child.header.spawned_by == "toolu_task"


def test_file_changed_while_converting_is_a_clear_error(tmp_path: Path) -> None:
    """The file is rewritten between reading and converting: the store stops with the
    input's error, no traceback, no partial file."""
    path = simple().write(tmp_path / PROJECT)
    pm, candidate, store, natives = read_project(tmp_path / PROJECT)
    path.write_bytes(b'{"type": "user"}\n')  # rewritten, shorter
    (converted,) = list(host.convert(pm, candidate.plugin, store, natives))
    with pytest.raises(StoreError, match="changed while being converted"):
        list(converted.entries)


class Stalled(Exception):
    """The conversion waited too long (not an ``OSError``: nothing may take it for one)."""


def _stalled(signum: int, frame: FrameType | None) -> None:
    raise Stalled


def _convert_in_time(capsys: pytest.CaptureFixture[str], path: Path, out: Path) -> int:
    """Convert (in this process), failing the test if that takes ten seconds."""
    before = signal.signal(signal.SIGALRM, _stalled)
    signal.alarm(10)
    try:
        code, _, _ = run(capsys, "convert", path, "-o", out, "-j", "1")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    return code


def test_a_meta_json_that_is_a_fifo_does_not_stall_the_conversion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO in a sub-agent's ``.meta.json`` place: opening it to read waited for a writer
    forever; it is not a readable one, so the header has no ``meta``."""
    kitchen_sink(tmp_path / PROJECT)
    os.mkfifo(tmp_path / PROJECT / SESSION / "subagents" / "agent-kit0001.meta.json")
    assert _convert_in_time(capsys, tmp_path / PROJECT, tmp_path / "o") == ExitCode.OK
    child = sessions_in(tmp_path / "o")[f"{SESSION}.agent-kit0001"]
    assert "meta" not in child.header.unknown[NS]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (None, "cannot be read: not a regular file"),
        (b"{not json", "not JSON"),
        (b'{"agentType": "' + b"x" * (1 << 20) + b'"}', "larger than 1048576 bytes"),
        # JSON, but the header holding it two levels down would nest past an ASF line's 512
        # levels: the sub-agent's whole conversion failed (plugin error, exit 3).
        (b'{"a":' * 511 + b"1" + b"}" * 511, "nested deeper than 510 levels"),
        # Found by the source fuzzer's probes: so did a number no double holds, and names
        # that collide once their lone surrogates are replaced.
        (b'{"a": -' + b"9" * 400 + b"}", "/a: integer beyond the double range"),
        (b'{"\\ud800": 1, "\\udfff": 2}', "member names collide once made valid text"),
    ],
    ids=["fifo", "not-json", "huge", "deep", "huge-number", "colliding-names"],
)
def test_a_meta_json_that_cannot_be_kept_is_dropped_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, why: str
) -> None:
    """A sub-agent's ``.meta.json`` that is there but cannot be kept (not a regular file, not
    JSON, larger than a real one could be: read whole, it went into the header) is a
    ``dropped`` finding of its session, never silently gone; the header has no ``meta``."""
    kitchen_sink(tmp_path / PROJECT)
    meta = tmp_path / PROJECT / SESSION / "subagents" / "agent-kit0001.meta.json"
    if content is None:
        os.mkfifo(meta)
    else:
        meta.write_bytes(content)
    assert _convert_in_time(capsys, tmp_path / PROJECT, tmp_path / "o") == ExitCode.OK
    child = sessions_in(tmp_path / "o")[f"{SESSION}.agent-kit0001"]
    assert "meta" not in child.header.unknown[NS]
    (report,) = reports_in(tmp_path / "o")
    (dropped,) = [d for d in report["dropped"] if "meta.json" in d["message"]]
    assert dropped["message"].startswith(f"sub-agent's agent-kit0001.meta.json {why}")
    assert dropped["unit"] == f"{SESSION}/subagents/agent-kit0001.meta.json"
    assert dropped["session"] == SESSION


@pytest.mark.parametrize("which", ["session", "sub-agent"])
def test_a_transcript_replaced_by_a_fifo_after_the_listing_does_not_stall(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    """A transcript the listing found a file is a FIFO when its unit reads it (a store's
    units run one after another, long after the listing): it cannot be read (a stray), and
    the run goes on, where opening it waited for a writer forever."""
    kitchen_sink(tmp_path / PROJECT)
    real = units.fingerprint

    def then_a_fifo(store: ClaudeStore, group: Group) -> str:
        made = real(store, group)
        path = group.files.main if which == "session" else group.files.agents[0]
        assert path is not None
        path.unlink()
        os.mkfifo(path)
        return made

    monkeypatch.setattr(units, "fingerprint", then_a_fifo)
    assert _convert_in_time(capsys, tmp_path / PROJECT, tmp_path / "o") == ExitCode.OK
    (report,) = reports_in(tmp_path / "o")
    assert [s["message"] for s in report["strays"] if "cannot be read" in s["message"]] == [
        f"{'session file' if which == 'session' else 'sub-agent transcript'} cannot be read: "
        "not a regular file"
    ]


def test_not_a_claude_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    garbage = tmp_path / "33333333-3333-4333-8333-333333333333.jsonl"
    garbage.write_bytes(b"\x00\x01binary\x00")
    code, _, stderr = run(capsys, "convert", garbage, "-o", tmp_path / "o")
    assert code == ExitCode.NOTHING
    assert stderr.strip() == f"asf: {garbage}: no format plugin recognises it"


def test_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run(capsys, "convert", tmp_path / "nope", "-o", tmp_path / "o")
    assert code == ExitCode.USAGE
    assert stderr.count("\n") == 1


def test_session_files_named_by_bytes_that_are_not_utf8_convert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session file (or a rollout) whose name is not UTF-8 is named by lone surrogates,
    which the UUIDv5 of its ASF id could not encode (the plugin failed, exit 3, before
    e2d7e02); each converts, under its own id."""
    data = simple().bytes()
    project = tmp_path / PROJECT
    project.mkdir()
    for name in (b"11111111-2222-4333-8444-55555555\xff.jsonl", b"\xfe\xff.jsonl"):
        (project / os.fsdecode(name)).write_bytes(data)
    code, _, _ = run(capsys, "convert", project, "-o", tmp_path / "o", "--quiet")
    assert code == ExitCode.OK
    (report,) = reports_in(tmp_path / "o")
    assert report["complete"] is True
    assert len({s.header.id for s in sessions_in(tmp_path / "o").values()}) == 2
