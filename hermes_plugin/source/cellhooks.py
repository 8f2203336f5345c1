"""The cattrs hooks that read Hermes' cells: one kind of column each, none coercing.

A hook factory takes ``note`` (where a damaged cell is reported) and the column's name and
makes the structure hook of that column. A hook reads a cell exactly as Hermes reads it
(text that spells a number stays text, a number is not text, NULL is unset) and, when the
cell does not hold what Hermes writes, returns Hermes' fallback and notes why:
``note(column, why)``. :func:`hermes_plugin.source.rowreader.make_converter` wires them to the
rows' fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_plugin.schema import (
    CONTENT_PREFIX,
    EPOCH_MAX,
    EPOCH_MIN,
    MARKER_BRANCH,
    MARKER_DELEGATE,
    MARKER_RESET,
)
from hermes_plugin.source.columns import Cell, RawText, cell_text, json_cell_text
from hermes_plugin.source.decode import (
    NULL_CONTENT,
    decode_content,
    decode_display_metadata,
    decode_epoch,
    decode_json_column,
    describe,
)
from hermes_plugin.source.jsontext import JsonValue, parse, why_not
from hermes_plugin.source.toolcalls import ToolCalls, decode_tool_calls

__all__ = [
    "Factory",
    "Hook",
    "Note",
    "as_tuple",
    "content",
    "display_metadata",
    "flag",
    "given",
    "json",
    "json_object",
    "lenient_text",
    "model_config",
    "platform_id",
    "reply_json",
    "source",
    "string",
    "text",
    "text_or_none",
    "time",
    "tool_calls",
]

#: Records a problem with a cell: its column, and why.
Note = Callable[[str, str], None]
#: A cattrs structure hook: the cell (or given value) and the field's type.
Hook = Callable[[Any, Any], Any]
#: Makes the hook of one column.
Factory = Callable[[Note, str], Hook]

_MARKERS = (MARKER_BRANCH, MARKER_DELEGATE, MARKER_RESET)


def given(value: Any, _: Any) -> Any:
    """A member the reader computed (the unit, the checked id, the row's columns)."""
    return value


def as_tuple(value: Any, _: Any) -> tuple[Any, ...]:
    """The problems the hooks noted, once every column is read."""
    return tuple(value)


def text(note: Note, column: str) -> Hook:
    """Text; any other cell reads as no text (a BLOB, a number)."""

    def hook(cell: Cell, _: Any) -> str | None:
        if cell is None or type(cell) is str:
            return cell
        value = cell_text(cell)
        if value is None:
            note(column, f"{describe(cell)}, not text")
        return value

    return hook


def text_or_none(note: Note, column: str) -> Hook:
    """Text, with ``''`` read as unset."""
    read = text(note, column)
    return lambda cell, tp: read(cell, tp) or None


def source(note: Note, column: str) -> Hook:
    """``source``, which Hermes never leaves NULL: a NULL reads as ``''``."""
    read = text(note, column)

    def hook(cell: Cell, tp: Any) -> str:
        value: str | None = read(cell, tp)
        if value is None:
            note(column, "null")
            return ""
        return value

    return hook


def platform_id(note: Note, column: str) -> Hook:
    """``platform_message_id``: a platform's id, which callers may have bound as a number."""
    read = text(note, column)

    def hook(cell: Cell, tp: Any) -> str | None:
        if cell is None or type(cell) is str:  # most cells, told before the slower tests
            return cell
        if isinstance(cell, int | float) and not isinstance(cell, bool):
            return str(cell)
        value: str | None = read(cell, tp)
        return value

    return hook


def flag(note: Note, column: str, default: bool) -> Hook:
    """A numeric column as a flag: non-zero is true; NULL (an old migration's) is
    ``default``."""

    def hook(cell: Cell, _: Any) -> bool:
        if type(cell) is int or type(cell) is float:  # most cells: told without isinstance
            return float(cell) != 0
        if cell is None:
            return default
        if isinstance(cell, bool) or not isinstance(cell, int | float):
            note(column, f"{describe(cell)}, not a number; read as {int(default)}")
            return default
        return float(cell) != 0

    return hook


def time(note: Note, column: str, null_noted: bool = False) -> Hook:
    """Seconds since the epoch in Hermes' trusted window; ``null_noted`` for a column Hermes
    always sets."""

    def hook(cell: Cell, _: Any) -> float | None:
        if type(cell) is float and EPOCH_MIN <= cell <= EPOCH_MAX:  # most cells (never NaN)
            return cell
        seconds, ok = decode_epoch(cell)
        if not ok:
            note(column, f"{describe(cell)}, not a time in [0, 4.2e9]")
        elif null_noted and cell is None:
            note(column, "null")
        return seconds

    return hook


def _decoded(
    decode: Callable[[Cell], tuple[Any, bool]], why: Callable[[Cell], str], null: Any = None
) -> Factory:
    """Hooks for a decoder that says whether the cell held what Hermes writes, and why not.

    ``null`` is what the decoder reads a NULL as (a NULL is always what Hermes writes): most
    such cells are NULL, and the hook gives it without calling the decoder.
    """

    def factory(note: Note, column: str) -> Hook:
        def hook(cell: Cell, _: Any) -> Any:
            if cell is None:
                return null
            value, ok = decode(cell)
            if not ok:
                note(column, why(cell))
            return value

        return hook

    return factory


def _json_problem(cell: Cell) -> str:
    """Why a JSON column's cell holds no JSON Hermes writes (and I-JSON can hold)."""
    text = cell_text(cell)
    return "invalid JSON" if text is None else why_not(text)


json = _decoded(decode_json_column, _json_problem)
display_metadata = _decoded(decode_display_metadata, lambda _: "not a JSON object; dropped")


def _content_problem(cell: Cell) -> str:
    if not isinstance(cell, str | RawText):
        return f"{describe(cell)}, not text"
    why = _json_problem(cell[len(CONTENT_PREFIX) :])
    if why == "invalid JSON":
        return "'\\x00json:' prefix without valid JSON; kept as text"
    return f"'\\x00json:' prefix with {why}; kept as text"


content = _decoded(decode_content, _content_problem, NULL_CONTENT)


def json_object(note: Note, column: str) -> Hook:
    """JSON text holding an object; any other JSON reads as unset."""
    read = json(note, column)

    def hook(cell: Cell, tp: Any) -> dict[str, JsonValue] | None:
        value = read(cell, tp)
        if value is None or isinstance(value, dict):
            return value
        note(column, "not a JSON object")
        return None

    return hook


#: What is noted of a BLOB read as JSON (Hermes writes JSON columns as text).
_BLOB_READ = "a BLOB; read as the JSON text its bytes spell, as Hermes' reader reads it"


def reply_json(note: Note, column: str) -> Hook:
    """An assistant's JSON column that Hermes' conversation reader parses with ``json.loads``
    (``reasoning_details``, ``codex_reasoning_items``, ``codex_message_items``): as
    :func:`json`, and a BLOB read as the JSON text its bytes spell, as ``json.loads`` reads
    bytes (the session's ``model_config``, which Hermes hands on as bytes, stays unread)."""
    read = json(note, column)

    def hook(cell: Cell, tp: Any) -> JsonValue:
        if type(cell) is not bytes:
            value: JsonValue = read(cell, tp)
            return value
        text = json_cell_text(cell)
        value, ok = (None, False) if text is None else parse(text)
        note(column, _BLOB_READ if ok else "a BLOB that spells no JSON text")
        return value if ok else None

    return hook


def model_config(note: Note, column: str) -> Hook:
    """``model_config``: a JSON object whose markers name other sessions."""
    read = json_object(note, column)

    def hook(cell: Cell, tp: Any) -> dict[str, JsonValue] | None:
        value: dict[str, JsonValue] | None = read(cell, tp)
        if value is not None:
            for marker in _MARKERS:
                named = value.get(marker)
                if named is not None and not isinstance(named, str):
                    note(column, f"{marker} is not text")
        return value

    return hook


def tool_calls(note: Note, column: str) -> Hook:
    """``tool_calls``: a JSON array of calls (see :func:`decode_tool_calls`)."""

    def hook(cell: Cell, _: Any) -> ToolCalls:
        calls = decode_tool_calls(cell)
        if calls.error is not None:
            note(column, f"{calls.error}; read as no calls")
        elif calls.bad:
            note(column, f"{len(calls.bad)} entries are not objects")
        elif calls.single:
            note(column, "a single object, not an array; read as a list of one")
        if type(cell) is bytes and cell and calls.error is None:
            note(column, _BLOB_READ)
        return calls

    return hook


def lenient_text(cell: Cell, _: Any) -> str | None:
    """Text, or None for any other cell, unnoted (``async_delegations`` is read as is)."""
    return cell_text(cell)


def string(cell: Cell, _: Any) -> str:
    """Text, or ``''`` for any other cell, unnoted."""
    return cell_text(cell) or ""
