"""The text ``json`` writes (``ensure_ascii=False``; indented by two, or compact), in chunks,
encoded by orjson wherever its bytes are the stdlib's.

Exports, ``report.json`` and ``--json`` output are JSON for people and tools: what they print
is the standard library's text, which a pure-Python encoder writes token by token (the C one
does not indent, nor stream), so that a large document took longer to print than to build.
Here a container whose values orjson writes exactly as ``json`` does, and whose text is small
(:data:`BLOCK`), is encoded by orjson in one call; a larger one is written member by member, so
that the document is never held whole as text; anything else goes to ``json`` itself. orjson
writes the same text for plain ``str`` (``json``'s escapes, non-ASCII kept), ``int`` within 64
bits, ``bool``, ``None``, ``dict`` with ``str`` names, ``list`` and ``tuple``, and finite
floats but those of magnitude below 1e-4 (``1e-05``, which orjson spells ``0.00001``); a lone
surrogate, a deeper nesting than orjson's and a foreign type make it raise, and ``json`` writes
that value (or raises). ``tests/asf_core/test_json_chunks.py`` compares both on arbitrary
values.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import orjson

from asf_core.compiled_json import PASSTHROUGH, refuse

__all__ = ["BLOCK", "chunks"]

#: The largest text (estimated, in characters) encoded in one call.
BLOCK: Final = 64 * 1024
#: What :func:`_size` says of a value orjson must not write.
_UNSAFE: Final = -1
_INF: Final = float("inf")
#: Nesting orjson refuses beyond (its limit is 255 levels): :func:`_size` stops there.
_ORJSON_DEPTH: Final = 254
#: The level from which :func:`_chunks` gives what is left to ``json`` in one piece, whose
#: C encoder nests on Python's recursion limit (about 900 levels under this one) and spots a
#: circular value; walked here, each level costs two Python frames and a cycle never ends.
_HAND_OVER: Final = 64


def _size(value: Any, budget: int, depth: int = 0) -> int:
    """About how long ``value``'s text is, when orjson writes it as ``json`` does: a number
    above ``budget`` once it is known to be larger (the rest is not looked at), or
    :data:`_UNSAFE` (also for nesting deeper than orjson writes, and so for a circular value).
    A container's strings, nearly all of its values, are counted in its loop; its other
    scalars by :func:`_scalar_size`."""
    if depth > _ORJSON_DEPTH:
        return _UNSAFE
    kind = type(value)
    if kind is dict:
        if not all(type(key) is str for key in value):
            return _UNSAFE
        total = 2 + sum(map(len, value)) + 8 * len(value)
        members: Any = value.values()
    elif kind is list or kind is tuple:
        total = 2 + 6 * len(value)
        members = value
    else:
        return _scalar_size(value)
    for member in members:
        kind = type(member)
        if kind is str:
            total += len(member)
        elif kind is dict or kind is list or kind is tuple:
            found = _size(member, budget - total, depth + 1)
            if found < 0:
                return _UNSAFE
            total += found
        else:
            found = _scalar_size(member)
            if found < 0:
                return _UNSAFE
            total += found
        if total > budget:
            return total
    return total


def _scalar_size(value: Any) -> int:
    kind = type(value)
    if kind is str:
        return len(value) + 2
    if kind is float:
        return 24 if value == 0.0 or 1e-4 <= abs(value) < _INF else _UNSAFE
    if kind is int or kind is bool or value is None:
        return 20  # an int beyond 64 bits: orjson refuses it, and json writes it
    return _UNSAFE


def chunks(value: Any, *, indent: int | None = 2) -> Iterator[str]:
    """``json.dumps(value, ensure_ascii=False, indent=indent)`` (compact separators when
    ``indent`` is None), in chunks whose concatenation is exactly that text. Lone surrogates
    are kept as ``json`` keeps them (the caller escapes them); ``json``'s errors are raised."""
    if indent is not None and indent != 2:  # orjson indents by two only
        yield _stdlib(value, 0, indent)
        return
    yield from _chunks(value, 0, indent)


def _chunks(value: Any, level: int, indent: int | None) -> Iterator[str]:
    if level >= _HAND_OVER:
        yield _stdlib(value, level, indent)
        return
    size = _size(value, BLOCK)
    if 0 <= size <= BLOCK:
        text = _orjson(value, level, indent)
        if text is not None:
            yield text
            return
    if isinstance(value, dict) and value and all(type(k) is str for k in value):
        yield from _members(value, level, indent, "{", "}")
    elif isinstance(value, list | tuple) and value:
        yield from _members(value, level, indent, "[", "]")
    else:
        yield _stdlib(value, level, indent)


def _members(
    value: dict[str, Any] | list[Any] | tuple[Any, ...],
    level: int,
    indent: int | None,
    opening: str,
    closing: str,
) -> Iterator[str]:
    """A large container, member by member, laid out as ``json`` lays it out."""
    if indent is None:
        between, colon, inside, end = ",", ":", "", ""
    else:
        pad = " " * indent
        between, colon = ",\n" + pad * (level + 1), ": "
        inside, end = "\n" + pad * (level + 1), "\n" + pad * level
    yield opening + inside
    items = value.items() if isinstance(value, dict) else ((None, m) for m in value)
    for number, (key, member) in enumerate(items):
        if number:
            yield between
        if key is not None:
            yield _stdlib(key, 0, None) + colon
        yield from _chunks(member, level + 1, indent)
    yield end + closing


def _orjson(value: Any, level: int, indent: int | None) -> str | None:
    """orjson's text of a value :func:`_size` found safe, indented from ``level``; None when
    orjson refuses it after all (a lone surrogate, nesting beyond its limit)."""
    try:
        data = orjson.dumps(
            value,
            default=refuse,
            option=PASSTHROUGH if indent is None else PASSTHROUGH | orjson.OPT_INDENT_2,
        )
    except (TypeError, ValueError):
        return None
    text = data.decode("utf-8")
    if level and indent is not None and "\n" in text:  # a string holds no raw newline
        text = text.replace("\n", "\n" + " " * (indent * level))
    return text


def _stdlib(value: Any, level: int, indent: int | None) -> str:
    """``json``'s own text of a value, indented from ``level``."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return text.replace("\n", "\n" + " " * (indent * level)) if level else text
