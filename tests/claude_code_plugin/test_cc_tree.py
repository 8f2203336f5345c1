"""The uuid tree becomes the ASF tree: artifacts linearised, rewinds kept as branches, the
main conversation last; on synthetic sessions shaped like the shared ones."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cc_helpers import NS, context_texts, converted, reports_in
from cc_rebuild import rebuild
from cc_synth import SESSION, Lines, simple

from asf_core.reader import SessionFile
from claude_code_plugin.source.index import index_lines
from claude_code_plugin.source.lines import raw_lines


def _entries_of(session: SessionFile, kind: str) -> list[object]:
    return [e for e in session.entries if e.type == kind]


def test_parallel_results_follow_the_whole_response(tmp_path: Path) -> None:
    session = converted(tmp_path, simple())
    assert context_texts(session) == [
        "user:list files",
        "assistant:Looking.",
        "call:toolu_a",
        "call:toolu_b",
        "out:toolu_a",
        "out:toolu_b",
        "assistant:Done.",
    ]
    assert len(session.leaves()) == 1  # no branch: the side results were artifacts
    responses = _entries_of(session, "response")
    assert [r.response_id for r in responses] == ["msg_1", "msg_2"]  # type: ignore[attr-defined]


def test_results_written_while_the_response_streams(tmp_path: Path) -> None:
    """Tools run while the response is still streaming: a result is chained between two
    lines of its own response (FORMAT-NOTES F2). The model got the whole response first."""
    s = Lines()
    u = s.user(None, "read both")
    c1 = s.call(u, "msg_1", "toolu_a")
    p = s.progress(c1)
    r1 = s.result(c1, "toolu_a", "A")
    s.progress(p)
    c2 = s.call(r1, "msg_1", "toolu_b")
    r2 = s.result(c2, "toolu_b", "B")
    s.text(r2, "msg_2", "both read")
    session = converted(tmp_path, s)
    assert context_texts(session) == [
        "user:read both",
        "call:toolu_a",
        "call:toolu_b",
        "out:toolu_a",
        "out:toolu_b",
        "assistant:both read",
    ]
    assert len(session.leaves()) == 1


def test_the_next_response_may_hang_from_any_result(tmp_path: Path) -> None:
    """Results arrive in the order their tools finish; the next response may hang from one
    that was not written last (older CLIs): still one conversation, every result kept."""
    s = Lines()
    u = s.user(None, "run both")
    c1 = s.call(u, "msg_1", "toolu_x")
    c2 = s.call(c1, "msg_1", "toolu_y")
    ry = s.result(c2, "toolu_y", "Y")
    s.result(c1, "toolu_x", "X")
    s.text(ry, "msg_2", "both ran")
    session = converted(tmp_path, s)
    assert len(session.leaves()) == 1
    assert context_texts(session) == [
        "user:run both",
        "call:toolu_x",
        "call:toolu_y",
        "out:toolu_y",
        "out:toolu_x",
        "assistant:both ran",
    ]


def test_a_rewind_is_a_branch_and_the_live_one_is_last(tmp_path: Path) -> None:
    s = Lines()
    u1 = s.user(None, "first")
    a1 = s.text(u1, "msg_1", "answer one")
    u2 = s.user(a1, "second")
    s.text(u2, "msg_2", "answer two")
    u3 = s.user(a1, "second, said again")  # rewound to a1 and typed again
    s.text(u3, "msg_3", "answer three")
    session = converted(tmp_path, s)
    assert context_texts(session) == [
        "user:first",
        "assistant:answer one",
        "user:second, said again",
        "assistant:answer three",
    ]
    assert len(session.leaves()) == 2
    abandoned = next(leaf for leaf in session.leaves() if leaf != session.resume_leaf())
    assert context_texts(session, abandoned) == [
        "user:first",
        "assistant:answer one",
        "user:second",
        "assistant:answer two",
    ]
    (report,) = reports_in(tmp_path / "out")
    assert report["counts"]["branches"] == 1
    assert any("branch starts here" in f["message"] for f in report["findings"])


def test_returning_to_an_older_branch_makes_it_the_live_one(tmp_path: Path) -> None:
    """The live branch is the one holding the last message in the file, wherever it forks."""
    s = Lines()
    u1 = s.user(None, "first")
    a1 = s.text(u1, "msg_1", "one")
    u2 = s.user(a1, "old")
    a2 = s.text(u2, "msg_2", "old answer")
    u3 = s.user(a1, "new")
    s.text(u3, "msg_3", "new answer")
    u4 = s.user(a2, "back on the old one")
    s.text(u4, "msg_4", "welcome back")
    session = converted(tmp_path, s)
    assert context_texts(session)[-2:] == ["user:back on the old one", "assistant:welcome back"]
    assert session.entries[-1].id == session.resume_leaf()


def test_bookkeeping_between_lines_makes_no_branch(tmp_path: Path) -> None:
    s = Lines()
    u1 = s.user(None, "first")
    a1 = s.text(u1, "msg_1", "one")
    s.raw(
        {
            "type": "file-history-snapshot",
            "messageId": "x",
            "snapshot": {},
            "isSnapshotUpdate": False,
        }
    )
    s.system(a1, "turn_duration", durationMs=5)
    u2 = s.user(a1, "second")
    s.text(u2, "msg_2", "two")
    session = converted(tmp_path, s)
    assert len(session.leaves()) == 1
    assert context_texts(session) == ["user:first", "assistant:one", "user:second", "assistant:two"]


@pytest.mark.parametrize("as_blocks", [False, True])
def test_compaction_cuts_the_context_and_keeps_the_history(tmp_path: Path, as_blocks: bool) -> None:
    s = Lines()
    u1 = s.user(None, "long work")
    a1 = s.text(u1, "msg_1", "worked")
    b = s.system(
        None,
        "compact_boundary",
        logicalParentUuid=a1,
        compactMetadata={"trigger": "manual", "preTokens": 1234},
    )
    text = "This session is being continued: summary."
    summary = s.user(
        b,
        [{"type": "text", "text": text}] if as_blocks else text,
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    u2 = s.user(summary, "go on")
    s.text(u2, "msg_2", "going")
    session = converted(tmp_path, s)
    assert context_texts(session) == [
        "user:This session is being continued: summary.",
        "user:go on",
        "assistant:going",
    ]
    (compaction,) = _entries_of(session, "compaction")
    assert compaction.tokens_before == 1234  # type: ignore[attr-defined]
    path = session.path_to(str(session.resume_leaf()))
    assert path[0].unknown[NS]["line"] == 1  # the history before the boundary is on the path
    source = tmp_path / "projects" / "-home-u-proj" / f"{SESSION}.jsonl"
    assert rebuild(session) == dict(enumerate(map(json.loads, source.read_bytes().splitlines()), 1))


def test_missing_parent_and_loop_convert_as_roots(tmp_path: Path) -> None:
    s = Lines()
    u1 = s.user(None, "first")
    s.text(u1, "msg_1", "one")
    s.progress("not-in-this-file")  # a hook whose parent was compacted away
    u2 = s.user("gone-0000", "where was I")
    s.text(u2, "msg_2", "here")
    # Two lines naming each other (damage): neither hangs from the other.
    s.user(
        "00000000-0000-4000-8000-000000000006",
        "loop a",
        uuid="00000000-0000-4000-8000-000000000005",
    )
    s.user(
        "00000000-0000-4000-8000-000000000005",
        "loop b",
        uuid="00000000-0000-4000-8000-000000000006",
    )
    session = converted(tmp_path, s)
    (report,) = reports_in(tmp_path / "out")
    units = sorted(
        f["unit"].rsplit(":", 1)[1] for f in report["findings"] if f["kind"] == "warning"
    )
    assert units == ["3", "4", "6"]  # the hook (parent gone), the orphan prompt, the loop
    assert context_texts(session) == ["user:loop a", "user:loop b"]  # a root of their own


def test_repeated_call_ids_are_renamed_and_bind_on_their_branch(tmp_path: Path) -> None:
    """A replay (same tool use id again) must not repeat an ASF call id."""
    s = Lines()
    u = s.user(None, "go")
    c1 = s.call(u, "msg_1", "toolu_x")
    r1 = s.result(c1, "toolu_x")
    s.text(r1, "msg_2", "first try")
    u2 = s.user(u, "go again")  # rewind; the replay reuses the call id
    c2 = s.call(u2, "msg_3", "toolu_x")
    r2 = s.result(c2, "toolu_x")
    s.text(r2, "msg_4", "second try")
    session = converted(tmp_path, s)
    assert context_texts(session) == [
        "user:go",
        "user:go again",
        "call:toolu_x-2",
        "out:toolu_x-2",
        "assistant:second try",
    ]
    calls = [e for e in session.entries if e.type == "item" and e.item["type"] == "function_call"]
    assert [e.unknown[NS].get("call_id") for e in calls] == [None, "toolu_x"]


def test_model_and_environment_changes_are_recorded(tmp_path: Path) -> None:
    s = Lines()
    u = s.user(None, "hi")
    a = s.text(u, "msg_1", "hello")
    s.common = {**s.common, "cwd": "/home/u/proj/sub", "gitBranch": "feature"}
    u2 = s.user(a, "/model haiku then hi")
    s.text(u2, "msg_2", "hello again", model="claude-haiku-4-5")
    session = converted(tmp_path, s)
    configs = [e.model for e in _entries_of(session, "config")]  # type: ignore[attr-defined]
    assert configs == ["claude-opus-4-6", "claude-haiku-4-5"]
    (env,) = _entries_of(session, "env")
    assert env.cwd == "/home/u/proj/sub"  # type: ignore[attr-defined]
    assert env.vcs == {"system": "git", "branch": "feature"}  # type: ignore[attr-defined]
    assert session.header.cwd == "/home/u/proj"


def test_content_kinds(tmp_path: Path) -> None:
    """Images, redacted thinking, meta messages, titles and unknown blocks."""
    s = Lines()
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"},
    }
    u = s.user(None, [{"type": "text", "text": "what is this"}, image])
    m = s.user(u, "<system-reminder>hook said so</system-reminder>", isMeta=True)
    a1 = s.assistant(m, "msg_1", {"type": "redacted_thinking", "data": "opaque=="})
    a2 = s.assistant(a1, "msg_1", {"type": "fallback", "text": "?"})
    s.text(a2, "msg_1", "a cat")
    s.raw({"type": "custom-title", "customTitle": "Cats", "sessionId": SESSION})
    session = converted(tmp_path, s)
    items = {e.unknown[NS]["line"]: e for e in session.entries if e.type == "item"}
    (part,) = next(
        e for e in session.entries if e.type == "item" and e.unknown[NS].get("index") == 1
    ).item["content"]
    assert part == {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K"}
    assert items[2].visible is False
    reasoning = items[3].item
    assert reasoning == {"type": "reasoning", "summary": [], "encrypted_content": "opaque=="}
    assert items[4].item == {
        "type": "claude-code:block",
        "role": "assistant",
        "block": {"type": "fallback", "text": "?"},
    }
    (info,) = _entries_of(session, "info")
    assert info.name == "Cats"  # type: ignore[attr-defined]


def test_a_subagent_is_linked_to_the_call_that_spawned_it() -> None:
    """A later call resuming the same sub-agent names it too; the first one spawned it."""
    s = Lines()
    u = s.user(None, "delegate")
    progress_only = s.call(u, "msg_1", "toolu_1", name="Task")
    s.progress(
        progress_only, data={"type": "agent_progress", "agentId": "a1"}, parentToolUseID="toolu_1"
    )
    r1 = s.result(progress_only, "toolu_1", "done", toolUseResult={"agentId": "a1"})
    again = s.call(r1, "msg_2", "toolu_2", name="Task")
    s.result(again, "toolu_2", "done again", toolUseResult={"agentId": "a1"})
    index = index_lines(raw_lines(io.BytesIO(s.bytes())))
    assert index.spawns == {"a1": "toolu_1"}


def test_a_response_line_hanging_from_an_earlier_line_of_it_continues_it(
    tmp_path: Path,
) -> None:
    """Lines of one response (one ``message.id``) where a later block hangs from the first
    line rather than the one before it, after another of its lines was written: still one
    response, not a branch; its calls' results follow it."""
    s = Lines()
    first = s.text(s.user(None, "look at both"), "msg_1", "Looking.")
    one = s.call(first, "msg_1", "toolu_a")
    two = s.call(first, "msg_1", "toolu_b")  # from the response's first line, not from `one`
    s.result(one, "toolu_a", "a")
    r = s.result(two, "toolu_b", "b")
    s.text(r, "msg_2", "Both seen.")
    session = converted(tmp_path, s)
    (report,) = reports_in(tmp_path / "out")
    assert report["counts"]["branches"] == 0
    assert report["counts"]["responses"] == 2
    assert context_texts(session) == [
        "user:look at both",
        "assistant:Looking.",
        "call:toolu_a",
        "call:toolu_b",
        "out:toolu_a",
        "out:toolu_b",
        "assistant:Both seen.",
    ]


