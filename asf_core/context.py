"""The context algorithm (draft 0.11 section 7): what a model call at a point on a path receives.

Settings are replayed from ``config`` deltas (a compaction's ``config`` is a full checkpoint),
items come from ``item`` entries, branch summaries and the last compaction's summary and pins,
and the ``omit`` in force at the end of the path leaves some item entries out. The canonical
request built from a context hashes to the ``request_hash`` a writer records on a response, so
every rule here decides whether recorded hashes verify: the vectors under
``vectors/testdata/context`` pin the output down.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from attrs import define, field, frozen

from asf_core.instructions import (
    History,
    depart,
    join_parts,
    resolve_omitted,
    resolve_parts,
)
from asf_core.model import BranchSummary, Compaction, Config, Entry, Item

if TYPE_CHECKING:
    from asf_core.reader import SessionFile

__all__ = [
    "Context",
    "ContextError",
    "SettingsReplay",
    "build_context",
    "context_at",
]

JSON = dict[str, Any]


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


@define
class _Replay:
    """The settings being replayed along a path, plus what resolving later deltas needs.

    Mutable on purpose: one replay walks a path once, entry by entry.
    """

    model: str | None = None
    #: The instructions string in force; ``None`` when it cannot be rebuilt.
    instructions: str | None = ""
    #: The parts in force, or ``None`` when the instructions were set as one string.
    parts: list[JSON] | None = None
    history: History = field(factory=dict)
    omitted: list[JSON] | None = None
    #: Omitted lists put in force by config entries since the last replace/checkpoint (``of``).
    omitted_lists: dict[str, list[JSON]] = field(factory=dict)
    omit: JSON = field(factory=dict)
    reasoning: JSON | None = None
    text: JSON | None = None
    tools: list[JSON] = field(factory=list)
    extra: JSON = field(factory=dict)
    problems: list[str] = field(factory=list)

    @classmethod
    def from_checkpoint(cls, entry: Compaction) -> _Replay:
        """Settings from a compaction's full ``config``; history and ``of`` targets reset."""
        out = cls()
        cfg = entry.config or {}
        model = cfg.get("model")
        out.model = model if isinstance(model, str) else None
        parts = cfg.get("instructions_parts")
        instructions = cfg.get("instructions")
        if isinstance(parts, list) and parts:
            resolved = resolve_parts(parts, [], {})
            out.parts = list(resolved.elements)
            out.problems.extend(f"bad-checkpoint: {entry.id}: {p}" for p in resolved.problems)
            joined = join_parts(out.parts)
            out.instructions = instructions if isinstance(instructions, str) else joined
        else:
            out.instructions = instructions if isinstance(instructions, str) else ""
        omitted = cfg.get("instructions_omitted")
        if isinstance(omitted, list):
            out.omitted = [dict(e) if isinstance(e, dict) else e for e in omitted]
        omit = cfg.get("omit")
        if isinstance(omit, dict):
            out.omit = dict(omit)
        for name in ("reasoning", "text"):
            value = cfg.get(name)
            if isinstance(value, dict):
                setattr(out, name, value)
        tools = cfg.get("tools")
        if isinstance(tools, list):
            out.tools = list(tools)
        extra = cfg.get("extra")
        if isinstance(extra, dict):
            out.extra = {k: v for k, v in extra.items() if v is not None}
        return out

    def apply(self, c: Config) -> None:
        """Apply one config delta (the caller starts a fresh replay for ``replace``)."""
        mistyped = [k for k in _CONFIG_MEMBERS if c.unknown.get(k) is not None]
        self.problems.extend(
            f"mistyped-member: {c.id}: {k} has the wrong JSON type" for k in mistyped
        )
        if c.model is not None:
            self.model = c.model
        self._apply_instructions(c, mistyped)
        if c.instructions_omitted is not None:
            resolved = resolve_omitted(
                c.instructions_omitted, self.omitted or [], self.omitted_lists
            )
            self.problems.extend(f"unresolved-omitted: {c.id}: {p}" for p in resolved.problems)
            self.omitted = list(resolved.elements)
            if c.id is not None:
                self.omitted_lists[c.id] = self.omitted
        if c.omit is not None:
            self._apply_omit(c.omit)
        if c.reasoning is not None:
            self.reasoning = c.reasoning
        if c.text is not None:
            self.text = c.text
        for gone in c.tools_removed or ():
            self.tools = [t for t in self.tools if _tool_name(t) != gone]
        for tool in c.tools_added or ():
            # A tool re-added under a name in force moves to the end, as the reference
            # library orders it: the order reaches the request, and so its hash.
            name = _tool_name(tool)
            if name is not None:
                self.tools = [t for t in self.tools if _tool_name(t) != name]
            self.tools.append(tool)
        for key, value in (c.extra or {}).items():
            if value is None:
                self.extra.pop(key, None)
            else:
                self.extra[key] = value

    def _apply_instructions(self, c: Config, mistyped: Sequence[str]) -> None:
        before = self.parts or []
        if "instructions_parts" in mistyped or "instructions" in mistyped:
            # What the model was sent cannot be known from this entry.
            depart(before, [], self.history)
            self.parts = None
            self.instructions = c.instructions
        elif c.instructions_parts is not None:
            resolved = resolve_parts(c.instructions_parts, before, self.history)
            self.problems.extend(f"unresolved-part: {c.id}: {p}" for p in resolved.problems)
            self.parts = list(resolved.elements)
            depart(before, self.parts, self.history)
            joined = join_parts(self.parts)
            if c.instructions is not None and joined is not None and joined != c.instructions:
                self.problems.append(
                    f"instructions-mismatch: {c.id}: instructions differ from the joined parts"
                )
            self.instructions = joined if joined is not None else c.instructions
        elif c.instructions is not None:
            depart(before, [], self.history)
            self.parts = None
            self.instructions = c.instructions

    def _apply_omit(self, delta: Mapping[str, Any]) -> None:
        if not delta:
            self.omit = {}
            return
        for key, value in delta.items():
            if key == "items" and isinstance(value, list):
                have = self.omit.get("items")
                merged = list(have) if isinstance(have, list) else []
                merged.extend(x for x in value if x not in merged)
                self.omit["items"] = merged
            elif value is None:
                self.omit.pop(key, None)
            else:
                self.omit[key] = value

    def settings(self) -> JSON:
        """The settings object, members in checkpoint shape, empty ones left out."""
        members: tuple[tuple[str, Any], ...] = (
            ("model", self.model),
            ("instructions", self.instructions),
            ("instructions_parts", list(self.parts or ())),
            ("instructions_omitted", list(self.omitted or ())),
            ("omit", {k: v for k, v in self.omit.items() if v not in (None, [])}),
            ("reasoning", self.reasoning),
            ("text", self.text),
            ("tools", list(self.tools)),
            ("extra", dict(self.extra)),
        )
        return {name: value for name, value in members if value}


