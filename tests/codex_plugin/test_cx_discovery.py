"""Which paths the Codex plugin claims, and what it lists: a Codex home, a home holding
``.codex``, the ``sessions`` directory or one below it, one rollout file, the default
(``$CODEX_HOME`` or ``~/.codex``); never another format's files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cx_helpers import (
    CODEX_HOME,
    SESSIONS,
    by_tag,
    convert,
    need_shared,
    sessions_in,
    write_rollout,
)
from fixture_paths import CLAUDE_HOME

import codex_plugin.plugin as plugin
from asf_core.formats import Claim, NativeSession
from asf_core.layout import store_dir
from codex_plugin.handle import CodexStore
from codex_plugin.native import native_sessions
from codex_plugin.source.layout import sniff

ROLLOUT = "rollout-2026-03-01T10-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl"
META = {"timestamp": "2026-03-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": "t"}}


def _claims(path: Path | None) -> list[tuple[Path, float]]:
    found = plugin.discover(path) or []
    return [(c.path, c.confidence) for c in found if isinstance(c, Claim)]


@pytest.mark.parametrize(
    "given",
    [
        CODEX_HOME,
        CODEX_HOME / ".codex",
        SESSIONS,
        SESSIONS / "2026",
        SESSIONS / "2026" / "02" / "23",
    ],
    ids=["home", "codex-home", "sessions", "year", "day"],
)
def test_directories_of_the_shared_home(given: Path) -> None:
    need_shared()
    expected = given if given.name not in ("home", ".codex") else SESSIONS
    assert _claims(given) == [(expected, 1.0)]


def test_one_rollout_file() -> None:
    need_shared()
    x5 = by_tag("X5")
    assert _claims(x5) == [(x5, 1.0)]


def test_default_is_codex_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    need_shared()
    monkeypatch.setenv("CODEX_HOME", str(CODEX_HOME / ".codex"))
    assert _claims(None) == [(SESSIONS, 1.0)]
    assert plugin.default_locations() == [SESSIONS, SESSIONS.parent / "archived_sessions"]
    monkeypatch.delenv("CODEX_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    home = tmp_path / ".codex"
    assert _claims(None) == []
    assert plugin.default_locations() == [home / "sessions", home / "archived_sessions"]
    shutil.copytree(SESSIONS, home / "sessions")
    assert _claims(None) == [(home / "sessions", 1.0)]
    _archive(home, by_tag("X5").name)
    assert _claims(None) == [(home / "sessions", 1.0), (home / "archived_sessions", 1.0)]


def _archive(home: Path, name: str) -> Path:
    """Archive a thread as Codex does: its rollout moved, whole, to ``archived_sessions``."""
    (found,) = (home / "sessions").rglob(name)
    archived = home / "archived_sessions" / name
    archived.parent.mkdir(exist_ok=True)
    found.rename(archived)
    return archived


def test_a_home_is_its_sessions_and_its_archived_sessions(tmp_path: Path) -> None:
    """``asf convert ~/.codex``, a nightly backup, keeps the threads the user archived: the
    archive is a store beside ``sessions``, named as the home, its own directory or one of
    its files, also when every thread is archived."""
    need_shared()
    home = tmp_path / ".codex"
    shutil.copytree(SESSIONS, home / "sessions")
    archived = _archive(home, by_tag("X5").name)
    both = [(home / "sessions", 1.0), (home / "archived_sessions", 1.0)]
    assert _claims(home) == both
    assert _claims(tmp_path) == both
    assert _claims(home / "archived_sessions") == [(home / "archived_sessions", 1.0)]
    assert _claims(archived) == [(archived, 1.0)]
    for other in list((home / "sessions").rglob("*.jsonl")):
        _archive(home, other.name)
    assert _claims(home) == [(home / "archived_sessions", 1.0)]


def test_archived_threads_are_listed_and_converted(tmp_path: Path) -> None:
    """Archived and live threads of one home: each converted once, into its store's
    directory, the archived one's entries as they were converted from ``sessions`` (its
    header names its file as found, now at the archive's top)."""
    need_shared()
    home = tmp_path / ".codex"
    shutil.copytree(SESSIONS, home / "sessions")
    before = tmp_path / "before"
    assert convert([home], before) == 0
    _archive(home, by_tag("X5").name)
    after = tmp_path / "after"
    assert convert([home], after) == 0
    assert sessions_in(after).keys() == sessions_in(before).keys()
    (x5,) = [p for p in (before / "codex").rglob("*.jsonl") if "019c8a70" in p.read_text()[:400]]
    moved = store_dir(after, "codex", home / "archived_sessions")
    (now,) = moved.rglob("*.jsonl")
    (header, *entries), (was, *then) = now.read_bytes().splitlines(), x5.read_bytes().splitlines()
    assert entries == then
    assert json.loads(header)["codex"]["file"] == by_tag("X5").name
    assert json.loads(was)["codex"]["file"] == f"2026/02/23/{by_tag('X5').name}"


