"""Every session of one Hermes database as ASF sessions, one conversation at a time.

Conversations are planned from the ``sessions`` rows (:class:`Lineage`,
:class:`~hermes_plugin.convert.units.Planner`) and converted oldest first, unit by unit
(:func:`convert_unit`, wherever the host runs it); a conversation's sub-agent sessions are
converted (and yielded) before it, since its output entries name their leaves. Message rows
are read per unit, so memory holds one conversation at a time. Rows whose session is not in
the database go to one ``_orphans`` session (:func:`finish`). The last finding accounts for
every row: rows in = rows in the output.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from asf_core import ids
from asf_core.formats import ConvertedSession, Finding
from asf_core.model import Custom, Entry, Header, ParentRef
from hermes_plugin.convert.lineage import Lineage, group_uuid
from hermes_plugin.convert.personal import personal_values
from hermes_plugin.convert.plan import Clock, Plan
from hermes_plugin.convert.segments import GroupBuilder
from hermes_plugin.schema import EPOCH_MAX
from hermes_plugin.source.native import stray_finding
from hermes_plugin.source.rows import Delegation, Session
from hermes_plugin.source.store import Store, message_stray

if TYPE_CHECKING:
    from hermes_plugin.convert.units import Planner, UnitJob

__all__ = ["ORPHANS", "convert_store", "convert_unit", "file_name", "finish"]

#: The file name of the session holding rows whose session is not in the database.
ORPHANS = "_orphans"

_Gen = Generator[ConvertedSession | Finding, None, str | None]


def file_name(session_id: str) -> str:
    """A conversation's file name: its root session id, made safe for a file system (an
    altered id gets a short hash so two ids never share a name)."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in session_id).lstrip(".")
    if safe != session_id or not safe or safe == ORPHANS:
        safe = f"{safe[:80]}-{ids.content_hash({'id': session_id})[7:17]}"
    return safe[:200]


