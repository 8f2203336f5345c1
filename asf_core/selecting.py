"""Which native sessions a run works on: the user's :class:`~asf_core.formats.Selection`.

A plugin may apply a selection itself, skipping what it leaves out without reading it; the
host applies it again to whatever a plugin yields (:func:`filtered`), so a plugin that ignores
it still works. Picking sessions for ``convert`` and ``show`` (:func:`pick`) lists every store
first, which reads no conversation: an id prefix must then name exactly one session across
all stores, ``limit`` keeps the newest sessions of all stores, and each store is converted
with the exact ids it holds, or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import attrs
from attrs import frozen

from asf_core.errors import PluginError
from asf_core.findings import Finding
from asf_core.formats import NativeSession, Selection, StoreError, newest_first
from asf_core.pipeline import host
from asf_core.pipeline.host import Candidate
from asf_core.plugins import AsfPluginManager

__all__ = [
    "AMBIGUOUS_SESSION",
    "NO_SESSION",
    "STORE_DAMAGED",
    "STORE_PLUGIN",
    "Picked",
    "describe",
    "filtered",
    "parse_time",
    "pick",
    "selected",
]

#: Finding codes of :func:`pick`: nothing selected ...
NO_SESSION = "no-session"
#: ... an id prefix naming several sessions ...
AMBIGUOUS_SESSION = "ambiguous-session"
#: ... a store that could not be listed (damaged, or its plugin failed).
STORE_DAMAGED = "damaged"
STORE_PLUGIN = "plugin"

_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)\s*$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_time(text: str, *, end: bool = False, now: datetime | None = None) -> datetime:
    """A moment as people write it: ``7d``, ``12h``, ``30m``, ``2w`` ago; a date
    (``2026-09-17``: its start, or with ``end`` the start of the next day, so a date given as
    an end includes that day); a date and time (``2026-09-17T08:30``, ``2026-09-17 08:30Z``).
    Times without an offset are local. Raises ValueError with what is wrong."""
    now = now or datetime.now().astimezone()
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
        moment = moment.astimezone()  # local time, as the user reads their clock
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


@frozen(kw_only=True)
class Picked:
    """One store's share of a selection: its sessions (listing data) and the exact ids."""

    candidate: Candidate
    sessions: tuple[NativeSession, ...]

    @property
    def selection(self) -> Selection:
        return Selection(ids=tuple(s.id for s in self.sessions), exact=True)


def _listed(
    pm: AsfPluginManager, candidate: Candidate, selection: Selection
) -> list[NativeSession]:
    with host.opened(pm, candidate) as store:
        items = host.read(pm, candidate.plugin, store, attrs.evolve(selection, limit=None))
        narrowed = filtered(items, attrs.evolve(selection, limit=None))
        return [attrs.evolve(s, native=None) for s in narrowed if isinstance(s, NativeSession)]


def pick(
    pm: AsfPluginManager,
    stores: Sequence[Candidate],
    selection: Selection,
    *,
    unique: bool,
) -> tuple[list[Picked], list[Finding]]:
    """The sessions of ``stores`` that ``selection`` picks, store by store, and what went
    wrong: a store that could not be listed, an id prefix naming no session, or (``unique``)
    several. Stores without a picked session are left out."""
    problems: list[Finding] = []
    found: list[tuple[Candidate, NativeSession]] = []
    for candidate in stores:
        try:
            found += [(candidate, s) for s in _listed(pm, candidate, selection)]
        except StoreError as exc:
            message = f"{candidate.claim.path}: {host.store_problem(exc)}"
            problems.append(Finding(kind="error", code=STORE_DAMAGED, message=message))
        except PluginError as exc:
            message = f"{candidate.claim.path}: {exc}"
            problems.append(Finding(kind="error", code=STORE_PLUGIN, message=message))
    found = _resolve_ids(found, selection, unique, problems)
    if selection.limit is not None:
        order = sorted(range(len(found)), key=lambda n: newest_first(found[n][1]))
        keep = set(order[: selection.limit])
        found = [pair for n, pair in enumerate(found) if n in keep]
    if not found and not problems:
        where = "the store" if len(stores) == 1 else f"the {len(stores)} stores"
        problems.append(
            Finding(
                kind="error",
                code=NO_SESSION,
                message=f"no session of {where} matches {describe(selection)}",
            )
        )
    picked: dict[int, list[NativeSession]] = {}
    for candidate, session in found:
        picked.setdefault(stores.index(candidate), []).append(session)
    return [Picked(candidate=stores[n], sessions=tuple(s)) for n, s in sorted(picked.items())], (
        problems
    )


def _resolve_ids(
    found: list[tuple[Candidate, NativeSession]],
    selection: Selection,
    unique: bool,
    problems: list[Finding],
) -> list[tuple[Candidate, NativeSession]]:
    """Each ``--session`` resolved: a whole id wins over prefixes; with ``unique`` a prefix
    must name one session. An id naming nothing, or several, is a problem."""
    if not selection.ids or selection.exact:
        return found
    keep: set[int] = set()
    for wanted in selection.ids:
        hits = [n for n, (_, s) in enumerate(found) if s.id.startswith(wanted)]
        whole = [n for n in hits if found[n][1].id == wanted]
        if whole:
            hits = whole
        if not hits:
            problems.append(
                Finding(
                    kind="error",
                    code=NO_SESSION,
                    message=f"no session id starts with {wanted!r}"
                    + (
                        "" if selection == Selection(ids=selection.ids) else " among those selected"
                    ),
                )
            )
        elif unique and len({found[n][1].id for n in hits}) > 1:
            names = sorted({found[n][1].id for n in hits})
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            problems.append(
                Finding(
                    kind="error",
                    code=AMBIGUOUS_SESSION,
                    message=f"{wanted!r} names {len(names)} sessions ({shown}); "
                    "give more of the id",
                )
            )
        else:
            keep.update(hits)
    return [pair for n, pair in enumerate(found) if n in keep]
