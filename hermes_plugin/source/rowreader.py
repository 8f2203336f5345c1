"""Hermes rows structured by cattrs: the cells of one row into a :class:`Session`,
:class:`Message` or :class:`Delegation`.

:func:`make_converter` builds the converter. Each decoded field is read from its column by a
hook made for that column (:mod:`hermes_plugin.source.cellhooks`, wired with
``override(rename=<column>, struct_hook=...)``), and no hook coerces: text that spells a number
stays text, a number is not text. A cell that does not hold what Hermes writes is read as Hermes
reads it and noted, ``<column>: <why>``, on the row's ``problems``, in the order the class lists
its fields. Columns no field reads are ignored here and kept verbatim in the row's ``cols``. A
row whose id, session or role cannot be read is not structured from its cells: it carries
``error`` (and becomes a stray).

:class:`RowReader` is what a store reads rows with: one converter per database.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import cattrs
from cattrs.gen import make_dict_structure_fn, override

from hermes_plugin.source import cellhooks as hooks
from hermes_plugin.source.columns import Columns, RawText, cell_text
from hermes_plugin.source.decode import describe
from hermes_plugin.source.rowlayout import NULL_NOTED, MessageLayout
from hermes_plugin.source.rows import Delegation, Message, Session, message_unit, session_unit

__all__ = ["RowReader", "make_converter"]

#: Cell types that are never invalid text.
_PLAIN_CELLS = frozenset({type(None), str, int, float})

#: Session columns read as text.
_SESSION_TEXTS = ("end_reason", "session_key", "cwd", "git_branch", "git_repo_root", "title")
#: Message columns read as text, and as JSON (the carriers Hermes writes JSON text into).
_MESSAGE_TEXTS = (
    "tool_call_id",
    "tool_name",
    "finish_reason",
    "reasoning",
    "reasoning_content",
    "api_content",
    "effect_disposition",
    "display_kind",
    "message_uid",
    "tool_call_uid",
)
#: JSON columns Hermes' conversation reader parses with ``json.loads`` (a BLOB too).
_REPLY_JSON = ("reasoning_details", "codex_reasoning_items", "codex_message_items")


def make_converter(
    note: hooks.Note, message_cells: Mapping[str, tuple[str, hooks.Hook]] | None = None
) -> cattrs.Converter:
    """The converter for Hermes' rows; its hooks report each damaged cell to ``note``
    (``message_cells``: :func:`message_hooks` of ``note``, when the caller has them).

    The input of a structure call is a row's cells by column name, with the members the
    reader computed (``unit``, ``cols``, ``problems``, ``error`` and the checked identity)
    set over any column of the same name: the row's ``cols`` keep that column's cell. A
    message's NULL cells may be left out but for the columns of
    :data:`~hermes_plugin.source.rowlayout.NULL_NOTED`: each
    other message hook reads a NULL as its field's default, unnoted.
    """
    conv = cattrs.Converter(forbid_extra_keys=False)
    given = override(struct_hook=hooks.given)

    def col(column: str, hook: Callable[..., hooks.Hook], *args: Any) -> Any:
        return override(rename=column, struct_hook=hook(note, column, *args))

    computed: dict[str, Any] = {
        "unit": given,
        "id": given,
        "cols": given,
        "problems": override(struct_hook=hooks.as_tuple),
        "error": given,
    }
    session: dict[str, Any] = {
        **computed,
        "source": col("source", hooks.source),
        "model_config": col("model_config", hooks.model_config),
        "started_at": col("started_at", hooks.time, True),
        "parent_id": col("parent_session_id", hooks.text_or_none),
        "model": col("model", hooks.text),
        "system_prompt": col("system_prompt", hooks.text),
        "system_prompt_hash": col("system_prompt_hash", hooks.text_or_none),
        "ended_at": col("ended_at", hooks.time),
        **{name: col(name, hooks.text) for name in _SESSION_TEXTS},
        "archived": col("archived", hooks.flag, False),
    }
    message: dict[str, Any] = {
        **computed,
        "session_id": given,
        "role": given,
        "has_summary": given,
        **{
            name: override(rename=column, struct_hook=hook)
            for name, (column, hook) in (message_cells or message_hooks(note)).items()
        },
    }
    lenient = override(struct_hook=hooks.lenient_text)
    delegation: dict[str, Any] = {
        "cols": given,
        "id": override(rename="delegation_id", struct_hook=hooks.string),
        "parent_session_id": lenient,
        "origin_session": lenient,
        "origin_session_id": lenient,
        "state": lenient,
    }
    for cls, overrides in ((Session, session), (Message, message), (Delegation, delegation)):
        # Generated on first use (a factory), so a run reading no message row never makes it.
        conv.register_structure_hook_factory(_is(cls), _made(conv, overrides))
    return conv


def message_hooks(note: hooks.Note) -> dict[str, tuple[str, hooks.Hook]]:
    """Each decoded field of :class:`Message`: the column it is read from and the hook reading
    it, damage reported to ``note``. Shared by cattrs' structure code and the positional
    reader of common rows (:mod:`hermes_plugin.source.rowlayout`), which must read alike."""

    def col(column: str, hook: Callable[..., hooks.Hook], *args: Any) -> tuple[str, hooks.Hook]:
        return column, hook(note, column, *args)

    return {
        "content": col("content", hooks.content),
        "calls": col("tool_calls", hooks.tool_calls),
        "display_metadata": col("display_metadata", hooks.display_metadata),
        "timestamp": col("timestamp", hooks.time, True),
        **{name: col(name, hooks.text) for name in _MESSAGE_TEXTS},
        **{name: col(name, hooks.reply_json) for name in _REPLY_JSON},
        "absorbed_message_uids": col("absorbed_message_uids", hooks.json),
        "platform_message_id": col("platform_message_id", hooks.platform_id),
        "tool_call_uids": col("tool_call_uids", hooks.json_object),
        "active": col("active", hooks.flag, True),
        "compacted": col("compacted", hooks.flag, False),
        "observed": col("observed", hooks.flag, False),
        "summary": col("_compressed_summary", hooks.flag, False),
    }


def _is(cls: type) -> Callable[[Any], bool]:
    return lambda tp: tp is cls


def _made(conv: cattrs.Converter, overrides: dict[str, Any]) -> Callable[[Any], Any]:
    return lambda tp: make_dict_structure_fn(tp, conv, **overrides)


def _raw_text_problems(cols: Columns) -> list[str]:
    """A row's problems before any column is read: each text cell that is not UTF-8."""
    if not RawText.made:  # no cell is RawText: most runs read no such cell at all
        return []
    values = cols.values()
    # Most rows hold only plain cells: look at the (few) types present before each cell.
    if set(map(type, values)) <= _PLAIN_CELLS:
        return []
    return [
        f"{name}: invalid UTF-8 (kept as bytes)"
        for name, value in zip(cols.names(), values, strict=True)
        if isinstance(value, RawText)
    ]


