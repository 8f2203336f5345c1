"""The second pass: one file's entries, sealed, in the order the plan writes them.

Lines are read again by their offset, one at a time, and each entry is sealed as it is made
and handed on; only the ids of the entries above the current one stay in memory, so a session
of any size converts in memory that grows with its number of lines, not their bytes.

What an entry holds can depend on the path above it: the ASF call id a result answers (a
call id repeated in the file is renamed, and a result binds to the call on its own branch),
the model and environment in force (a ``config`` or ``env`` entry is written where they
change). That state is kept per path and undone when the walk leaves a branch.
"""

from __future__ import annotations

import contextlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Final

from attrs import define, evolve, field

from asf_core.files import open_regular
from asf_core.formats import StoreError
from asf_core.ids import IdError, NumberedNames, migrate_ts, ts_ok
from asf_core.model import Entry, ParentRef
from asf_core.writer import seal
from claude_code_plugin.convert import derived
from claude_code_plugin.convert.entries import (
    Place,
    line_entries,
    pre_tokens,
    unreadable_entry,
)
from claude_code_plugin.convert.sidechains import sidechain_calls
from claude_code_plugin.source.index import FileIndex, identity
from claude_code_plugin.source.lines import decode_line
from claude_code_plugin.source.table import Line
from claude_code_plugin.source.tree import LINE, LINK, RESPONSE, Plan

__all__ = ["Child", "FileJob", "call_renames"]

JSON = dict[str, Any]

EPOCH: Final = "1970-01-01T00:00:00Z"


@define(eq=False)
class Child:
    """A child session linked from a file: a sub-agent or the compaction helper."""

    id: str
    agent: str
    #: The ASF call id of the spawning call (None: not spawned by a call).
    call_id: str | None
    job: FileJob
    #: For the compaction helper: the position of the compact boundary it wrote the summary
    #: for, in the linking file.
    boundary: int | None = None

    def parent_ref(self) -> ParentRef | None:
        leaf = self.job.leaf()
        return None if leaf is None else ParentRef(entry=leaf, session=self.id)


def call_renames(index: FileIndex) -> dict[int, dict[str, str]]:
    """ASF needs call ids unique in the file: a native id seen again (a replay, a resumed
    session) gets ``<id>-<n>``, none of the file's native ids; position -> native id -> ASF
    id, for the lines concerned."""
    seen: set[str] = set()
    names = NumberedNames(call for line in index.lines for call in line.calls)
    renames: dict[int, dict[str, str]] = {}
    for pos, line in enumerate(index.lines):
        for call in line.calls:
            if call not in seen:
                seen.add(call)
                continue
            renames.setdefault(pos, {})[call] = names.give(call)
    return renames


@define
class _State:
    """What is in force on the current path, with a log to undo it back to a branch point."""

    calls: dict[str, str] = field(factory=dict)
    model: str | None = None
    env: tuple[str | None, str | None] = (None, None)
    log: list[tuple[str, Any, Any]] = field(factory=list)

    def set_call(self, native: str, asf: str) -> None:
        self.log.append(("call", native, self.calls.get(native)))
        self.calls[native] = asf

    def set_model(self, model: str) -> None:
        self.log.append(("model", None, self.model))
        self.model = model

    def set_env(self, env: tuple[str | None, str | None]) -> None:
        self.log.append(("env", None, self.env))
        self.env = env

    def rewind(self, mark: int) -> None:
        """Undo every change after the log held ``mark`` changes."""
        while len(self.log) > mark:
            what, key, old = self.log.pop()
            if what == "call":
                if old is None:
                    self.calls.pop(key, None)
                else:
                    self.calls[key] = old
            elif what == "model":
                self.model = old
            else:
                self.env = old


class FileJob:
    """One file's conversion: iterate it for its sealed entries (as often as needed; the
    same entries each time). :meth:`leaf` is the id of its last entry."""

    def __init__(
        self,
        path: Path,
        index: FileIndex,
        plan: Plan,
        *,
        links: Sequence[Child] = (),
        env: tuple[str | None, str | None] = (None, None),
    ) -> None:
        self.path = path
        self.index = index
        self.plan = plan
        #: Link id -> child, as the plan's link nodes name them.
        self.links = list(links)
        self.initial_env = env
        self.renames = call_renames(index)
        self.group_starts = {group[0] for group in plan.groups if group}
        self._leaf: str | None = None
        self._done = False

    def leaf(self) -> str | None:
        """The id of the file's last entry (its resume leaf), converting it if need be."""
        if not self._done:
            for _ in self:
                pass
        return self._leaf

    def _children_by(self) -> tuple[dict[str, list[Child]], dict[int, list[Child]]]:
        """The linked children by spawning call id, and by compact boundary position."""
        calls: dict[str, list[Child]] = {}
        boundaries: dict[int, list[Child]] = {}
        for child in self.links:
            if child.call_id is not None:
                calls.setdefault(child.call_id, []).append(child)
            if child.boundary is not None:
                boundaries.setdefault(child.boundary, []).append(child)
        return calls, boundaries

    def __iter__(self) -> Iterator[Entry]:
        try:
            with open_regular(self.path) as f:
                yield from _Walk(self, f).entries()
        except OSError as exc:
            raise StoreError(f"{self.path.name}: cannot read: {exc.strerror or exc}") from exc


