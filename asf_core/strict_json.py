"""Strict JSON parsing and the writer's I-JSON normalisation.

:func:`parse` reads JSON the way ASF needs it read: integers exact however long, no
``NaN``/``Infinity``, duplicate member names and other I-JSON violations found and located.
:func:`normalise` is what a writer does to a value that is not I-JSON (ASF section 3.2): it
fixes it and records the change, so the original can be told from the fixed.
"""

from __future__ import annotations

import base64
import json
import math
import re
from decimal import Decimal
from typing import Any, Final

from asf_core.canonical import (
    INF,
    MAX_DEPTH,
    TWO53F,
    JsonError,
    TooDeep,
    has_lone_surrogate,
    int_is_ijson,
    nested_deeper,
    pointer,
    quote,
    utf16_key,
    where,
)

__all__ = ["normalise", "parse", "unwritable"]


class _SpelledInt(int):
    """An integral number literal that is not I-JSON, remembering how it was spelled.

    :func:`parse` returns one for literals such as ``9.007199254740993e15`` so that
    :func:`ijson_problems` can still see the exact value and :func:`normalise` can record
    the original spelling in ``was``.
    """

    source: str

    def __new__(cls, value: int, source: str) -> _SpelledInt:
        self = super().__new__(cls, value)
        self.source = source
        return self

    def __reduce__(self) -> tuple[type[_SpelledInt], tuple[int, str]]:
        return (_SpelledInt, (int(self), self.source))


# --------------------------------------------------------------------------- parse


class _Bad:
    """Placeholder left in the tree by the locating parse so the pointer can be found."""

    def __init__(self, reason: str, member: str | None = None) -> None:
        self.reason = reason
        self.member = member


class _Reject(Exception):
    """Raised by the fast parse hooks; the slow parse then locates the problem."""


