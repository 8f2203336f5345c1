"""RFC 8785 (JCS) canonical JSON, the basis of every ASF hash, and the I-JSON checks.

ASF ids are SHA-256 over canonical JSON, so a single byte of difference from the reference
writer breaks every id after it.  The stdlib ``json`` module is not JCS (number rendering and
key order differ), so this module renders numbers the ECMAScript way and sorts members by
UTF-16 code units.  Because canonicalisation runs for every entry written, :func:`dumps` first
checks cheaply (one walk of the value's containers) whether a compiled encoder already writes
JCS for the value (:mod:`asf_core.compiled_json`), and only encodes it in Python when it would
not.
"""

from __future__ import annotations

import json
import json.encoder
import math
from collections.abc import Callable
from decimal import Decimal
from hashlib import sha256
from typing import Any, Final

# The compiled encoders and the scan that chooses among them (see their module).
from asf_core.compiled_json import (
    _C_OK,
    _EXACT_OK,
    _LONG,
    _LONG_OK,
    MAX_DEPTH,
    _compiled,
    _scan_value,
    _stdlib_bytes,
    fast_encoder,
)

__all__ = [
    "INF",
    "MAX_DEPTH",
    "TWO53F",
    "JsonError",
    "TooDeep",
    "dumps",
    "dumps_if_normal",
    "dumps_str",
    "fast_encoder",
    "float_text",
    "ijson_problems",
    "int_is_ijson",
    "nested_deeper",
    "pointer",
    "quote",
    "sha256_of",
    "utf16_key",
    "where",
]

_TWO53: Final = 2**53
TWO53F: Final = float(_TWO53)
INF: Final = math.inf


class JsonError(ValueError):
    """Bad JSON, or a value that is not I-JSON; the message says what and where."""


class TooDeep(JsonError):
    """Arrays and objects nested deeper than :data:`MAX_DEPTH`."""

    def __init__(self, where: str = "(root)") -> None:
        super().__init__(f"{where}: arrays and objects nested deeper than {MAX_DEPTH} levels")


