"""Times, sizes and text as people read them on a terminal.

Listings show times in the reader's own time zone with an age beside them, and fit each line
to the terminal: a pipe gets whole lines, a terminal gets lines cut at its width.
"""

from __future__ import annotations

import codecs
import functools
import os
import sys
from collections.abc import Callable
from datetime import datetime

from asf_core.safe_text import cell, printable

__all__ = [
    "age",
    "clip",
    "columns",
    "counted",
    "flat",
    "local",
    "plural",
    "terminal_width",
]

#: The kinds of finding that are nouns (``2 strays``); the others (``dropped``, ``info``, a
#: plugin's own) are shown as named.
_NOUNS = frozenset({"error", "warning", "stray"})


def plural(n: int, word: str) -> str:
    """``1 store``, ``2 stores``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def counted(n: int, kind: str) -> str:
    """A number of findings of one kind, as a person says it: ``1 stray``, ``2 strays``,
    ``2 dropped``."""
    return plural(n, kind) if kind in _NOUNS else f"{n} {kind}"


_AGES = ((365 * 86400, "y"), (30 * 86400, "mo"), (7 * 86400, "w"), (86400, "d"), (3600, "h"))


def local(moment: datetime | None) -> str:
    """A moment in local time, to the minute (``-`` for none)."""
    if moment is None:
        return "-"
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def age(moment: datetime | None, now: datetime | None = None) -> str:
    """How long ago, in the largest whole unit: ``45s``, ``12m``, ``5h``, ``3d``, ``2w``,
    ``4mo``, ``2y`` (``-`` for none; a moment ahead of the clock is ``future``)."""
    if moment is None:
        return "-"
    seconds = ((now or datetime.now().astimezone()) - moment).total_seconds()
    if seconds < -60:
        return "future"
    for size, unit in _AGES:
        if seconds >= size * (2 if unit in ("y", "mo", "w") else 1):
            return f"{int(seconds // size)}{unit}"
    if seconds >= 60:
        return f"{int(seconds // 60)}m"
    return f"{max(int(seconds), 0)}s"


def flat(text: str) -> str:
    """Text on one line: whitespace runs folded to one space, other control characters
    escaped (:func:`~asf_core.safe_text.printable`: ``\\x1b``, ``\\u202e``) so nothing
    printed can move the cursor or change the terminal, and the reader sees what is there."""
    return printable(" ".join(text.split()))


@functools.cache
def _spelled(encoding: str) -> Callable[[str], bool] | None:
    """Whether ``encoding`` spells a character; None for one that spells every character (a
    UTF, or one Python does not know: its stream says so when written to)."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return None
    if name.startswith("utf"):
        return None

    def spelled(ch: str) -> bool:
        try:
            ch.encode(name)
        except UnicodeEncodeError:
            return False
        return True

    return spelled


def _escaped(ch: str) -> int:
    """The columns of a character's backslash escape (``\\xe9``, ``\\u2014``, ``\\U0001f680``),
    what stdout writes for one its encoding cannot spell (:func:`asf_core.cli.streams.prepare`)."""
    return 4 if ord(ch) < 0x100 else 6 if ord(ch) < 0x10000 else 10


def _shown(spelled: Callable[[str], bool] | None) -> Callable[[str], int]:
    """The columns stdout shows a character in: its :func:`cell`, or its escape's where the
    encoding cannot spell it."""
    if spelled is None:
        return cell
    return lambda ch: cell(ch) if spelled(ch) else _escaped(ch)


def columns(text: str) -> int:
    """The terminal columns ``text`` takes as stdout will show it: two for a wide or
    fullwidth character (CJK, most emoji), none for a combining mark, and an escape's for a
    character stdout's encoding cannot spell; what :func:`clip` counts, so lines are padded
    and fitted to what the terminal shows, not to their characters."""
    if text.isascii():
        return len(text)
    return sum(map(_shown(_spelled(getattr(sys.stdout, "encoding", None) or "utf-8")), text))


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` terminal columns with an ellipsis (whole when it fits), as
    stdout will show it: a character its encoding cannot spell takes its escape's columns,
    and the ellipsis is ``...`` where ``…`` cannot be spelled."""
    if width <= 0:
        return ""
    spelled = _spelled(getattr(sys.stdout, "encoding", None) or "utf-8")
    dots = "…" if spelled is None or spelled("…") else "..."
    if text.isascii():
        return text if len(text) <= width else text[: max(width - len(dots), 0)] + dots[:width]
    width_of = _shown(spelled)
    used, cut = 0, None  # ``cut``: where the text stops if the ellipsis follows
    for n, ch in enumerate(text):
        used += width_of(ch)
        if cut is None and used > width - len(dots):
            cut = n
        if used > width:
            return text[:cut] + dots[:width]
    return text


def terminal_width() -> int | None:
    """The width to fit lines to: the terminal's (or ``$COLUMNS``); None for a pipe.
    ``COLUMNS=0`` (or ``²``, which ``isdigit`` takes) sets no width, as for ``shutil``."""
    columns = os.environ.get("COLUMNS", "")
    if (columns.isascii() and columns.isdigit() and int(columns) > 0) or sys.stdout.isatty():
        import shutil  # only when a table is laid out

        return shutil.get_terminal_size().columns
    return None