def test_an_empty_codex_home_variable_means_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CODEX_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path))
    home = tmp_path / ".codex"
    assert plugin.default_locations() == [home / "sessions", home / "archived_sessions"]


def test_rollouts_elsewhere_are_judged_by_content(tmp_path: Path) -> None:
    folder = tmp_path / "backup"
    write_rollout(folder / "a" / ROLLOUT, [META])
    assert _claims(folder) == [(folder, 0.9)]
    beside = tmp_path / ".codex" / "backup"  # in a home, but not its sessions: judged too
    write_rollout(beside / ROLLOUT, [META])
    assert _claims(beside) == [(beside, 0.9)]
    other = tmp_path / "other"
    write_rollout(other / ROLLOUT, [{"type": "user", "uuid": "u", "sessionId": "s"}])
    assert _claims(other) == []


def test_files_by_name_and_content(tmp_path: Path) -> None:
    named = write_rollout(tmp_path / ROLLOUT, [META])
    plain = write_rollout(tmp_path / "x.jsonl", [META])
    damaged = write_rollout(tmp_path / "rollout-bad.jsonl", [b"not json"])
    empty = write_rollout(tmp_path / "rollout-empty.jsonl", [])
    legacy = write_rollout(
        tmp_path / "rollout-old.jsonl",
        [{"id": "t", "timestamp": "2025-04-01T10:00:00Z", "instructions": ""}],
    )
    assert _claims(named) == [(named, 1.0)]
    assert _claims(plain) == [(plain, 0.9)]
    assert _claims(damaged) == [(damaged, 0.2)]
    assert _claims(empty) == [(empty, 0.2)]
    assert _claims(legacy) == [(legacy, 1.0)]
    assert _claims(tmp_path / "missing.jsonl") == []
    binary = tmp_path / "rollout-bin.jsonl"
    binary.write_bytes(b"\0\1\2" * 10)
    assert sniff(binary) is False
    assert _claims(binary) == []


def test_a_damaged_first_line_is_passed_over(tmp_path: Path) -> None:
    """Up to seven lines that cannot be read (not JSON, or JSON but no object: what
    ``read`` keeps as strays) are passed over to judge a rollout by its first readable line,
    as a file and in a folder of rollouts; an eighth leaves nothing judged."""
    for n, damage in enumerate((b"null", b"[1, 2]", b'"text"', b"7", b"{not json")):
        for lost in (1, 7):
            folder = tmp_path / f"{n}-{lost}"
            named = write_rollout(folder / ROLLOUT, [*[damage] * lost, META])
            assert _claims(named) == [(named, 1.0)]
            assert _claims(folder) == [(folder, 0.9)]
        named = write_rollout(tmp_path / f"{n}-8" / ROLLOUT, [*[damage] * 8, META])
        assert _claims(named) == [(named, 0.2)]
        assert _claims(named.parent) == []


def test_a_first_line_of_odd_shape_is_judged_never_raising(tmp_path: Path) -> None:
    """A first object whose ``type`` is no string (an array, an object: unhashable), or a
    ``session_meta`` without an ``id``, is not Codex's; judging it raises nothing."""
    odd: list[Any] = [
        {"type": ["session_meta"], "payload": {"id": "t"}},
        {"type": {"a": 1}, "payload": {}},
        {"type": "session_meta", "payload": {"cwd": "/"}},
        {"type": "response_item", "payload": "text"},
    ]
    for n, first in enumerate(odd):
        path = write_rollout(tmp_path / str(n) / ROLLOUT, [first, META])
        assert sniff(path) is False
        assert _claims(path) == []


