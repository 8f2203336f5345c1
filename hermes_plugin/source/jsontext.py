"""Strict JSON parsing for the JSON held in Hermes' text columns.

Python's ``json.loads`` accepts ``NaN`` and ``Infinity``, which no JSON
writer downstream can write back, and raises ``RecursionError`` or a
``ValueError`` for huge numbers on hostile input. Every decoder here parses
through :func:`parse`, so bad JSON always reads as "not JSON" and never as an
exception.
"""

from __future__ import annotations

import json
from typing import TypeAlias

__all__ = ["JsonValue", "compact", "parse"]

#: A JSON value as ``json.loads`` builds it.
JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None


class _NotJson(ValueError):
    """A constant (NaN, Infinity) that JSON does not have."""


def _reject_constant(name: str) -> JsonValue:
    raise _NotJson(name)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def parse(text: str) -> tuple[JsonValue, bool]:
    """Parse JSON text; ``(None, False)`` when it is not one JSON value."""
    try:
        value: JsonValue = _DECODER.decode(text)
    except (ValueError, RecursionError):
        return None, False
    return value, True


def compact(value: JsonValue) -> str:
    """Write a value as compact JSON, the way a function call's arguments travel."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
