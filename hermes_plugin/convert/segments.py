"""One conversation (a group of segments) as one ASF entry tree.

Rows are written in the order the database's Hermes reads them (id order; ``timestamp, id``
for schema 16, Hermes 0.17.0). The live transcript is the path; where Hermes
soft-deleted rows (rewind, undo: ``active = 0, compacted = 0``) the maximal run of them is an
abandoned branch and the next live row hangs from the entry the run started from, so the
live branch is written last. Rows an in-place compaction archived (``active = 0,
compacted = 1``) stay on the path, and the summary row after them becomes a ``compaction``
entry; a compression continuation starts with a ``compaction`` built from its first row. See
``docs/formats/hermes.md`` ("Structure").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from attrs import define, field

from asf_core.model import Compaction, Config, Custom, Info, Link
from hermes_plugin.convert.background import Background, completions
from hermes_plugin.convert.calls import CallBook, Snapshot
from hermes_plugin.convert.entries import Rendered, render_custom, render_row
from hermes_plugin.convert.items import CONTEXT_ROLES, row_items
from hermes_plugin.convert.lineage import SUBSESSION, Lineage, find_spawns
from hermes_plugin.convert.plan import Clock, Plan
from hermes_plugin.convert.sanitize import (
    as_read,
    is_review_harness,
    read_content,
    reader_order,
    strips_harness,
)
from hermes_plugin.convert.session_entries import (
    closing_entry,
    delegation_entry,
    opening_member,
    session_settings,
    settings_delta,
    usage_entry,
    with_settings,
)
from hermes_plugin.source.relations import Relation
from hermes_plugin.source.rows import Delegation, Message, Session, session_unit
from hermes_plugin.source.store import Store

__all__ = ["ChildLink", "GroupBuilder"]

JSON = dict[str, Any]


@define(kw_only=True)
class ChildLink:
    """How a subsession child is linked: its ASF id and the call that spawned it."""

    asf_id: str
    call_id: str | None


@define
class GroupBuilder:
    """Builds the plan of one group. ``subsession_id(call_id, attempt)`` derives a spawned
    child's id; ``fallback_id(session)`` names a child whose call was not found."""

    store: Store
    lineage: Lineage
    asf_id: str
    subsession_id: Callable[[str, int], str]
    fallback_id: Callable[[Session], str]
    peer_id: Callable[[str], str]
    #: ``async_delegations`` rows by the session that dispatched them.
    delegations: Mapping[str, Sequence[Delegation]] = field(factory=dict)
    plan: Plan = field(factory=Plan)
    book: CallBook = field(factory=CallBook)
    clock: Clock = field(factory=Clock)
    links: dict[str, ChildLink] = field(factory=dict)
    #: Output entry index -> the children whose leaves it lists in ``parents``.
    outputs: dict[int, list[str]] = field(factory=dict)
    live_leaf: int | None = None
    rows: int = 0
    aside: dict[str, int] = field(factory=dict)
    strays: list[Message] = field(factory=list)
    #: Readable rows with cells Hermes does not write (kept as stored, read as Hermes reads).
    damaged: list[Message] = field(factory=list)
    units: list[str] = field(factory=list)
    session_ids: list[str] = field(factory=list)
    #: ASF call id -> the children it spawned.
    spawned_by_call: dict[str, list[str]] = field(factory=dict)
    #: The store's schema version (asked once: every row's reading depends on it).
    version: int | None = field(init=False)

    def __attrs_post_init__(self) -> None:
        self.version = self.store.version()

    def build(self, root: str) -> None:
        """Write every segment of the group, depth first.

        Each segment ends with its closing entries, appended at its live leaf, and the
        segment Hermes resumes into is written last: the file's last line is the live leaf.
        """
        ends: dict[str, int | None] = {}
        for sid in self.lineage.segments(root):
            up = self.lineage.parent[sid] if sid != root else None
            attach = ends.get(up) if up is not None else None
            ends[sid] = self._segment(self.lineage.sessions[sid], attach, first=sid == root)
            self.live_leaf = ends[sid]

    def _segment(self, session: Session, attach: int | None, *, first: bool) -> int | None:
        lineage, store = self.lineage, self.store
        add = self.plan.add
        self.units.append(session.unit)
        self.session_ids.append(session.id)
        rows = reader_order(store.messages(session.id), self.version)
        settings = session_settings(store, session)
        start = opening_member(store, lineage, session)
        ts = self.clock.at(session.started_at)
        cursor = attach
        summary_row = None if first else _summary_row(rows, self.version)
        up = lineage.parent[session.id]
        # A continuation's compaction checkpoints the settings in force before it (its
        # parent's); a config delta right after it records the continuation's own.
        before = settings if first or up is None else session_settings(store, lineage.sessions[up])
        delta = settings_delta(before, settings, ts, session)
        if first:
            config = with_settings(Config(ts=ts, unknown={"hermes": start}), settings)
            cursor = add(config, cursor)
            if up is not None and lineage.relation[session.id] is Relation.BRANCH:
                link = Link(
                    ts=ts,
                    rel="fork_of",
                    session=self.peer_id(up),
                    unknown={"hermes": {"part": "fork_of"}},
                )
                cursor = add(link, cursor)
        else:
            # The segment opens with its session row; a compaction names it as first_kept.
            mark = Custom(ts=ts, ns="hermes", data={"kind": "segment"}, unknown={"hermes": start})
            cursor = add(mark, cursor)
            if summary_row is None:
                config = Config(ts=ts, replace=True, unknown={"hermes": {"part": "settings"}})
                cursor = add(with_settings(config, settings), cursor)
        boundary = cursor
        subs = [lineage.sessions[c] for c in lineage.kids(session.id, SUBSESSION)]
        delegations = self.delegations.get(session.id, ())
        background = Background(completions(delegations), rows) if subs else None
        spawned: dict[tuple[int, int], list[str]] = {}
        detached: set[tuple[int, int]] = set()  # calls answered before their sub-agents ran
        for child, where in find_spawns(rows, subs, background, detached).items():
            spawned.setdefault(where, []).append(child)
        harness = _harness_rows(rows) if strips_harness(self.version) else set()
        want_compaction = False
        run_base: int | None = None
        snapshot: Snapshot | None = None
        for message in rows:
            self.rows += 1
            if message.problems and message.error is None:
                self.damaged.append(message)
            rewound = not message.active and not message.compacted
            if rewound and snapshot is None:  # a rewound run begins: the calls as they are
                run_base, snapshot = cursor, self.book.snapshot()
            elif not rewound and snapshot is not None:
                cursor = run_base
                self.book.restore(snapshot)
                snapshot = None
            ts = self.clock.at(message.timestamp)
            as_summary = message.id == summary_row or (
                message.active
                and (want_compaction or (message.has_summary and message.summary))
                and _can_summarize(message, harness)
            )
            checkpoint = before if message.id == summary_row else settings
            rendered = self._render(message, ts, harness, checkpoint, session, as_summary)
            folds = bool(rendered.entries) and isinstance(rendered.entries[0], Compaction)
            if folds and message.id != summary_row:
                # An in-place compaction: a boundary entry, which contributes no items, is
                # the compaction's first_kept, so the context restarts at its summary.
                mark = Custom(
                    ts=ts,
                    ns="hermes",
                    data={"kind": "compaction", "reason": "in_place"},
                    unknown={"hermes": {"part": "compaction", "row": message.unit}},
                )
                boundary = cursor = add(mark, cursor)
            if folds:
                want_compaction = False
            base = len(self.plan.entries)
            for position, entry in enumerate(rendered.entries):
                cursor = add(entry, cursor)
                if position == 0 and folds and message.id == summary_row and delta is not None:
                    cursor = add(delta, cursor)
            if folds and boundary is not None:
                self.plan.targets[base] = ("first_kept", boundary)
            if rendered.answers is not None:
                kids = self.spawned_by_call.get(rendered.answers)
                if kids:
                    self.outputs[base] = list(kids)
            for index, (_position, call_id, _call) in enumerate(rendered.calls):
                answered = (message.id, index) not in detached
                for attempt, child in enumerate(spawned.get((message.id, index), [])):
                    cursor = self._link(child, call_id, attempt, ts, cursor, answered=answered)
            if message.compacted and not message.active:
                want_compaction = True
        if snapshot is not None:
            cursor = run_base
            self.book.restore(snapshot)
        end_ts = self.clock.at(session.ended_at)
        for sub in subs:
            if sub.id not in self.links:
                cursor = self._link(sub.id, None, 0, end_ts, cursor)
        for child_id in lineage.kids(session.id, frozenset({Relation.RESET})):
            link = Link(
                ts=end_ts,
                rel="continued_in",
                session=self.peer_id(child_id),
                unknown={"hermes": {"part": "reset", "child": session_unit(store.name, child_id)}},
            )
            cursor = add(link, cursor)
        for delegation in self.delegations.get(session.id, ()):
            cursor = add(delegation_entry(store.name, delegation, end_ts), cursor)
        for usage in store.model_usage(session.id):
            cursor = add(usage_entry(session, usage, end_ts), cursor)
        if first and session.title:
            info = Info(ts=end_ts, name=session.title, unknown={"hermes": {"part": "title"}})
            cursor = add(info, cursor)
        return add(closing_entry(store, session, end_ts), cursor)

    def _link(
        self,
        child: str,
        call_id: str | None,
        attempt: int,
        ts: str,
        cursor: int | None,
        *,
        answered: bool = True,
    ) -> int:
        """The ``subsession`` link to a sub-agent; ``answered``: the call's output holds the
        sub-agent's result (not so for a background delegation, answered when dispatched), so
        that output lists the sub-agent's leaf."""
        session = self.lineage.sessions[child]
        asf = self.subsession_id(call_id, attempt) if call_id else self.fallback_id(session)
        self.links[child] = ChildLink(asf_id=asf, call_id=call_id)
        if call_id and answered:
            self.spawned_by_call.setdefault(call_id, []).append(child)
        link = Link(
            ts=ts,
            rel="subsession",
            session=asf,
            call_id=call_id,
            unknown={"hermes": {"part": "subsession", "child": session.unit}},
        )
        return self.plan.add(link, cursor)

    def _render(
        self,
        message: Message,
        ts: str,
        harness: set[int],
        settings: JSON,
        session: Session,
        as_summary: bool,
    ) -> Rendered:
        if message.error is not None:
            self.strays.append(message)
            return self._aside(render_custom(message, ts, "unreadable", message.error))
        if message.id in harness:
            return self._aside(render_custom(message, ts, "review_harness"))
        if as_summary:
            self.book.forget()
        view = as_read(message, self.version)
        result = row_items(view, self.book, partial(_invented, message.id))
        if not result.in_context:
            return self._aside(render_custom(message, ts, result.kind))
        native: dict[int, str] = {}
        for position, call in result.calls:
            stored = call.pairing_id()
            if result.items[position]["call_id"] != stored:
                native[position] = stored
        summary = settings if as_summary and result.items else None
        return render_row(
            message,
            result,
            ts,
            model=session.model,
            summary_config=summary,
            native_ids=native,
        )

    def _aside(self, rendered: Rendered) -> Rendered:
        why = rendered.aside or "aside"
        self.aside[why] = self.aside.get(why, 0) + 1
        return rendered