def test_other_formats_are_not_claimed(tmp_path: Path) -> None:
    if CLAUDE_HOME.is_dir():
        assert _claims(CLAUDE_HOME) == []
        for transcript in list((CLAUDE_HOME / ".claude" / "projects").rglob("*.jsonl"))[:5]:
            assert _claims(transcript) == []
    asf = write_rollout(
        tmp_path / "s.jsonl",
        [{"type": "session", "format": "agentsession/0.11", "id": "x", "created_at": "z"}],
    )
    assert _claims(asf) == []
    assert _claims(tmp_path / "nowhere") == []


def test_claude_code_does_not_claim_codex() -> None:
    need_shared()
    import claude_code_plugin.plugin as cc

    assert not [c for c in cc.discover(CODEX_HOME) or [] if isinstance(c, Claim)]
    assert not [c for c in cc.discover(by_tag("X4")) or [] if isinstance(c, Claim)]


def _named(meta: dict[str, Any]) -> str:
    """The name Codex gives the rollout of this header's thread."""
    return ROLLOUT.replace("0199aaaa-0000-7000-8000-000000000001", meta["payload"]["id"])


def test_a_flat_parent_thread_id_makes_a_sub_agent(tmp_path: Path) -> None:
    """Newer CLIs name a spawned sub-agent's parent in the header's own ``parent_thread_id``
    (with ``thread_source``), the structured ``source`` left out: still a sub-agent of it,
    in the listing and in the converted header."""
    from cx_helpers import convert, sessions_in

    from codex_plugin.handle import CodexStore
    from codex_plugin.native import native_sessions

    payload = {
        "id": "0199bbbb-0000-7000-8000-000000000004",
        "parent_thread_id": "0199bbbb-0000-7000-8000-000000000001",
        "thread_source": "subagent",
        "subagent_history_start_ordinal": 3,
    }
    child = dict(META, payload=payload)
    root = tmp_path / ".codex" / "sessions"
    write_rollout(root / "2026" / "03" / "01" / _named(child), [child])
    (found,) = native_sessions(CodexStore(root), read_files=True)
    assert isinstance(found, NativeSession)
    assert (found.relation, found.parent) == ("subagent", payload["parent_thread_id"])
    assert convert([tmp_path / ".codex"], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    assert session.header.parent_session is not None
    assert session.header.unknown["codex"]["parent_thread_id"] == payload["parent_thread_id"]


def test_listing(tmp_path: Path) -> None:
    """What ``read`` lists: ids, times, cwd, model, preview, forks and sub-agents."""
    from codex_plugin.handle import CodexStore
    from codex_plugin.native import native_sessions

    root = tmp_path / "sessions"
    fork = dict(
        META,
        payload={
            "id": "0199bbbb-0000-7000-8000-000000000002",
            "forked_from_id": "t",
            "cwd": "/w",
            "cli_version": "1.2",
        },
    )
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "t", "depth": 1}}}
    child = dict(META, payload={"id": "0199bbbb-0000-7000-8000-000000000003", "source": spawn})
    prompt = {
        "timestamp": "2026-03-01T10:00:09Z",
        "type": "event_msg",
        "payload": {"type": "user_message", "message": "  fix the bug\n"},
    }
    turn = {
        "timestamp": "2026-03-01T10:00:05Z",
        "type": "turn_context",
        "payload": {"model": "gpt-5"},
    }
    # Each file named by its thread, as Codex names them (a file that is not is a copy).
    write_rollout(root / "2026" / "a" / _named(fork), [fork, META, turn, prompt])
    write_rollout(root / "2026" / "b" / _named(child), [child])
    first, second = native_sessions(CodexStore(root), read_files=True)
    assert isinstance(first, NativeSession)
    assert isinstance(second, NativeSession)
    assert first.id == "0199bbbb-0000-7000-8000-000000000002"
    assert (first.relation, first.parent) == ("fork", "t")
    assert first.cwd == "/w"
    assert first.model == "gpt-5"
    assert first.preview == "fix the bug"
    assert first.started == "2026-03-01T10:00:00Z"
    assert first.ended == "2026-03-01T10:00:09Z"
    assert first.details["version"] == "1.2"
    assert (second.relation, second.parent) == ("subagent", "t")
    assert second.source == "subagent"
    assert json.dumps(first.counts) == '{"lines": 4, "turns": 1}'  # its prompt


