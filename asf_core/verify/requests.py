"""Request hashes: every response's rebuilt request, for the whole file in one walk of its tree.

Rebuilding each response's request on its own walks its whole path, and hashes every item
before it again: quadratic in a long session. Here the tree is walked once, depth first, with
the settings replayed and a running SHA-256 of the request's items as the walk goes, so a
response costs what came since the one before it. A fork hands each branch a copy of that
state (light branches first, so few copies live at once).

The running state follows :func:`~asf_core.context.build_context` exactly where it can: the
items of the path (after the last compaction: its summary and pins, the entries from its
``first_kept``) in order, minus the response's own output items, which are always the run of
items with its ``response_id`` at the end. Where it cannot (an ``omit`` in force, output items
reaching back past a compaction or around a branch summary, an item that is not I-JSON,
instructions that cannot be rebuilt), that response's request is rebuilt the plain way. That
and rebuilding the items after a compaction or a settings change are bounded in all
(:data:`BUDGET`); responses past the bound are counted in one ``requests-unchecked`` warning.
"""

from __future__ import annotations

import hashlib
from collections.abc import Generator, Iterator
from typing import Any

from attrs import define, field

from asf_core import canonical
from asf_core.context import omit_in_force
from asf_core.model import BranchSummary, Compaction, Config, Entry, Item, Response
from asf_core.replay import Replay, replay_step
from asf_core.request import HashCache, body_parts, request_context, request_hash
from asf_core.session_file import SessionFile
from asf_core.verify.common import WARNING, Finding

__all__ = ["BUDGET", "BUDGET_PER_ENTRY", "request_findings"]

#: Entries the plain rebuilds (and the rebuilds of the running state) may walk in all, plus
#: :data:`BUDGET_PER_ENTRY` for each entry of the file.
BUDGET = 1_000_000
BUDGET_PER_ENTRY = 20
#: What :attr:`_Walk.items` gives for an entry it holds nothing of.
_UNSEEN: Any = object()


@define
class _State:
    """The request being built along one branch: settings, and the items as a running hash.

    ``pending`` is the run of items at the end sharing one ``response_id`` (``run``): the
    output items of a response with that id, left out of its request. Everything before is in
    ``digest`` (started from ``head``, the body's bytes before its items).
    """

    replay: Replay = field(factory=Replay)
    #: The body's canonical bytes before and after its items, for these settings.
    head: bytes = b'{"input":['
    tail: bytes = b'],"store":false}'
    digest: Any = None
    count: int = 0
    pending: list[bytes | None] = field(factory=list)
    run: str | None = None
    #: Response ids whose output items are not just ``pending`` (plain rebuild for them).
    irregular: set[str] = field(factory=set)
    #: The response id of the run of items just before the last rebuild: its outputs may reach
    #: back into the rebuilt items until an item of another response comes.
    straddle: str | None = None
    #: An item or a setting that is not I-JSON is in the request (plain rebuild says where).
    poisoned: bool = False
    #: The budget ran out before this branch's running state could be rebuilt.
    lost: bool = False
    #: The last compaction on the branch and its place on the path.
    compaction: tuple[int, Compaction] | None = None

    def copy(self) -> _State:
        return _State(
            replay=self.replay.copy(),
            head=self.head,
            tail=self.tail,
            digest=None if self.digest is None else self.digest.copy(),
            count=self.count,
            pending=list(self.pending),
            run=self.run,
            irregular=set(self.irregular),
            straddle=self.straddle,
            poisoned=self.poisoned,
            lost=self.lost,
            compaction=self.compaction,
        )

    def commit(self) -> None:
        for data in self.pending:
            self.add(data)
        self.pending.clear()
        self.run = None

    def add(self, data: bytes | None) -> None:
        if data is None:
            return
        if self.digest is None:
            self.digest = hashlib.sha256(self.head)
        self.digest.update(b"," + data if self.count else data)
        self.count += 1


