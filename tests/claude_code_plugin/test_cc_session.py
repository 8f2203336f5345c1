"""The second pass over a file (``convert/session.py``): lines read again by offset, kept as
written, a file rewritten in between refused, and where a compaction's context starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from cc_helpers import context_texts, convert, line_entries, sessions_in
from cc_synth import Lines, simple

from asf_core import plugins
from asf_core.formats import NativeSession, StoreError
from asf_core.model import Compaction
from asf_core.pipeline import host

PROJECT = "-home-u-proj"


def test_an_unreadable_line_is_kept_without_its_newline(tmp_path: Path) -> None:
    """A damaged line in the middle of a file: its ``custom`` entry holds the line's text
    exactly, without the newline ending it (which belongs to the file, not the line)."""
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
    pm = plugins.make_plugin_manager()
    discovery = host.discover(pm, tmp_path / PROJECT)
    (candidate,) = [c for c in discovery.candidates if c.plugin == "claude-code"]
    store = host.open_store(pm, candidate)
    natives = [s for s in host.read(pm, candidate.plugin, store) if isinstance(s, NativeSession)]
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
