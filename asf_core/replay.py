"""Replaying settings along a path: ``config`` deltas and compaction checkpoints (section 7).

A :class:`Replay` holds the settings in force at one point of a path, plus what resolving the
next delta needs (the instruction parts in force, the texts that left force, the omitted lists
by config). :func:`replay_step` moves it past one entry. :mod:`asf_core.context` replays a
whole path; the verifier keeps one replay per branch while it walks a file's tree once
(:meth:`Replay.copy` at a fork).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import define, field

from asf_core.instructions import (
    History,
    depart,
    join_parts,
    resolve_omitted,
    resolve_parts,
)
from asf_core.model import Compaction, Config, Entry

__all__ = ["Replay", "replay_step"]

JSON = dict[str, Any]


@define
class Replay:
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
    def from_checkpoint(cls, entry: Compaction) -> Replay:
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

    def copy(self) -> Replay:
        """An independent copy: what one branch does to it, another does not see."""
        return Replay(
            model=self.model,
            instructions=self.instructions,
            parts=None if self.parts is None else list(self.parts),
            history={ident: list(texts) for ident, texts in self.history.items()},
            omitted=None if self.omitted is None else list(self.omitted),
            omitted_lists=dict(self.omitted_lists),
            omit=dict(self.omit),
            reasoning=self.reasoning,
            text=self.text,
            tools=list(self.tools),
            extra=dict(self.extra),
            problems=list(self.problems),
        )


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


def replay_step(replay: Replay, entry: Entry) -> Replay:
    """The settings after ``entry``: a config delta applied (a ``replace`` starts afresh), a
    compaction's checkpoint taken (problems so far carried), anything else changing nothing.

    ``replay`` itself may be changed and returned, or a new one returned.
    """
    if isinstance(entry, Config):
        if entry.replace:
            replay = Replay(problems=replay.problems)
        replay.apply(entry)
    elif isinstance(entry, Compaction):
        carried = replay.problems
        replay = Replay.from_checkpoint(entry)
        replay.problems[:0] = carried
    return replay
