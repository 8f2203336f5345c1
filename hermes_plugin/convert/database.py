"""Every session of one Hermes database as ASF sessions, one conversation at a time.

Conversations are planned from the ``sessions`` rows (:class:`Lineage`,
:class:`~hermes_plugin.convert.units.Planner`) and converted oldest first, unit by unit
(:func:`convert_unit`, wherever the host runs it); a conversation's sub-agent sessions are
converted (and yielded) before it, since its output entries name their leaves. Message rows
are read per unit, so memory holds one conversation at a time. A conversation that cannot be
converted costs only itself: its rows are kept as stored (:mod:`hermes_plugin.convert.kept`)
with a stray saying why. Rows whose session is not in the database go to one ``_orphans``
session (:func:`finish`). The last finding accounts for every row: rows in = rows in the
output.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
from attrs import define, field

from asf_core import ids
from asf_core.formats import ConvertedSession, Finding, StoreError
from asf_core.model import Header, ParentRef
from hermes_plugin.convert.kept import kept_session, orphans_session, session_rows
from hermes_plugin.convert.lineage import SUBSESSION, Lineage, group_uuid
from hermes_plugin.convert.personal import personal_values
from hermes_plugin.convert.plan import Clock, Plan
from hermes_plugin.convert.segments import GroupBuilder
from hermes_plugin.convert.session_entries import delegation_unit
from hermes_plugin.source.columns import cell_text
from hermes_plugin.source.native import stray_finding
from hermes_plugin.source.rows import Delegation, Session
from hermes_plugin.source.store import Store, message_stray

if TYPE_CHECKING:
    from hermes_plugin.convert.units import Planner, UnitJob

__all__ = ["ORPHANS", "convert_store", "convert_unit", "file_name", "finish"]

#: The file name of the session holding rows whose session is not in the database.
ORPHANS = "_orphans"

_Gen = Generator[ConvertedSession | Finding, None, str | None]
JSON = dict[str, Any]


def file_name(session_id: str) -> str:
    """A conversation's file name: its root session id, made safe for a file system (an
    altered or cut id gets a short hash so two ids never share a name)."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in session_id).lstrip(".")
    if safe != session_id or not safe or safe == ORPHANS or len(safe) > _NAME_MAX:
        safe = f"{safe[:80]}-{ids.content_hash({'id': session_id})[7:17]}"
    return safe


#: The longest session id that is its own file name.
_NAME_MAX = 200


@define(kw_only=True)
class _Frame:
    """One conversation being converted: built, waiting for its sub-agents' leaves, then
    finished. ``failure`` says why it could not be converted (then its rows are kept)."""

    root: str
    asf_id: str
    parent_asf: str | None
    spawned_by: str | None
    builder: GroupBuilder | None = None
    #: The sub-agent conversations still to convert first: (root, ASF id, spawning call).
    pending: Iterator[tuple[str, str, str | None]] = field(factory=lambda: iter(()))
    #: Each converted sub-agent's ASF id and leaf (None when it has none or was kept).
    leaves: dict[str, tuple[str, str | None]] = field(factory=dict)
    failure: str | None = None


