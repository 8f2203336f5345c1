"""Nothing is lost: every source line comes back, equal, from the entries made of it; and the
block mapping is invertible for any block (hypothesis)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import Converted, file_id, load, shared_files, source_key
from cc_rebuild import block_of, rebuild
from hypothesis import given
from hypothesis import strategies as st

from claude_code_plugin.convert.blocks import assistant_item, user_item


@pytest.mark.parametrize("source", shared_files(), ids=file_id)
def test_every_line_is_rebuilt_from_the_output(converted: Converted, source: Path) -> None:
    session = load(converted.files[source_key(source)])
    lines = [json.loads(raw) for raw in source.read_bytes().splitlines()]
    rebuilt = rebuild(session)
    assert sorted(rebuilt) == list(range(1, len(lines) + 1))
    for n, obj in enumerate(lines, 1):
        assert rebuilt[n] == obj, f"{source.name}:{n}"


# --- hypothesis: any block maps and comes back ------------------------------------------

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_json = st.recursive(
    _scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_extra = st.dictionaries(
    st.sampled_from(["cache_control", "citations", "caller", "x"]), _json, max_size=2
)


def _with(extra: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    return {**extra, **block}


_sources = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("base64"),
            "media_type": st.sampled_from(["image/png", "image/jpeg"]),
            "data": st.text(max_size=10),
        }
    ),
    st.fixed_dictionaries({"type": st.just("url"), "url": st.text(max_size=10)}),
    st.fixed_dictionaries({"type": st.just("file"), "file_id": st.text(max_size=10)}),
    st.dictionaries(st.text(max_size=5), _scalars, max_size=3),  # odd: kept whole
)
_text = st.builds(
    _with, _extra, st.fixed_dictionaries({"type": st.just("text"), "text": st.text()})
)
_image = st.builds(
    _with, _extra, st.fixed_dictionaries({"type": st.just("image"), "source": _sources})
)
_inner = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=10)}),
    st.fixed_dictionaries({"type": st.just("image"), "source": _sources}),
    _text,
    _json,
)
_result = st.builds(
    _with,
    _extra,
    st.fixed_dictionaries(
        {
            "type": st.just("tool_result"),
            "tool_use_id": st.text(max_size=6),
            "content": st.text(max_size=10) | st.lists(_inner, max_size=3) | _scalars,
        },
        optional={"is_error": st.booleans() | st.none()},
    ),
)
_thinking = st.builds(
    _with,
    _extra,
    st.fixed_dictionaries(
        {"type": st.just("thinking"), "thinking": st.text(max_size=10)},
        optional={"signature": st.text(max_size=10) | st.none()},
    ),
)
_redacted = st.builds(
    _with, _extra, st.fixed_dictionaries({"type": st.just("redacted_thinking"), "data": _scalars})
)
_tool_use = st.builds(
    _with,
    _extra,
    st.fixed_dictionaries(
        {"type": st.just("tool_use"), "id": st.text(max_size=6), "name": _scalars},
        optional={"input": _json},
    ),
)
_unknown = st.dictionaries(st.text(max_size=6), _json, max_size=4) | _json
BLOCKS = st.one_of(_text, _image, _result, _thinking, _redacted, _tool_use, _unknown)


def _back(mapped: Any) -> Any:
    return block_of(mapped.item, mapped.residue)


@given(BLOCKS)
def test_user_blocks_come_back(block: Any) -> None:
    mapped = user_item(block)
    assert json.loads(json.dumps(mapped.item)) == mapped.item  # plain JSON
    assert _back(mapped) == block


@given(BLOCKS)
def test_assistant_blocks_come_back(block: Any) -> None:
    mapped = assistant_item(block)
    assert _back(mapped) == block


@given(BLOCKS)
def test_known_blocks_of_the_usual_shape_are_mapped(block: Any) -> None:
    """Only odd shapes fall back to the extension item: a usual block is never carried whole."""
    usual = isinstance(block, dict) and (
        (block.get("type") == "text" and isinstance(block.get("text"), str))
        or (
            block.get("type") == "tool_use"
            and isinstance(block.get("id"), str)
            and block.get("id")
            and isinstance(block.get("name"), str)
            and "input" in block
        )
    )
    if usual:
        assert assistant_item(block).item["type"] != "claude-code:block"