class _Run:
    """One unit's conversion: its part of the lineage and the ids given so far."""

    def __init__(
        self,
        store: Store,
        lineage: Lineage,
        delegations: Mapping[str, Iterable[Delegation]],
        peers: Mapping[str, str],
        personal: Mapping[str, tuple[str, ...]],
    ) -> None:
        self.store = store
        self.lineage = lineage
        #: Group root -> ASF id, for forks and resets that name their parent's session.
        self.asf_ids: dict[str, str] = {}
        self.delegations = {k: list(v) for k, v in delegations.items()}
        #: The ASF ids of sessions outside the unit its conversion names.
        self.peers = peers
        self.rows = 0
        #: The store's identity values (every session row's), for a redacting host.
        self.personal = personal

    def peer_id(self, sid: str) -> str:
        """The ASF id of the conversation holding a session."""
        if sid not in self.lineage.sessions:
            return self.peers[sid]
        root = self.lineage.group_root(sid)
        return self.asf_ids.get(root) or group_uuid(self.lineage.sessions[root].unit)

    def group(
        self, root: str, asf_id: str, *, parent_asf: str | None, spawned_by: str | None
    ) -> _Gen:
        """Convert one conversation (its sub-agents first); return its leaf entry id."""
        self.asf_ids[root] = asf_id
        builder = GroupBuilder(
            store=self.store,
            lineage=self.lineage,
            asf_id=asf_id,
            subsession_id=lambda call, attempt: ids.subsession_id(asf_id, call, attempt),
            fallback_id=lambda s: group_uuid(s.unit),
            peer_id=self.peer_id,
            delegations=self.delegations,
        )
        builder.build(root)
        leaves: dict[str, tuple[str, str | None]] = {}
        for child, link in builder.links.items():
            leaf = yield from self.group(
                child, link.asf_id, parent_asf=asf_id, spawned_by=link.call_id
            )
            leaves[child] = (link.asf_id, leaf)
        for index, kids in builder.outputs.items():
            refs = [
                ParentRef(entry=leaf, session=asf)
                for asf, leaf in (leaves[k] for k in kids)
                if leaf is not None
            ]
            builder.plan.converge(index, refs)
        session = self.lineage.sessions[root]
        if parent_asf is None and self.lineage.parent[root] is not None:
            parent_asf = self.peer_id(self.lineage.parent[root] or "")
        header = self._header(session, asf_id, builder.plan, parent_asf, spawned_by)
        entries = builder.plan.realize(header)
        self.rows += builder.rows
        findings = [stray_finding(message_stray(m)) for m in builder.strays]
        findings.extend(_session_problems(self.lineage, builder.units))
        findings.extend(
            _warning(m.unit, m.session_id, "; ".join(m.problems)) for m in builder.damaged
        )
        counts = {
            "session_rows": len(builder.units),
            "message_rows": builder.rows,
            "aside_rows": sum(builder.aside.values()),
            "damaged_rows": len(builder.damaged),
            "entries": len(entries),
        }
        for why, n in builder.aside.items():
            counts[f"aside_{why}"] = n
        segments = self.lineage.segments(root)
        usage = [row for sid in segments for row in self.store.model_usage(sid)]
        personal = personal_values((), usage)
        for kind, values in self.personal.items():
            personal[kind] = (*values, *personal.get(kind, ()))
        yield ConvertedSession(
            header=header,
            entries=entries,
            name=file_name(root),
            sources=tuple(builder.units),
            counts=counts,
            findings=findings,
            native_ids=tuple(segments),
            personal=personal,
        )
        if builder.live_leaf is None:
            return None
        return entries[builder.live_leaf].id

    def _header(
        self,
        session: Session,
        asf_id: str,
        plan: Plan,
        parent_asf: str | None,
        spawned_by: str | None,
    ) -> Header:
        created = Clock().at(session.started_at)
        if session.started_at is None and plan.entries:
            created = plan.entries[0].ts
        return Header(
            id=asf_id,
            created_at=created,
            harness={"name": "hermes-agent"},
            cwd=session.cwd or None,
            parent_session=parent_asf,
            spawned_by=spawned_by,
            unknown={
                "hermes": {
                    "database": self.store.name,
                    "schema_version": self.store.version(),
                    "session": session.unit,
                }
            },
        )


def _orphans(store: Store, known: set[str]) -> Iterator[ConvertedSession | Finding]:
    """Rows whose session is not in the database: stray findings and one session."""
    strays = store.orphans(known)
    if not strays:
        return
    plan, clock = Plan(), Clock()
    cursor: int | None = None
    for stray in strays:
        yield stray_finding(stray)
        cols, encoded = stray.cols.to_exact_json() if stray.cols is not None else ({}, {})
        stamp = cols.get("timestamp")
        good = isinstance(stamp, float | int) and 0 <= stamp <= EPOCH_MAX
        ts = clock.at(float(stamp) if good and isinstance(stamp, float | int) else None)
        data = {"kind": "message", "reason": "orphan", "detail": stray.why}
        kept = {k: v for k, v in cols.items() if v is not None}
        member = {"row": stray.unit, "columns": kept}
        if encoded:
            member["encoded"] = encoded
        entry = Custom(ts=ts, ns="hermes", data=data, unknown={"hermes": member})
        cursor = plan.add(entry, cursor)
    asf_id = group_uuid(f"{store.name}:{ORPHANS}")
    header = Header(
        id=asf_id,
        created_at=plan.entries[0].ts,
        harness={"name": "hermes-agent"},
        unknown={"hermes": {"database": store.name, "orphans": True}},
    )
    entries: list[Entry] = plan.realize(header)
    yield ConvertedSession(
        header=header,
        entries=entries,
        name=ORPHANS,
        sources=tuple(s.unit for s in strays),
        counts={"orphan_rows": len(strays), "entries": len(entries)},
    )