def _notice_parents(job: FileJob) -> dict[int, list[Child]]:
    """Where the work of a sub-agent launched in the background comes back: the first of its
    ``<task-notification>`` lines written at or after its transcript's last line, by position;
    none while it still runs when the file ends."""
    index = job.index
    found: dict[int, list[Child]] = {}
    for child in job.links:
        if child.agent not in index.async_agents:
            continue
        last = child.job.index.last_ts
        for pos, ts in index.notices.get(child.agent, ()):
            if last is None or (ts is not None and ts >= last):
                found.setdefault(pos, []).append(child)
                break
    return found


def _refs(children: Sequence[Child]) -> tuple[ParentRef, ...]:
    refs = [r for r in (c.parent_ref() for c in children) if r is not None]
    return tuple(sorted(refs, key=lambda r: (r.session or "", r.entry)))


class _Walk:
    """One pass of a :class:`FileJob` over its plan."""

    def __init__(self, job: FileJob, stream: BinaryIO) -> None:
        self.job = job
        self.stream = stream
        self.lines = job.index.lines
        self.state = _State(env=job.initial_env)
        self.ts = EPOCH
        self.by_call, self.by_boundary = job._children_by()
        #: Line position -> the background sub-agents whose work that line brings back.
        self.by_notice = _notice_parents(job)
        #: Compact boundary position -> its entry's id, and its ``preTokens``.
        self.boundary_ids: dict[int, str | None] = {}
        #: Compact boundary position -> its node, and the position of the first message its
        #: compaction kept (-1: none, or not in the file); such a position -> its node and
        #: first entry's id.
        self.boundary_nodes: dict[int, int] = {}
        by_uuid = job.index.by_uuid
        self.kept_at = {b: by_uuid.get(head, -1) for b, head in job.index.kept_heads.items()}
        self.heads = set(self.kept_at.values())
        self.head_entries: dict[int, tuple[int, str]] = {}
        self.boundary_tokens: dict[int, int | None] = {}
        self.last_obj: tuple[int, JSON] | None = None
        #: Sub-agents written in the file (CLI 1.0, 2.0): the first line's position -> the
        #: spawning call; such a call -> the root node of its sidechain; each root node -> the
        #: last entry written under it; the root of each node, and the one being written.
        self.sidechains = sidechain_calls(job.index, lambda pos: self._read(self.lines[pos])[1])
        self.sidechain_roots: dict[str, int] = {}
        self.root_last: dict[int, str] = {}
        self.root_of = array("i", [-1]) * len(job.plan.kinds)
        self.root = -1

    def _read(self, line: Line) -> tuple[bytes, JSON | None]:
        self.stream.seek(line.offset)
        data = self.stream.read(line.size)
        if len(data) != line.size:
            raise StoreError(f"{self.job.path.name}: changed while being converted; run again")
        if data.endswith(b"\n"):
            data = data[:-1]
        if line.unreadable is not None:
            return data, None
        obj = decode_line(data).obj
        if obj is None or identity(obj) != (line.type, line.uuid):
            raise StoreError(f"{self.job.path.name}: changed while being converted; run again")
        return data, obj

    def _ts(self, obj: JSON | None) -> str:
        """The line's time as ASF spells it; a line without one (or with something else)
        takes the time of the entry written before it."""
        stamp = obj.get("timestamp") if obj is not None else None
        if isinstance(stamp, str):
            with contextlib.suppress(IdError):
                self.ts = stamp if ts_ok(stamp) else migrate_ts(stamp)
        return self.ts

    def entries(self) -> Iterator[Entry]:
        """The entries, depth first. Only the branch points on the current path are
        remembered (their last entry's id, and how much state to undo to get back there):
        a node whose parent is not the node just written hangs from one of them."""
        plan = self.job.plan
        points: list[tuple[int, str | None, int]] = []
        prev_node, prev_last = -1, None
        for node in plan.order:
            parent = plan.parents[node]
            last = prev_last
            if parent < 0 or parent != prev_node:
                while points and points[-1][0] != parent:
                    points.pop()
                if parent >= 0 and not points:  # pragma: no cover - the plan's order
                    raise RuntimeError(f"node {node}: its parent {parent} is not on the path")
                last, mark = (points[-1][1], points[-1][2]) if points else (None, 0)
                self.state.rewind(mark)
            self.root = self.root_of[node] = node if parent < 0 else self.root_of[parent]
            first = None
            for entry in self._node(node):
                sealed = seal(entry, parent=last)
                last = sealed.id
                first = first or last
                yield sealed
            ref = plan.refs[node]
            if last is not None:
                self.root_last[self.root] = last
            if plan.kinds[node] == LINE and ref in self.sidechains:
                self.sidechain_roots[self.sidechains[ref]] = self.root
            if plan.kinds[node] == LINE and self.lines[ref].boundary:
                self.boundary_ids[ref] = last
                self.boundary_nodes[ref] = node
            if plan.kinds[node] == LINE and ref in self.heads and first is not None:
                self.head_entries[ref] = (node, first)
            if plan.forks[node]:
                points.append((node, last, len(self.state.log)))
            prev_node, prev_last = node, last
        self.job._leaf = prev_last
        self.job._done = True

    def _node(self, node: int) -> list[Entry]:
        kind, ref = self.job.plan.kinds[node], self.job.plan.refs[node]
        if kind == LINE:
            return self._line(ref)
        if kind == RESPONSE:
            return [self._response(ref)]
        assert kind == LINK  # noqa: S101 - the plan has three kinds
        child = self.job.links[ref]
        return [derived.link_entry(self.ts, child.id, child.call_id, child.agent)]

    def _response(self, group: int) -> Entry:
        positions = self.job.plan.groups[group]
        pos = positions[-1]
        if self.last_obj is not None and self.last_obj[0] == pos:
            obj = self.last_obj[1]
        else:
            obj = self._read(self.lines[pos])[1] or {}
        numbers = [self.lines[p].number for p in positions]
        return derived.response_entry(self._ts(obj), obj, numbers)

    def _line(self, pos: int) -> list[Entry]:
        line = self.lines[pos]
        data, obj = self._read(line)
        ts = self._ts(obj)
        if obj is None:
            return [unreadable_entry(data, line, ts)]
        before: list[Entry] = []
        if line.transcript:
            env = (line.cwd, line.branch)
            if env != self.state.env and (line.cwd is not None or line.branch is not None):
                before.append(derived.env_entry(ts, line.cwd, line.branch, line.number))
                self.state.set_env(env)
        if line.role == "assistant":
            self.last_obj = (pos, obj)
            model = line.model
            first = pos in self.job.group_starts
            if first and model and model != derived.SYNTHETIC_MODEL and model != self.state.model:
                before.append(derived.config_entry(ts, model, line.number))
                self.state.set_model(model)
        place = self._place(pos, line, ts)
        made = line_entries(obj, line, place)
        if pos in self.by_notice and made.entries:
            head = made.entries[0]
            refs = {(r.session or "", r.entry): r for r in head.parents}
            refs.update({(r.session or "", r.entry): r for r in _refs(self.by_notice[pos])})
            made.entries[0] = evolve(head, parents=tuple(refs[k] for k in sorted(refs)))
        for native, asf in made.calls.items():
            self.state.set_call(native, asf)
        if line.boundary:
            self.boundary_tokens[pos] = pre_tokens(obj)
        return before + made.entries

    def _first_kept(self, boundary: int) -> str | None:
        """Where the context starts again after a compaction: at its boundary; or, when it
        kept the latest messages as they were (a preserved segment whose head is above the
        boundary on its path), at the head's first entry."""
        at = self.boundary_ids.get(boundary)
        kept = self.head_entries.get(self.kept_at.get(boundary, -1))
        node = self.boundary_nodes.get(boundary, -1)
        if at is None or kept is None:
            return at
        while node >= 0:
            if node == kept[0]:
                return kept[1]
            node = self.job.plan.parents[node]
        return at

    def _place(self, pos: int, line: Line, ts: str) -> Place:
        rename: Callable[[str], str | None] = self.job.renames.get(pos, {}).get
        boundary = self.job.plan.compactions.get(pos, -1)
        if boundary < 0:
            return Place(
                ts=ts,
                rename=rename,
                bind=self.state.calls.get,
                output_parents=self._output_parents,
                uuids=self.job.index.by_uuid,
            )
        model = self.state.model
        return Place(
            ts=ts,
            rename=rename,
            bind=self.state.calls.get,
            first_kept=self._first_kept(boundary),
            checkpoint={"model": model} if model else None,
            pre_tokens=self.boundary_tokens.get(boundary),
            parents=_refs(self.by_boundary.get(boundary, ())),
            uuids=self.job.index.by_uuid,
        )

    def _output_parents(self, call: str) -> tuple[ParentRef, ...]:
        """The sub-agents whose work a call's output holds: those it spawned, but not one it
        launched in the background (its output says only that it started; the work comes
        back in a ``<task-notification>``, see :func:`_notice_parents`)."""
        spawned = self.by_call.get(self.state.calls.get(call, call), ())
        refs = _refs([c for c in spawned if c.agent not in self.job.index.async_agents])
        root = self.sidechain_roots.get(call, self.root)
        if root != self.root and root in self.root_last:  # a sidechain written before
            refs = (ParentRef(entry=self.root_last[root]), *refs)
        return refs
