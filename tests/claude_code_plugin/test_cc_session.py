"""The second pass over a file (``convert/session.py``): lines read again by offset, kept as
written, a file rewritten in between refused, and where a compaction's context starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from cc_helpers import (
    NS,
    context_texts,
    convert,
    converted,
    line_entries,
    read_project,
    reports_in,
    sessions_in,
)
from cc_synth import CWD, Lines, simple

from asf_core.formats import StoreError
from asf_core.model import Compaction
from asf_core.pipeline import host

PROJECT = "-home-u-proj"


def test_an_unreadable_line_is_kept_without_its_newline(tmp_path: Path) -> None:
    """A damaged line in the middle of a file: its ``custom`` entry holds the line's text
    exactly, without the newline ending it (which belongs to the file, not the line), and
    the report counts it unreadable, apart from the transcript lines."""
    s = simple()
    path = s.write(tmp_path / PROJECT)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b'{"type": "assistant", "uuid": '  # cut short, then the file went on
    path.write_bytes(b"\n".join(lines))
    assert convert([tmp_path / PROJECT], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    (entry,) = line_entries(session, 3)
    assert entry.data == {
        "unreadable": entry.data["unreadable"],
        "text": '{"type": "assistant", "uuid": ',
    }
    (report,) = reports_in(tmp_path / "out")
    counted = ("lines", "transcript_lines", "bookkeeping_lines", "unreadable_lines")
    assert [report["counts"][key] for key in counted] == [len(s.objects), len(s.objects) - 1, 0, 1]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"-000000000002", b"-000000000009"),
        (b'"type": "assistant"', b'"type": "assistanx"'),
        (b'"type": "assistant"', b'"type": "assistant '),
    ],
    ids=["uuid", "type", "no-longer-json"],
)
def test_a_line_rewritten_at_its_size_between_passes_stops_the_store(
    tmp_path: Path, old: bytes, new: bytes
) -> None:
    """A line rewritten in place between the two passes, its size kept but its ``uuid`` or
    ``type`` changed, or no longer JSON: the second pass does not convert what the first did
    not index."""
    path = simple().write(tmp_path / PROJECT)
    pm, candidate, store, natives = read_project(tmp_path / PROJECT)
    data = path.read_bytes()
    assert len(old) == len(new)
    assert old in data
    path.write_bytes(data.replace(old, new, 1))
    (converted,) = list(host.convert(pm, candidate.plugin, store, natives))
    with pytest.raises(StoreError, match="changed while being converted"):
        list(converted.entries)


def test_a_preserved_head_on_another_branch_is_not_kept(tmp_path: Path) -> None:
    """A compaction keeping messages (CLI 2.1.226 ``preservedSegment``) whose head is a line
    of the file on another branch, not above the boundary: nothing is kept, the context
    starts at the boundary (the summary, then what follows)."""
    s = Lines(version="2.1.226")
    old = s.text(s.user(None, "old request"), "msg_1", "old answer")
    other = s.text(s.user(old, "a branch given up"), "msg_2", "given up")
    s.user(old, "the branch kept")  # a rewind to the old answer: the live branch
    tail = s.text(s.objects[-1]["uuid"], "msg_3", "kept answer")
    kept = {"headUuid": other, "anchorUuid": "9" * 8 + other[8:], "tailUuid": tail}
    boundary = s.system(None, "compact_boundary", logicalParentUuid=tail)
    s.objects[-1]["compactMetadata"] = {"trigger": "manual", "preservedSegment": kept}
    summary = s.user(boundary, "This session is being continued.", isCompactSummary=True)
    s.user(summary, "and now?")
    s.write(tmp_path / PROJECT)
    assert convert([tmp_path / PROJECT], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    (compaction,) = line_entries(session, len(s.objects) - 1)
    assert isinstance(compaction, Compaction)
    (at,) = line_entries(session, len(s.objects) - 2)
    assert compaction.first_kept == at.id
    assert context_texts(session) == ["user:This session is being continued.", "user:and now?"]


def _derived(session: object, kind: str) -> list[int]:
    """The line numbers of the derived entries of ``kind`` (``env``, ``model``)."""
    return [
        e.unknown[NS]["line"]
        for e in session.entries  # type: ignore[attr-defined]
        if e.unknown.get(NS, {}).get("derived") == kind
    ]


def test_leaving_a_branch_restores_its_environment(tmp_path: Path) -> None:
    """A branch run in another folder (an ``env`` entry before its first line), then a
    rewind to the first answer, back in the session's folder: the rewound branch never saw
    the other folder, so it needs no ``env`` entry of its own."""
    s = Lines()
    a1 = s.text(s.user(None, "hi"), "msg_1", "hello")
    s.common = {**s.common, "cwd": "/home/u/other"}
    s.text(s.user(a1, "in the other folder"), "msg_2", "there")
    s.common = {**s.common, "cwd": CWD}
    s.text(s.user(a1, "back here"), "msg_3", "here")  # a rewind: the live branch
    session = converted(tmp_path, s)
    assert _derived(session, "env") == [3]
    assert context_texts(session) == [
        "user:hi",
        "assistant:hello",
        "user:back here",
        "assistant:here",
    ]


def test_a_branch_within_a_branch_then_the_live_one(tmp_path: Path) -> None:
    """Rewinds at two depths: a branch given up holds a rewind of its own, and the live
    branch starts from the first answer. Written depth first, the live branch last, its
    first entry hanging from the first response (the deeper branch point left behind)."""
    s = Lines()
    a1 = s.text(s.user(None, "first"), "msg_1", "one")
    a2 = s.text(s.user(a1, "second"), "msg_2", "two")
    s.text(s.user(a2, "third"), "msg_3", "three")
    s.text(s.user(a2, "third again"), "msg_4", "three again")  # rewound inside
    s.text(s.user(a1, "second again"), "msg_5", "two again")  # rewound to the top: live
    session = converted(tmp_path, s)
    assert context_texts(session) == [
        "user:first",
        "assistant:one",
        "user:second again",
        "assistant:two again",
    ]
    (prompt,) = line_entries(session, 9)
    (response,) = [
        e
        for e in session.entries
        if e.type == "response" and e.response_id == "msg_1"  # type: ignore[attr-defined]
    ]
    assert prompt.parent == response.id


def test_a_preserved_head_of_several_blocks_is_kept_whole(tmp_path: Path) -> None:
    """The first message a compaction kept holds two text blocks (two items): the context
    starts again at its first item, so both are in it."""
    s = Lines(version="2.1.226")
    old = s.text(s.user(None, "old request"), "msg_1", "old answer")
    head = s.user(old, [{"type": "text", "text": "keep this"}, {"type": "text", "text": "too"}])
    tail = s.text(head, "msg_2", "kept answer")
    anchor = "5c42641c-3b0b-41b3-97b7-822914a30b8e"
    boundary = s.system(None, "compact_boundary", logicalParentUuid=tail)
    kept = {"headUuid": head, "anchorUuid": anchor, "tailUuid": tail}
    s.objects[-1]["compactMetadata"] = {"trigger": "manual", "preservedSegment": kept}
    s.user(boundary, "This session is being continued.", isCompactSummary=True, uuid=anchor)
    s.user(anchor, "and now?")
    session = converted(tmp_path, s)
    assert context_texts(session) == [
        "user:This session is being continued.",
        "user:keep this",
        "user:too",
        "assistant:kept answer",
        "user:and now?",
    ]


def test_a_replayed_call_on_a_branch_given_up_binds_nothing_after_it(tmp_path: Path) -> None:
    """A call's result answered twice (a replay): the second starts a branch, on which the
    call id comes again (renamed ``toolu_x-2``). Back on the live branch, the first result
    answers the first call (``toolu_x``), not the replay left behind."""
    s = Lines()
    call = s.call(s.user(None, "go"), "msg_1", "toolu_x")
    done = s.text(s.result(call, "toolu_x", "one"), "msg_2", "done")
    again = s.result(call, "toolu_x", "one")  # answered again: a branch
    s.result(s.call(again, "msg_3", "toolu_x"), "toolu_x", "two")
    s.text(s.user(done, "and then?"), "msg_4", "then this")  # the live branch goes on
    session = converted(tmp_path, s)
    (first,) = line_entries(session, 3)
    assert first.item["call_id"] == "toolu_x"
    (replayed,) = line_entries(session, 7)
    assert replayed.item["call_id"] == "toolu_x-2"
    assert context_texts(session) == [
        "user:go",
        "call:toolu_x",
        "out:toolu_x",
        "assistant:done",
        "user:and then?",
        "assistant:then this",
    ]


def test_a_second_root_starts_with_nothing_in_force(tmp_path: Path) -> None:
    """A prompt written with no parent after a conversation starts a new root: nothing of
    the first root's path is in force on it, so its first response says its model again."""
    s = Lines()
    s.text(s.user(None, "first"), "msg_1", "one")
    s.text(s.user(None, "a new root"), "msg_2", "two")
    session = converted(tmp_path, s)
    assert _derived(session, "model") == [2, 4]
    assert context_texts(session) == ["user:a new root", "assistant:two"]