def _pairs_strict(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Reject
    return obj


def _constant_strict(name: str) -> Any:
    raise _Reject


def _float_strict(text: str) -> float | int:
    f = float(text)
    if -TWO53F < f < TWO53F:
        return f
    if f in (INF, -INF):
        raise _Reject
    return _exact_if_unsafe(text, f)


def _exact_if_unsafe(text: str, f: float) -> float | int:
    exact = Decimal(text)
    i = int(exact)
    if Decimal(i) == exact and not int_is_ijson(i):
        return _SpelledInt(i, text)
    return f


def _pairs_locate(pairs: list[tuple[str, Any]]) -> Any:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            return _Bad("duplicate member name", key)
        obj[key] = value
    return obj


def _constant_locate(name: str) -> Any:
    return _Bad(f"{name} is not JSON")


def _float_locate(text: str) -> Any:
    f = float(text)
    if f in (INF, -INF):
        return _Bad(f"number {text[:40]} overflows a double")
    return f


def _find_bad(value: Any) -> str | None:
    """Where the first :class:`_Bad` placeholder is, in document order (without recursion)."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _Bad):
            if node.member is not None:
                path = [*path, node.member]
            return f"{where(path)}: {node.reason}"
        if isinstance(node, dict):
            stack.extend((item, [*path, key]) for key, item in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((node[i], [*path, i]) for i in range(len(node) - 1, -1, -1))
    return None


_STRICT: Final = json.JSONDecoder(
    object_pairs_hook=_pairs_strict, parse_constant=_constant_strict, parse_float=_float_strict
)
_LOCATE: Final = json.JSONDecoder(
    object_pairs_hook=_pairs_locate, parse_constant=_constant_locate, parse_float=_float_locate
)
#: The shape of a text the strict parse refused, for its depth alone: an object as the list
#: of its values (every one, duplicates too), any number or constant as it comes.
_SHAPE: Final = json.JSONDecoder(object_pairs_hook=lambda pairs: [v for _, v in pairs])


def parse(data: str | bytes) -> Any:
    """Parse one JSON text strictly: no duplicate names, NaN/Infinity, bad UTF-8, or garbage.

    Integers stay exact ``int``; other numbers are ``float``, except that a fraction or
    exponent literal whose exact value is an integer breaking the I-JSON rule (e.g.
    ``9.007199254740993e15``) becomes that exact ``int`` so the violation stays visible.
    Arrays and objects nested deeper than :data:`~asf_core.canonical.MAX_DEPTH` raise
    :class:`~asf_core.canonical.TooDeep` (a :class:`JsonError`).
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonError(f"invalid UTF-8 at byte {exc.start}") from None
    else:
        text = data
    try:
        value = _STRICT.decode(text)
    except _Reject:
        pass
    except json.JSONDecodeError as exc:
        raise JsonError(f"invalid JSON at char {exc.pos}: {exc.msg}") from None
    except RecursionError:
        raise TooDeep from None
    except ValueError as exc:  # e.g. an integer literal beyond the int-str digit limit
        raise JsonError(f"invalid JSON: {_clip(str(exc))}") from None
    else:
        if _may_nest_deeper(text) and nested_deeper(value):
            raise TooDeep
        return value
    try:
        located = _LOCATE.decode(text)
    except json.JSONDecodeError as exc:  # the reject came first; the text is broken too
        raise JsonError(f"invalid JSON at char {exc.pos}: {exc.msg}") from None
    except RecursionError:
        raise TooDeep from None
    except ValueError:
        located = None
    if _may_nest_deeper(text) and _nests_deeper(text):
        raise TooDeep
    raise JsonError(_find_bad(located) or "invalid JSON (duplicate name or non-finite number)")


def _nests_deeper(text: str) -> bool:
    """Whether a text the strict parse refused nests deeper than MAX_DEPTH as written: the
    located value cannot say, as a duplicate name replaces its whole object there."""
    try:
        return nested_deeper(_SHAPE.decode(text))
    except RecursionError:
        return True
    except ValueError:
        return False


def _may_nest_deeper(text: str) -> bool:
    """A cheap necessary condition for nesting deeper than MAX_DEPTH: that many brackets."""
    return text.count("[") + text.count("{") > MAX_DEPTH


def _clip(text: str, width: int = 120) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


# --------------------------------------------------------------------------- unwritable

#: An integer beyond the double range has at least 309 digits: a run of them is looked for
#: with every ASCII digit made "0" and every other byte "." (``bytes.translate`` and a search,
#: C loops: a regular expression took ten to twenty times as long, most of a Claude Code
#: conversion's reading). A surrogate escaped, or one in the text itself (UTF-8 never holds
#: one: only a text decoded with ``surrogateescape`` does, encoded back ``surrogatepass``).
_DIGITS_AS_ZERO: Final = bytes(48 if 48 <= b <= 57 else 46 for b in range(256))
_DIGIT_RUN: Final = b"0" * 309
_SURROGATE: Final = re.compile(rb"\\u[dD][89a-fA-F]")
#: Apart: one pattern of both has no literal start to search for, and reads a third slower.
_RAW_SURROGATE: Final = re.compile(rb"\xed[\xa0-\xbf]")


def _long_digits(data: bytes) -> bool:
    """Whether ``data`` holds 309 ASCII digits in a row (JSON numbers have no other digits)."""
    return _DIGIT_RUN in data.translate(_DIGITS_AS_ZERO)


def unwritable(value: Any, text: str | bytes, *, room: int = MAX_DEPTH) -> str | None:
    """Why a value :func:`parse` read from ``text`` cannot be written into an entry where it
    may nest ``room`` levels, even normalised: an integer beyond the double range, member
    names that collide once their lone surrogates are replaced, nesting deeper than ``room``.
    None when it can. A plugin keeping its source's lines keeps such a line raw, as one it
    cannot read. Cheap on ordinary text: each rule walks the value only when the text could
    break it (309 digits in a row, a surrogate escaped or raw, enough brackets).
    """
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    brackets = data.count(b"[") + data.count(b"{")
    digits = _long_digits(data)
    surrogates = bool(_SURROGATE.search(data) or _RAW_SURROGATE.search(data))
    if brackets > room and nested_deeper(value, room):
        return f"nested deeper than {room} levels"
    if not digits and not surrogates:
        return None
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool) and digits:
            try:
                float(item)
            except OverflowError:
                return _at(path, "integer beyond the double range")
        elif isinstance(item, dict):
            if surrogates and len({_fix_surrogates(k) for k in item}) != len(item):
                return _at(path, "member names collide once made valid text")
            stack.extend((v, [*path, k]) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, [*path, i]) for i, v in enumerate(item))
    return None


