"""A rollout file as lines: each physical line with its number, decoded on its own.

Codex appends one JSON object per line (a ``RolloutLine``) and may be writing the file while
it is read. A line that is not UTF-8, not JSON, or JSON but not an object cannot be read; so
cannot a last line without its newline that does not parse (it is still being written:
*truncated*). None of these stops the reading: the line is kept as raw bytes beside its
reason, and every other line is decoded as usual. Decoding is strict
(:func:`asf_core.strict_json.parse`): a member named twice or a non-finite number would lose
data under any one reading, so such a line is kept raw too, and so is one no entry could hold
(:func:`asf_core.strict_json.unwritable`).

Each line knows where it starts and how long it is, so a conversion can read a rollout more
than once (up to where its first reading stopped, whatever Codex appended since) and read one
line again by its offset, instead of holding the file.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from attrs import frozen

from codex_plugin.source.compressed import open_rollout

__all__ = ["Digest", "Line", "decode_at", "lines_of", "raw_form", "read_lines"]


@frozen
class Line:
    """One non-blank physical line of a rollout."""

    #: 1-based physical line number (blank lines counted, never yielded).
    number: int
    #: The decoded object; None when the line cannot be read.
    obj: dict[str, Any] | None
    #: The raw bytes (without the newline), kept only for a line that cannot be read.
    raw: bytes = b""
    #: Why the line cannot be read.
    problem: str | None = None
    #: The file's last line, without a newline, that does not parse.
    truncated: bool = False
    #: Where the line starts in the file, and its bytes with the newline.
    offset: int = 0
    size: int = 0


def _decode(data: bytes) -> tuple[dict[str, Any] | None, str | None]:
    from asf_core.canonical import MAX_DEPTH, JsonError
    from asf_core.strict_json import parse, unwritable

    try:
        value = parse(data)
    except JsonError as exc:
        return None, str(exc)
    except Exception as exc:  # a decoder never fails, whatever the bytes
        return None, f"cannot decode: {type(exc).__name__}"
    if not isinstance(value, dict):
        kind = "array" if isinstance(value, list) else type(value).__name__
        return None, f"a JSON {'null' if value is None else kind}, not an object"
    # An entry holds a line's members two levels down (``data.object``, ``codex.fields``).
    why = unwritable(value, data, room=MAX_DEPTH - 2)
    return (value, None) if why is None else (None, why)


class Digest(Protocol):
    """What the bytes read are fed to (a ``hashlib`` object)."""

    def update(self, data: bytes, /) -> None: ...


def read_lines(path: Path, digest: Digest | None = None) -> Iterator[Line]:
    """The lines of the rollout at ``path`` (inflated, if Codex compressed it), streamed;
    ``OSError`` if it cannot be opened."""
    with open_rollout(path) as stream:
        yield from lines_of(stream, digest=digest)


def lines_of(
    stream: BinaryIO, end: int | None = None, *, digest: Digest | None = None
) -> Iterator[Line]:
    """The lines of an open rollout from its start, up to byte ``end`` (None: its end), every
    byte read fed to ``digest``."""
    stream.seek(0)
    number = offset = 0
    while end is None or offset < end:
        chunk = stream.readline() if end is None else stream.readline(end - offset)
        if not chunk:
            return
        if digest is not None:
            digest.update(chunk)
        number += 1
        complete = chunk.endswith(b"\n")
        data = chunk[:-1] if complete else chunk
        at, offset = offset, offset + len(chunk)
        if not data.strip():
            continue
        obj, problem = _decode(data)
        if obj is not None:
            yield Line(number=number, obj=obj, offset=at, size=len(chunk))
        else:
            yield Line(
                number=number,
                obj=None,
                raw=data,
                problem=problem,
                truncated=not complete,
                offset=at,
                size=len(chunk),
            )


def decode_at(stream: BinaryIO, offset: int) -> dict[str, Any] | None:
    """The object of the line at ``offset`` of an open rollout; None when it cannot be read."""
    stream.seek(offset)
    data = stream.readline()
    return _decode(data[:-1] if data.endswith(b"\n") else data)[0]


def raw_form(line: Line) -> dict[str, Any]:
    """An unreadable line as a custom entry keeps it: why, and its bytes (``text`` when they
    are UTF-8, else ``base64``), with ``truncated`` for a last line still being written."""
    out: dict[str, Any] = {"unreadable": line.problem or "unreadable"}
    try:
        out["text"] = line.raw.decode("utf-8")
    except UnicodeDecodeError:
        out["base64"] = base64.b64encode(line.raw).decode("ascii")
    if line.truncated:
        out["truncated"] = True
    return out