def _unstructurable(exc: cattrs.BaseValidationError) -> str:
    """A row a hook failed on (a bug, not damage: hooks read every cell): cattrs' lines."""
    return "cannot read the row: " + "; ".join(cattrs.transform_error(exc, path="row"))


class RowReader:
    """Reads the rows of one database, named ``database`` in their units."""

    def __init__(self, database: str) -> None:
        self.database = database
        self._noted: list[str] = []
        # One set of cell hooks, for cattrs and the positional reader alike.
        self._hooks = message_hooks(self._note)
        self._converter = make_converter(self._note, self._hooks)
        #: The layout of the table whose rows were last read (its rows share their names),
        #: and of every table read.
        self._layout: tuple[tuple[str, ...], MessageLayout | None] = ((), None)
        self._layouts: dict[tuple[str, ...], MessageLayout | None] = {}

    @functools.cached_property
    def _session(self) -> Callable[[Any, Any], Session]:
        # Each class's hook is generated on first use: planning reads no message row.
        return self._converter.get_structure_hook(Session)

    @functools.cached_property
    def _message(self) -> Callable[[Any, Any], Message]:
        return self._converter.get_structure_hook(Message)

    @functools.cached_property
    def _delegation(self) -> Callable[[Any, Any], Delegation]:
        return self._converter.get_structure_hook(Delegation)

    def warm(self) -> None:
        """Generate the structure code of every row class now (else done on first use)."""
        for hook in (self._session, self._message, self._delegation):
            assert hook is not None  # noqa: S101 - the properties' side effect is the point

    def _note(self, column: str, why: str) -> None:
        self._noted.append(f"{column}: {why}")

    def session(self, cols: Columns, position: int = 0) -> Session:
        """A row of ``sessions``; ``position`` names a row whose id is unusable."""
        cells: dict[str, Any] = cols.mapping()
        self._noted = problems = _raw_text_problems(cols)
        raw_id = cells.get("id")
        # An id that is not valid UTF-8 names no row a query can find again.
        session_id = raw_id if isinstance(raw_id, str) else None
        if not session_id:
            why = describe(raw_id) if cols.has("id") else "absent"
            unit = session_unit(self.database, f"#{position}")
            ident = {"unit": unit, "id": "", "cols": cols, "problems": problems}
            return self._session_of({**ident, "error": f"id is {why}"})
        ident = {
            "unit": session_unit(self.database, session_id),
            "id": session_id,
            "cols": cols,
            "problems": problems,
        }
        cells.setdefault("source", None)  # Hermes always has one: a table without reads as NULL
        cells.update(ident, error=None)
        try:
            return self._session_of(cells)
        except cattrs.BaseValidationError as exc:
            return self._session_of({**ident, "error": _unstructurable(exc)})

    def message(self, cols: Columns, position: int | str = 0) -> Message:
        """A row of ``messages``; ``position`` names a row whose id is unusable (``#<position>``:
        the database reader makes it unique in the store, ``<n>@<session>`` for the n-th row
        of a session, ``<n>?<group>`` for rows naming no session as text)."""
        self._noted = problems = _raw_text_problems(cols)
        layout = self._layout_of(cols.names())
        if layout is not None:
            read = layout.read(cols, self.database, problems)
            if read is not None:
                return read
            self._noted = problems = _raw_text_problems(cols)
        cells: dict[str, Any] = cols.non_null(NULL_NOTED)
        raw_id = cells.get("id")
        # The exact types first: the cells of nearly every row.
        message_id = raw_id if type(raw_id) is int else _integer(raw_id)
        session_id = cells.get("session_id")
        if type(session_id) is not str:
            session_id = cell_text(session_id)
        role = cells.get("role")
        if type(role) is not str:
            role = cell_text(role)
        # The members the reader computed, set over the columns of the same name.
        key = f"#{position}" if message_id is None else str(message_id)
        cells["unit"] = message_unit(self.database, key)
        cells["id"] = -1 if message_id is None else message_id
        cells["session_id"] = session_id or ""
        cells["role"] = role or ""
        cells["cols"] = cols
        cells["problems"] = problems
        if message_id is None or not session_id or role is None:
            return self._message_of(_stray_members(cells, _why_unreadable(cols)))
        # ``error`` and ``has_summary`` are left to their defaults (None, False) unless a
        # column of the same name is there to be overridden: fewer members to structure.
        if cols.has("_compressed_summary"):
            cells["has_summary"] = True
        elif "has_summary" in cells:
            cells["has_summary"] = False
        if "error" in cells:
            cells["error"] = None
        try:
            message: Message = self._message(cells, Message)
        except cattrs.BaseValidationError as exc:
            return self._message_of(_stray_members(cells, _unstructurable(exc)))
        return message

    def _layout_of(self, names: tuple[str, ...]) -> MessageLayout | None:
        """The layout of a table with these columns, made once."""
        last, layout = self._layout
        if names is not last:
            if names not in self._layouts:
                self._layouts[names] = MessageLayout.of(names, self._hooks)
            layout = self._layouts[names]
            self._layout = (names, layout)
        return layout

    def delegation(self, cols: Columns) -> Delegation:
        """A row of ``async_delegations``."""
        cells: dict[str, Any] = cols.mapping()
        cells["cols"] = cols
        delegation: Delegation = self._delegation(cells, Delegation)
        return delegation

    def _session_of(self, members: dict[str, Any]) -> Session:
        session: Session = self._session(members, Session)
        return session

    def _message_of(self, members: dict[str, Any]) -> Message:
        message: Message = self._message(members, Message)
        return message


#: The members of a message the reader computes, an unstructurable row's included.
_MESSAGE_IDENT = ("unit", "id", "session_id", "role", "cols", "problems")


def _stray_members(cells: dict[str, Any], error: str) -> dict[str, Any]:
    """The members of a row that cannot be read or structured: those the reader computed,
    and why."""
    return {**{name: cells[name] for name in _MESSAGE_IDENT}, "error": error}


def _integer(cell: object) -> int | None:
    """An integer cell's value (not a bool); None for any other cell."""
    return cell if isinstance(cell, int) and not isinstance(cell, bool) else None


def _why_unreadable(cols: Columns) -> str:
    """Why a message row cannot be read: no integer id, no session, or no role."""
    if cols.int("id") is None:
        return f"id is {describe(cols.get('id')) if cols.has('id') else 'absent'}"
    if not cell_text(cols.get("session_id")):
        return f"session_id is {describe(cols.get('session_id'))}"
    return f"role is {describe(cols.get('role'))}"
