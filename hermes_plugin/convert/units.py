"""A Hermes database's conversion as independent units: planned here, converted anywhere.

A unit is one top conversation (a root session, its continuations and its sub-agents'
conversations), or several when one names a sub-agent of another (its ASF id is known only
once the other is converted, so they convert together, in order). :class:`Planner` reads
the ``sessions`` rows (the lineage) and a few aggregates, never the message rows, and gives
each unit a fingerprint; only for a unit the host must convert does
:meth:`Planner.prepare` make a :class:`UnitJob`, which reads the unit's rows and converts them
in any process (:mod:`hermes_plugin.source.rowsource` reads them in a worker,
:mod:`hermes_plugin.convert.database` converts).
"""

from __future__ import annotations

import functools
import hashlib
import os
import weakref
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from functools import cache

from attrs import field, frozen

from asf_core.formats import ConvertedSession, Finding, NeedsHost, Unit
from hermes_plugin.convert.lineage import SUBSESSION, Lineage, group_uuid
from hermes_plugin.convert.personal import personal_values
from hermes_plugin.source import rowsource
from hermes_plugin.source.columns import Columns, index_of
from hermes_plugin.source.database import SqliteStore
from hermes_plugin.source.handle import HermesHandle
from hermes_plugin.source.relations import Relation
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Delegation, Message, Session
from hermes_plugin.source.rowsource import RowSource
from hermes_plugin.source.store import RowCounts, Store, Stray
from hermes_plugin.version import converter_version

__all__ = ["Planned", "Planner", "UnitJob", "UnitStore", "converter_version", "plan_units"]


@frozen(kw_only=True)
class Planned:
    """One unit: its top conversations in conversion order, and every session they hold."""

    key: str
    tops: tuple[str, ...]
    sessions: tuple[str, ...]


