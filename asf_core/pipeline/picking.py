"""Picking sessions across stores for ``convert`` and ``show`` (:func:`pick`).

Every store is listed first, which reads no conversation: an id prefix must then name exactly
one session across all stores, ``limit`` keeps the newest sessions of all stores, and each
store is converted with the exact ids it holds, or not at all. The selection rules themselves
are :mod:`asf_core.selecting`.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from attrs import frozen

from asf_core.errors import PluginError
from asf_core.findings import Finding
from asf_core.formats import NativeSession, Selection, StoreError, newest_first
from asf_core.pipeline import host
from asf_core.pipeline.host import Candidate
from asf_core.plugins import AsfPluginManager
from asf_core.selecting import describe, filtered

__all__ = [
    "AMBIGUOUS_SESSION",
    "NO_SESSION",
    "STORE_DAMAGED",
    "STORE_PLUGIN",
    "Picked",
    "pick",
]

#: Finding codes of :func:`pick`: nothing selected ...
NO_SESSION = "no-session"
#: ... an id prefix naming several sessions ...
AMBIGUOUS_SESSION = "ambiguous-session"
#: ... a store that could not be listed (damaged, or its plugin failed).
STORE_DAMAGED = "damaged"
STORE_PLUGIN = "plugin"


@frozen(kw_only=True)
class Picked:
    """One store's share of a selection: its sessions (listing data) and the exact ids."""

    candidate: Candidate
    sessions: tuple[NativeSession, ...]

    @property
    def selection(self) -> Selection:
        return Selection(ids=tuple(s.id for s in self.sessions), exact=True)


def _listed(
    pm: AsfPluginManager, candidate: Candidate, selection: Selection, *, counting: bool
) -> list[NativeSession]:
    unlimited = attrs.evolve(selection, limit=None)
    with host.opened(pm, candidate) as store:
        items = host.read(pm, candidate.plugin, store, unlimited, previews=False, counting=counting)
        narrowed = filtered(items, unlimited)
        return [attrs.evolve(s, native=None) for s in narrowed if isinstance(s, NativeSession)]


def pick(
    pm: AsfPluginManager,
    stores: Sequence[Candidate],
    selection: Selection,
    *,
    unique: bool,
    counting: bool = False,
) -> tuple[list[Picked], list[Finding]]:
    """The sessions of ``stores`` that ``selection`` picks, store by store, and what went
    wrong: a store that could not be listed, an id prefix naming no session, or (``unique``)
    several. Stores without a picked session are left out. ``counting``: only how many
    sessions each store's pick holds is used (its plugin may list them by id alone)."""
    problems: list[Finding] = []
    found: list[tuple[Candidate, NativeSession]] = []
    for candidate in stores:
        try:
            listed = _listed(pm, candidate, selection, counting=counting)
            found += [(candidate, s) for s in listed]
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