def _failure(exc: Exception) -> str:
    """An unexpected error as one short line for the report."""
    text = " ".join(str(exc).split())
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return line if len(line) <= 200 else line[:197] + "..."


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
        #: Each session's place in the table, which orders its findings.
        self.position = {sid: n for n, sid in enumerate(self.lineage.sessions)}
        self.rows = 0
        #: The store's identity values (every session row's), for a redacting host.
        self.personal = personal

    def peer_id(self, sid: str) -> str:
        """The ASF id of the conversation holding a session."""
        if sid not in self.lineage.sessions:
            return self.peers[sid]
        root = self.lineage.group_root(sid)
        return self.asf_ids.get(root) or group_uuid(self.lineage.sessions[root].unit)

    def conversation(self, top: str) -> Iterator[ConvertedSession | Finding]:
        """Convert one top conversation and, first, every sub-agent conversation below it
        (a sub-agent's leaf is named by the parent's entries), without recursion: a chain of
        sub-agents of any depth is a stack of frames. A conversation that fails costs only
        itself (:meth:`_kept`); a damaged database (``StoreError``) stops the store."""
        stack = [self._start(top, group_uuid(self.lineage.sessions[top].unit), None, None)]
        while stack:
            frame = stack[-1]
            child = next(frame.pending, None)
            if child is not None:
                root, asf_id, call = child
                stack.append(self._start(root, asf_id, frame.asf_id, call))
                continue
            stack.pop()
            leaf = yield from self._finish(frame)
            if stack:
                stack[-1].leaves[frame.root] = (frame.asf_id, leaf)

    def _start(
        self, root: str, asf_id: str, parent_asf: str | None, spawned_by: str | None
    ) -> _Frame:
        """Build one conversation's plan; its sub-agents are converted next."""
        self.asf_ids[root] = asf_id
        frame = _Frame(root=root, asf_id=asf_id, parent_asf=parent_asf, spawned_by=spawned_by)
        builder = GroupBuilder(
            store=self.store,
            lineage=self.lineage,
            asf_id=asf_id,
            subsession_id=lambda call, attempt: ids.subsession_id(asf_id, call, attempt),
            fallback_id=lambda s: group_uuid(s.unit),
            peer_id=self.peer_id,
            delegations=self.delegations,
        )
        try:
            builder.build(root)
        except StoreError:
            raise
        except Exception as exc:  # a bug met on this conversation's data: keep its rows
            frame.failure = _failure(exc)
            kids = [
                kid
                for sid in self.lineage.segments(root)
                for kid in self.lineage.kids(sid, SUBSESSION)
            ]
            frame.pending = iter(
                [(kid, group_uuid(self.lineage.sessions[kid].unit), None) for kid in kids]
            )
            return frame
        frame.builder = builder
        frame.pending = iter([(c, link.asf_id, link.call_id) for c, link in builder.links.items()])
        return frame

    def _finish(self, frame: _Frame) -> _Gen:
        """Yield the conversation (or, if it fails, its kept rows); return its leaf."""
        if frame.builder is not None and frame.failure is None:
            try:
                session, leaf = self._realize(frame, frame.builder)
            except StoreError:
                raise
            except Exception as exc:
                frame.failure = _failure(exc)
            else:
                self.rows += frame.builder.rows
                yield session
                return leaf
        yield from self._kept(frame, frame.failure or "not converted")
        return None

    def _realize(self, frame: _Frame, builder: GroupBuilder) -> tuple[ConvertedSession, str | None]:
        """The conversation's ASF session, its entries' ids computed, and its live leaf."""
        root = frame.root
        for index, kids in builder.outputs.items():
            refs = [
                ParentRef(entry=leaf, session=asf)
                for asf, leaf in (frame.leaves[k] for k in kids if k in frame.leaves)
                if leaf is not None
            ]
            builder.plan.converge(index, refs)
        session = self.lineage.sessions[root]
        header = self._header(
            session, frame.asf_id, builder.plan, frame.parent_asf, frame.spawned_by
        )
        entries = builder.plan.realize(header)
        findings = [stray_finding(message_stray(m)) for m in builder.strays]
        findings.extend(self._session_problems(builder.session_ids))
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
        personal = self._personal(segments)
        converted = ConvertedSession(
            header=header,
            entries=entries,
            name=file_name(root),
            sources=tuple(builder.units),
            counts=counts,
            findings=findings,
            native_ids=tuple(segments),
            personal=personal,
        )
        leaf = None if builder.live_leaf is None else entries[builder.live_leaf].id
        return converted, leaf

    def _kept(self, frame: _Frame, why: str) -> Iterator[ConvertedSession | Finding]:
        """A conversation that could not be converted: one stray saying why, and a file of
        its rows, each kept as stored (:mod:`hermes_plugin.convert.kept`)."""
        sessions = [self.lineage.sessions[sid] for sid in self.lineage.segments(frame.root)]
        messages = {s.id: self.store.messages(s.id) for s in sessions}
        usage = {s.id: self.store.model_usage(s.id) for s in sessions}
        rows = session_rows(sessions, messages, usage, self.delegations, self.store.name, why)
        count = sum(map(len, messages.values()))
        self.rows += count
        root = sessions[0]
        yield Finding(
            kind="stray",
            message=f"conversation not converted ({why}); its rows are kept as stored",
            unit=root.unit,
            session=root.id,
            data={"row": "session", "malformed": False, "message_rows": count},
        )

        def header(first: str) -> Header:
            created = Clock().at(root.started_at) if root.started_at is not None else first
            return Header(
                id=frame.asf_id,
                created_at=created,
                harness={"name": "hermes-agent"},
                cwd=root.working_dir,
                parent_session=frame.parent_asf or self._parent_asf(frame.root),
                spawned_by=frame.spawned_by,
                unknown={"hermes": {**self._member(root), "kept": True}},
            )

        counts = {"session_rows": len(sessions), "message_rows": count, "aside_rows": count}
        counts["aside_unconverted"] = count
        segments = [s.id for s in sessions]
        kept = kept_session(header, file_name(frame.root), rows, counts)
        yield attrs.evolve(kept, native_ids=tuple(segments), personal=self._personal(segments))

    def _personal(self, segments: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The identity values a redacting host replaces in a conversation's file: every
        session row's, and the billing URLs of its segments' model usage rows."""
        usage = [row for sid in segments for row in self.store.model_usage(sid)]
        personal = personal_values((), usage)
        for kind, values in self.personal.items():
            personal[kind] = (*values, *personal.get(kind, ()))
        return personal

    def _parent_asf(self, root: str) -> str | None:
        """The ASF id of the conversation a group's first session hangs under, if any."""
        up = self.lineage.parent[root]
        return None if up is None else self.peer_id(up)

    def _member(self, session: Session) -> JSON:
        return {
            "database": self.store.name,
            "schema_version": self.store.version(),
            "session": session.unit,
        }

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
            cwd=session.working_dir,
            parent_session=parent_asf or self._parent_asf(session.id),
            spawned_by=spawned_by,
            unknown={"hermes": self._member(session)},
        )

    def _session_problems(self, sids: Iterable[str]) -> list[Finding]:
        """Warnings for the sessions of one conversation, in table order."""
        out = []
        for sid in sorted(sids, key=self.position.__getitem__):
            session = self.lineage.sessions[sid]
            if session.problems:
                out.append(_warning(session.unit, session.id, "; ".join(session.problems)))
            if session.id in self.lineage.cut:
                out.append(
                    _warning(
                        session.unit,
                        session.id,
                        "its parent link closes a cycle; converted as a root",
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
        yield from run.conversation(top)


def finish(
    store: Store, planner: Planner, counts: Mapping[str, int]
) -> Iterator[ConvertedSession | Finding]:
    """After every unit: loose delegations, the orphans' session, and the row accounting,
    whose converted rows are the units' ``message_rows`` (``counts``: converted now or
    carried over from the last run). The rows ``read`` reports as strays (unreadable session
    rows, orphan message rows) are not reported again: the host has them from ``read``."""
    for delegation in planner.loose_delegations:
        yield Finding(
            kind="dropped",
            message="async delegation whose dispatching session is not in the database",
            unit=delegation_unit(store.name, delegation),
            data={"parent_session_id": delegation.parent_session_id or ""},
        )
    orphans = store.orphans(set(planner.lineage.sessions))
    if orphans:
        asf_id = group_uuid(f"{store.name}:{ORPHANS}")
        yield orphans_session(asf_id, ORPHANS, store.name, orphans)
    # A row naming no session as text is in no group of row_counts.
    unkeyed = sum(
        1 for s in orphans if s.cols is None or cell_text(s.cols.get("session_id")) is None
    )
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
            "message_rows_orphaned": len(orphans),
        },
    )


def convert_store(
    store: Store, selected: Iterable[str] | None = None, *, whole: bool = True
) -> Iterator[ConvertedSession | Finding]:
    """Convert a store's conversations (all, or those holding a selected session id): what
    the host does with the plan, every unit here, in order.

    ``whole`` (the store converted whole) adds the rows of no session (the ``_orphans``
    session) and the whole database's row accounting; a selection gets the accounting of the
    conversations it converted alone, and no other session's row is read.
    """
    from hermes_plugin.convert.units import Planner

    planner = Planner(store, personal=True)
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
