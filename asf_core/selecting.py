"""Which native sessions a run works on: the user's :class:`~asf_core.formats.Selection`.

A plugin may apply a selection itself, skipping what it leaves out without reading it
(:func:`selected`); the host applies it again to whatever a plugin yields (:func:`filtered`),
so a plugin that ignores it still works. Picking sessions across stores for ``convert`` and
``show`` is the host's: :mod:`asf_core.pipeline.picking`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from asf_core.findings import Finding
from asf_core.formats import NativeSession, Selection, newest_first

__all__ = ["describe", "filtered", "parse_time", "selected"]

_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)\s*$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_time(text: str, *, end: bool = False, now: datetime | None = None) -> datetime:
    """A moment as people write it: ``7d``, ``12h``, ``30m``, ``2w`` ago; a date
    (``2026-09-17``: its start, or with ``end`` the start of the next day, so a date given as
    an end includes that day); a date and time (``2026-09-17T08:30``, ``2026-09-17 08:30Z``).
    Times without an offset are local. Raises ValueError with what is wrong."""
    now = now or datetime.now().astimezone()
    try:
        return _moment(text, end=end, now=now)
    except OverflowError:  # an age or a date the calendar (years 1 to 9999) does not hold
        raise ValueError(f"{text!r} is beyond the calendar (years 1 to 9999)") from None


def _moment(text: str, *, end: bool, now: datetime) -> datetime:
    relative = _RELATIVE.match(text)
    if relative:
        unit = _UNITS[relative.group(2).lower()]
        return now - timedelta(**{unit: float(relative.group(1))})
    spelled = text.strip()
    try:
        moment = datetime.fromisoformat(spelled)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a time: use a date (2026-09-17), a date and time "
            "(2026-09-17T08:30) or an age (30m, 12h, 7d, 2w)"
        ) from None
    if moment.tzinfo is None:
        try:
            moment = moment.astimezone()  # local time, as the user reads their clock
        except ValueError:  # "year 0 is out of range": a local 0001-01-01 before UTC's
            raise OverflowError(spelled) from None
    if end and _DATE.match(spelled):
        moment += timedelta(days=1)
    return moment


def describe(selection: Selection) -> str:
    """The selection in the words of the command's options, for messages."""
    bits = [f"--session {i}" for i in selection.ids]
    named: dict[str, Any] = {
        "since": selection.since.isoformat() if selection.since else None,
        "until": selection.until.isoformat() if selection.until else None,
        "title": selection.title,
        "cwd": selection.cwd,
        "model": selection.model,
        "min-rows": selection.min_rows,
        "limit": selection.limit,
    }
    bits += [f"--source {s}" for s in selection.sources]
    bits += [f"--{k} {v}" for k, v in named.items() if v is not None]
    return " ".join(bits) or "everything"


def selected(sessions: Iterable[NativeSession], selection: Selection) -> list[NativeSession]:
    """The sessions that pass ``selection``, ``limit`` applied (the newest kept), in the
    order given."""
    passing = [s for s in sessions if selection.matches(s)]
    if selection.limit is None or len(passing) <= selection.limit:
        return passing
    keep = {id(s) for s in sorted(passing, key=newest_first)[: selection.limit]}
    return [s for s in passing if id(s) in keep]


def filtered(
    items: Iterable[NativeSession | Finding], selection: Selection
) -> Iterator[NativeSession | Finding]:
    """What ``read`` yielded, narrowed to ``selection`` whatever the plugin did with it.

    Everything passes when nothing is narrowed. Otherwise the selected sessions pass (with
    their own findings) and the store's other findings do not: they are about what was not
    selected. With ``limit`` the sessions are held until the store is read, the newest kept.
    """
    if selection.everything():
        yield from items
        return
    if selection.limit is None:
        for item in items:
            if isinstance(item, NativeSession) and selection.matches(item):
                yield item
        return
    yield from selected((i for i in items if isinstance(i, NativeSession)), selection)
