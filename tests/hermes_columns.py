"""Rows the way the tests build and inspect them: a row from a mapping, a column's text or
number, the row as JSON, a content's text. The reader itself reads cells through its hooks
(:mod:`hermes_plugin.source.cellhooks`) and keeps rows as
:class:`~hermes_plugin.source.columns.Columns`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hermes_plugin.source.columns import Cell, Columns, cell_text
from hermes_plugin.source.decode import Content
from hermes_plugin.source.jsontext import compact

__all__ = [
    "JSON_COLUMNS",
    "cells",
    "columns_of",
    "content_text",
    "flag",
    "number",
    "string",
    "text",
    "to_json",
    "without",
]

#: Columns Hermes writes JSON text into; :func:`to_json` inlines them.
JSON_COLUMNS = frozenset(
    {
        "model_config",
        "origin_json",
        "tool_calls",
        "reasoning_details",
        "codex_reasoning_items",
        "codex_message_items",
        "display_metadata",
        "absorbed_message_uids",
        "tool_call_uids",
        "event_json",
        "result_json",
        "task_json",
    }
)


def columns_of(row: Mapping[str, Cell] | Iterable[tuple[str, Cell]]) -> Columns:
    """A row from a mapping or from (name, cell) pairs, in their order."""
    pairs = tuple(row.items() if isinstance(row, Mapping) else row)
    return Columns(tuple(n for n, _ in pairs), tuple(v for _, v in pairs))


def cells(row: Columns) -> list[tuple[str, Cell]]:
    """The row's (name, cell) pairs, in order."""
    return list(zip(row.names(), row.values(), strict=True))


def text(row: Columns, name: str) -> str | None:
    """A text column's text; None when it is absent, null or not text."""
    return cell_text(row.get(name))


def string(row: Columns, name: str) -> str:
    """A text column's text; empty when it is absent, null or not text."""
    return text(row, name) or ""


def number(row: Columns, name: str) -> float | None:
    """A numeric column (INTEGER or REAL). Text that spells a number is not one."""
    value = row.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def flag(row: Columns, name: str, default: bool) -> bool:
    """A numeric column as a flag (non-zero is true); ``default`` when it is absent, null or
    not a number."""
    value = number(row, name)
    return default if value is None else value != 0


def without(row: Columns, *names: str) -> Columns:
    """The row without the columns named."""
    return columns_of((n, v) for n, v in cells(row) if n not in names)


def to_json(row: Columns) -> str:
    """The row as compact JSON, JSON columns inlined."""
    return compact(row.to_json_value(JSON_COLUMNS))


#: Part types whose ``text`` member is the part's text.
_TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})


def content_text(content: Content) -> str:
    """A content's text: the text, or the text parts joined by newlines."""
    if not content.structured:
        return content.text
    texts = []
    for part in content.parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") in _TEXT_PART_TYPES:
            text = part.get("text")
            if isinstance(text, str):
                texts.append(text)
    return "\n".join(texts)
