"""Which entries a line makes (docs/formats/claude-code.md §3.1, §4.3): a line without a
usable message or title is kept whole, a summary becomes a compaction only in the shapes a
compaction holds, and every line still comes back from its entries (§7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cc_helpers import NS, converted, line_entries
from cc_rebuild import rebuild
from cc_synth import SESSION, Lines

from asf_core.model import Compaction, Custom, Item
from asf_core.reader import SessionFile
from claude_code_plugin.convert.entries import pre_tokens


def _converted(tmp_path: Path, lines: Lines) -> SessionFile:
    """The lines converted: a valid file from which every line comes back equal."""
    session = converted(tmp_path, lines)
    assert rebuild(session) == dict(enumerate(lines.objects, 1))
    return session


def test_lines_without_a_usable_message_or_title_are_kept_whole(tmp_path: Path) -> None:
    """An empty content, a message on a line of a type that carries none, a title that is
    not text: one ``custom`` entry holding the line, never an item or an ``info``."""
    s = Lines()
    u = s.user(None, "hi")
    s.assistant(u, "msg_1", {"type": "text", "text": "x"})
    s.objects[-1]["message"]["content"] = []
    s._entry("notice", u, message={"role": "user", "content": "from a later CLI"})
    s.raw({"type": "custom-title", "customTitle": None, "sessionId": SESSION})
    session = _converted(tmp_path, s)
    for number in (2, 3, 4):
        (entry,) = line_entries(session, number)
        assert isinstance(entry, Custom)
        assert entry.data == {"object": s.objects[number - 1]}


def test_an_assistant_string_content_is_the_assistants_text(tmp_path: Path) -> None:
    s = Lines()
    s.text(s.user(None, "hi"), "msg_1")
    s.objects[-1]["message"]["content"] = "Done."
    session = _converted(tmp_path, s)
    (entry,) = line_entries(session, 2)
    assert isinstance(entry, Item)
    assert entry.item == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
    }
    assert entry.unknown[NS]["form"] == "string"


def _summarised(summary: Any, *, boundary: bool = True) -> Lines:
    """A prompt and answer, a compact boundary (or not), the summary line, a new prompt."""
    s = Lines()
    a = s.text(s.user(None, "go"), "msg_1", "hi")
    above = a
    if boundary:
        above = s.system(
            None, "compact_boundary", logicalParentUuid=a, compactMetadata={"preTokens": 9}
        )
    s.user(s.user(above, summary, isCompactSummary=True), "and now?")
    return s


def test_a_summary_of_text_blocks_is_a_compaction(tmp_path: Path) -> None:
    summary = [
        {"type": "text", "text": "This session is being continued."},
        {"type": "text", "text": "The user asked for cats."},
    ]
    session = _converted(tmp_path, _summarised(summary))
    (compaction,) = [e for e in session.entries if isinstance(e, Compaction)]
    assert compaction.summary == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": b["text"]} for b in summary],
    }
    assert compaction.unknown[NS]["form"] == "text_blocks"


_TEXT = {"type": "text", "text": "This session is being continued."}


@pytest.mark.parametrize(
    "summary",
    [
        [_TEXT, {"type": "image", "source": {"type": "url", "url": "https://example.com/a"}}],
        [{**_TEXT, "cache_control": {"type": "ephemeral"}}],
        [{"type": "document", "text": "This session is being continued."}],
        [{"type": "text", "text": ["not", "a", "string"]}],
        [_TEXT, "This session is being continued."],
    ],
    ids=["with-an-image", "text-with-more", "another-type", "text-not-a-string", "not-a-block"],
)
def test_a_summary_a_compaction_cannot_hold_is_a_user_line(tmp_path: Path, summary: Any) -> None:
    """A compaction's summary holds plain texts only: any other summary's blocks become
    items, as any user line's, so nothing of them is lost."""
    session = _converted(tmp_path, _summarised(summary))
    assert [e for e in session.entries if isinstance(e, Compaction)] == []
    entries = line_entries(session, 4)
    assert [e.type for e in entries] == ["item"] * len(summary)


def test_a_summary_with_no_blocks_is_kept_whole(tmp_path: Path) -> None:
    """An empty content list holds no summary and no message: the line is one ``custom``
    entry, not a compaction with nothing in it."""
    session = _converted(tmp_path, _summarised([]))
    assert [e for e in session.entries if isinstance(e, Compaction)] == []
    (entry,) = line_entries(session, 4)
    assert entry.type == "custom"
    assert entry.data["object"]["message"]["content"] == []


def test_a_summary_without_its_boundary_is_a_user_line(tmp_path: Path) -> None:
    """Without a boundary there is no point to cut the context at."""
    session = _converted(tmp_path, _summarised("This session is being continued.", boundary=False))
    assert [e for e in session.entries if isinstance(e, Compaction)] == []
    (entry,) = line_entries(session, 3)
    assert isinstance(entry, Item)
    assert entry.item["content"][0]["text"] == "This session is being continued."


def test_a_result_for_a_renamed_call_keeps_the_native_id(tmp_path: Path) -> None:
    """A call id an earlier line used is renamed; its result carries the new id and keeps
    the native one in ``claude-code.call_id``, so the line comes back as written."""
    s = Lines()
    first = s.call(s.user(None, "go"), "msg_1", "toolu_01")
    again = s.call(s.result(first, "toolu_01", "one"), "msg_2", "toolu_01")  # a replayed id
    s.result(again, "toolu_01", "two")
    session = _converted(tmp_path, s)
    (result,) = line_entries(session, 5)
    assert isinstance(result, Item)
    assert result.item["call_id"] == "toolu_01-2"
    assert result.unknown[NS]["call_id"] == "toolu_01"
    (answered,) = line_entries(session, 3)
    assert "call_id" not in answered.unknown[NS]  # bound to its own id: nothing to keep


@pytest.mark.parametrize(
    ("meta", "tokens"),
    [
        ({"trigger": "auto", "preTokens": 155000}, 155000),
        ("auto", None),
        (["auto"], None),
        ({"preTokens": "155000"}, None),
        ({"preTokens": 155000.0}, None),
        ({"preTokens": True}, None),
    ],
)
def test_pre_tokens_only_from_a_metadata_object(meta: Any, tokens: int | None) -> None:
    line = {"type": "system", "subtype": "compact_boundary", "compactMetadata": meta}
    assert pre_tokens(line) == tokens
