"""The compiled fast path of canonical JSON against the exact path, the reference.

:func:`asf_core.canonical.dumps` hands a value to a compiled encoder (orjson) only when
:func:`~asf_core.compiled_json._scan` says the encoder writes RFC 8785 for it. These tests compare
the two paths on arbitrary JSON, on every float, and on every member of every entry of every
fixture conversion; ``rfc8785`` is the oracle.
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from asf_core import canonical

_chars = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from(['"', "\\", "\x00", "\x1f", "\x7f", "\u2028", "\ue000", "\uffff", "/"]),
    st.characters(min_codepoint=0x10000, codec="utf-8"),
)
_text = st.text(_chars, max_size=12)
_numbers = st.one_of(
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(),
    st.floats(min_value=1e-7, max_value=1e-3),
    st.floats(min_value=1e15, max_value=1e22),
    st.sampled_from([0.0, -0.0, 1.0, 1e-4, 1e16, 1e21, 5e-324, 0.1, 2**53 + 0.0]),
)
_values = st.recursive(
    st.one_of(st.none(), st.booleans(), _numbers, _text),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner, inner),
        st.dictionaries(_text, inner, max_size=5),
    ),
    max_leaves=30,
)


def _fast(value: Any) -> bool:
    return canonical._scan_value(value) == canonical._C_OK


@given(_values)
def test_compiled_path_equals_exact_path(value: Any) -> None:
    """Wherever the scan lets a value through, orjson (and the stdlib encoder) write the exact
    path's bytes, which are RFC 8785's; elsewhere ``dumps`` still does."""
    try:
        exact = canonical._dumps_slow(value)
    except (canonical._Unencodable, ValueError, OverflowError):
        with pytest.raises(canonical.JsonError):
            canonical.dumps(value)
        return
    assert canonical.dumps(value) == exact
    if _fast(value):
        assert canonical._compiled(value) == exact
        assert canonical._stdlib_bytes(value) == exact
        assert exact == rfc8785.dumps(value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_the_scan_passes_is_spelled_as_ecmascript(x: float) -> None:
    if _fast(x):
        assert canonical._compiled(x).decode() == canonical.float_text(x)
    assert canonical.dumps(x).decode() == canonical.float_text(x)


@pytest.mark.parametrize(
    "value",
    [math.inf, -math.inf, math.nan, [1, math.inf], {"a": math.nan}],
)
def test_non_finite_numbers_never_reach_the_compiled_encoder(value: Any) -> None:
    """orjson writes null for them; the exact path refuses them."""
    assert not _fast(value)
    with pytest.raises(canonical.JsonError):
        canonical.dumps(value)


@pytest.mark.parametrize(
    "value",
    [1.0, -0.0, 1e-6, 1e16, 2**53 + 1, {"\U0001f600": 1, "\ue000": 2}, [b"x"], [True, 3.0]],
)
def test_values_the_compiled_encoder_would_spell_otherwise_take_the_exact_path(
    value: Any,
) -> None:
    assert not _fast(value)
    try:
        exact = canonical._dumps_slow(value)
    except (canonical._Unencodable, ValueError):
        with pytest.raises(canonical.JsonError):
            canonical.dumps(value)
        return
    assert canonical.dumps(value) == exact
    with contextlib.suppress(ValueError, TypeError):  # orjson refuses it, or:
        assert canonical._compiled(value) != exact  # why the scan sends it the exact way


@pytest.mark.parametrize("value", ["\ud800", {"k": ["x\udfff"]}, {"\udc00": 1}])
def test_lone_surrogates_are_refused_by_both_paths(value: Any) -> None:
    """The scan does not look for them: the compiled encoder refuses them itself."""
    with pytest.raises((ValueError, TypeError)):
        canonical._compiled(value)
    with pytest.raises(canonical.JsonError):
        canonical.dumps(value)
    assert canonical.dumps_if_normal(value) is None


def _members(line: bytes) -> list[Any]:
    obj = json.loads(line)
    return [obj, *obj.values()]


def test_every_member_of_every_fixture_conversion(converted_homes: list[Path]) -> None:
    """Each line of every file converted from the fixtures, and each of its members, encodes
    to the same bytes on both paths and as ``rfc8785``; the line is its own canonical form."""
    lines = 0
    for out in converted_homes:
        for path in sorted(out.rglob("*.jsonl")):
            for line in path.read_bytes().splitlines():
                lines += 1
                obj = json.loads(line)
                assert canonical.dumps(obj) == line
                for value in _members(line):
                    exact = canonical._dumps_slow(value)
                    assert canonical.dumps(value) == exact
                    if _fast(value):
                        assert canonical._compiled(value) == exact
                assert rfc8785.dumps(obj) == line
    assert lines > 500


@pytest.mark.parametrize("size", [canonical._LONG, canonical._LONG + 1, 200_000])
def test_long_strings_take_the_stdlib_encoder_and_stay_exact(size: int) -> None:
    """orjson reserves a dozen bytes per character it escapes: a long string goes to the
    stdlib's C encoder instead, which writes the same bytes."""
    text = ('line \u00e9 "q" \\ \x01\n' * size)[:size]
    assert len(text) == size
    value = {"type": "function_call_output", "output": text, "n": [1, 2.5]}
    encoder = canonical.fast_encoder(value)
    assert encoder is (canonical._compiled if size <= canonical._LONG else canonical._stdlib_bytes)
    assert encoder is not None
    assert encoder(value) == canonical._dumps_slow(value) == rfc8785.dumps(value)
    assert canonical.dumps_if_normal(text) == rfc8785.dumps(text)
