"""The live path of a conversion: the entries Codex's history is made of, and where a
rollback continues it.

ASF's context at the end of the live path is Codex's history at that point: the items of
the last fold (a ``compaction`` entry: a replacement history, a legacy compaction's kept
messages and summary) and of the item entries after it. A rollback drops the last N user
turns the way Codex's resume does: a compaction written inside a dropped turn does not
count (the history is rebuilt from the newest compaction before the dropped turns), so a
rollback usually reaches back into the entries themselves, and the path continues as a new
branch from the entry above the first dropped item. Only when the cut falls inside a fold's
items (which no entry holds one by one) does it take a new fold of what is left.

Memory: the path keeps its entries' ids and, for each item, a :class:`Step` with the item's
:class:`~codex_plugin.convert.history.Brief` and where its line is; the item itself is read
again from the rollout when a rule needs its content (a rollback comparing histories, a
legacy compaction's kept messages, a fold of what a rollback leaves). So is a compaction
line's replacement history, when a rule needs it; the folds no line holds keep their items
(a legacy compaction's kept messages and summary, at most 80 kB, and what a rollback into a
fold leaves of it).
Entries are handed on as they are sealed; of those on the path only the settings entries
(``config``, ``compaction``) stay, without their ``codex`` member, for a compaction's
checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
from attrs import define

from asf_core.formats import StoreError
from asf_core.model import Compaction, Config, Entry
from asf_core.writer import seal
from codex_plugin import NS
from codex_plugin.convert.history import (
    Brief,
    answer,
    brief,
    is_summary,
    legacy_history,
    rollback_cut,
    text_of,
)

__all__ = ["Cut", "Ids", "LivePath", "Step"]

JSON = dict[str, Any]


@define(eq=False)
class Step:
    """One entry of the live path that shapes the history: an item, or a fold."""

    #: Its position on the path (its entry's id is the path's there).
    at: int
    line: int
    #: An item's brief, and where its line starts (-1: an ``aborted`` output Codex adds).
    brief: Brief | None = None
    key: int = -1
    #: A fold's items (its summary, then its pins), or the key of the compaction line whose
    #: replacement history they are; what a rollback leaves of the path is its steps, so
    #: that a call there left without an output is answered ``aborted`` as elsewhere.
    fold: list[Step | JSON] | int | None = None
    #: A compaction line's replacement history: where Codex's resume may start.
    base: bool = False
    #: A legacy compaction's summary: its fold is rebuilt from the history before it.
    legacy: str | None = None
    #: The id Codex gives an output it makes (one derived from its call's item id).
    ident: str | None = None
    #: A rollback's turns, when it folded: its fold is the history before it, cut.
    turns: int | None = None


@define
class Cut:
    """Where a rollback leaves the path: continue below ``parent`` (None: a new root); with
    ``fold``, at the end of the path, folding to those items; ``empty``: with nothing left,
    from a new root."""

    parent: str | None
    fold: list[Step | JSON] | None = None
    empty: bool = False


_NONE = Brief(None, None, turn=False, context=False)


def _brief(piece: Step | JSON) -> Brief:
    if isinstance(piece, Step):
        return piece.brief or _NONE
    return brief(piece)


class LivePath:
    """Entries appended one after another on one live path, and its history.

    ``fetch`` reads an item again by its line's key. A ``dry`` path seals nothing: it gives
    each entry a stand-in id and keeps no settings, for a pass that only counts."""

    def __init__(self, fetch: Callable[[int], JSON], *, dry: bool) -> None:
        self.fetch = fetch
        self.dry = dry
        self.tip: str | None = None
        #: Entry ids on the live path, root first.
        self.path = Ids()
        self.steps: list[Step] = []
        #: The settings entries on the path, by position.
        self.configs: list[tuple[int, Entry]] = []
        #: Sealed entries not handed on yet, and how many were added in all.
        self.out: list[Entry] = []
        self.added = 0

    def add(self, entry: Entry) -> str:
        """Append ``entry`` at the tip; its id."""
        self.added += 1
        if self.dry:
            ident = f"{Ids.PREFIX}{self.added:064x}"
        else:
            sealed = seal(entry, parent=self.tip)
            ident = str(sealed.id)
            self.out.append(sealed)
            if isinstance(sealed, Config | Compaction):
                setting = _setting(sealed)
                if not self.configs or self.configs[-1][1] != setting:  # the same again: no-op
                    self.configs.append((len(self.path), setting))
        self.tip = ident
        self.path.append(ident)
        return ident

    def take(self) -> list[Entry]:
        """The entries sealed since the last call."""
        out, self.out = self.out, []
        return out

    def add_item(self, entry: Entry, item: JSON, line: int, key: int) -> None:
        """An item entry; ``key`` is its line's (-1: an ``aborted`` output)."""
        self.add(entry)
        made = item.get("id") if key < 0 else None
        ident = made if isinstance(made, str) else None
        self.steps.append(Step(len(self.path) - 1, line, _shared(brief(item)), key, ident=ident))

    def add_fold(
        self, entry: Entry, items: Sequence[Step | JSON], line: int, *, key: int = -1, **how: Any
    ) -> None:
        """A fold to ``items`` (``key``: its line's, when they are its replacement history);
        ``how``: ``base``, ``legacy`` or ``turns`` (see :class:`Step`)."""
        self.add(entry)
        fold = key if key >= 0 else list(items)
        self.steps.append(Step(len(self.path) - 1, line, fold=fold, **how))

    def fold_items(self, step: Step) -> list[Step | JSON]:
        """A fold's items, read again from its line when it is a replacement history."""
        if not isinstance(step.fold, int):
            return list(step.fold or ())
        items = self.fetch(step.fold).get("replacement_history")
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise StoreError("a compaction line changed while being converted; run again")
        return list[Step | JSON](items)

    def folded_at(self) -> int:
        """The place on the path of the last fold (-1: none, or a new root): the steps
        after it are the history's own entries, those before it at most pieces of a fold."""
        return next((s.at for s in reversed(self.steps) if s.fold is not None), -1)

    def entry(self, step: Step) -> str:
        """The id of the entry of a step on the path."""
        return self.path[step.at]

    def item(self, piece: Step | JSON) -> JSON:
        """The item a piece of a history stands for."""
        if not isinstance(piece, Step):
            return piece
        kind, call_id = _brief(piece).kind, _brief(piece).call_id
        if piece.key < 0:
            made = answer(kind or "", call_id)
            return made if piece.ident is None else {**made, "id": piece.ident}
        item = self.fetch(piece.key)
        if call_id is not None and item.get("call_id") != call_id:
            item = {**item, "call_id": call_id}
        return item

    def same(self, one: list[Step | JSON], other: list[Step | JSON]) -> bool:
        """Whether two histories hold equal items."""
        if len(one) != len(other):
            return False
        for a, b in zip(one, other, strict=True):
            if a is b:
                continue
            if isinstance(a, Step) and isinstance(b, Step) and (a.key, a.brief) == (b.key, b.brief):
                continue
            if self.item(a) != self.item(b):
                return False
        return True

    @staticmethod
    def briefs(history: list[Step | JSON]) -> list[Brief]:
        """The briefs of a history's items."""
        return [_brief(piece) for piece in history]

    def turn_texts(self, history: list[Step | JSON]) -> Iterator[str]:
        """The texts of the user turns in ``history``, newest first, each read when asked
        (the user messages but summaries: what a legacy compaction keeps; another agent's
        message is a turn, but no user message)."""
        for piece in reversed(history):
            brief = _brief(piece)
            if brief.turn and brief.kind == "message":
                item = self.item(piece)
                if item.get("role") == "user" and not is_summary(text := text_of(item)):
                    yield text

    def restart(self, parent: str | None) -> None:
        """Continue the path below ``parent`` (an entry on it; None: a new root)."""
        keep = 0 if parent is None else self.path.index(parent) + 1
        self.path.truncate(keep)
        self.steps = [s for s in self.steps if s.at < keep]
        self.configs = [c for c in self.configs if c[0] < keep]
        self.tip = parent

    def settings(self) -> JSON:
        """The settings in force at the end of the path, in a compaction checkpoint's shape
        (a compaction entry's ``config`` resets them to it); none on a dry path."""
        from asf_core.replay import Replay, replay_step

        # A compaction's checkpoint sets every setting: replay from the last one (the whole
        # path each time made a rollout of thousands of compactions quadratic).
        last = len(self.configs) - 1
        while last > 0 and not isinstance(self.configs[last][1], Compaction):
            last -= 1
        replay = Replay()
        for _, entry in self.configs[max(last, 0) :]:
            replay = replay_step(replay, entry)
        return replay.settings()

    def reroot(self, line: int, **how: Any) -> None:
        """Start a new root with an empty history (a fold to nothing, which no compaction
        entry can say). The steps above stay, out of the path (``at`` -1), for rollbacks to
        replay."""
        self.steps = [attrs.evolve(s, at=-1) for s in self.steps]
        self.steps.append(Step(-1, line, fold=[], **how))
        self.path = Ids()
        self.configs = []
        self.tip = None

    def history(self, upto: int | None = None) -> list[Step | JSON]:
        """The history after the first ``upto`` steps (all: the end of the path): the steps
        holding its items, and the items of a fold."""
        end = len(self.steps) if upto is None else min(upto, len(self.steps))
        start = end  # after the last fold, which is all that is left of the steps before it
        while start > 0 and self.steps[start - 1].fold is None:
            start -= 1
        out = self.fold_items(self.steps[start - 1]) if start > 0 else []
        out.extend(step for step in self.steps[start:end] if step.brief is not None)
        return out

    def _resume_base(self, turns: int) -> int:
        """The step Codex's resume starts from before dropping ``turns`` turns: the newest
        replacement history not inside a dropped turn (-1: none, the top)."""
        pending = turns
        for n in range(len(self.steps) - 1, -1, -1):
            step = self.steps[n]
            if step.brief is not None and step.brief.turn:
                pending = max(pending - 1, 0)
            elif step.turns is not None:  # an earlier rollback whose turns are still above
                pending += step.turns
            elif step.base and pending == 0:
                return n
        return -1

    def rollback(self, turns: int) -> Cut | None:
        """Where dropping the last ``turns`` user turns leaves the path; None: nothing to
        drop."""
        base = self._resume_base(turns)
        history: list[Step | JSON] = []
        if base >= 0:
            history = self.fold_items(self.steps[base])
        for step in self.steps[base + 1 :]:  # replacement histories here are dropped turns'
            if step.brief is not None:
                history.append(step)
            elif step.legacy is not None:
                history = list(legacy_history(self.turn_texts(history), step.legacy))
            elif step.turns is not None:
                cut = rollback_cut(self.briefs(history), step.turns)
                history = history if cut is None else history[:cut]
        cut = rollback_cut(self.briefs(history), turns)
        left = history if cut is None else history[:cut]
        if self.same(left, self.history()):
            return None if cut is None else Cut(self.tip)
        held = history[len(left)] if len(left) < len(history) else None
        if isinstance(held, Step) and held.at >= 0:
            before = next(n for n, step in enumerate(self.steps) if step is held)
            if self.same(self.history(before), left):
                return Cut(self.path[held.at - 1] if held.at > 0 else None)
        if not left:
            return Cut(None, empty=True)
        return Cut(self.tip, fold=left)