class Planner:
    """The plan of one store's conversion, from its ``sessions`` rows."""

    def __init__(self, store: Store, *, personal: bool = False) -> None:
        self.store = store
        sessions, self.session_strays = store.sessions()
        self.lineage = Lineage.of(sessions)
        #: The store's identity values (every session row's), given to each unit's sessions
        #: for a redacting host (only ``convert`` redacts: units planned for the host's
        #: workers carry none).
        self.personal = personal_values(sessions) if personal else {}
        self.delegations: dict[str, list[Delegation]] = {}
        self.loose_delegations: list[Delegation] = []
        for delegation in store.delegations():
            parent = delegation.parent_session_id
            if parent and parent in self.lineage.sessions:
                self.delegations.setdefault(parent, []).append(delegation)
            else:
                self.loose_delegations.append(delegation)
        self._prompts: dict[str, str | None] = {}
        #: What :meth:`read_marks` read: the message rows' marks (None: not read), the
        #: usage rows by session, and how a worker reads the rows.
        self._marks: dict[str, tuple[object, ...]] | None = None
        self._usage: dict[str, list[Columns]] = {}
        self._source: RowSource | None = None

    # -- units ------------------------------------------------------------------------------

    def _groups(self, root: str) -> list[str]:
        """The sessions of a top conversation: its segments and, recursively, its
        sub-agents' conversations."""
        out: list[str] = []
        stack = [root]
        while stack:
            for sid in self.lineage.segments(stack.pop()):
                out.append(sid)
                stack.extend(reversed(self.lineage.kids(sid, SUBSESSION)))
        return out

    def _referenced(self, sessions: Iterable[str], roots: Collection[str]) -> set[str]:
        """Sessions whose ASF id the conversion of ``sessions`` names: a fork's parent, a
        reset's successor, the parent of a conversation's first session."""
        lineage = self.lineage
        out: set[str] = set()
        for sid in sessions:
            up = lineage.parent[sid]
            if up is not None and (sid in roots or lineage.relation[sid] is Relation.BRANCH):
                out.add(up)
            out.update(lineage.kids(sid, frozenset({Relation.RESET})))
        return out

    def _named_subagents(self, top: str, sids: Sequence[str]) -> set[str]:
        """The sub-agent conversations (by first session) whose ASF ids the conversion of a
        top conversation's sessions names: each derives from the call that spawned it."""
        lineage = self.lineage
        roots = {top} | {s for s in sids if lineage.is_subsession(s)}
        named = {lineage.group_root(sid) for sid in self._referenced(sids, roots)}
        return {root for root in named if lineage.is_subsession(root)}

    def units(self, selected: Iterable[str] | None = None) -> list[Planned]:
        """The units to convert, in conversion order: every top conversation (or those
        holding a selected session, with the ones that spawned a sub-agent they name),
        joined with any whose sub-agent one of them names."""
        lineage = self.lineage
        tops = lineage.tops(selected)
        held = {top: self._groups(top) for top in tops}
        named = {top: self._named_subagents(top, held[top]) for top in tops}
        while missing := {lineage.top(r) for n in named.values() for r in n} - held.keys():
            for top in missing:
                held[top] = self._groups(top)
                named[top] = self._named_subagents(top, held[top])
        if len(held) > len(tops):
            tops = lineage.tops(held)
        owner = {sid: top for top, sids in held.items() for sid in sids}
        joined = {top: top for top in tops}

        def find(top: str) -> str:
            while joined[top] != top:
                joined[top] = joined[joined[top]]
                top = joined[top]
            return top

        for top, roots in named.items():
            for root in roots:
                other = owner.get(root)
                if other is not None and other != top:
                    a, b = find(top), find(other)
                    if a != b:
                        joined[max(a, b, key=tops.index)] = min(a, b, key=tops.index)
        members: dict[str, list[str]] = {}
        for top in tops:
            members.setdefault(find(top), []).append(top)
        order = {sid: n for n, sid in enumerate(lineage.sessions)}
        out = []
        for first, group in members.items():
            sids = sorted({s for t in group for s in held[t]}, key=order.__getitem__)
            out.append(Planned(key=first, tops=tuple(group), sessions=tuple(sids)))
        return out

    # -- fingerprints -----------------------------------------------------------------------

    def _prompt(self, prompt_hash: str) -> str | None:
        """``system_prompts``' prompt of a hash, read once (what the conversion resolves the
        session's prompt from, :func:`~hermes_plugin.source.store.session_prompt`)."""
        if prompt_hash not in self._prompts:
            self._prompts[prompt_hash] = self.store.system_prompt(prompt_hash)
        return self._prompts[prompt_hash]

    def read_marks(self) -> None:
        """Read, once and before any unit, what a SQLite store's fingerprints and jobs need:
        the message rows' marks, the usage rows by session, and how a worker reads the rows."""
        store = self.store
        if isinstance(store, SqliteStore) and self._marks is None:
            self._marks = store.message_marks()
            self._usage = store.usage_by_session()
            self._source = store.row_source()

    def fingerprint(self, unit: Planned) -> str:
        """A unit's fingerprint (a SQLite store only, once :meth:`read_marks` has read it;
        others are always converted: ""): the converter's version, the database's name and
        schema, the columns of ``messages`` (a column added, as Hermes' reconciler adds one,
        gives every row a cell, while ``schema_version`` may stay behind), the unit's session
        rows and their relations, the ids it names outside itself, and per session the message
        rows' marks, usage rows and delegations. Taken as the host reaches the unit, so the
        first units go to the workers without waiting for the last ones' fingerprints."""
        store = self.store
        marks = self._marks
        if not isinstance(store, SqliteStore) or marks is None:
            return ""
        usage = self._usage
        lineage = self.lineage
        inside = set(unit.sessions)
        parts: list[object] = [converter_version(), store.name, store.version()]
        parts += [store.columns("messages"), unit.tops]
        for sid in unit.sessions:
            session = lineage.sessions[sid]
            kids = lineage.children.get(sid, ())
            parts += (
                session.cols.names(),
                session.cols.values(),
                str(lineage.relation[sid]),
                lineage.parent[sid],
                sid in lineage.cut,
                tuple((k, str(lineage.relation[k])) for k in kids),
                self._prompt(session.system_prompt_hash or ""),
                marks.get(repr(sid)),
                tuple(c.values() for c in usage.get(repr(sid), ())),
                tuple(d.cols.values() for d in self.delegations.get(sid, ())),
            )
        parts.append(sorted(self.peers(unit, inside).items()))
        return hashlib.sha256(repr(parts).encode()).hexdigest()

    def peers(self, unit: Planned, inside: Collection[str]) -> dict[str, str]:
        """The ASF ids of the sessions outside the unit its conversion names (each in a
        conversation of its own, whose id never depends on the order of conversion)."""
        roots = set(unit.tops) | {s for s in unit.sessions if self.lineage.is_subsession(s)}
        out = {}
        for sid in self._referenced(unit.sessions, roots):
            if sid not in inside and sid in self.lineage.sessions:
                root = self.lineage.group_root(sid)
                out[sid] = group_uuid(self.lineage.sessions[root].unit)
        return out

    # -- jobs -------------------------------------------------------------------------------

    def prepare(self, unit: Planned) -> UnitJob:
        """The unit's job: its part of the plan, and its message rows or, from a SQLite store
        whose marks were read for the plan, where to read them (the job reads them where it
        runs: the host never holds a unit's rows for a worker)."""
        store = self.store
        inside = set(unit.sessions)
        lineage = self.lineage
        keep = inside | {k for s in inside for k in lineage.children.get(s, ())}
        part = Lineage(
            # unit.sessions is in the table's order: no pass over every session per unit.
            sessions={s: lineage.sessions[s] for s in unit.sessions},
            relation={s: lineage.relation[s] for s in keep},
            parent={s: lineage.parent[s] for s in keep},
            children={s: lineage.children[s] for s in inside if s in lineage.children},
            cut=frozenset(lineage.cut & inside),
        )
        prompts = {}
        for sid in unit.sessions:
            prompt_hash = lineage.sessions[sid].system_prompt_hash
            if prompt_hash:
                prompts[prompt_hash] = self._prompt(prompt_hash)
        messages: dict[str, tuple[Message, ...]] | None = None
        marks: dict[str, tuple[object, ...]] = {}
        host = ""
        if isinstance(store, SqliteStore) and self._marks is not None:
            usage = {sid: tuple(self._usage.get(repr(sid), ())) for sid in unit.sessions}
            known = self._marks
            marks = {repr(s): known[repr(s)] for s in unit.sessions if repr(s) in known}
            host = _hosted(store)
        else:
            usage = {sid: store.model_usage(sid) for sid in unit.sessions}
            messages = {sid: store.messages(sid) for sid in unit.sessions}
        return UnitJob(
            name=store.name,
            version=store.version(),
            tops=unit.tops,
            lineage=part,
            peers=self.peers(unit, inside),
            usage=usage,
            prompts=prompts,
            delegations={s: tuple(self.delegations[s]) for s in inside if s in self.delegations},
            personal=self.personal,
            messages=messages,
            source=self._source if host else None,
            marks=marks,
            host=host,
        )