def _invented(row: int, index: int) -> str:
    """The ASF call id of a row's ``index``-th call whose own id is empty or already used."""
    return f"hermes_{row}_{index}"


def _can_summarize(message: Message, harness: set[int]) -> bool:
    """Whether a row can open a compacted context: a readable user, system or assistant row."""
    if message.error is not None or message.id in harness or message.observed:
        return False
    return message.role in CONTEXT_ROLES - {"tool"}


def _summary_row(rows: Sequence[Message], version: int | None) -> int | None:
    """The first live row of a continuation that contributes items: its compaction summary."""
    harness = _harness_rows(rows) if strips_harness(version) else set()
    scratch = CallBook()
    for message in rows:
        if not message.active and not message.compacted:
            continue
        if not _can_summarize(message, harness):
            continue
        if row_items(as_read(message), scratch, lambda i: f"x{i}").items:
            return message.id
    return None


def _harness_rows(rows: Sequence[Message]) -> set[int]:
    """Row ids Hermes' reader drops as background-review harness turns (0.18+): each
    harness prompt and the assistant row right after it, among the rows of one visibility
    class (live, archived by compaction, soft-deleted), as each read sees them."""
    out: set[int] = set()
    # One pass: each class's rows are met in order, and each class keeps its own state.
    skip_next = {_LIVE: False, _ARCHIVED: False, _REWOUND: False}
    for m in rows:
        klass = _LIVE if m.active else (_ARCHIVED if m.compacted else _REWOUND)
        if m.role in _PROMPT_ROLES and is_review_harness(m.role, read_content(m)):
            out.add(m.id)
            skip_next[klass] = True
            continue
        if skip_next[klass]:
            skip_next[klass] = False
            if m.role == "assistant":
                out.add(m.id)
    return out


#: The visibility classes of rows, as each read of Hermes' sees them.
_LIVE, _ARCHIVED, _REWOUND = "live", "archived", "rewound"
#: The roles a harness prompt has.
_PROMPT_ROLES = frozenset({"user", "system"})