def _at(path: list[str | int], why: str) -> str:
    return f"{pointer(path)}: {why}" if path else why


# --------------------------------------------------------------------------- normalise


def _fix_surrogates(text: str) -> str:
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


def _string_source(text: str) -> str:
    """JSON text of a string that may hold lone surrogates (escaped as lowercase \\uXXXX)."""
    return "".join(
        f"\\u{ord(ch):04x}" if "\ud800" <= ch <= "\udfff" else quote(ch)[1:-1] for ch in text
    ).join('""')


def normalise(value: Any, *, depth: int = 0) -> tuple[Any, list[dict[str, Any]]]:
    """The writer's I-JSON normalisation (ASF section 3.2): a fixed copy plus ``normalised``.

    Lone surrogates become U+FFFD; unsafe integers become the (integer value of the) nearest
    double; a ``bytes`` value is a string whose UTF-8 may be invalid and is decoded with one
    U+FFFD per maximal ill-formed subpart, recorded with ``raw``.  Records are sorted by
    ``at`` in UTF-16 order.  Non-finite numbers and colliding names raise :class:`JsonError`,
    and so does nesting deeper than ``MAX_DEPTH`` (counting ``depth`` containers around
    ``value``) as :class:`~asf_core.canonical.TooDeep`, which no reader would take back.
    """
    records: list[dict[str, Any]] = []

    def fix_text(item: str | bytes | bytearray, path: list[str | int]) -> str:
        if isinstance(item, (bytes, bytearray)):
            raw = bytes(item)
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                quoted = base64.b64encode(b'"' + raw + b'"').decode("ascii")
                records.append({"at": pointer(path), "raw": quoted})
                return raw.decode("utf-8", "replace")
        if has_lone_surrogate(item):
            records.append({"at": pointer(path), "was": _string_source(item)})
            return _fix_surrogates(item)
        return item

    def walk(item: Any, path: list[str | int]) -> Any:
        if isinstance(item, (str, bytes, bytearray)):
            return fix_text(item, path)
        if item is None or isinstance(item, bool):
            return item
        if isinstance(item, int):
            if int_is_ijson(item):
                return int(item)
            try:
                rounded = int(float(item))
            except OverflowError:
                raise JsonError(f"{where(path)}: integer beyond the double range") from None
            records.append({"at": pointer(path), "was": getattr(item, "source", str(item))})
            return rounded
        if isinstance(item, float):
            if not math.isfinite(item):
                raise JsonError(f"{where(path)}: non-finite number {item!r} cannot be normalised")
            return item
        if isinstance(item, dict | list | tuple) and len(path) + depth >= MAX_DEPTH:
            raise TooDeep(where(path[:4]) + "/...")
        if isinstance(item, dict):
            fixed: dict[str, Any] = {}
            for key, member in item.items():
                if not isinstance(key, (str, bytes, bytearray)):
                    raise JsonError(f"{where(path)}: member name {key!r} is not a string")
                # A key's record points at its member, named by the fixed key.
                mark = len(records)
                new_key = fix_text(key, [*path, "\0"])
                if len(records) > mark:
                    records[-1]["at"] = pointer([*path, new_key])
                if new_key in fixed:
                    raise JsonError(
                        f"{where([*path, new_key])}: duplicate member name after normalising"
                    )
                fixed[new_key] = walk(member, [*path, new_key])
            return fixed
        if isinstance(item, (list, tuple)):
            items: list[Any] = []
            for index, member in enumerate(item):  # a loop, not a comprehension: one frame
                items.append(walk(member, [*path, index]))
            return items
        raise JsonError(f"{where(path)}: {type(item).__name__} is not a JSON value")

    try:
        result = walk(value, [])
    except RecursionError:
        raise JsonError("value nested too deeply (or circular)") from None
    records.sort(key=lambda record: utf16_key(record["at"]))
    return result, records
