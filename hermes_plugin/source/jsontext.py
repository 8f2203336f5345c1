"""Strict JSON parsing for the JSON held in Hermes' text columns.

Python's ``json.loads`` accepts ``NaN`` and ``Infinity``, reads ``1e400`` as infinity, builds
integers no double can approach, takes member names with lone surrogates (which collide once
made valid text), and raises ``RecursionError`` or a ``ValueError`` on hostile
input; none of that can be written to ASF (I-JSON). Every decoder here parses through
:func:`parse`, so such a cell always reads as "not JSON" (the caller keeps the cell as its text
and notes why, :func:`why_not`), never as an exception and never as a value the writer would
refuse. Nesting is bounded by :data:`MAX_DEPTH`, checked on the text before parsing, so no
walk over a decoded value meets the interpreter's recursion limit.
"""

from __future__ import annotations

import json
import math
import re
from typing import TypeAlias

__all__ = ["MAX_DEPTH", "JsonValue", "compact", "parse", "too_deep", "why_not"]

#: A JSON value as ``json.loads`` builds it.
JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None

#: How deep arrays and objects may nest in a decoded cell. Hermes writes a few levels; the
#: bound leaves room below the ASF writer's own limit (512 levels, counted from the entry)
#: for the members a value is written under.
MAX_DEPTH = 256

#: Integers beyond the double range cannot be written even normalised (ASF section 3.2).
_DOUBLE_LIMIT = 2**1024
#: A run of digits long enough to spell such an integer (or to need the slow path at all).
_LONG_DIGITS = re.compile(r"[0-9]{300}")
#: A lone surrogate may only come from an escape: ``\ud800`` ... ``\udfff``.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: The tokens that change the nesting depth, strings (which may hold brackets) skipped whole.
_NESTING_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


class _NotJson(ValueError):
    """A value JSON text spells that I-JSON cannot hold (NaN, Infinity, 1e400, 1e400 as an
    integer)."""


def _reject_constant(name: str) -> JsonValue:
    raise _NotJson(f"the constant {name}")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson(f"a number beyond the double range ({_clip(text)})")
    return value


def _in_range(text: str) -> int:
    value = int(text)
    if abs(value) >= _DOUBLE_LIMIT:
        raise _NotJson(f"an integer beyond the double range ({len(text)} digits)")
    return value


def _members(pairs: list[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
    """An object whose member names are text: a name with a lone surrogate could collide
    with another once the writer replaces the surrogate (``"\ud800"`` and ``"\ufffd"``)."""
    for name, _ in pairs:
        if _has_lone_surrogate(name):
            raise _NotJson("a member name with a lone surrogate")
    return dict(pairs)


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite)
#: For text that spells a number with hundreds of digits, or a surrogate escape.
_CAREFUL_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant,
    parse_float=_finite,
    parse_int=_in_range,
    object_pairs_hook=_members,
)


def too_deep(text: str) -> bool:
    """Whether arrays and objects nest deeper than :data:`MAX_DEPTH` in JSON text (brackets
    inside strings not counted), told without parsing it: a cheap count first, the depth
    only when it could be that deep."""
    # Each level takes a character: a short text cannot nest that deep (most cells).
    if len(text) <= MAX_DEPTH or text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth = 0
    for token in _NESTING_TOKENS.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif bracket in "]}":
            depth -= 1
    return False


def _decode(text: str) -> JsonValue:
    """The value, or the exception saying why there is none."""
    if too_deep(text):
        raise _NotJson(f"arrays and objects nested deeper than {MAX_DEPTH} levels")
    careful = _LONG_DIGITS.search(text) or _SURROGATE_ESCAPE.search(text)
    decoder = _CAREFUL_DECODER if careful else _DECODER
    value: JsonValue = decoder.decode(text)
    return value


def parse(text: str) -> tuple[JsonValue, bool]:
    """Parse JSON text; ``(None, False)`` when it is not one JSON value I-JSON can hold."""
    try:
        return _decode(text), True
    except (ValueError, RecursionError):
        return None, False


def why_not(text: str) -> str:
    """Why :func:`parse` refuses a text: ``invalid JSON``, or what JSON spells that I-JSON
    cannot hold (a number beyond the double range, nesting deeper than :data:`MAX_DEPTH`, a
    member name with a lone surrogate)."""
    try:
        _decode(text)
    except _NotJson as exc:
        return f"JSON holding {exc}"
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, ValueError) and "digits" in str(exc):  # the int-str digit limit
            return "JSON holding an integer too long to read"
        return "invalid JSON"
    return "valid JSON"


def _clip(text: str, width: int = 24) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def compact(value: JsonValue) -> str:
    """Write a value as compact JSON, the way a function call's arguments travel."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