def _session_problems(lineage: Lineage, units: list[str]) -> list[Finding]:
    out = []
    for session in lineage.sessions.values():
        if session.unit in units and session.problems:
            out.append(_warning(session.unit, session.id, "; ".join(session.problems)))
        if session.unit in units and session.id in lineage.cut:
            out.append(
                _warning(
                    session.unit, session.id, "its parent link closes a cycle; converted as a root"
                )
            )
    return out


def _warning(unit: str, session: str, message: str) -> Finding:
    """A row converted in spite of a problem: the warning names the row and its session."""
    return Finding(kind="warning", message=message, unit=unit, session=session)


def convert_unit(store: Store, job: UnitJob) -> Iterator[ConvertedSession | Finding]:
    """Convert one unit's conversations, in order, from its rows."""
    run = _Run(store, job.lineage, job.delegations, job.peers, job.personal)
    for top in job.tops:
        session = run.lineage.sessions[top]
        yield from run.group(top, group_uuid(session.unit), parent_asf=None, spawned_by=None)


def finish(
    store: Store, planner: Planner, counts: Mapping[str, int]
) -> Iterator[ConvertedSession | Finding]:
    """After every unit: loose delegations, the orphans' session, and the row accounting,
    whose converted rows are the units' ``message_rows`` (``counts``: converted now or
    carried over from the last run)."""
    for delegation in planner.loose_delegations:
        yield Finding(
            kind="dropped",
            message="async delegation whose dispatching session is not in the database",
            unit=f"{store.name}:async_delegations/{delegation.id}",
            data={"parent_session_id": delegation.parent_session_id or ""},
        )
    orphan_rows = unkeyed = 0
    for item in _orphans(store, set(planner.lineage.sessions)):
        if isinstance(item, ConvertedSession):
            orphan_rows = int(item.counts.get("orphan_rows", 0))
        elif item.kind == "stray" and not item.session:
            unkeyed += 1  # a row naming no session as text: not in row_counts' groups
        yield item
    in_db = sum(c.active + c.inactive for c in store.row_counts().values()) + unkeyed
    yield Finding(
        kind="info",
        message="row accounting: every message row is in the output or reported",
        data={
            "schema_version": store.version(),
            "session_rows_read": len(planner.lineage.sessions) + len(planner.session_strays),
            "session_rows_unreadable": len(planner.session_strays),
            "message_rows_in_database": in_db,
            "message_rows_converted": int(counts.get("message_rows", 0)),
            "message_rows_orphaned": orphan_rows,
        },
    )


def convert_store(
    store: Store, selected: Iterable[str] | None = None, *, whole: bool = True
) -> Iterator[ConvertedSession | Finding]:
    """Convert a store's conversations (all, or those holding a selected session id): what
    the host does with the plan, every unit here, in order.

    ``whole`` (the store converted whole) adds the rows of no session, the unreadable
    session rows and the whole database's row accounting; a selection gets the accounting
    of the conversations it converted alone, and no other session's row is read.
    """
    from hermes_plugin.convert.units import Planner

    planner = Planner(store, personal=True)
    if whole:
        for stray in planner.session_strays:
            yield stray_finding(stray)
    rows = 0
    converted: list[str] = []
    for unit in planner.units(selected):
        for item in planner.prepare(unit)():
            if isinstance(item, ConvertedSession):
                rows += int(item.counts.get("message_rows", 0))
                converted += item.native_ids
            yield item
    if whole:
        yield from finish(store, planner, {"message_rows": rows})
        return
    counts = store.row_counts(converted)
    yield Finding(
        kind="info",
        message="row accounting: every message row of the selected conversations is in "
        "the output or reported",
        data={
            "schema_version": store.version(),
            "selected": True,
            "session_rows_read": len(converted),
            "message_rows_in_database": sum(c.active + c.inactive for c in counts.values()),
            "message_rows_converted": rows,
        },
    )