def test_an_absolute_cwd_is_kept_windows_too(tmp_path: Path) -> None:
    """The header's ``cwd`` is listed and put in the session's header when it is absolute:
    a POSIX path, or a Windows one (Codex runs there too: a drive or a share); a relative
    one, or none that is a string, is not."""
    cases = {
        "/home/u/proj": "/home/u/proj",
        "C:\\Users\\u\\proj": "C:\\Users\\u\\proj",
        "\\\\server\\share\\proj": "\\\\server\\share\\proj",
        "proj": None,
        "C:proj": None,
        "": None,
        "~/proj": None,
    }
    for n, (cwd, expected) in enumerate(cases.items()):
        thread = f"0199cccc-0000-7000-8000-00000000000{n}"
        meta = dict(META, payload={"id": thread, "cwd": cwd})
        home = tmp_path / str(n) / ".codex"
        write_rollout(home / "sessions" / _named(meta), [meta])
        (found,) = native_sessions(CodexStore(home / "sessions"), read_files=True)
        assert isinstance(found, NativeSession)
        assert found.cwd == expected, cwd
        assert convert([home], tmp_path / str(n) / "out") == 0
        (session,) = sessions_in(tmp_path / str(n) / "out").values()
        assert session.header.cwd == expected, cwd


def test_what_names_and_previews_a_thread(tmp_path: Path) -> None:
    """A header whose ``id`` is empty names no thread: the file's name does, as when it has
    none. A pre-envelope rollout's bare header gives the thread and start, and only a first
    line can be one: a header after a first event still names its thread. The preview is
    the first prompt stripped, cut at 200 characters."""
    root = tmp_path / "sessions"
    empty = dict(META, payload={"id": "", "timestamp": "2026-03-01T10:00:00Z"})
    prompt = {"type": "event_msg", "payload": {"type": "user_message", "message": "  " + "p" * 300}}
    write_rollout(root / "a" / ROLLOUT, [empty, prompt])
    bare = {"id": "0199dddd-0000-7000-8000-00000000000b", "timestamp": "2025-04-01T10:00:00Z"}
    write_rollout(root / "b" / ROLLOUT.replace("0199aaaa", "0199eeee"), [bare])
    header = {"id": "0199ffff-0000-7000-8000-000000000001", "timestamp": "2026-03-01T10:01:00Z"}
    late = dict(META, payload=header)
    first = {"timestamp": "2026-03-01T09:59:00Z", "type": "event_msg", "payload": {"type": "x"}}
    write_rollout(root / "c" / _named(late), [first, late])
    listed = list(native_sessions(CodexStore(root), read_files=True))
    assert [(s.id, s.started) for s in listed if isinstance(s, NativeSession)] == [
        ("0199aaaa-0000-7000-8000-000000000001", "2026-03-01T10:00:00Z"),
        (f"{bare['id']}~b.{ROLLOUT.replace('0199aaaa', '0199eeee')[:-6]}", "2025-04-01T10:00:00Z"),
        (late["payload"]["id"], "2026-03-01T10:01:00Z"),
    ]
    assert isinstance(listed[0], NativeSession)
    assert listed[0].preview == "p" * 200


def test_a_blank_first_prompt_does_not_hide_the_next(tmp_path: Path) -> None:
    """A first ``user_message`` of white space alone (an empty Enter, a pasted newline)
    previews nothing; the first prompt with text is the preview, as ``asf list`` shows it."""
    root = tmp_path / "sessions"
    prompts = [
        {"type": "event_msg", "payload": {"type": "user_message", "message": text}}
        for text in (" \n\t", "", "  fix the flaky test\n", "later")
    ]
    write_rollout(root / ROLLOUT, [META, *prompts])
    (listed,) = native_sessions(CodexStore(root), read_files=True)
    assert isinstance(listed, NativeSession)
    assert listed.preview == "fix the flaky test"


