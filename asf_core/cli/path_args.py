"""Path arguments: an empty one is a mistake, not the current directory.

``asf verify "$DIR"``, ``asf export f --to html -o "$OUT"`` or ``--report "$LOG"`` with the
variable unset or empty pass ``''``, which ``Path`` reads as ``.``: the command would verify,
list or convert whatever the current directory holds, or write documents into it. Every path
an ``asf`` command takes refuses it, as a usage error naming the option. ``-`` names stdin
where a command reads one session from it (``./-`` names a file called ``-``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["STDIN", "a_path", "path_text", "read_stdin"]

#: The path argument that means stdin.
STDIN = "-"


def path_text(text: str) -> str:
    """A path as given; an empty one is refused (``'.'`` says the current directory)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path (for the current directory, say '.')")
    return text


def a_path(text: str) -> Path:
    """A path argument as a :class:`Path`; an empty one is refused (see :func:`path_text`)."""
    return Path(path_text(text))


def read_stdin() -> bytes:
    """All of stdin, as bytes (a stream without a binary buffer, as tests give, encoded)."""
    return sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
