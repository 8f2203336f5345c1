"""One file's lines as a table: the facts the tree and the second pass need, a few bytes each.

A Python object per line would cost more than everything else the conversion keeps; so the
facts live in columns (arrays, one list of uuids, sparse maps for what few lines have), and a
:class:`Line` is a view made when a line is looked at.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any, Final

from claude_code_plugin.source.lines import RawLine

__all__ = [
    "ASSISTANT",
    "BOUNDARY",
    "META",
    "PROMPT",
    "SIDECHAIN",
    "SUMMARY",
    "TRUNCATED",
    "USER",
    "Draft",
    "Env",
    "Line",
    "LineTable",
]

# Bits of ``Line.flags``.
SIDECHAIN: Final = 1
META: Final = 2
PROMPT: Final = 4
SUMMARY: Final = 8
BOUNDARY: Final = 16
TRUNCATED: Final = 32
USER: Final = 64
ASSISTANT: Final = 128

Env = tuple[str | None, str | None, str | None]
_NO_ENV: Final[Env] = (None, None, None)


class _Facts:
    """The facts derived from a line's ``flags``, ``uuid`` and ``env``."""

    __slots__ = ()
    flags: int
    uuid: str | None
    env: Env

    @property
    def role(self) -> str | None:
        """``user``/``assistant`` when the line carries a message the tree can place."""
        return "user" if self.flags & USER else "assistant" if self.flags & ASSISTANT else None

    @property
    def transcript(self) -> bool:
        """A transcript entry: a line with a uuid, part of the conversation tree."""
        return self.uuid is not None

    @property
    def sidechain(self) -> bool:
        return bool(self.flags & SIDECHAIN)

    @property
    def meta(self) -> bool:
        """``isMeta``: written by Claude Code for the model, not typed by the user."""
        return bool(self.flags & META)

    @property
    def prompt(self) -> bool:
        """A user line holding something other than tool results (a typed prompt, text)."""
        return bool(self.flags & PROMPT)

    @property
    def summary(self) -> bool:
        """``isCompactSummary``: the summary opening a compacted conversation."""
        return bool(self.flags & SUMMARY)

    @property
    def boundary(self) -> bool:
        """A ``system`` line of subtype ``compact_boundary``."""
        return bool(self.flags & BOUNDARY)

    @property
    def truncated(self) -> bool:
        """An unreadable last line without its newline: one still being written."""
        return bool(self.flags & TRUNCATED)

    @property
    def cwd(self) -> str | None:
        return self.env[0]

    @property
    def branch(self) -> str | None:
        return self.env[1]

    @property
    def version(self) -> str | None:
        return self.env[2]


class Draft(_Facts):
    """One line's facts while it is being indexed (then stored in a :class:`LineTable`)."""

    __slots__ = (
        "agent",
        "calls",
        "env",
        "flags",
        "logical",
        "model",
        "msg",
        "number",
        "offset",
        "parent",
        "parent_at",
        "results",
        "size",
        "type",
        "unreadable",
        "uuid",
    )

    def __init__(self, raw: RawLine) -> None:
        self.number = raw.number
        self.offset = raw.offset
        self.size = raw.size
        self.type: str | None = None
        self.uuid: str | None = None
        self.parent: str | None = None
        self.parent_at = -1
        self.logical: str | None = None
        self.flags = 0
        self.msg: str | None = None
        self.model: str | None = None
        self.calls: tuple[str, ...] = ()
        self.results: tuple[str, ...] = ()
        self.agent: str | None = None
        self.env: Env = _NO_ENV
        self.unreadable: str | None = None

    def set(self, flag: int, on: bool) -> None:
        if on:
            self.flags |= flag
        else:
            self.flags &= ~flag


