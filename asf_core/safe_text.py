"""Text from the data, made safe to show: no control character reaches a terminal raw.

Session files, titles and paths are written by others. An escape sequence in a title can
recolour, retitle or clear the terminal of whoever lists it, a bidirectional override can
make a line read backwards, Unicode tag characters (U+E0000 to U+E007F, an invisible copy of
ASCII) hide text that a model reads and a person does not see, and a lone surrogate cannot
even be encoded. So everything ``asf`` prints for people goes through :func:`printable`, and
every JSON document it prints or writes through :func:`json_safe`: the data is shown, its
controls are not obeyed.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from typing import Final

__all__ = ["cell", "cells", "json_safe", "printable"]

# The patterns are compiled when first needed, not on import (the four cost about as much
# as loading attrs' validators): plain text, nearly all that is printed, never needs them.

#: C0 and C1 controls, DEL, the invisible bidirectional controls (ALM, LRM, RLM, LRE ... RLO,
#: LRI ... PDI), the Unicode line and paragraph separators, lone surrogates and the tag
#: characters.
_UNSAFE: Final = (
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
    "\U000e0000-\U000e007f]"
)
#: What :func:`json_safe` escapes: JSON already escapes C0 inside strings, and its layout
#: (newlines, spaces) lies outside them.
_UNSAFE_IN_LAYOUT: Final = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
    "\U000e0000-\U000e007f]"
)
_JSON_TERMINAL: Final = (
    "[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\U000e0000-\U000e007f]"
)
#: Only lone surrogates: the characters UTF-8 cannot encode at all.
_SURROGATE: Final = "[\ud800-\udfff]"
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str, *, layout: bool = False) -> str:
    """``text`` with every control character spelled out (``\\x1b``, ``\\u202e``, ``\\n``,
    ``\\U000e0041``).

    Safe to write to a terminal and always encodable as UTF-8; plain text comes back as is.
    With ``layout``, line feeds and tabs stay (text of many lines, such as a transcript).
    """
    if text.isascii() and text.isprintable():
        return text
    if layout:
        return _compiled(_UNSAFE_IN_LAYOUT).sub(_escape, text)
    return _compiled(_UNSAFE).sub(_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # beyond the BMP, JSON spells a character as its UTF-16 surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_safe(document: str, *, terminal: bool = False) -> str:
    """A JSON document (``json.dumps(..., ensure_ascii=False)``) that UTF-8 can encode.

    Lone surrogates become ``\\udXXX`` escapes, which JSON has for them; with ``terminal``
    every character :func:`printable` escapes does, so the document is safe on a screen.
    Such characters only occur inside JSON strings, where an escape means the same string.
    """
    if document.isascii() and (not terminal or "\x7f" not in document):
        return document
    return _compiled(_JSON_TERMINAL if terminal else _SURROGATE).sub(_json_escape, document)


def cell(ch: str) -> int:
    """The columns a terminal gives one character: two for wide and fullwidth ones (CJK,
    most emoji), none for combining marks (every nonspacing one, of whatever combining class:
    Thai and Devanagari vowel signs too), invisible format characters, and the vowels and
    final consonants a Hangul syllable decomposes into (NFD), which join the initial
    consonant's two columns."""
    if ch.isascii():
        return 1
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    if "\u1160" <= ch <= "\u11ff" or "\ud7b0" <= ch <= "\ud7ff":  # Hangul jamo V and T
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cells(text: str) -> int:
    """The columns a terminal gives ``text`` (see :func:`cell`)."""
    return len(text) if text.isascii() else sum(cell(ch) for ch in text)
