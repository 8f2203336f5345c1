"""``strict_json.unwritable``: which parsed lines no entry can hold, found cheaply from their
text. The text tests are only a first cut, so what they let through is checked here against
the rule itself: the value is refused exactly when the writer's normalisation refuses it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asf_core import strict_json
from asf_core.canonical import JsonError, TooDeep
from asf_core.strict_json import unwritable


def _refused(value: Any) -> bool:
    """Whether the writer's normalisation refuses the value (the rule ``unwritable`` says)."""
    try:
        strict_json.normalise(value)
    except (JsonError, TooDeep):
        return True
    return False


def _both(text: str) -> tuple[str | None, str | None]:
    value = strict_json.parse(text)
    return unwritable(value, text), unwritable(value, text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize(
    ("digits", "refused"),
    [
        ("1" + "0" * 307, False),  # 308 digits: a double holds it
        ("1" + "0" * 308, False),  # 309 digits, 1e308: still a double
        ("2" + "0" * 308, True),  # 2e308: beyond
        ("9" * 400, True),
    ],
)
@pytest.mark.parametrize("where", ['{{"n": {}}}', '{{"a": [1, {{"b": -{}}}]}}'])
def test_an_integer_is_refused_only_beyond_the_double_range(
    digits: str, refused: bool, where: str
) -> None:
    text = where.format(digits)
    found = _both(text)
    assert found[0] == found[1]
    assert (found[0] is not None) == refused
    assert refused == _refused(strict_json.parse(text))
    if refused:
        assert found[0] is not None
        assert found[0].endswith("integer beyond the double range")


def test_digits_in_a_string_or_a_fraction_are_no_integer() -> None:
    for text in ('{"s": "' + "7" * 500 + '"}', '{"f": 0.' + "3" * 400 + "}"):
        assert _both(text) == (None, None)


@given(
    st.recursive(
        st.one_of(
            st.integers(min_value=-(10**320), max_value=10**320),
            st.text(alphabet="0123456789x\ud800", max_size=20),
            st.floats(allow_nan=False, allow_infinity=False),
        ),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.text(alphabet="ab\ud800\udfff\ufffd", max_size=2), inner, max_size=3
            )
        ),
        max_leaves=8,
    )
)
def test_what_it_refuses_is_what_the_writer_refuses(value: Any) -> None:
    text = json.dumps({"v": value})
    parsed = strict_json.parse(text)
    found = _both(text)
    assert found[0] == found[1]
    assert (found[0] is not None) == _refused(parsed)
