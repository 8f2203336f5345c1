"""What a raw line of a session file is, told cheaply before (or instead of) parsing it.

The reader parses every line strictly; these tests, run on the raw bytes at C speed where
possible, decide what a refusal means (cut off, broken, or whole but not I-JSON) and rule out
I-JSON problems for almost every line without walking it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["balanced", "complete_json", "lenient", "maybe_not_ijson"]

#: Digits and the decimal point all become "0", for :func:`maybe_not_ijson`.
_MANTISSA: Final = bytes.maketrans(b"0123456789.", b"00000000000")
_SIXTEEN: Final = b"0" * 16


def maybe_not_ijson(raw: bytes) -> bool:
    """A necessary condition, checked at C speed on the raw line, for a non-I-JSON value.

    The strict parse already refused duplicate names and non-finite numbers. A lone
    surrogate can only come from a ``\\uD800``-``\\uDFFF`` escape. A number that is not
    I-JSON is an integer (written so, or a fraction or exponent literal whose value is one)
    of at least 16 significant digits (any value with 15 or fewer is the canonical rendering
    of its nearest double), so its mantissa, written as digits and at most one point, is a
    run of 16 or more characters from ``[0-9.]``; and such a run with one point, a fraction
    that is not all zeros and no exponent after it is no integer (a float's timestamp).
    """
    if b"\\ud" in raw or b"\\uD" in raw:
        return True
    mantissas = raw.translate(_MANTISSA)
    if _SIXTEEN not in mantissas:
        return False
    return any(_maybe_integer(raw, run) for run in _LONG_RUN.finditer(mantissas))


#: A run of 16 or more digits and points in a line translated by :data:`_MANTISSA` (each
#: match is a whole run; spelled out, the zeros are a literal prefix the engine seeks fast).
_LONG_RUN: Final = re.compile(_SIXTEEN + b"0*")


def _maybe_integer(raw: bytes, run: re.Match[bytes]) -> bool:
    """Whether a run of digits and points can be the mantissa of a number whose value is an
    integer. Outside strings a run is a whole number's mantissa (JSON puts no digit or point
    next to a number), so two points mean text; inside strings anything goes (a yes is
    only a closer look)."""
    if raw[run.end() : run.end() + 1] in (b"e", b"E"):
        return True
    fraction = raw[run.start() : run.end()].partition(b".")[2]  # none without a point
    return b"." not in fraction and not fraction.strip(b"0")


#: A JSON string, or any one character that opens or closes something.
_TOKEN: Final = re.compile(rb'"(?:[^"\\]|\\.)*"|["\[\]{}]', re.DOTALL)
_CLOSES: Final = {ord("]"): ord("["), ord("}"): ord("{")}


def balanced(raw: bytes) -> bool:
    """Whether every string ends and every bracket closes the right one (for a line too deep
    to parse: whole, or cut off?). Linear: each string is matched once, and a string that
    never ends stops the scan."""
    open_: list[int] = []
    for token in _TOKEN.finditer(raw):
        first = raw[token.start()]
        if token.end() - token.start() > 1:
            continue  # a whole string
        if first == ord('"'):
            return False  # a string that never ends
        if first in _CLOSES:
            if not open_ or open_.pop() != _CLOSES[first]:
                return False
        else:
            open_.append(first)
    return not open_


def _ignore(text: str) -> None:
    return None


def complete_json(raw: bytes) -> bool:
    """Whether a line the strict parse refused is nonetheless whole JSON (not cut off).

    Numbers are not converted: an integer of thousands of digits is whole JSON too.
    """
    try:
        json.loads(raw, parse_int=_ignore, parse_float=_ignore, parse_constant=_ignore)
    except (ValueError, RecursionError):
        return False
    return True


def _number(text: str) -> int | float | str:
    """A number as Python holds it, or its text when it cannot (beyond a double, beyond the
    digits an int is converted from)."""
    try:
        value: int | float = float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return text
    return value if value not in (float("inf"), float("-inf")) else text


def lenient(raw: bytes) -> Any:
    """A line the strict parse refused but that is whole JSON, read anyway: numbers no double
    holds and NaN/Infinity kept as their text, a repeated name's last value. None when the line
    is not whole JSON."""
    try:
        return json.loads(raw, parse_int=_number, parse_float=_number, parse_constant=str)
    except (ValueError, RecursionError):
        return None
