"""What ATIF steps say of content it cannot hold, and entries it copies whole: the parts of
:mod:`asf_core.export.atif_content` the reference documents leave unchecked."""

from __future__ import annotations

import json

from fixture_paths import VECTORS

from asf_core.export import SessionTree, atif_document
from asf_core.export.atif_content import message, metrics
from asf_core.export.items import item_text, reasoning_text
from asf_core.reader import read_session


def test_what_atif_cannot_hold_becomes_a_placeholder() -> None:
    """Files, video, refusals and images of other types become text placeholders
    (docs/export.md), each saying what it stands for."""
    parts = [
        {"type": "input_text", "text": "See "},
        {"type": "input_file", "filename": "report.pdf", "file_data": "JVBERi0="},
        {"type": "input_video", "video_url": "https://example.com/clip.mp4"},
        {"type": "input_image", "image_url": "https://example.com/scan.tiff"},
        {"type": "input_image", "file_id": "file-abc"},
        {"type": "refusal", "refusal": "no"},
    ]
    shown = message({"type": "message", "role": "user", "content": parts})
    assert shown == (
        "See [file: report.pdf][video: https://example.com/clip.mp4]"
        "[image: https://example.com/scan.tiff][image: file-abc][refusal] no"
    )


def test_an_extension_entry_of_an_early_draft_is_copied_as_written() -> None:
    """v0.4/extensions.jsonl (draft 0.1): an entry no step can hold travels whole, its id and
    parent spelled as the file spells them, not as the ids the reader migrated them to."""
    path = VECTORS / "sessions" / "v0.4" / "extensions.jsonl"
    written = [json.loads(line) for line in path.read_text().splitlines()]
    (note,) = [e for e in written if e["type"] == "agentturn:note"]
    session = read_session(path)
    doc = atif_document(SessionTree(session).view(session.leaves()[-1]))
    carried = [x for s in doc["steps"] for x in s["extra"].get("extensions", [])]
    assert carried == [note]


def test_a_usage_that_is_no_count_counts_nothing() -> None:
    """Token counts are integers; a bool (JSON ``true``) or a string is no count."""
    usage = {
        "input_tokens": True,
        "output_tokens": "12",
        "input_tokens_details": {"cached_tokens": False},
        "output_tokens_details": {"reasoning_tokens": True},
    }
    assert metrics(usage) == {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0}
    usage = {
        "input_tokens": 9,
        "output_tokens": 3,
        "output_tokens_details": {"reasoning_tokens": 2},
    }
    assert metrics(usage) == {
        "prompt_tokens": 9,
        "completion_tokens": 3,
        "cached_tokens": 0,
        "extra": {"reasoning_tokens": 2},
    }


def test_reasoning_without_readable_content_is_read_from_its_summary() -> None:
    """Only text parts are reasoning to show: content holding none (an unknown part) falls
    back to the summary rather than showing the part's JSON."""
    item = {
        "type": "reasoning",
        "content": [{"type": "reasoning_blob", "text": "opaque"}],
        "summary": [{"type": "summary_text", "text": "Checked the units."}],
    }
    assert reasoning_text(item) == "Checked the units."
    assert reasoning_text({"type": "reasoning", "summary": []}) == ""  # a string all the same


def test_the_readable_text_of_items_of_other_kinds() -> None:
    """``item_text``: a reasoning item reads as its reasoning; an item of another kind as
    its ``text``, else its ``content`` (a blank or non-string ``text`` is none)."""
    reasoning = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Why."}]}
    assert item_text(reasoning) == "Why."
    assert item_text({"type": "note", "text": "", "content": "from content"}) == "from content"
    assert item_text({"type": "note", "text": {"x": 1}, "content": "from content"}) == (
        "from content"
    )
    assert item_text({"type": "note", "text": "from text", "content": "c"}) == "from text"


def test_an_item_of_another_kind_reads_as_its_content_parts() -> None:
    """An item of another kind whose ``content`` is a list of parts, as a message's is
    (Codex's ``agent_message``, one agent's message to another), reads as their text: it
    read as nothing, so a sub-agent's task was ``[agent_message]`` in every transcript."""
    task = {
        "type": "agent_message",
        "author": "/root",
        "recipient": "/root/review",
        "content": [
            {"type": "input_text", "text": "Message Type: NEW_TASK\nPayload:\n"},
            {"type": "input_text", "text": "Review the diff."},
            {"type": "encrypted_content", "encrypted_content": "gAAAAABq"},
        ],
    }
    assert item_text(task) == "Message Type: NEW_TASK\nPayload:\nReview the diff."
    assert item_text({"type": "note", "content": [{"type": "input_image"}]}) == ""