class Line(_Facts):
    """A view of one indexed line (made on access; the table holds the facts).

    ``type`` is the line's ``type`` (None for a line that cannot be read); ``msg`` and
    ``model`` are an assistant line's ``message.id`` and ``message.model``; ``calls`` its tool
    use ids, ``results`` the tool use ids a user line's results answer; ``logical`` a compact
    boundary's ``logicalParentUuid``; ``agent`` the sub-agent a Task result
    (``toolUseResult.agentId``) or an ``agent_progress`` line names; ``env`` the line's
    ``(cwd, gitBranch, version)``; ``unreadable`` why the line cannot be read. ``msg`` is
    the response's key (``message.id``, with the line's ``requestId`` when it has one), not
    for output: the message id is read from the line.
    """

    __slots__ = ("_at", "_table")

    def __init__(self, table: LineTable, at: int) -> None:
        self._table = table
        self._at = at

    @property
    def number(self) -> int:
        return self._table.numbers[self._at]

    @property
    def offset(self) -> int:
        return self._table.offsets[self._at]

    @property
    def size(self) -> int:
        return self._table.sizes[self._at]

    @property
    def flags(self) -> int:  # type: ignore[override]
        return self._table.flags[self._at]

    @property
    def uuid(self) -> str | None:  # type: ignore[override]
        return self._table.uuids[self._at]

    @property
    def parent(self) -> str | None:
        """The ``parentUuid`` (None for a root)."""
        at = self._table.parent_at[self._at]
        return self._table.uuids[at] if at >= 0 else self._table.sparse.get((self._at, "parent"))

    @property
    def parent_at(self) -> int:
        """The parent's position when it was indexed before this line, else -1."""
        return self._table.parent_at[self._at]

    @property
    def msg(self) -> str | None:
        return self._table.msgs[self._at]

    @property
    def env(self) -> Env:  # type: ignore[override]
        return self._table.envs[self._table.env_codes[self._at]]

    @property
    def type(self) -> str | None:
        return self._table.types[self._table.type_codes[self._at]]

    @property
    def calls(self) -> tuple[str, ...]:
        return self._table.calls.get(self._at, ())

    @property
    def results(self) -> tuple[str, ...]:
        return self._table.results.get(self._at, ())

    @property
    def logical(self) -> str | None:
        return self._table.sparse.get((self._at, "logical"))

    @property
    def model(self) -> str | None:
        return self._table.sparse.get((self._at, "model"))

    @property
    def agent(self) -> str | None:
        return self._table.sparse.get((self._at, "agent"))

    @property
    def unreadable(self) -> str | None:
        return self._table.sparse.get((self._at, "unreadable"))


class LineTable:
    """Every line's facts, column by column: a few bytes a line, plus its uuid.

    A Python object per line would cost more than the rest of the index together.
    """

    def __init__(self) -> None:
        self.numbers = array("i")
        self.offsets = array("q")
        self.sizes = array("q")
        self.flags = array("B")
        self.type_codes = array("H")
        self.types: list[str | None] = [None]
        self._type_code: dict[str | None, int] = {None: 0}
        self.env_codes = array("H")
        self.envs: list[Env] = [_NO_ENV]
        self._env_code: dict[Env, int] = {_NO_ENV: 0}
        self.uuids: list[str | None] = []
        #: Position of the line's parent when it was indexed before the line, else -1 (the
        #: parent's uuid, if any, is then in ``sparse``): the string is the parent's own.
        self.parent_at = array("i")
        self.msgs: list[str | None] = []
        self.calls: dict[int, tuple[str, ...]] = {}
        self.results: dict[int, tuple[str, ...]] = {}
        #: The facts few lines have: (position, name) -> value.
        self.sparse: dict[tuple[int, str], str] = {}

    def _code(self, codes: dict[Any, int], values: list[Any], value: Any) -> int:
        code = codes.get(value)
        if code is None:
            code = codes[value] = len(values)
            values.append(value)
        return code

    def append(self, draft: Draft) -> None:
        at = len(self.numbers)
        self.numbers.append(draft.number)
        self.offsets.append(draft.offset)
        self.sizes.append(draft.size)
        self.flags.append(draft.flags)
        self.type_codes.append(self._code(self._type_code, self.types, draft.type))
        self.env_codes.append(self._code(self._env_code, self.envs, draft.env))
        self.uuids.append(draft.uuid)
        self.parent_at.append(draft.parent_at)
        self.msgs.append(draft.msg)
        if draft.calls:
            self.calls[at] = draft.calls
        if draft.results:
            self.results[at] = draft.results
        if draft.parent_at < 0 and draft.parent is not None:
            self.sparse[(at, "parent")] = draft.parent
        for name in ("logical", "model", "agent", "unreadable"):
            value = getattr(draft, name)
            if value is not None:
                self.sparse[(at, name)] = value

    def __len__(self) -> int:
        return len(self.numbers)

    def __getitem__(self, at: int) -> Line:
        if at < 0:
            at += len(self)
        if not 0 <= at < len(self):
            raise IndexError(at)
        return Line(self, at)

    def __iter__(self) -> Iterator[Line]:
        return (Line(self, at) for at in range(len(self)))
