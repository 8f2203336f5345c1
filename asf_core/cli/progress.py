"""A one-line progress display on stderr, shown only to a person watching a terminal.

Progress is noise in a pipe, a log file or a ``--json`` run, so :func:`progress_for` hands
out a silent display unless stderr is a TTY and the user did not ask for quiet.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from asf_core.cli.humane import clip, columns
from asf_core.safe_text import printable

__all__ = ["Progress", "progress_for"]

#: The longest progress line, whatever the terminal's width.
_LONGEST = 150


class Progress:
    """Rewrites one stderr line at most ten times a second; silent when disabled."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self._last = 0.0
        self._width = 0

    @property
    def enabled(self) -> bool:
        return self._stream is not None

    def show(self, text: str, *, force: bool = False) -> None:
        if self._stream is None:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        line = _fitted(printable(text), _room(self._stream))
        shown = columns(line)  # a wide character takes two columns to blank
        self._stream.write("\r" + line + " " * (self._width - shown))
        self._stream.flush()
        self._width = shown

    def clear(self) -> None:
        if self._stream is None or not self._width:
            return
        self._stream.write("\r" + " " * self._width + "\r")
        self._stream.flush()
        self._width = 0


#: The columns a store's label keeps when what follows it does not fit: its first
#: character and an ellipsis.
_LABEL_LEAST = 2


def _fitted(text: str, room: int) -> str:
    """``text`` in ``room`` columns; of ``store: 3 of 40 sessions`` the store gives way
    first (down to its first character), so the count stays in sight on a narrow terminal
    too."""
    whole = clip(text, room)
    head, sep, tail = text.rpartition(": ")
    if whole == text or not sep:
        return whole
    label = clip(head, max(room - len(tail) - len(sep), _LABEL_LEAST))
    return clip(label + sep + tail, room)


def _room(stream: TextIO) -> int:
    """The columns a progress line may take: fewer than the terminal's (a line that wraps
    cannot be rewritten in place: each update would leave a line behind), at most 150."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isascii() and columns.isdigit() and int(columns) > 0:
        width = int(columns)
    else:
        try:
            width = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, OSError, ValueError):  # not a terminal (tests)
            width = 0
    return min(width - 1, _LONGEST) if width > 1 else _LONGEST


def progress_for(*, quiet: bool) -> Progress:
    """A live display when stderr is a terminal and ``quiet`` is false, else a silent one."""
    stream = sys.stderr
    live = not quiet and hasattr(stream, "isatty") and stream.isatty()
    return Progress(stream if live else None)
