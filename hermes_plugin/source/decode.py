"""Decoders for the cells of Hermes' rows: content, timestamps and JSON columns.

Each decoder reads a cell as Hermes reads it and says whether the cell held
what Hermes writes. None raises: a damaged cell decodes to Hermes' fallback,
and the caller records a problem.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

from attrs import frozen

from hermes_plugin.schema import CONTENT_PREFIX, EPOCH_MAX, EPOCH_MIN
from hermes_plugin.source.columns import Cell, RawText, cell_text
from hermes_plugin.source.jsontext import JsonValue, compact, parse

__all__ = [
    "NULL_CONTENT",
    "Content",
    "decode_content",
    "decode_display_metadata",
    "decode_epoch",
    "decode_json_column",
    "describe",
    "epoch",
]


@frozen
class Content:
    """A message's content as Hermes stores it: text, or JSON behind the prefix.

    ``value`` is the content as Hermes' conversation reader returns it: the text, the JSON
    behind the prefix (a list of parts, a dict, ...), None for NULL, a number cell as it is
    (a BLOB reads as its text). ``parts`` holds structured content, each part as written (a
    dict is one part), and ``structured`` says the content is ``parts``; ``text`` is the
    text of content that is not structured. ``null`` says the column is NULL (or absent),
    which Hermes keeps distinct from ``''``.
    """

    text: str = ""
    parts: tuple[JsonValue, ...] = ()
    structured: bool = False
    null: bool = False
    value: JsonValue = None

    @classmethod
    def of(cls, value: JsonValue) -> Content:
        """Content from its ``value``, the shape Hermes' reader returns."""
        if value is None:
            return NULL_CONTENT
        if isinstance(value, str):
            return cls(text=value, value=value)
        if isinstance(value, list):
            return cls(parts=tuple(value), structured=True, value=value)
        return cls(parts=(value,), structured=True, value=value)


#: NULL content (shared; a Content is immutable).
NULL_CONTENT = Content(null=True)


def decode_content(value: Cell, present: bool = True) -> tuple[Content, bool]:
    """Read a content cell as ``SessionDB._decode_content`` does.

    Text behind :data:`CONTENT_PREFIX` is JSON; a prefix holding no valid JSON
    stays the text it is (prefix included) and ``ok`` is False. A blob or a
    number, which Hermes returns unchanged, reads as its text with ``ok``
    False (a number's ``value`` stays the number, but for an infinity, which no JSON
    holds: its text).
    """
    if not present or value is None:
        return NULL_CONTENT, True
    text = value if type(value) is str else cell_text(value)
    if text is None:
        if isinstance(value, bytes):
            text = value.decode("utf-8", errors="replace")
            return Content(text=text, value=text), False
        if isinstance(value, float) and not math.isfinite(value):  # no JSON holds it
            return Content(text=repr(value), value=repr(value)), False
        return Content(text=repr(value), value=value), False
    if not text.startswith(CONTENT_PREFIX):
        return Content(text=text, value=text), True
    decoded, ok = parse(text[len(CONTENT_PREFIX) :])
    if not ok:
        return Content(text=text, value=text), False
    return Content.of(decoded), True


def epoch(seconds: float) -> datetime | None:
    """A Hermes timestamp as an aware UTC time; None outside [0, 4.2e9] or not finite."""
    if not math.isfinite(seconds) or not EPOCH_MIN <= seconds <= EPOCH_MAX:
        return None
    return datetime.fromtimestamp(seconds, tz=UTC)


def decode_epoch(value: Cell) -> tuple[float | None, bool]:
    """A timestamp cell as seconds; ``ok`` False for a cell that is no trusted time.

    NULL is unset (``ok`` True); text, blobs and numbers outside the window
    read as no time.
    """
    if value is None:
        return None, True
    # A REAL or INTEGER cell (the exact types, told quickest), or a number of another type.
    exact = type(value) is float or type(value) is int
    if not exact and (isinstance(value, bool) or not isinstance(value, int | float)):
        return None, False
    seconds = float(value)
    # The window test of :func:`epoch`, without building the datetime (once a row).
    if not math.isfinite(seconds) or not EPOCH_MIN <= seconds <= EPOCH_MAX:
        return None, False
    return seconds, True


def decode_json_column(value: Cell) -> tuple[JsonValue, bool]:
    """A JSON text column's value; ``(None, False)`` when it holds no valid JSON.

    NULL and ``''`` are unset, as Hermes' truthiness test reads them.
    """
    if value is None or value == "":
        return None, True
    text = cell_text(value)
    if text is None:
        return None, False
    return parse(text)


def decode_display_metadata(value: Cell) -> tuple[dict[str, JsonValue] | None, bool]:
    """``display_metadata`` as the JSON object it holds.

    Rows written before Hermes guarded the column are double-encoded (a JSON
    string holding JSON), so up to two string layers are unwrapped; anything
    that does not end as an object is dropped (``ok`` False).
    """
    decoded, ok = decode_json_column(value)
    if not ok or decoded is None:
        return None, ok
    for _ in range(2):
        if not isinstance(decoded, str):
            break
        decoded, ok = parse(decoded)
        if not ok:
            return None, False
    if isinstance(decoded, dict):
        return decoded, True
    return None, False


def describe(value: Cell) -> str:
    """A short description of a cell for a problem message (never the whole cell)."""
    if value is None:
        return "null"
    if isinstance(value, RawText):
        return f"text with invalid UTF-8 ({len(value)} bytes)"
    if isinstance(value, bytes):
        return f"blob ({len(value)} bytes)"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"text {compact(shown)}"
    return f"{type(value).__name__} {value!r}"