def test_a_bookkeeping_line_follows_the_conversation_not_a_late_hook(tmp_path: Path) -> None:
    """After a rewind, a hook's ``progress`` line hangs from the branch given up (hooks hang
    from whatever was current), then a bookkeeping line is written: it has no place of its
    own and goes where the conversation was last seen, the live branch, as the file's last
    entry."""
    s = Lines()
    a1 = s.text(s.user(None, "first"), "msg_1", "one")
    old = s.text(s.user(a1, "second"), "msg_2", "two")
    s.text(s.user(a1, "second again"), "msg_3", "two again")
    s.progress(old)
    s.raw({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}})
    session = converted(tmp_path, s)
    last = session.entries[-1]
    assert last.unknown[NS]["line"] == len(s.objects)
    assert last.id == session.resume_leaf()
    assert context_texts(session) == [
        "user:first",
        "assistant:one",
        "user:second again",
        "assistant:two again",
    ]


def test_a_file_opening_with_a_compaction_starts_from_its_summary(tmp_path: Path) -> None:
    """A file whose first line is a compact boundary (what it compacted is not in the file)
    and whose second is the summary below it: a compaction, the context starting there."""
    s = Lines()
    b = s.system(None, "compact_boundary", logicalParentUuid="0" * 8 + SESSION[8:])
    summary = s.user(b, "This session is being continued.", isCompactSummary=True)
    s.text(s.user(summary, "go on"), "msg_1", "going")
    session = converted(tmp_path, s)
    assert [e.type for e in session.entries if e.unknown[NS].get("line") == 2] == ["compaction"]
    assert context_texts(session) == [
        "user:This session is being continued.",
        "user:go on",
        "assistant:going",
    ]
