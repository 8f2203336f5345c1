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
"""

from __future__ import annotations

from typing import Any

from attrs import define

from asf_core.model import Entry, Header
from asf_core.writer import SessionBuilder
from codex_plugin.convert.history import is_turn, legacy_history, rollback_cut

__all__ = ["Cut", "LivePath", "Step"]

JSON = dict[str, Any]


@define
class Step:
    """One entry of the live path that shapes the history: an item, or a fold."""

    #: Its position on the path.
    at: int
    entry: str
    line: int
    item: JSON | None = None
    #: A fold's items (its summary, then its pins).
    fold: list[JSON] | None = None
    #: A compaction line's replacement history: where Codex's resume may start.
    base: bool = False
    #: A legacy compaction's summary: its fold is rebuilt from the history before it.
    legacy: str | None = None
    #: A rollback's turns, when it folded: its fold is the history before it, cut.
    turns: int | None = None


@define
class Cut:
    """Where a rollback leaves the path: continue below ``parent`` (None: a new root); with
    ``fold``, at the end of the path, folding to those items; ``empty``: with nothing left,
    from a new root."""

    parent: str | None
    fold: list[JSON] | None = None
    empty: bool = False


class LivePath:
    """Entries appended one after another on one live path, and its history."""

    def __init__(self, header: Header) -> None:
        self.builder = SessionBuilder(header)
        self.tip: str | None = None
        #: Entry ids on the live path, root first.
        self.path: list[str] = []
        self.steps: list[Step] = []

    def add(self, entry: Entry) -> Entry:
        sealed = self.builder.append(entry, parent=self.tip)
        self.tip = str(sealed.id)
        self.path.append(self.tip)
        return sealed

    def add_item(self, entry: Entry, item: JSON, line: int) -> Entry:
        sealed = self.add(entry)
        self.steps.append(Step(len(self.path) - 1, self.tip or "", line, item=item))
        return sealed

    def add_fold(self, entry: Entry, items: list[JSON], line: int, **how: Any) -> None:
        """A fold to ``items``; ``how``: ``base``, ``legacy`` or ``turns`` (see :class:`Step`)."""
        self.add(entry)
        self.steps.append(Step(len(self.path) - 1, self.tip or "", line, fold=list(items), **how))

    def restart(self, parent: str | None) -> None:
        """Continue the path below ``parent`` (an entry on it; None: a new root)."""
        keep = 0 if parent is None else self.path.index(parent) + 1
        del self.path[keep:]
        self.steps = [s for s in self.steps if s.at < keep]
        self.tip = parent

    def settings(self) -> JSON:
        """The settings in force at the end of the path, in a compaction checkpoint's shape
        (a compaction entry's ``config`` resets them to it)."""
        from asf_core.replay import Replay, replay_step

        by_id = {entry.id: entry for entry in self.builder.entries}
        replay = Replay()
        for ident in self.path:
            replay = replay_step(replay, by_id[ident])
        return replay.settings()

    def reroot(self, line: int, **how: Any) -> None:
        """Start a new root with an empty history (a fold to nothing, which no compaction
        entry can say). The steps above stay, out of the path (``at`` -1), for rollbacks to
        replay."""
        self.steps = [
            Step(-1, s.entry, s.line, s.item, s.fold, s.base, s.legacy, s.turns) for s in self.steps
        ]
        self.steps.append(Step(-1, "", line, fold=[], **how))
        self.path = []
        self.tip = None

    def history(self, upto: int | None = None) -> list[tuple[JSON, Step | None]]:
        """The history after the first ``upto`` steps (all: the end of the path), each item
        with the step holding it (None: inside a fold)."""
        steps = self.steps if upto is None else self.steps[:upto]
        out: list[tuple[JSON, Step | None]] = []
        for step in steps:
            if step.fold is not None:
                out = [(item, None) for item in step.fold]
            elif step.item is not None:
                out.append((step.item, step))
        return out

    def _resume_base(self, turns: int) -> int:
        """The step Codex's resume starts from before dropping ``turns`` turns: the newest
        replacement history not inside a dropped turn (-1: none, the top)."""
        pending = turns
        for n in range(len(self.steps) - 1, -1, -1):
            step = self.steps[n]
            if step.item is not None and is_turn(step.item):
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
        history: list[tuple[JSON, Step | None]] = []
        if base >= 0:
            history = [(item, None) for item in self.steps[base].fold or ()]
        for step in self.steps[base + 1 :]:  # replacement histories here are dropped turns'
            if step.item is not None:
                history.append((step.item, step))
            elif step.legacy is not None:
                kept = legacy_history([item for item, _ in history], step.legacy)
                history = [(item, None) for item in kept]
            elif step.turns is not None:
                cut = rollback_cut([item for item, _ in history], step.turns)
                history = history if cut is None else history[:cut]
        items = [item for item, _ in history]
        cut = rollback_cut(items, turns)
        left = items if cut is None else items[:cut]
        if left == [item for item, _ in self.history()]:
            return None if cut is None else Cut(self.tip)
        held = history[len(left)][1] if len(left) < len(history) else None
        if held is not None and held.at >= 0:
            before = self.steps.index(held)
            if [item for item, _ in self.history(before)] == left:
                return Cut(self.path[held.at - 1] if held.at > 0 else None)
        if not left:
            return Cut(None, empty=True)
        return Cut(self.tip, fold=left)
