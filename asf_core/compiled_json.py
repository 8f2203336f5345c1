"""The compiled encoders canonical JSON uses where their bytes are RFC 8785's, and the scan
that says where.

The compiled encoder is ``orjson`` where it is installed (a dependency; several times faster
than the stdlib's at escaping and needs no join or re-encoding), else the stdlib's C encoder.
For the values :func:`_scan` lets through both write exactly RFC 8785: member names of the
Basic Multilingual Plane only (UTF-8 byte order is UTF-16 order there), integers below 2**53,
finite floats that are not integral with 1e-4 <= |x| < 1e16 (where the shortest round-trip
digits print in plain decimal notation, as ECMAScript does), plain ``str``, ``int``, ``float``,
``bool``, ``None``, ``dict``, ``list`` and ``tuple`` (no subclass); both escape minimally,
controls as lowercase hexadecimal. Anything else (an integral or tiny float, a name beyond
U+FFFF, a big integer, a lone surrogate, a foreign type) takes the exact path, the reference.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any, Final

__all__ = ["MAX_DEPTH", "PASSTHROUGH", "fast_encoder", "refuse"]

_TWO53: Final = 2**53

#: The deepest arrays and objects may nest in a line of a session file (the line's own object
#: is level 1). JSON lets an implementation set such a limit (RFC 8259, section 9); this one is
#: far beyond real data and keeps every walk over a value clear of Python's recursion limit,
#: so the reader refuses a deeper line and the writer a deeper value
#: (:class:`~asf_core.canonical.TooDeep`).
MAX_DEPTH: Final = 512
quote: Final[Callable[[str], str]] = json.encoder.encode_basestring


def refuse(value: Any) -> Any:
    """``default`` for a C encoder: a value of no JSON type is refused, never written its
    own way (the caller then takes an exact path)."""
    raise TypeError


_c_encoder: Final = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, refuse, quote, None, ":", ",", True, False, False
)

try:
    import orjson
except ImportError:  # pragma: no cover - a platform without orjson's wheels: the stdlib's
    orjson = None  # type: ignore[assignment]


def _stdlib_bytes(value: Any) -> bytes:
    return "".join(_c_encoder(value, 0)).encode("utf-8")


if orjson is not None:
    #: Anything but plain JSON types (a subclass, a date, a dataclass) goes to ``default``,
    #: which refuses it, so orjson never writes a value its own way (here and in
    #: :mod:`asf_core.json_chunks`).
    PASSTHROUGH: Final = (
        orjson.OPT_PASSTHROUGH_SUBCLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
        | orjson.OPT_PASSTHROUGH_DATACLASS
    )
    _ORJSON_OPTIONS: Final = orjson.OPT_SORT_KEYS | PASSTHROUGH

    def _compiled(value: Any) -> bytes:
        """JCS bytes of a value :func:`_scan` found :data:`_C_OK`; ``ValueError`` or
        ``TypeError`` for what it cannot write (a lone surrogate, nesting beyond 255)."""
        return orjson.dumps(value, default=refuse, option=_ORJSON_OPTIONS)

else:  # pragma: no cover
    _compiled = _stdlib_bytes


#: What :func:`_scan` finds: the compiled encoder writes JCS; so does the stdlib's C encoder,
#: which is the one to use for a string longer than :data:`_LONG` (orjson reserves twelve
#: bytes of buffer per character of the string it escapes: a large tool output would cost a
#: dozen times its size in passing); only the exact encoder does (an integral or tiny float, a
#: name beyond U+FFFF, a big but exact integer); the writer's normalisation has something to
#: fix or refuse (an unsafe integer, raw bytes, another type).
_C_OK: Final = 0
_LONG_OK: Final = 1
_EXACT_OK: Final = 2
_FIX: Final = 3
#: Strings longer than this (characters) are escaped by the stdlib's encoder.
_LONG: Final = 32 * 1024


def _scan(value: Any, depth: int = 1) -> int:
    """The worst of :data:`_C_OK`, :data:`_LONG_OK`, :data:`_EXACT_OK`, :data:`_FIX` over a
    container's values.

    ``depth`` is the container's own level; one deeper than :data:`MAX_DEPTH` needs fixing
    (normalising refuses it). Lone surrogates are not checked here: encoding the result to
    UTF-8 fails on them.
    """
    if depth > MAX_DEPTH:
        return _FIX
    worst = _C_OK
    if type(value) is dict:
        if not value:
            return _C_OK
        try:
            keys = "".join(value)
        except TypeError:
            return _FIX
        if not keys.isascii() and max(keys) > "\uffff":
            worst = _EXACT_OK
        items: Any = value.values()
    else:
        items = value
    # Most values are strings, then containers: tested in that order. An empty container
    # adds nothing (short of the depth limit) and is not entered.
    for item in items:
        kind = type(item)
        if kind is str:
            if len(item) > _LONG and worst == _C_OK:
                worst = _LONG_OK
        elif kind is dict or kind is list or kind is tuple:
            if item or depth >= MAX_DEPTH:
                found = _scan(item, depth + 1)
                if found > worst:
                    if found == _FIX:
                        return _FIX
                    worst = found
        elif kind is int:
            if not -_TWO53 < item < _TWO53:
                from asf_core.canonical import int_is_ijson

                if not int_is_ijson(item):
                    return _FIX
                worst = _EXACT_OK
        elif kind is float:
            # Also non-finite ones, which the exact path refuses (orjson would write null).
            if item.is_integer() or not 1e-4 <= abs(item) < 1e16:
                worst = _EXACT_OK
        elif item is not None and kind is not bool:
            return _FIX
    return worst


def _scan_value(value: Any, depth: int = 0) -> int:
    """:func:`_scan` of any value with ``depth`` containers around it."""
    return _scan(value, depth + 1) if type(value) is dict else _scan((value,), depth)


def fast_encoder(value: Any) -> Callable[[Any], bytes] | None:
    """The C encoder that writes JCS for ``value`` (orjson, or the stdlib's for long
    strings), or None when only the exact path does. Either may still raise ``ValueError``
    or ``TypeError`` (a lone surrogate, nesting beyond orjson's 255 levels): the caller then
    takes the exact path."""
    found = _scan_value(value)
    if found == _C_OK:
        return _compiled
    if found == _LONG_OK:
        return _stdlib_bytes
    return None
