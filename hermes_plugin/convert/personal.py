"""The values of a Hermes database that name people, chats or accounts.

Gateway sessions record who wrote and where (``user_id``, ``chat_id``, ``thread_id``, the
routing ``session_key`` built from them, ``display_name``, the ``origin_json`` object) and
every session the billing route (``billing_base_url``, in ``sessions`` and
``session_model_usage``). A converted session hands them to the host as its ``personal``
values, so a redacting host replaces them wherever they occur, in any session of the store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from hermes_plugin.source.columns import Cell, Columns, cell_text
from hermes_plugin.source.rows import Session

__all__ = ["IDENTITY_COLUMNS", "personal_values"]

#: ``sessions`` columns whose whole value names a person, a chat or an account.
IDENTITY_COLUMNS = (
    "user_id",
    "chat_id",
    "thread_id",
    "session_key",
    "display_name",
    "origin_json",
    "billing_base_url",
)
#: Members of ``origin_json`` that say what kind of place, not which one.
_KINDS = frozenset({"platform", "chat_type", "source", "type"})


def _leaves(value: object, key: str = "") -> Iterable[str]:
    """The scalar members of a JSON value as text, but the ones naming a kind of place."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v, key)
    elif (
        isinstance(value, str | int | float)
        and not isinstance(value, bool)
        and key not in _KINDS
        and str(value).strip()
    ):
        yield str(value)


def _text(cell: Cell) -> str | None:
    if isinstance(cell, int | float) and not isinstance(cell, bool):
        return str(cell)
    text = cell_text(cell)
    return text if text and text.strip() else None


def personal_values(
    sessions: Iterable[Session], usage: Iterable[Columns] = ()
) -> dict[str, tuple[str, ...]]:
    """Each identity column's values over ``sessions`` (and the billing URLs of ``usage``
    rows), by column; ``origin_json``'s scalar members count as ``origin_json`` values."""
    found: dict[str, dict[str, None]] = {}

    def add(kind: str, value: str | None) -> None:
        if value is not None:
            found.setdefault(kind, {})[value] = None

    for session in sessions:
        cells: Mapping[str, Cell] = session.cols.mapping()
        for name in IDENTITY_COLUMNS:
            value = _text(cells.get(name))
            add(name, value)
            if name == "origin_json" and value is not None:
                try:
                    parsed = json.loads(value)
                except ValueError:
                    continue
                for leaf in _leaves(parsed):
                    add(name, leaf)
    for row in usage:
        add("billing_base_url", _text(row.get("billing_base_url")))
    return {kind: tuple(values) for kind, values in found.items()}