#: The settings replay, public for consumers that walk a path entry by entry themselves (the
#: exporters), so they apply config deltas and checkpoints exactly as the context does.
SettingsReplay = _Replay


#: Config members whose value, when of the wrong JSON type, the codec parks in ``unknown``.
_CONFIG_MEMBERS = (
    "model",
    "instructions",
    "instructions_parts",
    "instructions_omitted",
    "omit",
    "reasoning",
    "text",
    "tools_added",
    "tools_removed",
    "extra",
    "replace",
)


def _tool_name(tool: Any) -> str | None:
    name = tool.get("name") if isinstance(tool, dict) else None
    return name if isinstance(name, str) and name else None


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


def _omit_of(replay: _Replay) -> _Omit | None:
    listed = replay.omit.get("items")
    items = frozenset(x for x in listed if isinstance(x, str)) if isinstance(listed, list) else ()
    other = replay.omit.get("reasoning") == "other_models"
    if not items and not (other and replay.model):
        return None
    return _Omit(items=frozenset(items), model=replay.model if other else None)


def build_context(path: Sequence[Entry]) -> Context:
    """Run the context algorithm over a root-first path of entries (root … leaf)."""
    replay = _Replay()
    #: (path index, model in force from there on), for attributing reasoning to models.
    models: list[tuple[int, str | None]] = [(0, None)]
    cut = -1
    comp: Compaction | None = None
    for i, entry in enumerate(path):
        if isinstance(entry, Config):
            if entry.replace:
                replay = _Replay(problems=replay.problems)
            replay.apply(entry)
        elif isinstance(entry, Compaction):
            carried = replay.problems
            replay = _Replay.from_checkpoint(entry)
            replay.problems[:0] = carried
            comp, cut = entry, i
        else:
            continue
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