def _item(role: str, text: str) -> dict[str, Any]:
    content = [{"type": "input_text", "text": text}]
    return {
        "type": "response_item",
        "payload": {"type": "message", "role": role, "content": content},
    }


def test_a_prompt_without_a_user_message_event_is_the_preview(tmp_path: Path) -> None:
    """CLI 0.152.1 writes a prompt as its ``response_item`` and an ``item_completed`` event,
    no ``user_message``; the pre-envelope format has no events at all. Such a rollout
    previews its first user message that is a prompt (not the context Codex writes, not a
    blank one); a ``user_message`` event, where there is one, still comes first."""
    root = tmp_path / "sessions"
    done = {
        "type": "event_msg",
        "payload": {
            "type": "item_completed",
            "item": {"type": "UserMessage", "content": [{"type": "text", "text": "Hi"}]},
        },
    }
    context = _item("user", "<environment_context>\n  <cwd>/projects</cwd>\n</environment_context>")
    lines = [META, _item("developer", "<permissions instructions>"), context]
    write_rollout(root / "a" / ROLLOUT, [*lines, _item("user", "  "), _item("user", " Hi\n"), done])
    bare = {"id": "0199dddd-0000-7000-8000-00000000000b", "timestamp": "2025-04-01T10:00:00Z"}
    message = {"type": "message", "id": None, "role": "user", "content": "fix it"}
    write_rollout(root / "b" / ROLLOUT.replace("0199aaaa", "0199eeee"), [bare, message])
    event = {"type": "event_msg", "payload": {"type": "user_message", "message": "typed"}}
    write_rollout(root / "c" / _named(META), [META, _item("user", "item"), event])
    listed = list(native_sessions(CodexStore(root), read_files=True))
    assert [s.preview for s in listed if isinstance(s, NativeSession)] == ["Hi", "fix it", "typed"]


def test_a_subagent_given_its_task_by_another_agent_previews_the_task(tmp_path: Path) -> None:
    """A multi-agent sub-agent has no prompt: its parent gives it its task, an
    ``agent_message`` item (paginated rollouts) or an ``inter_agent_communication`` line
    (legacy ones). Its preview is that task, past the header Codex writes before an
    encrypted or forwarded payload (``Message Type: …`` lines ending ``Payload:``); it was
    listed with no title. A prompt, where there is one, still comes first."""
    root = tmp_path / "sessions"
    header = "Message Type: NEW_TASK\nTask name: /root/review\nSender: /root\nPayload:\n"
    parts = [{"type": "input_text", "text": header}, {"type": "input_text", "text": "Review it"}]
    task = {"type": "agent_message", "author": "/root", "recipient": "/root/review"}
    item = {"type": "response_item", "payload": {**task, "content": parts}}
    context = _item("user", "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>")
    reviewed = [{"type": "input_text", "text": "Reviewed"}]
    answer = {"type": "response_item", "payload": {**task, "content": reviewed}}
    write_rollout(root / "a" / ROLLOUT, [META, context, item, _item("assistant", "Done"), answer])
    legacy = {
        "author": "/root",
        "recipient": "/root/x",
        "content": "Fix the test",
        "trigger_turn": True,
    }
    line = {"type": "inter_agent_communication", "payload": legacy}
    write_rollout(root / "b" / ROLLOUT.replace("0199aaaa", "0199eeee"), [META, line])
    write_rollout(root / "c" / _named(META), [META, item, _item("user", "typed")])
    # Not Codex's header: a text that holds "Payload:" is the task whole; a later message
    # is not the task.
    own = {**legacy, "content": " Fix the test\nPayload:\nthe parser\n"}
    later = {**line, "payload": {**legacy, "content": "Also the docs"}}
    own_line = {**line, "payload": own}
    write_rollout(root / "d" / ROLLOUT.replace("0199aaaa", "0199ffff"), [META, own_line, later])
    # About CLI 0.13x: the task as an assistant message holding the parent's message as JSON.
    assigned = _item("assistant", json.dumps({**legacy, "content": " Check the docs\n"}))
    again = _item("assistant", json.dumps({**legacy, "content": "Now the tests"}))
    lines = [META, context, assigned, again]  # the first message names the task
    write_rollout(root / "e" / ROLLOUT.replace("0199aaaa", "0199abab"), lines)
    # A compaction's summary written as a user message (older CLIs) is no prompt.
    summary = _item("user", "Another language model started to solve this problem.\nWe fixed it.")
    lines = [META, context, summary, _item("user", "typed later")]
    write_rollout(root / "f" / ROLLOUT.replace("0199aaaa", "0199acac"), lines)
    listed = list(native_sessions(CodexStore(root), read_files=True))
    previews = [s.preview for s in listed if isinstance(s, NativeSession)]
    assert previews == [
        "Review it",
        "Fix the test",
        "typed",
        "Fix the test\nPayload:\nthe parser",
        "Check the docs",
        "typed later",
    ]