#: The SQLite stores jobs were prepared from in this process, by :func:`_hosted` key: a job
#: run in the host's process reads its rows from the host's open store (its snapshot).
_HOSTS: weakref.WeakValueDictionary[str, SqliteStore] = weakref.WeakValueDictionary()


def _hosted(store: SqliteStore) -> str:
    key = f"{os.getpid()}:{id(store)}"
    _HOSTS[key] = store
    return key


@cache
def _reader(database: str) -> RowReader:
    """One row reader per database in a process (building its converter takes a while)."""
    return RowReader(database)


@frozen(kw_only=True)
class UnitStore:
    """The rows one unit's conversion reads, held in memory: a :class:`Store` for it alone.

    Message rows read but not decoded are decoded here, where the job runs.
    """

    store_name: str
    schema: int | None
    #: Each session's rows, decoded or as read.
    rows: Mapping[str, Sequence[Message | Columns]]
    usage: Mapping[str, tuple[Columns, ...]]
    prompts: Mapping[str, str | None]

    @property
    def name(self) -> str:
        return self.store_name

    def version(self) -> int | None:
        return self.schema

    def sessions(self) -> tuple[tuple[Session, ...], tuple[Stray, ...]]:
        return (), ()

    def messages(self, session_id: str) -> tuple[Message, ...]:
        rows = self.rows.get(session_id, ())
        read = _reader(self.store_name).message
        return tuple(
            [
                r if isinstance(r, Message) else read(r, f"{i}@{session_id}")
                for i, r in enumerate(rows)
            ]
        )

    def system_prompt(self, prompt_hash: str) -> str | None:
        return self.prompts.get(prompt_hash)

    def model_usage(self, session_id: str) -> tuple[Columns, ...]:
        return self.usage.get(session_id, ())

    def delegations(self) -> tuple[Delegation, ...]:
        return ()

    def orphans(self, known_ids: Collection[str]) -> tuple[Stray, ...]:
        return ()

    def row_counts(self, ids: Collection[str] | None = None) -> Mapping[str, RowCounts]:
        return {}

    def first_prompt(self, session_id: str) -> str | None:
        return None


