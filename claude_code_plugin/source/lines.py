"""A session file as lines: raw bytes with their place, and each line decoded on its own.

Claude Code appends one JSON object per line and may be writing the file while we read it, so
a last line without its newline that does not parse is a line still being written
(*truncated*), while a line that does not parse anywhere else is *corrupt*. Neither stops the
reading: every other line is decoded as usual, and the bad one is kept as raw text.

Decoding is strict (:func:`asf_core.canonical.parse`): a duplicate member name or a
non-finite number would lose data if we let the JSON library pick one reading, so such a line
is kept raw too; so is one no entry could hold (:func:`asf_core.strict_json.unwritable`).
Invalid UTF-8 inside an otherwise sound line is tolerated: the line is decoded with the bad
bytes as lone surrogates (the ASF writer then records each in the entry's ``normalised`` list,
from which the bytes can be recovered), so the line keeps its place in the conversation.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any, BinaryIO

from attrs import frozen

from asf_core.canonical import MAX_DEPTH, JsonError
from asf_core.strict_json import parse, unwritable

__all__ = ["LINE_DEPTH", "Decoded", "RawLine", "decode_line", "raw_lines", "raw_text"]

#: How deep a line may nest: an entry holds a line's members two levels down (``data.object``,
#: ``claude-code.fields``), and an ASF line nests at most MAX_DEPTH levels.
LINE_DEPTH = MAX_DEPTH - 2


@frozen
class RawLine:
    """One physical line of a file."""

    #: 1-based line number.
    number: int
    #: Byte offset of the line's first byte.
    offset: int
    #: The line's bytes without its newline.
    data: bytes
    #: Whether the line ended with a newline (only the last line of a file may not).
    complete: bool

    @property
    def size(self) -> int:
        """Bytes the line takes in the file, newline included."""
        return len(self.data) + (1 if self.complete else 0)


@frozen
class Decoded:
    """What a line holds: a JSON object, or why it cannot be read."""

    #: The line's object; None when the line cannot be read.
    obj: dict[str, Any] | None
    #: Why the line cannot be read (``obj`` None), or what was wrong but tolerated.
    problem: str | None = None


def raw_lines(stream: BinaryIO, *, start: int = 0, number: int = 1) -> Iterator[RawLine]:
    """The lines of ``stream`` from byte ``start`` (numbered from ``number``), streamed.

    Empty lines are skipped (they hold nothing) but counted, so numbers stay physical.
    """
    offset = start
    for chunk in stream:
        complete = chunk.endswith(b"\n")
        data = chunk[:-1] if complete else chunk
        if data and not data.isspace():
            yield RawLine(number=number, offset=offset, data=data, complete=complete)
        offset += len(chunk)
        number += 1


def decode_line(data: bytes) -> Decoded:
    """Decode one line; never raises."""
    try:
        value = parse(data)
    except JsonError as exc:
        reason = str(exc)
        if not reason.startswith("invalid UTF-8"):
            return Decoded(None, reason)
        text = data.decode("utf-8", "surrogateescape")
        try:  # keep the line's structure; the bad bytes ride along as lone surrogates
            value = parse(text)
        except JsonError as again:
            return Decoded(None, f"{reason}; {again}")
        if not isinstance(value, dict):
            return Decoded(None, f"a JSON {_kind(value)}, not an object")
        why = unwritable(value, text, room=LINE_DEPTH)
        if why is not None:
            return Decoded(None, f"{reason}; {why}")
        return Decoded(value, f"{reason} (kept as lone surrogates)")
    except Exception as exc:  # a decoder must not fail on any input
        return Decoded(None, f"cannot decode: {type(exc).__name__}")
    if not isinstance(value, dict):
        return Decoded(None, f"a JSON {_kind(value)}, not an object")
    why = unwritable(value, data, room=LINE_DEPTH)
    return Decoded(value) if why is None else Decoded(None, why)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"


def raw_text(data: bytes) -> dict[str, str]:
    """An unreadable line's bytes as JSON can hold them: ``text`` if UTF-8, else ``base64``."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}