def test_context_in_a_later_part_is_no_preview(tmp_path: Path) -> None:
    """CLI 0.151 writes the plugin list and the environment as two parts of one user
    message, the list first. Codex calls a message context when any part is, so the
    preview (and the turn count) skips it for the prompt after it."""
    root = tmp_path / "sessions"
    plugins = "<recommended_plugins>\n- Notes (notes@curated)\n</recommended_plugins>"
    environment = "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"
    parts = [{"type": "input_text", "text": plugins}, {"type": "input_text", "text": environment}]
    both = _item("user", plugins)
    both["payload"]["content"] = parts
    started = {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "u1"}}
    write_rollout(root / ROLLOUT, [META, started, both, _item("user", "read the paper")])
    [listed] = native_sessions(CodexStore(root), read_files=True)
    assert isinstance(listed, NativeSession)
    assert listed.preview == "read the paper"


def test_an_old_rollout_counts_its_prompts_as_turns(tmp_path: Path) -> None:
    """CLIs up to 0.77 write no ``task_started`` (a 0.41.0 rollout: context, the prompt
    item, its ``user_message`` event with ``kind``, a ``turn_context``, the answer): each
    prompt is a turn, the ``user_message`` events, else (the pre-envelope format) the user
    messages that are prompts; where ``task_started`` events are written, they alone count."""
    root = tmp_path / "sessions"
    event = {"type": "event_msg", "payload": {"type": "user_message", "message": "/specify"}}
    event["payload"]["kind"] = "plain"
    old = [META, _item("user", "<environment_context>\n  <shell>powershell.exe</shell>")]
    old += [_item("user", "/specify"), event, {"type": "turn_context", "payload": {}}]
    old += [_item("assistant", "Let me know what to work on."), _item("user", "two"), event]
    write_rollout(root / "a" / ROLLOUT, old)
    bare = {"id": "0199dddd-0000-7000-8000-00000000000b", "timestamp": "2025-04-01T10:00:00Z"}
    message = {"type": "message", "id": None, "role": "user", "content": "fix it"}
    write_rollout(root / "b" / ROLLOUT.replace("0199aaaa", "0199eeee"), [bare, message])
    started = {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}}
    write_rollout(root / "c" / _named(META), [META, started, *old[2:4]])
    listed = list(native_sessions(CodexStore(root), read_files=True))
    assert [s.counts["turns"] for s in listed if isinstance(s, NativeSession)] == [2, 1, 1]


def test_the_source_as_a_word(tmp_path: Path) -> None:
    """``source`` is listed as a word: the string, or the one tag of an object
    (``subagent``, ``custom``); an object of no tag or of two, or no string, lists none.
    The details name the CLI version, the originator and the file."""
    cases: list[tuple[Any, str | None]] = [
        ("exec", "exec"),
        ({"custom": "my-ide"}, "custom"),
        ({"subagent": "review"}, "subagent"),
        ({}, None),
        ({"custom": "a", "subagent": "b"}, None),
        ("", None),
        (7, None),
    ]
    for n, (source, word) in enumerate(cases):
        header = {"id": f"0199abab-0000-7000-8000-00000000000{n}", "source": source}
        meta = dict(META, payload={**header, "originator": "codex_cli_rs", "cli_version": "0.9"})
        root = tmp_path / str(n)
        write_rollout(root / _named(meta), [meta])
        (found,) = native_sessions(CodexStore(root), read_files=True)
        assert isinstance(found, NativeSession)
        assert found.source == word, source
        assert found.details == {
            "version": "0.9",
            "originator": "codex_cli_rs",
            "file": _named(meta),
        }