def nested_deeper(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` levels (iteratively)."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list | tuple) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list | tuple))
    return False


# --------------------------------------------------------------------------- pointers


def _escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def pointer(path: list[str | int]) -> str:
    return "".join("/" + _escape_token(str(p)) for p in path)


def where(path: list[str | int]) -> str:
    return pointer(path) or "(root)"


# --------------------------------------------------------------------------- numbers


def float_text(x: float) -> str:
    """ECMAScript Number::toString of a finite double (RFC 8785 section 3.2.2.3)."""
    if x == 0:
        return "0"
    ax = abs(x)
    if 1e-4 <= ax < 1e16:
        # Here Python's shortest repr already is the ECMAScript form, except for "n.0".
        if x.is_integer():
            return str(int(x))
        return repr(x)
    text = repr(x)
    sign = ""
    if text[0] == "-":
        sign = "-"
        text = text[1:]
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    # value = 0.<digits> * 10**point
    point = len(whole) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    e = point - 1
    e_text = f"e+{e}" if e >= 0 else f"e-{-e}"
    if k == 1:
        return sign + digits + e_text
    return sign + digits[0] + "." + digits[1:] + e_text


def _int_text(i: int) -> str:
    """An integer as JCS writes it: exactly if it is safe, else as its nearest double."""
    if -_TWO53 < i < _TWO53:
        return str(i)
    return float_text(float(i))  # OverflowError beyond the double range


def int_is_ijson(i: int) -> bool:
    """Exactly a double, or equal to the canonical rendering of the nearest double."""
    if -_TWO53 <= i <= _TWO53:
        return True
    try:
        f = float(i)
    except OverflowError:
        return False
    return int(f) == i or Decimal(float_text(f)) == i


# --------------------------------------------------------------------------- dumps

quote: Final[Callable[[str], str]] = json.encoder.encode_basestring


class _Unencodable(Exception):
    pass


def utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _encode(value: Any, parts: list[str], depth: int = 0) -> None:
    if isinstance(value, str):
        parts.append(quote(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(_int_text(int(value)))  # int() drops a subclass's own repr
    elif isinstance(value, float):
        if value != value or value in (INF, -INF):
            raise _Unencodable
        parts.append(float_text(float(value)))
    elif depth >= MAX_DEPTH:
        raise _Unencodable
    elif isinstance(value, dict):
        keys = list(value)
        for key in keys:
            if not isinstance(key, str):
                raise _Unencodable
        joined = "".join(keys)
        if not joined.isascii() and max(joined) > "\uffff":
            keys.sort(key=utf16_key)
        else:
            keys.sort()
        sep = "{"
        for key in keys:
            parts.append(sep)
            parts.append(quote(key))
            parts.append(":")
            _encode(value[key], parts, depth + 1)
            sep = ","
        parts.append("}" if keys else "{}")
    elif isinstance(value, (list, tuple)):
        sep = "["
        for item in value:
            parts.append(sep)
            _encode(item, parts, depth + 1)
            sep = ","
        parts.append("]" if value else "[]")
    else:
        raise _Unencodable


def _dumps_slow(value: Any) -> bytes:
    parts: list[str] = []
    _encode(value, parts)
    return "".join(parts).encode("utf-8")


def dumps(value: Any) -> bytes:
    """RFC 8785 canonical UTF-8 bytes of a JSON value (``bool`` is not a number here).

    Integers of magnitude 2**53 or more are written as their nearest double, as JCS does.
    """
    try:
        encoder = fast_encoder(value)
        if encoder is not None:
            try:
                return encoder(value)
            except (ValueError, TypeError):
                pass  # a lone surrogate: let the slow path explain
        return _dumps_slow(value)
    except (_Unencodable, ValueError, OverflowError, RecursionError):
        pass
    problems = _problems(value, writer=True, first=True)
    raise JsonError(problems[0] if problems else "value cannot be canonicalised") from None


def dumps_if_normal(value: Any, *, depth: int = 0) -> bytes | None:
    """Canonical bytes of a value the writer's :func:`normalise` would leave alone, else None.

    The writer's hot path: one scan and one encoding for the common case (no lone
    surrogate, no unsafe integer, no raw bytes), instead of a normalising walk first.
    ``depth`` counts the containers around the value (1 for a member of a line).
    """
    kind = type(value)
    if kind is str:
        try:
            return (_compiled if len(value) <= _LONG else _stdlib_bytes)(value)
        except (ValueError, TypeError):
            return None  # a lone surrogate: normalise it
    found = _scan_value(value, depth)
    try:
        if found == _C_OK:
            return _compiled(value)
        if found == _LONG_OK:
            return _stdlib_bytes(value)
        if found == _EXACT_OK:
            return _dumps_slow(value)
    except UnicodeEncodeError:
        return None
    except (ValueError, TypeError, _Unencodable):
        pass  # a non-finite float: let normalise and dumps explain
    from asf_core.strict_json import normalise

    fixed, records = normalise(value, depth=depth)
    return None if records else dumps(fixed)


def dumps_str(value: Any) -> str:
    """Like :func:`dumps`, as ``str``."""
    return dumps(value).decode("utf-8")


def sha256_of(value: Any) -> str:
    """``sha256:<hex>`` of the canonical form: the hash every ASF id and content hash uses."""
    return "sha256:" + sha256(dumps(value)).hexdigest()


# --------------------------------------------------------------------------- I-JSON


def has_lone_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _problems(value: Any, *, writer: bool, first: bool) -> list[str]:
    """Why a value is not I-JSON (reader) or cannot be canonicalised (writer)."""
    out: list[str] = []

    def walk(item: Any, path: list[str | int]) -> None:
        if first and out:
            return
        if len(path) >= MAX_DEPTH and isinstance(item, dict | list | tuple):
            out.append(str(TooDeep(where(path[:4]) + "/...")))
        elif isinstance(item, str):
            if has_lone_surrogate(item):
                out.append(f"{where(path)}: lone surrogate in string")
        elif item is None or isinstance(item, bool):
            pass
        elif isinstance(item, int):
            if writer:
                try:
                    float(item)
                except OverflowError:
                    out.append(f"{where(path)}: integer beyond the double range")
            elif not int_is_ijson(item):
                spelled = getattr(item, "source", item)
                out.append(f"{where(path)}: integer {spelled} is not exactly a double")
        elif isinstance(item, float):
            if not math.isfinite(item):
                out.append(f"{where(path)}: non-finite number {item!r}")
        elif isinstance(item, dict):
            for key, member in item.items():
                if not isinstance(key, str):
                    out.append(f"{where(path)}: member name {key!r} is not a string")
                    continue
                if has_lone_surrogate(key):
                    out.append(f"{where([*path, key])}: lone surrogate in member name")
                walk(member, [*path, key])
        elif isinstance(item, (list, tuple)):
            for index, member in enumerate(item):
                walk(member, [*path, index])
        else:
            out.append(f"{where(path)}: {type(item).__name__} is not a JSON value")

    try:
        walk(value, [])
    except RecursionError:  # a circular value: what a writer is handed need not be JSON
        out.append("(root): nested too deeply (or circular)")
    return out


def ijson_problems(value: Any) -> list[str]:
    """I-JSON violations of a parsed value, each ``"<pointer>: <reason>"`` (empty if none)."""
    return _problems(value, writer=False, first=False)
