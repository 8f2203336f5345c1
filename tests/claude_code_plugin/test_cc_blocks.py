"""Content blocks as items, block by block (docs/formats/claude-code.md §3.2): each usual
shape maps to its Open Responses item with the residue holding only what the item does not,
every odd shape is carried whole, and a tool result's parts map only when they read back
unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from cc_rebuild import block_of

from claude_code_plugin.convert.blocks import BLOCK_ITEM, assistant_item, user_item

JSON = dict[str, Any]

PNG = "iVBORw0KGgoAAAANSUhEUg=="


@pytest.mark.parametrize(
    ("source", "members"),
    [
        (
            {"type": "base64", "media_type": "image/png", "data": PNG},
            {"image_url": f"data:image/png;base64,{PNG}"},
        ),
        (
            {"type": "url", "url": "https://example.com/cat.png"},
            {"image_url": "https://example.com/cat.png"},
        ),
        (
            {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"},
            {"file_id": "file_011CNha8iCJcU1wXNR6q4V8w"},
        ),
    ],
    ids=["base64", "url", "file"],
)
def test_an_image_source_maps_by_its_kind(source: JSON, members: JSON) -> None:
    """The item holds the source's data, URL or file id; the residue keeps only its kind."""
    block = {"type": "image", "source": source, "cache_control": {"type": "ephemeral"}}
    mapped = user_item(block)
    assert mapped.item == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_image", **members}],
    }
    assert mapped.residue == {
        "type": "image",
        "source": {"type": source["type"]},
        "cache_control": {"type": "ephemeral"},
    }


_ODD_USER = {
    # A data URL of this media type would read back split at the wrong ";base64,".
    "media-type-with-base64": {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png;base64,x", "data": PNG},
    },
    "url-not-a-string": {"type": "image", "source": {"type": "url", "url": 42}},
    "file-id-not-a-string": {"type": "image", "source": {"type": "file", "file_id": None}},
    "result-for-no-call": {"type": "tool_result", "tool_use_id": "", "content": "ok"},
    "is-error-not-a-bool": {
        "type": "tool_result",
        "tool_use_id": "toolu_01",
        "content": "ok",
        "is_error": "true",
    },
    "not-an-object": "stray text",
}
_ODD_ASSISTANT = {
    "redacted-data-not-a-string": {"type": "redacted_thinking", "data": None},
    "call-without-an-id": {"type": "tool_use", "id": "", "name": "Bash", "input": {}},
    "call-without-input": {"type": "tool_use", "id": "toolu_01", "name": "Bash"},
    "not-an-object": ["stray", "list"],
}


@pytest.mark.parametrize(
    ("role", "block"),
    [("user", b) for b in _ODD_USER.values()] + [("assistant", b) for b in _ODD_ASSISTANT.values()],
    ids=[f"user-{k}" for k in _ODD_USER] + [f"assistant-{k}" for k in _ODD_ASSISTANT],
)
def test_a_known_block_of_an_odd_shape_is_carried_whole(role: str, block: Any) -> None:
    """Mapped, such a block would lose or invent something; whole, it stays in the context
    under its line's role."""
    mapped = (user_item if role == "user" else assistant_item)(block)
    assert mapped.item == {"type": BLOCK_ITEM, "role": role, "block": block}
    assert mapped.residue is None
    assert mapped.call is None
    assert mapped.answers is None


_IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}


@pytest.mark.parametrize(
    ("part", "output"),
    [
        ({"type": "text", "text": "3 files"}, {"type": "input_text", "text": "3 files"}),
        (_IMAGE, {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}),
        ({"type": "text", "text": "3 files", "cache_control": {"type": "ephemeral"}}, None),
        ({"type": "search_result", "text": "3 files"}, None),
        ({**_IMAGE, "cache_control": {"type": "ephemeral"}}, None),
        ({"type": "image", "source": {**_IMAGE["source"], "detail": "low"}}, None),
        ({"type": "image", "source": {"type": "url", "url": f"data:image/png;base64,{PNG}"}}, None),
    ],
    ids=[
        "text",
        "image",
        "text-with-more",
        "other-type-with-text",
        "image-with-more",
        "source-with-more",
        "url-source-with-a-data-url",
    ],
)
def test_a_result_part_maps_only_when_it_reads_back_unchanged(
    part: JSON, output: JSON | None
) -> None:
    """A part has no residue: one that is not exactly a text or an image, or whose source's
    kind its ``input_image`` would not tell, is kept as written (``None``: the part itself)."""
    block = {"type": "tool_result", "tool_use_id": "toolu_01", "content": [part]}
    mapped = user_item(block)
    assert mapped.item["output"] == [part if output is None else output]
    assert block_of(mapped.item, mapped.residue) == block


def test_arguments_are_the_input_as_the_model_wrote_it() -> None:
    """Compact, members in the model's order, characters as written (no ``\\u`` escapes)."""
    block = {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "Grep",
        "input": {"pattern": "café — naïve", "path": "/home/u/proj"},
    }
    assert assistant_item(block).item["arguments"] == (
        '{"pattern":"café — naïve","path":"/home/u/proj"}'
    )


def test_thinking_without_a_string_signature_has_no_encrypted_content() -> None:
    """A null signature is no signature to send back: the item has none, the residue keeps
    the null."""
    block = {"type": "thinking", "thinking": "Let me look.", "signature": None}
    mapped = assistant_item(block)
    assert mapped.item == {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "Let me look."}],
    }
    assert mapped.residue == {"type": "thinking", "signature": None}
