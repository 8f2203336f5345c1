"""``raw_lines.maybe_not_ijson``: the reader's cheap screen must never let a line with an
I-JSON problem through (the walk it spares is the one that finds the problem), and should let
an ordinary line with float timestamps through without that walk."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from asf_core import canonical, strict_json
from asf_core.raw_lines import maybe_not_ijson

_DIGITS = "0123456789"


@st.composite
def number_literals(draw: st.DrawFn) -> str:
    """JSON number literals of every shape near the 16-digit edge: long integers, fractions
    whose digits are zeros or not, exponents, signs."""
    whole = draw(st.text(_DIGITS, min_size=1, max_size=24))
    whole = whole.lstrip("0") or "0"
    text = ("-" if draw(st.booleans()) else "") + whole
    if draw(st.booleans()):
        fraction = draw(
            st.one_of(
                st.text("0", min_size=1, max_size=6), st.text(_DIGITS, min_size=1, max_size=20)
            )
        )
        text += "." + fraction
    if draw(st.booleans()):
        text += draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+", "-"]))
        text += str(draw(st.integers(0, 30)))
    return text


def _problems(raw: bytes) -> list[str] | None:
    """The I-JSON problems the reader's walk finds in a line; None when it does not parse."""
    try:
        value = strict_json.parse(raw)
    except ValueError:
        return None
    return canonical.ijson_problems(value)


@settings(max_examples=600)
@given(
    numbers=st.lists(number_literals(), min_size=1, max_size=4),
    text=st.text(_DIGITS + ".eE-x ", max_size=40),
)
@example(numbers=["9007199254740993"], text="")
@example(numbers=["9007199254740993.000"], text="")
@example(numbers=["9.007199254740993e15"], text="")
@example(numbers=["90071992547409930e-1"], text="")
@example(numbers=["1733000123.456789"], text="12345678901234567.5.0")
def test_a_line_with_a_number_problem_is_never_screened_out(numbers: list[str], text: str) -> None:
    members = ", ".join(f'"n{i}": {number}' for i, number in enumerate(numbers))
    raw = ("{" + members + ", " + json.dumps({"s": text})[1:-1] + "}").encode()
    problems = _problems(raw)
    if problems:
        assert maybe_not_ijson(raw), (raw, problems)


@given(st.text(max_size=30), st.sampled_from(["\\ud800", "\\uDFFF", "\\udc00x", "\\uD83D"]))
def test_a_lone_surrogate_escape_is_never_screened_out(text: str, escape: str) -> None:
    raw = b'{"a": "' + json.dumps(text)[1:-1].encode() + escape.encode() + b'"}'
    if _problems(raw):
        assert maybe_not_ijson(raw)


def test_float_timestamps_and_long_text_runs_are_screened_out() -> None:
    # What every Hermes row's columns hold: a float clock time of 17 digits and a point.
    assert not maybe_not_ijson(b'{"timestamp": 1733000123.456789, "token_count": 12}')
    assert not maybe_not_ijson(b'{"t": -1733000123.4567891, "v": "1.2.3.4.5.6.7.8.9.0.1"}')
    # Beside it, an integer of 15 digits: exactly a double.
    assert not maybe_not_ijson(b'{"t": 1733000123.456789, "n": 123456789012345}')
    # A long run that could be an integer still gets the walk.
    assert maybe_not_ijson(b'{"n": 12345678901234567}')
    assert maybe_not_ijson(b'{"n": 1234567890123456.000}')
    assert maybe_not_ijson(b'{"n": 1234567890123456.5e3}')
    assert maybe_not_ijson(b'{"s": "\\ud800"}')
