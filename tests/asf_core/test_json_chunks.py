"""``json_chunks.chunks`` writes exactly ``json``'s text, whichever encoder writes each part:
hypothesis compares them on arbitrary values (floats of every magnitude, integers beyond 64
bits, lone surrogates, names that are not strings), whole and cut into small blocks."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from asf_core import json_chunks
from asf_core.json_chunks import chunks

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**62, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e-12, max_value=1e-3),
    st.text(),
    st.text(alphabet=st.sampled_from(["a", "\ud800", "\udfff", "é", "\n", '"', "\\", "\x00"])),
)
_keys = st.one_of(st.text(max_size=8), st.integers(), st.booleans(), st.none(), st.floats())
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.lists(inner, max_size=6).map(tuple),
        st.dictionaries(st.text(max_size=8), inner, max_size=6),
        st.dictionaries(_keys, inner, max_size=4),
    ),
    max_leaves=40,
)


def _stdlib(value: Any, indent: int | None) -> str:
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False, indent=indent)


@given(_values, st.sampled_from([2, None, 0, 1, 4]), st.sampled_from([json_chunks.BLOCK, 40, 0]))
@example({"t": 1e-05, "u": [1.5e-7, 0.0001, -0.0]}, 2, json_chunks.BLOCK)
@example({"s": "\ud800", "n": 2**64}, None, json_chunks.BLOCK)
@example({1: "a", None: [True]}, 2, 0)
def test_the_text_is_the_stdlibs(value: Any, indent: int | None, block: int) -> None:
    try:
        expected = _stdlib(value, indent)
    except (ValueError, TypeError) as exc:  # e.g. names json cannot sort out
        with pytest.raises(type(exc)):
            "".join(_chunked(value, indent, block))
        return
    assert "".join(_chunked(value, indent, block)) == expected


def _chunked(value: Any, indent: int | None, block: int) -> list[str]:
    saved = json_chunks.BLOCK
    json_chunks.BLOCK = block  # type: ignore[misc]
    try:
        return list(chunks(value, indent=indent))
    finally:
        json_chunks.BLOCK = saved  # type: ignore[misc]


def test_a_large_document_comes_in_many_small_chunks() -> None:
    steps = [
        {"step_id": n, "message": "word " * 40, "metrics": {"cost": 0.25}} for n in range(3000)
    ]
    doc = {"schema": "x", "steps": steps, "final": {"total": 1.5}}
    parts = list(chunks(doc))
    assert "".join(parts) == json.dumps(doc, ensure_ascii=False, indent=2)
    assert len(parts) > 100
    assert max(map(len, parts)) < 2 * json_chunks.BLOCK


def test_values_only_json_writes_go_to_json() -> None:
    tiny = {"a": [1e-05] * 3}
    assert "".join(chunks(tiny)) == json.dumps(tiny, ensure_ascii=False, indent=2)
    assert "".join(chunks({"x": math.nan})) == '{\n  "x": NaN\n}'
    with pytest.raises(TypeError):
        list(chunks({"a": {1, 2}}))


@pytest.mark.parametrize(
    "doc",
    [
        {"texts": ["x" * 40_000] * 8},  # the strings' length counts
        [[]] * 40_000,  # and the brackets of empty ones
        [{}] * 40_000,
        {f"{n:08}" * 10: 0 for n in range(3000)},  # and the names
    ],
    ids=["strings", "lists", "objects", "names"],
)
def test_no_chunk_is_much_larger_than_a_block(doc: Any) -> None:
    for indent in (2, None):
        parts = list(chunks(doc, indent=indent))
        assert "".join(parts) == _stdlib(doc, indent)
        assert max(map(len, parts)) <= json_chunks.BLOCK


def _nested(levels: int) -> Any:
    value: Any = "leaf"
    for n in range(levels):
        value = [{"k": value} if n % 2 else value, n]
    return value


@pytest.mark.parametrize("levels", [42, 43, 44, 200, 350, 450])
@pytest.mark.parametrize("indent", [2, None])
def test_deep_nesting_is_written_as_json_writes_it(levels: int, indent: int | None) -> None:
    """Up to past orjson's 255 levels and the reader's 512 (525 containers: a list per level
    and a dict every other); around 64 containers the rest is handed to ``json`` whole. It
    was a RecursionError from about 625 containers on, and is now ``json``'s own limit."""
    value = _nested(levels)
    separators = None if indent else (",", ":")
    expected = json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)
    assert "".join(chunks(value, indent=indent)) == expected


@pytest.mark.parametrize("indent", [2, None])
def test_a_small_value_as_deep_as_orjson_writes_is_one_chunk(indent: int | None) -> None:
    """orjson writes up to 254 nested containers: a small value that deep is still written
    in one call, not member by member (as it would be were the depth limit set too low)."""
    value: Any = []
    for _ in range(253):
        value = [value]
    parts = list(chunks(value, indent=indent))
    assert "".join(parts) == _stdlib(value, indent)
    assert len(parts) == 1


@pytest.mark.parametrize("indent", [2, None])
def test_a_circular_value_is_refused_as_json_refuses_it(indent: int | None) -> None:
    looped: list[Any] = [1]
    looped.append({"again": looped})
    with pytest.raises(ValueError, match=r"^Circular reference detected$"):
        "".join(chunks(looped, indent=indent))