class _Walk:
    """One depth-first walk of a session's tree, checking every recorded request hash."""

    def __init__(self, session: SessionFile) -> None:
        self.session = session
        self.path: list[Entry] = []
        self.position: dict[str, int] = {}
        self.items: dict[str, bytes | None] = {}
        self.cache: HashCache = {}
        self.budget = BUDGET + BUDGET_PER_ENTRY * len(session.entries)
        self.unchecked = 0

    # -- the tree ------------------------------------------------------------------------

    def _children(self) -> dict[str | None, list[str]]:
        """The tree :meth:`~SessionFile.path_to` walks (a parent earlier in the file; ``None``
        keys the roots), children in file order, then lightest subtree first."""
        index = self.session.index_of
        kids: dict[str | None, list[str]] = {}
        for pos, entry in enumerate(self.session.entries):
            parent = entry.parent
            up = index.get(parent) if parent is not None else None
            if parent is None or (up is not None and up < pos):
                kids.setdefault(parent, []).append(entry.id or "")
        size: dict[str, int] = {}
        for entry in reversed(self.session.entries):
            ident = entry.id or ""
            size[ident] = 1 + sum(size.get(c, 0) for c in kids.get(ident, ()))
        for children in kids.values():
            children.sort(key=lambda c: size.get(c, 0))
        return kids

    def findings(self) -> Iterator[Finding]:
        kids = self._children()
        # (entry id, depth on the path, state: its own, or the fork's to copy)
        stack: list[tuple[str, int, _State, bool]] = []
        roots = kids.get(None, [])
        if roots:
            stack.append((roots[-1], 0, _State(), False))
            stack.extend((r, 0, _State(), False) for r in reversed(roots[:-1]))
        while stack:
            ident, depth, state, shared = stack.pop()
            if shared:
                state = state.copy()
            for gone in self.path[depth:]:
                self.position.pop(gone.id or "", None)
            del self.path[depth:]
            entry = self.session.by_id[ident]
            if isinstance(entry, Response) and isinstance(entry.request_hash, str):
                yield from self._check(entry, state)
            self._feed(entry, state)
            self.path.append(entry)
            self.position[ident] = depth
            children = kids.get(ident, [])
            if children:
                stack.append((children[-1], depth + 1, state, False))
                stack.extend((c, depth + 1, state, True) for c in reversed(children[:-1]))
        if self.unchecked:
            yield Finding(
                code="requests-unchecked",
                message=f"{self.unchecked} recorded request_hash values not checked: "
                "rebuilding them would take more than linear time",
                kind=WARNING,
            )

    # -- the running request ---------------------------------------------------------------

    def _item_bytes(self, entry: Entry, *, keep: bool = False) -> tuple[bool, bytes | None]:
        """(whether the entry gives the context an item, its canonical bytes or None when it
        is not I-JSON). Only a rebuild keeps them: it walks its path again at the next
        one, where the walk feeds each entry once (a file without rebuilds holds no copy of its
        items' text)."""
        value = entry.item if isinstance(entry, Item) else None
        if isinstance(entry, BranchSummary):
            value = entry.summary
        if value is None:
            return False, None
        key = entry.id or ""
        data = self.items.get(key, _UNSEEN)
        if data is _UNSEEN:
            try:
                data = canonical.dumps(value)
            except canonical.JsonError:
                data = None
            if keep:
                self.items[key] = data
        return True, data

    def _feed(self, entry: Entry, state: _State) -> None:
        if isinstance(entry, Item):
            gives, data = self._item_bytes(entry)
            state.poisoned |= gives and data is None
            rid = entry.response if entry.response else None
            if rid is None or rid != state.run:
                state.commit()
                if rid != state.straddle:
                    state.straddle = None
            if rid is None:
                state.add(data)
            else:
                state.run = rid
                state.pending.append(data)
        elif isinstance(entry, BranchSummary):
            gives, data = self._item_bytes(entry)
            state.poisoned |= gives and data is None
            if state.run is not None:
                state.irregular.add(state.run)  # outputs on both sides of the summary
            state.commit()
            state.add(data)
        elif isinstance(entry, Config | Compaction):
            state.replay = replay_step(state.replay, entry)
            head = state.head
            try:
                state.head, state.tail = body_parts(state.replay.settings())
            except canonical.JsonError:  # a setting that is not I-JSON: plain rebuilds
                state.head, state.tail = b"", b""
            if isinstance(entry, Compaction):
                state.compaction = (len(self.path), entry)
            if isinstance(entry, Compaction) or state.head != head:
                self._rebuild(state, entry)

    def _rebuild(self, state: _State, at: Entry) -> None:
        """Start the running request again from the path (``at`` is the entry being fed):
        the items of :func:`~asf_core.context.build_context`, all committed."""
        path = [*self.path, at]
        selected: list[Entry] = path
        folded: list[Any] = []
        if state.compaction is not None:
            cut, comp = state.compaction
            kept = self.position.get(comp.first_kept or "", cut)
            selected = [*path[min(kept, cut) : cut], *path[cut + 1 :]]
            if isinstance(comp.summary, dict):
                folded.append(comp.summary)
            folded.extend(p for p in comp.pinned or () if isinstance(p, dict))
        if len(selected) > self.budget:
            state.lost = True
            return
        self.budget -= len(selected)
        state.digest, state.count, state.pending, state.run = None, 0, [], None
        state.poisoned = not state.head
        for value in folded:
            try:
                state.add(canonical.dumps(value))
            except canonical.JsonError:
                state.poisoned = True
        for entry in selected:
            gives, data = self._item_bytes(entry, keep=True)
            state.poisoned |= gives and data is None
            state.add(data)
        state.straddle = _last_run(path)

    # -- checking one response ---------------------------------------------------------------

    def _check(self, response: Response, state: _State) -> Iterator[Finding]:
        if state.lost:
            self.unchecked += 1
            return
        rid = response.response_id or None
        plain = (
            state.poisoned
            or state.replay.instructions is None
            or omit_in_force(state.replay)
            or (rid is not None and rid in state.irregular)
            or (
                rid is not None
                and rid == state.straddle
                and (not state.pending or state.run == rid)
            )
        )
        if plain:
            got = yield from self._plain(response)
            if got is None:
                return
        else:
            got = self._running(response, state)
        if got != response.request_hash:
            yield Finding(
                code="request-hash",
                message=f"recorded request_hash {response.request_hash} but the request "
                f"context hashes to {got}",
                entry=response.id,
            )

    def _running(self, response: Response, state: _State) -> str:
        digest = state.digest.copy() if state.digest is not None else hashlib.sha256(state.head)
        count = state.count
        if not (response.response_id and state.run == response.response_id):
            for data in state.pending:  # not this response's outputs: in its request
                if data is not None:
                    digest.update(b"," + data if count else data)
                    count += 1
        digest.update(state.tail)
        return "sha256:" + digest.hexdigest()

    def _plain(self, response: Response) -> Generator[Finding, None, str | None]:
        """Rebuild one request the plain way (within the budget); the hash, or None when there
        is nothing to compare (reported, or past the budget)."""
        ident = response.id or ""
        if len(self.path) > self.budget:
            self.unchecked += 1
            return None
        self.budget -= len(self.path)
        try:
            ctx = request_context(self.session, ident)
            got = request_hash(ctx, cache=self.cache)
        except Exception as exc:  # a verifier reports what it cannot compute, never raises
            yield Finding(
                code="request-unbuildable",
                message=f"the request cannot be rebuilt: {exc}",
                entry=ident,
            )
            return None
        if got is None:
            why = "; ".join(ctx.problems) or "the instructions cannot be rebuilt"
            yield Finding(
                code="request-unbuildable",
                message=f"request_hash recorded but the request cannot be rebuilt: {why}",
                entry=ident,
            )
        return got


def _last_run(path: list[Entry]) -> str | None:
    """The response id of the run of items the path ends with, as output_entries walks it."""
    for entry in reversed(path):
        if isinstance(entry, Item):
            return entry.response or None
    return None


def request_findings(session: SessionFile) -> Iterator[Finding]:
    """A ``request-hash`` finding for every recorded request_hash that differs from the one
    rebuilt from the file, ``request-unbuildable`` where it cannot be rebuilt."""
    yield from _Walk(session).findings()