def _setting(entry: Entry) -> Entry:
    """A settings entry as a checkpoint replays it: without its place, the plugin's member,
    nor a compaction's items (so that a turn's settings repeated compare equal)."""
    unknown = {k: v for k, v in entry.unknown.items() if k != NS}
    if isinstance(entry, Compaction):
        return attrs.evolve(entry, summary={}, pinned=None, unknown=unknown)
    return attrs.evolve(entry, id=None, parent=None, ts=_EPOCH, unknown=unknown)


_EPOCH = "1970-01-01T00:00:00Z"
#: Briefs many items share (all but those of calls and outputs), kept once.
_BRIEFS: dict[Brief, Brief] = {}


def _shared(brief: Brief) -> Brief:
    if brief.call_id is not None:
        return brief
    return _BRIEFS.setdefault(brief, brief)


class Ids:
    """Entry ids (``sha256:`` and 64 hex digits), packed: 32 bytes each, not an object."""

    PREFIX = "sha256:"

    def __init__(self) -> None:
        self.data = bytearray()

    def __len__(self) -> int:
        return len(self.data) // 32

    def append(self, ident: str) -> None:
        if not ident.startswith(self.PREFIX) or len(ident) != 71:  # pragma: no cover - seal's
            raise ValueError(f"not an entry id: {ident!r}")
        self.data += bytes.fromhex(ident[7:])

    def __getitem__(self, n: int) -> str:
        if not 0 <= n < len(self):  # pragma: no cover - the path's own positions
            raise IndexError(n)
        return self.PREFIX + self.data[32 * n : 32 * n + 32].hex()

    def index(self, ident: str) -> int:
        digest = bytes.fromhex(ident[7:])
        at = self.data.find(digest)
        while at >= 0 and at % 32:
            at = self.data.find(digest, at + 1)
        if at < 0:  # pragma: no cover - a parent on the path
            raise ValueError(ident)
        return at // 32

    def truncate(self, n: int) -> None:
        del self.data[32 * n :]
