"""The context algorithm (draft 0.11 section 7): what a model call at a point on a path receives.

Settings are replayed from ``config`` deltas (a compaction's ``config`` is a full checkpoint),
items come from ``item`` entries, branch summaries and the last compaction's summary and pins,
and the ``omit`` in force at the end of the path leaves some item entries out. The canonical
request built from a context hashes to the ``request_hash`` a writer records on a response, so
every rule here decides whether recorded hashes verify: the vectors under
``vectors/testdata/context`` pin the output down.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from attrs import frozen

from asf_core.model import BranchSummary, Compaction, Config, Entry, Item
from asf_core.replay import Replay, replay_step

if TYPE_CHECKING:
    from asf_core.reader import SessionFile

__all__ = [
    "Context",
    "ContextError",
    "SettingsReplay",
    "build_context",
    "context_at",
    "omit_in_force",
]

JSON = dict[str, Any]

#: The settings replay, public for consumers that walk a path entry by entry themselves (the
#: exporters), so they apply config deltas and checkpoints exactly as the context does
#: (:mod:`asf_core.replay`).
SettingsReplay = Replay


class ContextError(ValueError):
    """A context or request was asked of something that cannot give one."""


@frozen(kw_only=True)
class Context:
    """The result of the context algorithm at one leaf.

    ``items`` are the entries' own item objects (not copies): read them, never mutate them.
    """

    #: Members in force, shaped like a compaction checkpoint; empty members are left out.
    settings: dict[str, Any]
    items: list[dict[str, Any]]
    #: Path entry ids after the compaction cut: [compaction, first_kept … , … leaf].
    entries: list[str]
    #: The entry that contributed each item (a compaction once per summary/pin).
    item_entries: list[str]
    #: Item entries the ``omit`` in force leaves out: ``{"entry": id, "reason": …}``.
    omitted: list[dict[str, str]]
    #: One line per thing that went wrong, ``"<code>: <message>"``; codes: ``bad-first-kept``,
    #: ``bad-compaction``, ``bad-checkpoint``, ``bad-item``, ``mistyped-member``,
    #: ``unresolved-part``, ``unresolved-omitted``, ``instructions-mismatch``.
    problems: list[str]
    #: False when the instructions string cannot be rebuilt (an unresolvable part).
    instructions_rebuilt: bool = True


@frozen(kw_only=True)
class _Omit:
    """The ``omit`` in force at the end of the path, ready to test entries against."""

    items: frozenset[str]
    #: The request's model when ``reasoning: other_models`` is in force (and it has one).
    model: str | None

    def reason(self, entry: Item, model_at: str | None) -> str | None:
        if entry.id in self.items:
            return "items"
        item = entry.item
        if (
            self.model
            and model_at
            and model_at != self.model
            and entry.response
            and isinstance(item, dict)
            and item.get("type") == "reasoning"
        ):
            return "other_models"
        return None


def _omit_of(replay: Replay) -> _Omit | None:
    listed = replay.omit.get("items")
    items = frozenset(x for x in listed if isinstance(x, str)) if isinstance(listed, list) else ()
    other = replay.omit.get("reasoning") == "other_models"
    if not items and not (other and replay.model):
        return None
    return _Omit(items=frozenset(items), model=replay.model if other else None)


def omit_in_force(replay: Replay) -> bool:
    """Whether the ``omit`` of these settings leaves any item entry out of a context."""
    return _omit_of(replay) is not None


def build_context(path: Sequence[Entry]) -> Context:
    """Run the context algorithm over a root-first path of entries (root … leaf)."""
    replay = Replay()
    #: (path index, model in force from there on), for attributing reasoning to models.
    models: list[tuple[int, str | None]] = [(0, None)]
    cut = -1
    comp: Compaction | None = None
    for i, entry in enumerate(path):
        if not isinstance(entry, Config | Compaction):
            continue
        replay = replay_step(replay, entry)
        if isinstance(entry, Compaction):
            comp, cut = entry, i
        if replay.model != models[-1][1]:
            models.append((i, replay.model))
    problems = list(replay.problems)

    items: list[JSON] = []
    item_entries: list[str] = []
    selected: Sequence[Entry] = path
    if comp is not None:
        kept = next((i for i in range(cut) if path[i].id == comp.first_kept), None)
        if kept is None:
            problems.append(
                f"bad-first-kept: compaction {comp.id} names first_kept {comp.first_kept!r}, "
                "not an entry on the path before it"
            )
            kept = cut
        selected = [comp, *path[kept:cut], *path[cut + 1 :]]
        folded = [comp.summary] if isinstance(comp.summary, dict) else []
        if not folded:
            problems.append(f"bad-compaction: compaction {comp.id} has no summary item")
        folded.extend(p for p in comp.pinned or () if isinstance(p, dict))
        items.extend(folded)
        item_entries.extend(str(comp.id) for _ in folded)

    omit = _omit_of(replay)
    model_at = _models_by_entry(path, models) if omit is not None and omit.model else {}
    omitted: list[dict[str, str]] = []
    for entry in selected:
        if isinstance(entry, Item):
            if omit is not None:
                reason = omit.reason(entry, model_at.get(id(entry)))
                if reason is not None:
                    omitted.append({"entry": str(entry.id), "reason": reason})
                    continue
            item = entry.item
        elif isinstance(entry, BranchSummary):
            item = entry.summary
        else:
            continue
        if item is None:
            problems.append(f"bad-item: {entry.type} {entry.id} carries no item object")
            continue
        items.append(item)
        item_entries.append(str(entry.id))
    return Context(
        settings=replay.settings(),
        items=items,
        entries=[str(e.id) for e in selected],
        item_entries=item_entries,
        omitted=omitted,
        problems=problems,
        instructions_rebuilt=replay.instructions is not None,
    )


def _models_by_entry(
    path: Sequence[Entry], models: list[tuple[int, str | None]]
) -> dict[int, str | None]:
    """``id(entry)`` -> model in force when each item entry was written (replayed settings)."""
    out: dict[int, str | None] = {}
    bounds = [*(i for i, _ in models[1:]), len(path)]
    for (start, model), stop in zip(models, bounds, strict=True):
        for entry in path[start:stop]:
            if isinstance(entry, Item):
                out[id(entry)] = model
    return out


def context_at(session: SessionFile, leaf: str) -> Context:
    """The context a model call appended after ``leaf`` would receive."""
    if leaf not in session.by_id:
        raise ContextError(f"no entry {leaf} in the session")
    return build_context(session.path_to(leaf))
