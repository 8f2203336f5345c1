"""The limits a JSON cell is read within (docs/formats/hermes.md section 7.1): nesting of at
most 256 levels, arrays and objects alike, and no member name with a lone surrogate, however
the escape is spelt."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from hermes_plugin.source.decode import decode_json_column
from hermes_plugin.source.jsontext import parse, why_not

_TOO_DEEP = "JSON holding arrays and objects nested deeper than 256 levels"


def _objects(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def _mixed(levels: int) -> str:
    opening = "".join('{"a":' if i % 2 else "[" for i in range(levels))
    closing = "".join("}" if i % 2 else "]" for i in reversed(range(levels)))
    return opening + "1" + closing


def test_nesting_reads_to_256_levels_of_objects_or_arrays_not_257() -> None:
    for spell in (_objects, _mixed, lambda n: "[" * n + "]" * n):
        assert parse(spell(256))[1], spell
        assert parse(spell(257)) == (None, False), spell
        assert why_not(spell(257)) == _TOO_DEEP
    # A cell of objects one level too deep is read as no JSON, and says why.
    assert decode_json_column(_objects(257)) == (None, False)


#: Every lone surrogate, its escape spelt in lower or upper case hex.
lone_escapes = st.tuples(st.integers(0xD800, 0xDFFF), st.booleans()).map(
    lambda c: f"\\u{c[0]:04x}".upper().replace("\\U", "\\u") if c[1] else f"\\u{c[0]:04x}"
)


@given(lone_escapes, st.text(max_size=3))
@example("\\udc00", "")  # a low surrogate
@example("\\uDFFF", "x")  # upper case
@example("\\uD800", "")
def test_a_member_name_with_any_lone_surrogate_is_no_json(escape: str, rest: str) -> None:
    """``"\\udc00"`` and ``"\\ufffd"`` would be one name once the writer made them valid text:
    a name holding any lone surrogate, high or low, however spelt, is refused, as a value's
    text is not (the writer replaces it there)."""
    name = json.dumps(rest)[1:-1] + escape
    text = f'{{"{name}": 1, "\\ufffd": 2}}'
    assert parse(text) == (None, False)
    assert why_not(text) == "JSON holding a member name with a lone surrogate"
    assert parse(f'["{name}"]')[1]
    # A surrogate pair is one character, as valid a name as any.
    pair = '{"\\ud83d\\ude00": 1}'
    assert parse(pair) == ({"\U0001f600": 1}, True)


def test_a_number_beyond_the_double_range_is_named_by_its_first_characters() -> None:
    """The reason names a number of up to 24 characters whole and a longer one by its first
    21 and an ellipsis: a warning never carries a cell's thousand digits."""
    whole = "1." + "0" * 18 + "e400"
    assert len(whole) == 24
    assert why_not(f"[{whole}]") == f"JSON holding a number beyond the double range ({whole})"
    long = "1." + "0" * 1000 + "e400"
    assert why_not(f"[{long}]") == (
        f"JSON holding a number beyond the double range ({long[:21]}...)"
    )
