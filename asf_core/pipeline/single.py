"""One session picked from native stores and converted in memory: ``asf show STORE --session
ID`` and ``asf convert --session ID -o -``.

The selection must name exactly one native session across the stores found. Its store is
converted with that selection alone (the plugin converts the conversation holding it, with
its sub-agents), nothing is written, and the ASF session holding the picked one is returned
whole, with the others converted beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
from attrs import frozen

from asf_core.errors import PluginError
from asf_core.findings import Finding
from asf_core.formats import ConvertedSession, NativeSession, Selection, StoreError
from asf_core.pipeline import host
from asf_core.pipeline.host import Candidate
from asf_core.pipeline.picking import (
    AMBIGUOUS_SESSION,
    NO_SESSION,
    STORE_DAMAGED,
    STORE_PLUGIN,
    Picked,
    pick,
)
from asf_core.pipeline.stores import find_stores
from asf_core.plugins import AsfPluginManager
from asf_core.redaction import SessionRedaction
from asf_core.selecting import filtered

__all__ = ["NOTHING_CONVERTED", "SEVERAL", "Single", "convert_one"]

#: Finding code: the selection picks more than one session.
SEVERAL = "several-sessions"
#: Finding code: the plugin converted nothing for the picked session and said why (Claude
#: Code: an empty session file), as a whole run reports it.
NOTHING_CONVERTED = "nothing-converted"


class _NothingConverted(Exception):
    """The picked session converts to nothing, for the reason the plugin gave."""


@frozen(kw_only=True)
class Single:
    """The picked session as ASF (entries in a tuple), and where it came from."""

    session: ConvertedSession
    native: NativeSession
    store: Candidate
    #: The other ASF sessions converted with it (its sub-agents), entries in tuples.
    others: tuple[ConvertedSession, ...] = ()
    #: The findings the plugin reported on the way (strays, dropped, warnings).
    findings: tuple[Finding, ...] = ()


def _problem(code: str, message: str) -> Finding:
    return Finding(kind="error", code=code, message=message)


def _several(natives: list[tuple[Picked, NativeSession]]) -> str:
    """Why several picked sessions cannot be shown, and what picks one: more of an id, or,
    for one id in several stores (a copy of a home beside it), the store to read."""
    ids = sorted(s.id for _, s in natives)
    if len(set(ids)) == 1:
        stores = sorted({str(p.candidate.claim.path) for p, _ in natives})
        where = f"{len(stores)} stores ({', '.join(stores)})"
        return f"session {ids[0]} is in {where}; name the one to read as PATH"
    shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
    advice = "pick one with --session ID (asf list shows them)"
    return f"{len(ids)} sessions are selected ({shown}); {advice}"


def convert_one(
    pm: AsfPluginManager,
    paths: Sequence[Path],
    *,
    format: str | None = None,
    selection: Selection | None = None,
    redaction: SessionRedaction | None = None,
) -> tuple[Single | None, list[Finding]]:
    """The one native session ``selection`` picks under ``paths``, converted in memory (and
    redacted), or None and what is wrong: nothing found, nothing or several picked, a damaged
    store, a failing plugin."""
    found = find_stores(pm, paths, format)
    problems = list(found.problems)
    if not found.stores:
        return None, problems
    picked, trouble = pick(pm, found.stores, selection or Selection(), unique=True)
    problems += trouble
    if any(p.code in (NO_SESSION, AMBIGUOUS_SESSION) for p in trouble) or not picked:
        return None, problems
    natives = [(p, s) for p in picked for s in p.sessions]
    if len(natives) > 1:
        problems.append(_problem(SEVERAL, _several(natives)))
        return None, problems
    chosen, native = natives[0]
    try:
        single = _convert(pm, chosen.candidate, native, chosen.selection, redaction)
    except StoreError as exc:
        problems.append(
            _problem(STORE_DAMAGED, f"{chosen.candidate.claim.path}: {host.store_problem(exc)}")
        )
        return None, problems
    except PluginError as exc:
        problems.append(_problem(STORE_PLUGIN, f"{chosen.candidate.claim.path}: {exc}"))
        return None, problems
    except _NothingConverted as exc:
        where = f"{chosen.candidate.claim.path}: {native.id}"
        problems.append(_problem(NOTHING_CONVERTED, f"{where}: {exc}"))
        return None, problems
    return single, problems


def _convert(
    pm: AsfPluginManager,
    candidate: Candidate,
    native: NativeSession,
    selection: Selection,
    redaction: SessionRedaction | None,
) -> Single:
    plugin = candidate.plugin
    sessions: list[ConvertedSession] = []
    findings: list[Finding] = []
    with host.opened(pm, candidate) as store:
        read = filtered(host.read(pm, plugin, store, selection, previews=False), selection)

        def natives() -> list[NativeSession]:
            out: list[NativeSession] = []
            for item in read:
                if isinstance(item, NativeSession):
                    findings.extend(item.findings)
                    out.append(item)
                else:
                    findings.append(item)
            return out

        for item in host.convert(pm, plugin, store, natives(), selection):
            if isinstance(item, Finding):
                findings.append(item)
                continue
            if redaction is not None:
                item = redaction.session(item)
            sessions.append(attrs.evolve(item, entries=tuple(item.entries)))
    if redaction is not None:
        findings = redaction.findings(findings)
    mine = next((s for s in sessions if native.id in s.native_ids), None)
    mine = mine or next((s for s in sessions if s.name == native.id), None)
    if mine is None:
        why = [f.message for f in findings if f.session == native.id]
        if not sessions and why:  # the plugin said why, as a whole run's report has it
            raise _NothingConverted(why[0])
        if not sessions:
            raise PluginError(plugin, "convert", f"converted nothing for session {native.id!r}")
        mine = sessions[-1]
    return Single(
        session=mine,
        native=native,
        store=candidate,
        others=tuple(s for s in sessions if s is not mine),
        findings=tuple(findings),
    )
