"""Hermes rows structured by cattrs: the cells of one row into a :class:`Session`,
:class:`Message` or :class:`Delegation`.

:func:`make_converter` builds the converter. Each decoded field is read from its column by a
hook made for that column (``override(rename=<column>, struct_hook=...)``), and no hook
coerces: text that spells a number stays text, a number is not text. A cell that does not
hold what Hermes writes is read as Hermes reads it and noted, ``<column>: <why>``, on the
row's ``problems``, in the order the class lists its fields. Columns no field reads are
ignored here and kept verbatim in the row's ``cols``. A row whose id, session or role cannot be
read is not structured from its cells: it carries ``error`` (and becomes a stray).

:class:`RowReader` is what a store reads rows with: one converter per database.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cattrs
from cattrs.gen import make_dict_structure_fn, override

from hermes_plugin.schema import MARKER_BRANCH, MARKER_DELEGATE, MARKER_RESET
from hermes_plugin.source.columns import Cell, Columns, RawText, cell_text
from hermes_plugin.source.decode import (
    decode_content,
    decode_display_metadata,
    decode_epoch,
    decode_json_column,
    describe,
)
from hermes_plugin.source.jsontext import JsonValue
from hermes_plugin.source.rows import Delegation, Message, Session, message_unit, session_unit
from hermes_plugin.source.toolcalls import ToolCalls, decode_tool_calls

__all__ = ["RowReader", "make_converter"]

#: Records a problem with a cell: its column, and why.
Note = Callable[[str, str], None]
#: A cattrs structure hook: the cell (or given value) and the field's type.
Hook = Callable[[Any, Any], Any]
#: Makes the hook of one column.
Factory = Callable[[Note, str], Hook]

_MARKERS = (MARKER_BRANCH, MARKER_DELEGATE, MARKER_RESET)

#: Cell types that are never invalid text.
_PLAIN_CELLS = frozenset({type(None), str, int, float})


def _given(value: Any, _: Any) -> Any:
    """A member the reader computed (the unit, the checked id, the row's columns)."""
    return value


def _tuple(value: Any, _: Any) -> tuple[Any, ...]:
    return tuple(value)


def _text(note: Note, column: str) -> Hook:
    def text(cell: Cell, _: Any) -> str | None:
        if cell is None or type(cell) is str:
            return cell
        value = cell_text(cell)
        if value is None:
            note(column, f"{describe(cell)}, not text")
        return value

    return text


def _text_or_none(note: Note, column: str) -> Hook:
    """Text, with ``''`` read as unset."""
    read = _text(note, column)
    return lambda cell, tp: read(cell, tp) or None


def _source(note: Note, column: str) -> Hook:
    """``source``, which Hermes never leaves NULL: a NULL reads as ``''``."""
    read = _text(note, column)

    def source(cell: Cell, tp: Any) -> str:
        value: str | None = read(cell, tp)
        if value is None:
            note(column, "null")
            return ""
        return value

    return source


def _platform_id(note: Note, column: str) -> Hook:
    """``platform_message_id``: a platform's id, which callers may have bound as a number."""
    read = _text(note, column)

    def platform_id(cell: Cell, tp: Any) -> str | None:
        if isinstance(cell, int | float) and not isinstance(cell, bool):
            return str(cell)
        text: str | None = read(cell, tp)
        return text

    return platform_id


def _flag(note: Note, column: str, default: bool) -> Hook:
    """A numeric column as a flag: non-zero is true; NULL (an old migration's) is
    ``default``."""

    def flag(cell: Cell, _: Any) -> bool:
        if cell is None:
            return default
        if isinstance(cell, bool) or not isinstance(cell, int | float):
            note(column, f"{describe(cell)}, not a number; read as {int(default)}")
            return default
        return float(cell) != 0

    return flag


def _time(note: Note, column: str, null_noted: bool = False) -> Hook:
    """Seconds since the epoch in Hermes' trusted window; ``null_noted`` for a column Hermes
    always sets."""

    def time(cell: Cell, _: Any) -> float | None:
        seconds, ok = decode_epoch(cell)
        if not ok:
            note(column, f"{describe(cell)}, not a time in [0, 4.2e9]")
        elif null_noted and cell is None:
            note(column, "null")
        return seconds

    return time


def _decoded(decode: Callable[[Cell], tuple[Any, bool]], why: Callable[[Cell], str]) -> Factory:
    """Hooks for a decoder that says whether the cell held what Hermes writes, and why not."""

    def factory(note: Note, column: str) -> Hook:
        def decoded(cell: Cell, _: Any) -> Any:
            value, ok = decode(cell)
            if not ok:
                note(column, why(cell))
            return value

        return decoded

    return factory


_json = _decoded(decode_json_column, lambda _: "invalid JSON")
_display_metadata = _decoded(decode_display_metadata, lambda _: "not a JSON object; dropped")
_content = _decoded(
    decode_content,
    lambda cell: (
        "'\\x00json:' prefix without valid JSON; kept as text"
        if isinstance(cell, str | RawText)
        else f"{describe(cell)}, not text"
    ),
)


def _json_object(note: Note, column: str) -> Hook:
    read = _json(note, column)

    def json_object(cell: Cell, tp: Any) -> dict[str, JsonValue] | None:
        value = read(cell, tp)
        if value is None or isinstance(value, dict):
            return value
        note(column, "not a JSON object")
        return None

    return json_object


def _model_config(note: Note, column: str) -> Hook:
    """``model_config``: a JSON object whose markers name other sessions."""
    read = _json_object(note, column)

    def model_config(cell: Cell, tp: Any) -> dict[str, JsonValue] | None:
        value: dict[str, JsonValue] | None = read(cell, tp)
        if value is not None:
            for marker in _MARKERS:
                named = value.get(marker)
                if named is not None and not isinstance(named, str):
                    note(column, f"{marker} is not text")
        return value

    return model_config


def _tool_calls(note: Note, column: str) -> Hook:
    def tool_calls(cell: Cell, _: Any) -> ToolCalls:
        calls = decode_tool_calls(cell)
        if calls.error is not None:
            note(column, f"{calls.error}; read as no calls")
        elif calls.bad:
            note(column, f"{len(calls.bad)} entries are not objects")
        elif calls.single:
            note(column, "a single object, not an array; read as a list of one")
        return calls

    return tool_calls


def _lenient_text(cell: Cell, _: Any) -> str | None:
    """Text, or None for any other cell, unnoted (``async_delegations`` is read as is)."""
    return cell_text(cell)


def _string(cell: Cell, _: Any) -> str:
    """Text, or ``''`` for any other cell, unnoted."""
    return cell_text(cell) or ""


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
_MESSAGE_JSON = (
    "reasoning_details",
    "codex_reasoning_items",
    "codex_message_items",
    "absorbed_message_uids",
)


def make_converter(note: Note) -> cattrs.Converter:
    """The converter for Hermes' rows; its hooks report each damaged cell to ``note``.

    The input of a structure call is a row's cells by column name, with the members the
    reader computed (``unit``, ``cols``, ``problems``, ``error`` and the checked identity)
    set over any column of the same name: the row's ``cols`` keep that column's cell.
    """
    conv = cattrs.Converter(forbid_extra_keys=False)
    given = override(struct_hook=_given)

    def col(column: str, hook: Callable[..., Hook], *args: Any) -> Any:
        return override(rename=column, struct_hook=hook(note, column, *args))

    computed: dict[str, Any] = {
        "unit": given,
        "id": given,
        "cols": given,
        "problems": override(struct_hook=_tuple),
        "error": given,
    }
    session: dict[str, Any] = {
        **computed,
        "source": col("source", _source),
        "model_config": col("model_config", _model_config),
        "started_at": col("started_at", _time, True),
        "parent_id": col("parent_session_id", _text_or_none),
        "model": col("model", _text),
        "system_prompt": col("system_prompt", _text),
        "system_prompt_hash": col("system_prompt_hash", _text_or_none),
        "ended_at": col("ended_at", _time),
        **{name: col(name, _text) for name in _SESSION_TEXTS},
        "archived": col("archived", _flag, False),
    }
    message: dict[str, Any] = {
        **computed,
        "session_id": given,
        "role": given,
        "has_summary": given,
        "content": col("content", _content),
        "calls": col("tool_calls", _tool_calls),
        "display_metadata": col("display_metadata", _display_metadata),
        "timestamp": col("timestamp", _time, True),
        **{name: col(name, _text) for name in _MESSAGE_TEXTS},
        **{name: col(name, _json) for name in _MESSAGE_JSON},
        "platform_message_id": col("platform_message_id", _platform_id),
        "tool_call_uids": col("tool_call_uids", _json_object),
        "active": col("active", _flag, True),
        "compacted": col("compacted", _flag, False),
        "observed": col("observed", _flag, False),
        "summary": col("_compressed_summary", _flag, False),
    }
    lenient = override(struct_hook=_lenient_text)
    delegation: dict[str, Any] = {
        "cols": given,
        "id": override(rename="delegation_id", struct_hook=_string),
        "parent_session_id": lenient,
        "origin_session": lenient,
        "origin_session_id": lenient,
        "state": lenient,
    }
    for cls, overrides in ((Session, session), (Message, message), (Delegation, delegation)):
        conv.register_structure_hook(cls, make_dict_structure_fn(cls, conv, **overrides))
    return conv


def _raw_text_problems(cols: Columns) -> list[str]:
    """A row's problems before any column is read: each text cell that is not UTF-8."""
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
        converter = make_converter(self._note)
        self._session = converter.get_structure_hook(Session)
        self._message = converter.get_structure_hook(Message)
        self._delegation = converter.get_structure_hook(Delegation)

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

    def message(self, cols: Columns, position: int = 0) -> Message:
        """A row of ``messages``; ``position`` names a row whose id is unusable."""
        cells: dict[str, Any] = cols.mapping()
        self._noted = problems = _raw_text_problems(cols)
        raw_id = cells.get("id")
        message_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
        session_id = cell_text(cells.get("session_id"))
        role = cell_text(cells.get("role"))
        key = f"#{position}" if message_id is None else str(message_id)
        ident = {
            "unit": message_unit(self.database, key),
            "id": -1 if message_id is None else message_id,
            "session_id": session_id or "",
            "role": role or "",
            "cols": cols,
            "problems": problems,
        }
        if message_id is None or not session_id or role is None:
            return self._message_of({**ident, "error": _why_unreadable(cols)})
        cells.update(ident, has_summary="_compressed_summary" in cells, error=None)
        try:
            return self._message_of(cells)
        except cattrs.BaseValidationError as exc:
            return self._message_of({**ident, "error": _unstructurable(exc)})

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


def _why_unreadable(cols: Columns) -> str:
    """Why a message row cannot be read: no integer id, no session, or no role."""
    if cols.int("id") is None:
        return f"id is {describe(cols.get('id')) if cols.has('id') else 'absent'}"
    if not cell_text(cols.get("session_id")):
        return f"session_id is {describe(cols.get('session_id'))}"
    return f"role is {describe(cols.get('role'))}"