@frozen(kw_only=True)
class UnitJob:
    """One unit's conversion: picklable, run wherever the host sends it.

    Its message rows are either in ``messages`` (a store that is not SQLite), or read where
    the job runs: in the host's process from the host's open store (``host``), elsewhere from
    ``source``, checked against the plan's ``marks`` (:mod:`hermes_plugin.source.rowsource`).
    """

    name: str
    version: int | None
    tops: tuple[str, ...]
    lineage: Lineage
    peers: Mapping[str, str]
    usage: Mapping[str, tuple[Columns, ...]]
    prompts: Mapping[str, str | None]
    delegations: Mapping[str, tuple[Delegation, ...]]
    personal: Mapping[str, tuple[str, ...]]
    messages: Mapping[str, tuple[Message, ...]] | None = None
    source: RowSource | None = None
    marks: Mapping[str, tuple[object, ...]] = field(factory=dict)
    host: str = ""

    def _rows(self) -> Mapping[str, Sequence[Message | Columns]]:
        """Each session's rows: decoded, or as read here (from the host's store in its
        process, else from the source in a worker)."""
        if self.messages is not None:
            return self.messages
        sessions = tuple(self.lineage.sessions)
        local = _HOSTS.get(self.host)
        if local is not None:
            return {sid: local.message_cells(sid) for sid in sessions}
        if self.source is None:  # pragma: no cover - prepare gives one or the other
            raise NeedsHost("no rows and no source to read them from")
        names = self.source.columns
        index = index_of(names)
        cells = rowsource.read_rows(self.source, sessions, self.marks)
        return {sid: [Columns(names, r, index) for r in rows] for sid, rows in cells.items()}

    def __call__(self) -> Iterator[ConvertedSession | Finding]:
        from hermes_plugin.convert.database import convert_unit

        store = UnitStore(
            store_name=self.name,
            schema=self.version,
            rows=self._rows(),
            usage=self.usage,
            prompts=self.prompts,
        )
        return convert_unit(store, self)


def plan_units(handle: HermesHandle, selected: Iterable[str]) -> Iterator[Unit | Finding]:
    """The ``plan`` hook: every unit (the plan stays on the handle, for ``finish``), read as
    the host iterates, ``selected`` included. The session rows that cannot be read are not
    reported here: ``read`` reports them. What every job needs is loaded now, before the host
    forks its workers, so they share it: the converting modules and the row reader's
    generated code."""
    import hermes_plugin.convert.database  # noqa: F401 - loaded once, in the host

    _reader(handle.store.name).warm()
    return _units(handle, selected)


def _units(handle: HermesHandle, selected: Iterable[str]) -> Iterator[Unit | Finding]:
    planner = handle.planner = Planner(handle.store)
    units = planner.units(selected)
    planner.read_marks()
    for unit in units:
        yield Unit(
            key=unit.key,
            fingerprint=planner.fingerprint(unit),
            prepare=functools.partial(planner.prepare, unit),
        )
